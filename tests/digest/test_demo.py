"""The demo logs and identity templates, as a user running ``agentos init --demo`` would see them."""

from __future__ import annotations

import json
import re
from datetime import date, timedelta

import pytest
import yaml

from agentos_mem.demo import launch_day, write_demo_logs
from agentos_mem.kernel.templates import core_templates
from agentos_mem.digest.logformat import ASSISTANT_LABELS, USER_LABELS, read_log

END = date(2026, 11, 10)
TURN = re.compile(r"^\[(\d{2}):(\d{2})(?::(\d{2}))?\] ([^\s:：\[\]][^:：\[\]]*?)[:：] ?(.+)$")
CJK = re.compile(r"[\u4e00-\u9fff]")
LATIN_WORD = re.compile(r"[A-Za-z]{2,}")


@pytest.fixture
def demo(tmp_path):
    paths = write_demo_logs(tmp_path / "logs", end_day=END)
    return tmp_path / "logs", paths


def _day_md(folder, day: date) -> str:
    return (folder / f"{day.isoformat()}.md").read_text(encoding="utf-8")


def _split(text: str) -> tuple[dict, list[str]]:
    """(frontmatter, body lines) of a day log."""
    lines = text.splitlines()
    if lines and lines[0] == "---":
        end = lines.index("---", 1)
        return yaml.safe_load("\n".join(lines[1:end])) or {}, lines[end + 1 :]
    return {}, lines


def test_eight_consecutive_days_ending_at_end_day(demo):
    folder, paths = demo
    days = sorted({date.fromisoformat(p.name[:10]) for p in paths})
    assert len(days) >= 8
    assert days[-1] == END
    assert days == [END - timedelta(days=i) for i in reversed(range(len(days)))]
    assert all(p.parent == folder and p.is_file() for p in paths)
    for d in days:
        assert (folder / f"{d.isoformat()}.md").is_file()


def test_deterministic_and_leaves_other_files_alone(tmp_path):
    a = write_demo_logs(tmp_path / "a", end_day=END)
    (tmp_path / "b").mkdir()
    mine = tmp_path / "b" / "notes.txt"
    mine.write_text("keep me", encoding="utf-8")
    b = write_demo_logs(tmp_path / "b", end_day=END)
    assert [p.name for p in a] == [p.name for p in b]
    assert all(x.read_bytes() == y.read_bytes() for x, y in zip(a, b))
    assert mine.read_text(encoding="utf-8") == "keep me"


def test_every_md_line_is_a_turn_heading_or_continuation(demo):
    folder, paths = demo
    for p in paths:
        if p.suffix != ".md" or p.name.endswith("-scratch.md"):
            continue
        meta, body = _split(p.read_text(encoding="utf-8"))
        declared = meta.get("speakers") or {}
        turns = 0
        for line in body:
            if not line.strip() or line.startswith("#"):
                continue
            if line.startswith("  "):
                assert turns, f"{p.name}: continuation before any turn: {line!r}"
                continue
            m = TURN.match(line)
            assert m, f"{p.name}: not a turn line: {line!r}"
            speaker = m.group(4)
            assert speaker.lower() in USER_LABELS | ASSISTANT_LABELS or speaker in declared, speaker
            turns += 1
        assert 6 <= turns <= 20, f"{p.name}: {turns} turns"


def test_both_scripts_some_days_chinese_some_english(demo):
    folder, _ = demo
    ratios = []
    for i in range(8):
        text = _day_md(folder, END - timedelta(days=i))
        cjk, words = len(CJK.findall(text)), len(LATIN_WORD.findall(text))
        ratios.append(cjk / (cjk + words))
    assert max(ratios) > 0.8, "no mostly-Chinese day"
    assert min(ratios) < 0.3, "no mostly-English day"
    assert sum(0.3 <= r <= 0.8 for r in ratios) >= 1, "no mixed day"


