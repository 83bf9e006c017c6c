"""inbox-refine and publishing on real files: the ingest review, versions, pending -> ready, visibility, bad input."""

from __future__ import annotations

import json
from datetime import date, timedelta

import pytest

from agentos_mem.kernel.domain import Candidate
from tests.kit.knowledge import TODAY, item, kb_settings, refine_all, refine_kit


def _facts(settings, *values):
    from agentos_mem.services.supersession import Supersession
    from agentos_mem.storage.facts import open_facts

    store = open_facts(settings)
    cands = [Candidate(subject=s, predicate="value", object=o, nature="fact", confidence=0.9, explicitness="stated", source_file="2026-11-01.md",
                       line_start=i + 1, line_end=i + 1, observed_at="2026-11-01T09:00:00", technical=True) for i, (s, o) in enumerate(values)]
    Supersession(store).apply("default", date(2026, 11, 1), cands, file_sha={"2026-11-01.md": "x"}, raw_refs={})
    rows = {r["subject"]: r for r in store.current("default")}
    store.close()
    return rows


# -- reliability -------------------------------------------------------------------------------------------
@pytest.mark.parametrize("meta, cls, score", [
    ({"source": "https://docs.python.org/3/library/sqlite3.html"}, "official", 0.8),
    ({"source_url": "https://arxiv.org/abs/2401.00001"}, "official", 0.8),
    ({"link": "https://martinfowler.com/articles/x.html"}, "known_blog", 0.6),
    ({"source": "https://www.zhihu.com/question/1"}, "forum", 0.4),
    ({"source": "https://weibo.com/123"}, "unknown", 0.2),
    ({"source": "https://some-random-site.example/post"}, "unknown", 0.2),
    ({"source": "/home/me/notes/a.md", "source_type": "personal"}, "own", 0.5),
    ({}, "unknown", 0.2),
])
def test_source_reliability(tmp_path, meta, cls, score):
    from agentos_mem.knowledge.review import load_reliability, reliability

    r = reliability(meta, load_reliability(tmp_path / "reliability.yaml"))
    assert (r["class"], r["score"]) == (cls, score) and r["why"]


def test_the_source_lists_are_the_users_to_edit(tmp_path):
    from agentos_mem.knowledge.review import load_reliability, reliability

    path = tmp_path / "reliability.yaml"
    load_reliability(path)  # written from the template
    path.write_text(path.read_text(encoding="utf-8").replace("official:\n", "official:\n  - wiki.mycorp.example\n"), encoding="utf-8")
    assert reliability({"source": "https://wiki.mycorp.example/page"}, load_reliability(path))["score"] == 0.8


# -- the refine run ------------------------------------------------------------------------------------------
def test_items_become_pending_cards_that_only_approval_publishes(ws, kit_cache):
    from agentos_mem.knowledge.decisions import decide, pending, visible

    src = item(ws, "knowledge/clipping", "pg.md", "# PostgreSQL 逻辑复制\n\n## 概念\n\nPostgreSQL 的逻辑复制基于发布和订阅。\n\n## 配置\n\n"
                "需要把 wal_level 设为 logical。\n", source="https://www.postgresql.org/docs/current/logical-replication.html",
                source_type="clipping", title="PostgreSQL 逻辑复制", scope="system", owner="default")
    before = (src.read_bytes(), src.stat().st_mtime_ns)
    r = refine_all(kit_cache)
    assert [d["outcome"] for d in r["refined"]] == ["new"] and r["quarantined"] == r["errors"] == []
    doc_id = r["refined"][0]["doc_id"]
    assert doc_id.startswith("testhost_20261130_") and "postgresql" in doc_id
    settings = kb_settings()
    assert [d["id"] for d in pending(settings)] == [doc_id] and visible(settings, "default") == []
    card = next((ws / "agent-sync/03_knowledge").rglob(f"{doc_id}.md"))
    text = card.read_text(encoding="utf-8")
    assert "status: pending" in text and "reliability: 0.8" in text and "wal_level" in text
    assert (src.read_bytes(), src.stat().st_mtime_ns) == before  # the inbox item is never changed
    log = [json.loads(x) for x in (ws / "agent-local/logs/kb_ingest.log").read_text(encoding="utf-8").splitlines()]
    assert log[-1]["doc_id"] == doc_id and log[-1]["outcome"] == "new"

    from agentos_mem.knowledge.decisions import show

    doc = show(settings, doc_id)
    assert [s["title"] for s in doc["outline"]][:3] == ["PostgreSQL 逻辑复制", "概念", "配置"]
    assert doc["review"]["validity"]["nature"] in ("technical", "fact") and doc["summary"]

    decide(settings, doc_id, "approve", "default")
    assert [d["id"] for d in visible(settings, "default")] == [doc_id]
    assert "status: ready" in card.read_text(encoding="utf-8") and "wal_level" in card.read_text(encoding="utf-8")
    again = refine_all(kit_cache)
    assert again["refined"] == [] and again["already"] == 1


