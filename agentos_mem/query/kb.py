"""The knowledge read path: document map -> search / outline -> bounded section pages with a cursor.

Three conditions, checked together on every call (``doc_map``, ``search_docs``, ``read_doc``, ``read_section``):

1. the document is ``ready`` (published; pending and rejected documents never appear), and its card's body is
   still the body that was published (a card edited by hand since is left out until it is reviewed again);
2. the user may see it: a ``system`` document, or a ``personal`` one they own (and it has not expired);
3. it is in the task's selected knowledge set: ``selection`` names an editable YAML file,
   ``agent-sync/03_knowledge/99_system/selections/<name>.yaml``::

       documents: [testhost_20261130_postgresql]   # document ids
       categories: [10_concepts/cs, 20_methods]     # category path prefixes (a whole path segment)
       scopes: [system]                             # system | personal

   A document is selected when it is one of ``documents`` or under one of ``categories`` (when neither key is
   there: every document), and its scope is among ``scopes`` (when given). The file is read on every call, so
   an edit applies from the next call on; answers already given stay as they were. ``selection=None`` selects
   every visible document; a dict with the same keys is an inline selection. A missing selection errors.

Anything else is answered as if the document did not exist: "no document <id> in your selected, published
knowledge", never saying whether it exists for someone else.

Search ranks *sections*: each outline section's own lines (heading line included), with its title path, is one
unit. Terms (``kb_terms``) are words of non-CJK scripts (NFKC, case-folded, English stop words dropped),
Chinese characters and Chinese character bigrams. "Quoted phrases" (``"..."``, ``“...”``, ``「...」``,
``『...』``) must occur exactly (case-insensitively, whitespace runs as one space) or the section is left out;
their terms also rank. Modes: ``bm25`` (bm25s, Lucene idf, k1 1.5, b 0.75, built in memory once per process and
set of (document id, content hash)); ``dense`` (the settings' embedder, cosine over the section texts, vectors
read by text hash from the workspace's embedding cache, which the nightly chain fills (``index/vectors.py``)); ``hybrid`` (over the
BM25 matches and the best dense candidates: each side's first ``fusion.TOP`` ranked by a small fitted model of both
sides' scores, margins, term coverage and script mix, the rest by a convex mix with ``alpha`` weighting BM25:
``query.fusion``). One hit per section, with one snippet.
A search embeds its query and nothing else: the sections' vectors are made when a document is approved
(``knowledge.decisions.decide``), by ``agentos rebuild`` and by the nightly (``index/vectors.py``). A section without
one (its embedding failed, or it was published before approvals embedded) is ranked by its keywords, and ``search``
says how many there were (``without_vectors``, ``notice``); ``bm25`` never loads a model. A benchmark can skip the
workspace: ``SectionIndex.build([Unit, ...])`` then ``rank_sections(index, query, mode=..., dense=Dense(embedder))``
(without a cache, that ``Dense`` embeds the units in memory).

Paging: ``read_section`` cuts the section's text (its own lines; with ``subtree=True`` also its subsections')
into pages of at most ``page_tokens`` tokens (``count_tokens``) and ``page_tokens * CHARS_PER_TOKEN``
characters, at line ends; one line too long for a page is cut by characters (code points, at a word or
character boundary where one is near), never inside a Chinese character. A page's ``text`` runs from its first
character to the next page's first, so joining the pages' texts gives the section's text exactly (lines joined
with ``"\\n"``). ``next_cursor`` is opaque; it remembers the document, anchor, content hash, subtree and page
size, and a cursor for another section or for a document that changed since is refused.

Line numbers are those of the card's body (``cards.read_body``), the text refine parsed the outline from.
"""

from __future__ import annotations

import base64
import binascii
import bisect
import json
import logging
import re
import threading
import unicodedata
from collections import OrderedDict
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import NamedTuple
from pathlib import Path

import numpy as np

from agentos_mem.query.forgotten import forgotten_values, without_forgotten
from agentos_mem.documents.outline import Outline, outline_markdown
from agentos_mem.embedders import make_settings_embedder
from agentos_mem.kernel import clock
from agentos_mem.kernel.files import guard
from agentos_mem.kernel.settings import Settings
from agentos_mem.kernel.text import CJK, STOPWORDS, count_tokens, sentences
from agentos_mem.kernel.workspace import Workspace, kb_paths
from agentos_mem.query.fusion import AGREE_TOP, fuse_sections, keyword_weight
from agentos_mem.retrieval.lucene_bm25 import LuceneBM25
from agentos_mem.query.index_reader import open_reader
from agentos_mem.query.rules import check_request
from agentos_mem.storage.embed_cache import open_cache
from agentos_mem.storage.index_store import IndexCorrupt, IndexMissing
from agentos_mem.storage.kb_sections import (ANN_COLLECTION, ANN_MIN_SECTIONS, EMBED_CHARS, Doc, embed_sentences, published_docs, section_key,
                                            section_units, still_published, text_hash)
from agentos_mem.storage.kb_sections import SectionUnit as Unit
from agentos_mem.storage.kb_store import KBStore, registry_version

log = logging.getLogger(__name__)

MODES = ("hybrid", "bm25", "dense")
ALPHA = 0.5  # weight of the max-scaled BM25 score in hybrid mode, unless query.fusion.keyword_weight lowers it
DENSE_POOL = 50  # hybrid: the best dense candidates that join the BM25 matches
BM25_POOL = 200  # hybrid through the ANN index: BM25's best that join the nearest sections
ANN_OVERSAMPLE = 4  # the ANN index is asked for this many times the neighbours needed (some fall outside the selection)
SNIPPET_CHARS = 160
CHARS_PER_TOKEN = 8  # a page also stays within page_tokens * this many characters (lines of symbols count 0 tokens)
PAGE_TOKENS = (10, 8000)
MAX_K = 200
INDEX_CACHE = 8  # built section indexes kept per process (one per distinct selected set)
# Sections whose sentence vectors a process keeps, per index and embedder (a search reads its ~40 candidates'; about
# 9 KB each): bounded, so a long-lived server over 100,000 sections does not come to hold them all (~770 MB).
SENTENCE_MEMO = 4096
SELECTION_KEYS = ("documents", "categories", "scopes")
SELECTION_META = ("name", "title", "description")


class KBQueryError(ValueError):
    """Something the caller can fix: an empty query, an unknown selection, a document outside the selected,
    published knowledge, a bad or stale cursor."""


class KBBlocked(KBQueryError):
    """A request an L0 rule of SOUL.md forbids (a secret asked for): refused before anything is read."""

    def __init__(self, refusal):
        super().__init__(f"{refusal.notice}: {refusal.rule_text}")
        self.refusal = refusal


