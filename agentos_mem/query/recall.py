"""Memory recall: choose from the index first, then read the bodies (召回先选择索引再读取正文).

``recall(text, user=...)`` takes the manifest of the user's ``recall_window`` most recently modified records
(type, name, updated, description), lets a selector pick the clearly relevant ones (at most ``recall_limit``,
never more than 5), checks every picked name against that manifest, and only then reads the chosen
records. The read path writes nothing: the transports (``agentos memory recall``, the MCP tool ``memory_recall``)
count a successful recall on the records (``MemoryBook.mark_recalled``), which also keeps memories in use
inside the window; each hit's ``recallCount`` already includes this recall.

Selectors:

- :class:`ChatSelector`: the OpenAI-compatible chat model at ``llm_base_url`` reads the manifest (never a
  body) and answers ``{"selected": [names]}``. Any failure falls back to the lexical selector, and the
  result says so.
- :class:`LexicalSelector`: BM25 (the project tokenizer, jieba for Chinese) over description and body,
  fused with the embedder's cosine, then a floor so that a query unrelated to every record selects nothing
  (see GATE_* below for how it was measured); when nothing passes it, the records in the other language whose
  words meet half the query's through a Chinese-English dictionary are served (``LexicalSelector.bridged``).
  Choices measured on MADial (bench/results/madial-zh.md, bench/madial.py): convex fusion
  with BM25 weight 0.2 beat RRF and heavier BM25 weights; a dialogue context is embedded three times, whole,
  as its latest two turns and as the user's own turns, and the cosines averaged (the whole context says
  what the conversation is about, the latest turns what the user is on about now, the user's turns what
  they said rather than the assistant's replies): on MADial zh recall@5 0.598 with two views, 0.618 with three.

Recall never raises: a broken store, embedder or model gives status ``error`` and the reason in ``notices``.
"""

from __future__ import annotations

import hashlib
import logging
import re
import threading
import time
from dataclasses import asdict, dataclass, field

import numpy as np

from agentos_mem.query.forgotten import forgotten_values, without_forgotten
from agentos_mem.embedders import make_settings_embedder
from agentos_mem.kernel.domain import ASSISTANT_LABELS
from agentos_mem.kernel.settings import load_settings
from agentos_mem.retrieval.tokenize import default_tokenizer
from agentos_mem.kernel.workspace import Workspace
from agentos_mem.query.rules import check_request
from agentos_mem.retrieval import bilingual
from agentos_mem.storage.embed_cache import open_cache
from agentos_mem.storage.memory_records import EMBED_CHARS, open_book, record_text

