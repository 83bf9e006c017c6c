"""The deterministic bilingual extractor: one behaviour per test, Chinese and English side by side."""

from __future__ import annotations

import datetime as dt

import pytest

from agentos_mem.kernel.domain import Candidate, Turn
from agentos_mem.digest.extract import extract_candidates

DAY = dt.date(2026, 11, 3)  # a Tuesday
SPEAKERS = {"user": "用户", "assistant": "assistant", "other": "Caroline"}


def turn(text: str, role: str = "user", speaker: str | None = None, index: int = 0, line: int | None = None) -> Turn:
    line = line if line is not None else 3 + 2 * index
    return Turn(
        index=index,
        role=role,  # type: ignore[arg-type]
        speaker=speaker or SPEAKERS[role],
        text=text,
        time="10:15",
        source_file="2026-11-03.md",
        line_start=line,
        line_end=line + 1,
    )


def facts(*texts_or_turns: str | Turn, role: str = "user", speaker: str | None = None) -> list[tuple[str, str, str, str, str]]:
    turns = [
        t if isinstance(t, Turn) else turn(t, role=role, speaker=speaker, index=i) for i, t in enumerate(texts_or_turns)
    ]
    return [(c.subject, c.predicate, c.object, c.nature, c.explicitness) for c in extract_candidates(turns, DAY)]


def cands(text: str, role: str = "user", speaker: str | None = None) -> list[Candidate]:
    return extract_candidates([turn(text, role=role, speaker=speaker)], DAY)


def only(text: str, predicate: str, role: str = "user", speaker: str | None = None) -> list[Candidate]:
    return [c for c in cands(text, role, speaker) if c.predicate == predicate]


# -- 1. identity ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text, expected",
    [
        ("你好，我叫张曼婷，很高兴认识你。", ("user", "name", "张曼婷", "fact", "stated")),
        ("我的名字是王峰。", ("user", "name", "王峰", "fact", "stated")),
        ("Hello, my name is Emily. Nice to meet you.", ("user", "name", "Emily", "fact", "stated")),
        ("Hi, I'm John Zhang, nice to meet you!", ("user", "name", "John Zhang", "fact", "stated")),
        ("我是一名软件工程师。", ("user", "role", "软件工程师", "fact", "stated")),
        ("I am a data analyst.", ("user", "role", "data analyst", "fact", "stated")),
        ("I work as a nurse.", ("user", "role", "nurse", "fact", "stated")),
        ("我在腾讯工作。", ("user", "works_at", "腾讯", "fact", "stated")),
        ("I work at Google.", ("user", "works_at", "Google", "fact", "stated")),
        ("我住在深圳南山区。", ("user", "lives_in", "深圳南山区", "fact", "stated")),
        ("I live in Seattle.", ("user", "lives_in", "Seattle", "fact", "stated")),
        ("我来自成都。", ("user", "from", "成都", "fact", "stated")),
        ("I'm from Sweden originally.", ("user", "from", "Sweden", "fact", "stated")),
    ],
)
def test_identity(text, expected):
    assert facts(text) == [expected]


def test_identity_dropped_subject_after_comma_in_chinese():
    assert facts("我是一名产品经理，在字节跳动工作，住在北京。") == [
        ("user", "role", "产品经理", "fact", "stated"),
        ("user", "works_at", "字节跳动", "fact", "stated"),
        ("user", "lives_in", "北京", "fact", "stated"),
    ]


def test_identity_role_and_employer_in_one_english_sentence():
    assert facts("I'm a software engineer at Google and I live in Berlin.") == [
        ("user", "role", "software engineer", "fact", "stated"),
        ("user", "works_at", "Google", "fact", "stated"),
        ("user", "lives_in", "Berlin", "fact", "stated"),
    ]


def test_progressive_zai_is_not_an_employer():
    assert only("最近我在学做菜，我在思考换工作的问题。", "works_at") == []


def test_negated_identity_produces_nothing():
    assert facts("我不是学生。I'm not a student. I don't live in Paris anymore.") == []


# -- 2. preferences ------------------------------------------------------------------------------------------


def test_chinese_list_is_split_into_items_and_the_question_is_ignored():
    assert facts("我很喜欢绘画、弹钢琴和品茶，你觉得有什么好的书可以推荐给我吗？") == [
        ("user", "likes", "绘画", "preference", "stated"),
        ("user", "likes", "弹钢琴", "preference", "stated"),
        ("user", "likes", "品茶", "preference", "stated"),
    ]


