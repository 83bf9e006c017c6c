"""Public conversation datasets -> working-memory day logs (the format ``digest.logformat`` reads).

- MemoryBank-SiliconFriend: ``{user: {"history": {date: [{"query", "response"}]}}}``. One folder per
  user, one ``<date>.md`` per day that has turns. The data has no times, so turns get synthetic ones
  (20:00, one minute apart; capped at 23:59) and the frontmatter says ``synthetic_times: true``.
  Labels are Chinese (用户/助手) or English (user/assistant) by the user's text.
- LoCoMo: one folder per conversation, one ``<date>.md`` per session date, a ``## Session N``
  heading per session. Every turn of a session carries the session's start time: the data has no
  per-turn times, and invented minutes would suggest a precision it lacks (file order keeps the
  sequence). ``dia_map.jsonl`` maps each ``dia_id`` to its file and 1-based line range.

Multi-line text stays in its turn: blank lines are dropped and every continuation line is indented
by two spaces, so none can read as a turn line or a heading. Output is a pure function of the
input (same input -> byte-identical files; unchanged files are not rewritten); the source is only read.
"""

from __future__ import annotations

import json
import re
import unicodedata
from datetime import date
from pathlib import Path

from agentos_mem.kernel.files import atomic_write, guard
from agentos_mem.kernel.text import CJK
from agentos_mem.vocabulary.dates import MONTH_NAMES

_FORBIDDEN = set('/\\:*?"<>|')  # path separators plus what Windows refuses in a file name
_CJK = re.compile(f"[{CJK}]")
_LATIN = re.compile(r"[A-Za-z]")
_ISO_DAY = re.compile(r"\d{4}-\d{2}-\d{2}")
_YAML_PLAIN = re.compile(r"[^\W\d_][\w .\-]*")
_YAML_WORDS = {"y", "n", "yes", "no", "true", "false", "on", "off", "null"}
_MONTHS = {m: i for i, m in enumerate(MONTH_NAMES, start=1)}
# "1:56 pm on 8 May, 2023"
_LOCOMO_STAMP = re.compile(
    r"\s*(\d{1,2}):(\d{2})\s*([ap])\.?m\.?\s+on\s+(\d{1,2})\s+([A-Za-z]+)\.?,?\s+(\d{4})\s*", re.I
)
_FENCE_LIKE = re.compile(r"(`{3,}|~{3,})")


def name_problem(name: str) -> str | None:
    """Why ``name`` cannot be a folder name (or a speaker label), or None when it can."""
    if not name:
        return "empty name"
    if len(name) > 40:  # also the longest speaker label the log reader accepts
        return "name longer than 40 characters"
    if ".." in name or name == ".":
        return "name contains '..' or is '.'"
    bad = sorted({c for c in name if c in _FORBIDDEN or unicodedata.category(c) in ("Cc", "Cf", "Zl", "Zp")})
    if bad:
        return f"name contains forbidden characters {''.join(bad)!r}"
    return None


def _speaker_problem(name: str) -> str | None:
    # The log reader's turn line: a label with no brackets or colons, not starting with a space.
    if any(c in name for c in "[]：#") or name != name.strip():
        return "speaker name has '[', ']', '：', '#' or surrounding spaces"
    return name_problem(name)


def _yaml_str(s: str) -> str:
    """``s`` as a YAML scalar: plain when unambiguous, else a JSON string (valid YAML)."""
    if _YAML_PLAIN.fullmatch(s) and s == s.strip() and s.lower() not in _YAML_WORDS:
        return s
    return json.dumps(s, ensure_ascii=False)


def _turn_lines(time: str, speaker: str, text: str) -> list[str]:
    """One turn as file lines: ``[time] speaker: first line`` then indented continuation lines."""
    parts = [p.strip() for p in text.splitlines()]
    parts = [p for p in parts if p] or ["(empty)"]  # the reader drops a turn with no text
    lines = [f"[{time}] {speaker}: {parts[0]}"]
    for p in parts[1:]:
        # The reader strips the two spaces; a fence marker would still toggle code mode with two,
        # so such a line gets four (it keeps two extra spaces, which is harmless).
        lines.append(("    " if _FENCE_LIKE.match(p) else "  ") + p)
    return lines


def _frontmatter(fields: list[tuple[str, object]]) -> list[str]:
    lines = ["---"]
    for key, value in fields:
        if isinstance(value, dict):
            lines.append(f"{key}:")
            lines += [f"  {_yaml_str(k)}: {v}" for k, v in value.items()]
        elif isinstance(value, bool):
            lines.append(f"{key}: {'true' if value else 'false'}")
        elif isinstance(value, date):
            lines.append(f"{key}: {value.isoformat()}")
        else:
            lines.append(f"{key}: {_yaml_str(str(value))}")
    return lines + ["---"]


