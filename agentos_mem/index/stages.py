"""The index rebuild, as plain stage functions (tasks/index.py wraps them for Prefect), and ``doctor``.

Stages: collect units from the stores (cards, current facts) -> plan against the live generation's
manifest -> tokenise what is new -> embed what is new, in batches -> write a complete new generation
(Chroma collections written whole from cached vectors, never the live ones patched: ``IndexStore.start_vectors``
says why; BM25 rebuilt from cached tokens) -> publish it atomically. Tokens and vectors are cached by content hash and by tokenizer and
embedder identity, so only new or changed texts are ever tokenised or embedded, a changed embedder
re-embeds everything (vectors are never mixed), and a run where nothing changed writes nothing.
"""

from __future__ import annotations

import json
import os
import shutil
import time
from contextlib import nullcontext
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from agentos_mem.embedders import make_settings_embedder
from agentos_mem.index.report import RebuildReport
from agentos_mem.index.section_ann import ann_store
from agentos_mem.index.units import TurnReader, card_unit, fact_unit
from agentos_mem.kernel import progress
from agentos_mem.kernel.files import UnsafePath, guard
from agentos_mem.kernel.settings import Settings
from agentos_mem.retrieval.tokenize import default_tokenizer
from agentos_mem.kernel.workspace import Workspace
from agentos_mem.storage.guards import workspace_lock
from agentos_mem.retrieval import bilingual, crowd
from agentos_mem.storage.embed_cache import Cache, cache_for, open_cache
from agentos_mem.storage.facts import open_facts
from agentos_mem.storage.index_store import WRITE_CHUNK, Generation, IndexCorrupt, IndexMissing, IndexStore
from agentos_mem.storage.index_units import Unit, collection_name
from agentos_mem.storage.kb_sections import ANN_COLLECTION
from agentos_mem.storage.keyword_index import KeywordIndex, KeywordIndexError
from agentos_mem.storage.raw_archive import RawArchive

EMBED_BATCH = 128


class RebuildError(RuntimeError):
    """The rebuild could not produce a complete generation (the live one stays in place)."""


def index_store(settings: Settings) -> IndexStore:
    return IndexStore(Workspace(settings.home).index_dir, chroma_url=settings.chroma_url)


def server_orphans(settings: Settings) -> dict[str, int]:
    """Collections of this workspace on the Chroma server that no kept generation names (both stores: the memory
    indexes and the knowledge sections'); {} without a server. Raises VectorIndexError when it is unreachable."""
    if not settings.chroma_url:
        return {}
    return {**index_store(settings).orphans(), **ann_store(settings).orphans()}


# -- stage 1: collect -------------------------------------------------------------------------------------


@dataclass
class Snapshot:
    collections: dict[str, dict] = field(default_factory=dict)  # name -> {"scope", "user", "units": [Unit]}
    problems: list[str] = field(default_factory=list)

    def units(self) -> list[Unit]:
        return [u for c in self.collections.values() for u in c["units"]]


def collect_units(settings: Settings, cache: Cache | None = None) -> Snapshot:
    """Every unit the indexes should hold now, read under the workspace lock so no digest is half-seen. ``cache``: the
    rebuild's (None: one for this call).

    An unreadable card is reported (and left out) rather than stopping the rebuild.
    """
    ws = Workspace(settings.home)
    snap = Snapshot()
    with cache_for(settings, cache) as cache:
        with workspace_lock(settings.home):
            store = open_facts(settings)
            try:
                fact_users = [r[0] for r in store.db.execute("select distinct user_id from facts order by user_id").fetchall()]
                facts_by_user = {u: store.current(u, stale=True) for u in fact_users}  # past expiry: still found, flagged at read
            finally:
                store.close()
            # A card folder or card that is a link (cards/bob -> cards/alice) or a FIFO is never indexed: named in
            # the rebuild's problems, the rest goes on (kernel.files.Below).
            below = guard(ws.cards_dir)
            try:
                user_dirs, refused = below.files(ws.cards_dir, dirs=True)
            except UnsafePath as e:
                user_dirs, refused = [], [e]
            card_users = sorted(p.name for p in user_dirs if os.path.isdir(p))
            turns = TurnReader(RawArchive(ws.raw_dir), settings.timezone)
            fresh = []
            users = sorted(set(fact_users) | set(card_users))
            cards: dict[str, list[Path]] = {}
            for user in users:
                try:
                    cards[user], bad = below.files(ws.cards_dir / user, ".md") if user in card_users else ([], [])
                except UnsafePath as e:
                    cards[user], bad = [], [e]
                refused += bad
            reading = progress.stage("reading cards", total=sum(len(v) for v in cards.values()))
            for user in users:
                units: list[Unit] = []
                for path in cards[user]:
                    reading.advance()
                    st = path.stat()
                    unit = cache.card(path, st)
                    if unit is None:
                        try:
                            unit = card_unit(path, turns)
                        except ValueError as e:
                            snap.problems.append(str(e))
                            continue
                        fresh.append((path, st, unit))
                    units.append(unit)
                units.extend(fact_unit(r) for r in facts_by_user.get(user, []))
                snap.collections[collection_name("local", user)] = {"scope": "local", "user": user, "units": units}
            reading.finish()
            snap.problems.extend(str(e) for e in refused)
            cache.put_cards(fresh)
    return snap


