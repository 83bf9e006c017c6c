"""The knowledge tools as an agent uses them: a real client session spawning ``agentos mcp`` over a workspace with
refined and published documents (map -> search -> outline -> paged reads -> answers)."""

from __future__ import annotations

import pytest

pytest.importorskip("mcp")

from tests.kit.knowledge import answer_items, kb_settings, refine_all, refine_clean, write_selection  # noqa: E402
from tests.kit.mcp import data, error_text, session  # noqa: E402

TOOLS = {"kb_map": set(), "kb_search": {"query"}, "kb_outline": {"doc_id"}, "kb_read": {"doc_id", "anchor"}, "kb_answer": {"question"}}


def test_kb_tools_over_stdio(ws, kit_cache, tmp_path):
    from agentos_mem.knowledge.decisions import decide

    answer_items(ws)
    ids = refine_clean(kit_cache)
    pg, runbook, pending, bobs = ids["PostgreSQL 逻辑复制"], ids["Backup runbook"], ids["斑马集群"], ids["Kangaroo notes"]
    settings = kb_settings()
    decide(settings, pg, "approve", "default")
    decide(settings, runbook, "approve", "default")
    decide(settings, bobs, "approve", "bob")
    write_selection(ws, "methods", "categories: [20_methods]\n")

    async def script(s):
        call = s.call_tool
        out = {"tools": {t.name: t for t in (await s.list_tools()).tools}}
        out["map"] = await call("kb_map", {})
        out["map_sel"] = await call("kb_map", {"selection": "methods"})
        out["map_nosel"] = await call("kb_map", {"selection": "nosuch"})
        out["search"] = await call("kb_search", {"query": "wal_level 怎么设置", "k": 3})
        out["search_en"] = await call("kb_search", {"query": "monthly snapshots retention"})
        out["search_sel"] = await call("kb_search", {"query": "wal_level", "selection": "methods"})
        out["search_empty"] = await call("kb_search", {"query": "  "})
        out["outline"] = await call("kb_outline", {"doc_id": pg})
        pages = [await call("kb_read", {"doc_id": pg, "anchor": "#事务顺序", "page_tokens": 100})]
        while not pages[-1].is_error and data(pages[-1])["next_cursor"] and len(pages) < 50:
            pages.append(await call("kb_read", {"doc_id": pg, "anchor": "事务顺序", "cursor": data(pages[-1])["next_cursor"]}))
        out["pages"] = pages
        out["answer"] = await call("kb_answer", {"question": "wal_level 怎么设置？"})
        out["answer_en"] = await call("kb_answer", {"question": "How long are monthly snapshots kept?", "budget": 200})
        out["answer_none"] = await call("kb_answer", {"question": "火星上的天气怎么样？"})
        out["answer_sel"] = await call("kb_answer", {"question": "wal_level 怎么设置？", "selection": "methods"})
        out["answer_budget"] = await call("kb_answer", {"question": "wal_level", "budget": 5})
        for name, doc_id, words in (("pending", pending, "斑马集群的迁移窗口"), ("bobs", bobs, "kangaroo cluster quota")):
            out[name] = {"search": await call("kb_search", {"query": words}),
                         "outline": await call("kb_outline", {"doc_id": doc_id}),
                         "read": await call("kb_read", {"doc_id": doc_id, "anchor": "_preamble"}),
                         "answer": await call("kb_answer", {"question": words + "?"})}
        out["bad_anchor"] = await call("kb_read", {"doc_id": pg, "anchor": "nosuch"})
        out["bad_cursor"] = await call("kb_read", {"doc_id": pg, "anchor": "事务顺序", "cursor": "garbage"})
        out["other_cursor"] = await call("kb_read", {"doc_id": pg, "anchor": "配置", "cursor": data(pages[0])["next_cursor"]})
        out["bad_page"] = await call("kb_read", {"doc_id": pg, "anchor": "配置", "page_tokens": 2})
        # the document changes under the agent: its old cursor is refused, saying why
        card = next((ws / "agent-sync/03_knowledge").rglob(f"{pg}.md"))
        card.write_text(card.read_text(encoding="utf-8").replace("第3条", "第三条"), encoding="utf-8")
        out["edited"] = await call("kb_read", {"doc_id": pg, "anchor": "事务顺序", "cursor": data(pages[0])["next_cursor"]})
        assert refine_all(kit_cache)["edited"] == [pg]
        decide(settings, pg, "approve", "default")
        out["stale"] = await call("kb_read", {"doc_id": pg, "anchor": "事务顺序", "cursor": data(pages[0])["next_cursor"]})
        out["fresh"] = await call("kb_read", {"doc_id": pg, "anchor": "事务顺序", "page_tokens": 4000})
        return out

    errlog = tmp_path / "server-stderr.txt"
    out, stray = session(ws, errlog, script)
    assert stray == []

    # the five tools, described, with typed and described parameters, all read-only
    tools = out["tools"]
    assert set(TOOLS) <= set(tools)
    for name, required in TOOLS.items():
        t = tools[name]
        assert len(t.description) > 80, name
        props = t.input_schema["properties"]
        assert props and all(p.get("description") for p in props.values()), name
        assert set(t.input_schema.get("required", [])) == required, name
        assert "selection" in props, name
        assert t.annotations.read_only_hint and not t.annotations.destructive_hint, name
    assert set(tools["kb_read"].input_schema["properties"]) == {"doc_id", "anchor", "cursor", "page_tokens", "selection"}
    assert tools["kb_search"].input_schema["properties"]["k"]["type"] == "integer"

    # the map: the published documents this user may see, narrowed by a selection
    m = data(out["map"])
    assert {d["id"] for d in m["documents"]} == {pg, runbook} and m["count"] == 2
    assert [d["id"] for d in data(out["map_sel"])["documents"]] == [runbook]
    assert "no knowledge selection named 'nosuch'" in error_text(out["map_nosel"])

    # search -> outline
    hit = data(out["search"])["hits"][0]
    assert (hit["doc_id"], hit["anchor"]) == (pg, "配置") and "wal_level" in hit["snippet"] and len(data(out["search"])["hits"]) <= 3
    assert data(out["search_en"])["hits"][0]["anchor"] == "retention"
    assert all(h["doc_id"] == runbook for h in data(out["search_sel"])["hits"])
    assert "query is empty" in error_text(out["search_empty"])
    outline = data(out["outline"])
    assert [o["anchor"] for o in outline["outline"]] == ["postgresql-逻辑复制", "概念", "配置", "事务顺序"]

    # paged reads with the cursor, to the end: the whole section, nothing lost or repeated
    pages = [data(p) for p in out["pages"]]
    assert len(pages) > 3 and pages[-1]["next_cursor"] is None and [p["page"] for p in pages] == list(range(1, len(pages) + 1))
    assert all(p["tokens"] <= 100 for p in pages)
    text = "".join(p["text"] for p in pages)
    assert text.startswith("## 事务顺序") and all(f"第{i}条：" in text for i in range(1, 61)) and text.count("第1条：") == 1

    # answers cite document and section; what is not covered is said, not made up
    ans = data(out["answer"])
    assert ans["status"] == "answered" and "需要把 wal_level 设为 logical" in ans["answer"]
    assert (ans["citations"][0]["doc_id"], ans["citations"][0]["anchor"]) == (pg, "配置") and ans["pointers"][0]["anchor"] == "配置"
    en = data(out["answer_en"])
    assert en["status"] == "answered" and en["tokens"] <= 200 and "one year" in en["answer"] and en["citations"][0]["doc_id"] == runbook
    none = data(out["answer_none"])
    assert none["status"] == "not_covered" and none["citations"] == [] and none["missing"] == "知识库中没有关于「火星」「天气」的内容。"
    assert data(out["answer_sel"])["status"] == "not_covered"  # the selection holds no document on it
    assert out["answer_budget"].is_error

    # a pending document and another user's personal one never appear through any tool
    for name, doc_id in (("pending", pending), ("bobs", bobs)):
        got = out[name]
        assert all(h["doc_id"] != doc_id for h in data(got["search"])["hits"])
        for key in ("outline", "read"):
            assert error_text(got[key]) == f"no document {doc_id} in your selected, published knowledge"
        a = data(got["answer"])
        assert a["status"] == "not_covered" and doc_id not in {c["doc_id"] for c in a["citations"]} and a["pointers"] == []
    assert "斑马" not in str(m) and "kangaroo" not in str(m).lower()

    # caller-fixable problems are tool errors with the reason
    assert "no section #nosuch" in error_text(out["bad_anchor"])
    assert "not a read_section cursor" in error_text(out["bad_cursor"])
    assert "this cursor is for" in error_text(out["other_cursor"])
    assert out["bad_page"].is_error
    assert error_text(out["edited"]) == f"no document {pg} in your selected, published knowledge"  # edited by hand, not reviewed
    assert "changed since this cursor" in error_text(out["stale"])
    assert "第三条" in data(out["fresh"])["text"]
    assert "Traceback" not in errlog.read_text(encoding="utf-8")
