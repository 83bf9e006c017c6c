"""``agentos bench madial DIR``: memory recall on MADial-Bench (hejunqing/MADial-Bench), Chinese or English.

Each memory becomes a record of its user in a temporary workspace through the real ``MemoryBook`` API
(description = the event, body = the event plus time, scene and emotion lines), and each query recalls
over its user's records from ``query_context`` (the dialogue before the turn where the assistant should
bring a memory up), as upstream's embedding_top_20_new.py does.

Systems, on the same records and queries:

- ``agentos recall``: what ``query.recall.recall`` serves (the lexical selector, at most 5 records after
  its floor; MRR@10 therefore over at most 5);
- ``agentos ranking``: ``LexicalSelector.rank`` without the floor, top 10;
- ``bm25``: the project tokenizer (jieba for Chinese) + BM25 over the event text only;
- ``dense``: the project embedder's cosine over the event text only, the whole context as the query;
- ``llm:<model>``: the chat selector, when ``--llm URL#MODEL`` is given.

Metrics are upstream's embedding_score_new.py, exactly (see :func:`recall_at_k`, :func:`ndcg_at_k`,
:func:`reciprocal_rank_at_k`). Note upstream's nDCG: its ideal DCG is that of the retrieved list sorted,
not of the gold count, so a list with one relevant item at rank 1 scores 1.0 however many were missed.
English memories carry no user id: the owner is the user whose speaker tag (``<Bart>:``) matches the
name in the event, else upstream's file order (the first 76 lines are user 1).
"""

from __future__ import annotations

import json
import math
import re
import shutil
import tempfile
import time
from collections import Counter
from pathlib import Path

from agentos_mem.bench.locomo import library_versions
from agentos_mem.index.stages import make_settings_embedder
from agentos_mem.kernel import progress
from agentos_mem.kernel.settings import load_settings
from agentos_mem.kernel.workspace import init_workspace
from agentos_mem.query.recall import ChatSelector, LexicalSelector, recall, record_tokenizer
from agentos_mem.storage.memory_records import open_book

# Published figures (MADial-Bench paper, memory recall, zh): for the report's reference rows.
REFERENCE = {
    "zh": [{"system": "BGE-M3 dense", "recall@5": 0.586, "ndcg@5": 0.686},
           {"system": "OpenAI embeddings", "recall@5": 0.694, "ndcg@5": 0.769},
           {"system": "jieba + BM25", "recall@5": 0.393, "ndcg@5": None}],
    "en": [],
}
UPSTREAM_EN_USER1 = 76  # upstream's file-order split of en_memories.jsonl
LABELS = {"zh": ("时间", "场景", "情绪"), "en": ("Time", "Scene", "Emotion")}
SPEAKER_TAG = re.compile(r"<([^<>\n]{1,40})>\s*:")


# -- upstream's metrics (embedding_score_new.py) ---------------------------------------------------------


def recall_at_k(actual, predicted, k: int) -> float:
    return len(set(predicted[:k]) & set(actual)) / len(actual)


def _dcg(rel) -> float:
    return sum(r / math.log2(i + 2) for i, r in enumerate(rel))


def ndcg_at_k(actual, predicted, k: int) -> float:
    """Upstream's nDCG: the ideal is the retrieved relevance list sorted, not the gold count."""
    rel = [1 if p in actual else 0 for p in predicted[:k]]
    idcg = _dcg(sorted(rel, reverse=True))
    return _dcg(rel) / idcg if idcg else 0.0


def reciprocal_rank_at_k(actual, predicted, k: int) -> float:
    for i, p in enumerate(predicted[:k]):
        if p in actual:
            return 1.0 / (i + 1)
    return 0.0


def score(rows: list[tuple[list, list]]) -> dict:
    """Means over (actual, predicted) pairs, under the JSON keys the report uses."""
    n = len(rows)
    return {"recall@5": round(sum(recall_at_k(a, p, 5) for a, p in rows) / n, 3) if n else None,
            "ndcg@5": round(sum(ndcg_at_k(a, p, 5) for a, p in rows) / n, 3) if n else None,
            "mrr@10": round(sum(reciprocal_rank_at_k(a, p, 10) for a, p in rows) / n, 3) if n else None,
            "queries": n}


# -- the data -------------------------------------------------------------------------------------------