def test_facts_the_extractor_should_find(demo):
    folder, _ = demo
    days = [END - timedelta(days=7 - i) for i in range(8)]
    text = "\n".join(_day_md(folder, d) for d in days)
    for needle in ["我叫林晓", "后端工程师", "云栈科技", "杭州", "coffee", "tea", "Go over Java", "简洁",
                   "青鸟", "PostgreSQL", "我们决定采用 PostgreSQL", "I plan to write the migration guide tomorrow",
                   "我觉得 Rust 的学习曲线太陡", "永远不要在周五发布", "never deploy on Fridays",
                   "看起来你更喜欢 Java", "不对，数据库端口应该是 5433，不是 5432"]:
        assert needle in text, needle
    # Values that change, in order, and one restated on a later day.
    first = lambda s: next(i for i, d in enumerate(days) if s in _day_md(folder, d))  # noqa: E731
    assert first("服务器配置是 4C8G") < first("8C16G")
    assert first("数据库端口是 5432") < first("The database port is now 5433")
    assert first("API 版本是 v2.1.0") < first("v2.2.0")
    assert sum("8C16G" in _day_md(folder, d) for d in days) >= 2


def test_launch_date_explicit_and_relative_agree(demo):
    folder, _ = demo
    launch = launch_day(END)
    assert launch.weekday() == 2 and launch > END
    said_on = END - timedelta(days=2)  # the sixth day
    assert "下周三" in _day_md(folder, said_on)
    # 下周三 read as the Wednesday of the calendar week after the day it was said.
    assert launch - timedelta(days=launch.weekday()) == said_on - timedelta(days=said_on.weekday()) + timedelta(days=7)
    explicit = f"{launch.year}年{launch.month}月{launch.day}日"
    assert any(explicit in _day_md(folder, END - timedelta(days=i)) for i in range(8))


def test_malformed_files_are_really_malformed_and_the_rest_is_clean(demo):
    folder, paths = demo
    scratch = [p for p in paths if p.name.endswith("-scratch.md")]
    exports = sorted(p for p in paths if p.suffix == ".jsonl")
    assert len(scratch) == 1 and scratch[0].name[:10] != END.isoformat()
    with pytest.raises(UnicodeDecodeError):
        scratch[0].read_bytes().decode("utf-8")
    for p in paths:
        if p not in scratch:
            p.read_bytes().decode("utf-8")  # raises if any other file is not UTF-8
    assert len(exports) == 2 and all(p.name[:10] != END.isoformat() for p in exports)
    broken, unknown_role = 0, 0
    for p in exports:
        for line in p.read_text(encoding="utf-8").splitlines():
            try:
                obj = json.loads(line)
            except json.JSONDecodeError:
                broken += 1
                continue
            if obj["role"] not in ("user", "assistant"):
                unknown_role += 1
                continue
            assert obj["content"].strip()
            assert obj["timestamp"].startswith(p.name[:10] + "T")
    assert broken == 1 and unknown_role == 1


def test_the_log_reader_reads_the_demo(demo):
    """Round trip through the project's reader: only the planted problems are reported."""
    _, paths = demo
    problems = set()
    for p in paths:
        log = read_log(p, max_bytes=1_000_000)
        problems |= {(p.name, q.line) for q in log.problems}
        if p.suffix == ".md" and not p.name.endswith("-scratch.md"):
            assert 6 <= len(log.turns) <= 20
    export = (END - timedelta(days=4)).isoformat() + ".jsonl"
    scratch = (END - timedelta(days=2)).isoformat() + "-scratch.md"
    # The broken JSON line, the unknown role, and the scratch file's first non-UTF-8 line.
    assert problems == {(export, 3), (export, 4), (scratch, 3)}


def test_core_templates():
    t = core_templates()
    assert set(t) == {"SOUL.md", "IDENTITY.md", "USER.md"}
    soul = t["SOUL.md"]
    assert "## L0 硬约束 / Hard constraints" in soul
    l0 = soul.split("## L0 硬约束 / Hard constraints", 1)[1].split("\n## ", 1)[0]
    numbered = re.findall(r"^\d+\. .+$", l0, flags=re.M)
    assert len(numbered) >= 4
    assert any("删除" in x and "delete" in x for x in numbered)
    assert "L1" in soul
    assert "Claw" in t["IDENTITY.md"]
    assert "偏好" in t["USER.md"] and "工作" in t["USER.md"]
