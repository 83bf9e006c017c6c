"""How knowledge search fuses its keyword side (BM25) and its meaning side (dense cosine): a small fitted model.

``hybrid`` (query.kb) re-ranks the union of each side's first ``TOP`` sections with a linear listwise model of the
two sides' own evidence, per candidate (``features``): BM25 scaled by its best, the cosine min-max scaled over the
candidates and its raw distance to the best cosine, the candidate's rank on each side, the share of the query's terms
it holds (of all its terms, of its longer ones, of its numbers); its best sentence (the best cosine between the query
and one of its sentences, ``SENTENCE_FEATURES``: one precise sentence in a long section is not averaged away); and per
query, in products with those: BM25's margin between its first and second, the dense side's margin, whether the
sides agree on the top, and the query's script mix (its share of Chinese characters). The weights
(``fusion_model.py``, beside this file) were fitted by ``bench/fusion_fit.py`` on the dev sets (rgb_zh_dev,
cmrc2018, the Vue docs' link and heading sets) with leave-one-source-out and per-query k-fold cross-validation; the
file records which sets, the command and the date, and bench/results/fusion-cv.md reports every set on folds the
model was not fitted on.

Safety net: the model's confidence is the softmax share of its first candidate. Below ``fallback.tau`` the order is
the ``fallback.side``'s (BM25 or dense) instead; both are chosen by the fit script on the training folds only and
checked on the left-out ones (``fallback.side`` "none": no fallback).

Candidates outside the re-ranked union (a search for k > ``TOP``) follow it in the plain convex order
(``alpha`` on scaled BM25). Scores: the union in (0.5, 1] (0.5 + half the model's softmax share), the rest in
[0, 0.5] (half the convex score), so a higher score is always a better rank.

Left-out R@1, leave-source-out (bench/results/fusion-cv.md, 2026-12-07): rgb_zh_dev 0.85 (BM25 0.71, dense 0.82,
former rule 0.82), cmrc2018 0.983 (BM25 0.979), Vue zh links 0.509, English headings 0.739, English links 0.455
(each above both sides; without the best sentence: 0.83, 0.986, 0.440, 0.659, 0.390); the issue's goal of 0.88 on
RGB zh is not reached. The re-ranking costs about 3 ms per query on 2,451 sections (``kb.rank`` p50 3.2 -> 6.0 ms),
most of it reading the candidates' sentence vectors (a model fitted without them reads none).

``keyword_weight`` is the former hand-set rule (CLEAR_TOP / ALPHA_CROWDED / AGREE_TOP, tuned on rgb_zh_dev with a
3 x 4 grid), kept as the baseline the fit script reports against and for ``query.kb.hybrid_alpha``. On held-out
samples it lost to its own dense side (issue 43).

The memory query (query.ask) keeps its fixed weight: on three LoCoMo conversations the rule changed nothing at hit@5
(bench/fusion_bench.py, ``agree-0.6``), but over all five it lost evidence at every budget (any/all @500 0.869/0.794
-> 0.860/0.778, 2026-12-01): chat cards share their everyday words, so a crowded BM25 best there is the rule, not a
sign that meaning knows better.
"""

from __future__ import annotations

import ast
import pprint
import re
from collections.abc import Hashable, Sequence
from functools import lru_cache
from pathlib import Path

import numpy as np

from agentos_mem.kernel.text import CJK
from agentos_mem.query import fusion_model

CLEAR_TOP = 0.15  # BM25's best must score at least this much (relative) above its second to keep the weight
ALPHA_CROWDED = 0.2
AGREE_TOP = 10

MODEL_FILE = Path(__file__).with_name("fusion_model.py")  # MODEL = {...}: a module, so a wheel ships it
TOP = 20  # each side's first TOP candidates are re-ranked by the model
FEATURES = ("bm25", "cos", "cos_gap", "bm25_rank", "cos_rank", "coverage", "bm25_top", "cos_top",
            "bm25*bm25_margin", "cos*bm25_margin", "bm25*cos_margin", "cos*cos_margin", "bm25*agree", "cos*agree",
            "bm25*cjk", "cos*cjk", "coverage*cjk", "cos_gap*cjk", "coverage2", "coverage2_gap", "numbers", "numbers*bm25",
            "numbers*cos")
# Per candidate, its best sentence (storage.kb_sections.embed_sentences): the best cosine between the query and one of
# its sentences, min-max scaled over the candidates, its raw distance to the best, its rank. Read only when the model
# was fitted with them (bench/fusion_fit.py --sentence-max --write-model).
SENTENCE_FEATURES = ("sentence_max", "sentence_max_gap", "sentence_max_rank")
_CJK_CHAR = re.compile(f"[{CJK}]")
_LATIN = re.compile(r"[A-Za-z]")


