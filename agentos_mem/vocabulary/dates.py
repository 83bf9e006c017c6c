"""Dates, weekdays and numbers in Chinese and English text: one vocabulary, two uses.

- :func:`find_date`: the first explicit or relative date of a sentence ("2026-03-02", "12月5日", "下周三",
  "next Friday", "3 days ago"), resolved against the day of the log (the fact extractor's events and plans).
- :func:`dates_in`, :func:`weekdays_in`, :func:`numbers_in`: every date, weekday and number of a text, each
  returned with the text where they are blanked out, so that two texts can be compared on them (memory
  extraction refuses to merge "每周三开会" into "每周四开会").

The two uses share the vocabulary (Chinese digits and numerals, weekdays, English month names, number words)
and :func:`zh_number`, but not their patterns: resolving a date must not read the modal "may" as a month or
"3号线" as a day, while comparing two texts wants every date-looking span, in any case.

Standard library only: it imports nothing of the project (vocabulary sits on the kernel and imports only it).
"""

from __future__ import annotations

import re
from datetime import date, timedelta

__all__ = [
    "EN_NUMBERS", "EN_WEEKDAYS", "MONTHS", "MONTH_NAME", "MONTH_NAMES", "WEEKDAYS", "ZH_DIGITS", "ZH_UNITS", "ZH_WEEKDAYS",
    "dates_in", "find_date", "numbers_in", "weekdays_in", "zh_number",
]

# -- vocabulary -------------------------------------------------------------------------------------------------

ZH_DIGITS = {"零": 0, "〇": 0, "一": 1, "二": 2, "两": 2, "三": 3, "四": 4, "五": 5, "六": 6, "七": 7, "八": 8, "九": 9}
ZH_UNITS = {"十": 10, "百": 100, "千": 1000}
WEEKDAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")
ZH_WEEKDAYS = {"一": 0, "二": 1, "三": 2, "四": 3, "五": 4, "六": 5, "日": 6, "天": 6}  # 周X / 星期X / 礼拜X
EN_WEEKDAYS = {d.lower(): i for i, d in enumerate(WEEKDAYS)}
MONTH_NAMES = ("january", "february", "march", "april", "may", "june", "july", "august", "september", "october",
               "november", "december")
MONTHS = {m[:3]: i + 1 for i, m in enumerate(MONTH_NAMES)}  # jan .. dec
# An English month name or abbreviation. Capitalised: without IGNORECASE "May" is the month and "may" the verb.
MONTH_NAME = (
    r"(?:Jan(?:uary)?|Feb(?:ruary)?|Mar(?:ch)?|Apr(?:il)?|May|June?|July?|Aug(?:ust)?|Sept?(?:ember)?|"
    r"Oct(?:ober)?|Nov(?:ember)?|Dec(?:ember)?)"
)
EN_NUMBERS = {w: i for i, w in enumerate(["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven", "twelve"])}
# A month, a day or a count in a date: Arabic (1-2 digits) or a short Chinese numeral (十二, 二十三, 两).
_ZH_NUM = r"(?:\d{1,2}|[一二三四五六七八九十两]{1,3})"


def zh_number(s: str, *, digit_by_digit: bool = True) -> int | None:
    """A Chinese (or Arabic) numeral's value: 十二 -> 12, 二十五 -> 25, 两 -> 2, 一百零五 -> 105, 两万三千 -> 23000,
    "12" -> 12. Digits without a unit are read digit by digit (二〇二六 -> 2026, a year or a code), or, with
    ``digit_by_digit=False``, say no number (两三 and 三五 are "two or three", "three to five"). None when
    ``s`` is empty or holds no numeral character."""
    if not s:
        return None
    if s.isdigit():
        return int(s)
    if all(c in ZH_DIGITS for c in s):
        if len(s) == 1:
            return ZH_DIGITS[s]
        return int("".join(str(ZH_DIGITS[c]) for c in s)) if digit_by_digit else None
    total, section, cur, seen = 0, 0, 0, False
    for c in s:
        if c in ZH_DIGITS:
            cur, seen = ZH_DIGITS[c], True
        elif c in ZH_UNITS:
            section += (cur or 1) * ZH_UNITS[c]
            cur, seen = 0, True
        elif c == "万":
            total += (section + cur) * 10_000
            section, cur, seen = 0, 0, True
    return total + section + cur if seen else None


def _has_any(text: str, keys: tuple[str, ...]) -> bool:
    """Cheap keyword pre-check (substring tests) before an expensive alternation regex runs."""
    return any(k in text for k in keys)


# -- resolving the first date of a sentence -----------------------------------------------------------------------

