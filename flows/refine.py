"""``inbox-refine``: new inbox items become classified, reviewed, versioned knowledge documents (pending)."""

from __future__ import annotations

from prefect import flow, get_run_logger

from agentos_mem.kernel.settings import load_settings
from agentos_mem.kernel.workspace import Workspace
from agentos_mem.tasks.run_progress import watch
from agentos_mem.tasks.writers import workspace_writer
from agentos_mem.tasks import refine as t


@flow(name="inbox-refine", log_prints=False)
def inbox_refine(user: str | None = None) -> dict:
    """Classify each new inbox item into the taxonomy, run the ingest review (source reliability, consistency
    with L2 facts, time validity), apply the version rules, parse its outline and summarise it; every
    document lands as `pending` until a person approves it (`review` deployment or `agentos kb approve`).

    Args:
        user: Owner of personal items and whose facts the consistency check reads. Empty: AGENTOS_USER.
    """
    settings = load_settings(user=user)
    Workspace(settings.home).ensure()
    with watch("inbox-refine"), workspace_writer(settings):  # the inbox and the knowledge base are every user's, on every host
        report = t.refine_inbox(settings, settings.user)
    t.publish_refine_artifact(settings.user, report)
    get_run_logger().info("refined %s", t.refine_log_line(report))
    return report
