"""``find_secrets``: every detector over one line, their spans merged left to right, never overlapping, never
inside a marker.

The order is the precedence (a span that overlaps one found before it is dropped): known shapes, URL passwords and
``Authorization:`` values (shapes.py), then the values cues state and the further items of a list a cue introduces
(cues.py, lists.py), then the personal data the setting masks (personal.py: ID card, bank card and phone numbers),
then credential pairs without a cue (pairs.py), then high-entropy tokens (high_entropy.py). ``may_hold_secret`` is
the cheap test over a whole text that lets the masking skip texts without a secret."""

from __future__ import annotations

import bisect
import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass

from agentos_mem.safety.secrets.common import MARKER_RE, Lazy
from agentos_mem.safety.secrets.cues import CUE_STEMS, stated_spans
from agentos_mem.safety.secrets.high_entropy import RUN, random_spans
from agentos_mem.safety.secrets.pairs import may_pair, pair_spans
from agentos_mem.safety.secrets.personal import PERSONAL_STEM, personal_spans
from agentos_mem.safety.secrets.shapes import SHAPE_STEMS, shape_spans


@dataclass(frozen=True)
class Found:
    start: int
    end: int
    kind: str  # "stated", "shape", "url", "pair", "random", "pem"; personal data: "id_card", "bank_card", "phone"
    cue: str = ""


def _protected(text: str) -> list[tuple[int, int]]:
    return [(m.start(), m.end()) for m in MARKER_RE.finditer(text)]


class _Disjoint:
    """Disjoint spans kept sorted: overlap test and insert in O(log n), so a line with thousands of secrets (or
    markers) stays linear-ish instead of comparing every span with every other."""

    def __init__(self, spans: list[tuple[int, int]]):
        self.starts: list[int] = []
        self.ends: list[int] = []
        for a, b in sorted(spans):
            if not self.overlaps(a, b):
                self.add(a, b)

    def overlaps(self, s: int, e: int) -> bool:
        i = bisect.bisect_right(self.starts, s)
        return (i > 0 and self.ends[i - 1] > s) or (i < len(self.starts) and self.starts[i] < e)

    def add(self, s: int, e: int) -> None:
        i = bisect.bisect_right(self.starts, s)
        self.starts.insert(i, s)
        self.ends.insert(i, e)


def may_hold_secret(text: str) -> bool:
    """A fast test over a whole text: could any line of it hold a secret? (Cheap prefilters, ``CUE_STEMS`` and
    ``SHAPE_STEMS`` among them: most lines hold no cue and no key prefix; the text is read folded, as ``folded``.)"""
    return may_hold_read(text if text.isascii() else folded(text)[0])


def may_hold_read(text: str) -> bool:
    """``may_hold_secret`` of a text already read as ``folded`` reads it (each line of a folded text is its line's
    reading: a character is read alone)."""
    return bool(_STEMS.search(text.lower())) or bool(SHAPE_STEMS.search(text)) or ("://" in text and "@" in text) \
        or bool(RUN.search(text)) or bool(PERSONAL_STEM.search(text)) or (may_pair(text) and bool(pair_spans(text)))


# The words whose presence lets a text through: one search rather than one per word (run on every line of a card).
_STEMS = Lazy("|".join(re.escape(stem) for stem in (*CUE_STEMS, "authorization", "mysql", "mariadb")))


# Text is read the way its reader sees it, as the request side reads a request (kernel.text.fold_request): a cue with
# a zero-width character inside (密<ZWSP>码), in full-width letters (ｐａｓｓｗｏｒｄ) or in Traditional characters
# (密碼, 金鑰) is the same cue. The detectors run on the text as written, then on the text so folded, each span of the
# folded text mapped back to the characters it came from.
_INVISIBLE = frozenset("\u00ad\u180e\u200b\u200c\u200d\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2060\u2061\u2062\u2063\u2064\ufeff")
# The Traditional forms of the characters the Chinese cues are written with (cues.py holds the Simplified ones).
_TRADITIONAL = str.maketrans("碼鑰憑證據號賬帳戶驗權祕", "码钥凭证据号账账户验权秘")


_same: set[str] = set()  # characters read as themselves (most): what ``folded`` no longer looks at one by one
_folds: dict[str, str] = {}  # the other characters -> how each reads (``_fold``)


def _fold(ch: str) -> str:
    got = _folds.get(ch)
    if got is None:
        got = "" if ch in _INVISIBLE else unicodedata.normalize("NFKC", ch).translate(_TRADITIONAL)
        if len(_same) + len(_folds) < 100_000:  # bounded against a text made of every character there is
            if got == ch:
                _same.add(ch)
            else:
                _folds[ch] = got
    return got


def folded(text: str) -> tuple[str, Sequence[int]]:
    """``text`` as read (each character NFKC, invisible ones dropped, Traditional cue characters Simplified), and for
    each character of it the index of the character of ``text`` it came from."""
    # Each distinct character is read once a process; where every one reads as one character (full-width
    # punctuation, as in most Chinese text, does) the text is translated whole and each character maps to itself.
    # Normalising character by character was most of masking a knowledge base (20 of 45 s at 10,000 cards).
    table = {}
    for ch in set(text) - _same:
        f = _fold(ch)
        if f != ch:
            if len(f) != 1:
                break
            table[ord(ch)] = f
    else:
        return (text.translate(table) if table else text), range(len(text))
    out: list[str] = []
    where: list[int] = []
    for i, ch in enumerate(text):
        for c in _fold(ch):
            out.append(c)
            where.append(i)
    return "".join(out), where


def _spans(text: str, keep: _Disjoint, personal: frozenset[str] | None = None) -> list[tuple[int, int, str, str]]:
    """Every detector's spans over ``text``, in precedence order, those overlapping ``keep`` or each other dropped."""
    found: list[tuple[int, int, str, str]] = []

    def add(s: int, e: int, kind: str, cue: str = "") -> None:
        if e > s and not keep.overlaps(s, e):
            keep.add(s, e)
            found.append((s, e, kind, cue))

    for s, e, kind, cue in shape_spans(text):
        add(s, e, kind, cue)
    for s, e, cue in stated_spans(text, keep):
        add(s, e, "stated", cue)
    for s, e, kind in personal_spans(text, personal):
        add(s, e, kind)
    if may_pair(text):
        for s, e in pair_spans(text):
            add(s, e, "pair")
    for s, e in random_spans(text):
        add(s, e, "random")
    return found


def find_secrets(text: str, personal: frozenset[str] | None = None) -> list[Found]:
    """The secret values in one line (or a short text), left to right, never overlapping, never inside a marker:
    those of the text as written, and those only its folded reading shows (``folded``). ``personal``: the classes
    of personal data masked (default: as the setting says, ``personal.masked_classes``)."""
    if not text or not isinstance(text, str):
        return []
    keep = _Disjoint(_protected(text))
    found = [Found(s, e, kind, cue) for s, e, kind, cue in _spans(text, keep, personal)]
    seen, where = folded(text)
    if seen != text:
        for s, e, kind, cue in _spans(seen, _Disjoint(_protected(seen)), personal):
            a, b = where[s], where[e - 1] + 1
            if not keep.overlaps(a, b):
                keep.add(a, b)
                found.append(Found(a, b, kind, cue))
    return sorted(found, key=lambda f: f.start)
