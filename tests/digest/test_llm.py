"""The chat-model extractor, against a real OpenAI-compatible server on loopback: the model is shown the facts a part
of the day may touch, answers operations, and each operation is validated on its own."""

import json
from datetime import date

import pytest

from agentos_mem.digest.model_extract import ExtractionCache, ModelStats, extract_with_model, ground, parts_of, schema
from agentos_mem.kernel.domain import Turn
from agentos_mem.kernel.llm import ChatClient, LLMError, repair_json
from tests.kit.chat_server import ChatServer
from tests.kit.loopback import JSONServer

DAY = date(2026, 11, 3)
F = "2026-11-03.md"
TURNS = [
    Turn(0, "user", "用户", "数据库端口改成 5433 了，我老婆下周开始去杭州上班", "09:00", F, 5, 5),
    Turn(1, "assistant", "助手", "好的，端口 5433。看起来你更喜欢 Java", "09:01", F, 6, 7),
    Turn(2, "user", "用户", "要不要把 Redis 也换成 KeyDB？", "09:02", F, 8, 8),
]
KNOWN = [{"id": 41, "subject": "数据库端口", "predicate": "value", "object": "5432", "object_key": "5432", "multi_valued": 0,
          "evidence": "数据库端口是 5432"}]


def ops(*items: dict) -> tuple[int, str]:
    return 200, json.dumps({"ops": list(items)}, ensure_ascii=False)


def test_operations_are_validated_one_by_one_and_the_rest_apply():
    answer = ops(
        {"op": "update", "fact": 1, "turn": 1, "value": "5433"},  # a new value for the known fact #1
        {"op": "new", "turn": 1, "who": "老婆", "what": "工作城市", "value": "杭州"},  # someone else's fact
        {"op": "new", "turn": 2, "who": "user", "what": "language", "value": "Java"},  # the assistant's guess
        {"op": "update", "fact": 7, "turn": 1, "value": "5433"},  # an id it was never given
        {"op": "new", "turn": 1, "who": "user", "what": "端口", "value": "6543"},  # a value the turn does not hold
        {"op": "new", "turn": 3, "who": "user", "what": "缓存", "value": "KeyDB"},  # a question
        "not an operation",
    )
    stats = ModelStats()
    with ChatServer([answer]) as srv:
        cands = extract_with_model(TURNS, DAY, ChatClient(srv.base_url, "m", api_key="k"), known=KNOWN, stats=stats)
        (req,) = srv.requests
    assert req["path"] == "/v1/chat/completions" and req["auth"] == "Bearer k"
    shown = req["body"]["messages"][-1]["content"]
    assert "#1 数据库端口 · value · 5432" in shown and "[1] user: 数据库端口改成 5433 了" in shown and "[2] assistant:" in shown
    port, wife = cands
    assert (port.target, port.subject, port.object, port.line_start, port.observed_at) == (41, "数据库端口", "5433", 5, "2026-11-03T09:00:00")
    assert (wife.target, wife.subject, wife.object) == (None, "老婆的工作城市", "杭州")
    assert port.extractor == "llm:m" and port.explicitness == "stated"
    assert stats.ops == 7 and stats.kept == 2
    assert stats.dropped == {"assistant turn": 1, "fact id not shown": 1, "value not in the turn": 1, "question": 1, "not an object": 1}


def test_a_value_only_in_words_the_user_quotes_is_dropped_as_the_rules_drop_it():
    turns = [Turn(0, "user", "用户", "群里有人转了一句 “新版本默认端口是 9090”，我们这边还是 8080", "09:00", F, 5, 5)]
    answer = ops({"op": "new", "turn": 1, "who": "user", "what": "端口", "value": "9090"},
                 {"op": "new", "turn": 1, "who": "user", "what": "端口", "value": "8080"})
    stats = ModelStats()
    with ChatServer([answer]) as srv:
        cands = extract_with_model(turns, DAY, ChatClient(srv.base_url, "m"), known=[], stats=stats)
    assert [c.object for c in cands] == ["8080"] and stats.dropped == {"quoted": 1}


