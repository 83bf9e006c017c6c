"""Family: identity. Role (我是一名工程师 / "I work as a nurse"), employer (我在腾讯工作 / "I work at X"),
home (我住在深圳 / "I live in X") and origin (我是四川人 / "I'm from X"), after the names: single-valued facts.

Chinese drops the repeated 我 after a comma ("我是工程师，在腾讯工作，住在深圳"): those rules are ``after_i``."""

from __future__ import annotations

import re

from agentos_mem.digest.extract.names import NAMES
from agentos_mem.digest.extract.normalize import CJK
from agentos_mem.digest.extract.rule import en, indexed, Rule, short, zh
from agentos_mem.digest.extract.vocab import EN_ADV, EN_IS, EN_ROLE, ZH_ADV, ZH_I, ZH_ROLE

_ZH_FROM_BAD = frozenset("成年 年轻 中年 老年 普通 有钱 外行 内行 局外 当事 过来 明白 好 坏 穷 病 懒 一个 这样 那样".split())


_ZH_PLACE_BAD = re.compile(r"^[这那哪]|想|思考|考虑|换|找|学|做|看|听|写|忙|准备|尝试|努力|寻找|适应|开始|继续|家里的")


def _zh_place_ok(o: str) -> bool:
    """An employer or a place, not a verb phrase after the progressive 在 ("我在思考换工作")."""
    return 1 <= len(o) <= 15 and not _ZH_PLACE_BAD.search(o)