def _jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def owners(memories: list[dict], queries: list[dict]) -> dict[int, int]:
    """memory_id -> user id: the file's ``user-id``, else the user whose speaker name the event mentions."""
    speakers: dict[int, Counter] = {}
    for q in queries:
        tags = [t.strip() for t in SPEAKER_TAG.findall(q.get("query_context") or "") if t.strip().lower() != "assistant"]
        speakers.setdefault(int(q["user_id"]), Counter()).update(tags)
    names = {u: c.most_common(1)[0][0] for u, c in speakers.items() if c}
    out = {}
    for i, m in enumerate(memories):
        if m.get("user-id") is not None:
            out[m["memory_id"]] = int(m["user-id"])
            continue
        hit = [u for u, name in names.items() if name in m["event"]]
        out[m["memory_id"]] = hit[0] if len(hit) == 1 else (1 if i < UPSTREAM_EN_USER1 else 2)
    return out


def load(folder: Path, lang: str) -> tuple[list[dict], list[dict], dict[int, int]]:
    memories = _jsonl(folder / f"{lang}_memories.jsonl")
    queries = _jsonl(folder / f"{lang}_queries.jsonl")
    return memories, queries, owners(memories, queries)


def record_of(m: dict, lang: str) -> tuple[str, str, str]:
    """(name, description, body) of a MADial memory."""
    t, s, e = LABELS[lang]
    desc = m["event"].strip()
    if len(desc) > 200:  # the description is one line of at most 200 characters; the body keeps it all
        desc = desc[:197].rsplit(" ", 1)[0] + "..."
    body = f"{m['event'].strip()}\n\n{t}: {m['time']}\n{s}: {m['scene']}\n{e}: {m['emotion']}"
    return f"madial-{m['memory_id']}", desc, body


# -- the run --------------------------------------------------------------------------------------------


def run(path, lang: str = "zh", limit: int | None = None, llm: str | None = None, log=print) -> dict:
    folder = Path(path)
    if lang not in LABELS:
        raise ValueError(f"unknown language {lang!r}: zh or en")
    if not (folder / f"{lang}_memories.jsonl").is_file():
        raise FileNotFoundError(f"no {lang}_memories.jsonl in {folder}")
    memories, queries, owner = load(folder, lang)
    if limit:
        queries = queries[:limit]
    work = Path(tempfile.mkdtemp(prefix="agentos-bench-madial-"))
    t0 = time.perf_counter()
    try:
        res = _run(work, memories, queries, owner, lang, llm, log)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    res.update(dataset=str(folder), lang=lang, memories=len(memories), reference=REFERENCE[lang],
               users={str(u): n for u, n in sorted(Counter(owner.values()).items())}, versions=library_versions(),
               seconds=round(time.perf_counter() - t0, 1))
    return res


