"""Cutting and trimming objects (all positions are in the normalised sentence): where an object ends, which
edge punctuation and particles go, and how "A、B和C" / "A, B and C" split into items."""

from __future__ import annotations

import re

from agentos_mem.digest.extract.normalize import HAS_CJK, CJK, EVIDENCE_CHARS, Sentence

_ZH_STOP = re.compile(r"[,;:。!?()\"《]|\.{3}")
# English clause breakers: a conjunction or a new subject ends the object ("jazz, especially bebop").
_EN_BREAK = re.compile(
    r"\s*(?:[;:!?()\"]|\s[-–—]+\s|\s+'cause\b|\.(?:\s|$)|,\s*(?=(?:but|because|'cause|cause|cuz|since|although|though|so|as|when|while|which|who|"
    r"where|especially|particularly|like|such\s+as|including|and\s+(?:I|we|it|he|she|they|you|my|our|his|her|their|the|that|this|then|also|now|still)|I|we|it|he|she|they|you|my|"
    r"that|this|then|not|which|too|etc)\b)|\s+(?:but|because|since|although|though|so\s+that|when|while|which|who|whenever|especially|particularly|"
    r"as\s+well\s+as|such\s+as|rather\s+than|instead\s+of|over|more\s+than)\b|(?<!\bI)(?<!\bwe)(?<!\byou)(?<!\bthey)\s+like\b|\s+and\s+(?:I|we|it|"
    r"he|she|they|you|my|our|his|her|their|the|that|this|then|also|now|still)\b)",
    re.I,
)
_EN_COMMA = re.compile(r"\s*,(?!\d{3}\b)")  # not the thousands of "$2,400"
_TRIM_LEAD = re.compile(r"[\s,.:;!?~\-了是为着]+")
_TRIM_TAIL = re.compile(
    r"(?:[\s,.:;!?~\-。]|(?<=[" + CJK + r"\w\s])(?:了|啦|呀|啊|哦|喔|吧|呢|嘛|哈|哟|的啦|咯|呐)(?=[\s,.:;!?~。]*$))+$"
)


_CLOSING = {'"': '"', "《": "》", "'": "'"}


def cut(sent: Sentence, a: int, b: int, lists: bool = False) -> int:
    """End of the object that starts at ``a``: the clause end (CJK), or the first breaker (English)."""
    s = sent.s
    while a < b and s[a].isspace():
        a += 1
    if a < b and s[a] in _CLOSING:  # a quoted title is one object: "Listen to Mom", 《百年孤独》
        k = s.find(_CLOSING[s[a]], a + 1, b)
        if k > a:
            return k + 1
    if sent.cjk:
        m = _ZH_STOP.search(s, a, b)
        if m:
            b = m.start()
        if not lists or not HAS_CJK.search(s, a, b):
            m2 = _EN_BREAK.search(s, a, b)
            if m2 and not HAS_CJK.search(s, a, m2.start()):
                b = m2.start()
        return b
    m = _EN_BREAK.search(s, a, b)
    if m:
        b = m.start()
    if not lists:
        m = _EN_COMMA.search(s, a, b)
        if m:
            b = m.start()
    return b


def trim(s: str, a: int, b: int) -> tuple[int, int]:
    """Drop edge punctuation, spaces and sentence particles; drop quotes around the whole object or left unpaired."""
    for _ in range(2):
        m = _TRIM_LEAD.match(s, a, b)
        if m:
            a = m.end()
        m = _TRIM_TAIL.search(s[a:b])
        if m:
            b = a + m.start()
        if b - a < 2:
            break
        q = s[a]
        if q in "\"'" and s[b - 1] == q and s.count(q, a, b) == 2:
            a, b = a + 1, b - 1
        elif q in "\"'" and s.count(q, a, b) % 2:
            a += 1
        elif s[b - 1] in "\"'" and s.count(s[b - 1], a, b) % 2:
            b -= 1
        else:
            break
    return a, b


