"""Two machines in tests: what each holds, compared with the ids one machine gives aside, and a sync between them
(what Syncthing, Dropbox or rsync would do to agent-sync: every file either side has, the newer one winning)."""

from __future__ import annotations

import json
import re
import shutil
import sqlite3
from pathlib import Path

from agentos_mem.kernel.workspace import Workspace

# A row's id (and the ids it points at) is one machine's; learned_at is when this machine's digest read the line.
FACT_COLUMNS_MACHINE_BOUND = {"id", "previous_version", "superseded_by", "learned_at"}


def facts_ids_aside(home: Path) -> list[str]:
    """Every fact row (current or closed), its ids replaced by what they point at."""
    con = sqlite3.connect(Workspace(home).facts_db)
    con.row_factory = sqlite3.Row
    rows = {r["id"]: dict(r) for r in con.execute("select * from facts")}
    con.close()

    def key(fid):
        r = rows.get(fid)
        return None if r is None else [r["subject_key"], r["predicate"], r["object_key"], r["valid_from"], r["source_file"]]

    return sorted(json.dumps({**{k: v for k, v in r.items() if k not in FACT_COLUMNS_MACHINE_BOUND},
                              "previous": key(r["previous_version"]), "superseded_by": key(r["superseded_by"])},
                             sort_keys=True, ensure_ascii=False) for r in rows.values())


def conflicts_ids_aside(home: Path) -> list[tuple]:
    con = sqlite3.connect(Workspace(home).facts_db)
    out = sorted(con.execute("select subject, predicate, existing_object, candidate_object, source_day, source_file, status"
                             " from conflicts").fetchall())
    con.close()
    return out


def sqlite_files(folder: Path) -> list[str]:
    return [str(p.relative_to(folder)) for p in folder.rglob("*") if p.is_file() and p.read_bytes()[:16] == b"SQLite format 3\x00"]


def synced_bytes(home: Path) -> dict[str, bytes]:
    return {str(p.relative_to(home)): p.read_bytes() for p in (home / "agent-sync").rglob("*") if p.is_file()}


def printed_ids_aside(text: str, hosts: list[str]) -> str:
    """A command's output with what names one machine replaced: fact and conflict numbers, memory card ids (they
    start with the host that built them)."""
    for h in hosts:
        text = text.replace(f"{h}_", "HOST_")
    return re.sub(r"#\d+", "#N", text)


def sync(a: Path, b: Path) -> int:
    """Both machines' agent-sync made the same: each file either side lacks is copied, a file both have and that
    differs goes the newer one's way. Returns how many files were copied."""
    copied = 0
    for src_home, dst_home in ((a, b), (b, a)):
        src, dst = src_home / "agent-sync", dst_home / "agent-sync"
        for p in sorted(src.rglob("*")):
            if not p.is_file():
                continue
            q = dst / p.relative_to(src)
            if q.exists() and (q.read_bytes() == p.read_bytes() or q.stat().st_mtime_ns >= p.stat().st_mtime_ns):
                continue
            q.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(p, q)
            copied += 1
    return copied
