"""A memory record the user deleted is not made again by automatic extraction from the same old lines (issue 15)."""

from __future__ import annotations

from datetime import date

from agentos_mem.digest.stages import digest_day, pending_days, run_day
from agentos_mem.kernel.settings import Settings
from agentos_mem.kernel.workspace import init_workspace
from agentos_mem.storage.memory_records import observation_keys, open_book
from tests.kit.cli import run_cli

DAY, NEXT = date(2026, 11, 3), date(2026, 11, 4)
LOG = ("## 周报\n\n[09:05] 用户: 我喜欢喝茶。\n[09:06] 用户: 以后所有周报都用简洁格式，先写结论。\n[09:07] 助手: 好的。\n")


def test_a_deleted_auto_memory_is_not_recreated_from_the_same_lines(tmp_path):
    home = tmp_path / "home"
    init_workspace(home)
    logs = tmp_path / "logs"
    logs.mkdir()
    log = logs / f"{DAY}.md"
    log.write_text(LOG, encoding="utf-8")
    s = Settings(home=home, hostname="h", logs_dir=logs, llm_base_url=None)
    first = digest_day(s, "default", DAY, logs)
    name = next(n for n in first["memories"]["created"] if "周报" in n)
    book = open_book(s)
    assert book.read("default", name).source == "auto" and observation_keys(book.read("default", name).body)

    run_cli("memory", "delete", name, home=home)
    # only hashes of where it came from are kept, never the deleted words
    db = (home / "agent-local/memory/memory_proposals.db").read_bytes()
    assert "简洁格式".encode() not in db

    again = digest_day(s, "default", DAY, logs)  # the same day digested again
    assert again["memories"]["created"] == [] and not book.exists("default", name)

    log.write_text("# 周一\n\n" + LOG.replace("我喜欢喝茶。", "我喜欢喝绿茶。"), encoding="utf-8")  # an edit elsewhere moves the line
    assert pending_days(s, "default", logs, DAY) == [DAY]
    edited = run_day(s, "default", DAY, logs)
    assert not any("周报" in n for n in edited["memories"]["created"]) and not book.exists("default", name)

    # a new statement on another day is a new memory; and the user may always save it by hand
    (logs / f"{NEXT}.md").write_text(LOG.replace("[09:05] 用户: 我喜欢喝茶。\n", ""), encoding="utf-8")
    later = digest_day(s, "default", NEXT, logs)
    assert any("周报" in n for n in later["memories"]["created"])
    book.delete("default", next(n for n in later["memories"]["created"] if "周报" in n))
    run_cli("memory", "save", name, "-d", "以后所有周报都用简洁格式，先写结论", "-t", "feedback", home=home)
    assert book.read("default", name).source == "manual"
