"""The digest's reports own their field names, artifact tables and CLI summaries; the dict form is what
flows return and `agentos ... --json` prints."""

from agentos_mem.digest.report import COUNTS, DayReport, RangeReport, summary_lines


def _day(day: str, added: int, quarantined: list[str]) -> DayReport:
    return DayReport(user="林晓", day=day, files=[f"{day}.md"], lines_read=10, turns=4, candidates=3, extractor="rules",
                     facts_added=added, facts_reinforced=1, facts_superseded=0, conflicts=0, already_applied=0, cards=2,
                     card_ids=["c1", "c2"], quarantined=quarantined)


def test_a_day_report_round_trips_through_its_dict_form():
    r = _day("2026-11-29", 3, ["2026-11-29.jsonl:4: broken JSON"])
    assert DayReport.from_dict(r.to_dict()) == r
    assert list(r.to_dict())[:4] == ["user", "day", "files", "lines_read"]
    md = r.artifact_markdown()
    assert "# Daily digest 2026-11-29 · 林晓" in md and "| facts added | 3 |" in md and "broken JSON" in md


def test_a_range_report_sums_its_days_and_keeps_each_day():
    days = [_day("2026-11-28", 2, []), _day("2026-11-29", 3, ["x.md: not UTF-8"])]
    total = RangeReport.combine("林晓", days).to_dict()
    assert total["days"] == ["2026-11-28", "2026-11-29"] and total["facts_added"] == 5 and total["turns"] == 8
    assert set(COUNTS) <= set(total) and total["quarantined"] == ["x.md: not UTF-8"]
    assert RangeReport.from_dict(total).per_day == days
    md = RangeReport.from_dict(total).artifact_markdown("backfill")
    assert md.count("| 2026-11-2") == 2 and "## Quarantined" in md


def test_the_cli_summary_reads_a_day_or_a_range():
    one = summary_lines(_day("2026-11-29", 3, []).to_dict())
    assert one[0] == "user 林晓: 1 day(s) digested (2026-11-29 .. 2026-11-29)" and "facts added 3" in one[2]
    many = summary_lines(RangeReport.combine("林晓", [_day("2026-11-28", 1, []), _day("2026-11-29", 1, ["q"])]).to_dict())
    assert many[0].endswith("(2026-11-28 .. 2026-11-29)") and many[-1] == "    - q"
