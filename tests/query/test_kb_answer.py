"""Answers from the knowledge base (query/kb_answer.py) on real refined and published documents: extractive
answers with citations in Chinese and English, the token budget, what the base does not cover, the chat-model
path against a real loopback chat server (and its fallbacks), and the three retrieval conditions."""

from __future__ import annotations

import json

import pytest

from agentos_mem.kernel.llm import ChatClient
from agentos_mem.kernel.text import count_tokens
from agentos_mem.query.kb import KBQueryError
from agentos_mem.query.kb_answer import _read, answer, key_terms
from tests.kit.chat_server import ChatServer
from tests.kit.knowledge import answer_items, item, kb_settings, module_ws, refine_clean, write_selection


@pytest.fixture(scope="module")
def kb(tmp_path_factory, kit_cache):
    """Two selected documents that answer questions, and three that hold answers no one may be given."""
    from agentos_mem.knowledge.decisions import decide

    with module_ws(tmp_path_factory, "kba") as home:
        answer_items(home)
        item(home, "knowledge/clipping", "ref.md", "# Wombat reference\n\nThe wombat gateway listens on port 7443.\n",
             title="Wombat reference", category="40_references")
        ids = refine_clean(kit_cache)
        settings = kb_settings()
        for title in ("PostgreSQL 逻辑复制", "Backup runbook", "Wombat reference"):
            decide(settings, ids[title], "approve", "default")
        decide(settings, ids["Kangaroo notes"], "approve", "bob")
        write_selection(home, "task", "categories: [10_concepts/cs, 20_methods]\n")
        yield {"home": home, "settings": settings, "ids": ids, "pg": ids["PostgreSQL 逻辑复制"], "runbook": ids["Backup runbook"]}


def _cited(ans) -> set[str]:
    return {c["doc_id"] for c in ans["citations"]} | {p["doc_id"] for p in ans["pointers"]}


def _shape(ans, budget=1200):
    assert set(ans) >= {"status", "answer", "citations", "missing", "sections_read", "tokens", "pointers", "method"}
    assert ans["tokens"] == count_tokens(ans["answer"]) and ans["tokens"] <= budget and ans["tokens_read"] <= budget
    for c in ans["citations"]:
        assert set(c) == {"doc_id", "title", "anchor", "section", "lines"} and c["lines"][0] <= c["lines"][1]
    cited = [(p["doc_id"], p["anchor"]) for p in ans["pointers"] if p["cited"]]
    assert cited == [(c["doc_id"], c["anchor"]) for c in ans["citations"]]


def test_key_terms_name_what_is_asked_about():
    assert key_terms("wal_level 怎么设置？") == ["wal_level", "设置"]
    assert key_terms("How do I configure wal_level for logical replication?") == ["configure", "wal_level", "logical", "replication"]
    assert key_terms("火星上的天气怎么样？") == ["火星", "天气"]
    assert key_terms("what about “write-ahead log”?") == ["write-ahead log"]


def test_extractive_answer_in_chinese_cites_document_and_section(kb):
    ans = answer(kb["settings"], "default", "wal_level 怎么设置？", selection="task", mode="bm25")
    _shape(ans)
    assert ans["status"] == "answered" and ans["missing"] is None and ans["method"] == "extractive"
    assert "需要把 wal_level 设为 logical，并重启数据库。 [1]" in ans["answer"]
    first = ans["citations"][0]
    assert (first["doc_id"], first["title"], first["anchor"], first["section"]) == (kb["pg"], "PostgreSQL 逻辑复制", "配置", "配置")
    assert "[1] 《PostgreSQL 逻辑复制》#配置，第" in ans["answer"] and "来源" in ans["answer"]
    assert ans["pointers"][0] == {"doc_id": kb["pg"], "anchor": "配置", "cited": True}
    assert ans["sections_read"] >= 1


def test_extractive_answer_in_english_cites_document_and_section(kb):
    ans = answer(kb["settings"], "default", "How long are monthly snapshots kept?", selection="task")  # hybrid, the default
    _shape(ans)
    assert ans["status"] == "answered" and ans["method"] == "extractive"
    # the sentence that answers leads (a caller with a small budget reads the first line), the rest in reading order
    assert ans["answer"].startswith("Monthly snapshots are kept for one year. [1]\nDaily snapshots are kept for 30 days. [1]\n\n")
    assert (ans["citations"][0]["doc_id"], ans["citations"][0]["anchor"]) == (kb["runbook"], "retention")
    assert "[1] Backup runbook #retention, lines " in ans["answer"] and "Sources:" in ans["answer"]
    two = answer(kb["settings"], "default", "verify the snapshot checksum and the subscription publishes", selection="task", mode="bm25")
    assert {c["anchor"] for c in two["citations"]} >= {"steps"}


