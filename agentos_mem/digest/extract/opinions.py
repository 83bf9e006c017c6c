"""Family: opinions (predicate ``thinks``). 我觉得X / 在我看来X / "I think X", "in my opinion X": the object
runs to the sentence end. "I think so" and "我觉得你说得对" are no opinion of substance."""

from __future__ import annotations

import re

from agentos_mem.digest.extract.rule import en, indexed, Rule, zh
from agentos_mem.digest.extract.vocab import EN_ADV, ZH_ADV

_OPINION_BAD = re.compile(r"(?:(?:so|not|it|that|yes|no|so\s+too|这样|是的|对|也是)\W*$|你|您|you\b|you're\b)", re.I)


def _opinion_ok(o: str) -> bool:
    """Not "I think so" and not "我觉得你说得对" (agreeing with the assistant is no opinion of substance)."""
    return len(o) >= 2 and not _OPINION_BAD.match(o)


# Opinion markers count only at the start of a clause ("我认为很重要的项目" inside a clause is not an opinion).
_CLAUSE_START_ZH = r"(?:^|(?<=[,:]))\s*(?:(?:但是|不过|所以|而且|其实|可是|因此|嗯|好的|对|是的|说实话|老实说|总之)[,\s]*)?"
_CLAUSE_START_EN = (
    r"(?:^|(?<=[,:;]))\s*(?:(?:but|and|so|well|honestly|actually|also|yes|yeah|"
    r"oh|um|still|however|overall|anyway)[,\s]+)*"
)

OPINIONS = indexed(
    # 我觉得/我认为/我相信/在我看来X.
    Rule(
        "thinks",
        zh(rf"{_CLAUSE_START_ZH}我{ZH_ADV}{{0,2}}(?:个人)?(?:觉得|认为)(?P<obj>.+)"),
        keep_tail=True,
        check=_opinion_ok,
        keys="觉得|认为",
    ),
    Rule(
        "thinks",
        zh(r"(?:在我看来|依我看|我的看法是|我的观点是)[,\s]*(?P<obj>.+)"),
        keep_tail=True,
        check=_opinion_ok,
        keys="看来|依我看|看法|观点",
    ),
    # "I think X", "I believe X", "in my opinion X".
    Rule(
        "thinks",
        en(rf"{_CLAUSE_START_EN}I\s+{EN_ADV}{{0,2}}(?:think|believe|feel\s+that|reckon)\b(?!\s+(?:about|of|so|in)\b)\s*(?:that\s+)?(?P<obj>.+)"),
        keep_tail=True,
        check=_opinion_ok,
        keys="think|believe|feel|reckon",
    ),
    Rule(
        "thinks",
        en(r"\b(?:in\s+my\s+(?:opinion|view)|personally)\s*,\s*(?P<obj>.+)"),
        keep_tail=True,
        check=_opinion_ok,
        keys="opinion|view|personally",
    ),
)