def test_an_end_closes_the_fact_it_names_and_a_later_start_is_kept():
    turns = [Turn(0, "user", "me", "I cancelled the gym membership. From December 7 I work from the Lyon office.", "18:00", F, 3, 3)]
    known = [{"id": 3, "subject": "gym", "predicate": "value", "object": "FitLab", "object_key": "fitlab", "multi_valued": 0},
             {"id": 9, "subject": "office", "predicate": "value", "object": "Paris", "object_key": "paris", "multi_valued": 0}]
    answer = ops({"op": "end", "fact": 1, "turn": 1}, {"op": "update", "fact": 2, "turn": 1, "value": "Lyon", "from": "2026-12-07"},
                 {"op": "past", "turn": 1, "who": "user", "what": "office", "value": "Lyon office", "from": "1999-01-01"})
    with ChatServer([answer]) as srv:
        end, office, past = extract_with_model(turns, DAY, ChatClient(srv.base_url, "m"), known=known)
    assert (end.predicate, end.target, end.object) == ("stopped", 3, "FitLab")
    assert (office.target, office.object, office.observed_at, office.event_date) == (9, "Lyon", "2026-12-07T00:00:00", "2026-12-07")
    assert past.ended and past.event_date is None  # a "from" in the past is no later start


def test_an_end_on_a_turn_that_names_neither_the_fact_nor_its_value_is_dropped():
    turns = [Turn(0, "user", "me", "done, CI is green now", "18:00", F, 3, 3),
             Turn(1, "user", "me", "我已经不去健身房了", "18:05", F, 4, 4),
             Turn(2, "user", "me", "车上周卖了", "18:09", F, 5, 5)]
    known = [{"id": 3, "subject": "service", "predicate": "value", "object": "Python 3.10", "object_key": "python3.10", "multi_valued": 0},
             {"id": 4, "subject": "健身房", "predicate": "value", "object": "乐刻", "object_key": "乐刻", "multi_valued": 0},
             {"id": 5, "subject": "我的汽车", "predicate": "value", "object": "Model 3", "object_key": "model3", "multi_valued": 0}]
    stats = ModelStats()
    reply = ops({"op": "end", "fact": 1, "turn": 1}, {"op": "end", "fact": 2, "turn": 2}, {"op": "end", "fact": 3, "turn": 3})
    with ChatServer([reply]) as srv:
        gym, car = extract_with_model(turns, DAY, ChatClient(srv.base_url, "m"), known=known, stats=stats)
    assert (gym.predicate, gym.target) == ("stopped", 4)  # the turn names the gym: the user's own end
    assert (car.predicate, car.target) == ("stopped", 5)  # 车 of 汽车: a Chinese compound shares its characters
    assert stats.dropped == {"fact not named in the turn": 1}


def test_the_schema_names_only_the_turns_and_ids_shown_and_a_server_without_json_schema_gets_the_next_form():
    forms = []

    def respond(body, n):
        forms.append(body["response_format"])
        if body["response_format"]["type"] == "json_schema":  # as llama-cpp-python's server 0.3.36 refuses it: a 500
            return 500, {"error": {"message": "1 validation error: {'type': 'literal_error', 'loc': ('body', 'response_format', 'type'), "
                                              "'msg': \"Input should be 'text' or 'json_object'\", 'input': 'json_schema'}", "type": "internal_server_error"}}
        return 200, {"choices": [{"message": {"content": json.dumps({"ops": []})}}], "usage": {"prompt_tokens": 700, "completion_tokens": 9}}

    srv = JSONServer(respond)
    try:
        client = ChatClient(srv.base_url, "m")
        assert extract_with_model(TURNS, DAY, client, known=KNOWN) == []
        assert extract_with_model(TURNS[:1], date(2026, 11, 4), client, known=KNOWN) == []
    finally:
        srv.close()
    first, second, third = forms  # json_schema refused once; the endpoint's form is then used straight away
    assert first["type"] == "json_schema" and set(second) == set(third) == {"type", "schema"}
    assert second["type"] == third["type"] == "json_object"
    items = second["schema"]["properties"]["ops"]["items"]["anyOf"]
    assert items[0]["properties"]["turn"]["enum"] == [1, 2, 3] and third["schema"]["properties"]["ops"]["items"]["anyOf"][0]["properties"]["turn"]["enum"] == [1]
    assert items[1]["properties"]["fact"]["enum"] == [1]
    assert client.usage.prompt_tokens == 1400 and client.usage.completion_tokens == 18 and client.usage.requests == 3


