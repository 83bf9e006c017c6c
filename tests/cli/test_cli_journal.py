"""A decision is journaled or not made at all; one damaged journal line or store never stops a command; a restore
never leaves less than it found (issue 25, items 3 and 5), as a user meets them on the command line (in process).

The bad journal lines are the corpus of tests/kit/bad_journal.py; the same corpus goes through the real nightly flow
in tests/flows/test_bad_input_nightly.py, and a deleted memory through a restore and a nightly in
tests/flows/test_decisions_after_restore.py."""

from __future__ import annotations

import errno
import json
import sqlite3
from pathlib import Path

import pytest

from agentos_mem.kernel.workspace import Workspace
from tests.kit.bad_journal import reported, write_bad_journal
from tests.kit.cli import run_cli
from tests.kit.machines import facts_ids_aside

QUESTION = "服务器现在是什么配置？"


def journal_lines(home: Path) -> list[dict]:
    folder = Workspace(home).journal_dir
    return [json.loads(x) for p in sorted(folder.glob("*.jsonl")) for x in p.read_text(encoding="utf-8").splitlines() if x.strip()]


def facts_now(home: Path) -> dict[int, dict]:
    return {f["id"]: f for f in json.loads(run_cli("facts", "list", "--json", home=home).stdout)["facts"]}


def fact_row(home: Path, obj: str) -> dict:
    con = sqlite3.connect(Workspace(home).facts_db)
    con.row_factory = sqlite3.Row
    row = dict(con.execute("select * from facts where object=? and status='active'", [obj]).fetchone())
    con.close()
    return row


def read_only_journal(monkeypatch, home: Path) -> None:
    """agent-sync mounted read-only, as far as the journal goes (root writes through a chmod, so the mount is what is
    imitated: the file system answers EROFS to every open for writing below the journal folder)."""
    import agentos_mem.storage.journal
    from agentos_mem import storage
    real, folder = storage.journal.os.open, str(Workspace(home).journal_dir)

    def refuse(path, flags, *a, **k):
        if str(path).startswith(folder) and flags & (storage.journal.os.O_WRONLY | storage.journal.os.O_RDWR):
            raise OSError(errno.EROFS, "Read-only file system", str(path))
        return real(path, flags, *a, **k)

    monkeypatch.setattr(storage.journal.os, "open", refuse)


@pytest.mark.parametrize("how", ["read-only", "a file where the folder is"])
def test_a_decision_the_journal_cannot_hold_is_not_made(indexed_home, how):
    home = indexed_home
    before = facts_now(home)
    fid = next(i for i, f in before.items() if f["object"] == "8C16G")
    (conflict,) = json.loads(run_cli("facts", "conflicts", "--json", home=home).stdout)["conflicts"]
    name = next(r["name"] for r in json.loads(run_cli("memory", "list", "--json", home=home).stdout) if "coffee" in r["name"])
    journal = Workspace(home).journal_dir
    with pytest.MonkeyPatch.context() as mp:
        if how == "read-only":
            read_only_journal(mp, home)
        else:
            journal.rmdir()
            journal.write_text("", encoding="utf-8")
        for argv in (["facts", "forget", str(fid), "--reason", "wrong"], ["facts", "resolve", str(conflict["id"]), "--accept"],
                     ["memory", "delete", name]):
            out = run_cli(*argv, home=home, check=False)
            assert out.returncode == 2, (argv, out.stderr)
            assert out.stderr.startswith("agentos: error: the decision was not made: this machine's journal ") and "Traceback" not in out.stderr
            assert ("Read-only file system" if how == "read-only" else f"{journal} is not a folder") in out.stderr, out.stderr
    # nothing was decided: the fact is served, the conflict open, the memory there
    assert facts_now(home) == before
    assert [c["status"] for c in json.loads(run_cli("facts", "conflicts", "--json", home=home).stdout)["conflicts"]] == ["open"]
    assert run_cli("memory", "show", name, home=home).returncode == 0
    assert "8C16G" in run_cli("query", QUESTION, "--in-process", home=home).stdout

    if journal.is_file():  # agent-sync writable again: the same decisions are made, each a journal line first
        journal.unlink()
    run_cli("facts", "forget", str(fid), "--reason", "wrong", home=home)
    run_cli("memory", "delete", name, home=home)
    assert [e["kind"] for e in journal_lines(home)] == ["fact.forget", "memory.delete"]
    assert fid not in facts_now(home)

    run_cli("restore", "--force", home=home)  # what was journaled holds after a restore
    assert not any(f["object"] == "8C16G" and f["predicate"] == "value" and f["subject"] == before[fid]["subject"]
                   for f in facts_now(home).values())


