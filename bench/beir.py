"""``agentos bench beir DIR``: passage retrieval through the knowledge read path (``query.kb.search_docs``) on a
corpus in BEIR layout (``corpus.jsonl``, ``queries.jsonl``, ``qrels.tsv``), e.g. CMRC2018.

Layout: ONE KNOWLEDGE DOCUMENT PER PASSAGE, written directly as a ready, system-scoped card plus its registry
row (no collect/refine: that would classify and review every passage, which is slow and not what is measured).
The body is ``# <title>`` and the passage text when the passage has a title, else the text alone (then it is
the document's preamble section). One document per passage keeps every anchor unique whatever the corpus does
with titles (BEIR sets often repeat an article title over many passages), and a hit maps to its passage by
document id alone. A passage whose text holds heading-like lines becomes several sections of its document: the
ranking keeps a passage's best section (max-p) and drops its later ones, so k=10 sections may give fewer than
10 distinct passages.

For every query, ``search_docs(k=10)`` in the three modes of the same run on the same workspace (one set of
cached vectors): ``hybrid`` (what agents get), ``bm25`` and ``dense``. A query counts as found at k when ANY of
its relevant passages (qrels score > 0) is in the first k (:func:`recall_at_k`); MRR@10 is the reciprocal rank
of the first relevant passage (:func:`mrr_at_k`). Latency is the wall time of each ``search_docs`` call, after
the section vectors were embedded (``warm``); the query itself is embedded inside the call (hybrid, dense).

``limit``: only the first N queries that have relevant passages, and a corpus cut to the passages relevant to
them plus the first ``DISTRACTORS`` other passages in corpus order (a quick run; figures are not comparable
with the full set's).

Where the queries carry their answers (CMRC2018's ``answers``: alternatives, any one will do; RGB's ``answer``: every
element must be there, an element that is a list by any of its alternatives, as RGB's own check reads them), each
query is also asked through ``query.kb_answer.answer`` (extractive, its default budget), what ``agentos kb ask``
gives: *answer hit*, the answer's text (its sources aside) holds the answer; *first line*, its first sentence does;
*first citation*, its source [1] is a relevant passage (:func:`answers_score`). Matching ignores case, width and spaces.

The workspace is temporary unless ``work`` is given: then its vector cache (``cache.db``) is kept and reused by
the next run (the registry and the cards are rebuilt every run).
"""

from __future__ import annotations

import csv
import hashlib
import json
import re
import shutil
import tempfile
import time
from pathlib import Path
from typing import Callable, Iterable, Sequence

from agentos_mem.bench.locomo import library_versions
from agentos_mem.bench.metrics import percentile
from agentos_mem.index.vectors import embed_sections
from agentos_mem.kernel import clock, progress
from agentos_mem.kernel.files import atomic_write
from agentos_mem.kernel.settings import load_settings
from agentos_mem.kernel.text import nfkc, normalize_key
from agentos_mem.kernel.workspace import init_workspace
from agentos_mem.knowledge.refine import kb_paths, outline_of
from agentos_mem.query import fusion, kb
from agentos_mem.query.kb import KBQueryError, search_docs
from agentos_mem.query.kb_answer import answer
from agentos_mem.storage.kb_cards import read_body, render_card
from agentos_mem.storage.kb_store import KBStore

MODES = ("hybrid", "bm25", "dense")
K = 10
DISTRACTORS = 10
USER = "bench"
CATEGORY = "40_references/bench"
GOAL_R1 = 0.97
# The evaluation data's README: jieba precise + bm25s lucene (k1 1.5, b 0.75), CMRC2018 dev (848 paragraphs).
REFERENCE = {"system": "jieba + BM25 (bm25s lucene), CMRC2018 dev, 848 paragraphs", "recall@1": 0.970, "recall@5": 0.994,
             "mrr@10": 0.981}


# -- metrics (kept free of I/O) --------------------------------------------------------------------------


def dedupe(ranked: Iterable) -> list:
    """Items in first-seen order (a passage's best section stands for it)."""
    return list(dict.fromkeys(ranked))


