"""``collect-to-inbox`` (归集): local material, web clippings, RSS/Atom feeds, tool submissions, personal notes
and memory cards into the five partitions of ``03_knowledge/00_stream/inbox/``, with provenance."""

from __future__ import annotations

from prefect import flow, get_run_logger

from kernel import progress
from kernel.settings import Settings, load_settings
from kernel.workspace import Workspace
from flows.run_progress import watch
from flows.stops import reraise_stop
from flows.writers import workspace_writer
from tasks import knowledge as t


def collect_sources(settings: Settings, user: str) -> dict:
    """Every source, each a task run (feeds are fetched in a task of their own, with retries); a source that
    fails is reported and the rest go on. Returns the run's ``CollectReport`` as a dict."""
    sources, problems = t.plan_sources(settings)
    reports = []
    for source in progress.track(sources, "collecting sources"):
        try:
            data = t.fetch_feed(settings, source) if source.type == "feed" else None
        except Exception as e:  # noqa: BLE001 - a feed that cannot be fetched (after retries) is skipped
            reraise_stop(e)  # but a run being stopped stops here
            reports.append(t.failed_source(settings, user, source, t.fetch_error(source, e)))
            continue
        try:
            reports.append(t.collect_source(settings, source, user, data=data))
        except Exception as e:  # noqa: BLE001 - one broken source never costs the others
            reraise_stop(e)
            reports.append(t.failed_source(settings, user, source, f"source {source.name}: {type(e).__name__}: {e}"))
    return t.finish_collect(settings, user, reports, problems)


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
        result = collect_sources(settings, settings.user)
    t.publish_collect_artifact(result)
    get_run_logger().info("collected %s", t.collect_log_line(result))
    return result
