"""Knowledge search's fitted fusion (query/fusion.py): the features of each candidate, the model's scores and its
safety net, the ranking it gives a search's candidates, and the stored model's provenance. Small hand-made arrays:
deterministic, no embedder."""

from __future__ import annotations

import math

import numpy as np
import pytest

from agentos_mem.query import fusion
from agentos_mem.query.fusion import FEATURES, candidates, cjk_share, coverage, features, fuse, load_model, model_scores, term_shares

COL = {f: i for i, f in enumerate(FEATURES)}


def _model(weights: dict, tau: float = 0.0, side: str = "none") -> dict:
    return {"weights": {f: float(weights.get(f, 0.0)) for f in FEATURES}, "fallback": {"tau": tau, "side": side}, "top": 2}


def test_script_mix_is_the_share_of_chinese_characters_among_letters():
    assert cjk_share("混合检索") == 1.0
    assert cjk_share("hybrid search") == 0.0
    assert cjk_share("混合 search") == pytest.approx(2 / 8)
    assert cjk_share("123 !?") == 0.5  # no letters at all: neither side


def test_candidates_are_the_union_of_each_sides_first_top():
    bm = np.array([0.0, 3.0, 1.0, 0.0, 2.0])
    cos = np.array([0.1, np.nan, 0.9, 0.5, 0.2])
    assert candidates(bm, cos, 1).tolist() == [1, 2]  # BM25's best, the dense side's best
    assert candidates(bm, cos, 2).tolist() == [1, 2, 3, 4]
    assert candidates(np.zeros(3), np.array([np.nan] * 3), 5).tolist() == []  # nothing matched, no vectors


def test_features_scale_each_side_and_describe_the_query():
    bm = np.array([4.0, 3.0, 0.0])
    cos = np.array([0.80, 0.85, 0.75])
    shares = np.array([[1.0, 1.0, 1.0], [0.5, 0.25, 0.0], [0.0, 0.0, 0.0]])
    x = features(bm, cos, shares, 1.0)
    assert x.shape == (3, len(FEATURES))
    assert x[:, COL["bm25"]].tolist() == [1.0, 0.75, 0.0]  # scaled by BM25's best
    assert x[:, COL["cos"]] == pytest.approx([0.5, 1.0, 0.0])  # min-max over the candidates
    assert x[:, COL["cos_gap"]] == pytest.approx([-0.5, 0.0, -1.0])  # raw cosine below the best, x10
    assert x[:, COL["bm25_rank"]].tolist() == [1.0, 0.5, 0.0]  # 1 / (1 + rank); not matched: 0
    assert x[:, COL["cos_rank"]] == pytest.approx([0.5, 1.0, 1 / 3])
    assert x[:, COL["bm25_top"]].tolist() == [1, 0, 0] and x[:, COL["cos_top"]].tolist() == [0, 1, 0]
    assert x[0, COL["bm25*bm25_margin"]] == pytest.approx(0.25)  # (4 - 3) / 4
    assert x[:, COL["bm25*agree"]].tolist() == [0, 0, 0]  # the sides' bests differ
    assert x[:, COL["coverage*cjk"]].tolist() == [1.0, 0.5, 0.0]
    assert x[:, COL["coverage2_gap"]].tolist() == [0.0, -0.75, -1.0]
    assert x[:, COL["numbers*bm25"]].tolist() == [1.0, 0.0, 0.0]
    agree = features(np.array([4.0, 3.0]), np.array([0.9, 0.8]), np.zeros((2, 3)), 0.0)
    assert agree[:, COL["bm25*agree"]].tolist() == [1.0, 0.75]


def test_a_candidate_without_a_vector_has_its_scaled_bm25_on_the_meaning_side():
    x = features(np.array([2.0, 1.0]), np.array([np.nan, 0.5]), np.zeros((2, 3)), 0.0)
    assert x[0, COL["cos"]] == 1.0 and x[0, COL["cos_rank"]] == 0.0
    assert not np.isnan(x).any()


