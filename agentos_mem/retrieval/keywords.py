"""An index card's keywords: the words a stretch of text is about, by TF-IDF over jieba's table (the digest's cards and
what the keyword side of retrieval matches them on)."""

from __future__ import annotations

from agentos_mem.kernel.text import idf_table, words


KEYWORD_CHARS = 100_000  # keywords are read from this much of a text: the topic shows long before, and jieba costs ~6 s/MB


def keywords(text: str, k: int = 8) -> list[str]:
    """Top ``k`` keywords by TF-IDF (jieba's IDF table for Chinese; the median IDF for unknown words), from the
    first ``KEYWORD_CHARS`` characters."""
    toks = words(text[:KEYWORD_CHARS])
    if not toks:
        return []
    idf, median = idf_table()
    tf: dict[str, int] = {}
    for t in toks:
        if len(t) < 2:
            continue  # single characters (Chinese or not) carry little meaning on an index card
        tf[t] = tf.get(t, 0) + 1
    first = {t: i for i, t in reversed(list(enumerate(toks)))}
    scored = sorted(tf, key=lambda t: (-tf[t] * idf.get(t, median), first[t]))
    return scored[:k]
