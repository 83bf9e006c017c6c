"""Without a model, the rules do no harm (issue 26): a fact the user may have changed in words no rule reads is not
served as plainly current.

After the day's candidates are applied, every sentence of the user's that the rules read no value of a known slot from
(a self-disclosure kept as a statement, a dated story, a hedged or negated word, a word about a thing, a value the store
tied to no earlier slot: see ``sources`` and ``digest.extract.disclosures.kind_of``; never a question, a wish, a joke,
a quote or someone else's words) is compared with the single-valued facts and the statements told on earlier days and
not said again since. The one it is about is found by meaning (``SubjectSlots.nearest`` with ``strict``: the same
person, then the whole sentences by the workspace's embedder; the fact's sentence must stand clear of every everyday
sentence of the background and of the person's other facts). It is flagged ``may_have_changed`` on the sentence's day,
with the sentence beside it, only when the sentence could hold another value of that slot (``could_hold``):

- the fact's value has a type (a clock time, a weekday, a version, a spec, a count, a quantity ...:
  ``vocabulary.valuetypes``; a statement: the types of the values it tells) and the sentence holds a value of that type
  that the fact does not; a value of free text (a name, a place) has no type to tell another value of it by, and is
  never flagged on meaning alone (a later word on the same topic naming something new is as often an addition or a
  repeat as a change);
- the sentence does not say the fact's value again (that confirms it);
- a sentence that adds rather than changes ("also", "又", "another": ``statements._ADDS``) flags nothing.

A sentence that tells a change (``statements.renews``) was already given to the store to close the fact it replaces
(``FactStore._renew``); whatever it left open is judged here like any other. Without an embedder, or on a day a chat
model read, nothing is flagged. The flags of a day are written in place of that day's earlier ones
(``storage.drift.set_day``); the read side serves them (``storage.drift.as_served``).
"""

from __future__ import annotations

import re
from datetime import date

from agentos_mem.digest.extract.anchored import anchored_person
from agentos_mem.digest.extract.disclosures import kind_of, unread
from agentos_mem.digest.extract.events import event_object
from agentos_mem.digest.extract.statements import ADDS
from agentos_mem.kernel.domain import Candidate, Turn
from agentos_mem.vocabulary.subjects import names_whole
from agentos_mem.vocabulary.valuetypes import find_values, value_key, value_type
from agentos_mem.storage.drift import STATEMENT

# Facts a later word may leave in doubt: single values, and statements (a sentence no rule read: what it told may be what
# the later one changes). A story (event, plan), a stop or a list item (likes, does: a new one adds) is never flagged.
_NOT_FLAGGED = ("stopped", "event", "plans")
_NUMBER = re.compile(r"(?<![\w.])\d+(?:\.\d+)?(?![\w.])")  # a number standing alone ("port 5433")


def _typed(text: str) -> dict[str, set[str]]:
    """The typed values of ``text`` by type (``vocabulary.valuetypes``), as the keys values are compared by; a number standing
    alone is of type ``number``."""
    out: dict[str, set[str]] = {}
    for a, b, kind in find_values(text):
        out.setdefault(value_type(text[a:b]) or kind, set()).add(value_key(text[a:b]))
    for m in _NUMBER.finditer(text):
        out.setdefault("number", set()).add(m.group(0))
    return out


def could_hold(text: str, row: dict) -> bool:
    """Whether ``text`` could tell another value of the slot ``row`` holds: it holds a value of the type of the fact's
    value (a statement's: of one of the types of the values it tells) that the fact does not hold, and does not say the
    fact's value again. A value of free text (a name, a place) has no type to tell another value of it by: never."""
    new = _typed(text)
    if row["predicate"] == "states":
        return any(new.get(kind, set()) - keys for kind, keys in _typed(row["object"]).items())
    kind = value_type(row["object"])
    if kind is None or names_whole(text.casefold(), row["object"]):
        return False
    return bool(new.get(kind, set()) - {value_key(row["object"])})


def _tied(store, fact_id: int | None, iso: str) -> bool:
    """Whether the store tied a candidate to what it knew: it reinforced or superseded a fact (or was not applied);
    False for a fact first told today that replaced nothing (a value the rules read under a slot of its own)."""
    row = store.get(fact_id) if fact_id is not None else None
    return row is None or not (row["version"] == 1 and row["source_day"] == iso and row["reinforcements"] == 0)


def _said(row: dict) -> str:
    return row["evidence"] or f"{row['subject']} {row['object']}"


def sources(turns: list[Turn], day: date, candidates: list[Candidate], tied: list[bool]) -> list[tuple[Turn, str, str]]:
    """(turn, sentence, whose) of the day's sentences no rule read a value of a known slot from: none of the day's
    candidates holds them but a story (event), a kept statement, or a single value the store tied to no earlier slot
    (``tied`` False: it superseded and reinforced nothing). ``whose``: the person the sentence is about, or ``user``."""
    valued = [c for c, t in zip(candidates, tied) if c.predicate not in ("event", "states") and (t or c.multi_valued)]
    out = []
    for turn, sent in unread(turns, valued):
        if kind_of(sent, day) is None or ADDS.search(sent.s):
            continue
        text = event_object(sent)
        if text:
            out.append((turn, text, anchored_person(sent, len(sent.s)) or "user"))
    return out


def flag_day(store, user: str, day: date, turns: list[Turn], candidates: list[Candidate], fact_ids: list[int | None], slots) -> int:
    """Flag the facts the day's unread sentences may have changed (module docstring), in place of the day's earlier
    flags; returns how many facts are flagged for the day. ``slots``: the digest's ``SubjectSlots`` (its ``nearest``
    needs the embedder; without one nothing is flagged)."""
    nearest = getattr(slots, "nearest", None)
    if any(c.extractor not in ("rules", STATEMENT) for c in candidates):  # a model read the day: not the rules' to judge
        return store.set_drift(user, day, [])
    iso = day.isoformat()
    targets = [r for r in store.as_of(user, day) if r["status"] == "active" and r["valid_to"] is None
               and (not r["multi_valued"] or r["predicate"] == "states") and r["predicate"] not in _NOT_FLAGGED
               and r["source_day"] < iso and r["last_seen_at"][:10] < iso]
    # the statement kept from a sentence, by its lines and text: the flag goes with it when it is retracted or forgotten
    kept = {(c.source_file, c.line_start, c.object): fid for c, fid in zip(candidates, fact_ids)
            if c.extractor == STATEMENT and fid is not None}
    flags: dict[int, dict] = {}
    if nearest is not None and targets:
        for turn, text, whose in sources(turns, day, candidates, [_tied(store, fid, iso) for fid in fact_ids]):
            options = [r for r in targets if slots.related(whose, r["subject"], True)]
            if not options:
                continue
            chosen = nearest(text, [(r["id"], _said(r)) for r in options], strict=True)
            row = next((r for r in options if r["id"] == chosen), None)
            if row is None or not could_hold(text, row):
                continue
            flags[row["id"]] = {"fact_id": row["id"], "changed_at": turn.at(day), "newer": text, "source_file": turn.source_file,
                                "line_start": turn.line_start, "line_end": turn.line_end,
                                "newer_fact": kept.get((turn.source_file, turn.line_start, text))}
    store.set_drift(user, day, list(flags.values()))
    return len(flags)
