"""The extractor package family by family (digest/extract/<family>.py), Chinese and English side by side.

tests/digest/test_extract.py covers behaviours across the whole extractor; these tests mirror the package layout, so a
change to one family module has a few focused tests next to it. Expected values are the extractor's behaviour.
"""

from __future__ import annotations

import datetime as dt

import pytest

import agentos_mem.digest.extract

from agentos_mem import digest
from agentos_mem.digest.extract import extract_candidates
from agentos_mem.digest.extract.axioms import RULES_AXIOM
from agentos_mem.digest.extract.decisions import DECISIONS
from agentos_mem.digest.extract.identity import IDENTITY, ROLES_AND_PLACES
from agentos_mem.digest.extract.names import NAMES
from agentos_mem.digest.extract.normalize import sentences, Source
from agentos_mem.digest.extract.opinions import OPINIONS
from agentos_mem.digest.extract.plans import FUTURE_PLANS, PLANS
from agentos_mem.digest.extract.preferences import PREFERENCES
from agentos_mem.digest.extract.restatements import ASSISTANT_PREFS
from agentos_mem.digest.extract.rule import PREDICATES, Rule
from agentos_mem.vocabulary.dates import find_date
from agentos_mem.kernel.domain import Turn

DAY = dt.date(2026, 11, 3)  # a Tuesday
SPEAKERS = {"user": "用户", "assistant": "assistant", "other": "Caroline"}


def turn(text: str, role: str = "user", index: int = 0) -> Turn:
    return Turn(
        index=index,
        role=role,  # type: ignore[arg-type]
        speaker=SPEAKERS[role],
        text=text,
        time="10:15",
        source_file="2026-11-03.md",
        line_start=3 + 2 * index,
        line_end=4 + 2 * index,
    )


def facts(*texts: str, role: str = "user") -> list[tuple[str, str, str, str]]:
    """(subject, predicate, object, explicitness) of every candidate, one turn per text."""
    turns = [turn(t, role=role, index=i) for i, t in enumerate(texts)]
    return [(c.subject, c.predicate, c.object, c.explicitness) for c in extract_candidates(turns, DAY)]


def objects(text: str, predicate: str, role: str = "user") -> list[str]:
    return [o for _s, p, o, _e in facts(text, role=role) if p == predicate]


# -- package --------------------------------------------------------------------------------------------------


def test_the_package_keeps_its_public_api():
    assert digest.extract.__all__ == ["extract_candidates"]
    assert digest.extract.extract_candidates is extract_candidates
    assert (digest.extract.EVIDENCE_CHARS, digest.extract.CONF_CORRECTED, digest.extract.CONF_INFERRED) == (120, 0.95, 0.6)
    assert extract_candidates([], DAY) == []


@pytest.mark.parametrize(
    "family",
    [IDENTITY, PREFERENCES, RULES_AXIOM, DECISIONS, PLANS, FUTURE_PLANS, OPINIONS, ASSISTANT_PREFS],
)
def test_every_family_is_data_rules_with_keywords_and_a_known_predicate(family):
    assert family and isinstance(family, tuple)
    for rule, chinese, keys in family:
        assert isinstance(rule, Rule) and rule.predicate in PREDICATES
        assert chinese == rule.chinese and keys, rule.regex.pattern
        assert "obj" in rule.regex.groupindex


def test_identity_is_one_family_names_first():
    assert IDENTITY == NAMES + ROLES_AND_PLACES
    assert {r.predicate for r, _c, _k in NAMES} == {"name", "nickname"}
    assert {r.predicate for r, _c, _k in ROLES_AND_PLACES} == {"role", "works_at", "lives_in", "from"}


# -- normalize / objects ---------------------------------------------------------------------------------------


def test_matching_is_on_half_width_text_but_objects_keep_the_original_characters():
    src = Source("服务器配置是８Ｃ１６Ｇ。")
    assert src.norm == "服务器配置是8C16G。"
    assert facts("服务器配置是８Ｃ１６Ｇ。") == [("服务器配置", "value", "８Ｃ１６Ｇ", "stated")]
    assert facts("Ｍｙ ｎａｍｅ ｉｓ Ｅｍｉｌｙ．") == [("user", "name", "Ｅｍｉｌｙ", "stated")]


def test_sentences_end_at_terminators_but_not_inside_version_numbers():
    got = [s.s for s in sentences(Source("服务器是8C16G。版本 v2.1.0 已发布! 你好... 再见"))]
    assert got == ["服务器是8C16G。", "版本 v2.1.0 已发布!", "你好...", "再见"]
    (sent,) = sentences(Source("a, b: 1,000 and 10:30 — c"))
    assert [sent.s[a:b] for a, b in sent.clauses] == ["a", " b", " 1,000 and 10:30", "c"]


