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
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import secrets
import shutil
import sqlite3
import time
from contextlib import contextmanager
from datetime import datetime, timezone
from pathlib import Path

from kernel.files import atomic_write

FORMAT = 1


class IndexMissing(RuntimeError):
    """No index has been built in this workspace yet."""


class IndexCorrupt(RuntimeError):
    """The live index generation is incomplete or damaged."""


def _digest(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def _files(folder: Path) -> list[Path]:
    return sorted(p for p in folder.rglob("*") if p.is_file())


class Generation:
    def __init__(self, path: Path):
        self.path = Path(path)
        self.name = self.path.name.removeprefix(".build-")
        self._manifest: dict | None = None

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
                self._manifest = json.loads(self.manifest_path.read_text(encoding="utf-8"))
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

    def write_manifest(self, manifest: dict) -> None:
        manifest = {**manifest, "format": FORMAT, "generation": self.name, "complete": True,
                    "files": self.digest_files(), "created_at": datetime.now(timezone.utc).isoformat(timespec="seconds")}
        atomic_write(self.manifest_path, json.dumps(manifest, ensure_ascii=False, indent=1, sort_keys=True), durable=True, prefix=".manifest-")
        self._manifest = manifest

    def verify(self) -> None:
        """Raise IndexCorrupt unless every file the manifest lists is there with its digest."""
        expected = self.manifest.get("files") or {}
        if not self.chroma_dir.is_dir():
            raise IndexCorrupt(f"index generation {self.name}: chroma/ is missing")
        for rel, digest in expected.items():
            p = self.path / rel
            if not p.is_file():
                raise IndexCorrupt(f"index generation {self.name}: {rel} is missing")
            if _digest(p) != digest:
                raise IndexCorrupt(f"index generation {self.name}: {rel} does not match its manifest digest")

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
    def __init__(self, root: Path):
        self.root = Path(root)

    @property
    def current_file(self) -> Path:
        return self.root / "CURRENT"

    def current_name(self) -> str | None:
        try:
            name = self.current_file.read_text(encoding="utf-8").strip()
        except OSError:
            return None
        return name or None

    def current(self) -> Generation:
        name = self.current_name()
        if name is None:
            raise IndexMissing(f"no index in {self.root}: run `agentos rebuild` (or the nightly flow) first")
        gen = Generation(self.root / name)
        if not gen.path.is_dir():
            raise IndexCorrupt(f"CURRENT names {name}, which is not in {self.root}")
        gen.manifest  # noqa: B018  (raises IndexCorrupt when incomplete)
        return gen

    def generations(self) -> list[Generation]:
        return [Generation(p) for p in sorted(self.root.glob("gen-*")) if p.is_dir()]

    def new_build(self) -> Generation:
        stamp = datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%S")
        path = self.root / f".build-gen-{stamp}-{secrets.token_hex(3)}"
        path.mkdir(parents=True)
        return Generation(path)

    def publish(self, build: Generation) -> Generation:
        """Move a finished build into place and point CURRENT at it (the single atomic step)."""
        build.manifest  # noqa: B018
        final = self.root / build.name
        os.replace(build.path, final)
        atomic_write(self.current_file, build.name + "\n", durable=True, prefix=".current-")
        return Generation(final)

    def prune(self, keep: int = 2) -> list[str]:
        """Drop old generations (the live one and the one before it stay, for readers still on it) and
        leftovers of killed builds."""
        live = self.current_name()
        removed = []
        gens = [g for g in self.generations() if g.name != live]
        for g in gens[: max(0, len(gens) - (keep - 1))]:
            shutil.rmtree(g.path, ignore_errors=True)
            removed.append(g.name)
        for p in self.root.glob(".build-*"):
            shutil.rmtree(p, ignore_errors=True)
            removed.append(p.name)
        return removed

    @contextmanager
    def lock(self, wait_s: float = 3600.0):
        """One rebuild at a time (across processes); waits for a running one rather than failing."""
        self.root.mkdir(parents=True, exist_ok=True)
        with open(self.root / ".lock", "a+") as f:
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
