"""The refine stage as Prefect tasks. Logic lives in ``knowledge.refine``; one task for the batch
(items are refined one by one inside it: Prefect's per-task overhead must not grow with the inbox)."""

from __future__ import annotations

from prefect import task
from prefect.cache_policies import NONE

from agentos_mem.kernel.settings import Settings
from agentos_mem.knowledge import refine as r
from agentos_mem.knowledge.report import RefineReport
from agentos_mem.tasks.digest import artifact_key


@task(name="refine-inbox", cache_policy=NONE, retries=1, retry_delay_seconds=2)
def refine_inbox(settings: Settings, user: str) -> dict:
    """The run's ``RefineReport`` as a dict (what the flow returns)."""
    return r.refine(settings, user)


@task(name="publish-refine-artifact", cache_policy=NONE)
def publish_refine_artifact(user: str, report: dict) -> str | None:
    from prefect.artifacts import create_markdown_artifact

    return str(create_markdown_artifact(key=artifact_key("inbox-refine", user, "latest"), markdown=RefineReport.from_dict(report).artifact_markdown(),
                                        description=RefineReport.artifact_description(user)))


def refine_log_line(report: dict) -> str:
    """Plain, not a task: the run's line in the flow's log."""
    return RefineReport.from_dict(report).log_line()
