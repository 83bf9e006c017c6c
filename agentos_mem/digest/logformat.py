"""Reading working-memory logs: ``YYYY-MM-DD.md`` day logs and ``YYYY-MM-DD.jsonl`` chat exports.

Every turn keeps its file and 1-based line range, lines counted as editors count them
(``kernel.text.split_lines``: \n, \r\n and a lone \r). Anything that cannot be read becomes a
``Quarantined`` entry naming the file (and line) and the rest is read: one bad line never costs the
file, one bad file never costs the day. Only regular files are read, never through a symbolic link (a
link is refused even when its target is inside the logs folder: a link could be re-pointed between
nights, and the raw archive would then serve whatever it names); pipes, devices and sockets are refused
without being opened for reading. The work per line is linear in its length, and a turn is digested
from its first ``MAX_TURN_CHARS`` characters (the archive keeps it whole). The format is documented in
README.md ("Working-memory logs").
"""

from __future__ import annotations

import errno
import hashlib
import json
import os
import re
import stat
import unicodedata
from datetime import date, datetime
from pathlib import Path
from zoneinfo import ZoneInfo

import yaml

from agentos_mem.kernel.domain import ASSISTANT_LABELS, USER_LABELS, DayLog, Quarantined, Turn
from agentos_mem.kernel.files import guard, tree_root, kind_of
from agentos_mem.kernel.text import split_lines

ROLES = ("user", "assistant", "other")
# A turn is digested (facts, memories, cards) from this many characters; the rest is reported, and kept whole in
# the raw archive. Nobody states a fact 64,000 characters into a message; a pasted document or a dump is not cut
# into sentences for the extractors.
MAX_TURN_CHARS = 64_000
MAX_FRONTMATTER_CHARS = 64_000  # frontmatter is a few lines of metadata; a larger block is not parsed as YAML
MAX_LINE_PROBLEMS = 20  # per file and kind: the lines after that are summed up in one entry

# A day log's name: the day, an optional suffix (".<host>", "-notes"), the format. Read whatever names one day
# unambiguously: the extension in any case (2026-12-06.MD), a plain-text log as Markdown (.txt, .markdown), the month
# and day without their leading zero (2026-12-9.md) or run together (20261207.md). A name that looks like a day log
# and is not one (2026-13-01.md, 12-06-2026.md) is reported by ``unread_names``, never passed over in silence.
_DAY_NAME = re.compile(r"^(?:(\d{4})-(\d{1,2})-(\d{1,2})|(\d{4})(\d{2})(\d{2}))(?:[._\-][^/\\]*)?\.(md|markdown|txt|jsonl)$",
                       re.IGNORECASE)
# Anything in the logs folder whose name holds a date-like run of digits and that no day claims.
_DATED = re.compile(r"\d{4}[-_.]?\d{1,2}[-_.]?\d{1,2}|\d{1,2}[-_.]\d{1,2}[-_.]\d{4}")
# "[09:12] 用户: text" (a list marker before it is allowed). No leading spaces: indented lines are
# continuations, which is how importers keep multi-line turns from looking like new turns.
_TIMED_TURN = re.compile(
    r"^(?:[-*]\s+)?\[(?P<time>\d{1,2}:\d{2}(?::\d{2})?)\]\s*(?P<speaker>[^\s:：\[\]][^:：\[\]]{0,39}?)\s*[:：]\s?(?P<text>.*)$"
)
# "用户: text" without a time: only a turn when the label is a known or declared speaker.
_BARE_TURN = re.compile(r"^(?:[-*]\s+)?(?:\*\*)?(?P<speaker>[^\s:：\[\]#>*-][^:：\[\]*]{0,39}?)(?:\*\*)?\s*[:：]\s?(?P<text>.*)$")
_HEADING = re.compile(r"^(#{1,6})\s+(.*)$")  # closing #s are stripped in Python: a lazy .*? before them is quadratic
_FENCE = re.compile(r"^\s{0,3}(`{3,}|~{3,})")


