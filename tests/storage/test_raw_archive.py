"""L3 raw archive: immutable revisions, read back by line range, safe names only."""

from datetime import date

import pytest

from agentos_mem.storage.raw_archive import ArchiveError, RawArchive

DAY = date(2026, 11, 3)


def test_archive_is_immutable_and_revisions_accumulate(tmp_path):
    a = RawArchive(tmp_path)
    first = a.archive("u", DAY, "2026-11-03.md", "line1\nline2\nline3\n".encode())
    again = a.archive("u", DAY, "2026-11-03.md", "line1\nline2\nline3\n".encode())
    changed = a.archive("u", DAY, "2026-11-03.md", "line1\nLINE2\nline3\n".encode())
    assert first.new and not again.new and again.ref == first.ref
    assert changed.new and changed.revision == 2 and changed.ref != first.ref
    assert a.read_lines(first.ref, 2, 2) == ["line2"]  # the old revision is still there, unchanged
    assert a.read_lines(changed.ref, 2, 3) == ["LINE2", "line3"]
    assert [r["revision"] for r in a.revisions("u", DAY)["2026-11-03.md"]] == [1, 2]
    assert not (a.path_of(first.ref).stat().st_mode & 0o222)  # read-only on disk


@pytest.mark.parametrize("ref", ["../etc/passwd", "u/2026-11-03/r1/../../x", "u/2026-11-03/r9/missing.md", "/abs/path"])
def test_bad_references_are_refused(tmp_path, ref):
    a = RawArchive(tmp_path)
    a.archive("u", DAY, "2026-11-03.md", b"x\n")
    with pytest.raises(ArchiveError):
        a.read_lines(ref, 1, 1)


@pytest.mark.parametrize("user", ["..", "a/b", "x\x00", ""])
def test_unsafe_user_names_are_refused(tmp_path, user):
    with pytest.raises(ArchiveError):
        RawArchive(tmp_path).archive(user, DAY, "f.md", b"x")


def test_chinese_user_names_work(tmp_path):
    ref = RawArchive(tmp_path).archive("张曼婷", DAY, "2026-11-03.md", "[20:00] 用户: 你好\n".encode()).ref
    assert RawArchive(tmp_path).read_lines(ref, 1, 1) == ["[20:00] 用户: 你好"]
