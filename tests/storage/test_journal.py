"""The journal of decisions (agent-sync/04_memory/journal/<host>.jsonl): one append-only file per machine, read back
in the order the decisions were made, a torn or damaged line never costing the others."""

from __future__ import annotations

import json
import os

from storage import journal


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
