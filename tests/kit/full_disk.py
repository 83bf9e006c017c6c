"""A file system with no room left, for real and without patching anything: what a person meets when the disk fills.

``no_room(folder)`` holds writes under ``folder`` to no room while it is entered, one of two ways, whichever this
process may take (a test that needs it runs either way, never skips):

- ``"ENOSPC"``, where this process may mount (root with CAP_SYS_ADMIN; CI containers often lack it): the folder's
  content is put on a small tmpfs mounted over it, which is then filled, so every write there fails as on a full
  disk: ENOSPC ("No space left on device") to the OS, SQLITE_FULL ("database or disk is full") to SQLite, a
  WAL store's ``-shm`` file cannot grow. On the way out it is unmounted: what was written there goes with it, and the
  folder's own content (under the mount, never touched) is as it was.
- ``"EFBIG"`` otherwise: a file size limit of ``limit`` bytes for this process (RLIMIT_FSIZE, what ``ulimit -f``
  sets; SIGXFSZ ignored meanwhile), so every write past it fails with EFBIG ("File too large") as a write into no
  room does, and a WAL store's ``-shm`` file cannot grow. The limit and the signal are as they were on the way out.

It yields which of the two it is. ``FULL_DISK_NO_MOUNT=1`` takes the second way where the first is open too
(to run a test the way a machine without the mount runs it).
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import resource
import shutil
import signal
import tempfile
from pathlib import Path

MNT_DETACH = 2
SLACK = 1 << 20  # the tmpfs is this much larger than what it holds, then filled


def _libc():
    return ctypes.CDLL(None, use_errno=True)  # this process's own symbols, libc's among them (no ldconfig run)


def _size(folder: Path) -> int:
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file() and not p.is_symlink())


@contextlib.contextmanager
def _tmpfs(folder: Path):
    libc = _libc()
    aside = Path(tempfile.mkdtemp(prefix="full-disk-", dir=folder.parent))
    try:
        shutil.copytree(folder, aside / "content", symlinks=True)
        size = _size(folder) + SLACK
        if libc.mount(b"tmpfs", os.fsencode(folder), b"tmpfs", 0, f"size={size},mode=755".encode()) != 0:
            raise OSError(ctypes.get_errno(), os.strerror(ctypes.get_errno()), str(folder))
        try:
            shutil.copytree(aside / "content", folder, symlinks=True, dirs_exist_ok=True)
            # every block that is left; unbuffered: a buffered file keeps the tail of a write the disk took only part
            # of, and closing it raised ENOSPC again (whenever the room left was not a multiple of the chunk)
            with open(folder / ".filler", "wb", buffering=0) as f:
                try:
                    while f.write(b"\0" * (64 << 10)):
                        pass
                except OSError:
                    pass
            yield "ENOSPC"
        finally:
            libc.umount2(os.fsencode(folder), MNT_DETACH)
    finally:
        shutil.rmtree(aside, ignore_errors=True)


@contextlib.contextmanager
def _file_size_limit(limit: int):
    soft, hard = resource.getrlimit(resource.RLIMIT_FSIZE)
    previous = signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    resource.setrlimit(resource.RLIMIT_FSIZE, (limit, hard))
    try:
        yield "EFBIG"
    finally:
        resource.setrlimit(resource.RLIMIT_FSIZE, (soft, hard))
        signal.signal(signal.SIGXFSZ, previous)


def _can_mount(folder: Path) -> bool:
    if os.environ.get("FULL_DISK_NO_MOUNT") == "1" or os.geteuid() != 0:
        return False
    probe = Path(tempfile.mkdtemp(prefix="mount-probe-", dir=folder.parent))
    try:
        libc = _libc()
        if libc.mount(b"tmpfs", os.fsencode(probe), b"tmpfs", 0, b"size=64k") != 0:
            return False
        libc.umount2(os.fsencode(probe), MNT_DETACH)
        return True
    finally:
        shutil.rmtree(probe, ignore_errors=True)


@contextlib.contextmanager
def no_room(folder: Path, *, limit: int = 24 << 10):
    """Writes under ``folder`` (a folder that exists) find no room until the block ends (see the module); yields
    "ENOSPC" or "EFBIG". ``limit``: the file size limit of the second way (under 32 KiB: a WAL store's ``-shm`` file,
    which SQLite grows by 32 KiB, cannot grow)."""
    folder = Path(folder)
    way = _tmpfs(folder) if _can_mount(folder) else _file_size_limit(limit)
    with way as which:
        yield which