def test_the_section_read_first_is_the_search_s_best_not_the_one_holding_most_key_terms(kb):
    # the search's fused order knows better than a count of shared words (on RGB's hard negatives, which share the
    # question's words, reading the search's best first took kb ask's answer hit 0.90 -> 0.93): the other sections
    # are still chosen for the key terms they add
    cands = [{"doc_id": kb["runbook"], "anchor": "retention", "held": ["snapshots"], "rank": 0},
             {"doc_id": kb["pg"], "anchor": "配置", "held": ["wal_level", "logical"], "rank": 1}]
    read, unread = _read(kb["settings"], "default", cands, ["snapshots", "wal_level", "logical"], 1200, selection="task")
    assert [(r["doc_id"], r["anchor"]) for r in read] == [(kb["runbook"], "retention"), (kb["pg"], "配置")] and unread == {}


def test_the_budget_bounds_what_is_read_and_answered(kb):
    s = kb["settings"]
    for budget in (50, 120, 400):
        ans = answer(s, "default", "订阅端按事务顺序应用变更吗？", selection="task", budget=budget, mode="bm25")
        _shape(ans, budget)
        assert ans["status"] == "answered" and ans["tokens_read"] > 0
        assert any(c["anchor"] == "事务顺序" for c in ans["citations"])
    small = answer(s, "default", "订阅端按事务顺序应用变更吗？", selection="task", budget=50, mode="bm25")
    big = answer(s, "default", "订阅端按事务顺序应用变更吗？", selection="task", budget=4000, mode="bm25")
    assert small["tokens_read"] <= 50 < big["tokens_read"] <= 4000
    # a question over three sections: what fits is cited, the rest is named, with pointers to where it is
    both = answer(s, "default", "wal_level and monthly snapshots", selection="task", budget=200, mode="bm25")
    _shape(both, 200)
    assert both["status"] == "answered" and {c["anchor"] for c in both["citations"]} == {"配置", "retention"}
    tight = answer(s, "default", "wal_level 和 monthly snapshots 以及 事务顺序", selection="task", budget=60, mode="bm25")
    _shape(tight, 60)
    assert tight["status"] == "partial" and tight["tokens"] <= 60 and tight["sections_read"] == 3
    assert tight["terms"]["missing"] and "只出现在本答案未采用的章节中" in tight["missing"]
    assert "知识库中没有" not in tight["missing"]  # they are in the base, just not in this answer
    uncited = {(p["doc_id"], p["anchor"]) for p in tight["pointers"] if not p["cited"]}
    assert uncited and uncited.isdisjoint((c["doc_id"], c["anchor"]) for c in tight["citations"])
    for bad in (0, 10, 100_000, "1200", True):
        with pytest.raises(KBQueryError, match="budget must be"):
            answer(s, "default", "订阅", budget=bad)
    for bad in ("", "   ", "？？"):
        with pytest.raises(KBQueryError):
            answer(s, "default", bad)
    with pytest.raises(KBQueryError, match="no knowledge selection"):
        answer(s, "default", "订阅", selection="nosuch")


def test_an_uncovered_question_says_so_in_either_language(kb):
    s = kb["settings"]
    zh = answer(s, "default", "火星上的天气怎么样？", selection="task")  # hybrid: dense ranks something, coverage decides
    _shape(zh)
    assert zh["status"] == "not_covered" and zh["citations"] == [] and zh["pointers"] == []
    assert zh["missing"] == "知识库中没有关于「火星」「天气」的内容。" and zh["answer"] == zh["missing"]
    en = answer(s, "default", "What is the weather on Mars?", selection="task")
    assert en["status"] == "not_covered" and en["citations"] == []
    assert en["missing"] == "The knowledge base has nothing on “weather”, “Mars”." and en["answer"] == en["missing"]
    for mode in ("bm25", "dense"):
        assert answer(s, "default", "What is the weather on Mars?", selection="task", mode=mode)["status"] == "not_covered"