def _run(work: Path, memories, queries, owner, lang, llm, log) -> dict:
    import numpy as np

    home = work / "home"
    init_workspace(home)
    settings = load_settings(home=home, llm_base_url=None, recall_selector="lexical", memory_backend="files")
    book = open_book(settings)
    for m in memories:
        book.create(f"u{owner[m['memory_id']]}", *record_of(m, lang)[:2], "user", record_of(m, lang)[2])
    tk = record_tokenizer(home)
    emb = make_settings_embedder(settings)
    # One selector for every system: document and query vectors are embedded once and shared.
    sel = LexicalSelector(tk, emb)
    ids = {f"madial-{m['memory_id']}": m["memory_id"] for m in memories}
    events = {m["memory_id"]: m["event"] for m in memories}
    t = time.perf_counter()
    event_vecs = dict(zip(events, sel.doc_vectors(list(events.values()))))
    log(f"madial {lang}: {len(memories)} memories, {len(queries)} queries; event vectors in {time.perf_counter() - t:.1f} s")
    chat = _chat_selector(llm)
    rows: dict[str, list] = {"agentos recall": [], "agentos ranking": [], "bm25": [], "dense": []}
    if chat:
        rows[chat.label] = []
    served, timings = [], []
    for i, q in enumerate(progress.track(queries, "madial queries")):
        user, text, gold = f"u{q['user_id']}", q["query_context"], list(q["relevant_memory_ids"])
        records = book.list(user, settings.recall_window)
        mine = [ids[r.name] for r in records]
        ta = time.perf_counter()
        r = recall(text, user=user, settings=settings, book=book, selector=sel)
        timings.append((time.perf_counter() - ta) * 1000)
        served.append(len(r.hits))
        rows["agentos recall"].append((gold, [ids[h["name"]] for h in r.hits]))
        rows["agentos ranking"].append((gold, [ids[n] for n, _ in sel.rank(text, records)][:10]))
        rows["bm25"].append((gold, _bm25_order(tk, text, mine, events)[:10]))
        cos = np.stack([event_vecs[m] for m in mine]) @ sel.query_vector(text[-4000:])
        rows["dense"].append((gold, [mine[j] for j in np.argsort(-cos, kind="stable")][:10]))
        if chat:
            rc = recall(text, user=user, settings=settings, book=book, selector=chat)
            rows[chat.label].append((gold, [ids[h["name"]] for h in rc.hits]))
        if (i + 1) % 20 == 0:
            log(f"  {i + 1}/{len(queries)} queries")
    systems = {name: score(rs) for name, rs in rows.items()}
    served_mean = sum(served) / len(served) if served else 0.0
    timings.sort()
    return {"queries": len(queries), "systems": systems, "embedder": emb.identity, "tokenizer": tk.identity,
            "recall_served": {"mean_hits": round(served_mean, 2), "none_share": round(served.count(0) / max(1, len(served)), 3),
                              "p50_ms": round(timings[len(timings) // 2], 1) if timings else None}}


def _bm25_order(tk, text: str, mine: list[int], events: dict[int, str]) -> list[int]:
    import bm25s
    import numpy as np

    model = bm25s.BM25(method="robertson", k1=1.5, b=0.75)
    model.index([tk.tokens(events[m]) or [""] for m in mine], show_progress=False)
    known = [t for t in tk.tokens(text) if t in model.vocab_dict]
    s = np.asarray(model.get_scores(known)) if known else np.zeros(len(mine))
    return [mine[j] for j in np.argsort(-s, kind="stable")]


def _chat_selector(llm: str | None):
    if not llm:
        return None
    # lazy: kernel.llm pulls httpx: only when this runs
    from agentos_mem.kernel.llm import ChatClient

    url, _, model = llm.partition("#")
    return ChatSelector(ChatClient(url, model or "default"))



# -- output ---------------------------------------------------------------------------------------------


def _table(res: dict) -> list[tuple[str, str, str, str, str]]:
    """The rows of the results table, as text (system, recall@5, nDCG@5, MRR@10, queries), shared by the console
    and the Markdown report: ours, then the published systems (no MRR or query count; nDCG only where given)."""
    rows = [(name, f"{d['recall@5']:.3f}", f"{d['ndcg@5']:.3f}", f"{d['mrr@10']:.3f}", str(d["queries"])) for name, d in res["systems"].items()]
    for ref in res["reference"]:
        nd = f"{ref['ndcg@5']:.3f}" if ref["ndcg@5"] is not None else "-"
        rows.append(("published: " + ref["system"], f"{ref['recall@5']:.3f}", nd, "-", "-"))
    return rows


def render(res: dict) -> str:
    lines = [f"MADial-Bench {res['lang']} ({res['dataset']}): {res['queries']} queries, {res['memories']} memories, "
             f"embedder {res['embedder']}, {res['seconds']} s",
             f"{'system':<28}{'recall@5':>10}{'ndcg@5':>10}{'mrr@10':>10}{'n':>6}"]
    for name, recall, ndcg, mrr, n in _table(res):
        lines.append(f"{name:<28}{recall:>10}{ndcg:>10}{mrr:>10}{n:>6}")
    s = res["recall_served"]
    lines.append(f"recall served {s['mean_hits']} records on average, none for {s['none_share']:.1%} of queries, p50 {s['p50_ms']} ms")
    return "\n".join(lines)


def markdown(res: dict, command: str) -> str:
    md = [f"# MADial-Bench memory recall ({res['lang']})", "", f"`{command}`", "",
          f"{res['queries']} queries over {res['memories']} memories (users: "
          + ", ".join(f"{u}: {n}" for u, n in res["users"].items()) + f"), embedder `{res['embedder']}`, {res['seconds']} s. "
          "Metrics are upstream's embedding_score_new.py; its nDCG@5 normalises by the retrieved list sorted, "
          "not by the gold count, so it rewards ordering, not coverage.", "",
          "| system | recall@5 | nDCG@5 | MRR@10 | queries |", "|---|---|---|---|---|"]
    md += [f"| {' | '.join(row)} |" for row in _table(res)]
    s = res["recall_served"]
    md += ["", "- agentos recall: what `query.recall.recall` serves (lexical selector, at most 5 after its floor; "
               f"MRR@10 over those). It served {s['mean_hits']} records on average and none for {s['none_share']:.1%} "
               f"of queries; p50 {s['p50_ms']} ms per recall (after the records' vectors were cached).",
           "- agentos ranking: `LexicalSelector.rank` (BM25 over description + body fused with the cosine), top 10, no floor.",
           "- bm25 / dense: the event text only; bm25 with the project tokenizer, dense with the project embedder "
           "and the whole context as the query.", "",
           "```json", json.dumps(res, ensure_ascii=False, indent=1), "```", ""]
    return "\n".join(md)
