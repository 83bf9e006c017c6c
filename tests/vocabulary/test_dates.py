"""vocabulary.dates: Chinese and English dates resolved against a day (the fact extractor), and the dates, weekdays
and numbers of a text (memory comparison). The unit tier (tests/conftest.py): pure functions, pinned days, no
clock."""

from __future__ import annotations

from datetime import date

import pytest

from agentos_mem.vocabulary.dates import (
    EN_WEEKDAYS,
    MONTHS,
    WEEKDAYS,
    ZH_WEEKDAYS,
    dates_in,
    find_date,
    numbers_in,
    weekdays_in,
    zh_number,
)

TUESDAY = date(2026, 11, 3)
MONTH_END = date(2026, 11, 30)  # a Monday
YEAR_END = date(2026, 12, 31)  # a Thursday
NEW_YEAR = date(2027, 1, 1)  # a Friday


# -- vocabulary and numerals ----------------------------------------------------------------------------------
def test_vocabulary():
    assert WEEKDAYS[ZH_WEEKDAYS["二"]] == "Tuesday" and WEEKDAYS[ZH_WEEKDAYS["四"]] == "Thursday"
    assert ZH_WEEKDAYS["日"] == ZH_WEEKDAYS["天"] == EN_WEEKDAYS["sunday"] == 6
    assert MONTHS["jan"] == 1 and MONTHS["dec"] == 12 and len(MONTHS) == 12


@pytest.mark.parametrize(
    "text, value",
    [
        ("两", 2), ("十", 10), ("十二", 12), ("二十", 20), ("二十三", 23), ("两十", 20), ("三十一", 31),
        ("一百零五", 105), ("三千", 3000), ("两万三千", 23000), ("二〇二六", 2026), ("12", 12), ("", None),
    ],
)
def test_zh_number(text, value):
    assert zh_number(text) == value


def test_zh_number_digits_without_a_unit():
    assert zh_number("两三") == 23  # a code or a year, read digit by digit
    assert zh_number("两三", digit_by_digit=False) is None  # "two or three": no single number
    assert zh_number("二十三", digit_by_digit=False) == 23
    assert zh_number("七", digit_by_digit=False) == 7


# -- find_date: the first date of a sentence, resolved against the log's day ----------------------------------
@pytest.mark.parametrize(
    "text, day, iso",
    [
        # explicit
        ("2026-03-02 上线", TUESDAY, "2026-03-02"),
        ("2026年十二月二十三日发布", TUESDAY, "2026-12-23"),
        ("12月5日", TUESDAY, "2026-12-05"),
        ("十二月三十一号截止", TUESDAY, "2026-12-31"),
        ("12月30日", date(2027, 1, 2), "2026-12-30"),  # no year: the nearest one, across the year end
        ("1月2日", YEAR_END, "2027-01-02"),
        ("二十三号交房", TUESDAY, "2026-11-23"),
        ("15号", TUESDAY, "2026-11-15"),
        ("May 5, 2027", TUESDAY, "2027-05-05"),
        ("Dec 31", date(2027, 1, 2), "2026-12-31"),
        ("the 2nd of January", YEAR_END, "2027-01-02"),
        # relative days across a month end and a year end
        ("明天", MONTH_END, "2026-12-01"),
        ("明天", YEAR_END, "2027-01-01"),
        ("昨天", NEW_YEAR, "2026-12-31"),
        ("后天", YEAR_END, "2027-01-02"),
        ("大前天", date(2026, 3, 2), "2026-02-27"),
        ("tomorrow", YEAR_END, "2027-01-01"),
        ("yesterday", date(2026, 12, 1), "2026-11-30"),
        ("the day after tomorrow", MONTH_END, "2026-12-02"),
        # weeks: Monday-based, 下周二 is the Tuesday of next week
        ("下周二开会", MONTH_END, "2026-12-08"),
        ("周四之前", MONTH_END, None),  # a bare weekday is no date here
        ("这周四", MONTH_END, "2026-12-03"),
        ("上周四", MONTH_END, "2026-11-26"),
        ("下个礼拜天", YEAR_END, "2027-01-10"),
        ("本周末", YEAR_END, "2027-01-02"),
        ("next Friday", YEAR_END, "2027-01-08"),
        ("this Tuesday", YEAR_END, "2026-12-29"),
        ("last week", NEW_YEAR, "2026-12-21"),
        ("next weekend", YEAR_END, "2027-01-09"),
        # months
        ("下个月", date(2026, 12, 15), "2027-01-01"),
        ("上个月", date(2027, 1, 5), "2026-12-01"),
        ("next month", MONTH_END, "2026-12-01"),
        ("last month", date(2026, 3, 31), "2026-02-01"),
        # counts
        ("3天前", date(2026, 3, 2), "2026-02-27"),
        ("两天后", MONTH_END, "2026-12-02"),
        ("十二天以后", YEAR_END, "2027-01-12"),
        ("两周以前", date(2027, 1, 5), "2026-12-22"),
        ("3 days ago", date(2027, 1, 2), "2026-12-30"),
        ("a week ago", date(2027, 1, 3), "2026-12-27"),
        ("in two weeks", date(2026, 12, 20), "2027-01-03"),
        ("in twelve days", YEAR_END, "2027-01-12"),
    ],
)
def test_find_date(text, day, iso):
    found = find_date(text, day)
    assert (found[0] if found else None) == iso


