"""Topic threads on the read side: what the query serves about one thing, newest first, the older marked as history.

Whatever the digest understood of a user's sentences (a fact, a statement it kept as said, a card over the
conversation), the items a question reaches fall into threads: items that talk of the same thing. Within a thread the
newest item is what holds now and the older ones are history, so the query serves each thread newest first (an older
item never stands above a newer one of its thread; every other item keeps its rank) and marks the older ones
``earlier`` (their day, in the text and as a field). A correction said after the sentence it corrects is newer, and lands first.

Which items are one thread, by what they say, never by phrase rules:

- **the things they name**: two items share a content word (vocabulary.content: words that name something, not
  everyday words, not a fact's labels): "测试机 4C8G" and "测试机升级到8C16G"; "Kafka cluster · 5 brokers" and
  "sorry, 7 brokers". A fact is read by its subject and value, a card by its topic and summary;
- **whose they are**: two facts whose subjects name different people (妈妈的手机 / 手机, "wife's employer" /
  "employer") are never one thread, whatever they share.

What is threaded is the caller's choice: ``query.ask`` and ``query.facts`` pass the facts and statements they serve;
cards keep their rank there (every card of a long chat shares its people's names: threading them cost LoCoMo's evidence
at 500 tokens 0.869 -> 0.529), and the card rules below stand for a caller with a sharper notion of one thing. What
``query.ask`` does for a card is narrower (``card_updated_by``): a later fact or statement of its thread holding
another value of a type it holds is pulled up to stand just above it; the card keeps its place below, so a
"when did ..." question still finds it within a small budget (moving the card down instead cost LoCoMo 0.869 -> 0.779).
The same rule puts a later conversation's card above a claim it changes ("staging Redis 端口 · 6379", then a chat that
tells of the move to 6380).

Threads are these direct links, never their chains: a card that tells of the server and the API version in one breath
does not make the two one thread.

Not every thread holds one value: a list (hobbies, pets, clients, licences) grows, and a repeat in other words
confirms. So an older item is marked ``earlier`` only where the thread is a single value:

- a thread with a fact of a list predicate (``multi_valued``: likes, does, has ...) is a list: served newest first,
  nothing marked;
- an older claim (a fact served as plainly current) whose value a newer item says again is confirmed, not history;
- an older claim is history when a newer fact of the thread (the same person's, a single value) holds another value,
  or a newer card or statement holds another value of the claim's value type (a spec, a clock time, a count:
  ``vocabulary.valuetypes``); a claim of free text (a name, a place) is history only beside a newer fact: a later
  sentence on the same topic naming something new is as often an addition as a change;
- a card or a statement older than another item of its thread is history (it is what was said then).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from agentos_mem.kernel.text import nfkc
from agentos_mem.vocabulary.subjects import names_whole
from agentos_mem.vocabulary.content import content_words as _content
from agentos_mem.vocabulary.people import persons
from agentos_mem.vocabulary.valuetypes import find_values, value_key, value_type

# A fact's labels and the words every item is made of: never what two items share about a thing.
_LABELS = frozenset("user value states event plans likes dislikes does has stopped prefers".split())


@dataclass
class Piece:
    """What threading reads of one served item."""

    at: str  # when it was said: ISO date and time, sortable
    text: str  # what it says: a fact's subject and value, a card's topic and summary
    claim: bool = False  # a fact served as plainly current
    fact: bool = False  # a fact (a claim or a statement) rather than a card
    subject: str | None = None  # a fact's subject
    value: str | None = None  # a claim's value
    multi: bool = False  # a claim of a list predicate (likes, does, has ...)
    words: set[str] = field(default_factory=set)

    @classmethod
    def of_fact(cls, row: dict, claim: bool) -> "Piece":
        """A fact row (as served): a claim when served as plainly current; a list only as a claim (a statement's
        predicate lists nothing)."""
        return cls(at=row["valid_from"], text=f"{row['subject']} {row['object']}", claim=claim, fact=True,
                   subject=row["subject"], value=row["object"] if claim else None,
                   multi=claim and bool(row["multi_valued"]))


def card_piece(meta: dict) -> Piece:
    """What threading reads of a card: its first turn's time, its topic and summary."""
    start = str(meta.get("time") or "").split("-")[0]
    start += ":00" * max(0, 2 - start.count(":"))  # "10:00" is 10:00:00, as a fact's time reads: never after it
    return Piece(at=f"{meta.get('date') or ''}T{start}", text=f"{meta.get('topic') or ''} {meta.get('summary') or ''}")


def card_updated_by(card: Piece, piece: Piece) -> bool:
    """Whether ``piece`` updates what ``card`` told (each a card, a fact or a statement): said after the card's first
    turn (a correction later in the same conversation is newer), sharing a content word with it, and holding another
    value of a type the card holds (a spec, a version, a count, a clock time: ``vocabulary.valuetypes``) or another
    number of a shape it holds (``numbers``: "1.28" after "Kubernetes 1.27", "6380" after "6379"). Sharing a word is not
    enough, nor is being a claim: in a long chat every card shares words with later sentences, and pulling every later
    item (or every later claim) of its words above a card cost LoCoMo's evidence at 500 tokens 0.866 -> 0.856 (0.861);
    this rule left it unchanged."""
    if piece.at[:19] <= card.at[:19] or not linked(piece, card):
        return False
    mine, theirs = _typed(card.text), _typed(piece.text)
    if any(theirs.get(kind, set()) - keys for kind, keys in mine.items()):
        return True
    mine, theirs = numbers(card.text), numbers(piece.text)
    return any(theirs.get(shape, set()) - keys for shape, keys in mine.items())