def test_without_known_facts_the_schema_offers_no_update_or_end():
    variants = schema(0, 2)["properties"]["ops"]["items"]["anyOf"]
    assert [v["properties"]["op"] for v in variants] == [{"enum": ["new", "past"]}]


def test_a_day_is_read_in_parts_and_a_part_sees_what_an_earlier_part_added():
    long_day = [Turn(i, "user" if i % 2 == 0 else "assistant", "用户" if i % 2 == 0 else "助手", f"第{i}句：我的工位在 A{i} 区", f"09:{i:02d}", F, i + 1, i + 1)
                for i in range(14)]
    assert [len(p) for p in parts_of(long_day)] == [6, 6, 2]
    replies = [ops({"op": "new", "turn": 1, "who": "user", "what": "工位", "value": "A0 区"}), ops(), ops()]
    with ChatServer(replies) as srv:
        (desk,) = extract_with_model(long_day, DAY, ChatClient(srv.base_url, "m"))
        later = srv.requests[1]["body"]["messages"][-1]["content"]
    assert desk.object == "A0 区" and "#1 工位 · value · A0 区" in later


def test_answers_are_cached_and_a_restore_needs_no_model(tmp_path):
    cache = ExtractionCache(tmp_path / "cache")
    with ChatServer([ops({"op": "update", "fact": 1, "turn": 1, "value": "5433"})]) as srv:
        first = extract_with_model(TURNS, DAY, ChatClient(srv.base_url, "m"), known=KNOWN, cache=cache)
    again = extract_with_model(TURNS, DAY, None, known=KNOWN, cache=cache)  # no model at all
    assert [(c.target, c.object, c.extractor) for c in again] == [(c.target, c.object, c.extractor) for c in first] == [(41, "5433", "llm:m")]
    saved = [json.loads(p.read_text(encoding="utf-8")) for p in (tmp_path / "cache").rglob("*.json")]
    assert saved and all(set(s) == {"model", "answer"} for s in saved)  # the answer only, never the log's lines


def test_fenced_json_with_trailing_commas_is_repaired():
    assert repair_json('Here you go:\n```json\n{"facts": [{"a": 1},],}\n```') == {"facts": [{"a": 1}]}


@pytest.mark.parametrize("reply", [(200, "I could not find any facts."), (200, json.dumps({"facts": "none"})), (500, "")])
def test_an_answer_with_no_operations_raises(reply):
    with ChatServer([reply]) as srv, pytest.raises(LLMError):
        extract_with_model(TURNS, DAY, ChatClient(srv.base_url, "m"))


def test_unreachable_endpoint_raises():
    with pytest.raises(LLMError):
        ChatClient("http://127.0.0.1:9/v1", "m", timeout=2).complete_json("s", "u")


# Answers shaped as Qwen2.5-Coder-1.5B gave them through `make llm` (collected on our own sentences' kind of log):
# a loop repeating the worked examples' values, the assistant's turn cited for what the user said, a value longer than
# the turn says it, invented start dates in the past, a past and a current of one value at once.
AWKWARD_TURNS = [
    Turn(0, "user", "用户", "提醒我一下：读书会每周四晚上八点，在二楼活动室", "20:00", F, 2, 2),
    Turn(1, "assistant", "助手", "好的：读书会每周四 20:00，二楼活动室。", "20:01", F, 3, 3),
    Turn(2, "user", "用户", "哦不对，是周五不是周四", "20:02", F, 4, 4),
]


