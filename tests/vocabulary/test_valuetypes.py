"""A value's type by its shape (vocabulary.valuetypes): the fact store tells slots apart by it, the digest reads values
found by it. Shapes in both languages; what only looks like a value (a date, "一点点", a label "KR1：") is none."""

from __future__ import annotations

import pytest

from agentos_mem.vocabulary.valuetypes import find_values, value_type


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        ("8C16G", "spec"), ("4c8g", "spec"), ("8核16G", "spec"), ("16 vCPU / 64 GB", "spec"),
        ("7:40", "clock"), ("9:30am", "clock"), ("10 a.m.", "clock"), ("half past six", "clock"), ("凌晨两点", "clock"),
        ("九点半", "clock"), ("7点40", "clock"), ("下午三点一刻", "clock"), ("十二点半", "clock"),
        ("周二、周四", "weekday"), ("Mondays and Thursdays", "weekday"), ("星期天", "weekday"),
        ("150ms", "quantity:duration"), ("2 hours", "quantity:duration"), ("100G", "quantity:size"), ("512MB", "quantity:size"),
        ("3000元", "quantity:money"), ("$22.99", "quantity:money"), ("5km", "quantity:distance"), ("80%", "quantity:percent"),
        ("Postgres 16", "version"), ("Python 3.12", "version"), ("3.12.1", "version"),
        ("5433", "number"), ("2号线", "counted:号线"), ("二年级", "counted:年级"), ("a@b.com", "email"),
        ("3 cups", "count:cup"), ("1 cup", "count:cup"), ("三杯", "count:杯"), ("3 times", "count:time"), ("3个项目", None),
        ("Obsidian", None), ("北京", None), ("search infra", None), ("", None),
    ],
)
def test_value_type_by_shape(text, kind):
    assert value_type(text) == kind


def test_one_kind_of_value_whatever_its_words():
    # the store's rule: same type, related attribute -> one slot; a size is not a spec
    assert value_type("4C8G") == value_type("8核16G") == "spec"
    assert value_type("100G") != value_type("8C16G")
    assert value_type("2号线") == value_type("14号线") != value_type("二年级")


def spans(text: str) -> list[tuple[str, str]]:
    return [(text[a:b], kind) for a, b, kind in find_values(text)]


def test_find_values_reads_every_value_of_a_sentence():
    assert spans("测试机升级到8C16G，顺便系统盘也从40G加到了100G") == [
        ("8C16G", "spec"), ("40G", "quantity:size"), ("100G", "quantity:size")]
    assert spans("staging is now on Postgres 16, and we moved it to 5433") == [("Postgres 16", "version")]
    assert spans("给我妈买了台 iPhone 15，我自己还是用 Pixel 8") == [("iPhone 15", "version"), ("Pixel 8", "version")]
    assert spans("JLPT 考过了 N2") == [("N2", "code")]
    assert spans("路由器换成了 AX6+，信号好多了") == [("AX6+", "code")]  # the model's "+" is its name, not punctuation


def test_a_number_with_thousands_separators_is_one_count():
    # "1,200 partitions" is 1200 of them: never a count of 200 that a later "300 partitions" would replace
    assert spans("about 1,200 partitions and 5 brokers") == [("1,200 partitions", "count:partition"), ("5 brokers", "count:broker")]
    assert spans("仓库里还有1,200本书") == [("1,200本", "count:本")]


@pytest.mark.parametrize(
    "text",
    ["我们4月1号起搬到新园区", "the 2015 run", "since 5432 kept clashing", "一点点", "有一点累", "几点开始？", "KR1：降到", "Q2OKR"],
)
def test_what_only_looks_like_a_value_is_none(text):
    assert spans(text) == []


@pytest.mark.parametrize(
    ("a", "b"),
    [("7点", "七点"), ("7点", "7:00"), ("7点", "7am"), ("晚上11点", "11pm"), ("十二点", "12点"), ("九点半", "9:30am"), ("凌晨两点", "2 am"),
     ("8C16G", "８ｃ１６ｇ")],
)
def test_value_key_one_value_however_written(a, b):
    from agentos_mem.vocabulary.valuetypes import value_key

    assert value_key(a) == value_key(b)


def test_value_key_keeps_different_times_apart():
    from agentos_mem.vocabulary.valuetypes import value_key

    assert value_key("7点") != value_key("晚上7点") and value_key("9:30") != value_key("9点")


@pytest.mark.parametrize(("text", "value"), [("My rent is $2,400 a month", "$2,400"), ("涨到了 ¥3,500.50", "¥3,500.50"), ("it's $18 now", "$18")])
def test_an_amount_after_its_currency_sign_is_read_whole(text, value):
    from agentos_mem.vocabulary.valuetypes import find_values

    assert [(text[a:b], kind) for a, b, kind in find_values(text)] == [(value, "quantity:money")]


@pytest.mark.parametrize(
    ("text", "found"),
    [
        ("现在两周一个迭代，以前是三周", [("两周", "quantity:duration"), ("三周", "quantity:duration")]),
        ("会开了一个半小时", [("一个半小时", "quantity:duration")]),
        ("半小时就到", [("半小时", "quantity:duration")]),
        ("从 6 分钟降到 3 分半", [("6 分钟", "quantity:duration"), ("3 分半", "quantity:duration")]),
        ("跑了五公里，花了两块钱", [("五公里", "quantity:distance"), ("两块钱", "quantity:money")]),
        ("三个月", [("三个月", "quantity:duration")]),
        # not amounts: a lone 一 ("a week"), a month's name, a year, an anniversary, a grade, the 周 of a weekday
        ("一周三次", [("三次", "count:次")]),
        ("三月份再说", []), ("二〇二六年", []), ("十一周年", []), ("二年级", [("二年级", "counted:年级")]),
        ("周三周四开会", [("周三", "weekday"), ("周四", "weekday")]),
    ],
)
def test_an_amount_in_chinese_numerals_is_a_quantity(text, found):
    # Chinese is first-class: "两周" is two weeks as "2 weeks" is, and "两周一个迭代" holds no Monday (周一)
    assert spans(text) == found
