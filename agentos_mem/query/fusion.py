"""How much the keyword side weighs in a hybrid ranking, per query: knowledge search's rule (query.kb).

When many units share the query's words (news on one event, chats on one topic, a manual's sibling sections) BM25's
best scores barely above its second and its order is the words', not the answer's; if the meaning side's best is
among BM25's first page (the two sides agree where the answer is), the fusion lets meaning order them
(``ALPHA_CROWDED``). When BM25's best stands clear, or the sides disagree, the weight stays: the dense side can be the
weak one (an English heading over Chinese docs, a cross-lingual cosine). CLEAR_TOP and ALPHA_CROWDED were tuned on
rgb_zh_dev (hard negatives; a grid of 3 x 4); AGREE_TOP is the page a search returns. Checked, not tuned, on CMRC
trial (97% of its queries have a clear BM25 best) and the Vue docs' links (bench/results: beir-*.md, links-vue.md).

The memory query (query.ask) keeps its fixed weight: on three LoCoMo conversations the rule changed nothing at hit@5
(bench/fusion_bench.py, ``agree-0.6``), but over all five it lost evidence at every budget (any/all @500 0.869/0.794
-> 0.860/0.778, 2026-12-01): chat cards share their everyday words, so a crowded BM25 best there is the rule, not a
sign that meaning knows better.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence

CLEAR_TOP = 0.15  # BM25's best must score at least this much (relative) above its second to keep the weight
ALPHA_CROWDED = 0.2
AGREE_TOP = 10


def keyword_weight(bm25_ranked: Sequence[tuple[Hashable, float]], dense_best: Hashable | None, alpha: float) -> float:
    """BM25's weight for one query: ``alpha``, unless BM25's best (``bm25_ranked``: best first, at least its first
    ``AGREE_TOP``) does not stand ``CLEAR_TOP`` above its second (none: 0) and ``dense_best`` is among BM25's first
    ``AGREE_TOP``; then ``ALPHA_CROWDED``, or ``alpha`` itself when that is lower."""
    if not bm25_ranked:
        return alpha
    best = bm25_ranked[0][1]
    second = bm25_ranked[1][1] if len(bm25_ranked) > 1 else 0.0
    if best > 0 and best >= (1 + CLEAR_TOP) * second:
        return alpha
    first_page = {u for u, _ in bm25_ranked[:AGREE_TOP]}
    return min(alpha, ALPHA_CROWDED) if dense_best in first_page else alpha