def test_awkward_answers_of_a_real_small_model_become_the_facts_the_turns_hold_or_are_dropped():
    looping = [{"op": "new", "turn": 3, "who": "user", "what": "port", "value": "8081"},
               {"op": "past", "turn": 2, "who": "user", "what": "laptop", "value": "ThinkPad"}] * 3
    answer = ops(
        {"op": "new", "turn": 3, "who": "user", "what": "读书会时间", "value": "周五晚上八点", "from": "2026-11-01"},
        {"op": "new", "turn": 2, "who": "user", "what": "读书会地点", "value": "二楼活动室", "from": "2025-09-03"},
        {"op": "past", "turn": 1, "who": "user", "what": "读书会时间", "value": "每周四晚上八点"},
        {"op": "past", "turn": 1, "who": "user", "what": "读书会地点", "value": "二楼活动室"},
        *looping,
    )
    stats = ModelStats()
    with ChatServer([answer]) as srv:
        got = extract_with_model(AWKWARD_TURNS, DAY, ChatClient(srv.base_url, "m"), stats=stats)
    facts = [(c.subject, c.object, c.line_start, c.ended, c.observed_at) for c in got]
    assert facts == [
        ("读书会地点", "二楼活动室", 2, False, "2026-11-03T20:00:00"),  # the user's turn that says it, not the assistant's
        ("读书会时间", "每周四晚上八点", 2, True, "2026-11-03T20:00:00"),  # history
        ("读书会时间", "周五", 4, False, "2026-11-03T20:02:00"),  # what the correcting turn says, not more; no past "from"
    ]
    assert stats.dropped == {"value not in the turn": 3, "assistant turn": 3, "past and current at once": 1}


def test_an_error_that_is_not_about_the_format_fails_the_request_and_keeps_the_schema():
    forms = []

    def respond(body, n):
        forms.append(body["response_format"]["type"])
        if n == 1:
            return 400, {"error": {"message": "Requested tokens (5000) exceed context window of 4096"}}
        return 200, {"choices": [{"message": {"content": json.dumps({"ops": []})}}]}

    srv = JSONServer(respond)
    try:
        client = ChatClient(srv.base_url, "m")
        with pytest.raises(LLMError):
            extract_with_model(TURNS, DAY, client, known=KNOWN)
        assert extract_with_model(TURNS, DAY, client, known=KNOWN) == []
    finally:
        srv.close()
    assert forms == ["json_schema", "json_schema"]  # never fell back to a looser form on a failure of its own


def test_the_model_is_shown_known_values_never_the_rules_statements(tmp_path):
    """A day read by the rules leaves a value and a statement (a sentence no rule read); on the next day the chat
    model decides against the value alone: a sentence holds nothing it could update, and it would take a value's
    place among the few known facts a part is shown."""
    from tests.kit.digest import log_workspace, night

    s, logs = log_workspace(tmp_path)
    night(s, logs, date(2026, 6, 2), "我住在杭州。", "I've been volunteering at the animal shelter near my place.")
    (logs / "2026-06-03.md").write_text("[10:00] 用户: 周末打算去爬山\n", encoding="utf-8")
    with ChatServer([ops()]) as srv:
        from agentos_mem.digest.stages import digest_day

        report = digest_day(s.model_copy(update={"llm_base_url": srv.base_url}), "default", date(2026, 6, 3), logs)
        shown = srv.requests[0]["body"]["messages"][-1]["content"]
    assert report["extractor"].startswith("llm:")
    known = shown.split("KNOWN:\n", 1)[1].split("\nTURNS:", 1)[0].splitlines()
    assert [line for line in known if "杭州" in line] and not [line for line in known if "animal shelter" in line]


