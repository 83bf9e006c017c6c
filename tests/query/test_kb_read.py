"""The knowledge read path (query/kb.py) on real refined and published documents: the three conditions
(ready, visible, selected), editable selections, section-level search in Chinese and English with exact
phrases, the outline, and bounded section pages walked with a cursor."""

from __future__ import annotations

import pytest

from agentos_mem.query.kb import KBQueryError, doc_map, kb_terms, read_doc, read_section, search_docs
from tests.kit.knowledge import item, kb_settings, module_ws, refine_all, refine_clean, write_selection

# A long Chinese section: many lines, and one line longer than any page.
LONG_LINES = [f"第{i}段：逻辑复制的订阅端按事务顺序应用变更，每个事务在提交时才对订阅者可见，冲突需要人工处理。" * 3 for i in range(1, 41)]
LONG_LINES.insert(20, "超长的一行" + "没有任何换行的中文正文持续很久" * 120 + "结尾")
LONG_SECTION = "## 长章节\n\n" + "\n\n".join(LONG_LINES)

PG = ("# PostgreSQL 逻辑复制\n\nPostgreSQL 的逻辑复制把数据变更按表发送给订阅者。\n\n"
      "## 概念\n\n逻辑复制基于发布和订阅：发布端定义发布，订阅端创建订阅。\n\n"
      "## 配置\n\n需要把 wal_level 设为 logical，并重启数据库。\n\n"
      "## Logical decoding\n\nLogical decoding streams row changes out of the write-ahead log. "
      "Logical replication in PostgreSQL is built on top of it.\n\n"
      f"{LONG_SECTION}\n\n### 子节\n\n子节的内容只有一句话。\n")
BACKUP = ("# 数据库备份流程\n\n## 步骤\n\n第一步停止写入，第二步导出快照，第三步校验并上传。\n\n"
          "## 注意\n\nThe replication slot must be dropped before the logical backup starts. "
          "复制槽要先删除，再做逻辑备份。\n")


@pytest.fixture(scope="module")
def kb(tmp_path_factory, kit_cache):
    """One workspace for the module: two selected documents, and one of each kind that must never appear."""
    from agentos_mem.knowledge.decisions import decide

    with module_ws(tmp_path_factory, "kb") as home:
        clip = "knowledge/clipping"
        item(home, clip, "pg.md", PG, title="PostgreSQL 逻辑复制", category="10_concepts/cs", source="https://www.postgresql.org/docs/pg")
        item(home, clip, "backup.md", BACKUP, title="数据库备份流程", category="20_methods", source="https://www.postgresql.org/docs/bk")
        item(home, clip, "pending.md", "# 待审文档\n\n斑马 pendingzebra 还没有审核。\n", title="待审文档", category="10_concepts/cs")
        item(home, clip, "rejected.md", "# 被拒文档\n\n袋鼠 rejectedquokka 被拒绝了。\n", title="被拒文档", category="10_concepts/cs")
        item(home, clip, "ref.md", "# 参考手册\n\n袋熊 unselectedwombat 是参考资料。\n", title="参考手册", category="40_references")
        item(home, "personal", "bob.md", "# 鲍勃的笔记\n\n鲍勃 bobsecret 的私人笔记。\n", title="鲍勃的笔记", scope="personal",
              owner="bob", category="10_concepts/cs")
        ids = refine_clean(kit_cache)
        settings = kb_settings()
        for title in ("PostgreSQL 逻辑复制", "数据库备份流程", "参考手册"):
            decide(settings, ids[title], "approve", "default")
        decide(settings, ids["被拒文档"], "reject", "default")
        decide(settings, ids["鲍勃的笔记"], "approve", "bob")
        sel = write_selection(home, "task", "categories: [10_concepts/cs, 20_methods]\n")
        yield {"home": home, "settings": settings, "ids": ids, "pg": ids["PostgreSQL 逻辑复制"], "backup": ids["数据库备份流程"],
               "sel": sel}


def _hidden(settings, user, doc_id, word, selection=None):
    """The document is in no answer: map, search, outline, section."""
    assert doc_id not in [d["id"] for d in doc_map(settings, user, selection=selection)]
    assert all(h["doc_id"] != doc_id for h in search_docs(settings, user, word, selection=selection, mode="bm25"))
    for call in (lambda: read_doc(settings, user, doc_id, selection=selection),
                 lambda: read_section(settings, user, doc_id, "_preamble", selection=selection)):
        with pytest.raises(KBQueryError) as e:
            call()
        assert str(e.value) == f"no document {doc_id} in your selected, published knowledge"