def _write(path: Path, lines: list[str]) -> None:
    """Write ``lines`` (LF, UTF-8), leaving the file alone when its bytes would not change."""
    data = "".join(line + "\n" for line in lines).encode("utf-8")
    below = guard(path)  # the working folder or the log as a link: refused, never written through (kernel.files.Below)
    if below.is_file(path) and below.read_bytes(path) == data:
        return
    atomic_write(path, data, prefix=".import-")  # hidden, and not a day-log name the digest would read


def _is_chinese(texts: list[str]) -> bool:
    joined = "".join(texts)
    # One Chinese character carries about as much as a short English word (~4 letters).
    return len(_CJK.findall(joined)) * 4 >= len(_LATIN.findall(joined))


def _iso_day(s: str) -> date | None:
    try:
        return date.fromisoformat(s) if _ISO_DAY.fullmatch(s) else None
    except ValueError:
        return None


def _clock(minutes: int) -> str:
    minutes = min(minutes, 23 * 60 + 59)
    return f"{minutes // 60:02d}:{minutes % 60:02d}"


def import_memorybank(src_json: Path, out_dir: Path, *, users: list[str] | None = None) -> dict:
    """MemoryBank-SiliconFriend JSON -> ``out_dir/<user>/<date>.md``.

    Returns counts (``users``, ``days``, ``turns``: turn lines written, a query and a response
    each), the ``files`` written (or already up to date) and ``errors`` (skipped users or days).
    User names are stripped of surrounding spaces; ``users`` may name either form.
    """
    data = json.loads(Path(src_json).read_text(encoding="utf-8"))
    out_dir = Path(out_dir)
    wanted = set(users) if users is not None else None
    report: dict = {"users": 0, "days": 0, "turns": 0, "files": [], "errors": []}
    folders: dict[str, str] = {}  # casefolded folder name -> source key (catches collisions)
    matched: set[str] = set()
    for key, record in data.items():
        name = key.strip()
        if wanted is not None and not {key, name} & wanted:
            continue
        matched |= {key, name}
        problem = name_problem(name)
        if problem is None and name.casefold() in folders:
            problem = f"same folder name as user {folders[name.casefold()]!r}"
        if problem is None and not (isinstance(record, dict) and isinstance(record.get("history", {}), dict)):
            problem = "record is not an object with a 'history' object"
        if problem:
            report["errors"].append({"user": key, "error": problem})
            continue
        folders[name.casefold()] = key
        history = record.get("history") or {}
        exchanges = [e for day in history.values() if isinstance(day, list) for e in day if isinstance(e, dict)]
        texts = [str(e.get(f) or "") for e in exchanges for f in ("query", "response")]
        user_label, bot_label = ("用户", "助手") if _is_chinese(texts) else ("user", "assistant")
        days_written = 0
        for day in sorted(history):
            when = _iso_day(day)
            if when is None:
                report["errors"].append({"user": key, "day": day, "error": "day is not a YYYY-MM-DD date"})
                continue
            body: list[str] = []
            n = 0  # turns so far this day: turn n is at 20:00 + n minutes
            for e in history[day] if isinstance(history[day], list) else []:
                if not isinstance(e, dict):
                    continue
                for label, text in ((user_label, e.get("query")), (bot_label, e.get("response"))):
                    if isinstance(text, str) and text.strip():
                        body += _turn_lines(_clock(20 * 60 + n), label, text)
                        n += 1
            if not body:
                continue  # an empty day (one in the English set) gets no file
            lines = _frontmatter([("date", when), ("source", "memorybank-siliconfriend"), ("user", name),
                                  ("synthetic_times", True)])
            lines += [f"# {day}", ""] + body
            path = out_dir / name / f"{day}.md"
            _write(path, lines)
            report["files"].append(str(path))
            report["turns"] += n
            days_written += 1
        report["days"] += days_written
        report["users"] += 1
    for u in sorted((wanted or set()) - matched):
        report["errors"].append({"user": u, "error": "not in the source file"})
    return report


def _locomo_stamp(stamp: object) -> tuple[date, str] | None:
    """Parse "1:56 pm on 8 May, 2023" -> (date(2023, 5, 8), "13:56"); None when unreadable."""
    m = _LOCOMO_STAMP.fullmatch(stamp) if isinstance(stamp, str) else None
    if not m:
        return None
    hour, minute, ampm, day, month, year = m.groups()
    month_no = _MONTHS.get(month.lower()) or next((v for k, v in _MONTHS.items() if k[:3] == month.lower()[:3]), None)
    if month_no is None or not (1 <= int(hour) <= 12 and int(minute) < 60):
        return None
    try:
        when = date(int(year), month_no, int(day))
    except ValueError:
        return None
    hour24 = int(hour) % 12 + (12 if ampm.lower() == "p" else 0)
    return when, f"{hour24:02d}:{minute}"


