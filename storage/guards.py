"""Where a store may be opened, and who may write or read the stores now: a SQLite file's place checked (``database_file``),
the workspace's writer lock, and the marker a restore holds while it makes the stores again (a read refuses a partial
store). Beside the stores they guard: storage, the pipelines, the services, the
read path and the transports take them; the kernel below them only lays out the files."""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

from agentos_mem.kernel import clock
from agentos_mem.kernel.files import guard, open_lock
from agentos_mem.kernel.workspace import Workspace


def database_file(path: Path) -> Path:
    """``path`` for a SQLite store to open: it, its ``-wal``/``-journal``/``-shm`` companions and its folder pass
    ``Below`` (SQLite follows a link and would write a store outside the workspace), the folder created through it."""
    path = Path(path)
    below = guard(path)
    for p in (path, *(path.with_name(path.name + s) for s in ("-wal", "-shm", "-journal"))):
        below.check(p, "file")
    below.mkdirs(path.parent)
    return path


# -- a WAL store read on a full disk -------------------------------------------------------------------------
# Readers of a WAL store share its WAL index in ``<store>-shm``, which SQLite grows to 32 KiB on the first read; on a
# file system with no room that write fails and the read is refused with "disk I/O error" (SQLITE_IOERR_SHMSIZE),
# though reading needs no room (issue 42, item 9). A connection in exclusive locking mode from its first access keeps
# the WAL index in its own memory instead and never touches ``-shm``: safe only while no other connection has the
# store open, which is why it takes the store's exclusive lock (and gives up within a second when another holds it).

_SHM_ERRORS = {"SQLITE_IOERR_SHMSIZE", "SQLITE_IOERR_SHMOPEN", "SQLITE_IOERR_SHMMAP"}


def shm_cannot_grow(e: BaseException) -> bool:
    """Whether ``e`` is SQLite failing to make or grow a WAL store's ``-shm`` file (on a full disk, a quota, a limit)."""
    return getattr(e, "sqlite_errorname", None) in _SHM_ERRORS


def heap_wal_connection(path: Path, first: BaseException, *, timeout_ms: int = 30000) -> sqlite3.Connection:
    """A connection to the WAL store at ``path`` that keeps its WAL index in memory (see above), holding the store's
    lock until it is closed; ``first`` (the error of the ordinary open) is raised when another connection has it."""
    con = sqlite3.connect(database_file(path))
    try:
        con.execute("pragma busy_timeout=1000")  # another process holds it open: then it has its -shm, say the first error
        con.execute("pragma locking_mode=exclusive")  # before the first access: no -shm is ever made or grown
        con.execute("pragma journal_mode=wal")
    except sqlite3.Error:
        con.close()
        raise first from None
    con.execute(f"pragma busy_timeout={timeout_ms}")
    return con


def wal_connection(path: Path, *, timeout_ms: int = 30000) -> sqlite3.Connection:
    """A connection to the SQLite store at ``path`` (placed by ``database_file``) in WAL mode, waiting up to
    ``timeout_ms`` for a lock; on a disk with no room for its ``-shm`` file, one with the WAL index in memory
    (``heap_wal_connection``): reads go on, a write fails as it would (no room)."""
    path = database_file(path)
    con = sqlite3.connect(path)
    # the wait first: switching a new file to WAL takes its write lock, which another process opening it at the
    # same moment may hold (the connection's own default wait is 5 s, short on a loaded machine)
    con.execute(f"pragma busy_timeout={timeout_ms}")
    try:
        con.execute("pragma journal_mode=wal")
    except sqlite3.OperationalError as e:
        con.close()
        if not shm_cannot_grow(e):
            raise
        return heap_wal_connection(path, e, timeout_ms=timeout_ms)
    return con


class workspace_lock:
    """An exclusive lock on the workspace's writers (held across one day's digest, a rebuild's snapshot, a decision).

    A scheduled run and a manual CLI run on the same day wait for each other instead of interleaving
    card and summary writes. Released when the process exits, even on a crash. A writer that gets the lock while a
    restore makes the stores again (or after one that was killed part way) refuses with RestoreInProgress instead of
    writing into the restore's half-made store (issue 42: a nightly's later days landed there, every exit code 0);
    the restore's own writes, in the process that holds the marker, go on.
    """

    def __init__(self, home: Path, name: str = "writer"):
        self.home = Path(home)
        self.path = Workspace(self.home).runtime / f"{name}.lock"

    def __enter__(self):
        import fcntl

        self._f = os.fdopen(open_lock(self.path), "a")  # never through a link, never a FIFO
        fcntl.flock(self._f, fcntl.LOCK_EX)
        if _key(self.home) not in _RESTORING:
            state = restore_state(self.home)
            if state is not None:
                fcntl.flock(self._f, fcntl.LOCK_UN)
                self._f.close()
                raise RestoreInProgress(state)
        return self

    def __exit__(self, *exc):
        import fcntl

        fcntl.flock(self._f, fcntl.LOCK_UN)
        self._f.close()