def test_find_date_gives_the_span_of_the_first_date():
    s = "我们下周三开会，12月5日上线"
    iso, a, b = find_date(s, TUESDAY)
    assert iso == "2026-12-05" and s[a:b] == "12月5日"  # an explicit date wins over a relative one
    iso, a, b = find_date("Let's meet next Friday.", TUESDAY)
    assert iso == "2026-11-13" and "Let's meet next Friday."[a:b] == "next Friday"


@pytest.mark.parametrize(
    "text",
    [
        "3号线", "12号楼", "这周", "this week", "Rome wasn't built in a day", "I may be late", "we May 5",
        "今年的目标", "13月5日", "Feb 30", "",
    ],
)
def test_find_date_finds_no_date(text):
    assert find_date(text, TUESDAY) is None


# -- dates_in / weekdays_in / numbers_in: the values two texts are compared on ----------------------------------
def test_dates_in():
    assert dates_in("2026-12-01 上线") == ([(2026, 12, 1)], "  上线")
    assert dates_in("十二月二十三日发布")[0] == [(None, 12, 23)]
    assert dates_in("2026年12月8日上线")[0] == [(2026, 12, 8)]
    assert dates_in("Launch on Dec 8")[0] == [(None, 12, 8)]
    assert dates_in("launch on dec 8")[0] == [(None, 12, 8)]  # any case: comparison, not resolution
    assert dates_in("8 December 2026")[0] == [(2026, 12, 8)]
    assert dates_in("May 5th and 2026/6/1")[0] == [(2026, 6, 1), (None, 5, 5)]  # ISO first
    assert dates_in("周二开会") == ([], "周二开会")


def test_weekdays_in():
    assert weekdays_in("周二、周四开会")[0] == ["Tuesday", "Thursday"]
    assert weekdays_in("星期日或礼拜天")[0] == ["Sunday", "Sunday"]
    assert weekdays_in("Tue. and Thursdays")[0] == ["Tuesday", "Thursday"]
    assert weekdays_in("周二 or Monday")[0] == ["Tuesday", "Monday"]  # Chinese first
    assert weekdays_in("we wed in June, sat in the sun") == ([], "we wed in June, sat in the sun")
    found, rest = weekdays_in("每周三开会")
    assert found == ["Wednesday"] and rest == "每 开会"


def test_numbers_in():
    assert numbers_in("两台服务器，十二个核，二十三 GB")[0] == [2.0, 12.0, 23.0]
    assert numbers_in("端口从 5432 改成 5433")[0] == [5432.0, 5433.0]
    assert numbers_in("one of three, 3.5 hours")[0] == [3.0, 3.5]  # "one" is no number (the one I like)
    assert numbers_in("一百零五个")[0] == [105.0]
    text = "一直统一，十分重要"
    assert numbers_in(text) == ([], text)  # words that only look numeric
    found, rest = numbers_in("每周三次")
    assert found == [3.0] and rest == "每周 次"
