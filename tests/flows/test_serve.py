"""``agentos serve``: one command keeps a local Prefect server up and serves the deployments; a cron
schedule really fires a run that digests yesterday's logs."""

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
import urllib.request
from datetime import datetime, timedelta
from zoneinfo import ZoneInfo

from agentos_mem.demo import init_demo_workspace
from agentos_mem.deployments.serve import wait_healthy
from tests.kit.prefect_server import api, base_env, flow_runs, free_port


def test_serve_fires_a_cron_schedule_and_its_ui_talks_to_its_own_port(tmp_path):
    home = tmp_path / "home"
    # The run fires a minute or two from now: pin the workspace's clock (not Prefect's) so that "yesterday"
    # cannot move under the test at midnight in Asia/Shanghai.
    now = datetime.now(ZoneInfo("Asia/Shanghai")).replace(microsecond=0)
    yesterday = now.date() - timedelta(days=1)
    init_demo_workspace(home, end_day=yesterday)
    port = free_port()  # never the default 4200: the UI must follow --port
    env = base_env(tmp_path / "prefect-home")
    env.update(AGENTOS_HOME=str(home), AGENTOS_HOSTNAME="testhost", PREFECT_RUNNER_POLL_FREQUENCY="2", AGENTOS_NOW=now.isoformat(),
               AGENTOS_SCHEDULES=json.dumps({"daily-digest": "* * * * *"}))
    env.pop("PREFECT_UI_API_URL", None)
    log = open(tmp_path / "serve.log", "wb")
    proc = subprocess.Popen([sys.executable, "-m", "agentos_mem.cli.main", "serve", "--port", str(port)], cwd=tmp_path, env=env,
                            stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    url = f"http://127.0.0.1:{port}/api"
    try:
        wait_healthy(url, proc)
        server_file = home / "agent-local/runtime/prefect-server.json"
        deadline = time.monotonic() + 60  # serve records the server just after it answers: wait for the file
        while not server_file.exists() and time.monotonic() < deadline:
            time.sleep(0.2)
        assert json.loads(server_file.read_text())["api_url"] == url
        # What the browser's UI does: ask /ui-settings where the API is, then call it there.
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/ui-settings", timeout=10) as r:
            ui_api = json.loads(r.read())["api_url"]
        assert ui_api == url, f"the UI would call {ui_api}, not the server on port {port}"
        done = None
        deadline = time.monotonic() + 300
        while time.monotonic() < deadline and done is None:
            time.sleep(3)
            # the digest's own run: another deployment's default schedule may fire meanwhile (inbox-refine at 03:00
            # in Asia/Shanghai, 19:00 UTC) and finish first
            digest = {d["id"] for d in api(url, "/deployments/filter", {}) if d["name"] == "daily-digest"}
            done = next((r for r in flow_runs(url) if r["auto_scheduled"] and r["deployment_id"] in digest
                         and r["state"]["type"] == "COMPLETED"), None)
        assert done is not None, (tmp_path / "serve.log").read_text()[-4000:]
        deployments = api(ui_api, "/deployments/filter", {})  # the UI's Deployments page, through its URL
        assert {d["name"] for d in deployments} >= {"daily-digest", "backfill", "nightly", "index-rebuild"}
        con = sqlite3.connect(home / "agent-local/memory/facts.db")
        assert con.execute("select count(*) from facts where source_day=?", [yesterday.isoformat()]).fetchone()[0] > 0
        # the same process keeps the warm query service `agentos query` uses, and it answers as a fresh process does
        from agentos_mem.mcp_server.local_service import running

        assert running(home)
        client = "import sys; from agentos_mem.cli.main import main; c = main(sys.argv[1:]); print('IN' if 'agentos_mem.query.ask' in sys.modules else 'OUT', file=sys.stderr); sys.exit(c)"
        served, alone = (subprocess.run([sys.executable, "-c", client, "query", *extra, "服务器现在是什么配置？"], env=env, cwd=tmp_path,
                                        capture_output=True, text=True, timeout=300) for extra in ([], ["--in-process"]))
        assert "OUT" in served.stderr and "IN" in alone.stderr
        assert (served.returncode, served.stdout, served.stderr.splitlines()[:-1]) == (alone.returncode, alone.stdout, alone.stderr.splitlines()[:-1])
    finally:
        record = home / "agent-local/runtime/prefect-server.json"
        server_pid = json.loads(record.read_text()).get("pid") if record.exists() else None
        os.killpg(proc.pid, signal.SIGINT)
        try:
            proc.wait(timeout=120)  # Prefect's runner lets a run that has just fired finish first
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            if server_pid:  # the server runs in a session of its own: never leave it behind
                try:
                    os.killpg(server_pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
        log.close()
    assert not (home / "agent-local/runtime/prefect-server.json").exists(), (tmp_path / "serve.log").read_text()[-4000:]
