"""Pending proposals: what automatic extraction wanted to write but may not without the user.

A proposal is stored, never applied, when the target is a ``manual`` record (extraction never overwrites,
merges into or deletes one) or when the new statement differs from a similar record in a number, a date
or a negation (never merged). The user accepts or rejects it (``agentos memory proposals``). The same
pending proposal is stored once, so re-running a night's extraction adds nothing.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
from pathlib import Path

from agentos_mem.kernel import clock
from agentos_mem.storage.guards import database_file

STATUSES = ("pending", "accepted", "rejected")


class ProposalNotFound(KeyError):
    def __str__(self) -> str:
        return str(self.args[0]) if self.args else "proposal not found"


class ProposalStore:
    def __init__(self, path: Path):
        self.path = Path(path)
        self.con = sqlite3.connect(database_file(self.path), timeout=30, check_same_thread=False)  # never through a link
        self.con.row_factory = sqlite3.Row
        with self.con:
            self.con.execute(
                "create table if not exists proposals (id integer primary key, user text not null, kind text not null, "
                "target text, record text not null, reason text not null, created text not null, "
                "status text not null default 'pending', decided text)")
            # what the user deleted, as keys of the observations it came from (hashes: the deleted words are not kept)
            self.con.execute("create table if not exists deleted (user text not null, key text not null, name_hash text, "
                             "created text not null, primary key (user, key))")

    def close(self) -> None:
        self.con.close()

    @staticmethod
    def _row(r: sqlite3.Row) -> dict:
        d = dict(r)
        d["record"] = json.loads(d["record"])
        return d

    def add(self, user: str, kind: str, target: str | None, record: dict, reason: str) -> tuple[int, bool]:
        """Store a pending proposal; returns (id, created). An identical pending one is not stored twice."""
        blob = json.dumps(record, ensure_ascii=False, sort_keys=True)
        with self.con:
            row = self.con.execute("select id from proposals where user=? and kind=? and target is ? and record=? and status='pending'",
                                   [user, kind, target, blob]).fetchone()
            if row:
                return row[0], False
            cur = self.con.execute("insert into proposals (user, kind, target, record, reason, created) values (?,?,?,?,?,?)",
                                   [user, kind, target, blob, reason, clock.stamp()])
            return cur.lastrowid, True

    def list(self, user: str, status: str | None = "pending") -> list[dict]:
        q, args = "select * from proposals where user=?", [user]
        if status:
            q, args = q + " and status=?", [user, status]
        return [self._row(r) for r in self.con.execute(q + " order by id", args)]

    def get(self, user: str, pid: int) -> dict:
        r = self.con.execute("select * from proposals where id=? and user=?", [pid, user]).fetchone()
        if r is None:
            raise ProposalNotFound(f"no proposal {pid} for user {user!r}")
        return self._row(r)

    def decide(self, user: str, pid: int, status: str) -> None:
        if status not in STATUSES[1:]:
            raise ValueError(f"a decision is accepted or rejected, not {status!r}")
        with self.con:
            n = self.con.execute("update proposals set status=?, decided=? where id=? and user=? and status='pending'",
                                 [status, clock.stamp(), pid, user]).rowcount
        if n == 0:
            self.get(user, pid)  # raises when it does not exist
            raise ValueError(f"proposal {pid} was already decided")

    def remember_deleted(self, user: str, keys: list[str], name: str | None, *, name_hash: str | None = None) -> None:
        """The user deleted a memory made from these observations: automatic extraction never makes it again from them
        (``name_hash``: a deletion replayed from the journal, which holds the name's hash only)."""
        if name is not None:
            name_hash = hashlib.sha256(name.encode("utf-8")).hexdigest()[:24]  # which record, without its words
        with self.con:
            self.con.executemany("insert or ignore into deleted (user, key, name_hash, created) values (?, ?, ?, ?)",
                                 [(user, k, name_hash, clock.stamp()) for k in keys])

    def deleted_keys(self, user: str) -> set[str]:
        return {r[0] for r in self.con.execute("select key from deleted where user=?", [user])}

    def clear(self, user: str) -> int:
        with self.con:
            return self.con.execute("delete from proposals where user=?", [user]).rowcount
