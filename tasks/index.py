"""The index rebuild stages as Prefect tasks. Logic lives in ``index.stages``; these add names and retries.

Embedding is one task per batch of units (not per unit: Prefect's per-task cost must not grow with the
corpus), submitted together so a parallel task runner (threads here, Dask on a cluster) can spread them.
"""

from __future__ import annotations

from contextlib import nullcontext
from functools import partial

from prefect import get_run_logger, task, unmapped
from prefect.cache_policies import NONE
from prefect.task_runners import ThreadPoolTaskRunner

from agentos_mem.index import stages
from agentos_mem.index import vectors
from agentos_mem.index.report import RebuildReport
from agentos_mem.index.stages import RebuildRun, Snapshot
from agentos_mem.kernel import progress
from agentos_mem.kernel.settings import Settings
from agentos_mem.tasks.writers import index_writer, workspace_writer


@task(name="collect-index-units", cache_policy=NONE, retries=1, retry_delay_seconds=2)
def collect_units(settings: Settings, cache: stages.Cache | None = None) -> Snapshot:
    return stages.collect_units(settings, cache)


def collect_step(r: RebuildRun) -> None:
    """Not a task of its own: what the stores are read under (the workspace's limit) is taken first, then the
    ``collect-index-units`` task reads them; its run spans the read alone, so no day is written inside it."""
    stages.collect_step(r, read=collect_units)


@task(name="plan-index-rebuild", cache_policy=NONE)
def plan_step(r: RebuildRun) -> None:
    stages.plan_step(r)


@task(name="tokenize-units", cache_policy=NONE)
def tokenize_step(r: RebuildRun) -> None:
    stages.tokenize_step(r)


@task(name="find-units-to-embed", cache_policy=NONE)
def find_step(r: RebuildRun) -> None:
    stages.find_step(r)


def embed_step(r: RebuildRun) -> None:
    """Not a task of its own: the batches as ``embed-batch`` task runs (each with its retries), on the task runner the
    settings choose (``embedding_runner``)."""
    with embedding_runner(r.settings) as runner:  # threads, or Dask worker processes (AGENTOS_INDEX_TASK_RUNNER)
        r.embedded = embed_all(r.settings, r.pending, r.embedder, runner=runner)


@task(name="embed-batch", cache_policy=NONE, retries=2, retry_delay_seconds=2)
def embed_batch(settings: Settings, batch: list[tuple[str, str]], embedder=None) -> int:
    return stages.embed_batch(settings, batch, embedder)


