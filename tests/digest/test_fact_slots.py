"""Slots, not strings (issue 15), through the digest on real log files and a real fact store: a new value of the same
type for a related attribute supersedes whatever words name it; another person's slot never does; a stop closes the
facts that name its thing and a removed stop brings them back; a value that starts later is not current before it."""

from __future__ import annotations

import json
from datetime import date

import pytest

from agentos_mem.digest.stages import digest_day
from agentos_mem.query.facts import facts_as_of
from tests.kit.cli import run_cli
from tests.kit.digest import current, log_workspace, night


@pytest.fixture
def ws(tmp_path, monkeypatch):
    monkeypatch.setenv("AGENTOS_NOW", "2026-03-31T12:00:00+08:00")
    return log_workspace(tmp_path)


def test_a_new_value_of_the_same_type_supersedes_under_other_words(ws):
    s, logs = ws
    night(s, logs, date(2026, 3, 2), "今天得把集成测试那台机器的问题解决掉，那台现在还是4C8G的，一跑e2e就OOM")
    night(s, logs, date(2026, 3, 5), "扩容批下来了！测试机升级到8C16G，顺便系统盘也从40G加到了100G")
    now = current(s)
    assert "8C16G" in now and "100G" in now
    assert not any("4C8G" in o for o in now)  # the old spec is history, not a second current value
    history = run_cli("facts", "history", "spec", "--json", home=s.home)
    assert [v["object"] for v in json.loads(history.stdout)["versions"]] == ["4C8G"]


def test_the_same_value_in_other_words_is_one_fact(ws):
    s, logs = ws
    night(s, logs, date(2026, 3, 2), "测试机现在是8C16G")
    night(s, logs, date(2026, 3, 9), "对，那台测试机配置还是8C16G")
    rows = facts_as_of(s)["facts"]
    assert [f["object"] for f in rows] == ["8C16G"] and rows[0]["reinforcements"] == 1


def test_another_persons_slot_is_never_superseded(ws):
    s, logs = ws
    night(s, logs, date(2026, 3, 13), "我自己用的是 Pixel 8")
    night(s, logs, date(2026, 3, 22), "给我妈买了台 iPhone 15，教了一上午怎么视频通话")
    assert current(s) == ["Pixel 8", "iPhone 15"]


def test_a_stop_closes_what_names_its_thing_and_its_removal_restores_it(ws):
    s, logs = ws
    night(s, logs, date(2026, 3, 3), "我们组上个月买了 GitHub Copilot Business，现在写 unit test 基本全靠它 autocomplete")
    assert any("Copilot" in o for o in current(s))
    night(s, logs, date(2026, 3, 26), "唉，infosec 出了新规，Copilot 全员停用，以后 IDE 里不许装任何 AI completion 插件")
    assert not any("Copilot" in o for o in current(s))
    assert any("Copilot" in o for o in current(s, date(2026, 3, 20)))  # history: it held before the stop
    (logs / "2026-03-26.md").unlink()  # the user removes the day that said it
    digest_day(s, "default", date(2026, 3, 26), logs)
    assert any("Copilot" in o for o in current(s))


def test_a_value_that_starts_later_is_not_current_before_its_start(ws, monkeypatch):
    s, logs = ws
    monkeypatch.setenv("AGENTOS_NOW", "2026-03-12T20:00:00+08:00")
    night(s, logs, date(2026, 3, 12), "我现在每天坐2号线上班，公司说4月1号起整体搬到新园区，到时候我得改坐14号线了")
    out = facts_as_of(s)
    assert [f["object"] for f in out["facts"] if f["predicate"] == "value"] == ["2号线"]
    # the move itself, told as a dated event, is upcoming too: it has not happened yet
    assert [(f["object"], f["valid_from"][:10]) for f in out["upcoming"]] == [("14号线", "2026-04-01"), ("公司说4月1号起整体搬到新园区", "2026-04-01")]
    assert [f["object"] for f in facts_as_of(s, date(2026, 4, 2))["facts"] if f["predicate"] == "value"] == ["14号线"]
    listing = run_cli("facts", "list", home=s.home).stdout
    assert "starting later: 2" in listing and "14号线   [from 2026-04-01]" in listing


def test_a_change_naming_both_values_continues_the_slot_that_held_the_old_one(ws):
    s, logs = ws
    night(s, logs, date(2026, 3, 4), "我的笔记软件是Notion")
    night(s, logs, date(2026, 3, 9), "算了不折腾了，Notion不用了，改用Obsidian，打开速度快太多")
    rows = [f for f in facts_as_of(s)["facts"] if f["predicate"] == "value"]
    assert [(f["subject"], f["object"]) for f in rows] == [("笔记软件", "Obsidian")] and rows[0]["version"] == 2


def test_a_change_whose_old_value_nothing_held_keeps_it_as_history(ws):
    s, logs = ws
    night(s, logs, date(2026, 3, 9), "Actually, I switched from Vim to Helix last week")
    assert current(s) == ["Helix"]
    assert current(s, date(2026, 3, 8)) == []  # the old value is history of the change, not a fact of an earlier day
    versions = json.loads(run_cli("facts", "history", "user", "--json", home=s.home).stdout)["versions"]
    assert sorted((v["object"], v["status"]) for v in versions) == [("Helix", "active"), ("Vim", "superseded")]


