"""The user-memory stages as Prefect tasks. Logic lives in ``memory.inbox``."""

from __future__ import annotations

from prefect import task
from prefect.cache_policies import NONE

from agentos_mem.kernel.settings import Settings
from agentos_mem.memory import inbox
from agentos_mem.memory.report import InboxReport
from agentos_mem.tasks.digest import artifact_key


@task(name="ingest-memory-cards", cache_policy=NONE, retries=1, retry_delay_seconds=2)
def ingest_cards(settings: Settings, user: str) -> dict:
    """The cards taken, as an ``InboxReport`` dict (what the nightly chain returns under ``memory_inbox``)."""
    return inbox.ingest_cards(settings, user)


@task(name="publish-memory-inbox-artifact", cache_policy=NONE)
def publish_inbox_artifact(user: str, report: dict) -> str | None:
    from prefect.artifacts import create_markdown_artifact

    r = InboxReport.from_dict(report)
    if not r.worth_publishing:
        return None
    return str(create_markdown_artifact(key=artifact_key("memory-inbox", user, "latest"), markdown=r.artifact_markdown(user),
                                        description=InboxReport.artifact_description(user)))
