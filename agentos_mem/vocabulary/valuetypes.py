"""The type of a fact's value: what kind of thing "8C16G", "Postgres 16", "5433", "周二" or "凌晨两点" is.

The fact store uses it to tell one slot from another when the words naming the attribute differ: "服务器配置 4C8G"
and "测试机 8C16G" hold the same kind of value, "系统盘 100G" does not. A type is read from the value's shape alone
(digits, units, calendar words), never from a list of topics, so it holds for any attribute in either language.
``None`` is free text (a name, a place, a phrase): the type then says nothing and the store asks for more.
"""

from __future__ import annotations

import re

from agentos_mem.vocabulary.dates import zh_number
from agentos_mem.kernel.text import nfkc, normalize_key

# Units by family: a value "150ms" and a value "2s" are both durations, "100G" and "512MB" both sizes.
_UNITS = {
    "duration": r"ms|毫秒|秒钟?|sec(?:ond)?s?|s|min(?:ute)?s?|分钟|小时|hours?|hrs?|h|天|days?|周|weeks?|个?月|months?|年|years?",
    "size": r"[kmgtp]i?b|[mgt]|bytes?|字节|兆|g盘",  # not a bare k: "5K run", "10k steps" count thousands
    "distance": r"km|公里|千米|m|米|miles?|mi|ft|feet",
    "money": r"元|块钱?|rmb|cny|usd|\$|美元|欧元|eur|€|¥|k/月|万",
    "weight": r"kg|公斤|斤|克|g|lbs?|pounds?",
    "percent": r"%|percent|个点",
    "rate": r"qps|tps|rps|fps|hz|mhz|ghz|mbps|gbps|次/秒|/s",
    "temperature": r"°c|°f|℃|度",
}
_NUM = r"\d+(?:[.,]\d+)?"
_QUANTITY = [(family, re.compile(rf"(?:^|(?<=[^\w.]))(?:[$¥€])?{_NUM}\s*(?:{units})(?![a-z])", re.I))
             for family, units in _UNITS.items()]
# The same amounts in Chinese numerals: 两周, 三个月, 一个半小时, 半小时, 五公里, 两块钱; and 3分半 (three and a half
# minutes). Not a lone 一 ("一天", "一周" say "a day", "a week" as often as one), not a numeral of a weekday or an
# ordinal (周三, 第三天), and a month only with 个 (三月 is March, 三个月 three months).
_ZH_QTY_NUM = (r"(?<![周期拜第零〇一二两三四五六七八九十百千万\d])(?![零〇一二两三四五六七八九]{3})"  # 二〇二六年 is a year
               r"(?:(?!一(?![零〇一二两三四五六七八九十百千万个]|分半))[零〇一二两三四五六七八九十百千万]+(?:个半|个)?|半个?)")
