"""Where user memory records live: one text per (user, name), behind four operations.

``RecordStore`` is the narrow seam the memory service is written against (list, read, write, delete);
``FileRecordStore`` keeps each record as ``<root>/<user>/<name>.md`` (Obsidian opens the folder as is),
``SqliteRecordStore`` keeps them in one SQLite file. Both pass the same test suite
(tests/storage/test_memory_store.py), so an object store or a server database can follow the same contract.

Names are checked here, before any path is built or any row is touched: a user id or record name with a
separator, ``..``, an absolute path, a control character or too many characters never reaches the
backend, whatever the layer above did. Chinese names are fine.
"""

from __future__ import annotations

import os
import sqlite3
import threading
import time
import unicodedata
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from agentos_mem.kernel.files import UnsafePath, guard
from agentos_mem.storage.guards import database_file

MAX_NAME_CHARS = 100  # record names and user ids
MAX_NAME_BYTES = 240  # in UTF-8: a file name holds 255 bytes, less ".md" and room to spare (80 Chinese characters)
_FORBIDDEN = set('/\\:*?"<>|')
_WINDOWS_RESERVED = {"con", "prn", "aux", "nul", *(f"com{i}" for i in range(10)), *(f"lpt{i}" for i in range(10))}


class InvalidName(ValueError):
    """A user id or record name that could escape its folder or cannot be a file name."""


class RecordNotFound(KeyError):
    """No record of that name for that user."""

    def __str__(self) -> str:  # KeyError would print the repr of its argument
        return str(self.args[0]) if self.args else "record not found"


def name_problem(name: object, what: str = "name") -> str | None:
    """Why ``name`` cannot name a record (or a user's folder), or None when it can."""
    if not isinstance(name, str):
        return f"{what} must be a string, not {type(name).__name__}"
    if not name:
        return f"{what} is empty"
    if len(name) > MAX_NAME_CHARS:
        return f"{what} is longer than {MAX_NAME_CHARS} characters"
    size = len(name.encode("utf-8", errors="surrogatepass"))
    if size > MAX_NAME_BYTES:
        return (f"{what} is {size} bytes in UTF-8, more than the {MAX_NAME_BYTES} a file name can hold here "
                f"(a Chinese character takes 3 bytes): shorten it")
    if name in (".", "..") or ".." in name:
        return f"{what} {name!r} contains '..'"
    if name.startswith((".", "~")):
        return f"{what} {name!r} starts with {name[0]!r} (hidden or home-relative names are not allowed)"
    if os.path.isabs(name) or (len(name) > 1 and name[1] == ":"):
        return f"{what} {name!r} is an absolute path"
    bad = sorted({c for c in name if c in _FORBIDDEN})
    if bad:
        return f"{what} {name!r} contains path separators or reserved characters {''.join(bad)!r}"
    if any(unicodedata.category(c) in ("Cc", "Cf", "Zl", "Zp", "Cs", "Co", "Cn") for c in name):
        return f"{what} {name!r} contains control or invisible characters"
    if name != name.strip() or name.endswith("."):
        return f"{what} {name!r} starts or ends with a space, or ends with '.'"
    if name.split(".")[0].lower() in _WINDOWS_RESERVED:
        return f"{what} {name!r} is a reserved device name on Windows"
    return None


def name_key(name: str) -> str:
    """What two names are compared by: NFKC (NFC/NFD and full-width forms alike) and case folded, so names that
    would collide on a case-insensitive or normalising file system (macOS, Windows, sync targets) are one name."""
    return unicodedata.normalize("NFKC", name).casefold()


def check_name(name: object, what: str = "name") -> str:
    problem = name_problem(name, what)
    if problem:
        raise InvalidName(problem)
    return name  # type: ignore[return-value]


@dataclass(frozen=True)
class Entry:
    name: str
    mtime_ns: int  # last write: the recall window orders by it


class RecordStore(Protocol):
    """The four operations every backend provides. Texts are whole Markdown records (frontmatter + body)."""

    def list(self, user: str) -> list[Entry]: ...

    def read(self, user: str, name: str) -> str: ...

    def read_bytes(self, user: str, name: str) -> bytes: ...

    def where(self, user: str, name: str) -> str: ...

    def write(self, user: str, name: str, text: str) -> None: ...

    def delete(self, user: str, name: str) -> None: ...