def test_a_deleted_memory_is_journaled_by_hashes_only(indexed_home):
    home = indexed_home
    rec = next(r for r in json.loads(run_cli("memory", "list", "--json", home=home).stdout) if "coffee" in r["name"])
    run_cli("memory", "delete", rec["name"], home=home)
    (line,) = journal_lines(home)
    assert line["kind"] == "memory.delete" and line["user"] == "default" and line["host"] == "testhost" and line["through"] is None
    assert line["keys"] and all(len(k) == 24 for k in line["keys"])
    text = (Workspace(home).journal_dir / "testhost.jsonl").read_text(encoding="utf-8")
    assert "coffee" not in text and "flat white" not in text  # the deleted words are not kept, nor its name

    restored = json.loads(run_cli("restore", "--force", "--json", home=home).stdout)
    assert any(a.startswith("memory.delete") and "never make it again" in a for a in restored["decisions"]["applied"])


def test_damaged_and_forged_journal_lines_are_named_and_skipped_by_doctor_and_restore(indexed_home):
    home = indexed_home
    target = fact_row(home, "8C16G")
    cases = write_bad_journal(Workspace(home).journal_dir, target)
    facts_before, answer = facts_ids_aside(home), run_cli("query", QUESTION, "--in-process", home=home).stdout

    doctor = run_cli("doctor", "--json", home=home, check=False)
    assert doctor.returncode in (0, 1) and "Traceback" not in doctor.stderr, doctor.stderr
    problems = json.loads(doctor.stdout)["journal"]["problems"]
    for case in cases:
        assert reported(problems, case), (case, problems)
    assert "Traceback" not in run_cli("doctor", home=home, check=False).stderr

    out = run_cli("restore", "--force", "--json", home=home)
    report = json.loads(out.stdout)
    said = report["problems"] + report["decisions"]["problems"]
    for case in cases:
        assert reported(said, case), (case, said)
    assert report["decisions"]["applied"] == [] and report["index"]["units"] > 0
    assert facts_ids_aside(home) == facts_before  # nothing forged was applied: the fact the lines aim at is there
    assert run_cli("query", QUESTION, "--in-process", home=home).stdout == answer
    assert fact_row(home, "8C16G")["status"] == "active"


def _stores(home: Path) -> dict[str, bytes]:
    """Every file of the derived stores (what a restore moves aside and makes again)."""
    local = home / "agent-local"
    return {str(p.relative_to(local)): p.read_bytes() for sub in ("memory", "knowledge", "vector_db", "logs")
            for p in sorted((local / sub).rglob("*")) if p.is_file()}


def test_a_restore_that_fails_part_way_leaves_what_it_found(indexed_home, monkeypatch):
    import agentos_mem.digest.stages
    from agentos_mem import digest
    home = indexed_home
    facts, answer = run_cli("facts", "list", home=home).stdout, run_cli("query", QUESTION, "--in-process", home=home).stdout
    stores = _stores(home)  # after the reads (opening the vector index may rewrite its files)
    real, calls = digest.stages.run_day, []

    def crash_on_the_third_day(*a, **k):
        calls.append(a)
        if len(calls) == 3:
            raise RuntimeError("disk on fire")
        return real(*a, **k)

    monkeypatch.setattr(digest.stages, "run_day", crash_on_the_third_day)
    out = run_cli("restore", "--force", home=home, check=False)
    assert out.returncode == 1 and "Traceback" not in out.stderr
    assert "restore failed (RuntimeError: disk on fire); this machine's stores are back as they were; what it had made is in " \
           "agent-local/restore-failed-" in out.stderr, out.stderr
    assert _stores(home) == stores  # every store back, byte for byte
    assert not list((home / "agent-local").glob("restore-backup-*"))
    assert run_cli("facts", "list", home=home).stdout == facts
    assert run_cli("query", QUESTION, "--in-process", home=home).stdout == answer

    monkeypatch.setattr(digest.stages, "run_day", real)
    run_cli("restore", "--force", home=home)  # and a restore that gets through makes them again
    assert run_cli("query", QUESTION, "--in-process", home=home).stdout == answer


