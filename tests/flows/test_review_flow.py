"""The ``review`` flow as a person uses it from the Prefect UI: it pauses for a form, the decision resumes it.

Run against the session's real Prefect server; the test plays the UI's part with the same API call the
UI makes on "Resume" (``resume_flow_run`` with the form's ``run_input``).
"""

from __future__ import annotations

import asyncio
import contextvars
import threading
import time

import pytest

from tests.kit.knowledge import item, kb_settings, refine_all

pytestmark = pytest.mark.usefixtures("prefect_harness")


def _paused_run(timeout: float = 120):
    from prefect.client.orchestration import get_client
    from prefect.client.schemas.filters import FlowRunFilter, FlowRunFilterState, FlowRunFilterStateType
    from prefect.client.schemas.objects import StateType

    async def find():
        async with get_client() as c:
            runs = await c.read_flow_runs(flow_run_filter=FlowRunFilter(state=FlowRunFilterState(type=FlowRunFilterStateType(any_=[StateType.PAUSED]))))
            return runs[0] if runs else None

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        run = asyncio.run(find())
        if run is not None:
            return run
        time.sleep(1)
    raise AssertionError("the review run never paused for input")


def in_a_thread(run) -> threading.Thread:
    """``run`` on a thread of its own that holds this thread's context (a new thread starts with an empty one): the flow
    it runs reports to the session's Prefect server, as the test's own calls do."""
    return threading.Thread(target=contextvars.copy_context().run, args=(run,), daemon=True)


def _resume(run_id, run_input: dict) -> None:
    from prefect.client.orchestration import get_client

    async def go():
        async with get_client() as c:
            return await c.resume_flow_run(run_id, run_input=run_input)

    result = asyncio.run(go())
    assert result.status.value == "ACCEPT", result  # the server validated the form against ReviewDecision


def test_review_flow_waits_for_the_form_and_applies_it(ws, kit_cache):
    from agentos_mem.flows.review import review
    from agentos_mem.knowledge.decisions import show, visible

    item(ws, "knowledge/clipping", "a.md", "# 接口限流方案\n\n令牌桶算法适合突发流量。\n", title="接口限流方案", source="https://martinfowler.com/rate")
    item(ws, "knowledge/clipping", "b.md", "# 旧的日志规范\n\n日志统一写到本地文件。\n", title="旧的日志规范", source="https://medium.com/logs")
    item(ws, "personal", "c.md", "# Alice 的周报模板\n\n先写结论，再写风险。\n", title="Alice 的周报模板", source_type="personal",
          scope="personal", owner="alice")
    ids = {d["title"]: d["doc_id"] for d in refine_all(kit_cache)["refined"]}

    out: dict = {}
    runner = in_a_thread(lambda: out.update(result=review(poll_seconds=1, timeout_minutes=5)))
    runner.start()
    paused = _paused_run()
    # the UI's form: defaults filled in (the reviewer), the description lists what waits
    from prefect.input.run_input import keyset_from_paused_state

    assert keyset_from_paused_state(paused.state)["response"]
    _resume(paused.id, {"reviewer": "default", "approve": [ids["接口限流方案"], ids["Alice 的周报模板"], "no-such-doc"],
                        "reject": [ids["旧的日志规范"]], "note": "weekly review"})
    runner.join(timeout=120)
    assert not runner.is_alive(), "the review run did not finish after the decision"
    decision = out["result"]["decision"]
    assert decision["approved"] == [ids["接口限流方案"]] and decision["rejected"] == [ids["旧的日志规范"]]
    refused = "\n".join(decision["refused"])
    # another user's personal document reads as unknown, like a made-up id: both reported, the rest applied
    assert f"no knowledge document with id {ids['Alice 的周报模板']!r}" in refused and "no-such-doc" in refused
    settings = kb_settings()
    assert show(settings, ids["接口限流方案"])["decision_note"] == "weekly review"
    assert [d["title"] for d in visible(settings, "default")] == ["接口限流方案"]
    assert show(settings, ids["Alice 的周报模板"])["status"] == "pending"


def test_an_invalid_form_is_refused_by_the_server(ws, kit_cache):
    from agentos_mem.flows.review import review

    item(ws, "knowledge/clipping", "a.md", "# 缓存穿透\n\n用布隆过滤器挡住不存在的键。\n", title="缓存穿透", source="https://redis.io/x")
    refine_all(kit_cache)
    out: dict = {}
    runner = in_a_thread(lambda: out.update(result=review(poll_seconds=1, timeout_minutes=5)))
    runner.start()
    paused = _paused_run()
    from prefect.client.orchestration import get_client

    async def bad():
        async with get_client() as c:
            return await c.resume_flow_run(paused.id, run_input={"approve": "not-a-list", "accept_conflicts": ["x"]})

    assert asyncio.run(bad()).status.value == "REJECT"  # the run stays paused
    _resume(paused.id, {"reviewer": "default", "reject": []})
    runner.join(timeout=120)
    assert out["result"]["decision"]["approved"] == [] and out["result"]["pending"] == 1


def test_nothing_to_review_finishes_at_once(ws):
    from agentos_mem.flows.review import review

    assert review(poll_seconds=1) == {"pending": 0, "conflicts": 0, "decision": None}
