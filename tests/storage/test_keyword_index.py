"""BM25 keyword index: parity with rank-bm25 on the shared golden data, save/load, edge cases."""

from __future__ import annotations

import json

import numpy as np
import pytest

from agentos_mem.storage.keyword_index import KeywordIndex, KeywordIndexError


@pytest.fixture
def golden(eval_dir):
    return json.loads((eval_dir / "bm25_tokenizer_reference" / "bm25_golden.json").read_text(encoding="utf-8"))


def _index(case) -> KeywordIndex:
    ids = [f"d{i}" for i in range(len(case["corpus_tokens"]))]
    return KeywordIndex.build(ids, case["corpus_tokens"])


def test_scores_equal_rank_bm25_okapi_divided_by_k1_plus_1_on_every_golden_case(golden):
    for case in golden["cases"]:
        idx = _index(case)
        for qi, q in enumerate(case["queries_tokens"]):
            ref = np.array(case["scores"]["rank_bm25.BM25Okapi(k1=1.5,b=0.75,epsilon=0.0)"][qi])
            ours = idx.scores(q) * 2.5
            assert np.allclose(ours, ref, atol=1e-4), (case["name"], q)
            assert list(np.argsort(-ours, kind="stable")) == list(np.argsort(-ref, kind="stable")), (case["name"], q)


def test_rankings_match_rank_bm25_default_epsilon_when_no_term_is_in_half_the_documents(golden):
    """rank-bm25's default (epsilon 0.25) gives terms in > half the documents a small positive idf where
    bm25s gives 0; on queries without such terms the rankings are the same."""
    checked = 0
    for case in golden["cases"]:
        idx = _index(case)
        n = len(case["corpus_tokens"])
        df: dict[str, int] = {}
        for doc in case["corpus_tokens"]:
            for t in set(doc):
                df[t] = df.get(t, 0) + 1
        for qi, q in enumerate(case["queries_tokens"]):
            if any(df.get(t, 0) > n / 2 for t in q):
                continue
            ref = np.array(case["scores"]["rank_bm25.BM25Okapi(k1=1.5,b=0.75,epsilon=0.25)"][qi])
            ours = idx.scores(q)
            assert list(np.argsort(-ours, kind="stable")) == list(np.argsort(-ref, kind="stable")), (case["name"], q)
            checked += 1
    assert checked >= 3


def test_live_rank_bm25_agrees_on_the_chinese_case(golden):
    rank_bm25 = pytest.importorskip("rank_bm25")
    case = next(c for c in golden["cases"] if c["name"].startswith("cmrc2018"))
    ref = rank_bm25.BM25Okapi(case["corpus_tokens"], k1=1.5, b=0.75, epsilon=0.0)
    idx = _index(case)
    top1 = 0
    for q, gold in zip(case["queries_tokens"], case["gold_doc_index"]):
        r = ref.get_scores(q)
        assert np.allclose(idx.scores(q) * 2.5, r, atol=1e-4)
        top1 += idx.search(q, 1)[0][0] == f"d{gold}"
    assert top1 / len(case["queries_tokens"]) == case["top1_accuracy"]["rank_bm25.BM25Okapi(k1=1.5,b=0.75,epsilon=0.0)"]


def test_save_and_load_memory_mapped_give_the_same_results(tmp_path):
    idx = KeywordIndex.build(["a", "b", "c"], [["服务器", "配置", "8c16g"], ["数据库", "端口", "5433"], ["coffee", "flat", "white"]])
    idx.save(tmp_path / "kw")
    loaded = KeywordIndex.load(tmp_path / "kw", mmap=True)
    assert loaded.search(["端口"], 3) == idx.search(["端口"], 3)
    assert loaded.search(["端口"], 3)[0][0] == "b"


def test_unknown_or_empty_query_matches_nothing_and_empty_index_is_fine(tmp_path):
    idx = KeywordIndex.build(["a"], [["服务器"]])
    assert idx.search(["不存在的词"], 5) == []
    assert idx.search([], 5) == []
    empty = KeywordIndex.build([], [])
    empty.save(tmp_path / "e")
    assert KeywordIndex.load(tmp_path / "e").search(["x"], 3) == []


def test_a_damaged_folder_is_reported_not_served(tmp_path):
    idx = KeywordIndex.build(["a", "b"], [["x"], ["y"]])
    idx.save(tmp_path / "kw")
    (tmp_path / "kw" / "ids.json").write_text('["a"]', encoding="utf-8")
    with pytest.raises(KeywordIndexError, match="2 documents for 1 ids"):
        KeywordIndex.load(tmp_path / "kw")
    (tmp_path / "kw" / "ids.json").write_text("{broken", encoding="utf-8")
    with pytest.raises(KeywordIndexError, match="ids.json"):
        KeywordIndex.load(tmp_path / "kw")


def test_coverage_is_the_share_of_the_query_idf_mass_a_document_holds():
    docs = [["caroline", "support", "group"], ["melanie", "paint", "sunrise"], ["kids", "camping"], ["hike", "mountain"],
            ["pottery", "class"], ["服务器", "配置", "8c16g"]]
    idx = KeywordIndex.build([f"d{i}" for i in range(len(docs))], docs)
    cov = idx.coverage(["caroline", "support", "group"])
    assert cov[0] == pytest.approx(1.0) and cov[1:].max() == 0
    # a name the memory never saw weighs against every document: the rest covers only part of the query
    partial = idx.coverage(["joanna", "support", "group"])
    assert 0 < partial[0] < 0.7
    assert idx.coverage(["服务器", "配置"])[5] == pytest.approx(1.0)
    assert idx.coverage([]).max() == 0
    hits = idx.search_covered(["joanna", "support"], 3)
    assert hits[0][0] == "d0" and hits[0][2] == pytest.approx(idx.coverage(["joanna", "support"])[0])