def test_a_turn_the_rules_claimed_stays_theirs_and_the_model_reads_the_turns_they_left(tmp_path, monkeypatch):
    """The rules write a claim only where subject, attribute and one value are sure; the small model is the better
    reader of the sentences they leave (another person's news, a sentence kept only as a dated event). On a turn the
    rules claimed, the model's other reading is not applied; on the others its operations are."""
    from tests.kit.digest import log_workspace
    from agentos_mem.digest.stages import digest_day
    from agentos_mem.storage.facts import open_facts

    monkeypatch.setenv("AGENTOS_NOW", "2026-06-03T20:00:00+08:00")  # a technical fact expires: read it that evening
    s, logs = log_workspace(tmp_path)
    (logs / "2026-06-03.md").write_text("[10:00] 用户: 数据库端口改成 5433 了\n"
                                        "[10:05] 用户: 我老婆上周跳槽了，现在在字节做产品\n"
                                        "[10:09] 用户: My sister Nora just adopted a cat named Pepper!\n", encoding="utf-8")
    answer = ops({"op": "new", "turn": 1, "who": "user", "what": "数据库", "value": "5433"},
                 {"op": "new", "turn": 2, "who": "老婆", "what": "公司", "value": "字节"},
                 {"op": "new", "turn": 3, "who": "Nora", "what": "cat", "value": "Pepper"})
    with ChatServer([answer]) as srv:
        digest_day(s.model_copy(update={"llm_base_url": srv.base_url}), "default", date(2026, 6, 3), logs)
    store = open_facts(s)
    try:
        facts = {(f["subject"], f["object"]): f["extractor"] for f in store.current("default")}
    finally:
        store.close()
    assert facts[("数据库端口", "5433")] == "rules"
    assert [k for k, by in facts.items() if k[1] == "5433" and by != "rules"] == []  # the model's reading of turn 1
    assert [by for (_, value), by in facts.items() if value == "字节"] == [f"llm:{s.llm_model}"]
    assert [by for (_, value), by in facts.items() if value == "Pepper"] == [f"llm:{s.llm_model}"]
    # the rules' dated event stays beside the model's reading: the user's words, if the reading was wrong
    assert [by for (_, value), by in facts.items() if "跳槽" in value] == ["rules"]


def test_a_models_new_fact_never_closes_another_slot_by_its_values_type(tmp_path, monkeypatch):
    """A model continues a known fact by naming it (an update); its new fact is a slot of its own. The rules' guess by
    the value's type ("a new version closes the current version") made the model's "programming language ·
    qwen2.5:7b", read from a plan to try a model, close the user's "version · M1 Pro"."""
    from tests.kit.digest import log_workspace, night
    from agentos_mem.digest.stages import digest_day
    from agentos_mem.storage.facts import open_facts

    monkeypatch.setenv("AGENTOS_NOW", "2026-06-20T12:00:00+08:00")
    s, logs = log_workspace(tmp_path)
    night(s, logs, date(2026, 6, 2), "是 M1 Pro，内存 32G")
    (logs / "2026-06-03.md").write_text("[10:00] 用户: 够用了，先拉个 qwen2.5:7b 试试\n", encoding="utf-8")
    with ChatServer([ops({"op": "new", "turn": 1, "who": "user", "what": "programming language", "value": "qwen2.5:7b"})]) as srv:
        digest_day(s.model_copy(update={"llm_base_url": srv.base_url}), "default", date(2026, 6, 3), logs)
    store = open_facts(s)
    try:
        current = {(f["subject"], f["object"]) for f in store.current("default")}
    finally:
        store.close()
    assert {("version", "M1 Pro"), ("programming language", "qwen2.5:7b")} <= current


def test_a_value_the_sentence_gives_to_another_person_is_never_the_users():
    """The small model writes another person's news as the user's fact ("pet · Pepper" for the sister's cat): a stale
    claim in the user's own slot. The sentence's words before the value decide whose it is, as they do for the rules."""
    turns = [Turn(0, "user", "用户", "My sister Nora just adopted a cat named Pepper!", "09:00", F, 1, 1),
             Turn(1, "user", "用户", "他新买了一把 HHKB，安静多了。", "09:01", F, 2, 2),
             Turn(2, "user", "用户", "I adopted a cat too, her name is Miso.", "09:02", F, 3, 3)]
    stats = ModelStats()
    reply = ops({"op": "new", "turn": 1, "who": "user", "what": "cat", "value": "Pepper"},
                {"op": "new", "turn": 2, "who": "user", "what": "键盘", "value": "HHKB"},
                {"op": "new", "turn": 3, "who": "user", "what": "cat", "value": "Miso"})
    with ChatServer([reply]) as srv:
        got = extract_with_model(turns, DAY, ChatClient(srv.base_url, "m"), stats=stats)
    assert [(c.subject, c.object) for c in got] == [("sister's cat", "Pepper"), ("cat", "Miso")]
    assert stats.dropped == {"someone else's": 1}  # he: a person the sentence does not name




