"""Knowledge search through the ANN index of sections (index/section_ann.py, query.kb.SectionANN): published by
the nightly embedding step, kept in step with approvals, and answering as exact search does.

The threshold is the setting ``kb_ann_min_sections`` (5,000 by default); these workspaces set it to 2 so a few
documents are enough."""

from __future__ import annotations

import numpy as np
import pytest

from agentos_mem.query.kb import SectionANN, rank_sections, search_docs, section_ann, section_index, selected_docs, settings_dense
from tests.kit.knowledge import item, kb_settings, module_ws, refine_clean, write_selection

DOCS = {
    "PostgreSQL 逻辑复制": ("10_concepts/cs", "# PostgreSQL 逻辑复制\n\n## 概念\n\n逻辑复制基于发布和订阅，按表复制数据变更。\n\n"
                        "## 配置\n\n把 wal_level 设为 logical，然后创建 publication 和 subscription。\n"),
    "数据库备份流程": ("20_methods", "# 数据库备份流程\n\n## 步骤\n\n第一步停止写入，第二步导出快照，第三步校验并上传。\n\n"
                  "## 注意\n\nThe replication slot must be dropped before the logical backup starts.\n"),
    "Redis cache notes": ("10_concepts/cs", "# Redis cache notes\n\n## Eviction\n\nWhen memory is full Redis evicts keys by the "
                          "configured policy, allkeys-lru being the usual choice.\n\n## Persistence\n\nRDB snapshots and the "
                          "append-only file keep data across restarts.\n"),
    "参考手册": ("40_references", "# 参考手册\n\n## 索引\n\nB 树索引适合范围查询，哈希索引只适合等值查询。\n"),
}
QUERIES = ["逻辑复制怎么配置", "how does Redis evict keys", "备份的步骤", "B 树索引适合什么查询", "append-only file", "发布和订阅"]


@pytest.fixture(scope="module")
def kb(tmp_path_factory, kit_cache):
    from agentos_mem.knowledge.decisions import decide

    with module_ws(tmp_path_factory, "kb-ann") as home, pytest.MonkeyPatch.context() as mp:
        mp.setenv("AGENTOS_KB_ANN_MIN_SECTIONS", "2")
        for n, (title, (category, body)) in enumerate(DOCS.items()):
            item(home, "knowledge/clipping", f"d{n}.md", body, title=title, category=category, source=f"https://example.org/d{n}")
        ids = refine_clean(kit_cache)
        settings = kb_settings()
        for title in DOCS:
            decide(settings, ids[title], "approve", "default")
        write_selection(home, "task", "categories: [10_concepts/cs, 20_methods]\n")
        yield {"home": home, "settings": settings, "ids": ids, "mp": mp, "kit_cache": kit_cache}


def _exact(settings):
    return settings.model_copy(update={"kb_ann_min_sections": 10**9})


def _top(settings, query, **kw):
    return [(h["doc_id"], h["anchor"]) for h in search_docs(settings, "default", query, **kw)]


def test_the_nightly_embedding_publishes_the_index_and_search_answers_as_exact_search(kb):
    from agentos_mem.index.section_ann import read_manifest
    from agentos_mem.index.vectors import embed_sections

    s = kb["settings"]
    first = embed_sections(s)
    assert first["ann"]["status"] == "published" and first["ann"]["sections"] == first["sections"]
    assert read_manifest(s)["collections"]["global"]["units"] == first["sections"]
    assert embed_sections(s)["ann"]["status"] == "unchanged"  # nothing new: no new generation
    from agentos_mem.index.section_ann import ann_store
    from agentos_mem.index.stages import section_ann_drift

    counts: dict = {}
    assert section_ann_drift(s, settings_dense(s).embedder.identity, counts) == []  # what `agentos doctor` checks
    assert counts["global"] == {"user": None, "manifest": first["sections"], "vector": first["sections"]}
    assert "built with" in section_ann_drift(s, "another-embedder", {})[0]
    manifest = ann_store(s).current().manifest_path
    saved = manifest.read_text(encoding="utf-8")
    manifest.write_text("{", encoding="utf-8")  # damaged: doctor says so, and search goes exact
    try:
        assert "knowledge section index" in section_ann_drift(s, settings_dense(s).embedder.identity, {})[0]
    finally:
        manifest.write_text(saved, encoding="utf-8")

    ann = section_ann(s)
    assert ann is not None and len(ann.keys) == first["sections"]
    assert ann.identity == settings_dense(s).embedder.identity  # the vectors the search's own embedder makes
    for q in QUERIES:
        for mode in ("dense", "hybrid"):
            assert _top(s, q, mode=mode, k=5) == _top(_exact(s), q, mode=mode, k=5), (q, mode)
        # a selection narrows what the index returns (its neighbours outside the selection are dropped)
        sel = search_docs(s, "default", q, selection="task", k=5)
        assert all(h["doc_id"] != kb["ids"]["参考手册"] for h in sel)
        assert [(h["doc_id"], h["anchor"]) for h in sel] == _top(_exact(s), q, selection="task", k=5)


