"""The chat model asked again, one short question, about a user turn the day's parts left unread.

The chat path's request shows the model a part of the day (up to six turns, the known facts) and asks for operations:
for a small model a lot to hold at once, and on chat written by someone else it often reads nothing of a turn that
states a fact (another person's news, a change told in free words, a new hobby). A turn that neither the rules nor that
request read a value from (the rules kept it only as a dated sentence: a statement, an event, a change in free words)
is asked once more, on its own, as a decision about one text:

    TEXT: 行政调整，整组搬到了9楼，我现在坐窗边
    -> {"facts": [{"who": "user", "what": "工位楼层", "value": "9楼", "now": true, "many": false}, ...]}

whose it is (the user, or the person as the text names them), what it is about, the value copied from the text, and
whether it holds now (what is asked, wished, planned, joked, supposed or held only before does not). On ten sentences of
our own the small model read this question right 9 times, and the part prompt asked about the same turn alone 5 times
(it gave a sister's old city as her employer, "报了个" as a course's value).

The question is asked after the parts' instructions and worked examples, with its own examples after theirs: a server
keeps the last prompt's state only (llama.cpp), and a second prompt with a prefix of its own, asked in turn with the
parts', made it read each prefix again at every switch (43 s and 26 s a request on two cores, against 9 s and 8 s). So
only these examples are read again when the day's questions follow its parts.

Each reading is validated like an operation of the parts (``model_extract.candidate``: the value must be the text's, a
question or a hypothetical states nothing, a value the text gives to someone else is not the user's); one that does not
hold now is dropped. The rules' sentence stays beside the reading (served as said that day). The answers are kept in
the same synced extraction cache as the parts', so a restore asks no model.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import date

from agentos_mem.digest.model_extract import (
    EXAMPLES,
    MAX_VALUE_CHARS,
    SYSTEM_PROMPT,
    Dropped,
    ExtractionCache,
    ModelStats,
    candidate,
)
from agentos_mem.kernel.domain import Candidate, Turn
from agentos_mem.kernel.llm import ChatClient, LLMError
from agentos_mem.storage.drift import said_only

MAX_TEXT_CHARS = 400  # a longer turn is cut: the reading is of what the user said first
MAX_FACTS = 3

# The question's instructions ride in its first worked example: the system prompt and the parts' examples before it
# stay the parts' own (their cached prefix, and their cached answers, unchanged).
QUESTION = """Another kind of request: one TEXT the user wrote, no KNOWN facts. Answer {"facts": [...]}, at most 3, each
{"who": W, "what": A, "value": V, "now": N, "many": M}: W "user" for the writer's own fact (I, my, we, our team),
else the person as the text names them; A a short attribute name; V copied exactly from the text, as short as it can be,
never translated; N true only when it holds now (false: held before, starts later, asked, wished, planned, joked,
supposed); M true when a person has several at once (hobbies, pets, dishes, shows). Nothing stated: {"facts": []}."""

# Worked examples, original, in Chinese, English and both.
SENTENCE_EXAMPLES: tuple[tuple[str, str], ...] = (
    (QUESTION + "\nTEXT: 行政调整，整组搬到了9楼，我现在坐窗边",
     json.dumps({"facts": [{"who": "user", "what": "工位楼层", "value": "9楼", "now": True, "many": False},
                           {"who": "user", "what": "座位", "value": "窗边", "now": True, "many": False}]}, ensure_ascii=False)),
    ("TEXT: My brother Sam just got into woodworking. I'm still more of a runner",
     json.dumps({"facts": [{"who": "brother Sam", "what": "hobby", "value": "woodworking", "now": True, "many": True},
                           {"who": "user", "what": "sport", "value": "runner", "now": True, "many": True}]})),
    ("TEXT: 以前一直用 Notion 记笔记，要不要试试 Obsidian？",
     json.dumps({"facts": [{"who": "user", "what": "笔记工具", "value": "Notion", "now": False, "many": False}]}, ensure_ascii=False)),
)
ALL_EXAMPLES = (*EXAMPLES, *SENTENCE_EXAMPLES)
PROMPT_KEY = json.dumps([SYSTEM_PROMPT, ALL_EXAMPLES], ensure_ascii=False)


def schema() -> dict:
    text = {"type": "string", "minLength": 1, "maxLength": MAX_VALUE_CHARS}
    fact = {"type": "object", "properties": {"who": text, "what": text, "value": text, "now": {"type": "boolean"},
                                             "many": {"type": "boolean"}},
            "required": ["who", "what", "value", "now"], "additionalProperties": False}
    return {"type": "object", "properties": {"facts": {"type": "array", "items": fact, "maxItems": MAX_FACTS}},
            "required": ["facts"], "additionalProperties": False}


def unread_turns(turns: Sequence[Turn], cands: Sequence[Candidate]) -> list[Turn]:
    """The user's turns ``cands`` keep only as said (a statement, an event, a change in free words) and read no value
    from: the turns worth a question of their own, in the log's order."""
    said, read = set(), set()
    for c in cands:
        (said if said_only(c.to_dict()) else read).add((c.source_file, c.line_start))
    return [t for t in turns if t.role == "user" and (key := (t.source_file, t.line_start)) in said and key not in read]