# -- a restore in progress ----------------------------------------------------------------------------------------
# A restore moves the stores aside and makes them again day by day: until it ends, a read would serve a partial store
# as if it were the whole memory. The restore holds an exclusive flock on a marker file in agent-local/runtime (which
# it never moves aside) for as long as it runs and removes the marker when it ends, put back or not. A reader sees:
# no marker, nothing to say; a marker someone holds locked, a restore in progress; a marker nobody holds, a restore
# that was killed part way (kill -9, a power cut), whose partial stores stay until `agentos restore --force` again.

RESTORE_MARKER = "restore-in-progress.json"
# The workspaces whose restore this process runs: its own writes (the days it digests again, the rebuild) go on.
_RESTORING: set[str] = set()


def _key(home: Path) -> str:
    return os.path.realpath(home)


class RestoreInProgress(RuntimeError):
    """A read refused while a restore makes the stores again (or after one that was killed part way)."""


class restore_marker:
    """Held by ``restore.run.restore`` for the whole restore (see above)."""

    def __init__(self, home: Path):
        self.home = Path(home)
        self.path = Workspace(self.home).runtime / RESTORE_MARKER
        # set by the restore when the stores it moved aside could not all be put back: the marker then stays, and every
        # command says the restore did not finish until `agentos restore --force` is run again
        self.unfinished = False

    def __enter__(self):
        import fcntl
        import json

        self.path.parent.mkdir(parents=True, exist_ok=True)
        before = self.path.exists()  # a killed restore's marker: its stores are incomplete, whatever happens here
        self._f = open(self.path, "a+", encoding="utf-8")
        try:
            fcntl.flock(self._f, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            self._f.close()
            raise RestoreInProgress(restore_state(self.home) or "another restore is running") from None
        try:
            self._f.truncate(0)
            self._f.write(json.dumps({"pid": os.getpid(), "started": clock.stamp()}) + "\n")
            self._f.flush()
        except OSError:
            # no room for these few bytes (issue 42, item 9): nothing has started, so no marker of ours is left behind
            # to say a restore did not finish
            if not before:
                self.path.unlink(missing_ok=True)
            fcntl.flock(self._f, fcntl.LOCK_UN)
            try:
                self._f.close()
            except OSError:
                pass  # the buffered line it could not write
            raise
        _RESTORING.add(_key(self.home))
        return self

    def __exit__(self, *exc):
        import fcntl

        _RESTORING.discard(_key(self.home))
        try:
            if not self.unfinished:
                self.path.unlink(missing_ok=True)  # removed while still held: a reader that waited finds no marker
        finally:
            fcntl.flock(self._f, fcntl.LOCK_UN)
            self._f.close()


def restore_state(home: Path) -> str | None:
    """What a reader must say instead of answering (None: no restore is running or left unfinished)."""
    import fcntl
    import json

    path = Workspace(Path(home)).runtime / RESTORE_MARKER
    try:
        f = open(path, encoding="utf-8")
    except FileNotFoundError:
        return None
    except OSError as e:
        return f"{path} cannot be read ({e.strerror}): a restore may be running"
    with f:
        try:
            info = json.loads(f.readline() or "{}")
        except ValueError:
            info = {}
        since = f" (pid {info.get('pid', '?')}, started {info.get('started', '?')})"
        try:
            fcntl.flock(f, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except BlockingIOError:
            return (f"a restore is in progress{since}: the stores are incomplete until it ends; "
                    "try again when `agentos restore` has finished")
        left_behind = path.exists()  # a restore that ends removes the marker before letting go of it
        fcntl.flock(f, fcntl.LOCK_UN)
    if not left_behind:
        return None
    return (f"a restore did not finish{since}: it was stopped part way and the stores are incomplete; "
            "`agentos restore --force` makes them again (what it moved aside is in agent-local/restore-backup-*)")


def check_no_restore(home: Path) -> None:
    """Raise RestoreInProgress with :func:`restore_state`'s message when reads must not be served."""
    state = restore_state(home)
    if state is not None:
        raise RestoreInProgress(state)
