"""What the rules leave unread: the user's sentences no rule family read a fact from, and which of them say something
of the speaker's own life or work (issue 26).

Two uses, both by the classes of words every family already respects (questions, hypotheticals, hedges, wishes and
plans, jokes and examples, quotes, someone else's words, chat about the chat), never by topics or phrases:

- a **self-disclosure** ("I've been doing the Sunday long runs with a club from work", "我们组的周报都交给小王整理了"),
  or a plain word about a thing ("everything builds on GitHub Actions now"): a statement of the user's, not a
  question, not a hypothetical, not a wish, not hedged, not a joke or a quote, not someone else's; no rule reads an
  attribute and a value from it, so it is kept as a dated statement
  (``states``, the sentence itself, masked by the store; ``extractor`` :data:`STATEMENT`). The rules are unsure of
  what it means, so it is never a plain current fact: it is served as what the user said on that day
  (``storage.drift``: status ``statement``), which retrieval reaches and which supersedes nothing;
- a **later word on a topic** (a self-disclosure, or a hedged one, or one about a thing rather than the speaker):
  what ``digest.drift`` compares, by meaning, with the facts told on earlier days, to flag the one it may have
  changed.

``unread(turns, candidates)`` finds the sentences; ``kind_of(sent, day)`` says which of the two a sentence is (or
neither); ``disclosures(turns, day, candidates)`` turns the self-disclosures and the plain words about a thing (a
"word" that is not hedged) into statements: everything the user said of now is then in a topic thread, as a claim or as
what was said that day (issue 40).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from datetime import date

from agentos_mem.digest.extract.anchored import NOT_REAL, OTHERS, QUOTES, TENTATIVE, anchored_person
from agentos_mem.digest.extract.events import CHAT_BOILERPLATE, GREETING, NOTHING, event_object
from agentos_mem.digest.extract.normalize import Sentence, sentences, Source
from agentos_mem.digest.extract.objects import evidence_of
from agentos_mem.digest.extract.people import EN_RELATIONS, ZH_RELATIONS
from agentos_mem.digest.extract.rule import PREDICATES
from agentos_mem.digest.extract.statements import has_noun, named
from agentos_mem.digest.extract.subjects import NOT_MINE, subject_of_speaker
from agentos_mem.digest.extract.vocab import CLAUSE_I, hedged, hypothetical, is_question, is_technical
from agentos_mem.vocabulary.dates import find_date
from agentos_mem.kernel.domain import Candidate, Turn
from agentos_mem.storage.drift import STATEMENT

# A clause the speaker opens on themself: "我……" / "我们……" (not 我妈, 我老公: a relation after 我 is that person),
# "I …", "we …", "my X …" / "our X …" (not "my wife …"). Discourse words may come first ("so", "嗯", "其实").
_ZH_RELATION_AFTER_I = re.compile(rf"\s*(?:的)?(?:{ZH_RELATIONS})")
_EN_LEAD = r"\s*(?:(?:so|and|but|well|ok|okay|yeah|yep|also|anyway|honestly|actually|btw|by\s+the\s+way|now|these\s+days|lately)[,\s]+)*"
_EN_SELF = re.compile(rf"{_EN_LEAD}(?:(?:I|we)\b|(?:my|our)\s+(?!(?:{EN_RELATIONS})s?\b)[A-Za-z])", re.I)


def _opens_on_self(sent: Sentence) -> bool:
    s = sent.s
    for a, b in sent.clauses:
        if sent.cjk:
            m = CLAUSE_I.match(s, a, b)
            if m and not _ZH_RELATION_AFTER_I.match(s, m.end(), b):
                return True
        if sent.latin and _EN_SELF.match(s, a, b):
            return True
    return False


def kind_of(sent: Sentence, day: date | None = None) -> str | None:
    """``"disclosure"``: a self-disclosure to keep as a statement; ``"word"``: a later word on a topic only (hedged, or
    about a thing, not the speaker); None: neither (a question, a hypothetical, a wish, a joke or an example, a quote,
    someone else's words, chat about the chat, a reply too short to say anything, something that starts after
    ``day``)."""
    s = sent.s
    if hypothetical(sent) or any(is_question(sent, ci, values=True) for ci in range(len(sent.clauses))) or s.rstrip().endswith(("?", "？")):
        return None
    if TENTATIVE.search(s) or NOT_REAL.search(s) or QUOTES.search(s) or CHAT_BOILERPLATE.search(s):
        return None
    if any(OTHERS.match(s, a, b) or NOT_MINE.match(s, a, b) for a, b in sent.clauses):
        return None
    obj = event_object(sent)
    if GREETING.match(obj) or NOTHING.match(obj):
        return None
    if not (has_noun(s, sent.cjk) or named(s, sent.cjk)):
        return None
    dated = find_date(s, day) if day is not None else None
    if dated and dated[0] > day.isoformat():  # "from next month ...": not yet; until then what held holds
        return None
    return "disclosure" if _opens_on_self(sent) and not hedged(sent, 0, len(s)) else "word"


def unread(turns: list[Turn], candidates: list[Candidate]) -> Iterator[tuple[Turn, Sentence]]:
    """The user's sentences (in turn order) no candidate was read from: no candidate of the same lines holds the
    sentence as its evidence. Assistant turns and named participants' are not the user's."""
    read = {(c.source_file, c.line_start, c.evidence) for c in candidates}
    for turn in turns:
        if turn.role != "user" or not (turn.text or "").strip():
            continue
        for sent in sentences(Source(turn.text)):
            if (turn.source_file, turn.line_start, evidence_of(sent)) not in read:
                yield turn, sent


def disclosures(turns: list[Turn], day: date, candidates: list[Candidate]) -> list[Candidate]:
    """The self-disclosures among the sentences the rules left unread, as statements (``states``, the sentence; extractor
    :data:`STATEMENT`): dated by their turn, the speaker's, renewing nothing."""
    nature, multi, confidence = PREDICATES["states"]
    out, seen = [], set()
    for turn, sent in unread(turns, candidates):
        kind = kind_of(sent, day)
        # a plain word about a named thing ("everything builds on GitHub Actions now", a typed value, a name) is said as
        # surely as one about the speaker: kept as what was said that day, in its topic thread (query.threads); not a
        # hedged one, not one that names nothing ("that's all", "先这样改吧": chat, not memory), not one about
        # someone else ("my brother has been ...": theirs, not the user's statement)
        if kind is None or (kind == "word" and (hedged(sent, 0, len(sent.s)) or not named(sent.s, sent.cjk)
                                                or anchored_person(sent, len(sent.s)))):
            continue
        obj = event_object(sent)
        key = (turn.source_file, turn.line_start, obj)
        if key in seen:
            continue
        seen.add(key)
        out.append(Candidate(subject=subject_of_speaker(turn), predicate="states", object=obj, nature=nature, confidence=confidence,
                             explicitness="stated", source_file=turn.source_file, line_start=turn.line_start,
                             line_end=turn.line_end, observed_at=turn.at(day), speaker=turn.speaker, technical=is_technical(obj),
                             multi_valued=multi, extractor=STATEMENT, evidence=evidence_of(sent)))
    return out
