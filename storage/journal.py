"""The journal: the decisions a person made, one append-only JSON-lines file per machine in agent-sync.

Everything else a restore rebuilds comes from the logs, records and documents; a decision (forget this fact,
settle that conflict, approve or reject a document) exists only because a person made it, so it is written down
where it syncs: ``agent-sync/04_memory/journal/<hostname>.jsonl``.

- One file per machine: a sync tool (Syncthing, Dropbox, rsync, git) then only ever sees one writer per file, so two
  machines deciding on the same day never produce a conflicted copy; a restore reads every machine's file.
- Append-only, a whole line per write (``O_APPEND``, flushed and fsynced, under a lock for two processes of one
  machine): a line once written is never changed. A torn last line (a sync caught the file mid-write) is left for the
  next read, not reported as damage; any other unreadable line is reported with its file and line number and skipped.
- Keyed by content, never by row id: a fact's or a conflict's id is one machine's; the same fact has another id
  elsewhere. Each decision also records ``through``, the last day digested for its user when it was made, so a
  restore replays it at the same point of the history (after that day's digest, before the next).

A line: ``{"v": 1, "id": <hex>, "host": ..., "seq": n, "at": <ISO instant>, "user": ..., "kind": ..., "through": <day|null>, ...}``;
the kinds and their fields are the replayer's (``restore.replay``).
"""

from __future__ import annotations

import fcntl
import json
import os
import re
import uuid
from pathlib import Path

VERSION = 1
_HOST = re.compile(r"[^\w.-]+")


def journal_file(journal_dir: Path, host: str) -> Path:
    """This machine's journal (the host name made safe as a file name)."""
    return Path(journal_dir) / f"{_HOST.sub('_', host).strip('._') or 'host'}.jsonl"


def append(journal_dir: Path, host: str, event: dict) -> dict:
    """Write one decision as a line of ``host``'s journal; returns it with its ``id``, ``host``, ``seq`` and ``v``."""
    path = journal_file(journal_dir, host)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        seq = _count_lines(path)
        line = {"v": VERSION, "id": uuid.uuid4().hex, "host": host, "seq": seq, **event}
        os.write(fd, (json.dumps(line, ensure_ascii=False, sort_keys=True) + "\n").encode("utf-8"))
        os.fsync(fd)
    finally:
        os.close(fd)  # closing releases the lock
    return line


def _count_lines(path: Path) -> int:
    with open(path, "rb") as f:
        return sum(block.count(b"\n") for block in iter(lambda: f.read(1 << 16), b""))


def read(journal_dir: Path) -> tuple[list[dict], list[str]]:
    """Every machine's decisions, in the order they were made (instant, then host and line), and the problems found
    (``file:line: why``). Only regular ``*.jsonl`` files directly in the folder are read (a link is refused)."""
    folder = Path(journal_dir)
    events: list[dict] = []
    problems: list[str] = []
    if not folder.is_dir():
        return events, problems
    for path in sorted(folder.iterdir()):
        if path.suffix != ".jsonl" or path.name.startswith("."):
            continue
        if path.is_symlink() or not path.is_file():
            problems.append(f"{path.name}: not a regular file; not read")
            continue
        data = path.read_bytes()
        lines = data.split(b"\n")
        torn = lines.pop()  # after the last newline: empty, or a line still being written (or synced)
        for n, raw in enumerate(lines, start=1):
            if not raw.strip():
                continue
            try:
                ev = json.loads(raw.decode("utf-8"))
                if not isinstance(ev, dict) or not {"id", "kind", "at", "user"} <= ev.keys():
                    raise ValueError("not a decision (id, kind, at and user are needed)")
            except (ValueError, UnicodeDecodeError) as e:
                problems.append(f"{path.name}:{n}: unreadable line ({type(e).__name__}: {str(e)[:120]}); skipped")
                continue
            events.append({**ev, "_file": path.name, "_line": n})
        if torn.strip():
            problems.append(f"{path.name}:{len(lines) + 1}: incomplete last line (still being written or synced); read next time")
    events.sort(key=lambda e: (str(e["at"]), str(e.get("host", "")), int(e.get("seq") or 0), e["_file"], e["_line"]))
    return events, problems


def record(facts, journal_dir: Path, host: str, kind: str, user: str, fields: dict) -> dict:
    """A decision just made on this machine: written to its journal with the point of the history it was made at (the
    user's last digested day, read from ``facts``, an open ``storage.facts.FactStore``), and marked as held by this
    machine's fact store so the replay never applies it twice."""
    from kernel import clock

    event = append(journal_dir, host, {"kind": kind, "user": user, "at": clock.now("UTC").isoformat(timespec="microseconds"),
                                       "through": facts.last_digested_day(user), **fields})
    facts.mark_journal_applied(event, "made here")
    return event