def damage_pages(db: Path, tables: tuple[str, ...]) -> None:
    """Overwrite the first page of each table (its root) with junk: what a disk error or a copy taken mid-write leaves."""
    con = sqlite3.connect(db)
    con.execute("pragma wal_checkpoint(truncate)")
    size = con.execute("pragma page_size").fetchone()[0]
    roots = dict(con.execute("select name, rootpage from sqlite_master where type='table'").fetchall())
    con.close()
    data = bytearray(db.read_bytes())
    for table in tables:
        page = roots[table]
        data[(page - 1) * size:page * size] = b"\xa5" * size
    db.write_bytes(bytes(data))


def test_a_damaged_store_is_named_with_the_command_that_makes_it_again(indexed_home):
    home = indexed_home
    facts, answer = run_cli("facts", "list", home=home).stdout, run_cli("query", QUESTION, "--in-process", home=home).stdout
    damage_pages(Workspace(home).facts_db, ("facts", "evidence", "conflicts"))  # three damaged pages

    for argv in (["facts", "list"], ["facts", "conflicts"], ["facts", "history", "服务器配置"], ["facts", "forget", "1"],
                 ["query", QUESTION, "--in-process"]):
        out = run_cli(*argv, home=home, check=False)
        assert out.returncode == 1, (argv, out.stdout, out.stderr)
        assert "agentos: error: agent-local/memory/facts.db is damaged (database disk image is malformed): " \
               "`agentos restore --force` makes it again from agent-sync" in out.stderr, (argv, out.stderr)
    doctor = run_cli("doctor", home=home, check=False)
    assert doctor.returncode == 1 and "Traceback" not in doctor.stderr
    assert "damaged: agent-local/memory/facts.db is damaged (" in doctor.stdout and "agentos restore --force" in doctor.stdout
    assert json.loads(run_cli("doctor", "--json", home=home, check=False).stdout)["damaged"]

    restored = json.loads(run_cli("restore", "--force", "--json", home=home).stdout)
    assert (home / restored["moved_aside"] / "agent-local/memory/facts.db").is_file()  # the damaged one is kept aside
    assert run_cli("facts", "list", home=home).stdout == facts
    assert run_cli("query", QUESTION, "--in-process", home=home).stdout == answer
    assert run_cli("doctor", home=home).returncode == 0


def test_two_forced_restores_in_the_same_second_keep_both_backups(indexed_home):
    """``restore --force`` twice in one second (the suite pins the clock: every restore has the same stamp) once reused
    the backup folder and moved the second machine state over the first backup: each gets its own folder and the
    first backup is unchanged by the second restore."""
    home = indexed_home
    original = Workspace(home).facts_db.read_bytes()
    first = json.loads(run_cli("restore", "--force", "--json", home=home).stdout)["moved_aside"]
    kept = (home / first / "agent-local/memory/facts.db").read_bytes()
    assert kept == original
    (home / first / "note-from-the-user.txt").write_text("keep me", encoding="utf-8")  # the user looked into it
    second = json.loads(run_cli("restore", "--force", "--json", home=home).stdout)["moved_aside"]
    assert second != first and first in second  # the same stamp, numbered
    assert (home / first / "agent-local/memory/facts.db").read_bytes() == kept
    assert (home / first / "note-from-the-user.txt").read_text(encoding="utf-8") == "keep me"
    assert (home / second / "agent-local/memory/facts.db").is_file()


def test_a_backup_folder_name_is_never_reused_even_by_a_file(tmp_path):
    from agentos_mem.restore.run import unique_folder

    (tmp_path / "restore-backup-20260310T100000").mkdir()
    (tmp_path / "restore-backup-20260310T100000-2").write_text("a file of that name", encoding="utf-8")
    got = [unique_folder(tmp_path, "restore-backup-20260310T100000") for _ in range(2)]
    assert [p.name for p in got] == ["restore-backup-20260310T100000-3", "restore-backup-20260310T100000-4"]
    assert (tmp_path / "restore-backup-20260310T100000-2").read_text(encoding="utf-8") == "a file of that name"
