"""Family: preferences. likes / dislikes (one candidate per list item) and prefers ("我更喜欢Go",
"please always use X"); the rejected side of a comparison ("Go over Java", "Go 而不是 Java") becomes prefers_not."""

from __future__ import annotations

import re

from agentos_mem.digest.extract.rule import en, Found, indexed, Rule, zh
from agentos_mem.digest.extract.vocab import EN_ADV, EN_I, EN_IS, ZH_ADV, ZH_I

_PREF_BAD_START = re.compile(
    r"^(?:你|您|他|她|它|这|那|上你|听你|和你|跟你|与你|看你|and\b|or\b|but\b|you\b|your\b|their\b|his\b|its\b|(?:to|so|too)$|it\b|it's\b|that\b|this\b|these\b|"
    r"those\b|them\b|him\b|her\b|how\b|what\b|when\b|the\s+way\b|the\s+idea\b|to\s+hear\b|hearing\s+from\b|chatting\b|talking\s+to\b)",
    re.I,
)


def pref_ok(o: str) -> bool:
    return 1 <= len(o) <= 60 and not _PREF_BAD_START.search(o) and not re.search(r"\byou(?:r)?\b|你|您", o, re.I)


# "My favorite editor is Vim", "我最喜欢的乐队是Radiohead": one favorite of a kind at a time, so a single-valued slot
# ("favorite editor") that a later favorite supersedes, not one more like. Plural lists ("my favorite foods are ...")
# stay likes, below.
_FAVORITE = (
    re.compile(rf"我{ZH_ADV}{{0,2}}最(?:喜欢|爱)的(?P<cat>[^,;:!?。是的]{{1,10}})(?:现在|目前)?是(?P<obj>[^,;:!?。]{{1,40}})"),
    re.compile(r"\bmy\s+(?:absolute\s+|all[\s-]time\s+|current\s+|new\s+)?(?:favou?rite|fav)\s+(?P<cat>[a-z][\w\-]*(?:\s+[a-z][\w\-]*){0,2}?)"
               r"\s+(?:these\s+days\s+|now\s+|right\s+now\s+|at\s+the\s+moment\s+)?(?:is|has\s+to\s+be|would\s+be)\s+(?P<obj>[^,;:!?]{1,40}?)"
               r"\s*(?=$|[,;:!?]|\.(?:\s|$)|\s+(?:and|but|because|since|though)\b)", re.I),
)


def favorites(sent, subject: str) -> list[Found]:
    out = []
    for rx in _FAVORITE:
        for m in rx.finditer(sent.s):
            cat, obj = sent.orig(*m.span("cat")).strip(), sent.orig(*m.span("obj")).strip().rstrip(".")
            if not cat or not obj or not pref_ok(obj):
                continue
            slot = f"最喜欢的{cat}" if rx is _FAVORITE[0] else f"favorite {cat.lower()}"
            who = slot if subject == "user" else f"{subject}'s {slot}"
            out.append(Found(who, "value", obj, m.span()))
    return out


