"""The digest stages end to end on real files (no Prefect): bad input, revisions, cards, summaries."""

import hashlib
import json
from datetime import date

import frontmatter

from agentos_mem.digest.stages import digest_day, pending_days
from agentos_mem.kernel.settings import Settings
from agentos_mem.demo import init_demo_workspace
from agentos_mem.kernel.workspace import Workspace
from agentos_mem.storage.facts import FactStore
from agentos_mem.storage.raw_archive import RawArchive
from tests.kit.digest import log_workspace

DAY = date(2026, 11, 3)
GOOD = "[09:00] 用户: 我叫林晓。\n[09:01] 助手: 你好！\n[09:02] 用户: 数据库端口是 5432。\n"


def digests(files):
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in files}


def test_bad_files_are_quarantined_and_the_rest_of_the_day_is_digested(tmp_path):
    s, logs = log_workspace(tmp_path)
    (logs / "2026-11-03.md").write_text(GOOD + "[09:03] 陌生人: hello\n", encoding="utf-8")
    (logs / "2026-11-03-gbk.md").write_bytes("[09:00] 用户: 我喜欢喝茶\n".encode("gbk"))
    (logs / "2026-11-03-image.md").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00")
    (logs / "2026-11-03-empty.md").write_bytes(b"")
    (logs / "2026-11-03-broken.md").write_text("---\nspeakers: [oops\n---\n[10:00] 用户: 我喜欢咖啡。\n", encoding="utf-8")
    (logs / "2026-11-03.jsonl").write_text('{"role": "user", "content": "I live in Hangzhou.", "timestamp": "2026-11-03T10:00:00+08:00"}\n{oops\n', encoding="utf-8")
    with open(logs / "2026-11-03-huge.md", "wb") as f:  # a 50 MB log
        f.write(b"[09:00] user: " + b"x" * (50 * 1024 * 1024) + b"\n")
    before = digests(logs.iterdir())
    r = digest_day(s, "default", DAY, logs)
    text = "\n".join(r["quarantined"])
    for needle in ("陌生人", "2026-11-03-gbk.md:1: invalid UTF-8", "binary", "empty file", "broken frontmatter", "2026-11-03.jsonl:2: invalid JSON",
                   "2026-11-03-huge.md: file too large: 52.4 MB"):
        assert needle in text, needle
    store = FactStore(s.home / "agent-local/memory/facts.db")
    objects = {f["object"] for f in store.current("default")}
    store.close()
    assert {"林晓", "5432", "咖啡"} <= objects  # the good files and lines were digested
    assert digests(logs.iterdir()) == before  # no input modified or deleted
    ws = Workspace(s.home)
    errors = (ws.logs / "errors.log").read_text(encoding="utf-8")
    assert "2026-11-03-image.md" in errors and "2026-11-03.jsonl:2" in errors
    entries = [json.loads(x) for x in (ws.logs / "quarantine.jsonl").read_text(encoding="utf-8").splitlines()]
    assert {e["file"] for e in entries} >= {"2026-11-03-image.md", "2026-11-03-huge.md", "2026-11-03-gbk.md"}
    digest_day(s, "default", DAY, logs)
    assert len((ws.logs / "quarantine.jsonl").read_text(encoding="utf-8").splitlines()) == len(entries)  # listed once


def test_a_changed_log_is_a_new_revision_and_refreshes_cards(tmp_path):
    s, logs = log_workspace(tmp_path)
    log = logs / "2026-11-03.md"
    log.write_text("## 数据库\n\n" + GOOD, encoding="utf-8")
    first = digest_day(s, "default", DAY, logs)
    assert pending_days(s, "default", logs, DAY) == []
    log.write_text("## 缓存\n\n" + GOOD + "[09:10] 用户: 数据库端口改为 5433。\n", encoding="utf-8")
    assert pending_days(s, "default", logs, DAY) == [DAY]
    second = digest_day(s, "default", DAY, logs)
    # only the new line applies: the two unchanged statements (moved down by the heading) are the same observations
    assert second["facts_superseded"] == 1 and second["already_applied"] == 2 and second["facts_reinforced"] == 0
    revs = RawArchive(Workspace(s.home).raw_dir).revisions("default", DAY)["2026-11-03.md"]
    assert [r["revision"] for r in revs] == [1, 2]
    cards = Workspace(s.home).cards_dir / "default"
    assert set(first["card_ids"]) != set(second["card_ids"])
    assert sorted(p.stem for p in cards.glob("*.md")) == sorted(second["card_ids"])  # stale cards of the day replaced


def test_card_points_to_facts_and_raw_lines(tmp_path):
    s, logs = log_workspace(tmp_path)
    (logs / "2026-11-03.md").write_text("## 自我介绍\n\n" + GOOD, encoding="utf-8")
    r = digest_day(s, "default", DAY, logs)
    (card_id,) = r["card_ids"]
    assert card_id.startswith("h_20261103_")
    post = frontmatter.load(Workspace(s.home).cards_dir / "default" / f"{card_id}.md")
    assert post["topic"] == "自我介绍" and post["raw"]["lines"] == [3, 5] and len(post["facts"]) >= 2
    assert post["keywords"] and post["summary"]
    lines = RawArchive(Workspace(s.home).raw_dir).read_lines(post["raw"]["ref"], *post["raw"]["lines"])
    assert lines[0].endswith("我叫林晓。")
    summary = (s.home / "agent-local/memory/daily_summaries/default/2026-11-03.md").read_text(encoding="utf-8")
    assert card_id in summary and "5432" in summary


def test_demo_week_tells_the_story(tmp_path):
    home = tmp_path / "home"
    init_demo_workspace(home, end_day=date(2026, 11, 29))
    s = Settings(home=home, hostname="h")
    from agentos_mem.digest.logformat import list_days

    results = [digest_day(s, "default", d, s.working_dir()) for d in list_days(s.working_dir())]
    assert len(results) >= 8
    store = FactStore(Workspace(home).facts_db)
    history = [f["object"] for f in store.history("default", "服务器配置") if f["predicate"] == "value"]
    assert history[:2] == ["4C8G", "8C16G"]
    port = [f for f in store.history("default", "数据库端口") if f["status"] == "active"]
    assert [f["object"] for f in port] == ["5433"] and port[0]["explicitness"] == "corrected"
    assert [f["object"] for f in store.history("default", "database port")] == ["5432", "5433"]  # one subject, both languages
    assert any(c["candidate_explicitness"] == "inferred" for c in store.conflicts("default"))
    store.close()