def test_english_list_is_split_into_items():
    assert facts("I really enjoy painting, playing piano and tea tasting. Do you have any good book recommendations?") == [
        ("user", "likes", "painting", "preference", "stated"),
        ("user", "likes", "playing piano", "preference", "stated"),
        ("user", "likes", "tea tasting", "preference", "stated"),
    ]


def test_likes_stop_at_a_clause_breaker():
    assert facts("I love listening to music, especially jazz.") == [
        ("user", "likes", "listening to music", "preference", "stated")
    ]
    assert [c.object for c in only("我喜欢晴朗、温暖的天气。", "likes")] == ["晴朗、温暖的天气"]


def test_likes_are_multi_valued_with_preference_confidence():
    (c,) = cands("我对墨西哥美食很感兴趣")
    assert (c.predicate, c.object, c.multi_valued, c.confidence) == ("likes", "墨西哥美食", True, 0.85)


def test_dislikes_chinese_and_english():
    assert facts("我不太喜欢香菜。I hate traffic jams. I don't like coffee, tea or soda.") == [
        ("user", "dislikes", "香菜", "preference", "stated"),
        ("user", "dislikes", "traffic jams", "preference", "stated"),
        ("user", "dislikes", "coffee", "preference", "stated"),
        ("user", "dislikes", "tea", "preference", "stated"),
        ("user", "dislikes", "soda", "preference", "stated"),
    ]


def test_prefers_are_multi_valued():
    got = cands("我更喜欢用 Vim。以后都用 pnpm。请总是用中文回复。I prefer artistic works, like \"The Great Gatsby\".")
    assert [(c.predicate, c.object, c.multi_valued) for c in got] == [
        ("prefers", "Vim", True),
        ("prefers", "pnpm", True),
        ("prefers", "中文", True),
        ("prefers", "artistic works", True),
    ]
    assert facts("Please always use UTC timestamps.") == [("user", "prefers", "UTC timestamps", "preference", "stated")]


def test_favourite_and_quoted_titles():
    assert facts("我最喜欢《百年孤独》。My favorite is \"Listen to Mom\", that song is great.") == [
        ("user", "likes", "《百年孤独》", "preference", "stated"),
        ("user", "likes", "Listen to Mom", "preference", "stated"),
    ]


def test_several_preferences_in_one_sentence():
    assert [(c.predicate, c.object) for c in cands("我喜欢猫，我也喜欢狗。我不喜欢香菜，也讨厌葱。")] == [
        ("likes", "猫"), ("likes", "狗"), ("dislikes", "香菜"), ("dislikes", "葱"),
    ]
    assert [c.object for c in cands("I love coconut milk, but I also enjoy chocolate and mixed berry flavors.")] == [
        "coconut milk", "chocolate and mixed berry flavors",
    ]


def test_dropped_subject_is_inherited_only_from_me():
    assert facts("他喜欢猫，也喜欢狗。") == []


def test_one_comma_without_and_is_not_a_list():
    assert [c.object for c in cands("I love action and sci-fi movies, the effects are so cool!")] == [
        "action and sci-fi movies"
    ]


def test_relative_clause_is_not_a_preference():
    assert only("It looks like we both have things we enjoy doing.", "likes") == []


# -- 3. values -----------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text, subject, obj",
    [
        ("我们的服务器配置升级到 8C16G 了", "服务器配置", "8C16G"),
        ("数据库端口是5432", "数据库端口", "5432"),
        ("我们把 Redis 从 6.2 升级到 7.2 了", "Redis", "7.2"),
        ("The staging database port is now 5433.", "staging database port", "5433"),
        ("Our API version was upgraded to v2.1.0.", "API version", "v2.1.0"),
        ("We upgraded the server to 8C16G yesterday.", "server", "8C16G"),
        ("我的邮箱是 zhang@example.com。", "邮箱", "zhang@example.com"),
    ],
)
def test_values(text, subject, obj):
    got = only(text, "value")
    assert [(c.subject, c.object, c.nature, c.explicitness, c.multi_valued) for c in got] == [
        (subject, obj, "fact", "stated", False)
    ]
    assert got[0].confidence == 0.9