ROLES_AND_PLACES = indexed(
    # 我是(一名)X工程师: a role noun ends the clause.
    Rule(
        "role",
        zh(rf"{ZH_I}{ZH_ADV}{{0,3}}是(?:一名|一位|一个|一|名|个)?(?P<obj>[^,;:!?。]{{0,16}}?(?:{ZH_ROLE}))(?=\s*(?:$|[,;:!?。]|了|啦|呀|哦|呢))"),
        keys="是",
    ),
    # 我的工作/职业是X.
    Rule("role", zh(r"我的(?:工作|职业|职位|身份)是(?:一名|一位|一个|一|名|个)?(?P<obj>.+)"), check=short(20), keys="我的"),
    # 我在X当/做/担任Y (role) and 我在X工作 (works_at) below.
    Rule(
        "role",
        zh(rf"我{ZH_ADV}{{0,3}}在[^,;:!?。]{{1,20}}?(?:当|做|担任|任)(?:一名|一位|一个|一|名|个)?(?P<obj>[^,;:!?。]{{0,12}}?(?:{ZH_ROLE}))"),
        keys="在",
    ),
    # "I am a software engineer", "I'm also a teacher": needs a role noun.
    Rule(
        "role",
        en(rf"\bI(?:'m|\s+am)\s+{EN_ADV}{{0,3}}(?:a|an)\s+(?P<obj>(?:[\w\-]+\s+){{0,3}}?(?:{EN_ROLE})s?)\b"),
        keys="i'm|i am",
    ),
    # "I work as a nurse".
    Rule(
        "role",
        en(
            rf"\bI\s+{EN_ADV}{{0,2}}(?:work|am\s+working|'m\s+working)\s+as\s+(?:a\s+|an\s+|the\s+)?"
            rf"(?P<obj>[\w\- ]{{1,40}}?)(?=\s+(?:at|for|in|with)\b|\s*[,.;!?]|$)"
        ),
        keys="work",
    ),
    Rule(
        "role",
        en(r"\bmy\s+(?:job|profession|occupation)\s+is\s+(?:a|an)\s+(?P<obj>.+)"),
        check=short(40),
        keys="my job|my prof|my occup",
    ),
    # 我在X工作/上班/实习.
    Rule(
        "works_at",
        zh(rf"我{ZH_ADV}{{0,3}}在(?P<obj>[^,;:!?。]{{1,20}}?)(?:工作|上班|实习|任职|就职|打工)(?![\u4e00-\u9fff])"),
        check=_zh_place_ok,
        keys="在",
    ),
    Rule(
        "works_at",
        zh(rf"我{ZH_ADV}{{0,3}}在(?P<obj>[^,;:!?。]{{1,20}}?)(?:当|做|担任)(?:一名|一位|一个|一|名|个)?[^,;:!?。]{{0,12}}?(?:{ZH_ROLE})"),
        check=_zh_place_ok,
        keys="在",
    ),
    # "我是工程师，在腾讯工作，住在深圳": Chinese drops the repeated 我 after a comma.
    Rule(
        "works_at",
        zh(rf"(?<=,)\s*{ZH_ADV}{{0,3}}在(?P<obj>[^,;:!?。]{{1,20}}?)(?:工作|上班|实习|任职|就职)(?![\u4e00-\u9fff])"),
        after_i=True,
        check=_zh_place_ok,
        keys="在",
    ),
    Rule(
        "lives_in",
        zh(rf"(?<=,)\s*{ZH_ADV}{{0,3}}(?:住在|居住在|生活在|定居在|家住|家在)(?P<obj>[^,;:!?。]{{1,25}})"),
        after_i=True,
        keys="住|家",
    ),
    # "我叫林晓，是一名后端工程师", "base 在杭州": the same dropped 我 before a role or a base city.
    Rule(
        "role",
        zh(rf"(?<=,)\s*{ZH_ADV}{{0,3}}是(?:一名|一位|一个|一|名|个)?(?P<obj>[^,;:!?。]{{0,16}}?(?:{ZH_ROLE}))(?=\s*(?:$|[,;:!?。]|了|啦|呀|哦|呢))"),
        after_i=True,
        keys="是",
    ),
    Rule(
        "lives_in",
        zh(r"(?:^|(?<=,))\s*(?:我)?(?:人)?(?:base|Base|BASE|常驻|驻扎)\s*在(?P<obj>[^,;:!?。\s]{1,15})"),
        check=_zh_place_ok,
        keys="base|常驻|驻扎",
    ),
    Rule("works_at", zh(rf"我{ZH_ADV}{{0,3}}(?:就职于|任职于|供职于)(?P<obj>.+)"), keys="于"),
    # "I work at/for X", "I'm a student at MIT", "I'm employed by X".
    Rule(
        "works_at",
        en(rf"\bI\s+{EN_ADV}{{0,2}}(?:work|am\s+working|'m\s+working)\s+(?:as\s+[\w\- ]{{1,40}}?\s+)?(?:at|for)\s+(?P<obj>.+?)(?=\s+as\s+an?\s|$)"),
        check=short(50),
        keys="work",
    ),
    Rule(
        "works_at",
        en(rf"\bI(?:'m|\s+am)\s+{EN_ADV}{{0,2}}(?:a|an)\s+(?:[\w\-]+\s+){{0,3}}?(?:{EN_ROLE})\s+(?:at|with)\s+(?P<obj>.+)"),
        check=short(50),
        keys=" at | with ",
    ),
    Rule(
        "works_at",
        en(r"\bI(?:'m|\s+am)\s+employed\s+(?:at|by)\s+(?P<obj>.+)"),
        check=short(50),
        keys="employed",
    ),
    # 我住在X / I live in X.
    Rule(
        "lives_in",
        zh(rf"{ZH_I}{ZH_ADV}{{0,3}}(?:住在|居住在|生活在|定居在|家住|家在)(?P<obj>.+)"),
        check=short(25),
        keys="住|家|生活|居",
    ),
    Rule(
        "lives_in",
        en(rf"{EN_IS}{EN_ADV}{{0,3}}(?:live|am\s+living|'m\s+living|'re\s+living|reside|am\s+based|'m\s+based)\s+(?:in|at|near)\s+(?P<obj>.+)"),
        check=short(50),
        keys="live|reside|based",
    ),
    # Moving or staying says where one lives now: "我搬到杭州了", "我还是留在北京", "我人在深圳", "I moved to Lisbon last year".
    Rule(
        "lives_in",
        zh(rf"{ZH_I}{ZH_ADV}{{0,3}}(?:人在|留在|待在|呆在|搬到了?|搬去了?|搬家到|搬回了?|回到了?)(?P<obj>[\u4e00-\u9fffA-Za-z]{{2,10}}?)"
            r"(?:了|啦|工作|上班|生活|住)?\s*(?=$|[,;:!?。])"),
        check=_zh_place_ok,
        keys="在|搬|回到",
    ),
    Rule(
        "lives_in",
        en(rf"{EN_IS}(?:'ve|\s*have)?\s*{EN_ADV}{{0,3}}(?:moved|relocated|moving|relocating)\s+(?:back\s+)?to\s+"
            r"(?P<obj>(?-i:[A-Z])[\w\-]+(?:\s+(?-i:[A-Z])[\w\-]+)?)(?=\s*(?:$|[,;.!?]|\s+(?:last|this|in|a|two|three|recently|for|with|because)\b))"),
        keys="moved|relocat|moving",
    ),
    # "我现在在字节做后端": where one does one's work.
    Rule(
        "works_at",
        zh(rf"我{ZH_ADV}{{0,3}}在(?P<obj>[^,;:!?。\s]{{2,12}}?)(?:做|干|写|负责)[\u4e00-\u9fffA-Za-z]{{1,8}}(?=$|[,;:!?。])"),
        check=_zh_place_ok,
        keys="在",
    ),
    # "I'm in Lisbon." said of oneself, with nothing after the place (not "I'm in Paris for a week"): where one lives.
    Rule(
        "lives_in",
        en(r"\bI(?:'m|\s+am)\s+(?:still\s+|currently\s+|now\s+)?(?:based\s+)?in\s+(?P<obj>[A-Z][a-z]+(?:\s+[A-Z][a-z]+)?)\s*(?:[.!]|$)"),
        keys="in",
    ),
    # 我来自X / 我是X人 / 老家在X / I'm from X.
    Rule("from", zh(rf"{ZH_I}{ZH_ADV}{{0,3}}(?:来自|出生在|出生于|生在)(?P<obj>.+)"), check=short(25), keys="来自|出生|生在"),
    Rule(
        "from",
        zh(rf"我{ZH_ADV}{{0,2}}是(?P<obj>[{CJK}]{{2,6}}?)人(?=\s*(?:$|[,;:!?。]|啊|呀|哦))"),
        check=lambda o: o not in _ZH_FROM_BAD,
        keys="人",
    ),
    Rule("from", zh(r"我的?(?:老家|家乡)(?:是|在)(?P<obj>.+)"), check=short(25), keys="老家|家乡"),
    Rule(
        "from",
        en(rf"\bI(?:'m|\s+am)\s+{EN_ADV}{{0,2}}(?:originally\s+)?from\s+(?P<obj>.+)"),
        check=short(50),
        keys="from",
    ),
    Rule(
        "from",
        en(
            r"\bI\s+(?:originally\s+)?come\s+from\s+(?P<obj>.+)|\bI\s+was\s+born\s+(?:and\s+raised\s+)?in\s+(?P<obj2>.+)|\bmy\s+hometown\s+is\s+"
            r"(?P<obj3>.+)"
        ),
        check=short(50),
        keys="come|born|hometown",
    ),
)

# One family, names first: rules of one family are not kept off each other's text.
IDENTITY = NAMES + ROLES_AND_PLACES
