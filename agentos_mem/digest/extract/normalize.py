"""Text normalisation: an NFKC copy of a turn for matching, with an index map back to the original, cut into
sentences and clauses.

Matching runs on the normalised copy (full-width letters, digits and punctuation become half-width; curly quotes
become straight); every object and subject is cut from the ORIGINAL text through the index map, so "８Ｃ１６Ｇ"
stays as written.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

from agentos_mem.kernel.text import CJK_SCRIPTS

EVIDENCE_CHARS = 120
CJK = CJK_SCRIPTS  # Han, kana and hangul: scripts written without spaces
HAS_CJK = re.compile(f"[{CJK}]")
_HAS_LATIN = re.compile(r"[A-Za-z]")

_QUOTES = str.maketrans({"\u2018": "'", "\u2019": "'", "\u201c": '"', "\u201d": '"', "\u300c": '"', "\u300d": '"'})


class Source:
    """A turn's text: ``norm`` for matching, ``orig(a, b)`` to cut the same span out of the original."""

    __slots__ = ("text", "norm", "_idx")

    def __init__(self, text: str):
        self.text = text
        if text.isascii():
            self.norm, self._idx = text, None
            return
        norm = unicodedata.normalize("NFKC", text).translate(_QUOTES)
        if len(norm) == len(text) and all(
            a == b or unicodedata.normalize("NFKC", a).translate(_QUOTES) == b for a, b in zip(text, norm)
        ):
            self.norm, self._idx = norm, None  # one character for one: positions need no map (the usual case)
            return
        parts: list[str] = []
        idx: list[int] = []
        for i, ch in enumerate(text):
            n = ch if ch < "\x80" else unicodedata.normalize("NFKC", ch).translate(_QUOTES)
            parts.append(n)
            idx.extend([i] * len(n))
        self.norm, self._idx = "".join(parts), idx

    def orig(self, a: int, b: int) -> str:
        if a >= b:
            return ""
        if self._idx is None:
            return self.text[a:b]
        return self.text[self._idx[a] : self._idx[b - 1] + 1]


@dataclass
class Sentence:
    src: Source
    start: int  # offset of ``s`` inside src.norm
    s: str  # normalised sentence text (terminator included)
    clauses: list[tuple[int, int]]  # comma-separated parts of ``s``
    cjk: bool
    latin: bool  # has ASCII letters (English rules can apply)
    lower: str = ""  # ``s`` lower-cased, for keyword pre-checks

    def __post_init__(self) -> None:
        self.lower = self.s.lower()

    def orig(self, a: int, b: int) -> str:
        return self.src.orig(self.start + a, self.start + b).strip()

    def clause_at(self, pos: int) -> int:
        for i, (a, b) in enumerate(self.clauses):
            if a <= pos < b:
                return i
        return len(self.clauses) - 1


# A sentence ends at 。！？；!?; or a newline (with any closing quotes), at "..." or at ". " (not "v2.1.0").
_SENT_END = re.compile(r"(?:[。!?;\n]+|\.{3,}|\.(?=\s|$))[\"')\]」』》]*")
# Clauses: commas (not "1,000"), colons (not "10:30"), dashes.
_CLAUSE_SPLIT = re.compile(r",(?!\d{3}\b)|(?<!\d):|:(?!\d)|\s+[-–—]+\s+|—+")


# The rules read one sentence at a time, and several of them cost more than linear time in the sentence's
# length; a "sentence" longer than this (a pasted table, a dump, a run-on line without an end) is read in
# pieces of at most this many characters, cut at a comma or a space when one is near, so the work on a line
# stays linear in its length. People state facts in far shorter sentences.
MAX_SENTENCE_CHARS = 400
_SOFT_CUTS = frozenset(",，、;；: \t")


def _pieces(norm: str, a: int, b: int) -> list[tuple[int, int]]:
    """``norm[a:b]`` as spans of at most MAX_SENTENCE_CHARS, each cut after a comma or a space in its second half
    when there is one."""
    out = []
    while b - a > MAX_SENTENCE_CHARS:
        cut = a + MAX_SENTENCE_CHARS
        for i in range(cut - 1, a + MAX_SENTENCE_CHARS // 2, -1):
            if norm[i] in _SOFT_CUTS:
                cut = i + 1
                break
        out.append((a, cut))
        a = cut
    out.append((a, b))
    return out


def sentences(src: Source) -> list[Sentence]:
    out: list[Sentence] = []
    norm, pos = src.norm, 0
    ends = [m.end() for m in _SENT_END.finditer(norm)]
    if not ends or ends[-1] < len(norm):
        ends.append(len(norm))
    bounds = []
    for end in ends:
        bounds += [b for _, b in _pieces(norm, pos, end)] if end - pos > MAX_SENTENCE_CHARS else [end]
        pos = end
    pos = 0
    for end in bounds:
        a, b = pos, end
        pos = end
        while a < b and norm[a].isspace():
            a += 1
        while b > a and norm[b - 1].isspace():
            b -= 1
        if a >= b or not any(ch.isalnum() for ch in norm[a:b]):
            continue
        s = norm[a:b]
        clauses, c0 = [], 0
        for m in _CLAUSE_SPLIT.finditer(s):
            clauses.append((c0, m.start()))
            c0 = m.end()
        clauses.append((c0, len(s)))
        out.append(Sentence(src, a, s, clauses, bool(HAS_CJK.search(s)), bool(_HAS_LATIN.search(s))))
    return out


def naming(text: str, value: str) -> list[tuple[Sentence, int]]:
    """The sentences of ``text`` that name ``value`` (width and case aside), each with where it first does."""
    v = unicodedata.normalize("NFKC", value).casefold().strip()
    return [(sent, sent.lower.find(v)) for sent in sentences(Source(text)) if v and v in sent.lower]


def has_any(text: str, keys: tuple[str, ...]) -> bool:
    """Cheap keyword pre-check (substring tests) before an expensive alternation regex runs."""
    for k in keys:
        if k in text:
            return True
    return False
