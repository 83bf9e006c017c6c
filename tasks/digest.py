"""The digest stages as Prefect tasks. Logic lives in ``digest.stages``; these add names and retries, and follow
its one order of stages (``DAY_STAGES``).

Caching is off: inputs are whole days of text, and re-running a day must re-check the stores.
"""

from __future__ import annotations

from datetime import date
from pathlib import Path

from prefect import get_run_logger, task
from prefect.cache_policies import NONE

from agentos_mem.digest import rewind, stages
from agentos_mem.digest.logformat import list_days
from agentos_mem.digest.report import DayReport, RangeReport
from agentos_mem.digest.stages import DayInput, DayRun
from agentos_mem.kernel import clock, progress
from agentos_mem.kernel.domain import Candidate
from agentos_mem.kernel.settings import Settings, load_settings
from agentos_mem.kernel.workspace import Workspace
from agentos_mem.storage.guards import workspace_lock
from agentos_mem.restore.replay import take_in
from agentos_mem.tasks.stops import reraise_stop, stops_through
from agentos_mem.tasks.writers import workspace_writer


# -- the day's stages: one task per step of ``digest.stages.DAY_STAGES`` -------------------------------------------
# Each takes the ``DayRun`` (its fact store open for the day) and leaves its result on it.
@task(name="read-day-logs", cache_policy=NONE)
def read_step(d: DayRun) -> None:
    stages.read_step(d)


@task(name="archive-raw-l3", cache_policy=NONE, retries=2, retry_delay_seconds=1)
def archive_step(d: DayRun) -> None:
    stages.archive_step(d)


@task(name="extract-facts-rules", cache_policy=NONE)
def extract_rules(inp: DayInput) -> list[Candidate]:
    return stages.extract_rules(inp)


@task(name="extract-facts-model", cache_policy=NONE, retries=2, retry_delay_seconds=2)
def extract_model(settings: Settings, inp: DayInput, store: stages.FactStore | None = None) -> list[Candidate]:
    return stages.extract_model(settings, inp, store)


def extract_step(d: DayRun) -> None:
    """Not a task of its own: the model's task (retried, then the rules carry the day) and the rules' task, chosen
    as ``digest.stages.extract`` chooses them; a run stopped while the model's task starts stops, the rules do not
    carry it on."""
    stages.extract_step(d, by_model=stops_through(extract_model), by_rules=extract_rules)


@task(name="write-facts-l2", cache_policy=NONE, retries=2, retry_delay_seconds=1)
def facts_step(d: DayRun) -> None:
    stages.facts_step(d)


@task(name="write-cards-l1", cache_policy=NONE, retries=2, retry_delay_seconds=1)
def cards_step(d: DayRun) -> None:
    stages.cards_step(d)


@task(name="extract-user-memories", cache_policy=NONE)
def memories_step(d: DayRun) -> None:
    stages.memories_step(d)


@task(name="record-quarantine", cache_policy=NONE)
def problems_step(d: DayRun) -> None:
    stages.problems_step(d)


@task(name="mark-digested", cache_policy=NONE)
def mark_step(d: DayRun) -> None:
    stages.mark_step(d)


# The day's tasks in the digest's one order: a stage added to ``DAY_STAGES`` without its task here fails at import.
DAY_TASKS = tuple({f.__name__: f for f in (read_step, archive_step, extract_step, facts_step, cards_step, memories_step,
                                           problems_step, mark_step)}[s.__name__] for s in stages.DAY_STAGES)


def day_stages(settings: Settings, user: str, day: date, folder: Path, run: str, memories: bool = True) -> dict:
    """One day through ``DAY_TASKS`` in order, each task with its own retries, on one fact store, under the
    workspace's file lock (a CLI run on this host without a server); the caller holds the workspace's Prefect limit.
    Returns the day's ``DayReport`` dict. What ``daily-digest`` runs in its flow, and ``digest-day`` for each day of
    ``backfill`` and ``nightly``."""
    with workspace_lock(settings.home), stages.open_day(settings, user, day, folder, run=run, memories=memories) as d:
        for stage in DAY_TASKS:
            stage(d)
    return d.report()


@task(name="digest-day", cache_policy=NONE)
def whole_day(settings: Settings, user: str, day: date, folder: Path, run: str, memories: bool = True) -> dict:
    """A day of a backfill or a catch-up as one task run in the UI (a day's span, and the days of a range apart),
    its stages' task runs inside it, each with its retries: a stage that still fails fails the day. ``memories``
    False: a day digested again after a rewind, whose memory records were taken from its logs already."""
    return day_stages(settings, user, day, folder, run, memories)


