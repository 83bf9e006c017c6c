"""A person's decisions in one place (knowledge/decisions.py): the review flow's whole decision, and the single
decisions the CLI makes, follow the same rules; every refused part is reported with its reason, the rest applied."""

from __future__ import annotations

from datetime import date

from tests.kit.knowledge import item, kb_settings, refine_all


def _conflict(settings, subject: str, old: str, new: str) -> None:
    """The user said ``old``; later the assistant inferred ``new``: an open conflict for a person to settle."""
    from agentos_mem.kernel.domain import Candidate
    from agentos_mem.services.supersession import Supersession
    from agentos_mem.storage.facts import open_facts

    def cand(obj, day, explicitness, conf):
        return Candidate(subject=subject, predicate="value", object=obj, nature="fact", confidence=conf, explicitness=explicitness,
                         source_file=f"{day}.md", line_start=1, line_end=1, observed_at=f"{day}T09:00:00")

    facts = open_facts(settings)
    try:
        for day, c in ((date(2026, 11, 2), cand(old, date(2026, 11, 2), "stated", 0.9)),
                       (date(2026, 11, 3), cand(new, date(2026, 11, 3), "inferred", 0.6))):
            Supersession(facts).apply(settings.user, day, [c], file_sha={c.source_file: "sha" + c.source_file}, raw_refs={})
    finally:
        facts.close()


def test_a_review_decision_applies_what_is_allowed_and_reports_the_rest(ws, kit_cache):
    from agentos_mem.knowledge.decisions import apply_review, open_conflicts, pending, show, waiting_markdown

    item(ws, "personal", "a.md", "# Alice 的周报模板\n\n先写结论，再写风险。\n", title="Alice 的周报模板", source_type="personal",
         scope="personal", owner="alice")
    item(ws, "knowledge/clipping", "b.md", "# 接口限流方案\n\n令牌桶算法适合突发流量。\n", title="接口限流方案", scope="system",
         source="https://martinfowler.com/rate")
    ids = {d["title"]: d["doc_id"] for d in refine_all(kit_cache)["refined"]}
    settings = kb_settings(user="alice")
    _conflict(settings, "数据库端口", "5432", "6543")
    (conflict,) = open_conflicts(settings, "alice")
    shown = waiting_markdown(pending(settings), [conflict])
    assert ids["Alice 的周报模板"] in shown and "| 5432 | 6543 |" in shown

    outcome = apply_review(settings, {"reviewer": "alice", "approve": [ids["Alice 的周报模板"], ids["接口限流方案"], "nope"],
                                      "accept_conflicts": [conflict["id"], 999], "note": "ok"})
    assert outcome.approved == [ids["Alice 的周报模板"]] and outcome.conflicts_resolved == [conflict["id"]]
    refused = "\n".join(outcome.refused)
    assert len(outcome.refused) == 3 and "only an admin" in refused and "nope" in refused and "999" in refused
    assert show(settings, ids["Alice 的周报模板"])["status"] == "ready"
    assert show(settings, ids["接口限流方案"])["status"] == "pending"  # alice is no admin: untouched
    assert open_conflicts(settings, "alice") == []
    md = outcome.artifact_markdown()
    assert "## Refused" in md and ids["Alice 的周报模板"] in md