def first_rank(gold: Iterable, ranked: Sequence) -> int | None:
    """1-based rank of the first relevant item, or None."""
    gold = set(gold)
    return next((i + 1 for i, r in enumerate(ranked) if r in gold), None)


def recall_at_k(gold: Iterable, ranked: Sequence, k: int) -> float:
    """1.0 when ANY relevant item is among the first k, else 0.0 (a query is found or not)."""
    r = first_rank(gold, ranked[:k])
    return 1.0 if r is not None else 0.0


def mrr_at_k(gold: Iterable, ranked: Sequence, k: int = 10) -> float:
    r = first_rank(gold, ranked[:k])
    return 1.0 / r if r is not None else 0.0


def score(rows: Sequence[tuple[Iterable, Sequence]], ks: Sequence[int] = (1, 5, 10), prefix: str = "recall") -> dict:
    """Means over (gold, ranked) pairs: ``{prefix}@k`` for each k, ``mrr@10`` and ``queries``."""
    rows = [(set(g), list(r)) for g, r in rows]
    n = len(rows)
    out = {f"{prefix}@{k}": (round(sum(recall_at_k(g, r, k) for g, r in rows) / n, 4) if n else None) for k in ks}
    out["mrr@10"] = round(sum(mrr_at_k(g, r, 10) for g, r in rows) / n, 4) if n else None
    out["queries"] = n
    return out


def gold_answers(query: dict) -> list[list[str]]:
    """A query's answers as groups that must all be found, each by any of its strings: CMRC2018's ``answers`` are
    one group of alternatives; RGB's ``answer`` is one group per element (a list element holds alternatives)."""
    if query.get("answers"):
        return [[str(a) for a in query["answers"] if str(a).strip()]]
    return [[str(a) for a in (x if isinstance(x, list) else [x]) if str(a).strip()] for x in query.get("answer") or []]


def _folded(text: str) -> str:
    return "".join(nfkc(text).casefold().split())


def holds_answer(text: str, gold: list[list[str]]) -> bool:
    """Every group of ``gold`` has a string in ``text`` (case, width and spaces ignored)."""
    t = _folded(text)
    return bool(gold) and all(any(_folded(a) and _folded(a) in t for a in alts) for alts in gold)


def answer_body(text: str) -> str:
    """An extractive answer's sentences: its text before the sources (来源： / Sources:), which the statement of what
    is missing follows."""
    return re.split(r"\n\n(?:来源：|Sources:)\n", text, maxsplit=1)[0]