def keyword_weight(bm25_ranked: Sequence[tuple[Hashable, float]], dense_best: Hashable | None, alpha: float) -> float:
    """The former rule: BM25's weight for one query: ``alpha``, unless BM25's best (``bm25_ranked``: best first, at
    least its first ``AGREE_TOP``) does not stand ``CLEAR_TOP`` above its second (none: 0) and ``dense_best`` is
    among BM25's first ``AGREE_TOP``; then ``ALPHA_CROWDED``, or ``alpha`` itself when that is lower."""
    if not bm25_ranked:
        return alpha
    best = bm25_ranked[0][1]
    second = bm25_ranked[1][1] if len(bm25_ranked) > 1 else 0.0
    if best > 0 and best >= (1 + CLEAR_TOP) * second:
        return alpha
    first_page = {u for u, _ in bm25_ranked[:AGREE_TOP]}
    return min(alpha, ALPHA_CROWDED) if dense_best in first_page else alpha


# -- features --------------------------------------------------------------------------------------------------
def cjk_share(text: str) -> float:
    """The query's script mix: Chinese characters over Chinese characters plus Latin letters (0.5 with neither)."""
    c, latin = len(_CJK_CHAR.findall(text)), len(_LATIN.findall(text))
    return c / (c + latin) if c + latin else 0.5


def candidates(bm: np.ndarray, cos: np.ndarray, top: int = TOP) -> np.ndarray:
    """Positions of the union of BM25's first ``top`` matches (score > 0) and the dense side's first ``top``
    (cosine not NaN), ascending."""
    matched = np.flatnonzero(bm > 0)
    near = np.flatnonzero(~np.isnan(cos))
    b = matched[np.argsort(-bm[matched], kind="stable")[:top]]
    c = near[np.argsort(-cos[near], kind="stable")[:top]]
    return np.union1d(b, c).astype(np.int64)


def _ranks(v: np.ndarray, valid: np.ndarray) -> np.ndarray:
    """0-based rank of each valid entry by descending value (ties: position order); invalid: -1."""
    out = np.full(len(v), -1, dtype=np.int64)
    idx = np.flatnonzero(valid)
    out[idx[np.argsort(-v[idx], kind="stable")]] = np.arange(len(idx))
    return out


def features(bm: np.ndarray, cos: np.ndarray, shares: np.ndarray, cjk: float) -> np.ndarray:
    """(n, len(FEATURES)) for n candidates of one query: ``bm`` BM25 scores, ``cos`` cosines (NaN: no vector),
    ``shares`` (n, 3) the share of the query's terms, of its longer terms and of its numbers each holds
    (:func:`term_shares`), ``cjk`` the query's :func:`cjk_share`. Scales are taken over these candidates (pass the
    :func:`candidates` union, which holds each side's best)."""
    bm = np.asarray(bm, dtype=np.float64)
    cos = np.asarray(cos, dtype=np.float64)
    shares = np.asarray(shares, dtype=np.float64).reshape(len(bm), 3)
    cover, cover2, nums = shares[:, 0], shares[:, 1], shares[:, 2]
    n = len(bm)
    top_b = bm.max() if n else 0.0
    b = bm / top_b if top_b > 0 else np.zeros(n)
    have = ~np.isnan(cos)
    if have.any():
        lo, hi = float(cos[have].min()), float(cos[have].max())
        c = np.where(have, (np.where(have, cos, lo) - lo) / ((hi - lo) or 1.0), b)
        gap = np.where(have, np.where(have, cos, lo) - hi, lo - hi) * 10.0  # raw cosine below the best, x10
    else:
        c, gap = b.copy(), np.zeros(n)
    rb, rc = _ranks(bm, bm > 0), _ranks(cos, have)
    brank = np.where(rb >= 0, 1.0 / (1.0 + np.maximum(rb, 0)), 0.0)
    crank = np.where(rc >= 0, 1.0 / (1.0 + np.maximum(rc, 0)), 0.0)
    btop, ctop = (rb == 0).astype(float), (rc == 0).astype(float)
    sb = np.sort(bm[bm > 0])[::-1]
    b_margin = (sb[0] - sb[1]) / sb[0] if len(sb) > 1 else (1.0 if len(sb) else 0.0)
    sc = np.sort(cos[have])[::-1]
    c_margin = min((sc[0] - sc[1]) * 10.0, 1.0) if len(sc) > 1 else 0.0
    agree = float(len(sb) > 0 and len(sc) > 0 and bool((btop * ctop).any()))
    return np.column_stack([b, c, gap, brank, crank, cover, btop, ctop, b * b_margin, c * b_margin, b * c_margin,
                            c * c_margin, b * agree, c * agree, b * cjk, c * cjk, cover * cjk, gap * cjk,
                            cover2, cover2 - (cover2.max() if n else 0.0), nums, nums * b, nums * c])


