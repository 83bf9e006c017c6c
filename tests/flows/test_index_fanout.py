"""The index rebuild's embedding fan-out: batches mapped over ``embed-batch`` tasks, run by the task runner the
settings choose (threads, or Dask worker processes through prefect-dask), with the same index either way."""

from __future__ import annotations

import asyncio
import shutil
import sqlite3

import pytest

from tests.conftest import DEMO_END

pytestmark = pytest.mark.usefixtures("prefect_harness")


def _digest_demo(settings) -> None:
    from agentos_mem.digest.stages import pending_days, run_day

    folder = settings.working_dir()
    for day in pending_days(settings, settings.user, folder, DEMO_END):
        run_day(settings, settings.user, day, folder)


def _vectors(home) -> dict[str, bytes]:
    con = sqlite3.connect(home / "agent-local/vector_db/cache.db")
    out = dict(con.execute("select text_hash, vec from vectors").fetchall())
    con.close()
    return out


def _embed_batch_runs(flow_run_name: str) -> list:
    from prefect.client.orchestration import get_client
    from prefect.client.schemas.filters import FlowRunFilter, FlowRunFilterName, TaskRunFilter, TaskRunFilterName

    async def read():
        async with get_client() as c:
            return await c.read_task_runs(flow_run_filter=FlowRunFilter(name=FlowRunFilterName(any_=[flow_run_name])),
                                          task_run_filter=TaskRunFilter(name=TaskRunFilterName(like_="embed-batch")))

    return asyncio.run(read())


def test_embedding_batches_run_on_dask_worker_processes_and_build_the_same_index(demo_home, tmp_path, monkeypatch):
    from agentos_mem.flows.rebuild import index_rebuild
    from agentos_mem.kernel.settings import load_settings

    _digest_demo(load_settings())
    threads_home = tmp_path / "threads"
    shutil.copytree(demo_home, threads_home)

    monkeypatch.setenv("AGENTOS_INDEX_TASK_RUNNER", "dask")
    monkeypatch.setenv("AGENTOS_INDEX_WORKERS", "2")
    state = index_rebuild(return_state=True)
    r = state.result()
    assert r["status"] == "rebuilt" and r["embedded"] == r["units"] > 0
    from prefect.client.orchestration import get_client

    async def name_of(flow_run_id):
        async with get_client() as c:
            return (await c.read_flow_run(flow_run_id)).name

    runs = _embed_batch_runs(asyncio.run(name_of(state.state_details.flow_run_id)))
    assert len(runs) == 2 and all(t.state.is_completed() for t in runs)  # one batch per worker, each a task run

    monkeypatch.setenv("AGENTOS_HOME", str(threads_home))
    monkeypatch.setenv("AGENTOS_INDEX_TASK_RUNNER", "threads")
    t = index_rebuild()
    assert t["embedded"] == r["embedded"]
    assert _vectors(threads_home) == _vectors(demo_home)  # the same vectors, whichever runner computed them

    from agentos_mem.query.ask import ask

    for home in (demo_home, threads_home):
        a = ask("服务器现在是什么配置？", settings=load_settings(home=home))
        assert a.status == "ok" and "8C16G" in a.items[0].text