def test_list_items_split_but_shared_heads_and_prepositional_lists_stay_whole():
    assert objects("我喜欢猫、狗和兔子。", "likes") == ["猫", "狗", "兔子"]
    assert objects("I love hiking, swimming and jazz.", "likes") == ["hiking", "swimming", "jazz"]
    assert objects("我喜欢晴朗、温暖的天气。", "likes") == ["晴朗、温暖的天气"]
    assert objects("我喜欢在海滩、山脉和湖泊附近拍摄。", "likes") == ["在海滩、山脉和湖泊附近拍摄"]
    assert objects("I enjoy shooting near beaches, mountains, and lakes.", "likes") == [
        "shooting near beaches, mountains, and lakes"
    ]


# -- names -----------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text, expected",
    [
        ("我叫张志强。", [("user", "name", "张志强", "stated")]),
        ("你好，我是小琳。", [("user", "name", "小琳", "stated")]),
        ("My name is Emily Chen.", [("user", "name", "Emily Chen", "stated")]),
        ("I'm Emily, nice to meet you.", [("user", "name", "Emily", "stated")]),
        ("你可以叫我小张。", [("user", "nickname", "小张", "stated")]),
        ("Call me Em.", [("user", "nickname", "Em", "stated")]),
    ],
)
def test_names_and_nicknames(text, expected):
    assert facts(text) == expected


@pytest.mark.parametrize("text", ["我叫了外卖。", "I'm sorry about that.", "What is your name?"])
def test_names_skip_verbs_apologies_and_questions(text):
    assert facts(text) == []


# -- identity --------------------------------------------------------------------------------------------------


def test_identity_chinese_drops_the_repeated_i_after_a_comma():
    assert facts("我是一名后端工程师，在腾讯工作，住在深圳。") == [
        ("user", "role", "后端工程师", "stated"),
        ("user", "works_at", "腾讯", "stated"),
        ("user", "lives_in", "深圳", "stated"),
    ]


@pytest.mark.parametrize(
    "text, expected",
    [
        ("I work as a nurse at Mercy Hospital.", [("user", "role", "nurse", "stated"), ("user", "works_at", "Mercy Hospital", "stated")]),
        ("I'm a student at MIT.", [("user", "role", "student", "stated"), ("user", "works_at", "MIT", "stated")]),
        ("I live in Boston.", [("user", "lives_in", "Boston", "stated")]),
        ("我是四川人。", [("user", "from", "四川", "stated")]),
        ("I'm originally from Ohio.", [("user", "from", "Ohio", "stated")]),
    ],
)
def test_identity_roles_employers_homes_and_origins(text, expected):
    assert facts(text) == expected


def test_identity_progressive_zai_is_not_a_workplace():
    assert facts("我在思考换工作。") == []


# -- preferences -----------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text, expected",
    [
        ("我的爱好是爬山和游泳。", [("likes", "爬山"), ("likes", "游泳")]),
        ("My favorite foods are sushi, ramen and tacos.", [("likes", "sushi"), ("likes", "ramen"), ("likes", "tacos")]),
        ("我对摄影很感兴趣。", [("likes", "摄影")]),
        ("I'm into photography.", [("likes", "photography")]),
        ("我不太喜欢香菜。", [("dislikes", "香菜")]),
        ("I don't like spicy food.", [("dislikes", "spicy food")]),
        ("我讨厌下雨天。", [("dislikes", "下雨天")]),
        ("I hate waking up early.", [("dislikes", "waking up early")]),
    ],
)
def test_preferences_likes_and_dislikes(text, expected):
    assert [(p, o) for _s, p, o, _e in facts(text)] == expected


@pytest.mark.parametrize(
    "texts, expected",
    [(("My favorite color is blue.",), [("favorite color", "value", "blue")]),
     (("我最喜欢的乐队是五月天",), [("最喜欢的乐队", "value", "五月天")]),
     (("My favorite editor is Vim", "Actually, I switched my favorite editor to Helix last week"),
      [("favorite editor", "value", "Vim"), ("favorite editor", "value", "Helix")])],
)
def test_preferences_one_favorite_of_a_kind_is_a_slot_a_later_one_supersedes(texts, expected):
    assert [(s, p, o) for s, p, o, _e in facts(*texts)] == expected


def test_preferences_a_later_clause_likes_too():
    assert facts("我喜欢猫，也喜欢狗。") == [("user", "likes", "猫", "stated"), ("user", "likes", "狗", "stated")]


@pytest.mark.parametrize("text", ["我更喜欢用Go而不是Java。", "I prefer Go over Java."])
def test_preferences_the_rejected_side_becomes_prefers_not(text):
    assert facts(text) == [("user", "prefers", "Go", "stated"), ("user", "prefers_not", "Java", "stated")]


@pytest.mark.parametrize(
    "text, obj",
    [("以后请用中文回答。", "中文"), ("请用简体中文回复。", "简体中文"), ("From now on, please reply in English.", "English")],
)
def test_preferences_standing_instructions(text, obj):
    assert facts(text) == [("user", "prefers", obj, "stated")]


def test_preferences_need_a_real_object():
    assert facts("I like it.") == []


