"""The attribute of a value claim, trimmed to the noun phrase it is (issue 40, precision before recall).

A pattern that reads "X 是 Y" or "X: Y" by its shape takes as X whatever stands before the value, and in chat that is
often a noun with the adverbs after it ("插件全 | 是 vim-plug 管的", "相机一直 | 是 X100V", "猫年糕最近老 | 半夜跑酷") or a
word cut in half by the copula jieba joined to it ("日报群里全|是"). Served as a fact, "相机一直 · X100V" is a subject
no user would recognise, and a later "相机换成了 Z30" does not meet it as the same attribute.

Read with jieba's tagger over the whole sentence (a word is tagged in its context), an attribute of two or more words:

- ends where its last whole word ends (a word the value's copula cut in half is left out);
- then loses the adverbs, time words, locatives, particles, pronouns, adjectives and spaces it ends on, down to its
  first word ("插件全" -> 插件, "主力 editor 一直" -> 主力 editor, "猫年糕最近老" -> 猫年糕).

Its first word always stays, whatever its tag: the tagger takes some nouns for adverbs or verbs (相机 is an adverb to
it, as in 相机行事; 身高 a verb), so a tag alone never removes an attribute. Only attributes with Chinese are read:
English has no tagger here, and its attribute patterns are anchored on function words already.
"""

from __future__ import annotations

from functools import lru_cache

from agentos_mem.kernel.text import has_cjk

# jieba flags a trailing word of these kinds is trimmed off: adverb, time word, locative, particles, modal,
# conjunction, preposition, pronoun, non-word (a space), adjective, state word, interjection, onomatopoeia (an
# English word is "eng", an adjectival noun "an": both stay)
_TRIM = frozenset({"d", "dg", "t", "tg", "f", "u", "ud", "ug", "uj", "ul", "uv", "uz", "y", "c", "p", "r", "rg", "rr",
                   "rz", "x", "a", "ad", "ag", "z", "e", "o"})


@lru_cache(maxsize=256)
def _tokens(text: str) -> tuple[tuple[int, int, str], ...]:
    """jieba's words of ``text`` with their offsets and tags; remembered, as a sentence with several values is read
    once per value."""
    import jieba.posseg as pseg  # lazy: only a sentence with a claimed attribute in Chinese pays for the tagger

    out, pos = [], 0
    for w in pseg.lcut(text):
        out.append((pos, pos + len(w.word), w.flag))
        pos += len(w.word)
    return tuple(out)


def attribute_phrase(sentence: str, attribute: str, before: int) -> str:
    """``attribute`` trimmed to its noun phrase in ``sentence`` (see the module); ``before``: where the value starts
    (the attribute is its last occurrence before that). An attribute that is not a span of the sentence (a rule
    rewrote it), has no Chinese, or is one word comes back as it is."""
    attr = attribute.strip()
    if not attr or not has_cjk(attr):
        return attribute
    at = sentence.rfind(attr, 0, max(before, 0) + len(attr))
    if at < 0:
        return attribute
    end = at + len(attr)
    toks = [t for t in _tokens(sentence) if at <= t[0] < end]
    if toks and toks[-1][1] > end and len(toks) > 1:  # the last word runs past the attribute: half a word
        toks.pop()
    while len(toks) > 1 and toks[-1][2] in _TRIM:
        toks.pop()
    if not toks or toks[0][0] != at:  # the attribute starts inside a word: not the tagger's to cut
        return attribute
    return sentence[at:min(toks[-1][1], end)].strip() or attribute
