"""The nightly's knowledge step on a night when nothing changed: ``embed_sections`` notes what it made the sections'
vectors and ANN index from, and skips reading and masking every card when all of it is the same (13 of 25 s of a
no-change nightly at 10,000 documents). Whatever a user changes (a document published, a card edited by hand, the
cache removed) is embedded and published again."""

from __future__ import annotations

import pytest

from tests.kit.knowledge import item, kb_settings, refine_clean


@pytest.fixture
def two_docs(ws, kit_cache, monkeypatch):
    monkeypatch.setenv("AGENTOS_KB_ANN_MIN_SECTIONS", "2")  # the ANN index from two sections on
    item(ws, "knowledge/clipping", "a.md", "# 海豚手册\n\n## 睡眠\n\n海豚 dolphinword 睡觉时只闭一只眼。\n\n## 声音\n\n海豚用哨声互相称呼。\n",
         title="海豚手册", category="20_methods")
    item(ws, "knowledge/clipping", "b.md", "# Octopus notes\n\n## Hearts\n\nAn octopus octopusword has three hearts.\n\n## Ink\n\nInk hides it.\n",
         title="Octopus notes", category="20_methods")
    return refine_clean(kit_cache)


def test_an_unchanged_night_skips_and_any_change_is_embedded_again(ws, two_docs):
    from agentos_mem.index.vectors import embed_sections
    from agentos_mem.kernel.workspace import Workspace
    from agentos_mem.knowledge.decisions import decide
    from agentos_mem.query.kb import search_docs

    s = kb_settings()
    decide(s, two_docs["海豚手册"], "approve", "default")
    first = embed_sections(s)
    assert first["sections"] >= 2 and first["ann"]["status"] != "unchanged" and "stamp" not in first
    again = embed_sections(s)
    assert again["stamp"] == "unchanged" and again["embedded"] == 0 and again["sections"] == first["sections"]
    assert again["ann"]["status"] == "unchanged" and again["ann"]["generation"] == first["ann"]["generation"]

    decide(s, two_docs["Octopus notes"], "approve", "default")  # a document published
    published = embed_sections(s)
    assert "stamp" not in published and published["sections"] > first["sections"]
    assert published["ann"]["generation"] != first["ann"]["generation"]
    assert embed_sections(s)["stamp"] == "unchanged"

    card = next((ws / "agent-sync/03_knowledge").rglob(f"{two_docs['海豚手册']}.md"))  # a card edited by hand
    card.write_text(card.read_text(encoding="utf-8").replace("一只眼", "两只眼"), encoding="utf-8")
    edited = embed_sections(s)
    assert "stamp" not in edited and edited["sections"] < published["sections"]  # not the reviewed text: left out
    assert [h["doc_id"] for h in search_docs(s, "default", "dolphinword", mode="bm25")] == []

    (Workspace(s.home).index_dir / "cache.db").unlink()  # the cache removed: every section is embedded again
    anew = embed_sections(s)
    assert "stamp" not in anew and anew["embedded"] == anew["sections"] == edited["sections"]


def test_each_sections_sentences_are_embedded_beside_it_and_a_workspace_from_before_gets_them_at_the_next_night(ws, two_docs):
    from agentos_mem.index.vectors import embed_sections
    from agentos_mem.knowledge.decisions import decide
    from agentos_mem.query import kb
    from agentos_mem.storage.embed_cache import open_cache
    from agentos_mem.storage.kb_sections import embed_sentences, text_hash

    s = kb_settings()
    for doc in two_docs.values():
        decide(s, doc, "approve", "default")  # approving embeds the document's sections and their sentences at once
    index = kb.section_index(kb.selected_docs(s, "default"))
    sentences = {text_hash(t) for u in index.units for t in embed_sentences(u)}
    cache = open_cache(s)
    try:
        identity = kb.settings_dense(s).embedder.identity
        assert set(cache.vectors(identity, list(sentences))) == sentences
        # a workspace embedded before sentences were: its sections' vectors only
        cache.con.execute(f"delete from vectors where text_hash in ({','.join('?' * len(sentences))})", list(sentences))
        cache.con.commit()
    finally:
        cache.close()
    night = embed_sections(s)
    assert night["embedded"] == 0 and night["sentences_embedded"] == len(sentences)  # the sentences alone, once
    unchanged = embed_sections(s)
    assert unchanged["stamp"] == "unchanged" and unchanged["embedded"] == unchanged["sentences_embedded"] == 0
    hits = kb.search_docs(s, "default", "海豚睡觉时闭几只眼")
    assert hits and hits[0]["section"] == "睡眠"
