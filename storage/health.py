"""Which of this machine's SQLite stores are damaged, and what makes each again; and a full disk, which is not damage.

A store whose pages are damaged (a disk error, a copy taken mid-write, a sync tool that synced a live database)
answers ``database disk image is malformed`` or ``file is not a database`` to whatever reads it, which names no
file. ``damaged`` runs SQLite's own ``pragma quick_check`` over every store the workspace reads (for the indexes: the
live generations), read only, and says which file it is and what to do: every store in agent-local but the sqlite
backend's memory records is made from agent-sync, so ``agentos restore --force`` makes it again (the damaged one is
moved to ``agent-local/restore-backup-<time>/``, never deleted); the live index generation's are made again by
``agentos rebuild``, which builds in full over a damaged one (``index.stages.plan_rebuild``). An older generation the
rebuild keeps is read by nobody while the live one is intact: ``kept_damage`` names it as a note, never a failure.
``agentos doctor`` runs it first; every command that fails on a database error runs it to name the file (``cli.main``).

A file system with no room left fails SQLite too, not always in words that say so (issue 42, item 9): a write
answers ``database or disk is full`` (SQLITE_FULL; Chroma's own SQLite says ``(code: 13) database or disk is full``),
but opening a WAL store whose ``-shm`` file cannot grow answers ``disk I/O error`` (SQLITE_IOERR_SHMSIZE), which read
as damage and sent people to ``restore --force``, which needs room to write everything again. ``no_room`` tells such
an error: certain for SQLITE_FULL and ENOSPC/EDQUOT/EFBIG, for SQLite's I/O and cannot-open errors only when the
store's file system has no room now (``room_problem``, a probe write). ``check`` never calls a store damaged for it,
and reads a WAL store without the ``-shm`` file when that cannot grow (``storage.guards.wal_connection``).
"""

from __future__ import annotations

import errno
import os
import sqlite3
from dataclasses import dataclass
from pathlib import Path

from agentos_mem.kernel.files import probe_write
from agentos_mem.kernel.workspace import Workspace
from agentos_mem.storage.guards import heap_wal_connection, shm_cannot_grow

RESTORE = "`agentos restore --force` makes it again from agent-sync (the damaged store is moved to agent-local/restore-backup-<time>/)"
REBUILD = ("`agentos rebuild` makes the index again from the stores (a damaged live generation makes it build in full; "
           "the damaged one is removed by a later rebuild's clean-up)")


@dataclass(frozen=True)
class Damage:
    path: Path  # the damaged file
    why: str  # what SQLite says
    fix: str  # what makes it again

    def line(self, home: Path) -> str:
        return f"{_where(self.path, home)} is damaged ({self.why}): {self.fix}"


def _where(path: Path, home: Path) -> Path:
    try:
        return path.relative_to(home)
    except ValueError:
        return path


def _generation_stores(root: Path) -> tuple[list[Path], list[Path]]:
    """(the live generation's SQLite files, every other generation's and build's) under an index root: CURRENT names
    the live one (``storage.index_store``); what it does not name is read by nobody while the live one is intact."""
    try:
        live = (root / "CURRENT").read_text(encoding="utf-8").strip() if not (root / "CURRENT").is_symlink() else ""
    except OSError:
        live = ""
    mine, others = [], []
    for gen in sorted(root.iterdir()) if root.is_dir() else []:
        if gen.is_symlink() or not gen.is_dir() or not gen.name.startswith(("gen-", ".build-")):
            continue
        files = [p for p in sorted(gen.rglob("*.db")) + sorted(gen.rglob("*.sqlite3")) if p.is_file() and not p.is_symlink()]
        (mine if live and gen.name == live else others).extend(files)
    return mine, others


def stores(ws: Workspace) -> list[tuple[Path, str]]:
    """Every SQLite store of the workspace that is there and read, with what makes it again: for the indexes, the live
    generations' (the memory indexes' and the knowledge sections', ``vector_db/global``) and the embedding cache."""
    out = [(ws.facts_db, RESTORE), (ws.kb_db, RESTORE), (ws.memory_proposals_db, RESTORE),
           (ws.memory_records_db, "it is this machine's only copy of the memory records (AGENTOS_MEMORY_BACKEND=sqlite): "
                                  "put back a backup of it, or save what SQLite can read with `sqlite3 records.db .recover`")]
    out += [(ws.index_dir / "cache.db", RESTORE)]
    out += [(p, REBUILD) for p in _generation_stores(ws.index_dir)[0]]
    out += [(p, RESTORE) for p in _generation_stores(ws.index_dir / "global")[0]]  # the nightly makes the sections' again
    return [(p, fix) for p, fix in out if p.is_file() and not p.is_symlink()]


