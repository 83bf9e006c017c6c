"""``daily-digest`` and ``backfill``: a day's logs into L3 raw, L2 facts and L1 cards."""

from __future__ import annotations

from datetime import date

from prefect import flow, get_run_logger

from agentos_mem.tasks.run_progress import watch
from agentos_mem.tasks.writers import user_writer, workspace_writer
from agentos_mem.tasks import digest as t


@flow(name="daily-digest", log_prints=False)
def daily_digest(day: date | None = None, user: str | None = None, logs_dir: str | None = None) -> dict:
    """Digest one day's working-memory logs into facts (L2), the raw archive (L3) and index cards (L1).

    Re-running a day changes nothing; a day without logs is a clean no-op.

    Args:
        day: The day to digest (YYYY-MM-DD). Empty: yesterday in the configured time zone.
        user: User id whose memory is written. Empty: AGENTOS_USER (default "default").
        logs_dir: Folder holding YYYY-MM-DD.md / .jsonl logs. Empty: the workspace's working-memory folder for the user.
    """
    settings, user, folder = t.setup(user, logs_dir)
    day = day or t.yesterday(settings)
    with watch("daily-digest"), user_writer(settings, user):
        if t.out_of_order(settings, user, folder, [day]) is not None:
            # a day before the latest digested one changed: the user's days again, in date order (digest.rewind)
            return t.digest_days(settings, user, [day], folder, kind="daily-digest")
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
    settings, user, folder = t.setup(user, logs_dir)
    days = t.days_in(folder, start, end)
    with watch("backfill"), user_writer(settings, user):  # the whole range in date order, no other run of the user in between
        return t.digest_days(settings, user, days, folder, kind="backfill")