def _conflicts(settings):
    from agentos_mem.storage.facts import open_facts

    store = open_facts(settings)
    try:
        return store.conflicts("default")
    finally:
        store.close()


def _fact_rows(settings, where: str = "1", params=()) -> list[dict]:
    """Every row of the fact store (any status), for asserting what a document did or did not write."""
    from agentos_mem.storage.facts import open_facts

    store = open_facts(settings)
    try:
        return store.rows(f"select * from facts where {where}", list(params))
    finally:
        store.close()


def test_consistency_with_facts_identical_new_and_contradicting(ws, kit_cache):
    from agentos_mem.knowledge.decisions import decide, show

    settings = kb_settings()
    before = _facts(settings, ("服务器配置", "8C16G"), ("数据库端口", "5433"))
    item(ws, "knowledge/clipping", "ops.md", "# 运维手册\n\n服务器配置是 8C16G。\n\nRedis 端口是 6379。\n\n数据库端口是 5432。\n",
          source="https://kubernetes.io/docs/ops", title="运维手册")
    r = refine_all(kit_cache)
    c = r["refined"][0]["consistency"]
    assert (c["candidates"], c["identical"], c["added"], c["conflicts"]) == (3, 1, 1, 1)  # what approval would do
    assert _facts(settings) == before and _conflicts(settings) == []  # pending: nothing written, not even a conflict
    doc_id = r["refined"][0]["doc_id"]
    assert len(show(settings, doc_id)["fact_candidates"]) == 3

    decide(settings, doc_id, "approve", "default")
    after = _facts(settings)
    assert after["服务器配置"]["confidence"] > before["服务器配置"]["confidence"]  # identical: slightly more confident
    assert after["数据库端口"]["object"] == "5433"  # contradicted: nothing overwritten...
    conflicts = _conflicts(settings)
    assert [(x["subject"], x["candidate_object"]) for x in conflicts] == [("数据库端口", "5432")]  # ...a conflict for review
    assert conflicts[0]["source_file"] == show(settings, doc_id)["path"]  # the document is the evidence
    assert after["Redis 端口"]["object"] == "6379" and after["Redis 端口"]["explicitness"] == "inferred"  # new detail: a new entry
    assert after["Redis 端口"]["extractor"] == f"kb:{doc_id}"
    doc = show(settings, doc_id)
    assert doc["fact_candidates"] == [] and doc["review"]["consistency"]["applied"] == 3
    logged = (ws / "agent-local/logs/conflicts.log").read_text(encoding="utf-8").splitlines()
    assert len(logged) == 1 and "5432" in logged[0]


def test_an_unreliable_source_adds_nothing_but_still_flags_contradictions(ws, kit_cache):
    from agentos_mem.knowledge.decisions import decide

    settings = kb_settings()
    _facts(settings, ("数据库端口", "5433"))
    item(ws, "knowledge/clipping", "rumor.md", "# 小道消息\n\n数据库端口是 5432。\n\nKafka 端口是 9092。\n", source="https://weibo.com/x", title="小道消息")
    r = refine_all(kit_cache)["refined"][0]
    c = r["consistency"]
    assert (c["candidates"], c["added"], c["conflicts"]) == (1, 0, 1) and _conflicts(settings) == []
    decide(settings, r["doc_id"], "approve", "default")
    assert [x["candidate_object"] for x in _conflicts(settings)] == ["5432"]
    assert "Kafka 端口" not in _facts(settings) and _facts(settings)["数据库端口"]["object"] == "5433"


