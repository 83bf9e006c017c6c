"""What a fact's index unit says (index/units.py): its words in both languages, so a question in either finds it."""

from __future__ import annotations

from agentos_mem.index.units import fact_unit, romanized

ROW = {"id": 7, "user_id": "li", "subject": "朵朵", "predicate": "lives_in", "object": "外国语小学", "source_file": "2026-03-30.md",
       "line_start": 3, "line_end": 3, "raw_ref": None, "evidence": "朵朵转学了，这周已经在外国语小学上课了", "valid_from": "2026-03-30T10:00:00",
       "event_date": None, "source_day": "2026-03-30"}


def test_a_chinese_name_is_also_written_as_it_is_said():
    text = fact_unit(ROW).text
    assert "duoduo" in text and "朵朵" in text
    assert "xiaoli" in romanized("小李").split() and {"shen", "zhen", "shenzhen"} <= set(romanized("深圳").split())


def test_only_short_names_are_romanized():
    assert romanized("外国语小学") == "" and romanized("Obsidian") == "" and romanized("user") == ""
