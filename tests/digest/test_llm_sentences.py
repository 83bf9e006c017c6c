"""The chat model's second question: a user turn the rules kept only as said (a dated sentence) and the first request
read nothing of is asked on its own (digest.model_sentences), against a real OpenAI-compatible server on loopback."""

import json
from datetime import date

from agentos_mem.digest.model_extract import ExtractionCache, ModelStats
from agentos_mem.digest.model_sentences import read_unread, unread_turns
from agentos_mem.kernel.domain import Candidate, Turn
from agentos_mem.kernel.llm import ChatClient
from tests.kit.loopback import JSONServer

DAY = date(2026, 11, 3)
F = "2026-11-03.md"
TURNS = [
    Turn(0, "user", "用户", "组里调整了一下，我现在负责支付网关那块", "09:00", F, 1, 1),
    Turn(1, "assistant", "助手", "支付网关责任重大，加油！", "09:01", F, 2, 2),
    Turn(2, "user", "用户", "My cousin Dana started teaching high school chemistry this fall.", "09:02", F, 3, 3),
    Turn(3, "user", "用户", "数据库端口改成 5433 了", "09:03", F, 4, 4),
]


def said(turn: Turn, predicate: str = "states") -> Candidate:
    """What the rules keep of a turn they read no value from: the sentence, as said that day."""
    return Candidate(subject="user", predicate=predicate, object=turn.text, nature="fact", confidence=0.6,
                     explicitness="stated", source_file=turn.source_file, line_start=turn.line_start,
                     line_end=turn.line_end, observed_at=turn.at(DAY), extractor="statement", evidence=turn.text)


def read(turn: Turn, predicate: str, value: str) -> Candidate:
    return Candidate(subject="数据库端口", predicate=predicate, object=value, nature="fact", confidence=0.9,
                     explicitness="stated", source_file=turn.source_file, line_start=turn.line_start,
                     line_end=turn.line_end, observed_at=turn.at(DAY))


CANDS = [said(TURNS[0]), said(TURNS[2], "event"), read(TURNS[3], "value", "5433")]


def answers(by_text: dict[str, list[dict]]) -> JSONServer:
    """A server answering each sentence's question with the readings scripted for the text it is shown."""

    def respond(body: dict, n: int):
        shown = body["messages"][-1]["content"]
        facts = next((v for k, v in by_text.items() if k in shown), [])
        return 200, {"choices": [{"message": {"role": "assistant", "content": json.dumps({"facts": facts}, ensure_ascii=False)}}]}

    return JSONServer(respond)


def test_only_the_users_turns_kept_as_said_are_asked_again():
    assert [t.line_start for t in unread_turns(TURNS, CANDS)] == [1, 3]  # not the assistant, not the turn read a value


def test_each_reading_is_validated_and_only_what_holds_now_is_kept():
    scripted = {
        "支付网关": [{"who": "user", "what": "负责的模块", "value": "支付网关", "now": True, "many": False},
                 {"who": "user", "what": "组", "value": "风控组", "now": True}],  # a value the turn does not say
        "Dana": [{"who": "cousin Dana", "what": "job", "value": "teaching high school chemistry", "now": True},
                 {"who": "user", "what": "job", "value": "chemistry", "now": True},  # the cousin's, not the user's
                 {"who": "cousin Dana", "what": "school", "value": "high school", "now": False}],
    }
    stats = ModelStats()
    with answers(scripted) as srv:
        got = read_unread(TURNS, DAY, CANDS, ChatClient(srv.base_url, "m"), stats=stats)
        shown = [r["body"]["messages"][-1]["content"] for r in srv.requests]
    assert shown == ["TEXT: 组里调整了一下，我现在负责支付网关那块",
                     "TEXT: My cousin Dana started teaching high school chemistry this fall."]
    assert [(c.subject, c.object, c.line_start, c.extractor) for c in got] == [
        ("负责的模块", "支付网关", 1, "llm:m"), ("cousin Dana's job", "teaching high school chemistry", 3, "llm:m"),
        ("cousin's job", "chemistry", 3, "llm:m")]  # the sentence gives it to the cousin: never the user's
    assert stats.parts == 2 and stats.ops == 5 and stats.kept == 3
    assert stats.dropped == {"value not in the turn": 1, "not about now": 1}


