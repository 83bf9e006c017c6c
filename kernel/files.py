"""One atomic write for every store: a temporary file in the target's folder, then one rename.

A reader sees the old file or the new one, never half of either; a write killed midway leaves at most a
``.tmp-*`` file (removed on failure when the process lives to see it) and the old file intact. ``durable``
adds an fsync before the rename, for what must survive a power cut (the raw archive, index manifests,
the generation pointer).
"""

from __future__ import annotations

import os
import stat
import tempfile
from pathlib import Path

_KINDS = ((stat.S_ISFIFO, "a named pipe (FIFO)"), (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
          (stat.S_ISSOCK, "a socket"), (stat.S_ISDIR, "a folder"))


class NotARegularFile(OSError):
    """What was asked for is a pipe, a device, a socket or a folder: never read. ``kind`` says which."""

    def __init__(self, path: Path, kind: str):
        super().__init__(f"{path} is {kind}, not a regular file: not read")
        self.kind = kind


def kind_of(mode: int) -> str:
    return next((name for test, name in _KINDS if test(mode)), "not a regular file")


def read_regular_file(path: Path, max_bytes: int | None = None) -> bytes:
    """The bytes of ``path`` if it is a regular file; a FIFO, device, socket or folder raises NotARegularFile
    without blocking (opened non-blocking, checked on the open descriptor, so a swap after a check cannot fool it).
    With ``max_bytes``, at most that many bytes plus one are read (the caller sees that the file is too large)."""
    mode = os.stat(path).st_mode  # a socket cannot even be opened: say what it is
    if not stat.S_ISREG(mode):
        raise NotARegularFile(path, kind_of(mode))
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            raise NotARegularFile(path, kind_of(mode))
        os.set_blocking(fd, True)
        chunks, left = [], (max_bytes + 1 if max_bytes is not None else None)
        while left is None or left > 0:
            chunk = os.read(fd, 1 << 20 if left is None else min(1 << 20, left))
            if not chunk:
                break
            chunks.append(chunk)
            if left is not None:
                left -= len(chunk)
        return b"".join(chunks)
    finally:
        os.close(fd)


def atomic_write(path: Path, data: str | bytes, *, durable: bool = False, prefix: str = ".tmp-") -> None:
    """Write ``data`` (text as UTF-8 with ``\\n`` line ends as given, or bytes as they are) to ``path`` atomically."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=prefix, suffix=path.suffix)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data.encode("utf-8") if isinstance(data, str) else data)
            if durable:
                f.flush()
                os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
