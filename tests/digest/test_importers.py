"""Dataset importers: MemoryBank-SiliconFriend and LoCoMo -> day logs (+ LoCoMo's dia_map)."""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path

import pytest
import yaml

from agentos_mem.digest.importers import import_locomo, import_memorybank
from agentos_mem.digest.logformat import read_log

TURN = re.compile(r"^\[(\d{2}:\d{2}(?::\d{2})?)\] ([^\s:：\[\]][^:：\[\]]*?): (.+)$")


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _meta(path: Path) -> dict:
    lines = path.read_text(encoding="utf-8").splitlines()
    assert lines[0] == "---"
    return yaml.safe_load("\n".join(lines[1 : lines.index("---", 1)]))


def _turn_lines(path: Path) -> list[re.Match]:
    return [m for line in path.read_text(encoding="utf-8").splitlines() if (m := TURN.match(line))]


def _tree(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def _expected(turn: dict) -> str:
    """A LoCoMo turn's text as the day log should carry it: lines stripped, blank lines dropped."""
    text = "\n".join(x.strip() for x in turn["text"].splitlines() if x.strip())
    if turn.get("blip_caption"):
        text += f" [shared a photo: {turn['blip_caption']}]"
    return text


def _text_at(lines: list[str], start: int, end: int) -> str:
    """The turn text held by 1-based lines start..end (continuations lose their two-space indent)."""
    first = TURN.match(lines[start - 1])
    assert first, lines[start - 1]
    rest = [line[2:] for line in lines[start:end]]
    assert all(line.startswith("  ") for line in lines[start:end])
    return "\n".join([first.group(3), *rest])


# --- MemoryBank ---------------------------------------------------------------------------------


@pytest.fixture
def memorybank(eval_dir):
    return eval_dir / "memorybank_siliconfriend"


def test_memorybank_chinese_user(memorybank, tmp_path):
    src = memorybank / "memory_bank_cn.json"
    history = json.loads(src.read_text(encoding="utf-8"))["张曼婷"]["history"]
    report = import_memorybank(src, tmp_path, users=["张曼婷"])
    assert (report["users"], report["days"], report["turns"], report["errors"]) == (1, 10, 98, [])
    files = sorted((tmp_path / "张曼婷").glob("*.md"))
    assert [p.stem for p in files] == sorted(history)
    assert sorted(report["files"]) == [str(p) for p in files]
    first = files[0]
    assert _meta(first)["synthetic_times"] is True
    turns = _turn_lines(first)
    exchanges = history[first.stem]
    assert [m.group(2) for m in turns] == ["用户", "助手"] * len(exchanges)
    assert [m.group(1) for m in turns] == [f"20:{i:02d}" for i in range(len(turns))]
    assert turns[0].group(3) == exchanges[0]["query"] and turns[1].group(3) == exchanges[0]["response"]


def test_memorybank_english_labels_names_and_empty_day(memorybank, tmp_path):
    src = memorybank / "memory_bank_en.json"
    report = import_memorybank(src, tmp_path, users=["Jason", "John Zhang", "Nobody"])
    # " Jason " (spaces in the source key) gets a clean folder; the unknown name is reported.
    assert sorted(p.name for p in tmp_path.iterdir()) == ["Jason", "John Zhang"]
    assert report["errors"] == [{"user": "Nobody", "error": "not in the source file"}]
    assert {m.group(2) for p in (tmp_path / "Jason").glob("*.md") for m in _turn_lines(p)} == {"user", "assistant"}
    # John Zhang has a day with no exchanges upstream: no file for it.
    assert len(list((tmp_path / "John Zhang").glob("*.md"))) == 9


def test_memorybank_deterministic_and_source_untouched(memorybank, tmp_path):
    src = memorybank / "memory_bank_cn.json"
    before = _sha(src)
    import_memorybank(src, tmp_path / "a")
    import_memorybank(src, tmp_path / "b")
    a = _tree(tmp_path / "a")
    assert a == _tree(tmp_path / "b") and len(a) == 150
    mtimes = {p: p.stat().st_mtime_ns for p in (tmp_path / "a").rglob("*.md")}
    again = import_memorybank(src, tmp_path / "a")
    assert again["days"] == 150 and _tree(tmp_path / "a") == a
    assert {p: p.stat().st_mtime_ns for p in (tmp_path / "a").rglob("*.md")} == mtimes  # not rewritten
    assert _sha(src) == before


def test_memorybank_rejects_unsafe_user_names(tmp_path):
    day = {"2023-05-01": [{"query": "你好，我叫小明。", "response": "你好小明！"}]}
    src = tmp_path / "src.json"
    names = ["../evil", "a/b", "a\\b", "..", "bell\x07", "zero\u200bwidth", "小明", " 小明 ", ""]
    src.write_text(json.dumps({n: {"name": n, "history": day} for n in names}, ensure_ascii=False), encoding="utf-8")
    out = tmp_path / "out"
    report = import_memorybank(src, out)
    assert report["users"] == 1 and report["days"] == 1 and report["turns"] == 2
    assert sorted(e["user"] for e in report["errors"]) == sorted(n for n in names if n != "小明")
    assert [str(p.relative_to(tmp_path)) for p in sorted(tmp_path.rglob("*.md"))] == ["out/小明/2023-05-01.md"]
    assert [m.group(2) for m in _turn_lines(out / "小明" / "2023-05-01.md")] == ["用户", "助手"]


# --- LoCoMo -------------------------------------------------------------------------------------


@pytest.fixture
def locomo(eval_dir):
    return eval_dir / "locomo" / "locomo.json"


def _sessions(sample: dict) -> list[list[dict]]:
    conv = sample["conversation"]
    numbers = sorted(int(k[8:]) for k in conv if re.fullmatch(r"session_\d+", k))
    return [conv[f"session_{n}"] for n in numbers]


def test_locomo_one_conversation(locomo, tmp_path):
    sample = next(s for s in json.loads(locomo.read_text(encoding="utf-8")) if s["sample_id"] == "conv-26")
    report = import_locomo(locomo, tmp_path, conversations=["conv-26"])
    assert (report["conversations"], report["days"], report["sessions"], report["turns"]) == (1, 19, 19, 419)
    # conv-26 lists dates for sessions 20-35 but no turns for them.
    assert [s["session"] for s in report["skipped"]] == list(range(20, 36))
    folder = tmp_path / "conv-26"
    first = folder / "2023-05-08.md"  # "1:56 pm on 8 May, 2023"
    assert _meta(first)["speakers"] == {"Caroline": "other", "Melanie": "other"}
    lines = first.read_text(encoding="utf-8").splitlines()
    assert "## Session 1" in lines
    assert {m.group(1) for m in _turn_lines(first)} == {"13:56"}
    # Every turn is in the dia_map, and its line range holds exactly that turn's text.
    turns = {t["dia_id"]: t for session in _sessions(sample) for t in session}
    rows = [json.loads(line) for line in (folder / "dia_map.jsonl").read_text(encoding="utf-8").splitlines()]
    assert [r["dia_id"] for r in rows] == list(turns)
    cache: dict[str, list[str]] = {}
    for r in rows:
        lines = cache.setdefault(r["file"], (folder / r["file"]).read_text(encoding="utf-8").splitlines())
        assert TURN.match(lines[r["line_start"] - 1]).group(2) == turns[r["dia_id"]]["speaker"]
        assert _text_at(lines, r["line_start"], r["line_end"]) == _expected(turns[r["dia_id"]])
    photo = next(t for t in turns.values() if t.get("blip_caption"))
    assert f"[shared a photo: {photo['blip_caption']}]" in _expected(photo)


def test_locomo_all_turns_agree_with_the_log_reader(locomo, tmp_path):
    """The reader sees every turn at its dia_map range, with its text (conv-42 D25:3 spans two lines)."""
    import_locomo(locomo, tmp_path)
    expected, checked, multiline = 0, 0, 0
    for sample in json.loads(locomo.read_text(encoding="utf-8")):
        folder = tmp_path / sample["sample_id"]
        turns = {t["dia_id"]: t for session in _sessions(sample) for t in session}
        rows = [json.loads(line) for line in (folder / "dia_map.jsonl").read_text(encoding="utf-8").splitlines()]
        parsed = {}
        for p in folder.glob("*.md"):
            log = read_log(p, max_bytes=10_000_000)
            assert log.problems == []
            parsed |= {(p.name, t.line_start, t.line_end): t for t in log.turns}
        assert len(parsed) == len(rows) == len(turns)
        for r in rows:
            t = parsed[(r["file"], r["line_start"], r["line_end"])]
            assert t.text == _expected(turns[r["dia_id"]]) and t.speaker == turns[r["dia_id"]]["speaker"]
            assert t.topic == f"Session {r['session']}"
            multiline += r["line_end"] > r["line_start"]
        checked += len(rows)
        expected += len(turns)
    assert checked == expected > 0 and multiline >= 1


def test_locomo_deterministic_and_source_untouched(locomo, tmp_path):
    before = _sha(locomo)
    import_locomo(locomo, tmp_path / "a")
    import_locomo(locomo, tmp_path / "b")
    assert _tree(tmp_path / "a") == _tree(tmp_path / "b")
    assert _sha(locomo) == before


def _tiny_locomo(tmp_path: Path, **conversation) -> Path:
    base = {"speaker_a": "Ann", "speaker_b": "Bo"}
    src = tmp_path / "tiny.json"
    src.write_text(json.dumps([{"sample_id": "t-1", "conversation": base | conversation, "qa": []}]), encoding="utf-8")
    return src


def test_locomo_same_date_sessions_and_tricky_text(tmp_path):
    tricky = "first line\n\n[10:00] Bo: not a turn\n## not a heading\n```\n---  "
    src = _tiny_locomo(
        tmp_path,
        session_1_date_time="9:05 am on 3 March, 2023",
        session_1=[{"speaker": "Ann", "dia_id": "D1:1", "text": tricky},
                   {"speaker": "Bo", "dia_id": "D1:2", "text": "", "blip_caption": "a cat on a sofa",
                    "img_url": ["x"]}],
        session_2_date_time="11:40 pm on 3 March, 2023",
        session_2=[{"speaker": "Bo", "dia_id": "D2:1", "text": "Late again!"}],
        session_3_date_time="1:00 pm on 4 March, 2023",  # a date with no session: skipped
    )
    out = tmp_path / "out"
    report = import_locomo(src, out)
    assert (report["days"], report["sessions"], report["turns"]) == (1, 2, 3)
    assert report["skipped"] == [{"conversation": "t-1", "session": 3, "reason": "date only, no turns"}]
    day = out / "t-1" / "2023-03-03.md"
    lines = day.read_text(encoding="utf-8").splitlines()
    assert lines.index("## Session 1") < lines.index("## Session 2")
    assert [line for line in lines if line.startswith("[")] == [
        "[09:05] Ann: first line", "[09:05] Bo: [shared a photo: a cat on a sofa]", "[23:40] Bo: Late again!"]
    log = read_log(day, max_bytes=1_000_000)
    assert log.problems == []
    assert [(t.speaker, t.topic) for t in log.turns] == [("Ann", "Session 1"), ("Bo", "Session 1"), ("Bo", "Session 2")]
    rows = [json.loads(x) for x in (out / "t-1" / "dia_map.jsonl").read_text(encoding="utf-8").splitlines()]
    assert [(r["line_start"], r["line_end"]) for r in rows] == [(t.line_start, t.line_end) for t in log.turns]
    assert log.turns[0].text.splitlines()[:3] == ["first line", "[10:00] Bo: not a turn", "## not a heading"]


def test_locomo_rejects_unsafe_ids_and_speakers(tmp_path):
    src = tmp_path / "bad.json"
    session = {"session_1_date_time": "1:00 pm on 1 May, 2023",
               "session_1": [{"speaker": "A", "dia_id": "D1:1", "text": "hi"}]}
    src.write_text(json.dumps([
        {"sample_id": "../escape", "conversation": {"speaker_a": "A", "speaker_b": "B", **session}},
        {"sample_id": "ok", "conversation": {"speaker_a": "A: x", "speaker_b": "B", **session}},
        {"sample_id": "fine", "conversation": {"speaker_a": "A", "speaker_b": "B", **session}},
    ]), encoding="utf-8")
    report = import_locomo(src, tmp_path / "out", conversations=["../escape", "ok", "fine", "missing"])
    assert report["conversations"] == 1 and report["turns"] == 1
    assert sorted(e["conversation"] for e in report["errors"]) == ["../escape", "missing", "ok"]
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["fine"]
    assert not (tmp_path / "escape").exists()
