"""A named thing in the role a construction gives it (issue 15, family ``named``): the tool for a purpose, where a thing
is kept, a habitual verb's named object, what a thing of mine is or is called. Read from the extractor, and then
through the digest and the real fact store, where a later name in the same construction supersedes."""

from __future__ import annotations

from datetime import date

import pytest

from agentos_mem.digest.extract.engine import extract_candidates
from agentos_mem.kernel.domain import Turn
from agentos_mem.query.facts import facts_as_of
from tests.kit.digest import log_workspace, night


def read(text: str) -> list[tuple[str, str, str]]:
    turn = Turn(index=0, role="user", speaker="用户", text=text, source_file="d.md", line_start=1, line_end=1, time="10:00")
    return [(c.subject, c.predicate, c.object) for c in extract_candidates([turn], date(2026, 5, 4))]


@pytest.mark.parametrize(
    "text, fact",
    [
        ("We use Jira for tickets", ("tickets", "value", "Jira")),
        ("My team uses Terraform to manage infra", ("manage infra", "value", "Terraform")),
        ("我平时用 VS Code 写代码", ("写代码", "value", "VS Code")),
        ("我每天骑电动车上班", ("上班", "value", "电动车")),
        ("I keep my dotfiles on GitHub", ("dotfiles", "value", "GitHub")),
        ("我们的文档都放在 Confluence 上", ("文档", "value", "Confluence")),
        ("I drive a Honda Civic", ("drive", "value", "Honda Civic")),
        ("My daughter Emma goes to Lincoln Elementary", ("daughter Emma's go to", "value", "Lincoln Elementary")),
        ("Our office is in Shenzhen", ("office", "value", "Shenzhen")),
        ("我的车是一辆卡罗拉", ("车", "value", "卡罗拉")),
        ("我家有一只猫叫年糕", ("猫", "value", "年糕")),
    ],
)
def test_a_name_fills_the_slot_its_construction_names(text, fact):
    assert fact in read(text)


@pytest.mark.parametrize(
    "text",
    [
        "What if we used Jira for tickets?",  # a question, a hypothetical
        "Maybe I should drive a Tesla",  # a wish
        "我的猫很可爱",  # a description, not a name
        "我的车是红色的",
        "比如我们用 Jira 管理需求",  # an example
        "I drove a Honda Civic in college",  # a past verb is a story
        "周报模板统一放在团队空间",  # how things are kept, not a thing of one's own ("统一" is no thing)
    ],
)
def test_no_name_from_what_is_not_a_statement_of_it(text):
    assert not [f for f in read(text) if f[1] == "value"]


@pytest.fixture
def ws(tmp_path, monkeypatch):
    monkeypatch.setenv("AGENTOS_NOW", "2026-05-30T12:00:00+08:00")
    return log_workspace(tmp_path)


@pytest.mark.parametrize(
    "first, then, old, new",
    [
        ("我用 Notion 记笔记", "我现在用 Obsidian 记笔记了", "Notion", "Obsidian"),
        ("I drive a Honda Civic", "I drive a Tesla Model Y now", "Honda Civic", "Tesla Model Y"),
        ("我的车是一辆卡罗拉", "我的车现在是比亚迪汉", "卡罗拉", "比亚迪汉"),
        ("Our office is in Shenzhen", "Our office is in Guangzhou now", "Shenzhen", "Guangzhou"),
    ],
)
def test_a_later_name_in_the_same_construction_supersedes(ws, first, then, old, new):
    s, logs = ws
    night(s, logs, date(2026, 5, 4), first)
    night(s, logs, date(2026, 5, 11), then)
    assert [f["object"] for f in facts_as_of(s)["facts"]] == [new]
    assert [f["object"] for f in facts_as_of(s, date(2026, 5, 8))["facts"]] == [old]


@pytest.mark.parametrize(
    "text, fact",
    [
        ("I have an AWS SAA certification", ("user", "has", "AWS SAA")),
        ("我今年又考了 CKA", ("user", "has", "CKA")),
        ("我老公有一辆特斯拉", ("老公", "has", "特斯拉")),
        ("My brother owns a Tesla", ("brother", "has", "Tesla")),
        ("同事小李用 Vim 写代码", ("小李的写代码", "value", "Vim")),
        ("朵朵骑自行车上学", ("朵朵的上学", "value", "自行车")),
    ],
)
def test_what_someone_has_and_a_named_persons_tools(text, fact):
    assert fact in read(text)


def test_a_capitalised_word_with_a_plural_verb_is_a_thing_not_a_person():
    # "Metrics go to Prometheus" was read as a person called Metrics ("Metrics's go to"): a person's name takes the
    # singular verb; with the plural the word is the thing the sentence is about
    assert read("Metrics go to Prometheus now") == [("metrics go to", "value", "Prometheus")]
    assert ("Amy's go to", "value", "Lincoln Elementary") in read("Amy goes to Lincoln Elementary")


