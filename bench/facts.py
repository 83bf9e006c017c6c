"""``agentos bench facts DIR``: fact extraction with supersession on ``fact_updates`` (zh / en / mixed chat logs).

Per case, a fresh workspace for one user (``bench``): the case's days are written as JSONL chat exports
(``YYYY-MM-DD.jsonl`` in the user's working-memory folder, the messages exactly as the case gives them), the
clock is pinned (``AGENTOS_NOW``) to the end of the last day, each day goes through the digest's plain stage
functions in date order (``digest.stages.digest_day``: the stages ``agentos backfill`` runs, one call per day,
without Prefect's flow and task runs), then ``index.stages.rebuild``. Then

- the current facts are read as ``agentos facts list --json`` reads them (``query.facts.facts_as_of``, no
  confidence floor), and history is every other row of the user's store;
- every question goes through ``query.ask.ask`` (what ``agentos query --json`` returns): its status
  (``no_history`` ...), the facts it returns (all current: ``history`` is off) and its whole context.

Scoring follows the data's README (see :data:`METHOD` for the exact rules): slot level with our own slot keys
and case-wide, question level, by kind, by language, same-language against cross-lingual questions; plus the
share of false facts among the current ones. The rule extractor always runs; ``--llm URL#MODEL`` adds the
chat-model extractor (the digest's ``AGENTOS_LLM_BASE_URL`` path) beside it. Every set the folder holds is run and
reported as its own column: ``dev.jsonl`` (tune on it) and ``unseen.jsonl`` (written by someone else: never tuned on; a
change that moves dev and not unseen is tuning). A half of one writer's cases is no held-out data (every rule tuned on
one half fits the other), so the sets are the only split.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import tempfile
import time
from collections import Counter
from datetime import date
from pathlib import Path

from agentos_mem.bench.locomo import library_versions
from agentos_mem.digest.stages import digest_day
from agentos_mem.embedders import make_settings_embedder
from agentos_mem.index.stages import rebuild
from agentos_mem.kernel import progress
from agentos_mem.kernel.settings import load_settings
from agentos_mem.kernel.text import nfkc
from agentos_mem.kernel.workspace import Workspace, init_workspace
from agentos_mem.query.ask import ask
from agentos_mem.query.facts import facts_as_of
from agentos_mem.storage.facts import open_facts

USER = "bench"
KINDS = ("value_change", "correction", "stop", "additive", "third_party", "time_qualified", "non_fact", "repeat")
LANGS = ("zh", "en", "mixed")
# The sets of a fact_updates folder, in the order they are reported: dev (tune on it), unseen (someone else's: never tuned on)
SETS = ("dev", "unseen")

METHOD = """\
- Matching: a value matches a text when its NFKC, case-folded form is a substring of the text's (so full-width
  and half-width forms and case do not matter; nothing is translated). As the README asks, facts are matched on
  their value text, the `object` (not on `subject · predicate · object`), for slots, false facts and the facts a
  question returns alike; only "answer in context" reads the whole text of every returned item.
- Current facts: those `facts list --json` lists, except two statuses that are no current value: `may_have_changed`
  (a later sentence no rule read may have changed it) and `statement` (a self-disclosure no rule read, kept as what
  the user said that day). Those are neither a hit nor a stale, and not history; their text (the newer sentence
  beside a flagged fact, the statement itself) still counts for "answer in context" when `query` returns them.
- Slot keys (slot level): every `expect` entry is a slot keyed by (owner, slot text). The owner is the user,
  except in `third_party` cases for a slot whose text does not name the user ("user's" / "用户"): its owner is
  the person the slot text names before "'s" / "的" (e.g. `manager Kevin`, `女儿朵朵`), known by the words of that
  phrase and a small table of relation words in both languages (妻子 = 老婆 = wife, 妈妈 = mom, ...). A current fact
  belongs to a slot when its text contains one of the slot's `current` or `past` strings and its owner is the
  slot's owner: a fact whose subject names a third person of the case is that person's, every other fact is
  the user's (whatever its subject: a thing, "user", a fragment).