def check_l0(settings: Settings, request: str) -> None:
    """Raise ``KBBlocked`` when the workspace's L0 rules forbid ``request`` (every knowledge read that takes words)."""
    refusal = check_request(settings.home, request)
    if refusal is not None:
        raise KBBlocked(refusal)


def _not_found(doc_id: str) -> KBQueryError:
    return KBQueryError(f"no document {doc_id} in your selected, published knowledge")


# -- terms -------------------------------------------------------------------------------------------------
_TERM = re.compile(rf"([{CJK}]+)|([^\W_{CJK}]+)", re.UNICODE)
_WORD_CHAR = re.compile(rf"[^\W_{CJK}]", re.UNICODE)
_CJK_GAP = re.compile(rf"(?<=[{CJK}]) (?=[{CJK}])")
_PHRASE = re.compile(r'"([^"]*)"|“([^”]*)”|「([^」]*)」|『([^』]*)』')


def kb_terms(text: str) -> list[str]:
    """Search terms in text order: non-CJK words (NFKC, case-folded, stop words dropped), and for each run of
    Chinese characters every character and every bigram ("逻辑复制" -> 逻 逻辑 辑 辑复 复 复制 制)."""
    out: list[str] = []
    for m in _TERM.finditer(unicodedata.normalize("NFKC", text).casefold()):
        run = m.group(1)
        if run:
            for i, ch in enumerate(run):
                out.append(ch)
                if i + 1 < len(run):
                    out.append(run[i : i + 2])
        elif m.group(2) not in STOPWORDS:
            out.append(m.group(2))
    return out


def phrase_norm(text: str) -> str:
    """The form phrases are compared in: NFKC, case-folded, whitespace runs as one space (none between two
    Chinese characters, where a soft line break renders as nothing)."""
    s = " ".join(unicodedata.normalize("NFKC", text).casefold().split())
    return _CJK_GAP.sub("", s)


@dataclass
class Query:
    text: str  # the query without its quote marks (what the embedder reads)
    terms: list[str]  # distinct, phrases' terms included
    phrases: list[str]  # as written
    norm_phrases: list[str]


def parse_query(query: str) -> Query:
    """Split quoted phrases from the rest; KBQueryError when nothing searchable is left."""
    if not isinstance(query, str) or not query.strip():
        raise KBQueryError("the query is empty: give words, Chinese text or a \"quoted phrase\"")
    q = unicodedata.normalize("NFKC", query)
    phrases = [p.strip() for m in _PHRASE.finditer(q) for p in m.groups() if p is not None and p.strip()]
    rest = _PHRASE.sub(" ", q)
    terms = list(dict.fromkeys(kb_terms(rest) + [t for p in phrases for t in kb_terms(p)]))
    norm = list(dict.fromkeys(phrase_norm(p) for p in phrases))
    if not terms and not norm:
        raise KBQueryError(f"nothing to search for in {query!r}: give words, Chinese text or a \"quoted phrase\"")
    plain = " ".join(" ".join([rest, *phrases]).replace('"', " ").split())
    return Query(plain, terms, phrases, norm)


# -- selections --------------------------------------------------------------------------------------------
_SELECTION_NAME = re.compile(r"[^\W_][\w.\-]{0,99}", re.UNICODE)


def selections_dir(settings: Settings) -> Path:
    return kb_paths(settings)["knowledge"] / "99_system" / "selections"


def load_selection(settings: Settings, selection: str | Mapping | None) -> dict | None:
    """The selection as {documents, categories, scopes} (each a list, or None when not restricting), read now."""
    if selection is None:
        return None
    if isinstance(selection, Mapping):
        return _check_selection(selection, "the inline selection")
    if not isinstance(selection, str) or not _SELECTION_NAME.fullmatch(selection):
        raise KBQueryError(f"{selection!r} is not a selection name (letters, digits, '-', '_', '.'; no folders)")
    folder = selections_dir(settings)
    path = next((p for p in (folder / f"{selection}.yaml", folder / f"{selection}.yml") if p.is_file()), None)
    if path is None:
        raise KBQueryError(f"no knowledge selection named {selection!r}: create {folder / (selection + '.yaml')} "
                           "with documents, categories and/or scopes")
    import yaml

    try:
        data = yaml.safe_load(guard(path).read_text(path))  # never through a link (kernel.files.Below)
    except (yaml.YAMLError, UnicodeDecodeError) as e:
        raise KBQueryError(f"selection {selection!r} ({path.name}) is not readable YAML: {type(e).__name__}") from None
    return _check_selection(data if data is not None else {}, f"selection {selection!r}")


def _check_selection(data, what: str) -> dict:
    if not isinstance(data, Mapping):
        raise KBQueryError(f"{what} must be a mapping with documents, categories and/or scopes")
    unknown = sorted(str(k) for k in data if k not in SELECTION_KEYS + SELECTION_META)
    if unknown:
        raise KBQueryError(f"{what} has unknown keys {unknown}: use {', '.join(SELECTION_KEYS)}")
    out: dict[str, list[str] | None] = {}
    for key in SELECTION_KEYS:
        value = data.get(key)
        if value is None:
            out[key] = None
            continue
        items = [value] if isinstance(value, str) else value
        if not isinstance(items, list) or not all(isinstance(x, str) for x in items):
            raise KBQueryError(f"{what}: {key} must be a list of strings")
        out[key] = [x.strip().strip("/") for x in items if x.strip().strip("/")] if key == "categories" else [x.strip() for x in items]
    bad = [s for s in out["scopes"] or () if s not in ("system", "personal")]
    if bad:
        raise KBQueryError(f"{what}: scopes are system or personal, not {bad}")
    return out


def is_selected(doc: dict, sel: dict | None) -> bool:
    if sel is None:
        return True
    if sel["scopes"] is not None and doc["scope"] not in sel["scopes"]:
        return False
    if sel["documents"] is None and sel["categories"] is None:
        return True
    category = doc["category"].strip("/")
    return doc["id"] in (sel["documents"] or ()) or any(category == p or category.startswith(p + "/") for p in sel["categories"] or ())


# -- the documents a call may use ------------------------------------------------------------------------------
_lock = threading.Lock()



def _today(settings: Settings):
    return clock.today(settings.timezone)


# What the read path made of the registry, per (registry, user, day), kept while ``registry_version`` stays the same:
# a search on an unchanged registry reads no row and stats no card (issue 43: at 10,000 documents the re-read was
# 260 ms of a 320 ms search). A card edited by hand does not change the registry, so what a call serves is checked
# where it is served (``_served``): a card that no longer holds the reviewed body drops what was kept, and the call
# runs again on a fresh read, which leaves that document out as before.
_seen: OrderedDict[tuple, tuple[tuple, list[Doc], dict]] = OrderedDict()
SEEN_CACHE = 16


