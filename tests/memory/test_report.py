"""The memory stages' reports own their field names, Markdown and summaries; a day's digest report holds the
day's MemoryReport in its dict form (``memories``), and the nightly chain returns the InboxReport's."""

from agentos_mem.digest.report import NO_MEMORIES, DayReport, RangeReport
from agentos_mem.memory.report import InboxReport, MemoryReport, memories_markdown

PENDING = {"id": 7, "kind": "update", "target": "coffee", "description": "每天喝两杯咖啡", "reason": "the number differs"}


def _memories(**kw) -> MemoryReport:
    base = {"tasks": 2, "created": ["tea"], "updated": [], "duplicates": ["coffee"], "proposals": [7],
            "errors": ["2026-11-29.md (晚上): boom"], "extractor": "rules", "pending": [PENDING]}
    return MemoryReport(**{**base, **kw})


def test_a_memory_report_round_trips_and_leaves_out_an_extractor_that_did_not_run():
    m = _memories()
    d = m.to_dict()
    assert list(d) == ["tasks", "created", "updated", "duplicates", "proposals", "errors", "extractor", "pending"]
    assert MemoryReport.from_dict(d) == m
    assert NO_MEMORIES == MemoryReport().to_dict() == {"tasks": 0, "created": [], "updated": [], "duplicates": [], "proposals": [],
                                                       "errors": [], "pending": []}


def test_the_memory_section_shows_records_proposals_and_errors():
    md = "\n".join(_memories().markdown_section())
    assert "## User memories" in md and "| created | `tea` |" in md and "| updated | (none) |" in md
    assert "| skipped as duplicates | `coffee` |" in md and "| new proposals | #7 |" in md
    assert "- #7 update -> `coffee`: 每天喝两杯咖啡 (the number differs)" in md and "agentos memory proposals --accept ID" in md
    assert "### Extraction errors (logged and skipped)\n- 2026-11-29.md (晚上): boom" in md
    assert "Proposals waiting" not in "\n".join(_memories().markdown_section(pending=[]))
    assert memories_markdown(_memories().to_dict()) == _memories().markdown_section() and memories_markdown({}) == []
    assert _memories().log_line() == "2 task(s): 1 created, 0 updated, 1 duplicate(s), 1 new proposal(s), 1 pending, 1 error(s)"


def _day(day: str, memories: MemoryReport | None) -> DayReport:
    r = DayReport(user="林晓", day=day, files=[f"{day}.md"], lines_read=10, turns=4, candidates=3, extractor="rules", facts_added=1,
                  facts_reinforced=0, facts_superseded=0, conflicts=0, already_applied=0, cards=1, card_ids=["c1"], quarantined=[])
    if memories is not None:
        r.memories = memories.to_dict()
    return r


def test_a_day_report_holds_the_memory_report_in_its_dict_form():
    day = _day("2026-11-29", _memories())
    assert day.to_dict()["memories"] == _memories().to_dict() and DayReport.from_dict(day.to_dict()) == day
    assert "| created | `tea` |" in day.artifact_markdown()
    assert _day("2026-11-28", None).memories == NO_MEMORIES


def test_a_range_artifact_merges_the_days_memories_with_the_last_pending_list():
    days = [_day("2026-11-28", _memories(created=["a"], pending=[{**PENDING, "id": 1}])), _day("2026-11-29", _memories(created=["b"]))]
    md = RangeReport.combine("林晓", days).artifact_markdown("nightly")
    assert "| created | `a`, `b` |" in md and "| new proposals | #7, #7 |" in md and "- #7 update" in md and "- #1 update" not in md
    merged = MemoryReport.merge([MemoryReport.from_dict(d.memories) for d in days])
    assert merged.tasks == 4 and merged.created == ["a", "b"] and merged.pending == [PENDING]
    quiet = RangeReport.combine("林晓", [_day("2026-11-28", None)]).artifact_markdown("nightly")
    assert "## User memories" not in quiet


def test_an_inbox_report_round_trips_and_lists_quarantined_cards():
    r = InboxReport(cards=2, created=["tea"], updated=["coffee"], proposals=[9], already_proposed=[3],
                    quarantined=["gbk.md: card is not valid UTF-8 (byte 0)"])
    d = r.to_dict()
    assert list(d) == ["cards", "created", "updated", "duplicates", "proposals", "already_proposed", "errors", "quarantined"]
    assert InboxReport.from_dict({**d, "records_embedded": 4}) == r  # what the nightly chain adds is not the report's
    md = r.artifact_markdown("林晓")
    assert md.startswith("# Memory inbox · 林晓\n\n2 card(s) taken from `00_stream/inbox/memory/`.\n")
    assert "| updated | `coffee` |" in md and "| new proposals | #9 |" in md and "Proposals waiting" not in md
    assert "## Quarantined\n- `gbk.md: card is not valid UTF-8 (byte 0)`" in md
    assert r.worth_publishing and not InboxReport().worth_publishing
    assert r.log_line() == "2 card(s): 1 created, 1 updated, 0 duplicate(s), 1 new proposal(s), 1 quarantined, 0 error(s)"
    assert InboxReport.from_dict({"cards": 0, "errors": ["boom"]}).errors == ["boom"]  # nightly's stand-in