OFFICIAL = dict(source="https://docs.python.org/3/whatsnew/3.13.html", source_type="clipping", title="Python 3.13 新特性")
OFFICIAL_BODY = "# Python 3.13 新特性\n\nPython 最新版本是 3.13。\n\n默认解释器是 CPython。\n"


def test_a_pending_clipping_claiming_an_official_url_writes_no_facts(ws, kit_cache):
    """Nothing unreviewed writes facts: the candidates wait with the document; rejecting drops them."""
    from agentos_mem.knowledge.decisions import decide, pending, show

    item(ws, "knowledge/clipping", "py.md", OFFICIAL_BODY, **OFFICIAL)
    r = refine_all(kit_cache)["refined"][0]
    settings = kb_settings()
    assert r["reliability"] == 0.8 and r["consistency"]["candidates"] >= 1
    doc = show(settings, r["doc_id"])
    assert doc["status"] == "pending" and len(doc["fact_candidates"]) == r["consistency"]["candidates"]
    assert {c["extractor"] for c in doc["fact_candidates"]} == {f"kb:{r['doc_id']}"}
    assert all(c["confidence"] == 0.95 for c in doc["fact_candidates"])  # as today: 0.8 + 0.2, capped
    assert _fact_rows(settings) == [] and _conflicts(settings) == []  # the store has no row from it
    assert [d["fact_candidates"] for d in pending(settings)] == [len(doc["fact_candidates"])]

    decide(settings, r["doc_id"], "reject", "default", "marketing copy")
    assert _fact_rows(settings) == [] and _conflicts(settings) == []  # rejected: nothing was ever written
    doc = show(settings, r["doc_id"])
    assert doc["fact_candidates"] == [] and doc["review"]["consistency"]["dropped"] >= 1


def test_approving_applies_the_staged_facts_and_a_conflicting_value_goes_to_review(ws, kit_cache):
    from agentos_mem.knowledge.decisions import decide, show

    settings = kb_settings()
    item(ws, "knowledge/clipping", "py.md", OFFICIAL_BODY, **OFFICIAL)
    r = refine_all(kit_cache)["refined"][0]
    staged = show(settings, r["doc_id"])["fact_candidates"]
    # memory learns something else about the same subject while the document waits
    target = next(c for c in staged if "3.13" in c["object"])
    _facts(settings, (target["subject"], "3.12"))
    decide(settings, r["doc_id"], "approve", "default")
    held = {(f["subject"], f["predicate"]): f for f in _fact_rows(settings, "status = 'active'")}
    assert held[(target["subject"], target["predicate"])]["object"] == "3.12"  # not silently replaced...
    assert [(c["subject"], c["candidate_object"]) for c in _conflicts(settings)] == [(target["subject"], target["object"])]  # ...in review
    others = [c for c in staged if c is not target and c["object"] != target["object"]]
    for c in others:  # the rest applied, with the document as their source
        f = held[(c["subject"], c["predicate"])]
        assert f["object"] == c["object"] and f["source_file"] == show(settings, r["doc_id"])["path"] and f["confidence"] == 0.95


def test_a_new_version_restages_its_candidates(ws, kit_cache):
    from agentos_mem.knowledge.decisions import decide, show

    settings = kb_settings()
    url = "https://kubernetes.io/docs/spec"
    item(ws, "knowledge/clipping", "s1.md", "# 服务器规格\n\n生产服务器配置是 4C8G。\n", source=url, title="服务器规格")
    first = refine_all(kit_cache)["refined"][0]
    assert [c["object"] for c in show(settings, first["doc_id"])["fact_candidates"]] == ["4C8G"]
    item(ws, "knowledge/clipping", "s2.md", "# 服务器规格\n\n生产服务器配置是 8C16G。\n", source=url, title="服务器规格")
    second = refine_all(kit_cache)["refined"][0]
    assert second["outcome"] == "hard_update" and second["doc_id"] == first["doc_id"]
    assert [c["object"] for c in show(settings, first["doc_id"])["fact_candidates"]] == ["8C16G"]  # v1's are gone
    assert _fact_rows(settings) == []
    decide(settings, first["doc_id"], "approve", "default")
    assert [f["object"] for f in _fact_rows(settings)] == ["8C16G"]  # only the approved version's statement


