"""Which of this machine's SQLite stores are damaged, and what makes each again.

A store whose pages are damaged (a disk error, a copy taken mid-write, a sync tool that synced a live database)
answers ``database disk image is malformed`` or ``file is not a database`` to whatever reads it, which names no
file. ``damaged`` runs SQLite's own ``pragma quick_check`` over every store of the workspace, read only, and says
which file it is and what to do: every store in agent-local but the sqlite backend's memory records is made from
agent-sync, so ``agentos restore --force`` makes it again (the damaged one is moved to
``agent-local/restore-backup-<time>/``, never deleted). ``agentos doctor`` runs it first; every command that fails on
a database error runs it to name the file (``cli.main``).
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from pathlib import Path

from agentos_mem.kernel.workspace import Workspace

RESTORE = "`agentos restore --force` makes it again from agent-sync (the damaged store is moved to agent-local/restore-backup-<time>/)"


@dataclass(frozen=True)
class Damage:
    path: Path  # the damaged file
    why: str  # what SQLite says
    fix: str  # what makes it again

    def line(self, home: Path) -> str:
        try:
            where = self.path.relative_to(home)
        except ValueError:
            where = self.path
        return f"{where} is damaged ({self.why}): {self.fix}"


def stores(ws: Workspace) -> list[tuple[Path, str]]:
    """Every SQLite store of the workspace that is there, with what makes it again."""
    out = [(ws.facts_db, RESTORE), (ws.kb_db, RESTORE), (ws.memory_proposals_db, RESTORE),
           (ws.memory_records_db, "it is this machine's only copy of the memory records (AGENTOS_MEMORY_BACKEND=sqlite): "
                                  "put back a backup of it, or save what SQLite can read with `sqlite3 records.db .recover`")]
    if ws.index_dir.is_dir():
        out += [(p, RESTORE) for p in sorted(ws.index_dir.rglob("*.db")) + sorted(ws.index_dir.rglob("*.sqlite3"))]
    return [(p, fix) for p, fix in out if p.is_file() and not p.is_symlink()]


def check(path: Path) -> str | None:
    """What is wrong with the SQLite file at ``path`` (None: nothing SQLite's quick check finds). Read only."""
    try:
        con = sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=5)
    except sqlite3.Error as e:
        return str(e)
    try:
        rows = con.execute("pragma quick_check").fetchall()
    except sqlite3.OperationalError as e:
        if "locked" in str(e) or "unable to open" in str(e):
            return None  # busy or not readable here: not known to be damaged
        return str(e)
    except sqlite3.DatabaseError as e:
        return str(e)
    finally:
        con.close()
    found = [str(r[0]) for r in rows if r and r[0] != "ok"]
    return ("; ".join(found[:3]) + (f" (and {len(found) - 3} more)" if len(found) > 3 else "")) if found else None


def damaged(home: Path) -> list[Damage]:
    """The workspace's damaged stores (none: an empty list)."""
    ws = Workspace(Path(home))
    out = []
    for path, fix in stores(ws):
        why = check(path)
        if why is not None:
            out.append(Damage(path, why, fix))
    return out
