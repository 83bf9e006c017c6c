"""The digest stages as Prefect tasks. Logic lives in ``digest.stages``; these add names and retries.

Caching is off: inputs are whole days of text, and re-running a day must re-check the stores.
"""

from __future__ import annotations

from datetime import date
from pathlib import Path

from prefect import task
from prefect.cache_policies import NONE

from digest import stages
from digest.report import DayReport, RangeReport
from digest.stages import DayInput
from kernel.domain import Candidate
from kernel.settings import Settings


@task(name="read-day-logs", cache_policy=NONE)
def read_day(settings: Settings, user: str, day: date, folder: Path) -> DayInput:
    return stages.read_day(settings, user, day, folder)


@task(name="archive-raw-l3", cache_policy=NONE, retries=2, retry_delay_seconds=1)
def archive_day(settings: Settings, inp: DayInput) -> dict[str, str]:
    return stages.archive_day(settings, inp)


@task(name="extract-facts-rules", cache_policy=NONE)
def extract_rules(inp: DayInput) -> list[Candidate]:
    return stages.extract_rules(inp)


@task(name="extract-facts-model", cache_policy=NONE, retries=2, retry_delay_seconds=2)
def extract_model(settings: Settings, inp: DayInput) -> list[Candidate]:
    return stages.extract_model(settings, inp)


@task(name="write-facts-l2", cache_policy=NONE, retries=2, retry_delay_seconds=1)
def write_facts(settings: Settings, inp: DayInput, candidates: list[Candidate], raw_refs: dict[str, str]) -> dict:
    return stages.write_facts(settings, inp, candidates, raw_refs)


@task(name="write-cards-l1", cache_policy=NONE, retries=2, retry_delay_seconds=1)
def write_cards(settings: Settings, inp: DayInput, candidates: list[Candidate], fact_ids: list, raw_refs: dict[str, str]) -> dict:
    return stages.write_cards(settings, inp, candidates, fact_ids, raw_refs)


@task(name="extract-user-memories", cache_policy=NONE)
def extract_memories(settings: Settings, inp: DayInput) -> dict:
    return stages.extract_memories(settings, inp)


@task(name="record-quarantine", cache_policy=NONE)
def record_problems(settings: Settings, inp: DayInput, run: str) -> list[str]:
    return stages.record_problems(settings, inp, run)


@task(name="mark-digested", cache_policy=NONE)
def mark_digested(settings: Settings, inp: DayInput, raw_refs: dict[str, str]) -> None:
    stages.mark_digested(settings, inp, raw_refs)


@task(name="digest-day", cache_policy=NONE, retries=1, retry_delay_seconds=2)
def digest_whole_day(settings: Settings, user: str, day: date, folder: Path, run: str) -> dict:
    """A whole day's stages in one task: for backfills and catch-ups over many days, where nine task
    runs a day would make Prefect's per-task overhead the cost of the run."""
    return stages.run_day(settings, user, day, folder, run=run)


@task(name="publish-digest-artifact", cache_policy=NONE)
def publish_artifact(result: dict) -> str:
    from prefect.artifacts import create_markdown_artifact

    return str(create_markdown_artifact(key=artifact_key("digest", result["user"], result["day"]), markdown=digest_markdown(result),
                                        description=f"Daily digest of {result['day']} for {result['user']}"))


def artifact_key(kind: str, user: str, day: str) -> str:
    """Artifact keys allow only a-z, 0-9 and '-': non-ASCII user ids are replaced by a short hash."""
    import hashlib
    import re

    slug = re.sub(r"[^a-z0-9]+", "-", user.lower()).strip("-")
    if not slug or slug != user.lower():
        slug = (slug + "-" if slug else "u") + hashlib.sha1(user.encode()).hexdigest()[:8]
    return f"{kind}-{slug}-{day}"


@task(name="publish-range-artifact", cache_policy=NONE)
def publish_range_artifact(kind: str, total: dict) -> str | None:
    from prefect.artifacts import create_markdown_artifact

    if not total["days"]:
        return None
    key = artifact_key(kind, total["user"], f"{total['days'][0]}-to-{total['days'][-1]}")
    return str(create_markdown_artifact(key=key, markdown=range_markdown(kind, total),
                                        description=f"{kind}: {len(total['days'])} day(s) for {total['user']}"))


def range_markdown(kind: str, total: dict) -> str:
    return RangeReport.from_dict(total).artifact_markdown(kind)


def digest_markdown(r: dict) -> str:
    return DayReport.from_dict(r).artifact_markdown()


@task(name="take-in-synced", cache_policy=NONE)
def take_in_synced(settings: Settings) -> dict:
    """What another machine synced: its knowledge documents, and the decisions made there that this one does not hold
    yet (``restore.replay.take_in``)."""
    from restore.replay import take_in

    return take_in(settings)
