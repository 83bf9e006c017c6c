"""The engine: how the rule families are applied to a turn, sentence by sentence, and how candidates are built.

Rule families run in a fixed order (identity, preferences, rules of conduct, corrections, decisions, plans,
values, opinions) and a later family never reads text an earlier one already used, so "我的爱好是X" is a
preference, not a value. Then corrections and hedges set explicitness, and dates turn a sentence into an event.
Assistant turns only restate the user ("你的X是Y", "you seem to prefer X"): inferred, never stated.
Nothing here holds mutable state between calls.
"""

from __future__ import annotations

import re
from datetime import date

from agentos_mem.digest.extract.attributes import attribute_phrase
from agentos_mem.digest.extract.axioms import RULES_AXIOM
from agentos_mem.digest.extract.corrections import (
    CORRECTION,
    CORRECTION_KEYS,
    bare_correction,
    not_but,
    weak_correction,
)
from agentos_mem.digest.extract.decisions import DECISIONS
from agentos_mem.digest.extract.events import dated_events
from agentos_mem.digest.extract.identity import IDENTITY
from agentos_mem.digest.extract.normalize import has_any, Sentence, sentences, Source
from agentos_mem.digest.extract.objects import evidence_of
from agentos_mem.digest.extract.opinions import OPINIONS
from agentos_mem.digest.extract.pasts import past_facts
from agentos_mem.digest.extract.people import people_en, people_places
from agentos_mem.digest.extract.plans import FUTURE_PLANS, PLANS
from agentos_mem.digest.extract.preferences import (
    PREFERENCES,
    favorites,
    RATHER,
    USE_PREFIX,
    rejected_alternative,
)
from agentos_mem.digest.extract.restatements import ASSISTANT_PREFS
from agentos_mem.digest.extract.rule import (
    CORRECTABLE,
    PREDICATES,
    CONF_CORRECTED,
    CONF_INFERRED,
    apply_rules,
    Found,
    overlaps,
)
from agentos_mem.digest.extract.activities import ACTIVITIES
from agentos_mem.digest.extract.anchored import OTHERS, anchored_facts, anchored_person
from agentos_mem.digest.extract.people import EN_RELATIONS, ZH_RELATIONS, pronoun_person
from agentos_mem.digest.extract.changes import change_facts
from agentos_mem.digest.extract.named import named_facts
from agentos_mem.digest.extract.statements import statement_facts, left_behind, renews
from agentos_mem.digest.extract.stops import stop_facts
from agentos_mem.digest.extract.subjects import NAME_ATTRIBUTE, owned, subject_of_speaker
from agentos_mem.digest.extract.values import value_facts
from agentos_mem.digest.extract.vocab import asks, hedged, hypothetical
from agentos_mem.vocabulary.dates import find_date
from agentos_mem.kernel.domain import Candidate, Turn