def import_locomo(src_json: Path, out_dir: Path, *, conversations: list[str] | None = None) -> dict:
    """LoCoMo JSON (upstream schema) -> ``out_dir/<sample_id>/<date>.md`` plus ``dia_map.jsonl``.

    Returns counts (``conversations``, ``days``, ``sessions``, ``turns``), ``files`` (day logs),
    ``dia_maps``, ``skipped`` (sessions left out, with the reason) and ``errors``.
    """
    samples = json.loads(Path(src_json).read_text(encoding="utf-8"))
    out_dir = Path(out_dir)
    wanted = set(conversations) if conversations is not None else None
    report: dict = {"conversations": 0, "days": 0, "sessions": 0, "turns": 0, "files": [], "dia_maps": [],
                    "skipped": [], "errors": []}
    seen: set[str] = set()  # casefolded sample ids: two folders must not collide
    matched: set[str] = set()
    for sample in samples if isinstance(samples, list) else []:
        sid = str(sample.get("sample_id", "")) if isinstance(sample, dict) else ""
        if wanted is not None and sid not in wanted:
            continue
        matched.add(sid)
        conv = sample.get("conversation") if isinstance(sample, dict) else None
        problem = name_problem(sid) or ("duplicate sample_id" if sid.casefold() in seen else None)
        if problem is None and not isinstance(conv, dict):
            problem = "no 'conversation' object"
        if problem:
            report["errors"].append({"conversation": sid, "error": problem})
            continue
        seen.add(sid.casefold())
        # Speakers: the two named participants, then anyone else who speaks (none in upstream data).
        speakers = [conv.get("speaker_a"), conv.get("speaker_b")]
        numbers = sorted(int(k[8:]) for k in conv if re.fullmatch(r"session_\d+", k))
        for n in numbers:
            for turn in conv[f"session_{n}"] if isinstance(conv[f"session_{n}"], list) else []:
                if isinstance(turn, dict) and turn.get("speaker") not in speakers:
                    speakers.append(turn.get("speaker"))
        bad = next((f"speaker {s!r}: {p}" for s in speakers
                    if (p := _speaker_problem(s) if isinstance(s, str) else "not a string")), None)
        if bad:
            report["errors"].append({"conversation": sid, "error": bad})
            continue
        dated = sorted(int(m[1]) for k in conv if (m := re.fullmatch(r"session_(\d+)_date_time", k)))
        for n in dated:
            if f"session_{n}" not in conv:
                report["skipped"].append({"conversation": sid, "session": n, "reason": "date only, no turns"})
        # Sessions grouped by date; within a date, in session order.
        by_day: dict[date, list[tuple[int, str, list]]] = {}
        for n in numbers:
            turns = conv[f"session_{n}"]
            parsed = _locomo_stamp(conv.get(f"session_{n}_date_time"))
            if parsed is None:
                reason = f"session_{n}_date_time missing or unreadable: {conv.get(f'session_{n}_date_time')!r}"
                report["skipped"].append({"conversation": sid, "session": n, "reason": reason})
                continue
            if not isinstance(turns, list) or not turns:
                report["skipped"].append({"conversation": sid, "session": n, "reason": "no turns"})
                continue
            by_day.setdefault(parsed[0], []).append((n, parsed[1], turns))
        dia_rows: list[str] = []
        for day in sorted(by_day):
            lines = _frontmatter([("date", day), ("source", "locomo"), ("sample_id", sid),
                                  ("speakers", {s: "other" for s in speakers})])
            lines += [f"# {day.isoformat()}"]
            for n, hhmm, turns in by_day[day]:
                lines += ["", f"## Session {n}", ""]
                for turn in turns:
                    if not isinstance(turn, dict):
                        report["errors"].append({"conversation": sid, "session": n, "error": "turn is not an object"})
                        continue
                    text = str(turn.get("text") or "").rstrip()
                    caption = turn.get("blip_caption")
                    if isinstance(caption, str) and caption.strip():
                        text = f"{text} [shared a photo: {' '.join(caption.split())}]".lstrip()
                    start = len(lines) + 1
                    lines += _turn_lines(hhmm, turn["speaker"], text)
                    report["turns"] += 1
                    if turn.get("dia_id"):
                        row = {"dia_id": str(turn["dia_id"]), "file": f"{day.isoformat()}.md",
                               "line_start": start, "line_end": len(lines), "session": n}
                        dia_rows.append(json.dumps(row, ensure_ascii=False))
                report["sessions"] += 1
            path = out_dir / sid / f"{day.isoformat()}.md"
            _write(path, lines)
            report["files"].append(str(path))
            report["days"] += 1
        map_path = out_dir / sid / "dia_map.jsonl"
        _write(map_path, dia_rows)
        report["dia_maps"].append(str(map_path))
        report["conversations"] += 1
    for c in sorted((wanted or set()) - matched):
        report["errors"].append({"conversation": c, "error": "not in the source file"})
    return report