class FileRecordStore:
    """``<root>/<user>/<name>.md``, written atomically (temporary file + rename).

    Every path goes through ``kernel.files.Below`` for the workspace holding ``root``: a user folder or a record
    that is a symbolic link (``records/carol -> /some/dir``, ``records/bob -> records/alice``), a FIFO or a device
    is never read, rewritten or deleted; a direct action on it raises ``UnsafePath`` naming it, and a listing leaves
    it out and keeps it in ``refused`` for the caller to report."""

    SUFFIX = ".md"

    def __init__(self, root: Path):
        self.root = Path(root)
        self.below = guard(self.root)
        self.refused: list[UnsafePath] = []  # what the last ``list`` left out, and why

    def _dir(self, user: str) -> Path:
        return self.below.check(self.root / check_name(user, "user id"), "dir")

    def _path(self, user: str, name: str) -> Path:
        folder = self._dir(user)
        path = folder / (check_name(name, "record name") + self.SUFFIX)
        # Defence in depth: after the name rules, the file must still sit directly in the user's folder.
        if path.parent != folder:
            raise InvalidName(f"record name {name!r} leaves the user's folder")
        return self.below.check(path, "file")

    def list(self, user: str) -> list[Entry]:
        folder = self._dir(user)
        files, self.refused = self.below.files(folder, self.SUFFIX)
        out = []
        for p in files:
            if name_problem(p.stem):
                continue  # stray files (a user's own notes, editor temp files) are not records
            out.append(Entry(p.stem, os.lstat(p).st_mtime_ns))
        return out

    def read(self, user: str, name: str) -> str:
        path = self._path(user, name)
        if not self.below.is_file(path):
            raise RecordNotFound(f"no memory named {name!r} for user {user!r}")
        return self.below.read_bytes(path).decode("utf-8", errors="replace")

    def read_bytes(self, user: str, name: str) -> bytes:
        """The record's file exactly as it is on disk (what a write in place must reproduce)."""
        path = self._path(user, name)
        if not self.below.is_file(path):
            raise RecordNotFound(f"no memory named {name!r} for user {user!r}")
        return self.below.read_bytes(path)

    def where(self, user: str, name: str) -> str:
        """The record's file, for a message."""
        return str(self._path(user, name))

    def write(self, user: str, name: str, text: str) -> None:
        path = self.below.write(self._path(user, name), text)
        now = time.time_ns()  # the clock at full precision: the recall window's order follows write order
        os.utime(path, ns=(now, now), follow_symlinks=False)

    def delete(self, user: str, name: str) -> None:
        path = self._path(user, name)
        if not self.below.is_file(path):
            raise RecordNotFound(f"no memory named {name!r} for user {user!r}")
        self.below.unlink(path)


class SqliteRecordStore:
    """One SQLite file, one row per record; the same contract as the folder of files."""

    def __init__(self, path: Path):
        self.path = database_file(path)  # never through a link (kernel.files.Below)
        self._local = threading.local()
        with self._con() as con:
            con.execute("create table if not exists records (user text not null, name text not null, text text not null, "
                        "mtime_ns integer not null, primary key (user, name))")

    def _con(self) -> sqlite3.Connection:
        con = getattr(self._local, "con", None)
        if con is None:
            con = sqlite3.connect(self.path, timeout=30)
            con.execute("pragma journal_mode=wal")
            self._local.con = con
        return con

    def list(self, user: str) -> list[Entry]:
        check_name(user, "user id")
        rows = self._con().execute("select name, mtime_ns from records where user=?", [user]).fetchall()
        return [Entry(n, m) for n, m in rows]

    def read(self, user: str, name: str) -> str:
        check_name(user, "user id"), check_name(name, "record name")
        row = self._con().execute("select text from records where user=? and name=?", [user, name]).fetchone()
        if row is None:
            raise RecordNotFound(f"no memory named {name!r} for user {user!r}")
        return row[0]

    def read_bytes(self, user: str, name: str) -> bytes:
        return self.read(user, name).encode("utf-8")

    def where(self, user: str, name: str) -> str:
        return f"{self.path} (user {user!r}, record {name!r})"

    def write(self, user: str, name: str, text: str) -> None:
        check_name(user, "user id"), check_name(name, "record name")
        with self._con() as con:
            # Strictly increasing per write, like a file's mtime after a touch, even within one clock tick.
            last = con.execute("select max(mtime_ns) from records where user=?", [user]).fetchone()[0] or 0
            con.execute("insert or replace into records values (?,?,?,?)", [user, name, text, max(time.time_ns(), last + 1)])

    def delete(self, user: str, name: str) -> None:
        check_name(user, "user id"), check_name(name, "record name")
        with self._con() as con:
            if con.execute("delete from records where user=? and name=?", [user, name]).rowcount == 0:
                raise RecordNotFound(f"no memory named {name!r} for user {user!r}")

    def close(self) -> None:
        con = getattr(self._local, "con", None)
        if con is not None:
            con.close()
            self._local.con = None
