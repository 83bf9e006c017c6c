"""The knowledge base's registry: one row per document card, its review state and its versions (SQLite,
``agent-sync/03_knowledge/99_system/kb.db``).

The card itself is a Markdown file in the taxonomy (``10_concepts/ai/{hostname}_{YYYYMMDD}_{slug}.md``)
whose frontmatter repeats these fields for Obsidian; this table is what the read path filters on:
only ``ready`` documents are ever retrieved, system ones for everyone, personal ones for their owner,
and never past ``valid_until``. Rows are never deleted: a rejected document stays, marked.
"""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import threading
from collections import OrderedDict
from datetime import date
from pathlib import Path

import sqlite_utils

from agentos_mem.kernel import clock
from agentos_mem.storage.guards import database_file
from agentos_mem.kernel.text import normalize_key
from agentos_mem.storage.migrations import Migrations

STATUSES = ("pending", "ready", "rejected")
SCOPES = ("system", "personal")
_JSON = ("related", "outline", "review", "fact_candidates")
# What the read path (query.kb) reads of a published document; ``readable`` selects only these.
READ_COLUMNS = ("id", "path", "title", "category", "scope", "owner", "status", "summary", "content_hash", "valid_until", "outline")

migrations = Migrations("kb")


@migrations
def m001_initial(db: sqlite_utils.Database) -> None:
    db.executescript(
        """
        create table documents (
            id text primary key,            -- the card name: {hostname}_{YYYYMMDD}_{slug}
            path text not null,             -- relative to 03_knowledge
            title text not null,
            category text not null,
            scope text not null check (scope in ('system', 'personal')),
            owner text not null,
            status text not null check (status in ('pending', 'ready', 'rejected')),
            nature text not null,           -- fact | technical | law | opinion | axiom | preference
            confidence real not null,
            reliability real not null,
            source text, source_url text, source_type text,
            valid_until text,               -- ISO date; null: does not expire
            version integer not null default 1,
            previous_version text,          -- archived path of the previous body, and what changed
            superseded_by text,
            related text not null default '[]',
            content_hash text not null,
            outline text not null default '[]',
            summary text, summary_hash text, summary_error text,
            review text not null default '{}',   -- the ingest review: reliability class, consistency, validity
            inbox_file text, inbox_hash text,
            created text not null, updated text not null,
            decided_by text, decided_at text, decision_note text
        );
        create index documents_status on documents (status, scope, owner);
        create index documents_inbox on documents (inbox_hash);
        create table ingested (inbox_hash text primary key, inbox_file text, doc_id text, outcome text, at text);
        """
    )


@migrations
def m002_fact_candidates(db: sqlite_utils.Database) -> None:
    """The facts a pending document would add, staged with it until a person decides (approve applies them to the
    fact store, reject drops them): nothing unreviewed writes facts. A list of ``Candidate.to_dict()``."""
    if "fact_candidates" not in db["documents"].columns_dict:
        db.execute("alter table documents add column fact_candidates text not null default '[]'")


_watch_lock = threading.Lock()
_watchers: OrderedDict[str, tuple[tuple[int, int], sqlite3.Connection]] = OrderedDict()
WATCHERS = 16  # registries watched per process (one per workspace a process serves): each holds one file open


def registry_version(path: Path) -> tuple | None:
    """A value that changes whenever the registry at ``path`` may have changed, or None when there is none.

    The read path keeps what it made of the registry while this stays the same (``query.kb``): on a base of
    10,000 documents, reading every row and checking every card again cost 260 ms of each search (issue 43). The
    value is SQLite's ``data_version`` as seen by a read-only connection this process keeps open (any commit by
    any other connection, in any process, changes it), with the file's identity, size and time (a registry
    restored or replaced under it is another file)."""
    key = os.fspath(path)
    try:
        st = os.stat(key)
    except OSError:
        return None
    ident = (st.st_dev, st.st_ino)
    with _watch_lock:
        hit = _watchers.get(key)
        if hit is not None and hit[0] != ident:
            hit[1].close()
            hit = None
        if hit is None:
            try:
                con = sqlite3.connect(f"file:{key}?mode=ro", uri=True, check_same_thread=False)
            except sqlite3.Error:
                return None
            hit = _watchers[key] = (ident, con)
            while len(_watchers) > WATCHERS:
                _watchers.popitem(last=False)[1][1].close()
        _watchers.move_to_end(key)
        try:
            version = hit[1].execute("pragma data_version").fetchone()[0]
        except sqlite3.Error:  # locked or damaged: nothing is known, so nothing may be kept
            hit[1].close()
            del _watchers[key]
            return None
    return (*ident, st.st_size, st.st_mtime_ns, version)


class DocumentNotFound(KeyError):
    def __str__(self) -> str:
        return str(self.args[0]) if self.args else "document not found"


