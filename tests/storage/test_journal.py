"""The journal of decisions (agent-sync/04_memory/journal/<host>.jsonl): one append-only file per machine, read back
in the order the decisions were made, a torn or damaged line never costing the others."""

from __future__ import annotations

import json
import os

from agentos_mem.storage import journal


def _ev(at: str, user: str = "default", **kw) -> dict:
    return {"kind": "fact.forget", "at": at, "user": user, "through": None, **kw}


def test_each_machine_appends_to_its_own_file_and_the_reader_merges_them_in_time_order(tmp_path):
    journal.append(tmp_path, "laptop", _ev("2026-12-01T09:00:00+00:00", subject="a"))
    journal.append(tmp_path, "desktop", _ev("2026-12-01T08:00:00+00:00", subject="b"))
    journal.append(tmp_path, "laptop", _ev("2026-12-01T10:00:00+00:00", subject="c"))
    assert sorted(p.name for p in tmp_path.iterdir()) == ["desktop.jsonl", "laptop.jsonl"]
    events, problems = journal.read(tmp_path)
    assert [e["subject"] for e in events] == ["b", "a", "c"] and problems == []
    assert [e["seq"] for e in events if e["host"] == "laptop"] == [0, 1]
    assert len({e["id"] for e in events}) == 3


def test_a_line_once_written_is_never_rewritten(tmp_path):
    journal.append(tmp_path, "laptop", _ev("2026-12-01T09:00:00+00:00", subject="a"))
    first = (tmp_path / "laptop.jsonl").read_bytes()
    journal.append(tmp_path, "laptop", _ev("2026-12-01T09:05:00+00:00", subject="b"))
    assert (tmp_path / "laptop.jsonl").read_bytes().startswith(first)


def test_a_torn_last_line_waits_and_a_damaged_line_is_named_and_skipped(tmp_path):
    journal.append(tmp_path, "laptop", _ev("2026-12-01T09:00:00+00:00", subject="a"))
    with open(tmp_path / "laptop.jsonl", "a", encoding="utf-8") as f:
        f.write("{not json\n")
        f.write(json.dumps({"kind": "fact.forget"}) + "\n")  # no id, at or user
        f.write(json.dumps({**_ev("2026-12-01T09:10:00+00:00", subject="b"), "id": "x1"}) + "\n")
        f.write('{"kind": "fact.forget", "at": "2026-12-01T09:20')  # a sync caught it mid-write
    events, problems = journal.read(tmp_path)
    assert [e["subject"] for e in events] == ["a", "b"]
    assert [p.split(":")[0] + ":" + p.split(":")[1] for p in problems] == ["laptop.jsonl:2", "laptop.jsonl:3", "laptop.jsonl:5"]
    assert "incomplete last line" in problems[-1] and "unreadable" in problems[0]


def test_only_regular_files_are_read(tmp_path):
    outside = tmp_path / "outside.jsonl"
    outside.write_text(json.dumps({**_ev("2026-12-01T09:00:00+00:00"), "id": "o"}) + "\n", encoding="utf-8")
    folder = tmp_path / "journal"
    folder.mkdir()
    os.symlink(outside, folder / "evil.jsonl")
    (folder / "notes.txt").write_text("not a journal", encoding="utf-8")
    events, problems = journal.read(folder)
    assert events == [] and problems == ["evil.jsonl: not a regular file; not read"]


def test_a_host_name_becomes_a_safe_file_name(tmp_path):
    assert journal.journal_file(tmp_path, "../../etc/passwd").parent == tmp_path
    assert journal.journal_file(tmp_path, "my laptop").name == "my_laptop.jsonl"


TARGET = {"user_id": "default", "subject": "服务器配置", "subject_key": "服务器配置", "predicate": "value", "object": "8C16G",
          "object_key": "8c16g", "source_day": "2026-11-25", "source_file": "2026-11-25.md"}


def test_every_damaged_line_of_the_corpus_is_named_by_file_and_line_and_skipped(tmp_path):
    """The bad-journal corpus (tests/kit/bad_journal.py): what the reader catches is named and skipped, the rest (well
    formed, refused by the replayer) is read; nothing raises, whatever the types (``"seq": "1a"``, ``"user": [...]``)."""
    from tests.kit.bad_journal import reported, write_bad_journal

    journal.append(tmp_path, "laptop", _ev("2026-12-01T09:00:00+00:00", subject="good"))
    cases = write_bad_journal(tmp_path, TARGET)
    events, problems = journal.read(tmp_path)
    for case in cases:
        if case.where == "read":
            assert reported(problems, case), (case, problems)
    skipped = {(c.file, c.line) for c in cases if c.where == "read"}
    assert not {(e["_file"], e["_line"]) for e in events} & skipped
    assert ("laptop.jsonl", 1, "good") in {(e["_file"], e["_line"], e.get("subject")) for e in events}
    assert len(events) == 1 + len([c for c in cases if c.where == "replay"])
    assert len(problems) == len([c for c in cases if c.where == "read"])


def test_a_line_names_the_host_whose_file_it_is_in(tmp_path):
    journal.append(tmp_path, "laptop", _ev("2026-12-01T09:00:00+00:00", subject="a"))
    line = (tmp_path / "laptop.jsonl").read_text(encoding="utf-8")
    (tmp_path / "desktop.jsonl").write_text(line, encoding="utf-8")  # laptop's line copied into desktop's file
    (tmp_path / "my_laptop.jsonl").write_text(line.replace('"laptop"', '"my laptop"').replace(json.loads(line)["id"], "other"),
                                              encoding="utf-8")  # the host name made safe is the file's: its own
    events, problems = journal.read(tmp_path)
    assert [(e["_file"], e["host"]) for e in events] == [("laptop.jsonl", "laptop"), ("my_laptop.jsonl", "my laptop")]
    assert problems == ["desktop.jsonl:1: damaged decision (it names host 'laptop' but is in desktop.jsonl: each machine writes "
                        "only its own file); skipped"]


def test_a_journal_that_cannot_be_written_raises_and_leaves_no_part_of_a_line(tmp_path, monkeypatch):
    journal.append(tmp_path, "laptop", _ev("2026-12-01T09:00:00+00:00", subject="a"))
    before = (tmp_path / "laptop.jsonl").read_bytes()
    real = os.write

    def full_disk(fd, data):  # half the line reaches the disk, then it is full
        real(fd, data[: len(data) // 2])
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(journal.os, "write", full_disk)
    try:
        journal.append(tmp_path, "laptop", _ev("2026-12-01T09:05:00+00:00", subject="b"))
        raise AssertionError("no error")
    except journal.JournalUnwritable as e:
        assert "the decision was not made" in str(e) and "No space left on device" in str(e) and "laptop.jsonl" in str(e)
    assert (tmp_path / "laptop.jsonl").read_bytes() == before  # the half line was taken back
    monkeypatch.undo()

    blocked = tmp_path / "blocked"
    blocked.write_text("a file where the folder should be", encoding="utf-8")
    try:
        journal.append(blocked, "laptop", _ev("2026-12-01T09:05:00+00:00"))
        raise AssertionError("no error")
    except journal.JournalUnwritable as e:
        assert "cannot be written" in str(e)
