"""``find_secrets``: every detector over one line, their spans merged left to right, never overlapping, never
inside a marker.

The order is the precedence (a span that overlaps one found before it is dropped): known shapes, URL passwords and
``Authorization:`` values (shapes.py), then the values cues state (cues.py), then credential pairs without a cue
(pairs.py), then high-entropy tokens (high_entropy.py). ``may_hold_secret`` is the cheap test over a whole text that
lets the masking skip texts without a secret."""

from __future__ import annotations

import bisect
from dataclasses import dataclass

from agentos_mem.safety.secrets.common import MARKER_RE
from agentos_mem.safety.secrets.cues import CUE_STEMS, stated_spans
from agentos_mem.safety.secrets.high_entropy import RUN, random_spans
from agentos_mem.safety.secrets.pairs import may_pair, pair_spans
from agentos_mem.safety.secrets.shapes import SHAPE_STEMS, shape_spans


@dataclass(frozen=True)
class Found:
    start: int
    end: int
    kind: str  # "stated", "shape", "url", "pair", "random", "pem"
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
    ``SHAPE_STEMS`` among them: most lines hold no cue and no key prefix.)"""
    low = text.lower()
    return any(stem in low for stem in CUE_STEMS) or bool(SHAPE_STEMS.search(text)) or ("://" in text and "@" in text) \
        or bool(RUN.search(text)) or "authorization" in low or (may_pair(text) and bool(pair_spans(text)))


def find_secrets(text: str) -> list[Found]:
    """The secret values in one line (or a short text), left to right, never overlapping, never inside a marker."""
    if not text or not isinstance(text, str):
        return []
    keep = _Disjoint(_protected(text))
    found: list[Found] = []

    def add(s: int, e: int, kind: str, cue: str = "") -> None:
        if e > s and not keep.overlaps(s, e):
            keep.add(s, e)
            found.append(Found(s, e, kind, cue))

    for s, e, kind, cue in shape_spans(text):
        add(s, e, kind, cue)
    for s, e, cue in stated_spans(text, keep):
        add(s, e, "stated", cue)
    if may_pair(text):
        for s, e in pair_spans(text):
            add(s, e, "pair")
    for s, e in random_spans(text):
        add(s, e, "random")
    return sorted(found, key=lambda f: f.start)