def _speaker_sentence(sent: Sentence, subject: str, day: date, correction: bool, recent: list[str] | None = None) -> list[Found]:
    """Everything a user or a named participant says in one sentence."""
    if hypothetical(sent):
        return []
    found: list[Found] = []
    claimed: list[tuple[int, int]] = []

    def take(items: list[Found]) -> None:
        fresh = [f for f in items if not overlaps(f.span, claimed)]
        for f in fresh:
            _trim_attribute(sent, f, subject)
        found.extend(fresh)
        claimed.extend(f.span for f in fresh)

    take(past_facts(sent, subject))
    take(apply_rules(sent, IDENTITY, subject))
    take(people_places(sent, recent))
    take(people_en(sent, recent))
    take(favorites(sent, subject))
    take(apply_rules(sent, PREFERENCES, subject))
    take(apply_rules(sent, RULES_AXIOM, subject))
    take(owned(not_but(sent), subject))
    take(apply_rules(sent, DECISIONS, subject))
    take(change_facts(sent, subject))
    take(stop_facts(sent, subject))
    take(apply_rules(sent, ACTIVITIES, subject))
    take(apply_rules(sent, PLANS, subject))
    dated = find_date(sent.s, day)
    if dated and dated[0] > day.isoformat():
        take(apply_rules(sent, FUTURE_PLANS, subject))
    take(owned(value_facts(sent, recent=recent), subject))
    take(apply_rules(sent, OPINIONS, subject))
    take(named_facts(sent, subject))  # a construction says which slot a name fills; a shape alone says less
    weak = weak_correction(sent)
    # a time naming nothing is sure only as a correction's new value (the store finds what it corrects by its type);
    # anything else leaves the sentence as what was said
    take([f for f in anchored_facts(sent, subject, day) if not f.unnamed or correction or weak is not None])
    if not found and not dated:
        take(statement_facts(sent, subject))

    for f in found:
        nature = PREDICATES[f.predicate][0]
        marked = correction or (weak is not None and weak.start() <= f.span[0])
        if f.explicitness == "corrected" or (marked and f.predicate in CORRECTABLE):
            f.explicitness = "corrected"
        if nature not in ("opinion", "axiom") and hedged(sent, f.span[0], f.span[1]):
            f.explicitness, f.confidence = "inferred", CONF_INFERRED

    # what someone unnamed says or wants ("有人说周会改到周五", "someone asked to ship on Friday") is not the speaker's
    found = [f for f in found if not OTHERS.match(sent.s, sent.clauses[sent.clause_at(f.span[0])][0])]
    # A value said after a later date ("4月1号起……改坐14号线", "from next Monday the standup is at 10am", "明天服务器
    # 升级到8C16G") holds from that date: until then the value before it is current.
    for f in found:
        if f.predicate in CORRECTABLE and f.starts is None and (before := find_date(sent.s[: f.span[0]], day)):
            if before[0] > day.isoformat():
                f.starts = before[0]
    dated_events(sent, found, subject, dated)
    for f in found:  # "starting next month I'm moving to the ads ranking team": it holds from then, not now
        if f.predicate == "event" and f.event_date and f.event_date > day.isoformat() and f.starts is None and renews(sent):
            f.starts = f.event_date
    if found and not any(f.renews for f in found) and renews(sent):
        for f in found:  # "Last month I joined Stripe", "现在在拼多多做运营": a value or event that tells a change
            f.renews = f.predicate in CORRECTABLE or f.predicate == "event"
    for f in found:  # "She left Google last month and joined Meta": the story names what it ends
        if f.renews and f.predicate in ("event", "states") and f.replaces is None:
            f.replaces = left_behind(sent)
    _whose(sent, found, subject, recent)
    return found


def _trim_attribute(sent: Sentence, f: Found, speaker: str) -> None:
    """A value claim's attribute, trimmed in place to its noun phrase (``attributes.attribute_phrase``: "相机一直" -> 相机)."""
    if f.predicate == "value" and f.subject != speaker:
        value_at = sent.s.find(f.obj, f.span[0])
        f.subject = attribute_phrase(sent.s, f.subject, value_at if value_at >= 0 else f.span[1])


# A sentence that opens on he or she ("She left Google last month and joined Meta", "他不学钢琴了"): its story is the
# person last spoken of. A relation word before a practice in its clause ("我儿子在学钢琴"): the practice is theirs.
_OPENS_ON_PERSON = re.compile(r"\s*(?:(?:she|he)\b|(?:她|他)(?!们))", re.I)


_RELATION_IN = re.compile(rf"{ZH_RELATIONS}|\b(?:{EN_RELATIONS})\b", re.I)


# A sentence opening on a given name ("Priya relocated to Vancouver", "老周转岗了"): the person of that name spoken of
# before ("coworker Priya", "同事老周"), when there is one.
_OPENS_ON_NAME = re.compile(r"\s*(?P<n>(?-i:[A-Z][a-z]{2,})|[小老阿][\u4e00-\u9fff])(?![a-z])")


def _named_person(sent: Sentence, recent: list[str]) -> str | None:
    m = _OPENS_ON_NAME.match(sent.s)
    if not m:
        return None
    name = m.group("n")
    return next((p for p in reversed(recent) if re.search(rf"(?<![A-Za-z]){re.escape(name)}(?![a-z])", p)), None)


def _whose(sent: Sentence, found: list[Found], subject: str, recent: list[str] | None) -> None:
    opens = _OPENS_ON_PERSON.match(sent.s)
    who = (pronoun_person(opens.group(0), recent) if opens and recent else None) or (_named_person(sent, recent) if recent else None)
    if who:
        for f in found:
            if f.subject == subject and f.predicate in ("event", "states"):
                f.subject = who
    for f in found:
        if f.predicate == "does" and f.subject == subject:
            ca = sent.clauses[sent.clause_at(f.span[0])][0]
            who = anchored_person(sent, f.span[0])
            if who and _RELATION_IN.search(sent.s, ca, f.span[0]):
                f.subject = who


def _assistant_sentence(sent: Sentence) -> list[Found]:
    """Assistant restatements about the user; never a stated fact."""
    if hypothetical(sent):
        return []
    found = apply_rules(sent, ASSISTANT_PREFS, "user")
    claimed = [f.span for f in found]
    for v in value_facts(sent, assistant=True):
        if overlaps(v.span, claimed):
            continue
        if NAME_ATTRIBUTE.fullmatch(v.subject):
            v.subject, v.predicate = "user", "name"
        found.append(v)
    for f in found:
        f.explicitness, f.confidence = "inferred", CONF_INFERRED
    return found


