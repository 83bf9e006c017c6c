"""``index-rebuild``: bring the keyword and vector indexes in step with the cards and facts."""

from __future__ import annotations

import time

from prefect import flow, get_run_logger
from prefect.task_runners import ThreadPoolTaskRunner

from kernel.settings import Settings, load_settings
from kernel.workspace import Workspace
from flows.run_progress import watch
from flows.writers import index_writer, workspace_writer
from tasks import index as t
from tasks.index import embedding_runner  # not a stage: what runs the embedding stage's batches


def rebuild_indexes(settings: Settings, full: bool = False) -> dict:
    """The rebuild's stages as Prefect tasks (inside a flow run), then the run's artifact. One rebuild at a time
    (the index's Prefect limit on every host, the index folder's lock on this one); the snapshot is read under the
    workspace's limit, so no day is half-digested on any host while it is read."""
    t0 = time.perf_counter()
    store = t.index_store(settings)
    with index_writer(settings), store.lock():
        with workspace_writer(settings):
            snap = t.collect_units(settings)
        plan = t.plan_rebuild(settings, snap, full=full)
        if plan.nothing_to_do:
            result = t.unchanged_report(store, snap, plan, t0)
        else:
            tok = t.tokenize_units(settings, snap.units())
            pending = t.texts_to_embed(settings, t.units_to_embed(snap, plan), plan.embedder)
            with embedding_runner(settings) as runner:  # threads, or Dask worker processes (AGENTOS_INDEX_TASK_RUNNER)
                embedded = t.embed_all(settings, pending, runner=runner)
            build_path = t.write_generation(settings, snap, plan)
            pub = t.publish_generation(settings, build_path)
            result = t.rebuilt_report(snap, plan, tok, embedded, pub, t0)
    t.publish_artifact(result)
    get_run_logger().info("index rebuild: %s", t.rebuild_log_line(result))
    for p in result["problems"]:
        get_run_logger().warning("left out of the index: %s", p)
    return result


@flow(name="index-rebuild", log_prints=False, task_runner=ThreadPoolTaskRunner(max_workers=2))
def index_rebuild(full: bool = False) -> dict:
    """Rebuild the keyword (BM25) and vector (Chroma) indexes from the cards and facts.

    Incremental by content hash: only new or changed units are tokenised and embedded, deleted ones leave
    the indexes, and a run with nothing changed writes nothing. The new indexes are built aside and swapped
    in atomically, so queries keep answering from the last complete index.

    Args:
        full: Re-build every unit (vectors still come from the cache when the embedder is the same).
    """
    settings = load_settings()
    Workspace(settings.home).ensure()
    with watch("index-rebuild"):
        return rebuild_indexes(settings, full=full)