# -- stage 2: plan ----------------------------------------------------------------------------------------


@dataclass
class Plan:
    full: bool
    reason: str
    embedder: str
    embedder_spec: str
    tokenizer: str
    previous: str | None  # the live generation the plan compared with (None: a full build)
    changed: dict[str, list[str]] = field(default_factory=dict)  # collection -> unit ids new or changed
    deleted: dict[str, list[str]] = field(default_factory=dict)  # collection -> unit ids gone
    dropped_collections: list[str] = field(default_factory=list)
    orphans: list[str] = field(default_factory=list)  # server collections left behind, deleted when this build is published

    @property
    def nothing_to_do(self) -> bool:
        return (not self.full and not any(self.changed.values()) and not any(self.deleted.values()) and not self.dropped_collections
                and not self.orphans)

    def summary(self) -> dict:
        return {"full": self.full, "reason": self.reason, "previous": self.previous,
                "changed": sum(len(v) for v in self.changed.values()), "deleted": sum(len(v) for v in self.deleted.values())}


def live_units(gen: Generation) -> dict[str, dict[str, str]]:
    """collection -> unit id -> hash, as the generation recorded them."""
    con = gen.open_units()
    try:
        out: dict[str, dict[str, str]] = {}
        for coll, uid, h in con.execute("select collection, id, hash from units"):
            out.setdefault(coll, {})[uid] = h
        return out
    finally:
        con.close()


def plan_rebuild(settings: Settings, snap: Snapshot, *, full: bool = False, embedder=None) -> Plan:
    embedder = embedder or make_settings_embedder(settings)
    tokenizer = default_tokenizer(settings.home).identity
    store = index_store(settings)
    prev = None
    reason = "requested" if full else ""
    try:
        gen = store.current()
        gen.verify()
        # what it is read as, not only its files: an incremental build, or none when nothing changed, would keep a
        # live generation every query calls damaged (its Chroma file has no digest); over a damaged one it builds in full
        if not full:
            gen.check_readable()
        prev = gen
    except IndexMissing:
        full, reason = True, "no index yet"
    except IndexCorrupt as e:
        full, reason = True, f"live index damaged ({e})"
    if prev is not None and not full:
        man = prev.manifest
        if man.get("embedder") != embedder.identity:
            full, reason = True, f"embedder changed: {man.get('embedder')} -> {embedder.identity}"
        elif man.get("tokenizer") != tokenizer:
            full, reason = True, f"tokenizer changed: {man.get('tokenizer')} -> {tokenizer}"
        elif not store.same_vector_store(prev):
            full, reason = True, f"vector store changed: {_where(man.get('vector_store'))} -> {_where(settings.chroma_url)}"
    plan = Plan(full=full, reason=reason or "incremental", embedder=embedder.identity, embedder_spec=settings.embedder,
                tokenizer=tokenizer, previous=None if full else prev.name)
    old = live_units(prev) if prev is not None and not full else {}
    for name, coll in snap.collections.items():
        have = old.get(name, {})
        now = {u.id: u.hash for u in coll["units"]}
        plan.changed[name] = [uid for uid, h in now.items() if have.get(uid) != h]
        plan.deleted[name] = [uid for uid in have if uid not in now]
    plan.dropped_collections = [name for name in old if name not in snap.collections]
    if settings.chroma_url and not full:
        # lazy: storage.vector_index pulls chromadb (~1 s): only when this runs
        from agentos_mem.storage.vector_index import VectorIndexError

        try:  # publishing a generation sweeps them, so a run that would change nothing else still runs
            plan.orphans = sorted(server_orphans(settings))
        except VectorIndexError:
            pass  # the server is down: writing the generation fails and says so
        if plan.orphans and plan.reason == "incremental" and not any(plan.changed.values()) and not any(plan.deleted.values()):
            plan.reason = f"{len(plan.orphans)} orphan server collection(s) to delete"
    return plan