HARD_MAX = 5  # most records one recall returns, whatever the settings say
ALPHA = 0.2  # weight of the max-scaled BM25 score in the convex fusion (measured on MADial zh and en)
TAIL_LINES = 2  # the latest turns of a dialogue context get their own query vector
MAX_QUERY_CHARS = 4000  # longer contexts keep their end: the latest turns matter most
# The floor, measured on MADial (zh and en) and on unrelated questions asked of the same memories. E5 cosines
# are compressed (unrelated texts in one language still score ~0.75-0.86) and did not separate related from
# unrelated queries, not even as a z-score; the share of a record's own idf mass (its rare words) found in the
# query did. So: the window holds something on the query when one record's coverage reaches GATE_COVERAGE
# (or, for a short question, the record holds GATE_QUERY_COVERAGE of the question's idf mass),
# or (semantic-only, e.g. another language) its cosine stands GATE_LIFT above the window's median; then the
# records whose fused score reaches REL_SHARE of the best are served, at most ``limit``.
GATE_COVERAGE = 0.12
GATE_QUERY_COVERAGE = 0.3  # a short question: the share of its own idf mass a record holds (query.ask's floor)
GATE_LIFT = 0.08
GATE_COSINE_FEW = 0.88  # fewer than MIN_CROWD records: no median to stand above, an absolute cosine instead
MIN_CROWD = 5
# Across languages (LexicalSelector.bridged): a record among the BRIDGE_TOP closest by meaning passes when the query
# meets, through the dictionary, BRIDGE_RECORD_SHARE of its words' idf mass. Meaning alone does not separate (a
# dialogue's cosine lift over the window's median is no higher for its own memories than for LoCoMo's unrelated
# questions), nor do dictionary words alone (0.12, the same-language floor, let 0.3-0.4 of unrelated questions
# through); together they do. Chosen on MADial's even-numbered dialogue contexts for unrelated questions stopped
# >= 0.9 (0.2, 3); the odd-numbered ones, not looked at, are reported apart (bench/results/cross-lingual.md).
BRIDGE_RECORD_SHARE = 0.2
BRIDGE_TOP = 3
REL_SHARE = 0.5  # 0.6 served zh recall@5 0.584, 0.5: 0.596, 0.4: 0.599 (more records per recall); measured on MADial
_HAS_WORD = re.compile(r"[^\W_]")
_SPEAKER = re.compile(r"^\s*(?:<[^<>\n]{1,40}>|[^\s:：<>]{1,40})\s*[:：]\s*")  # "<Bart>:" / "用户：" before a turn
_SPEAKER_NAME = re.compile(r"^\s*(?:<([^<>\n]{1,40})>|([^\s:：<>]{1,40}))\s*[:：]")
_MARKER = re.compile(r"^\s*<[A-Z]{2,5}>\s*$")  # <BOD>, <EOD>: dialogue delimiters, not turns


class RecallError(ValueError):
    """The recall request itself is unusable (the message says why)."""


@dataclass
class RecallResult:
    status: str  # ok | none (nothing relevant) | empty (no words in the query) | blocked (an L0 rule forbids it) | error
    selector: str = ""
    hits: list[dict] = field(default_factory=list)
    notices: list[str] = field(default_factory=list)
    manifest_size: int = 0
    timings_ms: dict = field(default_factory=dict)
    rule: str | None = None  # the L0 rule that refused the request (status blocked)

    @property
    def names(self) -> list[str]:
        """The recalled records, best first (what a transport counts with ``MemoryBook.mark_recalled``)."""
        return [h["name"] for h in self.hits]

    def compact(self) -> dict:
        """What later agent steps keep: how many, the status, and which records."""
        return {"count": len(self.hits), "status": self.status, "names": self.names}

    def as_dict(self) -> dict:
        return asdict(self)


# -- query text -----------------------------------------------------------------------------------------


def _turns(text: str) -> list[str]:
    return [line for line in text.splitlines() if line.strip() and not _MARKER.match(line)]


def _speaker(line: str) -> str | None:
    m = _SPEAKER_NAME.match(line)
    return (m.group(1) or m.group(2)).strip().lower() if m else None


def _unlabelled(line: str) -> str:
    return _SPEAKER.sub("", line).strip().strip('"“”')


def query_views(text: str) -> list[str]:
    """The texts a query is embedded as: the whole of it; for a multi-line dialogue context also its latest
    turns (what the user is on about now) and the user's own turns (what they said, without the
    assistant's replies). Distinct views only."""
    turns = _turns(text)
    views = [text]
    if len(turns) > TAIL_LINES:
        views.append("\n".join(_unlabelled(t) for t in turns[-TAIL_LINES:]))
    if len(turns) > 1 and any(_speaker(t) in ASSISTANT_LABELS for t in turns):
        views.append("\n".join(_unlabelled(t) for t in turns if _speaker(t) not in ASSISTANT_LABELS))
    return [v for v in dict.fromkeys(views) if _HAS_WORD.search(v)]


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


# -- the lexical + vector selector ----------------------------------------------------------------------


