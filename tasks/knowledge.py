"""The knowledge stages as Prefect tasks. Logic lives in ``knowledge``; these add names and retries.

Caching is off everywhere: sources change between runs, and a re-run must look at them again.
"""

from __future__ import annotations

from prefect import task
from prefect.cache_policies import NONE

from kernel.settings import Settings
from knowledge import collect as _collect
from knowledge import decisions
from knowledge.collect import Source
from knowledge.feeds import FeedError
from knowledge.report import CollectReport, SourceReport
from tasks.digest import artifact_key

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



# -- plain, not tasks: what the collect flow puts around its tasks ------------------------------------------------
def plan_sources(settings: Settings) -> tuple[list[Source], list[str]]:
    """The configured sources, and what was wrong with the list (``knowledge.collect.plan_sources``)."""
    return _collect.plan_sources(settings)


def failed_source(settings: Settings, user: str, source: Source, error: str) -> SourceReport:
    return _collect.failed_source(settings, user, source, error)


def fetch_error(source: Source, e: Exception) -> str:
    return _collect.fetch_error(source, e)


def finish_collect(settings: Settings, user: str, reports: list[SourceReport], problems: list[str]) -> dict:
    """The run's ``CollectReport`` as a dict; problems with the source list go to errors.log."""
    return _collect.finish_collect(settings, user, reports, problems).to_dict()


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
