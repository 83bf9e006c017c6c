"""Fact extraction by the optional chat model, deciding against what is already known.

For each part of a day (a few turns of one topic) the model is shown the current facts that part may touch, each
with a short id, and the part's numbered turns; it answers operations, never free facts for the store to place:

* ``new``: a fact not among the known ones (whose it is, the attribute, the value in the user's words);
* ``update``: a new value for known fact #k (moved, switched, upgraded, corrected);
* ``end``: known fact #k is over and nothing replaces it (quit, cancelled, sold);
* ``past``: something that held before and no longer does ("I used to ...").

Each operation is validated on its own, as bad input: the turn must be one of the part's and not the assistant's,
the value must occur in that turn's text (a model never invents a value), an id must be one it was given, a question
or a hypothetical states nothing. An operation that fails is dropped and counted by reason; the rest become
``Candidate`` objects (an update or an end carries its fact as ``target``, so the supersession policy closes exactly
that fact instead of guessing). An answer that is not JSON of the asked shape raises ``LLMError``: the caller retries,
then the rules carry the day.

The system prompt and the worked examples are a fixed prefix (a server with a prompt cache reads them once); what
varies comes last. Answers are kept in the synced ``ExtractionCache``, so a restore needs no model.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import date, timedelta
from pathlib import Path

from agentos_mem.digest.extract.anchored import QUOTES, SOMEONE, owner_of
from agentos_mem.digest.extract.vocab import not_a_statement
from agentos_mem.kernel import progress
from agentos_mem.kernel.domain import Candidate, Turn
from agentos_mem.kernel.files import atomic_write, guard
from agentos_mem.kernel.llm import ChatClient, LLMError
from agentos_mem.safety.secrets import mask_lines, mask_value
from agentos_mem.kernel.text import has_cjk, normalize_key, words

# A part is what a small model can hold at once: a few turns of one topic, cut at a size.
PART_TURNS = 6
PART_CHARS = 1400
ASSISTANT_CHARS = 240  # an assistant's turn is context, not a source: its tail is left out
MAX_KNOWN = 8  # known facts shown per part (ranked when there are more)
MAX_VALUE_CHARS = 80
MAX_OPS = 4  # operations per part: a small model that loops repeating itself is cut short (and answers sooner)
STOPPED = "stopped"  # the fact store's predicate of an ended thing (storage.facts.STOPPED)
SELF = frozenset({"user", "me", "i", "myself", "我", "我自己", "用户", "self"})

SYSTEM_PROMPT = """You keep a person's memory up to date from their chat with an assistant.
You get KNOWN facts, each with an id, and numbered TURNS. Answer JSON {"ops": [...]}, one op per fact the USER states:
- {"op": "new", "turn": T, "who": W, "what": A, "value": V, "many": false} a fact that is not KNOWN yet
- {"op": "update", "fact": ID, "turn": T, "value": V} a new value for KNOWN fact ID (changed, moved, switched, upgraded, corrected)
- {"op": "end", "fact": ID, "turn": T} KNOWN fact ID is over and nothing replaces it (quit, stopped, cancelled, sold)
- {"op": "past", "turn": T, "who": W, "what": A, "value": V} something that was true before and is not now
Add "from": "YYYY-MM-DD" to new or update when it starts on a later date than the log's date.
W is "user", or the person as the user names them (妻子, my manager, Tom). A is a short attribute name (city, 工作单位,
laptop, 端口). V is copied exactly from turn T, as short as it can be (a name, a number, a place), never translated.
"many": true when a person has several at once (hobbies, languages, pets, likes).
Only user turns state facts. Assistant turns never do, even when they repeat a value. Questions, wishes, undecided
plans, jokes, hypotheticals and quotes of others: no op. If the user corrects a value, update with the corrected one.
Update or end a fact only when turn T speaks of that same thing. Values come from these TURNS only, never from the
examples. Nothing to record: {"ops": []}."""

# Worked examples, original, in Chinese, English and both: the model sees what an answer looks like.
EXAMPLES: tuple[tuple[str, str], ...] = (
    ("Log date: 2025-05-12\nKNOWN:\n#1 user · 城市 · 南京\n#2 user · 早餐 · 豆浆\nTURNS:\n"
     "[1] user: 下个月我就调去苏州分部了，6月1号起\n[2] assistant: 恭喜！苏州离南京也近。\n[3] user: 豆浆最近不喝了，胃受不了。我老婆还在南京的银行上班",
     json.dumps({"ops": [{"op": "update", "fact": 1, "turn": 1, "value": "苏州", "from": "2025-06-01"},
                         {"op": "end", "fact": 2, "turn": 3},
                         {"op": "new", "turn": 3, "who": "老婆", "what": "工作单位", "value": "南京的银行", "many": False}]},
                ensure_ascii=False)),
    ("Log date: 2025-09-03\nKNOWN:\n#1 user · editor · Vim\nTURNS:\n"
     "[1] user: Should I try Zed? My friend loves it.\n[2] assistant: So you are switching to Zed then.\n"
     "[3] user: no, still Vim. I did start learning Rust last week though, besides Go.",
     json.dumps({"ops": [{"op": "new", "turn": 3, "who": "user", "what": "programming language", "value": "Rust", "many": True}]})),
    ("Log date: 2025-11-20\nKNOWN:\n#1 staging server · port · 8080\nTURNS:\n"
     "[1] user: staging 的端口我记错了，是 8081 不是 8080\n[2] user: I used to run on a Dell laptop, now it's a ThinkPad",
     json.dumps({"ops": [{"op": "update", "fact": 1, "turn": 1, "value": "8081"},
                         {"op": "past", "turn": 2, "who": "user", "what": "laptop", "value": "Dell"},
                         {"op": "new", "turn": 2, "who": "user", "what": "laptop", "value": "ThinkPad", "many": False}]})),
)


@dataclass
class ModelStats:
    """What the model answered for a day and what validation kept: counts by operation and by the reason of a drop."""

    parts: int = 0
    ops: int = 0
    kept: int = 0
    dropped: Counter = field(default_factory=Counter)

    def as_dict(self) -> dict:
        return {"parts": self.parts, "ops": self.ops, "kept": self.kept, "dropped": dict(self.dropped)}


# -- parts and what they may touch --------------------------------------------------------------------


def parts_of(turns: Sequence[Turn]) -> list[list[Turn]]:
    """The day cut into parts: one file's consecutive turns of one topic, at most PART_TURNS turns and about
    PART_CHARS characters each. A part with no turn by the user or a named participant is left out (nothing in it
    can state a fact)."""
    parts: list[list[Turn]] = []
    size = 0
    for t in turns:
        length = min(len(t.text), ASSISTANT_CHARS) if t.role == "assistant" else len(t.text)
        last = parts[-1] if parts else None
        if last and last[-1].source_file == t.source_file and last[-1].topic == t.topic and len(last) < PART_TURNS \
                and size + length <= PART_CHARS:
            last.append(t)
            size += length
        else:
            parts.append([t])
            size = length
    return [p for p in parts if any(t.role != "assistant" for t in p)]


def fact_line(f: dict) -> str:
    return f"{f['subject']} · {f['predicate']} · {f['object']}"


def rank_known(part: Sequence[Turn], facts: Sequence[dict], embed: Callable | None = None, k: int = MAX_KNOWN) -> list[dict]:
    """The current facts a part may touch, at most ``k``: all of them when there are no more; else the best by
    reciprocal-rank fusion of a BM25 ranking over their words and, with ``embed`` (texts -> unit vectors), a vector
    ranking over their sentences, against the part's turns (the user's words weigh most)."""
    facts = list(facts)
    if len(facts) <= k:
        return facts
    query = " ".join(t.text for t in part if t.role != "assistant") or " ".join(t.text for t in part)
    docs = [words(f"{fact_line(f)} {f.get('evidence') or ''}") for f in facts]
    q = set(words(query))
    n, avg = len(docs), (sum(len(d) for d in docs) / len(docs)) or 1.0
    df = Counter(w for d in docs for w in set(d))
    bm25 = []
    for d in docs:
        tf = Counter(d)
        s = 0.0
        for w in q & tf.keys():
            idf = math.log(1 + (n - df[w] + 0.5) / (df[w] + 0.5))
            s += idf * tf[w] * 2.5 / (tf[w] + 1.5 * (0.25 + 0.75 * len(d) / avg))
        bm25.append(s)
    rankings = [sorted(range(n), key=lambda i: -bm25[i])]
    if embed is not None:
        vecs = embed([query] + [f.get("evidence") or fact_line(f) for f in facts])
        if vecs:
            qv = vecs[0]
            cos = [sum(a * b for a, b in zip(qv, v)) for v in vecs[1:]]
            rankings.append(sorted(range(n), key=lambda i: -cos[i]))
    fused = Counter()
    for ranking in rankings:
        for r, i in enumerate(ranking):
            fused[i] += 1.0 / (60 + r)
    keep = sorted(sorted(range(n), key=lambda i: -fused[i])[:k])  # shown in the store's order
    return [facts[i] for i in keep]


# -- the request -----------------------------------------------------------------------------------


def listing(day: date, known: Sequence[dict], part: Sequence[Turn]) -> str:
    lines = [f"Log date: {day.isoformat()}", "KNOWN:"]
    lines += [f"#{i} {fact_line(f)}" for i, f in enumerate(known, 1)] or ["(none)"]
    lines.append("TURNS:")
    for i, t in enumerate(part, 1):
        text = " ".join(t.text.split())
        if t.role == "assistant" and len(text) > ASSISTANT_CHARS:
            text = text[:ASSISTANT_CHARS] + " …"
        who = "user" if t.role == "user" else "assistant" if t.role == "assistant" else t.speaker
        lines.append(f"[{i}] {who}: {text}")
    return "\n".join(lines)


def schema(n_known: int, n_turns: int) -> dict:
    """The answer's JSON schema: turns and fact ids as enums of what was shown (a grammar-constrained server can
    then answer no other)."""
    turn = {"type": "integer", "enum": list(range(1, n_turns + 1))}
    fact = {"type": "integer", "enum": list(range(1, n_known + 1))} if n_known else None
    text = {"type": "string", "minLength": 1, "maxLength": MAX_VALUE_CHARS}
    when = {"type": "string", "pattern": "^[0-9]{4}-[0-9]{2}-[0-9]{2}$"}
    new = {"type": "object", "properties": {"op": {"enum": ["new", "past"]}, "turn": turn, "who": text, "what": text, "value": text,
                                            "many": {"type": "boolean"}, "from": when},
           "required": ["op", "turn", "who", "what", "value"], "additionalProperties": False}
    variants = [new]
    if fact:
        variants += [
            {"type": "object", "properties": {"op": {"const": "update"}, "fact": fact, "turn": turn, "value": text, "from": when},
             "required": ["op", "fact", "turn", "value"], "additionalProperties": False},
            {"type": "object", "properties": {"op": {"const": "end"}, "fact": fact, "turn": turn},
             "required": ["op", "fact", "turn"], "additionalProperties": False},
        ]
    return {"type": "object", "properties": {"ops": {"type": "array", "items": {"anyOf": variants}, "maxItems": MAX_OPS}},
            "required": ["ops"], "additionalProperties": False}


# -- validation ---------------------------------------------------------------------------------------


class Dropped(Exception):
    """One operation that fails validation; its message is the reason it is counted under."""


def _says(text: str, value: str) -> bool:
    """``value`` occurs in ``text``, ignoring case, width, spaces and punctuation (never a value the text lacks)."""
    v = normalize_key(value)
    return bool(v) and v in normalize_key(text)


def _names(text: str, fact: dict) -> bool:
    """``text`` says something of ``fact``: its value, or a content word of its attribute. An end the model puts on a
    turn that names neither ("done, CI is green" ending the service's Python version) is its guess, not the user's."""
    if _says(text, fact["object"]):
        return True
    told, attribute = set(words(text)), words(fact["subject"])
    if any(w in told for w in attribute):
        return True
    # Chinese compounds share their characters where the words differ (汽车 / 车 / 车险, 健身 / 健身房)
    han = {ch for w in told for ch in w if has_cjk(ch)}
    return any(ch in han for w in attribute for ch in w if has_cjk(ch))


def _int(value, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        raise Dropped(f"{what} is not a number")
    try:
        n = int(value)
    except ValueError:
        raise Dropped(f"{what} is not a number") from None
    if n != value and str(n) != str(value).strip():
        raise Dropped(f"{what} is not a whole number")
    return n


def _text(op: dict, name: str) -> str:
    value = op.get(name)
    if not isinstance(value, str) or not value.strip():
        raise Dropped(f"no {name}")
    value = " ".join(value.split()).strip(" \"'“”‘’。.,，")
    if not value or len(value) > MAX_VALUE_CHARS:
        raise Dropped(f"{name} empty or too long")
    return value


def _common(a: str, b: str) -> str:
    """The longest common substring of two normalised texts."""
    best = ""
    for i in range(len(a)):
        for j in range(i + len(best) + 1, len(a) + 1):
            if a[i:j] in b:
                best = a[i:j]
            else:
                break
    return best


def ground(value: str, turn: Turn, part: Sequence[Turn]) -> tuple[Turn, str]:
    """The turn and value an operation may keep, from the text alone: the value as the cited turn says it; else
    the one user's turn of the part that says it (a small model miscounts turns, or cites the assistant's
    restatement of what the user said); else the part of the value the cited user's turn does say, when that is
    most of it or a whole word of it ("周三" of "周三下午三点" after "是周三不是周二"). ``Dropped`` when the text holds
    no such value: a model never invents one, and an assistant's turn is never a source."""
    if turn.role != "assistant" and _says(turn.text, value):
        return turn, value
    saying = [t for t in part if t.role != "assistant" and _says(t.text, value)]
    if len(saying) == 1:
        return saying[0], value
    if saying:  # said in several of the user's turns: the latest one before or at the cited turn, else the last
        before = [t for t in saying if t.line_start <= turn.line_start]
        return (before or saying)[-1], value
    if turn.role == "assistant":
        raise Dropped("assistant turn")
    v, text = normalize_key(value), normalize_key(turn.text)
    core = _common(v, text)
    if len(core) >= 2 and 3 * len(core) >= len(v) and _whole(core, v) and _whole(core, text):
        original = _original(turn.text, core)
        if original:
            return turn, original
    raise Dropped("value not in the turn")


