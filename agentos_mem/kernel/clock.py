"""The one clock: "now" and "today" in the workspace's time zone, never the host's.

The host may run on UTC while the workspace lives in Asia/Shanghai: between 16:00 and 24:00 UTC the two
disagree on the day, and at a month or year end on the month and year too. Everything that asks "what day
is it" or "what holds now" comes here with the workspace's time zone (``Settings.timezone``).

``AGENTOS_NOW`` pins the instant for this process and every process it starts (CLI, flow runs of a
served deployment): ISO 8601, e.g. ``2026-12-31T23:30:00+08:00``, always with an offset (a wall time alone
would mean a different instant in every zone). It is an environment variable rather than a setting so that child processes
inherit it; tests use it to run at a month end, a year end and a UTC/Asia-Shanghai day split, and it
makes a run reproducible. Unset (the normal case): the system clock.

Stored timestamps come in two forms: *wall time* in the workspace's zone without an offset (facts'
``valid_from`` / ``valid_to`` / ``expires_at``, compared as strings: ``wall_iso``), and *instants* with an
offset for record keeping (``stamp``).
"""

from __future__ import annotations

import os
from contextlib import contextmanager
from datetime import date, datetime, timedelta, timezone, tzinfo
from functools import lru_cache
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

PIN_ENV = "AGENTOS_NOW"
DEFAULT_TZ = "Asia/Shanghai"

Zone = str | tzinfo


class ClockError(ValueError):
    """A time zone name or an ``AGENTOS_NOW`` value that cannot be used."""


@lru_cache(maxsize=32)
def _zone_named(name: str) -> tzinfo:
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError) as e:
        raise ClockError(f"unknown time zone {name!r} (an IANA name such as Asia/Shanghai or UTC)") from e


def zone(tz: Zone | None) -> tzinfo:
    if tz is None:
        return timezone.utc
    return _zone_named(tz) if isinstance(tz, str) else tz


def pinned() -> datetime | None:
    """The instant ``AGENTOS_NOW`` pins, if set (aware)."""
    raw = os.environ.get(PIN_ENV, "").strip()
    if not raw:
        return None
    try:
        at = datetime.fromisoformat(raw.replace("Z", "+00:00"))
    except ValueError as e:
        raise ClockError(f"{PIN_ENV}={raw!r} is not an ISO 8601 time such as 2026-12-31T23:30:00+08:00") from e
    if at.tzinfo is None:
        raise ClockError(f"{PIN_ENV}={raw!r} has no UTC offset: write it as {raw}+08:00 (Asia/Shanghai) or {raw}Z (UTC)")
    return at


_replayed: list[datetime] = []  # instants held by ``replaying`` (innermost last)


@contextmanager
def replaying(instant: str | datetime):
    """Inside the block, "now" is ``instant`` (this process only; an aware ISO time or datetime): a decision replayed
    from the journal (``restore.replay``) happens at the instant it was made, so what it stamps (a forgotten fact's
    end of validity, an approved document's facts) is the same on every machine that replays it."""
    at = datetime.fromisoformat(instant.replace("Z", "+00:00")) if isinstance(instant, str) else instant
    if at.tzinfo is None:
        raise ClockError(f"a replayed instant needs its UTC offset, not {instant!r}")
    _replayed.append(at)
    try:
        yield at
    finally:
        _replayed.pop()


def now(tz: Zone | None = DEFAULT_TZ) -> datetime:
    """The current instant, in ``tz`` (aware, whole seconds)."""
    at = (_replayed[-1] if _replayed else None) or pinned() or datetime.now(timezone.utc)
    return at.astimezone(zone(tz)).replace(microsecond=0)


def today(tz: Zone = DEFAULT_TZ) -> date:
    """The calendar day it is now in ``tz`` (the workspace's day, not the host's)."""
    return now(tz).date()


def yesterday(tz: Zone = DEFAULT_TZ) -> date:
    return today(tz) - timedelta(days=1)


def wall_iso(tz: Zone = DEFAULT_TZ) -> str:
    """Now as wall time in ``tz`` without an offset (``2026-12-01T06:05:00``): the form facts' validity uses."""
    return now(tz).replace(tzinfo=None).isoformat(timespec="seconds")


def stamp(tz: Zone | None = None) -> str:
    """Now as an instant with its offset, for record keeping (UTC when no zone is given)."""
    return now(tz).isoformat(timespec="seconds")
