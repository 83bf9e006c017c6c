"""The knowledge stages as Prefect tasks. Logic lives in ``knowledge``; these add names and retries.

Caching is off everywhere: sources change between runs, and a re-run must look at them again.
"""

from __future__ import annotations

from prefect import task
from prefect.cache_policies import NONE

from agentos_mem.kernel.settings import Settings
from agentos_mem.knowledge import collect as _collect
from agentos_mem.knowledge import decisions
from agentos_mem.knowledge.collect import Source
from agentos_mem.knowledge.feeds import FeedError
from agentos_mem.knowledge.report import CollectReport, SourceReport
from agentos_mem.tasks.digest import artifact_key
from agentos_mem.tasks.stops import reraise_stop

# -- collect (collect-to-inbox) -------------------------------------------------------------------------------
# One task run per source, never per document (``flows/collect.py`` lists them).


def _worth_retrying(task, task_run, state) -> bool:
    """Retry a download that may work in a moment (timeout, connection, 429/5xx), not a 404 or a non-feed."""
    try:
        state.result()
    except FeedError as e:
        return e.transient
    except Exception:  # noqa: BLE001 - anything unexpected: one more try
        return True
    return False


@task(name="fetch-feed", cache_policy=NONE, retries=2, retry_delay_seconds=3, retry_condition_fn=_worth_retrying)
def fetch_feed(settings: Settings, source: Source) -> bytes:
    """Download (or read) one feed; a failure is retried, then reported by the flow and the feed skipped."""
    return _collect.fetch_feed(settings, source)


@task(name="collect-source", cache_policy=NONE, retries=1, retry_delay_seconds=2)
def collect_source(settings: Settings, source: Source, user: str | None = None, *, data: bytes | None = None) -> SourceReport:
    """One source into its inbox partition (dedup, provenance, refusals recorded). Safe to retry: what was
    written is in the registry, so a second attempt only adds what the first did not."""
    return _collect.collect_source(settings, source, user, data=data)


@task(name="publish-collect-artifact", cache_policy=NONE)
def publish_collect_artifact(result: dict) -> str:
    """The run's report (``CollectReport.to_dict()``, what the flow returns) as the artifact ``collect-USER-latest``."""
    from prefect.artifacts import create_markdown_artifact

    report = CollectReport.from_dict(result)
    return str(create_markdown_artifact(key=artifact_key("collect", report.user, "latest"), markdown=report.artifact_markdown(),
                                        description=report.artifact_description()))



def collect_all(settings: Settings, user: str) -> dict:
    """Every source through ``knowledge.collect.collect``'s stages, each source's fetch and collect a task run (feeds
    retried); a run being stopped stops it. Returns the run's ``CollectReport`` as a dict. What the collect-to-inbox
    flow runs, and ``nightly`` as one of its stages."""
    return _collect.collect(settings, user, fetch=fetch_feed, take=collect_source, stop=reraise_stop)


# -- plain, not tasks: what the collect flow reports ----------------------------------------------------------------
def collect_log_line(result: dict) -> str:
    return CollectReport.from_dict(result).log_line()


# -- plain, not tasks: what the review flow reads and applies (``knowledge.decisions``, the CLI's rules) -----------
def pending_documents(settings: Settings, viewer: str) -> list[dict]:
    """The pending knowledge documents ``viewer`` may decide (never another user's personal ones)."""
    return decisions.pending(settings, viewer=viewer)


def open_conflicts(settings: Settings, user: str) -> list[dict]:
    return decisions.open_conflicts(settings, user)


def waiting_markdown(docs: list[dict], conflicts: list[dict]) -> str:
    return decisions.waiting_markdown(docs, conflicts)


def apply_review(settings: Settings, decision: dict) -> decisions.ReviewOutcome:
    return decisions.apply_review(settings, decision)