def _whole(core: str, text: str) -> bool:
    """``core`` sits in ``text`` without cutting a number or a Latin word ("543" is no part of "6543")."""
    i = text.find(core)
    while i >= 0:
        before, after = text[i - 1 : i], text[i + len(core) : i + len(core) + 1]
        if not any(a and b and (a.isdigit() and b.isdigit() or a.isascii() and b.isascii() and a.isalpha() and b.isalpha())
                   for a, b in ((before, core[0]), (core[-1], after))):
            return True
        i = text.find(core, i + 1)
    return False


def _original(text: str, key: str) -> str | None:
    """The span of ``text`` whose normalised form is ``key`` (the user's own characters, not the normalised ones)."""
    for i in range(len(text)):
        for j in range(i + 1, min(len(text), i + 4 * len(key) + 8) + 1):
            k = normalize_key(text[i:j])
            if k == key:
                while i + 1 < j and normalize_key(text[i + 1 : j]) == key:
                    i += 1  # the shortest such span: "a 40" keys as "40" (an article is no part of a key), and is not it
                return text[i:j].strip()
            if len(k) > len(key) or not key.startswith(k):
                break
    return None


def subject_of(who: str, what: str) -> str:
    """The fact's subject: the attribute for the user's own facts, else the owner's attribute ("老婆的工作单位",
    "manager's city"), never the owner twice."""
    owner = who.strip()
    if owner.casefold() in SELF:
        return what
    if normalize_key(owner) and normalize_key(owner) in normalize_key(what):
        return what
    return f"{owner}的{what}" if has_cjk(owner) or has_cjk(what) else f"{owner}'s {what}"


