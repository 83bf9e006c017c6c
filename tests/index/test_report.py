"""The rebuild's report: one field list for the JSON users read, the artifact and the CLI summary."""

from agentos_mem.index.report import RebuildReport


def test_an_unchanged_rebuild_reports_no_embedding_fields():
    r = RebuildReport(status="unchanged", generation="gen-1", units=5, problems=[], full=False, reason="no changes",
                      previous="gen-1", changed=0, deleted=0, seconds=0.1)
    d = r.to_dict()
    assert "embedded" not in d and "pruned" not in d and RebuildReport.from_dict(d) == r
    assert r.summary_lines() == ["indexes: unchanged (5 units, generation gen-1, 0.1 s)"]
    assert "| embedded | None |" in r.artifact_markdown()


def test_a_rebuild_reports_what_it_embedded_and_what_it_left_out():
    r = RebuildReport(status="rebuilt", generation="gen-2", units=7, problems=["cards/x.md: broken YAML"], full=False,
                      reason="2 changed", previous="gen-1", changed=2, deleted=1, seconds=1.5, embedded=2, tokenized=2, pruned=["gen-0"])
    d = r.to_dict()
    assert list(d)[:6] == ["status", "generation", "pruned", "units", "embedded", "tokenized"] and RebuildReport.from_dict(d) == r
    lines = r.summary_lines()
    assert "2 new or changed, 1 removed, 2 embedded" in lines[0] and lines[1] == "  left out: cards/x.md: broken YAML"
    assert "## Left out (unreadable)" in r.artifact_markdown()