def test_terms_are_words_chinese_characters_and_bigrams():
    assert kb_terms("PostgreSQL 的逻辑复制, WAL_Level!") == ["postgresql", "的", "的逻", "逻", "逻辑", "辑", "辑复", "复", "复制", "制", "wal", "level"]
    assert kb_terms("What is the ＡＰＩ") == ["api"]  # stop words dropped, full-width folded


def test_only_ready_visible_selected_documents_appear(kb):
    s, ids = kb["settings"], kb["ids"]
    everything = {d["id"] for d in doc_map(s, "default")}
    assert everything == {kb["pg"], kb["backup"], ids["参考手册"]}
    _hidden(s, "default", ids["待审文档"], "pendingzebra 斑马")  # pending
    _hidden(s, "default", ids["被拒文档"], "rejectedquokka 袋鼠")  # rejected
    _hidden(s, "default", ids["鲍勃的笔记"], "bobsecret 鲍勃")  # another user's personal document
    _hidden(s, "default", ids["参考手册"], "unselectedwombat 袋熊", selection="task")  # not in the task's selection
    # the same calls do find them where all three conditions hold
    assert search_docs(s, "bob", "bobsecret", mode="bm25")[0]["doc_id"] == ids["鲍勃的笔记"]
    assert search_docs(s, "default", "unselectedwombat", mode="bm25")[0]["doc_id"] == ids["参考手册"]
    assert read_doc(s, "bob", ids["鲍勃的笔记"])["title"] == "鲍勃的笔记"
    # an unknown id reads exactly like someone else's document: nothing is revealed
    with pytest.raises(KBQueryError, match="^no document nosuch in your selected, published knowledge$"):
        read_doc(s, "default", "nosuch")


def test_the_map_lists_title_scope_summary_and_size(kb):
    m = {d["id"]: d for d in doc_map(kb["settings"], "default", selection="task")}
    assert set(m) == {kb["pg"], kb["backup"]}
    pg = m[kb["pg"]]
    assert (pg["title"], pg["scope"], pg["category"]) == ("PostgreSQL 逻辑复制", "system", "10_concepts/cs")
    assert pg["summary"] and pg["sections"] == 6 and pg["tokens"] > 3000


def test_an_edited_selection_applies_from_the_next_call(kb):
    s, sel = kb["settings"], kb["sel"]
    (sel / "edit.yaml").write_text(f"documents: [{kb['pg']}]\n", encoding="utf-8")
    first = search_docs(s, "default", "数据库", selection="edit", mode="bm25")
    assert {h["doc_id"] for h in first} == {kb["pg"]}
    (sel / "edit.yaml").write_text("categories: [20_methods]\nscopes: [system]\n", encoding="utf-8")
    assert [d["id"] for d in doc_map(s, "default", selection="edit")] == [kb["backup"]]
    assert {h["doc_id"] for h in search_docs(s, "default", "数据库", selection="edit", mode="bm25")} == {kb["backup"]}
    assert first[0]["doc_id"] == kb["pg"]  # what was answered before stays as it was
    assert [d["id"] for d in doc_map(s, "default", selection={"documents": [kb["pg"]], "scopes": ["system"]})] == [kb["pg"]]  # inline
    (sel / "edit.yaml").write_text("scopes: [personal]\n", encoding="utf-8")
    assert doc_map(s, "default", selection="edit") == []
    with pytest.raises(KBQueryError, match="no knowledge selection named 'nosuch'"):
        doc_map(s, "default", selection="nosuch")
    with pytest.raises(KBQueryError, match="not a selection name"):
        search_docs(s, "default", "数据库", selection="../task")
    (sel / "typo.yaml").write_text("category: [20_methods]\n", encoding="utf-8")
    with pytest.raises(KBQueryError, match="unknown keys"):
        doc_map(s, "default", selection="typo")


def test_search_finds_the_section_in_chinese_and_english(kb):
    s = kb["settings"]
    zh = search_docs(s, "default", "wal_level 怎么设置", selection="task", mode="bm25")
    assert (zh[0]["doc_id"], zh[0]["anchor"], zh[0]["section"]) == (kb["pg"], "配置", "配置")
    assert "wal_level" in zh[0]["snippet"] and zh[0]["path"] == ["PostgreSQL 逻辑复制"]
    assert zh[0]["title"] == "PostgreSQL 逻辑复制" and zh[0]["lines"][0] < zh[0]["lines"][1] and zh[0]["tokens"] > 0

    en = search_docs(s, "default", "decoding the write-ahead log", selection="task", mode="bm25")
    assert en[0]["anchor"] == "logical-decoding" and "write-ahead log" in en[0]["snippet"]

    sub = search_docs(s, "default", "发布和订阅", selection="task", mode="bm25", k=50)
    assert sub[0]["anchor"] == "概念" and "发布和订阅" in sub[0]["snippet"]
    keys = [(h["doc_id"], h["anchor"]) for h in sub]
    assert len(keys) == len(set(keys))  # one hit per section
    long_hit = next(h for h in sub if h["anchor"] == "长章节")  # a long section still gives one short snippet
    assert len(long_hit["snippet"]) <= 162 and "订阅" in long_hit["snippet"]
    assert search_docs(s, "default", "nothingmatchesthis", selection="task", mode="bm25") == []