def test_coverage_reads_the_share_of_query_terms_from_the_bm25_postings():
    import bm25s

    from agentos_mem.query.kb import kb_terms

    docs = ["混合检索 hybrid", "向量检索", "keyword search"]
    model = bm25s.BM25(method="lucene")
    model.index([kb_terms(d) for d in docs], show_progress=False)
    terms = ["检索", "hybrid", "unknown"]
    assert coverage(model, terms, np.array([0, 1, 2])).tolist() == pytest.approx([2 / 3, 1 / 3, 0.0])
    assert coverage(model, [], np.array([0, 1])).tolist() == [1.0, 1.0]


def test_term_shares_count_all_terms_longer_terms_and_numbers():
    import bm25s

    from agentos_mem.query.kb import kb_terms

    docs = ["2022年冬奥会", "2021年冬奥会"]
    model = bm25s.BM25(method="lucene")
    model.index([kb_terms(d) for d in docs], show_progress=False)
    terms = kb_terms("2022年冬奥会")  # 2022 年 年冬 冬 冬奥 奥 奥会 会
    s = term_shares(model, terms, np.array([0, 1]))
    assert s[0].tolist() == [1.0, 1.0, 1.0]
    assert s[1].tolist() == pytest.approx([7 / 8, 3 / 4, 0.0])  # the other year: its number is missing
    assert term_shares(model, kb_terms("冬奥会"), np.array([0, 1]))[:, 2].tolist() == [1.0, 1.0]  # no number asked


def test_model_scores_are_softmax_shares_and_low_confidence_falls_back_to_the_fitted_side():
    x = features(np.array([4.0, 3.0, 0.0]), np.array([0.80, 0.85, 0.75]), np.zeros((3, 3)), 1.0)
    s, fell = model_scores(x, _model({"cos": 3.0}))
    assert not fell and s.sum() == pytest.approx(1.0) and int(np.argmax(s)) == 1  # the meaning side's best
    s, fell = model_scores(x, _model({"cos": 3.0}, tau=0.99, side="bm25"))  # never that sure: BM25's order
    assert fell and int(np.argmax(s)) == 0 and s[0] > s[1] > s[2]
    s, fell = model_scores(x, _model({"cos": 3.0}, tau=0.99, side="none"))
    assert not fell


def test_fuse_ranks_the_union_by_the_model_and_the_rest_after_it():
    bm = np.array([5.0, 1.0, 0.0, 0.5, 0.0])
    cos = np.array([0.70, 0.90, 0.80, 0.60, 0.50])
    model = _model({"cos": 4.0})  # top 2 per side: BM25 {0, 1}, dense {1, 2}
    s = fuse(bm, cos, lambda c: np.zeros((len(c), 3)), "q", 0.5, model)
    order = np.argsort(-s, kind="stable").tolist()
    assert order[:3] == [1, 2, 0]  # the union, by cosine as the model weighs it
    assert (s[[0, 1, 2]] > 0.5).all() and (s[[3, 4]] <= 0.5).all()
    assert s[3] > s[4]  # the tail: the convex order
    assert all(0.0 <= v <= 1.0 for v in s)


def test_fuse_without_any_vector_follows_bm25():
    bm = np.array([1.0, 3.0, 2.0])
    s = fuse(bm, np.array([np.nan] * 3), lambda c: np.zeros((len(c), 3)), "q", 0.5, _model({"bm25": 2.0, "cos": 1.0}))
    assert np.argsort(-s).tolist() == [1, 2, 0]


def test_the_stored_model_loads_with_its_provenance():
    model = load_model()
    assert load_model(str(fusion.MODEL_FILE)) == model  # the module's text is the literal it imports
    data = model
    assert set(FEATURES) <= set(model["weights"]) and all(math.isfinite(v) for v in model["weights"].values())
    assert model["fallback"]["side"] in ("none", "bm25", "dense") and 0.0 <= model["fallback"]["tau"] <= 1.0
    prov = data["provenance"]
    for key in ("sets", "command", "date", "cv_report"):
        assert prov.get(key), key
    assert "fusion_fit" in prov["command"]
    assert {"rgb_zh_dev", "cmrc2018"} <= set(prov["sets"])