def test_a_question_whose_words_are_only_scattered_over_sections_is_not_covered(kb):
    # each of four sections holds one of its words: together half of them or more, no section anything like an answer
    # (unrelated LoCoMo questions over the Vue docs got such "partial" answers: 0.74 of 300 were stopped, 0.92 now);
    # a question over three sections, each holding a part of it, is still answered (the budget test above)
    q = "Which tenant uploads daily to the wombat with wal_level?"
    assert key_terms(q) == ["tenant", "uploads", "daily", "wombat", "wal_level"]
    ans = answer(kb["settings"], "default", q, mode="bm25")
    _shape(ans)
    assert ans["status"] == "not_covered" and ans["citations"] == [] and ans["sections_read"] >= 3
    assert ans["answer"] == "No section of the knowledge base speaks of “tenant”, “uploads”, “daily”, “wombat”, “wal_level” together, only of a word or two apart."
    assert ans["terms"] == {"key": key_terms(q), "covered": [], "missing": key_terms(q)}
    zh = answer(kb["settings"], "default", "订阅 wombat 的 Daily snapshots 需要 wal_level 吗", mode="bm25")
    assert zh["status"] == "not_covered" and zh["answer"].startswith("知识库中没有同时讲到「订阅」「wombat」"), zh["terms"]


def test_a_partly_covered_question_names_what_is_missing(kb):
    s = kb["settings"]
    zh = answer(s, "default", "PostgreSQL 逻辑复制支持 Kafka 吗？", selection="task", mode="bm25")
    _shape(zh)
    assert zh["status"] == "partial" and zh["missing"] == "知识库中没有关于「Kafka」的内容。"
    assert zh["terms"] == {"key": ["PostgreSQL", "逻辑", "复制", "Kafka"], "covered": ["PostgreSQL", "逻辑", "复制"], "missing": ["Kafka"]}
    assert zh["citations"] and all(c["doc_id"] == kb["pg"] for c in zh["citations"])
    assert zh["answer"].endswith(zh["missing"]) and "kafka" not in zh["answer"].lower().replace("「kafka」", "")
    en = answer(s, "default", "How do I verify the backup checksum in Kubernetes?", selection="task")
    _shape(en)
    assert en["status"] == "partial" and en["missing"] == "The knowledge base has nothing on “Kubernetes”."
    assert en["citations"][0]["doc_id"] == kb["runbook"] and "Verify the checksum" in en["answer"]


def test_pending_invisible_and_unselected_documents_are_never_cited(kb):
    from agentos_mem.knowledge.decisions import decide

    s, ids = kb["settings"], kb["ids"]
    secrets = [("斑马集群的迁移窗口是什么时候？", ids["斑马集群"], "周六", None, "default"),  # pending
               ("What is the kangaroo cluster quota?", ids["Kangaroo notes"], "40 GB", None, "default"),  # bob's personal
               ("Which port does the wombat gateway listen on?", ids["Wombat reference"], "7443", "task", "default")]  # unselected
    for question, doc_id, fact, selection, user in secrets:
        with ChatServer([(200, json.dumps({"answer": f"{fact} [S1]", "citations": ["S1"], "missing": None}))]) as chat:
            ans = answer(s, user, question, selection=selection, client=ChatClient(chat.base_url, "tiny"))
            assert chat.requests == []  # nothing to answer from: the model is not asked to fill the gap
        assert ans["status"] == "not_covered", (question, ans)
        assert doc_id not in _cited(ans) and fact not in ans["answer"] and ans["citations"] == []
    # where the conditions hold, the same questions are answered from those documents
    assert "40 GB" in answer(s, "bob", "What is the kangaroo cluster quota?", mode="bm25")["answer"]
    assert "7443" in answer(s, "default", "Which port does the wombat gateway listen on?", mode="bm25")["answer"]
    decide(s, ids["斑马集群"], "approve", "default")
    ans = answer(s, "default", "斑马集群的迁移窗口是什么时候？", selection="task", mode="bm25")
    assert ans["status"] == "answered" and ids["斑马集群"] in _cited(ans) and "周六" in ans["answer"]


def _client(chat):
    return ChatClient(chat.base_url, "tiny-model", timeout=10)


