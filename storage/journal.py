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

- A decision is journaled or not made at all: the line is written first, then the decision is applied here
  (``record``); a journal that cannot be written (a read-only agent-sync, a full disk) raises ``JournalUnwritable``
  and nothing is changed. A line written whose application here then failed is applied by the next replay.

A line: ``{"v": 1, "id": <hex>, "host": ..., "seq": n, "at": <ISO instant>, "user": ..., "kind": ..., "through": <day|null>, ...}``;
the kinds and their fields are the replayer's (``restore.replay``). ``read`` checks every line (``problem``): a line with
a field of the wrong type (``"seq": "1a"``, ``"user": ["alice"]``), one naming another host than the file it is in, or
one repeating an earlier line's id is named (``file:line``) and skipped, never applied and never a crash; the replayer
checks the fields of each kind (``kind_problem``) the same way.
"""

from __future__ import annotations

import fcntl
import json
import os
import re
import stat
import uuid
from datetime import date, datetime
from pathlib import Path

from agentos_mem.kernel import clock
from agentos_mem.kernel.files import UnsafePath, guard

VERSION = 1
_HOST = re.compile(r"[^\w.-]+")


class JournalUnwritable(OSError):
    """The line of a decision could not be written to this machine's journal: the decision was not made."""


def journal_file(journal_dir: Path, host: str) -> Path:
    """This machine's journal (the host name made safe as a file name)."""
    return Path(journal_dir) / f"{_HOST.sub('_', host).strip('._') or 'host'}.jsonl"


def append(journal_dir: Path, host: str, event: dict) -> dict:
    """Write one decision as a line of ``host``'s journal; returns it with its ``id``, ``host``, ``seq`` and ``v``."""
    path = journal_file(journal_dir, host)
    below = guard(path)  # the journal folder or file as a link (or a FIFO) is refused: the decision is not made
    try:
        below.check(path, "file")
        below.mkdirs(path.parent)
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NONBLOCK | getattr(os, "O_NOFOLLOW", 0), 0o644)
    except OSError as e:
        raise _unwritable(path, e) from None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise _unwritable(path, UnsafePath(path, "is not a regular file"))
        fcntl.flock(fd, fcntl.LOCK_EX)
        seq = _count_lines(path)
        line = {"v": VERSION, "id": uuid.uuid4().hex, "host": host, "seq": seq, **event}
        data = (json.dumps(line, ensure_ascii=False, sort_keys=True) + "\n").encode("utf-8")
        end = os.lseek(fd, 0, os.SEEK_END)
        try:
            written = os.write(fd, data)
            if written != len(data):
                raise OSError(28, f"only {written} of {len(data)} bytes written")
            os.fsync(fd)
        except OSError as e:
            try:  # a part of a line (a full disk) is taken back: the file stays whole lines
                os.ftruncate(fd, end)
            except OSError:
                pass  # left as a torn line: the reader names it and skips it
            raise _unwritable(path, e) from None
    finally:
        os.close(fd)  # closing releases the lock
    return line


def _unwritable(path: Path, e: OSError) -> JournalUnwritable:
    why = e.strerror or str(e)
    if e.filename and str(e.filename) != str(path):
        why += f": {e.filename}"
    return JournalUnwritable(e.errno, f"the decision was not made: this machine's journal {path} cannot be written ({why}); "
                                      "a decision exists only once it is in the journal: make agent-sync writable (or free space) "
                                      "and decide again")


def _count_lines(path: Path) -> int:
    return guard(path).read_bytes(path).count(b"\n")


def read(journal_dir: Path) -> tuple[list[dict], list[str]]:
    """Every machine's decisions, in the order they were made (instant, then host and line), and the problems found
    (``file:line: why``). Only regular ``*.jsonl`` files directly in the folder are read (a link is refused); a line
    that is not a well-formed decision (``problem``) is named and skipped."""
    folder = Path(journal_dir)
    events: list[dict] = []
    problems: list[str] = []
    below = guard(folder)
    try:
        paths, refused = below.files(folder, ".jsonl")
    except UnsafePath as e:  # the journal folder itself is a link: nothing in it is replayed
        return events, [f"{e}; not read"]
    problems.extend(f"{p.path.name}: not a regular file; not read" for p in refused if not p.path.name.startswith("."))
    seen: dict[str, str] = {}
    for path in paths:
        if path.name.startswith("."):
            continue
        try:
            data = below.read_bytes(path)
        except OSError as e:
            problems.append(f"{path.name}: cannot be read ({e.strerror or e}); not read")
            continue
        lines = data.split(b"\n")
        torn = lines.pop()  # after the last newline: empty, or a line still being written (or synced)
        for n, raw in enumerate(lines, start=1):
            if not raw.strip():
                continue
            try:
                ev = json.loads(raw.decode("utf-8"))
                if not isinstance(ev, dict) or not {"id", "kind", "at", "user"} <= ev.keys():
                    raise ValueError("not a decision (id, kind, at and user are needed)")
            except (ValueError, UnicodeDecodeError, RecursionError) as e:
                problems.append(f"{path.name}:{n}: unreadable line ({type(e).__name__}: {str(e)[:120]}); skipped")
                continue
            why = problem(ev, path.name)
            if why is None and ev["id"] in seen:
                why = f"the same id as {seen[ev['id']]}"
            if why is not None:
                problems.append(f"{path.name}:{n}: damaged decision ({why}); skipped")
                continue
            seen[ev["id"]] = f"{path.name}:{n}"
            events.append({**ev, "_file": path.name, "_line": n})
        if torn.strip():
            problems.append(f"{path.name}:{len(lines) + 1}: incomplete last line (still being written or synced); read next time")
    events.sort(key=lambda e: (e["at"], str(e.get("host", "")), e.get("seq") or 0, e["_file"], e["_line"]))
    return events, problems