def _start(op: dict, day: date) -> str | None:
    """A later start the operation names ("from"), when it is a real date after the log's day and within a year."""
    raw = op.get("from")
    if not isinstance(raw, str):
        return None
    try:
        when = date.fromisoformat(raw.strip())
    except ValueError:
        return None
    return when.isoformat() if day < when <= day + timedelta(days=366) else None


def candidate(op, part: Sequence[Turn], known: Sequence[dict], day: date, model: str) -> Candidate:
    """One operation as a candidate fact, or ``Dropped`` with the reason."""
    if not isinstance(op, dict):
        raise Dropped("not an object")
    kind = op.get("op")
    if kind not in ("new", "update", "end", "past"):
        raise Dropped("unknown op")
    n = _int(op.get("turn"), "turn")
    if not 1 <= n <= len(part):
        raise Dropped("turn not shown")
    turn = part[n - 1]
    target = None
    if kind in ("update", "end"):
        k = _int(op.get("fact"), "fact")
        if not 1 <= k <= len(known):
            raise Dropped("fact id not shown")
        target = known[k - 1]
    if kind == "end":
        if turn.role == "assistant":
            raise Dropped("assistant turn")
        if not _names(turn.text, target):
            raise Dropped("fact not named in the turn")
        value = target["object"]
    else:
        value = _text(op, "value")
        turn, value = ground(value, turn, part)
    why = not_a_statement(turn.text, None if kind == "end" else value)
    if why:
        raise Dropped(why)
    if kind != "end" and not _says(QUOTES.sub(" ", turn.text), value):
        raise Dropped("quoted")  # only in words the user quotes (a text message, a sign): the rules read none there either
    if target is not None:
        subject, predicate, many = target["subject"], target["predicate"], bool(target.get("multi_valued"))
    else:
        who, what = _text(op, "who"), _text(op, "what")
        if who.casefold() not in SELF:
            if turn.role == "other" and normalize_key(who) == normalize_key(turn.speaker):
                pass  # a named participant's own fact
            elif not any(_says(t.text, who) for t in part if t.role != "assistant"):
                raise Dropped("person not in the turns")
        elif turn.role == "other":
            who = turn.speaker  # "I" in a named participant's turn is that participant
        elif (owner := owner_of(turn.text, value)) is not None:
            # the sentence gives the value to another person ("my sister adopted a cat named X", "他换了 HHKB"): the
            # small model often writes it as the user's, a stale claim of the user's own slot
            if owner == SOMEONE:
                raise Dropped("someone else's")
            who = owner
        subject, predicate, many = subject_of(who, what), "value", bool(op.get("many")) and kind == "new"
    start = _start(op, day) if kind in ("new", "update") else None
    observed = f"{start}T00:00:00" if start else turn.at(day)
    subject = mask_lines(subject)[0]
    value = mask_value(subject, value)[0]
    return Candidate(
        subject=subject, predicate=STOPPED if kind == "end" else predicate, object=value,
        nature="preference" if many else "fact", confidence=0.85, explicitness="stated", source_file=turn.source_file,
        line_start=turn.line_start, line_end=turn.line_end, observed_at=observed, speaker=turn.speaker,
        multi_valued=many, event_date=start, extractor=f"llm:{model}", evidence=mask_lines(turn.text)[0][:120],
        ended=kind == "past", target=int(target["id"]) if target is not None and "id" in target else None,
    )