def test_time_validity_and_expiry_leave_retrieval(ws, kit_cache):
    from agentos_mem.knowledge.decisions import decide, visible

    item(ws, "knowledge/clipping", "k8s.md", "# Kubernetes HPA 配置指南\n\n步骤一：安装 metrics-server。步骤二：创建 HPA。\n",
          source="https://kubernetes.io/docs/hpa", title="Kubernetes HPA 配置指南", category="20_methods")
    item(ws, "knowledge/clipping", "law.md", "# 数据出境安全评估办法\n\n第一条 为了规范数据出境活动，制定本办法。\n\n有效期至 2028-01-01。\n",
          source="https://www.gov.cn/law/1", title="数据出境安全评估办法", category="10_concepts/law")
    item(ws, "personal", "view.md", "# 我对微服务的看法\n\n我认为大多数团队不需要微服务，单体更容易维护。\n",
          source_type="personal", title="我对微服务的看法", category="60_opinions")
    r = {d["title"]: d for d in refine_all(kit_cache)["refined"]}
    assert r["Kubernetes HPA 配置指南"]["valid_until"] == (TODAY + timedelta(days=180)).isoformat()
    assert r["数据出境安全评估办法"]["valid_until"] == "2028-01-01"
    assert r["我对微服务的看法"]["valid_until"] is None
    settings = kb_settings()
    for d in r.values():
        decide(settings, d["doc_id"], "approve", "default")
    assert len(visible(settings, "default")) == 3
    from agentos_mem.storage.kb_store import KBStore
    from agentos_mem.knowledge.refine import kb_paths

    store = KBStore(kb_paths(settings)["db"])
    later = {d["title"] for d in store.visible("default", today=TODAY + timedelta(days=200))}
    store.close()
    assert later == {"数据出境安全评估办法", "我对微服务的看法"}  # the technical card expired and left retrieval


def test_version_rules(ws, kit_cache):
    from agentos_mem.knowledge.decisions import show

    settings = kb_settings()
    url = "https://docs.example-cloud.com/specs/server"
    item(ws, "knowledge/clipping", "spec1.md", "# 服务器规格\n\n生产服务器配置是 4C8G。\n", source=url, title="服务器规格")
    first = refine_all(kit_cache)["refined"][0]
    # hard fact changed: same source, new value -> the card is updated, the old value recorded
    item(ws, "knowledge/clipping", "spec2.md", "# 服务器规格\n\n生产服务器配置是 8C16G。\n", source=url, title="服务器规格")
    second = refine_all(kit_cache)["refined"][0]
    assert second["outcome"] == "hard_update" and second["doc_id"] == first["doc_id"]
    doc = show(settings, first["doc_id"])
    prev = json.loads(doc["previous_version"])
    assert doc["version"] == 2 and prev["version"] == 1 and "4C8G" in prev["values"]
    assert "4C8G" in (ws / "agent-sync/03_knowledge" / prev["path"]).read_text(encoding="utf-8")
    assert doc["status"] == "pending"  # a re-ingested document waits for review again
    # the same content again: a duplicate, nothing new
    item(ws, "knowledge/feed", "spec-copy.md", "# 服务器规格\n\n生产服务器配置是 8C16G。\n", source="https://mirror.example/spec", title="服务器规格 copy")
    assert refine_all(kit_cache)["duplicates"][0]["doc_id"] == first["doc_id"]
    # soft upgrade: v2 of a guide keeps v1 and links them
    item(ws, "knowledge/clipping", "api1.md", "# 订单 API 指南 v1\n\n调用 /orders 获取订单。\n", title="订单 API 指南 v1", source="https://api.example/v1")
    v1 = refine_all(kit_cache)["refined"][0]
    item(ws, "knowledge/clipping", "api2.md", "# 订单 API 指南 v2\n\n调用 /v2/orders 获取订单，支持分页。\n", title="订单 API 指南 v2",
          source="https://api.example/v2")
    v2 = refine_all(kit_cache)["refined"][0]
    assert v2["outcome"] == "soft_upgrade" and v2["doc_id"] != v1["doc_id"]
    assert show(settings, v2["doc_id"])["related"] == [v1["doc_id"]] and show(settings, v1["doc_id"])["related"] == [v2["doc_id"]]
    # opinion confirmed: an opinion later stated by a reliable source becomes a fact, more confident
    item(ws, "personal", "rust.md", "# Rust 编译慢\n\n我认为 Rust 的编译速度比 Go 慢很多。\n", title="Rust 编译慢", source_type="personal",
          category="60_opinions")
    op = refine_all(kit_cache)["refined"][0]
    assert show(settings, op["doc_id"])["nature"] == "opinion"
    item(ws, "knowledge/clipping", "rust-official.md", "# Rust 编译慢\n\nRust 编译器的编译时间通常长于 Go 编译器，这是已知的取舍。\n",
          title="Rust 编译慢", source="https://go.dev/doc/faq", category="30_facts")
    conf = refine_all(kit_cache)["refined"][0]
    doc = show(settings, op["doc_id"])
    assert conf["outcome"] == "opinion_confirmed" and doc["nature"] == "fact" and doc["confidence"] > 0.5