def test_an_answer_of_another_shape_leaves_the_turn_as_said_and_a_restore_reads_the_cache(tmp_path):
    cache = ExtractionCache(tmp_path / "cache")
    scripted = {"支付网关": [{"who": "user", "what": "负责的模块", "value": "支付网关", "now": True}]}
    with answers(scripted) as srv:
        first = read_unread(TURNS, DAY, CANDS, ChatClient(srv.base_url, "m"), cache=cache)
    again = read_unread(TURNS, DAY, CANDS, None, cache=cache)  # no model: the cache answers
    assert [(c.subject, c.object) for c in again] == [(c.subject, c.object) for c in first] == [("负责的模块", "支付网关")]

    def prose(body, n):
        return 200, {"choices": [{"message": {"role": "assistant", "content": "Dana is a teacher."}}]}

    stats = ModelStats()
    with JSONServer(prose) as srv:
        assert read_unread(TURNS[2:3], DAY, CANDS, ChatClient(srv.base_url, "m"), stats=stats) == []
    assert stats.dropped == {"answer not usable": 1}


def test_a_night_with_a_model_keeps_its_reading_of_a_sentence_beside_the_sentence(tmp_path, monkeypatch):
    """Through the digest: a turn no rule reads a value from becomes the model's fact, and the rules' dated sentence
    stays beside it (the user's words, if the reading was wrong)."""
    from tests.kit.digest import log_workspace
    from agentos_mem.digest.stages import digest_day
    from agentos_mem.kernel.workspace import Workspace
    from agentos_mem.storage.facts import open_facts

    monkeypatch.setenv("AGENTOS_NOW", "2026-06-03T20:00:00+08:00")
    s, logs = log_workspace(tmp_path)
    (logs / "2026-06-03.md").write_text("[10:00] 用户: 组里调整了一下，我现在负责支付网关那块\n", encoding="utf-8")

    def respond(body, n):
        shown = body["messages"][-1]["content"]
        if shown.startswith("TEXT:"):
            answer = {"facts": [{"who": "user", "what": "负责的模块", "value": "支付网关", "now": True}]}
        else:
            answer = {"ops": []}  # the first request, over the part, reads nothing
        return 200, {"choices": [{"message": {"role": "assistant", "content": json.dumps(answer, ensure_ascii=False)}}]}

    with JSONServer(respond) as srv:
        report = digest_day(s.model_copy(update={"llm_base_url": srv.base_url}), "default", date(2026, 6, 3), logs)
    store = open_facts(s)
    try:
        rows = store.current("default")
    finally:
        store.close()
    assert report["extractor"] == f"llm:{s.llm_model}"
    assert ("负责的模块", "value", "支付网关", f"llm:{s.llm_model}") in {(r["subject"], r["predicate"], r["object"], r["extractor"]) for r in rows}
    assert [r["predicate"] for r in rows if "支付网关那块" in r["object"]] == ["states"]
    usage = [json.loads(x) for x in (Workspace(s.home).logs / "llm_usage.jsonl").read_text(encoding="utf-8").splitlines()]
    assert [u.get("stage") for u in usage] == [None, "turns asked again"] and usage[1]["kept"] == 1

    # a machine restored from agent-sync, no model configured: the synced answers give the same reading
    import shutil

    s2, logs2 = log_workspace(tmp_path / "restored")
    shutil.copytree(Workspace(s.home).extraction_cache, Workspace(s2.home).extraction_cache)
    shutil.copy(logs / "2026-06-03.md", logs2 / "2026-06-03.md")
    assert digest_day(s2, "default", date(2026, 6, 3), logs2)["extractor"] == "llm (cached answers)"
    store = open_facts(s2)
    try:
        again = {(r["subject"], r["object"], r["extractor"]) for r in store.current("default")}
    finally:
        store.close()
    assert ("负责的模块", "支付网关", f"llm:{s.llm_model}") in again