def display_name(name: str) -> str:
    """A file name as reports show it: control characters, line and paragraph separators and bidi controls
    escaped (``\\n``, ``\\u202e``), bytes that are not UTF-8 as ``\\xNN``; an ordinary name is unchanged."""
    if name.isprintable() and name.isascii():
        return name
    out = []
    for ch in name:
        if "\udc80" <= ch <= "\udcff":  # os.listdir's surrogateescape: a byte that is not UTF-8
            out.append(f"\\x{ord(ch) - 0xDC00:02x}")
        elif _unsafe_char(ch):
            out.append(ch.encode("unicode_escape").decode("ascii"))
        else:
            out.append(ch)
    return "".join(out)


_BIDI = frozenset("\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")


def _unsafe_char(ch: str) -> bool:
    return unicodedata.category(ch) in ("Cc", "Cs", "Zl", "Zp") or ch in _BIDI


def name_problem(name: str) -> str | None:
    """Why a log's file name is refused (read neither into facts nor into the archive), or None."""
    bad = next((ch for ch in name if _unsafe_char(ch)), None)
    if bad is None:
        return None
    if "\udc80" <= bad <= "\udcff":
        return "file name is not valid UTF-8: not read; rename the file"
    return f"file name contains {'a control character' if unicodedata.category(bad) == 'Cc' else 'an invisible separator or direction mark'} (U+{ord(bad):04X}): not read; rename the file"


def day_of(path: Path) -> date | None:
    m = _DAY_NAME.fullmatch(path.name)
    if not m:
        return None
    y, mo, d = (m.group(1), m.group(2), m.group(3)) if m.group(1) else (m.group(4), m.group(5), m.group(6))
    try:
        return date(int(y), int(mo), int(d))
    except ValueError:
        return None


def is_jsonl(path: Path) -> bool:
    """A chat export (one JSON object a line) rather than a Markdown or plain-text log."""
    return path.suffix.lower() == ".jsonl"


def unread_names(folder: Path) -> list[tuple[str, str]]:
    """(name, what to do) for each entry of the logs folder that names a date but no day that can be read: an
    impossible date, another order of its parts, another format. The digest reports them instead of passing over
    what the user meant as a log."""
    folder = Path(folder)
    if not folder.is_dir():
        return []
    out = []
    with os.scandir(folder) as it:
        for e in it:
            if e.name.startswith(".") or day_of(Path(e.name)) is not None or not _DATED.search(e.name):
                continue
            out.append((display_name(e.name), "named like a day log but not read: name it YYYY-MM-DD.md (or .jsonl for a "
                                              "chat export), with a real date"))
    return sorted(out)


def _entries(folder: Path) -> list[Path]:
    """Everything in ``folder`` named like a day log, whatever it is (a link, a pipe and a folder included: the
    reader refuses them with a reason, on their day, instead of passing over them in silence)."""
    folder = Path(folder)
    # The folder itself, inside the workspace, is reached through no link (``working/bob -> working/alice`` would
    # digest alice's log into bob's facts): ``UnsafePath`` names it. A folder named by hand outside is the user's.
    if tree_root(folder) is not None:
        guard(folder).check(folder, "dir")
    if not folder.is_dir():
        return []
    with os.scandir(folder) as it:
        return [folder / e.name for e in it if day_of(Path(e.name)) is not None]


def list_days(folder: Path) -> list[date]:
    """Every day that has at least one log file in ``folder``, in date order."""
    return sorted({day_of(p) for p in _entries(folder)})


def day_files(folder: Path, day: date) -> list[Path]:
    """The log files of ``day`` (Markdown and text before ``.jsonl``, then by name)."""
    files = [p for p in _entries(folder) if day_of(p) == day]
    return sorted(files, key=lambda p: (is_jsonl(p), p.name))