def test_a_question_gets_the_value_that_holds_now_not_the_one_that_starts_later(ws, monkeypatch):
    from agentos_mem.index.stages import rebuild
    from agentos_mem.query.ask import ask

    s, logs = ws
    monkeypatch.setenv("AGENTOS_NOW", "2026-03-12T20:00:00+08:00")
    night(s, logs, date(2026, 3, 12), "我现在每天坐2号线上班，公司说4月1号起整体搬到新园区，到时候我得改坐14号线了")
    rebuild(s)

    def lines():
        return " | ".join(i.text for i in ask("我现在坐几号线上班？", settings=s).items if i.kind == "fact")

    assert "2号线" in lines() and "14号线" not in lines()
    monkeypatch.setenv("AGENTOS_NOW", "2026-04-02T08:00:00+08:00")  # the move has started; the night rebuilds
    rebuild(s)
    assert "14号线" in lines() and "2号线" not in lines().replace("14号线", "")


def test_an_event_that_tells_of_a_replaced_value_is_history(ws):
    s, logs = ws
    night(s, logs, date(2026, 3, 2), "今天又在Notion里整理了一晚上读书笔记")
    assert any("Notion" in f["object"] for f in facts_as_of(s)["facts"] if f["predicate"] == "event")
    night(s, logs, date(2026, 3, 5), "算了不折腾了，不用Notion了，改用Obsidian")
    assert [f["object"] for f in facts_as_of(s)["facts"]] == ["Obsidian"]
    assert any("Notion" in f["object"] for f in facts_as_of(s, date(2026, 3, 3))["facts"])  # it held then


def test_the_same_time_said_again_in_other_words_is_one_fact_and_two_times_of_a_sentence_are_two(ws):
    s, logs = ws
    night(s, logs, date(2026, 3, 2), "我一般12点睡，7点起")
    night(s, logs, date(2026, 3, 9), "老规矩，还是十二点睡，七点起床")
    rows = facts_as_of(s)["facts"]
    assert sorted(f["object"] for f in rows) == ["12点", "7点"]
    assert all(f["reinforcements"] == 1 for f in rows)


@pytest.mark.parametrize("line", ["比如测试机可以配成8C16G，随便举个例子", "他那句“周会改到周三”是电影台词", "e.g. set the port to 5433 in the sample config"])
def test_examples_quotes_and_test_data_write_no_value(ws, line):
    s, logs = ws
    night(s, logs, date(2026, 3, 2), line)
    assert not [f for f in facts_as_of(s)["facts"] if f["predicate"] == "value"]


def test_an_english_question_names_a_chinese_person_as_it_is_said(ws):
    from agentos_mem.index.stages import rebuild
    from agentos_mem.query.ask import ask

    s, logs = ws
    night(s, logs, date(2026, 3, 10), "我同事小李在广州分部，跟我这边北京总部远程协作")
    night(s, logs, date(2026, 3, 27), "小李调去深圳了，加入新成立的硬件团队")
    rebuild(s)
    a = ask("Which city is my colleague Xiao Li based in now?", settings=s)
    facts = " | ".join(i.text for i in a.items if i.kind == "fact")
    assert a.status == "ok" and "深圳" in facts and "广州" not in facts


@pytest.mark.parametrize(
    ("first", "later", "now", "before"),
    [("我老婆在腾讯上班", "她上周跳槽去了阿里", "阿里", "腾讯"),
     ("My brother works at BMW in Munich", "He just moved to Berlin and works at Voltaro now", "Voltaro", "BMW")],
)
def test_he_or_she_on_a_later_day_is_the_person_spoken_of_before(ws, first, later, now, before):
    s, logs = ws
    night(s, logs, date(2026, 3, 2), first)
    night(s, logs, date(2026, 3, 9), later)
    works = {f["object"]: f["subject"] for f in facts_as_of(s)["facts"] if f["predicate"] == "works_at"}
    assert now in works and before not in works and works[now] != "user"


def test_the_old_value_said_again_before_a_later_start_does_not_cancel_the_change(ws, monkeypatch):
    s, logs = ws
    monkeypatch.setenv("AGENTOS_NOW", "2026-03-20T20:00:00+08:00")
    night(s, logs, date(2026, 3, 12), "我现在每天坐2号线上班，公司说4月1号起整体搬到新园区，到时候我得改坐14号线了")
    night(s, logs, date(2026, 3, 19), "今天2号线又挤爆了，我还是每天坐2号线")
    assert [f["object"] for f in facts_as_of(s)["facts"] if f["predicate"] == "value"] == ["2号线"]
    assert [f["object"] for f in facts_as_of(s)["upcoming"] if f["predicate"] == "value"] == ["14号线"]


@pytest.mark.parametrize(("line", "past", "now"), [("I used to live in Boston, now I live in Austin", "Boston", "Austin"),
                                                   ("我以前住在北京，现在住在上海", "北京", "上海"),
                                                   ("I used to play tennis every weekend", "tennis", None)])
def test_what_used_to_hold_is_history_never_current(ws, line, past, now):
    s, logs = ws
    night(s, logs, date(2026, 3, 2), line)
    current = [f["object"] for f in facts_as_of(s)["facts"]]
    assert past not in current and (now is None or now in current)
    versions = json.loads(run_cli("facts", "history", "user", "--json", home=s.home).stdout)["versions"]
    assert [(v["object"], v["status"]) for v in versions if v["object"] == past] == [(past, "superseded")]


def test_a_past_as_of_view_does_not_list_what_was_learnt_later_as_starting_later(ws, monkeypatch):
    s, logs = ws
    night(s, logs, date(2026, 3, 2), "测试机现在是4C8G")
    night(s, logs, date(2026, 3, 9), "我的笔记软件是Notion")
    assert facts_as_of(s, date(2026, 3, 3))["upcoming"] == []
    assert "starting later" not in run_cli("facts", "list", "--as-of", "2026-03-03", home=s.home).stdout