def _published(settings: Settings, user: str) -> tuple[list[Doc], dict]:
    """(every published document ``user`` may read today, a memo of what was made of them per selection)."""
    paths = kb_paths(settings)
    stamp = registry_version(paths["db"])  # before the read: a change while reading shows at the next call
    if stamp is None:
        if not paths["db"].exists():
            return [], {}
    key = (str(paths["db"]), user, _today(settings).isoformat())
    with _lock:
        hit = _seen.get(key)
        if hit is not None and stamp is not None and hit[0] == stamp:
            _seen.move_to_end(key)
            return hit[1], hit[2]
    store = KBStore(paths["db"], timezone=settings.timezone)
    try:
        rows = store.readable(user, today=_today(settings))  # what store.visible gives, undecoded
    finally:
        store.close()
    docs = published_docs(paths["knowledge"], rows)
    if stamp is not None:
        with _lock:
            _seen[key] = (stamp, docs, {})
            while len(_seen) > SEEN_CACHE:
                _seen.popitem(last=False)
    return docs, {}


class Selected(NamedTuple):
    docs: list[Doc]  # in registry order
    key: tuple  # their section index's key (``index_key``)
    by_id: dict[str, Doc]


def selected(settings: Settings, user: str, selection) -> Selected:
    """The selected documents, made once per registry version and selection (shared: callers never change them)."""
    if not isinstance(user, str) or not user.strip():
        raise KBQueryError("a user id is required: knowledge visibility depends on who asks")
    sel = load_selection(settings, selection)  # an unknown selection errors even on an empty base; read each call
    docs, memo = _published(settings, user)
    sel_key = json.dumps(sel, sort_keys=True)
    made = memo.get(sel_key)
    if made is None:
        if len(memo) >= SEEN_CACHE:  # inline selections may vary call to call
            memo.clear()
        chosen = docs if sel is None else [d for d in docs if is_selected(d.row, sel)]
        made = memo[sel_key] = Selected(chosen, index_key(chosen), {d.id: d for d in chosen})
    return made


def _served(settings: Settings, docs) -> bool:
    """Whether every one of ``docs`` (what a call is about to serve) still holds its reviewed body; when one does
    not, nothing kept of this registry is used again."""
    paths = kb_paths(settings)
    if all(still_published(paths["knowledge"], d) for d in docs):
        return True
    db = str(paths["db"])
    with _lock:
        for key in [k for k in _seen if k[0] == db]:
            del _seen[key]
    return False


def selected_docs(settings: Settings, user: str, selection: str | Mapping | None = None) -> list[Doc]:
    """Every document meeting the three conditions, in registry order (created, id). The list is shared: callers
    never change it."""
    return selected(settings, user, selection)[0]


def checked_docs(settings: Settings, user: str, selection: str | Mapping | None = None) -> list[Doc]:
    """``selected_docs`` with every card checked now (what lists them all: ``doc_map``)."""
    docs = selected_docs(settings, user, selection)
    return docs if _served(settings, docs) else selected_docs(settings, user, selection)


def _doc(settings: Settings, user: str, doc_id: str, selection) -> Doc:
    if not isinstance(doc_id, str) or not doc_id.strip():
        raise KBQueryError("a document id is required (doc_map or search_docs lists them)")
    for _ in range(2):
        doc = selected(settings, user, selection).by_id.get(doc_id)
        if doc is None:
            raise _not_found(doc_id)
        if _served(settings, [doc]):
            return doc
    raise _not_found(doc_id)


# -- the map and the outline ---------------------------------------------------------------------------------
def doc_map(settings: Settings, user: str, *, selection: str | Mapping | None = None) -> list[dict]:
    """[{id, title, scope, category, summary, sections, tokens}] of the selected, published documents, by
    category then title."""
    docs = checked_docs(settings, user, selection)
    out = [{"id": d.id, "title": d.row["title"], "scope": d.row["scope"], "category": d.row["category"], "summary": d.row["summary"],
            "sections": len(d.sections), "tokens": sum(int(s.get("tokens") or 0) for s in d.sections)} for d in docs]
    return sorted(out, key=lambda x: (x["category"], x["title"], x["id"]))


def read_doc(settings: Settings, user: str, doc_id: str, *, selection: str | Mapping | None = None) -> dict:
    """{id, title, scope, category, summary, outline: [{anchor, title, level, tokens, lines: [start, end]}],
    outline_text} (outline_text: ``outline.outline_markdown``, an indented list with anchors and sizes)."""
    doc = _doc(settings, user, doc_id, selection)
    outline = [{"anchor": s["anchor"], "title": s["title"], "level": s["level"], "tokens": s.get("tokens", 0),
                "lines": [s["line_start"], s["line_end"]]} for s in doc.sections]
    try:
        text = outline_markdown(Outline.from_dict({"sections": doc.sections, "line_count": len(doc.lines)}))
    except TypeError:  # an outline stored by an older parser: the list form still stands
        text = "\n".join(f"{'  ' * len(s.get('path') or [])}- {s['title'] or '(preamble)'} `#{s['anchor']}`" for s in doc.sections) + "\n"
    return {"id": doc.id, "title": doc.row["title"], "scope": doc.row["scope"], "category": doc.row["category"],
            "summary": doc.row["summary"], "outline": outline, "outline_text": text}