def read_answer(data, part: Sequence[Turn], known: Sequence[dict], day: date, model: str, stats: ModelStats) -> list[Candidate]:
    """The candidates of one answer, each operation validated alone; ``LLMError`` when the answer has no list of
    operations at all."""
    ops = data.get("ops", data.get("operations")) if isinstance(data, dict) else data
    if not isinstance(ops, list):
        raise LLMError("model answer has no 'ops' list")
    out, seen = [], set()
    for op in ops:
        stats.ops += 1
        try:
            cand = candidate(op, part, known, day, model)
        except Dropped as e:
            stats.dropped[str(e)] += 1
            continue
        key = (cand.subject, cand.predicate, cand.object, cand.line_start, cand.target, cand.ended)
        if key in seen:
            stats.dropped["repeated"] += 1
            continue
        seen.add(key)
        stats.kept += 1
        out.append(cand)
    # one answer saying a value both holds now and held before: the "before" is the model's confusion, dropped
    now = {normalize_key(c.object) for c in out if not c.ended and c.predicate != STOPPED}
    for c in [c for c in out if c.ended and normalize_key(c.object) in now]:
        out.remove(c)
        stats.kept -= 1
        stats.dropped["past and current at once"] += 1
    return out


# -- the cache and the day ------------------------------------------------------------------------------


