"""Embedding the published knowledge sections ahead of the first search (the nightly chain, after refine).

Every section of every ready document is embedded once, by the text's hash, into the workspace's embedding
cache (``storage/embed_cache.py``) under the embedder's identity. Knowledge search only reads that cache:
a section published since the last run is embedded in the searching process's memory, never written by it.
"""

from __future__ import annotations

from collections.abc import Callable

from kernel.embedders import make_settings_embedder
from kernel.settings import Settings
from kernel.workspace import kb_paths
from storage.embed_cache import open_cache
from storage.kb_sections import embed_text, published_docs, section_units, text_hash
from storage.kb_store import KBStore

BATCH = 32


def embed_sections(settings: Settings, *, embedder=None, log: Callable[[str], None] | None = None) -> dict:
    """Embed what the cache lacks; returns {sections, embedded, embedder}."""
    paths = kb_paths(settings)
    if not paths["db"].exists():
        return {"sections": 0, "embedded": 0, "embedder": None}
    store = KBStore(paths["db"], timezone=settings.timezone)
    try:
        rows = store.documents(status="ready")
    finally:
        store.close()
    units = section_units(published_docs(paths["knowledge"], rows))
    texts = {text_hash(embed_text(u)): embed_text(u) for u in units}
    if not texts:
        return {"sections": len(units), "embedded": 0, "embedder": None}
    embedder = embedder or make_settings_embedder(settings)
    cache = open_cache(settings)
    try:
        known = cache.vectors(embedder.identity, list(texts))
        todo = [h for h in texts if h not in known]
        for i in range(0, len(todo), BATCH):
            chunk = todo[i:i + BATCH]
            cache.put_vectors(embedder.identity, dict(zip(chunk, embedder.embed_documents([texts[h] for h in chunk]))))
            if log:
                log(f"  embedded {min(i + BATCH, len(todo))}/{len(todo)} new section texts")
    finally:
        cache.close()
    return {"sections": len(units), "embedded": len(todo), "embedder": embedder.identity}
