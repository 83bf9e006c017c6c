"""How the L1 search fuses and when it says "no history", tuned on LoCoMo (public, English chit-chat).

For each conversation: a fresh workspace, its sessions imported as daily logs, digested and indexed with
the real stage functions. Every question of categories 1-4 with valid evidence is searched once for BM25
and once for vectors over the conversation's cards and facts; the fusions are computed from those two
rankings, so every method sees exactly the same candidates:

- hit@5 / hit@10: a unit in the top k whose source (card or fact, file and line range) covers an
  evidence turn; MRR@10;
- the "no history" floor: each question is also asked of the NEXT conversation's workspace, where it has
  no answer. A question counts as matched when its best BM25 score or best cosine reaches the floors; the
  floors are chosen to maximise balanced accuracy (matched at home, not matched abroad).

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

METHODS = ["bm25", "dense", "rrf", "convex-0.3", "convex-0.4", "convex-0.5", "convex-0.6", "convex-0.7"]


def default_eval() -> Path:
    for c in (ROOT.parent / "shared" / "eval", Path("/work/shared/eval")):
        if c.is_dir():
            return c
    return ROOT.parent / "shared" / "eval"


def build(conv: str, logs: Path, work: Path):
    from agentos.digest import digest_day
    from agentos.indexing import rebuild
    from agentos.logformat import list_days
    from agentos.settings import load_settings
    from agentos.workspace import init_workspace

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
    """Per question: the BM25 and vector rankings (50 each) with scores, and unit metadata."""
    from agentos.units import collection_name
    from agentos.workspace import Workspace
    from query.ask import CANDIDATES, _embedder, _tokenizer
    from query.index_reader import open_reader

    reader = open_reader(Workspace(settings.home).local / "vector_db")
    coll = collection_name("local", "bench")
    tk, emb = _tokenizer(settings), _embedder(settings)
    out = []
    for q in questions:
        kw = reader.keyword(coll).search(tk.tokens(q), CANDIDATES)
        vec = reader.vectors().query(coll, emb.embed_query(q), CANDIDATES)
        ids = list(dict.fromkeys([u for u, _ in kw] + [u for u, _ in vec]))
        out.append({"kw": kw, "vec": vec, "units": reader.units(coll, ids)})
    return out


def ranking(sig: dict, method: str) -> list[str]:
    from query.ask import convex, rrf

    kw, vec = sig["kw"], sig["vec"]
    if method == "bm25":
        return [u for u, _ in kw]
    if method == "dense":
        return [u for u, _ in vec]
    if method == "rrf":
        f = rrf([[u for u, _ in kw], [u for u, _ in vec]])
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
    from agentos.importers import import_locomo

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
    home_sig = [(max([s for _, s in x["kw"]], default=0.0), max([c for _, c in x["vec"]], default=0.0)) for c in convs for x in sigs[c]["home"]]
    away_sig = [(max([s for _, s in x["kw"]], default=0.0), max([c for _, c in x["vec"]], default=0.0)) for c in convs for x in sigs[c]["abroad"]]
    best = None
    for b in [x / 2 for x in range(0, 41)] + [1e9]:
        for c in [0.75 + x / 200 for x in range(0, 41)] + [2.0]:
            tp = sum(1 for kb, kc in home_sig if kb >= b or kc >= c) / len(home_sig)
            tn = sum(1 for kb, kc in away_sig if not (kb >= b or kc >= c)) / len(away_sig)
            score = (tp + tn) / 2
            if best is None or score > best[0] + 1e-9:
                best = (score, b, c, tp, tn)
    score, b, c, tp, tn = best
    c5_share = sum(1 for c_ in convs for x in cat5[c_]
                   if not (max([s for _, s in x["kw"]], default=0) >= b or max([v for _, v in x["vec"]], default=0) >= c))
    c5_total = sum(len(cat5[c_]) for c_ in convs)
    from agentos.settings import Settings

    cur_b, cur_c = Settings.model_fields["match_floor_bm25"].default, Settings.model_fields["match_floor_cosine"].default
    cur_tp = sum(1 for kb, kc in home_sig if kb >= cur_b or kc >= cur_c) / len(home_sig)
    cur_tn = sum(1 for kb, kc in away_sig if not (kb >= cur_b or kc >= cur_c)) / len(away_sig)
    res["floor"] = {"bm25": b, "cosine": round(c, 3), "matched_at_home": round(tp, 3), "no_history_abroad": round(tn, 3),
                    "balanced_accuracy": round(score, 3), "cat5_no_history_share": round(c5_share / max(1, c5_total), 3),
                    "defaults": {"bm25": cur_b, "cosine": cur_c, "matched_at_home": round(cur_tp, 3), "no_history_abroad": round(cur_tn, 3)}}
    out = render(res, markdown=bool(args.report))
    print(json.dumps(res, indent=1) if args.json else render(res))
    if args.report:
        Path(args.report).write_text(out, encoding="utf-8")
    return 0


def render(res: dict, markdown: bool = False) -> str:
    lines = []
    if markdown:
        lines += ["# L1 fusion and the no-history floor (LoCoMo)", "",
                  f"`.venv/bin/python bench/fusion_bench.py --conversations {','.join(res['conversations'])} --report bench/results/fusion.md`", "",
                  "Units: the conversation's cards and facts, as the nightly flow builds them. A hit: a unit in the top k whose source covers an evidence turn.", "",
                  "| method | questions | hit@5 | hit@10 | MRR@10 |", "|---|---|---|---|---|"]
        lines += [f"| {m} | {v['questions']} | {v['hit@5']} | {v['hit@10']} | {v['mrr@10']} |" for m, v in res["methods"].items()]
        f = res["floor"]
        lines += ["", "## No-history floor", "",
                  "Each question asked of its own conversation (should match) and of the next conversation (should not).", "",
                  "| floors | matched at home | no_history abroad |", "|---|---|---|",
                  f"| tuned: BM25 >= {f['bm25']} or cosine >= {f['cosine']} | {f['matched_at_home']} | {f['no_history_abroad']} |",
                  f"| settings defaults: BM25 >= {f['defaults']['bm25']} or cosine >= {f['defaults']['cosine']} | {f['defaults']['matched_at_home']} | {f['defaults']['no_history_abroad']} |",
                  "", f"Category 5 (adversarial) questions answered no_history at home with the tuned floors: {f['cat5_no_history_share']}",
                  "", "Build: " + ", ".join(f"{c}: {v['units']} units, digest {v['digest_s']} s, rebuild {v['rebuild_s']} s" for c, v in res["build"].items()), ""]
        return "\n".join(lines)
    lines += [f"{'method':<12} {'hit@5':>6} {'hit@10':>7} {'mrr@10':>7}"]
    lines += [f"{m:<12} {v['hit@5']:>6} {v['hit@10']:>7} {v['mrr@10']:>7}" for m, v in res["methods"].items()]
    lines.append(f"floor: {res['floor']}")
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())