# -- the section index ------------------------------------------------------------------------------------------
@dataclass
class SectionIndex:
    """BM25 over every section of a fixed set of documents, plus (lazily) their dense vectors."""

    key: tuple
    units: list[Unit]
    model: object = None  # retrieval.lucene_bm25.LuceneBM25
    _norm: list[str] | None = None  # phrase form of each unit's title path and text, made by the first quoted phrase
    vectors: dict[str, UnitVectors] = field(default_factory=dict)  # embedder identity -> the units' vectors read so far
    _hashes: list[str] | None = None
    _keys: list[str] | None = None
    _key_pos: dict[str, int] = field(default_factory=dict)
    _not_held: tuple | None = None
    sentences: dict[str, OrderedDict] = field(default_factory=dict)  # embedder identity -> {unit: its sentences' vectors}

    @classmethod
    def build(cls, units: list[Unit], key: tuple = ()) -> SectionIndex:
        # The documents' terms are read one unit at a time (retrieval.lucene_bm25): bm25s kept the whole corpus as
        # lists of strings and then of ints while it indexed, and at 100,000 sections (9.6M terms) that build was the
        # knowledge search process's peak: 917 MB (issue 43). Same scores (tests/retrieval/test_lucene_bm25.py).
        model = LuceneBM25.build((kb_terms(u.match_text) or [""] for u in units), k1=1.5, b=0.75)
        return cls(key, units, model)

    def bm25(self, terms: list[str]) -> np.ndarray:
        if not self.units:
            return np.zeros(0)
        return np.asarray(self.model.get_scores(terms), dtype=np.float64)

    def text_hashes(self) -> list[str]:
        """Each unit's key in the embedding cache (the hash of its embedded text), computed on first use."""
        if self._hashes is None:
            self._hashes = [text_hash(u.match_text[:EMBED_CHARS]) for u in self.units]
        return self._hashes

    def unit_vectors(self, identity: str) -> UnitVectors:
        with _lock:
            return self.vectors.setdefault(identity, UnitVectors(len(self.units)))

    def hold_vectors(self, identity: str, idxs, vectors) -> None:
        """Hold these units' vectors (a benchmark's, or the cache's) for ``identity``'s searches."""
        self.unit_vectors(identity).put(np.asarray(idxs, dtype=np.int64), vectors)

    def sentence_vectors(self, identity: str, idxs) -> dict[int, np.ndarray]:
        """{unit: (its sentences, dim) vectors} for those of ``idxs`` held for ``identity``."""
        with _lock:
            memo = self.sentences.get(identity)
            if memo is None:
                return {}
            out = {}
            for i in idxs:
                m = memo.get(i)
                if m is not None:
                    memo.move_to_end(i)
                    out[i] = m
            return out

    def hold_sentences(self, identity: str, held: dict[int, np.ndarray]) -> None:
        with _lock:
            memo = self.sentences.setdefault(identity, OrderedDict())
            memo.update(held)
            while len(memo) > SENTENCE_MEMO:
                memo.popitem(last=False)

    def section_keys(self) -> list[str]:
        """Each unit's key in the ANN index (``storage.kb_sections.section_key``), computed on first use."""
        if self._keys is None:
            self._keys = [section_key(u) for u in self.units]
            self._key_pos = {key: i for i, key in enumerate(self._keys)}
        return self._keys

    def key_positions(self) -> dict[str, int]:
        self.section_keys()
        return self._key_pos

    def not_held(self, keys: frozenset[str]) -> np.ndarray:
        """The units whose key is not in ``keys`` (an ANN generation's), computed once per generation."""
        if self._not_held is None or self._not_held[0] is not keys:
            self._not_held = (keys, np.array([i for i, key in enumerate(self.section_keys()) if key not in keys], dtype=np.int64))
        return self._not_held[1]

    def allowed(self, norm_phrases: list[str]) -> np.ndarray:
        """Units that contain every phrase."""
        return np.array([all(p in n for p in norm_phrases) for n in self.norm], dtype=bool) if norm_phrases else np.ones(len(self.units), bool)

    @property
    def norm(self) -> list[str]:
        """Each unit's phrase form, made when a search first quotes a phrase (~1 s at 100,000 sections): kept from
        the build, it was 35 MB of every search process there, whether or not a phrase was ever asked (issue 43)."""
        if self._norm is None:
            made = ["\x00".join(phrase_norm(p) for p in [u.doc_title, *u.path, u.text]) for u in self.units]
            with _lock:
                if self._norm is None:
                    self._norm = made
        return self._norm


_indexes: OrderedDict[tuple, SectionIndex] = OrderedDict()


def index_key(docs: list[Doc]) -> tuple:
    return tuple(sorted((d.id, d.row["content_hash"]) for d in docs))


def section_index(docs: list[Doc], key: tuple | None = None) -> SectionIndex:
    """The index of these documents' sections, built once per process per set of (id, content hash) (``key``:
    ``index_key(docs)`` when the caller has it)."""
    key = key if key is not None else index_key(docs)
    with _lock:
        hit = _indexes.get(key)
        if hit is not None:
            _indexes.move_to_end(key)
            return hit
    index = SectionIndex.build(section_units(docs), key)
    with _lock:
        _indexes[key] = index
        while len(_indexes) > INDEX_CACHE:
            _indexes.popitem(last=False)
    _return_freed_memory()
    return index


def _return_freed_memory() -> None:
    """Hand the heap the build freed back to the system. The build's term lists (~9.6M entries at 100,000 sections)
    are garbage once BM25 is indexed, but glibc keeps the freed heap mapped: 160 MB of a long-lived search process's
    RSS at 100,000 sections (742 -> 582 MB, bench/perf.py), which the ANN index and the embedder then came on top of."""
    try:
        import ctypes

        ctypes.CDLL("libc.so.6").malloc_trim(0)
    except (OSError, AttributeError):  # not glibc (musl, macOS): nothing to hand back this way
        pass


# -- dense vectors --------------------------------------------------------------------------------------------
_embedders: dict[str, object] = {}


class UnitVectors:
    """One embedder's vectors of a section index's units: rows of one matrix, ``held`` saying which rows are filled.
    A unit without a vector has none here (never a made-up one): a search ranks it by its keywords."""

    def __init__(self, n: int):
        self.held = np.zeros(n, dtype=bool)
        self.matrix: np.ndarray | None = None  # (n, dim) float32, made with the first vector
        self._lock = threading.Lock()

    def put(self, idxs: np.ndarray, vectors) -> None:
        if len(idxs) == 0:
            return
        vecs = np.asarray(vectors, dtype=np.float32).reshape(len(idxs), -1)
        with self._lock:
            if self.matrix is None:
                self.matrix = np.zeros((len(self.held), vecs.shape[1]), dtype=np.float32)
            self.matrix[idxs] = vecs
            self.held[idxs] = True

    def __contains__(self, i: int) -> bool:
        return bool(self.held[i])

    def __getitem__(self, i: int) -> np.ndarray:
        if not self.held[i]:
            raise KeyError(i)
        return self.matrix[i]


