"""Ranking sections some of which have no vector (query.kb.rank): nothing is embedded for them, hybrid ranks them by
their keywords, dense leaves them out, and the ranking counts them. The user's path (approve, search, rebuild): tests/cli/test_cli_kb_vectors.py."""

from __future__ import annotations

import numpy as np

from agentos_mem.query.kb import Dense, SectionIndex, rank
from agentos_mem.storage.kb_sections import SectionUnit


class Table:
    """An embedder whose vectors are a table's (query texts only: a section is never embedded through it)."""

    identity = "table-3"

    def __init__(self, queries: dict[str, list[float]]):
        self.queries = queries
        self.documents: list[str] = []

    def embed_query(self, text):
        return self.queries[text]

    def embed_documents(self, texts):
        self.documents += texts
        raise AssertionError(f"a search embedded {len(texts)} section(s)")


class Cache:
    """The embedding cache's read side (``storage.embed_cache.Cache.vectors``) over a dict."""

    def __init__(self, vectors: dict[str, np.ndarray]):
        self.rows = vectors

    def vectors(self, embedder, hashes):
        return {h: self.rows[h] for h in hashes if h in self.rows}


def unit(i: int, text: str) -> SectionUnit:
    return SectionUnit("doc", "Runbook", f"s{i}", f"Step {i}", ["Runbook", f"Step {i}"], i, i, i, 10, text)


def test_sections_without_vectors_rank_by_keywords_and_are_counted():
    units = [unit(0, "rotate the backup keys monthly"), unit(1, "backup retention is thirty days"),
             unit(2, "backup backup snapshots are verified"), unit(3, "the pager rota changes on mondays")]
    index = SectionIndex.build(units)
    hashes = index.text_hashes()
    e = np.eye(3, dtype=np.float32)
    emb = Table({"backup": [1.0, 0.0, 0.0]})
    # sections 0 and 3 were embedded; 1 and 2 were not (approved while the model was unreachable)
    dense = Dense(emb, Cache({hashes[0]: e[0], hashes[3]: e[1]}))

    hybrid = rank(index, "backup", k=4, dense=dense)
    assert hybrid.without_vectors == 2 and not emb.documents
    assert {1, 2} <= {i for i, _ in hybrid.hits}  # found by their keywords, though they have no vector
    dense_only = rank(index, "backup", k=4, mode="dense", dense=dense)
    assert {i for i, _ in dense_only.hits} == {0, 3} and dense_only.without_vectors == 2
    assert rank(index, "backup", k=4, mode="bm25").without_vectors is None

    # vectors that arrive later (an approval in another process, a rebuild) are read by the next search
    dense.cache.rows.update({hashes[1]: e[2], hashes[2]: e[2]})
    assert rank(index, "backup", k=4, dense=dense).without_vectors == 0 and not emb.documents

