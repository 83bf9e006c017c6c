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
from tests.kit.digest import log_workspace, night

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