def test_quoted_phrases_match_exactly(kb):
    s = kb["settings"]
    # the backup document has "replication" and "logical" apart, and 复制 / 逻辑 apart: without quotes it matches
    loose = search_docs(s, "default", "logical replication", selection="task", mode="bm25", k=50)
    assert kb["backup"] in {h["doc_id"] for h in loose}
    exact = search_docs(s, "default", '"Logical Replication"', selection="task", mode="bm25", k=50)
    assert exact and {h["doc_id"] for h in exact} == {kb["pg"]}
    assert exact[0]["anchor"] == "logical-decoding" and "Logical replication in PostgreSQL" in exact[0]["snippet"]
    assert kb["backup"] in {h["doc_id"] for h in search_docs(s, "default", "逻辑 复制", selection="task", mode="bm25", k=50)}
    for q in ("“逻辑复制”", "「逻辑复制」", '"逻辑复制" 订阅'):
        hits = search_docs(s, "default", q, selection="task", mode="bm25", k=50)
        assert hits and {h["doc_id"] for h in hits} == {kb["pg"]}, q
    zh = search_docs(s, "default", "“基于发布和订阅”", selection="task", mode="bm25")
    assert [h["anchor"] for h in zh] == ["概念"] and "基于发布和订阅" in zh[0]["snippet"]
    assert search_docs(s, "default", '"replication logical"', selection="task", mode="bm25") == []
    for bad in ("", "   ", '""', "？！"):
        with pytest.raises(KBQueryError):
            search_docs(s, "default", bad)


def test_read_doc_gives_the_outline_with_anchors(kb):
    d = read_doc(kb["settings"], "default", kb["pg"], selection="task")
    assert d["title"] == "PostgreSQL 逻辑复制" and d["summary"]
    assert [o["anchor"] for o in d["outline"]] == ["postgresql-逻辑复制", "概念", "配置", "logical-decoding", "长章节", "子节"]
    assert d["outline"][1]["lines"] == [5, 8] and d["outline"][5]["level"] == 3
    assert "`#长章节`" in d["outline_text"] and "`#子节`" in d["outline_text"]


def _expected(body: str, heading: str, until: str | None) -> str:
    lines = body.rstrip("\n").split("\n")
    a = lines.index(heading)
    b = lines.index(until) if until else len(lines)
    return "\n".join(lines[a:b]).rstrip("\n")


def _walk(settings, doc_id, anchor, **kw) -> list[dict]:
    pages = [read_section(settings, "default", doc_id, anchor, **kw)]
    while pages[-1]["next_cursor"]:
        pages.append(read_section(settings, "default", doc_id, anchor, cursor=pages[-1]["next_cursor"], selection=kw.get("selection")))
        assert len(pages) < 100
    return pages