# -- axioms (rules of conduct) ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text, obj",
    [
        ("原则是先写测试再写代码。", "先写测试再写代码"),
        ("永远不要在周五发布。", "永远不要在周五发布"),
        ("Never deploy on Fridays.", "Never deploy on Fridays"),
        ("Rule of thumb: keep functions short.", "keep functions short"),
        ("We should always review the diff.", "always review the diff"),
    ],
)
def test_axioms(text, obj):
    got = extract_candidates([turn(text)], DAY)
    assert [(c.predicate, c.object, c.nature, c.confidence) for c in got] == [("rule", obj, "axiom", 0.9)]


def test_axioms_not_from_never_in_a_narrative():
    assert facts("I never thought about it.") == []


# -- decisions -------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text, obj",
    [
        ("我们决定采用PostgreSQL。", "PostgreSQL"),
        ("我们最终定了用Vue。", "Vue"),
        ("We decided to use Redis for caching.", "Redis for caching"),
        ("Let's go with the blue design.", "the blue design"),
        ("We settled on Tailwind.", "Tailwind"),
    ],
)
def test_decisions(text, obj):
    got = extract_candidates([turn(text)], DAY)
    assert [(c.predicate, c.object, c.nature, c.multi_valued) for c in got] == [("decided", obj, "fact", True)]


def test_decisions_not_yet_made():
    assert facts("我们还没决定用什么。") == []


# -- plans -----------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text, obj, when",
    [
        ("我打算明年去日本旅行。", "明年去日本旅行", None),
        ("下周我要去北京出差。", "去北京出差", "2026-11-09"),
        ("I plan to learn Rust this winter.", "learn Rust this winter", None),
        ("I'm going to the dentist next Tuesday.", "going to the dentist next Tuesday", "2026-11-10"),
        ("I will call my mom tonight.", "call my mom tonight", "2026-11-03"),
    ],
)
def test_plans(text, obj, when):
    got = extract_candidates([turn(text)], DAY)
    assert [(c.predicate, c.object, c.nature, c.event_date) for c in got] == [("plans", obj, "event", when)]


@pytest.mark.parametrize(
    "text, obj, when",
    [("12月5日我要去参加婚礼。", "去参加婚礼", "2026-12-05"), ("I'm visiting my parents tomorrow.", "visiting my parents", "2026-11-04")],
)
def test_plans_bare_intent_counts_only_with_a_future_date(text, obj, when):
    got = extract_candidates([turn(text)], DAY)
    assert [(c.predicate, c.object, c.event_date) for c in got] == [("plans", obj, when)]


@pytest.mark.parametrize("text", ["I'll try it.", "I'm afraid I'll forget my lines.", "明天再聊。", "See you tomorrow!"])
def test_plans_boilerplate_and_fears_are_no_plans(text):
    assert facts(text) == []


# -- values ----------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text, subject, obj, technical",
    [
        ("数据库端口是5432。", "数据库端口", "5432", True),
        ("测试机升级到8C16G了。", "测试机", "8C16G", True),
        ("The staging port is 5433.", "staging port", "5433", True),
        ("We upgraded the server to 16GB RAM.", "server", "16GB RAM", True),
        ("我的手机号改成了13800138000。", "手机号", "13800138000", False),
        ("会议时间改到周四下午三点。", "会议时间", "周四下午三点", False),
        ("Our budget is 5000 dollars.", "budget", "5000 dollars", False),
    ],
)
def test_values(text, subject, obj, technical):
    got = extract_candidates([turn(text)], DAY)
    assert [(c.subject, c.predicate, c.object, c.technical, c.multi_valued) for c in got] == [
        (subject, "value", obj, technical, False)
    ]


@pytest.mark.parametrize("text", ["Python is great.", "Losing a pet is tough.", "如果端口是5432就好了。", "你的端口是多少？"])
def test_values_not_from_evaluations_hypotheticals_or_questions(text):
    assert facts(text) == []


def test_values_hedged_are_inferred():
    got = extract_candidates([turn("端口可能是5432。")], DAY)
    assert [(c.object, c.explicitness, c.confidence) for c in got] == [("5432", "inferred", 0.6)]


# -- corrections -----------------------------------------------------------------------------------------------


@pytest.mark.parametrize("text, subject", [("端口不是5432，是5433。", "端口"), ("The port isn't 5432, it's 5433.", "port")])
def test_corrections_both_values_in_one_sentence(text, subject):
    got = extract_candidates([turn(text)], DAY)
    assert [(c.subject, c.object, c.explicitness, c.confidence) for c in got] == [(subject, "5433", "corrected", 0.95)]


@pytest.mark.parametrize(
    "first, fix, subject",
    [("端口是5432。", "不对，是5433。", "端口"), ("The port is 5432.", "No, it's 5433.", "port")],
)
def test_corrections_a_bare_fix_corrects_the_latest_value(first, fix, subject):
    assert facts(first, fix) == [(subject, "value", "5432", "stated"), (subject, "value", "5433", "corrected")]


