"""A full disk is not a damaged store (issue 42, item 9), on the command line (in process) as a person meets it: the
workspace's agent-local on a file system with no room left (``tests.kit.full_disk``: a full tmpfs where this process
may mount, a file size limit otherwise; the test runs either way).

Before: every read command called the intact stores damaged ("disk I/O error": a WAL store's -shm file cannot grow)
and advised ``agentos restore --force``; the restore then failed for room and left its marker, so every command
answered "a restore did not finish" until a full restore."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

from agentos_mem.kernel.workspace import Workspace
from agentos_mem.storage.guards import RESTORE_MARKER
from tests.kit.cli import run_cli
from tests.kit.full_disk import no_room

QUESTION = "服务器现在是什么配置？"
READS = (["facts", "list"], ["facts", "history", "服务器配置"], ["kb", "list"], ["kb", "search", "服务器"])
FULL = ("disk full: no room to write in", "no space left on device:", "file size limit reached")


def _said_full(out) -> bool:
    text = out.stdout + out.stderr
    return any(w in text for w in FULL) and "nothing is damaged" in text


def _tree(folder: Path) -> dict:
    """Every file under ``folder`` with its bytes (the runtime's lock files aside: opening one is not a change)."""
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*"))
            if p.is_file() and not p.name.endswith(".lock") and p.name != ".filler"}


def test_on_a_full_disk_reads_go_on_and_nothing_is_called_damaged(indexed_home, tmp_path):
    home = indexed_home
    run_cli("kb", "list", home=home)  # the knowledge registry is made by the first command that reads it
    twin = tmp_path / "twin"  # what the commands answer with room, asked of a copy (this process keeps no reader of home)
    shutil.copytree(home, twin, symlinks=True)
    before = {tuple(a): run_cli(*a, home=twin).stdout for a in READS}
    answer = run_cli("query", QUESTION, "--in-process", home=twin).stdout
    local = Workspace(home).local

    with no_room(local) as way:
        for argv in READS:  # reads need no room: the same answers
            out = run_cli(*argv, home=home, check=False)
            assert (out.returncode, out.stdout) == (0, before[tuple(argv)]), (way, argv, out.stderr)
        # Chroma writes its SQLite file whenever it opens it, so on a full disk the vectors cannot be opened: the query
        # says the disk is full (where it can open them, the answer is as before), never that anything is damaged
        q = run_cli("query", QUESTION, "--in-process", home=home, check=False)
        assert (q.returncode, q.stdout) == (0, answer) or (q.returncode == 2 and _said_full(q)), (way, q.stderr)
        doctor = run_cli("doctor", home=home, check=False)
        assert doctor.returncode == 0 or _said_full(doctor), (way, doctor.stdout, doctor.stderr)
        for out in (q, doctor):
            assert not re.search(r"is damaged \(|^damaged:|index is damaged", out.stdout + out.stderr, re.M), (way, out)
            assert "restore --force" not in out.stdout + out.stderr and "Traceback" not in out.stderr
        # a write finds no room and says so, naming the folder; the live index stays
        live = (Workspace(home).index_dir / "CURRENT").read_text(encoding="utf-8")
        rebuild = run_cli("rebuild", "--direct", "--full", home=home, check=False)
        assert rebuild.returncode == 2 and _said_full(rebuild) and str(local) in rebuild.stderr, (way, rebuild.stderr)
        assert "restore --force" not in rebuild.stderr
        assert (Workspace(home).index_dir / "CURRENT").read_text(encoding="utf-8") == live

    assert run_cli("doctor", home=home).returncode == 0  # with room again: nothing to repair
    assert run_cli("query", QUESTION, "--in-process", home=home).stdout == answer


def test_a_restore_without_room_is_refused_before_it_starts_and_changes_nothing(indexed_home):
    home = indexed_home
    local = Workspace(home).local
    facts = run_cli("facts", "list", home=home).stdout
    with no_room(local) as way:
        before = _tree(local)
        out = run_cli("restore", "--force", home=home, check=False)
        assert out.returncode == 2, (way, out.stderr)
        assert out.stderr.startswith(f"agentos: error: not enough room to restore: {local} ("), out.stderr
        assert out.stderr.rstrip().endswith("free some space there and run `agentos restore --force` again; nothing was changed")
        assert not (Workspace(home).runtime / RESTORE_MARKER).exists()  # refused before the marker: no restore to finish
        assert _tree(local) == before  # nothing moved aside, nothing written
        after = run_cli("facts", "list", home=home, check=False)
        assert (after.returncode, after.stdout) == (0, facts), after.stderr  # not "a restore did not finish"
    assert run_cli("facts", "list", home=home).stdout == facts