def check(path: Path) -> str | None:
    """What is wrong with the SQLite file at ``path`` (None: nothing SQLite's quick check finds, or it could not be
    checked for want of room or a lock, which is not damage). Read only."""
    try:
        con = sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=5)
    except sqlite3.Error as e:
        return None if no_room(e, path.parent) else str(e)
    shm = None
    try:
        rows = con.execute("pragma quick_check").fetchall()
    except sqlite3.OperationalError as e:
        if not shm_cannot_grow(e):
            if "locked" in str(e) or "unable to open" in str(e) or no_room(e, path.parent):
                return None  # busy, not readable here, or no room: not known to be damaged
            return str(e)
        shm = e
    except sqlite3.DatabaseError as e:
        return str(e)
    finally:
        con.close()
    if shm is not None:  # a WAL store on a full disk: checked with the WAL index in memory (not while handling shm,
        return _check_without_shm(path, shm)  # whose error would then read as the cause of what the check finds)
    return _found(rows)


def _check_without_shm(path: Path, first: sqlite3.Error) -> str | None:
    try:
        con = heap_wal_connection(path, first)
    except sqlite3.Error as e:
        return None if no_room(e, path.parent) or "locked" in str(e) else str(e)
    try:
        con.execute("pragma query_only=1")  # a check reads; it never writes the store
        return _found(con.execute("pragma quick_check").fetchall())
    except sqlite3.DatabaseError as e:
        return None if no_room(e, path.parent) else str(e)
    finally:
        con.close()


def _found(rows) -> str | None:
    found = [str(r[0]) for r in rows if r and r[0] != "ok"]
    return ("; ".join(found[:3]) + (f" (and {len(found) - 3} more)" if len(found) > 3 else "")) if found else None


def damaged(home: Path) -> list[Damage]:
    """The workspace's damaged stores (none: an empty list)."""
    ws = Workspace(Path(home))
    out = []
    for path, fix in stores(ws):
        why = check(path)
        if why is not None:
            out.append(Damage(path, why, fix))
    return out


def kept_damage(home: Path) -> list[str]:
    """Notes on the older index generations a rebuild keeps (for readers still on them) that are damaged: nobody reads
    one while the live generation is intact, and the next rebuild that publishes a generation removes it. A note, not
    a failure: after ``agentos rebuild`` over a damaged live generation, the damaged one is kept as the older one."""
    ws = Workspace(Path(home))
    out = []
    for root in (ws.index_dir, ws.index_dir / "global"):
        for path in _generation_stores(root)[1]:
            why = check(path)
            if why is not None:
                out.append(f"{_where(path, ws.home)} (an older index generation, kept a while for readers still on it) is "
                           f"damaged ({why}); nothing reads it, and the next rebuild's clean-up removes it")
    return out


# -- a full disk is not damage -----------------------------------------------------------------------------

SQLITE_FULL, SQLITE_IOERR, SQLITE_CANTOPEN = 13, 10, 14
NO_ROOM = (errno.ENOSPC, errno.EDQUOT, errno.EFBIG)  # no space, a quota, a file size limit (``ulimit -f``)
PROBE_BYTES = 64 << 10  # more than a WAL store's -shm file grows by at first (32 KiB): a write that finds no room says so


class NoRoom(OSError):
    """A store could not be opened or written for want of room on its file system: never damage (``no_room``). Raised
    as ``NoRoom(errno.ENOSPC, no_room_line(...))``; its words are that line."""

    def __str__(self) -> str:
        return str(self.strerror)


def error_chain(e: BaseException):
    """``e`` and what it was raised from or during, each once (a flow's or a task's wrapper around a store's error)."""
    seen = set()
    while e is not None and id(e) not in seen:
        seen.add(id(e))
        yield e
        e = e.__cause__ or e.__context__


