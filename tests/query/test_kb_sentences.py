"""A knowledge section's best sentence (query.kb.Dense.sentence_best, query.fusion.sentence_features): what of a section
is read as its sentences, in Chinese and English; their vectors read from the embedding cache by hash and never
embedded by a search; a section whose sentences were not embedded yet standing on its own cosine; and a fusion model
fitted with the sentence features putting the section that holds the one matching sentence first. Hand-made vectors:
deterministic, no embedder. The nightly's side (the sentences embedded beside the sections): tests/index/test_sections_stamp.py."""

from __future__ import annotations

import numpy as np
import pytest

from agentos_mem.query import fusion, kb
from agentos_mem.query.kb import Dense, SectionIndex
from agentos_mem.storage.kb_sections import SENTENCE_MAX, SectionUnit, embed_sentences, embed_text, embed_texts, sentences_of, text_hash


class Table:
    """An embedder for queries only: a search that embedded a section or a sentence fails the test."""

    identity = "table-3"

    def __init__(self, queries: dict[str, list[float]]):
        self.queries = queries

    def embed_query(self, text):
        return self.queries[text]

    def embed_documents(self, texts):
        raise AssertionError(f"a search embedded {len(texts)} text(s)")


class Cache:
    """The embedding cache's read side (``storage.embed_cache.Cache.vectors``) over a dict, counting its lookups."""

    def __init__(self, vectors: dict[str, np.ndarray]):
        self.rows, self.asked = vectors, 0

    def vectors(self, embedder, hashes):
        self.asked += len(hashes)
        return {h: self.rows[h] for h in hashes if h in self.rows}


def unit(i: int, text: str, title: str = "") -> SectionUnit:
    title = title or f"Step {i}"
    return SectionUnit("doc", "Runbook", f"s{i}", title, ["Runbook", title], i, i, i, 10, text)


def test_a_section_is_read_as_its_title_lines_and_sentences_in_either_language():
    zh = "今年的年会定在三亚举行。预计有三百人参加！报名截止到周五；逾期不再受理报名"
    assert sentences_of(zh) == ["今年的年会定在三亚举行。", "预计有三百人参加！", "报名截止到周五；", "逾期不再受理报名"]
    en = "Props are passed down. Events go up.\nUse v-model for two-way binding (see Forms)."
    assert sentences_of(en) == ["Props are passed down.", "Events go up.", "Use v-model for two-way binding (see Forms)."]
    assert sentences_of("v2.1.0 is out") == ["v2.1.0 is out"]  # a full stop inside a version ends nothing
    assert sentences_of("ok") == ["ok"]  # nothing of six characters: the whole text
    assert len(sentences_of("这是一句很长的话。" * 40)) == SENTENCE_MAX
    u = unit(1, "备份每晚两点开始。保留三十天。", title="备份策略说明")
    assert embed_sentences(u) == ["Runbook", "备份策略说明", "备份每晚两点开始。", "保留三十天。"]  # its title path, then its lines
    texts = embed_texts([u, u])  # a section and its sentences, each text once
    assert set(texts.values()) == {embed_text(u), *embed_sentences(u)}
    assert all(text_hash(t) == h for h, t in texts.items())


def _index_and_cache(units, sentence_vectors: dict[str, list[float]]):
    index = SectionIndex.build(units)
    rows = {h: np.asarray(v, dtype=np.float32) for h, v in ((text_hash(t), v) for t, v in sentence_vectors.items())}
    return index, Cache(rows)