def test_a_request_without_a_schema_never_drops_the_grammar_of_the_next_one():
    """The memory and classify stages ask the same endpoint for plain JSON; the fact extractor after them still gets its
    schema (with llama-cpp-python's server, the grammar that holds fact ids to those shown). Seen with the real 1.5B
    model: after the first plain request of a run, 95 of 104 days were asked without their schema."""
    forms = []

    def respond(body, n):
        forms.append(body["response_format"])
        return 200, {"choices": [{"message": {"content": json.dumps({"ops": []})}}]}

    srv = JSONServer(respond)
    try:
        client = ChatClient(srv.base_url + "/plain-then-schema", "m")
        client.complete_json("classify", "a note")
        assert extract_with_model(TURNS, DAY, client, known=KNOWN) == []
    finally:
        srv.close()
    assert forms[0] == {"type": "json_object"} and forms[1]["type"] == "json_schema"
    assert forms[1]["json_schema"]["schema"]["properties"]["ops"]["items"]["anyOf"][1]["properties"]["fact"]["enum"] == [1]


ASK_ONCE = """
import json, sys
from agentos_mem.kernel.llm import ChatClient
from agentos_mem.kernel.settings import load_settings
client = ChatClient.for_settings(load_settings(home=sys.argv[1]).model_copy(update={"llm_base_url": sys.argv[2]}))
print(json.dumps(client.complete_json("s", "u", schema={"type": "object"})))
"""


def test_a_new_process_asks_in_the_form_the_workspace_server_took(tmp_path):
    """A nightly, a backfill and every CLI command are new processes: the form llama-cpp-python's server took is kept in
    the workspace, so only the first process in it is refused (before: one HTTP 500 per process, 60 in a run of 60)."""
    import subprocess
    import sys

    from agentos_mem.kernel.workspace import Workspace
    from tests.kit.digest import log_workspace

    s, _ = log_workspace(tmp_path)
    seen, refuse = [], {"json_schema"}

    def respond(body, n):
        form = body["response_format"]["type"] + ("+schema" if "schema" in body["response_format"] else "")
        seen.append(form)
        if body["response_format"]["type"] in refuse:
            return 500, {"error": {"message": "Input should be 'text' or 'json_object': 'json_schema'"}}
        return 200, {"choices": [{"message": {"content": json.dumps({"ok": n})}}]}

    with JSONServer(respond) as srv:
        def ask():
            out = subprocess.run([sys.executable, "-c", ASK_ONCE, str(s.home), srv.base_url], capture_output=True, text=True, check=True)
            return json.loads(out.stdout)

        assert ask() == {"ok": 2} and ask() == {"ok": 3}
        assert seen == ["json_schema", "json_object+schema", "json_object+schema"]
        kept = json.loads((Workspace(s.home).runtime / "llm-forms.json").read_text(encoding="utf-8"))
        assert kept == {srv.base_url + "/chat/completions": "json_object_schema"}
        # another server on the same address that takes only json_schema: the remembered form is refused once, then
        # the list starts again from the strictest, and the new form is what the workspace keeps
        seen.clear()
        refuse.clear()
        refuse.add("json_object")
        assert ask() == {"ok": 5} and ask() == {"ok": 6}
        assert seen == ["json_object+schema", "json_schema", "json_schema"]


def test_a_value_the_turn_says_only_in_part_keeps_the_users_words_and_no_article():
    """A small model writes "40分钟" for "a 40 minute ride": the part the turn says is kept, as the user wrote it, and
    an article before it is no part of the value (keys ignore articles: "a 40" was kept)."""
    turn = Turn(0, "user", "用户", "These days my commute is a 40 minute bike ride", "09:00", F, 1, 1)
    assert ground("40分钟", turn, [turn]) == (turn, "40")
