"""A person's decisions in one place (knowledge/decisions.py): the review flow's whole decision, and the single
decisions the CLI makes, follow the same rules; every refused part is reported with its reason, the rest applied."""

from __future__ import annotations

from datetime import date

from tests.kit.knowledge import item, kb_settings, refine_all


def _conflict(settings, subject: str, old: str, new: str) -> None:
    """The user said ``old``; later the assistant inferred ``new``: an open conflict for a person to settle."""
    from kernel.domain import Candidate
    from storage.facts import open_facts

    def cand(obj, day, explicitness, conf):
        return Candidate(subject=subject, predicate="value", object=obj, nature="fact", confidence=conf, explicitness=explicitness,
                         source_file=f"{day}.md", line_start=1, line_end=1, observed_at=f"{day}T09:00:00")

    facts = open_facts(settings)
    try:
        for day, c in ((date(2026, 11, 2), cand(old, date(2026, 11, 2), "stated", 0.9)),
                       (date(2026, 11, 3), cand(new, date(2026, 11, 3), "inferred", 0.6))):
            facts.apply(settings.user, day, [c], file_sha={c.source_file: "sha" + c.source_file}, raw_refs={})
    finally:
        facts.close()


def test_a_review_decision_applies_what_is_allowed_and_reports_the_rest(ws, kit_cache):
    from knowledge.decisions import apply_review, open_conflicts, pending, show, waiting_markdown

    item(ws, "personal", "a.md", "# Alice 的周报模板\n\n先写结论，再写风险。\n", title="Alice 的周报模板", source_type="personal",
         scope="personal", owner="alice")
    item(ws, "knowledge/clipping", "b.md", "# 接口限流方案\n\n令牌桶算法适合突发流量。\n", title="接口限流方案", scope="system",
         source="https://martinfowler.com/rate")
    ids = {d["title"]: d["doc_id"] for d in refine_all(kit_cache)["refined"]}
    settings = kb_settings(user="alice")
    _conflict(settings, "数据库端口", "5432", "6543")
    (conflict,) = open_conflicts(settings, "alice")
    shown = waiting_markdown(pending(settings), [conflict])
    assert ids["Alice 的周报模板"] in shown and "| 5432 | 6543 |" in shown

    outcome = apply_review(settings, {"reviewer": "alice", "approve": [ids["Alice 的周报模板"], ids["接口限流方案"], "nope"],
                                      "accept_conflicts": [conflict["id"], 999], "note": "ok"})
    assert outcome.approved == [ids["Alice 的周报模板"]] and outcome.conflicts_resolved == [conflict["id"]]
    refused = "\n".join(outcome.refused)
    assert len(outcome.refused) == 3 and "only an admin" in refused and "nope" in refused and "999" in refused
    assert show(settings, ids["Alice 的周报模板"])["status"] == "ready"
    assert show(settings, ids["接口限流方案"])["status"] == "pending"  # alice is no admin: untouched
    assert open_conflicts(settings, "alice") == []
    md = outcome.artifact_markdown()
    assert "## Refused" in md and ids["Alice 的周报模板"] in md