def sentence_features(best: np.ndarray, cos: np.ndarray | None = None, bm: np.ndarray | None = None) -> np.ndarray:
    """(n, len(SENTENCE_FEATURES)) of n candidates' best sentence cosines ``best``. A candidate whose sentences have no
    vectors (NaN: embedded before sentences were) has its section's cosine ``cos`` instead (a section's cosine is no
    higher than its best sentence's as a rule, so it never gains by lacking them); one with no vector at all is treated
    as :func:`features` treats it on the meaning side: its scaled BM25 score (``bm``) for the scaled value, the
    largest distance to the best, no rank."""
    best = np.asarray(best, dtype=np.float64).copy()
    n = len(best)
    if cos is not None:
        best = np.where(np.isnan(best), np.asarray(cos, dtype=np.float64), best)
    have = ~np.isnan(best)
    bm = np.zeros(n) if bm is None else np.asarray(bm, dtype=np.float64)
    b = bm / bm.max() if n and bm.max() > 0 else np.zeros(n)
    if not have.any():
        return np.column_stack([b, np.zeros(n), np.zeros(n)])
    lo, hi = float(best[have].min()), float(best[have].max())
    filled = np.where(have, best, lo)
    rank = _ranks(best, have)
    return np.column_stack([np.where(have, (filled - lo) / ((hi - lo) or 1.0), b), (filled - hi) * 10.0,
                            np.where(rank >= 0, 1.0 / (1.0 + np.maximum(rank, 0)), 0.0)])


def term_shares(model, terms: Sequence[str], units: np.ndarray) -> np.ndarray:
    """(len(units), 3): the share of the query's ``terms`` each unit holds; of its terms of two characters or more
    (Chinese bigrams, words: a single Chinese character matches almost anything); of its terms with a digit (years,
    versions: 1 for every unit when the query has none)."""
    longer = [t for t in terms if len(t) >= 2]
    numbers = [t for t in terms if any(ch.isdigit() for ch in t)]
    n = len(np.asarray(units))
    return np.column_stack([coverage(model, terms, units), coverage(model, longer, units) if longer else coverage(model, terms, units),
                            coverage(model, numbers, units) if numbers else np.ones(n)])


def coverage(model, terms: Sequence[str], units: np.ndarray) -> np.ndarray:
    """Share of ``terms`` each of ``units`` holds, read from a bm25s index's postings (``model.scores``: CSC
    data/indices/indptr over the vocabulary); a term the index lacks counts as held by none."""
    units = np.asarray(units, dtype=np.int64)
    if not len(terms) or not len(units):
        return np.zeros(len(units)) if len(terms) else np.ones(len(units))
    held = np.zeros(len(units))
    vocab = getattr(model, "vocab_dict", None) or {}
    scores = getattr(model, "scores", None)
    if not isinstance(scores, dict) or "indptr" not in scores:
        return held
    indptr, indices = scores["indptr"], scores["indices"]
    for t in terms:
        v = vocab.get(t)
        if v is not None:
            held += np.isin(units, indices[indptr[v]:indptr[v + 1]])
    return held / len(terms)


# -- the model -------------------------------------------------------------------------------------------------
@lru_cache(maxsize=4)
def load_model(path: str | None = None) -> dict:
    """The stored model: {weights: {feature: w}, fallback: {tau, side}, top, provenance: {...}}: ``fusion_model.MODEL``,
    or the ``MODEL`` literal of the file at ``path``."""
    if path is None:
        data = fusion_model.MODEL
    else:
        data = ast.literal_eval(Path(path).read_text(encoding="utf-8").split("MODEL = ", 1)[1])
    missing = [f for f in FEATURES if f not in data["weights"]]
    if missing:
        raise ValueError(f"fusion model {path or MODEL_FILE} lacks weights for {missing}")
    return data


def render_model(model: dict) -> str:
    """The text of ``fusion_model.py`` for ``model`` (bench/fusion_fit.py --write-model writes it)."""
    return ('"""Knowledge search\'s fusion model (query/fusion.py), written by bench/fusion_fit.py --write-model: see its\n'
            'provenance and bench/results/fusion-cv.md. Do not edit by hand: refit."""\n\nMODEL = ' + pprint.pformat(model, width=116, sort_dicts=False) + "\n")