# A number of three characters or more, not part of a word, a date or a file name: "1.27", "6379", "11:30".
_NUMBER = re.compile(r"(?<![A-Za-z0-9\-/_])(?<!\d\.)\d+(?:[.:]\d+)*(?![A-Za-z0-9\-/_%]|\.\d)")


def numbers(text: str) -> dict[str, set[str]]:
    """The numbers of ``text`` by their shape (digits as 9: "1.27" -> "9.99", "6379" -> "9999"): a bare "1.28" said
    after "Kubernetes 1.27", or "6380" after "6379", is another value of the same kind though no type names it."""
    out: dict[str, set[str]] = {}
    for m in _NUMBER.finditer(nfkc(text)):
        if len(m.group()) >= 3:
            out.setdefault(re.sub(r"\d", "9", m.group()), set()).add(m.group())
    return out


def content_words(text: str) -> set[str]:
    """The words of ``text`` that name something (vocabulary.content), a fact's labels aside."""
    return _content(text, _LABELS)


def _same_people(a: Piece, b: Piece) -> bool:
    if not (a.fact and b.fact):
        return True  # a card names whoever its turns name: it is judged by what it shares
    return persons(a.subject or "") == persons(b.subject or "")


def linked(a: Piece, b: Piece) -> bool:
    """Whether two pieces are of one thread: they share a content word and are not two people's facts."""
    for p in (a, b):
        if not p.words:
            p.words = content_words(p.text)
    return bool(a.words & b.words) and _same_people(a, b)


def _typed(text: str) -> dict[str, set[str]]:
    out: dict[str, set[str]] = {}
    for a, b, kind in find_values(text):
        out.setdefault(value_type(text[a:b]) or kind, set()).add(value_key(text[a:b]))
    return out


def _replaces(newer: Piece, older: Piece) -> bool:
    """Whether ``newer`` holds another value of the slot the claim ``older`` holds (module docstring)."""
    if names_whole(newer.text.casefold(), (older.value or "").casefold()):
        return False  # said again: confirmed
    if newer.claim:
        return not newer.multi and persons(newer.subject or "") == persons(older.subject or "")
    kind = value_type(older.value or "")
    return kind is not None and bool(_typed(newer.text).get(kind, set()) - {value_key(older.value or "")})


def replaced(pieces: list[Piece]) -> dict[int, int]:
    """claim index -> the newest piece that makes it history: said later, sharing a content word with it, the same
    person's (for a fact), and holding another value of its slot (``_replaces``). A claim of a list predicate never is.
    Direct links only (an inverted index of the words, so a whole memory can be read at once): a chain of shared words
    across a memory is no thread."""
    for p in pieces:
        if not p.words:
            p.words = content_words(p.text)
    by_word: dict[str, list[int]] = {}
    for j, p in enumerate(pieces):
        if not p.multi:
            for w in p.words:
                by_word.setdefault(w, []).append(j)
    out: dict[int, int] = {}
    for i, p in enumerate(pieces):
        if not p.claim or p.multi:
            continue
        near = {j for w in p.words for j in by_word.get(w, ()) if pieces[j].at > p.at}
        best = [j for j in near if _same_people(p, pieces[j]) and _replaces(pieces[j], p)]
        if best:
            out[i] = max(best, key=lambda j: (pieces[j].at, j))
    return out


def arrange(pieces: list[Piece]) -> tuple[list[int], dict[int, str]]:
    """The order to serve ``pieces`` in (indexes) and the pieces that are history (index -> the day they were said).

    Order: the ranked list as it is, except that no piece stands above a newer piece of its thread: the best-ranked
    piece left is served after every newer piece linked to it (newest first). Threads are direct links, never
    chains: a card that names two things does not make them one thread.
    History: a claim another piece replaces (``replaced``); a card or a statement a linked piece said on a later day
    follows, unless one of them is a claim of a list (a list grows)."""
    left = list(range(len(pieces)))
    order: list[int] = []
    while left:
        x = left[0]
        newer = sorted((j for j in left if j != x and pieces[j].at > pieces[x].at and linked(pieces[j], pieces[x])),
                       key=lambda j: (pieces[j].at, -j), reverse=True)
        for i in [*newer, x]:  # one hop: what is linked to x, not what is linked to that
            order.append(i)
            left.remove(i)
    earlier = {i: pieces[i].at[:10] for i in replaced(pieces)}
    for i, p in enumerate(pieces):
        if p.claim or p.multi:
            continue
        later = [q for q in pieces if q.at[:10] > p.at[:10] and linked(q, p)]  # by day: a card and its facts are one time
        if later and not any(q.multi for q in later):
            earlier[i] = p.at[:10]
    return order, earlier
