"""The optional chat-model extractor, against a real OpenAI-compatible server on loopback."""

import json
from datetime import date

import pytest

from kernel.domain import Turn
from digest.model_extract import extract_with_model
from kernel.llm import ChatClient, LLMError, repair_json
from tests.kit.chat_server import ChatServer

DAY = date(2026, 11, 3)
TURNS = [
    Turn(0, "user", "用户", "数据库端口改为 5433 了", "09:00", "2026-11-03.md", 5, 5),
    Turn(1, "assistant", "助手", "看起来你更喜欢 Java", "09:01", "2026-11-03.md", 6, 7),
]
GOOD = {"facts": [
    {"turn": 0, "subject": "数据库端口", "predicate": "value", "object": "5433", "nature": "fact", "confidence": 0.9,
     "explicitness": "stated", "technical": True, "multi_valued": False, "event_date": None},
    {"turn": 1, "subject": "user", "predicate": "prefers", "object": "Java", "nature": "preference", "confidence": 0.7,
     "explicitness": "stated"},
]}


def test_model_facts_are_validated_and_keep_line_ranges():
    with ChatServer([(200, json.dumps(GOOD, ensure_ascii=False))]) as srv:
        cands = extract_with_model(TURNS, DAY, ChatClient(srv.base_url, "m", api_key="k"))
        assert srv.requests[0]["path"] == "/v1/chat/completions" and srv.requests[0]["auth"] == "Bearer k"
    port, pref = cands
    assert (port.subject, port.object, port.line_start, port.observed_at, port.technical) == ("数据库端口", "5433", 5, "2026-11-03T09:00:00", True)
    assert pref.explicitness == "inferred" and (pref.line_start, pref.line_end) == (6, 7)  # the assistant never "states" user facts
    assert port.extractor == "llm:m"


def test_fenced_json_with_trailing_commas_is_repaired():
    assert repair_json('Here you go:\n```json\n{"facts": [{"a": 1},],}\n```') == {"facts": [{"a": 1}]}


@pytest.mark.parametrize("reply", [
    (200, "I could not find any facts."),
    (200, json.dumps({"facts": [{"turn": 9, "subject": "x", "predicate": "value", "object": "y"}]})),
    (200, json.dumps({"facts": [{"turn": 0, "subject": "x", "predicate": "value", "object": "y", "nature": "rumour"}]})),
    (500, ""),
])
def test_unusable_answers_raise(reply):
    with ChatServer([reply]) as srv, pytest.raises(LLMError):
        extract_with_model(TURNS, DAY, ChatClient(srv.base_url, "m"))


def test_unreachable_endpoint_raises():
    with pytest.raises(LLMError):
        ChatClient("http://127.0.0.1:9/v1", "m", timeout=2).complete_json("s", "u")