def _role_of(label: str, declared: dict[str, str]) -> str | None:
    if label in declared:
        return declared[label]
    low = label.strip().lower()
    if low in USER_LABELS:
        return "user"
    if low in ASSISTANT_LABELS:
        return "assistant"
    return None


def _too_large(name: str, size: int, max_bytes: int) -> Quarantined:
    return Quarantined(name, f"file too large: {size / 1e6:.1f} MB (limit {max_bytes / 1e6:.1f} MB)")


def refusal(path: Path) -> Quarantined | None:
    """Why ``path`` is not read at all (its name, a symbolic link, not a regular file), from ``lstat``: nothing is
    opened, so a FIFO never blocks and a device is never touched."""
    name = display_name(path.name)
    why = name_problem(path.name)
    if why:
        return Quarantined(name, why)
    try:
        st = os.lstat(path)
    except OSError as e:
        return Quarantined(name, f"cannot read the file ({e.strerror or e}); skipped")
    if stat.S_ISLNK(st.st_mode):
        try:
            target = f" to {display_name(os.readlink(path))}"
        except OSError:
            target = ""
        return Quarantined(name, f"symbolic link{target}: not followed (only regular files in the logs folder are read); copy the log in instead")
    if not stat.S_ISREG(st.st_mode):
        return Quarantined(name, f"{kind_of(st.st_mode)}, not a regular file: not read")
    return None


def _read_regular(path: Path, max_bytes: int) -> tuple[bytes | None, Quarantined | None]:
    """The bytes of a regular file, opened without following a link and without blocking, checked again on the
    open descriptor (a swap after ``refusal`` cannot make it read a link, a pipe or a device)."""
    name = display_name(path.name)
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(path, flags)
    except OSError as e:
        if e.errno == errno.ELOOP:
            return None, Quarantined(name, "symbolic link: not followed (only regular files in the logs folder are read); copy the log in instead")
        return None, Quarantined(name, f"cannot read the file ({e.strerror or e}); skipped")
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            return None, Quarantined(name, f"{kind_of(st.st_mode)}, not a regular file: not read")
        if st.st_size > max_bytes:
            return None, _too_large(name, st.st_size, max_bytes)
        os.set_blocking(fd, True)
        chunks, left = [], max_bytes + 1
        while left > 0:
            chunk = os.read(fd, min(1 << 20, left))
            if not chunk:
                break
            chunks.append(chunk)
            left -= len(chunk)
        data = b"".join(chunks)
    finally:
        os.close(fd)
    if len(data) > max_bytes:  # it grew while being read
        return None, _too_large(name, len(data), max_bytes)
    return data, None


def read_bytes_checked(path: Path, max_bytes: int) -> tuple[bytes | None, Quarantined | None]:
    """The file's bytes, or the reason it must not be read (its name, a link, not a regular file, too large,
    empty, binary)."""
    problem = refusal(path)
    if problem:
        return None, problem
    data, problem = _read_regular(path, max_bytes)
    if problem:
        return None, problem
    name = display_name(path.name)
    if not data.strip():
        return None, Quarantined(name, "empty file: nothing to digest")
    if b"\x00" in data[:8192] and not data.startswith(_UTF16_BOMS):
        return None, Quarantined(name, "binary file (NUL bytes): not a text log (a UTF-16 text needs its byte order mark; "
                                       "or save it as UTF-8)")
    return data, None


def file_signature(path: Path, max_bytes: int) -> str:
    """What says a log changed since it was digested: its content hash (the same as ``read_log``'s), or, for what
    is not read (a link, a pipe, a file too large), a stamp from ``lstat``. Never follows a link, never blocks,
    never raises."""
    try:
        st = os.lstat(path)
    except OSError as e:
        return f"error:{e.errno}"
    if not stat.S_ISREG(st.st_mode) or name_problem(path.name):
        return f"refused:{stat.S_IFMT(st.st_mode):o}:size:{st.st_size}:mtime:{int(st.st_mtime)}"
    if st.st_size > max_bytes:
        return f"size:{st.st_size}:mtime:{int(st.st_mtime)}"
    data, problem = _read_regular(path, max_bytes)
    if data is None:
        return f"unread:size:{st.st_size}:mtime:{int(st.st_mtime)}"
    return hashlib.sha256(data).hexdigest()