def test_corrections_a_bare_fix_answers_an_assistant_question():
    turns = [turn("你的数据库端口是5432，对吧？", role="assistant"), turn("不对，是5433。", index=1)]
    got = extract_candidates(turns, DAY)
    assert [(c.subject, c.object, c.explicitness) for c in got] == [("数据库端口", "5433", "corrected")]


@pytest.mark.parametrize(
    "text, expected",
    [
        ("不对，我叫李明。", [("user", "name", "李明", "corrected")]),
        ("Sorry, I meant my name is Anna.", [("user", "name", "Anna", "corrected")]),
        ("Actually, the port is 8080.", [("port", "value", "8080", "corrected")]),
        # a weak marker upgrades only correctable facts: a preference stays stated
        ("其实我更喜欢喝茶。", [("user", "prefers", "喝茶", "stated")]),
    ],
)
def test_corrections_markers(text, expected):
    assert facts(text) == expected


def test_corrections_a_contrast_is_no_correction():
    assert facts("Running a business isn't easy, but it's rewarding.") == []


# -- opinions --------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text, obj",
    [
        ("我觉得这个方案很好。", "这个方案很好"),
        ("I think remote work is more productive.", "remote work is more productive"),
        ("In my opinion, tabs are better than spaces.", "tabs are better than spaces"),
    ],
)
def test_opinions(text, obj):
    got = extract_candidates([turn(text)], DAY)
    assert [(c.predicate, c.object, c.nature, c.confidence) for c in got] == [("thinks", obj, "opinion", 0.6)]


@pytest.mark.parametrize("text", ["I think so.", "我觉得你说得对。", "我觉得吧。"])
def test_opinions_agreement_is_no_opinion(text):
    assert facts(text) == []


# -- restatements (assistant turns) ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text, expected",
    [
        ("看起来你更喜欢Go。", [("user", "prefers", "Go")]),
        ("It sounds like you prefer Python over Java.", [("user", "prefers", "Python")]),
        ("You seem to love hiking and jazz.", [("user", "likes", "hiking and jazz")]),
        ("你的名字是张伟。", [("user", "name", "张伟")]),
        ("Your name is Emily.", [("user", "name", "Emily")]),
    ],
)
def test_restatements_are_inferred_about_the_user(text, expected):
    got = extract_candidates([turn(text, role="assistant")], DAY)
    assert [(c.subject, c.predicate, c.object) for c in got] == expected
    assert all(c.explicitness == "inferred" and c.confidence == 0.6 for c in got)


def test_restatements_never_yield_prefers_not():
    got = extract_candidates([turn("It sounds like you prefer Python over Java.", role="assistant")], DAY)
    assert [c.predicate for c in got] == ["prefers"]


# -- events and dates ------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text, when",
    [
        ("昨天我们去了西湖，玩得很开心。", "2026-11-02"),
        ("Yesterday we went to the beach with the kids.", "2026-11-02"),
        ("2026-11-10 交付第一版。", "2026-11-10"),
        ("下周三要开评审会，我负责讲架构。", "2026-11-11"),
    ],
)
def test_events_a_dated_sentence_is_an_event(text, when):
    got = extract_candidates([turn(text)], DAY)
    assert [(c.predicate, c.object, c.nature, c.event_date) for c in got] == [("event", text.rstrip("。."), "event", when)]


@pytest.mark.parametrize("text", ["今天想和你聊聊。", "See you tomorrow!"])
def test_events_about_the_chat_are_dropped(text):
    assert facts(text) == []


@pytest.mark.parametrize(
    "text, iso",
    [
        ("2026-03-02 上线", "2026-03-02"),
        ("12月5日", "2026-12-05"),
        ("15号交房", "2026-11-15"),
        ("下周三开会", "2026-11-11"),
        ("上个月", "2026-10-01"),
        ("3天前", "2026-10-31"),
        ("May 5th", "2026-05-05"),
        ("next Friday", "2026-11-13"),
        ("last week", "2026-10-26"),
        ("in two days", "2026-11-05"),
    ],
)
def test_dates_resolve_against_the_day(text, iso):
    found = find_date(text, DAY)
    assert found is not None and found[0] == iso


@pytest.mark.parametrize("text", ["3号线", "this week", "Rome wasn't built in a day"])
def test_dates_that_are_not_dates(text):
    assert find_date(text, DAY) is None


# -- subjects (whose fact it is: a named participant, a third party) --------------------------------------------


@pytest.mark.parametrize(
    "text, expected",
    [
        ("My birthday is July 4th.", [("Caroline's birthday", "value", "July 4th", "stated")]),
        ("我的名字是卡罗琳。", [("Caroline", "name", "卡罗琳", "stated")]),
        ("I'm Caroline, a counselor.", [("Caroline", "name", "Caroline", "stated")]),
    ],
)
def test_subjects_a_named_participant_owns_their_facts(text, expected):
    assert facts(text, role="other") == expected