def test_the_review_decision_applies_or_drops_a_documents_fact_candidates(ws, kit_cache):
    """The review flow's path (apply_review) settles staged facts as the CLI does: approve applies, reject drops."""
    from agentos_mem.knowledge.decisions import apply_review, open_conflicts, pending, show, waiting_markdown
    from agentos_mem.storage.facts import open_facts

    item(ws, "knowledge/clipping", "a.md", "# Python 3.13 新特性\n\n默认解释器是 CPython。\n\nPython 最新版本是 3.13。\n",
         title="Python 3.13 新特性", source="https://docs.python.org/3/whatsnew/3.13.html")
    item(ws, "knowledge/clipping", "b.md", "# Go 发布说明\n\nGo 最新版本是 1.23。\n", title="Go 发布说明", source="https://go.dev/doc/go1.23")
    ids = {d["title"]: d["doc_id"] for d in refine_all(kit_cache)["refined"]}
    settings = kb_settings()
    _conflict(settings, "Python 最新版本", "3.12", "3.11")  # memory holds 3.12 (stated), and an open conflict of its own

    def facts():
        store = open_facts(settings)
        try:
            return {(f["subject"], f["object"]): f for f in store.current(settings.user)}
        finally:
            store.close()

    held_before = set(facts())
    waiting = pending(settings)
    assert {d["title"]: d["fact_candidates"] for d in waiting} == {"Python 3.13 新特性": 2, "Go 发布说明": 1}
    assert "2 fact candidates" in waiting_markdown(waiting, [])
    assert set(facts()) == held_before  # pending: nothing written

    out = apply_review(settings, {"reviewer": "default", "approve": [ids["Python 3.13 新特性"]], "reject": [ids["Go 发布说明"]]})
    assert out.approved == [ids["Python 3.13 新特性"]] and out.rejected == [ids["Go 发布说明"]] and out.refused == []
    now = facts()
    assert ("默认解释器", "CPython") in now and ("Python 最新版本", "3.12") in now and ("Python 最新版本", "3.13") not in now
    assert not [k for k in now if k[0].startswith("Go")]  # rejected: its candidate dropped, never written
    contested = [(c["subject"], c["candidate_object"]) for c in open_conflicts(settings, settings.user)]
    assert ("Python 最新版本", "3.13") in contested  # the document's contradiction waits for review
    assert show(settings, ids["Go 发布说明"])["review"]["consistency"]["dropped"] == 1


def test_a_registry_from_before_staging_is_migrated_and_its_documents_still_decide(ws):
    """kb.db written before fact candidates were staged: the column is added on open; a document refined then (its
    facts written when refined, listed in its review) decides as before and applies nothing again."""
    import json

    import sqlite_utils

    from agentos_mem.knowledge.decisions import decide, pending, show
    from agentos_mem.knowledge.refine import kb_paths
    from agentos_mem.storage.kb_store import m001_initial

    settings = kb_settings()
    db = sqlite_utils.Database(kb_paths(settings)["db"])
    db.execute("create table _migrations (store text, name text, applied_at text default CURRENT_TIMESTAMP, primary key (store, name))")
    m001_initial(db)
    db.execute("insert into _migrations (store, name) values ('kb', 'm001_initial')")
    db["documents"].insert({"id": "old-doc", "path": "30_facts/old-doc.md", "title": "旧文档", "category": "30_facts", "scope": "system",
                            "owner": "default", "status": "pending", "nature": "fact", "confidence": 0.8, "reliability": 0.8,
                            "content_hash": "h", "review": json.dumps({"consistency": {"statements": 1, "added": 1, "fact_ids": [7]}}),
                            "created": "2026-11-01T00:00:00+00:00", "updated": "2026-11-01T00:00:00+00:00"})
    db.conn.commit()
    db.close()
    assert [d["fact_candidates"] for d in pending(settings)] == [0]
    assert show(settings, "old-doc")["fact_candidates"] == []
    assert decide(settings, "old-doc", "approve", "default")["status"] == "ready"


