"""``agentos serve``: the embedded default. One command keeps a local Prefect server (with its UI) on
127.0.0.1 and serves every deployment of ``prefect.yaml`` on its schedule, in the configured time zone.

Prefect's ephemeral mode refuses to schedule ("Cannot schedule flows on an ephemeral server"), so this
starts a real ``prefect server start`` whose state lives in the workspace runtime folder.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import yaml

from agentos_mem.kernel import prefect_env
from agentos_mem.kernel.settings import Settings
from agentos_mem.kernel.workspace import Workspace

PREFECT_YAML = Path(__file__).with_name("prefect.yaml")


def load_deployment_specs(path: Path = PREFECT_YAML) -> list[dict]:
    return yaml.safe_load(path.read_text(encoding="utf-8"))["deployments"]


def wait_healthy(api_url: str, proc: subprocess.Popen, timeout: float = 180.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"prefect server exited with code {proc.returncode}; see its log in the workspace runtime folder")
        try:
            with urllib.request.urlopen(api_url + "/health", timeout=2) as r:
                if r.status == 200:
                    return
        except OSError:
            pass
        time.sleep(0.5)
    raise RuntimeError(f"Prefect server at {api_url} did not become healthy in {timeout:.0f} s")


WILDCARD_HOSTS = ("0.0.0.0", "::", "")


def server_urls(host: str, port: int) -> tuple[str, str]:
    """(the API URL this machine's clients use, the API URL the UI in a browser calls).

    Prefect's UI asks ``/ui-settings`` where the API is; the server answers from its own settings
    (``PREFECT_UI_API_URL``, else its API host and port settings), not from ``--port``, so both are set
    for the server process. A wildcard bind is reached locally on 127.0.0.1 and from a browser elsewhere by
    this machine's name; behind a proxy, set ``PREFECT_UI_API_URL`` yourself (it is kept as given)."""
    local = "127.0.0.1" if host in WILDCARD_HOSTS else host
    public = socket.gethostname() if host in WILDCARD_HOSTS else host
    fmt = lambda h: f"[{h}]" if ":" in h else h  # noqa: E731 - IPv6 literals go in brackets
    return f"http://{fmt(local)}:{port}/api", os.environ.get("PREFECT_UI_API_URL") or f"http://{fmt(public)}:{port}/api"


def start_server(settings: Settings, port: int, host: str = "127.0.0.1") -> tuple[subprocess.Popen, str]:
    ws = Workspace(settings.home)
    api_url, ui_api_url = server_urls(host, port)
    log = open(ws.runtime / "prefect-server.log", "ab")
    env = {**os.environ, "PREFECT_API_URL": "",  # the server itself must not point at another server
           "PREFECT_SERVER_API_HOST": host, "PREFECT_SERVER_API_PORT": str(port), "PREFECT_UI_API_URL": ui_api_url}
    # Slot leases on disk (in PREFECT_HOME), not in the server's memory: a restart of `agentos serve` while a run holds
    # a workspace slot keeps the lease, which then expires on its own when its holder is gone (tasks.slots' lease),
    # instead of leaving the slot counted taken with no lease to expire it. A user's own choice is kept.
    env.setdefault("PREFECT_SERVER_CONCURRENCY_LEASE_STORAGE", "prefect.server.concurrency.lease_storage.filesystem")
    proc = subprocess.Popen([sys.executable, "-m", "prefect", "server", "start", "--host", host, "--port", str(port), "--analytics-off"],
                            stdout=log, stderr=subprocess.STDOUT, env=env, start_new_session=True)
    try:
        wait_healthy(api_url, proc)
    except RuntimeError:
        proc.terminate()
        raise
    prefect_env.server_file(settings.home).write_text(json.dumps({"api_url": api_url, "ui_api_url": ui_api_url, "pid": proc.pid}))
    return proc, api_url


def build_deployments(settings: Settings, specs: list[dict]):
    """``RunnerDeployment`` objects from the yaml specs, with this workspace's time zone and crons."""
    from prefect.flows import load_flow_from_entrypoint
    from prefect.schedules import Cron
    from prefect.types.entrypoint import EntrypointType

    out = []
    for spec in specs:
        flow = load_flow_from_entrypoint(spec["entrypoint"])
        schedules = []
        for s in spec.get("schedules") or []:
            cron = settings.schedules.get(spec["name"], s["cron"])
            schedules.append(Cron(cron, timezone=settings.timezone, active=s.get("active", True)))
        out.append(flow.to_deployment(name=spec["name"], description=spec.get("description"), tags=spec.get("tags"),
                                      parameters=spec.get("parameters") or {}, schedules=schedules or None,
                                      concurrency_limit=spec.get("concurrency_limit"),
                                      # a run imports agentos_mem.flows.X as installed: from a clone or a wheel alike
                                      entrypoint_type=EntrypointType.MODULE_PATH))
    return out


def serve(settings: Settings, *, port: int | None = None, host: str | None = None) -> int:
    prefect_env.prepare(settings.home)
    os.environ.pop("PREFECT_API_URL", None)
    port = port or settings.prefect_port
    host = host or settings.prefect_host
    print(f"[agentos] starting Prefect server on {host}:{port} (state in {os.environ['PREFECT_HOME']})", flush=True)
    proc, api_url = start_server(settings, port, host)
    os.environ["PREFECT_API_URL"] = api_url
    # Scheduled runs are subprocesses: they must see the same workspace and settings.
    os.environ["AGENTOS_HOME"] = str(Path(settings.home).resolve())
    os.environ["AGENTOS_USER"] = settings.user
    try:
        from prefect import serve as prefect_serve

        deployments = build_deployments(settings, load_deployment_specs())
        print(f"[agentos] UI: {api_url.removesuffix('/api')}  serving: " + ", ".join(d.name for d in deployments)
              + f" (time zone {settings.timezone})", flush=True)
        def stop(signum, frame):  # the record goes first: from now on stage commands do not send runs here
            prefect_env.server_file(settings.home).unlink(missing_ok=True)
            raise KeyboardInterrupt

        signal.signal(signal.SIGINT, stop)
        # The server stops with this command and every start re-applies the schedules: pausing them on the way
        # out would only be API calls that slow the shutdown down.
        prefect_serve(*deployments, print_starting_message=False, pause_on_shutdown=False)
    except KeyboardInterrupt:
        pass
    finally:
        # Stage commands stop sending runs to this server first, then it stops.
        prefect_env.server_file(settings.home).unlink(missing_ok=True)
        try:
            os.killpg(proc.pid, signal.SIGTERM)
            proc.wait(timeout=20)
        except (ProcessLookupError, subprocess.TimeoutExpired):
            proc.kill()
    return 0