PREFERENCES = indexed(
    # 我最喜欢的X是Y / 我的爱好是Y / my favourite X is Y / my hobbies are Y: the value is the liked thing.
    Rule(
        "likes",
        zh(rf"我{ZH_ADV}{{0,2}}(?:最喜欢|最爱|喜欢|喜爱)的[^,;:!?。是]{{0,10}}是(?P<obj>.+)"),
        lists=True,
        check=pref_ok,
        keys="的",
    ),
    Rule("likes", zh(r"我的(?:兴趣)?爱好(?:是|有|包括)(?P<obj>.+)"), lists=True, check=pref_ok, keys="爱好"),
    Rule(
        "likes",
        en(r"\bmy\s+(?:absolute\s+)?(?:favou?rite|fav)\s+(?:[\w\-]+\s+){0,3}?(?:is|are|would\s+be|has\s+to\s+be)\s+(?P<obj>.+)"),
        lists=True,
        check=pref_ok,
        keys="fav",
    ),
    Rule(
        "likes",
        en(r"\bmy\s+hobb(?:y|ies)\s+(?:is|are|include|includes)\s+(?P<obj>.+)"),
        lists=True,
        check=pref_ok,
        keys="hobb",
    ),
    # Dislikes before likes: 我不(太)喜欢X / 讨厌X / I don't like X / I hate X.
    Rule(
        "dislikes",
        zh(rf"{ZH_I}{ZH_ADV}{{0,3}}(?:一点也不|一点都不|并不|不太|不怎么|不是很|不是太|不大|不)(?:喜欢|爱|喜爱)(?!的)(?P<obj>.+)"),
        lists=True,
        check=pref_ok,
        keys="不",
    ),
    Rule(
        "dislikes",
        zh(rf"{ZH_I}{ZH_ADV}{{0,3}}(?:讨厌|厌恶|反感|受不了|忍受不了)(?P<obj>.+)"),
        lists=True,
        check=pref_ok,
        keys="讨厌|厌恶|反感|受不了",
    ),
    Rule(
        "dislikes",
        zh(rf"{ZH_I}{ZH_ADV}{{0,2}}对(?P<obj>[^,;:!?。]{{1,30}}?)(?:一点也|一点都|并|都|也)?(?:不(?:太|怎么)?感兴趣|没(?:有|什么)?兴趣)"),
        keys="兴趣",
    ),
    Rule(
        "dislikes",
        en(
            rf"{EN_IS}{EN_ADV}{{0,2}}(?:don't|do\s+not|didn't|did\s+not|no\s+longer|can't|cannot)\s+{EN_ADV}{{0,2}}(?:like|love|enjoy|stand)\s+"
            rf"(?P<obj>.+)"
        ),
        lists=True,
        check=pref_ok,
        keys="n't|not|no longer|cannot",
    ),
    Rule(
        "dislikes",
        en(rf"{EN_IS}{EN_ADV}{{0,3}}(?:dislike|hate|detest|loathe)\s+(?P<obj>.+)"),
        lists=True,
        check=pref_ok,
        keys="dislike|hate|detest|loathe",
    ),
    Rule(
        "dislikes",
        en(r"\bI(?:'m|\s+am)\s+not\s+(?:a\s+(?:big\s+|huge\s+)?fan\s+of|into|interested\s+in)\s+(?P<obj>.+)"),
        lists=True,
        check=pref_ok,
        keys="not",
    ),
    # Prefers (single-valued): 我更喜欢/偏好/倾向于X, 以后都用X, 请用X / I prefer X, please always use X.
    Rule(
        "prefers",
        zh(rf"{ZH_I}{ZH_ADV}{{0,3}}(?:更喜欢|更爱|更偏爱|更偏好|更偏向|偏好|偏爱|偏向|更倾向于|更倾向|倾向于|更愿意|宁愿|宁可)(?:用|使用|采用)?(?P<obj>.+)"),
        check=pref_ok,
        keys="更|偏|倾向|宁",
    ),
    Rule(
        "prefers",
        zh(
            r"(?:以后|今后|往后|之后|从现在起|从今以后)[,\s]*(?:请|你)?(?:都|就|一律|统一|一直|全部)?(?:用|使用|采用|改用)"
            r"(?P<obj>[^,;:!?。]+?)(?:来|去)?(?:回答|回复|交流|沟通|写|编写)?(?=[,;:!?。]|$)"
        ),
        check=pref_ok,
        keys="用",
    ),
    Rule(
        "prefers",
        zh(r"请(?:你|您)?(?:以后)?(?:总是|始终|一直|都|务必|统一|一律)?(?:用|使用|采用)(?P<obj>[^,;:!?。]+?)(?:来|去)?(?:回答|回复|交流|沟通|写|编写|和我说话|跟我说话|回答我|回复我)?(?=[,;:!?。]|$)"),
        check=pref_ok,
        keys="请",
    ),
    Rule(
        "prefers",
        en(rf"{EN_I}(?:\s+{EN_ADV}{{0,3}}|'d\s+|\s+would\s+)(?:prefer|rather)\s+(?P<obj>.+)"),
        check=pref_ok,
        keys="prefer|rather",
    ),
    Rule(
        "prefers",
        en(
            r"\b(?:please\s+(?:always\s+|only\s+)?|from\s+now\s+on,?\s+(?:please\s+)?(?:always\s+)?|"
            r"going\s+forward,?\s+(?:please\s+)?(?:always\s+)?)(?:use|reply\s+in|answer\s+in|respond\s+in|write\s+in|stick\s+(?:to|with))\s+"
            r"(?P<obj>.+)"
        ),
        check=pref_ok,
        keys="use|reply|answer|respond|write|stick",
    ),
    # A practice kept up for a span of time is a standing liking: "I've played the violin for eight years",
    # "我学日语五年了", "been a Lakers fan since 2010". The span is no part of the value.
    Rule(
        "likes",
        en(
            r"\bI(?:'ve|\s+have)?\s+(?:been\s+)?(?:play(?:ed|ing)?|practic(?:ed|ing|e)|do(?:ne|ing)?|learn(?:ed|ing|t)|"
            r"collect(?:ed|ing)?|run(?:ning)?|swim(?:ming)?|climb(?:ed|ing)?|surf(?:ed|ing)?)\s+(?P<obj>[^,;:!?]{2,40}?)\s+"
            r"(?:for\s+(?:about\s+|over\s+|almost\s+|nearly\s+|like\s+)?(?:\d+|a|an|one|two|three|four|five|six|seven|eight|nine|ten|"
            r"several|many|a\s+few|a\s+couple\s+of)\s+(?:years?|months?|decades?)|since\s+(?:\d{4}|I\s+was|college|school|high\s+school))"
        ),
        check=pref_ok,
        keys="for|since",
    ),
    Rule(
        "likes",
        en(r"(?:^|\b(?:I've|I\s+have|I'm|I\s+am)\s+)(?:been\s+)?an?\s+(?:big\s+|huge\s+|die-hard\s+|lifelong\s+)?"
            r"(?P<obj>[A-Z][\w&.'-]*(?:\s+[A-Z][\w&.'-]*){0,3})\s+fan\b"),
        keys="fan",
    ),
    Rule(
        "likes",
        zh(rf"{ZH_I}(?:已经|都|坚持)?(?P<obj>[\u4e00-\u9fff]{{2,4}}?)(?:了)?(?:有)?(?:[一二三四五六七八九十两几\d]+|好几|十几|二十几)(?:年|个月)了"),
        check=pref_ok,
        keys="年|月",
    ),
    # Likes: 我(也很)喜欢/爱/热爱X, 我对X很感兴趣 / I (really) like/love/enjoy X, I'm into X.
    Rule(
        "likes",
        zh(rf"{ZH_I}{ZH_ADV}{{0,3}}(?:热爱|喜爱|喜欢|爱)(?!好|人|心|情|护|戴|国|的)(?:上了|上)?(?P<obj>.+)"),
        lists=True,
        check=pref_ok,
        keys="爱|喜",
    ),
    # "我喜欢猫，也喜欢狗" / "…，还讨厌葱": the repeated 我 is dropped after a comma.
    Rule(
        "likes",
        zh(rf"(?<=,)\s*(?:有时候|平时|偶尔)?(?:也|还|又){ZH_ADV}{{0,2}}(?:热爱|喜爱|喜欢)(?!的)(?P<obj>.+)"),
        lists=True,
        check=pref_ok,
        after_i=True,
        keys="喜|爱",
    ),
    Rule(
        "dislikes",
        zh(rf"(?<=,)\s*(?:也|还|又){ZH_ADV}{{0,2}}(?:讨厌|不喜欢|不太喜欢|受不了)(?P<obj>.+)"),
        lists=True,
        check=pref_ok,
        after_i=True,
        keys="讨厌|不|受不了",
    ),
    Rule(
        "likes",
        zh(rf"{ZH_I}{ZH_ADV}{{0,2}}对(?P<obj>[^,;:!?。]{{1,30}}?)(?<![不没])(?:很|非常|特别|比较|挺|十分|也|都|还|更|一直|超级|蛮|越来越|开始|有点|有些)*(?:感兴趣|有兴趣|着迷|痴迷|充满热情|很有热情)"),
        keys="对",
    ),
    Rule(
        "likes",
        en(rf"{EN_IS}{EN_ADV}{{0,3}}(?:like|love|enjoy|adore)\s+(?:to\s+)?(?P<obj>.+)"),
        lists=True,
        check=pref_ok,
        keys="like|love|enjoy|adore",
    ),
    Rule(
        "likes",
        en(
            rf"\bI(?:'m|\s+am)\s+{EN_ADV}{{0,2}}(?:a\s+(?:big\s+|huge\s+|great\s+)?fan\s+of|into|interested\s+in|passionate\s+about|"
            rf"obsessed\s+with|fond\s+of)\s+(?P<obj>.+)"
        ),
        lists=True,
        check=pref_ok,
        keys="fan|into|interest|passion|obsess|fond",
    ),
    Rule(
        "likes",
        en(rf"{EN_IS}{EN_ADV}{{0,2}}(?:have|'ve\s+got)\s+a\s+(?:real\s+|great\s+|deep\s+|strong\s+)?(?:passion|love)\s+for\s+(?P<obj>.+)"),
        lists=True,
        check=pref_ok,
        keys="passion|love for",
    ),
)

# "Go over Java", "Go rather than Java", "Go 而不是 Java": the alternative the speaker turned down.
_REJECTED = re.compile(
    r"^\s*(?:over|rather\s+than|instead\s+of|and\s+not|not)\s+(?P<en>[\w.+#-]+(?:\s+[\w.+#-]+)?)"
    r"|^\s*[,，]?\s*(?:而不是|而非|不是|胜过|多过|不要用|别用)\s*(?P<zh>[^,，。;；!?！？\s]{1,20})",
    re.I,
)


RATHER = re.compile(r"\s*[,，]?\s*(?:而不是|而非|胜过)\s*|\s+(?:over|than|rather\s+than|instead\s+of)\s+", re.I)
USE_PREFIX = re.compile(r"^(?:to\s+)?(?:use|using)\s+", re.I)


def rejected_alternative(sentence: str, obj: str) -> str | None:
    at = sentence.find(obj)
    if at < 0:
        return None
    m = _REJECTED.match(sentence[at + len(obj):])
    if not m:
        return None
    alt = (m.group("en") or m.group("zh") or "").strip(" .。")
    return alt or None
