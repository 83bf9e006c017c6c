"""Reading working-memory logs: ``YYYY-MM-DD.md`` day logs and ``YYYY-MM-DD.jsonl`` chat exports.

Every turn keeps its file and 1-based line range. Anything that cannot be read becomes a
``Quarantined`` entry naming the file (and line) and the rest is read: one bad line never costs the
day. The format is documented in README.md ("Working-memory logs").
"""

from __future__ import annotations

import hashlib
import json
import re
from datetime import date, datetime
from pathlib import Path
from zoneinfo import ZoneInfo

import yaml

from kernel.domain import ASSISTANT_LABELS, USER_LABELS, DayLog, Quarantined, Turn

ROLES = ("user", "assistant", "other")

_DAY_NAME = re.compile(r"^(\d{4}-\d{2}-\d{2})(?:[._\-][^/\\]*)?\.(md|jsonl)$")
# "[09:12] 用户: text" (a list marker before it is allowed). No leading spaces: indented lines are
# continuations, which is how importers keep multi-line turns from looking like new turns.
_TIMED_TURN = re.compile(
    r"^(?:[-*]\s+)?\[(?P<time>\d{1,2}:\d{2}(?::\d{2})?)\]\s*(?P<speaker>[^\s:：\[\]][^:：\[\]]{0,39}?)\s*[:：]\s?(?P<text>.*)$"
)
# "用户: text" without a time: only a turn when the label is a known or declared speaker.
_BARE_TURN = re.compile(r"^(?:[-*]\s+)?(?:\*\*)?(?P<speaker>[^\s:：\[\]#>*-][^:：\[\]*]{0,39}?)(?:\*\*)?\s*[:：]\s?(?P<text>.*)$")
_HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
_FENCE = re.compile(r"^\s{0,3}(`{3,}|~{3,})")


def day_of(path: Path) -> date | None:
    m = _DAY_NAME.match(path.name)
    if not m:
        return None
    try:
        return date.fromisoformat(m.group(1))
    except ValueError:
        return None


def list_days(folder: Path) -> list[date]:
    """Every day that has at least one log file in ``folder``, in date order."""
    if not folder.is_dir():
        return []
    return sorted({d for p in folder.iterdir() if p.is_file() and (d := day_of(p)) is not None})


def day_files(folder: Path, day: date) -> list[Path]:
    """The log files of ``day`` (``.md`` before ``.jsonl``, then by name)."""
    if not folder.is_dir():
        return []
    files = [p for p in folder.iterdir() if p.is_file() and day_of(p) == day]
    return sorted(files, key=lambda p: (p.suffix != ".md", p.name))


def _role_of(label: str, declared: dict[str, str]) -> str | None:
    if label in declared:
        return declared[label]
    low = label.strip().lower()
    if low in USER_LABELS:
        return "user"
    if low in ASSISTANT_LABELS:
        return "assistant"
    return None


def read_bytes_checked(path: Path, max_bytes: int) -> tuple[bytes | None, Quarantined | None]:
    """The file's bytes, or the reason it must not be read (too large, empty, binary)."""
    size = path.stat().st_size
    if size > max_bytes:
        return None, Quarantined(path.name, f"file too large: {size / 1e6:.1f} MB (limit {max_bytes / 1e6:.1f} MB)")
    data = path.read_bytes()
    if not data.strip():
        return None, Quarantined(path.name, "empty file: nothing to digest")
    if b"\x00" in data[:8192]:
        return None, Quarantined(path.name, "binary file (NUL bytes): not a text log")
    return data, None


def decode_utf8(name: str, data: bytes) -> tuple[str | None, Quarantined | None]:
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        line = data[: e.start].count(b"\n") + 1
        return None, Quarantined(name, f"invalid UTF-8 (byte 0x{data[e.start]:02x} at offset {e.start}); convert the file to UTF-8", line)
    return text.removeprefix("\ufeff"), None


def read_log(path: Path, *, max_bytes: int, tz: str = "Asia/Shanghai") -> DayLog:
    """Parse one log file. Whole-file problems leave ``turns`` empty; line problems skip that line."""
    log = DayLog(path=str(path), name=path.name, sha256="", text="")
    data, problem = read_bytes_checked(path, max_bytes)
    if problem:
        log.problems.append(problem)
        return log
    log.sha256 = hashlib.sha256(data).hexdigest()
    log.data = data
    text, problem = decode_utf8(path.name, data)
    if problem:
        log.problems.append(problem)
        return log
    log.text = text
    if path.suffix == ".jsonl":
        _parse_jsonl(log, tz)
    else:
        _parse_markdown(log)
    if not log.turns and not any(p.severity == "error" and p.line is None for p in log.problems):
        log.problems.append(Quarantined(path.name, "no turns found (see the log format in README.md)", severity="warning"))
    return log


