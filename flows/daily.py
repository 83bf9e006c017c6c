"""``daily-digest`` and ``backfill``: a day's logs into L3 raw, L2 facts and L1 cards."""

from __future__ import annotations

from datetime import date
from pathlib import Path

from prefect import flow, get_run_logger

from kernel import clock, progress
from kernel.settings import Settings, load_settings
from kernel.workspace import Workspace
from flows.run_progress import watch
from tasks.stops import reraise_stop
from flows.writers import user_writer, workspace_writer
from tasks import digest as t


def yesterday(settings: Settings) -> date:
    return clock.yesterday(settings.timezone)


def setup(user: str | None, logs_dir: str | None) -> tuple[Settings, str, Path]:
    settings = load_settings(user=user, logs_dir=logs_dir)
    if settings.logs_dir is not None and not Path(settings.logs_dir).is_dir():
        # a folder named by hand that is not there is a mistake, not a day without logs
        raise ValueError(f"no logs folder at {settings.logs_dir}")
    Workspace(settings.home).ensure()
    return settings, settings.user, settings.working_dir()


@flow(name="daily-digest", log_prints=False)
def daily_digest(day: date | None = None, user: str | None = None, logs_dir: str | None = None) -> dict:
    """Digest one day's working-memory logs into facts (L2), the raw archive (L3) and index cards (L1).

    Re-running a day changes nothing; a day without logs is a clean no-op.

    Args:
        day: The day to digest (YYYY-MM-DD). Empty: yesterday in the configured time zone.
        user: User id whose memory is written. Empty: AGENTOS_USER (default "default").
        logs_dir: Folder holding YYYY-MM-DD.md / .jsonl logs. Empty: the workspace's working-memory folder for the user.
    """
    settings, user, folder = setup(user, logs_dir)
    day = day or yesterday(settings)
    with watch("daily-digest"), user_writer(settings, user):
        # the day's stage tasks (tasks.digest.DAY_TASKS), under the workspace's limit (writers on every host)
        with workspace_writer(settings):
            report = t.day_stages(settings, user, day, folder, run=f"daily-digest {day}")
        t.publish_artifact(report)
        get_run_logger().info("digested %s", t.day_log_line(report))
        return report


@flow(name="backfill", log_prints=False)
def backfill(start: date, end: date, user: str | None = None, logs_dir: str | None = None) -> dict:
    """Digest every day from start to end (inclusive) in date order: supersession depends on order.

    Days already digested are left exactly as they are; days without logs are skipped cleanly.

    Args:
        start: First day (YYYY-MM-DD).
        end: Last day (YYYY-MM-DD), inclusive.
        user: User id whose memory is written. Empty: AGENTOS_USER.
        logs_dir: Folder holding the daily logs. Empty: the workspace's working-memory folder for the user.
    """
    if end < start:
        raise ValueError(f"backfill: end {end} is before start {start}")
    settings, user, folder = setup(user, logs_dir)
    days = t.days_in(folder, start, end)
    with watch("backfill"), user_writer(settings, user):  # the whole range in date order, no other run of the user in between
        return digest_days(settings, user, days, folder, kind="backfill")


def digest_days(settings: Settings, user: str, days: list[date], folder: Path, *, kind: str) -> dict:
    """Many days in date order, each a ``digest-day`` task run holding the day's stage tasks, and one artifact for the
    range. A day that fails after its stages' retries is recorded and the others go on. The caller holds the user's
    Prefect limit around it."""
    log = get_run_logger()
    reports = []
    with progress.stage("digesting days", total=len(days)) as st:
        for i, day in enumerate(days, 1):
            try:
                with workspace_writer(settings):  # a day at a time: another user's day may go between two of ours
                    r = t.whole_day(settings, user, day, folder, run=f"{kind} {day}")
            except Exception as e:  # noqa: BLE001 - one day never costs the others (nor the nightly's index rebuild)
                reraise_stop(e)  # but a run being stopped stops here
                r = t.failed_day(settings, user, day, folder, f"{kind} {day}", e)
                log.error("%s %d/%d: %s", kind, i, len(days), r["quarantined"][0])
            else:
                log.info("%s %d/%d: %s", kind, i, len(days), t.day_log_line(r))
            reports.append(r)
            st.advance()
    total = t.combine_days(user, reports)
    t.publish_range_artifact(kind, total)
    return total
