"""Embedding ahead of the read path: the sections of published knowledge documents and each one's sentences (one
document when it is approved, ``embed_document``; all of them at ``agentos rebuild`` and in the nightly chain,
``embed_sections``) and the memory records recall scans.

Each text is embedded once, by its hash, into the workspace's embedding cache (``storage/embed_cache.py``)
under the embedder's identity. Knowledge search only reads that cache and never embeds a section: one without a
vector there is ranked by its keywords, and the search says so (``query.kb.search``). Memory recall embeds a record
written since the last run in the reading process's memory, never writing it.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Callable

from agentos_mem import __version__

from agentos_mem.kernel import progress
from agentos_mem.embedders import make_settings_embedder
from agentos_mem.kernel.settings import Settings
from agentos_mem.index.section_ann import ann_store, publish_section_ann
from agentos_mem.kernel.workspace import kb_paths
from agentos_mem.storage.embed_cache import open_cache
from agentos_mem.storage.kb_sections import SENTENCE_MAX, embed_texts, published_docs, section_texts, section_units, text_hash
from agentos_mem.storage.kb_store import KBStore
from agentos_mem.storage.memory_records import EMBED_CHARS as RECORD_EMBED_CHARS
from agentos_mem.storage.memory_records import open_book, record_text

BATCH = 32
SECTIONS_STAMP = "sections"  # embed_sections' note in the cache (``Cache.stamp``)


def embed_sections(settings: Settings, *, embedder=None, log: Callable[[str], None] | None = None, sentences: bool = True) -> dict:
    """Embed the published sections and their sentences the cache lacks, then publish their ANN index when the base is
    large enough (``index.section_ann``); returns {sections, embedded, embedder, ann}. ``sentences=False`` (a
    benchmark that reads sections only) embeds the sections alone and notes nothing in the cache."""
    paths = kb_paths(settings)
    if not paths["db"].exists():
        return {"sections": 0, "embedded": 0, "embedder": None}
    store = KBStore(paths["db"], timezone=settings.timezone)
    try:
        stamp = sections_stamp(settings, paths["knowledge"], *store.ready_state())  # before the read: a change since shows next time
        rows = store.documents(status="ready")
    finally:
        store.close()
    cache = open_cache(settings)
    try:
        last = cache.stamp(SECTIONS_STAMP)
    finally:
        cache.close()
    live = ann_store(settings).current_name()
    if last and last.get("stamp") == stamp and last.get("ann_generation") == live and isinstance(last.get("result"), dict):
        ann = last["result"].get("ann")
        return {**last["result"], "embedded": 0, "sentences_embedded": 0, "ann": {**ann, "status": "unchanged"} if isinstance(ann, dict) else ann, "stamp": "unchanged"}
    units = section_units(published_docs(paths["knowledge"], rows))
    texts = embed_texts(units) if sentences else section_texts(units)
    if not texts:
        return {"sections": len(units), "embedded": 0, "embedder": None}
    embedder = embedder or make_settings_embedder(settings)
    done = _embed_missing(settings, embedder, texts, log, what="embedding sections")
    ann = publish_section_ann(settings, units, embedder_identity=embedder.identity, embedder_spec=settings.embedder,
                              min_sections=settings.kb_ann_min_sections)
    result = {"sections": len(units), **_counts(done, units), "embedder": embedder.identity, "ann": ann}
    if not sentences:
        return result
    cache = open_cache(settings)
    try:
        cache.put_stamp(SECTIONS_STAMP, {"stamp": stamp, "ann_generation": ann_store(settings).current_name(), "result": result})
    finally:
        cache.close()
    return result


def sections_stamp(settings: Settings, kb_root, rows_digest: str, card_paths: list[str]) -> str:
    """What the sections' vectors and ANN index are made from, in a digest: the ready rows, each card's stat, the
    embedder, the ANN settings, this version of the code (how cards are read and masked); the live ANN generation
    is noted beside it (``embed_sections``), so one removed or replaced is published again. A
    night on which none of it changed has nothing to embed or publish: reading and masking every card again to
    find that out was 13 of a no-change nightly's 25 s at 10,000 documents (bench/results/perf.md)."""
    # the sentences' marker: a workspace embedded before sections' sentences were is embedded once more (their part only)
    digest = hashlib.sha256(json.dumps([__version__, rows_digest, settings.embedder, settings.kb_ann_min_sections, settings.chroma_url,
                                        f"sentences-{SENTENCE_MAX}"],
                                       default=str).encode("utf-8"))
    root = os.fspath(kb_root)
    for path in card_paths:
        try:
            st = os.stat(os.path.join(root, path))
            digest.update(f"{path}\0{st.st_mtime_ns}\0{st.st_size}\0{st.st_ino}\n".encode("utf-8"))
        except OSError:
            digest.update(f"{path}\0-\n".encode("utf-8"))
    return digest.hexdigest()


