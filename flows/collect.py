"""``collect-to-inbox`` (归集): local material, web clippings, RSS/Atom feeds, tool submissions, personal notes
and memory cards into the five partitions of ``03_knowledge/00_stream/inbox/``, with provenance."""

from __future__ import annotations

from prefect import flow, get_run_logger

from agentos_mem.kernel.settings import load_settings
from agentos_mem.kernel.workspace import Workspace
from agentos_mem.tasks.run_progress import watch
from agentos_mem.tasks.writers import workspace_writer
from agentos_mem.tasks import knowledge as t


@flow(name="collect-to-inbox", log_prints=False)
def collect_to_inbox(user: str | None = None) -> dict:
    """Collect every source listed in 03_knowledge/99_system/sources.yaml (a commented default is written when
    absent; agent-local/materials/ is always a source) into the inbox, one Markdown file per item with its
    source, source type, fetch time and content hash.

    Sources are only read. The same text is collected once, across partitions and runs: a re-run adds nothing.
    Files that are not Markdown or UTF-8 text (PDF, Word, images, binary, invalid UTF-8, too large) and symlinks
    leading out of a source folder are refused, listed in this run's artifact and in logs/quarantine.jsonl;
    a feed that cannot be downloaded is reported and skipped. The rest always goes on.

    Args:
        user: User id recorded as the owner of what is collected. Empty: AGENTOS_USER (default "default").
    """
    settings = load_settings(user=user)
    Workspace(settings.home).ensure()
    with watch("collect-to-inbox"), workspace_writer(settings):  # the inbox is every user's, on every host
        result = t.collect_all(settings, settings.user)
    t.publish_collect_artifact(result)
    get_run_logger().info("collected %s", t.collect_log_line(result))
    return result