def answers_score(rows: Sequence[dict]) -> dict:
    """Rates over {hit, first_line, first_citation, tokens, ms} rows (an error row has hit False and no tokens)."""
    n = len(rows)
    rate = lambda k: round(sum(bool(r[k]) for r in rows) / n, 4) if n else None  # noqa: E731
    tokens = sorted(r["tokens"] for r in rows if r.get("tokens") is not None)
    return {"questions": n, "answer_hit": rate("hit"), "first_line_hit": rate("first_line"),
            "first_citation_relevant": rate("first_citation"), "tokens_median": tokens[len(tokens) // 2] if tokens else None,
            **latency([r["ms"] for r in rows])}


# -- the data --------------------------------------------------------------------------------------------


def _jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def load(folder: Path) -> tuple[list[dict], list[dict], dict[str, set[str]]]:
    """(corpus, queries, qrels: query id -> relevant passage ids) of a BEIR folder."""
    corpus = _jsonl(folder / "corpus.jsonl")
    queries = _jsonl(folder / "queries.jsonl")
    qrels: dict[str, set[str]] = {}
    qrels_path = folder / "qrels.tsv"
    if not qrels_path.is_file():
        qrels_path = folder / "qrels" / "test.tsv"
    with qrels_path.open(encoding="utf-8", newline="") as f:
        for i, row in enumerate(csv.reader(f, delimiter="\t")):
            if len(row) < 2 or (i == 0 and not row[-1].strip().lstrip("-").isdigit()):
                continue  # the header row
            if len(row) < 3 or float(row[2]) > 0:
                qrels.setdefault(row[0], set()).add(row[1])
    return corpus, queries, qrels


def cut(corpus: list[dict], queries: list[dict], qrels: dict[str, set[str]], limit: int | None,
        distractors: int = DISTRACTORS) -> tuple[list[dict], list[dict]]:
    """Queries with relevant passages in the corpus (the first ``limit`` of them), and the corpus they need:
    the whole corpus without a limit; with one, their relevant passages plus ``distractors`` others."""
    ids = {p["_id"] for p in corpus}
    queries = [q for q in queries if qrels.get(q["_id"], set()) & ids]
    if not limit:
        return corpus, queries
    queries = queries[:limit]
    need = {pid for q in queries for pid in qrels[q["_id"]]}
    others = [p["_id"] for p in corpus if p["_id"] not in need][:distractors]
    keep = need | set(others)
    return [p for p in corpus if p["_id"] in keep], queries


def passage_body(p: dict) -> str:
    title = (p.get("title") or "").strip()
    text = (p.get("text") or "").strip()
    return f"# {title}\n\n{text}" if title else text


# -- a bench workspace with ready documents ----------------------------------------------------------------


def doc_id_for(raw: str, taken: set[str], prefix: str = "bench") -> str:
    base = f"{prefix}_{re.sub(r'[^0-9A-Za-z_-]+', '-', raw).strip('-')[:80] or 'doc'}"
    doc_id, n = base, 2
    while doc_id.lower() in taken:
        doc_id, n = f"{base}-{n}", n + 1
    taken.add(doc_id.lower())
    return doc_id


def bench_workspace(work: Path):
    """Settings of a bench workspace at ``work``/home with an empty knowledge registry (cache.db kept)."""
    home = work / "home"
    init_workspace(home)
    settings = load_settings(home=home, llm_base_url=None, user=USER)
    paths = kb_paths(settings)
    for p in (paths["db"], paths["db"].with_name(paths["db"].name + "-wal"), paths["db"].with_name(paths["db"].name + "-shm")):
        p.unlink(missing_ok=True)
    shutil.rmtree(paths["knowledge"] / CATEGORY, ignore_errors=True)
    return settings


def publish(settings, docs: list[dict], *, source_type: str = "bench") -> dict[str, list[dict]]:
    """Write each {id, title, body, source} as a ready, system-scoped card with its registry row; returns
    doc id -> its stored outline (sections), parsed from the body exactly as the card gives it back."""
    paths = kb_paths(settings)
    store = KBStore(paths["db"])
    out = {}
    try:
        with store.db.conn:
            for d in docs:
                rel = f"{CATEGORY}/{d['id']}.md"
                card = paths["knowledge"] / rel
                row = {"id": d["id"], "path": rel, "title": d["title"], "category": CATEGORY, "scope": "system", "owner": USER,
                       "status": "ready", "nature": "fact", "confidence": 1.0, "reliability": 1.0, "source": d.get("source"),
                       "source_url": None, "source_type": source_type, "valid_until": None, "version": 1, "previous_version": None,
                       "superseded_by": None, "related": [], "content_hash": "", "outline": [], "summary": None,
                       "summary_hash": None, "summary_error": None, "review": {}, "inbox_file": None, "inbox_hash": None,
                       "created": clock.stamp()}
                atomic_write(card, render_card(row, d["body"]))
                body = read_body(card)  # what the read path will see: hash and outline of exactly this
                row["content_hash"] = hashlib.sha256(normalize_key(body).encode("utf-8")).hexdigest()
                row["outline"] = outline_of(body)
                atomic_write(card, render_card(row, body))
                if read_body(card) != body:
                    raise RuntimeError(f"card {rel}: the body does not survive the card round trip")
                store.put(row)
                out[d["id"]] = row["outline"]
    finally:
        store.close()
    return out


def warm(settings, log: Callable[[str], None], chunk: int = 32, sentences: bool = True) -> tuple[int, float, str]:
    """Embed every selected section and its sentences (cached in the workspace's cache.db; ``sentences=False``: the
    sections alone), with progress; (sections, seconds, embedder identity)."""
    import numpy as np

    t = time.perf_counter()
    dense = kb.settings_dense(settings)  # shared per process and workspace: searches reuse its embedder and connection
    embed_sections(settings, embedder=dense.embedder, log=lambda m: log(f"{m} ({time.perf_counter() - t:.0f} s)"), sentences=sentences)
    index = kb.section_index(kb.selected_docs(settings, USER))
    n = len(index.units)
    dense.cosine(index, np.arange(n), "warm")  # the searches' process memory, from the cache just filled
    return n, round(time.perf_counter() - t, 1), dense.embedder.identity


def search_all(settings, queries: list[tuple[str, str]], mode: str, log: Callable[[str], None], label: str = "",
               k: int = K) -> tuple[dict[str, list[dict]], list[float], int]:
    """{query id: hits} of ``search_docs`` in one mode, per-call latencies (ms), and how many queries errored
    (KBQueryError: nothing searchable in the query; counted as not found)."""
    hits, ms, errors = {}, [], 0
    t0 = time.perf_counter()
    for i, (qid, text) in enumerate(progress.track(queries, f"beir queries ({mode})")):
        t = time.perf_counter()
        try:
            hits[qid] = search_docs(settings, USER, text, k=k, mode=mode)
        except KBQueryError:
            hits[qid], errors = [], errors + 1
        ms.append((time.perf_counter() - t) * 1000)
        if (i + 1) % 100 == 0 or i + 1 == len(queries):
            log(f"  {label}{mode}: {i + 1}/{len(queries)} queries ({time.perf_counter() - t0:.0f} s)")
    return hits, ms, errors


def answer_all(settings, queries: list[dict], qrels: dict[str, set[str]], passage_of: dict[str, str],
               log: Callable[[str], None]) -> list[dict]:
    """Each query with answers asked through ``kb_answer.answer`` (extractive): {id, hit, first_line, first_citation,
    tokens, ms, status}; a question the read path refuses (nothing to look up) is a row that found nothing."""
    rows = []
    t0 = time.perf_counter()
    asked = [q for q in queries if gold_answers(q)]
    for i, q in enumerate(progress.track(asked, "beir answers")):
        gold = gold_answers(q)
        t = time.perf_counter()
        try:
            a = answer(settings, USER, q["text"])
        except KBQueryError:
            a = None
        ms = (time.perf_counter() - t) * 1000
        if a is None:
            rows.append({"id": q["_id"], "hit": False, "first_line": False, "first_citation": False, "tokens": None, "ms": ms,
                         "status": "error"})
        else:
            body = answer_body(a["answer"])
            first = next((line for line in body.split("\n") if line.strip()), "")
            cited = [passage_of.get(c["doc_id"]) for c in a["citations"]]
            rows.append({"id": q["_id"], "hit": holds_answer(body, gold), "first_line": holds_answer(first, gold),
                         "first_citation": bool(cited) and cited[0] in qrels.get(q["_id"], ()), "tokens": a["tokens"], "ms": ms,
                         "status": a["status"]})
        if (i + 1) % 100 == 0 or i + 1 == len(asked):
            log(f"  answers: {i + 1}/{len(asked)} questions ({time.perf_counter() - t0:.0f} s)")
    return rows


def latency(ms: list[float]) -> dict:
    return {"p50_ms": round(percentile(ms, 50), 1) if ms else None, "p95_ms": round(percentile(ms, 95), 1) if ms else None}


# -- the run -----------------------------------------------------------------------------------------------


def run(path, limit: int | None = None, k: int = K, work=None, log: Callable[[str], None] = print) -> dict:
    folder = Path(path)
    if not (folder / "corpus.jsonl").is_file() or not (folder / "queries.jsonl").is_file():
        raise FileNotFoundError(f"no corpus.jsonl / queries.jsonl in {folder} (a BEIR-layout folder)")
    t0 = time.perf_counter()
    corpus, queries, qrels = load(folder)
    full = len(corpus), len(queries)
    corpus, queries = cut(corpus, queries, qrels, limit)
    tmp = None
    if work is None:
        tmp = work = Path(tempfile.mkdtemp(prefix="agentos-bench-beir-"))
    try:
        res = _run(Path(work), corpus, queries, qrels, k, log)
    finally:
        if tmp is not None:
            shutil.rmtree(tmp, ignore_errors=True)
    res.update(dataset=str(folder), name=folder.name, limit=limit, corpus_full=full[0], queries_full=full[1],
               distractors=DISTRACTORS if limit else None, reference=REFERENCE if folder.name.startswith("cmrc") else None,
               versions=library_versions(), seconds=round(time.perf_counter() - t0, 1))
    return res


def _run(work: Path, corpus, queries, qrels, k: int, log) -> dict:
    settings = bench_workspace(work)
    taken: set[str] = set()
    docs, passage_of = [], {}
    for p in corpus:
        doc_id = doc_id_for(str(p["_id"]), taken)
        passage_of[doc_id] = p["_id"]
        docs.append({"id": doc_id, "title": (p.get("title") or "").strip() or str(p["_id"]), "body": passage_body(p),
                     "source": f"beir:{p['_id']}"})
    t = time.perf_counter()
    publish(settings, docs)
    log(f"beir: {len(docs)} passages published as documents in {time.perf_counter() - t:.1f} s; {len(queries)} queries")
    sections, warm_s, identity = warm(settings, log)
    log(f"beir: {sections} sections embedded in {warm_s} s")
    qs = [(q["_id"], q["text"]) for q in queries]
    systems, per_query = {}, {}
    for mode in MODES:
        hits, ms, errors = search_all(settings, qs, mode, log, k=k)
        rows = []
        for qid, _ in qs:
            ranked = dedupe(passage_of[h["doc_id"]] for h in hits[qid])
            rows.append((qrels[qid], ranked))
            per_query.setdefault(qid, {})[mode] = first_rank(qrels[qid], ranked[:10])
        systems[mode] = {**score(rows), **latency(ms), "errors": errors}
    missed = {m: [qid for qid, r in per_query.items() if r[m] != 1][:20] for m in MODES}
    answered = answer_all(settings, queries, qrels, passage_of, log)

    return {"queries": len(qs), "corpus": len(corpus), "documents": len(docs), "sections": sections, "k": k,
            "layout": "one document per passage: '# <title>' + text (text alone when untitled)",
            "multi_relevant_queries": sum(1 for qid, _ in qs if len(qrels[qid]) > 1),
            "systems": systems, "goal": {"recall@1 >= 0.97": {m: (systems[m]["recall@1"] or 0) >= GOAL_R1 for m in MODES}},
            "embedder": identity, "embed_seconds": warm_s, "alpha": kb.ALPHA, "fusion_model": {"top": fusion.load_model().get("top"), "fitted": fusion.load_model().get("provenance", {}).get("date"), "fallback": fusion.load_model().get("fallback")}, "dense_pool": kb.DENSE_POOL,
            "not_at_rank_1": missed,
            "answers": answers_score(answered) if answered else None,
            "answer_missed": [r["id"] for r in answered if not r["first_line"]][:20]}



# -- output ------------------------------------------------------------------------------------------------


def render(res: dict) -> str:
    lines = [f"BEIR {res['name']} ({res['dataset']}): {res['queries']} queries over {res['corpus']} passages "
             f"({res['sections']} sections), embedder {res['embedder']}, {res['seconds']} s"
             + (f", --limit {res['limit']}" if res.get("limit") else ""),
             f"{'system':<22}{'R@1':>8}{'R@5':>8}{'R@10':>8}{'MRR@10':>8}{'p50 ms':>9}{'p95 ms':>9}{'n':>6}"]
    for name, d in res["systems"].items():
        lines.append(f"{'search_docs ' + name:<22}{d['recall@1']:>8.3f}{d['recall@5']:>8.3f}{d['recall@10']:>8.3f}{d['mrr@10']:>8.3f}"
                     f"{d['p50_ms']:>9}{d['p95_ms']:>9}{d['queries']:>6}")
    ref = res.get("reference")
    if ref:
        lines.append(f"{'reference (README)':<22}{ref['recall@1']:>8.3f}{ref['recall@5']:>8.3f}{'-':>8}{ref['mrr@10']:>8.3f}   {ref['system']}")
    a = res.get("answers")
    if a:
        lines.append(f"kb ask (extractive) on {a['questions']} questions with answers: answer hit {a['answer_hit']:.3f}, first line "
                     f"{a['first_line_hit']:.3f}, first citation relevant {a['first_citation_relevant']:.3f}, median "
                     f"{a['tokens_median']} tokens, p50 / p95 {a['p50_ms']} / {a['p95_ms']} ms")
    goal = res["goal"]["recall@1 >= 0.97"]
    lines.append("goal R@1 >= 0.97: " + ", ".join(f"{m} {'met' if ok else 'NOT met'}" for m, ok in goal.items()))
    return "\n".join(lines)


def markdown(res: dict, command: str) -> str:
    s = res["systems"]
    goal = res["goal"]["recall@1 >= 0.97"]
    md = [f"# {res['name']}: passage retrieval through the knowledge read path (`search_docs`)", "", f"`{command}`", "",
          f"{res['queries']} queries over {res['corpus']} passages ({res['sections']} sections; {res['multi_relevant_queries']} "
          f"queries with more than one relevant passage), embedder `{res['embedder']}` (section vectors embedded in "
          f"{res['embed_seconds']} s), whole run {res['seconds']} s." + (f" Quick run: `--limit {res['limit']}`." if res.get("limit") else ""), "",
          "| system | R@1 | R@5 | R@10 | MRR@10 | p50 ms | p95 ms | queries |", "|---|---|---|---|---|---|---|---|"]
    for name, d in s.items():
        md.append(f"| search_docs `{name}` | {d['recall@1']:.3f} | {d['recall@5']:.3f} | {d['recall@10']:.3f} | {d['mrr@10']:.3f} | "
                  f"{d['p50_ms']} | {d['p95_ms']} | {d['queries']} |")
    ref = res.get("reference")
    if ref:
        md.append(f"| reference: {ref['system']} (eval README) | {ref['recall@1']:.3f} | {ref['recall@5']:.3f} | - | {ref['mrr@10']:.3f} | - | - | - |")
    a = res.get("answers")
    if a:
        md += ["", f"Answers through `kb ask` (extractive, `query.kb_answer.answer`), {a['questions']} questions with their answers:", "",
               "| answer hit | first line | first citation relevant | median tokens | p50 ms | p95 ms |", "|---|---|---|---|---|---|",
               f"| {a['answer_hit']:.3f} | {a['first_line_hit']:.3f} | {a['first_citation_relevant']:.3f} | {a['tokens_median']} | "
               f"{a['p50_ms']} | {a['p95_ms']} |", "",
               "*Answer hit*: the answer's sentences (its sources aside) hold the answer (CMRC2018: any of its alternatives; RGB: "
               "every element, as RGB's own check); *first line*: its first sentence does; *first citation*: its source [1] is a "
               "relevant passage."]
    md += ["", f"Goal R@1 >= {GOAL_R1}: " + ", ".join(f"{m} **{'met' if ok else 'not met'}**" for m, ok in goal.items()) + ".", "",
           f"- Layout: {res['layout']}; written directly as ready, system-scoped cards and registry rows (no collect/refine).",
           "- R@k: a query is found when ANY of its relevant passages is among the first k distinct passages; MRR@10: "
           "reciprocal rank of the first relevant one. A passage's best section stands for it.",
           f"- Modes: `hybrid` (the fitted fusion model of query/fusion.py, fitted {res['fusion_model']['fitted']}, over each side's first {res['fusion_model']['top']}; the rest convex, alpha {res['alpha']}; dense pool {res['dense_pool']}; cross-validated in bench/results/fusion-cv.md), `bm25` (bm25s lucene "
           "over kb_terms: words, Chinese characters and bigrams), `dense` (cosine of the embedder).",
           "- Latency: wall time of one `search_docs` call after the section vectors were embedded; hybrid and dense embed the "
           "query inside the call.",
           "- The reference is the eval README's figure on CMRC2018 dev (848 paragraphs, jieba words); this run is the "
           "256-paragraph trial split with the read path's own terms.", "",
           "```json", json.dumps(res, ensure_ascii=False, indent=1), "```", ""]
    return "\n".join(md)