_ZH_UNITS = {
    "duration": r"秒钟?|分半钟?|分钟|小时|钟头|天|周(?!年)|星期|(?<=个)月|(?<=半)月|年(?!级|纪)",
    "distance": r"公里|千米|米",
    "money": r"块钱?|元",
    "weight": r"公斤|斤",
}
_ZH_QUANTITY = [(family, re.compile(rf"{_ZH_QTY_NUM}(?:{units})")) for family, units in _ZH_UNITS.items()]
_HALF_MINUTES = r"\d+\s*分半钟?"
_QUANTITY += [*_ZH_QUANTITY, ("duration", re.compile(rf"(?<![\w.]){_HALF_MINUTES}"))]
_MONEY_PREFIX = re.compile(rf"[$¥€]\s*{_NUM}")
_SPEC = re.compile(r"\d+\s*(?:c|核|vcpus?|cores?)\s*[/xX×]?\s*\d+\s*(?:g|gb|gib)(?![a-z])|\d+\s*核\s*\d+\s*g", re.I)
# Clock times in every shape people write them: 7:40, 9:30am, 10 a.m., 9 o'clock, half past 9, noon; 九点半, 7点40,
# 凌晨两点, 下午三点一刻, 十点钟. A Chinese numeral hour needs 点/点钟 after it and is not 几点 (a question).
_ZH_HOUR = r"(?:[零〇一二两三四五六七八九十]{1,3}|\d{1,2})"
_CLOCK_SRC = (
    r"(?<![0-9A-Za-z:])\d{1,2}[:：]\d{2}(?:\s*(?:am|pm|a\.m\.|p\.m\.))?|(?<![0-9A-Za-z])\d{1,2}\s*(?:am|pm|a\.m\.|p\.m\.)|\b\d{1,2}\s*o'clock\b|"
    r"\b(?:half\s+past|quarter\s+(?:past|to))\s+(?:\d{1,2}|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve)\b|"
    r"\b(?:noon|midnight)\b|"
    # "一点" alone is "a little" (一点点, 有一点): a day part before it or 钟/半/分 after it makes it a time
    rf"(?:凌晨|清晨|早上|早晨|上午|中午|下午|傍晚|晚上|夜里|半夜){_ZH_HOUR}\s*点(?:钟|半|一刻|三刻|过?{_ZH_HOUR}分?|\d{{1,2}}分?)?|"
    rf"(?<![有一])(?:[零〇两三四五六七八九十]{{1,3}}|[一二]?十[一二]?|\d{{1,2}})\s*点(?:钟|半|一刻|三刻|过?{_ZH_HOUR}分?|\d{{1,2}}分?)?(?![点儿])|"
    r"(?<![有一])一点(?:钟|半|一刻|过?[零〇一二两三四五六七八九十\d]{1,3}分)"
)
_CLOCK = re.compile(_CLOCK_SRC, re.I)
# not the 周 of a count (两周一个迭代, 一周三次), but the second of two weekdays (周三周四)
_ZH_WEEK = r"(?:(?<=[周期拜][一二三四五六日天])|(?<![零〇一二两三四五六七八九十百千万\d]))(?:周|星期|礼拜)"
_WEEKDAY = re.compile(rf"{_ZH_WEEK}(?:[一二三四五六日天](?!个)|末)|\b(?:mon|tues?|wed(?:nes)?|thu(?:rs)?|fri|sat(?:ur)?|sun)(?:day)?s?\b", re.I)
_DATE = re.compile(r"\d{4}-\d{1,2}-\d{1,2}|\d{1,2}月\d{1,2}[日号]|\b(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\.?\s+\d{1,2}\b", re.I)
_VERSION = re.compile(r"\bv?\d+(?:\.\d+){1,3}\b|[A-Za-z][A-Za-z+#.\-]*\s?v?\d+(?:\.\d+)*\b")
_EMAIL = re.compile(r"[\w.+-]+@[\w-]+\.[\w.]+")
_URL = re.compile(r"https?://\S+|\b[\w-]+(?:\.[\w-]+)+/\S*")
_NUMBER = re.compile(rf"^\s*{_NUM}\s*$")
# A number counted by a Chinese measure word: 2号线, 14号线, 二年级, 3楼, 5期. The measure word is the type: line 2 and
# line 14 are one kind of value, a grade another.
_ZH_NUMERAL = r"[零〇一二两三四五六七八九十百]+"
# Counted things: a number and the noun it counts ("3 cups", "1 cup", "三杯", "两次"). The noun is part of the type: cups
# of coffee a day and runs a week are different slots, and one count of cups replaces another whatever verb says it.
# (not 个/位/名: they count anything, so "3个项目" and "2个孩子" would look like one kind of value)
_ZH_COUNTERS = "杯|次|本|只|台|辆|张|瓶|顿|节|篇|首|部|条|套|双|件|片|趟|圈|遍|盒|包|支|根|门"
# (一 alone is "a": "一只猫" is a cat, not a count of one)
# A whole number as people write it: 1,200 is one number (its last group is no count of its own: "1,200 partitions")
_INT = r"(?<!\d,)(?:\d{1,3}(?:,\d{3})+(?![\d,])|\d+)"
_ZH_COUNT = re.compile(rf"(?:{_INT}|(?!一[{_ZH_COUNTERS}])[零〇一二两三四五六七八九十百]+)\s*(?P<unit>{_ZH_COUNTERS})(?![\u4e00-\u9fff]*?(?:钱|元))")
_EN_NOT_COUNTED = frozenset(
    "of to and or in on at for the a an more less than percent per times_ am pm years year old days day weeks week months month "
    "hours hour minutes minute mins min seconds second secs sec "
    # verbs that end in s ("8080 was the old one", "3 is fine"): what follows a number, not what it counts
    "was is has does goes says gets makes takes seems looks needs runs works".split()
)
# a plural noun after a number, or a singular one after 1 ("3 cups", "1 cup"); not "5432 kept clashing"
_EN_COUNT_SRC = rf"(?<![\w.])(?:{_INT}\s+(?P<unit>[a-z]{{2,}}s)|1\s+(?P<one>[a-z]{{3,}}))\b"
_EN_COUNT = re.compile(_EN_COUNT_SRC, re.I)


def _singular(word: str) -> str:
    w = word.lower()
    if w.endswith("ies") and len(w) > 4:
        return w[:-3] + "y"
    if w.endswith(("ses", "xes", "ches", "shes")):
        return w[:-2]
    if w.endswith("s") and not w.endswith("ss"):
        return w[:-1]
    return w


