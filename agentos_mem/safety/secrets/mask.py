"""Masking, the one entry point for callers: each secret value ``find_secrets`` finds is replaced by a marker.

The marker says a secret was there and, where known, where the original line lives:
``[secret masked · original at alice/2026-11-20/r1/2026-11-20.md line 12]`` (a raw reference ``agentos raw`` takes,
or a file), or ``[secret masked]``; personal data has its own label (``[phone masked]``, ``[ID card masked · original
at ...]``, ``[bank card masked]``: common.LABELS), so one entry point masks both. Masking is idempotent (a marker is
never masked again) and never changes text that holds no secret; it never adds or removes a line. ``mask_lines``
masks line by line (PEM blocks and the codes listed under a cue span lines), ``mask_value`` a fact's object given
its subject ("NAS password" -> its whole object).

A marker never names a local absolute path (markers are written into synced files): ``marker`` keeps only the last
part of one, whoever passes it."""

from __future__ import annotations

import re

from agentos_mem.safety.secrets.common import ANY_LABEL, LABELS, MARK, MARKER_RE, MARKER_START, Lazy
from agentos_mem.safety.secrets.cues import list_opener, secret_subject
from agentos_mem.safety.secrets.find import find_secrets, folded, may_hold_read, may_hold_secret
from agentos_mem.safety.secrets.lists import list_line
from agentos_mem.safety.secrets.personal import masked_classes
from agentos_mem.safety.secrets.shapes import PEM_BEGIN, PEM_END
from agentos_mem.safety.secrets.values import value_ok


def marker(origin: str | None = None, label: str = MARK) -> str:
    """``[secret masked]``, or ``[secret masked · original at <origin>]`` (``label``: ``phone masked`` ... for
    personal data, common.LABELS)."""
    origin = " ".join(str(origin).replace("]", ")").split()) if origin else ""
    # A marker is written into synced files: it never names a local absolute path (only what follows the last
    # folder of one), whoever called it.
    origin = _ABSOLUTE.sub(lambda m: re.split(r"[\\/]", m.group(0))[-1] or "file", origin)
    return f"[{label} · original at {origin}]" if origin else f"[{label}]"


_ABSOLUTE = Lazy(r"(?<![\w.~/\\:-])(?:file://|~?/|[A-Za-z]:[\\/]|\\\\)[^\s)]*")


_BROKEN_MARKER = Lazy(r"\[(?P<label>" + ANY_LABEL + r")(?: · [^\]\n]*)?(?=$|[,;:!?。，；：！？\n])")


def repair_markers(text: str, origin: str | None = None, line_no: int | None = None) -> str:
    """``text`` with any marker an extractor or a cut left without its end (``[secret masked · orig``) made whole
    again, naming ``origin`` and ``line_no``."""
    if not isinstance(text, str) or not MARKER_START.search(text):
        return text
    whole = [(m.start(), m.end()) for m in MARKER_RE.finditer(text)]
    out, pos = [], 0
    for m in _BROKEN_MARKER.finditer(text):
        if any(a <= m.start() < b for a, b in whole):
            continue
        out += [text[pos:m.start()], marker(_where(origin, line_no), m.group("label"))]
        pos = m.end()
    return "".join(out) + text[pos:]


# A line that may end with a cue introducing a list (cues.list_opener): a colon or 如下 at its end, or a heading.
_MAY_OPEN_LIST = Lazy(r"(?:[:：﹕︓]|如下(?:所示)?)\s*$|^\s{0,3}#")
_BARE = Lazy(r"\[(?P<label>" + ANY_LABEL + r")\]")


def locate_markers(text: str, origin: str | None, line_no: int | None = None) -> str:
    """``text`` with its bare markers (``[secret masked]``, ``[phone masked]`` ..., written where the origin was not
    known yet) naming ``origin`` and ``line_no``."""
    if not isinstance(text, str) or not origin or not _BARE.search(text):
        return text
    return _BARE.sub(lambda m: marker(_where(origin, line_no), m.group("label")), text)


