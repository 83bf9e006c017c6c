"""Topic threads on the read side (issue 40): what the query serves about one thing comes newest first, and an older
item of a single-valued thread is marked ``earlier`` (its day); a list grows, a repeat confirms, another person's thread
is not the user's. The pure rules on hand-made pieces, then the same through ``agentos query --json`` and
``agentos facts list --json`` on a workspace digested and indexed from real logs (no Prefect)."""

from __future__ import annotations

import json
from datetime import date

import pytest

from agentos_mem.query.facts import in_threads
from agentos_mem.query.threads import Piece, arrange, content_words, replaced
from tests.kit.cli import run_cli
from tests.kit.digest import told


def claim(at: str, subject: str, value: str, multi: bool = False) -> Piece:
    return Piece(at=at, text=f"{subject} {value}", claim=True, fact=True, subject=subject, value=value, multi=multi)


def card(at: str, text: str) -> Piece:
    return Piece(at=at, text=text)


def test_no_item_stands_above_a_newer_item_of_its_thread():
    pieces = [claim("2026-03-02T10:00:00", "Kafka cluster", "5 brokers"),  # ranked first, said first
              card("2026-03-04T09:00:00", "lunch with the team at the noodle place"),  # another topic keeps its place
              card("2026-03-09T11:00:00", "we added brokers: the Kafka cluster has 7 brokers now")]
    order, earlier = arrange(pieces)
    assert order == [2, 0, 1]  # the newer count first, then the older one, then the other topic
    assert earlier == {0: "2026-03-02"}  # the older claim is history: a newer item of its thread holds another count


def test_a_correction_later_the_same_day_makes_the_slip_history():
    slip, fix = claim("2026-03-02T10:00:00", "Kafka cluster", "5 brokers"), claim("2026-03-02T10:05:00", "brokers", "7 brokers")
    assert replaced([slip, fix]) == {0: 1}
    assert arrange([slip, fix])[0] == [1, 0]


def test_a_list_grows_and_a_repeat_confirms():
    hobbies = [claim("2026-03-02T10:00:00", "user", "watercolour painting", multi=True),
               claim("2026-03-09T10:00:00", "user", "painting pottery", multi=True)]
    order, earlier = arrange(hobbies)
    assert order == [1, 0] and earlier == {}  # newest first, nothing in a list is history
    repeat = [claim("2026-03-02T10:00:00", "home NAS", "Synology DS920+"),
              card("2026-03-20T10:00:00", "the home NAS is still the Synology DS920+, rock solid")]
    assert replaced(repeat) == {}  # said again in other words: confirmed, still current


def test_another_person_s_fact_is_not_the_user_s_thread():
    mine, wife = claim("2026-03-02T10:00:00", "employer", "Tencent"), claim("2026-03-09T10:00:00", "wife's employer", "ByteDance")
    assert replaced([mine, wife]) == {}
    assert replaced([mine, claim("2026-03-09T10:00:00", "new employer", "ByteDance")]) == {0: 1}


def test_free_text_is_history_only_beside_a_newer_fact_and_a_typed_value_beside_any_newer_item():
    name = claim("2026-03-02T10:00:00", "editor", "Vim")
    assert replaced([name, card("2026-03-09T10:00:00", "I tried the Helix editor at a meetup")]) == {}  # may be an addition
    spec = claim("2026-03-02T10:00:00", "测试机配置", "4C8G")
    assert replaced([spec, card("2026-03-05T16:40:00", "测试机升级到8C16G了")]) == {0: 1}  # another spec of its thread
    assert replaced([spec, card("2026-03-05T16:40:00", "测试机又跑挂了一次")]) == {}  # no other value: nothing replaced
    said = Piece(at="2026-03-05T16:40:00", text="user 测试机升级到8C16G了", fact=True, subject="user")  # a statement
    assert replaced([spec, said]) == {0: 1}


def test_items_that_share_no_word_that_names_something_are_not_one_thread_nor_are_chains():
    assert content_words("今天的问题解决了") == set()  # everyday words name nothing
    assert {"测试", "集成"} <= content_words("今天得把集成测试那台机器的问题解决掉")
    pieces = [card("2026-03-02T10:00:00", "今天的问题解决了"), card("2026-03-09T10:00:00", "今天的问题又来了")]
    assert arrange(pieces) == ([0, 1], {})
    chain = [claim("2026-03-02T10:00:00", "server spec", "8C16G"),  # ranked first
             card("2026-03-05T10:00:00", "moved the server to the new rack and bumped the API gateway"),
             claim("2026-03-09T10:00:00", "API gateway version", "v2.2.0")]
    order, _ = arrange(chain)
    assert order == [1, 0, 2]  # the newer card on the server first; the card links each to it, not the server to the API


def row(fid: int, at: str, subject: str, obj: str, status: str = "active", predicate: str = "value", multi: int = 0) -> dict:
    return {"id": fid, "valid_from": at, "subject": subject, "predicate": predicate, "object": obj, "status": status,
            "multi_valued": multi}


def test_facts_list_serves_a_claim_a_newer_fact_of_its_thread_replaced_as_earlier():
    rows = [row(1, "2026-03-02T10:00:00+08:00", "deploy memory limit", "2Gi"),
            row(2, "2026-03-02T10:20:00+08:00", "limit", "4Gi"),
            row(3, "2026-03-03T09:00:00+08:00", "user", "watercolour", predicate="likes", multi=1),
            row(4, "2026-03-05T09:00:00+08:00", "user", "pottery", predicate="likes", multi=1)]
    served = in_threads(rows)
    assert served[0]["status"] == "earlier" and served[0]["earlier"] == "2026-03-02" and served[0]["newer_on"] == "2026-03-02"
    assert served[0]["newer"] == "limit · value · 4Gi"
    assert [r["status"] for r in served[1:]] == ["active", "active", "active"]  # the newest, and a list that grows


@pytest.fixture
def gateway(tmp_path, monkeypatch):
    return told(tmp_path, monkeypatch, {date(2026, 6, 2): ["The staging API gateway listens on port 8080."],
                                        date(2026, 6, 11): ["Heads up, gateway port is 9090 after the migration."]})


QUESTION = "Which port does the gateway use?"


def test_query_serves_the_newer_value_first_and_the_older_marked_earlier(gateway):
    out = json.loads(run_cli("query", QUESTION, "--json", home=gateway.home).stdout)
    facts = [i for i in out["items"] if i["kind"] == "fact"]
    first = next(i for i in facts if "9090" in i["text"] or "8080" in i["text"])
    assert "9090" in first["text"] and not first["source"].get("earlier"), facts
    older = [i for i in facts if "8080" in i["text"] and "9090" not in i["text"].split(" (")[0]]
    assert older and all(i["source"].get("earlier") == "2026-06-02" and "(earlier, 2026-06-02)" in i["text"] for i in older)
    assert facts.index(first) < facts.index(older[0])
    text = run_cli("query", QUESTION, home=gateway.home).stdout
    assert "(earlier, 2026-06-02)" in next(x for x in text.splitlines() if "L2 fact" in x and "· 8080" in x)


def test_facts_list_serves_no_older_value_of_the_thread_as_current(gateway):
    facts = json.loads(run_cli("facts", "list", "--json", home=gateway.home).stdout)["facts"]
    assert not any("8080" in f["object"] for f in facts if f["status"] == "active"), facts
    assert any("9090" in f["object"] for f in facts if f["status"] == "active")
