"""``nightly``: the chain of nightly stages: digest every new or changed day (catch-up), then rebuild the indexes."""

from __future__ import annotations

from functools import partial

from prefect import flow, get_run_logger

from agentos_mem.kernel import clock
from agentos_mem.tasks.run_progress import watch
from agentos_mem.tasks.stops import or_failed
from agentos_mem.tasks.writers import user_writer, workspace_writer
from agentos_mem.tasks import digest as d
from agentos_mem.tasks import index as ix
from agentos_mem.tasks import knowledge as k
from agentos_mem.tasks import memory as m
from agentos_mem.tasks import refine as r

STAGES = ["journal", "digest", "collect", "refine", "memory-inbox", "index-rebuild"]  # what the run reports it ran


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
        settings, user, folder = d.setup(user, logs_dir)
        today = clock.today(settings.timezone)
        until = today if (include_today if include_today is not None else settings.include_today) else d.yesterday(settings)
        # The user's Prefect limit (every host): a second run of the user waits, then finds these days done.
        with user_writer(settings, user):
            days = d.pending_days(settings, user, folder, until)
            get_run_logger().info("nightly: %d day(s) to digest for %s", len(days), user)
            # Decisions synced from another machine apply before the digest and again after it (for those that wait
            # on a day this machine digests only now): a forget made elsewhere never reaches tonight's cards.
            with workspace_writer(settings):
                before = d.take_in_synced(settings)
            digested = d.digest_days(settings, user, days, folder, kind="nightly")
            with workspace_writer(settings):
                after = d.take_in_synced(settings)
        journal = d.both_takes(before, after)
        # From here on a stage that fails (after its retries) is logged and reported; the rest of the night still runs.
        with workspace_writer(settings):  # the inbox and the knowledge base are every user's
            collected = or_failed("collect skipped", {"collected": []}, k.collect_all, settings, user,
                                  then=k.publish_collect_artifact)
            refined = or_failed("refine skipped", {"refined": []}, r.refine_inbox, settings, user,
                                then=partial(r.publish_refine_artifact, user))
            # the sections of published documents, embedded now: the first knowledge search does not wait for them
            warmed = or_failed("knowledge vectors not warmed", None, ix.embed_kb_sections, settings)
        with user_writer(settings, user), workspace_writer(settings):  # records may be one SQLite file for all users
            cards = or_failed("memory inbox skipped", {"cards": 0}, m.ingest_cards, settings, user,
                              then=partial(m.publish_inbox_artifact, user))
            # the records' vectors, so recall reads vectors instead of making them
            embedded = or_failed("memory records not embedded", None, ix.embed_memory_records, settings, user)
        index = ix.rebuild_indexes(settings)
    if warmed is not None:
        refined["sections_warmed"] = warmed["sections"]
    if embedded is not None:
        cards["records_embedded"] = embedded["embedded"]
    return {"stages": STAGES, "journal": journal, "digest": digested, "collect": collected, "refine": refined,
            "memory_inbox": cards, "index": index}
