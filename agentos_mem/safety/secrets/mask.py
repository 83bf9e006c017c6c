"""Masking, the one entry point for callers: each secret value ``find_secrets`` finds is replaced by a marker.

The marker says a secret was there and, where known, where the original line lives:
``[secret masked · original at alice/2026-11-20/r1/2026-11-20.md line 12]`` (a raw reference ``agentos raw`` takes,
or a file), or ``[secret masked]``. Masking is idempotent (a marker is never masked again) and never changes
text that holds no secret; it never adds or removes a line. ``mask_lines`` masks line by line (PEM blocks
span lines), ``mask_value`` a fact's object given its subject ("NAS password" -> its whole object).

A marker never names a local absolute path (markers are written into synced files): ``marker`` keeps only the last
part of one, whoever passes it."""

from __future__ import annotations

import re

from agentos_mem.safety.secrets.common import MARK, MARKER_RE, Lazy
from agentos_mem.safety.secrets.cues import secret_subject
from agentos_mem.safety.secrets.find import find_secrets, may_hold_secret
from agentos_mem.safety.secrets.shapes import PEM_BEGIN, PEM_END
from agentos_mem.safety.secrets.values import value_ok


def marker(origin: str | None = None) -> str:
    """``[secret masked]``, or ``[secret masked · original at <origin>]``."""
    origin = " ".join(str(origin).replace("]", ")").split()) if origin else ""
    # A marker is written into synced files: it never names a local absolute path (only what follows the last
    # folder of one), whoever called it.
    origin = _ABSOLUTE.sub(lambda m: re.split(r"[\\/]", m.group(0))[-1] or "file", origin)
    return f"[{MARK} · original at {origin}]" if origin else f"[{MARK}]"


_ABSOLUTE = Lazy(r"(?<![\w.~/\\:-])(?:file://|~?/|[A-Za-z]:[\\/]|\\\\)[^\s)]*")


_BROKEN_MARKER = Lazy(r"\[secret masked(?: · [^\]\n]*)?(?=$|[,;:!?。，；：！？\n])")


def repair_markers(text: str, origin: str | None = None, line_no: int | None = None) -> str:
    """``text`` with any marker an extractor or a cut left without its end (``[secret masked · orig``) made whole
    again, naming ``origin`` and ``line_no``."""
    if not isinstance(text, str) or MARK not in text:
        return text
    whole = [(m.start(), m.end()) for m in MARKER_RE.finditer(text)]
    out, pos = [], 0
    for m in _BROKEN_MARKER.finditer(text):
        if any(a <= m.start() < b for a, b in whole):
            continue
        out += [text[pos:m.start()], marker(_where(origin, line_no))]
        pos = m.end()
    return "".join(out) + text[pos:]


_BARE = f"[{MARK}]"


def locate_markers(text: str, origin: str | None, line_no: int | None = None) -> str:
    """``text`` with its bare markers (``[secret masked]``, written where the origin was not known yet) naming
    ``origin`` and ``line_no``."""
    if not isinstance(text, str) or _BARE not in text or not origin:
        return text
    return text.replace(_BARE, marker(_where(origin, line_no)))


def short_markers(text: str) -> str:
    """Markers without their origin (``[secret masked]``): for one-line summaries, whose sources cite the line."""
    return MARKER_RE.sub(f"[{MARK}]", text) if isinstance(text, str) else text


def _where(origin: str | None, line: int | None) -> str | None:
    if not origin:
        return None
    return f"{origin} line {line}" if line is not None else origin


def mask_line(line: str, origin: str | None = None, line_no: int | None = None) -> tuple[str, int]:
    """One line with every secret value replaced by a marker; returns (text, how many were masked)."""
    found = find_secrets(line)
    if not found:
        return line, 0
    mark = marker(_where(origin, line_no))
    out, pos = [], 0
    for f in found:
        out.append(line[pos:f.start])
        out.append(mark)
        pos = f.end
    out.append(line[pos:])
    return "".join(out), len(found)


def mask_lines(text: str, origin: str | None = None, first_line: int | None = None, *, last_line: int | None = None) -> tuple[str, int]:
    """``text`` masked line by line (line count and line ends unchanged); (text, secrets masked).

    ``origin`` names where the original lives (a raw reference, a file); ``first_line`` is the line number of
    the text's first line there (the marker then names each line; ``last_line`` caps it, for a JSONL turn whose
    text has more lines than its one source line)."""
    if not isinstance(text, str) or not text or not may_hold_secret(text):
        return text, 0
    lines = text.split("\n")
    total = 0
    in_pem = False
    for i, line in enumerate(lines):
        no = None if first_line is None else first_line + i
        if no is not None and last_line is not None:
            no = min(no, last_line)
        if in_pem:
            if PEM_END.search(line):
                in_pem = False
                continue
            if line.strip() and not MARKER_RE.fullmatch(line.strip()):
                lead = line[: len(line) - len(line.lstrip())]
                lines[i] = lead + marker(_where(origin, no))
                total += 1
            continue
        if PEM_BEGIN.search(line) and not PEM_END.search(line):
            in_pem = True
            continue
        lines[i], n = mask_line(line, origin, no)
        total += n
    return "\n".join(lines), total


def mask_text(text: str, origin: str | None = None, first_line: int | None = None) -> str:
    """``text`` with its secrets masked (see ``mask_lines``)."""
    return mask_lines(text, origin, first_line)[0]


def has_secret(text: str) -> bool:
    return bool(isinstance(text, str) and text and mask_lines(text)[1])


def strip_markers(text: str) -> str:
    """``text`` without markers (for keywords and slugs: a marker's words say nothing about the topic)."""
    return MARKER_RE.sub(" ", text) if isinstance(text, str) else text


def mask_value(subject: str, value: str, origin: str | None = None, line_no: int | None = None) -> tuple[str, int]:
    """A fact's object given its subject: the whole object when the subject names a secret ("NAS password" ·
    "hunter2-NAS"), else the object masked as text."""
    if not isinstance(value, str) or not value:
        return value, 0
    kind = secret_subject(subject)
    v = value.strip()
    if kind and not MARKER_RE.fullmatch(v) and MARK not in v and value_ok(v, kind, loose=True):
        return marker(_where(origin, line_no)), 1
    return mask_lines(value, origin, line_no)


def mask_fields(row: dict, fields: tuple[str, ...], origin: str | None = None, line_no: int | None = None) -> tuple[dict, int]:
    """A copy of ``row`` with its text ``fields`` masked; (row, secrets masked)."""
    out, total = dict(row), 0
    for f in fields:
        v = out.get(f)
        if isinstance(v, str) and v:
            out[f], n = mask_lines(v, origin, line_no)
            total += n
    return out, total
