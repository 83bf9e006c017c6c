"""L2: structured facts in SQLite (``04_memory/long_term/facts.db``).

Rules the store enforces, whatever extractor proposed the candidate:
- the same fact again raises its confidence slightly: no duplicate row;
- same subject and (single-valued) predicate with a new object supersedes the old row: the old row
  keeps its data with validity closed and ``superseded_by`` set, the new row carries
  ``previous_version``; nothing is deleted or overwritten;
- an inference never supersedes a stated or corrected fact: that is a conflict, recorded in the
  ``conflicts`` table and ``logs/conflicts.log`` for review;
- every candidate observation is applied once (a digest's keyed by its day, file, lines' content and fact; others by
  source bytes and line range), so re-running a day or a backfill leaves the store exactly as it was;
- every fact knows its evidence: an observation its logs no longer hold is retired, and a fact left with none is
  retracted; a fact a person forgets is closed for good (``forget``); past its expiry a fact is stale, not gone.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass, field, replace
from datetime import date, datetime, timedelta
from pathlib import Path
from typing import Protocol

import sqlite_utils

from kernel import clock
from kernel.domain import AUTHORITY, Candidate
from kernel.text import has_cjk, normalize_key, subject_key
from kernel.valuetypes import SELF_NAMED, value_key, value_type
from storage.migrations import Migrations

# Predicates that cancel each other on the same object ("likes coffee" then "dislikes coffee").
# A stop ("Copilot 停用了", "cancelled Netflix"): it closes the speaker's current facts that name its thing.
STOPPED = "stopped"
OPPOSITES = {"likes": "dislikes", "dislikes": "likes", "prefers": "prefers_not", "prefers_not": "prefers"}

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
    from kernel.secrets import locate_markers, mask_lines, mask_value, repair_markers

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
    from kernel.secrets import mask_lines, mask_value

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


class SlotMatcher(Protocol):
    """Whether two subjects name the same slot ("服务器" / "服务器配置" / "server spec"), whatever the words. The store
    asks it only about subjects whose values are of one type (kernel.valuetypes): the words alone never decide."""

    def related(self, a: str, b: str, loose: bool = False) -> bool: ...

    def slot_name(self, old: str, new: str) -> str:
        """The subject a slot's new version is stored under (the old name, unless it names no attribute)."""
        ...


def _says(text: str, value: str) -> bool:
    """``text`` (case-folded) names ``value`` as a whole: a word of its own in Latin script ("500 rps", not "sql" in
    "postgresql"), anywhere in Chinese."""
    v = value.casefold().strip()
    if not v:
        return False
    return re.search(rf"(?<![a-z0-9]){re.escape(v)}(?![a-z0-9])", text) is not None


class NearestSlot(Protocol):
    """Optional on a SlotMatcher: which of ``options`` (fact id, the sentence it was read from) a change told in
    free words (``text``) replaces, by meaning; None when none clearly does."""

    def nearest(self, text: str, options: list[tuple[int, str]]) -> int | None: ...


# Statuses of a fact: ``active`` (current; past its expiry it is still served, flagged stale), ``superseded`` (history),
# ``retracted`` and ``forgotten`` (closed: never served as current, stale or history to an agent).
SERVED = ("active", "superseded")


@dataclass
class ApplyReport:
    added: int = 0
    reinforced: int = 0
    superseded: int = 0
    conflicts: int = 0
    already_applied: int = 0
    retracted: int = 0  # facts whose only evidence the logs no longer hold
    restored: int = 0  # earlier versions current again because what superseded them was retracted
    forgotten: int = 0  # observations of a fact a person forgot, from the lines that said it: not applied
    fact_ids: list[int | None] = field(default_factory=list)  # per candidate, in order
    conflict_lines: list[str] = field(default_factory=list)  # new conflicts, for conflicts.log

    def as_dict(self) -> dict:
        return {k: getattr(self, k) for k in ("added", "reinforced", "superseded", "conflicts", "already_applied", "retracted")}


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


