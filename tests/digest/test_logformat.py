"""Reading day logs: the Markdown format, JSONL exports, and every kind of bad input."""

import json
from datetime import date

import pytest

from agentos_mem.digest.logformat import day_files, list_days, read_log

MD = """---
date: 2026-11-03
speakers:
  Caroline: other
---
# 2026-11-03

## 部署讨论

[09:12] 用户: 我们的服务器配置升级到 8C16G 了。
[09:13] 助手：好的，已记录。
第二行也属于助手。

[9:20:05] Caroline: I went to a support group yesterday.
  [10:00] indented lines stay inside the turn
[09:21] Stranger: who am I?
- [09:22] user: list-marked turn
"""


def write(tmp_path, name, data):
    p = tmp_path / name
    p.write_bytes(data if isinstance(data, bytes) else data.encode("utf-8"))
    return p


def test_markdown_turns_keep_speaker_time_topic_and_lines(tmp_path):
    log = read_log(write(tmp_path, "2026-11-03.md", MD), max_bytes=10**6)
    got = [(t.role, t.speaker, t.time, t.line_start, t.line_end) for t in log.turns]
    assert got == [("user", "用户", "09:12", 10, 10), ("assistant", "助手", "09:13", 11, 12),
                   ("other", "Caroline", "09:20:05", 14, 15), ("user", "user", "09:22", 17, 17)]
    assert log.turns[0].topic == "部署讨论"
    assert log.turns[1].text == "好的，已记录。\n第二行也属于助手。"
    assert "indented lines stay inside the turn" in log.turns[2].text
    (problem,) = log.problems
    assert problem.line == 16 and "unknown speaker 'Stranger'" in problem.reason


def test_jsonl_export_and_its_bad_lines(tmp_path):
    lines = [json.dumps({"role": "user", "content": "my name is Ada", "timestamp": "2026-11-03T01:12:00Z"}),
             '{"role": "assistant", "content": "noted"',  # broken JSON
             json.dumps({"role": "narrator", "content": "x", "timestamp": "2026-11-03T09:00:00"}),
             json.dumps({"role": "assistant", "content": "Nice to meet you, Ada", "timestamp": "not a time"})]
    log = read_log(write(tmp_path, "2026-11-03.jsonl", "\n".join(lines)), max_bytes=10**6, tz="Asia/Shanghai")
    assert [(t.role, t.time, t.line_start) for t in log.turns] == [("user", "09:12:00", 1), ("assistant", None, 4)]
    assert [(p.line, p.severity) for p in log.problems] == [(2, "error"), (3, "error"), (4, "warning")]
    assert "invalid JSON" in log.problems[0].reason and "narrator" in log.problems[1].reason


@pytest.mark.parametrize("data,needle", [
    (b"", "empty file"),
    (b"\x89PNG\r\n\x1a\n\x00\x00\x00", "binary"),
])
def test_unreadable_files_are_quarantined_with_a_reason(tmp_path, data, needle):
    p = write(tmp_path, "2026-11-03.md", data)
    log = read_log(p, max_bytes=10**6)
    assert log.turns == [] and needle in log.problems[0].reason
    assert p.read_bytes() == data  # never modified


def test_invalid_utf8_names_the_line(tmp_path):
    log = read_log(write(tmp_path, "2026-11-03.md", b"[09:00] user: ok\n[09:01] user: \xc3\x28\n"), max_bytes=10**6)
    assert log.problems[0].line == 2


def test_invalid_utf8_skips_only_its_lines(tmp_path):
    # a bad turn line: the turn above ends, the bad turn's continuation is not given to the speaker above
    data = ("[09:00] 用户: 你好\n".encode() + b"[09:01] \xff\xfe: bad\n"
            + "  still the bad turn\n[09:02] 用户: 我喜欢喝茶。\n  \u2028 done\n".encode() + b"  \xc3( a bad continuation\n  more\n")
    p = write(tmp_path, "2026-11-03.md", data)
    log = read_log(p, max_bytes=10**6)
    # a bad continuation line is left out of its turn, which goes on
    assert [(t.text, t.line_start) for t in log.turns] == [("你好", 1), ("我喜欢喝茶。\n\u2028 done\n\nmore", 4)]
    assert [(q.line, q.severity) for q in log.problems] == [(2, "error"), (6, "error")]
    assert "invalid UTF-8 (byte 0xff at byte 9 of the line)" in log.problems[0].reason
    assert log.data == data and p.read_bytes() == data  # the archive gets the original bytes; the file is never modified


def test_huge_file_is_not_read(tmp_path):
    p = write(tmp_path, "2026-11-03.md", "[09:00] user: x\n" * 1000)
    log = read_log(p, max_bytes=1000)
    assert log.turns == [] and "file too large" in log.problems[0].reason


def test_broken_frontmatter_falls_back_to_plain_markdown(tmp_path):
    log = read_log(write(tmp_path, "2026-11-03.md", "---\nspeakers: [unclosed\n---\n[09:00] 用户: 我喜欢咖啡\n"), max_bytes=10**6)
    assert [t.text for t in log.turns] == ["我喜欢咖啡"]
    assert "broken frontmatter" in log.problems[0].reason and log.problems[0].severity == "warning"


def test_day_files_and_days(tmp_path):
    for name in ["2026-11-03.md", "2026-11-03.jsonl", "2026-11-03-scratch.md", "2026-11-04.md", "notes.md", "2026-13-01.md"]:
        write(tmp_path, name, "[09:00] user: hi\n")
    assert list_days(tmp_path) == [date(2026, 11, 3), date(2026, 11, 4)]
    assert [p.name for p in day_files(tmp_path, date(2026, 11, 3))] == ["2026-11-03-scratch.md", "2026-11-03.md", "2026-11-03.jsonl"]
    assert day_files(tmp_path / "missing", date(2026, 11, 3)) == []
