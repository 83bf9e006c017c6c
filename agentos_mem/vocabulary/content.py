"""Words that name something: what two sentences must share to be about the same thing.

``EN_COMMON``: English words any sentence about a change or a habit is made of ("now", "switched", "week"): never what
two sentences share about a thing (the digest's slot matcher, digest.slots ``content``, and ``content_words`` here).

``content_words`` (the query's topic threads, query.threads): jieba's words of two characters or more that are no stop
words, no bare numbers and not of the everyday words: Chinese words as common as ``IDF_FLOOR`` in jieba's IDF table
(今天 4.99, 问题 3.96, 公司 3.50, 最近 5.77, 喜欢 5.70 fall below it; 测试 7.15, 机器 6.64, 数据库 8.92 do not: read
off the dictionary, not off any evaluation), English words of ``EN_COMMON``. English words are cut to their first five
letters ("pipelines" meets "pipeline"). A longer Chinese word also gives the words of two characters inside it that
the table knows (集成测试 -> 集成, 测试; 测试机 -> 测试): jieba cuts one thing differently in different sentences.
"""

from __future__ import annotations

import re

from agentos_mem.kernel.text import CJK, idf_table, words

EN_COMMON = frozenset(
    """the and for with from that this these those have has had was were are been being now still just also really then
    than into onto over about some any all our your their his her its they them what when where which who how not but
    use used using uses get got getting day days week weeks month months year years time today yesterday tomorrow lately
    currently nowadays anymore longer instead switched moved changed joined left new old most more very much""".split()
)
IDF_FLOOR = 6.0
_HAN = re.compile(f"^[{CJK}]+$")
_LATIN = re.compile(r"^[a-z][a-z0-9+#'.\-]*$")
_DIGITS = re.compile(r"^[\d.:,\-]+$")


def content_words(text: str, skip: frozenset[str] = frozenset()) -> set[str]:
    """The words of ``text`` that name something (module docstring); ``skip``: words never counted (a caller's labels)."""
    idf, median = idf_table()
    out: set[str] = set()
    for w in words(text):
        if len(w) < 2 or w in skip or _DIGITS.match(w):
            continue
        if _HAN.match(w):
            if idf.get(w, median) >= IDF_FLOOR:
                out.add(w)
            if len(w) > 2:
                out |= {w[i:i + 2] for i in range(len(w) - 1) if idf.get(w[i:i + 2], 0.0) >= IDF_FLOOR}
        elif _LATIN.match(w):
            if len(w) >= 3 and w not in EN_COMMON:
                out.add(w[:5])
        else:
            out.add(w)  # a value or a name of mixed script ("8c16g", "m1pro"): the same thing spoken of
    return out
