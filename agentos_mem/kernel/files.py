"""One atomic write for every store: a temporary file in the target's folder, then one rename.

A reader sees the old file or the new one, never half of either; a write killed midway leaves at most a
``.tmp-*`` file (removed on failure when the process lives to see it) and the old file intact. ``durable``
adds an fsync before the rename, for what must survive a power cut (the raw archive, index manifests,
the generation pointer).
"""

from __future__ import annotations

import contextlib
import errno
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


def read_fd(fd: int, max_bytes: int | None = None) -> bytes:
    """What is left to read on ``fd``; with ``max_bytes``, at most that many bytes plus one (so a caller sees that the
    file is too large without reading all of it)."""
    chunks, left = [], (max_bytes + 1 if max_bytes is not None else None)
    while left is None or left > 0:
        chunk = os.read(fd, 1 << 20 if left is None else min(1 << 20, left))
        if not chunk:
            break
        chunks.append(chunk)
        if left is not None:
            left -= len(chunk)
    return b"".join(chunks)


def read_regular_file(path: Path, max_bytes: int | None = None) -> bytes:
    """The bytes of ``path`` if it is a regular file; a FIFO, device, socket or folder raises NotARegularFile
    without blocking (opened non-blocking, checked on the open descriptor, so a swap after a check cannot fool it).
    With ``max_bytes``, at most that many bytes plus one are read (the caller sees that the file is too large)."""
    # A source's reader (knowledge.collect) confines links to the source folder itself; the stores use ``Below``.
    mode = os.stat(path).st_mode  # a socket cannot even be opened: say what it is
    if not stat.S_ISREG(mode):
        raise NotARegularFile(path, kind_of(mode))
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            raise NotARegularFile(path, kind_of(mode))
        os.set_blocking(fd, True)
        return read_fd(fd, max_bytes)
    finally:
        os.close(fd)


def probe_write(folder: Path, nbytes: int, prefix: str = ".agentos-probe-") -> None:
    """Write, sync and remove ``nbytes`` in ``folder``: no room (space, quota, size limit) raises, as only a write shows."""
    fd, path = tempfile.mkstemp(dir=folder, prefix=prefix)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(b"\0" * nbytes)
            f.flush()
            os.fsync(f.fileno())
    finally:
        with contextlib.suppress(OSError):
            os.unlink(path)


def atomic_write(path: Path, data: str | bytes, *, durable: bool = False, prefix: str = ".tmp-") -> None:
    """Write ``data`` (text as UTF-8 with ``\\n`` line ends as given, or bytes as they are) to ``path`` atomically."""
    path = Path(path)
    root = tree_root(path)
    if root is not None:  # inside the workspace: no link on the way, none (nor a FIFO) at the file's place
        below = Below(root)
        below.check(path, "file")
        below.mkdirs(path.parent)
        below.check(path, "file")
    else:
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


# --- Confinement below the workspace root ------------------------------------------------------------------------
#
# Every store reads, writes, deletes and lists its files through ``Below``: a path is taken only if it names
# something under the root lexically (no ``..`` component, nothing absolute elsewhere), no component below the root
# is a symbolic link (a user folder ``records/carol -> /some/dir`` or ``working/bob -> working/alice`` would send a
# delete, a rewrite or a digest elsewhere), and what is opened is a regular file (a FIFO would block, a device would
# be read). The roots are ``agent-sync/`` and ``agent-local/`` (``tree_root``): they, AGENTOS_HOME and everything
# above may be links (another disk, a synced or shared mount); below them nothing may.
# The checks are repeated where the kernel allows it on the open descriptor (O_NOFOLLOW, fstat), so a swap between
# the check and the open cannot turn a refused path into a read one.


class UnsafePath(OSError):
    """A path below the workspace that is not used: ``path`` (the component at fault) and ``reason`` say why."""

    def __init__(self, path: Path, reason: str):
        super().__init__(f"{path} {reason}: refused (only regular files and folders inside the workspace, never "
                         f"through a symbolic link, are read or written)")
        self.path, self.reason = Path(path), reason


def _link_reason(path: Path) -> str:
    try:
        return f"is a symbolic link (to {os.readlink(path)})"
    except OSError:
        return "is a symbolic link"


def _kind_reason(mode: int) -> str:
    return f"is {kind_of(mode)}, not a regular file"


_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)


