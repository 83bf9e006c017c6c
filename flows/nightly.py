"""``nightly``: the chain of nightly stages: digest every new or changed day (catch-up), then rebuild the indexes."""

from __future__ import annotations

from prefect import flow, get_run_logger

from kernel import clock
from digest.stages import pending_days
from flows.collect import collect_sources
from flows.daily import setup, digest_days, yesterday
from flows.rebuild import rebuild_indexes
from flows.run_progress import watch
from flows.writers import user_writer, workspace_writer
from tasks import digest as d
from tasks import index as ix
from tasks import knowledge as k
from tasks import memory as m
from tasks import refine as r


@flow(name="nightly", log_prints=False)
def nightly(user: str | None = None, logs_dir: str | None = None, include_today: bool | None = None) -> dict:
    """Run the nightly chain: digest every day whose logs are new or changed (so nights the machine was
    off are caught up), up to yesterday; then bring the indexes in step, so no one rebuilds them by hand.
    Between the two: collect new material into the inbox, refine it into pending knowledge documents, and
    take memory consolidation cards from the inbox's memory partition into the user's memory records (user
    memory from the logs themselves is extracted inside the digest).

    Args:
        user: User id whose memory is written. Empty: AGENTOS_USER.
        logs_dir: Folder holding the daily logs. Empty: the workspace's working-memory folder for the user.
        include_today: Also digest today's log, which may still be growing. Empty: AGENTOS_INCLUDE_TODAY (false).
    """
    with watch("nightly"):  # every stage of the night as a progress artifact and counted log lines
        return _chain(user, logs_dir, include_today)


def _chain(user: str | None, logs_dir: str | None, include_today: bool | None) -> dict:
    settings, user, folder = setup(user, logs_dir)
    today = clock.today(settings.timezone)
    until = today if (include_today if include_today is not None else settings.include_today) else yesterday(settings)
    log = get_run_logger()
    # The user's Prefect limit (every host): a second run of the user waits, then finds these days done.
    with user_writer(settings, user):
        days = pending_days(settings, user, folder, until)
        log.info("nightly: %d day(s) to digest for %s", len(days), user)
        # Decisions synced from another machine apply before the digest and again after it (for those that wait on a
        # day this machine digests only now): a forget made elsewhere never reaches tonight's cards. Every user's.
        with workspace_writer(settings):
            journal = d.take_in_synced(settings)
        digested = digest_days(settings, user, days, folder, kind="nightly")
        with workspace_writer(settings):
            after = d.take_in_synced(settings)
    journal = {"documents": journal["documents"] + after["documents"], "applied": journal["applied"] + after["applied"],
               "waiting": after["waiting"], "problems": after["problems"]}
    for p in journal["problems"]:
        log.warning("journal: %s", p)
    with workspace_writer(settings):  # the inbox and the knowledge base are every user's
        collected, refined = _knowledge(settings, user, log)
    with user_writer(settings, user), workspace_writer(settings):  # records may be one SQLite file for all users
        cards = _memory(settings, user, log)
    return {"stages": ["journal", "digest", "collect", "refine", "memory-inbox", "index-rebuild"], "journal": journal, "digest": digested,
            "collect": collected, "refine": refined, "memory_inbox": cards, "index": rebuild_indexes(settings)}


def _memory(settings, user: str, log) -> dict:
    """Memory consolidation cards from the inbox (memory partition), through the same guarded write path; then the
    records' vectors, so recall reads vectors instead of making them. A failure is logged; the rebuild still runs."""
    try:
        cards = m.ingest_cards(settings, user)
        m.publish_inbox_artifact(user, cards)
    except Exception as e:  # noqa: BLE001 - a failed memory stage is logged; the indexes are still rebuilt
        log.warning("memory inbox skipped: %s", e)
        cards = {"cards": 0, "errors": [str(e)]}
    try:
        cards["records_embedded"] = ix.embed_memory_records(settings, user)["embedded"]
    except Exception as e:  # noqa: BLE001
        log.warning("memory records not embedded: %s", e)
    return cards


def _knowledge(settings, user: str, log) -> tuple[dict, dict]:
    """Collect to the inbox, then refine it into pending documents; a failing stage is logged, the chain goes on."""
    try:
        collected = collect_sources(settings, user)
        k.publish_collect_artifact(collected)
    except Exception as e:  # noqa: BLE001 - e.g. an unreadable sources.yaml: reported, the rest of the night still runs
        log.warning("collect skipped: %s", e)
        collected = {"collected": [], "errors": [str(e)]}
    try:
        refined = r.refine_inbox(settings, user)
        r.publish_refine_artifact(user, refined)
    except Exception as e:  # noqa: BLE001
        log.warning("refine skipped: %s", e)
        refined = {"refined": [], "errors": [str(e)]}
    try:  # embed the sections of published documents now, so the first knowledge search does not wait for them
        refined["sections_warmed"] = ix.embed_kb_sections(settings)["sections"]
    except Exception as e:  # noqa: BLE001
        log.warning("knowledge vectors not warmed: %s", e)
    return collected, refined