class CacheMiss(LLMError):
    """No chat model is configured and the extraction cache has no answer for this input."""


class ExtractionCache:
    """The chat model's usable answers, one JSON file per input (the whole request: prompt, examples, the part and
    the known facts shown, hashed), under ``agent-sync/04_memory/cache/extraction/``: synced, so a restore on another
    machine, or a re-digest of the same lines, reads the answer instead of asking a model (which may be gone, or
    answer differently). Only the answer and the model's name are kept, never the input (already masked, but a log's
    text belongs to the log)."""

    def __init__(self, folder: Path):
        self.folder = Path(folder)

    def _path(self, system: str, user: str):
        key = hashlib.sha256(json.dumps([system, user], ensure_ascii=False).encode("utf-8")).hexdigest()
        return self.folder / key[:2] / f"{key}.json"

    def get(self, system: str, user: str) -> dict | None:
        path = self._path(system, user)
        try:
            saved = json.loads(guard(path).read_bytes(path))  # a link or a FIFO in the synced cache: asked again
            return saved if isinstance(saved, dict) and isinstance(saved.get("answer"), (dict, list)) else None
        except (OSError, ValueError):  # absent, or damaged (a torn sync): asked again
            return None

    def put(self, system: str, user: str, model: str, answer) -> None:
        atomic_write(self._path(system, user), json.dumps({"model": model, "answer": answer}, ensure_ascii=False, sort_keys=True))


