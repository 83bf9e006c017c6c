"""User memory records: one Markdown file per memory, and the operations on them (``MemoryBook``).

A record is YAML frontmatter (name, description, type, source, recallCount, lastRecalledAt, created,
updated, and any keys the user added by hand, kept as they are) and a Markdown body with the full content.
Types say what the memory is for: ``user`` (role, background, stable preferences), ``feedback`` (how the
agent should or should not work), ``project`` (lasting project background no file or system holds),
``reference`` (where something lives outside).

``source`` is set by the path that writes, never by the caller: ``create``/``update`` are the explicit
path (CLI, MCP tools, Python API) and write ``manual``; ``auto_create``/``auto_update`` are automatic
extraction's path, write ``auto``, and refuse to touch a manual record. ``update`` keeps the name,
source, created time and the recall statistics. Clearing a user's memories is ``clear``: the admin CLI
only, never an agent tool.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import re
import threading
import unicodedata
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterator
from zoneinfo import ZoneInfo

import frontmatter
import yaml

from agentos_mem.kernel import clock
from agentos_mem.kernel.files import open_lock
from agentos_mem.kernel.text import normalize_key
from agentos_mem.storage.memory_proposals import ProposalStore
from agentos_mem.storage.memory_store import (
    FileRecordStore,
    InvalidName,
    RecordNotFound,
    RecordStore,
    SqliteRecordStore,
    check_name,
    name_key,
    name_problem,
)

from agentos_mem.kernel.workspace import Workspace
from agentos_mem.safety.secrets import mask_lines, mask_value
from agentos_mem.storage import journal
from agentos_mem.storage.facts import open_facts

TYPES = ("user", "feedback", "project", "reference")
SOURCES = ("manual", "auto")
WINDOW = 200  # records the recall manifest scans, most recently modified first
MAX_DESCRIPTION_CHARS = 200
MAX_BODY_CHARS = 64_000
_KEYS = ("name", "description", "type", "source", "recallCount", "lastRecalledAt", "created", "updated")

__all__ = ["Record", "MemoryBook", "RecordError", "RecordExists", "RecordNotFound", "InvalidName", "ManualRecordProtected",
           "TYPES", "open_book", "name_problem", "record_text", "EMBED_CHARS"]


# A body line automatic extraction writes: "- 2026-11-20: 以后周报都用简洁格式 (2026-11-20.md:12)", optionally followed by
# " — in reply to the assistant: “...”" (memory.extract._line).
_OBSERVED = re.compile(r"^- (\d{4}-\d{2}-\d{2}): (.*) \(([^()]*)\)(?: — in reply to the assistant: “.*”)?$")


def observation_key(day: str, where: str, statement: str) -> str:
    """The identity of a statement a memory was made from: its day, its file (not the line: an edit above it does not
    make it new) and its words, normalised. Only this hash is kept of a record the user deleted."""
    files = re.sub(r":\d+(?:-\d+)?", "", where)
    return hashlib.sha256(f"{day}\x1f{files}\x1f{normalize_key(' '.join(statement.split()))}".encode("utf-8")).hexdigest()[:24]


def name_hash(name: str) -> str:
    """Which record a deletion was of, without its words."""
    return hashlib.sha256(name.encode("utf-8")).hexdigest()[:24]


def observation_keys(body: str) -> list[str]:
    """The observation keys of a record's body lines written by automatic extraction (other lines have none)."""
    return [observation_key(m[1], m[3], m[2]) for m in map(_OBSERVED.match, (line.strip() for line in (body or "").splitlines())) if m]


class RecordError(ValueError):
    """A record field the caller gave is unusable (the message names the field)."""


class RecordExists(RecordError):
    """``create`` was asked for a name the user already has: use ``update``."""


class ManualRecordProtected(RecordError):
    """Automatic extraction tried to change a record the user wrote: it must propose instead."""


