"""The Prefect flows, run for real on a temporary Prefect server: stages, artifacts, idempotency, retries."""

import asyncio
import json
from datetime import date

import pytest

from tests.kit.chat_server import ChatServer
from tests.conftest import DEMO_END, snapshot

pytestmark = pytest.mark.usefixtures("prefect_harness")


def latest_artifacts():
    from prefect.client.orchestration import get_client

    async def read():
        async with get_client() as c:
            return await c.read_latest_artifacts()

    return asyncio.run(read())


def test_daily_digest_writes_all_layers_and_publishes_an_artifact(demo_home):
    from agentos_mem.flows.daily import daily_digest

    day = date(2026, 11, 22)
    r = daily_digest(day=day)
    assert r["turns"] > 0 and r["facts_added"] > 0 and r["cards"] > 0 and r["quarantined"] == []
    assert (demo_home / "agent-local/memory/daily_summaries/default/2026-11-22.md").exists()
    assert any((demo_home / "agent-local/memory/cards/default").glob("testhost_20261122_*.md"))
    assert any((demo_home / "agent-local/memory/raw/default/2026-11-22").rglob("2026-11-22.md"))

    arts = [a for a in latest_artifacts() if a.key == "digest-default-2026-11-22"]
    assert arts and "facts added" in arts[0].data
    # the user memories the day produced, listed in the same artifact
    assert "## User memories" in arts[0].data and r["memories"]["created"]
    assert all(f"`{name}`" in arts[0].data for name in r["memories"]["created"])


def test_missing_day_is_a_clean_noop(demo_home):
    from agentos_mem.flows.daily import daily_digest

    r = daily_digest(day=date(2020, 1, 1))
    assert (r["files"], r["turns"], r["facts_added"], r["quarantined"]) == ([], 0, 0, [])


def test_backfill_then_rerun_leaves_stores_exactly_as_they_were(demo_home):
    from agentos_mem.flows.daily import backfill

    first = backfill(start=date(2026, 11, 1), end=DEMO_END)
    assert len(first["days"]) >= 8 and first["facts_superseded"] >= 2 and first["conflicts"] >= 1
    assert any("invalid JSON" in q for q in first["quarantined"])
    (art,) = [a for a in latest_artifacts() if a.key == "backfill-default-2026-11-22-to-2026-11-29"]
    assert "| 2026-11-25 |" in art.data and "invalid JSON" in art.data
    assert "## User memories" in art.data  # records created over the range
    before = snapshot(demo_home)
    again = backfill(start=date(2026, 11, 1), end=DEMO_END)
    assert again["facts_added"] == again["facts_superseded"] == again["conflicts"] == again["facts_reinforced"] == 0
    assert again["already_applied"] > 0
    assert snapshot(demo_home) == before


def test_nightly_catches_up_then_has_nothing_to_do(demo_home):
    from agentos_mem.flows.nightly import nightly

    inbox = demo_home / "agent-sync/03_knowledge/00_stream/inbox/memory"
    (inbox / "card.md").write_text("---\ntype: user\ndescription: 我是数据平台组的负责人\n---\n负责数据平台组。\n", encoding="utf-8")
    r = nightly()
    assert r["stages"] == ["journal", "digest", "collect", "refine", "memory-inbox", "index-rebuild"] and len(r["digest"]["days"]) >= 8
    # user memories: extracted inside the digest, and the inbox's memory card taken into the records
    assert any(d["memories"]["created"] for d in r["digest"]["per_day"])
    assert r["memory_inbox"]["cards"] == 1 and len(r["memory_inbox"]["created"]) == 1
    assert r["index"]["status"] == "rebuilt" and r["index"]["units"] > 20 and r["index"]["embedded"] == r["index"]["units"]
    from agentos_mem.index.stages import doctor
    from agentos_mem.kernel.settings import load_settings

    assert doctor(load_settings())["ok"]  # the chain leaves no drift for anyone to fix by hand
    again = nightly()
    assert again["digest"]["days"] == [] and again["index"]["status"] == "unchanged"


def test_index_rebuild_flow_is_incremental(demo_home):
    from agentos_mem.flows.rebuild import index_rebuild
    from agentos_mem.flows.nightly import nightly

    nightly()
    card = next((demo_home / "agent-local/memory/cards/default").glob("*.md"))
    card.write_text(card.read_text(encoding="utf-8").replace("summary: ", "summary: 已复核 "), encoding="utf-8")
    r = index_rebuild()
    assert r["status"] == "rebuilt" and r["changed"] == 1 and r["embedded"] == 1
    full = index_rebuild(full=True)
    assert full["full"] and full["embedded"] == 0  # same embedder: vectors come from the cache


def test_model_extraction_is_retried_then_used(demo_home, monkeypatch):
    from agentos_mem.flows.daily import daily_digest

    # every part gets this answer (the last reply repeats): it holds only for the first turn of the project's part, a
    # sentence the rules keep as a statement; the first part's first turn is the rules' (they claimed it: name, job)
    answer = {"ops": [{"op": "new", "turn": 1, "who": "user", "what": "项目", "value": "青鸟"}]}
    with ChatServer([(500, ""), (500, ""), (200, json.dumps(answer, ensure_ascii=False))]) as srv:
        monkeypatch.setenv("AGENTOS_LLM_BASE_URL", srv.base_url)
        r = daily_digest(day=date(2026, 11, 22))
        # the fact extractor's requests (the memory stage asks the same model its own question afterwards)
        fact_requests = [q for q in srv.requests if q["body"]["messages"][0]["content"].startswith("You keep a person's memory")]
        assert len(fact_requests) >= 3 and fact_requests[0]["body"]["messages"][-1]["content"] == fact_requests[2]["body"]["messages"][-1]["content"]
    assert r["extractor"].startswith("llm:")
    from agentos_mem.kernel.settings import load_settings
    from agentos_mem.storage.facts import open_facts

    store = open_facts(load_settings())
    try:
        facts = store.current("default")
    finally:
        store.close()
    by_model = [(f["subject"], f["object"]) for f in facts if f["extractor"].startswith("llm:")]
    assert by_model == [("项目", "青鸟")]  # the model's one operation, on a turn the rules kept only as a statement
    assert any(f["extractor"] == "rules" for f in facts)


def test_model_failure_falls_back_to_rules(demo_home, monkeypatch):
    from agentos_mem.flows.daily import daily_digest

    with ChatServer([(200, "no json here")]) as srv:
        monkeypatch.setenv("AGENTOS_LLM_BASE_URL", srv.base_url)
        r = daily_digest(day=date(2026, 11, 22))
    assert r["extractor"] == "rules (model failed)" and r["facts_added"] > 0
