"""Family: what the speaker does, learns or has taken up; several at once, and a new one adds, it replaces nothing.
"I'm learning Spanish", "I also started learning Japanese", "picked up the ukulele", "最近又迷上了飞盘",
"我在学西班牙语", "我会说英语和日语" -> (user, "does", Japanese). The verbs are the classes of practising, learning and
taking up in each language, not topics; a stop ("飞盘不玩了", "quit the ukulele") closes one in the store.
"""

from __future__ import annotations

import re

from agentos_mem.digest.extract.rule import en, indexed, Rule, zh
from agentos_mem.digest.extract.vocab import EN_ADV, EN_IS, ZH_ADV, ZH_I


# Not a thing one does: an amount ("a ton", "so much"), a companion ("with them"), a question word, a pronoun.
_NOT_AN_ACTIVITY = re.compile(r"^(?:it|that|this|these|those|them|to|a|an|more|lots?|tons?|so|such|much|with|from|about|how|what|"
                              r"why|where|you|the\s+hang|new\s+things|things|stuff|everything|something|anything)\b", re.I)


def _activity_ok(o: str) -> bool:
    return 1 <= len(o) <= 40 and not _NOT_AN_ACTIVITY.match(o)


# The thing, without where, when or how it is done ("Spanish on Duolingo", "the ukulele last month").
_EN_OBJ = (r"(?P<obj>[^,;:!?.]{1,40}?)(?=\s+(?:on|at|in|with|for|this|last|every|since|from|because|now|again|too|though|about|"
           r"ago|when|while|after|before|\d+|one|two|three|four|five|six|seven|eight|nine|ten|"
           r"and\s+(?:it|I|we|my))\b|\s*$|\s*[,;:!?.])")

ACTIVITIES = indexed(
    Rule("does", zh(rf"{ZH_I}?{ZH_ADV}{{0,3}}(?:在学|正在学|开始学|开始练|在练|迷上了|爱上了|入坑了|入了|学起了|练起了|玩起了)(?P<obj>[^,;:!?。的]{{1,20}})"),
          lists=True, check=_activity_ok, keys="学|练|迷上|爱上|入坑|入了|起了"),
    Rule("does", zh(rf"{ZH_I}{ZH_ADV}{{0,3}}会(?:说|讲)(?P<obj>[^,;:!?。]{{1,20}})"), lists=True, check=_activity_ok, keys="会说|会讲"),
    Rule("does", en(rf"{EN_IS}(?:'m|\s*am|\s*have\s+been|'ve\s+been)?\s*{EN_ADV}*(?:learning|studying|practicing|practising|"
                      r"(?:started|starting|began|beginning)\s+(?:to\s+learn|learning|to\s+play|playing|studying|to\s+study)|"
                      rf"(?:picked|picking|took|taking)\s+up)\s+(?:the\s+|some\s+)?{_EN_OBJ}"),
          lists=True, check=_activity_ok, keys="learn|study|practi|picked up|picking up|took up|taking up|started|began|starting"),
    Rule("does", en(rf"(?:^|[,;]\s*|\band\s+)(?:just\s+|recently\s+)?(?:picked|took)\s+up\s+(?:the\s+|some\s+)?{_EN_OBJ}"),
          lists=True, check=_activity_ok, keys="picked up|took up"),
)
