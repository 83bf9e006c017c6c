"""The keyword index: Okapi BM25 over pre-tokenised units with bm25s, saved to a folder, loaded memory-mapped.

Scores are bm25s ``robertson``: rank-bm25's ``BM25Okapi(epsilon=0)`` divided by k1+1, with the same
ranking (tests/storage/test_keyword_index.py checks it on the shared golden data). A term that occurs in more
than half of the units gets idf 0 here, where rank-bm25's default ``epsilon=0.25`` would give it a small
positive weight; the tokenizer drops stop words, so such terms are rare and carry no signal anyway.

The folder holds bm25s's own files plus ``ids.json`` (unit id per document, in index order). Queries
are token lists from the same tokenizer; unknown tokens are ignored, an empty query matches nothing.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

K1 = 1.5
B = 0.75


class KeywordIndexError(RuntimeError):
    """The keyword index folder is missing, incomplete or unreadable."""


class KeywordIndex:
    def __init__(self, ids: list[str], model=None):
        self.ids = ids
        self._model = model
        self._vocab: dict[str, int] = dict(model.vocab_dict) if model is not None else {}

    def __len__(self) -> int:
        return len(self.ids)

    @classmethod
    def build(cls, ids: list[str], token_lists: list[list[str]]) -> "KeywordIndex":
        if len(ids) != len(token_lists):
            raise ValueError(f"{len(ids)} ids for {len(token_lists)} token lists")
        if not ids:
            return cls([], None)
        import bm25s

        model = bm25s.BM25(method="robertson", k1=K1, b=B)
        model.index([list(t) for t in token_lists], show_progress=False)
        return cls(list(ids), model)

    def save(self, folder: Path) -> None:
        folder = Path(folder)
        folder.mkdir(parents=True, exist_ok=True)
        if self._model is not None:
            self._model.save(str(folder))
        (folder / "ids.json").write_text(json.dumps(self.ids, ensure_ascii=False), encoding="utf-8")

    @classmethod
    def load(cls, folder: Path, mmap: bool = True) -> "KeywordIndex":
        folder = Path(folder)
        try:
            ids = json.loads((folder / "ids.json").read_text(encoding="utf-8"))
        except (OSError, ValueError) as e:
            raise KeywordIndexError(f"keyword index {folder}: ids.json unreadable ({e})") from e
        if not ids:
            return cls([], None)
        import bm25s

        try:
            model = bm25s.BM25.load(str(folder), mmap=mmap)
        except Exception as e:  # bm25s raises whatever numpy/json raise on a damaged folder
            raise KeywordIndexError(f"keyword index {folder}: {type(e).__name__}: {e}") from e
        if int(model.scores.get("num_docs", -1)) != len(ids):
            raise KeywordIndexError(f"keyword index {folder}: {model.scores.get('num_docs')} documents for {len(ids)} ids")
        return cls(ids, model)

    def scores(self, tokens: list[str]) -> np.ndarray:
        """BM25 score of every document for ``tokens`` (zeros when no token is known)."""
        known = [t for t in tokens if t in self._vocab]
        if not known or self._model is None:
            return np.zeros(len(self.ids), dtype=np.float32)
        return np.asarray(self._model.get_scores(known), dtype=np.float32)

    def coverage(self, tokens: list[str]) -> np.ndarray:
        """Per document, the share of the query's idf mass carried by the query terms it contains.

        Unlike a raw BM25 score, this does not grow with the corpus or the query length, and a term the
        corpus has never seen counts against every document (with the idf of a term in no document):
        "When did Caroline go to the support group?" asked of a memory that never met Caroline covers at
        most the weight of "support group".
        """
        n_docs = len(self.ids)
        out = np.zeros(n_docs, dtype=np.float32)
        if not n_docs or self._model is None:
            return out
        indptr, indices = self._model.scores["indptr"], self._model.scores["indices"]
        total = 0.0
        for t in dict.fromkeys(tokens):
            j = self._vocab.get(t)
            df = 0 if j is None else int(indptr[j + 1] - indptr[j])
            idf = max(0.0, float(np.log((n_docs - df + 0.5) / (df + 0.5))))
            total += idf
            if df and idf > 0:
                out[np.asarray(indices[indptr[j]:indptr[j + 1]])] += idf
        return out / total if total > 0 else out * 0

    def _top(self, s: np.ndarray, k: int) -> np.ndarray:
        hits = np.flatnonzero(s > 0)
        return hits[np.argsort(-s[hits], kind="stable")][:k]

    def search(self, tokens: list[str], k: int = 10) -> list[tuple[str, float]]:
        """The best ``k`` documents with a score above zero, best first; ties keep index order."""
        if k <= 0 or not self.ids:
            return []
        s = self.scores(tokens)
        return [(self.ids[i], float(s[i])) for i in self._top(s, k)]

    def search_covered(self, tokens: list[str], k: int = 10) -> list[tuple[str, float, float]]:
        """Like ``search``, with each document's ``coverage`` of the query: (id, score, coverage)."""
        if k <= 0 or not self.ids:
            return []
        s = self.scores(tokens)
        top = self._top(s, k)
        if top.size == 0:
            return []
        cov = self.coverage(tokens)
        return [(self.ids[i], float(s[i]), float(cov[i])) for i in top]
