"""L3: the raw archive. Immutable copies of each day's logs, read back by line range.

Layout: ``agent-local/memory/raw/<user>/<YYYY-MM-DD>/r<N>/<file name>`` plus ``index.json`` per day.
A log that changes after it was archived becomes revision N+1; earlier revisions stay as they were.
Archived files are made read-only. A reference (``raw_ref``) is ``<user>/<day>/r<N>/<name>``.
The archive keeps the log's bytes as they are (invalid UTF-8 included); ``read_lines`` numbers lines as the
digest does (``kernel.text.split_lines``: \n, \r\n, a lone \r) and shows a byte that is not UTF-8 as U+FFFD.
"""

from __future__ import annotations

import hashlib
import json
import os
import stat
from dataclasses import dataclass
from datetime import date
from pathlib import Path

from agentos_mem.kernel import clock
from agentos_mem.kernel.files import UnsafePath, atomic_write, guard
from agentos_mem.kernel.text import split_lines

NAME_MAX_BYTES = 255  # what Linux and macOS file systems allow in one path component


class ArchiveError(Exception):
    """A raw reference that does not resolve to an archived file."""


def safe_name(name: str) -> str:
    """A path component we are willing to create: no separators, no '..', no control characters, valid UTF-8, at
    most ``NAME_MAX_BYTES`` bytes (any name a log can have on Linux)."""
    try:
        size = len(name.encode("utf-8"))
    except UnicodeEncodeError:
        raise ArchiveError(f"unsafe name for the archive (not valid UTF-8): {name!r}") from None
    if not name or name in (".", "..") or "/" in name or "\\" in name or any(ord(c) < 32 or ord(c) == 127 for c in name) or size > NAME_MAX_BYTES:
        raise ArchiveError(f"unsafe name for the archive: {name!r}")
    return name


@dataclass(frozen=True)
class Archived:
    ref: str
    revision: int
    sha256: str
    new: bool  # False when these exact bytes were already archived


class RawArchive:
    def __init__(self, root: Path):
        self.root = Path(root)
        self.below = guard(self.root)  # raw/bob -> raw/alice, or a day folder linked outside: never read nor written

    def _day_dir(self, user: str, day: date) -> Path:
        return self.root / safe_name(user) / day.isoformat()

    def _index(self, day_dir: Path) -> dict:
        p = day_dir / "index.json"
        try:
            return json.loads(self.below.read_bytes(p)) if self.below.is_file(self.below.check(p)) else {}
        except UnsafePath as e:  # the user's or the day's folder is a link: nothing is archived there
            raise ArchiveError(str(e)) from None

    def archive(self, user: str, day: date, name: str, data: bytes) -> Archived:
        day_dir = self._day_dir(user, day)
        safe_name(name)
        sha = hashlib.sha256(data).hexdigest()
        index = self._index(day_dir)
        revisions = index.get(name, [])
        for rev in revisions:
            if rev["sha256"] == sha:
                return Archived(rev["ref"], rev["revision"], sha, new=False)
        n = max((r["revision"] for r in revisions), default=0) + 1
        ref = f"{user}/{day.isoformat()}/r{n}/{name}"
        target = self.root / ref
        atomic_write(target, data, durable=True)
        target.chmod(0o444)
        revisions.append({"revision": n, "ref": ref, "sha256": sha, "bytes": len(data), "archived_at": clock.stamp()})
        index[name] = revisions
        atomic_write(day_dir / "index.json", json.dumps(index, ensure_ascii=False, indent=1, sort_keys=True), durable=True)
        return Archived(ref, n, sha, new=True)

    def path_of(self, ref: str) -> Path:
        parts = ref.split("/")
        if len(parts) != 4 or not parts[2].startswith("r"):
            raise ArchiveError(f"not a raw reference: {ref!r} (expected <user>/<day>/r<N>/<file>)")
        for p in parts:
            safe_name(p)
        path = self.root / ref
        try:
            self.below.check(path)  # no link on the way (a user's folder linked to another's) nor at the file
        except UnsafePath as e:
            raise ArchiveError(f"no archived file for {ref!r}: {e}") from None
        try:
            mode = os.lstat(path).st_mode
        except OSError:
            mode = 0
        if not stat.S_ISREG(mode):  # a link put into the archive is never followed
            raise ArchiveError(f"no archived file for {ref!r}")
        return path

    def read_lines(self, ref: str, start: int = 1, end: int | None = None) -> list[str]:
        """Lines ``start``..``end`` (1-based, inclusive) of an archived file."""
        if start < 1 or (end is not None and end < start):
            raise ArchiveError(f"bad line range {start}-{end}")
        try:
            data = self.below.read_bytes(self.path_of(ref))
        except UnsafePath as e:  # swapped for a link or a FIFO after the check
            raise ArchiveError(f"no archived file for {ref!r}: {e}") from None
        lines = split_lines(data.removeprefix(b"\xef\xbb\xbf"))
        return [line.decode("utf-8", errors="replace") for line in lines[start - 1 : end]]

    def revisions(self, user: str, day: date) -> dict[str, list[dict]]:
        return self._index(self._day_dir(user, day))

