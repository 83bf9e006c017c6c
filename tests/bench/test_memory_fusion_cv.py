"""The memory query's fusion weight, cross-validated (bench/memory_fusion_cv.py): on tiny synthetic outcomes, a fold's
weight is chosen without its own questions, ties go to the current weight, and the report's pooled figures take each
question at its own fold's weight."""

from __future__ import annotations

from agentos_mem.bench import memory_fusion_cv as M

ALPHAS = (0.2, 0.6, 0.8)


def madial_q(fold: str, best: float, source: str = "madial-zh") -> dict:
    """A MADial-like question whose recall@5 is 1 at ``best`` and 0 elsewhere."""
    return {"fold": fold, "source": source,
            "by_alpha": {M.akey(a): {"recall@5": float(a == best), "ndcg@5": 0.0, "mrr@10": 0.0} for a in ALPHAS}}


def test_the_left_out_fold_never_picks_its_own_weight():
    qs = [madial_q("A", 0.2), madial_q("A", 0.2), madial_q("B", 0.2), madial_q("C", 0.8), madial_q("C", 0.8), madial_q("C", 0.8)]
    cv = M.cross_validate(qs, ALPHAS, current=0.6)
    # C alone prefers 0.8 (three questions, more than A and B together), but its weight is fitted on A and B only
    assert cv["folds"]["C"]["alpha"] == 0.2
    assert cv["folds"]["C"]["chosen"]["recall@5"] == 0.0 and cv["folds"]["C"]["current"]["recall@5"] == 0.0
    # A left out: B (one at 0.2) against C (three at 0.8): 0.8 wins on the training part
    assert cv["folds"]["A"]["alpha"] == 0.8
    # pooled: every question at its fold's weight (A: 0.8 -> 0, B: fitted on A + C -> 0.8 -> 0, C: 0.2 -> 0)
    assert cv["pooled"]["madial-zh"]["chosen"]["recall@5"] == 0.0
    # changing the left-out fold's figures changes nothing about the weight chosen for it
    flipped = qs[:3] + [madial_q("C", 0.2) for _ in range(3)]
    assert M.cross_validate(flipped, ALPHAS, current=0.6)["folds"]["C"]["alpha"] == 0.2


def test_sources_weigh_alike_and_ties_go_to_the_current_weight():
    # source X: many questions at 0.2; source Y: few at 0.8: each source weighs the same, so they tie: nearest current wins
    qs = [madial_q("x", 0.2, "madial-zh") for _ in range(10)] + [madial_q("y", 0.8, "madial-en") for _ in range(2)]
    assert M.fit(qs, ALPHAS, current=0.6) == 0.8  # 0.2 and 0.8 tie at 0.5; 0.8 is nearer 0.6
    assert M.fit(qs, (0.2, 0.6, 0.8), current=0.3) == 0.2
    flat = [{"fold": "f", "source": "madial-zh", "by_alpha": {M.akey(a): {"recall@5": 0.5} for a in ALPHAS}}]
    assert M.fit(flat, ALPHAS, current=0.6) == 0.6


def test_locomo_objective_reads_evidence_at_both_budgets_and_the_verdict_needs_no_loss():
    def loco(fold, a_good):
        return {"fold": fold, "source": "locomo", "by_alpha": {M.akey(a): {
            **{m: float(a == a_good) for m in M.LOCOMO_METRICS}, "default_hit": 1.0, "default_tokens": 100} for a in ALPHAS}}

    qs = [loco(f, 0.8) for f in ("c1", "c2", "c3") for _ in range(4)]
    cv = {"leave-one-fold-out": M.cross_validate(qs, ALPHAS, 0.6)}
    assert all(f["alpha"] == 0.8 for f in cv["leave-one-fold-out"]["folds"].values())
    v = M.verdict(cv, 0.6)
    assert v["change"] and v["gain_at_500"] == 2.0 and not v["worse_than_noise"]
    md_res = {"current": 0.6, "alphas": list(ALPHAS), "cv": cv, "grid": M.grid_table(qs, ALPHAS), "verdict": v,
              "decision": "x", "extraction": {}}
    md = M.markdown(md_res, "cmd")
    assert "| c1 | locomo | 4 | 0.80 |" in md and "0.60 (current)" in md