def embed_all(settings: Settings, pending: list[tuple[str, str]], embedder=None, runner=None) -> int:
    """Map the batches over ``embed_batch`` tasks at once, then wait: the task runner (``runner``, else the flow's)
    decides how many run together and where. Threads share one embedder; a Dask worker process builds its own
    once (``index.stages.process_embedder``), so nothing heavy is pickled to it."""
    if not pending:
        return 0
    # at most EMBED_BATCH texts a batch, and at least one batch per worker: a small rebuild is spread too
    batches = stages.batches(pending, max(1, min(stages.EMBED_BATCH, -(-len(pending) // settings.index_workers))))
    if runner is None or isinstance(runner, ThreadPoolTaskRunner):  # one process: its threads share one embedder
        embedder = embedder or stages.process_embedder(settings)
    params = {"settings": unmapped(settings), "batch": batches, "embedder": unmapped(embedder)}
    futures = runner.map(embed_batch, params) if runner is not None else embed_batch.map(**params)
    # counted here, in the flow's thread, batch by batch in order (a Dask worker process cannot reach this run's
    # sinks); a later batch done early is counted when those before it are
    done = 0
    with progress.stage("embedding", total=len(pending)) as st:
        for f in futures:
            n = f.result()
            done += n
            st.advance(n)
    return done


def _api_env() -> dict[str, str]:
    """The Prefect API this flow run reports to, for the local cluster's worker processes: without it each would
    start a temporary server of its own (the CLI's runs use one) and record its task runs there."""
    from prefect.client.orchestration import get_client

    with get_client(sync_client=True) as client:
        return {"PREFECT_API_URL": str(client.api_url).rstrip("/")}


def _core_share(settings: Settings) -> dict[str, str]:
    """Each local worker's share of this host's cores for the embedder's OpenMP threads: the bundled model uses every
    core by default, so N workers would each start one thread per core and fight over them."""
    import os

    return {"OMP_NUM_THREADS": str(max(1, (os.cpu_count() or 1) // settings.index_workers))}


def embedding_runner(settings: Settings):
    """The task runner the settings choose for the embedding batches (``AGENTOS_INDEX_TASK_RUNNER``): threads in this
    process, or Dask (prefect-dask): a local cluster of ``index_workers`` single-threaded processes, or the
    scheduler at ``AGENTOS_DASK_ADDRESS``. Used as a context manager around ``embed_all``."""
    if settings.index_task_runner == "dask":
        from prefect_dask import DaskTaskRunner

        if settings.dask_address:
            return DaskTaskRunner(address=settings.dask_address)
        return DaskTaskRunner(cluster_class="distributed.LocalCluster",
                              cluster_kwargs={"n_workers": settings.index_workers, "threads_per_worker": 1, "processes": True,
                                              "dashboard_address": ":0", "env": {**_api_env(), **_core_share(settings)}})
    return ThreadPoolTaskRunner(max_workers=settings.index_workers)


@task(name="write-index-generation", cache_policy=NONE, retries=1, retry_delay_seconds=2)
def write_step(r: RebuildRun) -> None:
    stages.write_step(r)


@task(name="publish-index-generation", cache_policy=NONE)
def publish_step(r: RebuildRun) -> None:
    stages.publish_step(r)


# The rebuild's stages as tasks, in ``index.stages.REBUILD_STAGES`` order (by name: that list is the one order).
REBUILD_TASKS = tuple({f.__name__: f for f in (collect_step, plan_step, tokenize_step, find_step, embed_step, write_step,
                                               publish_step)}[s.__name__] for s in stages.REBUILD_STAGES)


def rebuild_stages(settings: Settings, *, full: bool = False, reading=nullcontext) -> dict:
    """One rebuild through ``REBUILD_TASKS`` in order, each task with its own retries, under the index folder's lock
    (one rebuild at a time on this host); the caller holds the index's Prefect limit, ``reading`` is what the collect
    stage holds while it reads the stores. Returns the ``RebuildReport`` dict. What the index-rebuild flow runs, and
    ``nightly`` as its last stage."""
    return stages.RebuildRun(settings, full=full, reading=reading).run(REBUILD_TASKS)


def rebuild_indexes(settings: Settings, full: bool = False) -> dict:
    """The rebuild's stages as Prefect tasks (inside a flow run), then the run's artifact. One rebuild at a time
    (the index's Prefect limit on every host, the index folder's lock on this one); the stores are read under the
    workspace's limit, so no day is half-digested on any host while they are read."""
    with index_writer(settings):
        result = rebuild_stages(settings, full=full, reading=partial(workspace_writer, settings))
    publish_artifact(result)
    get_run_logger().info("index rebuild: %s", rebuild_log_line(result))
    for p in result["problems"]:
        get_run_logger().warning("left out of the index: %s", p)
    return result


@task(name="embed-knowledge-sections", cache_policy=NONE, retries=1, retry_delay_seconds=2)
def embed_kb_sections(settings: Settings) -> dict:
    return vectors.embed_sections(settings)


@task(name="embed-memory-records", cache_policy=NONE, retries=1, retry_delay_seconds=2)
def embed_memory_records(settings: Settings, user: str) -> dict:
    return vectors.embed_records(settings, user)


@task(name="publish-rebuild-artifact", cache_policy=NONE)
def publish_artifact(result: dict) -> str:
    from prefect.artifacts import create_markdown_artifact

    return str(create_markdown_artifact(key="index-rebuild", markdown=RebuildReport.from_dict(result).artifact_markdown(),
                                        description="Last index rebuild"))


# -- plain, not tasks: what the rebuild flow reports --------------------------------------------------------------
def rebuild_log_line(result: dict) -> str:
    return RebuildReport.from_dict(result).log_line()