def decode_lines(name: str, data: bytes) -> tuple[list[str], set[int], list[Quarantined]]:
    """The lines of a log (``split_lines``), the 1-based numbers of those that are not valid UTF-8 (each replaced
    by its U+FFFD rendering, for the reader to see its shape, never to digest it) and one problem per such line
    (the first ``MAX_LINE_PROBLEMS``, then one entry for the rest). The valid lines are all kept."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        text = None
    if text is not None:
        return split_lines(text.removeprefix("\ufeff")), set(), []
    lines, bad, problems = [], set(), []
    for i, raw in enumerate(split_lines(data.removeprefix(b"\xef\xbb\xbf")), 1):
        try:
            lines.append(raw.decode("utf-8"))
        except UnicodeDecodeError as e:
            lines.append(raw.decode("utf-8", errors="replace"))
            bad.add(i)
            if len(bad) <= MAX_LINE_PROBLEMS:
                problems.append(Quarantined(name, f"invalid UTF-8 (byte 0x{raw[e.start]:02x} at byte {e.start + 1} of the line); "
                                                  "line skipped, the other lines are read (save the file as UTF-8)", i))
    if len(bad) > MAX_LINE_PROBLEMS:
        rest = sorted(bad)[MAX_LINE_PROBLEMS:]
        problems.append(Quarantined(name, f"{len(rest)} more lines with invalid UTF-8 (lines {rest[0]}-{rest[-1]}) skipped, "
                                          "the other lines are read (save the file as UTF-8)", rest[0]))
    return lines, bad, problems


def _short(value, limit: int = 60) -> str:
    """``repr`` of a value from the input, cut for a one-line reason."""
    r = repr(value)
    return r if len(r) <= limit else r[: limit - 1] + "…"


def _clip(message: str, limit: int = 160) -> str:
    """An error message on one line, cut for a reason."""
    one = " ".join(message.split())
    return one if len(one) <= limit else one[: limit - 1] + "…"


def _capped(log: DayLog, text: str, line: int) -> str:
    """A turn's text, cut at ``MAX_TURN_CHARS`` with a warning naming its line."""
    if len(text) <= MAX_TURN_CHARS:
        return text
    log.problems.append(Quarantined(log.name, f"turn of {len(text):,} characters: only its first {MAX_TURN_CHARS:,} are digested "
                                              "(facts, memories, cards); the raw archive (L3) keeps it whole", line, "warning"))
    return text[:MAX_TURN_CHARS]


_UTF16_BOMS = (b"\xff\xfe", b"\xfe\xff")


def _as_utf8(log: DayLog, data: bytes) -> bytes:
    """A UTF-16 log with its byte order mark (Windows Notepad's "Unicode") as UTF-8: it is read, and archived (L3),
    as the same text; the file itself is never touched. A UTF-16 file that does not decode stays as it is (the
    line reader reports its lines)."""
    if not data.startswith(_UTF16_BOMS):
        return data
    try:
        text = data.decode("utf-16")
    except UnicodeDecodeError:
        return data
    log.problems.append(Quarantined(log.name, "UTF-16 text: read, and kept in the raw archive, as UTF-8 (the file is "
                                              "unchanged; save it as UTF-8 to silence this)", severity="warning"))
    return text.encode("utf-8")