def _where(vector_store) -> str:
    if isinstance(vector_store, dict):
        vector_store = vector_store.get("url")
    return f"Chroma server {vector_store}" if vector_store else "embedded"


# -- stage 3: tokenise ------------------------------------------------------------------------------------


def tokenize_units(settings: Settings, units: list[Unit], cache: Cache | None = None) -> dict:
    """Tokens for every unit's text, computed only for texts the cache does not hold yet."""
    tk = default_tokenizer(settings.home)
    with cache_for(settings, cache) as cache:
        hashes = sorted({u.text_hash for u in units})
        have = cache.tokens(tk.identity, hashes)
        todo = {u.text_hash: u.text for u in units if u.text_hash not in have}
        fresh = {h: tk.tokens(t) for h, t in progress.track(todo.items(), "tokenizing", total=len(todo))}
        cache.put_tokens(tk.identity, fresh)
    return {"tokenized": len(fresh), "cached": len(have)}


# -- stage 4: embed ---------------------------------------------------------------------------------------


def texts_to_embed(settings: Settings, units: list[Unit], embedder_identity: str,
                   cache: Cache | None = None) -> list[tuple[str, str]]:
    """(embed-text hash, embed text) of units whose vectors the cache lacks, deduplicated."""
    with cache_for(settings, cache) as cache:
        keyed = {embed_key(u): u.embed_text for u in units}
        have = cache.vectors(embedder_identity, sorted(keyed))
    return [(h, t) for h, t in keyed.items() if h not in have]


def embed_key(unit: Unit) -> str:
    """The key of a unit's vector in the cache: its embed text's hash (``Unit.embed_hash``)."""
    return unit.embed_hash


_process_embedders: dict[tuple, object] = {}


def process_embedder(settings: Settings):
    """The settings' embedder, built once per process: a task runner's worker process (Dask) loads the model for its
    first batch and keeps it for the rest, instead of loading it per batch or receiving it pickled."""
    key = (settings.embedder, settings.embedder_api_key)
    if key not in _process_embedders:
        _process_embedders[key] = make_settings_embedder(settings)
    return _process_embedders[key]


def embed_batch(settings: Settings, batch: list[tuple[str, str]], embedder=None) -> int:
    """Embed one batch and store the vectors in the cache (so a killed run keeps what it paid for). Without
    ``embedder``: this process's (``process_embedder``)."""
    if not batch:
        return 0
    embedder = embedder or process_embedder(settings)
    vectors = embedder.embed_documents([t for _, t in batch])
    # its own connection, not the run's: a batch runs on a task runner's thread beside others, or in a Dask worker
    # process, and each commit of a batch must be its own
    cache = open_cache(settings)
    try:
        cache.put_vectors(embedder.identity, {h: v for (h, _), v in zip(batch, vectors)})
    finally:
        cache.close()
    return len(batch)


def batches(items: list, size: int = EMBED_BATCH) -> list[list]:
    return [items[i:i + size] for i in range(0, len(items), size)]


# -- stage 5: write a generation --------------------------------------------------------------------------


def write_generation(settings: Settings, snap: Snapshot, plan: Plan, cache: Cache | None = None) -> str:
    """Build the complete new generation in a temporary folder; returns its build path. ``cache``: the rebuild's
    (None: one for this call)."""
    with cache_for(settings, cache) as cache:
        return _write_generation(settings, snap, plan, cache)