def prompt_of(turn: Turn) -> str:
    text = " ".join(turn.text.split())
    return "TEXT: " + (text[:MAX_TEXT_CHARS] + " …" if len(text) > MAX_TEXT_CHARS else text)


def read_facts(data, turn: Turn, day: date, model: str, stats: ModelStats, renews: bool = False) -> list[Candidate]:
    """The candidates of one answer, each reading validated alone; ``LLMError`` when the answer has no list."""
    facts = data.get("facts") if isinstance(data, dict) else data
    if not isinstance(facts, list):
        raise LLMError("model answer has no 'facts' list")
    out, seen = [], set()
    for f in facts[:MAX_FACTS]:
        stats.ops += 1
        try:
            if not isinstance(f, dict):
                raise Dropped("not an object")
            if f.get("now") is not True:
                raise Dropped("not about now")
            op = {"op": "new", "turn": 1, "who": f.get("who"), "what": f.get("what"), "value": f.get("value"),
                  "many": f.get("many") is True}
            cand = candidate(op, [turn], [], day, model)
        except Dropped as e:
            stats.dropped[str(e)] += 1
            continue
        key = (cand.subject, cand.object)
        if key in seen:
            stats.dropped["repeated"] += 1
            continue
        seen.add(key)
        # a change told in free words closes the fact it replaces: its reading does too (the store's slot matcher)
        cand.renews = renews and not cand.multi_valued
        stats.kept += 1
        out.append(cand)
    return out


def read_unread(turns: Sequence[Turn], day: date, cands: Sequence[Candidate], client: ChatClient | None, *,
                cache: ExtractionCache | None = None, stats: ModelStats | None = None) -> list[Candidate]:
    """The model's readings of the turns ``cands`` keep only as said (``unread_turns``), one question a turn. With
    ``cache``, a turn answered before is read from it; ``client`` None: only the cache answers, and a turn it lacks is
    left as said. A turn whose answer is not JSON of the asked shape is left as said (the rules' sentence stands)."""
    stats = stats if stats is not None else ModelStats()
    renewing = {(c.source_file, c.line_start) for c in cands if c.renews and said_only(c.to_dict())}
    out: list[Candidate] = []
    for turn in unread_turns(turns, cands):
        prompt = prompt_of(turn)
        saved = cache.get(PROMPT_KEY, prompt) if cache is not None else None
        if saved is None and client is None:
            continue
        try:
            if saved:
                data, model = saved["answer"], str(saved.get("model") or "cached")
            else:
                data, model = client.complete_json(SYSTEM_PROMPT, prompt, schema=schema(), examples=list(ALL_EXAMPLES),
                                                   max_tokens=200), client.model
            stats.parts += 1
            found = read_facts(data, turn, day, model, stats, renews=(turn.source_file, turn.line_start) in renewing)
        except LLMError:
            stats.dropped["answer not usable"] += 1
            continue
        if saved is None and cache is not None:
            cache.put(PROMPT_KEY, prompt, model, data)
        out.extend(found)
    return out
