"""Index generations: the keyword and vector indexes of one rebuild, swapped in together, atomically.

Layout under ``agent-local/vector_db/``::

    CURRENT                 name of the live generation (replaced with os.replace: atomic)
    gen-<stamp>-<hex>/      one complete generation
        units.db            unit id, kind, content hashes, metadata, BM25 document number, per collection
        keyword/<collection>/   bm25s folder (memory-mapped on load)
        chroma/             Chroma persistent folder, one collection per scope
        manifest.json       written last: identities, counts, a digest of every file
    .build-<name>/          a build in progress (or one killed half-way: never read, removed later)
    cache.db                tokens and vectors by content hash, and card-file stat cache (see index.stages)
    .lock                   one rebuild at a time

Because a generation is written in full before ``CURRENT`` names it, a query during a rebuild, or after
a rebuild killed half-way, reads the last complete generation. A reader checks the manifest's file
digests before serving a generation it has not seen, so a damaged one is detected, never served.

With a Chroma server (``AGENTOS_CHROMA_URL``) the generation folder has no ``chroma/``: its vectors are the
server collections ``<workspace key>__<generation>__<collection>``, which the manifest names with their counts
(``vector_store`` and each collection's ``server_collection``). The workspace key is this store's folder and
host, hashed, so two workspaces (or users) on one server never share a collection. Everything else holds:
a build writes new collections before CURRENT moves, a reader checks that the collections are there with their
counts before serving them, and pruning a generation deletes its collections (and any left by a killed build).
"""

from __future__ import annotations

import errno
import fcntl
import hashlib
import json
import os
import secrets
import shutil
import socket
import sqlite3
import time
from contextlib import contextmanager
from datetime import datetime, timezone
from pathlib import Path

from agentos_mem.kernel.files import UnsafePath, atomic_write, guard, open_lock
from agentos_mem.storage.health import NoRoom, check, no_room

FORMAT = 1
WRITE_CHUNK = 2048  # records read from the embedding cache and added to a fresh collection at a time (start_vectors)


class IndexMissing(RuntimeError):
    """No index has been built in this workspace yet."""


class IndexCorrupt(RuntimeError):
    """The live index generation is incomplete or damaged."""


