"""How the L1 search fuses and when it says "no history", tuned on LoCoMo (public, English chit-chat).

For each conversation: a fresh workspace, its sessions imported as daily logs, digested and indexed with
the real stage functions. Every question of categories 1-4 with valid evidence is searched once for BM25
and once for vectors over the conversation's cards and facts; the fusions are computed from those two
rankings, so every method sees exactly the same candidates:

- hit@5 / hit@10: a unit in the top k whose source (card or fact, file and line range) covers an
  evidence turn; MRR@10;
- the "no history" floors: each question is also asked of the NEXT conversation's workspace, where it has
  no answer, and the demo workspace is asked questions it can and cannot answer (mostly Chinese). A
  question counts as matched when a unit's keyword coverage reaches its floor, or the best cosine reaches
  its floor while standing clear of the 20th candidate (query.ask's rule); the floors maximise the mean of
  LoCoMo's balanced accuracy and the demo's accuracy.

    .venv/bin/python bench/fusion_bench.py [--conversations conv-26,conv-30,conv-41] [--json] [--report FILE]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from agentos_mem.bench.data import data_root
from agentos_mem.demo import init_demo_workspace
from agentos_mem.digest.importers import import_locomo
from agentos_mem.digest.logformat import list_days
from agentos_mem.digest.stages import digest_day, pending_days
from agentos_mem.index.stages import rebuild
from agentos_mem.kernel.settings import Settings, load_settings
from agentos_mem.kernel.workspace import Workspace, init_workspace
from agentos_mem.query.ask import CANDIDATES, convex, embedder, gate_cosines, rrf, script_lang, tokenizer, unit_lang
from agentos_mem.query.fusion import keyword_weight
from agentos_mem.query.index_reader import open_reader
from agentos_mem.storage.index_units import collection_name

METHODS = ["bm25", "dense", "rrf", "convex-0.3", "convex-0.4", "convex-0.5", "convex-0.6", "convex-0.7", "agree-0.5", "agree-0.6"]


def default_eval() -> Path:
    """The evaluation data: $AGENTOS_EVAL_DIR, else the fetched cache (bench.data)."""
    return data_root()


# The project's own demo workspace (Chinese, English and mixed), with questions it can and cannot answer.
# LoCoMo is English only, and e5 cosines sit higher for Chinese, so the floors are chosen on both.
DEMO_MATCH = ["Java", "我住在哪里", "服务器配置", "database port", "coffee", "青鸟项目用什么技术栈", "API 版本", "我叫什么名字",
              "周末干什么", "where does the user live?", "which database did we pick?", "数据库端口是多少", "Redis 最大内存", "我喜欢喝什么"]
DEMO_NO = ["量子力学的薛定谔方程怎么解", "明天北京天气怎么样", "如何做红烧肉", "who won the world cup in 2018?",
           "what is the weather on Mars?", "帮我写一首关于春天的诗", "推荐几部科幻电影", "how do I bake sourdough bread?",
           "世界上最高的山是哪座", "explain the rules of cricket"]


def build_demo(work: Path):
    import datetime as dt

    home = work / "demo"
    init_demo_workspace(home, end_day=dt.date(2026, 11, 29))
    s = load_settings(home=home, user="bench", hostname="bench", llm_base_url=None, logs_dir=home / "agent-sync/04_memory/working/default")
    for d in pending_days(s, "bench", s.working_dir(), dt.date(2026, 11, 29)):
        digest_day(s, "bench", d, s.working_dir())
    rebuild(s)
    return s


def build(conv: str, logs: Path, work: Path):
    home = work / conv
    init_workspace(home)
    s = load_settings(home=home, user="bench", hostname="bench", llm_base_url=None)
    folder = logs / conv
    t = time.perf_counter()
    for d in list_days(folder):
        digest_day(s, "bench", d, folder)
    digest_s = time.perf_counter() - t
    r = rebuild(s)
    return s, {"digest_s": round(digest_s, 1), "rebuild_s": r["seconds"], "units": r["units"]}


def signals(settings, questions: list[str]) -> list[dict]:
    """Per question: the BM25 and vector rankings (50 each) with scores, unit metadata, and the cosines the gate
    judges (``gate``: raised per language pair, as query.ask.hybrid_search does)."""
    reader = open_reader(Workspace(settings.home).index_dir, settings.chroma_url)
    coll = collection_name("local", "bench")
    tk, emb = tokenizer(settings), embedder(settings)
    out = []
    for q in questions:
        kw3 = reader.keyword(coll).search_covered(tk.tokens(q), CANDIDATES)
        kw = [(u, s) for u, s, _ in kw3]
        vec = reader.vectors().query(coll, emb.embed_query(q), CANDIDATES)
        ids = list(dict.fromkeys([u for u, _ in kw] + [u for u, _ in vec]))
        units = reader.units(coll, ids)
        gate = gate_cosines(vec, script_lang(q), {u: unit_lang(units.get(u)) for u, _ in vec})
        out.append({"kw": kw, "cov": max([c for *_, c in kw3], default=0.0), "vec": vec, "gate": gate, "units": units})
    return out


def ranking(sig: dict, method: str) -> list[str]:
    kw, vec = sig["kw"], sig["vec"]
    if method == "bm25":
        return [u for u, _ in kw]
    if method == "dense":
        return [u for u, _ in vec]
    if method == "rrf":
        f = rrf([[u for u, _ in kw], [u for u, _ in vec]])
    elif method.startswith("agree-"):  # convex with query.fusion's per-query weight (what query.ask uses)
        f = convex(dict(kw), dict(vec), keyword_weight(kw, vec[0][0] if vec else None, float(method.split("-")[1])))
    else:
        f = convex(dict(kw), dict(vec), float(method.split("-")[1]))
    return sorted(f, key=lambda u: (-f[u], u))


def covers(unit: dict, ev: list[tuple[str, int]]) -> bool:
    m = unit["meta"]
    lines = m.get("lines") or [None, None]
    if lines[0] is None:
        return False
    return any(m.get("file") == f and int(lines[0]) <= line <= int(lines[1]) for f, line in ev)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--eval", default=str(default_eval()))
    ap.add_argument("--conversations", default="conv-26,conv-30,conv-41")
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--report")
    args = ap.parse_args()
    os.environ.setdefault("DO_NOT_TRACK", "1")

    ev_dir = Path(args.eval) / "locomo"
    convs = args.conversations.split(",")
    work = Path(tempfile.mkdtemp(prefix="agentos-fusion-"))
    logs = work / "logs"
    import_locomo(ev_dir / "locomo.json", logs, conversations=convs)
    qa = [json.loads(line) for line in (ev_dir / "qa.jsonl").read_text(encoding="utf-8").splitlines() if line.strip()]
    built, sigs, evidence, cat5 = {}, {}, {}, {}
    for conv in convs:
        settings, info = build(conv, logs, work / "homes")
        built[conv] = (settings, info)
    for i, conv in enumerate(convs):
        dia = {}
        for line in (logs / conv / "dia_map.jsonl").read_text(encoding="utf-8").splitlines():
            r = json.loads(line)
            dia[r["dia_id"]] = (r["file"], r["line_start"])
        qs = [q for q in qa if q["sample_id"] == conv and q["category"] in (1, 2, 3, 4) and q["evidence_all_valid"]]
        evidence[conv] = [[dia[e] for e in q["evidence"] if e in dia] for q in qs]
        texts = [q["question"] for q in qs]
        sigs[conv] = {"home": signals(built[conv][0], texts),
                      "abroad": signals(built[convs[(i + 1) % len(convs)]][0], texts)}
        c5 = [q["question"] for q in qa if q["sample_id"] == conv and q["category"] == 5]
        cat5[conv] = signals(built[conv][0], c5)
    # retrieval quality per method
    res: dict = {"conversations": convs, "build": {c: built[c][1] for c in convs}, "methods": {}}
    for m in METHODS:
        h5 = h10 = mrr = n = 0
        for conv in convs:
            for sig, ev in zip(sigs[conv]["home"], evidence[conv]):
                rank = ranking(sig, m)[:10]
                pos = next((j for j, u in enumerate(rank) if u in sig["units"] and covers(sig["units"][u], ev)), None)
                n += 1
                h5 += pos is not None and pos < 5
                h10 += pos is not None
                mrr += 1 / (pos + 1) if pos is not None else 0
        res["methods"][m] = {"questions": n, "hit@5": round(h5 / n, 3), "hit@10": round(h10 / n, 3), "mrr@10": round(mrr / n, 3)}
    # floors
    def top_gap(vec):  # the best cosine and how far it stands above the 20th
        top = vec[0][1] if vec else 0.0
        return top, (top - vec[19][1] if len(vec) >= 20 else 1.0)  # as query.ask.vector_matches: no gap test under 20

    def summary(x):  # the best keyword coverage; the best plain cosine and the best raised per language pair
        return (x["cov"], *top_gap(x["vec"]), *top_gap(x["gate"]))

    def matched(x, b, c, g):  # the same rule as query.ask.gate_matches (vector_matches twice), on the best unit
        kb, top, gap, gtop, ggap = x
        return kb >= b or (top >= c and gap >= g) or (gtop >= c and ggap >= g)

    home = [summary(x) for c_ in convs for x in sigs[c_]["home"]]
    away = [summary(x) for c_ in convs for x in sigs[c_]["abroad"]]
    demo = build_demo(work / "homes")
    demo_yes = [summary(x) for x in signals(demo, DEMO_MATCH)]
    demo_no = [summary(x) for x in signals(demo, DEMO_NO)]

    def demo_acc(b, c, g):
        return (sum(matched(x, b, c, g) for x in demo_yes) + sum(not matched(x, b, c, g) for x in demo_no)) / (len(demo_yes) + len(demo_no))

    d = {k: Settings.model_fields[f"match_floor_{k}"].default for k in ("coverage", "cosine", "gap")}
    best = None
    for b in [x / 20 for x in range(1, 21)] + [1e9]:
        for c in [0.75 + x / 100 for x in range(0, 21)] + [2.0]:
            for g in [x / 100 for x in range(0, 11)]:
                tp = sum(matched(x, b, c, g) for x in home) / len(home)
                tn = sum(not matched(x, b, c, g) for x in away) / len(away)
                score = ((tp + tn) / 2 + demo_acc(b, c, g)) / 2  # LoCoMo (English) and the demo (mostly Chinese) count alike
                if best is None or score > best[0] + 1e-9:
                    best = (score, b, c, g, tp, tn)
    score, b, c, g, tp, tn = best
    c5 = [summary(x) for c_ in convs for x in cat5[c_]]
    cur_tp = sum(matched(x, d["coverage"], d["cosine"], d["gap"]) for x in home) / len(home)
    cur_tn = sum(not matched(x, d["coverage"], d["cosine"], d["gap"]) for x in away) / len(away)
    res["floor"] = {"coverage": b, "cosine": round(c, 3), "gap": g, "matched_at_home": round(tp, 3), "no_history_abroad": round(tn, 3),
                    "demo_accuracy": round(demo_acc(b, c, g), 3), "score": round(score, 3),
                    "defaults_demo_accuracy": round(demo_acc(d["coverage"], d["cosine"], d["gap"]), 3),
                    "cat5_no_history_share": round(sum(not matched(x, b, c, g) for x in c5) / max(1, len(c5)), 3),
                    "defaults": {**d, "matched_at_home": round(cur_tp, 3), "no_history_abroad": round(cur_tn, 3)},
                    # the trade-off around the choice: a lower coverage floor finds more at home, refuses less abroad
                    "alternatives": [{"coverage": b2, "matched_at_home": round(sum(matched(x, b2, c, g) for x in home) / len(home), 3),
                                      "no_history_abroad": round(sum(not matched(x, b2, c, g) for x in away) / len(away), 3),
                                      "demo_accuracy": round(demo_acc(b2, c, g), 3)} for b2 in (0.2, 0.3, 0.4, 0.5, 0.6)]}
    out = render(res, markdown=bool(args.report))
    print(json.dumps(res, indent=1) if args.json else render(res))
    if args.report:
        Path(args.report).write_text(out, encoding="utf-8")
    return 0


def render(res: dict, markdown: bool = False) -> str:
    lines = []
    if markdown:
        lines += ["# L1 fusion and the no-history floor (LoCoMo, and the demo's Chinese)", "",
                  f"`.venv/bin/python bench/fusion_bench.py --conversations {','.join(res['conversations'])} --report bench/results/fusion.md`", "",
                  "Units: the conversation's cards and facts, as the nightly flow builds them. A hit: a unit in the top k whose source covers an evidence turn.", "",
                  "| method | questions | hit@5 | hit@10 | MRR@10 |", "|---|---|---|---|---|"]
        lines += [f"| {m} | {v['questions']} | {v['hit@5']} | {v['hit@10']} | {v['mrr@10']} |" for m, v in res["methods"].items()]
        f = res["floor"]
        lines += ["", "## No-history floor", "",
                  "Each question asked of its own conversation (should match) and of the next conversation (should not).", "",
                  "The demo workspace adds Chinese: 14 questions it can answer, 10 it cannot (`DEMO_MATCH`, `DEMO_NO`); the floors maximise the mean of",
                  "LoCoMo's balanced accuracy and the demo's accuracy.", "",
                  "| floors | matched at home | no_history abroad | demo accuracy |", "|---|---|---|---|",
                  f"| best on this data: coverage >= {f['coverage']}, or cosine >= {f['cosine']} and {f['gap']} above the 20th | {f['matched_at_home']} | {f['no_history_abroad']} | {f['demo_accuracy']} |",
                  f"| settings defaults: coverage >= {f['defaults']['coverage']}, or cosine >= {f['defaults']['cosine']} and {f['defaults']['gap']} above the 20th | {f['defaults']['matched_at_home']} | {f['defaults']['no_history_abroad']} | {f['defaults_demo_accuracy']} |",
                  "", f"With cosine >= {f['cosine']} and gap {f['gap']}, other coverage floors:", "",
                  "| coverage floor | matched at home | no_history abroad | demo accuracy |", "|---|---|---|---|",
                  *[f"| {a['coverage']} | {a['matched_at_home']} | {a['no_history_abroad']} | {a['demo_accuracy']} |" for a in f["alternatives"]],
                  "", f"Category 5 (adversarial) questions answered no_history at home with the tuned floors: {f['cat5_no_history_share']}",
                  "", "Build: " + ", ".join(f"{c}: {v['units']} units, digest {v['digest_s']} s, rebuild {v['rebuild_s']} s" for c, v in res["build"].items()), ""]
        return "\n".join(lines)
    lines += [f"{'method':<12} {'hit@5':>6} {'hit@10':>7} {'mrr@10':>7}"]
    lines += [f"{m:<12} {v['hit@5']:>6} {v['hit@10']:>7} {v['mrr@10']:>7}" for m, v in res["methods"].items()]
    lines.append(f"floor: {res['floor']}")
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())
