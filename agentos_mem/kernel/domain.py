"""Domain types shared by every layer: turns read from logs, candidate facts, quarantine entries.

Plain dataclasses (dict-in, dict-out through ``asdict``) so storage and query code never depend on
Prefect or pydantic models.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass, field
from datetime import date
from typing import Literal

Role = Literal["user", "assistant", "other"]
Nature = Literal["fact", "preference", "opinion", "event", "axiom"]
Explicitness = Literal["stated", "corrected", "inferred"]

# Built-in speaker labels of the logs (case-folded): anyone else is declared in a log's frontmatter.
USER_LABELS = {"用户", "我", "user", "me", "human", "人类"}
ASSISTANT_LABELS = {"助手", "assistant", "ai", "agent", "bot", "claw", "机器人"}

NATURES: tuple[str, ...] = ("fact", "preference", "opinion", "event", "axiom")
EXPLICITNESS: tuple[str, ...] = ("stated", "corrected", "inferred")
# Authority when two explicitness levels disagree: a correction outranks a statement, which
# outranks an inference. An inference never supersedes anything above it (that is a conflict).
AUTHORITY = {"inferred": 1, "stated": 2, "corrected": 3}


@dataclass(frozen=True)
class Turn:
    """One utterance in a day's log, with where it came from."""

    index: int  # position within the file, 0-based
    role: Role  # user / assistant / other (a named participant who is neither)
    speaker: str  # the label as written ("用户", "Caroline", "assistant")
    text: str
    time: str | None  # "HH:MM" or "HH:MM:SS" local time, when the log gives one
    source_file: str  # file name as given (e.g. "2026-11-03.md")
    line_start: int  # 1-based, inclusive
    line_end: int  # 1-based, inclusive
    topic: str | None = None  # the Markdown section heading the turn sits under, if any

    def at(self, day: date) -> str:
        """ISO timestamp of the turn on ``day`` (midnight when the log gives no time)."""
        t = self.time or "00:00"
        if len(t) == 5:
            t += ":00"
        return f"{day.isoformat()}T{t}"


@dataclass
class Candidate:
    """A fact proposed by an extractor, before the fact store decides what it means."""

    subject: str
    predicate: str
    object: str
    nature: str  # one of NATURES
    confidence: float
    explicitness: str  # one of EXPLICITNESS
    source_file: str
    line_start: int
    line_end: int
    observed_at: str  # ISO timestamp (day + turn time): the fact's valid-from
    speaker: str = ""
    technical: bool = False  # technical facts expire (180 days by default)
    multi_valued: bool = False  # likes / plans / events: several objects may hold at once
    event_date: str | None = None  # ISO date an event happens on, when stated
    extractor: str = "rules"
    evidence: str = ""  # the sentence the fact was read from (short)
    replaces: str | None = None  # the old value a change names: the store continues the slot of the current fact holding it
    ended: bool = False  # what used to hold ("I used to ..."): the store keeps it as history, never current
    # the sentence tells a change ("switched to", "现在改用"): when no rule ties it to a current fact, the store asks the
    # digest's slot matcher which fact of the same person it replaces (by meaning) and closes that one
    renews: bool = False
    # the current fact this candidate explicitly continues (a new value for it, or with predicate "stopped" its end), as
    # a chat model named it from the facts it was shown: the supersession policy closes exactly that one, no guess
    target: int | None = None

    def key(self, user: str, source_sha: str) -> str:
        """Identity of this observation: the same candidate from the same source is applied once."""
        payload = json.dumps(
            [user, source_sha, self.line_start, self.line_end, self.subject, self.predicate, self.object],
            ensure_ascii=False,
        )
        return hashlib.sha256(payload.encode("utf-8")).hexdigest()[:32]

    def to_dict(self) -> dict:
        return asdict(self)


@dataclass
class Quarantined:
    """A file, line or turn that could not be digested, with the reason in words."""

    file: str
    reason: str
    line: int | None = None
    severity: Literal["error", "warning"] = "error"

    def __str__(self) -> str:
        where = f"{self.file}:{self.line}" if self.line else self.file
        return f"{where}: {self.reason}"


@dataclass
class DayLog:
    """One log file of a day, parsed: its turns, its bytes' hash and what went wrong."""

    path: str
    name: str
    sha256: str
    text: str
    data: bytes = b""  # the exact bytes read, archived as they are
    turns: list[Turn] = field(default_factory=list)
    problems: list[Quarantined] = field(default_factory=list)
    meta: dict = field(default_factory=dict)


# SQLite keeps a row id in a signed 64-bit integer: a larger id is no row of any store, and handing it to SQLite
# raises an OverflowError that names nothing (``fact_forget(2**70)``), so ids are checked against this first.
ROW_ID_MAX = 2**63 - 1


def check_row_id(name: str, value: object) -> int:
    """``value`` as a row id, or a ValueError naming ``name``, the value and the allowed range (a bool or a float
    is no id, even when it would compare equal to one)."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError(f"{name} must be a whole number from 1 to {ROW_ID_MAX}, got {value!r}")
    if not 1 <= value <= ROW_ID_MAX:
        raise ValueError(f"{name} {value} is out of range: ids are whole numbers from 1 to {ROW_ID_MAX}")
    return value
