"""The user-memory stages as Prefect tasks. Logic lives in ``memory.inbox``."""

from __future__ import annotations

from prefect import task
from prefect.cache_policies import NONE

from memory import inbox
from kernel.settings import Settings


@task(name="ingest-memory-cards", cache_policy=NONE, retries=1, retry_delay_seconds=2)
def ingest_cards(settings: Settings, user: str) -> dict:
    return inbox.ingest_cards(settings, user)


@task(name="publish-memory-inbox-artifact", cache_policy=NONE)
def publish_inbox_artifact(user: str, report: dict) -> str | None:
    from prefect.artifacts import create_markdown_artifact

    from digest.report import memories_markdown
    from tasks.digest import artifact_key

    if not (report["cards"] or report["quarantined"]):
        return None
    md = [f"# Memory inbox · {user}", "", f"{report['cards']} card(s) taken from `00_stream/inbox/memory/`."]
    md += memories_markdown(report, pending=[])
    if report["quarantined"]:
        md += ["", "## Quarantined", *[f"- `{q}`" for q in report["quarantined"]]]
    return str(create_markdown_artifact(key=artifact_key("memory-inbox", user, "latest"), markdown="\n".join(md) + "\n",
                                        description=f"memory cards taken into {user}'s records"))
