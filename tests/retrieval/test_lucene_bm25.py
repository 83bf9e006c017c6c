"""Knowledge search's BM25 (retrieval.lucene_bm25) against the reference it replaces: bm25s' Lucene variant, with the
same k1 and b, on corpora of Chinese characters and bigrams and English words, including an empty document and
repeated query terms. Built from a generator, as knowledge search builds it."""

from __future__ import annotations

import logging
import random

import bm25s
import numpy as np
import pytest

from agentos_mem.query.kb import kb_terms
from agentos_mem.retrieval.lucene_bm25 import LuceneBM25

TEXTS = ["数据库备份时间是每天凌晨两点，备份保留七天。", "The staging database runs Postgres 16 on port 5433.",
         "周会改到周三下午三点，会议室在七楼。", "测试服务器的配置是 8C16G，系统盘 100G。", "",
         "Backups of the database are kept for seven days in S3.", "监控告警走 Opsgenie，值班表每周一轮换。"]


def _reference(corpus: list[list[str]], k1: float, b: float):
    logging.getLogger("bm25s").setLevel(logging.WARNING)
    ref = bm25s.BM25(method="lucene", k1=k1, b=b)
    ref.index(corpus, show_progress=False)
    return ref


@pytest.mark.parametrize("k1, b", [(1.5, 0.75), (1.2, 0.3)])
def test_the_scores_are_bm25s_lucene_scores(k1, b):
    corpus = [kb_terms(t) or [""] for t in TEXTS]
    ref, mine = _reference(corpus, k1, b), LuceneBM25.build((c for c in corpus), k1=k1, b=b)
    for query in ["数据库备份几点", "database backup", "会议室在几楼", "Opsgenie 值班", "没有的词 nothing", "备份 备份 backup"]:
        terms = kb_terms(query)
        known = [t for t in terms if t in ref.vocab_dict]
        want = np.asarray(ref.get_scores(known)) if known else np.zeros(len(corpus))
        np.testing.assert_allclose(mine.get_scores(terms), want, rtol=1e-6, atol=1e-7, err_msg=query)


def test_a_random_corpus_scores_the_same_and_reads_postings_the_same_way():
    rng = random.Random(7)
    words = [f"w{i}" for i in range(200)] + list("数据库备份服务器配置")
    corpus = [[rng.choice(words) for _ in range(rng.randint(1, 30))] for _ in range(300)]
    ref, mine = _reference(corpus, 1.5, 0.75), LuceneBM25.build(iter(corpus))
    for _ in range(50):
        q = rng.sample(words, 4)
        np.testing.assert_allclose(mine.get_scores(q), np.asarray(ref.get_scores(q)), rtol=1e-6, atol=1e-7)
    assert mine.vocab_dict.keys() - {""} == ref.vocab_dict.keys() - {""}
    # the postings fusion.coverage reads: a term's documents, as bm25s lays them out
    for t in ("w3", "数"):
        col, rcol = mine.vocab_dict[t], ref.vocab_dict[t]
        got = mine.scores["indices"][mine.scores["indptr"][col]:mine.scores["indptr"][col + 1]]
        want = ref.scores["indices"][ref.scores["indptr"][rcol]:ref.scores["indptr"][rcol + 1]]
        assert got.tolist() == want.tolist()


def test_an_empty_corpus_scores_nothing():
    empty = LuceneBM25.build(iter([]))
    assert empty.get_scores(["x"]).shape == (0,)