def test_read_section_pages_walk_a_long_section_exactly(kb):
    s, pg = kb["settings"], kb["pg"]
    pages = _walk(s, pg, "长章节", page_tokens=300, selection="task")
    whole = _expected(PG, "## 长章节", "### 子节")
    assert len(whole) > 5000
    assert "".join(p["text"] for p in pages) == whole.rstrip("\n") + "\n"  # the newline before the subsection's heading
    assert [p["page"] for p in pages] == list(range(1, len(pages) + 1)) and {p["pages"] for p in pages} == {len(pages)}
    assert len(pages) > 10 and pages[-1]["next_cursor"] is None
    assert all(p["tokens"] <= 300 for p in pages)
    assert pages[0]["subsections"] == [{"anchor": "子节", "title": "子节"}] and pages[0]["section"] == "长章节"
    assert pages[0]["lines"][0] == pages[0]["section_lines"][0] and pages[-1]["lines"][1] == pages[-1]["section_lines"][1]
    # the over-long line is cut by characters, Chinese intact, and nothing is lost or repeated
    assert sum("没有任何换行的中文正文持续很久" in p["text"] for p in pages) >= 3

    tree = _walk(s, pg, "#长章节", page_tokens=2000, subtree=True, selection="task")
    assert "".join(p["text"] for p in tree) == _expected(PG, "## 长章节", None)
    short = read_section(s, "default", pg, "配置")
    assert (short["text"], short["pages"], short["next_cursor"]) == ("## 配置\n\n需要把 wal_level 设为 logical，并重启数据库。\n", 1, None)

    cursor = pages[0]["next_cursor"]
    with pytest.raises(KBQueryError, match="this cursor is for"):
        read_section(s, "default", pg, "配置", cursor=cursor)
    with pytest.raises(KBQueryError, match="not a read_section cursor"):
        read_section(s, "default", pg, "长章节", cursor="garbage")
    with pytest.raises(KBQueryError, match="no section #nosuch"):
        read_section(s, "default", pg, "nosuch")
    (kb["sel"] / "only-backup.yaml").write_text(f"documents: [{kb['backup']}]\n", encoding="utf-8")
    with pytest.raises(KBQueryError, match="^no document"):  # a cursor opens nothing outside the selection
        read_section(s, "default", pg, "长章节", cursor=cursor, selection="only-backup")


def test_a_cursor_from_before_a_change_is_refused(ws, kit_cache):
    from agentos_mem.knowledge.decisions import decide

    body = "# 手册\n\n## 安装\n\n" + "\n".join("安装步骤说明第%d行，先下载再校验。" % i for i in range(60)) + "\n"
    item(ws, "knowledge/clipping", "m.md", body, title="手册", category="20_methods")
    r = refine_all(kit_cache)
    doc_id = r["refined"][0]["doc_id"]
    settings = kb_settings()
    decide(settings, doc_id, "approve", "default")
    first = read_section(settings, "default", doc_id, "安装", page_tokens=100)
    assert first["next_cursor"] and first["pages"] > 2
    card = next((ws / "agent-sync/03_knowledge").rglob(f"{doc_id}.md"))
    card.write_text(card.read_text(encoding="utf-8").replace("第3行", "第三行"), encoding="utf-8")
    with pytest.raises(KBQueryError, match="no document"):  # edited by hand: not the text that was published
        read_section(settings, "default", doc_id, "安装", cursor=first["next_cursor"])
    assert refine_all(kit_cache)["edited"] == [doc_id]
    decide(settings, doc_id, "approve", "default")
    with pytest.raises(KBQueryError, match="changed since this cursor"):
        read_section(settings, "default", doc_id, "安装", cursor=first["next_cursor"])
    again = read_section(settings, "default", doc_id, "安装", page_tokens=100)
    assert "第三行" in "".join(p["text"] for p in [again, *_rest(settings, doc_id, again)])


def _rest(settings, doc_id, page):
    out = []
    while page["next_cursor"]:
        page = read_section(settings, "default", doc_id, "安装", cursor=page["next_cursor"])
        out.append(page)
    return out


def test_bm25_hybrid_and_dense_modes(kb):
    s = kb["settings"]
    for mode in ("bm25", "hybrid", "dense"):
        hits = search_docs(s, "default", "发布和订阅是什么", selection="task", mode=mode, k=3)
        assert hits and len(hits) <= 3, mode
        assert "概念" in [h["anchor"] for h in hits], (mode, hits)
        assert all(h["snippet"] for h in hits)
    hy = search_docs(s, "default", "wal_level logical", selection="task", mode="hybrid", k=3)
    assert hy[0]["anchor"] == "配置" and hy[0]["score"] >= hy[-1]["score"]
    # a phrase filters in every mode
    dense = search_docs(s, "default", "“基于发布和订阅”", selection="task", mode="dense")
    assert [h["anchor"] for h in dense] == ["概念"]
    with pytest.raises(KBQueryError, match="mode must be"):
        search_docs(s, "default", "订阅", mode="vector")
    with pytest.raises(KBQueryError, match="k must be"):
        search_docs(s, "default", "订阅", k=0)