def test_visibility_and_who_decides(ws, kit_cache):
    from agentos_mem.knowledge.decisions import NotAllowed, decide, pending, show, visible
    from agentos_mem.storage.kb_store import DocumentNotFound

    item(ws, "personal", "alice.md", "# Alice 的读书笔记\n\n《设计数据密集型应用》第五章讲复制。\n", title="Alice 的读书笔记",
          source_type="personal", scope="personal", owner="alice")
    item(ws, "knowledge/clipping", "team.md", "# 团队发布流程\n\n发布前需要两人评审。\n", title="团队发布流程", scope="system",
          source="https://martinfowler.com/release")
    r = {d["title"]: d["doc_id"] for d in refine_all(kit_cache)["refined"]}
    settings = kb_settings()
    with pytest.raises(DocumentNotFound, match="no knowledge document"):
        decide(settings, r["Alice 的读书笔记"], "approve", "bob")  # only the owner decides (and sees) a personal document
    with pytest.raises(DocumentNotFound, match="no knowledge document"):
        show(settings, r["Alice 的读书笔记"], "bob")
    assert show(settings, r["团队发布流程"], "alice")["status"] == "pending"  # the team's documents: everyone sees them
    assert [d["title"] for d in pending(settings, viewer="bob")] == ["团队发布流程"] and pending(settings, "bob") == []
    assert {d["title"] for d in pending(settings, viewer="alice")} == {"Alice 的读书笔记", "团队发布流程"}
    assert [d["title"] for d in pending(settings, "default")] == ["团队发布流程"]  # an admin decides the team's, not alice's
    with pytest.raises(NotAllowed):
        decide(settings, r["团队发布流程"], "approve", "alice")  # only an admin decides a system document
    decide(settings, r["Alice 的读书笔记"], "approve", "alice")
    decide(settings, r["团队发布流程"], "approve", "default")
    assert {d["title"] for d in visible(settings, "alice")} == {"Alice 的读书笔记", "团队发布流程"}
    assert {d["title"] for d in visible(settings, "bob")} == {"团队发布流程"}


def test_rejected_documents_are_kept_and_marked(ws, kit_cache):
    from agentos_mem.knowledge.decisions import decide, show, visible

    item(ws, "knowledge/clipping", "bad.md", "# 过时的部署说明\n\n用 FTP 上传到服务器。\n", title="过时的部署说明", source="https://medium.com/x")
    doc_id = refine_all(kit_cache)["refined"][0]["doc_id"]
    settings = kb_settings()
    decide(settings, doc_id, "reject", "default", "out of date")
    doc = show(settings, doc_id)
    assert doc["status"] == "rejected" and doc["decision_note"] == "out of date" and visible(settings, "default") == []
    assert (ws / "agent-sync/03_knowledge" / doc["path"]).exists()
    with pytest.raises(ValueError):
        decide(settings, doc_id, "approve", "default")  # decided once


