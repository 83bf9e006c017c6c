"""Start a real ``prefect server start`` on 127.0.0.1 for tests, the way users start it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import urllib.request
from pathlib import Path

from agentos_mem.deployments.serve import wait_healthy
from tests.kit.loopback import free_port  # noqa: F401 - re-exported for the serve test

PROJECT = Path(__file__).resolve().parents[2]


def base_env(prefect_home: Path) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PREFECT_")}
    env.update(DO_NOT_TRACK="1", PREFECT_SERVER_ANALYTICS_ENABLED="false", PREFECT_HOME=str(prefect_home),
               PREFECT_SERVER_SERVICES_SCHEDULER_LOOP_SECONDS="5", PREFECT_LOGGING_TO_API_WHEN_MISSING_FLOW="ignore")
    return env


def api(url: str, path: str, body: dict | None = None):
    req = urllib.request.Request(url + path, data=json.dumps(body or {}).encode(), headers={"Content-Type": "application/json"}, method="POST")
    with urllib.request.urlopen(req, timeout=10) as r:
        return json.loads(r.read())


def get(url: str, path: str):
    with urllib.request.urlopen(url + path, timeout=10) as r:
        return json.loads(r.read())


def flow_runs(url: str) -> list[dict]:
    return api(url, "/flow_runs/filter", {"limit": 200})


class PrefectServer:
    """``env``: more settings for the server and its clients (PREFECT_API_DATABASE_CONNECTION_URL: PostgreSQL)."""

    def __init__(self, prefect_home: Path, **env):
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}/api"
        self.env = {**base_env(prefect_home), **env}
        self.log = open(prefect_home.parent / "prefect-server.log", "wb")
        self.proc = subprocess.Popen([sys.executable, "-m", "prefect", "server", "start", "--host", "127.0.0.1", "--port", str(self.port),
                                      "--analytics-off"], env=self.env, stdout=self.log, stderr=subprocess.STDOUT, start_new_session=True)
        wait_healthy(self.url, self.proc)

    def client_env(self, **extra) -> dict:
        return {**self.env, "PREFECT_API_URL": self.url, **extra}

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
        self.log.close()
