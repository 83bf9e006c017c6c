"""L2: structured facts in SQLite (``04_memory/long_term/facts.db``).

Rules the store enforces, whatever extractor proposed the candidate:
- the same fact again raises its confidence slightly: no duplicate row;
- same subject and (single-valued) predicate with a new object supersedes the old row: the old row
  keeps its data with validity closed and ``superseded_by`` set, the new row carries
  ``previous_version``; nothing is deleted or overwritten;
- an inference never supersedes a stated or corrected fact: that is a conflict, recorded in the
  ``conflicts`` table and ``logs/conflicts.log`` for review;
- every candidate observation is applied once (keyed by source bytes and line range), so re-running a
  day or a backfill leaves the store exactly as it was.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta
from pathlib import Path

import sqlite_utils

from kernel import clock
from kernel.domain import AUTHORITY, Candidate
from kernel.text import normalize_key, subject_key
from storage.migrations import Migrations

# Predicates that cancel each other on the same object ("likes coffee" then "dislikes coffee").
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


@dataclass
class ApplyReport:
    added: int = 0
    reinforced: int = 0
    superseded: int = 0
    conflicts: int = 0
    already_applied: int = 0
    fact_ids: list[int | None] = field(default_factory=list)  # per candidate, in order
    conflict_lines: list[str] = field(default_factory=list)  # new conflicts, for conflicts.log

    def as_dict(self) -> dict:
        return {k: getattr(self, k) for k in ("added", "reinforced", "superseded", "conflicts", "already_applied")}


def _end_of(day: date | datetime | str) -> str:
    if isinstance(day, str):
        day = date.fromisoformat(day[:10]) if len(day) <= 10 else datetime.fromisoformat(day)
    if isinstance(day, datetime):
        return day.replace(tzinfo=None).isoformat(timespec="seconds")
    return f"{day.isoformat()}T23:59:59"


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

    def close(self) -> None:
        self.db.close()

    # -- writes ----------------------------------------------------------------------------------
    def apply(self, user: str, day: date, candidates: list[Candidate], *, file_sha: dict[str, str], raw_refs: dict[str, str],
              contradictions: str = "supersede") -> ApplyReport:
        """Apply candidates in order, in one transaction (a concurrent writer waits its turn).

        ``contradictions="conflict"``: a candidate that contradicts an active fact never supersedes it but is
        recorded as a conflict for review (the knowledge base's ingest review: a document does not overrule memory).
        """
        report = ApplyReport()
        conn = self.db.conn
        conn.execute("begin immediate")
        try:
            for cand in candidates:
                report.fact_ids.append(self._apply_one(user, day, cand, file_sha.get(cand.source_file, ""), raw_refs.get(cand.source_file),
                                                       report, contradictions))
            conn.execute("commit")
        except BaseException:
            conn.execute("rollback")
            raise
        return report

    def record_digested(self, user: str, day: date, file: str, sha256: str, raw_ref: str | None) -> None:
        self.db.execute(
            "insert or ignore into digested (user_id, day, file, sha256, raw_ref, first_digested_at) values (?, ?, ?, ?, ?, ?)",
            [user, day.isoformat(), file, sha256, raw_ref, clock.stamp(self.tz)],
        )
        self.db.conn.commit()

    def is_digested(self, user: str, day: date, file: str, sha256: str) -> bool:
        row = self.db.execute("select 1 from digested where user_id=? and day=? and file=? and sha256=?", [user, day.isoformat(), file, sha256]).fetchone()
        return row is not None

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
                   contradictions: str = "supersede") -> int | None:
        ckey = cand.key(user, sha)
        seen = self._row("select fact_id, action from evidence where candidate_key = ?", [ckey])
        if seen is not None:
            report.already_applied += 1
            return seen["fact_id"]
        skey, okey = subject_key(cand.subject, self.aliases), normalize_key(cand.object)
        if not skey or not okey:
            return None
        evidence = dict(candidate_key=ckey, user_id=user, source_day=day.isoformat(), source_file=cand.source_file,
                        raw_ref=raw_ref, line_start=cand.line_start, line_end=cand.line_end, observed_at=cand.observed_at)
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
            old = self._row(
                "select * from facts where user_id=? and subject_key=? and predicate=? and status='active' order by valid_from desc limit 1",
                [user, skey, cand.predicate],
            )
            if old and old["object_key"] == okey:
                return self._reinforce(old, cand, evidence, report)
        if not old:
            fid = self._insert(user, day, cand, skey, okey, raw_ref)
            self._evidence(evidence, "added", fid)
            report.added += 1
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
        self.db.execute("update facts set status='superseded', valid_to=?, superseded_by=? where id=?", [cand.observed_at, fid, old["id"]])
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
        c = self._row("select * from conflicts where id=? and user_id=?", [conflict_id, user])
        if c is None:
            raise KeyError(f"no conflict #{conflict_id} for user {user!r}")
        if c["status"] != "open":
            raise ValueError(f"conflict #{conflict_id} is already {c['status']}")
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

    def as_of(self, user: str, when: date | datetime | str | None = None, *, min_confidence: float = 0.0) -> list[dict]:
        """The facts that held at the end of ``when`` (default: now), not expired by then."""
        at = _end_of(when) if when is not None else clock.wall_iso(self.tz)
        return self._rows(
            "select * from facts where user_id=? and valid_from <= ? and (valid_to is null or valid_to > ?)"
            " and (expires_at is null or expires_at > ?) and confidence >= ? order by subject_key, predicate, valid_from",
            [user, at, at, at, min_confidence],
        )

    def current(self, user: str, **kw) -> list[dict]:
        return self.as_of(user, None, **kw)

    def history(self, user: str, subject: str) -> list[dict]:
        """Every version of every fact about ``subject`` (exact key, else a substring match), oldest first."""
        key = subject_key(subject, self.aliases)
        rows = self._rows("select * from facts where user_id=? and subject_key=? order by predicate, valid_from, id", [user, key])
        if not rows and key:
            rows = self._rows("select * from facts where user_id=? and subject_key like ? order by subject_key, predicate, valid_from, id",
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
            " from evidence e join facts f on f.id = e.fact_id where e.user_id=? and e.source_day=? order by e.source_file, e.line_start, f.id",
            [user, day.isoformat()],
        )

    def counts(self, user: str) -> dict:
        one = lambda sql: self.db.execute(sql, [user]).fetchone()[0]  # noqa: E731
        return {
            "facts": one("select count(*) from facts where user_id=?"),
            "active": one("select count(*) from facts where user_id=? and status='active'"),
            "superseded": one("select count(*) from facts where user_id=? and status='superseded'"),
            "conflicts_open": one("select count(*) from conflicts where user_id=? and status='open'"),
        }


def open_facts(settings) -> FactStore:
    """The workspace's fact store with the settings in effect (one place, for the digest and the read path)."""
    from kernel.text import load_aliases
    from kernel.workspace import Workspace

    ws = Workspace(settings.home)
    return FactStore(ws.facts_db, expiry_days=settings.expiry_days, reinforce_step=settings.reinforce_step,
                     aliases=load_aliases(ws.knowledge / "99_system" / "subject_aliases.txt"), timezone=settings.timezone)
