"""Family: corrections. A turn with a correction marker (不对 / 说错了 / "sorry, I meant" / "scratch that") marks
its value and identity facts as corrected; a weak marker (其实 / "actually") only what follows it. Two more
shapes: both values in one sentence ("端口不是5432，是5433", "the port isn't 5432, it's 5433") and a bare fix
with no subject ("不对，是5433", "No, it's 5433"), which corrects the latest single-valued fact of the last
few turns."""

from __future__ import annotations

import re
import unicodedata

from agentos_mem.digest.extract.normalize import has_any, Sentence
from agentos_mem.digest.extract.objects import trim
from agentos_mem.digest.extract.rule import Found
from agentos_mem.digest.extract.values import en_subject, value_found, value_like, zh_subject
from agentos_mem.digest.extract.vocab import ATTRIBUTE, is_technical
from agentos_mem.kernel.domain import Candidate

# A turn that corrects something said before: these mark every value/identity fact of the turn.
CORRECTION = re.compile(
    r"不对|不是的|^\s*不是\s*[,!。]|更正|纠正|搞错了|说错了|弄错了|记错了|写错了|打错了|应该是|准确地说|确切地说|准确来说|不是\S{1,20}?[,]?\s*而是|\bcorrection\b|\bI\s+meant\b|\bsorry,?\s+(?:it's|"
    r"it\s+is|I\s+meant|that's)|^\s*sorry\b|\bno,?\s+(?:it's|it\s+is|that's)|\bI\s+was\s+wrong\b|\bmy\s+(?:mistake|"
    r"bad)\b|\bscratch\s+(?:that|what\s+I\s+said)\b|\bI\s+misspoke\b|\bmake\s+that\b|\bit's\s+(?:at\s+|on\s+|in\s+)?\S+,?\s+not\b|\bisn't\s+\S+,\s+it's\b",
    re.I,
)
# Weaker markers ("其实我很喜欢…", "Actually, I love music") correct only what follows them in the same sentence.
_CORRECTION_WEAK = re.compile(r"其实|实际上|事实上|\bactually\b|\bin\s+fact\b", re.I)

# Every branch of CORRECTION / _CORRECTION_WEAK contains one of these (lower-cased) keywords.
CORRECTION_KEYS = (
    "不对", "不是", "更正", "纠正", "错了", "应该是", "准确", "确切", "correction", "meant", "sorry", "no", "wrong",
    "mistake", "my bad", "scratch", "misspoke", "make that", "it's", "isn't",
)
_CORRECTION_WEAK_KEYS = ("其实", "实际上", "事实上", "actually", "in fact")


def weak_correction(sent: Sentence) -> re.Match[str] | None:
    return _CORRECTION_WEAK.search(sent.s) if has_any(sent.lower, _CORRECTION_WEAK_KEYS) else None


# Corrections with both values in one sentence: "端口不是5432，是5433", "the port isn't 5432, it's 5433".
_ZH_NOT_BUT = re.compile(
    r"(?:^|(?<=[,:]))\s*(?P<subj>[^,;:!?。]{1,30}?)(?:并|其实|真的)?不是(?P<wrong>[^,;:!?。]{1,40}?)[,\s]*(?:而|应该|其实|实际上)?是(?P<obj>[^,;:!?。]{1,60})"
)
_EN_NOT_BUT = re.compile(
    r"(?:^|(?<=[,:;]))\s*(?P<subj>[^,;:]{1,40}?)\s+(?:is\s+not|isn't|is\s+no\s+longer|was\s+not|"
    r"wasn't)\s+(?P<wrong>[^,;:]+?),?\s+(?:but(?:\s+(?:it's|it\s+is|rather))?|it's|it\s+is|it's\s+now|rather)\s+(?P<obj>[^,;:]+)",
    re.I,
)
# Correction sentences with no subject: "不对，是5433", "No, it's 5433", "Sorry, I meant 5433".
_ZH_BARE_FIX = re.compile(
    r"^\s*(?:(?:等下|等等|等一下|不对|不是的?|错了|说错了|搞错了|弄错了|记错了|更正(?:一下)?|纠正(?:一下)?|抱歉|不好意思|哦|噢|啊|嗯|其实|实际上)[,:!。\s]*)*(?:应该是|其实是|实际上是|是|应为|改成|换成)\s*"
    r"(?P<obj>[^,;!?。]+?)(?:[,\s]*(?:而?不是|并非)(?P<wrong>[^。]+))?\s*[。!.]?\s*$"
)
_ZH_BARE_FIX_DIGITS = re.compile(r"^\s*(?:(?:不对|错了|说错了|搞错了|弄错了|记错了|更正|纠正)[,:!。\s]*)+(?P<obj>[^,;!?。]*\d[^,;!?。]*?)\s*[。!.]?\s*$")
_EN_BARE_FIX = re.compile(
    r"^\s*(?:(?:no|nope|sorry|oops|actually|correction|wait|ah|hmm|um|my\s+bad|my\s+mistake|oh)[,:!.\s]*)*(?:it's|it\s+is|it\s+should\s+be|should\s+be|that's|"
    r"that\s+should\s+be|I\s+meant|make\s+(?:that|it))\s+(?:(?:at|on)\s+(?=\S*\d))?(?P<obj>[^,;!?]+?)(?:,?\s*not\s+(?P<wrong>[^.]+))?\s*[.!]?\s*$",
    re.I,
)
_EN_BARE_FIX_DIGITS = re.compile(
    r"^\s*(?:(?:no|sorry|actually|correction)[,:!.\s]*)+(?P<obj>[^,;!?]*\d[^,;!?]*?)\s*[.!]?\s*$",
    re.I,
)
_EN_NOT_Z_BUT_Y = re.compile(r"^\s*not\s+(?P<wrong>[^,]+?),?\s+but\s+(?P<obj>[^,;!?]+?)\s*[.!]?\s*$", re.I)
_BARE_FIX_BAD = re.compile(r"我|你|因为|为了|所以|\b(?:I|me|my|you|because|so|that|this|fine|ok|okay|good|great|right)\b", re.I)


