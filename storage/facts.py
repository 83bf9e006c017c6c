"""L2: structured facts in SQLite (``04_memory/long_term/facts.db``): rows in and rows out.

What a candidate means for the facts held (reinforce, supersede, conflict, stop) is the policy of
``services.supersession.Supersession``, which writes through this store's primitives (``insert_fact``,
``close_fact``, ``add_evidence``, ``add_conflict`` ... inside ``transaction()``). The store itself keeps:
- facts are never deleted or overwritten: a superseded row keeps its data with validity closed and ``superseded_by``
  set, the new row carries ``previous_version``;
- every observation has an evidence row, keyed (``observation_key``) so that it is applied once;
- every fact knows its evidence: an observation its logs no longer hold is retired, and a fact left with none is
  retracted; a fact a person forgets is closed for good (``forget``); past its expiry a fact is stale, not gone.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace
from datetime import date, datetime, timedelta
from pathlib import Path

import sqlite_utils

from agentos_mem.kernel import clock
from agentos_mem.kernel.domain import Candidate, check_row_id
from agentos_mem.storage.guards import wal_connection
from agentos_mem.kernel.text import normalize_key
from agentos_mem.vocabulary.subjects import load_aliases, subject_key
from agentos_mem.kernel.workspace import Workspace
from agentos_mem.safety.secrets import locate_markers, mask_lines, mask_value, repair_markers
from agentos_mem.storage import drift
from agentos_mem.storage.migrations import Migrations

# A stop ("Copilot 停用了", "cancelled Netflix"): it closes the speaker's current facts that name its thing (a retracted
# stop gives them all back).
STOPPED = "stopped"


migrations = Migrations("facts")


@migrations
def m001_initial(db: sqlite_utils.Database) -> None:
    db.executescript(
        """
        create table facts (
            id integer primary key,
            user_id text not null,
            subject text not null,
            subject_key text not null,
            predicate text not null,
            object text not null,
            object_key text not null,
            nature text not null,
            technical integer not null default 0,
            multi_valued integer not null default 0,
            confidence real not null,
            explicitness text not null,
            status text not null,              -- active | superseded
            valid_from text not null,          -- ISO timestamp the fact was observed to hold from
            valid_to text,                     -- closed when superseded
            learned_at text not null,          -- when this store learned it
            expires_at text,                   -- by nature (technical facts: 180 days by default)
            event_date text,
            version integer not null default 1,
            previous_version integer references facts(id),
            superseded_by integer references facts(id),
            reinforcements integer not null default 0,
            last_seen_at text not null,
            source_day text not null,
            source_file text not null,
            raw_ref text,
            line_start integer not null,
            line_end integer not null,
            extractor text not null,
            evidence text
        );
        create index facts_key on facts (user_id, subject_key, predicate, status);
        create index facts_day on facts (user_id, source_day);
        create table evidence (
            candidate_key text primary key,
            user_id text not null,
            action text not null,              -- added | reinforced | superseded | conflict | historical
            fact_id integer references facts(id),
            conflict_id integer,
            source_day text not null,
            source_file text not null,
            raw_ref text,
            line_start integer not null,
            line_end integer not null,
            observed_at text not null
        );
        create index evidence_day on evidence (user_id, source_day);
        create table conflicts (
            id integer primary key,
            user_id text not null,
            subject text not null,
            predicate text not null,
            existing_fact_id integer references facts(id),
            existing_predicate text,
            existing_object text,
            existing_explicitness text,
            candidate_object text not null,
            candidate_explicitness text not null,
            candidate_confidence real not null,
            reason text not null,
            source_day text not null,
            source_file text not null,
            raw_ref text,
            line_start integer not null,
            line_end integer not null,
            observed_at text not null,
            status text not null default 'open',   -- open | accepted | rejected
            created_at text not null,
            resolved_at text,
            resolved_fact_id integer references facts(id)
        );
        create table digested (
            user_id text not null,
            day text not null,
            file text not null,
            sha256 text not null,
            raw_ref text,
            first_digested_at text not null,
            primary key (user_id, day, file, sha256)
        );
        """
    )


def masked_candidate(cand: Candidate, raw_ref: str | None) -> Candidate:
    """``cand`` with any secret in its subject, object or evidence masked (the store never holds one in clear,
    whichever extractor proposed it); the marker names the raw reference (or file) and line of the original."""
    where, line = raw_ref or cand.source_file, cand.line_start
    subject = mask_lines(cand.subject, where, line, last_line=cand.line_end)[0]
    obj = mask_value(subject, cand.object, where, line)[0]
    evidence = mask_lines(cand.evidence, where, line, last_line=cand.line_end)[0]
    # the digest's bare markers now name the raw line; half a marker an extractor cut is made whole
    subject, obj, evidence = (locate_markers(repair_markers(x, where, line), where, line) for x in (subject, obj, evidence))
    old = mask_value(subject, cand.replaces, where, line)[0] if cand.replaces else cand.replaces
    changed = (subject, obj, evidence, old) != (cand.subject, cand.object, cand.evidence, cand.replaces)
    return replace(cand, subject=subject, object=obj, evidence=evidence, replaces=old) if changed else cand


@migrations
def m002_mask_secrets(db: sqlite_utils.Database) -> None:
    """Facts and conflicts stored before secrets were masked at write time: their secrets masked now, once (the
    marker names the raw reference and line of the original; ``object_key`` follows the masked object)."""
    if "facts" not in db.table_names():
        return
    for row in list(db.query("select id, subject, object, evidence, raw_ref, source_file, line_start from facts")):
        where = row["raw_ref"] or row["source_file"]
        subject, n1 = mask_lines(row["subject"], where, row["line_start"])
        obj, n2 = mask_value(subject, row["object"], where, row["line_start"])
        evidence, n3 = mask_lines(row["evidence"] or "", where, row["line_start"])
        if n1 or n2 or n3:
            db.execute("update facts set subject = ?, object = ?, object_key = ?, evidence = ? where id = ?",
                       [subject, obj, normalize_key(obj), evidence if row["evidence"] is not None else None, row["id"]])
        if n1:  # a secret in the subject itself (rare): its key too
            db.execute("update facts set subject_key = ? where id = ?", [subject_key(subject), row["id"]])
    for row in list(db.query("select id, subject, existing_object, candidate_object, raw_ref, source_file, line_start from conflicts")):
        where = row["raw_ref"] or row["source_file"]
        existing, n1 = mask_value(row["subject"], row["existing_object"] or "", where, None)
        candidate, n2 = mask_value(row["subject"], row["candidate_object"], where, row["line_start"])
        if n1 or n2:
            db.execute("update conflicts set existing_object = ?, candidate_object = ? where id = ?",
                       [existing if row["existing_object"] is not None else None, candidate, row["id"]])


@migrations
def m003_evidence_lifecycle(db: sqlite_utils.Database) -> None:
    """Every fact knows its evidence, and a fact can be closed for a reason (issue 15). Columns are added, nothing
    is rewritten:

    - facts: ``closed_reason`` / ``closed_at`` for the two closing statuses beside ``superseded``: ``retracted`` (the
      log lines that were its only evidence were removed or edited) and ``forgotten`` (a person said so);
    - evidence: ``origin`` (``log``: a digest observation keyed by its lines' content; ``legacy``: every row written
      before, keyed by the whole file's hash; the digest re-keys a day's legacy rows from the raw archive the first
      time it digests that day again), ``obs_hash`` / ``obs_occurrence`` (the normalised content of the observation's
      lines, and which occurrence of that content in its file it is), ``retracted_at`` / ``retracted_reason``;
    - digested: ``folder`` (the logs folder a file was read from; unknown for rows written before) and ``retired_at``
      (the file left its day, or changed);
    - forgotten: what a person forgot and which days and files said it, so the same lines never bring it back."""
    for sql in (
        "alter table facts add column closed_reason text",
        "alter table facts add column closed_at text",
        "alter table evidence add column origin text",
        "alter table evidence add column obs_hash text",
        "alter table evidence add column obs_occurrence integer",
        "alter table evidence add column retracted_at text",
        "alter table evidence add column retracted_reason text",
        "update evidence set origin = 'legacy'",
        "create index evidence_fact on evidence (fact_id)",
        "alter table digested add column folder text",
        "alter table digested add column retired_at text",
        "create table forgotten (id integer primary key, user_id text not null, fact_id integer references facts(id),"
        " subject_key text not null, predicate text not null, object_key text not null, sources text not null,"
        " reason text not null, forgotten_at text not null)",
        "create index forgotten_key on forgotten (user_id, subject_key, predicate, object_key)",
    ):
        db.execute(sql)


# Statuses of a fact: ``active`` (current; past its expiry it is still served, flagged stale), ``superseded`` (history),
# ``retracted`` and ``forgotten`` (closed: never served as current, stale or history to an agent).
SERVED = ("active", "superseded")
# A digested file's content hash after a rewind (``FactStore.rewind``): still the day's file, no longer digested as it is.
REWOUND = "rewound:"


def _end_of(day: date | datetime | str) -> str:
    if isinstance(day, str):
        day = date.fromisoformat(day[:10]) if len(day) <= 10 else datetime.fromisoformat(day)
    if isinstance(day, datetime):
        return day.replace(tzinfo=None).isoformat(timespec="seconds")
    return f"{day.isoformat()}T23:59:59"


def mark_stale(row: dict, at: str) -> dict:
    """``row`` with ``stale`` (its expiry has passed at ``at``, a wall-clock ISO time) and ``stale_since`` (that day)."""
    expires = row.get("expires_at")
    stale = bool(expires) and expires <= at
    return {**row, "stale": stale, "stale_since": expires[:10] if stale else None}


@migrations
def m004_journal_applied(db: sqlite_utils.Database) -> None:
    """Which decisions of the journal (``storage.journal``, in agent-sync) this store already holds: a decision made
    here is marked when it is made, one synced from another machine when it is replayed (``restore.replay``)."""
    db.execute("create table journal_applied (id text primary key, kind text not null, host text, outcome text not null, applied_at text not null)")


@migrations
def m005_values_by_status(db: sqlite_utils.Database) -> None:
    """Every query asks which forgotten values no current fact says again (``FactStore.forgotten_values``): without an
    index on the values by status that read scanned all of a user's facts, 12-19 ms a query at 50,000 facts
    (bench/results/perf.md, the 100,000 row)."""
    db.execute("create index facts_value_status on facts (user_id, status, object_key)")


class FactStore:
    """The facts database. Open with a path; ``services.supersession.Supersession`` applies candidates through its
    primitives, everything else reads (and ``forget``, ``adopt``, ``retire_observations`` close and re-key evidence)."""

    def __init__(self, path: Path, *, expiry_days: dict[str, int | None] | None = None, reinforce_step: float = 0.05,
                 aliases: dict[str, str] | None = None, timezone: str = clock.DEFAULT_TZ):
        self.path = Path(path)
        self.tz = timezone  # the workspace's zone: stored validity is wall time there
        # never through a link (kernel.files.Below); WAL, read on a full disk too (storage.guards.wal_connection)
        self.db = sqlite_utils.Database(wal_connection(self.path))
        migrations.apply(self.db)
        drift.migrations.apply(self.db)  # facts a later sentence may have changed (storage.drift)
        self.expiry_days = expiry_days or {"technical": 180}
        self.reinforce_step = reinforce_step
        self.aliases = aliases or {}

    def close(self) -> None:
        self.db.close()

    def rollback(self) -> None:
        """Drop what this connection has written and not committed (a stage that failed part way: its retry, on the
        same open store, starts from what was committed, as it would on a store of its own)."""
        if self.db.conn.in_transaction:
            self.db.conn.rollback()

    # -- digested files and decisions -------------------------------------------------------------------
    def observation_key(self, user: str, day: date, cand: Candidate, obs: tuple[str, int]) -> str:
        """An observation's identity: user, day, file, the content of its lines and which occurrence of it, and the
        fact it states (subject and object by their matching keys). Line numbers are not part of it: a line moved
        by an edit above it is the same observation."""
        content, occurrence = obs
        payload = json.dumps([user, day.isoformat(), cand.source_file, content, occurrence, subject_key(cand.subject, self.aliases),
                              cand.predicate, normalize_key(cand.object)], ensure_ascii=False)
        return "o:" + hashlib.sha256(payload.encode("utf-8")).hexdigest()[:32]

    def record_digested(self, user: str, day: date, file: str, sha256: str, raw_ref: str | None, folder: str | None = None) -> None:
        """``file`` with this content is the day's now (a file edited back to an earlier content is live again)."""
        self.db.execute(
            "insert into digested (user_id, day, file, sha256, raw_ref, first_digested_at, folder) values (?, ?, ?, ?, ?, ?, ?)"
            " on conflict (user_id, day, file, sha256) do update set retired_at = null, folder = coalesce(excluded.folder, folder)",
            [user, day.isoformat(), file, sha256, raw_ref, clock.stamp(self.tz), folder],
        )
        self.db.conn.commit()

    def is_digested(self, user: str, day: date, file: str, sha256: str) -> bool:
        row = self.db.execute("select 1 from digested where user_id=? and day=? and file=? and sha256=? and retired_at is null",
                              [user, day.isoformat(), file, sha256]).fetchone()
        return row is not None

    def digested_files(self, user: str, day: date | None = None) -> list[dict]:
        """The live (file, content) rows of a day, or of every day: what the last digest of each day read."""
        if day is None:
            return self.rows("select rowid, * from digested where user_id=? and retired_at is null order by day, file", [user])
        return self.rows("select rowid, * from digested where user_id=? and day=? and retired_at is null order by file", [user, day.isoformat()])

    def digested_names(self, user: str, day: date) -> set[str]:
        """Every file name any digest of the day read, live or not."""
        return {r[0] for r in self.db.execute("select file from digested where user_id=? and day=?", [user, day.isoformat()]).fetchall()}

    def last_digested_day(self, user: str) -> str | None:
        """The latest day digested for ``user`` (ISO), or None: where in the history a decision made now falls. A day
        a rewind left to digest again (``rewind``) is not digested until it is."""
        return self.db.execute("select max(day) from digested where user_id=? and retired_at is null and sha256 not like ?",
                               [user, REWOUND + "%"]).fetchone()[0]

    def rewind(self, user: str, journal_ids: list[str]) -> dict:
        """Take back everything ``user``'s digests and decisions made of the logs, in one transaction, so the days can be
        digested again in date order: the user's facts, evidence, conflicts, drift flags and forgets go, the decisions
        ``journal_ids`` (the user's, from the journal in agent-sync) are no longer held (a replay applies them again),
        and every live digested file is marked as read by a rewind (its day is pending, its name still the day's: a
        day whose logs are gone since still empties its cards). A crash part way leaves the undigested days pending.
        What a person wrote is untouched: the logs, the journal, the cards' and records' files. Returns counts."""
        n: dict[str, int] = {}
        with self.transaction():
            for table, where in (("drift", "user_id=?"), ("forgotten", "user_id=?"), ("evidence", "user_id=?"),
                                 ("conflicts", "user_id=?"), ("facts", "user_id=?")):
                n[table] = self.db.execute(f"delete from {table} where {where}", [user]).rowcount
            # an earlier rewind's marks, retired when their days were digested again: they name nothing a new mark needs
            self.db.execute("delete from digested where user_id=? and retired_at is not null and sha256 like ?", [user, REWOUND + "%"])
            n["days"] = self.db.execute("select count(distinct day) from digested where user_id=? and retired_at is null", [user]).fetchone()[0]
            self.db.execute("update digested set sha256=? || sha256 where user_id=? and retired_at is null and sha256 not like ?",
                            [REWOUND, user, REWOUND + "%"])
            n["decisions"] = sum(self.db.execute("delete from journal_applied where id=?", [i]).rowcount for i in journal_ids)
        return n

    def journal_applied(self) -> set[str]:
        return {r[0] for r in self.db.execute("select id from journal_applied").fetchall()}

    def mark_journal_applied(self, event: dict, outcome: str) -> None:
        self.db.execute("insert or replace into journal_applied (id, kind, host, outcome, applied_at) values (?, ?, ?, ?, ?)",
                        [event["id"], event["kind"], event.get("host"), outcome, clock.stamp(self.tz)])
        self.db.conn.commit()

    def forget_targets(self, user: str, skey: str, predicate: str, okey: str, sources: list[str]) -> list[int]:
        """The facts (not yet forgotten) a forget made elsewhere meant: the same subject, predicate and value, said on
        one of the days and files it named."""
        rows = self.rows("select id, source_day, source_file from facts where user_id=? and subject_key=? and predicate=? and object_key=?"
                         " and status != 'forgotten' order by id", [user, skey, predicate, okey])
        want = set(sources)
        return [r["id"] for r in rows
                if f"{r['source_day']}|{r['source_file']}" in want
                or want & {f"{e['source_day']}|{e['source_file']}" for e in self.evidence_of(r["id"])}]

    def find_conflict(self, user: str, key: dict) -> dict | None:
        """The open conflict a decision made elsewhere settled: the same subject, values and source lines."""
        return self.row("select * from conflicts where user_id=? and status='open' and subject=? and predicate=? and existing_object=?"
                        " and candidate_object=? and source_day=? and source_file=? and line_start is ? and line_end is ? order by id limit 1",
                        [user, key["subject"], key["predicate"], key["existing_object"], key["candidate_object"], key["source_day"],
                          key["source_file"], key.get("line_start"), key.get("line_end")])

    def retire_digested(self, rowids: list[int]) -> None:
        """These files (or these contents of them) are no longer their day's: a digest read the day without them."""
        stamp = clock.stamp(self.tz)
        for rowid in rowids:
            self.db.execute("update digested set retired_at=? where rowid=?", [stamp, rowid])
        self.db.conn.commit()

    # -- evidence ----------------------------------------------------------------------------------
    def observations(self, user: str, day: date) -> list[dict]:
        """The day's live log observations: ``log`` rows (keyed by content) and ``legacy`` rows (written before
        observations were keyed by content; see ``adopt``)."""
        return self.rows("select * from evidence where user_id=? and source_day=? and retracted_at is null and origin in ('log', 'legacy')"
                         " order by source_file, line_start", [user, day.isoformat()])

    def adopt(self, user: str, day: date, keyed: list[tuple[str, str | None, int | None, str]]) -> int:
        """Re-key legacy observations of ``day`` by content: (old key, content hash, occurrence, file) each, the hash
        None when the lines could not be read back (the row then stays as it is, never retired). Returns how many."""
        n = 0
        with self.transaction():
            for old, content, occurrence, file in keyed:
                row = self.row("select * from evidence where candidate_key=? and origin='legacy'", [old])
                if row is None:
                    continue
                triple = self._triple_of(row)
                if content is None or triple is None:
                    self.db.execute("update evidence set origin='other' where candidate_key=?", [old])
                    continue
                payload = json.dumps([user, day.isoformat(), file, content, occurrence, *triple], ensure_ascii=False)
                new = "o:" + hashlib.sha256(payload.encode("utf-8")).hexdigest()[:32]
                if self.row("select 1 as x from evidence where candidate_key=?", [new]) is not None:
                    self.db.execute("update evidence set origin='other' where candidate_key=?", [old])  # the same observation twice
                    continue
                self.db.execute("update evidence set candidate_key=?, origin='log', obs_hash=?, obs_occurrence=? where candidate_key=?",
                                [new, content, occurrence, old])
                n += 1
        return n

    def _triple_of(self, ev: dict) -> tuple[str, str, str] | None:
        """The (subject key, predicate, object key) an evidence row observed, from its fact or its conflict; None for a
        row a person's decision wrote (an accepted conflict), which no log edit takes back."""
        if ev["fact_id"] is not None:
            f = self.get(ev["fact_id"])
            if f is None or str(f.get("extractor") or "").startswith("review:"):
                return None
            return f["subject_key"], f["predicate"], f["object_key"]
        if ev["conflict_id"] is not None:
            c = self.row("select * from conflicts where id=?", [ev["conflict_id"]])
            if c is None:
                return None
            return subject_key(c["subject"], self.aliases), c["predicate"], normalize_key(c["candidate_object"])
        return None

    def evidence_of(self, fact_id: int) -> list[dict]:
        """Every observation of a fact, live or retired, oldest first."""
        return self.rows("select * from evidence where fact_id=? order by observed_at, rowid", [fact_id])

    def live_id(self, fact_id: int | None) -> int | None:
        """``fact_id`` while its fact is served (current or history); None for a retracted or forgotten one."""
        if fact_id is None:
            return None
        row = self.row("select status from facts where id=?", [fact_id])
        return fact_id if row and row["status"] in SERVED else None

    def carry_over(self, retire: list[tuple[str, str]]) -> dict[int, int]:
        """For the live observations about to be retired: fact id -> how many of them it rests on (a new observation of
        the same fact may stand in for one of them)."""
        carry: dict[int, int] = {}
        for key, _ in retire:
            row = self.row("select fact_id, action from evidence where candidate_key=? and retracted_at is null", [key])
            if row and row["fact_id"] is not None and row["action"] in ("added", "reinforced", "superseded", "historical", "kept"):
                carry[row["fact_id"]] = carry.get(row["fact_id"], 0) + 1
        return carry

    def retire_observations(self, retire: list[tuple[str, str]]) -> tuple[int, int]:
        """Retire these observations (key, reason): a fact left with no live evidence is retracted (and what it
        superseded is current again, unless its slot has a current value since); a conflict raised by one is
        withdrawn. Inside the caller's transaction. Returns (facts retracted, earlier versions restored)."""
        n_retracted = n_restored = 0
        stamp, now = clock.stamp(self.tz), clock.wall_iso(self.tz)
        touched: dict[int, str] = {}
        for key, reason in retire:
            row = self.row("select fact_id, conflict_id, action from evidence where candidate_key=? and retracted_at is null", [key])
            if row is None:
                continue
            self.db.execute("update evidence set retracted_at=?, retracted_reason=? where candidate_key=?", [stamp, reason, key])
            if row["fact_id"] is not None and row["action"] != "forgotten":
                touched.setdefault(row["fact_id"], reason)
            if row["conflict_id"] is not None:
                self.db.execute("update conflicts set status='withdrawn', resolved_at=? where id=? and status='open'", [stamp, row["conflict_id"]])
        retracted = []
        for fid, reason in touched.items():
            f = self.get(fid)
            if f is None or f["status"] not in SERVED:
                continue
            live = self.db.execute("select count(*) from evidence where fact_id=? and retracted_at is null and action != 'forgotten'", [fid]).fetchone()[0]
            if live:
                continue  # other evidence still says it
            self.db.execute("update facts set status='retracted', valid_to=coalesce(valid_to, ?), closed_reason=?, closed_at=? where id=?",
                            [now, reason, stamp, fid])
            n_retracted += 1
            retracted.append(f)
        for f in retracted:  # what a retracted fact superseded holds again, unless the slot has a current value since
            if f["status"] != "active" and f["predicate"] != STOPPED:
                continue
            order = "select * from facts where superseded_by=? and status='superseded' order by valid_from desc, id desc"
            # a stop closed every fact that named its thing: all of them come back; a new value closed one
            for prev in self.rows(order, [f["id"]]) if f["predicate"] == STOPPED else filter(None, [self.row(order + " limit 1", [f["id"]])]):
                n_restored += self._restore(prev)
        return n_retracted, n_restored

    def _restore(self, prev: dict) -> int:
        """``prev`` current again, unless its slot has a current value since."""
        slot = "select 1 as x from facts where user_id=? and subject_key=? and predicate=? and status='active'"
        args = [prev["user_id"], prev["subject_key"], prev["predicate"]]
        if prev["multi_valued"]:
            slot, args = slot + " and object_key=?", args + [prev["object_key"]]
        if self.row(slot, args) is None:
            self.db.execute("update facts set status='active', valid_to=null, superseded_by=null where id=?", [prev["id"]])
            return 1
        return 0

    def forgotten_values(self, user: str) -> list[str]:
        """The values a person forgot that no fact serves again (a value said anew since and current stays): what the
        read side must not serve in any text it shows (a card's summary, a day's summary), longest first."""
        rows = self.db.execute("select distinct f.object from facts f where f.user_id=? and f.status='forgotten' and not exists "
                               "(select 1 from facts a where a.user_id=f.user_id and a.status='active' and a.object_key=f.object_key)",
                               [user]).fetchall()
        return sorted({r[0] for r in rows if r[0] and r[0].strip()}, key=lambda v: (-len(v), v))

    def forget(self, user: str, fact_id: int, reason: str) -> dict:
        """A person closes a fact: status ``forgotten``, validity closed now, the reason kept. It is never served again
        (as current, stale or history to an agent), and the days and files that said it are remembered, so digesting
        the same lines again (or an edit of them) does not bring it back. Another user's fact is unknown here."""
        f = self.forgettable(user, fact_id)
        reason = self.forget_reason(reason)
        sources = sorted({f"{e['source_day']}|{e['source_file']}" for e in self.evidence_of(fact_id)} | {f"{f['source_day']}|{f['source_file']}"})
        stamp, now = clock.stamp(self.tz), clock.wall_iso(self.tz)
        with self.transaction():
            self.db.execute("update facts set status='forgotten', valid_to=coalesce(valid_to, ?), closed_reason=?, closed_at=? where id=?",
                            [now, reason, stamp, fact_id])
            self.db.execute("insert into forgotten (user_id, fact_id, subject_key, predicate, object_key, sources, reason, forgotten_at)"
                            " values (?, ?, ?, ?, ?, ?, ?, ?)",
                            [user, fact_id, f["subject_key"], f["predicate"], f["object_key"], json.dumps(sources, ensure_ascii=False), reason, stamp])
        return self.get(fact_id)

    def forgettable(self, user: str, fact_id: int) -> dict:
        """The fact ``forget`` would close (KeyError: no such fact of the user; ValueError: forgotten already, or
        an id that is no row id at all)."""
        check_row_id("fact id", fact_id)
        f = self.row("select * from facts where id=? and user_id=?", [fact_id, user])
        if f is None:
            raise KeyError(f"no fact #{fact_id}")
        if f["status"] == "forgotten":
            raise ValueError(f"fact #{fact_id} is already forgotten")
        return f

    @staticmethod
    def forget_reason(reason: str | None) -> str:
        """The reason as ``forget`` keeps it: one line, secrets masked."""
        return mask_lines(" ".join((reason or "").split()) or "forgotten at the user's request")[0]

    def open_conflict(self, user: str, conflict_id: int) -> dict:
        """The open conflict ``resolve_conflict`` would settle (KeyError: none of the user's; ValueError: settled)."""
        check_row_id("conflict id", conflict_id)
        c = self.row("select * from conflicts where id=? and user_id=?", [conflict_id, user])
        if c is None:
            raise KeyError(f"no conflict #{conflict_id} for user {user!r}")
        if c["status"] != "open":
            raise ValueError(f"conflict #{conflict_id} is already {c['status']}")
        return c

    def forgotten_by(self, user: str, skey: str, predicate: str, okey: str, day: date, file: str) -> int | None:
        """The forgotten fact this observation would bring back: the same fact from a day and file that said it."""
        where = f"{day.isoformat()}|{file}"
        for row in self.rows("select fact_id, sources from forgotten where user_id=? and subject_key=? and predicate=? and object_key=?",
                             [user, skey, predicate, okey]):
            if where in json.loads(row["sources"]):
                return row["fact_id"]
        return None

    def expiry(self, cand_nature: str, technical: bool, valid_from: str) -> str | None:
        """When a fact of this nature, holding from ``valid_from``, expires (None: never)."""
        kind = "technical" if technical else cand_nature
        days = self.expiry_days.get(kind)
        if days is None:
            return None
        return (datetime.fromisoformat(valid_from) + timedelta(days=days)).isoformat(timespec="seconds")

    # -- rows in (the write policy is services.supersession's) ----------------------------------------------------
    @contextmanager
    def transaction(self) -> Iterator[None]:
        """One write transaction (``begin immediate``: a concurrent writer waits its turn), committed at the end of the
        block, rolled back on any exception."""
        conn = self.db.conn
        conn.execute("begin immediate")
        try:
            yield
            conn.execute("commit")
        except BaseException:
            conn.execute("rollback")
            raise

    def insert_fact(self, user: str, day: date, cand: Candidate, skey: str, okey: str, raw_ref: str | None, *, status: str = "active",
                    valid_to: str | None = None, superseded_by: int | None = None, version: int = 1,
                    previous_version: int | None = None) -> int:
        """A new fact row from ``cand`` (keyed by ``skey``/``okey``; its expiry by its nature). Returns its id."""
        now = clock.stamp(self.tz)
        row = dict(
            user_id=user, subject=cand.subject, subject_key=skey, predicate=cand.predicate, object=cand.object, object_key=okey,
            nature=cand.nature, technical=int(cand.technical), multi_valued=int(cand.multi_valued), confidence=round(cand.confidence, 4),
            explicitness=cand.explicitness, status=status, valid_from=cand.observed_at, valid_to=valid_to, learned_at=now,
            expires_at=self.expiry(cand.nature, cand.technical, cand.observed_at), event_date=cand.event_date, version=version,
            previous_version=previous_version, superseded_by=superseded_by, reinforcements=0, last_seen_at=cand.observed_at,
            source_day=day.isoformat(), source_file=cand.source_file, raw_ref=raw_ref, line_start=cand.line_start,
            line_end=cand.line_end, extractor=cand.extractor, evidence=cand.evidence,
        )
        cols = ", ".join(row)
        cur = self.db.execute(f"insert into facts ({cols}) values ({', '.join('?' * len(row))})", list(row.values()))
        return cur.lastrowid

    def close_fact(self, fact_id: int, *, valid_to: str, superseded_by: int, status: str = "superseded") -> None:
        """A fact's validity closed at ``valid_to`` by ``superseded_by`` (``status="active"``: it stays current until then)."""
        self.db.execute("update facts set status=?, valid_to=?, superseded_by=? where id=?", [status, valid_to, superseded_by, fact_id])

    def close_events_naming(self, user: str, key: str, at: str, by: int) -> None:
        """The user's current events said by ``at`` whose value names ``key``: superseded at ``at`` by fact ``by``."""
        self.db.execute("update facts set status='superseded', valid_to=?, superseded_by=? where user_id=? and predicate='event'"
                        " and status='active' and valid_from <= ? and object_key like ? and id != ?", [at, by, user, at, f"%{key}%", by])

    def reinforce_fact(self, fact_id: int, *, confidence: float, explicitness: str, last_seen_at: str, expires_at: str | None) -> None:
        """A fact seen again: one more reinforcement, with these confidence, explicitness, last sighting and expiry."""
        self.db.execute(
            "update facts set confidence=?, explicitness=?, reinforcements=reinforcements+1, last_seen_at=?, expires_at=? where id=?",
            [confidence, explicitness, last_seen_at, expires_at, fact_id],
        )

    def add_evidence(self, evidence: dict, action: str, fact_id: int | None, conflict_id: int | None = None) -> None:
        """An evidence row: the observation ``evidence`` (its key and where it was read), what it did to which fact."""
        row = {**evidence, "action": action, "fact_id": fact_id, "conflict_id": conflict_id}
        self.db.execute(f"insert into evidence ({', '.join(row)}) values ({', '.join('?' * len(row))})", list(row.values()))

    def set_aside_evidence(self, candidate_key: str) -> None:
        """A retired evidence row kept as history under another key, so the same observation can be recorded anew."""
        self.db.execute("update evidence set candidate_key = candidate_key || '~' || rowid where candidate_key = ?", [candidate_key])

    def add_conflict(self, user: str, day: date, cand: Candidate, old: dict, raw_ref: str | None, reason: str) -> int:
        """An open conflict between ``cand`` and the fact row ``old``, for review. Returns its id."""
        cur = self.db.execute(
            "insert into conflicts (user_id, subject, predicate, existing_fact_id, existing_predicate, existing_object, existing_explicitness,"
            " candidate_object, candidate_explicitness, candidate_confidence, reason, source_day, source_file, raw_ref, line_start, line_end,"
            " observed_at, created_at) values (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            [user, cand.subject, cand.predicate, old["id"], old["predicate"], old["object"], old["explicitness"], cand.object, cand.explicitness,
             cand.confidence, reason, day.isoformat(), cand.source_file, raw_ref, cand.line_start, cand.line_end, cand.observed_at, clock.stamp(self.tz)],
        )
        return cur.lastrowid

    def settle_conflict(self, conflict_id: int, status: str, fact_id: int | None) -> None:
        """A conflict closed by a person's decision (``accepted``, with the fact it made, or ``rejected``); committed."""
        self.db.execute("update conflicts set status=?, resolved_at=?, resolved_fact_id=? where id=?",
                        [status, clock.stamp(self.tz), fact_id, conflict_id])
        self.db.conn.commit()

    # -- reads -----------------------------------------------------------------------------------
    def row(self, sql: str, params: list) -> dict | None:
        """The first row of a read (a dict by column), or None."""
        cur = self.db.execute(sql, params)
        row = cur.fetchone()
        if row is None:
            return None
        return dict(zip([c[0] for c in cur.description], row))

    def rows(self, sql: str, params: list) -> list[dict]:
        """Every row of a read, as dicts by column."""
        cur = self.db.execute(sql, params)
        cols = [c[0] for c in cur.description]
        return [dict(zip(cols, r)) for r in cur.fetchall()]

    def as_of(self, user: str, when: date | datetime | str | None = None, *, min_confidence: float = 0.0, stale: bool = False) -> list[dict]:
        """The facts that held at the end of ``when`` (default: now), not expired by then. Retracted and forgotten
        facts never held. Each row carries ``stale`` (past its expiry then) and ``stale_since`` (the expiry's date).

        ``stale=True``: the facts past their expiry too, after the fresh ones: the user's last known value, to be
        shown as possibly outdated, not dropped."""
        at = _end_of(when) if when is not None else clock.wall_iso(self.tz)
        fresh = "" if stale else " and (expires_at is null or expires_at > ?)"
        rows = self.rows(
            "select * from facts where user_id=? and status in ('active', 'superseded') and valid_from <= ? and (valid_to is null or valid_to > ?)"
            f"{fresh} and confidence >= ? order by (expires_at is not null and expires_at <= ?), subject_key, predicate, valid_from",
            [user, at, at, *([] if stale else [at]), min_confidence, at],
        )
        return [mark_stale(r, at) for r in rows]

    def set_drift(self, user: str, day: date, flags: list[dict]) -> int:
        """The facts the user's sentences of ``day`` may have changed (``storage.drift.set_day``), in place of the day's
        earlier flags; one transaction."""
        with self.db.conn:
            return drift.set_day(self.db, user, day.isoformat(), flags)

    def changes(self, user: str, when: date | datetime | str | None = None) -> dict[int, dict]:
        """fact id -> what may have changed it, as of the end of ``when`` (default: now): ``storage.drift.changes``."""
        return drift.changes(self.db, user, _end_of(when) if when is not None else clock.wall_iso(self.tz))

    def people(self, user: str, before: date) -> list[str]:
        """The others the user's current facts are about (where they live and work, what they do), the latest said last:
        whom a "她" or "he" of a later day means when no one is named first."""
        return [s for s, pred in self.subjects(user, before) if pred in ("lives_in", "works_at", "role")]

    def subjects(self, user: str, before: date) -> list[tuple[str, str]]:
        """(subject, predicate) of the user's current facts about anything but the user, said before ``before``, the
        latest said last: the caller tells which of them name people ("coworker Priya", "同事老周")."""
        rows = self.rows("select subject, predicate, max(valid_from) as at from facts where user_id=? and status='active'"
                         " and subject_key != 'user' and valid_from < ? group by subject order by at", [user, before.isoformat()])
        return [(r["subject"], r["predicate"]) for r in rows]

    def upcoming(self, user: str, when: date | datetime | str | None = None) -> list[dict]:
        """Values that start after ``when`` (default: now): "from April 1 I take line 14", stored with that start and
        not current before it. Soonest first."""
        at = _end_of(when) if when is not None else clock.wall_iso(self.tz)
        return self.rows("select * from facts where user_id=? and status='active' and valid_from > ? order by valid_from, id", [user, at])

    def current(self, user: str, **kw) -> list[dict]:
        return self.as_of(user, None, **kw)

    def history(self, user: str, subject: str, *, closed: bool = True) -> list[dict]:
        """Every version of every fact about ``subject`` (exact key, else a substring match), oldest first.
        ``closed=False``: without the retracted and forgotten ones (what an agent may be shown)."""
        key = subject_key(subject, self.aliases)
        served = "" if closed else " and status in ('active', 'superseded')"
        rows = self.rows(f"select * from facts where user_id=? and subject_key=?{served} order by predicate, valid_from, id", [user, key])
        if not rows and key:
            rows = self.rows(f"select * from facts where user_id=? and subject_key like ?{served} order by subject_key, predicate, valid_from, id",
                             [user, f"%{key}%"])
        return rows

    def get(self, fact_id: int) -> dict | None:
        return self.row("select * from facts where id=?", [fact_id])

    def conflicts(self, user: str, status: str | None = "open") -> list[dict]:
        if status is None:
            return self.rows("select * from conflicts where user_id=? order by id", [user])
        return self.rows("select * from conflicts where user_id=? and status=? order by id", [user, status])

    def facts_of_day(self, user: str, day: date) -> list[dict]:
        """Facts the day's logs produced or confirmed, with what happened to each (for summaries)."""
        return self.rows(
            "select e.action, e.line_start as ev_line_start, e.line_end as ev_line_end, e.source_file as ev_file, f.*"
            " from evidence e join facts f on f.id = e.fact_id where e.user_id=? and e.source_day=? and e.retracted_at is null"
            " and e.action != 'forgotten' and f.status in ('active', 'superseded') order by e.source_file, e.line_start, f.id",
            [user, day.isoformat()],
        )

    def counts(self, user: str) -> dict:
        one = lambda sql: self.db.execute(sql, [user]).fetchone()[0]  # noqa: E731
        return {
            "facts": one("select count(*) from facts where user_id=?"),
            "active": one("select count(*) from facts where user_id=? and status='active'"),
            "superseded": one("select count(*) from facts where user_id=? and status='superseded'"),
            "retracted": one("select count(*) from facts where user_id=? and status='retracted'"),
            "forgotten": one("select count(*) from facts where user_id=? and status='forgotten'"),
            "conflicts_open": one("select count(*) from conflicts where user_id=? and status='open'"),
        }


def open_facts(settings) -> FactStore:
    """The workspace's fact store with the settings in effect (one place, for the digest and the read path)."""
    ws = Workspace(settings.home)
    return FactStore(ws.facts_db, expiry_days=settings.expiry_days, reinforce_step=settings.reinforce_step,
                     aliases=load_aliases(ws.knowledge / "99_system" / "subject_aliases.txt"), timezone=settings.timezone)


@contextmanager
def facts_for(settings, store: FactStore | None = None) -> Iterator[FactStore]:
    """``store`` when the caller holds the run's fact store (a day, a replay: opened once for all its stages), else
    one opened for this call alone and closed after it (a stage or a decision called by itself)."""
    if store is not None:
        yield store
        return
    own = open_facts(settings)
    try:
        yield own
    finally:
        own.close()