@pytest.mark.parametrize("text", ["他的名字是张三。", "His name is Tom.", "他的公司是腾讯。", "你的邮箱是 a@b.com。"])
def test_subjects_someone_elses_things_are_not_the_speakers(text):
    assert facts(text) == []


@pytest.mark.parametrize(
    "text, subject, obj",
    [("我老婆的公司是阿里巴巴。", "老婆的公司", "阿里巴巴"), ("My wife's company is Google.", "wife's company", "Google")],
)
def test_subjects_a_third_partys_value_keeps_its_owner_in_the_subject(text, subject, obj):
    assert facts(text) == [(subject, "value", obj, "stated")]


# -- slot updates: change shapes, typed values, clean subjects and values ---------------------------------------


@pytest.mark.parametrize(
    "text, subject, obj",
    [
        ("内存也从16G涨到了32G", "内存", "32G"),  # 从A<verb>到B: any verb, the old value is not the value
        ("周报截止时间从周五挪到周四", "周报截止时间", "周四"),
        ("从下个月起他们给我们的存储配额从 1T 提到 2T", "存储配额", "2T"),  # start date and 他们给我们的 are no subject
    ],
)
def test_values_a_change_from_a_to_b_names_the_slot_and_the_new_value(text, subject, obj):
    assert [(s, o) for s, p, o, _e in facts(text) if p == "value"] == [(subject, obj)]


def test_values_typed_chinese_values_need_no_digits():
    assert objects("我们的读书会是每周四晚上八点", "value") == ["每周四晚上八点"]


@pytest.mark.parametrize(
    "text, subject, obj",
    [
        ("Big news 🚀 the payments service is now on Java 21.", "payments service", "Java 21"),
        ("Our CI runner is on Ubuntu 22.04", "CI runner", "Ubuntu 22.04"),
    ],
)
def test_values_english_subject_after_a_break_and_no_preposition_in_the_value(text, subject, obj):
    assert [(s, o) for s, p, o, _e in facts(text) if p == "value"] == [(subject, obj)]


def test_events_a_sentence_that_states_a_value_is_not_also_an_event():
    got = facts("今天把数据库从MySQL 5.7迁移到了MySQL 8")
    assert [p for _s, p, _o, _e in got] == ["value"]
    assert not any("5.7" in o for _s, _p, o, _e in got)


def test_objects_end_where_a_new_clause_starts_after_and():
    assert objects("I live in Porto and the weather is great these days.", "lives_in") == ["Porto"]


@pytest.mark.parametrize(
    "texts, subject, obj",
    [
        (("羽毛球课是每周一晚上七点", "稍等，记错了，是周二不是周一，最近太忙了"), "羽毛球课", "周二"),
        (("Our build server is on Debian 11", "Hmm wait, sorry, I meant 12. Anyway, moving on."), "build server", "12"),
    ],
)
def test_corrections_a_bare_fix_between_a_lead_in_and_an_aside(texts, subject, obj):
    assert (subject, "value", obj, "corrected") in facts(*texts)


def test_preferences_not_interested_is_no_like():
    assert facts("我对足球一点都不感兴趣") == [("user", "dislikes", "足球", "stated")]


def test_names_a_nickname_without_the_trailing_just_fine():
    assert objects("叫我小周就行", "nickname") == ["小周"]


# -- people (where someone else is) ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text, expected",
    [
        ("我表妹晴晴上初三，在第二中学，成绩一直不错", [("晴晴", "lives_in", "第二中学")]),
        ("老周调到成都了，下个月交接", [("老周", "lives_in", "成都")]),
        ("我哥在苏州分公司，周末才回来", [("哥哥", "lives_in", "苏州分公司")]),  # one word for one kin
    ],
)
def test_people_where_someone_else_works_or_studies_lands_on_them(text, expected):
    assert [(s, p, o) for s, p, o, _e in facts(text) if p == "lives_in"] == expected


@pytest.mark.parametrize("text", ["我妈在家做饭", "老王在开会", "小时候我在杭州读书"])
def test_people_being_somewhere_for_a_while_is_no_place(text):
    assert [f for f in facts(text) if f[1] == "lives_in" and f[0] != "user"] == []


@pytest.mark.parametrize(
    "text, obj",
    [
        ("I've practiced judo for over six years, mostly on weekends.", "judo"),
        ("Been a Celtics fan since I was a kid.", "Celtics"),
        ("我练书法七年了，最近在临颜真卿", "练书法"),
    ],
)
def test_preferences_a_practice_kept_up_for_years_is_a_like(text, obj):
    assert objects(text, "likes") == [obj]


def test_preferences_a_few_hours_of_something_is_no_like():
    assert objects("I've been cleaning for three hours.", "likes") == []


def test_events_what_did_not_happen_is_no_event():
    assert facts("Deploy went fine. no pizza tonight") == []


@pytest.mark.parametrize("text, expected", [("My sister moved abroad. I'm in Toronto.", ["Toronto"]), ("I'm in Rome for a week.", [])])
def test_identity_im_in_a_city_with_nothing_after_it(text, expected):
    assert objects(text, "lives_in") == expected


