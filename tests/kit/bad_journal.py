"""A corpus of damaged and forged journal lines (issue 25), written by the test into a workspace's journal folder
(agent-sync/04_memory/journal): each one once stopped the nightly, ``doctor`` or ``restore``, or was applied though
nobody who may make the decision made it. Every one aims at a real fact of the workspace (``target``): if any were
applied, that fact would be forgotten.

``write_bad_journal(journal_dir, target)`` appends them and returns the ``BadLine``s: the file and line each is
reported as (``file:line``), a piece of the reason, and who catches it: ``read`` (``storage.journal.read`` skips it:
damaged, or in another host's file than the one it names) or ``replay`` (the replayer refuses it: fields of its kind
unusable, or a person who may not make the decision).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

AT = "2026-11-30T01:00:00.000000+00:00"


@dataclass(frozen=True)
class BadLine:
    what: str  # the words for the input
    file: str
    line: int
    reason: str  # a piece of the problem reported
    where: str  # "read" or "replay"

    @property
    def at(self) -> str:
        return f"{self.file}:{self.line}: "


def forget_of(fact: dict, host: str, n: int, **changes) -> dict:
    """A well-formed forget of ``fact`` (a row of the facts table) as ``host`` would journal it, with ``changes``."""
    line = {"v": 1, "id": f"bad{n:04d}{host}", "host": host, "seq": n, "at": AT, "user": fact["user_id"], "kind": "fact.forget",
            "through": None, "subject": fact["subject"], "subject_key": fact["subject_key"], "predicate": fact["predicate"],
            "object": fact["object"], "object_key": fact["object_key"], "sources": [f"{fact['source_day']}|{fact['source_file']}"],
            "reason": "forged"}
    line.update(changes)
    return {k: v for k, v in line.items() if v is not ...}


def write_bad_journal(journal_dir: Path, target: dict) -> list[BadLine]:
    """Append the corpus to ``laptop.jsonl`` and ``desktop.jsonl`` in ``journal_dir``; returns what each must give."""
    folder = Path(journal_dir)
    folder.mkdir(parents=True, exist_ok=True)
    cases: list[BadLine] = []
    files: dict[str, list[bytes]] = {"laptop.jsonl": [], "desktop.jsonl": []}
    before = {name: (folder / name).read_bytes().count(b"\n") if (folder / name).is_file() else 0 for name in files}

    def add(file: str, what: str, data: dict | list | str | bytes, reason: str, where: str) -> None:
        lines = files[file]
        raw = data if isinstance(data, bytes) else (data if isinstance(data, str) else json.dumps(data, ensure_ascii=False)).encode("utf-8")
        lines.append(raw)
        cases.append(BadLine(what, file, before[file] + len(lines), reason, where))

    n = iter(range(1, 1000))
    f = lambda **kw: forget_of(target, "laptop", next(n), **kw)  # noqa: E731

    # damaged: each a TypeError or ValueError once
    add("laptop.jsonl", 'seq "1a" (ValueError in nightly and doctor)', f(seq="1a"), 'seq "1a" is not a count', "read")
    add("laptop.jsonl", 'user ["alice"] (TypeError)', f(user=["alice"]), "user must be a string, not list", "read")
    add("laptop.jsonl", "an id that is a number", f(id=12345), "id 12345 is not an id", "read")
    add("laptop.jsonl", "at that is no instant", f(at="last tuesday"), 'at "last tuesday" is not an ISO instant', "read")
    add("laptop.jsonl", "through that is no day", f(through=20261129), "through 20261129 is not a day", "read")
    add("laptop.jsonl", "a kind that is a list", f(kind=["fact.forget"]), "kind [\"fact.forget\"] is not a kind", "read")
    add("laptop.jsonl", "a newer journal version", f(v=99), "v 99: not a journal version this one reads", "read")
    add("laptop.jsonl", "not JSON", '{"kind": "fact.forget", "at": ', "unreadable line (JSONDecodeError", "read")
    add("laptop.jsonl", "JSON nested 100,000 deep (RecursionError)", "[" * 100_000, "unreadable line (RecursionError", "read")
    add("laptop.jsonl", "bytes that are not UTF-8", b'{"kind": "fact.forget", "user": "\xff"}', "unreadable line (UnicodeDecodeError", "read")
    add("laptop.jsonl", "a JSON list", [1, 2, 3], "not a decision (id, kind, at and user are needed)", "read")
    add("laptop.jsonl", "sources that are a string", f(sources="2026-11-25|x.md"), "damaged: sources", "replay")
    add("laptop.jsonl", "a forget without the fact's key", f(subject_key=...), "damaged: fact.forget without subject_key", "replay")
    add("laptop.jsonl", "memory.delete keys that are no hashes",
        {"v": 1, "id": "bad-keys", "host": "laptop", "seq": 30, "at": AT, "user": target["user_id"], "kind": "memory.delete",
         "through": None, "keys": ["not a hash"]}, "damaged: keys must be a list of observation hashes", "replay")
    # forged: well-formed, but not a decision the person it names may make, or not where that host writes
    forged = f(who="mallory")
    add("laptop.jsonl", 'a forget of default\'s fact said to be made by "who": "mallory"', forged,
        "said to be made by 'mallory': only default decides it", "replay")
    add("laptop.jsonl", "the same id again (a copy of an earlier line)", {**forged, "who": target["user_id"]},
        f"the same id as laptop.jsonl:{cases[-1].line}", "read")
    add("laptop.jsonl", "a decision about a user this workspace does not have", f(user="mallory"),
        "'mallory' is not a user of this workspace", "replay")
    add("laptop.jsonl", "a document decided by someone who is not a user",
        {"v": 1, "id": "bad-kb", "host": "laptop", "seq": 31, "at": AT, "user": target["user_id"], "kind": "kb.decide",
         "through": None, "doc_id": "kb-forged", "decision": "approve", "who": "mallory"},
        "'mallory', said to have decided it, is not a user of this workspace", "replay")
    add("desktop.jsonl", "a line naming host laptop in desktop's file", forget_of(target, "laptop", 99),
        "it names host 'laptop' but is in desktop.jsonl", "read")
    for name, lines in files.items():
        with open(folder / name, "ab") as out:
            out.write(b"".join(raw + b"\n" for raw in lines))
    return cases


def reported(problems: list[str], case: BadLine) -> bool:
    """Whether ``problems`` (a report's lines) name ``case`` at its file and line, with its reason."""
    return any(case.at in p and case.reason in p for p in problems)
