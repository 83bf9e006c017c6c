"""Family: a change said in free words. "Our pipelines run on GitLab CI now", "周报以后改发到钉钉了", "Last month I joined
Stripe": no pattern reads an attribute and a value from them, yet each says that something the speaker told before
holds no more. The sentence itself becomes a statement (``states``, the speaker's or the person's it names) that
*renews*: the fact store closes the current fact it replaces, which the digest finds by meaning (digest.slots), not by
words.

A change is told by the classes of words every language has for it, not by topics: verbs of changing, moving, joining
and leaving (strong: enough with a noun), and words that set now against before (weak: only with a named
thing beside them, a Latin-script name, a capitalised word, a typed value, so "现在好多了" and "now I'm tired" are
nothing). Adding is not changing: "also", "another", "也", "又" never renew. What only ends ("no longer", "不再") is
a stop (family ``stops``), not a change.
Runs last, on sentences no other family read.
"""

from __future__ import annotations

import re

from agentos_mem.digest.extract.anchored import NOT_REAL, OTHERS, TENTATIVE, anchored_person
from agentos_mem.digest.extract.events import CHAT_BOILERPLATE, event_object
from agentos_mem.digest.extract.normalize import Sentence
from agentos_mem.digest.extract.people import EN_RELATIONS
from agentos_mem.digest.extract.rule import Found
from agentos_mem.digest.extract.subjects import NOT_MINE
from agentos_mem.digest.extract.vocab import hedged, is_question
from agentos_mem.vocabulary.valuetypes import find_values

# Verbs of changing, moving, joining and leaving: done or under way ("moved to", "switching to"; not "a change to", "my
# dance moves get me pumped to"), leaving something named ("left Google", "quit my job"; not "left for our vacation").
_STRONG = re.compile(
    r"改(?:成|为|用|到|去|坐|发|在|做|走|穿|喝|吃|买|订|听|看)|换(?:成|了|到|用|去|为)|转(?:到|去|成|为|岗|行)|调(?:到|岗|去)|"
    r"搬(?:到|去|家|进)|迁(?:到|去|移到|移至|至)|跳槽|入职|加入了|离职|辞职|退休|毕业|切(?:到|换到|成|换成)|升级(?:到|成|为)|"
    r"\b(?:(?:switch|mov|migrat|transferr|upgrad|downgrad|chang|swapp|shift|relocat)(?:ed|d|ing)\s+(?:\w+\s+){0,3}?(?:over\s+)?(?:to|into|from)|"
    r"join(?:ed|ing)|(?:left|leaving|quit)\s+(?:my\s+|our\s+|the\s+)?(?:(?-i:[A-Z])|(?:job|company|team|firm|school|band|club)\b)|"
    r"replac(?:ed|ing)|trad(?:ed|ing)\s+in|became|retired|graduated|hired|promoted)\b",
    re.I,
)
# Words that set now against before.
_WEAK = re.compile(r"现在|如今|目前|眼下|这阵子|这段时间|已经|从此|以后|今后|\b(?:now|nowadays|these\s+days|currently|lately|from\s+now\s+on)\b", re.I)
# Adding, not changing ("I picked up Korean as well", "我又养了一只猫").
ADDS = re.compile(r"也|又|另外|另一|第二|多了|还有|\b(?:also|too|as\s+well|another|second|in\s+addition|additionally|added|more)\b", re.I)
# A named thing: a Latin-script name in a Chinese sentence, a capitalised word past the first in an English one.
_LATIN_NAME = re.compile(r"[A-Za-z][A-Za-z0-9+#.\-]+")
_EN_CAPITAL = re.compile(r"(?<=[\s(\"'])(?!I\b|I'|OK\b)[A-Z][A-Za-z0-9+#.\-]*")
_NOUNISH = ("n", "eng", "nz", "ns", "nt", "nr", "j", "vn")
_ZH_FUNCTION = frozenset("现在 如今 目前 已经 以后 从此 今后 时候 时间 这边 那边 我们 自己".split())


def named(text: str, cjk: bool) -> bool:
    if find_values(text):
        return True
    if cjk:
        return bool(_LATIN_NAME.search(text))
    return bool(_EN_CAPITAL.search(text))  # past the first word: a capital there only opens the sentence


def has_noun(text: str, cjk: bool) -> bool:
    if not cjk:
        return bool(re.search(r"[A-Za-z]{3,}", text))
    import jieba.posseg as pseg  # lazy: only a sentence with a change word pays for the tagger

    return any(f.startswith(_NOUNISH) and len(w) >= 2 and w not in _ZH_FUNCTION for w, f in pseg.lcut(text))