def uses_sentences(model: dict) -> bool:
    """Whether ``model`` was fitted with SENTENCE_FEATURES (then a search reads its candidates' sentence vectors)."""
    return all(f in model["weights"] for f in SENTENCE_FEATURES)


def model_features(model: dict) -> tuple[str, ...]:
    return FEATURES + (SENTENCE_FEATURES if uses_sentences(model) else ())


def weight_vector(model: dict) -> np.ndarray:
    return np.array([float(model["weights"][f]) for f in model_features(model)])


def softmax(z: np.ndarray) -> np.ndarray:
    if not len(z):
        return z
    e = np.exp(z - z.max())
    return e / e.sum()


def side_scores(x: np.ndarray, side: str) -> np.ndarray:
    """The order of one side over candidates (features ``x``), the other side breaking ties: in [0, 1]."""
    b, c = x[:, 0], x[:, 1]
    main, tie = (b, c) if side == "bm25" else (c, b)
    return (main + 1e-3 * tie) / (1 + 1e-3)


def model_scores(x: np.ndarray, model: dict) -> tuple[np.ndarray, bool]:
    """Scores in [0, 1] of candidates (rows of ``x``), better higher, and whether the safety net took over: the
    model's softmax shares, or, when its first candidate's share is below ``fallback.tau``, the fallback side's order."""
    p = softmax(x @ weight_vector(model))
    fb = model.get("fallback") or {}
    side = fb.get("side", "none")
    if side in ("bm25", "dense") and len(p) and p.max() < float(fb.get("tau", 0.0)):
        return side_scores(x, side), True
    return p, False


def convex(bm: np.ndarray, cos: np.ndarray, alpha: float) -> np.ndarray:
    """alpha * BM25 / max BM25 + (1 - alpha) * min-max-scaled cosine; a candidate without a vector (NaN) has its
    scaled BM25 score on both sides."""
    b = bm / (bm.max() or 1.0) if len(bm) else bm
    have = ~np.isnan(cos)
    if have.any():
        lo, hi = float(cos[have].min()), float(cos[have].max())
        c = np.where(have, (np.where(have, cos, lo) - lo) / ((hi - lo) or 1.0), b)
    else:
        c = b
    return alpha * b + (1 - alpha) * c


def fuse(bm: np.ndarray, cos: np.ndarray, cover_of, text: str, alpha: float, model: dict | None = None,
         best_of=None) -> np.ndarray:
    """Hybrid scores of a search's candidates (``bm`` and ``cos`` aligned; NaN: no vector): the union of each side's
    first ``TOP`` by the model (0.5 + half its share), the rest by the convex order (half the convex score).
    ``cover_of(positions)`` gives those candidates' :func:`term_shares`; ``best_of(positions)`` their best sentence
    cosines (NaN: none), read only when the model uses them (without it, each candidate's cosine stands in)."""
    bm = np.asarray(bm, dtype=np.float64)
    cos = np.asarray(cos, dtype=np.float64)
    model = model or load_model()
    out = 0.5 * convex(bm, cos, alpha)
    cand = candidates(bm, cos, int(model.get("top", TOP)))
    if len(cand):
        x = features(bm[cand], cos[cand], cover_of(cand), cjk_share(text))
        if uses_sentences(model):
            best = best_of(cand) if best_of is not None else np.full(len(cand), np.nan)
            x = np.hstack([x, sentence_features(best, cos[cand], bm[cand])])
        s, _ = model_scores(x, model)
        out[cand] = 0.5 + 0.5 * s
    return out


def fuse_sections(index, q, idxs: np.ndarray, bm: np.ndarray, cos: np.ndarray, pool: Sequence[int], alpha: float,
                  dense=None) -> dict[int, float]:
    """query.kb's hybrid: {unit index: score} over ``pool`` (positions into ``idxs``, ``bm``, ``cos``) of a
    ``SectionIndex`` and a parsed query (``q.terms``, ``q.text``); ``dense`` (query.kb.Dense) reads the candidates'
    best sentences."""
    pool = np.asarray(list(pool), dtype=np.int64)
    if not len(pool):
        return {}
    units = np.asarray(idxs, dtype=np.int64)[pool]
    text = q.text or " ".join(q.phrases)
    best_of = (lambda c: dense.sentence_best(index, units[c], text)) if dense is not None else None
    s = fuse(np.asarray(bm)[pool], np.asarray(cos)[pool], lambda c: term_shares(index.model, q.terms, units[c]),
             text, alpha, best_of=best_of)
    return {int(u): float(v) for u, v in zip(units, s)}
