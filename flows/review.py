"""``review``: a person reviews pending knowledge documents and open fact conflicts from the Prefect UI.

Started by hand (no schedule). The run lists what waits (a Markdown artifact and the form's description),
then pauses for the decision in a form (Prefect's flow-run input: "Resume" in the UI shows the
``ReviewDecision`` fields), then applies it with the functions the CLI calls (``agentos kb approve|reject``:
knowledge/decisions.py; ``agentos facts resolve``: services/decisions.py): system documents by an admin, personal ones by
their owner; a decision that is not allowed or names an unknown id is reported, the rest applied.
"""

from __future__ import annotations

from prefect import flow, get_run_logger
from prefect.artifacts import create_markdown_artifact
from prefect.flow_runs import pause_flow_run
from prefect.input import RunInput
from pydantic import Field

from agentos_mem.kernel.settings import load_settings
from agentos_mem.tasks import knowledge as k


class ReviewDecision(RunInput):
    reviewer: str = Field(description="Your user id: admins (AGENTOS_KB_ADMINS) decide system documents, owners their personal ones.")
    approve: list[str] = Field(default_factory=list, description="Ids of pending documents to publish (status ready).")
    reject: list[str] = Field(default_factory=list, description="Ids of pending documents to reject (kept, marked rejected).")
    accept_conflicts: list[int] = Field(default_factory=list, description="Fact conflict ids whose contested value becomes current.")
    reject_conflicts: list[int] = Field(default_factory=list, description="Fact conflict ids to dismiss (memory keeps its value).")
    note: str = Field("", description="A note kept with the decisions.")


@flow(name="review", log_prints=False)
def review(user: str | None = None, timeout_minutes: int = 1440, poll_seconds: int = 5) -> dict:
    """List pending knowledge documents and open fact conflicts, wait for a person's decision, apply it.

    Args:
        user: The reviewer: whose fact conflicts and personal documents to show (with every system document). Empty: AGENTOS_USER.
        timeout_minutes: How long the run waits for the decision before it fails (nothing is changed then).
        poll_seconds: How often the paused run checks for the decision.
    """
    settings = load_settings(user=user)
    log = get_run_logger()
    docs = k.pending_documents(settings, viewer=settings.user)  # the reviewer's view: never another user's personal documents
    conflicts = k.open_conflicts(settings, settings.user)
    md = k.waiting_markdown(docs, conflicts)
    create_markdown_artifact(key="kb-review-waiting", markdown=md, description="what waits for review")
    if not docs and not conflicts:
        log.info("nothing to review")
        return {"pending": 0, "conflicts": 0, "decision": None}
    log.info("waiting for a decision on %d document(s) and %d conflict(s)", len(docs), len(conflicts))
    decision = pause_flow_run(wait_for_input=ReviewDecision.with_initial_data(description=md, reviewer=settings.user),
                              timeout=timeout_minutes * 60, poll_interval=poll_seconds)
    outcome = k.apply_review(settings, decision.model_dump())
    create_markdown_artifact(key="kb-review-applied", markdown=outcome.artifact_markdown(), description="the review's decisions")
    return {"pending": len(docs), "conflicts": len(conflicts), "decision": outcome.to_dict()}
