"""Bad input never stops a day (issue 14): each line and each file is its own unit of failure, only regular files
of the logs folder are read, lines are numbered as editors number them, and work per line is linear (the bench
bench/digest_line_bench.py shows the times; no test here asserts one).

The corpus (tests/kit/bad_logs.py) runs through the plain stages here and through the real nightly flow in
tests/flows/test_bad_input_nightly.py.
"""

import json
import os
import threading
from datetime import date
from pathlib import Path

import pytest

from agentos_mem.digest.logformat import (
    MAX_TURN_CHARS,
    display_name,
    file_signature,
    list_days,
    name_problem,
    read_bytes_checked,
    read_log,
)
from agentos_mem.digest.stages import digest_day, pending_days, read_day
from agentos_mem.kernel.settings import Settings
from agentos_mem.kernel.text import split_lines
from agentos_mem.kernel.workspace import Workspace, init_workspace
from agentos_mem.storage.facts import FactStore
from agentos_mem.storage.raw_archive import ArchiveError, RawArchive, safe_name
from tests.kit.bad_logs import DAYS, LONG_NAME, matching, write_corpus
from tests.kit.digest import log_workspace


@pytest.fixture
def corpus(tmp_path):
    home = tmp_path / "home"
    init_workspace(home)
    c = write_corpus(tmp_path / "logs", tmp_path / "outside")
    yield Settings(home=home, hostname="h", logs_dir=c.folder, llm_base_url=None), c
    c.close()


def in_time(fn, seconds=60):
    """``fn()``'s result; fails (instead of hanging the suite) when it blocks, e.g. on opening a FIFO."""
    out = {}
    t = threading.Thread(target=lambda: out.setdefault("r", fn()), daemon=True)
    t.start()
    t.join(seconds)
    assert not t.is_alive(), "blocked"
    return out["r"]


def test_every_day_of_the_corpus_is_digested_and_every_bad_input_quarantined(corpus):
    s, c = corpus
    assert list_days(c.folder) == DAYS  # a day whose only log is refused is still listed, to be reported
    assert in_time(lambda: pending_days(s, "default", c.folder, date(2026, 11, 29))) == DAYS
    reports = in_time(lambda: [digest_day(s, "default", d, c.folder) for d in DAYS], 300)
    assert all(r["turns"] > 0 for r in reports)

    ws = Workspace(s.home)
    entries = [json.loads(x) for x in (ws.logs / "quarantine.jsonl").read_text(encoding="utf-8").split("\n") if x]
    for case in c.cases:
        assert matching(entries, case), case
    errors = (ws.logs / "errors.log").read_text(encoding="utf-8")
    for case in c.cases:
        assert case.file in errors, case
    assert len(errors.split("\n")) - 1 == len([q for r in reports for q in r["quarantined"]])  # one line each

    store = FactStore(s.home / "agent-local/memory/facts.db")
    rows = {}
    for d in DAYS:
        rows.update({r["object"]: r for r in store.facts_of_day("default", d)})
    store.close()
    for obj, (file, line) in c.facts.items():
        hit = next((r for o, r in rows.items() if obj in o), None)
        assert hit is not None, obj
        assert (hit["ev_file"], hit["ev_line_start"]) == (file, line), obj

    # nothing of a refused file reached the archive, the cards or the facts
    raw = RawArchive(ws.raw_dir)
    archived = {name for d in DAYS for name in raw.revisions("default", d)}
    assert archived == {"2026-11-20.md", "2026-11-21.jsonl", "2026-11-22.md", LONG_NAME, "2026-11-23.md", "2026-11-24.md", "2026-11-25.md"}
    stores = [p for p in s.home.rglob("*") if p.is_file() and not p.is_symlink()]
    assert not any(c.secret.encode() in p.read_bytes() for p in stores)
    # the files are left as they were
    assert (c.folder / "2026-11-20-fifo.md").is_fifo() and (c.folder / "2026-11-20-passwd.md").is_symlink()

    # a second night has nothing to do: refused files are remembered by their lstat signature
    assert in_time(lambda: pending_days(s, "default", c.folder, date(2026, 11, 29))) == []