def _count(text: str) -> str | None:
    m = _ZH_COUNT.search(text)
    if m:
        return f"count:{m.group('unit')}"
    for m in _EN_COUNT.finditer(text):
        unit = (m.group("unit") or m.group("one")).lower()
        if unit not in _EN_NOT_COUNTED:
            return f"count:{_singular(unit)}"
    return None


_MEASURES = ("号线", "号楼", "年级", "楼", "层", "期", "届", "班", "路", "区", "座", "栋", "室", "线")
_COUNTED = re.compile(rf"(?:\d+|{_ZH_NUMERAL})\s*(?P<unit>{'|'.join(_MEASURES)})")


_BY_SHAPE: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("spec", _SPEC), ("email", _EMAIL), ("url", _URL), ("date", _DATE), ("weekday", _WEEKDAY), ("clock", _CLOCK),
    ("quantity:money", _MONEY_PREFIX), *((f"quantity:{family}", rx) for family, rx in _QUANTITY),
)


def value_type(text: str) -> str | None:
    """The kind of value ``text`` is, by its shape: ``spec`` (4C8G, 8核16G), ``clock`` (7:40, 凌晨两点, 2am),
    ``weekday``, ``date``, ``email``, ``url``, ``quantity:<family>`` (150ms, 100G, 3000元, 5km, 80%),
    ``version`` (Postgres 16, 3.12.1, iOS 17), ``number``; ``None`` for free text."""
    s = nfkc(text or "").strip()
    if not s:
        return None
    for kind, rx in _BY_SHAPE:  # first match wins: "周二下午三点" is a weekday, "$22.99" money before any number
        if rx.search(s):
            return kind
    if _NUMBER.match(s):
        return "number"
    if (m := _COUNTED.search(s)):
        return f"counted:{m.group('unit')}"
    if (kind := _count(s)):
        return kind
    if _VERSION.search(s):
        return "version"
    return None


# Spans worth reading a value from wherever they stand in a sentence: shapes that are values and nothing else.
# Bare numbers, dates and free text are left to the sentence patterns: "跑了三次", "the 2015 run" are no values.
_ANCHORS: tuple[tuple[str | None, re.Pattern[str]], ...] = (
    ("date", _DATE),  # found first so that "4月1号" is not read as a duration; dates are not returned
    ("spec", _SPEC),
    # a port named as one ("port 5432", "端口 5433", ":8080" after a host): the number is the value
    ("port", re.compile(r"(?:\bports?|端口(?:号)?)\s*(?:is\s+|是|为|:|：|=)?\s*(?P<v>\d{2,5})\b", re.I)),
    ("clock", _CLOCK),
    ("weekday", re.compile(rf"(?:{_ZH_WEEK}[一二三四五六日天](?!个)(?:[、和跟与及/,]\s*(?:周|星期|礼拜)?[一二三四五六日天])*)"
                           r"|\b(?:mon|tues|wednes|thurs|fri|satur|sun)days?\b(?:\s*(?:,|and|&|/)\s*\b(?:mon|tues|wednes|thurs|fri|satur|sun)days?\b)*", re.I)),
    ("quantity:duration", re.compile(rf"(?<![A-Za-z0-9.]){_HALF_MINUTES}")),  # before "3分" is read as 3 minutes
    (None, re.compile(rf"(?<![A-Za-z0-9.])(?:[$¥€]\s*)?{_NUM}\s*(?:{'|'.join(_UNITS.values())})(?![a-z])", re.I)),
    *((f"quantity:{family}", rx) for family, rx in _ZH_QUANTITY),
    # an amount after its currency sign ("$2,400", "¥3,500.50"), thousands and all
    (None, re.compile(r"[$¥€]\s*\d{1,3}(?:,\d{3})+(?:\.\d+)?|[$¥€]\s*\d+(?:\.\d+)?")),
    # a product and its version: "Postgres 16", "iPhone 15", "Python 3.12", "M1 Pro"; a dotted version "3.12.1". Codes
    # glued to their number ("KR1", "Q2", "EJ16") are names of things, not versions of one.
    ("version", re.compile(r"(?<![A-Za-z0-9.-])(?:(?:[A-Z]|i[A-Z])[A-Za-z+#]+\s(?:v?\d+(?:\.\d+)*)(?:\s?(?:Pro|Max|Plus|Ultra|Mini|Lite))?\b"
                           r"|[A-Z]\d+\s(?:Pro|Max|Plus|Ultra|Mini|Lite)\b|\bv?\d+\.\d+(?:\.\d+)+\b|\bv\d+\.\d+\b)")),
    # a short code of capitals and digits ("N2", "F1", "P30"): a level, a series, a model; not before a colon (a label).
    # A model's "+" is part of its name ("RT5+" is not an "RT5"): kept, so that the value said is the value stored
    ("code", re.compile(r"(?<![A-Za-z0-9.-])[A-Z]{1,2}\d{1,3}\+?(?![A-Za-z0-9.\-+]|\s*[:：])")),
    # counted ranks only (line 2, grade 2, the 3rd cohort): 楼/层/室/路 are parts of a place, read whole with it
    ("counted", re.compile(rf"(?:\d+|{_ZH_NUMERAL})\s*(?:号线|年级|届)")),
    ("counted", _ZH_COUNT),
    ("counted", re.compile(rf"(?!\S*\s+(?:{'|'.join(sorted(_EN_NOT_COUNTED))})\b){_EN_COUNT_SRC}", re.I)),
)
# Types whose value names its own thing ("3 cups", "2号线"): one count of the same thing replaces another whatever
# attribute words come with it.
SELF_NAMED = ("count:", "counted:")


