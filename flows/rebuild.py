"""``index-rebuild``: bring the keyword and vector indexes in step with the cards and facts."""

from __future__ import annotations

from functools import partial

from prefect import flow, get_run_logger
from prefect.task_runners import ThreadPoolTaskRunner

from kernel.settings import Settings, load_settings
from kernel.workspace import Workspace
from flows.run_progress import watch
from flows.writers import index_writer, workspace_writer
from tasks import index as t


def rebuild_indexes(settings: Settings, full: bool = False) -> dict:
    """The rebuild's stages as Prefect tasks (inside a flow run), then the run's artifact. One rebuild at a time
    (the index's Prefect limit on every host, the index folder's lock on this one); the stores are read under the
    workspace's limit, so no day is half-digested on any host while they are read."""
    with index_writer(settings):
        result = t.rebuild_stages(settings, full=full, reading=partial(workspace_writer, settings))
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