# English: whose change it is must be said (I, we, my, our, a relation); a negated, modal or future verb tells none.
_EN_MINE = re.compile(rf"\b(?:I|we|my|our|me|us|she|he|her|his)\b|\b(?:{EN_RELATIONS})\b", re.I)
# chat drops the I: "Switched our CI to GitHub Actions", "Finally moved to Berlin", "Joined Stripe last month"
_EN_DROPPED_I = re.compile(r"\s*(?:(?:just|finally|recently|already|officially)\s+)?(?:switched|moved|relocated|migrated|transferred|upgraded|"
                           r"changed|swapped|joined|left|quit|replaced|became|retired|graduated)\b", re.I)
# a person named first: "Priya relocated to Vancouver", "Emma transferred to Oak Park"
_EN_NAME_OPENS = re.compile(r"\s*(?-i:[A-Z][a-z]{2,})\s+(?:(?:has|had|just|finally|recently|already)\s+)*(?:switched|moved|relocated|"
                            r"migrated|transferred|changed|joined|left|quit|became|retired|graduated|(?:got|was)\s+promoted)\b", re.I)
_EN_NOT_DONE = re.compile(r"\b(?:won't|don't|didn't|doesn't|not|never|can|can't|may|might|must|will|'ll|gonna)\b|n't\b", re.I)


def renews(sent: Sentence) -> bool:
    """The sentence tells a change of something that held before (and adds nothing beside it)."""
    s = sent.s
    if ADDS.search(s) or TENTATIVE.search(s) or NOT_REAL.search(s):
        return False
    if not sent.cjk and (not (_EN_MINE.search(s) or _EN_DROPPED_I.match(s) or _EN_NAME_OPENS.match(s)) or _EN_NOT_DONE.search(s)):
        return False
    strong = _STRONG.search(s)
    if strong:
        return has_noun(s, sent.cjk) or named(s, sent.cjk)
    weak = _WEAK.search(s)
    return bool(weak) and named(s, sent.cjk)


def statement_facts(sent: Sentence, subject: str) -> list[Found]:
    """The sentence as a statement that renews, when it tells a change and no other family read it."""
    s = sent.s
    if any(is_question(sent, ci) for ci in range(len(sent.clauses))) or not renews(sent):
        return []
    a, b = sent.clauses[0]
    if NOT_MINE.match(s[a:b]) or OTHERS.match(s[a:b]) or re.match(r"\s*(?:你|您|you\b)", s[a:b], re.I):
        return []  # about the listener or someone unnamed
    if hedged(sent, 0, len(s)):
        return []
    obj = event_object(sent)
    if len(obj) < (5 if sent.cjk else 12) or CHAT_BOILERPLATE.search(obj):
        return []
    who = anchored_person(sent, len(s))
    return [Found(who or subject, "states", obj, (0, len(s)), renews=True)]


# What a change leaves ("left Google", "quit Stripe", "moved away from AWS", "离开了腾讯", "从阿里离职"): the name after
# a verb of leaving, or before 离职 / 辞职.
_EN_LEFT = re.compile(r"\b(?:left|quit|leaving|moved\s+(?:away\s+)?from|switched\s+(?:away\s+)?from|migrated\s+(?:away\s+)?(?:from|off)|"
                      r"got\s+rid\s+of|dropped)\s+(?:the\s+|my\s+|our\s+)?(?P<name>(?-i:[A-Z0-9])[\w+#.\-]*(?:\s+(?-i:[A-Z0-9])[\w+#.\-]*){0,2})", re.I)
_ZH_LEFT = re.compile(r"(?:离开了?|辞掉了?|退出了?)\s*(?P<name>[A-Za-z][A-Za-z0-9+#.\-]*|[\u4e00-\u9fff]{2,6}?)(?=[，,。了\s]|$)|"
                      r"从\s*(?P<name2>[A-Za-z][A-Za-z0-9+#.\-]*|[\u4e00-\u9fff]{2,6}?)\s*(?:离职|辞职|跳槽|搬走|搬出)")


def left_behind(sent: Sentence) -> str | None:
    """The name a change says it leaves, if it says one."""
    m = _EN_LEFT.search(sent.s) or _ZH_LEFT.search(sent.s)
    if not m:
        return None
    a, b = m.span("name") if m.group("name") else m.span("name2")
    return sent.orig(a, b) or None
