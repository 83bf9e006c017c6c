"""Dates: the first explicit or relative date of a sentence ("2026-03-02", "12月5日", "下周三", "next Friday",
"3 days ago"), resolved against the day of the log."""

from __future__ import annotations

import re
from datetime import date, timedelta

from digest.extract.normalize import _has_any

_ZH_DIGITS = {"零": 0, "〇": 0, "一": 1, "二": 2, "两": 2, "三": 3, "四": 4, "五": 5, "六": 6, "七": 7, "八": 8, "九": 9}
_ZH_WEEKDAY = {"一": 0, "二": 1, "三": 2, "四": 3, "五": 4, "六": 5, "日": 6, "天": 6}
_MONTHS = {m: i + 1 for i, m in enumerate("jan feb mar apr may jun jul aug sep oct nov dec".split())}
_EN_WEEKDAYS = {d: i for i, d in enumerate("monday tuesday wednesday thursday friday saturday sunday".split())}
_EN_NUMBERS = {"a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "ten": 10}
_MONTH_NAME = (
    r"(?:Jan(?:uary)?|Feb(?:ruary)?|Mar(?:ch)?|Apr(?:il)?|May|June?|July?|Aug(?:ust)?|Sept?(?:ember)?|"
    r"Oct(?:ober)?|Nov(?:ember)?|Dec(?:ember)?)"
)
_ZH_NUM = r"(?:\d{1,2}|[一二三四五六七八九十两]{1,3})"

_DATE_ISO = re.compile(r"(?<!\d)(?P<y>\d{4})[-/.](?P<m>\d{1,2})[-/.](?P<d>\d{1,2})(?!\d)")
_DATE_ZH_FULL = re.compile(rf"(?P<y>\d{{4}})\s*年\s*(?P<m>{_ZH_NUM})\s*月\s*(?P<d>{_ZH_NUM})\s*[日号]")
_DATE_ZH_MD = re.compile(rf"(?<![\d年])(?P<m>{_ZH_NUM})\s*月\s*(?P<d>{_ZH_NUM})\s*[日号]?(?!\d)")
_DATE_ZH_D = re.compile(r"(?<![\d月年.:])(?P<d>\d{1,2}|[一二三]?十[一二三四五六七八九]?|[一二三四五六七八九])号(?![楼线房门床位球机车窗口店馆厅院屋桌码])")
_DATE_EN_MD = re.compile(rf"\b(?P<mon>{_MONTH_NAME})\.?\s+(?P<d>\d{{1,2}})(?:st|nd|rd|th)?\b(?:,?\s+(?P<y>\d{{4}}))?")
_DATE_EN_DM = re.compile(rf"\b(?P<d>\d{{1,2}})(?:st|nd|rd|th)?\s+(?:of\s+)?(?P<mon>{_MONTH_NAME})\b\.?(?:,?\s+(?P<y>\d{{4}}))?")
_REL_ZH_DAY = re.compile(r"大前天|前天|昨天|昨晚|昨日|今天|今晚|今早|今日|大后天|后天|明天|明早|明晚|明日")
_REL_ZH_WEEK = re.compile(r"(?P<w>上|下|这|本)(?:个)?(?:周|星期|礼拜)(?P<d>[一二三四五六日天末])?")
_REL_ZH_MONTH = re.compile(r"(?P<w>上|下)个?月(?![\d一二三四五六七八九十])")
_REL_ZH_AGO = re.compile(rf"(?P<n>{_ZH_NUM})\s*(?:个)?(?P<u>天|周|星期|礼拜)(?P<dir>前|后|以前|以后|之前|之后)")
_REL_EN_DAY = re.compile(
    r"\b(?:the\s+day\s+before\s+yesterday|the\s+day\s+after\s+tomorrow|yesterday|today|tonight|tomorrow|this\s+(?:morning|afternoon|evening)|"
    r"last\s+night)\b",
    re.I,
)
_REL_EN_WEEK = re.compile(
    r"\b(?P<w>last|next|this|coming)\s+(?P<u>week|weekend|month|monday|tuesday|wednesday|thursday|friday|saturday|sunday)\b",
    re.I,
)
# "3 days ago", "a week ago", "in two days" (not "in a day": "Rome wasn't built in a day").
_REL_EN_AGO = re.compile(
    r"\b(?P<n>\d{1,2}|a|an|one|two|three|four|five|six|seven|ten)\s+(?P<u>day|week)s?\s+ago\b"
    r"|\bin\s+(?P<n2>\d{1,2}|one|two|three|four|five|six|seven|ten)\s+(?P<u2>day|week)s?\b",
    re.I,
)
_ZH_REL_OFFSETS = {"大前天": -3, "前天": -2, "昨天": -1, "昨晚": -1, "昨日": -1, "今天": 0, "今晚": 0, "今早": 0, "今日": 0,
                   "明天": 1, "明早": 1, "明晚": 1, "明日": 1, "后天": 2, "大后天": 3}


def _zh_int(t: str) -> int | None:
    if t.isdigit():
        return int(t)
    if t == "十":
        return 10
    if "十" in t:
        tens, _, ones = t.partition("十")
        return (_ZH_DIGITS.get(tens, 1) if tens else 1) * 10 + (_ZH_DIGITS.get(ones, 0) if ones else 0)
    return _ZH_DIGITS.get(t) if len(t) == 1 else None


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


# Cheap pre-check: no digit and none of these (lower-cased) words means no date at all.
_DIGIT = re.compile(r"\d")
_DATE_KEYS = (
    "号", "天", "晚", "早", "周", "期", "拜", "月", "day", "tonight", "tomorrow", "morning", "afternoon", "evening",
    "night", "week", "month", "ago", "jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec",
)


_MODAL_MAY = re.compile(r"\b(?:I|you|we|it|he|she|they)\s+$")


def _find_date(s: str, day: date) -> tuple[str, int, int] | None:
    """The first explicit or relative date in a sentence: (ISO date, start, end)."""
    if not _DIGIT.search(s) and not _has_any(s.lower(), _DATE_KEYS):
        return None
    m = _DATE_ISO.search(s) or _DATE_ZH_FULL.search(s)
    if m:
        d = _mk(int(m["y"]), _zh_int(m["m"]) or 0, _zh_int(m["d"]) or 0)
        if d:
            return d.isoformat(), m.start(), m.end()
    m = _DATE_ZH_MD.search(s)
    if m and (_zh_int(m["m"]) or 0) <= 12:
        d = _near(day, _zh_int(m["m"]) or 0, _zh_int(m["d"]) or 0)
        if d:
            return d.isoformat(), m.start(), m.end()
    for rx in (_DATE_EN_MD, _DATE_EN_DM):
        m = rx.search(s)
        if m and not (m["mon"] == "May" and rx is _DATE_EN_MD and _MODAL_MAY.search(s, 0, m.start())):  # "we May 5"
            mon = _MONTHS[m["mon"][:3].lower()]
            d = _mk(int(m["y"]), mon, int(m["d"])) if m["y"] else _near(day, mon, int(m["d"]))
            if d:
                return d.isoformat(), m.start(), m.end()
    m = _DATE_ZH_D.search(s)
    if m:
        d = _mk(day.year, day.month, _zh_int(m["d"]) or 0)
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
            base += timedelta(days=_ZH_WEEKDAY[m["d"]])
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
            off = 5 if u == "weekend" else _EN_WEEKDAYS[u]
            return (_monday(day) + timedelta(days=shift + off)).isoformat(), m.start(), m.end()
    m = _REL_ZH_MONTH.search(s)
    if m:
        return _month_start(day, -1 if m["w"] == "上" else 1).isoformat(), m.start(), m.end()
    m = _REL_ZH_AGO.search(s)
    if m:
        n = _zh_int(m["n"]) or 0
        n *= 7 if m["u"] != "天" else 1
        return (day + timedelta(days=-n if "前" in m["dir"] else n)).isoformat(), m.start(), m.end()
    m = _REL_EN_AGO.search(s)
    if m:
        raw, unit = (m["n"], m["u"]) if m["n"] else (m["n2"], m["u2"])
        n = int(raw) if raw.isdigit() else _EN_NUMBERS[raw.lower()]
        n *= 7 if unit.lower() == "week" else 1
        return (day + timedelta(days=-n if m["n"] else n)).isoformat(), m.start(), m.end()
    return None