def test_events_the_clauses_of_a_stated_value_leave_the_event():
    got = facts("今天定了，我们的站会是每天早上九点，在二楼小会议室，记得提醒我")
    events = [o for _s, p, o, _e in got if p == "event"]
    assert ("站会", "value", "每天早上九点", "stated") in got
    assert events and "二楼小会议室" in events[0] and "九点" not in events[0]


# -- anchored (values found by their shape) ------------------------------------------------------------------


def values(*texts: str) -> list[tuple[str, str]]:
    return [(s, o) for s, p, o, _e in facts(*texts) if p == "value"]


def test_anchored_a_value_whatever_verb_carries_it():
    assert ("测试机", "8C16G") in values("扩容批下来了！测试机升级到8C16G，顺便系统盘也从40G加到了100G")
    assert ("系统盘", "100G") in values("扩容批下来了！测试机升级到8C16G，顺便系统盘也从40G加到了100G")
    assert ("baseline", "190ms") in values("baseline 写现在的 190ms 吧")
    assert [o for _s, o in values("那台现在还是4C8G的，一跑e2e就OOM")] == ["4C8G"]


def test_anchored_a_time_or_a_day_naming_nothing_is_no_claim():
    # a claim only where the attribute is sure (issue 40): "下午三点" of what? The sentence stays what was said.
    assert values("下午三点那个会推迟了") == []
    assert values("今晚是 8 点那场 Livehouse") == []  # a day says when, 是 says nothing: neither is an attribute
    assert [p for _s, p, _o, _e in facts("今晚是 8 点那场 Livehouse")] == ["event"]
    assert ("release", "v2.3") in values("Tonight is the v2.3 release")
    assert [p for _s, p, _o, _e in facts("今晚是公司的 Halloween 派对")] == ["event"]  # "X 是 Y" with a day for X
    # a word every sentence is made of (a modal, a preposition, "it") names nothing either, nor a day with its stop
    assert values("下周我能周四过去") == values("我到两点才下班") == values("Slept badly last night. Took me forever, like 40 minutes") == []
    # a spec or a version says what it is of: its type is its slot
    assert [o for _s, o in values("那台现在还是4C8G的，一跑e2e就OOM")] == ["4C8G"]
    assert ("闹钟", "6:45") in values("闹钟改到6:45了")
    # an amount in Chinese numerals tells how long something took far more often than an attribute's value
    assert values("地铁晚点，站台上等了十分钟") == [] and values("配速稳定在 5 分半") == []
    # a count by a measure word names nothing (台 · 两台 of what?); a counted noun does
    assert values("服务器配置是 4C8G，目前两台。") == [("服务器配置", "4C8G")]
    assert values("这首歌我这周听了八百遍") == [] and ("Kafka cluster", "5 brokers") in values("Our Kafka cluster has 5 brokers")
    # a bare time that corrects the one said before is sure: it is that slot's new value
    got = facts("Our retro is at 4pm on Thursdays", "Scratch what I said about the retro, it's at 3pm, not 4pm")
    assert ("retro", "value", "3pm", "corrected") in got


def test_anchored_how_much_something_changed_is_not_its_value():
    # "dropped by 30%" says how far the bill moved, not what it is (issue 40: "monthly bill dropped · value · 60%" was
    # a false fact a user saw); a new value said with to / 到 still is one
    assert values("The hosting bill dropped by roughly 30% after the move") == []
    assert values("成本降了三成，延迟降到了40ms") == [("延迟", "40ms")]
    assert [o for _s, o in values("p95 dropped to 300ms")] == ["300ms"]


def test_anchored_a_day_or_a_time_is_no_value_of_a_name_a_habit_word_or_a_part_of_the_day():
    # "I have a final round with Initech on Tuesday" is when something happens with Initech, not a value Initech has;
    # "usually" and "every" say how often; "Sunday night" is one date
    assert values("I have a final round with Initech on Tuesday") == []
    assert values("I usually have a 6pm call with the US team") == []
    assert values("Sunday night and I'm still answering pages for the client") == []
    assert values("We do a big grocery run every Saturday") == []
    # a thing's day or time stays, the capital that opens the sentence included; a negated verb is no part of it
    assert values("Standup is at 9:45 now") == [("Standup", "9:45")]
    assert values("My Wednesday call hasn't changed") == [("call", "Wednesday")]
    assert ("soccer practice", "Thursdays") in values("The coach moved soccer practice to Thursdays")


def test_anchored_the_old_value_of_a_change_and_a_denied_one_are_not_read():
    assert "40G" not in [o for _s, o in values("系统盘也从40G加到了100G")]
    got = facts("周会是每周二下午三点", "等下，说错了，是周三不是周二")
    assert [(p, o) for _s, p, o, e in got if e == "corrected"] == [("value", "周三")]


