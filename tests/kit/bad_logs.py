"""A corpus of bad working-memory logs (issue 14), written by the test into a logs folder: every kind of line and
file that once stopped the nightly, next to good lines and good days that must still be digested.

``write_corpus(folder, outside)`` writes it and returns a ``Corpus``: the ``cases`` each bad input must produce
(file as reports show it, line, a piece of the reason, severity), the ``facts`` the good lines must give (object
-> file and line of its evidence) and the ``days``. ``outside`` is a folder beside the logs folder (the target of
a link that leaves it). A case the machine cannot make (a device node without the right, a socket path too long)
is left out, never faked.
"""

from __future__ import annotations

import json
import os
import socket
import stat
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path

LONG_NAME = "2026-11-22-" + "长名字很长" * 2 + "x" * 204 + ".md"  # 214 characters after the date: legal on Linux (248 bytes)
BIG_LINE_CHARS = 5_000_000  # under the 20 MB file limit, far over the turn limit
DAYS = [date(2026, 11, d) for d in (20, 21, 22, 23, 24, 25)]


@dataclass(frozen=True)
class Case:
    what: str  # the words for the input
    file: str  # as errors.log and quarantine.jsonl name it
    line: int | None
    reason: str  # a piece of the reason
    severity: str = "error"


@dataclass
class Corpus:
    folder: Path
    cases: list[Case] = field(default_factory=list)
    facts: dict[str, tuple[str, int]] = field(default_factory=dict)  # object -> (file, line of its evidence)
    socket: socket.socket | None = None  # keep the bound socket open while the test runs
    secret: str = "SECRET-OUTSIDE-THE-LOGS"

    def close(self) -> None:
        if self.socket is not None:
            self.socket.close()


def _w(path: Path, data: str | bytes) -> None:
    path.write_bytes(data if isinstance(data, bytes) else data.encode("utf-8"))


