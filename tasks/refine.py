"""The refine stage as Prefect tasks. Logic lives in ``knowledge.refine``; one task for the batch
(items are refined one by one inside it: Prefect's per-task overhead must not grow with the inbox)."""

from __future__ import annotations

from prefect import task
from prefect.cache_policies import NONE

from knowledge import refine as r
from kernel.settings import Settings


@task(name="refine-inbox", cache_policy=NONE, retries=1, retry_delay_seconds=2)
def refine_inbox(settings: Settings, user: str) -> dict:
    return r.refine(settings, user)


@task(name="publish-refine-artifact", cache_policy=NONE)
def publish_refine_artifact(user: str, report: dict) -> str | None:
    from prefect.artifacts import create_markdown_artifact

    from tasks.digest import artifact_key

    return str(create_markdown_artifact(key=artifact_key("inbox-refine", user, "latest"), markdown=refine_markdown(report),
                                        description=f"inbox refined into pending knowledge documents ({user})"))


def refine_markdown(report: dict) -> str:
    md = ["# Inbox refine", "", f"{len(report['refined'])} document(s) refined (pending review), {len(report['duplicates'])} duplicate(s), "
          f"{len(report['quarantined'])} quarantined, {report['already']} already taken, {len(report['errors'])} error(s).", ""]
    if report["refined"]:
        md += ["| document | outcome | category | reliability | facts: same / new / conflicts | valid until |", "|---|---|---|---|---|---|"]
        for d in report["refined"]:
            c = d.get("consistency") or {}
            md.append(f"| `{d['doc_id']}` {d['title']} | {d['outcome']} | {d.get('category')} | {d.get('reliability')} | "
                      f"{c.get('identical', 0)} / {c.get('added', 0)} / {c.get('conflicts', 0)} | {d.get('valid_until') or 'never'} |")
    if report["quarantined"]:
        md += ["", "## Quarantined", *[f"- {q}" for q in report["quarantined"]]]
    if report["errors"]:
        md += ["", "## Errors", *[f"- {e}" for e in report["errors"]]]
    md += ["", "Decide with `agentos kb pending`, `agentos kb approve ID` / `reject ID`, or the `review` deployment."]
    return "\n".join(md) + "\n"