def _write_generation(settings: Settings, snap: Snapshot, plan: Plan, cache: Cache) -> str:
    store = index_store(settings)
    build = store.new_build()
    vi = None
    try:
        vi = store.start_vectors(build)  # empty: the vectors are written whole, from the cache (start_vectors says why)
        con = build.open_units(create=True)
        collections = {}
        writing = progress.stage("writing the index", total=len(snap.units()))
        for name, coll in snap.collections.items():
            units = coll["units"]
            vi.create(name, embedder_identity=plan.embedder, embedder_spec=plan.embedder_spec, scope=coll["scope"])
            for i in range(0, len(units), WRITE_CHUNK):  # a chunk's vectors in memory at a time, not the corpus's
                part = units[i:i + WRITE_CHUNK]
                keys = [u.embed_hash for u in part]
                vecs = cache.vectors(plan.embedder, sorted(set(keys)))
                missing = [u.id for u, k in zip(part, keys) if k not in vecs]
                if missing:
                    raise RebuildError(f"{len(missing)} units have no vector for {plan.embedder} (first: {missing[0]}); the embed stage did not finish")
                vi.add(name, [u.id for u in part], np.stack([vecs[k] for k in keys]),
                       [{"kind": u.kind, "hash": u.hash, "user": coll["user"] or ""} for u in part])
            toks = cache.tokens(plan.tokenizer, sorted({u.text_hash for u in units}))
            missing = [u.id for u in units if u.text_hash not in toks]
            if missing:
                raise RebuildError(f"{len(missing)} units have no tokens (first: {missing[0]}); the tokenize stage did not finish")
            KeywordIndex.build([u.id for u in units], [toks[u.text_hash] for u in units]).save(build.keyword_dir(name))
            with con:
                con.executemany("insert into units values (?,?,?,?,?,?,?)", [
                    (name, u.id, u.kind, u.hash, u.text_hash, i, json.dumps(u.meta, ensure_ascii=False)) for i, u in enumerate(units)])
            count = vi.count(name)
            if count != len(units):
                raise RebuildError(f"collection {name}: {count} vectors for {len(units)} units")
            collections[name] = {"scope": coll["scope"], "user": coll["user"], "units": len(units),
                                  "kinds": {k: sum(1 for u in units if u.kind == k) for k in sorted({u.kind for u in units})}}
            writing.advance(len(units))
        writing.finish()
        con.close()
        vi.close()
        vi = None
        build.write_manifest({"embedder": plan.embedder, "embedder_spec": plan.embedder_spec, "tokenizer": plan.tokenizer,
                              "collections": collections, "previous": plan.previous, "reason": plan.reason})
        return str(build.path)
    except BaseException:
        if vi is not None:
            if vi.url:  # the build's server collections (a folder's go with the folder)
                try:
                    for name in vi.names():
                        vi.drop(name)
                except Exception:
                    pass  # the server is down: the next publish deletes them as orphans
            vi.close()
        shutil.rmtree(build.path, ignore_errors=True)
        raise


# -- stage 6: publish -------------------------------------------------------------------------------------


def publish_generation(settings: Settings, build_path: str) -> dict:
    store = index_store(settings)
    build = store.generation(Path(build_path))
    build.verify()
    gen = store.publish(build)
    removed = store.prune(keep=2)  # with their server collections, and this store's orphans
    if settings.chroma_url:
        ann = ann_store(settings)
        try:
            with ann.lock(wait_s=60):  # not while a section index is being published (its build is not an orphan)
                ann.delete_orphans()
        except Exception:
            pass  # doctor keeps listing them
    # The dictionary the read path bridges languages with (retrieval.bilingual) is built here once, so a query
    # process only opens it: building it costs ~3 s and ~120 MB that a warm query process would keep.
    bilingual.prepare(Workspace(settings.home).runtime)
    # The stand-in crowd the memory query's gate reads in a small memory (query.ask.crowd_matches): the default
    # embedder's ships with the package; another embedder's is embedded here once per workspace (~6 s), so a query
    # process only reads it. The embedder loads only when it is missing.
    model: list = []  # made on the first question only: a file already there, or made earlier in this process, needs none

    def made():
        model[:] = model or [make_settings_embedder(settings)]
        return model[0]

    crowd.prepare(Workspace(settings.home).runtime, settings.embedder, lambda texts: made().embed_documents(texts),
                  lambda text: made().embed_query(text))
    return {"generation": gen.name, "pruned": removed}