# What the cache is keyed by besides each request: the prompt and its examples (a changed prompt asks again).
PROMPT_KEY = json.dumps([SYSTEM_PROMPT, EXAMPLES], ensure_ascii=False)


def _pending(cand: Candidate) -> dict:
    """A fact an earlier part of the same day gave, shown to the later parts as known (it has no id yet)."""
    return {"subject": cand.subject, "predicate": cand.predicate, "object": cand.object, "multi_valued": cand.multi_valued,
            "evidence": cand.evidence}


def extract_with_model(turns: list[Turn], day: date, client: ChatClient | None, *, known: Sequence[dict] = (),
                       cache: ExtractionCache | None = None, embed: Callable | None = None,
                       stats: ModelStats | None = None) -> list[Candidate]:
    """Candidates from the chat model, in turn order, deciding against ``known`` (the user's current facts, rows of the
    fact store). Raises ``LLMError`` on an answer that is not a list of operations. With ``cache``, an input answered
    before is read from it (and a new usable answer kept); ``client`` None: only the cache answers (``CacheMiss`` for
    an input it lacks)."""
    stats = stats if stats is not None else ModelStats()
    out: list[Candidate] = []
    pending: list[dict] = []
    for part in progress.track(parts_of(turns), "chat model parts"):  # minutes a part on a CPU model
        shown = rank_known(part, [*known, *pending], embed)
        prompt = listing(day, shown, part)
        saved = cache.get(PROMPT_KEY, prompt) if cache is not None else None
        if saved is None and client is None:
            raise CacheMiss("no chat model configured and no cached answer for this part of the log")
        if saved:
            data, model = saved["answer"], str(saved.get("model") or "cached")
        else:
            data, model = client.complete_json(SYSTEM_PROMPT, prompt, schema=schema(len(shown), len(part)), examples=list(EXAMPLES),
                                               max_tokens=240), client.model
        stats.parts += 1
        cands = read_answer(data, part, shown, day, model, stats)
        if saved is None and cache is not None:  # kept once it has proved usable
            cache.put(PROMPT_KEY, prompt, model, data)
        pending += [_pending(c) for c in cands if c.target is None and c.predicate != STOPPED and not c.ended]
        out.extend(cands)
    order = {(t.source_file, t.line_start): i for i, t in enumerate(turns)}
    out.sort(key=lambda c: order[(c.source_file, c.line_start)])  # stable: the log's own order
    return out