class Dense:
    """Cosine of sections to a query with one embedder. With ``cache`` (the workspace's embedding cache, read only)
    a section's vector is read from it by text hash, and a section it lacks has none: ``cosine`` gives NaN for it and
    the search ranks it by keywords, saying so. Nothing is embedded here but the query: the sections' vectors are made
    when a document is approved and by ``agentos rebuild`` and the nightly (``index.vectors``); embedding them at search
    time made the first search after approving a 3,000-heading document take minutes, in every new process (issue 42).
    Without ``cache`` (a benchmark or test over bare units, no workspace) the units are embedded in this process's
    memory when first needed."""

    def __init__(self, embedder, cache=None):
        self.embedder, self.cache = embedder, cache
        self._queries: dict[str, np.ndarray] = {}

    def load(self, index: SectionIndex, idxs: np.ndarray) -> np.ndarray:
        """Which of ``idxs`` have a vector now (bool, aligned with ``idxs``). Those not held yet are looked up in the
        cache on every call, so vectors made since (an approval in another process, the nightly) are used without
        restarting a long-lived server; a lookup is one indexed query per 500 sections."""
        idxs = np.asarray(idxs, dtype=np.int64)
        vs = index.unit_vectors(self.embedder.identity)
        need = idxs[~vs.held[idxs]]
        if len(need):
            hashes = index.text_hashes()
            need = np.unique(need)
            if self.cache is not None:
                known = self.cache.vectors(self.embedder.identity, list({hashes[i] for i in need}))
                got = np.array([i for i in need if hashes[i] in known], dtype=np.int64)
                vs.put(got, [known[hashes[i]] for i in got])
            else:
                texts = {hashes[i]: index.units[i].match_text[:EMBED_CHARS] for i in need}
                made = dict(zip(texts, self.embedder.embed_documents(list(texts.values()))))
                vs.put(need, [made[hashes[i]] for i in need])
        return vs.held[idxs]

    def cosine(self, index: SectionIndex, idxs: np.ndarray, query: str) -> np.ndarray:
        """Cosines of ``idxs`` to ``query``; NaN for a section without a vector (the query is embedded only when some
        section has one)."""
        idxs = np.asarray(idxs, dtype=np.int64)
        out = np.full(len(idxs), np.nan)
        if len(idxs) == 0:
            return out
        held = self.load(index, idxs)
        if held.any():
            matrix = index.unit_vectors(self.embedder.identity).matrix
            # einsum, not `matrix @ q`: numpy's BLAS would start its threads for this product and leave them spinning,
            # and the next query's embedding (OpenMP threads of its own) then ran 10 to 100 times slower on a small
            # machine: the p95 of 1.9 s of hybrid search in the rgb benchmark (issue 43)
            out[held] = np.einsum("ij,j->i", matrix[idxs[held]], self.query_vector(query))
        return out

    def sentence_best(self, index: SectionIndex, idxs: np.ndarray, query: str) -> np.ndarray:
        """The best cosine between ``query`` and one of each section's sentences (``storage.kb_sections.embed_sentences``,
        embedded beside the sections); NaN for a section one of whose sentences has no vector (a workspace embedded
        before sentences were, until its next rebuild or nightly). Read from the cache (without one: embedded here)."""
        idxs = [int(i) for i in np.asarray(idxs, dtype=np.int64)]
        out = np.full(len(idxs), np.nan)
        if not idxs:
            return out
        identity = self.embedder.identity
        held = index.sentence_vectors(identity, dict.fromkeys(idxs))
        need = [i for i in dict.fromkeys(idxs) if i not in held]
        if need:
            texts = {i: embed_sentences(index.units[i]) for i in need}
            keys = {t: text_hash(t) for ts in texts.values() for t in ts}
            if self.cache is not None:
                known = self.cache.vectors(identity, list(set(keys.values())))
            else:
                known = dict(zip(keys.values(), self.embedder.embed_documents(list(keys))))
            made = {i: np.stack([np.asarray(known[keys[t]], dtype=np.float32) for t in ts])
                    for i, ts in texts.items() if all(keys[t] in known for t in ts)}
            index.hold_sentences(identity, made)
            held.update(made)
        if held:
            q = self.query_vector(query)
            for k, i in enumerate(idxs):
                m = held.get(i)
                if m is not None:
                    out[k] = float(np.einsum("ij,j->i", m, q).max())  # einsum: no BLAS threads (see cosine)
        return out

    def query_vector(self, text: str) -> np.ndarray:
        vec = self._queries.get(text)
        if vec is None:
            if len(self._queries) >= 512:  # a long-lived server: keep the memo bounded
                self._queries.pop(next(iter(self._queries)))
            vec = self._queries[text] = np.asarray(self.embedder.embed_query(text), dtype=np.float32)
        return vec


_denses: dict[tuple[str, str], Dense] = {}


def settings_dense(settings: Settings) -> Dense:
    """The settings' embedder with the workspace's vector cache, built once per process and workspace: one
    cache connection and one query-vector memo for every call (an MCP server answers many)."""
    spec = f"{settings.embedder}|{settings.embedder_api_key or ''}"
    with _lock:
        dense = _denses.get((spec, str(settings.home)))
        if dense is None:
            emb = _embedders.get(spec)
            if emb is None:
                emb = _embedders[spec] = make_settings_embedder(settings)
            dense = _denses[(spec, str(settings.home))] = Dense(emb, open_cache(settings))
        return dense


# -- the ANN index of sections -------------------------------------------------------------------------------------
class SectionANN:
    """Nearest sections by vector from an HNSW index (``index/section_ann.py`` publishes it nightly): ``keys`` are
    the sections it holds, ``identity`` the embedder its vectors come from."""

    def __init__(self, vectors, keys: frozenset[str], identity: str, collection: str = ANN_COLLECTION):
        self.vectors, self.keys, self.identity, self.collection = vectors, keys, identity, collection

    def nearest(self, vec: np.ndarray, n: int) -> list[tuple[str, float]]:
        return self.vectors.query(self.collection, vec, n)


_anns: dict[tuple[str, str], SectionANN] = {}


def section_ann(settings: Settings) -> SectionANN | None:
    """The live ANN generation of this workspace's sections, or None when there is none (a small base) or it
    cannot be read (then search is exact, and says nothing: exact is never wrong, only slower)."""
    root = Workspace(settings.home).index_dir / ANN_COLLECTION
    if not (root / "CURRENT").is_file():
        return None
    try:
        reader = open_reader(root, settings.chroma_url)  # moves to a newer generation when the nightly has published one
        with _lock:
            ann = _anns.get((str(root), reader.name))
        if ann is None:
            ann = SectionANN(reader.vectors(), frozenset(reader.unit_ids(ANN_COLLECTION)), reader.manifest.get("embedder") or "")
            with _lock:
                _anns.clear()  # one live generation per process is enough; a new one replaces it
                _anns[(str(root), reader.name)] = ann
        return ann
    except (IndexMissing, IndexCorrupt) as e:
        log.warning("knowledge section index unusable, searching exactly: %s", e)
        return None


def _ann_cosines(index: SectionIndex, idxs: np.ndarray, allowed: np.ndarray, query: str, dense: Dense, ann: SectionANN,
                 n: int) -> dict[int, float] | None:
    """Unit index -> cosine for the ``n`` nearest allowed sections the index holds, plus (exactly) every allowed
    section it does not hold yet (published since the nightly) that has a vector. None when the selection is so
    narrow that the index's neighbours are mostly outside it: exact search is then both right and cheap."""
    pos = index.key_positions()
    qvec = dense.query_vector(query)
    want = n * ANN_OVERSAMPLE
    got = {}
    for key, c in ann.nearest(qvec, want):
        i = pos.get(key)
        if i is not None and allowed[i]:
            got[i] = c
    if len(got) < n and len(ann.keys) > want:
        return None
    delta = index.not_held(ann.keys)
    delta = delta[allowed[delta]]
    if len(delta):
        got.update({int(i): float(c) for i, c in zip(delta, dense.cosine(index, delta, query)) if not np.isnan(c)})
    return got