@dataclass
class Record:
    name: str
    description: str
    type: str
    body: str
    source: str = "manual"
    recall_count: int = 0
    last_recalled_at: str | None = None
    created: str | None = None
    updated: str | None = None
    extra: dict = field(default_factory=dict)  # frontmatter keys the user added: kept, never dropped
    problems: list[str] = field(default_factory=list)  # why the file did not parse cleanly (read as plain text)
    notices: list[str] = field(default_factory=list)  # what a write did to the text given (a secret masked); not stored

    def frontmatter(self) -> dict:
        return {"name": self.name, "description": self.description, "type": self.type, "source": self.source,
                "recallCount": self.recall_count, "lastRecalledAt": self.last_recalled_at,
                "created": self.created, "updated": self.updated, **self.extra}

    def as_dict(self) -> dict:
        d = self.frontmatter()
        d["body"] = self.body
        if self.problems:
            d["problems"] = list(self.problems)
        if self.notices:
            d["notices"] = list(self.notices)
        return d

    def manifest_line(self) -> dict:
        return {"name": self.name, "type": self.type, "updated": self.updated, "description": self.description}


EMBED_CHARS = 1200  # what of a record is embedded (e5 reads 512 model tokens per window; the head says what it is)


def record_text(rec: Record) -> str:
    """What a record is matched on: its description and body (the body alone when it repeats the description)."""
    body = (rec.body or "").strip()
    desc = (rec.description or "").strip()
    return body if desc and body.startswith(desc) else f"{desc}\n{body}".strip()


def render(rec: Record) -> str:
    head = yaml.safe_dump(rec.frontmatter(), allow_unicode=True, sort_keys=False, default_flow_style=False, width=10_000)
    body = rec.body if rec.body.endswith("\n") or not rec.body else rec.body + "\n"
    return f"---\n{head}---\n\n{body}"


_FRONT = re.compile(r"\A(---[ \t]*\r?\n)(.*?\r?\n)?(---[ \t]*(?:\r?\n|\Z))", re.S)


def counted_in_place(text: str, count: int, at: str) -> str | None:
    """``text`` with its front matter's ``recallCount`` and ``lastRecalledAt`` set (each line edited where it is, or
    added at the end of the front matter), every other byte as it was; None when that cannot be done with certainty:
    no front matter, front matter that does not parse, a field written over several lines, or a result that parses
    to anything but the same fields with the two values changed."""
    m = _FRONT.match(text)
    if not m:
        return None
    head = m.group(2) or ""
    try:
        meta = yaml.safe_load(head) if head.strip() else {}
    except yaml.YAMLError:
        return None
    if not isinstance(meta, dict):
        return None
    nl = "\r\n" if "\r\n" in m.group(1) else "\n"
    lines = head.splitlines(keepends=True)
    for key, value in (("recallCount", str(count)), ("lastRecalledAt", "'" + at + "'")):
        pat = re.compile(rf"^{key}[ \t]*:[ \t]*[^\r\n#]*?[ \t]*(#[^\r\n]*)?(\r?\n)?$")
        hits = [i for i, line in enumerate(lines) if pat.match(line)]
        if len(hits) > 1 or (not hits and key in meta):
            return None
        if hits:
            found = pat.match(lines[hits[0]])
            lines[hits[0]] = f"{key}: {value}" + (f" {found.group(1)}" if found.group(1) else "") + (found.group(2) or "")
        else:
            lines.append(f"{key}: {value}{nl}")
    new_head = "".join(lines)
    try:
        again = yaml.safe_load(new_head)
    except yaml.YAMLError:
        return None
    if again != {**meta, "recallCount": count, "lastRecalledAt": at}:
        return None
    return m.group(1) + new_head + m.group(3) + text[m.end():]


def _first_line(text: str) -> str:
    for line in text.splitlines():
        line = line.strip().lstrip("#").strip()
        if line and line != "---":
            return line[:MAX_DESCRIPTION_CHARS]
    return ""


