"""What the user tells of themself that no rule reads (issue 26) is kept as a dated statement (``states``: the sentence,
masked), so retrieval can reach it; the rules are unsure of what it means, so it is served as what the user said that
day (status ``statement``, ``said_on``), never as a plain current fact, and it supersedes nothing. A question, a wish, a
hypothetical, a joke, a quote, a hedge, someone else's words and the assistant's are not kept. Through the digest on
real log files, as ``agentos facts list --json`` lists the facts."""

from __future__ import annotations

import json
from datetime import date

from tests.kit.cli import run_cli
from tests.kit.digest import log_workspace, night

DAY = date(2026, 6, 2)


def statements(s) -> list[dict]:
    return [f for f in json.loads(run_cli("facts", "list", "--json", home=s.home).stdout)["facts"] if f["predicate"] == "states"]


def test_a_self_disclosure_no_rule_reads_is_kept_as_a_dated_statement(tmp_path):
    s, logs = log_workspace(tmp_path)
    night(s, logs, DAY, "I've been volunteering at the animal shelter near my place.", "我们组的周报都交给小王来整理。")
    kept = {f["object"]: f for f in statements(s)}
    assert set(kept) == {"I've been volunteering at the animal shelter near my place", "我们组的周报都交给小王来整理"}
    for f in kept.values():
        assert f["subject"] == "user" and f["status"] == "statement" and f["said_on"] == "2026-06-02"
    text = run_cli("facts", "list", home=s.home).stdout
    assert "statement said on 2026-06-02" in next(x for x in text.splitlines() if "animal shelter" in x)


def test_a_statement_holds_no_secret(tmp_path):
    s, logs = log_workspace(tmp_path)
    token = "ghp_" + "abcdefghijklmnopqrstuvwxyz0123456789"
    night(s, logs, DAY, f"I paste my token {token} into every new laptop I set up.")
    (kept,) = statements(s)
    assert token not in json.dumps(kept) and "secret masked" in kept["object"] and "every new laptop" in kept["object"]


def test_what_is_not_a_self_disclosure_is_not_kept(tmp_path):
    s, logs = log_workspace(tmp_path)
    night(s, logs, DAY,
          "Do you know a good animal shelter near my place?",
          "If I had more time I'd be volunteering at the zoo on weekends.",
          "My brother has been volunteering at the food bank downtown.",
          "I want to start volunteering at the public library.",
          "I'm basically a professional dog walker now lol.",
          "I guess our team mostly works out of the Lisbon office.",
          "我们组的周报是不是该交给小王来整理？",
          "有人说我们组的周报以后交给小王来整理。")
    assert statements(s) == []


def test_a_plain_word_about_a_named_thing_is_kept_and_chat_that_names_nothing_is_not(tmp_path):
    s, logs = log_workspace(tmp_path)
    night(s, logs, DAY, "Heads up: the nightly exports land in BigQuery these days.",  # about a thing, not the speaker
          "That's all for today.", "先这样改吧。",  # chat: names nothing
          "I guess the dashboards moved to Grafana Cloud.")  # hedged
    kept = [f["object"] for f in statements(s)]
    assert kept == ["Heads up: the nightly exports land in BigQuery these days"]
    listed = json.loads(run_cli("facts", "list", "--json", home=s.home).stdout)["facts"]
    assert not any(f["status"] == "active" for f in listed if "BigQuery" in f["object"])  # what was said, not a claim


def test_the_assistant_tells_no_statement_of_the_users(tmp_path):
    s, logs = log_workspace(tmp_path)
    (logs / f"{DAY}.md").write_text("[10:00] 助手: Our whole backend team works out of the Lisbon office, I believe.\n"
                                    "[10:01] 助手: 我们组的周报都交给小王来整理。\n", encoding="utf-8")
    from agentos_mem.digest.stages import digest_day

    digest_day(s, "default", DAY, logs)
    assert statements(s) == []


def test_a_statement_supersedes_nothing(tmp_path):
    s, logs = log_workspace(tmp_path)
    night(s, logs, DAY, "My editor is Helix.")
    night(s, logs, date(2026, 6, 9), "I've set up a dark theme with bigger fonts on every machine I own.")
    facts = json.loads(run_cli("facts", "list", "--json", home=s.home).stdout)["facts"]
    assert {(f["object"], f["status"]) for f in facts} == {("Helix", "active"),
                                                           ("I've set up a dark theme with bigger fonts on every machine I own", "statement")}
