"""Past one machine, for real: PostgreSQL behind ``prefect server start``, the nightly deployment from prefect.yaml,
two process workers standing in for two hosts (each its own folder, Prefect home and host name; one workspace, as
on a shared mount), and three users' nightly runs fired at once, each user twice (the scheduled run and a manual one).

What a person relies on: every run completes; a user's digest never overlaps another run of the same user (the
second finds the first one's days done); no two days are written at once, whoever's, and no index snapshot is read
while a day is written, on either host; the facts are exactly those of a one-process run over the same logs; both
workers ran nightly runs; the limits that did it are there to see (``prefect gcl ls``); the server's state is in
PostgreSQL. The workers share the workspace's file locks here (one folder), but those guard one day's stages, not
the choice of days: that a second run finds nothing left is the user's Prefect limit alone.
"""

import os
import signal
import sqlite3
import subprocess
import sys
import time
from datetime import datetime
from pathlib import Path
from urllib.parse import quote

import pytest

from tests.conftest import DEMO_END
from tests.kit.postgres import BIN, Postgres
from tests.kit.prefect_server import PROJECT, PrefectServer, api, get

PREFECT = [sys.executable, "-m", "prefect"]
USERS = ["alice", "bob", "张三"]
REBUILD = {"collect-index-units", "plan-index-rebuild", "tokenize-units", "find-units-to-embed", "embed-batch",
           "write-index-generation", "publish-index-generation"}


@pytest.fixture
def postgres():
    pg = Postgres()
    yield pg
    pg.stop()


@pytest.fixture
def server(tmp_path, postgres):
    srv = PrefectServer(tmp_path / "prefect-home", PREFECT_API_DATABASE_CONNECTION_URL=postgres.url)
    yield srv
    srv.stop()


def workspace(root: Path) -> Path:
    """One workspace with three users' demo logs."""
    from agentos_mem.demo import init_demo_workspace

    home = root / "home"
    for user in USERS:
        init_demo_workspace(home, user=user, end_day=DEMO_END)
    return home


def one_process_facts(root: Path) -> tuple[dict[str, list[tuple]], int]:
    """The same logs digested by plain function calls in this process, one user after the other; and how many
    days each user has."""
    from agentos_mem.digest.stages import pending_days, run_day
    from agentos_mem.kernel.settings import load_settings
    from agentos_mem.kernel.workspace import Workspace

    home = workspace(root)
    settings = load_settings(home=home, hostname="one-host", llm_base_url=None)
    for user in USERS:
        folder = Workspace(home).working_dir(user)
        days = pending_days(settings, user, folder, DEMO_END)
        for day in days:
            run_day(settings, user, day, folder)
    return facts_by_user(home), len(days)


def facts_by_user(home: Path) -> dict[str, list[tuple]]:
    """Every fact row of each user, ids (which depend on how users' writes interleave) replaced by what they point at."""
    from agentos_mem.kernel.workspace import Workspace

    con = sqlite3.connect(Workspace(home).facts_db)
    con.row_factory = sqlite3.Row
    rows = [dict(r) for r in con.execute("select * from facts")]
    con.close()
    what = {r["id"]: (r["subject"], r["predicate"], r["object"], r["valid_from"]) for r in rows}
    out: dict[str, list[tuple]] = {}
    for r in rows:
        r["previous_version"], r["superseded_by"] = what.get(r["previous_version"]), what.get(r["superseded_by"])
        del r["id"]
        out.setdefault(r["user_id"], []).append(tuple(sorted(r.items(), key=lambda kv: kv[0])))
    return {u: sorted(v, key=repr) for u, v in out.items()}


def run(cmd, env, timeout=300):
    p = subprocess.run(cmd, cwd=PROJECT, env=env, capture_output=True, text=True, timeout=timeout)
    assert p.returncode == 0, f"{cmd} failed:\n{p.stdout[-3000:]}\n{p.stderr[-3000:]}"
    return p.stdout


