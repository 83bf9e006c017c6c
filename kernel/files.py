"""One atomic write for every store: a temporary file in the target's folder, then one rename.

A reader sees the old file or the new one, never half of either; a write killed midway leaves at most a
``.tmp-*`` file (removed on failure when the process lives to see it) and the old file intact. ``durable``
adds an fsync before the rename, for what must survive a power cut (the raw archive, index manifests,
the generation pointer).
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path


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
