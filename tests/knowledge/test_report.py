"""The knowledge stages' reports own their field names, artifact tables and CLI summaries; the dict form is what
the collect-to-inbox and inbox-refine flows return and `agentos collect|refine --json` prints."""

from agentos_mem.knowledge.report import CollectReport, RefineReport, SourceReport

PDF = {"file": "/home/材料/paper.pdf", "reason": "paper.pdf: a PDF document is not collected (only Markdown and UTF-8 text); "
       "convert it to Markdown (.md) or UTF-8 text (.txt) first", "severity": "error", "sha256": None}


def _sources() -> list[SourceReport]:
    materials = SourceReport("materials", "folder", "personal", "/home/材料", duplicates=2, refused=[PDF], warnings=["a.md: no title"],
                             collected=[{"partition": "personal", "file": "personal/20261130_a.md", "source": "/home/材料/a.md",
                                         "title": "A | B", "source_type": "folder", "from": "a.md"}])
    feed = SourceReport("周刊", "feed", "knowledge/feed", "https://example.org/atom.xml", status="failed",
                        errors=["feed https://example.org/atom.xml: timed out after 20 s"])
    return [materials, feed]


def test_a_source_report_round_trips_and_names_its_feed_only_when_known():
    materials, feed = _sources()
    assert SourceReport.from_dict(materials.to_dict()) == materials
    assert list(materials.to_dict()) == ["name", "type", "partition", "location", "status", "collected", "duplicates", "refused",
                                         "warnings", "errors"]
    feed.feed_title = "技术周刊"
    assert feed.to_dict()["feed_title"] == "技术周刊" and SourceReport.from_dict(feed.to_dict()) == feed


def test_a_collect_report_sums_its_sources_and_round_trips():
    r = CollectReport.combine("林晓", _sources(), ["sources.yaml entry 3: type 'pdf' is not one of folder, ...; skipped"])
    d = r.to_dict()
    assert list(d) == ["user", "collected", "duplicates", "refused", "warnings", "errors", "per_source"]
    assert d["duplicates"] == 2 and d["refused"] == [PDF] and len(d["errors"]) == 2 and d["errors"][0].startswith("sources.yaml")
    assert d["per_source"]["materials"] == {"type": "folder", "partition": "personal", "location": "/home/材料", "status": "ok",
                                            "collected": 1, "duplicates": 2, "refused": 1}
    assert CollectReport.from_dict(d) == r and CollectReport.from_dict(d).to_dict() == d
    assert r.failed and not CollectReport.combine("林晓", _sources()[:1]).failed
    # the nightly chain's stand-in for a collect stage that failed reads too
    assert CollectReport.from_dict({"collected": [], "errors": ["sources.yaml: not valid YAML"]}).errors == ["sources.yaml: not valid YAML"]


def test_the_collect_artifact_lists_sources_items_and_refusals():
    md = CollectReport.combine("林晓", _sources()).artifact_markdown()
    assert md.startswith("# Collect to inbox · 林晓\n")
    assert "**1 collected**, 2 duplicate(s) skipped, 1 refused, 1 error(s)." in md
    assert "| materials | folder | personal | ok | 1 | 2 | 1 |" in md and "| 周刊 | feed | knowledge/feed | failed | 0 | 0 | 0 |" in md
    assert "| personal | `personal/20261130_a.md` | A \\| B | /home/材料/a.md |" in md
    assert "## Refused" in md and "- `/home/材料/paper.pdf`: paper.pdf: a PDF document" in md
    assert "## Errors" in md and "## Warnings" in md


def test_the_collect_summary_and_log_line():
    r = CollectReport.combine("林晓", _sources())
    lines = r.summary_lines()
    assert lines[0] == "user 林晓: 1 item(s) collected into the inbox, 2 duplicate(s) skipped"
    assert lines[1] == "  + personal/20261130_a.md  <- /home/材料/a.md"
    assert "  refused (1; also in logs/quarantine.jsonl):" in lines and lines[-2].startswith("  error: feed") and lines[-1] == "  warning: a.md: no title"
    assert r.log_line() == "1 item(s) for 林晓: 2 duplicate(s) skipped, 1 refused, 1 error(s)"
    assert r.artifact_description() == "collect-to-inbox for 林晓: 1 collected, 2 duplicate(s), 1 refused"


def _refine() -> RefineReport:
    r = RefineReport(already=3, edited=["kb-2026-11-01-x"], summaries_retried=1)
    r.add({"file": "personal/a.md", "outcome": "new", "doc_id": "kb-2026-11-30-a", "title": "Redis 缓存", "category": "tech",
           "reliability": 0.7, "consistency": {"statements": 3, "identical": 1, "added": 2, "conflicts": 0, "fact_ids": []},
           "valid_until": "2027-05-29", "summary_error": None})
    r.add({"file": "personal/b.md", "outcome": "duplicate", "doc_id": "kb-2026-11-30-a", "title": "Redis 缓存"})
    r.quarantined.append("tools/c.md: frontmatter unreadable")
    r.errors.append("tools/d.md: OSError: gone")
    return r


def test_a_refine_report_round_trips_and_sorts_duplicates():
    r = _refine()
    d = r.to_dict()
    assert list(d) == ["refined", "duplicates", "quarantined", "errors", "already", "edited", "summaries_retried"]
    assert [x["file"] for x in d["refined"]] == ["personal/a.md"] and [x["file"] for x in d["duplicates"]] == ["personal/b.md"]
    assert RefineReport.from_dict(d) == r
    assert RefineReport.from_dict({"refined": [], "errors": ["x"]}).errors == ["x"]  # nightly's stand-in


def test_the_refine_artifact_summary_and_log_line():
    r = _refine()
    md = r.artifact_markdown()
    assert md.startswith("# Inbox refine\n")
    assert "1 document(s) refined (pending review), 1 duplicate(s), 1 quarantined, 3 already taken, 1 error(s)." in md
    assert "| `kb-2026-11-30-a` Redis 缓存 | new | tech | 0.7 | 1 / 2 / 0 | 2027-05-29 |" in md
    assert "## Quarantined\n- tools/c.md: frontmatter unreadable" in md and "## Errors\n- tools/d.md: OSError: gone" in md
    assert md.rstrip().endswith("or the `review` deployment.")
    assert r.summary_line() == "refined 1, duplicates 1, quarantined 1, errors 1; pending review: `agentos kb pending`"
    assert r.log_line() == "1 item(s): 1 duplicate(s), 1 quarantined, 1 error(s)"
    assert "| document |" not in RefineReport().artifact_markdown()