def test_a_chat_model_answers_from_the_cited_sections_only(kb):
    s = kb["settings"]
    reply = {"answer": "把 wal_level 设为 logical，然后重启数据库 [S1]。", "citations": ["S1"], "missing": None}
    with ChatServer([(200, json.dumps(reply, ensure_ascii=False))]) as chat:
        ans = answer(s, "default", "wal_level 怎么设置？", selection="task", mode="bm25", client=_client(chat))
        prompt = chat.requests[0]["body"]["messages"]
    _shape(ans)
    assert ans["method"] == "llm:tiny-model" and ans["status"] == "answered" and ans["missing"] is None
    assert ans["answer"].startswith("把 wal_level 设为 logical，然后重启数据库 [S1]。")
    assert "[S1] 《PostgreSQL 逻辑复制》#配置" in ans["answer"]
    assert [(c["doc_id"], c["anchor"]) for c in ans["citations"]] == [(kb["pg"], "配置")]
    system, user = prompt[0]["content"], prompt[1]["content"]
    assert "ONLY" in system and "missing" in system
    assert "Question: wal_level 怎么设置？" in user and "[S1] PostgreSQL 逻辑复制" in user and "需要把 wal_level 设为 logical" in user
    assert "斑马" not in user and "kangaroo" not in user.lower()  # only sections that may be read reach the model

    # what the model says is missing makes the answer partial
    gap = {"answer": "需要把 wal_level 设为 logical [S1]。", "citations": ["S1"], "missing": "文档没有说明是否需要修改 max_wal_senders。"}
    with ChatServer([(200, json.dumps(gap, ensure_ascii=False))]) as chat:
        ans = answer(s, "default", "wal_level 怎么设置？", selection="task", mode="bm25", client=_client(chat))
    assert ans["status"] == "partial" and ans["missing"] == gap["missing"]

    # the model configured in the settings is used when no client is given
    with ChatServer([(200, json.dumps(reply, ensure_ascii=False))]) as chat:
        ans = answer(kb_settings(llm_base_url=chat.base_url, llm_model="cfg-model"), "default", "wal_level 怎么设置？", selection="task", mode="bm25")
        assert len(chat.requests) == 1
    assert ans["method"] == "llm:cfg-model"


@pytest.mark.parametrize("replies, why", [
    ([(200, json.dumps({"answer": "设为 logical [S7]", "citations": ["S7"], "missing": None}))], "cited 'S7'"),
    ([(500, "")], "failed"),
    ([(200, "I think you should set it to logical.")], "JSON"),
    ([(200, json.dumps({"answer": "", "citations": ["S1"]}))], "no 'answer'"),
    ([(200, json.dumps({"answer": "设为 logical", "citations": []}))], "cites no section"),
])
def test_an_unusable_model_answer_falls_back_to_extractive(kb, replies, why):
    with ChatServer(replies) as chat:
        ans = answer(kb["settings"], "default", "wal_level 怎么设置？", selection="task", mode="bm25", client=_client(chat))
        assert chat.requests
    _shape(ans)
    assert ans["method"].startswith("extractive (model failed: ") and why in ans["method"], ans["method"]
    assert ans["status"] == "answered" and "需要把 wal_level 设为 logical" in ans["answer"]
    assert [(c["doc_id"], c["anchor"]) for c in ans["citations"]][0] == (kb["pg"], "配置")


def test_a_question_in_the_other_language_is_answered_through_the_dictionary(kb):
    """An English question over the Chinese document, a Chinese one over the English runbook: half their key terms
    or more meet a section through CC-CEDICT (restart / 重启, database / 数据库; 验证 / verify, 快照 / snapshot), so
    it is read and cited; a question whose words meet nothing there still says so. What the dictionary lacks stays
    uncovered and is named ("replication": CC-CEDICT's 复制 is "to copy", not "to replicate")."""
    s = kb["settings"]
    en = answer(s, "default", "Does the database need a restart?", selection="task")
    _shape(en)
    assert en["status"] == "answered" and kb["pg"] in {c["doc_id"] for c in en["citations"]}, en
    assert "重启数据库" in en["answer"]
    zh = answer(s, "default", "怎么验证快照？", selection="task")
    _shape(zh)
    assert zh["status"] == "answered" and kb["runbook"] in {c["doc_id"] for c in zh["citations"]}, zh
    assert "Verify the checksum of the snapshot" in zh["answer"]
    # what the dictionary cannot carry (configure / 配置 is "configuration" there, 复制 "to copy") leaves one of three
    # key terms met: fewer than half, so the answer says what the base lacks rather than quote a section for "logical"
    gap = answer(s, "default", "How do I configure logical replication?", selection="task")
    assert gap["status"] == "not_covered" and gap["citations"] == [] and "“replication”" in gap["missing"] and "logical" not in gap["missing"]
    for unrelated in ("How do I bake sourdough bread?", "火星上的天气怎么样？", "Which cricket team won the league?"):
        assert answer(s, "default", unrelated, selection="task")["status"] == "not_covered", unrelated