class Below:
    """The one way into a tree: every path is checked against ``root`` before it is used (see above).

    ``check`` raises ``UnsafePath``; ``read_bytes``/``read_text``/``write``/``unlink``/``mkdirs`` use the path only after
    it passed; ``files`` lists a folder's regular files and returns the refused entries with their reasons, for a
    listing or a nightly to report and go on; ``tree`` walks a folder and ``folders`` lists the per-user folders the
    same way. A path that is not below the root at all is refused too (``inside`` says whether it is).
    """

    def __init__(self, root: Path):
        self.root = Path(os.path.abspath(root))

    def _parts(self, path: Path) -> list[str]:
        """The components of ``path`` below the root, as written: the root may be reached through ``..`` (a home set
        as ``../ws``), a component below it may not (``records/../../etc``), whatever it would resolve to."""
        raw = Path(os.path.join(os.getcwd(), path))  # a relative path is the process's, as open() takes it
        parts = raw.parts
        for i in range(1, len(parts) + 1):
            if Path(os.path.abspath(Path(*parts[:i]))) == self.root:
                below = list(parts[i:])
                if ".." in below:
                    raise UnsafePath(raw, "names '..'")
                return below
        raise UnsafePath(raw, f"is outside the workspace {self.root}")

    def inside(self, path: Path) -> bool:
        try:
            self._parts(path)
            return True
        except UnsafePath:
            return False

    def check(self, path: Path, kind: str = "file") -> Path:
        """``path`` (absolute) when every existing component below the root is a real folder and the last one, if it
        exists, is a regular file (``kind="file"``), a folder (``"dir"``) or either (``"any"``). Missing components are
        fine (a write creates them through ``mkdirs``, which checks again)."""
        parts = self._parts(path)
        cur = self.root
        for i, part in enumerate(parts):
            cur = cur / part
            try:
                st = os.lstat(cur)
            except FileNotFoundError:
                return self.root.joinpath(*parts)
            except NotADirectoryError:
                raise UnsafePath(cur.parent, "is not a folder") from None
            if stat.S_ISLNK(st.st_mode):
                raise UnsafePath(cur, _link_reason(cur))
            last = i == len(parts) - 1
            if not last and not stat.S_ISDIR(st.st_mode):
                raise UnsafePath(cur, "is not a folder")
            if last:
                if kind == "file" and not stat.S_ISREG(st.st_mode):
                    raise UnsafePath(cur, _kind_reason(st.st_mode))
                if kind == "dir" and not stat.S_ISDIR(st.st_mode):
                    raise UnsafePath(cur, "is not a folder")
                if kind == "any" and not (stat.S_ISDIR(st.st_mode) or stat.S_ISREG(st.st_mode)):
                    raise UnsafePath(cur, _kind_reason(st.st_mode))
        return cur

    def is_file(self, path: Path) -> bool:
        """A regular file reachable without a link (a refused path is simply not a file here; ``check`` says why)."""
        try:
            p = self.check(path, "file")
        except UnsafePath:
            return False
        return os.path.isfile(p) and not os.path.islink(p)

    def is_dir(self, path: Path) -> bool:
        try:
            p = self.check(path, "dir")
        except UnsafePath:
            return False
        return os.path.isdir(p) and not os.path.islink(p)

    def open_fd(self, path: Path) -> int:
        """A read-only descriptor on the regular file ``path``: never through a link, never blocking on a FIFO."""
        path = self.check(path, "file")
        try:
            fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | _NOFOLLOW)
        except OSError as e:
            if e.errno == errno.ELOOP:  # swapped for a link after the check
                raise UnsafePath(path, _link_reason(path)) from None
            raise
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            os.close(fd)
            raise UnsafePath(path, _kind_reason(mode))
        os.set_blocking(fd, True)
        return fd

    def read_bytes(self, path: Path, max_bytes: int | None = None) -> bytes:
        """The file's bytes (at most ``max_bytes`` plus one, so the caller sees it is too large)."""
        fd = self.open_fd(path)
        try:
            return read_fd(fd, max_bytes)
        finally:
            os.close(fd)

    def read_text(self, path: Path, errors: str = "strict") -> str:
        return self.read_bytes(path).decode("utf-8", errors=errors)

    def mkdirs(self, folder: Path) -> Path:
        """Create ``folder`` and its missing parents one at a time, each checked (a link put in place of a folder
        is refused, never created through)."""
        parts = self._parts(folder)
        os.makedirs(self.root, exist_ok=True)  # the root and above are the user's (a link there is fine)
        cur = self.root
        for part in parts:
            cur = cur / part
            try:
                os.mkdir(cur)
            except FileExistsError:
                pass
            st = os.lstat(cur)
            if stat.S_ISLNK(st.st_mode):
                raise UnsafePath(cur, _link_reason(cur))
            if not stat.S_ISDIR(st.st_mode):
                raise UnsafePath(cur, "is not a folder")
        return cur

    def write(self, path: Path, data: str | bytes, *, durable: bool = False, prefix: str = ".tmp-") -> Path:
        """``atomic_write`` after the folder and the file itself passed (a link at the file's place is refused, not
        replaced: it says the user put something there that is not the store's)."""
        path = self.check(path, "file")
        self.mkdirs(path.parent)
        self.check(path, "file")
        atomic_write(path, data, durable=durable, prefix=prefix)
        return path

    def append(self, path: Path, data: str | bytes) -> Path:
        """Append to a regular file (created when missing), opened without following a link, under an exclusive
        lock (two runs appending at once never interleave their lines)."""
        import fcntl

        path = self.check(path, "file")
        self.mkdirs(path.parent)
        try:
            fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NONBLOCK | _NOFOLLOW, 0o644)
        except OSError as e:
            if e.errno == errno.ELOOP:
                raise UnsafePath(path, _link_reason(path)) from None
            raise
        try:
            mode = os.fstat(fd).st_mode
            if not stat.S_ISREG(mode):
                raise UnsafePath(path, _kind_reason(mode))
            fcntl.flock(fd, fcntl.LOCK_EX)
            view = memoryview(data.encode("utf-8") if isinstance(data, str) else data)
            while view:
                view = view[os.write(fd, view):]
        finally:
            os.close(fd)
        return path

    def unlink(self, path: Path, missing_ok: bool = False) -> None:
        """Remove the regular file ``path`` (a link is refused: removing it would not remove what the user thinks)."""
        path = self.check(path, "file")
        try:
            os.unlink(path)
        except FileNotFoundError:
            if not missing_ok:
                raise

    def files(self, folder: Path, suffix: str | None = None, dirs: bool = False) -> tuple[list[Path], list[UnsafePath]]:
        """The regular files of ``folder`` (with ``suffix``, when given; folders too with ``dirs``), sorted by name,
        and what was refused there (a link, a FIFO, a device, a socket), each with its reason. A missing folder has
        none; a folder that is itself refused raises."""
        folder = self.check(folder, "dir")
        if not os.path.isdir(folder):
            return [], []
        ok, refused = [], []
        with os.scandir(folder) as it:
            for e in sorted(it, key=lambda e: e.name):
                if suffix is not None and not e.name.endswith(suffix):
                    continue
                p = folder / e.name
                if e.is_symlink():
                    refused.append(UnsafePath(p, _link_reason(p)))
                elif e.is_dir(follow_symlinks=False):
                    if dirs:
                        ok.append(p)
                elif e.is_file(follow_symlinks=False):
                    ok.append(p)
                else:
                    refused.append(UnsafePath(p, _kind_reason(os.lstat(p).st_mode)))
        return ok, refused

    def folders(self, folder: Path) -> tuple[list[str], list[UnsafePath]]:
        """The names of the real sub-folders of ``folder`` (one per user, in the stores that keep a folder each; hidden
        ones left out), and the entries that are links to folders, refused with their reason (``bob -> alice``)."""
        entries, refused = self.files(folder, dirs=True)
        names = [p.name for p in entries if os.path.isdir(p) and not p.name.startswith(".")]
        return names, [e for e in refused if not e.path.name.startswith(".") and os.path.isdir(e.path)]

    def tree(self, folder: Path, suffixes: tuple[str, ...] | None = None) -> tuple[list[Path], list[UnsafePath]]:
        """Every regular file in ``folder`` and the folders under it (never descending through a link), whose name ends
        (case-insensitively) with one of ``suffixes`` when given, sorted; and what was refused on the way (links, FIFOs,
        devices, sockets), each with its reason."""
        folder = self.check(folder, "dir")
        ok, refused = [], []
        if not os.path.isdir(folder):
            return ok, refused
        stack = [folder]
        while stack:
            here = stack.pop()
            files, bad = self.files(here, dirs=True)
            refused += [e for e in bad if suffixes is None or e.path.name.lower().endswith(suffixes) or not e.path.suffix]
            for p in files:
                if os.path.isdir(p) and not os.path.islink(p):
                    stack.append(p)
                elif suffixes is None or p.name.lower().endswith(suffixes):
                    ok.append(p)
        return sorted(ok), sorted(refused, key=lambda e: str(e.path))


