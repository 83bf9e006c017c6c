"""Markdown reports and the recall-against-budget plot, written from a runner's result (never by hand)."""

from __future__ import annotations

import json
from pathlib import Path

from agentos_mem.bench.locomo import BUDGETS
from agentos_mem.bench.perf import render, render_fanout, render_knowledge


def locomo_markdown(res: dict, command: str, plot_name: str | None = None) -> str:
    def row(name, d):
        return f"| {name} | " + " | ".join(f"{d[f'recall_any@{b}']:.3f} / {d[f'recall_all@{b}']:.3f}" for b in BUDGETS) + " |"

    md = ["# LoCoMo: evidence recall of the layered query, beside raw-turn baselines", "", f"`{command}`", "",
          f"{res['questions']} questions of categories 1-4 with valid evidence, {len(res['conversations'])} conversations, "
          f"embedder `{res['embedder']}`, {res['seconds']} s. Cells: any-hit / all-evidence recall at the token budget.", "",
          "| | " + " | ".join(f"{b} tokens" for b in BUDGETS) + " |", "|---|" + "---|" * len(BUDGETS),
          row("**system** (layered query, raw reads allowed)", res)]
    md += [row(f"baseline: {name} over raw turns", d) for name, d in res["baselines"].items()]
    md += ["", "By category (system):", "", "| category | questions | " + " | ".join(f"{b} tokens" for b in BUDGETS) + " |",
           "|---|---|" + "---|" * len(BUDGETS)]
    md += [f"| {cat} | {d['questions']} | " + " | ".join(f"{d[f'recall_any@{b}']:.3f} / {d[f'recall_all@{b}']:.3f}" for b in BUDGETS) + " |"
           for cat, d in res["per_category"].items()]
    md += ["", f"Default answer (no raw reads, default budget): evidence recall {res['recall_default']}, median tokens "
               f"{res['tokens_median']}, latency p50 {res['latency_p50_ms']} ms / p95 {res['latency_p95_ms']} ms, "
               f"stopped at no_history {res['no_history_share']}.",
           f"Category 5 (adversarial, {res['cat5_questions']} questions): answered no_history or no_memory {res['cat5_abstain']}.",
           *([f"Another conversation's questions (each conversation's memory asked the next one's, {x['questions']} questions): "
              f"stopped at no_history {x['no_history']}, no_history or no_memory {x['stopped']}."]
             if (x := res.get("cross_conversation")) and x.get("questions") else []), ""]
    if plot_name:
        md += [f"![evidence recall against token budget]({plot_name})", ""]
    md += ["```json", json.dumps(res, ensure_ascii=False, indent=1), "```", ""]
    return "\n".join(md)


def locomo_plot(res: dict, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(10, 4), sharey=True)
    for ax, kind in zip(axes, ("any", "all")):
        ax.plot(BUDGETS, [res[f"recall_{kind}@{b}"] for b in BUDGETS], marker="o", linewidth=2.5, label="system (layered)")
        for name, d in res["baselines"].items():
            ax.plot(BUDGETS, [d[f"recall_{kind}@{b}"] for b in BUDGETS], marker=".", linestyle="--", label=f"{name} over raw turns")
        ax.set_title(f"LoCoMo evidence recall ({kind}-hit)" if kind == "any" else "LoCoMo evidence recall (all evidence)")
        ax.set_xlabel("tokens of returned context")
        ax.set_xticks(list(BUDGETS))
        ax.grid(alpha=0.3)
    axes[0].set_ylabel("recall")
    axes[0].set_ylim(0, 1)
    axes[1].legend(loc="lower right", fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def perf_markdown(res: dict, command: str) -> str:
    md = ["# Index and query performance by size", "", f"`{command}`", "",
          "| units | full build s | embedder overhead | no-change run s | 1% changed s | query p50 ms | query p95 ms | peak RSS MB "
          "| `agentos query` median ms, in-process / through the warm service | warm service peak RSS MB |",
          "|---|---|---|---|---|---|---|---|---|---|"]
    cli = lambda r: (f"{r['cli']['in_process_median_ms']} / {r['cli']['served_median_ms']} | {r['cli'].get('service_peak_rss_mb', 'n/a')}"  # noqa: E731
                     if "cli" in r else "n/a | n/a")
    md += [f"| {r['units']} | {r['full_build']['wall_s']} | {r['full_build']['overhead'] * 100:.1f}% | {r['no_change']['wall_s']} | "
           f"{r['incremental']['wall_s']} | {r['query']['p50_ms']} | {r['query']['p95_ms']} | {r['query']['peak_rss_mb']} | {cli(r)} |"
           for r in res["runs"] if "full_build" in r]
    if not any("full_build" in r for r in res["runs"]):  # --fanout-only: no size table
        md = md[:4]
    md += [""]
    if res.get("knowledge"):
        md += ["## Knowledge search by size", "",
               "Generated sections (ten per document, bilingual sentences) with synthetic vectors in topic clusters; "
               "hybrid search warm, k=10. Recall@10: the ANN index's ten nearest sections against exact search's.", "",
               render_knowledge(res["knowledge"]), ""]
    fans = [r for r in res["runs"] if r.get("fanout")]
    if fans:
        md += ["## Embedding fan-out (`--workers`)", "",
               "The full build's embedding through the index-rebuild flow with the Dask task runner (prefect-dask, a local "
               "cluster of single-threaded worker processes, each loading the embedder once and given an equal share of the "
               "cores for its OpenMP threads), from a cold vector cache.", ""]
        for r in fans:
            md += [f"{r['units']} units:", "", render_fanout(r["fanout"]), ""]
    for r in res["runs"]:
        if "full_build" in r:
            md += [f"## {r['units']} units", "", "```", render(r), "```", ""]
    md += ["```json", json.dumps(res, ensure_ascii=False, indent=1), "```", ""]
    return "\n".join(md)