# What each kind of decision carries, and of what type (None allowed where a tuple holds it): a line of a known kind
# that does not match is damaged. A kind this version does not know is read (the replayer reports it, not applied).
_STR, _OPT, _INT = (str,), (str, type(None)), (int, type(None))
KINDS: dict[str, dict[str, tuple]] = {
    "fact.forget": {"subject_key": _STR, "predicate": _STR, "object_key": _STR, "subject": _OPT, "object": _OPT,
                    "reason": _OPT, "sources": (list, type(None))},
    "fact.resolve": {"accept": (bool,), "subject": _STR, "predicate": _STR, "existing_object": _STR, "candidate_object": _STR,
                     "source_day": _STR, "source_file": _STR, "line_start": _INT, "line_end": _INT},
    "kb.decide": {"doc_id": _STR, "decision": _STR, "who": _STR, "note": _OPT, "content_hash": _OPT},
    "memory.delete": {"keys": (list,), "name_hash": _OPT},
}
_OPTIONAL = {"subject", "object", "reason", "sources", "line_start", "line_end", "note", "content_hash", "name_hash"}
_KEY = re.compile(r"[0-9a-f]{8,64}")


def problem(ev: dict, file: str) -> str | None:
    """Why the decision ``ev``, read from the journal file named ``file``, is damaged (None: it is well-formed): the
    fields every decision has (``id``, ``kind``, ``at`` an ISO instant, ``user`` a user id, ``host`` the host whose
    file it is in, ``seq`` a count, ``through`` a day or null), each of its type. Those of its kind: ``kind_problem``."""
    # lazy: storage.memory_store (3 modules) stays off `agentos` start-up
    from agentos_mem.storage.memory_store import name_problem

    if not isinstance(ev["id"], str) or not ev["id"].strip() or len(ev["id"]) > 200:
        return f"id {_shown(ev['id'])} is not an id"
    if not isinstance(ev["kind"], str) or not ev["kind"]:
        return f"kind {_shown(ev['kind'])} is not a kind"
    if "v" in ev and (type(ev["v"]) is not int or ev["v"] > VERSION):
        return f"v {_shown(ev['v'])}: not a journal version this one reads"
    if not isinstance(ev["at"], str):
        return f"at {_shown(ev['at'])} is not an instant"
    try:
        datetime.fromisoformat(ev["at"])
    except ValueError:
        return f"at {_shown(ev['at'])} is not an ISO instant"
    why = name_problem(ev["user"], "user")
    if why:
        return why
    if "host" in ev:
        if not isinstance(ev["host"], str) or not ev["host"]:
            return f"host {_shown(ev['host'])} is not a host name"
        if journal_file(Path("."), ev["host"]).name != file:
            return f"it names host {ev['host']!r} but is in {file}: each machine writes only its own file"
    if "seq" in ev and (type(ev["seq"]) is not int or ev["seq"] < 0):
        return f"seq {_shown(ev['seq'])} is not a count"
    through = ev.get("through")
    if through is not None and not _is_day(through):
        return f"through {_shown(through)} is not a day (YYYY-MM-DD) or null"
    return None


def kind_problem(ev: dict) -> str | None:
    """Why the fields of a decision's kind are unusable (None: each there and of its type; see ``KINDS``). Checked by
    the replayer, which applies a decision: the reader keeps every line that is a decision at all."""
    for name, types in KINDS.get(ev["kind"], {}).items():
        if name not in ev:
            if name in _OPTIONAL:
                continue
            return f"{ev['kind']} without {name}"
        value = ev[name]
        if not isinstance(value, types) or (bool not in types and isinstance(value, bool)):
            return f"{name} {_shown(value)} is not {' or '.join('null' if t is type(None) else t.__name__ for t in types)}"
    if ev["kind"] == "fact.forget" and not all(isinstance(s, str) for s in ev.get("sources") or []):
        return "sources must be a list of 'day|file' strings"
    if ev["kind"] == "kb.decide" and ev["decision"] not in ("approve", "reject"):
        return f"decision {_shown(ev['decision'])} is not approve or reject"
    if ev["kind"] == "memory.delete" and not all(isinstance(k, str) and _KEY.fullmatch(k) for k in ev["keys"]):
        return "keys must be a list of observation hashes"
    return None


def _is_day(value) -> bool:
    try:
        return isinstance(value, str) and date.fromisoformat(value).isoformat() == value[:10]
    except ValueError:
        return False


def _shown(value) -> str:
    text = json.dumps(value, ensure_ascii=False, default=str)
    return text if len(text) <= 60 else text[:57] + "..."


def record(facts, journal_dir: Path, host: str, kind: str, user: str, fields: dict, apply=None) -> dict:
    """A decision a person makes on this machine, journaled first: the line (with the point of the history it is made
    at, the user's last digested day read from ``facts``, an open ``storage.facts.FactStore``) is written to this
    machine's journal, then ``apply()`` makes the decision here, then the line is marked as held by this machine's fact
    store so the replay never applies it twice. Raises JournalUnwritable, with nothing changed, when the line cannot be
    written. Returns the line; ``event["applied"]`` is what ``apply`` returned."""
    event = append(journal_dir, host, {"kind": kind, "user": user, "at": clock.now("UTC").isoformat(timespec="microseconds"),
                                       "through": facts.last_digested_day(user), **fields})
    result = apply() if apply is not None else None
    facts.mark_journal_applied(event, "made here")
    return {**event, "applied": result}