def write_corpus(folder: Path, outside: Path) -> Corpus:
    folder, outside = Path(folder), Path(outside)
    folder.mkdir(parents=True, exist_ok=True)
    outside.mkdir(parents=True, exist_ok=True)
    c = Corpus(folder)
    add = c.cases.append

    # 2026-11-20: what is not a regular file of the logs folder is refused, never opened for reading.
    _w(folder / "2026-11-20.md", "[09:00] 用户: 我叫林晓。\n")
    c.facts["林晓"] = ("2026-11-20.md", 1)
    _w(outside / "passwd", f"root:x:0:0:{c.secret}:/root:/bin/bash\n")
    os.symlink(outside / "passwd", folder / "2026-11-20-passwd.md")
    add(Case("a symbolic link out of the logs folder", "2026-11-20-passwd.md", None, "symbolic link to"))
    _w(folder / "notes.txt", "[09:00] 用户: 链接进来的笔记。\n")
    os.symlink("notes.txt", folder / "2026-11-20-inside.md")
    add(Case("a symbolic link inside the logs folder (refused too)", "2026-11-20-inside.md", None, "symbolic link to notes.txt: not followed"))
    os.mkfifo(folder / "2026-11-20-fifo.md")
    add(Case("a FIFO (opening it would block forever)", "2026-11-20-fifo.md", None, "a named pipe (FIFO), not a regular file: not read"))
    (folder / "2026-11-20-dir.md").mkdir()
    add(Case("a folder named like a log", "2026-11-20-dir.md", None, "a folder, not a regular file: not read"))
    sock_path = folder / "2026-11-20-sock.md"
    if len(os.fsencode(sock_path)) < 100:
        c.socket = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        c.socket.bind(str(sock_path))
        add(Case("a socket", "2026-11-20-sock.md", None, "a socket, not a regular file: not read"))
    try:
        os.mknod(folder / "2026-11-20-dev.md", stat.S_IFCHR | 0o600, os.makedev(1, 3))  # /dev/null's numbers
        add(Case("a character device", "2026-11-20-dev.md", None, "a character device, not a regular file: not read"))
    except (PermissionError, OSError):
        pass

    # 2026-11-21: bad values in a JSONL export, each costing its own line at most.
    lines = [
        {"role": "user", "content": "数据库端口是 5432。", "timestamp": "2026-11-21T09:00:00+08:00"},
        {"role": "user", "content": "我喜欢喝茶。", "timestamp": "0001-01-01T00:00:00+08:00"},
        {"role": "assistant", "content": "好的，记下了。", "timestamp": "9999-12-31T23:59:59-10:00"},
        "[" * 100_000,
        '{"role": "user", "content": "x", "n": ' + "7" * 5000 + "}",
        '{"role": "user", "content": "\\ud800 half a character"}',
        {"role": "user", "content": "我住在杭州。", "name": {"first": "Lin"}, "timestamp": "2026-11-21T09:05:00+08:00"},
    ]
    _w(folder / "2026-11-21.jsonl", "\n".join(x if isinstance(x, str) else json.dumps(x, ensure_ascii=False) for x in lines) + "\n")
    c.facts.update({"5432": ("2026-11-21.jsonl", 1), "喝茶": ("2026-11-21.jsonl", 2), "杭州": ("2026-11-21.jsonl", 7)})
    add(Case("timestamp 0001-01-01T00:00:00+08:00 (OverflowError)", "2026-11-21.jsonl", 2, "field 'timestamp' is out of range", "warning"))
    add(Case("timestamp 9999-12-31T23:59:59-10:00 (OverflowError)", "2026-11-21.jsonl", 3, "field 'timestamp' is out of range", "warning"))
    add(Case("a JSONL line of 100,000 '[' (RecursionError)", "2026-11-21.jsonl", 4, "invalid JSON (nested too deeply)"))
    add(Case("an integer of 5,000 digits (ValueError)", "2026-11-21.jsonl", 5, "invalid JSON (Exceeds the limit"))
    add(Case("a lone surrogate in 'content'", "2026-11-21.jsonl", 6, "lone surrogate"))
    add(Case("a 'name' that is an object", "2026-11-21.jsonl", 7, "field 'name' is not a speaker's name", "warning"))

    # 2026-11-22: odd file names. A long one is an ordinary log now; control characters, bytes that are not UTF-8
    # and direction marks are refused by name.
    _w(folder / "2026-11-22.md", "[09:00] 用户: 服务器配置是 8C16G。\n")
    c.facts["8C16G"] = ("2026-11-22.md", 1)
    _w(folder / LONG_NAME, "[10:00] 用户: 我喜欢爵士乐。\n")
    c.facts["爵士乐"] = (LONG_NAME, 1)
    _w(folder / "2026-11-22-a\nb.md", "[09:00] 用户: 我叫换行。\n")
    add(Case("a newline in the file name", "2026-11-22-a\\nb.md", None, "file name contains a control character (U+000A)"))
    with open(os.path.join(os.fsencode(folder), b"2026-11-22-\xff.md"), "wb") as f:
        f.write("[09:00] 用户: 我叫字节。\n".encode())
    add(Case("a file name that is not UTF-8", "2026-11-22-\\xff.md", None, "file name is not valid UTF-8"))
    _w(folder / "2026-11-22-\u202egpj.md", "[09:00] 用户: 我叫反向。\n")
    add(Case("a right-to-left override in the file name", "2026-11-22-\\u202egpj.md", None, "direction mark (U+202E)"))

    # 2026-11-23: a 5 MB line with a preference cue and no sentence end; line ends an editor shows (a lone CR
    # ends a line, U+2028 does not); one line that is not UTF-8 between good ones.
    big = "[09:00] 用户: 我喜欢" + "a.b/c-1_" * (BIG_LINE_CHARS // 8)
    data = (big + "\n").encode() + "[09:01] 用户: 第一行\r[09:02] 用户: Redis 端口是 6380。\n".encode()
    data += "[09:03] 用户: API 版本是 v2。\u2028这里还是第四行\n".encode() + b"[09:04] \xe7\x94\xa8\xe6\x88\xb7: \xff\xfe\n"
    data += "[09:05] 用户: 我的工号是 A1234。\n".encode()
    _w(folder / "2026-11-23.md", data)
    c.facts.update({"6380": ("2026-11-23.md", 3), "v2": ("2026-11-23.md", 4), "A1234": ("2026-11-23.md", 6)})
    add(Case("a 5 MB line with a preference cue", "2026-11-23.md", 1, f"turn of {len(big) - len('[09:00] 用户: '):,} characters", "warning"))
    add(Case("a line with an invalid byte", "2026-11-23.md", 5, "invalid UTF-8 (byte 0xff at byte 17 of the line)"))

    # 2026-11-24: frontmatter nested too deeply for the YAML parser (RecursionError): the body is still read.
    _w(folder / "2026-11-24.md", "---\nspeakers: " + "[" * 30_000 + "\n---\n[09:00] 用户: MySQL 端口是 3306。\n")
    c.facts["3306"] = ("2026-11-24.md", 4)
    add(Case("frontmatter nested 30,000 deep", "2026-11-24.md", 1, "broken frontmatter", "warning"))

    # 2026-11-25: a good day after all of them.
    _w(folder / "2026-11-25.md", "[09:00] 用户: 我喜欢爵士鼓。\n")
    c.facts["爵士鼓"] = ("2026-11-25.md", 1)
    return c


def matching(entries: list[dict], case: Case) -> list[dict]:
    """The quarantine.jsonl entries (or problems as dicts) that report ``case``."""
    return [e for e in entries if e.get("file") == case.file and e.get("line") == case.line and case.reason in e.get("reason", "")
            and e.get("severity", "error") == case.severity]
