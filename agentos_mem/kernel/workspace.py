"""The workspace (``AGENTOS_HOME``): its folder tree, paths to every store, and ``init``.

``agent-sync/`` is what a user syncs between machines: only what a person or an agent wrote, and what cannot be
made again (identity files, conversation logs, memory records, knowledge documents and their inbox, the journal of
decisions a person made, a chat model's extraction cache). Never a SQLite file: two machines that each write one
and sync it corrupt it. ``agent-local/`` is this machine's and everything in it is derived from agent-sync (the
fact store, memory cards and daily summaries, the knowledge registry, indexes, caches, operational logs):
``agentos restore`` rebuilds it on a machine that has only agent-sync.

Workspaces made before that split keep their derived stores under agent-sync until a writer runs
(``Workspace.ensure`` moves them; until then every path below finds them where they are).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from agentos_mem.kernel.files import Below
from agentos_mem.kernel.templates import core_templates

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


# The derived stores: property -> (its place, relative to agent-local; where earlier versions kept it, relative to agent-sync).
DERIVED = {"facts_db": ("memory/facts.db", "04_memory/long_term/facts.db"),
           "memory_records_db": ("memory/records.db", "04_memory/long_term/records.db"),
           "memory_proposals_db": ("memory/memory_proposals.db", "04_memory/long_term/memory_proposals.db"),
           "kb_db": ("knowledge/kb.db", "03_knowledge/99_system/kb.db"),
           "cards_dir": ("memory/cards", "04_memory/cards"),
           "summaries_dir": ("memory/daily_summaries", "04_memory/daily_summaries"),
           "logs": ("logs", "04_memory/logs")}


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
    def derived(self) -> Path:
        """The stores made from agent-sync by the nightly stages (and by ``agentos restore``)."""
        return self.local / "memory"

    def _derived(self, name: str) -> Path:
        """The store's place in agent-local, unless this workspace predates the split and still holds it at its old
        place in agent-sync."""
        here, old = self.local / DERIVED[name][0], self.sync / DERIVED[name][1]
        return old if not here.exists() and old.exists() else here

    @property
    def facts_db(self) -> Path:
        return self._derived("facts_db")

    @property
    def cards_dir(self) -> Path:
        return self._derived("cards_dir")

    @property
    def summaries_dir(self) -> Path:
        return self._derived("summaries_dir")

    @property
    def logs(self) -> Path:
        """This machine's operational logs (conflicts, quarantine, errors, ingest): appended by every run, never synced."""
        return self._derived("logs")

    @property
    def kb_db(self) -> Path:
        """The knowledge registry (``storage.kb_store``), made from the documents in ``03_knowledge`` and the journal."""
        return self._derived("kb_db")

    @property
    def journal_dir(self) -> Path:
        """Decisions a person made, one append-only file per machine (``storage.journal``)."""
        return self.memory / "journal"

    @property
    def extraction_cache(self) -> Path:
        """A chat model's fact extraction by input hash, so a restore needs no model (``digest.model_extract``)."""
        return self.memory / "cache" / "extraction"

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
        """The same records in one SQLite file (the sqlite backend: one machine's; records to sync live in files)."""
        return self._derived("memory_records_db")

    @property
    def memory_proposals_db(self) -> Path:
        """Changes automatic extraction proposes and the user accepts or rejects."""
        return self._derived("memory_proposals_db")

    def working_dir(self, user: str) -> Path:
        return self.memory / "working" / user

    def exists(self) -> bool:
        return self.core.is_dir() and self.memory.is_dir()

    def ensure(self) -> None:
        """Create every folder of the tree (idempotent; never touches existing files), after moving the derived
        stores an earlier version kept under agent-sync to their place in agent-local."""
        self.move_legacy_derived()
        dirs = [
            self.core,
            self.sync / "02_skills",
            *[self.knowledge / d for d in KNOWLEDGE_DIRS],
            self.derived,
            self.cards_dir,
            self.summaries_dir,
            self.logs,
            self.kb_db.parent,
            self.journal_dir,
            self.memory / "working",
            self.memory_records_dir,
            self.raw_dir,
            self.index_dir,  # index generations; the scopes (local, global) are collections inside
            self.local / "materials",
            self.runtime,
        ]
        for d in dirs:
            d.mkdir(parents=True, exist_ok=True)

    def move_legacy_derived(self) -> list[str]:
        """Move derived stores found at their old places in agent-sync into agent-local (a SQLite file with its
        -wal and -shm companions); nothing is moved over a store already in agent-local. Returns what moved."""
        moved = []
        for here, rel in DERIVED.values():
            old, new = self.sync / rel, self.local / here
            if not old.exists() or new.exists():
                continue
            new.parent.mkdir(parents=True, exist_ok=True)
            for suffix in ("", "-wal", "-shm") if old.is_file() else ("",):
                src = old.with_name(old.name + suffix)
                if src.exists():
                    os.replace(src, new.with_name(new.name + suffix))
            moved.append(f"{rel} -> {new.relative_to(self.home)}")
        return moved


def init_workspace(home: Path) -> dict:
    """Create the workspace tree and the identity files (``kernel.templates``); the demo adds its logs
    (``demo.init_demo_workspace``).

    Existing files are left as they are: running init twice, or on a synced folder, loses nothing.
    """
    ws = Workspace(Path(home))
    ws.ensure()
    written = []
    below = Below(ws.sync)
    for name, text in core_templates().items():
        path = ws.core / name
        if not os.path.lexists(path):  # a link there (even a dangling one) is the user's: never written through
            below.write(path, text)
            written.append(str(path))
    return {"home": str(ws.home), "templates_written": written, "demo_logs": []}


def kb_paths(settings) -> dict[str, Path]:
    """The knowledge base's paths: the taxonomy root, the inbox, the registry (kb.db), reliability list, ingest log, archive."""
    ws = Workspace(settings.home)
    system = ws.knowledge / "99_system"
    return {"knowledge": ws.knowledge, "inbox": ws.knowledge / "00_stream" / "inbox", "db": ws.kb_db,
            "reliability": system / "reliability.yaml", "log": ws.logs / "kb_ingest.log", "archive": ws.knowledge / "90_archive" / "versions"}


def workspace_key(home: Path) -> str:
    """A short name for the workspace that every host sharing its ``agent-sync/`` agrees on (Prefect's concurrency
    limits are named by it): drawn once and kept in ``agent-sync/workspace-id.txt``, so it travels with the synced
    folder. Not the path: two hosts mount the same agent-sync at different paths, and one path on two hosts can be
    two workspaces. Created whole or not at all (a hard link of a finished file), so a second process reads the
    first one's id, never a half-written one."""
    import tempfile
    import uuid

    path = Workspace(Path(home)).sync / "workspace-id.txt"
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".workspace-id-")
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                f.write(uuid.uuid4().hex + "\n")
            os.link(tmp, path)
        except FileExistsError:
            pass
        finally:
            os.unlink(tmp)
    return path.read_text(encoding="utf-8").strip()[:12]