def test_the_write_side_embeds_sections_and_a_search_writes_nothing(kb):
    """index/vectors.py fills the embedding cache with every published section (once); knowledge search only
    reads it: a search leaves cache.db byte for byte as it was."""
    import sqlite3

    from agentos_mem.index.vectors import embed_sections
    from agentos_mem.kernel.workspace import Workspace

    s = kb["settings"]
    cache_db = Workspace(s.home).index_dir / "cache.db"
    first = embed_sections(s)
    assert first["sections"] > 0 and first["embedder"]
    again = embed_sections(s)
    assert again["embedded"] == 0 and again["sections"] == first["sections"]  # nothing new: nothing embedded
    def vectors():
        con = sqlite3.connect(cache_db)
        try:
            return con.execute("select embedder, text_hash, vec from vectors order by 1, 2").fetchall()
        finally:
            con.close()

    assert len(vectors()) >= first["sections"] - 1  # one row per distinct section text
    before = vectors()
    for mode in ("hybrid", "dense"):
        assert search_docs(s, "default", "逻辑复制的配置", mode=mode, k=3)
    assert vectors() == before  # read, never written (a section without a vector: tests/cli/test_cli_kb_vectors.py)


def test_hybrid_leans_on_meaning_when_bm25_has_no_clear_best_and_the_sides_agree():
    """Sections that all share the query's words (news on one event) give BM25 no clear best: when the best section by
    meaning is among BM25's first page, BM25's weight drops to ALPHA_CROWDED; a BM25 best that stands CLEAR_TOP above
    the second, or a meaning side that points elsewhere (a weak cross-lingual cosine), keeps ALPHA
    (bench/results/beir-*.md, links-vue.md)."""
    import numpy as np

    from agentos_mem.query import kb as K
    from agentos_mem.query.fusion import AGREE_TOP, ALPHA_CROWDED, CLEAR_TOP

    crowded = np.array([0.0, 7.9, 8.1, 7.6, 0.0])
    clear = np.array([0.0, 12.0, 6.0, 5.5, 0.0])
    agrees = np.array([0.2, 0.5, 0.3, 0.9, 0.1])  # meaning's best (section 3) is among BM25's matches
    assert K.hybrid_alpha(crowded, agrees) == ALPHA_CROWDED < K.ALPHA
    assert K.hybrid_alpha(clear, agrees) == K.ALPHA
    many = np.concatenate([np.linspace(8.0, 7.0, AGREE_TOP), np.zeros(5)])
    elsewhere = np.zeros(len(many))
    elsewhere[-1] = 0.9  # meaning's best is a section BM25 does not rank on its first page
    assert K.hybrid_alpha(many, elsewhere) == K.ALPHA
    assert K.hybrid_alpha(np.array([4.2]), np.array([0.8])) == K.ALPHA  # one section: nothing to be crowded by
    assert K.hybrid_alpha(crowded, agrees, alpha=0.1) == 0.1  # an explicit weight below the crowded one is kept
    assert K.hybrid_alpha(np.array([1 + CLEAR_TOP, 1.0]), np.array([0.1, 0.9])) == K.ALPHA  # exactly CLEAR_TOP: clear


def test_search_sees_every_change_to_the_registry_and_the_cards(ws, kit_cache):
    """A process that keeps what it made of the registry (a search on 10,000 documents re-reads nothing) still sees,
    at its next call, a document approved or rejected by another process and a card edited by hand."""
    import subprocess
    import sys

    from agentos_mem.kernel.workspace import kb_paths
    from agentos_mem.knowledge.decisions import decide

    item(ws, "knowledge/clipping", "a.md", "# 长颈鹿手册\n\n长颈鹿 giraffeword 每天睡两个小时。\n", title="长颈鹿手册", category="20_methods")
    item(ws, "knowledge/clipping", "b.md", "# 犀牛手册\n\n犀牛 rhinoword 的角由角蛋白构成。\n", title="犀牛手册", category="20_methods")
    ids = refine_clean(kit_cache)
    a, b = ids["长颈鹿手册"], ids["犀牛手册"]
    s = kb_settings()
    decide(s, a, "approve", "default")

    def found(word):
        return [h["doc_id"] for h in search_docs(s, "default", word, mode="bm25")]

    assert found("giraffeword") == [a] and found("rhinoword") == []
    decide(s, b, "approve", "default")
    assert found("rhinoword") == [b]
    # another process takes a published document back (here straight in SQLite)
    db = kb_paths(s)["db"]
    subprocess.run([sys.executable, "-c", "import sqlite3, sys; c = sqlite3.connect(sys.argv[1]); "
                    "c.execute(\"update documents set status='rejected' where id=?\", [sys.argv[2]]); c.commit()", str(db), b], check=True)
    assert found("rhinoword") == []
    card = next((ws / "agent-sync/03_knowledge").rglob(f"{a}.md"))
    card.write_text(card.read_text(encoding="utf-8").replace("两个小时", "三个小时"), encoding="utf-8")
    assert found("giraffeword") == []  # edited by hand: not the text that was reviewed, so not served
    assert a not in [d["id"] for d in doc_map(s, "default")]
