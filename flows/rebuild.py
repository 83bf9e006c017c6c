"""``index-rebuild``: bring the keyword and vector indexes in step with the cards and facts."""

from __future__ import annotations

from prefect import flow
from prefect.task_runners import ThreadPoolTaskRunner

from agentos_mem.kernel.settings import load_settings
from agentos_mem.kernel.workspace import Workspace
from agentos_mem.tasks.run_progress import watch
from agentos_mem.tasks import index as t


@flow(name="index-rebuild", log_prints=False, task_runner=ThreadPoolTaskRunner(max_workers=2))
def index_rebuild(full: bool = False) -> dict:
    """Rebuild the keyword (BM25) and vector (Chroma) indexes from the cards and facts.

    Incremental by content hash: only new or changed units are tokenised and embedded, deleted ones leave
    the indexes, and a run with nothing changed writes nothing. The new indexes are built aside and swapped
    in atomically, so queries keep answering from the last complete index. The published knowledge documents'
    sections the vector cache lacks are embedded too (and their ANN index published), as the nightly does: knowledge
    search never embeds them itself.

    Args:
        full: Re-build every unit (vectors still come from the cache when the embedder is the same).
    """
    settings = load_settings()
    Workspace(settings.home).ensure()
    with watch("index-rebuild"):
        result = t.rebuild_indexes(settings, full=full)
        # after the memory indexes: what knowledge search ranks by keywords until it is embedded (issue 42)
        sections = t.embed_kb_sections(settings)
    return {**result, "sections": sections}
