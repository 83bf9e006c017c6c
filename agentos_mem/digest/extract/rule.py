"""What a rule is and how one is applied to a sentence.

A rule family is a tuple of :class:`Rule` records (built with :func:`indexed`); :func:`apply_rules` runs a
family over one sentence and returns :class:`Found` items, which the engine turns into candidates. Every
rule carries a few literal keywords checked first (a substring test is far cheaper than a regex search).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Callable

from agentos_mem.digest.extract.normalize import HAS_CJK, Sentence
from agentos_mem.digest.extract.objects import OBJ_TAIL_NOW, cut, split_list, trim
from agentos_mem.digest.extract.vocab import inherits_i, is_question

# predicate -> (nature, multi_valued, base confidence)
PREDICATES: dict[str, tuple[str, bool, float]] = {
    "name": ("fact", False, 0.9),
    "nickname": ("fact", False, 0.9),
    "role": ("fact", False, 0.9),
    "works_at": ("fact", False, 0.9),
    "lives_in": ("fact", False, 0.9),
    "from": ("fact", False, 0.9),
    "value": ("fact", False, 0.9),
    "likes": ("preference", True, 0.85),
    "dislikes": ("preference", True, 0.85),
    # Multi-valued: "用中文回答" and "Go over Java" are different preferences, neither replaces the other.
    # The rejected side of a comparison is kept as prefers_not, so a later "you seem to prefer Java" meets it.
    "prefers": ("preference", True, 0.85),
    "prefers_not": ("preference", True, 0.85),
    "plans": ("event", True, 0.8),
    "decided": ("fact", True, 0.85),
    "event": ("event", True, 0.8),
    "stopped": ("event", True, 0.85),  # the store closes the facts naming the thing; the stop itself is history
    "does": ("fact", True, 0.85),  # what one practises, learns or has taken up: several at once
    # a change told in free words ("our pipelines run on GitLab CI now"): the sentence itself; it renews the fact it replaces
    "states": ("fact", True, 0.8),
    "has": ("fact", True, 0.85),  # what one has, earned or took in (a pet, a certificate, a car): a new one adds
    "thinks": ("opinion", True, 0.6),
    "rule": ("axiom", True, 0.9),
}
CORRECTABLE = {"name", "nickname", "role", "works_at", "lives_in", "from", "value"}  # what a correction turn upgrades
CONF_CORRECTED = 0.95
CONF_INFERRED = 0.6


def indexed(*rules: Rule) -> tuple[tuple[Rule, bool, tuple[str, ...]], ...]:
    """Rules with their language and pre-check keywords, computed once at import (the keywords skip most
    regex searches: a sentence without "喜" or "爱" cannot say 我喜欢)."""
    return tuple((r, r.chinese, tuple(k for k in r.keys.split("|") if k)) for r in rules)


@dataclass(frozen=True)
class Rule:
    predicate: str
    regex: re.Pattern[str]
    group: str = "obj"
    lists: bool = False  # split "A、B和C" / "A, B and C" into one candidate per item
    keep_tail: bool = False  # object runs to the sentence end (opinions), not the clause end
    check: Callable[[str], bool] | None = None  # extra validation of the (normalised) object
    after_i: bool = False  # a clause with its 我 dropped: an earlier clause of the sentence must start with 我
    keys: str = ""  # "a|b": cheap pre-check, one of these must occur in the (lower-cased) sentence

    @property
    def chinese(self) -> bool:
        """A Chinese rule (its pattern spells CJK words): skipped for sentences without CJK, and vice versa."""
        return bool(HAS_CJK.search(self.regex.pattern))


def zh(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern)


def en(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern, re.I)


def short(limit: int) -> Callable[[str], bool]:
    return lambda o: len(o) <= limit


@dataclass
class Found:
    """One extraction inside a sentence, before it becomes a Candidate."""

    subject: str
    predicate: str
    obj: str
    span: tuple[int, int]  # in the sentence: used to keep later rule families off text already read
    explicitness: str = "stated"
    confidence: float | None = None
    technical: bool = False
    event_date: str | None = None
    possessive: bool = False  # a value read from "my X" / "我的X"
    change: bool = False  # a value read from a change ("升级到", "moved to"): its sentence also names the old value
    replaces: str | None = None  # the old value a change names ("从Vim换到Helix"): the store continues the slot that holds it
    ended: bool = False  # held before and holds no more ("I used to live in Boston"): stored as history
    anchored: bool = False  # read by its shape alone (family ``anchored``): a sentence pattern's reading of the span wins
    starts: str | None = None  # ISO date a value holds from, when the sentence puts it after the day ("4月1号起", "from next Monday")
    unnamed: bool = False  # a time read by its shape with no attribute named: sure only as a correction's new value
    renews: bool = False  # its sentence tells a change (digest.extract.statements.renews): it may replace a fact no rule ties it to


def overlaps(span: tuple[int, int], claimed: list[tuple[int, int]]) -> bool:
    return any(span[0] < b and a < span[1] for a, b in claimed)


# English "I"/"we" must open a clause (or follow a conjunction): "things we enjoy doing" is a relative clause.
_EN_I_AT = re.compile(r"(?:I|we)\b", re.I)
_EN_LEAD_OK = re.compile(
    r"(?:^|[,;:(]|\b(?:and|but|so|because|also|actually|well|haha|yes|yeah|oh|really|now|though|although|since|as|then|when|while|um|personally|"
    r"honestly|however|besides|today|tonight|recently|lately|sometimes|usually|often|always|still|ok|okay|sure|hi|hello|hey|plus|anyway|generally|"
    r"mostly|i\s+(?:think|know|guess|feel|believe|mean|admit|must\s+say)(?:\s+that)?|and\s+that's\s+why))\s*$",
    re.I,
)
# A plan said in fear or hope is not a plan: "I'm afraid I'll forget my lines", "I hope we will ...".
_NOT_A_PLAN = re.compile(
    r"afraid|worried|scared|fear|hope|wish|sometimes|often|usually|every|担心|害怕|怕|希望|但愿|恐怕|有时|经常|每",
    re.I,
)


def _lead_ok(sent: Sentence, m: re.Match[str], predicate: str) -> bool:
    s = sent.s
    ca = sent.clauses[sent.clause_at(m.start())][0]
    before = s[ca : m.start()]
    if predicate == "plans" and _NOT_A_PLAN.search(s, 0, m.start()):
        return False
    if _EN_I_AT.match(s, m.start()) and not _EN_LEAD_OK.search(before):
        return False
    return True


def apply_rules(sent: Sentence, rules: tuple[tuple[Rule, bool, tuple[str, ...]], ...], subject: str) -> list[Found]:
    out: list[Found] = []
    for rule, chinese, keys in rules:
        if not (sent.cjk if chinese else sent.latin):
            continue
        if keys:
            low = sent.lower
            for k in keys:
                if k in low:
                    break
            else:
                continue
        pos = 0
        while pos < len(sent.s):
            m = rule.regex.search(sent.s, pos)
            if not m:
                break
            # the object ends at its clause, so "我喜欢猫，我也喜欢狗" / "I love X, but I also enjoy Y" match twice
            pos = max(_rule_match(sent, rule, m, subject, out), m.start() + 1)
    return out


def _rule_match(sent: Sentence, rule: Rule, m: re.Match[str], subject: str, out: list[Found]) -> int:
    """Turn one rule match into findings (appended to ``out``); returns where the next search may start."""
    s = sent.s
    group = next((g for g in (rule.group, "obj2", "obj3") if g in m.groupdict() and m.group(g) is not None), None)
    if group is None or is_question(sent, sent.clause_at(m.start())) or not _lead_ok(sent, m, rule.predicate):
        return m.start() + 1
    if rule.after_i and not inherits_i(sent, m.end()):
        return m.start() + 1
    oa, ob = m.start(group), m.end(group)
    if rule.keep_tail:
        # opinions: to the end of the sentence, dropping trailing question clauses
        for ci in range(sent.clause_at(oa) + 1, len(sent.clauses)):
            if is_question(sent, ci):
                ob = min(ob, sent.clauses[ci][0])
                break
    else:
        ob = cut(sent, oa, ob, lists=rule.lists)
    oa, ob = trim(s, oa, ob)
    if not HAS_CJK.search(s, oa, ob):
        tail = OBJ_TAIL_NOW.search(s, oa, ob)
        if tail:
            ob = tail.start()
    if ob <= oa:
        return m.start() + 1
    spans = split_list(sent, oa, ob) if rule.lists else [(oa, ob)]
    for ia, ib in spans:
        ia, ib = trim(s, ia, ib)
        if ib <= ia or (rule.check and not rule.check(s[ia:ib])):
            continue
        obj = sent.orig(ia, ib)
        if obj:
            out.append(Found(subject, rule.predicate, obj, (m.start(), ob)))
    return ob