def embed_document(settings: Settings, doc_id: str, *, embedder=None, log: Callable[[str], None] | None = None) -> dict:
    """Embed the sections (and their sentences) of one published document that the cache lacks (approving it: searched by meaning at
    once, not after the next night; a section already embedded, by its text's hash, is not embedded again); returns
    {doc_id, sections, embedded, embedder}. A document that is not ready, or whose card no longer holds the reviewed
    body, has no section to embed. Its sections join the ANN index (past ``kb_ann_min_sections``) with the next
    ``embed_sections``; until then the search scores them exactly beside it."""
    paths = kb_paths(settings)
    out = {"doc_id": doc_id, "sections": 0, "embedded": 0, "embedder": None}
    if not paths["db"].exists():
        return out
    store = KBStore(paths["db"], timezone=settings.timezone)
    try:
        row = store.find(doc_id)
    finally:
        store.close()
    if row is None or row["status"] != "ready":
        return out
    units = section_units(published_docs(paths["knowledge"], [row]))
    texts = embed_texts(units)
    out["sections"] = len(units)
    if texts:
        embedder = embedder or make_settings_embedder(settings)
        out.update(_counts(_embed_missing(settings, embedder, texts, log, what="embedding sections"), units), embedder=embedder.identity)
    return out


def _counts(done: list[str], units) -> dict:
    """{embedded: sections embedded now, sentences_embedded: their sentences embedded now} of the hashes ``done``."""
    sections = set(section_texts(units))
    n = sum(1 for h in done if h in sections)
    return {"embedded": n, "sentences_embedded": len(done) - n}


def embed_records(settings: Settings, user: str, *, embedder=None) -> dict:
    """Embed the user's records in recall's window (the most recently modified) that the cache lacks; returns
    {records, embedded, embedder}."""
    book = open_book(settings)
    try:
        records = book.list(user, limit=settings.recall_window)
    finally:
        if book.proposals:
            book.proposals.close()
    texts = {text_hash(t): t for t in (record_text(r)[:RECORD_EMBED_CHARS] for r in records)}
    if not texts:
        return {"records": 0, "embedded": 0, "embedder": None}
    embedder = embedder or make_settings_embedder(settings)
    return {"records": len(records), "embedded": len(_embed_missing(settings, embedder, texts, what="embedding records")), "embedder": embedder.identity}


def _embed_missing(settings: Settings, embedder, texts: dict[str, str], log: Callable[[str], None] | None = None, *,
                   what: str = "embedding") -> list[str]:
    """Embed the ``texts`` ({hash: text}) the cache lacks; returns the hashes embedded."""
    cache = open_cache(settings)
    try:
        known = cache.vectors(embedder.identity, list(texts))
        todo = [h for h in texts if h not in known]
        with progress.stage(what, total=len(todo)) as st:
            for i in range(0, len(todo), BATCH):
                chunk = todo[i:i + BATCH]
                cache.put_vectors(embedder.identity, dict(zip(chunk, embedder.embed_documents([texts[h] for h in chunk]))))
                st.advance(len(chunk))
                if log:
                    log(f"  embedded {min(i + BATCH, len(todo))}/{len(todo)} new texts")
    finally:
        cache.close()
    return todo
