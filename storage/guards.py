"""Where a store may be opened, and who may write or read the stores now: a SQLite file's place checked (``database_file``),
the workspace's writer lock, and the marker a restore holds while it makes the stores again (a read refuses a partial
store). Beside the stores they guard: storage, the pipelines, the services, the
read path and the transports take them; the kernel below them only lays out the files."""

from __future__ import annotations

import os
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

    def __enter__(self):
        import fcntl
        import json

        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._f = open(self.path, "a+", encoding="utf-8")
        try:
            fcntl.flock(self._f, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            self._f.close()
            raise RestoreInProgress(restore_state(self.home) or "another restore is running") from None
        self._f.truncate(0)
        self._f.write(json.dumps({"pid": os.getpid(), "started": clock.stamp()}) + "\n")
        self._f.flush()
        _RESTORING.add(_key(self.home))
        return self

    def __exit__(self, *exc):
        import fcntl

        _RESTORING.discard(_key(self.home))
        try:
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
