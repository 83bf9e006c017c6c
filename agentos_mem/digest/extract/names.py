"""Family: names. 我叫X / 我的名字是X / "my name is Emily" / "I'm Emily" (name), 叫我X / "call me Em" (nickname,
which never supersedes the name). Names are short; "我叫了外卖" and "I'm sorry" are not names."""

from __future__ import annotations

import re

from agentos_mem.digest.extract.normalize import CJK
from agentos_mem.digest.extract.rule import indexed, Rule, zh
from agentos_mem.digest.extract.vocab import PRONOUN_SUBJECTS

_ZH_NAME_BAD = re.compile(r"[了过着在去吃做说想要会能是的把被给让很也都就我你他她它这那啊吧呢吗]")
_EN_NOT_NAMES = frozenset(
    """sorry fine good ok okay back here glad happy ready done not sure so very just also still the a an in at on
    american chinese british english french german japanese korean canadian australian indian italian spanish
    mexican russian christian muslim jewish buddhist catholic asian european african swedish dutch irish
    scottish welsh brazilian thai vietnamese filipino""".split()
)
_ZH_SURNAME = (
    "王李张刘陈杨黄赵吴周徐孙马朱胡郭何高林罗郑梁谢宋唐许韩冯邓曹彭曾肖田董袁潘于蒋蔡余杜叶程苏魏吕丁任沈姚卢姜"
    "崔钟谭陆汪范金石廖贾夏韦付方白邹孟熊秦邱江尹薛闫段雷侯龙史陶黎贺顾毛郝龚邵万钱严覃武戴莫孔向汤欧司上诸"
)


def _zh_name_ok(o: str) -> bool:
    return 1 <= len(o) <= 12 and not _ZH_NAME_BAD.search(o)


def _en_name_ok(o: str) -> bool:
    words = o.split()
    return 1 <= len(words) <= 4 and words[0].lower() not in _EN_NOT_NAMES and words[0].lower() not in PRONOUN_SUBJECTS


def _zh_greeting_name_ok(o: str) -> bool:
    return 2 <= len(o) <= 3 and (o[0] in _ZH_SURNAME or o[0] in "小老阿") and not _ZH_NAME_BAD.search(o)


NAMES = indexed(
    # 我叫X / 我的名字是X / 叫我X: a short name, not "我叫了外卖".
    Rule("name", zh(r"我(?:的名字|的姓名|名字)(?:应该|其实|实际上|现在)?(?:是|叫)\s*(?P<obj>.+)"), check=_zh_name_ok, keys="名字|姓名"),
    Rule(
        "name",
        zh(r"我(?:也|就|现在)?叫(?!了|过|着|他|她|你|它|人|车|外卖|醒|起|住|来|去|上|出|做|什么)\s*(?P<obj>.+)"),
        check=_zh_name_ok,
        keys="叫",
    ),
    # 叫我X is what to call them (a nickname), not a new name: it never supersedes 我叫张志强.
    Rule(
        "nickname",
        zh(r"(?:(?:你|您|大家)(?:也)?(?:可以|就|都)?|(?:^|(?<=[,\s])))叫我\s*(?P<obj>.+?)(?:\s*(?:就行|就好|就可以|就成|就是了|好了|吧|啦|呀|哈|就))*\s*(?=[,;:!?。]|$)"),
        check=_zh_name_ok,
        keys="叫我",
    ),
    # "你好，我是小琳": only a bare 2-3 character name after a greeting, starting with a surname or 小/老/阿.
    Rule(
        "name",
        zh(r"^(?:你好|您好|大家好|嗨|哈喽|hi|hello)[^,]{0,6},\s*我是(?P<obj>[" + CJK + r"]{2,3})\s*(?:[,。!]|$)"),
        check=_zh_greeting_name_ok,
        keys="我是",
    ),
    # "my name is Emily": first word anything, then only capitalised words.
    Rule(
        "name",
        re.compile(
            r"(?i:\bmy\s+(?:first\s+|full\s+)?name\s+is|\bmy\s+name's|\bI(?:'m|\s+am)\s+called)\s+"
            r"(?P<obj>[^\s,.;!?\"]+(?:\s+[A-Z][\w'\-]*){0,3})"
        ),
        check=_en_name_ok,
        keys="name|called",
    ),
    # "call me Em": what to call them, a nickname that never supersedes the name.
    Rule(
        "nickname",
        re.compile(r"(?i:\bcall\s+me)\s+(?P<obj>[^\s,.;!?\"]+(?:\s+[A-Z][\w'\-]*){0,2})"),
        check=_en_name_ok,
        keys="call me",
    ),
    # "I'm Emily" (case-sensitive: a capitalised name right after, then the clause ends).
    Rule(
        "name",
        re.compile(r"\b(?:I'm|I\s+am|i'm)\s+(?P<obj>[A-Z][a-z][\w'\-]*(?:[ \-][A-Z][\w'\-]*){0,2})(?=\s*(?:[,.!;?]|$)|\s+(?:and|from|here)\b)"),
        check=_en_name_ok,
        keys="i'm|i am",
    ),
)