def test_technical_flag():
    (port,) = only("数据库端口是5432", "value")
    (email,) = only("My email is john@example.com.", "value")
    assert port.technical is True
    assert email.technical is False


def test_objects_keep_the_original_full_width_text():
    (c,) = only("服务器配置改成了８Ｃ１６Ｇ！", "value")
    assert (c.subject, c.object) == ("服务器配置", "８Ｃ１６Ｇ")
    # "㎏" normalises to two characters: spans still map back onto the original text
    (c,) = only("㎏是单位，数据库端口是５４３２。", "value")
    assert (c.subject, c.object, c.evidence) == ("数据库端口", "５４３２", "㎏是单位，数据库端口是５４３２。")


@pytest.mark.parametrize(
    "text",
    [
        "数据库端口是多少？",
        "What is the database port?",
        "你的名字是什么？",
        "如果端口是5433就好了。",
        "If my port were 5433 I'd be happy.",
        "假如我住在上海，我会天天去外滩。",
    ],
)
def test_questions_and_hypotheticals_produce_nothing(text):
    assert facts(text) == []


def test_junk_values_are_not_read_from_chat():
    assert only("今天是星期日。这是一个好主意。The weather is very nice. 很多时候都是根据自己的口味来做。", "value") == []


# -- 4. corrections ------------------------------------------------------------------------------------------


def test_correction_with_subject_chinese_and_english():
    assert facts("端口应该是5433，不是5432。") == [("端口", "value", "5433", "fact", "corrected")]
    assert facts("不对，端口不是5432，是5433。") == [("端口", "value", "5433", "fact", "corrected")]
    assert facts("The port isn't 5432, it's 5433.") == [("port", "value", "5433", "fact", "corrected")]
    (c,) = cands("端口应该是5433，不是5432。")
    assert c.confidence == 0.95


def test_correction_without_subject_takes_the_latest_single_valued_fact():
    got = facts(
        turn("数据库端口是5432。", index=0),
        turn("好的，记住了。", role="assistant", index=1),
        turn("不对，是5433", index=2),
    )
    assert got == [
        ("数据库端口", "value", "5432", "fact", "stated"),
        ("数据库端口", "value", "5433", "fact", "corrected"),
    ]
    assert facts("The database port is 5432.", "No, it's 5433.")[-1] == (
        "database port", "value", "5433", "fact", "corrected"
    )
    assert facts("Our deploy target is staging-2.", "Sorry, I meant staging-3.")[-1] == (
        "deploy target", "value", "staging-3", "fact", "corrected"
    )


def test_corrected_identity():
    assert facts("我叫张三。", "我的名字应该是张叁，不是张三。") == [
        ("user", "name", "张三", "fact", "stated"),
        ("user", "name", "张叁", "fact", "corrected"),
    ]
    assert facts("我的名字不是张三，是张叁。") == [("user", "name", "张叁", "fact", "corrected")]
    assert facts("My name isn't Jon, it's John.") == [("user", "name", "John", "fact", "corrected")]


def test_a_contrast_is_not_a_correction():
    assert facts("Running a business isn't easy, but I'm determined to make it work.") == []


def test_actually_only_corrects_what_follows_it():
    got = facts("You can call me Jack. Actually, I love music, movies, and travel.")
    assert got[0] == ("user", "nickname", "Jack", "fact", "stated")
    assert facts("Actually, the server is 4C8G now.") == [("server", "value", "4C8G", "fact", "corrected")]


def test_bare_correction_needs_a_compatible_recent_fact():
    # "Actually, it's fine" is no new port number.
    assert facts("The database port is 5432.", "Actually, it's fine.") == [
        ("database port", "value", "5432", "fact", "stated")
    ]


# -- 5. plans and decisions ----------------------------------------------------------------------------------


def test_plans_with_dates():
    got = cands("我打算下周去上海出差。I'm going to visit my parents next Monday.")
    assert [(c.subject, c.predicate, c.object, c.nature, c.event_date, c.multi_valued) for c in got] == [
        ("user", "plans", "下周去上海出差", "event", "2026-11-09", True),
        ("user", "plans", "visit my parents next Monday", "event", "2026-11-09", True),
    ]


def test_future_dated_sentence_is_a_plan_not_an_event():
    got = cands("2026年12月5日我要去参加婚礼。")
    assert [(c.predicate, c.object, c.event_date) for c in got] == [("plans", "去参加婚礼", "2026-12-05")]