def _as_refined_by_the_earlier_version(settings, doc_id: str, status: str = "pending") -> None:
    """Rewind a freshly refined document to what the earlier version left: its facts written when it was refined
    (FactStore.apply as its ingest review called it), their ids in its review, nothing staged."""
    import hashlib

    from agentos_mem.kernel.domain import Candidate
    from agentos_mem.knowledge.refine import kb_paths, open_kb
    from agentos_mem.services.supersession import Supersession
    from agentos_mem.storage.facts import open_facts
    from agentos_mem.storage.kb_cards import read_body

    kb = open_kb(settings)
    doc = kb.get(doc_id)
    body = read_body(kb_paths(settings)["knowledge"] / doc["path"])
    facts = open_facts(settings)
    try:
        report = Supersession(facts).apply(doc["owner"], date(2026, 11, 30), [Candidate(**c) for c in doc["fact_candidates"]],
                                           file_sha={doc["path"]: hashlib.sha256(body.encode()).hexdigest()}, raw_refs={}, contradictions="conflict")
    finally:
        facts.close()
    doc["review"]["consistency"] = {"statements": len(doc["fact_candidates"]), "identical": report.reinforced, "added": report.added,
                                    "conflicts": report.conflicts, "fact_ids": [f for f in report.fact_ids if f]}
    kb.put({**doc, "fact_candidates": [], "status": status})
    kb.close()


def test_facts_an_earlier_version_wrote_for_unreviewed_documents_are_taken_back(ws, kit_cache):
    """Existing workspaces: a pending or rejected document whose facts were written when it was refined. The next
    refine run retracts what only it said (and withdraws its conflicts) and stages a pending one's statements for
    its review; deciding one before that run does the same for a rejection."""
    from agentos_mem.knowledge.decisions import apply_review, decide, open_conflicts, show

    item(ws, "knowledge/clipping", "a.md", "# 缓存与队列\n\nRedis 端口是 6379。\n\n数据库端口是 5432。\n", title="缓存与队列",
         source="https://kubernetes.io/docs/a")
    item(ws, "knowledge/clipping", "b.md", "# 消息队列\n\nKafka 端口是 9092。\n", title="消息队列", source="https://kubernetes.io/docs/b")
    item(ws, "knowledge/clipping", "c.md", "# 搜索服务\n\nElasticsearch 端口是 9200。\n", title="搜索服务", source="https://kubernetes.io/docs/c")
    settings = kb_settings()
    _conflict(settings, "数据库端口", "5433", "5433")  # memory holds 5433 (stated)
    ids = {d["title"]: d["doc_id"] for d in refine_all(kit_cache)["refined"]}
    _as_refined_by_the_earlier_version(settings, ids["缓存与队列"])
    _as_refined_by_the_earlier_version(settings, ids["消息队列"], status="rejected")
    _as_refined_by_the_earlier_version(settings, ids["搜索服务"])

    def held():
        from agentos_mem.storage.facts import open_facts

        store = open_facts(settings)
        try:
            return {f["subject"]: f["object"] for f in store.current(settings.user)}
        finally:
            store.close()

    assert {"Redis 端口", "Kafka 端口", "Elasticsearch 端口"} <= set(held())  # what the earlier version left
    assert [c["candidate_object"] for c in open_conflicts(settings, settings.user)] == ["5432"]

    # deciding before any refine run: rejecting takes its facts back
    out = apply_review(settings, {"reviewer": "default", "reject": [ids["搜索服务"]]})
    assert out.rejected == [ids["搜索服务"]] and "Elasticsearch 端口" not in held()
    assert show(settings, ids["搜索服务"])["review"]["consistency"]["legacy_settled"]["retracted"] == 1

    refine_all(kit_cache)  # the next run settles the rest, once
    now = held()
    assert "Redis 端口" not in now and "Kafka 端口" not in now and now["数据库端口"] == "5433"
    assert open_conflicts(settings, settings.user) == []  # the unreviewed document's conflict is withdrawn
    a = show(settings, ids["缓存与队列"])
    assert a["status"] == "pending" and {c["object"] for c in a["fact_candidates"]} == {"6379", "5432"}
    assert refine_all(kit_cache)["edited"] == [] and show(settings, ids["缓存与队列"])["fact_candidates"] == a["fact_candidates"]

    decide(settings, ids["缓存与队列"], "approve", "default")  # approved now: its facts come back, the contradiction to review
    assert held()["Redis 端口"] == "6379" and held()["数据库端口"] == "5433"
    assert [c["candidate_object"] for c in open_conflicts(settings, settings.user)] == ["5432"]