def _str(v) -> str | None:
    if v is None:
        return None
    return v.isoformat() if hasattr(v, "isoformat") else str(v)


def parse(name: str, text: str) -> Record:
    """A record from its file text. Broken or missing frontmatter never loses the file: the whole text
    becomes the body, the description its first line, and ``problems`` says what was wrong."""
    problems: list[str] = []
    try:
        meta, body = frontmatter.parse(text)
    except Exception as e:  # noqa: BLE001 - yaml raises many types; the file is still read as plain Markdown
        meta, body = {}, text
        problems.append(f"frontmatter unreadable ({type(e).__name__}): read as plain Markdown")
    if not isinstance(meta, dict):
        meta, body = {}, text
        problems.append("frontmatter is not a mapping: read as plain Markdown")
    if not meta and not problems:
        problems.append("no frontmatter: read as plain Markdown")
    if meta.get("name") not in (None, name):
        problems.append(f"frontmatter name {meta.get('name')!r} differs from the file name; the file name is used")
    rtype = meta.get("type", "user")
    if rtype not in TYPES:
        problems.append(f"type {rtype!r} is not one of {', '.join(TYPES)}")
    source = meta.get("source", "manual")
    if source not in SOURCES:
        # Unknown provenance is treated as the user's own: automatic extraction will not touch it.
        problems.append(f"source {source!r} is not manual or auto; treated as manual")
        source = "manual"
    try:
        count = max(0, int(meta.get("recallCount") or 0))
    except (TypeError, ValueError):
        problems.append(f"recallCount {meta.get('recallCount')!r} is not a number; counted as 0")
        count = 0
    desc = meta.get("description")
    # Read masked: a record written before secrets were masked at write time (or edited by hand since) never
    # serves one in clear; its next update writes it masked.
    description, body, _ = mask_secrets(str(desc).strip() if desc else _first_line(body), body)
    return Record(
        name=name, description=description, type=str(rtype), body=body.strip("\n"),
        source=source, recall_count=count, last_recalled_at=_str(meta.get("lastRecalledAt")),
        created=_str(meta.get("created")), updated=_str(meta.get("updated")),
        extra=_masked_extra({k: v for k, v in meta.items() if k not in _KEYS}), problems=problems)


def _masked_extra(extra: dict) -> dict:
    """Keys a user added by hand, their text values masked (``api_key: sk-...`` in the frontmatter too)."""
    return {k: mask_value(str(k), v)[0] if isinstance(v, str) else v for k, v in extra.items()}


def check_fields(description: str | None, rtype: str | None, body: str | None) -> None:
    if description is not None:
        if not isinstance(description, str) or not description.strip():
            raise RecordError("description is empty: give one line saying what the memory is")
        if "\n" in description.strip() or "\r" in description:
            raise RecordError("description must be one line (put the details in the body)")
        if len(description) > MAX_DESCRIPTION_CHARS:
            raise RecordError(f"description is longer than {MAX_DESCRIPTION_CHARS} characters (put the details in the body)")
    if rtype is not None and rtype not in TYPES:
        raise RecordError(f"type {rtype!r} is not one of {', '.join(TYPES)}")
    if body is not None:
        if not isinstance(body, str):
            raise RecordError("body must be text")
        if len(body) > MAX_BODY_CHARS:
            raise RecordError(f"body is longer than {MAX_BODY_CHARS} characters")


def mask_secrets(description: str | None, body: str | None) -> tuple[str | None, str | None, list[str]]:
    """Description and body with their secrets masked (``[secret masked]``: a record written by hand has no other
    original; one extracted from a log keeps the marker naming its raw line), and the notice a save returns."""
    d, n1 = mask_lines(description) if description else (description, 0)
    b, n2 = mask_lines(body) if body else (body, 0)
    n = n1 + n2
    return d, b, [f"{n} secret(s) masked: a memory record never stores a password, key or token in clear"] if n else []