_DATE_ISO = re.compile(r"(?<!\d)(?P<y>\d{4})[-/.](?P<m>\d{1,2})[-/.](?P<d>\d{1,2})(?!\d)")
_DATE_ZH_FULL = re.compile(rf"(?P<y>\d{{4}})\s*年\s*(?P<m>{_ZH_NUM})\s*月\s*(?P<d>{_ZH_NUM})\s*[日号]")
_DATE_ZH_MD = re.compile(rf"(?<![\d年])(?P<m>{_ZH_NUM})\s*月\s*(?P<d>{_ZH_NUM})\s*[日号]?(?!\d)")
_DATE_ZH_D = re.compile(r"(?<![\d月年.:])(?P<d>\d{1,2}|[一二三]?十[一二三四五六七八九]?|[一二三四五六七八九])号(?![楼线房门床位球机车窗口店馆厅院屋桌码])")
_DATE_EN_MD = re.compile(rf"\b(?P<mon>{MONTH_NAME})\.?\s+(?P<d>\d{{1,2}})(?:st|nd|rd|th)?\b(?:,?\s+(?P<y>\d{{4}}))?")
_DATE_EN_DM = re.compile(rf"\b(?P<d>\d{{1,2}})(?:st|nd|rd|th)?\s+(?:of\s+)?(?P<mon>{MONTH_NAME})\b\.?(?:,?\s+(?P<y>\d{{4}}))?")
_REL_ZH_DAY = re.compile(r"大前天|前天|昨天|昨晚|昨日|今天|今晚|今早|今日|大后天|后天|明天|明早|明晚|明日")
_REL_ZH_WEEK = re.compile(r"(?P<w>上|下|这|本)(?:个)?(?:周|星期|礼拜)(?P<d>[一二三四五六日天末])?")
_REL_ZH_MONTH = re.compile(r"(?P<w>上|下)个?月(?![\d一二三四五六七八九十])")
_REL_ZH_AGO = re.compile(rf"(?P<n>{_ZH_NUM})\s*(?:个)?(?P<u>天|周|星期|礼拜)(?P<dir>前|后|以前|以后|之前|之后)")
_REL_EN_DAY = re.compile(
    r"\b(?:the\s+day\s+before\s+yesterday|the\s+day\s+after\s+tomorrow|yesterday|today|tonight|tomorrow|this\s+(?:morning|afternoon|evening)|"
    r"last\s+night)\b",
    re.IGNORECASE,
)
_REL_EN_WEEK = re.compile(rf"\b(?P<w>last|next|this|coming)\s+(?P<u>week|weekend|month|{'|'.join(EN_WEEKDAYS)})\b", re.IGNORECASE)
# "3 days ago", "a week ago", "in two days" (not "in a day": "Rome wasn't built in a day"). "one" to "twelve".
_EN_COUNT = "|".join(w for w, n in EN_NUMBERS.items() if n)
_REL_EN_AGO = re.compile(
    rf"\b(?P<n>\d{{1,2}}|a|an|{_EN_COUNT})\s+(?P<u>day|week)s?\s+ago\b"
    rf"|\bin\s+(?P<n2>\d{{1,2}}|{_EN_COUNT})\s+(?P<u2>day|week)s?\b",
    re.IGNORECASE,
)
_ZH_REL_OFFSETS = {"大前天": -3, "前天": -2, "昨天": -1, "昨晚": -1, "昨日": -1, "今天": 0, "今晚": 0, "今早": 0, "今日": 0,
                   "明天": 1, "明早": 1, "明晚": 1, "明日": 1, "后天": 2, "大后天": 3}
_MODAL_MAY = re.compile(r"\b(?:I|you|we|it|he|she|they)\s+$")
# Cheap pre-check: no digit and none of these (lower-cased) words means no date at all.
_DIGIT = re.compile(r"\d")
_DATE_KEYS = (
    "号", "天", "晚", "早", "周", "期", "拜", "月", "day", "tonight", "tomorrow", "morning", "afternoon", "evening",
    "night", "week", "month", "ago", "jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec",
)


def _day_number(t: str) -> int:
    """A month, day or count of a date pattern; 0 (no date) for what is no single number (两三: "two or three")."""
    return zh_number(t, digit_by_digit=False) or 0


def _mk(y: int, m: int, d: int) -> date | None:
    try:
        return date(y, m, d)
    except ValueError:
        return None


def _near(day: date, m: int, d: int) -> date | None:
    """A month-day without a year: the year that puts it within six months of ``day``."""
    best = None
    for y in (day.year - 1, day.year, day.year + 1):
        c = _mk(y, m, d)
        if c and (best is None or abs((c - day).days) < abs((best - day).days)):
            best = c
    return best


def _month_start(day: date, step: int) -> date:
    """First day of the previous (step < 0) or next month."""
    first = day.replace(day=1)
    return (first - timedelta(days=1)).replace(day=1) if step < 0 else (first + timedelta(days=32)).replace(day=1)


def _monday(day: date) -> date:
    return day - timedelta(days=day.weekday())