def read_log(path: Path, *, max_bytes: int, tz: str = "Asia/Shanghai") -> DayLog:
    """Parse one log file. Whole-file problems leave ``turns`` empty; line problems skip that line."""
    log = DayLog(path=str(path), name=display_name(path.name), sha256="", text="")
    data, problem = read_bytes_checked(path, max_bytes)
    if problem:
        log.problems.append(problem)
        return log
    log.sha256 = hashlib.sha256(data).hexdigest()  # of the file as it is: what says it changed
    data = _as_utf8(log, data)
    log.data = data
    lines, bad, problems = decode_lines(log.name, data)
    log.problems.extend(problems)
    log.text = "".join(("" if i in bad else line) + "\n" for i, line in enumerate(lines, 1))
    if is_jsonl(path):
        _parse_jsonl(log, lines, bad, tz)
    else:
        _parse_markdown(log, lines, bad)
    if not log.turns and not bad and not any(p.severity == "error" and p.line is None for p in log.problems):
        log.problems.append(Quarantined(path.name, "no turns found (see the log format in README.md)", severity="warning"))
    return log


def _split_frontmatter(log: DayLog, lines: list[str], bad: set[int] = frozenset()) -> int:
    """Read YAML frontmatter into ``log.meta``; returns the index of the first body line.

    Broken frontmatter is reported and skipped: the body is still read as plain Markdown.
    """
    if not lines or lines[0].strip() != "---":
        return 0
    end = next((i for i in range(1, len(lines)) if lines[i].strip() in ("---", "...")), None)
    if end is None:
        log.problems.append(Quarantined(log.name, "frontmatter opened with '---' but never closed; read as plain Markdown", 1, "warning"))
        return 0
    block = "\n".join(lines[i] for i in range(1, end) if i + 1 not in bad)
    if len(block) > MAX_FRONTMATTER_CHARS:
        log.problems.append(Quarantined(log.name, f"frontmatter of {len(block):,} characters (limit {MAX_FRONTMATTER_CHARS:,}) not read; "
                                                  "body read as plain Markdown", 1, "warning"))
        return end + 1
    try:
        meta = yaml.safe_load(block) or {}
        if not isinstance(meta, dict):
            raise ValueError("frontmatter is not a mapping")
    except Exception as e:  # noqa: BLE001 - YAMLError, or RecursionError on deep nesting: the body is still read
        reason = (str(e).splitlines() or [type(e).__name__])[0][:200]
        log.problems.append(Quarantined(log.name, f"broken frontmatter ({reason}); body read as plain Markdown", 1, "warning"))
        return end + 1
    speakers = meta.get("speakers") or {}
    if not isinstance(speakers, dict):
        log.problems.append(Quarantined(log.name, "frontmatter field 'speakers' must map names to user|assistant|other", 1, "warning"))
        speakers = {}
    clean = {}
    for name, role in speakers.items():
        if role not in ROLES:
            log.problems.append(Quarantined(log.name, f"frontmatter 'speakers': role of {_short(name)} must be user, assistant or other, not {_short(role)}", 1, "warning"))
            continue
        clean[str(name)] = role
    meta["speakers"] = clean
    log.meta = meta
    return end + 1


def _parse_markdown(log: DayLog, lines: list[str], bad: set[int] = frozenset()) -> None:
    body_start = _split_frontmatter(log, lines, bad)
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
        text = _capped(log, "\n".join(body).strip(), current["start"])
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
        if lineno in bad:
            # Not UTF-8 (reported): never digested. If it looks like a new turn or a heading, the turn above ends
            # and the lines that continue it are skipped too, so they are never given to the wrong speaker.
            if not in_fence and (_HEADING.match(line) or _TIMED_TURN.match(line) or _BARE_TURN.match(line)):
                close()
            elif current is not None:
                current["lines"].append("")  # a continuation: the turn goes on, without it (its lines keep their numbers)
            continue
        try:
            if _FENCE.match(line):
                in_fence = not in_fence
            if not in_fence:
                h = _HEADING.match(line)
                if h:
                    close()
                    title = h.group(2).rstrip().rstrip("#").rstrip()
                    topic = title if len(h.group(1)) >= 2 else None
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
                    else:
                        time = m.group("time") if m else None
                        if time and len(time.split(":")[0]) == 1:
                            time = "0" + time
                        current = {"role": role, "speaker": label, "time": time, "start": lineno, "lines": [hit.group("text")]}
                    continue
            if current is not None:
                current["lines"].append(line[2:] if line.startswith("  ") else line)
        except Exception as e:  # noqa: BLE001 - one line never costs the file
            log.problems.append(Quarantined(log.name, f"could not read this line ({type(e).__name__}: {_clip(str(e))}); line skipped", lineno))
    close()