- Case-wide (the README's fallback): every current fact of the case belongs to every slot; a `past` string that
  is also a `current` string of another slot of the case is skipped.
- current hit: a fact of the slot contains one of `current` (for `additive`: each of them, in any fact of the
  slot); stale: a fact of the slot contains a `past` string; slot accuracy: (current hit, or `current` empty)
  and not stale. history kept (`value_change`, `stop`): each `past` string appears in a history row (a fact
  no longer current); self-supersession (`repeat`): a `current` string appears in history, or in more than one
  current fact.
- non-fact false (the README's false fact, `non_fact` slots): a `past` string appears in any current fact of the case.
- false facts: the current facts at the end that hold a value that must not be current, over all current facts:
  a fact is false when it contains a `past` string of a slot it belongs to (slot keys above). `non_fact`
  slots take every fact of the case that contains their `past` strings, whoever it names. "unexpected" counts
  the current facts that contain no `current` string of the case (true extra facts are not penalised by the
  README; this is the noise beside the signal).
- Claims: a fact served as plainly current (status `active`, not `may_have_changed`, not a `statement`, not marked
  earlier). Only claims hit or go stale; a dated statement does neither.
- Questions: answer hit: the claims `query` returns contain one of `answer` (for `additive`: all);
  stale shown: they contain a `not` string; question accuracy: (answer hit, or `answer` empty) and no stale
  shown; answer in context: one of `answer` (for `additive`: all) appears anywhere in the returned items
  (cards and facts; an empty `answer` counts as found); first mention right (questions with an `answer`): the
  first returned item, in the order served and of any kind, whose text holds one of `answer` or of `not` holds one
  of `answer` (what an agent that trusts the top of its context gets; no such item: wrong); `no_history`: the query
  stopped at L1 with nothing matched.
- Languages: by the case's `lang`; a question is cross-lingual when the case is `zh` or `en` and the question is
  in the other language (48 of 86), same-language otherwise (questions on `mixed` logs included).
"""

SET_RULE = ("each set of the folder is its own column: `dev` (dev.jsonl, tuned on) and `unseen` (unseen.jsonl, written "
            "by someone else and never tuned on); --limit takes the first N cases of each set")

# Relation words of both languages, so a third person named 妻子 in the slot is found as 老婆 or wife in a fact.
RELATIONS = [
    {"妻子", "老婆", "太太", "爱人", "媳妇", "wife"},
    {"丈夫", "老公", "先生", "husband"},
    {"女儿", "闺女", "daughter"},
    {"儿子", "son"},
    {"同事", "colleague", "coworker", "co-worker"},
    {"队友", "teammate"},
    {"经理", "领导", "老板", "上司", "manager", "boss"},
    {"哥哥", "弟弟", "兄弟", "brother"},
    {"姐姐", "妹妹", "sister"},
    {"妈妈", "我妈", "老妈", "母亲", "mom", "mother", "mum"},
    {"爸爸", "我爸", "老爸", "父亲", "dad", "father"},
]
_SELF = re.compile(r"\buser\b|用户|本人", re.I)


# -- the data ---------------------------------------------------------------------------------------------


def set_files(path) -> dict[str, Path]:
    """set name -> its file: a folder's ``dev.jsonl`` and ``unseen.jsonl`` (those it holds, in :data:`SETS` order), or the
    one file given (named by its stem)."""
    p = Path(path)
    if not p.is_dir():
        return {p.stem: p}
    return {s: p / f"{s}.jsonl" for s in SETS if (p / f"{s}.jsonl").is_file()}


def load(path) -> list[dict]:
    """The cases of every set under ``path`` (:func:`set_files`), each labelled with its set (``case["set"]``)."""
    out = []
    for name, f in set_files(path).items():
        for n, line in enumerate(f.read_text(encoding="utf-8").splitlines(), start=1):
            if line.strip():
                try:
                    out.append({**json.loads(line), "set": name})
                except json.JSONDecodeError as e:
                    raise ValueError(f"{f}:{n}: not a JSON case ({e.msg})") from None
    return out


# -- matching ---------------------------------------------------------------------------------------------


def norm(text: str) -> str:
    return nfkc(text or "").casefold()


def has(text: str, value: str) -> bool:
    """``value`` occurs in ``text``, ignoring case and character width."""
    v = norm(value).strip()
    return bool(v) and v in norm(text)


def fact_text(f: dict) -> str:
    """How ``facts list`` and ``query`` show a fact."""
    return f"{f['subject']} · {f['predicate']} · {f['object']}"


def fact_value(f: dict) -> str:
    """The text values are matched against: the object (the README's "value text")."""
    return f["object"]


def owner_of_slot(case: dict, slot: str) -> str | None:
    """The third person a slot belongs to (the phrase before 's / 的), or None for the user's own slots."""
    if case["kind"] != "third_party" or _SELF.search(slot):
        return None
    m = re.match(r"^(.+?)(?:'s\b|’s\b|的)", slot.strip())
    return (m.group(1) if m else slot).strip()


def person_words(owner: str) -> set[str]:
    """Words that name ``owner`` in a fact: the phrase, its words, the relation word and name of a Chinese
    phrase (女儿朵朵 -> 女儿, 朵朵), and the relation's other words in both languages."""
    words = {owner, *owner.split()}
    for group in RELATIONS:
        for w in group:
            if w in owner:
                words |= group
                rest = owner.replace(w, "").strip()
                if rest:
                    words.add(rest)
    return {norm(w) for w in words if w.strip()}


def fact_owner(f: dict, persons: dict[str, set[str]]) -> str | None:
    """The third person a fact is about (its subject names them), or None: the user's."""
    subject = norm(f["subject"])
    for owner, words in persons.items():
        if any(w and w in subject for w in words):
            return owner
    return None


# -- scoring one case -------------------------------------------------------------------------------------


def score_case(case: dict, current: list[dict], history: list[dict], answers: list[dict]) -> dict:
    """Slot, fact and question outcomes of one case, from its current facts, its history rows and the
    ``ask`` answers (``Answer.to_dict()``) of its questions, in order."""
    kind = case["kind"]
    persons = {o: person_words(o) for e in case["expect"] if (o := owner_of_slot(case, e["slot"]))}
    owners = {f["id"]: fact_owner(f, persons) for f in current}
    texts = {f["id"]: fact_value(f) for f in current}
    hist_texts = [fact_value(f) for f in history]
    all_current = {v for e in case["expect"] for v in e["current"]}
    slots = []
    false_ids: set[int] = set()
    for i, e in enumerate(case["expect"]):
        owner = owner_of_slot(case, e["slot"])
        values = [*e["current"], *e["past"]]
        mine = [f["id"] for f in current if owners[f["id"]] == owner and any(has(texts[f["id"]], v) for v in values)]
        others_current = {v for j, o in enumerate(case["expect"]) if j != i for v in o["current"]}
        wide_past = [p for p in e["past"] if p not in others_current]
        row = {"slot": e["slot"], "kind": kind, "lang": case["lang"], "owner": owner or "user",
               "current": e["current"], "past": e["past"], "facts": mine}
        for mode, ids, past in (("keyed", mine, e["past"]), ("wide", list(texts), wide_past)):
            hit = _hit([texts[x] for x in ids], e["current"], kind) if e["current"] else None
            stale_ids = [x for x in ids if any(has(texts[x], p) for p in past)]
            row[mode] = {"current_hit": hit, "stale": bool(stale_ids), "ok": (hit is not False) and not stale_ids}
            if mode == "keyed":
                false_ids |= set(stale_ids)
        if kind in ("value_change", "stop") and e["past"]:
            row["history_kept"] = all(any(has(t, p) for t in hist_texts) for p in e["past"])
        if kind == "repeat" and e["current"]:
            holding = [x for x in texts if any(has(texts[x], v) for v in e["current"])]
            in_hist = any(has(t, v) for t in hist_texts for v in e["current"])
            row["self_superseded"] = in_hist or len(holding) > 1
        if kind == "non_fact":
            bad = [x for x in texts if any(has(texts[x], p) for p in e["past"])]
            row["non_fact_false"] = bool(bad)
            false_ids |= set(bad)
        slots.append(row)
    questions = []
    # current: valid at the evaluation time, the end of the last day (a value whose successor starts later still is)
    evaluated_at = f"{max(case['days'], default='')}T23:59:59"
    for q, ans in zip(case["questions"], answers):
        # claims: facts served as plainly current (an item the query marks earlier in its thread is history)
        facts = [it for it in ans["items"] if it["kind"] == "fact" and it["source"].get("status") == "active"
                 and not it["source"].get("earlier") and (not it["source"].get("valid_to") or it["source"]["valid_to"] > evaluated_at)]
        ftexts = [texts[it["source"]["fact"]] if it["source"].get("fact") in texts else it["text"].split(" · ", 2)[-1]
                  for it in facts]
        context = [it["text"] for it in ans["items"]]
        first = first_mention(context, q["answer"], q["not"])
        hit = _hit(ftexts, q["answer"], kind) if q["answer"] else None
        stale = any(has(t, n) for t in ftexts for n in q["not"])
        cross = case["lang"] in ("zh", "en") and q["lang"] != case["lang"]
        questions.append({"q": q["q"], "kind": kind, "lang": case["lang"], "q_lang": q["lang"],
                          "relation": "cross-lingual" if cross else "same-language", "status": ans["status"],
                          "answer_hit": hit, "stale_shown": stale, "ok": (hit is not False) and not stale,
                          "in_context": _hit(context, q["answer"], kind) if q["answer"] else True,
                          "first_right": (first is not None and any(has(context[first], a) for a in q["answer"]))
                          if q["answer"] else None,
                          "returned_facts": [it["text"] for it in facts],
                          "served": [t[:160] for t in context[: (first + 1 if first is not None else 6)]]})
    facts = [{"id": f["id"], "text": fact_text(f), "owner": owners[f["id"]] or "user", "false": f["id"] in false_ids,
              "expected": any(has(texts[f["id"]], v) for v in all_current), "confidence": round(f["confidence"], 3),
              "explicitness": f["explicitness"]} for f in current]
    return {"id": case["id"], "kind": kind, "lang": case["lang"], "slots": slots, "questions": questions, "facts": facts,
            "history": [fact_text(f) for f in history]}


def first_mention(texts: list[str], answer: list[str], stale: list[str]) -> int | None:
    """The index of the first of ``texts`` (items in the order served) that holds one of ``answer`` or ``stale``."""
    return next((i for i, t in enumerate(texts) if any(has(t, v) for v in [*answer, *stale])), None)


def _hit(texts: list[str], values: list[str], kind: str) -> bool:
    found = [any(has(t, v) for t in texts) for v in values]
    return all(found) if kind == "additive" else any(found)


# -- metrics ----------------------------------------------------------------------------------------------


def _rate(flags) -> float | None:
    flags = [bool(f) for f in flags]
    return round(sum(flags) / len(flags), 3) if flags else None


def metrics(cases: list[dict]) -> dict:
    """Every metric over scored cases (:func:`score_case`), with breakdowns by kind, by language and by
    question language relation."""
    out = _flat(cases)
    out["by_kind"] = {k: _flat([c for c in cases if c["kind"] == k]) for k in KINDS if any(c["kind"] == k for c in cases)}
    out["by_lang"] = {g: _flat([c for c in cases if c["lang"] == g]) for g in LANGS if any(c["lang"] == g for c in cases)}
    qs = [q for c in cases for q in c["questions"]]
    out["by_relation"] = {r: _questions([q for q in qs if q["relation"] == r]) for r in ("same-language", "cross-lingual")}
    return out


def _flat(cases: list[dict]) -> dict:
    slots = [s for c in cases for s in c["slots"]]
    facts = [f for c in cases for f in c["facts"]]
    scored = [s for s in slots if s["current"]]
    out = {"cases": len(cases), "slots": len(slots),
           "slot_accuracy": _rate(s["keyed"]["ok"] for s in slots),
           "current_hit": _rate(s["keyed"]["current_hit"] for s in scored),
           "stale": _rate(s["keyed"]["stale"] for s in slots),
           "case_wide": {"slot_accuracy": _rate(s["wide"]["ok"] for s in slots),
                         "current_hit": _rate(s["wide"]["current_hit"] for s in scored),
                         "stale": _rate(s["wide"]["stale"] for s in slots)},
           "history_kept": _rate(s["history_kept"] for s in slots if "history_kept" in s),
           "self_supersession": _rate(s["self_superseded"] for s in slots if "self_superseded" in s),
           "non_fact_false": _rate(s["non_fact_false"] for s in slots if "non_fact_false" in s),
           "current_facts": len(facts),
           "false_facts": _rate(f["false"] for f in facts),
           "false_fact_count": sum(f["false"] for f in facts),
           "cases_with_false_facts": _rate(any(f["false"] for f in c["facts"]) for c in cases),
           "unexpected_facts": _rate(not f["expected"] for f in facts),
           "flagged_facts": sum(len(c.get("flagged") or []) for c in cases),
           "statements": sum(len(c.get("statements") or []) for c in cases)}
    out.update(_questions([q for c in cases for q in c["questions"]]))
    return out


def _questions(qs: list[dict]) -> dict:
    return {"questions": len(qs),
            "question_accuracy": _rate(q["ok"] for q in qs),
            "answer_hit": _rate(q["answer_hit"] for q in qs if q["answer_hit"] is not None),
            "stale_shown": _rate(q["stale_shown"] for q in qs),
            "answer_in_context": _rate(q["in_context"] for q in qs),
            "first_mention_right": _rate(q["first_right"] for q in qs if q.get("first_right") is not None),
            "no_history": _rate(q["status"] == "no_history" for q in qs),
            "no_memory": _rate(q["status"] == "no_memory" for q in qs)}


# -- the run ----------------------------------------------------------------------------------------------


def run(path, limit: int | None = None, llm: str | None = None, sets: str = "all", log=print, log_format: str = "jsonl",
        llm_cache: str | None = None, rules: bool = True) -> dict:
    """Every case of the chosen sets (``sets``: a set's name, or ``all``) through each path: the rules, and the chat
    model with ``llm``; each set reported as its own group."""
    cases = load(path)
    names = list(dict.fromkeys(c["set"] for c in cases))
    if sets != "all" and sets not in names:
        raise ValueError(f"no set {sets!r} in {path}: {', '.join(names) or 'none'}")
    chosen = []
    for name in names if sets == "all" else [sets]:
        part = [c for c in cases if c["set"] == name]
        chosen += part[:limit] if limit else part
    systems = [("rules", None)] if rules or not llm else []
    if llm:
        url, _, model = llm.partition("#")
        systems.append((f"llm:{model or 'default'}", (url, model or "default")))
    work = Path(tempfile.mkdtemp(prefix="agentos-bench-facts-"))
    t0 = time.perf_counter()
    try:
        emb = None
        paths = {}
        for name, chat in systems:
            scored, days_by, seconds = [], Counter(), []
            for i, case in enumerate(progress.track(chosen, f"facts cases ({name})")):
                tc = time.perf_counter()
                rec, emb = run_case(case, work / f"{name.replace(':', '_')}-{case['set']}-{case['id']}", chat, emb, log_format,
                                    cache=Path(llm_cache) if llm_cache and chat else None)
                seconds.append(time.perf_counter() - tc)
                rec["set"] = case["set"]
                days_by.update(rec.pop("extractors"))
                scored.append(rec)
                if (i + 1) % 10 == 0 or i + 1 == len(chosen):
                    log(f"facts {name}: {i + 1}/{len(chosen)} cases, {sum(seconds):.0f} s")
            groups = {}
            for s in dict.fromkeys(c["set"] for c in scored):
                part = [c for c in scored if c["set"] == s]
                groups[s] = {**metrics(part), **model_cost(part)}
            paths[name] = {"groups": groups, "extractor_days": dict(days_by), "seconds": round(sum(seconds), 1),
                           "seconds_per_case": round(sum(seconds) / max(1, len(seconds)), 2), "cases": scored}
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return {"dataset": str(path), "cases": len(chosen), "slots": sum(len(c["expect"]) for c in chosen),
            "questions": sum(len(c["questions"]) for c in chosen), "set": sets, "set_rule": SET_RULE,
            "sets": {s: [c["id"] for c in chosen if c["set"] == s] for s in dict.fromkeys(c["set"] for c in chosen)},
            "log_format": log_format, "embedder": getattr(emb, "identity", None), "paths": paths, "method": METHOD,
            "versions": library_versions(), "seconds": round(time.perf_counter() - t0, 1)}


def day_log(messages: list[dict], log_format: str = "jsonl") -> str:
    """One day's messages as a log the digest reads: a JSONL chat export (the messages as they are), or a
    Markdown day log (``[HH:MM:SS] 用户: text``, continuation lines indented, as the importers write them)."""
    if log_format == "jsonl":
        return "".join(json.dumps(m, ensure_ascii=False) + "\n" for m in messages)
    lines = []
    for m in messages:
        speaker = {"user": "用户", "assistant": "助手"}[m["role"]]
        parts = [p.strip() for p in m["content"].splitlines() if p.strip()] or ["(empty)"]
        lines.append(f"[{m['timestamp'][11:19]}] {speaker}: {parts[0]}")
        lines += ["  " + p for p in parts[1:]]
    return "".join(line + "\n" for line in lines)


@contextlib.contextmanager
def case_clock(case: dict, home: Path):
    """The process's clock pinned to the end of the case's last day (the evaluation time) and its workspace as
    AGENTOS_HOME, for the body of the block; both restored after."""
    pin = {"AGENTOS_NOW": f"{max(case['days'])}T23:59:59+08:00", "AGENTOS_HOME": str(home)}
    saved = {k: os.environ.get(k) for k in pin}
    os.environ.update(pin)
    try:
        yield
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def model_cost(cases: list[dict]) -> dict:
    """What the chat model cost over ``cases`` (from each workspace's ``logs/llm_usage.jsonl``): seconds of digest per
    day of log (the whole day's stages, as the user waits for them), tokens per day, and the share of the model's
    operations that validation dropped, by reason. Empty for the rules path."""
    secs = [x for c in cases for x in c.get("day_seconds", [])]
    out = {"seconds_per_day": round(sum(secs) / len(secs), 2) if secs else None}
    days = [d for c in cases for d in c.get("model_days", [])]
    if not days:
        return out
    n = len(days)
    ops = sum(d.get("ops", 0) for d in days)
    dropped = Counter()
    for d in days:
        dropped.update(d.get("dropped") or {})
    return {**out, "model": {"days": n, "seconds_per_day": round(sum(d["digest_seconds"] for d in days) / n, 1),
                      "model_seconds_per_day": round(sum(d.get("seconds", 0.0) for d in days) / n, 1),
                      "prompt_tokens_per_day": round(sum(d.get("prompt_tokens", 0) for d in days) / n),
                      "completion_tokens_per_day": round(sum(d.get("completion_tokens", 0) for d in days) / n),
                      "requests_per_day": round(sum(d.get("requests", 0) for d in days) / n, 2),
                      "ops": ops, "dropped_share": round(sum(dropped.values()) / ops, 3) if ops else None,
                      "dropped": dict(dropped.most_common())}}


def usage_by_day(lines: list[str]) -> list[dict]:
    """The usage log's entries summed by day: a day's digest may ask the model in two stages (its parts, then the
    turns kept only as said), each appending its own entry; the figures are a day's."""
    days: dict[str, dict] = {}
    for line in lines:
        entry = json.loads(line)
        day = days.setdefault(entry["day"], {"day": entry["day"]})
        for k, v in entry.items():
            if isinstance(v, dict):  # counts by reason, by response form
                day[k] = dict(Counter(day.get(k) or {}) + Counter(v))
            elif isinstance(v, (int, float)) and not isinstance(v, bool):
                day[k] = day.get(k, 0) + v
            elif k != "stage":
                day.setdefault(k, v)
    return list(days.values())


def run_case(case: dict, home: Path, chat: tuple[str, str] | None, emb=None, log_format: str = "jsonl",
             cache: Path | None = None) -> tuple[dict, object]:
    """One case in a fresh workspace: logs, pinned clock, the digest day by day, the index, facts, questions.
    ``cache``: a folder of the chat model's answers kept across runs (copied into the case's synced extraction cache
    before, and what it gained copied back after)."""
    days = sorted(case["days"])
    with case_clock(case, home):
        init_workspace(home)
        settings = load_settings(home=home, user=USER, hostname="bench", timezone="Asia/Shanghai")
        settings = settings.model_copy(update={"logs_dir": None, "llm_base_url": chat[0] if chat else None,
                                               "llm_model": chat[1] if chat else settings.llm_model})
        folder = settings.working_dir()
        folder.mkdir(parents=True, exist_ok=True)
        for d in days:
            (folder / f"{d}.{log_format}").write_text(day_log(case["days"][d], log_format), encoding="utf-8")
        ws = Workspace(home)
        if cache is not None and cache.is_dir():
            shutil.copytree(cache, ws.extraction_cache, dirs_exist_ok=True)
        extractors, digest_seconds = Counter(), {}
        for d in days:
            td = time.perf_counter()
            extractors[digest_day(settings, USER, date.fromisoformat(d), folder)["extractor"]] += 1
            digest_seconds[d] = time.perf_counter() - td
        if cache is not None and ws.extraction_cache.is_dir():
            shutil.copytree(ws.extraction_cache, cache, dirs_exist_ok=True)
        usage = ws.logs / "llm_usage.jsonl"
        model_days = [{**entry, "digest_seconds": round(digest_seconds.get(entry["day"], 0.0), 2)}
                      for entry in usage_by_day(usage.read_text(encoding="utf-8").splitlines() if usage.is_file() else [])]
        emb = emb or make_settings_embedder(settings)
        rebuild(settings, embedder=emb)
        listed = facts_as_of(settings)["facts"]
        # a fact served as "may have changed", or a statement no rule read ("what the user said that day"), is no current
        # value (neither a hit nor a stale) and no history either
        current = [f for f in listed if f["status"] not in ("may_have_changed", "statement", "earlier")]
        flagged = [f for f in listed if f["status"] == "may_have_changed"]
        said = [f for f in listed if f["status"] == "statement"]
        store = open_facts(settings)
        try:
            rows = [dict(r) for r in store.db["facts"].rows_where("user_id = ?", [USER], order_by="id")]
        finally:
            store.close()
        live = {f["id"] for f in listed if f["status"] != "earlier"}  # a claim a newer one of its thread replaced is history
        history = [r for r in rows if r["id"] not in live]
        answers = [ask(q["q"], user=USER, settings=settings).to_dict() for q in case["questions"]]
    rec = score_case(case, current, history, answers)
    rec["flagged"] = [f"{fact_text(f)} (may have changed on {f['changed_on']}: {f['newer']})" for f in flagged]
    rec["statements"] = [f"{fact_text(f)} (said on {f['said_on']})" for f in said]
    rec["extractors"] = dict(extractors)
    rec["day_seconds"] = [round(v, 2) for v in digest_seconds.values()]
    if chat:
        rec["model_days"] = model_days
    return rec, emb



# -- output -----------------------------------------------------------------------------------------------

ROWS = [("slot accuracy (own slot keys)", "slot_accuracy"), ("  current hit", "current_hit"), ("  stale claims (slots)", "stale"),
        ("slot accuracy (case-wide)", ("case_wide", "slot_accuracy")), ("  stale slots (case-wide)", ("case_wide", "stale")),
        ("history kept (value_change, stop)", "history_kept"), ("self-supersession (repeat)", "self_supersession"),
        ("non-fact false (README)", "non_fact_false"), ("false facts / current facts", "false_facts"),
        ("cases with a false fact", "cases_with_false_facts"), ("unexpected current facts", "unexpected_facts"),
        ("facts flagged may_have_changed (count)", "flagged_facts"), ("statements no rule read (count)", "statements"),
        ("question accuracy", "question_accuracy"), ("  answer hit", "answer_hit"), ("  stale shown", "stale_shown"),
        ("answer in returned context", "answer_in_context"), ("first mention right", "first_mention_right"),
        ("stopped at no_history", "no_history"),
        ("stopped at no_memory", "no_memory")]


MODEL_ROWS = [("model: seconds waited per day", "model_seconds_per_day"), ("model: requests per day", "requests_per_day"),
              ("model: prompt tokens per day", "prompt_tokens_per_day"), ("model: answer tokens per day", "completion_tokens_per_day"),
              ("model: operations answered", "ops"), ("model: share dropped by validation", "dropped_share")]


def _num(v) -> str:
    return "-" if v is None else (f"{v:.3f}" if isinstance(v, float) and v < 1 else f"{v}")


def _get(m: dict, key):
    if isinstance(key, tuple):
        for k in key:
            m = (m or {}).get(k)
        return m
    return m.get(key)


def _fmt(v) -> str:
    if isinstance(v, int):  # a count
        return str(v)
    return "-" if v is None else f"{v:.3f}"


def _groups(res: dict) -> list[tuple[str, str, dict]]:
    """(path, group, metrics) columns: every path's sets, dev beside unseen."""
    return [(p, g, m) for p, d in res["paths"].items() for g, m in d["groups"].items()]


def render(res: dict) -> str:
    cols = _groups(res)
    head = f"fact_updates ({res['dataset']}): {res['cases']} cases, {res['slots']} slots, {res['questions']} questions, {res['seconds']} s"
    lines = [head, f"{'metric':<38}" + "".join(f"{(p + ' ' + g)[:18]:>19}" for p, g, _ in cols)]
    lines.append(f"{'cases / current facts':<38}" + "".join(f"{str(m['cases']) + ' / ' + str(m['current_facts']):>19}" for *_, m in cols))
    for label, key in ROWS:
        lines.append(f"{label:<38}" + "".join(f"{_fmt(_get(m, key)):>19}" for *_, m in cols))
    lines.append(f"{'seconds of digest per day':<38}" + "".join(f"{_fmt(m.get('seconds_per_day')):>19}" for *_, m in cols))
    for label, key in MODEL_ROWS:
        if any(m.get("model") for *_, m in cols):
            lines.append(f"{label:<38}" + "".join(f"{_num((m.get('model') or {}).get(key)):>19}" for *_, m in cols))
    for p, d in res["paths"].items():
        for g, m in d["groups"].items():
            lines.append(f"{p} {g} by kind (slot accuracy / question accuracy / first mention right): " + ", ".join(
                f"{k} {_fmt(v['slot_accuracy'])}/{_fmt(v['question_accuracy'])}/{_fmt(v['first_mention_right'])}"
                for k, v in m["by_kind"].items()))
            lines.append(f"{p} {g} question accuracy same-language {_fmt(m['by_relation']['same-language']['question_accuracy'])}, "
                         f"cross-lingual {_fmt(m['by_relation']['cross-lingual']['question_accuracy'])}")
        lines.append(f"{p}: extractor days {d['extractor_days']}; {d['seconds']} s")
    return "\n".join(lines)


def markdown(res: dict, command: str) -> str:
    cols = _groups(res)
    md = [f"# fact_updates: facts, supersession and retrieval ({res['cases']} cases)", "", f"`{command}`", "",
          f"{res['cases']} cases, {res['slots']} slots, {res['questions']} questions from `{res['dataset']}`; embedder "
          f"`{res['embedder']}`; {res['seconds']} s in all. Each case: a fresh workspace, its days as JSONL chat exports, "
          "the clock pinned to the end of the last day (`AGENTOS_NOW`), the digest's plain stage functions day by day "
          "(`digest.stages.digest_day`, the stages `agentos backfill` runs, without Prefect), `index.stages.rebuild`, "
          "then the current facts as `agentos facts list --json` reads them and every question through `query.ask.ask` "
          "(what `agentos query --json` returns).", "",
          f"Sets: {res['set_rule']}. " + ", ".join(f"`{s}`: {len(ids)} cases" for s, ids in res["sets"].items()) + ".", "",
          "| metric | " + " | ".join(f"{p} {g}" for p, g, _ in cols) + " |", "|---" * (len(cols) + 1) + "|",
          "| cases / slots / questions | " + " | ".join(f"{m['cases']} / {m['slots']} / {m['questions']}" for *_, m in cols) + " |",
          "| current facts at the end | " + " | ".join(f"{m['current_facts']}" for *_, m in cols) + " |"]
    for label, key in ROWS:
        md.append(f"| {label.strip()} | " + " | ".join(_fmt(_get(m, key)) for *_, m in cols) + " |")
    md.append("| seconds of digest per day | " + " | ".join(_num(m.get("seconds_per_day")) for *_, m in cols) + " |")
    if any(m.get("model") for *_, m in cols):
        md += [f"| {label} | " + " | ".join(_num((m.get("model") or {}).get(key)) for *_, m in cols) + " |" for label, key in MODEL_ROWS]
        md += ["", "Operations dropped by validation, by reason: " + "; ".join(
            f"{p} {g}: " + (", ".join(f"{k} {v}" for k, v in m["model"]["dropped"].items()) or "none")
            for p, g, m in cols if m.get("model")) + "."]
    for p, d in res["paths"].items():
        md += ["", f"## {p}: by kind, language and question language", "",
               "Extractor per digested day: " + ", ".join(f"{k}: {v} days" for k, v in d["extractor_days"].items()) + f"; {d['seconds']} s ({d['seconds_per_case']} s per case).", ""]
        for title, key, names in (("kind", "by_kind", KINDS), ("language", "by_lang", LANGS)):
            md += [f"| {title} | set | slots | slot accuracy | stale | case-wide accuracy | case-wide stale | false facts | "
                   "questions | question accuracy | answer in context | first mention right | no_history |", "|---" * 13 + "|"]
            for name in names:
                for g in d["groups"]:
                    m = d["groups"].get(g, {}).get(key, {}).get(name)
                    if m:
                        md.append(f"| {name} | {g} | {m['slots']} | {_fmt(m['slot_accuracy'])} | {_fmt(m['stale'])} | "
                                  f"{_fmt(m['case_wide']['slot_accuracy'])} | {_fmt(m['case_wide']['stale'])} | "
                                  f"{_fmt(m['false_facts'])} | {m['questions']} | {_fmt(m['question_accuracy'])} | "
                                  f"{_fmt(m['answer_in_context'])} | {_fmt(m['first_mention_right'])} | {_fmt(m['no_history'])} |")
            md.append("")
        md += ["| questions | set | n | question accuracy | answer hit | stale shown | answer in context | first mention right | "
               "no_history |", "|---" * 9 + "|"]
        for r in ("same-language", "cross-lingual"):
            for g in d["groups"]:
                m = d["groups"].get(g, {}).get("by_relation", {}).get(r)
                if m and m["questions"]:
                    md.append(f"| {r} | {g} | {m['questions']} | {_fmt(m['question_accuracy'])} | {_fmt(m['answer_hit'])} | "
                              f"{_fmt(m['stale_shown'])} | {_fmt(m['answer_in_context'])} | {_fmt(m['first_mention_right'])} | "
                               f"{_fmt(m['no_history'])} |")
        md += ["", f"### {p}: failed slots and questions", "", "| case | set | kind | slot or question | what happened |",
               "|---|---|---|---|---|"]
        for c in d["cases"]:
            for s in c["slots"]:
                if not s["keyed"]["ok"]:
                    why = []
                    if s["keyed"]["current_hit"] is False:
                        why.append(f"no current fact holds {' / '.join(s['current'])}")
                    if s["keyed"]["stale"]:
                        why.append(f"a current fact holds {' / '.join(s['past'])}")
                    md.append(f"| {c['id']} | {c['set']} | {c['kind']} | slot: {_cell(s['slot'])} | {_cell('; '.join(why))} |")
            for q in c["questions"]:
                if not q["ok"] or q.get("first_right") is False:
                    why = [q["status"]] + (["answer not among the returned facts"] if q["answer_hit"] is False else []) \
                        + (["a stale value returned"] if q["stale_shown"] else []) \
                        + (["the first mention is wrong"] if q.get("first_right") is False else [])
                    md.append(f"| {c['id']} | {c['set']} | {c['kind']} | {_cell(q['q'])} | {_cell(', '.join(why))} |")
    head = {k: v for k, v in res.items() if k not in ("paths", "method", "sets")}
    md += ["", "## Method", "", res["method"], "## Every figure (JSON: the run, then each path's groups, one per line)", "",
           "```json", json.dumps(head, ensure_ascii=False)]
    md += [json.dumps({"path": p, "group": g, **m}, ensure_ascii=False) for p, d in res["paths"].items() for g, m in d["groups"].items()]
    md += ["```", ""]
    return "\n".join(md)


def _cell(text: str) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")