def test_plans_said_in_fear_or_hope_are_not_plans():
    assert only("I'm afraid I'll say something wrong when I'm on stage.", "plans") == []


def test_decisions():
    assert facts("我们决定采用 PostgreSQL。") == [("user", "decided", "PostgreSQL", "fact", "stated")]
    assert facts("We'll go with Kafka.") == [("user", "decided", "Kafka", "fact", "stated")]
    assert facts("Today I've decided to do some photography.")[0] == (
        "user", "decided", "do some photography", "fact", "stated"
    )


# -- 6. events -----------------------------------------------------------------------------------------------


def test_named_speaker_event_resolved_against_the_day():
    (c,) = cands("I went to a LGBTQ support group yesterday", role="other", speaker="Caroline")
    assert (c.subject, c.predicate, c.nature, c.event_date, c.speaker) == (
        "Caroline", "event", "event", "2026-11-02", "Caroline"
    )
    assert c.object == "I went to a LGBTQ support group yesterday"


@pytest.mark.parametrize(
    "text, iso",
    [
        ("昨天我去了公园散步，看到了一朵樱花。", "2026-11-02"),
        ("前天我们全家去看了电影。", "2026-11-01"),
        ("上周五我参加了一场音乐会。", "2026-10-30"),
        ("2026/12/5 是我们的结婚纪念日。", "2026-12-05"),
        ("Last weekend I went hiking with my sister.", "2026-10-31"),
        ("On May 7th I ran my first marathon.", "2026-05-07"),
        ("I adopted a puppy 3 days ago.", "2026-10-31"),
    ],
)
def test_event_dates(text, iso):
    events = only(text, "event")
    assert [c.event_date for c in events] == [iso]


def test_events_drop_greetings_and_trailing_questions():
    (c,) = only("你好啊AI伴侣，今天我去了公园散步，看到了一些非常漂亮的景色，你去过吗？", "event")
    assert c.object == "今天我去了公园散步，看到了一些非常漂亮的景色"
    assert only("我很高兴和你聊天，明天再见。", "event") == []


# -- 7. opinions, 8. rules -----------------------------------------------------------------------------------


def test_opinions():
    got = cands("我觉得这部电影的情节非常紧凑。I think museums are definitely worth revisiting.")
    assert [(c.predicate, c.object, c.nature, c.confidence) for c in got] == [
        ("thinks", "这部电影的情节非常紧凑", "opinion", 0.6),
        ("thinks", "museums are definitely worth revisiting", "opinion", 0.6),
    ]


def test_opinion_about_a_value_is_a_hedged_value():
    assert facts("我觉得数据库端口可能是5432。") == [("数据库端口", "value", "5432", "fact", "inferred")]


def test_rules():
    got = cands("永远不要在周五发布。Never deploy on Fridays. 原则：永远不要直接改生产数据库。")
    assert [(c.predicate, c.object, c.nature, c.confidence) for c in got] == [
        ("rule", "永远不要在周五发布", "axiom", 0.9),
        ("rule", "Never deploy on Fridays", "axiom", 0.9),
        ("rule", "永远不要直接改生产数据库", "axiom", 0.9),
    ]


# -- hedges, assistants, named speakers ----------------------------------------------------------------------


def test_hedged_statements_are_inferred():
    got = cands("我可能住在北京。I probably live in Boston.")
    assert [(c.predicate, c.object, c.explicitness, c.confidence) for c in got] == [
        ("lives_in", "北京", "inferred", 0.6),
        ("lives_in", "Boston", "inferred", 0.6),
    ]


def test_assistant_restatements_are_inferred_about_the_user():
    got = facts(
        "你的端口是5432，看起来你更喜欢用 Vim。",
        "Your name is Emily. You seem to prefer dark mode. It sounds like you have a passion for photography.",
        role="assistant",
    )
    assert got == [
        ("user", "prefers", "Vim", "preference", "inferred"),
        ("端口", "value", "5432", "fact", "inferred"),
        ("user", "name", "Emily", "fact", "inferred"),
        ("user", "prefers", "dark mode", "preference", "inferred"),
        ("user", "likes", "photography", "preference", "inferred"),
    ]
    assert all(c.confidence == 0.6 for c in extract_candidates([turn("Your name is Emily.", role="assistant")], DAY))