# -- ranking -----------------------------------------------------------------------------------------------------
@dataclass
class Ranking:
    """What ``rank`` found: ``hits`` [(unit index, score)], best first; ``without_vectors``: how many of the index's
    sections have no vector for the dense side (ranked by their keywords alone; None in bm25 mode, which reads none)."""

    hits: list[tuple[int, float]]
    without_vectors: int | None = None


def rank_sections(index: SectionIndex, query: str | Query, *, k: int = 10, mode: str = "hybrid", alpha: float = ALPHA,
                  dense: Dense | None = None, ann: SectionANN | None = None, ann_min: int = ANN_MIN_SECTIONS) -> list[tuple[int, float]]:
    """[(unit index, score)], best first, at most ``k``: ``rank(...).hits`` (the bench calls this)."""
    return rank(index, query, k=k, mode=mode, alpha=alpha, dense=dense, ann=ann, ann_min=ann_min).hits


def rank(index: SectionIndex, query: str | Query, *, k: int = 10, mode: str = "hybrid", alpha: float = ALPHA,
         dense: Dense | None = None, ann: SectionANN | None = None, ann_min: int = ANN_MIN_SECTIONS) -> Ranking:
    """The ``k`` best sections for ``query``; phrases filter, terms rank.

    With ``ann`` (and at least ``ann_min`` sections to search, its vectors from the same embedder), the
    dense side is the index's nearest sections instead of every section's exact cosine, and hybrid fuses them with
    BM25's best ``BM25_POOL`` (cosines for those read exactly): see ``_rank_approximate``.

    A section without a vector (approved while its embedding failed, or a workspace from before approvals embedded)
    is never embedded here: its cosine is NaN. Hybrid ranks it by its keywords: its scaled BM25 score stands in for
    the similarity it lacks (``query.fusion``); with no vector at all, keywords alone rank. Dense mode, meaning
    alone, leaves it out.
    ``Ranking.without_vectors`` counts them."""
    q = query if isinstance(query, Query) else parse_query(query)
    if mode not in MODES:
        raise KBQueryError(f"mode must be one of {', '.join(MODES)}, not {mode!r}")
    if mode != "bm25" and dense is None:
        raise ValueError(f"mode {mode!r} needs a Dense scorer")
    allowed = index.allowed(q.norm_phrases)
    idxs = np.flatnonzero(allowed)
    bm = index.bm25(q.terms)[idxs] if len(idxs) else np.zeros(0)
    if not q.terms:  # phrases of stop words only: every section holding them, in document order
        bm = np.ones(len(idxs))
    if mode == "bm25":
        if len(idxs) == 0:
            return Ranking([])
        scores = {int(i): float(s) for i, s in zip(idxs, bm) if s > 0}
        return Ranking(_best(scores, k))
    use_ann = ann is not None and len(idxs) >= ann_min and ann.identity == dense.embedder.identity
    scores = None
    if use_ann and len(idxs):
        scores = _rank_approximate(index, idxs, allowed, bm, q, k, mode, alpha, dense, ann)
    if scores is None:
        use_ann = False
        if len(idxs) == 0:
            scores = {}
        else:
            cos = dense.cosine(index, idxs, q.text or " ".join(q.phrases))
            if mode == "dense":
                scores = {int(i): float(c) for i, c in zip(idxs, cos) if not np.isnan(c)}
            else:
                near = np.flatnonzero(~np.isnan(cos))
                near = near[np.argsort(-cos[near], kind="stable")[:max(DENSE_POOL, k)]]
                pool = set(near.tolist()) | set(np.flatnonzero(bm > 0).tolist())
                scores = fuse_sections(index, q, idxs, bm, cos, sorted(pool), alpha, dense)
    # the sections the dense side has no vector for: every section of the index on the exact path, those the ANN
    # index does not hold on the approximate one (it was built from vectors)
    if not use_ann and 0 < len(idxs) == len(index.units):
        lacking = int(np.isnan(cos).sum())  # every section was just looked up
    else:
        searched = index.not_held(ann.keys) if use_ann else np.arange(len(index.units))
        lacking = int((~dense.load(index, searched)).sum()) if len(searched) else 0
    return Ranking(_best(scores, k), lacking)


def _best(scores: dict[int, float], k: int) -> list[tuple[int, float]]:
    order = sorted(scores, key=lambda i: (-scores[i], i))
    return [(i, scores[i]) for i in order[:k]]


def _rank_approximate(index: SectionIndex, idxs: np.ndarray, allowed: np.ndarray, bm: np.ndarray, q: Query, k: int, mode: str,
                      alpha: float, dense: Dense, ann: SectionANN) -> dict[int, float] | None:
    """Scores through the ANN index (None: search exactly). Hybrid's pool is the nearest ``max(DENSE_POOL, k)``
    sections and BM25's best ``BM25_POOL`` (not all its matches: at 100k sections a common word matches
    thousands, and each needs its vector read), fused as the exact path fuses them."""
    text = q.text or " ".join(q.phrases)
    near = _ann_cosines(index, idxs, allowed, text, dense, ann, max(DENSE_POOL, k))
    if near is None:
        return None
    if mode == "dense":
        return near
    matched = np.flatnonzero(bm > 0)
    best_bm = idxs[matched[np.argsort(-bm[matched], kind="stable")[:BM25_POOL]]]
    need = np.array([int(i) for i in best_bm if int(i) not in near], dtype=np.int64)
    cos_of = dict(near)
    if len(need):
        cos_of.update({int(i): float(c) for i, c in zip(need, dense.cosine(index, need, text))})  # NaN: no vector
    pool = sorted(cos_of)
    bm_all = np.zeros(len(index.units))
    bm_all[idxs] = bm
    bmp, cosp = bm_all[pool], np.array([cos_of[i] for i in pool])
    return fuse_sections(index, q, np.array(pool), bmp, cosp, list(range(len(pool))), alpha, dense)


def hybrid_alpha(bm: np.ndarray, cos: np.ndarray, alpha: float = ALPHA) -> float:
    """BM25's weight for one query over these sections (``bm`` and ``cos`` aligned; NaN: no vector):
    query.fusion.keyword_weight, the best by meaning among the sections that have a vector."""
    first_page = [int(i) for i in np.argsort(-bm, kind="stable")[:AGREE_TOP] if bm[i] > 0]  # BM25's matches only
    best = None if np.isnan(cos).all() else int(np.nanargmax(cos))
    return keyword_weight([(i, float(bm[i])) for i in first_page], best, alpha)