def test_a_document_approved_after_the_nightly_is_searchable_at_once_and_indexed_the_next_night(kb):
    from agentos_mem.index.vectors import embed_sections
    from agentos_mem.knowledge.decisions import decide
    from tests.kit.knowledge import refine_all

    s = kb["settings"]
    embed_sections(s)
    before = section_ann(s)
    item(kb["home"], "knowledge/clipping", "late.md", "# Kafka 消费者组\n\n## 再均衡\n\n消费者组里成员变化时触发再均衡，分区重新分配。\n",
         title="Kafka 消费者组", category="10_concepts/cs", source="https://example.org/kafka")
    report = refine_all(kb["kit_cache"])
    late = next(d["doc_id"] for d in report["refined"] if d["title"] == "Kafka 消费者组")
    decide(s, late, "approve", "default")

    hits = search_docs(s, "default", "消费者组再均衡", mode="dense", k=3)
    assert hits[0]["doc_id"] == late  # not in the index yet: scored exactly beside it
    assert not any(k.startswith(late) for k in section_ann(s).keys) and section_ann(s) is before

    night = embed_sections(s)
    assert night["ann"]["status"] == "published" and night["ann"]["added"] >= 1 and night["ann"]["removed"] == 0
    now = section_ann(s)
    assert now is not before and any(k.startswith(late) for k in now.keys)  # a reader moves to the new generation
    assert search_docs(s, "default", "消费者组再均衡", mode="hybrid", k=3)[0]["doc_id"] == late


def test_nearest_sections_come_from_the_index_and_missing_ones_are_scored_exactly(kb, tmp_path):
    """At the ranking level: an index that holds only some sections (a stand-in for one a night old) still ranks
    every section, with the index's cosines equal to exact ones."""
    from agentos_mem.embedders import make_settings_embedder
    from agentos_mem.query.kb import Dense
    from agentos_mem.storage.vector_index import VectorIndex

    s = kb["settings"]
    index = section_index(selected_docs(s, "default"))
    emb = make_settings_embedder(s)
    dense = Dense(emb)
    all_idx = np.arange(len(index.units))
    exact = dense.cosine(index, all_idx, "如何配置逻辑复制")
    keys = index.section_keys()
    held = [i for i in range(len(keys)) if i % 2 == 0]
    vi = VectorIndex(tmp_path / "chroma")
    vi.create("global", embedder_identity=emb.identity, embedder_spec=s.embedder, scope="global")
    vi.add("global", [keys[i] for i in held], np.stack([index.vectors[emb.identity][i] for i in held]), [{"hash": "x"} for _ in held])
    ann = SectionANN(vi, frozenset(keys[i] for i in held), emb.identity)
    try:
        got = rank_sections(index, "如何配置逻辑复制", k=len(keys), mode="dense", dense=dense, ann=ann, ann_min=2)
        assert sorted(i for i, _ in got) == list(range(len(keys)))  # every section, held by the index or not
        for i, c in got:
            assert abs(c - exact[i]) < 1e-4
        assert [i for i, _ in got][:3] == list(np.argsort(-exact, kind="stable")[:3])
        hybrid = rank_sections(index, "如何配置逻辑复制", k=5, mode="hybrid", dense=dense, ann=ann, ann_min=2)
        assert hybrid[0][0] == rank_sections(index, "如何配置逻辑复制", k=5, mode="hybrid", dense=dense)[0][0]
    finally:
        vi.close()