def short_markers(text: str) -> str:
    """Markers without their origin (``[secret masked]``, ``[phone masked]``): for one-line summaries, whose sources
    cite the line."""
    return MARKER_RE.sub(lambda m: f"[{m.group('label')}]", text) if isinstance(text, str) else text


def _where(origin: str | None, line: int | None) -> str | None:
    if not origin:
        return None
    return f"{origin} line {line}" if line is not None else origin


def mask_line(line: str, origin: str | None = None, line_no: int | None = None, *,
              personal: frozenset[str] | None = None) -> tuple[str, int]:
    """One line with every secret value replaced by a marker; returns (text, how many were masked). ``personal``:
    the classes of personal data masked (default: as the setting says)."""
    found = find_secrets(line, personal)
    if not found:
        return line, 0
    where = _where(origin, line_no)
    out, pos = [], 0
    for f in found:
        out.append(line[pos:f.start])
        out.append(marker(where, LABELS.get(f.kind, MARK)))
        pos = f.end
    out.append(line[pos:])
    return "".join(out), len(found)


def mask_lines(text: str, origin: str | None = None, first_line: int | None = None, *, last_line: int | None = None) -> tuple[str, int]:
    """``text`` masked line by line (line count and line ends unchanged); (text, secrets masked).

    ``origin`` names where the original lives (a raw reference, a file); ``first_line`` is the line number of
    the text's first line there (the marker then names each line; ``last_line`` caps it, for a JSONL turn whose
    text has more lines than its one source line).

    Two things span lines, and are carried from one to the next: a PEM private key block, masked whole, and a list
    a cue introduces at the end of its line ("Recovery codes:", "恢复码如下："), each code of which is masked on the
    lines below it (lists.list_line) until a line that is no such item."""
    if not isinstance(text, str) or not text or not may_hold_secret(text):
        return text, 0
    lines = text.split("\n")
    seen = folded(text)[0].split("\n") if len(lines) > 1 else lines  # each line's reading, the whole text read once
    total = 0
    personal = masked_classes()  # the setting, read once for the whole text rather than once a line
    in_pem = False
    in_list: tuple[str, str | None] | None = None  # a list under a cue: (the cue's value class, its items' make-up)
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
            in_pem, in_list = True, None
            continue
        if in_list is not None:
            if not line.strip():
                continue  # a blank line between a list's cue and its items, or between items
            spans, made = _list_items(line, *in_list)
            if spans:
                lines[i] = _masked_spans(line, spans, marker(_where(origin, no)))
                in_list, total = (in_list[0], made), total + len(spans)
                continue
            in_list = None
        if len(lines) == 1 or may_hold_read(seen[i]):  # the whole text's test, line by line: 2% of a knowledge base's lines pass it
            lines[i], n = mask_line(line, origin, no, personal=personal)
            total += n
        if _MAY_OPEN_LIST.search(line):  # cheap: most lines end in no colon, and then none is folded for a cue
            kind = list_opener(seen[i])
            in_list = (kind, None) if kind else None
    return "\n".join(lines), total


def _list_items(line: str, kind: str, made: str | None) -> tuple[list[tuple[int, int]], str | None]:
    """The codes of one line of a list a cue introduced (lists.list_line), read folded (full-width digits are
    digits) and mapped back to ``line``; the first code of a list must be a value of the cue's class."""
    seen, where = folded(line)
    spans, made_now = list_line(seen, made)
    if not spans or (made is None and not value_ok(seen[spans[0][0]:spans[0][1]], kind, loose=True)):
        return [], made
    return [(where[s], where[e - 1] + 1) for s, e in spans], made_now


def _masked_spans(line: str, spans: list[tuple[int, int]], mark: str) -> str:
    out, pos = [], 0
    for s, e in spans:
        out += [line[pos:s], mark]
        pos = e
    return "".join(out) + line[pos:]


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
    if kind and MARK not in v and not MARKER_START.search(v) and value_ok(v, kind, loose=True):
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