def test_assistant_never_states_facts_about_itself():
    assert facts("我叫小爱，我喜欢读书。我的端口是5432。I love hiking. I'm Claude.", role="assistant") == []


def test_named_speaker_is_the_subject():
    got = facts("My name is Caroline. I'm a counselor and I love painting.", role="other", speaker="Caroline")
    assert got == [
        ("Caroline", "name", "Caroline", "fact", "stated"),
        ("Caroline", "role", "counselor", "fact", "stated"),
        ("Caroline", "likes", "painting", "preference", "stated"),
    ]
    # a named speaker's "my X" is theirs, so two speakers' birthdays never supersede each other
    assert facts("My birthday is May 20.", role="other", speaker="Melanie") == [
        ("Melanie's birthday", "value", "May 20", "fact", "stated")
    ]


# -- provenance ----------------------------------------------------------------------------------------------


def test_provenance_evidence_and_line_ranges():
    t = Turn(
        index=4, role="user", speaker="用户", text="你好。我们的服务器配置升级到 8C16G 了。另外我喜欢爬山。",
        time="09:30", source_file="2026-11-03.md", line_start=12, line_end=14,
    )
    got = extract_candidates([t], DAY)
    assert [(c.predicate, c.evidence) for c in got] == [
        ("value", "我们的服务器配置升级到 8C16G 了。"),
        ("likes", "另外我喜欢爬山。"),
    ]
    for c in got:
        assert (c.source_file, c.line_start, c.line_end) == ("2026-11-03.md", 12, 14)
        assert c.observed_at == "2026-11-03T09:30:00"
        assert c.speaker == "用户" and c.extractor == "rules"


def test_evidence_is_capped_at_120_characters():
    text = "昨天我" + "去了很多很多地方" * 30 + "。"
    got = extract_candidates([turn(text)], DAY)
    assert [c.predicate for c in got] == ["event"]
    assert len(got[0].evidence) == 120 and text.startswith(got[0].evidence)
    assert len(got[0].object) <= 120


def test_candidates_come_in_turn_order_and_empty_turns_are_fine():
    got = extract_candidates([turn("", index=0), turn("我喜欢猫。", index=1), turn("I like dogs.", index=2)], DAY)
    assert [(c.object, c.line_start) for c in got] == [("猫", 5), ("dogs", 7)]
    assert extract_candidates([], DAY) == []


@pytest.mark.parametrize("text", ["I prefer Go over Java.", "I'd rather use Go than Java.", "我更喜欢用 Go 而不是 Java。", "我更喜欢 Go，而不是 Java"])
def test_the_rejected_alternative_is_kept_as_prefers_not(text):
    got = [(c.predicate, c.object) for c in cands(text)]
    assert ("prefers_not", "Java") in got and got[0][0] == "prefers" and got[0][1].startswith("Go")


def test_identity_clauses_that_drop_the_repeated_wo():
    assert facts("你好，我叫林晓，是一名后端工程师，在云栈科技工作，base 在杭州。") == [
        ("user", "name", "林晓", "fact", "stated"),
        ("user", "works_at", "云栈科技", "fact", "stated"),
        ("user", "role", "后端工程师", "fact", "stated"),
        ("user", "lives_in", "杭州", "fact", "stated"),
    ]


@pytest.mark.parametrize("text", ["你的数据库端口是 5432，对吧？", "Your database port is 5432, right?"])
def test_an_assistant_asking_claims_nothing_but_anchors_a_bare_correction(text):
    asked = turn(text, role="assistant", index=0)
    assert facts(asked) == []
    fix = turn("不对，是 5433。" if "你的" in text else "No, it's 5433.", index=1)
    assert facts(asked, fix) == [("数据库端口" if "你的" in text else "database port", "value", "5433", "fact", "corrected")]


def test_never_have_is_not_a_rule():
    assert only("I don't like tea though, never have.", "rule") == []


@pytest.mark.parametrize("text, name, nickname", [
    ("我叫陆琳，你可以叫我小琳。", "陆琳", "小琳"),
    ("Hi, my name is Luna, but you can call me Lulu.", "Luna", "Lulu"),
])
def test_what_to_call_someone_is_a_nickname_not_a_new_name(text, name, nickname):
    got = {(c.predicate, c.object) for c in cands(text)}
    assert ("name", name) in got and ("nickname", nickname) in got
