"""BM25 (Lucene's variant) over term lists, built in numpy from one pass over the documents.

The same scores as ``bm25s.BM25(method="lucene")`` (tests/retrieval/test_lucene_bm25.py checks them against it), for
what knowledge search needs: an eager score matrix by term (CSC), scored by summing the query terms' columns. Built
here rather than by bm25s because bm25s keeps the whole corpus as Python lists of strings, then of ints, while it
indexes: at 100,000 sections (9.6M terms) its build took a search process from 423 MB to a peak of 917 MB, and the
peak is what decides whether a knowledge search process fits in 1 GB (issue 43). Here the documents are read one at
a time (an iterable, not a list), each term becomes an int32 in one flat array, and the rest is numpy.
"""

from __future__ import annotations

import math
from array import array
from collections.abc import Iterable

import numpy as np


class LuceneBM25:
    """Scores of every document for a query's terms. ``vocab_dict`` (a term's column) and ``scores`` (the CSC arrays)
    are named as bm25s names them, so code that reads a bm25s index's postings (query.fusion.coverage) reads these."""

    def __init__(self, vocab: dict[str, int], data: np.ndarray, indices: np.ndarray, indptr: np.ndarray, n_docs: int):
        self.vocab_dict = vocab
        self.scores = {"data": data, "indices": indices, "indptr": indptr, "num_docs": n_docs}
        self.n_docs = n_docs

    @classmethod
    def build(cls, docs: Iterable[Iterable[str]], k1: float = 1.5, b: float = 0.75) -> LuceneBM25:
        vocab: dict[str, int] = {}
        flat = array("i")  # every document's term ids, one after another
        lengths = array("q")
        for terms in docs:
            start = len(flat)
            flat.extend(vocab.setdefault(t, len(vocab)) for t in terms)
            lengths.append(len(flat) - start)
        n_docs = len(lengths)
        ids = np.frombuffer(flat, dtype=np.int32) if len(flat) else np.zeros(0, dtype=np.int32)
        dl = np.frombuffer(lengths, dtype=np.int64) if n_docs else np.zeros(0, dtype=np.int64)
        # (document, term, count) for each distinct term of each document, one document at a time: a sort of all the
        # corpus's pairs at once would hold several copies of 9.6M int64s
        voc = np.empty(len(ids), dtype=np.int32)
        tf = np.empty(len(ids), dtype=np.float32)
        doc = np.empty(len(ids), dtype=np.int32)
        n, at = 0, 0
        for d, length in enumerate(dl.tolist()):
            u, c = np.unique(ids[at:at + length], return_counts=True)
            voc[n:n + len(u)], tf[n:n + len(u)], doc[n:n + len(u)] = u, c, d
            n, at = n + len(u), at + length
        voc, tf, doc = voc[:n].copy(), tf[:n].copy(), doc[:n].copy()  # copies: the full-length arrays go now
        del ids, flat
        df = np.bincount(voc, minlength=len(vocab))
        idf = np.array([math.log(1 + (n_docs - f + 0.5) / (f + 0.5)) for f in df.tolist()], dtype=np.float32)
        # tf / (k1 * (1 - b + b * dl / avgdl) + tf) * idf, in place over float32 arrays: at 9.6M pairs each float64
        # temporary of the plain expression was 74 MB more at the build's peak
        avg = float(dl.mean()) if n_docs else 1.0
        per_doc = (k1 * ((1 - b) + b * dl / avg)).astype(np.float32)
        scores = per_doc[doc]
        scores += tf
        np.divide(tf, scores, out=scores)
        del tf
        scores *= idf[voc]
        order = np.argsort(voc, kind="stable")  # by term, each term's documents in order: bm25s's CSC layout
        del voc
        indptr = np.zeros(len(vocab) + 1, dtype=np.int64)
        np.cumsum(df, out=indptr[1:])
        data = scores[order]
        del scores
        indices = doc[order]
        del doc, order
        return cls(vocab, data, indices, indptr, n_docs)

    def get_scores(self, terms: list[str]) -> np.ndarray:
        """Every document's score for ``terms`` (float32; a term given twice counts twice, an unknown one not at all)."""
        data, indices, indptr = self.scores["data"], self.scores["indices"], self.scores["indptr"]
        out = np.zeros(self.n_docs, dtype=np.float32)
        for t in terms:
            col = self.vocab_dict.get(t)
            if col is not None:
                s, e = indptr[col], indptr[col + 1]
                out[indices[s:e]] += data[s:e]  # a document appears once in a column
        return out
