"""Environment for Prefect, set before ``import prefect``: state in the workspace, no telemetry.

Stage commands use the Prefect server ``agentos serve`` runs (recorded in the workspace runtime
folder) or one the user configured with ``PREFECT_API_URL``; otherwise Prefect's ephemeral server.
"""

from __future__ import annotations

import errno
import json
import os
import urllib.request
from pathlib import Path

from agentos_mem.kernel.files import probe_write
from agentos_mem.kernel.workspace import Workspace

DEFAULTS = {
    "DO_NOT_TRACK": "1",
    "PREFECT_SERVER_ANALYTICS_ENABLED": "false",
    "PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS": "120",
    "PREFECT_LOGGING_TO_API_WHEN_MISSING_FLOW": "ignore",
}


def server_file(home: Path) -> Path:
    return Workspace(home).runtime / "prefect-server.json"


def running_server(home: Path) -> str | None:
    """API URL of the server ``agentos serve`` started for this workspace, if it answers."""
    f = server_file(home)
    if not f.exists():
        return None
    try:
        url = json.loads(f.read_text())["api_url"]
        with urllib.request.urlopen(url + "/health", timeout=2) as r:
            return url if r.status == 200 else None
    except (OSError, ValueError, KeyError):
        return None


def prepare(home: Path, *, quiet: bool = False) -> str | None:
    """Set Prefect's environment for this workspace; returns the API URL in use (None: ephemeral)."""
    for k, v in DEFAULTS.items():
        os.environ.setdefault(k, v)
    os.environ.setdefault("PREFECT_HOME", str(Workspace(home).runtime / "prefect"))
    if quiet:
        os.environ.setdefault("PREFECT_LOGGING_LEVEL", "WARNING")
    # Progress is the flow's own log lines ("backfill 3/8 ..."); one line per task run is noise here.
    os.environ.setdefault("PREFECT_LOGGING_LOGGERS_PREFECT_TASK_RUNS_LEVEL", "WARNING")
    if not os.environ.get("PREFECT_API_URL"):
        url = running_server(home)
        if url:
            os.environ["PREFECT_API_URL"] = url
    if not os.environ.get("PREFECT_API_URL"):
        stopped = stop_orphaned_servers(Path(os.environ["PREFECT_HOME"]))
        if stopped:
            import sys

            print(f"[agentos] stopped the Prefect server(s) a killed run left behind (pid {', '.join(map(str, stopped))})",
                  file=sys.stderr)
    return os.environ.get("PREFECT_API_URL")


def _proc(pid: int, name: str) -> bytes:
    try:
        return Path(f"/proc/{pid}/{name}").read_bytes()
    except OSError:
        return b""


def orphaned_servers(prefect_home: Path) -> list[int]:
    """The pids of Prefect ephemeral servers on ``prefect_home``'s database whose run is gone: a run killed with
    ``kill -9`` (an OOM kill, a power cut) never stops the server it started, which then lives on, reparented to
    init (or a reaper that is no Python process), holding a connection to the database. A live run's server is
    the child of that run's Python process. Linux only (/proc); elsewhere none are found."""
    want = b"PREFECT_HOME=" + os.fsencode(str(prefect_home))
    out = []
    for entry in Path("/proc").iterdir() if Path("/proc").is_dir() else ():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        pid = int(entry.name)
        if b"prefect.server.api.server:create_app" not in _proc(pid, "cmdline"):
            continue
        env = _proc(pid, "environ").split(b"\0")
        if want not in env or b"PREFECT__SERVER_EPHEMERAL=1" not in env:
            continue
        stat = _proc(pid, "stat")
        try:
            ppid = int(stat.rsplit(b")", 1)[1].split()[1])
        except (IndexError, ValueError):
            continue
        if ppid == 1 or b"python" not in _proc(ppid, "cmdline").split(b"\0")[0]:
            out.append(pid)
    return out