class KBStore:
    def __init__(self, path: Path, *, timezone: str = clock.DEFAULT_TZ):
        self.path = Path(path)
        self.tz = timezone  # the workspace's zone: what day 'today' is for valid_until
        self.db = sqlite_utils.Database(database_file(self.path))  # never through a link (kernel.files.Below)
        self.db.execute("pragma busy_timeout = 30000")
        migrations.apply(self.db)

    def close(self) -> None:
        self.db.close()

    @staticmethod
    def _out(row: dict | None) -> dict | None:
        if row is None:
            return None
        d = dict(row)
        for k in _JSON:
            d[k] = json.loads(d[k]) if d.get(k) else ([] if k != "review" else {})
        return d

    def _rows(self, sql: str, params: list) -> list[dict]:
        cur = self.db.execute(sql, params)
        cols = [c[0] for c in cur.description]
        return [self._out(dict(zip(cols, r))) for r in cur.fetchall()]

    def get(self, doc_id: str) -> dict:
        rows = self._rows("select * from documents where id=?", [doc_id])
        if not rows:
            raise DocumentNotFound(f"no knowledge document with id {doc_id!r}")
        return rows[0]

    def find(self, doc_id: str) -> dict | None:
        rows = self._rows("select * from documents where id=?", [doc_id])
        return rows[0] if rows else None

    def put(self, doc: dict) -> None:
        """Insert or replace a document row (the caller has written the card file first)."""
        row = {k: (json.dumps(v, ensure_ascii=False) if k in _JSON else v) for k, v in doc.items()}
        row.setdefault("created", clock.stamp(self.tz))
        row["updated"] = clock.stamp(self.tz)
        self.db["documents"].upsert(row, pk="id")

    def set_status(self, doc_id: str, status: str, *, by: str, note: str | None = None) -> None:
        if status not in STATUSES:
            raise ValueError(f"status must be one of {STATUSES}, not {status!r}")
        with self.db.conn:
            self.db.execute("update documents set status=?, decided_by=?, decided_at=?, decision_note=?, updated=? where id=?",
                            [status, by, clock.stamp(self.tz), note, clock.stamp(self.tz), doc_id])

    def documents(self, *, status: str | None = None) -> list[dict]:
        if status:
            return self._rows("select * from documents where status=? order by created, id", [status])
        return self._rows("select * from documents order by created, id", [])

    def visible(self, user: str, *, today: date | None = None, include_expired: bool = False) -> list[dict]:
        """What a user may retrieve: ready, system or their own, and (by default) not past ``valid_until``."""
        today = (today or clock.today(self.tz)).isoformat()
        rows = self._rows("select * from documents where status='ready' and (scope='system' or owner=?) order by created, id", [user])
        return [r for r in rows if include_expired or not r["valid_until"] or r["valid_until"] >= today]

    def readable(self, user: str, *, today: date | None = None) -> list[dict]:
        """``visible`` as the read path needs it on every call: only the columns it reads, nothing decoded (``outline``
        is its stored JSON text). Decoding every row's review and outline on every search cost more than the search
        itself on a large base (2,451 documents: 45 ms of a 120 ms registry read); ``storage.kb_sections.published_docs``
        decodes each outline text once per process instead."""
        today = (today or clock.today(self.tz)).isoformat()
        cur = self.db.execute(f"select {', '.join(READ_COLUMNS)} from documents where status='ready' and (scope='system' or owner=?) "
                              "and (valid_until is null or valid_until = '' or valid_until >= ?) order by created, id", [user, today])
        return [dict(zip(READ_COLUMNS, r)) for r in cur.fetchall()]

    def ready_state(self) -> tuple[str, list[str]]:
        """(a digest of every ready row as stored, their card paths): what changes whenever a published document's
        registry row does, read without decoding any row."""
        digest = hashlib.sha256()
        paths = []
        cur = self.db.execute("select * from documents where status='ready' order by created, id")
        path_at = [c[0] for c in cur.description].index("path")
        for row in cur:
            digest.update(json.dumps(row, ensure_ascii=False, default=str).encode("utf-8"))
            paths.append(row[path_at])
        return digest.hexdigest(), paths

    def shelf(self, owner: str) -> list[dict]:
        """The documents a new item of ``owner`` may be the same document as (a new version, a duplicate, a title
        taken): the system ones and the owner's own personal ones. Another user's personal document is never matched,
        so nothing one user refines re-owns, hides, changes or names it."""
        return self._rows("select * from documents where scope='system' or (scope='personal' and owner=?) order by created, id",
                          [owner])

    def ingested(self, inbox_hash: str) -> dict | None:
        row = self.db.execute("select inbox_hash, inbox_file, doc_id, outcome, at from ingested where inbox_hash=?", [inbox_hash]).fetchone()
        return dict(zip(("inbox_hash", "inbox_file", "doc_id", "outcome", "at"), row)) if row else None

    def mark_ingested(self, inbox_hash: str, inbox_file: str, doc_id: str | None, outcome: str) -> None:
        self.db["ingested"].upsert({"inbox_hash": inbox_hash, "inbox_file": inbox_file, "doc_id": doc_id, "outcome": outcome,
                                    "at": clock.stamp(self.tz)}, pk="inbox_hash")


def _title_key(title: str) -> str:
    return normalize_key(title)


title_key = _title_key
