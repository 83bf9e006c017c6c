"""``agentos bench facts``: the scoring rules on hand-made facts, the sets (dev beside unseen), a short run over
fact_updates with every metric and breakdown, and the chat-model path against a loopback OpenAI-compatible server."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from agentos_mem.bench.facts import KINDS, day_log, load, metrics, score_case, usage_by_day
from tests.kit.chat_server import ChatServer

AGENTOS = str(Path(sys.executable).parent / "agentos")
METRICS = {"cases", "slots", "slot_accuracy", "current_hit", "stale", "case_wide", "history_kept", "self_supersession",
           "non_fact_false", "current_facts", "false_facts", "false_fact_count", "cases_with_false_facts", "unexpected_facts",
           "questions", "question_accuracy", "answer_hit", "stale_shown", "answer_in_context", "first_mention_right", "no_history",
           "no_memory"}
QUESTION_METRICS = {"questions", "question_accuracy", "answer_hit", "stale_shown", "answer_in_context", "first_mention_right",
                    "no_history", "no_memory"}


def _fact(fid: int, subject: str, predicate: str, obj: str, confidence: float = 0.9) -> dict:
    return {"id": fid, "subject": subject, "predicate": predicate, "object": obj, "confidence": confidence, "explicitness": "stated"}


def _answer(status: str, *facts: str, cards: tuple[str, ...] = ()) -> dict:
    items = [{"kind": "fact", "text": t, "source": {"status": "active", "valid_to": None}} for t in facts]
    return {"status": status, "items": items + [{"kind": "card", "text": t, "source": {}} for t in cards]}


THIRD = {"id": "t-1", "lang": "zh", "kind": "third_party", "days": {},
         "expect": [{"slot": "妻子的工作单位", "current": ["字节"], "past": ["腾讯"]},
                    {"slot": "用户本人的工作单位", "current": ["网易"], "past": ["字节"]}],
         "questions": [{"q": "Where does my wife work now?", "lang": "en", "answer": ["字节"], "not": ["腾讯"]},
                       {"q": "我自己在哪家公司？", "lang": "zh", "answer": ["网易"], "not": []}]}


def test_a_third_persons_value_is_theirs_by_slot_key_and_skipped_case_wide():
    current = [_fact(1, "老婆", "works_at", "字节"), _fact(2, "user", "works_at", "网易")]
    rec = score_case(THIRD, current, [], [_answer("ok", "老婆 · works_at · 字节"), _answer("no_history")])
    wife, mine = rec["slots"]
    assert wife["slot"] == "妻子的工作单位" and wife["owner"] == "妻子" and wife["facts"] == [1] and wife["keyed"] == {"current_hit": True, "stale": False, "ok": True}
    assert mine["owner"] == "user" and mine["facts"] == [2] and mine["keyed"]["ok"] is True
    assert not any(f["false"] for f in rec["facts"])
    # The same employer stored as the user's own: stale for the user's slot by slot key, a false fact; case-wide
    # mode skips 字节 there (it is the wife's current value), as the README says.
    current = [_fact(1, "user", "works_at", "字节"), _fact(2, "user", "works_at", "网易")]
    rec = score_case(THIRD, current, [], [_answer("ok"), _answer("ok")])
    wife, mine = rec["slots"]
    assert wife["keyed"]["current_hit"] is False and mine["keyed"]["stale"] is True and mine["wide"]["stale"] is False
    assert [f["id"] for f in rec["facts"] if f["false"]] == [1]
    q_wife, q_mine = rec["questions"]
    assert q_wife["relation"] == "cross-lingual" and q_mine["relation"] == "same-language"
    assert q_wife["answer_hit"] is False and q_wife["ok"] is False and q_mine["ok"] is False


def test_a_returned_value_is_current_until_its_validity_ends_not_by_having_an_end():
    case = {"id": "tq-1", "lang": "zh", "kind": "time_qualified", "days": {"2026-03-12": []},
            "expect": [{"slot": "通勤地铁线路", "current": ["2号线"], "past": ["14号线"]}],
            "questions": [{"q": "我现在坐几号线？", "lang": "zh", "answer": ["2号线"], "not": ["14号线"]}] * 2}

    def line(valid_to):
        return {"status": "ok", "items": [{"kind": "fact", "text": "坐 · value · 2号线", "source": {"status": "active", "valid_to": valid_to}}]}

    rec = score_case(case, [_fact(1, "坐", "value", "2号线")], [], [line("2026-04-01T00:00:00"), line("2026-03-10T08:00:00")])
    assert [q["answer_hit"] for q in rec["questions"]] == [True, False]  # the line-14 move starts later; an ended value is not current


def test_values_match_ignoring_case_and_width_and_additive_needs_every_value():
    case = {"id": "a-1", "lang": "en", "kind": "additive", "days": {},
            "expect": [{"slot": "instruments played", "current": ["guitar", "cello"], "past": []}],
            "questions": [{"q": "Which instruments do I play?", "lang": "en", "answer": ["guitar", "cello"], "not": []}]}
    one = score_case(case, [_fact(1, "user", "plays", "ＧＵＩＴＡＲ")], [],
                     [_answer("ok", "user · plays · ＧＵＩＴＡＲ", cards=("I started Cello lessons",))])
    assert one["slots"][0]["keyed"]["current_hit"] is False  # cello is missing: additive wants both
    assert one["questions"][0]["answer_hit"] is False and one["questions"][0]["in_context"] is True  # cello is in a card
    both = score_case(case, [_fact(1, "user", "plays", "ＧＵＩＴＡＲ"), _fact(2, "user", "plays", "cello")], [],
                      [_answer("ok", "user · plays · guitar", "user · plays · cello")])
    assert both["slots"][0]["keyed"]["ok"] is True and both["questions"][0]["ok"] is True


def test_history_self_supersession_and_non_facts():
    change = {"id": "v-1", "lang": "en", "kind": "value_change", "days": {},
              "expect": [{"slot": "port", "current": ["5433"], "past": ["5432"]}], "questions": []}
    rec = score_case(change, [_fact(2, "staging port", "value", "5433")], [_fact(1, "staging port", "value", "5432")], [])
    assert rec["slots"][0]["history_kept"] is True and rec["slots"][0]["keyed"]["ok"] is True
    # Values are matched on the object (the README's value text): an old value in the subject is not stale.
    moved = score_case(change, [_fact(2, "从 5432", "value", "5433")], [], [])
    assert moved["slots"][0]["keyed"] == {"current_hit": True, "stale": False, "ok": True}
    assert moved["slots"][0]["history_kept"] is False
    repeat = {"id": "r-1", "lang": "en", "kind": "repeat", "days": {},
              "expect": [{"slot": "car", "current": ["Outback"], "past": []}], "questions": []}
    twice = score_case(repeat, [_fact(1, "user", "drives", "Outback"), _fact(2, "car", "value", "a Subaru Outback")], [], [])
    assert twice["slots"][0]["self_superseded"] is True
    assert score_case(repeat, [_fact(1, "user", "drives", "Outback")], [], [])["slots"][0]["self_superseded"] is False
    joke = {"id": "n-1", "lang": "en", "kind": "non_fact", "days": {},
            "expect": [{"slot": "user's city", "current": [], "past": ["Lisbon"]}],
            "questions": [{"q": "Where am I moving?", "lang": "en", "answer": [], "not": ["Lisbon"]}]}
    rec = score_case(joke, [_fact(1, "user", "event", "maybe I'll move to Lisbon lol")], [],
                     [_answer("ok", "user · event · maybe I'll move to Lisbon lol")])
    assert rec["slots"][0]["non_fact_false"] is True and rec["facts"][0]["false"] is True
    assert rec["questions"][0]["stale_shown"] is True and rec["questions"][0]["ok"] is False
    m = metrics([rec])
    assert m["non_fact_false"] == 1.0 and m["false_facts"] == 1.0 and m["question_accuracy"] == 0.0
    assert m["by_kind"]["non_fact"]["slots"] == 1 and m["by_relation"]["same-language"]["questions"] == 1


def test_markdown_day_logs_keep_multi_line_messages_as_continuations():
    text = day_log([{"role": "user", "content": "端口是 2222", "timestamp": "2026-03-02T10:05:32+08:00"},
                    {"role": "assistant", "content": "好的：\nHost git\n  Port 2222", "timestamp": "2026-03-02T10:06:00+08:00"}], "md")
    assert text == "[10:05:32] 用户: 端口是 2222\n[10:06:00] 助手: 好的：\n  Host git\n  Port 2222\n"


def test_the_first_mention_is_the_first_served_item_holding_the_answer_or_a_stale_value():
    case = {"id": "f-1", "lang": "zh", "kind": "value_change", "days": {"2026-03-05": []},
            "expect": [{"slot": "工位楼层", "current": ["12楼"], "past": ["7楼"]}],
            "questions": [{"q": "我的工位现在在几楼？", "lang": "zh", "answer": ["12楼"], "not": ["7楼"]}]}
    newest_first = _answer("ok", cards=("[2026-03-05] 工位搬到12楼了", "[2026-03-02] 工位在7楼"))
    oldest_first = _answer("ok", cards=("[2026-03-01] 早上好", "[2026-03-02] 工位在7楼", "[2026-03-05] 工位搬到12楼了"))
    right, wrong = (score_case(case, [], [], [a])["questions"][0] for a in (newest_first, oldest_first))
    assert right["first_right"] is True and wrong["first_right"] is False  # an item holding neither value is passed over
    assert right["in_context"] is True and wrong["in_context"] is True  # both hold the answer somewhere
    assert right["ok"] is False  # statements and cards are no claims: the answer is not among the claims
    nothing = score_case(case, [], [], [_answer("ok", cards=("[2026-03-01] 早上好",))])["questions"][0]
    assert nothing["first_right"] is False
    assert metrics([score_case(case, [], [], [newest_first])])["first_mention_right"] == 1.0


def test_a_folder_gives_each_set_its_own_label_and_a_broken_line_is_named(tmp_path):
    (tmp_path / "dev.jsonl").write_text(json.dumps(THIRD, ensure_ascii=False) + "\n", encoding="utf-8")
    (tmp_path / "unseen.jsonl").write_text(json.dumps({**THIRD, "id": "u-1"}, ensure_ascii=False) + "\n\n", encoding="utf-8")
    assert [(c["id"], c["set"]) for c in load(tmp_path)] == [("t-1", "dev"), ("u-1", "unseen")]
    assert [c["set"] for c in load(tmp_path / "unseen.jsonl")] == ["unseen"]
    (tmp_path / "unseen.jsonl").write_text(json.dumps(THIRD) + "\n{oops\n", encoding="utf-8")
    with pytest.raises(ValueError, match=r"unseen\.jsonl:2: not a JSON case"):
        load(tmp_path)


def test_agentos_bench_facts_reports_every_metric_by_kind_language_and_set(eval_dir, tmp_path):
    folder = eval_dir / "fact_updates"
    if not (folder / "dev.jsonl").is_file() or not (folder / "unseen.jsonl").is_file():
        pytest.skip(f"fact_updates (dev.jsonl and unseen.jsonl) not found at {folder}")
    report = tmp_path / "facts.md"
    p = subprocess.run([AGENTOS, "bench", "facts", str(folder), "--limit", "2", "--json", "--report", str(report)],
                       capture_output=True, text=True, timeout=600, env={**os.environ, "AGENTOS_HOME": str(tmp_path / "home")})
    assert p.returncode == 0, p.stderr[-3000:]
    res = json.loads(p.stdout)
    assert res["cases"] == 4 and res["set"] == "all" and set(res["paths"]) == {"rules"}
    assert res["sets"]["dev"] == ["dev-001", "dev-002"] and len(res["sets"]["unseen"]) == 2
    rules = res["paths"]["rules"]
    assert set(rules["extractor_days"]) == {"rules"}
    assert list(rules["groups"]) == ["dev", "unseen"]  # each set its own column, dev first
    for name, g in rules["groups"].items():
        assert METRICS <= set(g), name
        assert set(g["case_wide"]) == {"slot_accuracy", "current_hit", "stale"}
        assert set(g["by_kind"]) <= set(KINDS) and all(METRICS <= set(v) for v in g["by_kind"].values())
        assert set(g["by_lang"]) <= {"zh", "en", "mixed"} and all(METRICS <= set(v) for v in g["by_lang"].values())
        assert set(g["by_relation"]) == {"same-language", "cross-lingual"}
        assert all(QUESTION_METRICS <= set(v) for v in g["by_relation"].values())
        for key in ("slot_accuracy", "stale", "question_accuracy", "answer_in_context", "first_mention_right", "no_history"):
            assert 0 <= g[key] <= 1, (name, key)
    dev = rules["groups"]["dev"]
    assert dev["cases"] == 2 and dev["slots"] == 4 and dev["questions"] == 4 and dev["by_relation"]["cross-lingual"]["questions"] >= 1
    assert rules["groups"]["unseen"]["cases"] == 2
    assert os.environ.get("AGENTOS_NOW")  # the suite's pin is untouched in this process
    text = report.read_text(encoding="utf-8")
    assert "| rules dev | rules unseen |" in text and "## Method" in text and "digest_day" in text and "first mention right" in text


CHAT_CASE = {"id": "chat-1", "lang": "zh", "kind": "value_change",
             "days": {"2026-03-02": [{"role": "user", "content": "我的主力编辑器一直是 Vim", "timestamp": "2026-03-02T10:00:00+08:00"}],
                      "2026-03-05": [{"role": "user", "content": "这周换成 Helix 了，键位还在适应", "timestamp": "2026-03-05T10:00:00+08:00"},
                                     {"role": "assistant", "content": "Helix 的选择优先模式确实要适应几天。", "timestamp": "2026-03-05T10:01:00+08:00"}]},
             "expect": [{"slot": "主力编辑器", "current": ["Helix"], "past": ["Vim"]}],
             "questions": [{"q": "我现在用什么编辑器？", "lang": "zh", "answer": ["Helix"], "not": ["Vim"]}]}
FIXED = {"ops": [{"op": "update", "fact": 1, "turn": 1, "value": "Helix"}]}


def test_the_chat_model_path_runs_beside_the_rules_through_a_loopback_server(tmp_path):
    data = tmp_path / "fact_updates"
    data.mkdir()
    (data / "dev.jsonl").write_text(json.dumps(CHAT_CASE, ensure_ascii=False) + "\n", encoding="utf-8")
    with ChatServer([(200, json.dumps(FIXED, ensure_ascii=False))]) as srv:
        p = subprocess.run([AGENTOS, "bench", "facts", str(data), "--json", "--llm", f"{srv.base_url}#fixed-model"],
                           capture_output=True, text=True, timeout=600, env={**os.environ, "AGENTOS_HOME": str(tmp_path / "home")})
        requests = list(srv.requests)
    assert p.returncode == 0, p.stderr[-3000:]
    res = json.loads(p.stdout)
    assert set(res["paths"]) == {"rules", "llm:fixed-model"}
    chat = res["paths"]["llm:fixed-model"]
    assert chat["extractor_days"] == {"llm:fixed-model": 2}  # both days by the model: no fallback to the rules
    assert res["paths"]["rules"]["extractor_days"] == {"rules": 2}
    assert len(requests) == 2 and all(r["path"] == "/v1/chat/completions" and r["body"]["model"] == "fixed-model" for r in requests)
    facts = chat["cases"][0]["facts"]
    # day 1: nothing is known, so "a new value for fact #1" names an id never shown: dropped, and the rules read the
    # turn the model left (Vim); day 2: fact #1 is that one, and the update closes exactly it
    assert [f["text"] for f in facts] == ["主力编辑器 · value · Helix"]  # its attribute without the 一直 said with it
    cost = chat["groups"]["dev"]["model"]
    assert cost["days"] == 2 and cost["requests_per_day"] == 1.0 and cost["ops"] == 2 and cost["dropped"] == {"fact id not shown": 1}
    assert cost["dropped_share"] == 0.5 and chat["groups"]["dev"]["seconds_per_day"] > 0
    g = chat["groups"]["dev"]
    assert g["current_hit"] == 1.0 and g["stale"] == 0.0 and g["slot_accuracy"] == 1.0 and g["false_facts"] == 0.0
    assert g["history_kept"] == 1.0  # Vim, superseded, is history


def test_a_days_two_model_stages_are_one_day_of_cost():
    """The digest appends one usage line for the day's parts and one for the turns it asked again: the cost per day is
    their sum, not two days of half the cost."""
    lines = [json.dumps({"day": "2026-03-02", "model": "m", "parts": 1, "ops": 2, "requests": 1, "seconds": 9.0,
                         "dropped": {"assistant turn": 1}, "forms": {"json_object": 1}}),
             json.dumps({"day": "2026-03-02", "model": "m", "stage": "turns asked again", "parts": 2, "ops": 3, "requests": 2,
                         "seconds": 14.5, "dropped": {"assistant turn": 1, "not about now": 1}, "forms": {"json_object": 2}}),
             json.dumps({"day": "2026-03-05", "model": "m", "parts": 1, "ops": 0, "requests": 1, "seconds": 4.0})]
    first, second = usage_by_day(lines)
    assert first == {"day": "2026-03-02", "model": "m", "parts": 3, "ops": 5, "requests": 3, "seconds": 23.5,
                     "dropped": {"assistant turn": 2, "not about now": 1}, "forms": {"json_object": 3}}
    assert second["day"] == "2026-03-05" and second["requests"] == 1