MAX_SPEAKER_CHARS = 100


def _unicode_ok(s: str) -> bool:
    """False for a string with a lone surrogate (JSON's ``"\\ud800"``): not text any file could hold."""
    if s.isascii():
        return True
    try:
        s.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _parse_jsonl(log: DayLog, lines: list[str], bad: set[int], tz: str) -> None:
    zone = ZoneInfo(tz)
    for lineno, raw in enumerate(lines, start=1):
        if lineno in bad or not raw.strip():
            continue
        try:
            problem = _jsonl_line(log, raw, lineno, zone)
        except Exception as e:  # noqa: BLE001 - one line never costs the file
            problem = f"could not read this line ({type(e).__name__}: {_clip(str(e))}); line skipped"
        if problem:
            log.problems.append(Quarantined(log.name, problem, lineno))


def _jsonl_line(log: DayLog, raw: str, lineno: int, zone: ZoneInfo) -> str | None:
    """One message of a JSONL export into ``log.turns``; returns why the line is skipped, or None."""
    try:
        obj = json.loads(raw)
    except json.JSONDecodeError as e:
        return f"invalid JSON ({e.msg} at column {e.colno}); line skipped"
    except RecursionError:
        return "invalid JSON (nested too deeply); line skipped"
    except ValueError as e:  # e.g. an integer of more than 4,300 digits
        return f"invalid JSON ({_clip(str(e))}); line skipped"
    if not isinstance(obj, dict):
        return "line is not a JSON object; line skipped"
    role = obj.get("role")
    if role not in ("user", "assistant"):
        return f"unknown role {_short(role)} (expected 'user' or 'assistant'); line skipped"
    content = obj.get("content")
    if not isinstance(content, str) or not content.strip():
        return "field 'content' missing or not a non-empty string; line skipped"
    if not _unicode_ok(content):
        return "field 'content' holds a lone surrogate (an escape like \\ud800 that is not a character); line skipped"
    time = None
    stamp = obj.get("timestamp")
    try:
        when = datetime.fromisoformat(str(stamp).replace("Z", "+00:00"))
        if when.tzinfo is not None:
            when = when.astimezone(zone)
        time = when.strftime("%H:%M:%S")
    except (ValueError, OverflowError) as e:
        what = "is out of range" if isinstance(e, OverflowError) or stamp is not None and "range" in str(e) else "is not ISO 8601"
        log.problems.append(Quarantined(log.name, f"field 'timestamp' {what} ({_short(stamp)}); turn kept without a time", lineno, "warning"))
    speaker, name = role, obj.get("name")
    if name not in (None, ""):
        name = str(name) if isinstance(name, (int, float)) else name
        if isinstance(name, str) and name.strip() and len(name) <= MAX_SPEAKER_CHARS and name.isprintable() and _unicode_ok(name):
            speaker = name.strip()
        else:
            log.problems.append(Quarantined(log.name, f"field 'name' is not a speaker's name ({_short(name)}); the role is used", lineno, "warning"))
    log.turns.append(
        Turn(index=len(log.turns), role=role, speaker=speaker, text=_capped(log, content.strip(), lineno), time=time,
             source_file=log.name, line_start=lineno, line_end=lineno)
    )
    return None