def _digest(path: Path) -> str:
    fd = guard(path).open_fd(path)  # never through a link, never blocking on a FIFO
    h = hashlib.sha256()
    with os.fdopen(fd, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def _files(folder: Path) -> list[Path]:
    """The generation's regular files, never through a link (a link put in a generation is not its file: the manifest
    check then finds that file missing)."""
    return guard(folder).tree(folder)[0]


def workspace_key(root: Path) -> str:
    """This store's namespace on a Chroma server: the same folder on the same host always gets the same key."""
    where = f"{socket.gethostname()}\0{Path(root).resolve()}"
    return "agentos-" + hashlib.sha256(where.encode("utf-8")).hexdigest()[:12]


class Generation:
    def __init__(self, path: Path, *, chroma_url: str | None = None, key: str | None = None):
        self.path = Path(path)
        self.name = self.path.name.removeprefix(".build-")
        self._manifest: dict | None = None
        # The server the settings name (None: embedded). A build goes there; a published generation is read
        # from where its manifest says it was written, at this URL when one is set (the server may have moved).
        self.chroma_url = chroma_url
        self.key = key

    @property
    def units_db(self) -> Path:
        return self.path / "units.db"

    @property
    def chroma_dir(self) -> Path:
        return self.path / "chroma"

    def keyword_dir(self, collection: str) -> Path:
        return self.path / "keyword" / collection

    @property
    def manifest_path(self) -> Path:
        return self.path / "manifest.json"

    @property
    def manifest(self) -> dict:
        if self._manifest is None:
            try:
                self._manifest = json.loads(guard(self.manifest_path).read_bytes(self.manifest_path))
            except (OSError, ValueError) as e:
                raise IndexCorrupt(f"index generation {self.name}: manifest.json missing or unreadable ({e})") from e
            if self._manifest.get("format") != FORMAT or not self._manifest.get("complete"):
                raise IndexCorrupt(f"index generation {self.name}: manifest is not a complete format-{FORMAT} manifest")
        return self._manifest

    def digest_files(self) -> dict[str, str]:
        """sha256 of every file except the manifest and Chroma's folder (Chroma rewrites its own files when
        opened; it is checked by counts and hashes of its entries instead)."""
        out = {}
        for p in _files(self.path):
            rel = p.relative_to(self.path).as_posix()
            if rel == "manifest.json" or rel.startswith("chroma/"):
                continue
            out[rel] = _digest(p)
        return out

    @property
    def server_prefix(self) -> str:
        return f"{self.key}__{self.name}__"

    def vector_store(self) -> dict | None:
        """{"url", "key", "prefix"} when the vectors are on a Chroma server, None when they are in ``chroma/``.
        A build answers from its settings; a written generation from its manifest."""
        if self._manifest is not None or self.manifest_path.is_file():
            vs = self.manifest.get("vector_store")
            return {**vs, "url": self.chroma_url or vs["url"]} if vs else None
        return {"url": self.chroma_url, "key": self.key, "prefix": self.server_prefix} if self.chroma_url else None

    def open_vectors(self):
        # lazy: storage.vector_index pulls chromadb (~1 s): only when this runs
        from agentos_mem.storage.vector_index import VectorIndex, VectorIndexError

        vs = self.vector_store()
        if vs:
            return VectorIndex(url=vs["url"], prefix=vs["prefix"])
        try:
            return VectorIndex(self.chroma_dir)
        except VectorIndexError as e:
            # Chroma writes its SQLite file whenever it opens it (a row of ``acquire_write``), so on a full disk even a
            # read cannot open it: "database or disk is full" is no room, never damage (a reader would say damaged)
            line = no_room(e, self.chroma_dir)
            if line:
                raise NoRoom(errno.ENOSPC, line) from e
            raise

    def server_collections(self) -> list[str]:
        """The server collections this generation's manifest names (none for an embedded one)."""
        if not self.manifest.get("vector_store"):
            return []
        return sorted(c["server_collection"] for c in (self.manifest.get("collections") or {}).values())

    def write_manifest(self, manifest: dict) -> None:
        vs = self.vector_store()
        if vs:
            manifest = {**manifest, "vector_store": vs, "collections": {
                name: {**c, "server_collection": vs["prefix"] + name} for name, c in manifest.get("collections", {}).items()}}
        manifest = {**manifest, "format": FORMAT, "generation": self.name, "complete": True,
                    "files": self.digest_files(), "created_at": datetime.now(timezone.utc).isoformat(timespec="seconds")}
        atomic_write(self.manifest_path, json.dumps(manifest, ensure_ascii=False, indent=1, sort_keys=True), durable=True, prefix=".manifest-")
        self._manifest = manifest

    def verify(self) -> None:
        """Raise IndexCorrupt unless every file the manifest lists is there with its digest."""
        expected = self.manifest.get("files") or {}
        if self.manifest.get("vector_store"):
            self.verify_server()
        elif not self.chroma_dir.is_dir():
            raise IndexCorrupt(f"index generation {self.name}: chroma/ is missing")
        for rel, digest in expected.items():
            p = self.path / rel
            if not guard(p).is_file(p):
                raise IndexCorrupt(f"index generation {self.name}: {rel} is missing")
            if _digest(p) != digest:
                raise IndexCorrupt(f"index generation {self.name}: {rel} does not match its manifest digest")

    def check_readable(self) -> None:
        """Raise IndexCorrupt unless the generation's vectors read as a reader reads them: what ``verify`` cannot see,
        since Chroma rewrites its SQLite file whenever it opens it and the manifest holds no digest of it. Embedded, its
        SQLite files pass SQLite's quick check and every collection opens with the manifest's count (on a server,
        ``verify_server`` counts them). A rebuild that found nothing changed kept a live generation every query called
        damaged, naming `agentos rebuild` (issue 42, item 9): the rebuild asks this first and builds in full over it.
        No room to open it raises NoRoom (not damage)."""
        if self.manifest.get("vector_store"):
            return
        for p in sorted(self.chroma_dir.rglob("*.sqlite3")) if self.chroma_dir.is_dir() else []:
            why = check(p)
            if why is not None:
                raise IndexCorrupt(f"index generation {self.name}: {p.relative_to(self.path)} is damaged ({why})")
        try:
            vi = self.open_vectors()
        except NoRoom:
            raise
        except Exception as e:  # noqa: BLE001 - whatever Chroma raises: the generation cannot be read
            raise IndexCorrupt(f"index generation {self.name}: its vectors cannot be read ({type(e).__name__}: {e})") from e
        try:
            for name, info in (self.manifest.get("collections") or {}).items():
                n = vi.count(name)
                if n != info.get("units"):
                    raise IndexCorrupt(f"index generation {self.name}: collection {name} holds {n} vectors, manifest says {info.get('units')}")
        except IndexCorrupt:
            raise
        except Exception as e:  # noqa: BLE001 - as above
            line = no_room(e, self.chroma_dir)
            if line:
                raise NoRoom(errno.ENOSPC, line) from e
            raise IndexCorrupt(f"index generation {self.name}: its vectors cannot be read ({type(e).__name__}: {e})") from e
        finally:
            vi.close()

    def verify_server(self) -> None:
        """Raise IndexCorrupt unless every server collection the manifest names is there with its count and
        embedder (one deleted or emptied behind our back is never served)."""
        # lazy: storage.vector_index pulls chromadb (~1 s): only when this runs
        from agentos_mem.storage.vector_index import VectorIndexError

        if self.key and self.manifest["vector_store"].get("key") != self.key:
            raise IndexCorrupt(f"index generation {self.name}: its server collections belong to another workspace "
                               f"({self.manifest['vector_store'].get('key')}; this one, copied or moved, is {self.key})")
        try:
            vi = self.open_vectors()
        except VectorIndexError as e:
            raise IndexCorrupt(f"index generation {self.name}: {e}") from e
        try:
            for name, info in (self.manifest.get("collections") or {}).items():
                try:
                    n, emb = vi.count(name), vi.embedder_of(name)
                except VectorIndexError as e:
                    raise IndexCorrupt(f"index generation {self.name}: {e}") from e
                if n != info.get("units"):
                    raise IndexCorrupt(f"index generation {self.name}: server collection {info['server_collection']} holds {n} "
                                       f"vectors, manifest says {info.get('units')}")
                if emb != self.manifest.get("embedder"):
                    raise IndexCorrupt(f"index generation {self.name}: server collection {info['server_collection']} records "
                                       f"embedder {emb}, manifest {self.manifest.get('embedder')}")
        finally:
            vi.close()

    # -- units.db -----------------------------------------------------------------------------------
    def open_units(self, create: bool = False) -> sqlite3.Connection:
        if not create and not self.units_db.is_file():
            raise IndexCorrupt(f"index generation {self.name}: units.db is missing")
        con = sqlite3.connect(self.units_db if create else f"file:{self.units_db}?mode=ro", uri=not create, check_same_thread=False)
        if create:
            con.executescript(
                "create table if not exists units (collection text not null, id text not null, kind text not null,"
                " hash text not null, text_hash text not null, doc integer not null, meta text not null,"
                " primary key (collection, id));"
                "create unique index if not exists units_doc on units (collection, doc);")
        return con


class IndexStore:
    def __init__(self, root: Path, chroma_url: str | None = None):
        self.root = Path(root)
        self.chroma_url = chroma_url or None
        self.key = workspace_key(self.root)

    def generation(self, path: Path) -> Generation:
        return Generation(path, chroma_url=self.chroma_url, key=self.key)

    def same_vector_store(self, gen: Generation) -> bool:
        """Whether ``gen``'s vectors live where the settings would write a new build's (an incremental build copies
        them; a move between the embedded folder and a server rebuilds in full). The server is the one the settings
        name, so a server that moved keeps its collections."""
        vs = gen.manifest.get("vector_store")
        return (vs is not None) == bool(self.chroma_url) and (vs is None or vs.get("key") == self.key)

    def start_vectors(self, build: Generation):
        """The build's vector store, opened and empty: its Chroma folder, or on a server its own collections.

        Every generation writes its vectors whole (from the embedding cache), never as a copy of the live one with
        deletes and upserts: Chroma 1.5.9 leaves some live records unreachable by ``query()`` after deletes and
        upserts (chroma-core/chroma#7758; seen here at 52 units, one build in a dozen), a memory no question finds."""
        # lazy: storage.vector_index pulls chromadb (~1 s): only when this runs
        from agentos_mem.storage.vector_index import VectorIndex

        if build.vector_store() is None:
            return VectorIndex(build.chroma_dir)
        return build.open_vectors()

    @property
    def current_file(self) -> Path:
        return self.root / "CURRENT"

    def current_name(self) -> str | None:
        try:
            name = guard(self.current_file).read_text(self.current_file).strip()
        except OSError:
            return None
        return name or None

    def current(self) -> Generation:
        below = guard(self.root)
        try:  # CURRENT or the generation it names as a link (or a FIFO): named, never read
            below.check(self.current_file)
            name = self.current_name()
            if name is not None:
                below.check(self.root / name, "dir")
        except UnsafePath as e:
            raise IndexCorrupt(f"{e}; remove it and run `agentos rebuild`") from None
        if name is None:
            raise IndexMissing(f"no index in {self.root}: run `agentos rebuild` (or the nightly flow) first")
        gen = self.generation(self.root / name)
        if not gen.path.is_dir():
            raise IndexCorrupt(f"CURRENT names {name}, which is not in {self.root}")
        gen.manifest  # noqa: B018  (raises IndexCorrupt when incomplete)
        return gen

    def generations(self) -> list[Generation]:
        return [self.generation(p) for p in sorted(self.root.glob("gen-*")) if p.is_dir() and not p.is_symlink()]

    def new_build(self) -> Generation:
        now = datetime.now(timezone.utc)  # milliseconds: two rebuilds in one second still sort in the order they ran
        stamp = now.strftime("%Y%m%dT%H%M%S") + f"{now.microsecond // 1000:03d}"
        path = self.root / f".build-gen-{stamp}-{secrets.token_hex(3)}"
        path.mkdir(parents=True)
        return self.generation(path)

    def publish(self, build: Generation) -> Generation:
        """Move a finished build into place and point CURRENT at it (the single atomic step)."""
        build.manifest  # noqa: B018
        final = self.root / build.name
        os.replace(build.path, final)
        atomic_write(self.current_file, build.name + "\n", durable=True, prefix=".current-")
        return self.generation(final)

    def prune(self, keep: int = 2) -> list[str]:
        """Drop old generations (the live one and the one before it stay, for readers still on it) and
        leftovers of killed builds, with their server collections."""
        live = self.current_name()
        removed = []
        gens = [g for g in self.generations() if g.name != live]
        for g in gens[: max(0, len(gens) - (keep - 1))]:
            self._drop_server_collections(g)
            shutil.rmtree(g.path, ignore_errors=True)
            removed.append(g.name)
        for p in self.root.glob(".build-*"):
            shutil.rmtree(p, ignore_errors=True)
            removed.append(p.name)
        if self.chroma_url:  # a killed build's collections (no manifest names them), and any others left behind
            try:
                self.delete_orphans()
            except Exception:
                pass  # the server is down: doctor lists what is left, the next rebuild deletes it
        return removed

    def _drop_server_collections(self, gen: Generation) -> None:
        # lazy: storage.vector_index pulls chromadb (~1 s): only when this runs
        from agentos_mem.storage.vector_index import delete_server_collections

        try:  # only this workspace's: a copied workspace's manifests name the original's collections
            names = [n for n in gen.server_collections() if n.startswith(self.key + "__")]
            if names:
                delete_server_collections(gen.vector_store()["url"], names)
        except Exception:
            pass  # an unreadable manifest, or the server is down: the orphan sweep finds them later

    def orphans(self) -> dict[str, int]:
        """Server collections with this store's key that no generation kept here names (a pruned generation's whose
        delete failed, a killed build's, one of a generation folder deleted by hand): name -> count. A build in
        progress is not finished yet, so its collections are not orphans."""
        # lazy: storage.vector_index pulls chromadb (~1 s): only when this runs
        from agentos_mem.storage.vector_index import server_collections

        # builds first: one published meanwhile (.build-X renamed gen-X) is then seen as a generation
        building = {f"{self.key}__{p.name.removeprefix('.build-')}__" for p in self.root.glob(".build-*")}
        named = set()
        for g in self.generations():
            try:
                named.update(g.server_collections())
            except IndexCorrupt:
                pass
        return {n: c for n, c in server_collections(self.chroma_url, self.key + "__").items()
                if n not in named and not any(n.startswith(b) for b in building)}

    def delete_orphans(self) -> list[str]:
        # lazy: storage.vector_index pulls chromadb (~1 s): only when this runs
        from agentos_mem.storage.vector_index import delete_server_collections

        return delete_server_collections(self.chroma_url, sorted(self.orphans()))

    @contextmanager
    def lock(self, wait_s: float = 3600.0):
        """One rebuild at a time (across processes); waits for a running one rather than failing."""
        self.root.mkdir(parents=True, exist_ok=True)
        with os.fdopen(open_lock(self.root / ".lock"), "a+") as f:  # never through a link
            deadline = time.monotonic() + wait_s
            while True:
                try:
                    fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    break
                except BlockingIOError:
                    if time.monotonic() > deadline:
                        raise TimeoutError(f"another rebuild holds {self.root / '.lock'}")
                    time.sleep(0.2)
            try:
                yield
            finally:
                fcntl.flock(f, fcntl.LOCK_UN)
