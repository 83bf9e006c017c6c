"""``review``: a person reviews pending knowledge documents and open fact conflicts from the Prefect UI.

Started by hand (no schedule). The run lists what waits (a Markdown artifact and the form's description),
then pauses for the decision in a form (Prefect's flow-run input: "Resume" in the UI shows the
``ReviewDecision`` fields), then applies it with the same rules as the CLI (``agentos kb approve|reject``,
``agentos facts resolve``): system documents by an admin, personal ones by their owner; a decision that is
not allowed or names an unknown id is reported, the rest applied.
"""

from __future__ import annotations

from prefect import flow, get_run_logger
from prefect.artifacts import create_markdown_artifact
from prefect.flow_runs import pause_flow_run
from prefect.input import RunInput
from pydantic import Field

from kernel.settings import load_settings


class ReviewDecision(RunInput):
    reviewer: str = Field(description="Your user id: admins (AGENTOS_KB_ADMINS) decide system documents, owners their personal ones.")
    approve: list[str] = Field(default_factory=list, description="Ids of pending documents to publish (status ready).")
    reject: list[str] = Field(default_factory=list, description="Ids of pending documents to reject (kept, marked rejected).")
    accept_conflicts: list[int] = Field(default_factory=list, description="Fact conflict ids whose contested value becomes current.")
    reject_conflicts: list[int] = Field(default_factory=list, description="Fact conflict ids to dismiss (memory keeps its value).")
    note: str = Field("", description="A note kept with the decisions.")


def waiting_markdown(docs: list[dict], conflicts: list[dict]) -> str:
    md = ["# Knowledge review", "", f"{len(docs)} pending document(s), {len(conflicts)} open fact conflict(s).", ""]
    if docs:
        md += ["| id | title | category | scope | owner | reliability | rule | conflicts |", "|---|---|---|---|---|---|---|---|"]
        md += [f"| `{d['id']}` | {d['title']} | {d['category']} | {d['scope']} | {d['owner']} | {d['reliability']} | "
               f"{d['version_rule']} | {d['conflicts']} |" for d in docs]
    if conflicts:
        md += ["", "| conflict | subject | memory holds | contested | source |", "|---|---|---|---|---|"]
        md += [f"| {c['id']} | {c['subject']} | {c['existing_object']} | {c['candidate_object']} | {c['source_file']} |" for c in conflicts]
    md += ["", "Resume this run with the ids to approve or reject."]
    return "\n".join(md)


def apply_decision(settings, decision: ReviewDecision | dict) -> dict:
    """Apply a review decision; every refused part is reported with its reason, the rest applied."""
    from knowledge.publish import decide
    from storage.facts import open_facts

    d = decision if isinstance(decision, dict) else decision.model_dump()
    out = {"reviewer": d["reviewer"], "approved": [], "rejected": [], "conflicts_resolved": [], "refused": []}
    for key, verb in (("approve", "approved"), ("reject", "rejected")):
        for doc_id in d.get(key) or []:
            try:
                decide(settings, doc_id, key, d["reviewer"], d.get("note") or None)
                out[verb].append(doc_id)
            except (PermissionError, ValueError, KeyError) as e:
                out["refused"].append(f"{key} {doc_id}: {e}")
    facts = open_facts(settings)
    try:
        for key, accept in (("accept_conflicts", True), ("reject_conflicts", False)):
            for cid in d.get(key) or []:
                try:
                    facts.resolve_conflict(settings.user, int(cid), accept=accept)
                    out["conflicts_resolved"].append(int(cid))
                except (ValueError, KeyError) as e:
                    out["refused"].append(f"{'accept' if accept else 'reject'} conflict {cid}: {e}")
    finally:
        facts.close()
    return out


@flow(name="review", log_prints=False)
def review(user: str | None = None, timeout_minutes: int = 1440, poll_seconds: int = 5) -> dict:
    """List pending knowledge documents and open fact conflicts, wait for a person's decision, apply it.

    Args:
        user: Whose fact conflicts to show (and the default reviewer). Empty: AGENTOS_USER.
        timeout_minutes: How long the run waits for the decision before it fails (nothing is changed then).
        poll_seconds: How often the paused run checks for the decision.
    """
    from knowledge.publish import pending
    from storage.facts import open_facts

    settings = load_settings(user=user)
    log = get_run_logger()
    docs = pending(settings)
    facts = open_facts(settings)
    try:
        conflicts = facts.conflicts(settings.user)
    finally:
        facts.close()
    md = waiting_markdown(docs, conflicts)
    create_markdown_artifact(key="kb-review-waiting", markdown=md, description="what waits for review")
    if not docs and not conflicts:
        log.info("nothing to review")
        return {"pending": 0, "conflicts": 0, "decision": None}
    log.info("waiting for a decision on %d document(s) and %d conflict(s)", len(docs), len(conflicts))
    decision = pause_flow_run(wait_for_input=ReviewDecision.with_initial_data(description=md, reviewer=settings.user),
                              timeout=timeout_minutes * 60, poll_interval=poll_seconds)
    result = apply_decision(settings, decision)
    done = [f"# Review applied by {result['reviewer']}", "", f"- approved: {', '.join(result['approved']) or '(none)'}",
            f"- rejected: {', '.join(result['rejected']) or '(none)'}",
            f"- conflicts resolved: {', '.join(map(str, result['conflicts_resolved'])) or '(none)'}"]
    if result["refused"]:
        done += ["", "## Refused", *[f"- {r}" for r in result["refused"]]]
    create_markdown_artifact(key="kb-review-applied", markdown="\n".join(done) + "\n", description="the review's decisions")
    return {"pending": len(docs), "conflicts": len(conflicts), "decision": result}