# -- the rebuild's stages, in their one order ---------------------------------------------------------------


class RebuildRun:
    """One rebuild on its way through ``REBUILD_STAGES``: what each stage hands the next. ``reading``: what the collect
    stage holds while it reads the stores (the flow: the workspace's Prefect limit, so no day is half-digested on any
    host while they are read); ``embedder``: the model to embed with (None: the settings' own, built once a process).

    A plain class, not a dataclass: Prefect walks a task's dataclass arguments field by field, and a snapshot holds
    every unit of the corpus."""

    def __init__(self, settings: Settings, *, full: bool = False, embedder=None, reading=nullcontext):
        self.settings, self.full, self.embedder, self.reading = settings, full, embedder, reading
        self.t0 = time.perf_counter()
        self.store = index_store(settings)
        self.cache: Cache | None = None  # cache.db, open for the run's stages (``run``)
        self.snap: Snapshot | None = None
        self.plan: Plan | None = None
        self.tok: dict = {}
        self.pending: list[tuple[str, str]] = []
        self.embedded = 0
        self.build_path: str | None = None
        self.pub: dict = {}

    @property
    def unchanged(self) -> bool:
        """The plan found nothing to do: the stages after it do not run, and nothing is written."""
        return self.plan is not None and self.plan.nothing_to_do

    def run(self, steps) -> dict:
        """``steps`` (``REBUILD_STAGES``, or their tasks) in order under the index folder's lock (one rebuild at a time
        on this host), none after a plan that finds nothing to do; the run's report."""
        with self.store.lock(), cache_for(self.settings) as self.cache:  # one cache.db connection for every stage
            try:
                for step in steps:
                    if self.unchanged:
                        break
                    step(self)
            finally:
                self.cache = None
        return self.report()

    def report(self) -> dict:
        """The run's ``RebuildReport`` as a dict (what ``rebuild``, the flow and the CLI return)."""
        if self.unchanged:
            return unchanged_report(self.store, self.snap, self.plan, self.t0)
        return rebuilt_report(self.snap, self.plan, self.tok, self.embedded, self.pub, self.t0)


def collect_step(r: RebuildRun, read=collect_units) -> None:
    """``read``: the collect stage, plain or as a task; it runs once ``r.reading`` is held (a task run that is the read
    alone, never the wait for the limit)."""
    with r.reading():
        r.snap = read(r.settings, r.cache)


def plan_step(r: RebuildRun) -> None:
    r.plan = plan_rebuild(r.settings, r.snap, full=r.full, embedder=r.embedder)


def tokenize_step(r: RebuildRun) -> None:
    r.tok = tokenize_units(r.settings, r.snap.units(), r.cache)


def find_step(r: RebuildRun) -> None:
    # every unit, not only the plan's changes: a generation's vectors are written whole from the cache, so a vector the
    # cache lost (cache.db deleted, a unit unchanged since) is made again here instead of failing the write
    r.pending = texts_to_embed(r.settings, r.snap.units(), r.plan.embedder, r.cache)


def embed_step(r: RebuildRun) -> None:
    r.embedded = embed_all(r.settings, r.pending, r.embedder)


def write_step(r: RebuildRun) -> None:
    r.build_path = write_generation(r.settings, r.snap, r.plan, r.cache)


def publish_step(r: RebuildRun) -> None:
    r.pub = publish_generation(r.settings, r.build_path)


# The order of the rebuild's stages: the one list ``rebuild`` and the index-rebuild flow (through
# ``tasks.index.REBUILD_TASKS``) follow. A run whose plan finds nothing to do stops after the plan.
REBUILD_STAGES = (collect_step, plan_step, tokenize_step, find_step, embed_step, write_step, publish_step)


def rebuild(settings: Settings, *, full: bool = False, embedder=None) -> dict:
    """Bring the indexes in step with the stores: ``REBUILD_STAGES`` in order as plain calls, under the index
    folder's lock (one rebuild at a time on this host). Returns the ``RebuildReport`` dict."""
    return RebuildRun(settings, full=full, embedder=embedder).run(REBUILD_STAGES)