def _candidate(turn: Turn, day: date, f: Found, evidence: str) -> Candidate:
    nature, multi, base = PREDICATES[f.predicate]
    confidence = f.confidence
    if confidence is None:
        confidence = CONF_CORRECTED if f.explicitness == "corrected" else base
    return Candidate(
        subject=f.subject.strip(),
        predicate=f.predicate,
        object=f.obj.strip(),
        nature=nature,
        confidence=confidence,
        explicitness=f.explicitness,
        source_file=turn.source_file,
        line_start=turn.line_start,
        line_end=turn.line_end,
        # A value that starts after the day holds from its start (midnight); before it, the old value is current.
        observed_at=f"{f.starts}T00:00:00" if f.starts and f.starts > day.isoformat() else turn.at(day),
        speaker=turn.speaker,
        technical=f.technical,
        multi_valued=multi,
        event_date=f.event_date,
        extractor="rules",
        evidence=evidence,
        replaces=f.replaces,
        ended=f.ended,
        renews=f.renews,
    )


def _extract_turn(turn: Turn, day: date, pos: int, anchors: list[tuple[int, Candidate]], people: list[str] | None = None) -> list[Candidate]:
    text = turn.text or ""
    if not text.strip():
        return []
    src = Source(text)
    out: list[Candidate] = []
    seen: set[tuple[str, str, str]] = set()
    assistant = turn.role == "assistant"
    subject = subject_of_speaker(turn)
    correction = not assistant and has_any(src.norm.lower(), CORRECTION_KEYS) and bool(CORRECTION.search(src.norm))
    for sent in sentences(src):
        if assistant:
            found = _assistant_sentence(sent)
        else:
            found = _speaker_sentence(sent, subject, day, correction, people)
            if correction or weak_correction(sent):
                # "我记错了，是 M1 Pro，内存倒确实是 32G": a bare fix beside a value of its own
                fix = bare_correction(sent, anchors, pos)
                if fix:  # the fix knows which value it corrects; a value read by its shape alone does not
                    found = [f for f in found if not (f.anchored and overlaps(f.span, [fix.span]))]
                if fix and not overlaps(fix.span, [f.span for f in found if f.predicate in CORRECTABLE]):
                    found.append(fix)
        evidence = evidence_of(sent)
        for f in found:
            key = (f.subject, f.predicate, f.obj)
            if key in seen:
                continue
            seen.add(key)
            rejected = None
            if f.predicate == "prefers":  # "Go 而不是 Java", "use Go than Java": the object is Go, Java is turned down
                parts = RATHER.split(f.obj, maxsplit=1)
                if len(parts) == 2 and parts[0].strip() and parts[1].strip():
                    f.obj, rejected = USE_PREFIX.sub("", parts[0]).strip(), parts[1].strip(" .。")
            cand = _candidate(turn, day, f, evidence)
            if assistant and asks(sent, f.span[0]):
                # "你的数据库端口是 5432，对吧？" asks, it does not claim: no fact, but a user's bare
                # "不对，是 5433" that follows still knows which value it corrects.
                if not cand.multi_valued:
                    anchors.append((pos, cand))
                continue
            out.append(cand)
            if not cand.multi_valued:
                anchors.append((pos, cand))
            if f.predicate == "prefers" and not assistant:
                alt = rejected or rejected_alternative(sent.orig(0, len(sent.s)), cand.object)
                if alt and (f.subject, "prefers_not", alt) not in seen:
                    seen.add((f.subject, "prefers_not", alt))
                    out.append(Candidate(**{**cand.to_dict(), "predicate": "prefers_not", "object": alt}))
    return out


def extract_candidates(turns: list[Turn], day: date, *, people: list[str] | None = None) -> list[Candidate]:
    """Candidate facts from one day's turns, in turn and sentence order.

    ``day`` dates the turns (``observed_at``) and resolves relative dates ("昨天", "next week").
    A subjectless correction ("不对，是5433") applies to the latest single-valued candidate of the
    preceding few turns of this same list. ``people``: the others earlier days spoke of, latest last.
    """
    out: list[Candidate] = []
    anchors: list[tuple[int, Candidate]] = []  # single-valued candidates so far, with their turn position
    # the third persons spoken of so far, from earlier days (``people``) and these turns: a later 她 / 他 is the last
    people = list(people or [])
    for pos, turn in enumerate(turns):
        out.extend(_extract_turn(turn, day, pos, anchors, people if turn.role == "user" else None))
    return out
