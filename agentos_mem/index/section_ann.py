"""The knowledge sections' ANN index (the Chroma ``global`` collection), published as generations like the
memory indexes (``storage.index_store``): ``agent-local/vector_db/global/gen-*/`` with a manifest and CURRENT.

Why: knowledge search scores every section's vector exactly, which grows linearly (about 0.2 s at 2,500
sections on two cores, seconds at 100k). Past ``ANN_MIN_SECTIONS`` published sections, the nightly chain (after
it has embedded the sections, ``index.vectors.embed_sections``) publishes an HNSW index of their vectors and
knowledge search asks it for the nearest sections instead (``query.kb``). A section published since (approved
today) is not in it yet and is scored exactly beside it, so approving a document makes it searchable at once,
without a rebuild by hand; the next night takes it into the index.

A section is keyed by document, anchor and the hash of its embedded text (``storage.kb_sections.section_key``):
an edited section is a new key, its old vector is dropped. A generation copies the previous one's Chroma folder
(on a Chroma server: its collection) and applies only the changes; nothing is written when the set of keys is unchanged.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import time

import numpy as np

from agentos_mem.kernel.settings import Settings
from agentos_mem.kernel.workspace import Workspace
from agentos_mem.storage.embed_cache import open_cache
from agentos_mem.storage.index_store import WRITE_CHUNK, IndexCorrupt, IndexMissing, IndexStore
from agentos_mem.storage.kb_sections import ANN_COLLECTION, ANN_MIN_SECTIONS, SectionUnit, embed_text, section_key, text_hash


def ann_store(settings: Settings) -> IndexStore:
    return IndexStore(Workspace(settings.home).index_dir / ANN_COLLECTION, chroma_url=settings.chroma_url)


def _keys_digest(keys: list[str]) -> str:
    return hashlib.sha256("\n".join(sorted(keys)).encode("utf-8")).hexdigest()


def publish_section_ann(settings: Settings, units: list[SectionUnit], *, embedder_identity: str, embedder_spec: str,
                        min_sections: int = ANN_MIN_SECTIONS) -> dict:
    """Publish an ANN generation over ``units`` (published sections whose vectors are in the embedding cache) when
    there are at least ``min_sections`` and the set differs from the live one; returns {status, sections, ...}."""
    t0 = time.perf_counter()
    keyed = {section_key(u): u for u in units}
    if len(keyed) < min_sections:
        return {"status": "below", "sections": len(keyed), "min_sections": min_sections}
    store = ann_store(settings)
    digest = _keys_digest(list(keyed))
    with store.lock():
        previous = None
        try:
            live = store.current()
            live.verify()  # a damaged one (or one whose server collection is gone) is not copied: all is written anew
            if live.manifest.get("embedder") == embedder_identity and store.same_vector_store(live):
                previous = live
        except (IndexMissing, IndexCorrupt):
            pass
        if previous is not None and previous.manifest.get("keys_digest") == digest:
            return {"status": "unchanged", "sections": len(keyed), "generation": previous.name}
        old_keys: set[str] = set()
        if previous is not None:
            con = previous.open_units()
            try:
                old_keys = {k for (k,) in con.execute("select id from units where collection=?", [ANN_COLLECTION])}
            finally:
                con.close()
        cache = open_cache(settings)
        try:
            hashes = {k: text_hash(embed_text(keyed[k])) for k in keyed}
            vecs = cache.vectors(embedder_identity, sorted(set(hashes.values())))
        finally:
            cache.close()
        # the embed step runs first; a section it could not embed is searched exactly instead
        missing = [k for k in keyed if hashes[k] not in vecs]
        kept = sorted(k for k in keyed if hashes[k] in vecs)
        added = [k for k in kept if k not in old_keys]
        gone = sorted(old_keys - set(kept))
        build = store.new_build()
        vi = None
        try:
            # the collection written whole, from the cache: never the live one's copy with deletes and upserts
            # (storage.index_store.IndexStore.start_vectors says why)
            vi = store.start_vectors(build)
            vi.create(ANN_COLLECTION, embedder_identity=embedder_identity, embedder_spec=embedder_spec, scope="global")
            for i in range(0, len(kept), WRITE_CHUNK):
                part = kept[i:i + WRITE_CHUNK]
                vi.add(ANN_COLLECTION, part, np.stack([vecs[hashes[k]] for k in part]),
                       [{"kind": "section", "hash": hashes[k], "doc": keyed[k].doc_id} for k in part])
            con = build.open_units(create=True)
            with con:
                con.executemany("insert into units values (?,?,?,?,?,?,?)", [
                    (ANN_COLLECTION, k, "section", k.rsplit("#", 1)[-1], k.rsplit("#", 1)[-1], i, "{}") for i, k in enumerate(kept)])
            con.close()
            count = vi.count(ANN_COLLECTION)
            vi.close()
            vi = None
            if count != len(kept):
                raise IndexCorrupt(f"section index: {count} vectors for {len(kept)} sections")
            build.write_manifest({"embedder": embedder_identity, "embedder_spec": embedder_spec, "keys_digest": _keys_digest(kept),
                                  "collections": {ANN_COLLECTION: {"scope": "global", "user": None, "units": len(kept)}},
                                  "previous": previous.name if previous else None})
            gen = store.publish(build)
            store.prune(keep=2)
        except BaseException:
            if vi is not None:
                if vi.url:  # the build's server collection (a folder's goes with the folder)
                    vi.drop(ANN_COLLECTION)
                vi.close()
            shutil.rmtree(build.path, ignore_errors=True)
            raise
    return {"status": "published", "sections": len(kept), "added": len(added), "removed": len(gone), "not_embedded": len(missing),
            "generation": gen.name, "seconds": round(time.perf_counter() - t0, 3)}


def read_manifest(settings: Settings) -> dict | None:
    """The live section index's manifest (for ``doctor`` and tests), or None when there is none."""
    try:
        return json.loads((ann_store(settings).current().manifest_path).read_text(encoding="utf-8"))
    except (IndexMissing, IndexCorrupt, OSError, ValueError):
        return None