def test_a_typed_name_is_left_to_its_type():
    # "iPhone 15" is a version: a value of its slot, so "妈的手机换成了 iPhone 16" supersedes it (family anchored)
    assert [f for f in read("给我妈买了台 iPhone 15") if f[1] == "value" and "妈" in f[0] and f[2] == "iPhone 15"]


def test_what_one_has_adds(ws):
    s, logs = ws
    night(s, logs, date(2026, 5, 4), "I have an AWS SAA certification")
    night(s, logs, date(2026, 5, 11), "我今年又考了 CKA")
    assert sorted(f["object"] for f in facts_as_of(s)["facts"]) == ["AWS SAA", "CKA"]


def test_a_construction_never_cuts_a_typed_value_short():
    assert ("standup", "value", "9:30") in read("Our standup is at 9:30")


def test_what_one_pays_for_is_a_list_and_a_cancellation_ends_one(ws):
    s, logs = ws
    night(s, logs, date(2026, 5, 4), "Right now we pay for Netflix Premium, YouTube Premium and iCloud 200GB.")
    night(s, logs, date(2026, 5, 11), "Done, cancelled the Netflix sub last night.")
    assert sorted(f["object"] for f in facts_as_of(s)["facts"] if f["predicate"] == "has") == ["YouTube Premium", "iCloud 200GB"]


def test_where_a_thing_is_kept_without_saying_whose(ws):
    s, logs = ws
    night(s, logs, date(2026, 5, 4), "我的读书笔记一直都记在Notion里")
    night(s, logs, date(2026, 5, 11), "算了，Notion不用了，改用Obsidian，仓库就放在iCloud文件夹里同步")
    now = {(f["subject"], f["object"]) for f in facts_as_of(s)["facts"]}
    assert ("读书笔记", "Obsidian") in now and ("仓库", "iCloud") in now


def test_a_team_and_a_move_to_another_that_starts_later(ws, monkeypatch):
    s, logs = ws
    monkeypatch.setenv("AGENTOS_NOW", "2026-05-20T12:00:00+08:00")
    night(s, logs, date(2026, 5, 20), "Some news: starting next month I'm moving to the ads ranking team. For now I'm still on "
                                      "search infra until the handover's done.")
    out = facts_as_of(s)
    assert [f["object"] for f in out["facts"] if f["predicate"] == "value"] == ["search infra"]
    assert not any("ads ranking" in f["object"] for f in out["facts"])  # not yet: it starts in June
    assert any("ads ranking" in f["object"] for f in out["upcoming"])


def test_a_value_handed_on_is_not_the_speakers():
    assert not [f for f in read("跟你说，车卖了，Model 3 出给了我一个同事") if f[2] == "Model 3" and f[1] != "stopped"]


def test_a_value_said_to_be_the_old_one_is_not_current(ws):
    s, logs = ws
    night(s, logs, date(2026, 5, 4), "Our API gateway runs on port 8080")
    night(s, logs, date(2026, 5, 11), "wait no, the gateway is on 8443, 8080 was the old one")
    assert [f["object"] for f in facts_as_of(s)["facts"]] == ["8443"]


def test_a_correction_of_a_name_said_with_jiao(ws):
    s, logs = ws
    night(s, logs, date(2026, 5, 4), "我们的测试环境数据库叫 test-db-01")
    night(s, logs, date(2026, 5, 11), "更正一下，测试库的名字是 test-db-02，我上次打错了")
    assert [f["object"] for f in facts_as_of(s)["facts"]] == ["test-db-02"]


@pytest.mark.parametrize(
    "first, then, new",
    [
        ("My manager's name is Kevin Zhang", "Sorry, his name is Kevin Cheng, autocorrect got me", "Kevin Cheng"),
        ("我老婆的公司是腾讯", "她的公司现在是字节", "字节"),
    ],
)
def test_his_or_her_thing_is_the_persons_spoken_of(ws, first, then, new):
    s, logs = ws
    night(s, logs, date(2026, 5, 4), first)
    night(s, logs, date(2026, 5, 11), then)
    assert [f["object"] for f in facts_as_of(s)["facts"]] == [new]


def test_his_means_no_one_when_the_sentence_names_whom_first_or_the_last_person_is_a_woman(ws):
    s, logs = ws
    night(s, logs, date(2026, 5, 4), "My grandma lives in Ohio")
    night(s, logs, date(2026, 5, 11), "Our one-year-old is so cute, his name is Kyle!", "His name is Max.")
    assert not [f for f in facts_as_of(s)["facts"] if "grandma" in f["subject"] and f["object"] in ("Kyle", "Max")]
