"""Memory consolidation cards (记忆固化卡片) from the inbox partition ``03_knowledge/00_stream/inbox/memory/``.

A card is a Markdown file with optional frontmatter (``description``, ``type``, ``user``) whose body says what
to remember. The nightly chain feeds each new card through the same guarded write path as automatic
extraction (equivalent: nothing written; same type and similar description: the auto record is updated;
a manual record or a differing number, date or negation: a proposal), so a card can never clobber what the
user wrote. Cards are read, never moved or changed; each card version is taken once (its sha256 is logged in
``logs/memory_inbox.jsonl``), so deleting the record it made is not undone the next night. A card that
cannot be read (invalid UTF-8, binary, too large, unusable fields) is quarantined with the reason and the
rest go on.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import frontmatter

from agentos_mem.kernel import clock
from agentos_mem.kernel.files import UnsafePath, guard
from agentos_mem.kernel.settings import Settings
from agentos_mem.kernel.text import truncate
from agentos_mem.kernel.workspace import Workspace
from agentos_mem.storage.eventlog import append_lines, record_quarantine
from agentos_mem.storage.memory_records import TYPES, check_fields, open_book
from agentos_mem.storage.memory_store import name_problem

MAX_CARD_BYTES = 256 * 1024


def inbox_dir(settings: Settings) -> Path:
    return Workspace(settings.home).knowledge / "00_stream" / "inbox" / "memory"


def _taken(log_path: Path) -> set[tuple[str, str]]:
    seen = set()
    below = guard(log_path)
    if below.is_file(log_path):
        for line in below.read_bytes(log_path).decode("utf-8", errors="replace").splitlines():
            try:
                e = json.loads(line)
                seen.add((e["file"], e["sha256"]))
            except (json.JSONDecodeError, KeyError, TypeError):
                continue
    return seen


def read_card(path: Path, default_user: str) -> dict:
    """The candidate a card holds, or raises ValueError with the reason (naming the field)."""
    data = guard(path).read_bytes(path, MAX_CARD_BYTES)  # never through a link, never blocking on a FIFO
    if len(data) > MAX_CARD_BYTES:
        raise ValueError(f"card is larger than {MAX_CARD_BYTES // 1024} KB")
    if b"\x00" in data:
        raise ValueError("card is binary, not Markdown text")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise ValueError(f"card is not valid UTF-8 (byte {e.start})") from None
    try:
        meta, body = frontmatter.parse(text)
    except Exception as e:  # noqa: BLE001 - broken YAML: the body still says what to remember
        meta, body = {}, text
        if text.startswith("---"):
            raise ValueError(f"frontmatter unreadable ({type(e).__name__}); fix it so the card's type and user are known") from None
    user = str(meta.get("user") or default_user)
    if name_problem(user, "user"):
        raise ValueError(f"field 'user': {name_problem(user, 'user')}")
    rtype = str(meta.get("type") or "user")
    if rtype not in TYPES:
        raise ValueError(f"field 'type': {rtype!r} is not one of {', '.join(TYPES)}")
    body = body.strip()
    first = next((ln.strip().lstrip("#").strip() for ln in body.splitlines() if ln.strip()), "")
    description = " ".join(str(meta.get("description") or first).split())
    if not description:
        raise ValueError("card is empty: no description and no body")
    description = truncate(description, 200)
    check_fields(description, rtype, body)
    return {"user": user, "description": description, "type": rtype, "body": body or description,
            "evidence": description, "cue": ["inbox"]}


def ingest_cards(settings: Settings, user: str) -> dict:
    """Take the new cards of ``user`` from the inbox into their memory records; report what happened."""
    # lazy: memory.extract pulls httpx: only when this runs
    from agentos_mem.memory.extract import write

    ws = Workspace(settings.home)
    folder, log_path = inbox_dir(settings), ws.logs / "memory_inbox.jsonl"
    report = {"cards": 0, "created": [], "updated": [], "duplicates": [], "proposals": [], "already_proposed": [], "errors": [],
              "quarantined": []}
    below = guard(folder)
    try:
        paths, refused = below.tree(folder, (".md", ".markdown", ".txt"))
    except UnsafePath as e:  # the inbox folder itself is a link: nothing in it is taken
        paths, refused = [], [e]
    for e in refused:  # a card that is a link or a FIFO: named, never read; the other cards go on
        rel = str(e.path.relative_to(folder)) if below.inside(e.path) and e.path != folder else str(e.path)
        record_quarantine(ws.logs, [{"user": user, "file": rel, "line": None, "reason": str(e), "severity": "error",
                                     "sha256": None, "path": str(e.path), "stage": "memory-inbox"}])
        report["quarantined"].append(f"{rel}: {e}")
    taken = _taken(log_path)
    book = None
    try:
        for path in paths:
            rel = str(path.relative_to(folder))
            try:
                sha = hashlib.sha256(below.read_bytes(path)).hexdigest()
            except OSError as e:  # swapped for a link or a FIFO since the listing
                report["quarantined"].append(f"{rel}: {e}")
                continue
            if (rel, sha) in taken:
                continue
            try:
                cand = read_card(path, user)
            except (ValueError, OSError) as e:
                record_quarantine(ws.logs, [{"user": user, "file": rel, "line": None, "reason": str(e), "severity": "error",
                                             "sha256": sha, "path": str(path), "stage": "memory-inbox"}])
                report["quarantined"].append(f"{rel}: {e}")
                continue
            if cand["user"] != user:
                continue  # another user's card: taken when that user's chain runs
            report["cards"] += 1
            book = book or open_book(settings)
            before = len(report["errors"])
            cand["body"] = f"{cand['body']}\n\n(from inbox card {rel})"
            write(book, user, [cand], settings, None, report)
            if len(report["errors"]) == before:  # a failed write is retried the next night
                append_lines(log_path, [json.dumps({"file": rel, "sha256": sha, "user": user, "at": clock.stamp(settings.timezone)}, ensure_ascii=False)])
    finally:
        if book is not None and book.proposals:
            book.proposals.close()
    return report