def test_bad_inbox_items_are_quarantined_and_the_rest_refined(ws, kit_cache):
    inbox = ws / "agent-sync/03_knowledge/00_stream/inbox"
    item(ws, "knowledge/clipping", "ok.md", "# 正常的文档\n\nGo 的 goroutine 很轻量。\n", title="正常的文档", source="https://go.dev/x")
    item(ws, "knowledge/clipping", "ok2-dup-title.md", "# 正常的文档\n\n完全不同的内容。\n", title="正常的文档", source="https://other.example/y")
    (inbox / "knowledge/clipping/broken.md").write_text("---\ntitle: [unclosed\n---\nbody\n", encoding="utf-8")
    (inbox / "knowledge/clipping/latin1.md").write_bytes("caf\xe9 au lait".encode("latin-1"))
    (inbox / "knowledge/clipping/blob.md").write_bytes(b"\x89PNG\x00\x00binary")
    (inbox / "knowledge/clipping/doc.pdf").write_bytes(b"%PDF-1.7 ...")
    (inbox / "personal/huge.txt").parent.mkdir(parents=True, exist_ok=True)
    (inbox / "personal/huge.txt").write_text("大" * (1024 * 1024), encoding="utf-8")  # 3 MB of UTF-8
    snapshot = {p: p.read_bytes() for p in inbox.rglob("*") if p.is_file()}
    r = refine_all(kit_cache)
    assert [d["title"] for d in r["refined"]] == ["正常的文档"]
    reasons = "\n".join(r["quarantined"])
    for name, why in (("ok2-dup-title.md", "duplicate title"), ("broken.md", "frontmatter"), ("latin1.md", "UTF-8"),
                      ("blob.md", "binary"), ("doc.pdf", "convert it"), ("huge.txt", "larger than")):
        assert name in reasons and why in reasons, (name, reasons)
    assert {p: p.read_bytes() for p in inbox.rglob("*") if p.is_file()} == snapshot  # nothing lost or altered
    q = [json.loads(x)["file"] for x in (ws / "agent-local/logs/quarantine.jsonl").read_text().splitlines()]
    assert {"knowledge/clipping/broken.md", "personal/huge.txt"} <= set(q)


def test_a_failed_summary_never_blocks(ws, kit_cache):
    from tests.kit.chat_server import ChatServer
    from agentos_mem.knowledge.refine import refine
    from agentos_mem.knowledge.decisions import show
    from agentos_mem.kernel.llm import ChatClient

    item(ws, "knowledge/clipping", "s.md", "# 缓存策略\n\n读多写少的数据适合用 Redis 缓存。\n", title="缓存策略", source="https://redis.io/docs")
    settings = kb_settings()
    with ChatServer([(500, "")]) as srv:
        kit = refine_kit(settings, kit_cache)
        kit["client"] = ChatClient(srv.base_url, "m", None, 5)
        r = refine(settings, kit=kit, today=TODAY)
    (d,) = r["refined"]
    doc = show(settings, d["doc_id"])
    assert doc["summary"] is None and "chat endpoint" in doc["summary_error"]
    assert doc["status"] == "pending" and doc["review"]["reliability"]["score"] > 0 and doc["outline"]
    assert "读多写少" in (ws / "agent-sync/03_knowledge" / doc["path"]).read_text(encoding="utf-8")
    # next run without a failing model: the summary is made, the document untouched otherwise
    refine_all(kit_cache)
    assert show(settings, d["doc_id"])["summary"]


def test_a_body_edited_by_hand_is_parsed_again_and_reviewed_again(ws, kit_cache):
    from agentos_mem.knowledge.decisions import decide, show, visible

    item(ws, "knowledge/clipping", "e.md", "# 部署手册\n\n## 准备\n\n先备份数据库。\n", title="部署手册", source="https://kubernetes.io/deploy")
    doc_id = refine_all(kit_cache)["refined"][0]["doc_id"]
    settings = kb_settings()
    decide(settings, doc_id, "approve", "default")
    before = show(settings, doc_id)
    card = ws / "agent-sync/03_knowledge" / before["path"]
    card.write_text(card.read_text(encoding="utf-8") + "\n## 回滚\n\n回滚时先停流量，再恢复备份。\n", encoding="utf-8")
    r = refine_all(kit_cache)
    after = show(settings, doc_id)
    assert r["edited"] == [doc_id] and [s["title"] for s in after["outline"]] == ["部署手册", "准备", "回滚"]
    assert after["status"] == "pending" and visible(settings, "default") == []  # a changed body is reviewed again
    assert after["summary"] and after["summary_hash"] == after["content_hash"] != before["content_hash"]
    assert "回滚时先停流量" in card.read_text(encoding="utf-8")  # the user's edit is kept