def test_anchored_whose_value_it_is():
    got = dict((o, s) for s, o in values("给我妈买了台 iPhone 15，教了一上午怎么视频通话。我自己还是用 Pixel 8，暂时没打算换"))
    assert "妈" in got["iPhone 15"] and "妈" not in got["Pixel 8"]
    assert "brother" in dict((o, s) for s, o in values("My brother now runs Postgres 16 at home"))["Postgres 16"]
    assert "wife" not in dict((o, s) for s, o in values("My wife got me a new laptop with 32GB"))["32GB"]


@pytest.mark.parametrize(
    "text",
    ["周末想开我那台 Model 3 去千岛湖", "我试试七点四十出门", "maybe we move it to 9:30am", "要不要把测试机升到8C16G？",
     "今天是星期日。", "下周三要开评审会", "I adopted a puppy 3 days ago."],
)
def test_anchored_nothing_from_wishes_tries_questions_or_dates(text):
    assert values(text) == []


def test_anchored_a_value_that_starts_later_holds_from_its_start():
    turns = [turn("我现在每天坐2号线上班，公司说4月1号起整体搬到新园区，到时候我得改坐14号线了")]
    got = {c.object: c.observed_at for c in extract_candidates(turns, dt.date(2026, 3, 12)) if c.predicate == "value"}
    assert got["2号线"].startswith("2026-03-12T10:15")
    assert got["14号线"] == "2026-04-01T00:00:00"


# -- stops ---------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "thing"),
    [("唉，infosec 出了新规，Copilot 全员停用，license 已经 cancel 了", "Copilot"), ("算了不折腾了，Notion不用了", "Notion"),
     ("所以夜跑彻底停了", "夜跑"), ("Done, cancelled the Netflix sub last night.", "Netflix"), ("I quit Duolingo last month", "Duolingo"),
     ("I no longer use Evernote", "Evernote"), ("I stopped using Google Photos in May", "Google Photos"), ("上个月取消了Spotify", "Spotify")],
)
def test_stops_the_thing_a_cessation_verb_ends(text, thing):
    assert thing in objects(text, "stopped")


@pytest.mark.parametrize("text", ["要不要取消Netflix？", "我想把健身卡退了", "I didn't cancel Netflix", "thinking of dropping Spotify",
                                  "Should I quit Duolingo?"])
def test_stops_not_a_plan_a_question_or_a_denial(text):
    assert objects(text, "stopped") == []


def test_stops_a_stop_is_no_event_of_its_sentence():
    assert [p for _s, p, _o, _e in facts("Done, cancelled the Netflix sub last night.")] == ["stopped"]


# -- changes (both values named, no attribute) ---------------------------------------------------------------


def changed(text: str) -> list[tuple[str, str, str | None]]:
    return [(c.subject, c.object, c.replaces) for c in extract_candidates([turn(text)], DAY) if c.predicate == "value"]


@pytest.mark.parametrize(
    ("text", "expected"),
    [("算了不折腾了，Notion不用了，改用Obsidian", ("user", "Obsidian", "Notion")),
     ("Actually, I switched from Vim to Helix last week", ("user", "Helix", "Vim")),
     ("I switched my editor from Vim to Helix", ("editor", "Helix", "Vim")),
     ("We replaced Jenkins with GitHub Actions", ("user", "GitHub Actions", "Jenkins")),
     ("站会从周一改到周三", ("站会", "周三", "周一")),
     ("我从字节跳槽到了网易", ("user", "网易", "字节")),
     ("my brother moved from Munich to Berlin", ("brother", "Berlin", "Munich"))],
)
def test_changes_the_new_value_carries_the_old_one(text, expected):
    assert changed(text) == [expected]


@pytest.mark.parametrize("text", ["thinking of switching from Vim to Helix", "要不要从Notion换到Obsidian？", "我打算从字节跳槽到网易"])
def test_changes_not_from_plans_or_questions(text):
    assert changed(text) == []


# -- people (English) ------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [("My sister lives in Chengdu and works as a nurse", [("sister", "lives_in", "Chengdu"), ("sister", "role", "nurse")]),
     ("My brother's in Munich working at BMW, and we're trying to find a call time",
      [("brother", "lives_in", "Munich"), ("brother", "works_at", "BMW")]),
     ("My wife works at Google", [("wife", "works_at", "Google")]),
     ("I live in Shanghai and my wife is in Beijing this week", [("user", "lives_in", "Shanghai"), ("wife", "lives_in", "Beijing")]),
     ("my wife is in a meeting", [])],
)
def test_people_en_what_lands_on_someone_else(text, expected):
    assert [(s, p, o) for s, p, o, _e in facts(text)] == expected


# -- activities ------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [("I'm learning Spanish on Duolingo", ["Spanish"]), ("I also started learning Japanese this month", ["Japanese"]),
     ("Picked up the ukulele last month, still playing guitar though", ["ukulele"]), ("最近又迷上了飞盘，羽毛球也还在打", ["飞盘"]),
     ("我会说英语和日语", ["英语", "日语"]), ("最近在学西班牙语", ["西班牙语"]),
     ("Should I start learning Rust?", []), ("如果有空我想学吉他", [])],
)
def test_activities_several_at_once(text, expected):
    assert objects(text, "does") == expected