# List items: 、 always; a final 和/及/以及/还有/或 when 、 is there; 和/与/跟 between two short items.
# ("AC/DC、枪与玫瑰等摇滚乐队": 与 inside a 、 list is part of a name, and "等…" closes the list.)
_ZH_LIST_SEP = re.compile(r"、|以及|和|及|还有|或者|或")
_ZH_PAIR_SEP = re.compile(r"和|与|跟")
_ZH_ETC = re.compile(r"等(?:等)?[^、]*$")
_EN_LIST_SEP = re.compile(r"\s*,\s*(?:and\s+|or\s+)?|\s+(?:and|or)\s+", re.I)


# A list inside a prepositional phrase ("在海滩、山脉和湖泊附近拍摄") is one thing, not three.
_ZH_PP_START = re.compile(r"[在和跟与去到用对给为从把向往]")
# An English item that starts with an adverb or a verb of its own ends the list ("..., and often focus on").
_EN_PP_END = re.compile(r"\s(?:near|in|at|on|around|by|from)\s+[\w\-']+$", re.I)
_EN_ITEM_STOP = re.compile(
    r"(?:often|usually|sometimes|always|also|then|still|even|really|just|especially|so|but)\b", re.I
)


def split_list(sent: Sentence, a: int, b: int) -> list[tuple[int, int]]:
    s = sent.s
    seg = s[a:b]
    if sent.cjk and HAS_CJK.search(seg):
        if _ZH_PP_START.match(seg):
            return [(a, b)]
        if "、" in seg:
            etc = _ZH_ETC.search(seg)
            if etc and etc.start() > 0:
                b = a + etc.start()
            seps = list(_ZH_LIST_SEP.finditer(s, a, b))
        else:
            seps = list(_ZH_PAIR_SEP.finditer(s, a, b))
            if len(seps) != 1:
                return [(a, b)]
            left, right = s[a : seps[0].start()], s[seps[0].end() : b]
            if not (1 <= len(left) <= 4 and 1 <= len(right) <= 4 and "的" not in left + right):
                return [(a, b)]
    else:
        # a real list has "and"/"or" before its last item or several commas ("a safe, inviting place" is one thing)
        commas = seg.count(",")
        if not commas:
            return [(a, b)]
        if commas == 1 and not re.search(r"\s(?:and|or)\s", seg[seg.rfind(",") :], re.I):
            return [(a, a + seg.index(","))]
        if _EN_PP_END.search(seg, 0, seg.index(",")):
            return [(a, b)]  # "shooting near beaches, mountains, and lakes": the list belongs to the preposition
        seps = list(_EN_LIST_SEP.finditer(s, a, b))
    spans, p = [], a
    for m in seps:
        if m.start() > p:
            spans.append((p, m.start()))
        p = m.end()
    spans.append((p, b))
    spans = [sp for sp in spans if sp[1] > sp[0]] or [(a, b)]
    if sent.cjk:
        # "晴朗、温暖的天气": adjectives sharing one head noun stay together
        if len(spans) > 1 and "的" in s[spans[-1][0] : spans[-1][1]] and not any("的" in s[x:y] for x, y in spans[:-1]):
            return [(a, b)]
        return spans
    for i, (x, _y) in enumerate(spans[1:], start=1):
        if _EN_ITEM_STOP.match(s, x):
            return spans[:i]
    return spans


def evidence_of(sent: Sentence) -> str:
    return sent.orig(0, len(sent.s))[:EVIDENCE_CHARS]


# Time words after an English object ("Go now", "Python these days") are not part of the value.

OBJ_TAIL_NOW = re.compile(
    r"(?:\s+(?:now|already|today|yesterday|tomorrow|originally|as\s+well|too|also|currently|anymore|at\s+the\s+moment|these\s+days|right\s+now|"
    r"lately|recently|a\s+lot|very\s+much|so\s+much|sometimes|often|usually))+$",
    re.I,
)
