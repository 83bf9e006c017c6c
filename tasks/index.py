"""The index rebuild stages as Prefect tasks. Logic lives in ``index.stages``; these add names and retries.

Embedding is one task per batch of units (not per unit: Prefect's per-task cost must not grow with the
corpus), submitted together so a parallel task runner (threads here, Dask on a cluster) can spread them.
"""

from __future__ import annotations

from prefect import task
from prefect.cache_policies import NONE

from index import stages
from index import vectors
from index.report import RebuildReport
from index.stages import Plan, Snapshot
from kernel.settings import Settings


@task(name="collect-index-units", cache_policy=NONE, retries=1, retry_delay_seconds=2)
def collect_units(settings: Settings) -> Snapshot:
    return stages.collect_units(settings)


@task(name="plan-index-rebuild", cache_policy=NONE)
def plan_rebuild(settings: Settings, snap: Snapshot, *, full: bool = False, embedder=None) -> Plan:
    return stages.plan_rebuild(settings, snap, full=full, embedder=embedder)


@task(name="tokenize-units", cache_policy=NONE)
def tokenize_units(settings: Settings, units: list) -> dict:
    return stages.tokenize_units(settings, units)


@task(name="find-units-to-embed", cache_policy=NONE)
def texts_to_embed(settings: Settings, units: list, embedder_identity: str) -> list[tuple[str, str]]:
    return stages.texts_to_embed(settings, units, embedder_identity)


@task(name="embed-batch", cache_policy=NONE, retries=2, retry_delay_seconds=2)
def embed_batch(settings: Settings, batch: list[tuple[str, str]], embedder=None) -> int:
    return stages.embed_batch(settings, batch, embedder)


def embed_all(settings: Settings, pending: list[tuple[str, str]], embedder=None) -> int:
    """Submit every batch at once, then wait: the flow's task runner decides how many run together."""
    if not pending:
        return 0
    embedder = embedder or stages.make_settings_embedder(settings)
    futures = [embed_batch.submit(settings, b, embedder) for b in stages.batches(pending)]
    return sum(f.result() for f in futures)


@task(name="write-index-generation", cache_policy=NONE, retries=1, retry_delay_seconds=2)
def write_generation(settings: Settings, snap: Snapshot, plan: Plan) -> str:
    return stages.write_generation(settings, snap, plan)


@task(name="publish-index-generation", cache_policy=NONE)
def publish_generation(settings: Settings, build_path: str) -> dict:
    return stages.publish_generation(settings, build_path)


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