class FactStore:
    """The facts database. Open with a path; ``apply`` writes, everything else reads."""

    def __init__(self, path: Path, *, expiry_days: dict[str, int | None] | None = None, reinforce_step: float = 0.05,
                 aliases: dict[str, str] | None = None, timezone: str = clock.DEFAULT_TZ):
        self.path = Path(path)
        self.tz = timezone  # the workspace's zone: stored validity is wall time there
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.db = sqlite_utils.Database(self.path)
        self.db.execute("pragma journal_mode=wal")
        self.db.execute("pragma busy_timeout=30000")
        migrations.apply(self.db)
        self.expiry_days = expiry_days or {"technical": 180}
        self.reinforce_step = reinforce_step
        self.aliases = aliases or {}
        self._carry: dict[int, int] = {}  # during an apply: fact id -> retiring observations a new one may stand in for
        self._fresh: set[tuple[str, str, int]] = set()  # during an apply: (file, content, occurrence) of lines first read now
        self._slots: SlotMatcher | None = None  # during an apply: the caller's judge of which subjects share a slot

    def close(self) -> None:
        self.db.close()

    # -- writes ----------------------------------------------------------------------------------
    def apply(self, user: str, day: date, candidates: list[Candidate], *, file_sha: dict[str, str], raw_refs: dict[str, str],
              contradictions: str = "supersede", observations: list[tuple[str, int] | None] | None = None,
              retire: list[tuple[str, str]] | None = None, slots: SlotMatcher | None = None) -> ApplyReport:
        """Apply candidates in order, in one transaction (a concurrent writer waits its turn).

        ``contradictions="conflict"``: a candidate that contradicts an active fact never supersedes it but is
        recorded as a conflict for review (the knowledge base's ingest review: a document does not overrule memory).

        ``observations`` (the digest's, one per candidate or None): the hash of the candidate's lines, normalised, and
        which occurrence of that content in its file they are. The observation is then known by its day, file,
        content and fact, not by the whole file's hash: re-digesting an edited log applies only its new or changed
        lines. Without one, by the file's hash (``file_sha``) as before.

        ``retire``: (observation key, reason) of earlier observations the day's logs no longer hold (a removed log, an
        edited line). They are retired after the candidates are applied; a fact left with no live evidence is
        retracted (and the version it superseded, if any, is current again); a conflict raised only by them is
        withdrawn. A new observation of the same fact (an edited line that still says it) takes a retired one's place
        without raising the confidence again.

        ``slots``: when a single-valued candidate's subject has no current value, a current fact of the same predicate
        whose value is of the same type (a spec, a version, a clock time ...) and whose subject ``slots`` relates is the
        same slot: the candidate supersedes it (a new value) or reinforces it (the same value said another way).
        """
        report = ApplyReport()
        conn = self.db.conn
        conn.execute("begin immediate")
        try:
            self._carry, self._slots = self._carry_over(retire or []), slots
            for i, cand in enumerate(candidates):
                obs = observations[i] if observations else None
                key = self.observation_key(user, day, cand, obs) if obs else None  # from the digest's text, before masking
                cand = masked_candidate(cand, raw_refs.get(cand.source_file))
                report.fact_ids.append(self._apply_one(user, day, cand, file_sha.get(cand.source_file, ""), raw_refs.get(cand.source_file),
                                                       report, contradictions, key=key, obs=obs))
            if retire:
                self._retire(retire, report)
            conn.execute("commit")
        except BaseException:
            conn.execute("rollback")
            raise
        finally:
            self._carry, self._fresh, self._slots = {}, set(), None
        return report

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
            return self._rows("select rowid, * from digested where user_id=? and retired_at is null order by day, file", [user])
        return self._rows("select rowid, * from digested where user_id=? and day=? and retired_at is null order by file", [user, day.isoformat()])

    def digested_names(self, user: str, day: date) -> set[str]:
        """Every file name any digest of the day read, live or not."""
        return {r[0] for r in self.db.execute("select file from digested where user_id=? and day=?", [user, day.isoformat()]).fetchall()}

    def last_digested_day(self, user: str) -> str | None:
        """The latest day digested for ``user`` (ISO), or None: where in the history a decision made now falls."""
        return self.db.execute("select max(day) from digested where user_id=? and retired_at is null", [user]).fetchone()[0]

    def journal_applied(self) -> set[str]:
        return {r[0] for r in self.db.execute("select id from journal_applied").fetchall()}

    def mark_journal_applied(self, event: dict, outcome: str) -> None:
        self.db.execute("insert or replace into journal_applied (id, kind, host, outcome, applied_at) values (?, ?, ?, ?, ?)",
                        [event["id"], event["kind"], event.get("host"), outcome, clock.stamp(self.tz)])
        self.db.conn.commit()

    def forget_targets(self, user: str, skey: str, predicate: str, okey: str, sources: list[str]) -> list[int]:
        """The facts (not yet forgotten) a forget made elsewhere meant: the same subject, predicate and value, said on
        one of the days and files it named."""
        rows = self._rows("select id, source_day, source_file from facts where user_id=? and subject_key=? and predicate=? and object_key=?"
                          " and status != 'forgotten' order by id", [user, skey, predicate, okey])
        want = set(sources)
        return [r["id"] for r in rows
                if f"{r['source_day']}|{r['source_file']}" in want
                or want & {f"{e['source_day']}|{e['source_file']}" for e in self.evidence_of(r["id"])}]

    def find_conflict(self, user: str, key: dict) -> dict | None:
        """The open conflict a decision made elsewhere settled: the same subject, values and source lines."""
        return self._row("select * from conflicts where user_id=? and status='open' and subject=? and predicate=? and existing_object=?"
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
        return self._rows("select * from evidence where user_id=? and source_day=? and retracted_at is null and origin in ('log', 'legacy')"
                          " order by source_file, line_start", [user, day.isoformat()])

    def adopt(self, user: str, day: date, keyed: list[tuple[str, str | None, int | None, str]]) -> int:
        """Re-key legacy observations of ``day`` by content: (old key, content hash, occurrence, file) each, the hash
        None when the lines could not be read back (the row then stays as it is, never retired). Returns how many."""
        n = 0
        conn = self.db.conn
        conn.execute("begin immediate")
        try:
            for old, content, occurrence, file in keyed:
                row = self._row("select * from evidence where candidate_key=? and origin='legacy'", [old])
                if row is None:
                    continue
                triple = self._triple_of(row)
                if content is None or triple is None:
                    self.db.execute("update evidence set origin='other' where candidate_key=?", [old])
                    continue
                payload = json.dumps([user, day.isoformat(), file, content, occurrence, *triple], ensure_ascii=False)
                new = "o:" + hashlib.sha256(payload.encode("utf-8")).hexdigest()[:32]
                if self._row("select 1 as x from evidence where candidate_key=?", [new]) is not None:
                    self.db.execute("update evidence set origin='other' where candidate_key=?", [old])  # the same observation twice
                    continue
                self.db.execute("update evidence set candidate_key=?, origin='log', obs_hash=?, obs_occurrence=? where candidate_key=?",
                                [new, content, occurrence, old])
                n += 1
            conn.execute("commit")
        except BaseException:
            conn.execute("rollback")
            raise
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
            c = self._row("select * from conflicts where id=?", [ev["conflict_id"]])
            if c is None:
                return None
            return subject_key(c["subject"], self.aliases), c["predicate"], normalize_key(c["candidate_object"])
        return None

    def evidence_of(self, fact_id: int) -> list[dict]:
        """Every observation of a fact, live or retired, oldest first."""
        return self._rows("select * from evidence where fact_id=? order by observed_at, rowid", [fact_id])

    def _live_id(self, fact_id: int | None) -> int | None:
        if fact_id is None:
            return None
        row = self._row("select status from facts where id=?", [fact_id])
        return fact_id if row and row["status"] in SERVED else None

    def _carry_over(self, retire: list[tuple[str, str]]) -> dict[int, int]:
        carry: dict[int, int] = {}
        for key, _ in retire:
            row = self._row("select fact_id, action from evidence where candidate_key=? and retracted_at is null", [key])
            if row and row["fact_id"] is not None and row["action"] in ("added", "reinforced", "superseded", "historical", "kept"):
                carry[row["fact_id"]] = carry.get(row["fact_id"], 0) + 1
        return carry

    def _retire(self, retire: list[tuple[str, str]], report: ApplyReport) -> None:
        stamp, now = clock.stamp(self.tz), clock.wall_iso(self.tz)
        touched: dict[int, str] = {}
        for key, reason in retire:
            row = self._row("select fact_id, conflict_id, action from evidence where candidate_key=? and retracted_at is null", [key])
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
            report.retracted += 1
            retracted.append(f)
        for f in retracted:  # what a retracted fact superseded holds again, unless the slot has a current value since
            if f["status"] != "active" and f["predicate"] != STOPPED:
                continue
            order = "select * from facts where superseded_by=? and status='superseded' order by valid_from desc, id desc"
            # a stop closed every fact that named its thing: all of them come back; a new value closed one
            for prev in self._rows(order, [f["id"]]) if f["predicate"] == STOPPED else filter(None, [self._row(order + " limit 1", [f["id"]])]):
                self._restore(prev, report)

    def _restore(self, prev: dict, report: ApplyReport) -> None:
        """``prev`` current again, unless its slot has a current value since."""
        slot = "select 1 as x from facts where user_id=? and subject_key=? and predicate=? and status='active'"
        args = [prev["user_id"], prev["subject_key"], prev["predicate"]]
        if prev["multi_valued"]:
            slot, args = slot + " and object_key=?", args + [prev["object_key"]]
        if self._row(slot, args) is None:
            self.db.execute("update facts set status='active', valid_to=null, superseded_by=null where id=?", [prev["id"]])
            report.restored += 1

    def forget(self, user: str, fact_id: int, reason: str) -> dict:
        """A person closes a fact: status ``forgotten``, validity closed now, the reason kept. It is never served again
        (as current, stale or history to an agent), and the days and files that said it are remembered, so digesting
        the same lines again (or an edit of them) does not bring it back. Another user's fact is unknown here."""
        f = self.forgettable(user, fact_id)
        reason = self.forget_reason(reason)
        sources = sorted({f"{e['source_day']}|{e['source_file']}" for e in self.evidence_of(fact_id)} | {f"{f['source_day']}|{f['source_file']}"})
        stamp, now = clock.stamp(self.tz), clock.wall_iso(self.tz)
        conn = self.db.conn
        conn.execute("begin immediate")
        try:
            self.db.execute("update facts set status='forgotten', valid_to=coalesce(valid_to, ?), closed_reason=?, closed_at=? where id=?",
                            [now, reason, stamp, fact_id])
            self.db.execute("insert into forgotten (user_id, fact_id, subject_key, predicate, object_key, sources, reason, forgotten_at)"
                            " values (?, ?, ?, ?, ?, ?, ?, ?)",
                            [user, fact_id, f["subject_key"], f["predicate"], f["object_key"], json.dumps(sources, ensure_ascii=False), reason, stamp])
            conn.execute("commit")
        except BaseException:
            conn.execute("rollback")
            raise
        return self.get(fact_id)

    def forgettable(self, user: str, fact_id: int) -> dict:
        """The fact ``forget`` would close (KeyError: no such fact of the user; ValueError: forgotten already)."""
        f = self._row("select * from facts where id=? and user_id=?", [fact_id, user])
        if f is None:
            raise KeyError(f"no fact #{fact_id}")
        if f["status"] == "forgotten":
            raise ValueError(f"fact #{fact_id} is already forgotten")
        return f

    @staticmethod
    def forget_reason(reason: str | None) -> str:
        """The reason as ``forget`` keeps it: one line, secrets masked."""
        from kernel.secrets import mask_lines

        return mask_lines(" ".join((reason or "").split()) or "forgotten at the user's request")[0]

    def open_conflict(self, user: str, conflict_id: int) -> dict:
        """The open conflict ``resolve_conflict`` would settle (KeyError: none of the user's; ValueError: settled)."""
        c = self._row("select * from conflicts where id=? and user_id=?", [conflict_id, user])
        if c is None:
            raise KeyError(f"no conflict #{conflict_id} for user {user!r}")
        if c["status"] != "open":
            raise ValueError(f"conflict #{conflict_id} is already {c['status']}")
        return c

    def _forgotten(self, user: str, skey: str, predicate: str, okey: str, day: date, file: str) -> int | None:
        """The forgotten fact this observation would bring back: the same fact from a day and file that said it."""
        where = f"{day.isoformat()}|{file}"
        for row in self._rows("select fact_id, sources from forgotten where user_id=? and subject_key=? and predicate=? and object_key=?",
                              [user, skey, predicate, okey]):
            if where in json.loads(row["sources"]):
                return row["fact_id"]
        return None

    def _stop(self, user: str, day: date, cand: Candidate, skey: str, okey: str, raw_ref, evidence: dict, report: ApplyReport) -> int:
        """Close the speaker's current facts that name the stopped thing (as object or subject; a name of several
        words by any capitalised word of it: "Netflix sub" -> Netflix) and record the stop as history: it held at
        its moment, it is not a current fact. Said again with nothing left to close, it reinforces the stop."""
        keys = {okey} | {normalize_key(w) for w in cand.object.split() if w[:1].isupper() and len(w) >= 3}
        keys = {k for k in keys if len(k) >= 2}
        # a Chinese compound names its kind last: stopping 夜跑 (night runs) stops what was said of 跑 (running)
        rows = [r for r in self._rows("select * from facts where user_id=? and status='active' and predicate != ? and valid_from <= ?"
                                      " and (valid_to is null or valid_to > ?)", [user, STOPPED, cand.observed_at, cand.observed_at])
                if any(k in r["object_key"] or k in r["subject_key"] for k in keys)
                or (r["subject_key"] and has_cjk(r["subject_key"]) and okey.endswith(r["subject_key"]) and okey != r["subject_key"])]
        if not rows:
            same = self._row("select * from facts where user_id=? and subject_key=? and predicate=? and object_key=? order by valid_from desc limit 1",
                             [user, skey, STOPPED, okey])
            if same:
                return self._reinforce(same, cand, evidence, report)
        fid = self._insert(user, day, cand, skey, okey, raw_ref, status="superseded", valid_to=cand.observed_at)
        for r in rows:
            self.db.execute("update facts set status='superseded', valid_to=?, superseded_by=? where id=?", [cand.observed_at, fid, r["id"]])
        self._evidence(evidence, "added", fid)
        report.added += 1
        report.superseded += len(rows)
        return fid

    def _close_events(self, user: str, old_key: str, at: str, by: int) -> None:
        """Events that tell of a value now replaced ("那台现在还是4C8G的，一跑e2e就OOM") are how things were: history, closed
        by the change, not current facts beside the new value. Short values are left alone (too many sentences hold them)."""
        if len(old_key) < 3 and not (has_cjk(old_key) and len(old_key) >= 2):
            return
        self.db.execute("update facts set status='superseded', valid_to=?, superseded_by=? where user_id=? and predicate='event'"
                        " and status='active' and valid_from <= ? and object_key like ? and id != ?", [at, by, user, at, f"%{old_key}%", by])

    def _holding(self, user: str, cand: Candidate) -> dict | None:
        """The current fact that holds the old value ``cand.replaces`` names (the latest), of the same person."""
        rkey = value_key(cand.replaces or "")
        if len(rkey) < 2:
            return None
        # a slot holds it, not a story: events and plans that mention it are closed by the change, never continued
        rows = self._rows("select * from facts where user_id=? and status='active' and predicate not in (?, 'event', 'plans')"
                          " and object_key like ? order by valid_from desc, id desc", [user, STOPPED, f"%{rkey}%"])
        for row in rows:
            if self._slots is None or self._slots.related(cand.subject, row["subject"], True):
                return row
        return None

    def _change_alone(self, user: str, day: date, cand: Candidate, skey: str, okey: str, raw_ref, evidence: dict,
                      report: ApplyReport) -> int:
        """A change whose old value no current fact holds: the new value is added (it supersedes nothing on words
        alone) and the old one is recorded as history, held until the change."""
        same = self._row("select * from facts where user_id=? and subject_key=? and predicate=? and object_key=? and status='active'",
                         [user, skey, cand.predicate, okey])
        if same:
            return self._reinforce(same, cand, evidence, report)
        fid = self._insert(user, day, cand, skey, okey, raw_ref)
        self._close_events(user, value_key(cand.replaces), cand.observed_at, fid)
        old = replace(cand, object=cand.replaces)
        self._insert(user, day, old, skey, value_key(cand.replaces), raw_ref, status="superseded", valid_to=cand.observed_at,
                     superseded_by=fid)
        self._evidence(evidence, "added", fid)
        report.added += 1
        return fid

    def _renew(self, user: str, cand: Candidate, fid: int) -> int:
        """A change told in free words (``cand.renews``) that no rule tied to a slot: the current fact of the same person,
        said on an earlier day, that holds what the change says it leaves (``cand.replaces``: "left Google"), else the
        one the caller's matcher picks by meaning; that one is closed
        at the change, like any superseded value. A story (event, plan) or a list (likes, does) is never replaced
        this way, only a single value or an earlier free-worded change. Returns how many facts it closed."""
        nearest = getattr(self._slots, "nearest", None)
        if nearest is None:
            return 0
        rows = self._rows("select * from facts where user_id=? and status='active' and valid_to is null and source_day < ?"
                          " and (multi_valued=0 or predicate='states') and predicate not in (?, 'event', 'plans')"
                          " and object_key != ?", [user, cand.observed_at[:10], STOPPED, value_key(cand.object)])
        rows = [r for r in rows if self._slots.related(cand.subject, r["subject"], True)]
        left = value_key(cand.replaces) if cand.replaces else None

        def said(r: dict) -> str:
            return r["evidence"] or f"{r['subject']} {r['object']}"

        # what the change says it leaves ("left Google") is the one; else one by meaning, never a fact whose value the
        # change says again ("500 rps 今天零点正式生效" confirms 500 rps, it does not end it)
        old = next((r for r in rows if left and r["object_key"] == left), None)
        if old is None:
            told = (cand.evidence or cand.object).casefold()
            rows = [r for r in rows if not _says(told, r["object"])]
            chosen = nearest(cand.evidence or cand.object, [(r["id"], said(r)) for r in rows]) if rows else None
            old = next((r for r in rows if r["id"] == chosen), None)
        if old is None:
            return 0
        # the facts read from that one sentence ("我在美团做产品经理": employer and role) are what the change replaces
        closing = [r for r in rows if said(r) == said(old) and (r["source_file"], r["line_start"]) == (old["source_file"], old["line_start"])]
        # a change dated later ("下个月起我调到北京工作": an event of next month) ends the old fact on that day, not today
        at = max(cand.observed_at, f"{cand.event_date}T00:00:00" if cand.event_date else "")
        later = at > clock.wall_iso(self.tz)
        for r in closing:
            self.db.execute("update facts set status=?, valid_to=?, superseded_by=? where id=?",
                            ["active" if later else "superseded", at, fid, r["id"]])
            if not later:
                self._close_events(user, r["object_key"], at, fid)
        return len(closing)

    def _same_slot(self, user: str, skey: str, cand: Candidate) -> dict | None:
        """The current fact another subject holds for the slot ``cand`` fills (see ``apply``), the latest one; or None."""
        kind = value_type(cand.object)
        if self._slots is None or kind is None:
            return None
        rows = self._rows("select * from facts where user_id=? and predicate=? and status='active' and subject_key != ?"
                          " order by valid_from desc, id desc", [user, cand.predicate, skey])
        okey = value_key(cand.object)
        for row in rows:  # the same typed value said again in other words ("每晚七点上床" / "7点睡"): the same fact
            if row["object_key"] == okey and self._slots.related(cand.subject, row["subject"], True):
                return row
        for row in rows:
            # a correction takes back the last value of its type; a value that names its own thing ("3 cups") is its slot
            loose = cand.explicitness == "corrected" or kind.startswith(SELF_NAMED)
            if value_type(row["object"]) == kind and self._slots.related(cand.subject, row["subject"], loose):
                return row
        return None

    def _expiry(self, cand_nature: str, technical: bool, valid_from: str) -> str | None:
        kind = "technical" if technical else cand_nature
        days = self.expiry_days.get(kind)
        if days is None:
            return None
        return (datetime.fromisoformat(valid_from) + timedelta(days=days)).isoformat(timespec="seconds")

    def _row(self, sql: str, params: list) -> dict | None:
        cur = self.db.execute(sql, params)
        row = cur.fetchone()
        if row is None:
            return None
        return dict(zip([c[0] for c in cur.description], row))

    def _apply_one(self, user: str, day: date, cand: Candidate, sha: str, raw_ref: str | None, report: ApplyReport,
                   contradictions: str = "supersede", *, key: str | None = None, obs: tuple[str, int] | None = None) -> int | None:
        ckey = key or cand.key(user, sha)
        seen = self._row("select fact_id, action, retracted_at from evidence where candidate_key = ?", [ckey])
        if seen is not None and seen["retracted_at"] is None:
            report.already_applied += 1
            return self._live_id(seen["fact_id"])  # a retracted or forgotten fact is not the card's any more
        if seen is not None:  # the same observation back (a removed log restored): the retired row stays, as history
            self.db.execute("update evidence set candidate_key = candidate_key || '~' || rowid where candidate_key = ?", [ckey])
        elif obs is not None and (cand.source_file, *obs) not in self._fresh:
            # lines already digested, unchanged, read another way this time (a chat model's wording, a newer extractor):
            # still the same observation, applied once
            same = self._row("select fact_id from evidence where user_id=? and source_day=? and source_file=? and obs_hash=? and obs_occurrence=?"
                             " and origin='log' and retracted_at is null order by rowid limit 1",
                             [user, day.isoformat(), cand.source_file, obs[0], obs[1]])
            if same is not None:
                report.already_applied += 1
                return self._live_id(same["fact_id"])
        if obs is not None:
            self._fresh.add((cand.source_file, *obs))  # lines new to the store: every candidate they give applies
        skey, okey = subject_key(cand.subject, self.aliases), value_key(cand.object)  # one clock time however written
        if not skey or not okey:
            return None
        evidence = dict(candidate_key=ckey, user_id=user, source_day=day.isoformat(), source_file=cand.source_file,
                        raw_ref=raw_ref, line_start=cand.line_start, line_end=cand.line_end, observed_at=cand.observed_at,
                        origin="log" if obs else None, obs_hash=obs[0] if obs else None, obs_occurrence=obs[1] if obs else None)
        gone = self._forgotten(user, skey, cand.predicate, okey, day, cand.source_file)
        if gone is not None:  # a person forgot it: the lines that said it do not bring it back
            self._evidence(evidence, "forgotten", gone)
            report.forgotten += 1
            return None
        if cand.predicate == STOPPED:
            return self._stop(user, day, cand, skey, okey, raw_ref, evidence, report)
        if cand.ended:  # "I used to live in Boston": it held before the day it was said, and is history now
            same = self._row("select * from facts where user_id=? and subject_key=? and predicate=? and object_key=? and valid_to is not null",
                             [user, skey, cand.predicate, okey])
            if same:
                return self._reinforce(same, cand, evidence, report)
            fid = self._insert(user, day, cand, skey, okey, raw_ref, status="superseded", valid_to=cand.observed_at)
            self._evidence(evidence, "historical", fid)
            report.added += 1
            return fid
        if cand.replaces and not cand.multi_valued:
            holder = self._holding(user, cand)
            if holder is None:  # nothing holds the old value: the new one stands alone, the old one is history
                return self._change_alone(user, day, cand, skey, okey, raw_ref, evidence, report)
            if holder["object_key"] != okey:  # the change continues the slot that held the old value
                cand = replace(cand, subject=holder["subject"], predicate=holder["predicate"], nature=holder["nature"],
                               multi_valued=bool(holder["multi_valued"]))
                skey = holder["subject_key"]
        if cand.multi_valued:
            same = self._row(
                "select * from facts where user_id=? and subject_key=? and predicate=? and object_key=? and status='active' order by valid_from desc limit 1",
                [user, skey, cand.predicate, okey],
            )
            if same:
                return self._reinforce(same, cand, evidence, report)
            opposite = OPPOSITES.get(cand.predicate)
            old = opposite and self._row(
                "select * from facts where user_id=? and subject_key=? and predicate=? and object_key=? and status='active' order by valid_from desc limit 1",
                [user, skey, opposite, okey],
            )
        else:
            # the value holding when this was said (before a change that starts later, the old one), else the latest
            old = self._row(
                "select * from facts where user_id=? and subject_key=? and predicate=? and status='active' and valid_from <= ?"
                " and (valid_to is null or valid_to > ?) order by valid_from desc limit 1",
                [user, skey, cand.predicate, cand.observed_at, cand.observed_at],
            ) or self._row(
                "select * from facts where user_id=? and subject_key=? and predicate=? and status='active' order by valid_from desc limit 1",
                [user, skey, cand.predicate],
            )
            if old is None and (old := self._same_slot(user, skey, cand)) is not None and old["object_key"] != okey:
                # the slot keeps one name across its versions (its history and lookups read as one), the better one
                cand = replace(cand, subject=self._slots.slot_name(old["subject"], cand.subject))
                skey = subject_key(cand.subject, self.aliases)
            if old and old["object_key"] == okey:
                return self._reinforce(old, cand, evidence, report)
        if not old:
            fid = self._insert(user, day, cand, skey, okey, raw_ref)
            self._evidence(evidence, "added", fid)
            report.added += 1
            if cand.renews:
                report.superseded += self._renew(user, cand, fid)
            return fid
        if cand.observed_at < old["valid_from"]:
            # A backfill of an earlier day: the value held before the current one. Recorded as history.
            fid = self._insert(user, day, cand, skey, okey, raw_ref, status="superseded", valid_to=old["valid_from"], superseded_by=old["id"])
            self._evidence(evidence, "historical", fid)
            report.added += 1
            return fid
        if contradictions == "conflict":
            return self._conflict(user, day, cand, old, raw_ref, evidence, report,
                                  f"{cand.source_file} says {cand.object}, memory holds {old['predicate']} {old['object']}: kept for review")
        if AUTHORITY[cand.explicitness] < AUTHORITY[old["explicitness"]] and cand.explicitness == "inferred":
            return self._conflict(user, day, cand, old, raw_ref, evidence, report,
                                  f"an inference does not overrule a {old['explicitness']} fact ({old['predicate']} {old['object']})")
        fid = self._insert(user, day, cand, skey, okey, raw_ref, version=old["version"] + 1, previous_version=old["id"])
        # A value that starts later ("from April 1") closes the old one at its start: until then the old one is current.
        later = cand.observed_at > clock.wall_iso(self.tz)
        self.db.execute("update facts set status=?, valid_to=?, superseded_by=? where id=?",
                        ["active" if later else "superseded", cand.observed_at, fid, old["id"]])
        if not later:
            self._close_events(user, old["object_key"], cand.observed_at, fid)
        self._evidence(evidence, "superseded", fid)
        report.superseded += 1
        return fid

    def _insert(self, user, day, cand: Candidate, skey, okey, raw_ref, *, status="active", valid_to=None, superseded_by=None,
                version=1, previous_version=None) -> int:
        now = clock.stamp(self.tz)
        row = dict(
            user_id=user, subject=cand.subject, subject_key=skey, predicate=cand.predicate, object=cand.object, object_key=okey,
            nature=cand.nature, technical=int(cand.technical), multi_valued=int(cand.multi_valued), confidence=round(cand.confidence, 4),
            explicitness=cand.explicitness, status=status, valid_from=cand.observed_at, valid_to=valid_to, learned_at=now,
            expires_at=self._expiry(cand.nature, cand.technical, cand.observed_at), event_date=cand.event_date, version=version,
            previous_version=previous_version, superseded_by=superseded_by, reinforcements=0, last_seen_at=cand.observed_at,
            source_day=day.isoformat(), source_file=cand.source_file, raw_ref=raw_ref, line_start=cand.line_start,
            line_end=cand.line_end, extractor=cand.extractor, evidence=cand.evidence,
        )
        cols = ", ".join(row)
        cur = self.db.execute(f"insert into facts ({cols}) values ({', '.join('?' * len(row))})", list(row.values()))
        return cur.lastrowid

    def _reinforce(self, row: dict, cand: Candidate, evidence: dict, report: ApplyReport) -> int:
        if self._carry.get(row["id"]):  # an edited line that still says it: it stands in for the retired observation
            self._carry[row["id"]] -= 1
            self._evidence(evidence, "kept", row["id"])
            report.already_applied += 1
            return row["id"]
        conf = row["confidence"] + self.reinforce_step * (1.0 - row["confidence"])
        conf = round(max(conf, cand.confidence if AUTHORITY[cand.explicitness] > AUTHORITY[row["explicitness"]] else 0), 4)
        explicitness = cand.explicitness if AUTHORITY[cand.explicitness] > AUTHORITY[row["explicitness"]] else row["explicitness"]
        last_seen = max(row["last_seen_at"], cand.observed_at)
        expires = row["expires_at"]
        if expires is not None:  # re-confirmed: the clock restarts from the latest sighting
            expires = max(expires, self._expiry(row["nature"], bool(row["technical"]), last_seen) or expires)
        self.db.execute(
            "update facts set confidence=?, explicitness=?, reinforcements=reinforcements+1, last_seen_at=?, expires_at=? where id=?",
            [conf, explicitness, last_seen, expires, row["id"]],
        )
        self._evidence(evidence, "reinforced", row["id"])
        report.reinforced += 1
        return row["id"]

    def _conflict(self, user, day, cand: Candidate, old: dict, raw_ref, evidence: dict, report: ApplyReport, reason: str) -> None:
        cur = self.db.execute(
            "insert into conflicts (user_id, subject, predicate, existing_fact_id, existing_predicate, existing_object, existing_explicitness,"
            " candidate_object, candidate_explicitness, candidate_confidence, reason, source_day, source_file, raw_ref, line_start, line_end,"
            " observed_at, created_at) values (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            [user, cand.subject, cand.predicate, old["id"], old["predicate"], old["object"], old["explicitness"], cand.object, cand.explicitness,
             cand.confidence, reason, day.isoformat(), cand.source_file, raw_ref, cand.line_start, cand.line_end, cand.observed_at, clock.stamp(self.tz)],
        )
        self._evidence(evidence, "conflict", None, conflict_id=cur.lastrowid)
        report.conflicts += 1
        report.conflict_lines.append(
            json.dumps({"user": user, "day": day.isoformat(), "subject": cand.subject, "predicate": cand.predicate,
                        "existing": {"fact_id": old["id"], "predicate": old["predicate"], "object": old["object"], "explicitness": old["explicitness"]},
                        "candidate": {"object": cand.object, "explicitness": cand.explicitness},
                        "source": f"{cand.source_file}:{cand.line_start}-{cand.line_end}", "reason": reason}, ensure_ascii=False)
        )
        return None

    def resolve_conflict(self, user: str, conflict_id: int, *, accept: bool) -> dict:
        """A person decides a conflict. Accepting makes the contested value a new version (as a user
        correction, so it outranks what was there); rejecting keeps the store as it is. Either way the
        conflict is closed and nothing is deleted."""
        c = self.open_conflict(user, conflict_id)
        fact_id = None
        if accept:
            old = self.get(c["existing_fact_id"]) or {}
            cand = Candidate(subject=c["subject"], predicate=c["predicate"], object=c["candidate_object"], nature=old.get("nature", "fact"),
                             confidence=max(0.9, c["candidate_confidence"]), explicitness="corrected", source_file=c["source_file"],
                             line_start=c["line_start"], line_end=c["line_end"], observed_at=max(c["observed_at"], old.get("valid_from", "")),
                             technical=bool(old.get("technical")), multi_valued=bool(old.get("multi_valued")),
                             extractor=f"review:conflict#{conflict_id}")
            day = date.fromisoformat(c["source_day"])
            report = self.apply(user, day, [cand], file_sha={c["source_file"]: f"conflict#{conflict_id}"},
                                raw_refs={c["source_file"]: c["raw_ref"]})
            fact_id = report.fact_ids[0]
        self.db.execute("update conflicts set status=?, resolved_at=?, resolved_fact_id=? where id=?",
                        ["accepted" if accept else "rejected", clock.stamp(self.tz), fact_id, conflict_id])
        self.db.conn.commit()
        return {**self._row("select * from conflicts where id=?", [conflict_id]), "fact": self.get(fact_id) if fact_id else None}

    def _evidence(self, evidence: dict, action: str, fact_id: int | None, conflict_id: int | None = None) -> None:
        row = {**evidence, "action": action, "fact_id": fact_id, "conflict_id": conflict_id}
        self.db.execute(f"insert into evidence ({', '.join(row)}) values ({', '.join('?' * len(row))})", list(row.values()))

    # -- reads -----------------------------------------------------------------------------------
    def _rows(self, sql: str, params: list) -> list[dict]:
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
        rows = self._rows(
            "select * from facts where user_id=? and status in ('active', 'superseded') and valid_from <= ? and (valid_to is null or valid_to > ?)"
            f"{fresh} and confidence >= ? order by (expires_at is not null and expires_at <= ?), subject_key, predicate, valid_from",
            [user, at, at, *([] if stale else [at]), min_confidence, at],
        )
        return [mark_stale(r, at) for r in rows]

    def people(self, user: str, before: date) -> list[str]:
        """The others the user's current facts are about (where they live and work, what they do), the latest said last:
        whom a "她" or "he" of a later day means when no one is named first."""
        return [s for s, pred in self.subjects(user, before) if pred in ("lives_in", "works_at", "role")]

    def subjects(self, user: str, before: date) -> list[tuple[str, str]]:
        """(subject, predicate) of the user's current facts about anything but the user, said before ``before``, the
        latest said last: the caller tells which of them name people ("coworker Priya", "同事老周")."""
        rows = self._rows("select subject, predicate, max(valid_from) as at from facts where user_id=? and status='active'"
                          " and subject_key != 'user' and valid_from < ? group by subject order by at", [user, before.isoformat()])
        return [(r["subject"], r["predicate"]) for r in rows]

    def upcoming(self, user: str, when: date | datetime | str | None = None) -> list[dict]:
        """Values that start after ``when`` (default: now): "from April 1 I take line 14", stored with that start and
        not current before it. Soonest first."""
        at = _end_of(when) if when is not None else clock.wall_iso(self.tz)
        return self._rows("select * from facts where user_id=? and status='active' and valid_from > ? order by valid_from, id", [user, at])

    def current(self, user: str, **kw) -> list[dict]:
        return self.as_of(user, None, **kw)

    def history(self, user: str, subject: str, *, closed: bool = True) -> list[dict]:
        """Every version of every fact about ``subject`` (exact key, else a substring match), oldest first.
        ``closed=False``: without the retracted and forgotten ones (what an agent may be shown)."""
        key = subject_key(subject, self.aliases)
        served = "" if closed else " and status in ('active', 'superseded')"
        rows = self._rows(f"select * from facts where user_id=? and subject_key=?{served} order by predicate, valid_from, id", [user, key])
        if not rows and key:
            rows = self._rows(f"select * from facts where user_id=? and subject_key like ?{served} order by subject_key, predicate, valid_from, id",
                              [user, f"%{key}%"])
        return rows

    def get(self, fact_id: int) -> dict | None:
        return self._row("select * from facts where id=?", [fact_id])

    def conflicts(self, user: str, status: str | None = "open") -> list[dict]:
        if status is None:
            return self._rows("select * from conflicts where user_id=? order by id", [user])
        return self._rows("select * from conflicts where user_id=? and status=? order by id", [user, status])

    def facts_of_day(self, user: str, day: date) -> list[dict]:
        """Facts the day's logs produced or confirmed, with what happened to each (for summaries)."""
        return self._rows(
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
    from kernel.text import load_aliases
    from kernel.workspace import Workspace

    ws = Workspace(settings.home)
    return FactStore(ws.facts_db, expiry_days=settings.expiry_days, reinforce_step=settings.reinforce_step,
                     aliases=load_aliases(ws.knowledge / "99_system" / "subject_aliases.txt"), timezone=settings.timezone)
