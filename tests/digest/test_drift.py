"""Without a model, the rules do no harm (issue 26): a fact the user may have changed on a later day, in words no rule
ties to its slot, is not served as plainly current. Through the digest on real log files, the real fact store and the
offline embedder, as ``agentos facts list --json`` lists the facts: the older fact is ``may_have_changed`` with the
day and the newer sentence when that sentence is about the same topic and holds another value of the same type;
saying the value again, another topic, an addition, a question or a wish, a value of free text, removing the newer
day's log, or having no embedder leave it as it was; re-running the day changes nothing."""

from __future__ import annotations

import json
from datetime import date

import pytest

from agentos_mem.digest.stages import digest_day
from tests.kit.cli import run_cli
from tests.kit.digest import log_workspace, night

D1, D2, D3 = date(2026, 6, 2), date(2026, 6, 9), date(2026, 6, 16)
STANDUP = "Our team's standup is at 9:15 every morning."
STANDUP_LATER = "We do standups right after lunch at 1:30 since half the team sits in Lisbon."


@pytest.fixture
def ws(tmp_path, monkeypatch):
    monkeypatch.setenv("AGENTOS_NOW", "2026-06-20T12:00:00+08:00")
    return log_workspace(tmp_path)


def listed(s, *args) -> list[dict]:
    return json.loads(run_cli("facts", "list", "--json", *args, home=s.home).stdout)["facts"]


def statuses(s, value: str, *args) -> list[str]:
    return [f["status"] for f in listed(s, *args) if f["object"] == value]


def test_a_later_value_no_slot_took_flags_the_older_value_of_its_type_with_the_day_and_sentence(ws):
    s, logs = ws
    night(s, logs, D1, STANDUP)
    assert statuses(s, "9:15") == ["active"]
    night(s, logs, D2, STANDUP_LATER)
    (old,) = [f for f in listed(s) if f["object"] == "9:15"]
    assert old["status"] == "may_have_changed" and old["changed_on"] == "2026-06-09" and "right after lunch at 1:30" in old["newer"]
    assert [f["status"] for f in listed(s) if f["object"] == "1:30"] == ["active"]  # the newer value itself is current
    line = next(x for x in run_cli("facts", "list", home=s.home).stdout.splitlines() if "9:15" in x)
    assert "may have changed on 2026-06-09" in line and "right after lunch at 1:30" in line
    assert statuses(s, "9:15", "--as-of", "2026-06-05") == ["active"]  # before the newer word it was simply current


def test_saying_the_value_again_takes_the_flag_back(ws):
    s, logs = ws
    night(s, logs, D1, STANDUP)
    night(s, logs, D2, "Standup is still at 9:15 sharp, nobody is ever late.")
    assert statuses(s, "9:15") == ["active"]
    night(s, logs, D3, STANDUP_LATER)
    assert statuses(s, "9:15") == ["may_have_changed"]
    (logs / f"{D3}.md").write_text(f"[10:00] 用户: {STANDUP_LATER}\n[10:05] 用户: {STANDUP}\n", encoding="utf-8")
    digest_day(s, "default", D3, logs)  # the same day, later: the old value said again after the newer word
    assert statuses(s, "9:15") == ["active"]


def test_another_topic_an_addition_a_question_or_a_wish_flag_nothing(ws):
    s, logs = ws
    night(s, logs, D1, STANDUP)
    night(s, logs, D2, "I ran my first half marathon along the river in Chicago.",
          "I also moved my gym session to 7:30 so I can make it home by nine.",
          "Should we move standups to 1:30?",
          "I'm thinking about moving standups to 1:30.")
    assert not [f for f in listed(s) if f["status"] == "may_have_changed"]
    assert statuses(s, "9:15") == ["active"]


def test_a_value_of_free_text_is_not_flagged_on_meaning_alone(ws):
    s, logs = ws
    night(s, logs, D1, "I write all my code in Sublime Text, it's been my editor for years.")
    night(s, logs, D2, "These past weeks Zed has taken over for pretty much all my coding, it's so snappy.")
    assert [f["status"] for f in listed(s) if "Sublime Text" in f["object"]] == ["statement"]


def test_removing_the_newer_days_log_takes_the_flag_away_and_rerunning_changes_nothing(ws):
    s, logs = ws
    night(s, logs, D1, STANDUP)
    night(s, logs, D2, STANDUP_LATER)
    before = listed(s)
    digest_day(s, "default", D2, logs)  # the same day again
    assert listed(s) == before
    (logs / f"{D2}.md").unlink()
    digest_day(s, "default", D2, logs)
    assert [(f["object"], f["status"]) for f in listed(s)] == [("9:15", "active")]


def test_without_an_embedder_nothing_is_flagged(tmp_path, monkeypatch):
    monkeypatch.setenv("AGENTOS_NOW", "2026-06-20T12:00:00+08:00")
    monkeypatch.setenv("AGENTOS_EMBEDDER", "openai:http://127.0.0.1:9/v1#none")  # nothing listens there
    s, logs = log_workspace(tmp_path)
    night(s, logs, D1, STANDUP)
    night(s, logs, D2, STANDUP_LATER)
    assert statuses(s, "9:15") == ["active"]