def test_line_numbers_agree_between_the_digest_the_archive_and_raw_reads(corpus):
    s, c = corpus
    r = digest_day(s, "default", date(2026, 11, 23), c.folder)
    assert r["lines_read"] == 6  # the lone CR ends line 2; U+2028 does not end line 4
    ref = RawArchive(Workspace(s.home).raw_dir).revisions("default", date(2026, 11, 23))["2026-11-23.md"][0]["ref"]
    raw = RawArchive(Workspace(s.home).raw_dir)
    assert raw.read_lines(ref, 2, 4) == ["[09:01] 用户: 第一行", "[09:02] 用户: Redis 端口是 6380。", "[09:03] 用户: API 版本是 v2。\u2028这里还是第四行"]
    # the line that is not UTF-8 is shown, never dropped or changed in the archive
    assert raw.read_lines(ref, 5, 5) == ["[09:04] 用户: \ufffd\ufffd"]
    assert raw.path_of(ref).read_bytes() == (c.folder / "2026-11-23.md").read_bytes()
    log = read_log(c.folder / "2026-11-23.md", max_bytes=s.max_log_bytes)
    assert [(t.line_start, t.text) for t in log.turns][1:] == [(2, "第一行"), (3, "Redis 端口是 6380。"), (4, "API 版本是 v2。\u2028这里还是第四行"),
                                                               (6, "我的工号是 A1234。")]
    assert len(log.turns[0].text) == MAX_TURN_CHARS  # the 5 MB turn, digested from its start


@pytest.mark.parametrize("text,lines", [
    ("a\nb\n", ["a", "b"]), ("a\r\nb", ["a", "b"]), ("a\rb\r", ["a", "b"]), ("a\u2028b\u2029c\x0cd\x0be\x85f", ["a\u2028b\u2029c\x0cd\x0be\x85f"]),
    ("a\n\n", ["a", ""]), ("", []), ("\n", [""]), (b"x\r\ny\rz\n", [b"x", b"y", b"z"]),
])
def test_split_lines_counts_like_an_editor(text, lines):
    assert split_lines(text) == lines


def test_refused_entries_are_never_opened(tmp_path):
    fifo = tmp_path / "2026-11-03.md"
    os.mkfifo(fifo)
    data, problem = in_time(lambda: read_bytes_checked(fifo, 10**6))
    assert data is None and problem.reason == "a named pipe (FIFO), not a regular file: not read"
    assert in_time(lambda: file_signature(fifo, 10**6)).startswith("refused:")
    link = tmp_path / "2026-11-04.md"
    link.symlink_to("/etc/hostname")
    data, problem = read_bytes_checked(link, 10**6)
    assert data is None and problem.reason.startswith("symbolic link to /etc/hostname: not followed")
    assert read_bytes_checked(Path("/dev/null"), 10**6)[1].reason == "a character device, not a regular file: not read"


def test_file_names(tmp_path):
    assert display_name("2026-11-03.md") == "2026-11-03.md" and name_problem("2026-11-03-中文.md") is None
    assert display_name("2026-11-03-a\nb.md") == "2026-11-03-a\\nb.md"
    assert display_name(os.fsdecode(b"2026-11-03-\xff.md")) == "2026-11-03-\\xff.md"
    assert "U+000A" in name_problem("a\nb.md") and "not valid UTF-8" in name_problem(os.fsdecode(b"\xfe.md"))
    assert "U+202E" in name_problem("a\u202eb.md") and "U+2028" in name_problem("a\u2028b.md")
    assert safe_name(LONG_NAME) == LONG_NAME  # any name Linux allows (up to 255 bytes) is archived as it is
    with pytest.raises(ArchiveError):
        safe_name("x" * 256)
    with pytest.raises(ArchiveError):
        safe_name(os.fsdecode(b"\xff.md"))


def test_a_file_that_breaks_the_reader_costs_only_itself(tmp_path, monkeypatch):
    s, logs = log_workspace(tmp_path)
    s = s.model_copy(update={"llm_base_url": None})
    (logs / "2026-11-03.md").write_text("[09:00] 用户: 我叫林晓。\n", encoding="utf-8")
    (logs / "2026-11-03-b.md").write_text("[09:00] 用户: 数据库端口是 5432。\n", encoding="utf-8")
    import agentos_mem.digest.logformat as lf
    real = lf._parse_markdown

    def flaky(log, lines, bad=frozenset()):
        if log.name.endswith("-b.md"):
            raise MemoryError("simulated")
        return real(log, lines, bad)

    monkeypatch.setattr(lf, "_parse_markdown", flaky)
    inp = read_day(s, "default", date(2026, 11, 3), logs)
    assert [(x.name, len(x.turns)) for x in inp.logs] == [("2026-11-03-b.md", 0), ("2026-11-03.md", 1)]
    assert [str(p) for p in inp.problems] == ["2026-11-03-b.md: could not read the file (MemoryError: simulated); skipped"]