def unchanged_report(store: IndexStore, snap: Snapshot, plan: Plan, t0: float) -> dict:
    return RebuildReport(status="unchanged", generation=store.current_name(), units=len(snap.units()), problems=snap.problems,
                         **plan.summary(), seconds=round(time.perf_counter() - t0, 3)).to_dict()


def rebuilt_report(snap: Snapshot, plan: Plan, tok: dict, embedded: int, pub: dict, t0: float) -> dict:
    return RebuildReport(status="rebuilt", generation=pub["generation"], pruned=pub["pruned"], units=len(snap.units()),
                         embedded=embedded, tokenized=tok["tokenized"], problems=snap.problems, **plan.summary(),
                         seconds=round(time.perf_counter() - t0, 3)).to_dict()


def embed_all(settings: Settings, pending: list[tuple[str, str]], embedder=None) -> int:
    embedder = embedder or (make_settings_embedder(settings) if pending else None)
    done = 0
    with progress.stage("embedding", total=len(pending)) as st:
        for b in batches(pending):
            done += embed_batch(settings, b, embedder)
            st.advance(len(b))
    return done


# -- doctor -----------------------------------------------------------------------------------------------


def doctor(settings: Settings, *, viewer: str | None = None) -> dict:
    """Compare the stores with the live indexes: ids, counts, hashes, embedder and tokenizer identity.

    Returns {"ok": bool, "drift": [lines], "generation": ..., "counts": ...}; never changes anything. With a
    ``viewer`` (the CLI passes the caller), drift lines name unit ids (card ids carry a card's keywords) only for
    the viewer's own collection and the shared ones: another user's drift is counted, never itemised.
    """
    # lazy: storage.vector_index pulls chromadb (~1 s): only when this runs
    from agentos_mem.storage.vector_index import VectorIndexError

    drift: list[str] = []
    store = index_store(settings)
    server, warnings = server_checks(settings)
    try:
        gen = store.current()
        gen.verify()
        gen.check_readable()  # the live generation read as a query reads it (its Chroma file has no digest)
    except (IndexMissing, IndexCorrupt) as e:
        return {"ok": False, "generation": store.current_name(), "drift": [*server, str(e)], "warnings": warnings, "counts": {}}
    drift += server
    man = gen.manifest
    if not store.same_vector_store(gen):
        drift.append(f"vector store: index in {_where(man.get('vector_store'))}, settings say {_where(settings.chroma_url)} "
                     "(the next rebuild writes it there in full)")
    embedder = make_settings_embedder(settings)
    if man.get("embedder") != embedder.identity:
        drift.append(f"embedder: index built with {man.get('embedder')}, settings say {embedder.identity} (next rebuild re-embeds everything)")
    tokenizer = default_tokenizer(settings.home).identity
    if man.get("tokenizer") != tokenizer:
        drift.append(f"tokenizer: index built with {man.get('tokenizer')}, now {tokenizer}")
    snap = collect_units(settings)
    drift += [f"unreadable: {p}" for p in snap.problems]
    indexed = live_units(gen)
    counts = {}
    vi = gen.open_vectors()
    try:
        for name in sorted(set(snap.collections) | set(indexed)):
            coll = snap.collections.get(name, {"user": (man["collections"].get(name) or {}).get("user"), "units": []})
            label = f"{coll.get('user')} ({name})"
            itemise = viewer is None or coll.get("user") in (None, viewer)
            now = {u.id: u.hash for u in coll["units"]}
            have = indexed.get(name, {})
            new = [i for i in now if i not in have]
            gone = [i for i in have if i not in now]
            changed = [i for i in now if i in have and have[i] != now[i]]
            for what, ids in (("not indexed", new), ("indexed but gone from the stores", gone), ("changed since indexed", changed)):
                if ids:
                    drift.append(f"{label}: {len(ids)} unit(s) {what}" + (f": {', '.join(sorted(ids)[:5])}{' ...' if len(ids) > 5 else ''}"
                                                                          if itemise else ""))
            try:
                kw = KeywordIndex.load(gen.keyword_dir(name)) if name in indexed else None
                kw_ids = set(kw.ids) if kw else set()
            except KeywordIndexError as e:
                drift.append(str(e))
                kw_ids = set()
            if name in indexed and kw_ids != set(have):
                drift.append(f"{label}: keyword index holds {len(kw_ids)} ids, manifest {len(have)}")
            try:
                vec = vi.hashes(name) if name in indexed else {}
            except VectorIndexError as e:
                drift.append(str(e))
                vec = {}
            if name in indexed and vec != have:
                bad = sorted(i for i in set(vec) | set(have) if vec.get(i) != have.get(i))
                drift.append(f"{label}: vector index differs from the manifest for {len(bad)} unit(s)" + (f": {', '.join(bad[:5])}" if itemise else ""))
            if name in indexed and (vi.embedder_of(name) or man.get("embedder")) != man.get("embedder"):
                drift.append(f"{label}: vector collection records embedder {vi.embedder_of(name)}, manifest {man.get('embedder')}")
            counts[name] = {"user": coll.get("user"), "stores": len(now), "manifest": len(have), "keyword": len(kw_ids), "vector": len(vec)}
    finally:
        vi.close()
    drift += section_ann_drift(settings, embedder.identity, counts)
    return {"ok": not drift, "generation": gen.name, "embedder": man.get("embedder"), "tokenizer": man.get("tokenizer"),
            "drift": drift, "warnings": warnings, "counts": counts}