# -- plain, not tasks: what the flows put around the tasks ----------------------------------------------------------
def pending_days(settings: Settings, user: str, folder: Path, until: date) -> list[date]:
    """Days up to ``until`` whose logs are new, changed or removed since they were last digested (``digest.stages``)."""
    return stages.pending_days(settings, user, folder, until)


def out_of_order(settings: Settings, user: str, folder: Path, days: list[date]) -> date | None:
    """The earliest of ``days`` that changed behind the user's latest digested day (``digest.rewind``), or None."""
    return rewind.out_of_order(settings, user, folder, days)


def days_in(folder: Path, start: date, end: date) -> list[date]:
    """The days from ``start`` to ``end`` (inclusive) with logs in ``folder``, in date order."""
    return [d for d in list_days(folder) if start <= d <= end]


def failed_day(settings: Settings, user: str, day: date, folder: Path, run: str, error: BaseException) -> dict:
    """A day that failed after its retries, recorded (``digest.stages.failed_day``): its report."""
    return stages.failed_day(settings, user, day, folder, run, error)


def day_log_line(report: dict) -> str:
    return DayReport.from_dict(report).log_line()


def combine_days(user: str, reports: list[dict]) -> dict:
    """The ``RangeReport`` dict of a range's day reports."""
    return RangeReport.combine(user, [DayReport.from_dict(r) for r in reports]).to_dict()


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
    return take_in(settings)


# -- what the digesting flows put around the day's tasks (daily-digest, backfill, nightly) ------------------------
def yesterday(settings: Settings) -> date:
    return clock.yesterday(settings.timezone)


def setup(user: str | None, logs_dir: str | None) -> tuple[Settings, str, Path]:
    settings = load_settings(user=user, logs_dir=logs_dir)
    if settings.logs_dir is not None and not Path(settings.logs_dir).is_dir():
        # a folder named by hand that is not there is a mistake, not a day without logs
        raise ValueError(f"no logs folder at {settings.logs_dir}")
    Workspace(settings.home).ensure()
    return settings, settings.user, settings.working_dir()


def digest_days(settings: Settings, user: str, days: list[date], folder: Path, *, kind: str) -> dict:
    """Many days in date order, each a ``digest-day`` task run holding the day's stage tasks, and one artifact for the
    range. A day that fails after its stages' retries is recorded and the others go on. The caller holds the user's
    Prefect limit around it."""
    log = get_run_logger()
    reports = []
    days, asked, rewound = rewind.prepare(settings, user, folder, days, hold=lambda: workspace_writer(settings))
    if rewound is not None:
        log.warning("%s: %s changed after later days were digested: %s's facts are made again from %d day(s) in date "
                    "order", kind, rewound["from"], user, len(days))
    with progress.stage("digesting days", total=len(days)) as st:
        for i, day in enumerate(days, 1):
            try:
                with workspace_writer(settings):  # a day at a time: another user's day may go between two of ours
                    r = whole_day(settings, user, day, folder, run=f"{kind} {day}", memories=day in asked)
                    # the decisions made when the history had reached this day apply now, before the next day (as a
                    # restore applies them): a forget made after 12-05 closes what 12-05 said, not what 12-08 says again
                    rewind.decisions_reached(settings, user)
            except Exception as e:  # noqa: BLE001 - one day never costs the others (nor the nightly's index rebuild)
                reraise_stop(e)  # but a run being stopped stops here
                r = failed_day(settings, user, day, folder, f"{kind} {day}", e)
                log.error("%s %d/%d: %s", kind, i, len(days), r["quarantined"][0])
            else:
                log.info("%s %d/%d: %s", kind, i, len(days), day_log_line(r))
            reports.append(r)
            st.advance()
    total = combine_days(user, reports)
    if rewound is not None:
        total["rewound"] = {"from": rewound["from"], "days": rewound["days"], "facts_taken_back": rewound["facts"],
                            "decisions_applied_again": rewound["decisions"]}
    publish_range_artifact(kind, total)
    return total


def both_takes(before: dict, after: dict) -> dict:
    """The night's two journal replays as one report (what waits and what is wrong: the second's), its problems logged."""
    journal = {"documents": before["documents"] + after["documents"], "applied": before["applied"] + after["applied"],
               "waiting": after["waiting"], "problems": after["problems"]}
    for p in journal["problems"]:
        get_run_logger().warning("journal: %s", p)
    return journal