def stop_orphaned_servers(prefect_home: Path) -> list[int]:
    """Stop (SIGTERM) the orphaned ephemeral servers of this workspace; returns their pids. A server that will not
    stop is left: the next run starts its own server on another port either way."""
    import signal

    stopped = []
    for pid in orphaned_servers(prefect_home):
        try:
            os.kill(pid, signal.SIGTERM)
            stopped.append(pid)
        except OSError:
            pass
    return stopped


def let_ephemeral_server_drain(max_seconds: float = 20.0) -> None:
    """Wait until Prefect's ephemeral server has recorded the run's task-run events (its count stops
    growing), at most ``max_seconds``. Stopped mid-flush, as the process exits, it prints harmless
    "Error flushing events" tracebacks that read like a failure of the command."""
    if os.environ.get("PREFECT_API_URL"):
        return
    import time

    from prefect.client.orchestration import get_client

    deadline, last = time.monotonic() + max_seconds, -1
    try:
        with get_client(sync_client=True) as client:
            while time.monotonic() < deadline:
                count = client._client.post("/task_runs/count", json={}).json()
                if count == last:
                    return
                last = count
                time.sleep(0.7)
    except Exception:  # noqa: BLE001 - best effort only; the run itself has already finished
        return


# What a full disk looks like from a write: no space (ENOSPC), a quota (EDQUOT), a file size limit (EFBIG).
_FULL = {"ENOSPC", "EDQUOT", "EFBIG"}
PROBE_BYTES = 64 << 10  # a write that finds no room says why (no space, a quota, a file size limit)
NEEDED_BYTES = 8 << 20  # about what Prefect's database and its write-ahead log take when its server starts


def space_problem(folders: list[Path]) -> str | None:
    """Why the workspace's disk cannot take a run, naming the folder, or None. Each folder (one per file system)
    gets a probe file of ``PROBE_BYTES``, written and synced, then removed: the errno of that write is the reason;
    a file system with less than ``NEEDED_BYTES`` free is full for a run too. Prefect's ephemeral server dies at
    start on a full disk and Prefect only reports "Timed out while attempting to connect to ephemeral Prefect API
    server" after two minutes; this says what is wrong, before it starts."""
    seen = set()
    for folder in folders:
        try:
            folder.mkdir(parents=True, exist_ok=True)
            dev = folder.stat().st_dev
        except OSError as e:
            if errno.errorcode.get(e.errno) in _FULL:
                return _full_message(folder, e)
            continue
        if dev in seen:
            continue
        seen.add(dev)
        try:
            probe_write(folder, PROBE_BYTES, ".agentos-space-")
        except OSError as e:
            if errno.errorcode.get(e.errno) in _FULL:
                return _full_message(folder, e)
            continue
        try:
            st = os.statvfs(folder)
        except OSError:
            continue
        free = st.f_bavail * st.f_frsize
        if free < NEEDED_BYTES:
            return (f"no space left on device: {folder} (only {free // 1024} KiB free, a run needs about "
                    f"{NEEDED_BYTES >> 20} MiB); free some space there and run the command again; what earlier runs "
                    "wrote is kept")
    return None


def _full_message(folder: Path, e: OSError) -> str:
    what = "no space left on device" if e.errno != errno.EFBIG else "file size limit reached (no room for a file)"
    return (f"{what}: {folder} ({e.strerror}); free some space there (or raise the limit) and run the command again; "
            "what earlier runs wrote is kept")


def stop_own_servers() -> None:
    """Stop the ephemeral Prefect server(s) this process started (Prefect stops them only at exit, after draining
    its queues to them). Looked up in ``sys.modules``: a process that never started one imports nothing."""
    import sys

    server = sys.modules.get("prefect.server.api.server")
    if server is None:
        return
    for inst in list(getattr(server.SubprocessASGIServer, "_instances", {}).values()):
        try:
            inst.stop()
        except Exception:  # noqa: BLE001 - stopping is best effort; the process ends right after
            pass
