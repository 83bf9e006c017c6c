"""A fact the user may have changed (issue 26) as ``agentos query`` serves it: not as a plain current fact but with
status ``may_have_changed``, the day and the newer sentence in its source, and the flag and that sentence beside it in
the text answer; a self-disclosure no rule read as what the user said that day (status ``statement``). The digest,
the index rebuild and the query run on real files (no Prefect)."""

from __future__ import annotations

import json
from datetime import date

import pytest

from agentos_mem.index.stages import rebuild
from tests.kit.cli import run_cli
from tests.kit.digest import log_workspace, night, told

QUESTION = "What time is our team's standup?"


@pytest.fixture
def flagged(tmp_path, monkeypatch):
    monkeypatch.setenv("AGENTOS_NOW", "2026-06-20T12:00:00+08:00")
    s, logs = log_workspace(tmp_path)
    night(s, logs, date(2026, 6, 2), "Our team's standup is at 9:15 every morning.",
          "I've been volunteering at the animal shelter near my place.")
    night(s, logs, date(2026, 6, 9), "We do standups right after lunch at 1:30 since half the team sits in Lisbon.")
    rebuild(s)
    return s


def test_query_json_serves_the_older_fact_flagged_with_the_newer_sentence(flagged):
    out = json.loads(run_cli("query", QUESTION, "--json", home=flagged.home).stdout)
    facts = [i for i in out["items"] if i["kind"] == "fact" and "· 9:15" in i["text"]]
    assert out["status"] == "ok" and facts, out
    src = facts[0]["source"]
    assert src["status"] == "may_have_changed" and src["changed_on"] == "2026-06-09" and "right after lunch at 1:30" in src["newer"]
    assert "may have changed on 2026-06-09" in facts[0]["text"] and "1:30" in facts[0]["text"]
    assert not any(i["source"].get("status") == "active" and "· 9:15" in i["text"] for i in out["items"] if i["kind"] == "fact")


def test_the_text_answer_shows_the_flag_and_the_newer_sentence(flagged):
    text = run_cli("query", QUESTION, home=flagged.home).stdout
    line = next(x for x in text.splitlines() if "· 9:15" in x)
    assert "may have changed on 2026-06-09" in line and "right after lunch at 1:30" in line and "may_have_changed" in line


def test_a_statement_no_rule_read_is_served_as_what_the_user_said_that_day(flagged):
    out = json.loads(run_cli("query", "Where do I volunteer?", "--json", home=flagged.home).stdout)
    facts = [i for i in out["items"] if i["kind"] == "fact" and "animal shelter" in i["text"]]
    assert facts, out
    assert facts[0]["source"]["status"] == "statement" and facts[0]["source"]["said_on"] == "2026-06-02"
    assert facts[0]["text"].endswith("(said on 2026-06-02)")


def test_an_event_is_served_as_what_happened_that_day_never_as_a_current_fact(tmp_path, monkeypatch):
    # something that happened on a day holds no one value that is current now (issue 40: claims only where sure)
    s = told(tmp_path, monkeypatch, {date(2026, 6, 2): ["Finished the Berlin marathon last Sunday!", "上周末去千岛湖骑了一圈自行车，累坏了。"]})
    facts = json.loads(run_cli("facts", "list", "--json", home=s.home).stdout)["facts"]
    events = [f for f in facts if "marathon" in f["object"] or "千岛湖" in f["object"]]
    assert len(events) == 2 and all(f["status"] == "statement" and f["said_on"] == "2026-06-02" for f in events), facts
    out = json.loads(run_cli("query", "When did I finish the Berlin marathon?", "--json", home=s.home).stdout)
    said = [i for i in out["items"] if i["kind"] == "fact" and "marathon" in i["text"]]
    assert said and said[0]["source"]["status"] == "statement" and said[0]["text"].endswith("(said on 2026-06-02)"), out


def test_a_statement_a_later_fact_of_its_thread_follows_says_its_day_once(tmp_path, monkeypatch):
    s = told(tmp_path, monkeypatch, {date(2026, 6, 2): ["Finished the Berlin marathon last Sunday!"],
                                     date(2026, 6, 9): ["My next marathon is Tokyo."]})
    out = json.loads(run_cli("query", "Which marathon is next for me?", "--json", home=s.home).stdout)
    facts = [i for i in out["items"] if i["kind"] == "fact"]
    assert "Tokyo" in facts[0]["text"], facts  # the newer fact of the thread first
    old = next(i for i in facts if "Berlin" in i["text"])
    assert old["source"]["status"] == "statement" and old["source"]["earlier"] == "2026-06-02"
    assert old["text"].endswith("(said on 2026-06-02, earlier)") and old["text"].count("2026-06-02") == 1, old



def test_a_change_told_in_free_words_is_served_as_what_the_user_said_that_day(tmp_path, monkeypatch):
    # a sentence that tells a change no rule reads ("这周 switched to Obsidian") is kept whole; served as a plainly
    # current fact, its value was the sentence, the old tool included (issue 40: a claim holds one value): it is what
    # the user said that day, whatever it closes
    s = told(tmp_path, monkeypatch, {date(2026, 6, 2): ["我平时用 Notion 记笔记。"],
                                     date(2026, 6, 9): ["笑死，Notion 太卡了，这周 switched to Obsidian 了"]})
    facts = json.loads(run_cli("facts", "list", "--json", home=s.home).stdout)["facts"]
    change = [f for f in facts if "Obsidian" in f["object"]]
    assert change and all(f["predicate"] == "states" and f["status"] == "statement" and f["said_on"] == "2026-06-09"
                          for f in change), facts
    out = json.loads(run_cli("query", "What do I take notes in now?", "--json", home=s.home).stdout)
    said = [i for i in out["items"] if i["kind"] == "fact" and "Obsidian" in i["text"]]
    assert said and said[0]["source"]["status"] == "statement" and "(said on 2026-06-09" in said[0]["text"], out