def says_no_room(e: BaseException) -> bool:
    """Whether ``e`` (or what it was raised from) says a write found no room: SQLITE_FULL (also in Chroma's words), or an
    OSError ENOSPC, EDQUOT or EFBIG. SQLite answers SQLITE_FULL only for a write the file system refused for room (or
    past ``max_page_count``): never for damage."""
    for x in error_chain(e):
        if isinstance(x, OSError) and x.errno in NO_ROOM:
            return True
        if isinstance(x, sqlite3.Error) and (getattr(x, "sqlite_errorcode", None) or 0) & 0xFF == SQLITE_FULL:
            return True
        if "database or disk is full" in str(x):  # Chroma's SQLite (Rust) and wrapped errors keep only the words
            return True
    return False


def may_be_no_room(e: BaseException) -> bool:
    """Whether ``e`` is an error a full disk causes without saying so: SQLite's I/O errors (a -shm file that cannot grow,
    a write refused) and cannot-open errors (a -wal or -journal file that cannot be made). Only the file system can tell
    (``room_problem``)."""
    for x in error_chain(e):
        if isinstance(x, sqlite3.Error) and (getattr(x, "sqlite_errorcode", None) or 0) & 0xFF in (SQLITE_IOERR, SQLITE_CANTOPEN):
            return True
        if "disk I/O error" in str(x):  # Chroma's words for SQLITE_IOERR
            return True
    return False


def filesystem_of(path: Path) -> Path:
    """The mount point of the file system ``path`` is on (its nearest existing folder's)."""
    path = Path(os.path.abspath(path))
    while not path.exists() and path != path.parent:
        path = path.parent
    try:
        dev = path.stat().st_dev
        while path != path.parent and path.parent.stat().st_dev == dev:
            path = path.parent
    except OSError:
        pass
    return path


def room_problem(folder: Path) -> str | None:
    """Why ``folder``'s file system takes no write now (the probe's error, or none free), or None. A probe file of
    ``PROBE_BYTES`` is written, synced and removed: quotas and file size limits show only to a write."""
    folder = Path(folder)
    while not folder.is_dir() and folder != folder.parent:
        folder = folder.parent
    try:
        st = os.statvfs(folder)
        if st.f_bavail == 0:
            return f"{os.strerror(errno.ENOSPC)}, 0 bytes free"
    except OSError:
        pass
    try:
        probe_write(folder, PROBE_BYTES, ".agentos-room-")
    except OSError as e:
        if e.errno in NO_ROOM:
            return f"{e.strerror}, {_free(folder)} free"
    return None


def free_bytes(folder: Path) -> int | None:
    """Bytes free to this user on ``folder``'s file system (its nearest existing folder's), or None when unknown."""
    folder = Path(folder)
    while not folder.exists() and folder != folder.parent:
        folder = folder.parent
    try:
        st = os.statvfs(folder)
    except OSError:
        return None
    return st.f_bavail * st.f_frsize


def _free(folder: Path) -> str:
    free = free_bytes(folder)
    if free is None:
        return "? bytes"
    return f"{free // 1024} KiB" if free >= 1024 else f"{free} bytes"


def no_room_line(folder: Path, why: str) -> str:
    """What a command says when ``folder``'s file system has no room: the folder, the file system, what to do."""
    head = "file size limit reached" if why.startswith(os.strerror(errno.EFBIG)) else "disk full"  # ``ulimit -f``
    return (f"{head}: no room to write in {folder} (the file system mounted at {filesystem_of(folder)}: {why}); "
            "free some space there and run the command again; nothing is damaged, nothing needs restoring")


def no_room(e: BaseException, folder: Path) -> str | None:
    """``no_room_line`` when ``e`` is a write (or an open) that found no room on ``folder``'s file system, else None:
    certain when ``e`` says so, and for an error a full disk causes without saying so when the file system has no room
    now (checked then, with a probe write). A ``NoRoom`` error's own line when ``e`` is (or was raised from) one."""
    named = next((x for x in error_chain(e) if isinstance(x, NoRoom)), None)
    if named is not None:
        return str(named)
    if says_no_room(e):
        return no_room_line(folder, room_problem(folder) or _words(e))
    if may_be_no_room(e):
        why = room_problem(folder)
        return no_room_line(folder, why) if why else None
    return None


def _words(e: BaseException) -> str:
    for x in error_chain(e):
        if isinstance(x, OSError) and x.errno in NO_ROOM:
            return x.strerror or str(x)
    return "database or disk is full"
