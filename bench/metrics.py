"""The arithmetic of the benchmarks: evidence coverage, recall at token budgets, percentiles.

Evidence is a list of (file, first line, last line) turns; a source is a dict with ``file`` and ``lines``
[start, end] (what facts, cards and raw reads cite); a source covers a turn when their line ranges in the
same file overlap. Kept free of I/O so tests can check it on hand-made cases.
"""

from __future__ import annotations

import math
from typing import Iterable, Sequence

Evidence = Sequence[tuple[str, int, int]]


def covers(source: dict, file: str, first: int, last: int) -> bool:
    lines = source.get("lines") or [None, None]
    if source.get("file") != file or lines[0] is None:
        return False
    return int(lines[0]) <= last and first <= int(lines[1])


def found(sources: Iterable[dict], evidence: Evidence) -> list[bool]:
    """Per evidence turn: whether any source covers it."""
    sources = list(sources)
    return [any(covers(s, f, a, b) for s in sources) for f, a, b in evidence]


def any_hit(sources: Iterable[dict], evidence: Evidence) -> bool:
    return any(found(sources, evidence)) if evidence else False


def all_fraction(sources: Iterable[dict], evidence: Evidence) -> float:
    """The share of a question's evidence turns covered (1.0 when all are)."""
    hits = found(sources, evidence)
    return sum(hits) / len(hits) if hits else 0.0


def fill_budget(ranked: Sequence[tuple[dict, int]], budget: int) -> list[dict]:
    """Sources of ranked (source, tokens) units, in order, until the next one would pass the budget.

    The first unit is always taken (an answer is never empty because one unit is long), the same rule
    as the layered query applies to its items.
    """
    out, spent = [], 0
    for source, tokens in ranked:
        if out and spent + tokens > budget:
            break
        out.append(source)
        spent += tokens
    return out


def percentile(values: Sequence[float], q: float) -> float:
    """Nearest-rank percentile (q in 0..100) of a non-empty sequence."""
    if not values:
        return float("nan")
    ordered = sorted(values)
    rank = max(1, math.ceil(q / 100 * len(ordered)))
    return float(ordered[rank - 1])


def median(values: Sequence[float]) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    n = len(ordered)
    mid = n // 2
    return float(ordered[mid]) if n % 2 else (ordered[mid - 1] + ordered[mid]) / 2


def mean(values: Sequence[float]) -> float:
    values = list(values)
    return sum(values) / len(values) if values else float("nan")