def not_but(sent: Sentence) -> list[Found]:
    """"X不是Z，是Y" / "X isn't Z, it's Y": a corrected value Y for X."""
    out = []
    if not has_any(sent.lower, ("不是", "not", "n't", "no longer")):
        return out
    regex = _ZH_NOT_BUT if sent.cjk else _EN_NOT_BUT
    for m in regex.finditer(sent.s):
        if sent.cjk:
            sa, sb, poss = zh_subject(sent.s, m.start("subj"), m.end("subj"))
        else:
            sa, sb, poss = en_subject(sent.s, m.start("subj"), m.end("subj"))
        wrong = m.group("wrong").strip()
        f = value_found(sent, sa, sb, m.start("obj"), m.end("obj"), True, False, sent.cjk)
        if f:
            f.possessive = poss
        # a contrast ("Running a business isn't easy, but ...") is no correction: the wrong value must look like one
        if f and (value_like(wrong, wrong) or is_technical(sent.s[sa:sb]) or ATTRIBUTE.search(sent.s[sa:sb])):
            f.explicitness = "corrected"
            out.append(f)
    return out


def _bare_match(sent: Sentence) -> tuple[re.Match[str] | None, int]:
    """The bare fix of the sentence, or of its widest run of clauses that is one: "等下，说错了，是周三，我糊涂了"
    holds "说错了，是周三" between a lead-in and an aside. Returns the match and the offset of the text it ran on."""
    s, clauses = sent.s, sent.clauses
    regexes = (_ZH_BARE_FIX, _ZH_BARE_FIX_DIGITS) if sent.cjk else (_EN_BARE_FIX, _EN_BARE_FIX_DIGITS, _EN_NOT_Z_BUT_Y)
    spans = [(0, len(s))] + [
        (clauses[i][0], clauses[j][1]) for i in range(len(clauses)) for j in range(len(clauses) - 1, i - 1, -1)
    ]
    for a, b in spans:
        for rx in regexes:
            m = rx.match(s[a:b])
            if m:
                return m, a
    return None, 0


def bare_correction(sent: Sentence, anchors: list[tuple[int, Candidate]], pos: int) -> Found | None:
    """"不对，是5433" / "No, it's 5433": the new value for the latest single-valued fact of the last few turns."""
    s = sent.s
    m, off = _bare_match(sent)
    if not m:
        return None
    oa, ob = trim(s, off + m.start("obj"), off + m.end("obj"))
    obj_n = s[oa:ob]
    if not (1 <= len(obj_n) <= 30) or _BARE_FIX_BAD.search(obj_n):
        return None
    for turn_pos, ref in reversed(anchors):
        if pos - turn_pos > 4:
            return None
        ref_digits = bool(re.search(r"\d", unicodedata.normalize("NFKC", ref.object)))
        if ref_digits != bool(re.search(r"\d", obj_n)) or len(obj_n) > max(2 * len(ref.object), 20):
            continue
        obj = sent.orig(oa, ob)
        if obj == ref.object:
            continue
        return Found(ref.subject, ref.predicate, obj, (off + m.start(), off + m.end()), explicitness="corrected",
                      technical=ref.technical or is_technical(obj_n))
    return None
