"""Read side of the index generations: the live generation, checked once, then kept open per process.

A long-lived reader (the MCP server) looks at ``CURRENT`` on every call and moves to a new generation
when a rebuild has published one; a generation it has not seen is verified against its manifest first,
so a damaged index raises IndexCorrupt instead of answering from it. A generation whose vectors are on a Chroma
server is read from the server the settings name (``chroma_url``), after checking that every collection its
manifest names is there with its count.
"""

from __future__ import annotations

import json
import threading
from pathlib import Path

from agentos_mem.storage.index_store import Generation, IndexCorrupt, IndexMissing, IndexStore
from agentos_mem.storage.keyword_index import KeywordIndex, KeywordIndexError


class IndexReader:
    def __init__(self, gen: Generation):
        self.gen = gen
        self.manifest = gen.manifest
        self._kw: dict[str, KeywordIndex] = {}
        self._vi = None
        self._units = gen.open_units()
        self._lock = threading.Lock()

    @property
    def name(self) -> str:
        return self.gen.name

    def collections(self) -> dict[str, dict]:
        return self.manifest.get("collections") or {}

    def keyword(self, collection: str) -> KeywordIndex:
        kw = self._kw.get(collection)
        if kw is None:
            try:
                kw = KeywordIndex.load(self.gen.keyword_dir(collection), mmap=True)
            except KeywordIndexError as e:
                raise IndexCorrupt(str(e)) from e
            self._kw[collection] = kw
        return kw

    def vectors(self):
        if self._vi is None:
            # lazy: storage.vector_index pulls chromadb (~1 s): only when this runs
            from agentos_mem.storage.vector_index import VectorIndexError

            try:
                vi = self.gen.open_vectors()
                for name, info in self.collections().items():
                    n = vi.count(name)
                    if n != info.get("units"):
                        raise IndexCorrupt(f"index generation {self.name}: collection {name} holds {n} vectors, manifest says {info.get('units')}")
            except VectorIndexError as e:
                raise IndexCorrupt(str(e)) from e
            self._vi = vi
        return self._vi

    def units(self, collection: str, ids: list[str]) -> dict[str, dict]:
        """Unit id -> {"kind", "hash", "meta"} for the given ids."""
        if not ids:
            return {}
        with self._lock:
            rows = self._units.execute(
                f"select id, kind, hash, meta from units where collection=? and id in ({','.join('?' * len(ids))})", [collection, *ids]).fetchall()
        return {i: {"kind": k, "hash": h, "meta": json.loads(m)} for i, k, h, m in rows}

    def unit_ids(self, collection: str) -> list[str]:
        """Every unit id of ``collection``, in index order."""
        with self._lock:
            return [i for (i,) in self._units.execute("select id from units where collection=? order by doc", [collection])]

    def close(self) -> None:
        self._units.close()
        if self._vi is not None:
            self._vi.close()
            self._vi = None


_readers: dict[str, IndexReader] = {}
_readers_lock = threading.Lock()


def open_reader(root: Path, chroma_url: str | None = None) -> IndexReader:
    """The reader of the live generation under ``root`` (verified the first time this process sees it)."""
    store = IndexStore(root, chroma_url=chroma_url)
    key = str(Path(root).resolve())
    with _readers_lock:
        cached = _readers.get(key)
        if cached is not None and cached.name == store.current_name():
            return cached
        gen = store.current()
        gen.verify()
        reader = IndexReader(gen)
        reader.vectors()  # opens Chroma and checks its counts now, not mid-answer
        if cached is not None:
            cached.close()
        _readers[key] = reader
        return reader


def open_last_good(root: Path, chroma_url: str | None = None) -> IndexReader:
    """A reader of the newest generation that is not the live one and still matches its manifest (the
    rebuild keeps the one before the live one for readers still on it). The read path never repairs a
    damaged live generation; it answers from this one and the next rebuild repairs. Not cached: the live
    generation is looked at again on the next call."""
    store = IndexStore(root, chroma_url=chroma_url)
    live = store.current_name()
    for gen in reversed(store.generations()):
        if gen.name == live:
            continue
        try:
            gen.verify()
            reader = IndexReader(gen)
            reader.vectors()
            return reader
        except IndexCorrupt:
            continue
    raise IndexMissing(f"no intact index generation in {root}: run `agentos rebuild`")


def forget_reader(root: Path) -> None:
    with _readers_lock:
        r = _readers.pop(str(Path(root).resolve()), None)
        if r is not None:
            r.close()