def test_activities_a_new_one_adds_and_a_stop_closes_one(tmp_path, monkeypatch):
    from agentos_mem.digest.stages import digest_day
    from agentos_mem.query.facts import facts_as_of
    from tests.kit.digest import log_workspace

    monkeypatch.setenv("AGENTOS_NOW", "2026-03-30T12:00:00+08:00")
    s, logs = log_workspace(tmp_path)
    for d, line in ((dt.date(2026, 3, 2), "我会说英语和日语"), (dt.date(2026, 3, 9), "最近又迷上了飞盘"), (dt.date(2026, 3, 16), "飞盘不玩了，膝盖受不了")):
        (logs / f"{d}.md").write_text(f"[10:00] 用户: {line}\n", encoding="utf-8")
        digest_day(s, "default", d, logs)
    assert sorted(f["object"] for f in facts_as_of(s)["facts"] if f["predicate"] == "does") == ["日语", "英语"]
    assert "飞盘" in [f["object"] for f in facts_as_of(s, dt.date(2026, 3, 10))["facts"]]


def test_people_he_or_she_is_the_person_last_spoken_of_and_work_is_work():
    assert [(s, p, o) for s, p, o, _e in facts("我老婆在腾讯上班，她上周跳槽去了阿里") if p != "event"] == [
        ("老婆", "works_at", "腾讯"), ("老婆", "works_at", "阿里")]
    assert [(s, p, o) for s, p, o, _e in facts("我同事小李在广州分部", "他下个月调去深圳") if p == "lives_in"] == [
        ("小李", "lives_in", "广州"), ("小李", "lives_in", "深圳")]
    assert [p for _s, p, _o, _e in facts("她上周跳槽去了阿里")] != ["works_at"]  # nobody spoken of before: not guessed


@pytest.mark.parametrize(
    ("text", "expected"),
    [("我还是留在北京", ("lives_in", "北京")), ("我人在深圳", ("lives_in", "深圳")), ("我搬到杭州了", ("lives_in", "杭州")),
     ("I moved to Lisbon last year", ("lives_in", "Lisbon")), ("我现在在字节做后端", ("works_at", "字节")),
     ("I work at Stripe as a backend engineer", ("works_at", "Stripe"))],
)
def test_identity_moving_staying_and_where_one_works(text, expected):
    assert expected in [(p, o) for _s, p, o, _e in facts(text)]


@pytest.mark.parametrize("text", ["我想搬到杭州", "要不要留在北京？", "I might move to Lisbon"])
def test_identity_not_a_wish_or_a_question(text):
    assert [p for _s, p, _o, _e in facts(text) if p == "lives_in"] == []


@pytest.mark.parametrize(
    "text",
    ["I won't quit on my dreams", "I don't have faith in that", "our kids don't have the proper stuff", "I dropped off that stuff I baked",
     "I 100% agree", "I've known these friends for 4 years", "I'm learning a ton", "learning with them is fun"],
)
def test_what_only_sounds_like_a_stop_a_value_or_an_activity_writes_nothing(text):
    assert [(p, o) for _s, p, o, _e in facts(text) if p in ("stopped", "value", "does")] == []


@pytest.mark.parametrize("text", ["青鸟的上线日期定在12月2日（周三）。", "Someone asked to ship a hotfix on Friday.", "有人说周会改到周五"])
def test_anchored_not_a_dates_weekday_or_someone_elses_word(text):
    assert values(text) == []


def test_anchored_an_apostrophe_quotes_nothing_and_a_possessor_is_no_value():
    # "I'm ... it's": two apostrophes read as a quote hid the value between them
    assert [o for _s, o in values("I'm on Postgres 16 now, it's fast")] == ["Postgres 16"]
    assert ("standup", "9:30") in values("The team's standup is at 9:30 now, isn't it great")
    # words in quotes are still someone else's
    assert values("The banner said 'staging runs on 8C16G' but nobody checked") == values("群里有人转了一句“测试机是 4C8G 的”") == []
    # a value that owns what follows only says which one: "Thursday's review" is no Thursday of the migration
    assert values("yeah, I'm pitching a migration at Thursday's arch review") == []


@pytest.mark.parametrize(
    "text, attribute",
    [("相机一直是 X100V", "相机"),  # the tagger takes 相机 for an adverb (相机行事): a first word always stays
     ("备份脚本里全是 rsync 的命令", "备份脚本"),
     ("日报群里全是 Grafana 的截图", "日报群里"),  # jieba joins 全是 into one word: the half after the attribute goes
     ("周报模板一直是 Notion 那个", "周报模板"),
     ("数据库现在是 PostgreSQL 16", "数据库")],
)
def test_a_values_attribute_is_its_noun_phrase_without_the_adverbs_it_ends_on(text, attribute):
    assert [s for s, p, _o, _e in facts(text) if p == "value"] == [attribute]