def server_checks(settings: Settings) -> tuple[list[str], list[str]]:
    """With a Chroma server: (drift, warnings). Drift: the server does not answer its heartbeat. Warnings: collections
    of this workspace that no kept generation names (they take space, nothing reads them)."""
    # lazy: storage.vector_index pulls chromadb (~1 s): only when this runs
    from agentos_mem.storage.vector_index import VectorIndexError, server_client

    if not settings.chroma_url:
        return [], []
    try:
        client = server_client(settings.chroma_url)
        try:
            client.heartbeat()
        except Exception as e:
            raise VectorIndexError(f"Chroma server {settings.chroma_url} unreachable ({type(e).__name__}: {e})") from e
        finally:
            client.close()
        orphans = server_orphans(settings)
    except VectorIndexError as e:
        return [f"{e}: start it "
                "(`chroma run --path <folder> --host 127.0.0.1 --port <port>`) or unset AGENTOS_CHROMA_URL and run `agentos rebuild`"], []
    if not orphans:
        return [], []
    names = sorted(orphans)
    return [], [f"{len(names)} orphan collection(s) of this workspace on the Chroma server ({sum(orphans.values())} vectors), named "
                f"by no kept index generation: {', '.join(names[:3])}{' ...' if len(names) > 3 else ''}; `agentos rebuild` deletes them"]


def section_ann_drift(settings: Settings, embedder_identity: str, counts: dict) -> list[str]:
    """The knowledge sections' ANN index (index/section_ann.py), when there is one: complete, readable, of the
    settings' embedder. Sections approved since it was published are not drift: search scores them exactly."""
    # lazy: storage.vector_index pulls chromadb (~1 s): only when this runs
    from agentos_mem.storage.vector_index import VectorIndexError

    store = ann_store(settings)
    if store.current_name() is None:
        return []
    try:
        gen = store.current()
        gen.verify()
        want = gen.manifest["collections"][ANN_COLLECTION]["units"]
        vi = gen.open_vectors()
        try:
            have = vi.count(ANN_COLLECTION)
        finally:
            vi.close()
    except (IndexMissing, IndexCorrupt, VectorIndexError, KeyError) as e:
        return [f"knowledge section index: {e} (knowledge search is exact until the next nightly embedding rebuilds it)"]
    counts[ANN_COLLECTION] = {"user": None, "manifest": want, "vector": have}
    out = []
    if have != want:
        out.append(f"knowledge section index: {have} vectors, manifest says {want}")
    if gen.manifest.get("embedder") != embedder_identity:
        out.append(f"knowledge section index built with {gen.manifest.get('embedder')}, settings say {embedder_identity} "
                   "(not used until the next nightly embedding rebuilds it)")
    return out