def _convex(idxs: np.ndarray, bm: np.ndarray, cos: np.ndarray, pool: list[int], alpha: float) -> dict[int, float]:
    """alpha * BM25 / max BM25 + (1 - alpha) * min-max-scaled cosine, over the candidates (query.ask.convex). A
    candidate without a vector (NaN) has its scaled BM25 score on both sides."""
    b, c = bm[pool], cos[pool]
    b = b / (b.max() or 1.0)
    have = ~np.isnan(c)
    if have.any():
        lo, hi = float(c[have].min()), float(c[have].max())
        c = np.where(have, (c - lo) / ((hi - lo) or 1.0), b)
    else:
        c = b
    return {int(idxs[p]): float(alpha * bi + (1 - alpha) * ci) for p, bi, ci in zip(pool, b, c)}


VECTORS_NOTICE = ("{n} sections of {m} have no vectors yet: answered by keywords for them; run `agentos rebuild` or wait "
                  "for the nightly")
DENSE_NOTICE = ("{n} sections of {m} have no vectors yet: left out of this search by meaning (--mode hybrid or bm25 finds "
                "them by keywords); run `agentos rebuild` or wait for the nightly")


def vectors_notice(without: int | None, sections: int, mode: str) -> str | None:
    """What a search says when some sections it searched have no vector (None: all have, or bm25 mode)."""
    if not without:
        return None
    return (DENSE_NOTICE if mode == "dense" else VECTORS_NOTICE).format(n=without, m=sections)


def search(settings: Settings, user: str, query: str, *, selection: str | Mapping | None = None, k: int = 10,
           mode: str = "hybrid", alpha: float = ALPHA) -> dict:
    """``search_docs`` with what it searched: {query, mode, hits, sections (how many the selection holds),
    without_vectors (how many of them have no vector: ranked by keywords; None in bm25 mode), notice (a sentence
    saying so, or None)}. What ``agentos kb search`` and the MCP tool ``kb_search`` return."""
    q = parse_query(query)
    check_l0(settings, query)
    if mode not in MODES:
        raise KBQueryError(f"mode must be one of {', '.join(MODES)}, not {mode!r}")
    if isinstance(k, bool) or not isinstance(k, int) or not 1 <= k <= MAX_K:
        raise KBQueryError(f"k must be a whole number from 1 to {MAX_K}")
    for _ in range(2):  # again once when a card served was edited since the registry was read (``_served``)
        docs, key, by_id = selected(settings, user, selection)
        if not docs:
            return {"query": query, "mode": mode, "hits": [], "sections": 0, "without_vectors": None if mode == "bm25" else 0, "notice": None}
        index = section_index(docs, key)
        dense = settings_dense(settings) if mode != "bm25" else None
        ann = section_ann(settings) if dense is not None and len(index.units) >= settings.kb_ann_min_sections else None
        ranked = rank(index, q, k=k, mode=mode, alpha=alpha, dense=dense, ann=ann, ann_min=settings.kb_ann_min_sections)
        shown = {index.units[i].doc_id for i, _ in ranked.hits}
        if _served(settings, [by_id[d] for d in shown]):
            break
    hits = [hit(index.units[i], score, q) for i, score in ranked.hits]
    forgotten = forgotten_values(settings, user) if hits else []
    for h in hits:  # a value the user forgot is in no snippet an agent reads (query.forgotten)
        h["snippet"] = without_forgotten(h["snippet"], forgotten)
    return {"query": query, "mode": mode, "hits": hits,
            "sections": len(index.units), "without_vectors": ranked.without_vectors,
            "notice": vectors_notice(ranked.without_vectors, len(index.units), mode)}


def search_docs(settings: Settings, user: str, query: str, *, selection: str | Mapping | None = None, k: int = 10,
                mode: str = "hybrid", alpha: float = ALPHA) -> list[dict]:
    """Sections of the selected, published documents ranked for ``query``: [{doc_id, title, anchor, section, path,
    score, snippet, lines: [start, end], tokens, coverage}], best first, at most ``k``; [] when nothing matches
    (bm25 mode; the dense modes rank something whenever a section has a vector). ``coverage``: the share of the
    query's terms in the section (0 for a hit found by meaning alone). Sections without a vector are ranked by their
    keywords (``rank``); ``search`` says how many there were."""
    return search(settings, user, query, selection=selection, k=k, mode=mode, alpha=alpha)["hits"]


def hit(u: Unit, score: float, q: Query) -> dict:
    terms = set(kb_terms(u.match_text))
    coverage = sum(1 for t in q.terms if t in terms) / len(q.terms) if q.terms else 1.0
    return {"doc_id": u.doc_id, "title": u.doc_title, "anchor": u.anchor, "section": u.title, "path": list(u.path),
            "score": round(score, 4), "snippet": snippet(u, q), "lines": [u.line_start, u.line_end], "tokens": u.tokens,
            "coverage": round(coverage, 3)}


# -- snippets --------------------------------------------------------------------------------------------------
def snippet(u: Unit, q: Query, limit: int = SNIPPET_CHARS) -> str:
    """The sentence of the section with the most query terms (a phrase counts most), cut to a window of at
    most ``limit`` characters around its match; the heading when only the heading matches."""
    lines = u.text.split("\n")
    own = lines[max(0, u.heading_end - u.line_start + 1):] if u.heading_end else lines
    cands = [s for line in own for s in sentences(line)]
    best, best_score = None, 0.0
    for s in cands:
        sc = _sentence_score(s, q)
        if sc > best_score:
            best, best_score = s, sc
    if best is None:
        best = u.title if u.title and _sentence_score(u.title, q) > 0 else (cands[0] if cands else u.title or u.doc_title)
    return window(" ".join(best.split()), q, limit)


def _sentence_score(s: str, q: Query) -> float:
    norm = phrase_norm(s)
    terms = set(kb_terms(s))
    return 10.0 * sum(1 for p in q.norm_phrases if p in norm) + sum(1 for t in q.terms if t in terms)


def window(s: str, q: Query, limit: int) -> str:
    """``s`` when short; else the ``limit``-character window (starting a little before a match) holding the
    most of the query's phrases and terms."""
    if len(s) <= limit:
        return s
    low = s.lower()
    needles = [(p.lower(), 10.0) for p in q.phrases] + [(t, 1.0) for t in q.terms]
    spots = []
    for needle, _ in needles:
        pos = low.find(needle)
        while pos >= 0 and len(spots) < 400:
            spots.append(pos)
            pos = low.find(needle, pos + 1)
    width = limit - 2
    best_start, best = 0, -1.0
    for start in sorted({max(0, min(p - 20, len(s) - width)) for p in spots} or {0}):
        part = low[start : start + width]
        score = sum(w for needle, w in needles if needle in part)
        if score > best:
            best_start, best = start, score
    end = min(len(s), best_start + width)
    return ("…" if best_start > 0 else "") + s[best_start:end].strip() + ("…" if end < len(s) else "")