def find_date(s: str, day: date) -> tuple[str, int, int] | None:
    """The first explicit or relative date of a sentence, resolved against ``day``: (ISO date, start, end) of
    the span that says it, or None. Explicit dates come first (ISO, 2026年12月5日, 12月5日, May 5th, 5 May,
    15号), then relative days (昨天, tomorrow), weeks (下周三, next Friday), months (上个月) and counts
    (3天前, in two days). A date without a year takes the year that puts it nearest ``day``."""
    if not _DIGIT.search(s) and not _has_any(s.lower(), _DATE_KEYS):
        return None
    m = _DATE_ISO.search(s) or _DATE_ZH_FULL.search(s)
    if m:
        d = _mk(int(m["y"]), _day_number(m["m"]), _day_number(m["d"]))
        if d:
            return d.isoformat(), m.start(), m.end()
    m = _DATE_ZH_MD.search(s)
    if m and _day_number(m["m"]) <= 12:
        d = _near(day, _day_number(m["m"]), _day_number(m["d"]))
        if d:
            return d.isoformat(), m.start(), m.end()
    for rx in (_DATE_EN_MD, _DATE_EN_DM):
        m = rx.search(s)
        if m and not (m["mon"] == "May" and rx is _DATE_EN_MD and _MODAL_MAY.search(s, 0, m.start())):  # "we May 5"
            mon = MONTHS[m["mon"][:3].lower()]
            d = _mk(int(m["y"]), mon, int(m["d"])) if m["y"] else _near(day, mon, int(m["d"]))
            if d:
                return d.isoformat(), m.start(), m.end()
    m = _DATE_ZH_D.search(s)
    if m:
        d = _mk(day.year, day.month, _day_number(m["d"]))
        if d:
            return d.isoformat(), m.start(), m.end()
    m = _REL_ZH_DAY.search(s)
    if m:
        return (day + timedelta(days=_ZH_REL_OFFSETS[m.group()])).isoformat(), m.start(), m.end()
    m = _REL_EN_DAY.search(s)
    if m:
        w = m.group().lower()
        if "before" in w:
            off = -2
        elif "after" in w:
            off = 2
        elif w == "yesterday" or w.startswith("last"):
            off = -1
        else:
            off = 1 if w == "tomorrow" else 0
        return (day + timedelta(days=off)).isoformat(), m.start(), m.end()
    m = _REL_ZH_WEEK.search(s)
    if m:
        shift = {"上": -7, "下": 7}.get(m["w"], 0)
        base = _monday(day) + timedelta(days=shift)
        if m["d"] == "末":
            base += timedelta(days=5)
        elif m["d"]:
            base += timedelta(days=ZH_WEEKDAYS[m["d"]])
        elif shift == 0:
            base = None  # "这周" alone says nothing
        if base:
            return base.isoformat(), m.start(), m.end()
    m = _REL_EN_WEEK.search(s)
    if m:
        w, u = m["w"].lower(), m["u"].lower()
        shift = {"last": -7, "next": 7}.get(w, 0)
        if u == "month":
            if shift:
                return _month_start(day, shift).isoformat(), m.start(), m.end()
        elif u == "week":
            if shift:
                return (_monday(day) + timedelta(days=shift)).isoformat(), m.start(), m.end()
        else:
            off = 5 if u == "weekend" else EN_WEEKDAYS[u]
            return (_monday(day) + timedelta(days=shift + off)).isoformat(), m.start(), m.end()
    m = _REL_ZH_MONTH.search(s)
    if m:
        return _month_start(day, -1 if m["w"] == "上" else 1).isoformat(), m.start(), m.end()
    m = _REL_ZH_AGO.search(s)
    if m:
        n = _day_number(m["n"])
        n *= 7 if m["u"] != "天" else 1
        return (day + timedelta(days=-n if "前" in m["dir"] else n)).isoformat(), m.start(), m.end()
    m = _REL_EN_AGO.search(s)
    if m:
        raw, unit = (m["n"], m["u"]) if m["n"] else (m["n2"], m["u2"])
        n = int(raw) if raw.isdigit() else 1 if raw.lower() in ("a", "an") else EN_NUMBERS[raw.lower()]
        n *= 7 if unit.lower() == "week" else 1
        return (day + timedelta(days=-n if m["n"] else n)).isoformat(), m.start(), m.end()
    return None


# -- every date, weekday and number of a text (for comparing two texts) ------------------------------------------