def stop_group(proc: subprocess.Popen, sig: int) -> None:
    try:
        os.killpg(proc.pid, sig)
    except ProcessLookupError:  # already gone
        pass


def every_task_run(url: str, flow_runs: list[str]) -> list[dict]:
    """Every task run of ``flow_runs``, page by page (the server answers at most 200 at a time; each day is a
    ``digest-day`` run with its stages' task runs inside it)."""
    out: list[dict] = []
    while True:
        page = api(url, "/task_runs/filter", {"flow_runs": {"id": {"any_": flow_runs}}, "limit": 200, "offset": len(out),
                                               "sort": "ID_DESC"})
        out += page
        if len(page) < 200:
            return out


def when(stamp: str) -> float:
    return datetime.fromisoformat(stamp.replace("Z", "+00:00")).timestamp()


def span(task_runs: list[dict]) -> tuple[float, float] | None:
    return (min(when(t["start_time"]) for t in task_runs), max(when(t["end_time"]) for t in task_runs)) if task_runs else None


def overlap(a, b) -> bool:
    return a is not None and b is not None and a[0] < b[1] and b[0] < a[1]


def test_three_users_on_two_workers_against_postgres(tmp_path, server, postgres):
    home = workspace(tmp_path / "workers")
    expected, n_days = one_process_facts(tmp_path / "one-process")
    env = server.client_env()
    run(PREFECT + ["work-pool", "create", "agentos-local", "--type", "process"], env)
    run(PREFECT + ["--no-prompt", "deploy", "--prefect-file", "deployments/prefect.yaml", "--name", "nightly"], env)
    workers, logs = [], []
    try:
        for name in ("host-a", "host-b"):
            folder = tmp_path / name
            folder.mkdir()
            logs.append(folder / "worker.log")
            with open(logs[-1], "wb") as out:
                workers.append(subprocess.Popen(
                    PREFECT + ["worker", "start", "--pool", "agentos-local", "--name", name, "--limit", "2"], cwd=folder,
                    env=server.client_env(AGENTOS_HOME=str(home), AGENTOS_HOSTNAME=name, PREFECT_HOME=str(folder / "prefect"),
                                          PREFECT_WORKER_QUERY_SECONDS="2"),
                    stdout=out, stderr=subprocess.STDOUT, start_new_session=True))
        deadline = time.monotonic() + 120
        while len([w for w in api(server.url, "/work_pools/agentos-local/workers/filter") if w["status"] == "ONLINE"]) < 2:
            assert time.monotonic() < deadline and all(w.poll() is None for w in workers), "the two workers did not come online"
            time.sleep(1)

        deployment = get(server.url, "/deployments/name/nightly/nightly")["id"]
        # users in turn, twice: each worker takes the two oldest, so one user's two runs land on two hosts at once
        fired = [api(server.url, f"/deployments/{deployment}/create_flow_run", {"parameters": {"user": u}})["id"]
                 for _ in range(2) for u in USERS]
        deadline = time.monotonic() + 360
        while True:
            runs = {r["id"]: r for r in api(server.url, "/flow_runs/filter", {"flow_runs": {"id": {"any_": fired}}, "limit": 50})}
            if all(r["state"]["type"] in ("COMPLETED", "FAILED", "CRASHED", "CANCELLED") for r in runs.values()):
                break
            assert time.monotonic() < deadline, {r["parameters"]["user"]: r["state"]["type"] for r in runs.values()}
            time.sleep(2)
    finally:  # each worker with the flow-run processes it started (its own process group)
        for w in workers:
            stop_group(w, signal.SIGTERM)
        for w in workers:
            try:
                w.wait(timeout=30)
            except subprocess.TimeoutExpired:
                stop_group(w, signal.SIGKILL)

    assert [r["state"]["type"] for r in runs.values()] == ["COMPLETED"] * 6, [r["state"] for r in runs.values()]

    tasks = every_task_run(server.url, fired)
    days = {i: [t for t in tasks if t["flow_run_id"] == i and t["name"].startswith("digest-day")] for i in fired}
    snapshots = [span([t]) for t in tasks if t["name"].startswith("collect-index-units")]
    rebuilds = [span([t for t in tasks if t["flow_run_id"] == i and t["name"].rsplit("-", 1)[0] in REBUILD]) for i in fired]
    for user in USERS:
        first, second = [i for i in fired if runs[i]["parameters"]["user"] == user]
        # one run digested the user's days, the other waited for it and found nothing left
        assert sorted([len(days[first]), len(days[second])]) == [0, n_days], user
        assert not overlap(span(days[first]), span(days[second])), user
    every_day = [span([t]) for ts in days.values() for t in ts]
    assert len(every_day) == len(USERS) * n_days and len(snapshots) == 6
    assert not [(a, b) for i, a in enumerate(every_day) for b in every_day[i + 1:] if overlap(a, b)], "two days were written at once"
    assert not [(s, d) for s in snapshots for d in every_day if overlap(s, d)], "an index snapshot was read while a day was written"
    assert all(rebuilds) and not [(a, b) for i, a in enumerate(rebuilds) for b in rebuilds[i + 1:] if overlap(a, b)], "two rebuilds at once"

    assert facts_by_user(home) == expected
    for log in logs:  # each worker ran some of the runs (at most two at a time, and six were waiting)
        assert "submitted to infrastructure" in log.read_text(errors="replace"), log

    from agentos_mem.kernel.workspace import workspace_key

    key = workspace_key(home)
    limits = {lim["name"]: lim for lim in api(server.url, "/v2/concurrency_limits/filter", {"limit": 100})}
    names = {f"agentos-ws-{key}", f"agentos-index-{key}", f"agentos-user-{key}-alice", f"agentos-user-{key}-bob"}
    names |= {n for n in limits if n.startswith(f"agentos-user-{key}-u")}  # 张三: a hash, as limit names want
    assert len(names) == 5 and names <= set(limits), sorted(limits)
    assert {(limits[n]["limit"], limits[n]["active_slots"]) for n in names} == {(1, 0)}
    listed = run(PREFECT + ["gcl", "ls"], {**env, "COLUMNS": "300"})  # what a person sees: the table, names uncut
    assert all(n in listed for n in names), listed

    psql = subprocess.run([str(BIN / "psql"), "-h", "127.0.0.1", "-p", str(postgres.port), "-U", "postgres", "-At", "prefect", "-c",
                           "select count(*) from flow_run"], capture_output=True, text=True, timeout=30)
    assert psql.stdout.strip() == "6", psql.stderr  # the server's state lives in PostgreSQL


def test_limit_names_are_stable_short_and_shared_by_hosts_of_one_agent_sync(tmp_path):
    from agentos_mem.tasks.writers import user_limit, workspace_limit
    from agentos_mem.kernel.settings import load_settings

    a, b = tmp_path / "a" / "home", tmp_path / "b" / "home"
    (a / "agent-sync").mkdir(parents=True)
    b.mkdir(parents=True)
    (b / "agent-sync").symlink_to(a / "agent-sync")
    sa, sb = load_settings(home=a), load_settings(home=b)
    assert workspace_limit(sa) == workspace_limit(sb) == workspace_limit(load_settings(home=a))
    assert user_limit(sa, "bob") == user_limit(sb, "bob") != user_limit(sa, "alice")
    other = load_settings(home=tmp_path / "c" / "home")
    assert workspace_limit(other) != workspace_limit(sa)
    zh = user_limit(sa, "张三")
    assert zh.isascii() and zh != user_limit(sa, "李四") and len(zh) < 60
    assert quote(zh, safe="-") == zh  # goes into a URL path as it is
