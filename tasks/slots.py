"""This host's holders of the workspace's writer slots: a lock file per slot that names its holder.

Prefect's global concurrency limits (``tasks.writers``) count taken slots in the server's database, and an
ephemeral server keeps the lease that would give a slot back only in its own memory: after ``kill -9`` of a run
(an OOM kill, a power cut) or a run that could not write its release (a full disk), the count stays taken and
every later run would wait for it forever. The operating system knows which process holds a lock taken with ``flock``
and drops it the moment that process dies, however it dies; so each slot is taken here first, and the holder
writes who it is (pid, the process's start time, the command, since when) into the lock file:

- a second run on this host waits on the lock, saying what it waits for (which run, since when), and stops on
  SIGTERM or Ctrl-C, since it waits in short, interruptible polls rather than inside a blocking call;
- a run that gets the lock knows that no live process of this host holds the slot: a count Prefect still shows
  taken is a dead run's (``tasks.writers`` gives it back when no other host can share the database).

Lock files live in ``agent-local/runtime/slots/``: per host, never synced.
"""

from __future__ import annotations

import fcntl
import json
import os
import socket
import sys
import time
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

from agentos_mem.kernel.workspace import Workspace


def slots_dir(home: Path) -> Path:
    return Workspace(Path(home)).runtime / "slots"


def process_start(pid: int) -> str | None:
    """The start time of process ``pid`` in clock ticks since boot (field 22 of /proc/PID/stat), None if there is no
    such process. A pid reused by a later process has another start time, so (pid, start) names one process."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    # the command name (field 2) may hold spaces and parentheses: the fields after it follow the last ')'
    return stat.rsplit(")", 1)[1].split()[19]


def alive(pid: int, start: str | None) -> bool:
    """Whether the process ``pid`` that started at ``start`` still runs (a zombie counts as gone)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass  # another user's process: it exists
    now = process_start(pid)
    if now is None:  # no /proc (not Linux): os.kill said it exists
        return True
    try:
        if Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] == "Z":
            return False
    except OSError:
        return False
    return start is None or now == start


@dataclass(frozen=True)
class Holder:
    """Who holds (or last held) a slot, as its lock file says."""

    pid: int
    start: str | None
    command: str
    since: str  # ISO time, UTC
    host: str = ""

    def describe(self) -> str:
        where = f" on {self.host}" if self.host and self.host != socket.gethostname() else ""
        return f"pid {self.pid}{where} (`{self.command}`, since {self.since})"

    def is_alive(self) -> bool:
        return alive(self.pid, self.start)


def _me() -> dict:
    argv = [Path(sys.argv[0]).name, *sys.argv[1:]] if sys.argv and sys.argv[0] else ["python"]
    return {"pid": os.getpid(), "start": process_start(os.getpid()), "host": socket.gethostname(), "command": " ".join(argv)[:200],
            "since": datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M:%S UTC")}


def read_holder(path: Path) -> Holder | None:
    """The holder a lock file names; None when it names none (a new slot, or a record being written)."""
    try:
        d = json.loads(path.read_text(encoding="utf-8"))
        return Holder(pid=int(d["pid"]), start=d.get("start"), command=str(d.get("command", "")), since=str(d.get("since", "")),
                      host=str(d.get("host", "")))
    except (OSError, ValueError, KeyError, TypeError):
        return None


class SlotLock:
    """The lock file of one slot on this host. ``take`` waits (in short polls, so a signal stops it at once) until the
    lock is free, then writes this process in as its holder; ``previous`` is the holder named in the file when this
    process got the lock (a dead run's, or one that ended cleanly), for the caller's message."""

    POLL_SECONDS = 0.5

    def __init__(self, home: Path, name: str):
        self.name = name
        self.path = slots_dir(home) / f"{name}.lock"
        self._f = None
        self.previous: Holder | None = None
        self.held = False  # False after ``take`` only where the file system refuses locks (ENOLCK on some mounts)

    def take(self, on_wait=None) -> "SlotLock":
        """Take the lock; while another process holds it, call ``on_wait(holder)`` each time the holder changes
        (holder: the Holder the file names, or None when it names none yet)."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        f = open(self.path, "a+", encoding="utf-8")  # "a+": never truncate another holder's record while waiting
        try:
            shown = object()
            while True:
                try:
                    fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    break
                except BlockingIOError:
                    holder = read_holder(self.path)
                    if on_wait is not None and holder != shown:
                        on_wait(holder)
                        shown = holder
                    time.sleep(self.POLL_SECONDS)
                except OSError:  # no locks here (a network mount): Prefect's limit alone decides, as before
                    f.close()
                    return self
            self.held = True
            self.previous = read_holder(self.path)
            f.seek(0)
            f.truncate()
            f.write(json.dumps(_me()) + "\n")
            f.flush()
        except BaseException:
            f.close()  # closing drops the lock if it was taken
            raise
        self._f = f
        return self

    def release(self) -> None:
        """Drop the lock; the record stays (it names the last holder, which is no longer alive or no longer holds)."""
        if self._f is not None:
            try:
                fcntl.flock(self._f, fcntl.LOCK_UN)
            finally:
                self._f.close()
                self._f = None