def _split_frontmatter(log: DayLog, lines: list[str]) -> int:
    """Read YAML frontmatter into ``log.meta``; returns the index of the first body line.

    Broken frontmatter is reported and skipped: the body is still read as plain Markdown.
    """
    if not lines or lines[0].strip() != "---":
        return 0
    end = next((i for i in range(1, len(lines)) if lines[i].strip() in ("---", "...")), None)
    if end is None:
        log.problems.append(Quarantined(log.name, "frontmatter opened with '---' but never closed; read as plain Markdown", 1, "warning"))
        return 0
    try:
        meta = yaml.safe_load("\n".join(lines[1:end])) or {}
        if not isinstance(meta, dict):
            raise ValueError("frontmatter is not a mapping")
    except (yaml.YAMLError, ValueError) as e:
        reason = str(e).splitlines()[0]
        log.problems.append(Quarantined(log.name, f"broken frontmatter ({reason}); body read as plain Markdown", 1, "warning"))
        return end + 1
    speakers = meta.get("speakers") or {}
    if not isinstance(speakers, dict):
        log.problems.append(Quarantined(log.name, "frontmatter field 'speakers' must map names to user|assistant|other", 1, "warning"))
        speakers = {}
    clean = {}
    for name, role in speakers.items():
        if role not in ROLES:
            log.problems.append(Quarantined(log.name, f"frontmatter 'speakers': role of {name!r} must be user, assistant or other, not {role!r}", 1, "warning"))
            continue
        clean[str(name)] = role
    meta["speakers"] = clean
    log.meta = meta
    return end + 1


def _parse_markdown(log: DayLog) -> None:
    lines = log.text.splitlines()
    body_start = _split_frontmatter(log, lines)
    declared = log.meta.get("speakers", {})
    topic: str | None = None
    current: dict | None = None
    in_fence = False

    def close() -> None:
        nonlocal current
        if current is None:
            return
        body = current["lines"]
        while body and not body[-1].strip():
            body.pop()
        text = "\n".join(body).strip()
        if text:
            log.turns.append(
                Turn(
                    index=len(log.turns),
                    role=current["role"],
                    speaker=current["speaker"],
                    text=text,
                    time=current["time"],
                    source_file=log.name,
                    line_start=current["start"],
                    line_end=current["start"] + len(body) - 1,
                    topic=topic,
                )
            )
        current = None

    for i in range(body_start, len(lines)):
        line, lineno = lines[i], i + 1
        if _FENCE.match(line):
            in_fence = not in_fence
        if not in_fence:
            h = _HEADING.match(line)
            if h:
                close()
                topic = h.group(2) if len(h.group(1)) >= 2 else None
                continue
            m = _TIMED_TURN.match(line)
            bare = None if m else _BARE_TURN.match(line)
            if m or (bare and _role_of(bare.group("speaker").strip(), declared)):
                hit = m or bare
                label = hit.group("speaker").strip()
                role = _role_of(label, declared)
                close()
                if role is None:
                    log.problems.append(
                        Quarantined(log.name, f"unknown speaker {label!r}: declare it in frontmatter 'speakers' (user|assistant|other); turn skipped", lineno)
                    )
                    current = None
                    skipping = True
                else:
                    skipping = False
                    time = m.group("time") if m else None
                    if time and len(time.split(":")[0]) == 1:
                        time = "0" + time
                    current = {"role": role, "speaker": label, "time": time, "start": lineno, "lines": [hit.group("text")]}
                if skipping:
                    current = None
                continue
        if current is not None:
            current["lines"].append(line[2:] if line.startswith("  ") else line)
    close()


def _parse_jsonl(log: DayLog, tz: str) -> None:
    zone = ZoneInfo(tz)
    for lineno, raw in enumerate(log.text.splitlines(), start=1):
        if not raw.strip():
            continue
        try:
            obj = json.loads(raw)
        except json.JSONDecodeError as e:
            log.problems.append(Quarantined(log.name, f"invalid JSON ({e.msg} at column {e.colno}); line skipped", lineno))
            continue
        if not isinstance(obj, dict):
            log.problems.append(Quarantined(log.name, "line is not a JSON object; line skipped", lineno))
            continue
        role = obj.get("role")
        if role not in ("user", "assistant"):
            log.problems.append(Quarantined(log.name, f"unknown role {role!r} (expected 'user' or 'assistant'); line skipped", lineno))
            continue
        content = obj.get("content")
        if not isinstance(content, str) or not content.strip():
            log.problems.append(Quarantined(log.name, "field 'content' missing or not a non-empty string; line skipped", lineno))
            continue
        time = None
        stamp = obj.get("timestamp")
        try:
            when = datetime.fromisoformat(str(stamp).replace("Z", "+00:00"))
            if when.tzinfo is not None:
                when = when.astimezone(zone)
            time = when.strftime("%H:%M:%S")
        except ValueError:
            log.problems.append(Quarantined(log.name, f"field 'timestamp' is not ISO 8601 ({stamp!r}); turn kept without a time", lineno, "warning"))
        speaker = str(obj.get("name") or role)
        log.turns.append(
            Turn(index=len(log.turns), role=role, speaker=speaker, text=content.strip(), time=time,
                 source_file=log.name, line_start=lineno, line_end=lineno)
        )
