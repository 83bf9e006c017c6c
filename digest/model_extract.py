"""Fact extraction by the optional chat model: one prompt, answers validated field by field into
``Candidate`` objects. Any unusable answer raises ``LLMError`` and the digest falls back to the rules."""

from __future__ import annotations

from datetime import date

from kernel.domain import EXPLICITNESS, NATURES, Candidate, Turn
from kernel.llm import ChatClient, LLMError
from kernel.secrets import mask_lines, mask_value

SYSTEM_PROMPT = """You extract durable facts about the people in a chat log, for a personal memory system.
Return only JSON: {"facts": [{"turn": <turn number>, "subject": "...", "predicate": "...", "object": "...",
"nature": "fact|preference|opinion|event|axiom", "confidence": 0.0-1.0, "explicitness": "stated|corrected|inferred",
"technical": true|false, "multi_valued": true|false, "event_date": "YYYY-MM-DD" or null}]}.
Subjects: "user" for the user; a person's name for named speakers; otherwise the thing described (e.g. "数据库端口").
Predicates: name, role, works_at, lives_in, from, likes, dislikes, prefers, value, plans, decided, event, thinks, rule.
Use "value" for settings and configuration values. "corrected" when the user corrects an earlier statement,
"inferred" for anything the assistant concludes or the user hedges. Keep the language of the log. No prose."""


def _candidate(item: dict, turns: list[Turn], day: date, model: str) -> Candidate:
    if not isinstance(item, dict):
        raise LLMError("fact is not an object")
    try:
        turn = turns[int(item["turn"])]
    except (KeyError, ValueError, TypeError, IndexError) as e:
        raise LLMError(f"fact names no valid turn: {item.get('turn')!r}") from e
    fields = {}
    for name in ("subject", "predicate", "object"):
        value = item.get(name)
        if not isinstance(value, str) or not value.strip():
            raise LLMError(f"fact field {name!r} missing or empty")
        fields[name] = value.strip()
    nature = item.get("nature", "fact")
    explicitness = item.get("explicitness", "stated")
    if nature not in NATURES or explicitness not in EXPLICITNESS:
        raise LLMError(f"fact has nature {nature!r} / explicitness {explicitness!r} outside the schema")
    if turn.role == "assistant":
        explicitness = "inferred"  # the assistant never states facts about the user on their behalf
    try:
        confidence = min(1.0, max(0.0, float(item.get("confidence", 0.8))))
    except (TypeError, ValueError) as e:
        raise LLMError("fact confidence is not a number") from e
    event_date = item.get("event_date")
    if event_date is not None:
        try:
            event_date = date.fromisoformat(str(event_date)).isoformat()
        except ValueError:
            event_date = None
    # The model saw masked turns; whatever it answers is masked again (a secret never reaches a fact in clear).
    fields["subject"] = mask_lines(fields["subject"])[0]
    fields["object"] = mask_value(fields["subject"], fields["object"])[0]
    return Candidate(
        subject=fields["subject"], predicate=fields["predicate"], object=fields["object"], nature=nature, confidence=confidence,
        explicitness=explicitness, source_file=turn.source_file, line_start=turn.line_start, line_end=turn.line_end,
        observed_at=turn.at(day), speaker=turn.speaker, technical=bool(item.get("technical", False)),
        multi_valued=bool(item.get("multi_valued", nature in ("preference", "event", "opinion", "axiom") and fields["predicate"] != "prefers")),
        event_date=event_date, extractor=f"llm:{model}", evidence=mask_lines(turn.text)[0][:120],
    )


def extract_with_model(turns: list[Turn], day: date, client: ChatClient, batch_turns: int = 40) -> list[Candidate]:
    """Candidates from the chat model, in turn order. Raises ``LLMError`` on any unusable answer."""
    out: list[Candidate] = []
    for start in range(0, len(turns), batch_turns):
        chunk = turns[start : start + batch_turns]
        listing = "\n".join(f"[{start + i}] ({t.role}) {t.speaker}: {t.text}" for i, t in enumerate(chunk))
        data = client.complete_json(SYSTEM_PROMPT, f"Date of the log: {day.isoformat()}\n\n{listing}")
        facts = data.get("facts") if isinstance(data, dict) else data
        if not isinstance(facts, list):
            raise LLMError("model answer has no 'facts' list")
        out.extend(_candidate(item, turns, day, client.model) for item in facts)
    order = {(t.source_file, t.line_start): i for i, t in enumerate(turns)}
    out.sort(key=lambda c: order[(c.source_file, c.line_start)])  # stable: the log's own order
    return out