# The words a value's type is called by: a subject that is only one of them names no attribute of its own.
TYPE_WORDS = frozenset(["spec", "port", "clock", "weekday", "date", "email", "url", "number", "version", *_UNITS, *_MEASURES])


def find_values(text: str) -> list[tuple[int, int, str]]:
    """The typed values in ``text`` as (start, end, type), in order, none overlapping: "测试机升级到8C16G" ->
    [(6, 11, "spec")]; "staging is now on Postgres 16" -> [(18, 29, "version")]. Offsets index ``text`` as given
    (NFKC is not applied: a caller's offsets stay valid)."""
    out: list[tuple[int, int, str]] = []
    for kind, rx in _ANCHORS:
        for m in rx.finditer(text):
            a, b = m.span("v") if "v" in rx.groupindex else m.span()
            while b > a and text[b - 1].isspace():
                b -= 1
            if b <= a or any(a < y and x < b for x, y, _ in out):
                continue
            out.append((a, b, value_type(text[a:b]) if kind in (None, "counted") else kind))
    return sorted(x for x in out if x[2] != "date")


# What may stand between two values of one statement: "周四晚上七点", "Sundays at 4pm", "周二、周四", "8C16G 100G".
_JOIN = re.compile(r"\s*(?:at|on|,|、|和|及|与|的|/)?\s*", re.I)


def typed_extent(text: str) -> int | None:
    """Where a value that opens ``text`` with a typed value ends: after that value and any typed values joined to it
    ("6:45了" -> 4, "10am starting today" -> 4, "周四晚上七点了" -> 6, "Sundays at 4pm" -> 14); None when ``text`` does
    not open with one (free text: its own rules decide where it ends)."""
    found = find_values(text)
    if not found or found[0][0] > 1:
        return None
    end = found[0][1]
    for a, b, _kind in found[1:]:
        gap = _JOIN.match(text, end)
        if gap is None or gap.end() != a:
            break
        end = b
    tail = re.match(r"\s*[A-Z][A-Z0-9]{1,5}\b", text[end:])  # "16GB RAM", "512G SSD": the thing it measures stays
    return end + tail.end() if tail else end


_CLOCK_PARTS = re.compile(
    r"(?P<part>凌晨|清晨|早上|早晨|上午|中午|下午|傍晚|晚上|夜里|半夜)?\s*(?P<h>\d{1,2}|[零〇一二两三四五六七八九十]{1,3})\s*(?:[:：点時时]|o'clock)?\s*"
    r"(?P<m>半|一刻|三刻|\d{2}|[零〇一二两三四五六七八九十]{1,3}(?=分|$))?\s*分?\s*(?P<ap>am|pm|a\.m\.|p\.m\.)?",
    re.I,
)
_LATER_PARTS = ("下午", "傍晚", "晚上", "夜里")


def value_key(text: str) -> str:
    """The key two values are compared by: one clock time however it is written ("7点" / "七点" / "7:00" / "7am" ->
    "clock:07:00"; "晚上11点" / "11pm" -> "clock:23:00"), everything else ``normalize_key`` (case, width, punctuation).
    The same value said again in other words is then the same fact, not a change."""
    if value_type(text) == "clock":
        m = _CLOCK_PARTS.search(nfkc(text))
        hour = zh_number(m.group("h")) if m else None
        if m and hour is not None and hour <= 24:
            mins = {"半": 30, "一刻": 15, "三刻": 45}.get(m.group("m") or "", None)
            if mins is None:
                mins = zh_number(m.group("m")) if m.group("m") else 0
            ap = (m.group("ap") or "").lower().replace(".", "")
            if (ap == "pm" or m.group("part") in _LATER_PARTS) and hour < 12:
                hour += 12
            if ap == "am" and hour == 12:
                hour = 0
            return f"clock:{hour:02d}:{(mins or 0):02d}"
    return normalize_key(text)