def tree_root(path: Path) -> Path | None:
    """The tree of the workspace that holds ``path``: its nearest ancestor named ``agent-sync`` or ``agent-local``,
    or None for a path in no workspace (a source the user named by hand). These two folders are where a user mounts
    what is synced or kept elsewhere (another host's agent-sync on a shared disk, agent-local on a bigger one), so
    they, AGENTOS_HOME and everything above may be links; below them nothing may."""
    p = Path(os.path.join(os.getcwd(), path))  # as written: ``agent-sync/records/../../../x`` is still the tree's (and refused)
    found = next((parent for parent in (p, *p.parents) if parent.name in ("agent-sync", "agent-local")), None)
    return Path(os.path.abspath(found)) if found is not None else None


def guard(path: Path) -> Below:
    """The ``Below`` for ``path``: its workspace tree (``tree_root``), so a store only given its own folder still
    checks every component up to the tree's root; a path in no workspace (a store opened on a folder of its own)
    is checked from its parent down."""
    root = tree_root(path)
    return Below(root if root is not None else Path(os.path.abspath(path)).parent)


def open_lock(path: Path) -> int:
    """A descriptor on the lock file ``path`` for ``fcntl.flock`` (created when missing, folder included): never
    through a link, never a FIFO (a lock file is opened by every writer; one planted as a link would be created or
    held outside the workspace)."""
    path = Path(path)
    below = guard(path)
    below.check(path, "file")
    below.mkdirs(path.parent)
    try:
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_NONBLOCK | _NOFOLLOW, 0o644)
    except OSError as e:
        if e.errno == errno.ELOOP:
            raise UnsafePath(path, _link_reason(path)) from None
        raise
    mode = os.fstat(fd).st_mode
    if not stat.S_ISREG(mode):
        os.close(fd)
        raise UnsafePath(path, _kind_reason(mode))
    return fd
