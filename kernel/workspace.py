"""The workspace (``AGENTOS_HOME``): its folder tree, paths to every store, and ``init``.

``agent-sync/`` is what a user syncs between machines (identity, knowledge, facts, summaries, logs);
``agent-local/`` is private to this machine and rebuildable (raw archive, vector indexes, runtime).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from kernel.templates import core_templates

KNOWLEDGE_DIRS = [
    "00_stream/inbox/knowledge/clipping",
    "00_stream/inbox/knowledge/feed",
    "00_stream/inbox/memory",
    "00_stream/inbox/tools",
    "00_stream/inbox/personal",
    "01_daily",
    *[f"10_concepts/{d}" for d in ("cs", "ai", "finance", "law", "medicine", "physics", "math", "business", "personal-insight")],
    "20_methods",
    "30_facts",
    "40_references",
    "50_resources",
    "60_opinions",
    "90_archive",
    "99_system",
]


@dataclass(frozen=True)
class Workspace:
    home: Path

    @property
    def sync(self) -> Path:
        return self.home / "agent-sync"

    @property
    def local(self) -> Path:
        return self.home / "agent-local"

    @property
    def core(self) -> Path:
        return self.sync / "01_core"

    @property
    def knowledge(self) -> Path:
        return self.sync / "03_knowledge"

    @property
    def memory(self) -> Path:
        return self.sync / "04_memory"

    @property
    def index_dir(self) -> Path:
        """Keyword and vector index generations (storage.index_store), rebuildable from the stores."""
        return self.local / "vector_db"

    @property
    def facts_db(self) -> Path:
        return self.memory / "long_term" / "facts.db"

    @property
    def cards_dir(self) -> Path:
        return self.memory / "cards"

    @property
    def summaries_dir(self) -> Path:
        return self.memory / "daily_summaries"

    @property
    def logs(self) -> Path:
        return self.memory / "logs"

    @property
    def raw_dir(self) -> Path:
        return self.local / "memory" / "raw"

    @property
    def runtime(self) -> Path:
        return self.local / "runtime"

    @property
    def memory_records_dir(self) -> Path:
        """User memory records, one folder per user, one Markdown file per memory (the files backend)."""
        return self.memory / "records"

    @property
    def memory_records_db(self) -> Path:
        """The same records in one SQLite file (the sqlite backend)."""
        return self.memory / "long_term" / "records.db"

    @property
    def memory_proposals_db(self) -> Path:
        """Changes automatic extraction proposes and the user accepts or rejects."""
        return self.memory / "long_term" / "memory_proposals.db"

    def working_dir(self, user: str) -> Path:
        return self.memory / "working" / user

    def exists(self) -> bool:
        return self.core.is_dir() and self.memory.is_dir()

    def ensure(self) -> None:
        """Create every folder of the tree (idempotent; never touches existing files)."""
        dirs = [
            self.core,
            self.sync / "02_skills",
            *[self.knowledge / d for d in KNOWLEDGE_DIRS],
            self.facts_db.parent,
            self.cards_dir,
            self.summaries_dir,
            self.logs,
            self.memory / "working",
            self.memory_records_dir,
            self.raw_dir,
            self.index_dir,  # index generations; the scopes (local, global) are collections inside
            self.local / "materials",
            self.runtime,
        ]
        for d in dirs:
            d.mkdir(parents=True, exist_ok=True)


def init_workspace(home: Path) -> dict:
    """Create the workspace tree and the identity files (``kernel.templates``); the demo adds its logs
    (``demo.init_demo_workspace``).

    Existing files are left as they are: running init twice, or on a synced folder, loses nothing.
    """
    ws = Workspace(Path(home))
    ws.ensure()
    written = []
    for name, text in core_templates().items():
        path = ws.core / name
        if not path.exists():
            path.write_text(text, encoding="utf-8")
            written.append(str(path))
    return {"home": str(ws.home), "templates_written": written, "demo_logs": []}


def kb_paths(settings) -> dict[str, Path]:
    """The knowledge base's paths: the taxonomy root, the inbox, the registry (kb.db), reliability list, ingest log, archive."""
    ws = Workspace(settings.home)
    system = ws.knowledge / "99_system"
    return {"knowledge": ws.knowledge, "inbox": ws.knowledge / "00_stream" / "inbox", "db": system / "kb.db",
            "reliability": system / "reliability.yaml", "log": ws.logs / "kb_ingest.log", "archive": ws.knowledge / "90_archive" / "versions"}


class workspace_lock:
    """An exclusive lock on the workspace's writers (held across one day's digest).

    A scheduled run and a manual CLI run on the same day wait for each other instead of interleaving
    card and summary writes. Released when the process exits, even on a crash.
    """

    def __init__(self, home: Path, name: str = "writer"):
        self.path = Workspace(Path(home)).runtime / f"{name}.lock"

    def __enter__(self):
        import fcntl

        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._f = open(self.path, "a")
        fcntl.flock(self._f, fcntl.LOCK_EX)
        return self

    def __exit__(self, *exc):
        import fcntl

        fcntl.flock(self._f, fcntl.LOCK_UN)
        self._f.close()