def record_tokenizer(home):
    """The tokenizer the selector reads records and queries with: the workspace's, English words as written (no stems).
    Stemmed, a generic verb of the question met a record in its language ("Which coffee do I prefer?" / "Prefers the
    Vim editor") and the gate took that for the answer, so the dictionary never offered the Chinese record the question
    is about (咖啡); MADial en recall@5 0.612 -> 0.615 stemmed, zh unchanged: not worth it here. The memory query
    stems (retrieval.tokenize rule 5), where a question's inflections met nothing."""
    return default_tokenizer(home, stem=False)


class LexicalSelector:
    """BM25 + cosine over description and body, fused, with a floor; no model call."""

    def __init__(self, tokenizer, embedder, cache=None, alpha: float = ALPHA):
        self.tokenizer = tokenizer
        self.embedder = embedder
        self.cache = cache  # the workspace's embedding cache, read only (index/vectors.py fills it)
        self.alpha = alpha
        self._vectors: dict[str, np.ndarray] = {}  # text hash -> vector, this process
        self._tokens: dict[str, list[str]] = {}
        self._queries: dict[str, np.ndarray] = {}
        self._lock = threading.Lock()

    @property
    def label(self) -> str:
        return "lexical"

    # The full ranking, used by the bench; select() adds the floor and the limit.
    def rank(self, query: str, records: list) -> list[tuple[str, float]]:
        return [(name, fused) for name, fused, *_ in self.scored(query, records)]

    def scored(self, query: str, records: list) -> list[tuple[str, float, float, float, float]]:
        """[(name, fused, share of the record's idf mass in the query, share of the query's in the record, cosine)], best first."""
        if not records:
            return []
        texts = [record_text(r) for r in records]
        names = [r.name for r in records]
        bm25, doc_cov, query_cov = self._bm25(query, texts)
        cos = self._cosine(query, texts)
        fused = _convex(bm25, cos, self.alpha)
        order = sorted(range(len(names)), key=lambda i: (-fused[i], names[i]))
        return [(names[i], float(fused[i]), float(doc_cov[i]), float(query_cov[i]), float(cos[i])) for i in order]

    def select(self, query: str, records: list, limit: int) -> list[tuple[str, float]]:
        """The clearly relevant records, best first, at most ``limit``: [(name, fused score)]."""
        scored = self.scored(query, records)
        if not scored:
            return []
        if not _window_matches(scored):
            # Nothing in the query's own words: its words may still meet records in the other language through
            # the dictionary (retrieval.bilingual); then only those records are served, best first.
            met = self.bridged(query, records, scored)
            return [(name, round(f, 4)) for name, f, *_ in scored if name in met][: min(limit, HARD_MAX)]
        top = scored[0][1]
        return [(name, round(f, 4)) for name, f, *_ in scored if f >= REL_SHARE * top][: min(limit, HARD_MAX)]

    @staticmethod
    def bridged(query: str, records: list, scored: list | None = None) -> set[str]:
        """The records in the other language the query is about, through the dictionary: those whose words meet half
        the query's content words (a short question); and, among the BRIDGE_TOP records closest by meaning
        (``scored``' cosines), those whose own rare words the query meets for at least BRIDGE_RECORD_SHARE of their
        idf mass (a dialogue). A dialogue context is read as its latest turns (what the user is on about now)."""
        views = query_views(query[-MAX_QUERY_CHARS:])
        focus = views[1] if len(views) > 1 else query
        texts = {r.name: record_text(r)[:EMBED_CHARS] for r in records}
        out = bilingual.bridged(focus, texts)
        if scored:
            near = [name for name, *_ in sorted(scored, key=lambda x: -x[4])[:BRIDGE_TOP]]
            shares = bilingual.met_shares(focus, texts, near)
            out |= {name for name in near if shares[name] >= BRIDGE_RECORD_SHARE}
        return out

    # -- signals --------------------------------------------------------------------------------------------
    def _toks(self, text: str) -> list[str]:
        h = _sha(text)
        toks = self._tokens.get(h)
        if toks is None:
            toks = self.tokenizer.tokens(text)
            with self._lock:
                if len(self._tokens) > 20_000:
                    self._tokens.clear()
                self._tokens[h] = toks
        return toks

    def _bm25(self, query: str, texts: list[str]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """BM25 of each text for the query; the share of each text's idf mass the query holds; and the share
        of the query's idf mass each text holds (a term no text has counts with the idf of df 0)."""
        import bm25s

        logging.getLogger("bm25s").setLevel(logging.WARNING)  # it logs every in-memory index it builds at DEBUG
        docs = [self._toks(t) for t in texts]
        q = set(self.tokenizer.tokens(query))
        n = len(docs)
        if not q or not any(docs):
            return np.zeros(n), np.zeros(n), np.zeros(n)
        model = bm25s.BM25(method="robertson", k1=1.5, b=0.75)
        model.index([d or [""] for d in docs], show_progress=False)
        known = [t for t in q if t in model.vocab_dict]
        scores = np.asarray(model.get_scores(known), dtype=np.float64) if known else np.zeros(n)
        df: dict[str, int] = {}
        for d in docs:
            for t in set(d):
                df[t] = df.get(t, 0) + 1
        idf = {t: max(0.0, float(np.log((n - c + 0.5) / (c + 0.5)))) for t, c in df.items()}
        q_idf = {t: idf.get(t, float(np.log((n + 0.5) / 0.5))) for t in q}
        q_total = sum(q_idf.values())
        doc_cov, query_cov = np.zeros(n), np.zeros(n)
        for i, d in enumerate(docs):
            terms = set(d)
            total = sum(idf[t] for t in terms)
            shared = sum(idf[t] for t in terms & q)
            doc_cov[i] = shared / total if total > 0 else 0.0
            query_cov[i] = shared / q_total if q_total > 0 else 0.0
        return scores, doc_cov, query_cov

    def _cosine(self, query: str, texts: list[str]) -> np.ndarray:
        docs = self._doc_vectors([t[:EMBED_CHARS] for t in texts])
        views = query_views(query[-MAX_QUERY_CHARS:]) or [query]
        cos = sum(docs @ self.query_vector(v) for v in views) / len(views)
        return np.asarray(cos, dtype=np.float64)

    def query_vector(self, text: str) -> np.ndarray:
        """The query's vector, remembered for the last few queries (an agent turn often recalls twice)."""
        h = _sha(text)
        vec = self._queries.get(h)
        if vec is None:
            vec = np.asarray(self.embedder.embed_query(text), dtype=np.float32)
            with self._lock:
                if len(self._queries) >= 512:
                    self._queries.pop(next(iter(self._queries)))
                self._queries[h] = vec
        return vec

    def doc_vectors(self, texts: list[str]) -> np.ndarray:
        return self._doc_vectors(texts)

    def _doc_vectors(self, texts: list[str]) -> np.ndarray:
        hashes = [_sha(t) for t in texts]
        missing = [h for h in dict.fromkeys(hashes) if h not in self._vectors]
        if missing and self.cache is not None:
            self._vectors.update(self.cache.vectors(self.embedder.identity, missing))
            missing = [h for h in missing if h not in self._vectors]
        if missing:  # written since the last nightly embedding: embedded here, kept in this process only
            by_hash = dict(zip(hashes, texts))
            new = dict(zip(missing, self.embedder.embed_documents([by_hash[h] for h in missing])))
            self._vectors.update({h: np.asarray(v, dtype=np.float32) for h, v in new.items()})
        return np.stack([self._vectors[h] for h in hashes])


def _convex(bm25: np.ndarray, cos: np.ndarray, alpha: float) -> np.ndarray:
    """alpha * BM25 / max BM25 + (1 - alpha) * min-max-scaled cosine (query.ask.convex, vectorised)."""
    b = bm25 / (bm25.max() or 1.0) if bm25.size else bm25
    span = float(cos.max() - cos.min()) if cos.size else 0.0
    c = (cos - cos.min()) / (span or 1.0) if cos.size else cos
    return alpha * b + (1 - alpha) * c


def _window_matches(scored: list[tuple[str, float, float, float, float]]) -> bool:
    """Whether any record is clearly about the query: see GATE_* above."""
    if any(dc >= GATE_COVERAGE or qc >= GATE_QUERY_COVERAGE for _, _, dc, qc, _ in scored):
        return True
    cosines = np.array([c for *_, c in scored])
    if len(cosines) < MIN_CROWD:
        return bool(cosines.max() >= GATE_COSINE_FEW)
    return bool(cosines.max() - np.median(cosines) >= GATE_LIFT)


# -- the chat-model selector ----------------------------------------------------------------------------

CHAT_PROMPT = """You pick which of a user's saved memories are clearly relevant to what they are saying now.
Each memory is one line: type | name | updated | description. Return only JSON: {"selected": ["name", ...]},
the names exactly as listed, at most LIMIT of them, most relevant first. Select nothing ({"selected": []})
when no memory clearly helps. The conversation may be in Chinese or English; memories in either language count."""


class ChatSelector:
    """The chat model picks from the manifest lines (never the bodies)."""

    def __init__(self, client):
        self.client = client

    @property
    def label(self) -> str:
        return f"llm:{self.client.model}"

    def choose(self, query: str, manifest: list[dict], limit: int) -> list[tuple[str, None]]:
        """Names the model selected; raises ``LLMError`` on any unusable answer."""
        # lazy: kernel.llm pulls httpx: only when this runs
        from agentos_mem.kernel.llm import LLMError

        lines = "\n".join(f"{m['type']} | {m['name']} | {m.get('updated') or ''} | {m['description']}" for m in manifest)
        data = self.client.complete_json(CHAT_PROMPT.replace("LIMIT", str(limit)),
                                         f"Memories:\n{lines}\n\nThe user, now:\n{query[-MAX_QUERY_CHARS:]}")
        picked = data.get("selected") if isinstance(data, dict) else None
        if not isinstance(picked, list) or not all(isinstance(n, str) for n in picked):
            raise LLMError("model answer has no 'selected' list of names")
        return [(n, None) for n in dict.fromkeys(picked)]  # the model gives an order, not scores


# -- per-process selectors (the tokenizer and embedder load once) -----------------------------------------

_selectors: dict[tuple, LexicalSelector] = {}
_embedders: dict[str, object] = {}  # one model per spec, shared by every workspace of the process
_selectors_lock = threading.Lock()


def lexical_selector(settings) -> LexicalSelector:
    """The workspace's lexical selector (its tokenizer and vector cache), built once per process."""
    key = (str(settings.home), settings.embedder)
    with _selectors_lock:
        sel = _selectors.get(key)
        if sel is None:
            if settings.embedder not in _embedders:
                _embedders[settings.embedder] = make_settings_embedder(settings)
            sel = LexicalSelector(record_tokenizer(settings.home), _embedders[settings.embedder], open_cache(settings))
            _selectors[key] = sel
        return sel


def make_selector(settings):
    """The chat selector when ``recall_selector`` is auto and a chat endpoint is set, else the lexical one."""
    if settings.recall_selector == "auto" and settings.llm_base_url:
        # lazy: kernel.llm pulls httpx: only when this runs
        from agentos_mem.kernel.llm import ChatClient

        return ChatSelector(ChatClient.for_settings(settings))
    return lexical_selector(settings)


# -- recall ---------------------------------------------------------------------------------------------


def recall(text: str, *, user: str, settings=None, book=None, selector=None, limit: int | None = None) -> RecallResult:
    """The records of ``user`` clearly relevant to ``text`` (at most ``limit``, never more than 5); never raises."""
    t0 = time.perf_counter()
    res = RecallResult("none")
    try:
        _recall(text, user, settings, book, selector, limit, res)
    except Exception as e:  # noqa: BLE001 - recall serves an agent mid-turn: report, never raise
        res.status, res.hits = "error", []
        res.notices.append(f"recall failed: {type(e).__name__}: {e}")
    res.timings_ms["total"] = round((time.perf_counter() - t0) * 1000, 2)
    return res


def _recall(text, user, settings, book, selector, limit, res: RecallResult) -> None:
    if not isinstance(text, str):
        raise RecallError(f"the query must be text, got {type(text).__name__}")
    if not _HAS_WORD.search(text):
        res.status = "empty"
        res.notices.append("empty query: give some words to look for (punctuation and spaces alone match nothing)")
        return
    if settings is None:
        settings = load_settings()

    bilingual.configure(Workspace(settings.home).runtime)  # where its built dictionary lives, if a query needs it
    refusal = check_request(settings.home, text)  # L0 first, as on every read path: nothing is read for a forbidden request
    if refusal is not None:
        res.status, res.rule = "blocked", refusal.rule_text
        res.notices.append(refusal.notice)
        return
    if book is None:
        book = open_book(settings)
    limit = max(1, min(int(limit or settings.recall_limit), HARD_MAX))
    t = time.perf_counter()
    manifest = book.manifest(user, settings.recall_window)
    res.notices.extend(f"skipped: {e}" for e in book.refused())  # a record that is a link or a FIFO: named, never read
    res.manifest_size = len(manifest)
    res.timings_ms["manifest"] = _ms(t)
    if not manifest:
        res.notices.append(f"user {user!r} has no memories")
        return
    t = time.perf_counter()
    picked = _select(text, user, manifest, book, selector or make_selector(settings), settings, limit, res)
    res.timings_ms["select"] = _ms(t)
    if not picked:
        return
    names = [n for n, _ in picked]
    t = time.perf_counter()
    records = [book.read(user, n) for n in names]  # only names checked against the manifest get here
    res.timings_ms["read"] = _ms(t)
    res.hits = [_hit(r, score) for r, (_, score) in zip(records, picked)]
    forgotten = forgotten_values(settings, user)  # a record the day gave holds its words: a forget reaches them too
    for hit in res.hits:
        for key in ("description", "body"):
            if isinstance(hit.get(key), str):
                hit[key] = without_forgotten(hit[key], forgotten)
    res.status = "ok"


def _select(text, user, manifest, book, selector, settings, limit, res: RecallResult) -> list[tuple[str, float | None]]:
    """Names the selector picked that are in the manifest (at most ``limit``); the fallback on model failure."""
    listed = {m["name"] for m in manifest}
    if isinstance(selector, ChatSelector):
        try:
            picked = selector.choose(text, manifest, limit)
            res.selector = selector.label
        except Exception as e:  # noqa: BLE001 - HTTP errors, bad JSON, a wrong shape: the lexical match still works
            reason = f"{type(e).__name__}: {e}"
            res.selector = f"lexical (model failed: {reason[:200]})"
            res.notices.append(f"the chat model could not select ({reason[:300]}); used the lexical match instead")
            picked = None
        if picked is not None:
            return _checked(picked, listed, limit, res)
        selector = lexical_selector(settings)
    else:
        res.selector = selector.label
    # The lexical match reads the bodies of the manifest's records, and of no others.
    records = [book.read(user, m["name"]) for m in manifest]
    return _checked(selector.select(text, records, limit), listed, limit, res)


def _checked(picked: list[tuple], listed: set[str], limit: int, res: RecallResult) -> list[tuple]:
    unknown = [n for n, _ in picked if n not in listed]
    if unknown:
        res.notices.append(f"ignored {len(unknown)} selected name(s) not in the manifest: {', '.join(map(repr, unknown[:5]))}")
    return [(n, s) for n, s in picked if n in listed][:limit]


def _hit(rec, score: float | None) -> dict:
    return {"name": rec.name, "type": rec.type, "description": rec.description, "body": rec.body, "updated": rec.updated,
            "source": rec.source, "recallCount": rec.recall_count + 1, "score": score}


def _ms(t: float) -> float:
    return round((time.perf_counter() - t) * 1000, 2)
