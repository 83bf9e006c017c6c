"""``cache.db`` beside the index generations: tokens and vectors by text hash (per tokenizer and embedder
identity, so a changed model never mixes vectors), and the parsed unit of each card file by its stat. Only
new or changed texts are ever tokenised or embedded."""

from __future__ import annotations

import json
import sqlite3
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

import numpy as np

from agentos_mem.kernel.workspace import Workspace
from agentos_mem.storage.index_units import Unit
from agentos_mem.storage.guards import database_file


class Cache:
    """``cache.db``: tokens and vectors by text hash (per tokenizer / embedder identity), and the parsed
    unit of each card file by its stat (a card's raw lines are immutable, so its stat decides its unit)."""

    def __init__(self, path: Path):
        self.con = sqlite3.connect(database_file(path), timeout=60, check_same_thread=False)  # never through a link
        self.con.execute("pragma journal_mode=wal")
        self.con.executescript(
            "create table if not exists tokens (tokenizer text, text_hash text, tokens text, primary key (tokenizer, text_hash));"
            "create table if not exists vectors (embedder text, text_hash text, vec blob, primary key (embedder, text_hash));"
            "create table if not exists cards (path text primary key, mtime_ns integer, size integer, unit text);"
            "create table if not exists stamps (name text primary key, value text);")

    def close(self) -> None:
        self.con.close()

    def _get(self, table: str, key_col: str, key: str, hashes: list[str], col: str) -> dict[str, object]:
        out = {}
        for i in range(0, len(hashes), 500):
            chunk = hashes[i:i + 500]
            q = f"select text_hash, {col} from {table} where {key_col}=? and text_hash in ({','.join('?' * len(chunk))})"
            out.update(self.con.execute(q, [key, *chunk]).fetchall())
        return out

    def tokens(self, tokenizer: str, hashes: list[str]) -> dict[str, list[str]]:
        return {h: json.loads(t) for h, t in self._get("tokens", "tokenizer", tokenizer, hashes, "tokens").items()}

    def put_tokens(self, tokenizer: str, items: dict[str, list[str]]) -> None:
        with self.con:
            self.con.executemany("insert or replace into tokens values (?,?,?)",
                                 [(tokenizer, h, json.dumps(t, ensure_ascii=False)) for h, t in items.items()])

    def vectors(self, embedder: str, hashes: list[str]) -> dict[str, np.ndarray]:
        return {h: np.frombuffer(b, dtype=np.float32) for h, b in self._get("vectors", "embedder", embedder, hashes, "vec").items()}

    def put_vectors(self, embedder: str, items: dict[str, list[float]]) -> None:
        with self.con:
            self.con.executemany("insert or replace into vectors values (?,?,?)",
                                 [(embedder, h, np.asarray(v, dtype=np.float32).tobytes()) for h, v in items.items()])

    def stamp(self, name: str) -> dict | None:
        """What a stage noted when it last finished (``put_stamp``), or None. Kept here, beside the vectors it speaks
        of: a cache removed takes it along, so nothing is skipped for vectors that are gone."""
        row = self.con.execute("select value from stamps where name=?", [name]).fetchone()
        try:
            value = json.loads(row[0]) if row else None
        except ValueError:
            return None
        return value if isinstance(value, dict) else None

    def put_stamp(self, name: str, value: dict) -> None:
        with self.con:
            self.con.execute("insert or replace into stamps values (?,?)", [name, json.dumps(value, ensure_ascii=False)])

    def card(self, path: Path, st) -> Unit | None:
        row = self.con.execute("select mtime_ns, size, unit from cards where path=?", [str(path)]).fetchone()
        if row and row[0] == st.st_mtime_ns and row[1] == st.st_size:
            d = json.loads(row[2])
            return Unit(d["id"], d["kind"], d["text"], d["meta"])
        return None

    def put_cards(self, items: list[tuple[Path, object, Unit]]) -> None:
        with self.con:
            self.con.executemany("insert or replace into cards values (?,?,?,?)", [
                (str(p), st.st_mtime_ns, st.st_size, json.dumps({"id": u.id, "kind": u.kind, "text": u.text, "meta": u.meta}, ensure_ascii=False))
                for p, st, u in items])


def open_cache(settings) -> Cache:
    """The workspace's cache (``agent-local/vector_db/cache.db``)."""
    return Cache(Workspace(settings.home).index_dir / "cache.db")


@contextmanager
def cache_for(settings, cache: Cache | None = None) -> Iterator[Cache]:
    """``cache`` when the caller holds the run's cache (a rebuild: opened once for all its stages), else one opened for
    this call alone and closed after it (a stage called by itself: the benchmarks, a test)."""
    if cache is not None:
        yield cache
        return
    own = open_cache(settings)
    try:
        yield own
    finally:
        own.close()