def test_the_best_sentence_is_read_from_the_cache_and_a_section_missing_one_stands_on_its_own_cosine():
    long = unit(0, "Backups start at two every night. Snapshots are kept for thirty days.")
    short = unit(1, "The pager rota changes on Mondays.")
    e = np.eye(3)
    vectors = {s: e[2] for u in (long, short) for s in embed_sentences(u)}
    vectors["Snapshots are kept for thirty days."] = [0.6, 0.8, 0.0]
    index, cache = _index_and_cache([long, short], {k: v for k, v in vectors.items() if k != "The pager rota changes on Mondays."})
    dense = Dense(Table({"how long are snapshots kept": [0.6, 0.8, 0.0]}), cache)

    best = dense.sentence_best(index, np.array([0, 1]), "how long are snapshots kept")
    assert best[0] == pytest.approx(1.0)  # its second sentence is the query's
    assert np.isnan(best[1])  # one of its sentences has no vector yet: none is made up
    x = fusion.sentence_features(best, np.array([0.5, 0.7]))
    assert x[1, 0] == 0.0 and x[0, 0] == 1.0  # the stand-in is its section's cosine (0.7), below 1.0

    asked = cache.asked
    dense.sentence_best(index, np.array([0]), "how long are snapshots kept")
    assert cache.asked == asked  # a section's sentences are read once per process
    cache.rows[text_hash("The pager rota changes on Mondays.")] = np.asarray(e[1], dtype=np.float32)  # the nightly made it
    assert not np.isnan(dense.sentence_best(index, np.array([1]), "how long are snapshots kept")[0])


def test_a_long_running_search_keeps_a_bounded_number_of_sections_sentences(monkeypatch):
    monkeypatch.setattr(kb, "SENTENCE_MEMO", 2)
    units = [unit(i, f"Section number {i} says something.") for i in range(4)]
    vectors = {s: [1.0, 0.0, 0.0] for u in units for s in embed_sentences(u)}
    index, cache = _index_and_cache(units, vectors)
    dense = Dense(Table({"q": [1.0, 0.0, 0.0]}), cache)
    assert dense.sentence_best(index, np.arange(4), "q").tolist() == [1.0] * 4
    assert len(index.sentences[Table.identity]) == 2  # the two read last


def test_a_model_fitted_with_the_sentence_features_puts_the_section_holding_the_sentence_first():
    weights = {f: 0.0 for f in fusion.FEATURES} | {"cos": 1.0, "sentence_max": 3.0, "sentence_max_gap": 0.0, "sentence_max_rank": 0.0}
    model = {"weights": weights, "fallback": {"tau": 0.0, "side": "none"}, "top": 5}
    assert fusion.uses_sentences(model) and fusion.model_features(model)[-3:] == fusion.SENTENCE_FEATURES
    bm = np.array([1.0, 1.0])
    cos = np.array([0.80, 0.78])  # the whole of section 1 is a little further from the query
    shares = lambda c: np.zeros((len(c), 3))  # noqa: E731
    plain = fusion.fuse(bm, cos, shares, "q", 0.5, {**model, "weights": {f: weights[f] for f in fusion.FEATURES}})
    assert plain[0] > plain[1]
    with_best = fusion.fuse(bm, cos, shares, "q", 0.5, model, best_of=lambda c: np.array([0.80, 0.90])[c])
    assert with_best[1] > with_best[0]  # one of its sentences is the closest text of all
    unread = fusion.fuse(bm, cos, shares, "q", 0.5, model)  # no sentences read: each section's cosine stands in
    assert unread[0] > unread[1]


def test_a_section_with_no_vector_at_all_stands_on_its_keywords_as_on_the_meaning_side():
    best = np.array([0.9, np.nan, np.nan])
    cos = np.array([0.8, 0.7, np.nan])  # the third was approved while the model was unreachable
    x = fusion.sentence_features(best, cos, np.array([1.0, 2.0, 4.0]))
    assert x[:, 0] == pytest.approx([1.0, 0.0, 1.0])  # its scaled BM25 score, as `features` gives its cosine's place
    assert x[2, 1] == pytest.approx(-2.0) and x[2, 2] == 0.0  # the largest distance to the best, and no rank
    assert x[:, 2] == pytest.approx([1.0, 0.5, 0.0])
    f = fusion.features(np.array([1.0, 2.0, 4.0]), cos, np.zeros((3, 3)), 0.0)
    assert f[2, fusion.FEATURES.index("cos")] == x[2, 0]
