"""Fact extraction by the optional chat model: one prompt, answers validated field by field into
``Candidate`` objects. Any unusable answer raises ``LLMError`` and the digest falls back to the rules."""

from __future__ import annotations

import hashlib
import json
from datetime import date
from pathlib import Path

from kernel.files import atomic_write
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


class CacheMiss(LLMError):
    """No chat model is configured and the extraction cache has no answer for this input."""


class ExtractionCache:
    """The chat model's usable answers, one JSON file per input (system prompt and the chunk of the log, hashed),
    under ``agent-sync/04_memory/cache/extraction/``: synced, so a restore on another machine, or a re-digest of the
    same lines, reads the answer instead of asking a model (which may be gone, or answer differently). Only the
    answer and the model's name are kept, never the input (already masked, but a log's text belongs to the log)."""

    def __init__(self, folder: Path):
        self.folder = Path(folder)

    def _path(self, system: str, user: str) -> Path:
        key = hashlib.sha256(json.dumps([system, user], ensure_ascii=False).encode("utf-8")).hexdigest()
        return self.folder / key[:2] / f"{key}.json"

    def get(self, system: str, user: str) -> dict | None:
        path = self._path(system, user)
        try:
            saved = json.loads(path.read_text(encoding="utf-8"))
            return saved if isinstance(saved, dict) and isinstance(saved.get("answer"), (dict, list)) else None
        except (OSError, ValueError):  # absent, or damaged (a torn sync): asked again
            return None

    def put(self, system: str, user: str, model: str, answer) -> None:
        atomic_write(self._path(system, user), json.dumps({"model": model, "answer": answer}, ensure_ascii=False, sort_keys=True))


def extract_with_model(turns: list[Turn], day: date, client: ChatClient | None, batch_turns: int = 40,
                       cache: ExtractionCache | None = None) -> list[Candidate]:
    """Candidates from the chat model, in turn order. Raises ``LLMError`` on any unusable answer. With ``cache``, an
    input answered before is read from it (and a new usable answer kept); ``client`` None: only the cache answers
    (``CacheMiss`` for an input it lacks)."""
    out: list[Candidate] = []
    for start in range(0, len(turns), batch_turns):
        chunk = turns[start : start + batch_turns]
        listing = "\n".join(f"[{start + i}] ({t.role}) {t.speaker}: {t.text}" for i, t in enumerate(chunk))
        prompt = f"Date of the log: {day.isoformat()}\n\n{listing}"
        saved = cache.get(SYSTEM_PROMPT, prompt) if cache is not None else None
        if saved is None and client is None:
            raise CacheMiss("no chat model configured and no cached answer for this part of the log")
        data, model = (saved["answer"], str(saved.get("model") or "cached")) if saved else (client.complete_json(SYSTEM_PROMPT, prompt), client.model)
        facts = data.get("facts") if isinstance(data, dict) else data
        if not isinstance(facts, list):
            raise LLMError("model answer has no 'facts' list")
        out.extend(_candidate(item, turns, day, model) for item in facts)
        if saved is None and cache is not None:  # kept once it has proved usable
            cache.put(SYSTEM_PROMPT, prompt, model, data)
    order = {(t.source_file, t.line_start): i for i, t in enumerate(turns)}
    out.sort(key=lambda c: order[(c.source_file, c.line_start)])  # stable: the log's own order
    return out