class MemoryBook:
    """The record operations over a ``RecordStore``, with per-user locking for read-modify-write."""

    def __init__(self, store: RecordStore, *, proposals: ProposalStore | None = None, tz: str = "Asia/Shanghai",
                 lock_dir: Path | None = None, journal=None):
        self.store = store
        self.proposals = proposals
        # ``journal(kind, user, fields, apply)``: writes a decision to the workspace's journal first, then runs
        # ``apply`` (``storage.journal.record``); None: decisions are not journaled (a book outside a workspace)
        self.journal = journal
        self.tz = ZoneInfo(tz)
        self.lock_dir = Path(lock_dir) if lock_dir else None
        self._threads: dict[str, threading.Lock] = {}
        self._guard = threading.Lock()

    def now(self) -> str:
        return clock.now(self.tz).isoformat(timespec="seconds")

    @contextmanager
    def locked(self, user: str) -> Iterator[None]:
        """One writer per user: threads of this process and, with ``lock_dir``, other processes."""
        check_name(user, "user id")
        with self._guard:
            lock = self._threads.setdefault(user, threading.Lock())
        with lock:
            if self.lock_dir is None:
                yield
                return
            path = self.lock_dir / f"memory-{hashlib.sha1(user.encode()).hexdigest()[:12]}.lock"
            with os.fdopen(open_lock(path), "a") as f:  # never through a link (kernel.files)
                fcntl.flock(f, fcntl.LOCK_EX)
                try:
                    yield
                finally:
                    fcntl.flock(f, fcntl.LOCK_UN)

    # -- reading -------------------------------------------------------------------------------------------
    def read(self, user: str, name: str) -> Record:
        check_name(user, "user id"), check_name(name, "record name")
        try:
            return parse(name, self.store.read(user, name))
        except RecordNotFound:
            stored = self.stored_name(user, name)
            if stored is None or stored == name:
                raise
            return parse(stored, self.store.read(user, stored))

    def stored_name(self, user: str, name: str) -> str | None:
        """The name the user's record is stored under when ``name`` names it up to case, Unicode normalisation
        and full-width forms (``Coffee`` for ``coffee``, NFC for NFD), or None when the user has no such record."""
        check_name(name, "record name")
        key = name_key(name)
        return next((n for n in sorted(self.names(user)) if name_key(n) == key), None)

    def exists(self, user: str, name: str) -> bool:
        return self.stored_name(user, name) is not None

    def names(self, user: str) -> list[str]:
        """Record names, most recently modified first."""
        return [e.name for e in sorted(self.store.list(user), key=lambda e: (-e.mtime_ns, e.name))]

    def list(self, user: str, limit: int | None = None) -> list[Record]:
        out = []
        for name in self.names(user)[:limit]:
            try:
                out.append(self.read(user, name))
            except RecordNotFound:  # deleted between list and read
                continue
        return out

    def refused(self) -> list:
        """What the last listing left out (a record that is a link, a FIFO, a device), each an ``UnsafePath``
        naming it and why, for the transport to tell the user."""
        return list(getattr(self.store, "refused", []))

    def manifest(self, user: str, window: int = WINDOW) -> list[dict]:
        """Type, name, updated time and description of the ``window`` most recently modified records."""
        return [r.manifest_line() for r in self.list(user, limit=window)]

    # -- the explicit path: source manual ------------------------------------------------------------------
    def create(self, user: str, name: str, description: str, type: str, body: str = "") -> Record:
        return self._create(user, name, description, type, body, source="manual")

    def update(self, user: str, name: str, *, description: str | None = None, type: str | None = None,
               body: str | None = None) -> Record:
        return self._update(user, name, description, type, body, auto=False)

    def delete(self, user: str, name: str) -> None:
        """Delete one record. What it was made from is remembered (as hashes of its source lines), so automatic
        extraction never makes it again from the same old lines; the user saving it again still may.

        The deletion is a decision: journaled first (``memory.delete``: the hashes and a hash of the name, never the
        words), so a restore, or another machine, keeps the same lines from making it again; a journal that cannot be
        written raises ``storage.journal.JournalUnwritable`` and the record stays."""
        check_name(user, "user id"), check_name(name, "record name")
        with self.locked(user):
            stored = self.stored_name(user, name) or name
            try:
                text = self.store.read(user, stored)
            except RecordNotFound:  # nothing to read: the store's delete says whether there is anything to delete
                text = None
            keys = observation_keys(parse(stored, text).body) if text is not None and self.proposals is not None else []

            def apply() -> None:
                self.store.delete(user, stored)
                if keys:
                    self.proposals.remember_deleted(user, keys, stored)

            if self.journal is None or text is None:
                apply()
            else:  # a blocklist of lines, not a point in the history: applied at once wherever it is replayed
                self.journal("memory.delete", user, {"keys": keys, "name_hash": name_hash(stored), "through": None}, apply)

    def deleted_observations(self, user: str) -> set[str]:
        """Observation keys of the records the user deleted (``delete``)."""
        return self.proposals.deleted_keys(user) if self.proposals is not None else set()

    def clear(self, user: str) -> int:
        """Delete every record (and proposal) of ``user``. Admin only: no agent tool calls this."""
        with self.locked(user):
            names = [e.name for e in self.store.list(user)]
            for n in names:
                self.store.delete(user, n)
            if self.proposals:
                self.proposals.clear(user)
        return len(names)

    # -- the automatic path: source auto, manual records untouchable ---------------------------------------
    def auto_create(self, user: str, name: str, description: str, type: str, body: str = "") -> Record:
        return self._create(user, name, description, type, body, source="auto")

    def auto_update(self, user: str, name: str, *, description: str | None = None, type: str | None = None,
                    body: str | None = None) -> Record:
        return self._update(user, name, description, type, body, auto=True)

    def propose(self, user: str, kind: str, target: str | None, record: dict, reason: str) -> tuple[int, bool]:
        if self.proposals is None:
            raise RecordError("this memory book keeps no proposals")
        d, b, _ = mask_secrets(record.get("description"), record.get("body"))
        record = {**record, **({"description": d} if "description" in record else {}), **({"body": b} if "body" in record else {})}
        return self.proposals.add(user, kind, target, record, reason)

    def pending(self, user: str) -> list[dict]:
        out = self.proposals.list(user) if self.proposals else []
        for p in out:  # a proposal kept from before secrets were masked is shown masked
            r = p.get("record")
            if isinstance(r, dict):
                d, b, _ = mask_secrets(r.get("description"), r.get("body"))
                p["record"] = {**r, **({"description": d} if "description" in r else {}), **({"body": b} if "body" in r else {})}
        return out

    def accept(self, user: str, pid: int) -> Record:
        """Apply a pending proposal as the user's own decision (the explicit path: source stays or becomes manual)."""
        p = self.proposals.get(user, pid)
        if p["status"] != "pending":
            raise RecordError(f"proposal {pid} was already {p['status']}")
        r = p["record"]
        if p["kind"] == "update" and self.exists(user, p["target"]):
            rec = self.update(user, p["target"], description=r.get("description"), type=r.get("type"), body=r.get("body"))
        else:
            name = p["target"] or r["name"]
            rec = self.create(user, self.free_name(user, name), r["description"], r["type"], r.get("body", ""))
        self.proposals.decide(user, pid, "accepted")
        return rec

    def reject(self, user: str, pid: int) -> None:
        self.proposals.decide(user, pid, "rejected")

    def free_name(self, user: str, base: str) -> str:
        """``base``, or ``base-2``, ``base-3``... whichever the user does not have yet."""
        taken = {name_key(n) for n in self.names(user)}
        name, i = base, 2
        while name_key(name) in taken:
            suffix = f"-{i}"
            name, i = base[: 100 - len(suffix)] + suffix, i + 1
        return name

    # -- recall statistics ---------------------------------------------------------------------------------
    def mark_recalled(self, user: str, names: list[str]) -> list[str]:
        """Count a successful recall: recallCount + 1 and lastRecalledAt now, edited in place in the record's front
        matter (``counted_in_place``), and the write touches the record, so memories in use stay inside the recall
        window. A read never rewrites what the user wrote: no other byte of the file changes (their comments, their
        order, their spelling), and a file that cannot be edited so (not UTF-8, front matter that does not parse, a
        count written in another form) is left as it is and named in what this returns."""
        at = self.now()
        refused = []
        with self.locked(user):
            for name in names:
                try:
                    rec = self.read(user, name)
                    raw = self.store.read_bytes(user, rec.name)
                except RecordNotFound:
                    continue
                try:
                    new = counted_in_place(raw.decode("utf-8"), rec.recall_count + 1, at)
                except UnicodeDecodeError:
                    new = None
                if new is None:
                    refused.append(f"memory {rec.name!r}: its recall was not counted, the file is left as it is "
                                   f"({self.store.where(user, rec.name)}: not UTF-8 text with a front matter that can be "
                                   "edited in place)")
                    continue
                self.store.write(user, rec.name, new)
        return refused

    # -- internals -----------------------------------------------------------------------------------------
    def _create(self, user: str, name: str, description: str, rtype: str, body: str, *, source: str) -> Record:
        check_name(user, "user id"), check_name(name, "record name")
        check_fields(description, rtype, body)
        description, body, notices = mask_secrets(description, body)
        name = unicodedata.normalize("NFC", name)  # canonically the same text, one spelling on disk
        with self.locked(user):
            stored = self.stored_name(user, name)
            if stored is not None:
                same = "" if stored == name else f" (as {stored!r}: names are compared ignoring case and Unicode forms)"
                raise RecordExists(f"a memory named {name!r} already exists{same}: update it instead")
            at = self.now()
            rec = Record(name=name, description=description.strip(), type=rtype, body=(body or "").strip("\n"), source=source,
                         created=at, updated=at)
            self.store.write(user, name, render(rec))
        rec.notices = notices
        return rec

    def _update(self, user: str, name: str, description, rtype, body, *, auto: bool) -> Record:
        check_name(user, "user id"), check_name(name, "record name")
        check_fields(description, rtype, body)
        if description is None and rtype is None and body is None:
            raise RecordError("nothing to update: give a description, a type or a body")
        with self.locked(user):
            rec = self.read(user, name)
            name = rec.name
            if auto and rec.source != "auto":
                raise ManualRecordProtected(f"memory {name!r} was written by the user; automatic extraction may only propose")
            if description is not None:
                rec.description = description.strip()
            if rtype is not None:
                rec.type = rtype
            if body is not None:
                rec.body = body.strip("\n")
            # what was kept is masked too: a record saved before secrets were masked is cleaned by its next update
            rec.description, rec.body, notices = mask_secrets(rec.description, rec.body)
            rec.updated = self.now()
            rec.problems = []
            self.store.write(user, name, render(rec))
        rec.notices = notices
        return rec


def open_book(settings) -> MemoryBook:
    """The memory book of a workspace, on the backend ``settings.memory_backend`` names."""
    ws = Workspace(settings.home)
    if settings.memory_backend == "sqlite":
        store: RecordStore = SqliteRecordStore(ws.memory_records_db)
    else:
        store = FileRecordStore(ws.memory_records_dir)
    return MemoryBook(store, proposals=ProposalStore(ws.memory_proposals_db), tz=settings.timezone, lock_dir=ws.runtime,
                      journal=_journal(settings))


def _journal(settings):
    """The workspace's journal, as ``MemoryBook.journal`` calls it."""
    def record(kind: str, user: str, fields: dict, apply):
        facts = open_facts(settings)
        try:
            return journal.record(facts, Workspace(settings.home).journal_dir, settings.hostname, kind, user, fields, apply=apply)
        finally:
            facts.close()

    return record