def test_an_unarchivable_log_is_digested_without_raw_references(tmp_path, monkeypatch):
    s, logs = log_workspace(tmp_path)
    (logs / "2026-11-03.md").write_text("[09:00] 用户: 我叫林晓。\n", encoding="utf-8")

    def full(*a, **k):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(RawArchive, "archive", full)
    r = digest_day(s.model_copy(update={"llm_base_url": None}), "default", date(2026, 11, 3), logs)
    assert r["facts_added"] == 1 and r["quarantined"] == [
        "2026-11-03.md: not archived in L3 ([Errno 28] No space left on device); its turns are digested without raw line references"]


def test_a_day_that_fails_on_a_damaged_store_names_it_and_the_command_that_makes_it_again(tmp_path):
    """What the nightly records for a day that failed (``record_failure``): a database error names no file, so the
    workspace's stores are checked and the damaged one is named, with `agentos restore --force` (issue 25)."""
    import sqlite3

    from agentos_mem.digest.stages import record_failure

    s, logs = log_workspace(tmp_path)
    (logs / "2026-11-20.md").write_text("[09:00] 用户: 数据库端口是 5432。\n", encoding="utf-8")
    digest_day(s, "default", date(2026, 11, 20), logs)
    db = Workspace(s.home).facts_db
    con = sqlite3.connect(db)
    con.execute("pragma wal_checkpoint(truncate)")
    size = con.execute("pragma page_size").fetchone()[0]
    (root,) = con.execute("select rootpage from sqlite_master where name='facts'").fetchone()
    con.close()
    data = bytearray(db.read_bytes())
    data[(root - 1) * size:root * size] = b"\xa5" * size
    db.write_bytes(bytes(data))
    reason = record_failure(s, "default", date(2026, 11, 21), logs, "nightly", sqlite3.DatabaseError("database disk image is malformed"))
    assert "agent-local/memory/facts.db is damaged (" in reason and "`agentos restore --force` makes it again" in reason
    assert "facts.db is damaged" in (Workspace(s.home).logs / "errors.log").read_text(encoding="utf-8")


def test_a_log_named_almost_like_a_day_log_is_read_and_what_names_no_day_is_reported(tmp_path):
    """Issue 42: 2026-12-06.MD, 2026-12-9.md, 2026-12-08.txt and 20261207.md were neither read nor reported, and a
    UTF-16 log with its byte order mark (Notepad's "Unicode") was refused as binary. What names one day unambiguously
    is read (the UTF-16 one as the same text, in the raw archive too); a name that looks like a day log and names no
    day is reported by name, with what to do."""
    from tests.kit.digest import current

    s, logs = log_workspace(tmp_path)
    said = {"2026-11-06.MD": "服务器配置是 8C16G。", "2026-11-9.md": "数据库端口是 5433。", "2026-11-08.txt": "我的工位在 12 楼。",
            "20261107.md": "API 版本是 v3。", "2026-11-10.md": "缓存大小是 2GB。"}
    for name, text in said.items():
        body = f"[10:00] 用户: {text}\n"
        (logs / name).write_bytes(body.encode("utf-16") if name == "2026-11-10.md" else body.encode("utf-8"))
    (logs / "2026-13-01.md").write_text("[10:00] 用户: 端口是 1。\n", encoding="utf-8")
    (logs / "notes.md").write_text("no date in this name: not a log, not reported\n", encoding="utf-8")

    days = pending_days(s, "default", logs, date(2026, 11, 30))
    assert days == [date(2026, 11, d) for d in (6, 7, 8, 9, 10)]
    for d in days:
        report = digest_day(s, "default", d, logs)
        assert report["lines_read"] == 1 and not [p for p in report["quarantined"] if "binary" in p], report
    assert {"8C16G", "5433", "v3", "2GB"} <= set(current(s)) and any("12" in v for v in current(s))
    quarantine = [json.loads(line) for line in (Workspace(s.home).logs / "quarantine.jsonl").read_text(encoding="utf-8").splitlines()]
    unread = {q["file"]: q["reason"] for q in quarantine if q.get("day") is None}
    assert set(unread) == {"2026-13-01.md"} and "YYYY-MM-DD.md" in unread["2026-13-01.md"]
    utf16 = [q for q in quarantine if q["file"] == "2026-11-10.md"]
    assert utf16 and "UTF-16" in utf16[0]["reason"] and utf16[0]["severity"] == "warning"
    (ref,) = [r for r in RawArchive(Workspace(s.home).raw_dir).revisions("default", date(2026, 11, 10)).values()]
    lines = RawArchive(Workspace(s.home).raw_dir).read_lines(ref[-1]["ref"], 1, 1)
    assert lines == ["[10:00] 用户: 缓存大小是 2GB。"]
    assert (logs / "2026-11-10.md").read_bytes().startswith(b"\xff\xfe")  # the user's file is never touched
