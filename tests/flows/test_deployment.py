"""The scaled setup end to end: a real Prefect server, deployments from deployments/prefect.yaml, a
process worker, and a triggered digest run that completes with facts written."""

import sqlite3
import subprocess
import sys

import pytest

from tests.kit.prefect_server import PROJECT, PrefectServer, flow_runs

PREFECT = [sys.executable, "-m", "prefect"]


@pytest.fixture
def server(tmp_path):
    srv = PrefectServer(tmp_path / "prefect-home")
    yield srv
    srv.stop()


def run(cmd, env, timeout=300):
    p = subprocess.run(cmd, cwd=PROJECT, env=env, capture_output=True, text=True, timeout=timeout)
    assert p.returncode == 0, f"{cmd} failed:\n{p.stdout[-3000:]}\n{p.stderr[-3000:]}"
    return p.stdout


def test_deploy_from_prefect_yaml_and_run_on_a_process_worker(server, demo_home):
    env = server.client_env(AGENTOS_HOME=str(demo_home), AGENTOS_HOSTNAME="testhost")
    run(PREFECT + ["work-pool", "create", "agentos-local", "--type", "process"], env)
    run(PREFECT + ["work-pool", "set-concurrency-limit", "agentos-local", "1"], env)
    out = run(PREFECT + ["--no-prompt", "deploy", "--all", "--prefect-file", "deployments/prefect.yaml"], env)
    for name in ("daily-digest/daily-digest", "backfill/backfill", "nightly/nightly", "index-rebuild/index-rebuild",
                 "collect-to-inbox/collect-to-inbox", "inbox-refine/inbox-refine", "review/review"):
        assert name in out
    inspect = run(PREFECT + ["deployment", "inspect", "daily-digest/daily-digest"], env)
    assert "0 2 * * *" in inspect and "Asia/Shanghai" in inspect
    run(PREFECT + ["deployment", "run", "daily-digest/daily-digest", "--param", "day=2026-11-24"], env)
    run(PREFECT + ["worker", "start", "--pool", "agentos-local", "--run-once"], env, timeout=400)
    (fr,) = [r for r in flow_runs(server.url) if r["state"]["type"] != "SCHEDULED"]
    assert fr["state"]["type"] == "COMPLETED", fr["state"]
    con = sqlite3.connect(demo_home / "agent-local/memory/facts.db")
    assert con.execute("select count(*) from facts where source_day='2026-11-24'").fetchone()[0] > 0


def test_every_deployed_flow_has_typed_described_parameters():
    from prefect.flows import load_flow_from_entrypoint
    from prefect.utilities.callables import parameter_schema

    from agentos_mem.deployments.serve import load_deployment_specs

    specs = load_deployment_specs()
    assert {s["name"] for s in specs} == {"daily-digest", "backfill", "nightly", "index-rebuild", "collect-to-inbox", "inbox-refine", "review"}
    for spec in specs:
        flow = load_flow_from_entrypoint(spec["entrypoint"])  # a module path: loads from a clone and a wheel alike
        props = parameter_schema(flow.fn).model_dump()["properties"]
        assert props, spec["name"]
        for name, prop in props.items():
            assert prop.get("description"), f"{spec['name']}.{name} has no description"
            assert prop.get("type") or prop.get("anyOf"), f"{spec['name']}.{name} has no type"