# -- section pages ---------------------------------------------------------------------------------------------
def page_spans(lines: list[str], page_tokens: int) -> list[tuple[int, int]]:
    """[(start, end)] character offsets into ``"\\n".join(lines)``, consecutive and covering it: pages of at most
    ``page_tokens`` tokens and ``page_tokens * CHARS_PER_TOKEN`` characters, cut at line ends (the newline
    stays with its line), an over-long line cut by characters."""
    text = "\n".join(lines)
    max_chars = page_tokens * CHARS_PER_TOKEN
    spans: list[tuple[int, int]] = []
    start = used_t = used_c = 0
    pos = 0
    for i, line in enumerate(lines):
        seg_end = pos + len(line) + (1 if i + 1 < len(lines) else 0)
        t, c = count_tokens(line), seg_end - pos
        if used_t + t <= page_tokens and used_c + c <= max_chars:
            used_t, used_c = used_t + t, used_c + c
        else:
            if pos > start:
                spans.append((start, pos))
                start = pos
            if t <= page_tokens and c <= max_chars:
                used_t, used_c = t, c
            else:  # one line longer than a page: full pages of it, its tail opens the next page
                while True:
                    rest = text[start:seg_end]
                    if count_tokens(rest) <= page_tokens and len(rest) <= max_chars:
                        used_t, used_c = count_tokens(rest), len(rest)
                        break
                    cut = start + _cut(rest, page_tokens, max_chars)
                    spans.append((start, cut))
                    start = cut
        pos = seg_end
    if start < len(text) or not spans:
        spans.append((start, len(text)))
    return spans


def _cut(s: str, page_tokens: int, max_chars: int) -> int:
    """How many characters of ``s`` fill a page: the longest prefix within both limits, moved back to the
    nearest boundary (not inside a word of a non-CJK script) within 40 characters when there is one."""
    lo, hi = 1, min(len(s), max_chars)
    while lo < hi:  # the largest e with count_tokens(s[:e]) <= page_tokens (monotonic in e)
        mid = (lo + hi + 1) // 2
        if count_tokens(s[:mid]) <= page_tokens:
            lo = mid
        else:
            hi = mid - 1
    e = lo
    for p in range(e, max(0, e - 40), -1):
        if p < len(s) and not (_WORD_CHAR.match(s[p - 1]) and _WORD_CHAR.match(s[p])):
            return p
    return e


def _encode_cursor(payload: dict) -> str:
    raw = json.dumps(payload, separators=(",", ":"), ensure_ascii=False).encode("utf-8")
    return "kb1." + base64.urlsafe_b64encode(raw).decode("ascii").rstrip("=")


def _decode_cursor(cursor: str) -> dict:
    try:
        if not isinstance(cursor, str) or not cursor.startswith("kb1."):
            raise ValueError
        body = cursor[4:]
        data = json.loads(base64.urlsafe_b64decode(body + "=" * (-len(body) % 4)).decode("utf-8"))
        if not (isinstance(data, dict) and {"d", "a", "h", "s", "t", "p"} <= set(data) and isinstance(data["p"], int)
                and isinstance(data["t"], int)):
            raise ValueError
        return data
    except (ValueError, binascii.Error, UnicodeDecodeError):
        raise KBQueryError("not a read_section cursor: pass the next_cursor of the previous page as it was given") from None


def read_section(settings: Settings, user: str, doc_id: str, anchor: str, *, cursor: str | None = None, page_tokens: int = 400,
                 subtree: bool = False, selection: str | Mapping | None = None) -> dict:
    """One page of a section: {doc_id, title, anchor, section, path, text, page (1-based), pages, next_cursor (None
    on the last page), lines: [start, end] (body lines this page touches), section_lines, tokens, subtree,
    subsections: [{anchor, title}]}. With a cursor, its page size and subtree choice are used."""
    doc = _doc(settings, user, doc_id, selection)
    if not isinstance(anchor, str) or doc.section(anchor) is None:
        raise KBQueryError(f"no section #{anchor} in {doc_id}: read_doc lists its anchors")
    sec = doc.section(anchor)
    page = 0
    if cursor is not None:
        c = _decode_cursor(cursor)
        if c["d"] != doc_id or c["a"] != sec["anchor"]:
            raise KBQueryError(f"this cursor is for {c['d']}#{c['a']}, not {doc_id}#{sec['anchor']}")
        if c["h"] != doc.row["content_hash"][:16]:
            raise KBQueryError(f"{doc_id} changed since this cursor was given: read #{sec['anchor']} again from its start")
        page, page_tokens, subtree = c["p"], c["t"], bool(c["s"])
    if isinstance(page_tokens, bool) or not isinstance(page_tokens, int) or not PAGE_TOKENS[0] <= page_tokens <= PAGE_TOKENS[1]:
        raise KBQueryError(f"page_tokens must be a whole number from {PAGE_TOKENS[0]} to {PAGE_TOKENS[1]}")
    first = sec["line_start"]
    last = min(sec["subtree_end"] if subtree else sec["line_end"], len(doc.lines))
    lines = doc.lines[first - 1 : last]
    spans = page_spans(lines, page_tokens)
    if not 0 <= page < len(spans):
        raise KBQueryError("this cursor points past the end of the section: read it again from its start")
    start, end = spans[page]
    whole = "\n".join(lines)
    text = whole[start:end]
    offsets = np.cumsum([0] + [len(x) + 1 for x in lines[:-1]]).tolist()
    line_a = first + bisect.bisect_right(offsets, start) - 1
    line_b = last if end >= len(whole) else first + bisect.bisect_right(offsets, max(start, end - 1)) - 1
    nxt = None
    if page + 1 < len(spans):
        nxt = _encode_cursor({"d": doc_id, "a": sec["anchor"], "h": doc.row["content_hash"][:16], "s": int(bool(subtree)),
                              "t": page_tokens, "p": page + 1})
    children = [{"anchor": s["anchor"], "title": s["title"]} for s in doc.sections if s.get("parent") == sec["anchor"]]
    text = without_forgotten(text, forgotten_values(settings, user))  # as every served text (query.forgotten)
    return {"doc_id": doc_id, "title": doc.row["title"], "anchor": sec["anchor"], "section": sec["title"], "path": list(sec.get("path") or []),
            "text": text, "page": page + 1, "pages": len(spans), "next_cursor": nxt, "lines": [line_a, line_b],
            "section_lines": [first, last], "tokens": count_tokens(text), "subtree": bool(subtree), "subsections": children}
