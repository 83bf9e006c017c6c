"""Family: plans (nature event). 我打算X / 我下周要X / "I plan to", "I'm going to", "I'll"; and, only when the
sentence names a future date, the bare "我要X" / "I'm visiting X" (``FUTURE_PLANS``). Plans about the chat
itself ("try it", "consider your advice") are boilerplate, not plans."""

from __future__ import annotations

import re

from agentos_mem.digest.extract.rule import en, indexed, Rule, zh
from agentos_mem.digest.extract.vocab import EN_ADV, EN_ADV_NO_DO, EN_I, EN_IS, ZH_ADV, ZH_I

# Plans that say nothing about the person: about the chat or the assistant, or "try them", "check those out".
_BOILERPLATE_PLAN = re.compile(
    "|".join(
        [
            r"你的建议|您的建议|你说的|尽力|试试看$|^看看$|^聊|再聊|聊天|和你聊|跟你聊",
            r"\byour\s+(?:advice|suggestions?|recommendations?|help|words)\b|\b(?:do|try)\s+my\s+best\b|^my\s+best\b",
            r"^(?:take\s+a\s+look|think\s+about\s+it|keep\s+(?:that|it)\s+in\s+mind|do\s+(?:that|it|so)|try\s+(?:that|it)|see|go)$",
            r"^(?:have\s+to\s+)?give\s+it\s+a\s+(?:try|shot|go)\b|^keep\s+(?:you|ya|that|this|it)\b|^let\s+you\s+know\b",
            r"\bto\s+my\s+list\b|^be\b|^(?:I|you)\b|\bchat\b|\btalk\s+to\s+you\b|^miss\s+you$",
            r"^(?:\w+\s+){0,2}(?:it|them|that|this|those|these|one)(?:\s+(?:out|carefully|again|up|seriously))?$",
        ]
    ),
    re.I,
)


def not_boilerplate(o: str) -> bool:
    """Plans like "take a look" or "consider your advice" say nothing about the person."""
    return 2 <= len(o) <= 80 and not _BOILERPLATE_PLAN.search(o)


# Future time words that make "我明天要X" a plan (过去的"今天我去了" is not).
_ZH_FUTURE = (
    r"(?:明天|后天|大后天|下周[一二三四五六日天末]?|下星期[一二三四五六日天]?|下礼拜[一二三四五六日天]?|下个?月|明年|今晚|"
    r"今天晚上|这周末|周末|下周末|过几天|过两天|改天|以后|将来|待会儿?|等会儿?|一会儿|马上|月底|年底|"
    r"今天(?=要|会|打算|准备|计划))"
)
PLANS = indexed(
    # 我打算/计划/准备/将要X.
    Rule(
        "plans",
        zh(rf"{ZH_I}{ZH_ADV}{{0,3}}(?:{_ZH_FUTURE})?(?:正在|正)?(?:打算|计划|准备|规划|将要|即将|预计)(?:要)?(?P<obj>.+)"),
        check=not_boilerplate,
        keys="打算|计划|准备|规划|将要|即将|预计",
    ),
    # 我下周要/明天会X and 下周我要X.
    Rule(
        "plans",
        zh(rf"{ZH_I}{ZH_ADV}{{0,2}}{_ZH_FUTURE}{ZH_ADV}{{0,2}}(?:要|会|将|得|想)?(?P<obj>.+)"),
        check=not_boilerplate,
        keys="我",
    ),
    Rule(
        "plans",
        zh(rf"{_ZH_FUTURE}[,\s]*{ZH_I}{ZH_ADV}{{0,2}}(?:要|会|将|打算|准备|计划|得)(?P<obj>.+)"),
        check=not_boilerplate,
        keys="我",
    ),
    Rule("plans", zh(r"我的?(?:计划|打算)(?:是|就是)(?P<obj>.+)"), check=not_boilerplate, keys="计划|打算"),
    # "I plan to", "I'm going to", "I will", "my plan is to".
    Rule(
        "plans",
        en(
            rf"{EN_IS}{EN_ADV}{{0,2}}(?:am\s+|'m\s+|are\s+|'re\s+)?{EN_ADV}{{0,2}}(?:(?:planning|plan|going|intend|intending|about|hoping|"
            rf"hope)\s+to|gonna)\s+(?!(?:the|a|an|my|our|his|her|their|some)\b)(?P<obj>.+)"
        ),
        check=not_boilerplate,
        keys="plan|going|intend|about|hop|gonna",
    ),
    # "I'm going to the dentist next Tuesday": a place, so the object keeps "going to".
    Rule(
        "plans",
        en(
            rf"{EN_IS}{EN_ADV}{{0,2}}(?:am\s+|'m\s+|are\s+|'re\s+){EN_ADV}{{0,2}}(?P<obj>going\s+to\s+(?:the|a|an|my|our|his|her|their|some)\b.+)"
        ),
        check=not_boilerplate,
        keys="going",
    ),
    Rule(
        "plans",
        re.compile(
            rf"(?i:{EN_I})(?:'ll|(?i:\s+will|\s+shall))\s+(?!(?i:be\s+(?:able|happy|glad|sure|fine|ok|okay)|never|always|"
            rf"not)\b)(?i:{EN_ADV_NO_DO}{{0,2}})(?P<obj>.+)"
        ),
        check=not_boilerplate,
        keys="'ll|will|shall",
    ),
    Rule("plans", en(r"\bmy\s+plan\s+is\s+(?:to\s+)?(?P<obj>.+)"), check=not_boilerplate, keys="my plan"),
)

# Only when the sentence names a future date: "12月5日我要去参加婚礼", "I'm visiting my parents tomorrow".
FUTURE_PLANS = indexed(
    Rule("plans", zh(rf"{ZH_I}{ZH_ADV}{{0,2}}(?:要|会|将|得|想)(?P<obj>.+)"), check=not_boilerplate, keys="我"),
    Rule(
        "plans",
        en(
            rf"{EN_IS}(?:am\s+|'m\s+|are\s+|'re\s+|have\s+to\s+|need\s+to\s+|want\s+to\s+)"
            rf"(?P<obj>(?:\w+ing\b|go\b|visit\b|see\b|fly\b|meet\b|start\b).*)"
        ),
        check=not_boilerplate,
        keys="'m|am|are|'re|have to|need to|want to",
    ),
)
