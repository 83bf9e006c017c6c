"""kernel/files.py: the one atomic write, and the one way to read a file a user's folder holds (regular files only)."""

from __future__ import annotations

import os

import pytest

from agentos_mem.kernel.files import NotARegularFile, atomic_write, read_regular_file


def test_atomic_write_replaces_whole_and_leaves_no_temporary(tmp_path):
    target = tmp_path / "d" / "note.md"
    atomic_write(target, "第一版\n")
    atomic_write(target, "第二版\n")
    assert target.read_text(encoding="utf-8") == "第二版\n" and [p.name for p in target.parent.iterdir()] == ["note.md"]


def test_regular_files_are_read_and_a_limit_reads_one_byte_past_it(tmp_path):
    f = tmp_path / "log.md"
    f.write_bytes(b"x" * 5000)
    assert read_regular_file(f) == b"x" * 5000
    assert len(read_regular_file(f, max_bytes=100)) == 101  # the caller sees "too large" without reading it all


@pytest.mark.parametrize("make, kind", [
    (lambda p: os.mkfifo(p), "named pipe"),
    (lambda p: p.mkdir(), "folder"),
])
def test_pipes_and_folders_are_refused_without_blocking(tmp_path, make, kind):
    target = tmp_path / "2026-11-20.md"
    make(target)
    with pytest.raises(NotARegularFile) as e:
        read_regular_file(target)  # a FIFO opened for reading would block here forever
    assert kind in e.value.kind and str(target) in str(e.value)


def test_a_device_is_refused(tmp_path):
    with pytest.raises(NotARegularFile, match="character device"):
        read_regular_file("/dev/zero")