_MONTH = rf"(?P<mon>{MONTH_NAME})"  # compiled with IGNORECASE below: "dec 8" and "DEC 8" too
_DATES = (
    _DATE_ISO,
    re.compile(rf"(?:(?P<y>\d{{4}})\s*年\s*)?(?P<m>{_ZH_NUM})\s*月\s*(?P<d>{_ZH_NUM})\s*[日号]"),
    re.compile(rf"(?<![A-Za-z]){_MONTH}\.?\s*(?P<d>\d{{1,2}})(?:st|nd|rd|th)?(?![\d])(?:,?\s+(?P<y>\d{{4}}))?", re.IGNORECASE),
    re.compile(rf"\b(?P<d>\d{{1,2}})(?:st|nd|rd|th)?\s+(?:of\s+)?{_MONTH}\b(?:,?\s+(?P<y>\d{{4}}))?", re.IGNORECASE),
)
_ZH_WEEKDAY = re.compile(r"(?:周|星期|礼拜)(?P<d>[一二三四五六日天])")
# Full names, or the abbreviations that are not also English words ("sat", "sun", "wed" as in married are left out).
_EN_WEEKDAY = re.compile(r"(?<![A-Za-z])(?P<d>mon|tue|wed|thu|fri|sat|sun)(?:day|sday|nesday|rsday|urday)s?(?![A-Za-z])"
                         r"|(?<![A-Za-z])(?P<a>mon|tues?|thu(?:rs?)?|fri)\.?(?![A-Za-z])", re.IGNORECASE)
_WEEKDAY_ABBR = {d[:3].lower(): i for i, d in enumerate(WEEKDAYS)}
# At least one digit or 十: "百" in 百度 or "万" in 万事 alone says no number.
_ZH_NUMERAL = "[零〇一二两三四五六七八九十百千万]*[零〇一二两三四五六七八九十][零〇一二两三四五六七八九十百千万]*"
# Words that contain a numeral character but say no number ("一直", "统一", "十分", "千万" as "by all means").
_ZH_NOT_NUMBER = (r"一直|一起|一样|一下|一律|一些|一般|一定|一致|一切|一向|一旦|一边|一点|一会|一贯|一同|一并|一概|一再|一方面|一般般"
                  r"|统一|唯一|万一|之一|十分|千万|万万|三明治|一味|专一|第一时间|一次性")
# Number words compared between texts; "one" is left out (the one I like, one of them).
_EN_NUMBER = {w: n for w, n in EN_NUMBERS.items() if n != 1}
_EN_NUMBER_WORD = r"\b(?:" + "|".join(_EN_NUMBER) + r")\b"
_NUMBER = r"\d+(?:\.\d+)?"
# One pass over the text: a word that only looks numeric ("一直") is matched first and kept as it is.
_NUMBERISH = re.compile(f"(?P<skip>{_ZH_NOT_NUMBER})|(?P<num>{_NUMBER})|(?P<zh>{_ZH_NUMERAL})|(?P<en>{_EN_NUMBER_WORD})", re.IGNORECASE)


def dates_in(s: str) -> tuple[list[tuple[int | None, int, int]], str]:
    """(year or None, month, day) of every date in ``s`` (ISO, 2026年12月5日, 12月5日, Dec 8, 8 December), and
    ``s`` with the dates blanked out. Values are as written (no calendar check): callers compare them."""
    found = []
    for pat in _DATES:
        def take(m: re.Match) -> str:
            mon = MONTHS[m.group("mon")[:3].lower()] if "mon" in m.groupdict() and m.group("mon") else zh_number(m.group("m"))
            year = int(m.group("y")) if m.group("y") else None
            found.append((year, mon, zh_number(m.group("d"))))
            return " "
        s = pat.sub(take, s)
    return found, s


def weekdays_in(s: str) -> tuple[list[str], str]:
    """The English names of the weekdays of ``s`` (周三, 星期日, 礼拜天, Tuesday, Thu.), Chinese first, and ``s``
    with them blanked out."""
    found = []

    def zh(m: re.Match) -> str:
        found.append(WEEKDAYS[ZH_WEEKDAYS[m.group("d")]])
        return " "

    def en(m: re.Match) -> str:
        found.append(WEEKDAYS[_WEEKDAY_ABBR[(m.group("d") or m.group("a"))[:3].lower()]])
        return " "
    s = _ZH_WEEKDAY.sub(zh, s)
    return found, _EN_WEEKDAY.sub(en, s)


def numbers_in(s: str) -> tuple[list[float], str]:
    """The numbers of ``s`` (Arabic, Chinese numerals, English words from "two"), sorted, and ``s`` with them
    blanked out. Words that only look numeric ("一直", "统一", "十分") are no numbers."""
    found: list[float] = []

    def take(m: re.Match) -> str:
        if m.group("num"):
            found.append(float(m.group("num")))
        elif m.group("zh"):
            found.append(float(zh_number(m.group("zh"))))
        elif m.group("en"):
            found.append(float(_EN_NUMBER[m.group("en").lower()]))
        else:
            return m.group()
        return " "
    rest = _NUMBERISH.sub(take, s)
    return sorted(found), rest
