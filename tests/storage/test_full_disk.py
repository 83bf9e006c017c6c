"""A full disk is told apart from damage (issue 42, item 9): the errors come from SQLite and the OS themselves, on
real stores (a full file system, or a file size limit where this process may not mount: ``tests.kit.full_disk``)."""

from __future__ import annotations

import errno
import os
import sqlite3
from datetime import date
from pathlib import Path

import pytest

from agentos_mem.kernel.domain import Candidate
from agentos_mem.services.supersession import Supersession
from agentos_mem.storage.facts import FactStore
from agentos_mem.storage.guards import RESTORE_MARKER, restore_marker, restore_state
from agentos_mem.storage.health import check, damaged, may_be_no_room, no_room, says_no_room
from tests.kit.full_disk import no_room as full_disk

DAY = date(2026, 11, 1)


def _facts(path: Path, n: int = 3) -> None:
    """A fact store with ``n`` facts, closed (as the nightly leaves it: no -wal or -shm file beside it)."""
    store = FactStore(path)
    cands = [Candidate(subject=f"服务器{i}", predicate="value", object=f"{i}C16G", nature="fact", confidence=0.9,
                       explicitness="stated", source_file=f"{DAY}.md", line_start=i + 1, line_end=i + 1,
                       observed_at=f"{DAY}T09:0{i}:00") for i in range(n)]
    Supersession(store).apply("u", DAY, cands, file_sha={f"{DAY}.md": "sha"}, raw_refs={})
    store.close()


def _read(path: Path) -> list[tuple[str, str]]:
    store = FactStore(path)
    try:
        return [(f["subject"], f["object"]) for f in store.current("u")]
    finally:
        store.close()


def _damage(db: Path, table: str) -> None:
    """Overwrite the root page of ``table`` with junk: what a disk error or a copy taken mid-write leaves."""
    con = sqlite3.connect(db)
    con.execute("pragma wal_checkpoint(truncate)")
    size = con.execute("pragma page_size").fetchone()[0]
    (page,) = con.execute("select rootpage from sqlite_master where type='table' and name=?", [table]).fetchone()
    con.close()
    data = bytearray(db.read_bytes())
    data[(page - 1) * size:page * size] = b"\xa5" * size
    db.write_bytes(bytes(data))


def test_errors_that_say_no_room_are_never_damage_and_damage_is_never_no_room(tmp_path):
    # SQLITE_FULL from SQLite itself: a store that may not grow past its pages (what a full disk answers a write)
    _facts(tmp_path / "facts.db")
    store = FactStore(tmp_path / "facts.db")
    store.db.execute(f"pragma max_page_count={store.db.execute('pragma page_count').fetchone()[0]}")
    with pytest.raises(sqlite3.OperationalError) as full:
        for i in range(200):
            store.db.execute("insert into journal_applied values (?, 'k', 'h', 'o', 't')", [f"{i:04d}" + "x" * 3000])
        store.db.conn.commit()
    store.close()
    assert full.value.sqlite_errorcode == 13 and says_no_room(full.value)
    line = no_room(full.value, tmp_path)  # the file system has room: the write still found none, and says so
    assert line.startswith(f"disk full: no room to write in {tmp_path} ") and "database or disk is full" in line
    assert line.endswith("nothing is damaged, nothing needs restoring") and "restore --force" not in line

    # ENOSPC from the OS: /dev/full takes no byte
    with pytest.raises(OSError) as enospc:
        with open("/dev/full", "wb") as f:
            f.write(b"x")
    assert enospc.value.errno == errno.ENOSPC and says_no_room(enospc.value)
    wrapped = RuntimeError("the day's digest failed")
    wrapped.__cause__ = enospc.value
    assert says_no_room(wrapped)  # what a stage or a flow wrapped it in
    # EDQUOT: no quota can be met here; the error as the OS raises it
    assert says_no_room(OSError(errno.EDQUOT, os.strerror(errno.EDQUOT)))

    # damage: SQLite's own words, never called no room
    _damage(tmp_path / "facts.db", "facts")
    with pytest.raises(sqlite3.DatabaseError) as malformed:
        _read(tmp_path / "facts.db")
    assert "malformed" in str(malformed.value)
    assert not says_no_room(malformed.value) and not may_be_no_room(malformed.value)
    assert no_room(malformed.value, tmp_path) is None
    assert "malformed" in check(tmp_path / "facts.db")


def test_a_wal_store_is_read_on_a_full_disk_and_a_write_there_says_no_room(tmp_path):
    """Reading needs no room, but SQLite grows a WAL store's -shm file on the first read: on a full disk that failed
    with "disk I/O error" and every read command called facts.db damaged. Now the facts are read; a write fails, and
    the error is no room, not damage; SQLite's quick check still reads the store (not damaged)."""
    folder = tmp_path / "memory"
    folder.mkdir()
    _facts(folder / "facts.db")
    before = _read(folder / "facts.db")
    assert not (folder / "facts.db-shm").exists()
    with full_disk(folder) as way:
        plain = sqlite3.connect(folder / "facts.db")
        with pytest.raises(sqlite3.OperationalError) as shm:  # what every reader met: the -shm file cannot grow
            plain.execute("select count(*) from facts").fetchone()
        plain.close()
        assert shm.value.sqlite_errorname == "SQLITE_IOERR_SHMSIZE" and may_be_no_room(shm.value)
        head = {"ENOSPC": "disk full", "EFBIG": "file size limit reached"}[way]
        assert no_room(shm.value, folder).startswith(f"{head}: no room to write in {folder} ")

        assert _read(folder / "facts.db") == before
        store = FactStore(folder / "facts.db")
        try:
            with pytest.raises(sqlite3.OperationalError) as write:
                store.db.execute("insert into journal_applied values (?, 'k', 'h', 'o', 't')", ["y" * 200_000])
                store.db.conn.commit()
        finally:
            store.close()
        line = no_room(write.value, folder)
        assert line and "nothing is damaged" in line, (way, write.value)
        assert check(folder / "facts.db") is None  # checked, read, not damaged
    assert _read(folder / "facts.db") == before


def test_a_damaged_store_on_a_full_disk_is_still_named_damaged(tmp_path):
    home = tmp_path / "home"
    facts = home / "agent-local/memory/facts.db"
    facts.parent.mkdir(parents=True)
    _facts(facts)
    _damage(facts, "facts")
    with full_disk(facts.parent):
        (d,) = damaged(home)
        assert d.path == facts and "malformed" in d.why and "agentos restore --force" in d.fix


def test_a_restore_marker_that_cannot_be_written_is_not_left_behind(tmp_path):
    """A restore whose marker found no room to be written had started nothing, yet left the marker, and every command
    answered "a restore did not finish" until a full restore (which the full disk refused too)."""
    home = tmp_path / "home"
    runtime = home / "agent-local/runtime"
    runtime.mkdir(parents=True)
    with full_disk(runtime, limit=8):  # a file size limit too small for the marker's line
        with pytest.raises(OSError) as e:
            with restore_marker(home):
                pass
        assert e.value.errno in (errno.ENOSPC, errno.EFBIG)
        assert not (runtime / RESTORE_MARKER).exists() and restore_state(home) is None
