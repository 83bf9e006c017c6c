"""Every fact knows its evidence (issue 15): a removed or edited log retracts what only it said, at the next night;
re-digesting an edited log applies each observation once; a forgotten fact is not re-learnt from the same lines."""

from __future__ import annotations

import sqlite3
from datetime import date

import frontmatter

from agentos_mem.digest.stages import digest_day, pending_days, run_day
from agentos_mem.kernel.settings import Settings
from agentos_mem.kernel.workspace import Workspace
from agentos_mem.storage.facts import FactStore
from tests.kit.digest import log_workspace

D1, D2 = date(2026, 11, 3), date(2026, 11, 4)
LINES = ["[09:00] 用户: 我叫林晓。", "[09:01] 用户: 数据库端口是 5432。", "[09:02] 用户: 我住在杭州。", "[09:03] 用户: 我喜欢喝茶。",
         "[09:04] 用户: 服务器配置是 8C16G。", "[09:05] 用户: 我的项目代号是 Atlas。"]


def write(logs, name, lines):
    (logs / name).write_text("\n".join(lines) + "\n", encoding="utf-8")


def rows(s: Settings) -> list[dict]:
    con = sqlite3.connect(s.home / "agent-local/memory/facts.db")
    con.row_factory = sqlite3.Row
    try:
        return [dict(r) for r in con.execute("select * from facts order by id")]
    finally:
        con.close()


def by_object(s: Settings) -> dict[str, dict]:
    out = {}
    for r in rows(s):
        assert r["object"] not in out, f"duplicate row for {r['object']}"
        out[r["object"]] = r
    return out


def nightly(s: Settings, logs, until=D2) -> list[date]:
    """What the nightly chain does for the digest: every pending day, in order, through the plain stages."""
    days = pending_days(s, "default", logs, until)
    for d in days:
        run_day(s, "default", d, logs)
    return days


def test_a_one_line_edit_redigested_changes_only_that_lines_facts(tmp_path):
    s, logs = log_workspace(tmp_path)
    write(logs, "2026-11-03.md", LINES)
    first = digest_day(s, "default", D1, logs)
    assert first["facts_added"] == 6
    before = by_object(s)

    edited = list(LINES)
    edited[4] = "[09:04] 用户: 服务器配置升级到 16C32G 了。"
    write(logs, "2026-11-03.md", ["# 周一", ""] + edited)  # and a heading above: every line moves down two
    assert nightly(s, logs) == [D1]
    after = by_object(s)
    # the five unchanged statements: no confidence raise, no new row, the same ids
    for obj in ("林晓", "5432", "杭州", "喝茶", "Atlas"):
        assert after[obj]["id"] == before[obj]["id"] and after[obj]["confidence"] == before[obj]["confidence"], obj
        assert after[obj]["reinforcements"] == 0 and after[obj]["status"] == "active"
    # the edited line: its new value is current, its old value never was (retracted with the reason), one row each
    assert after["16C32G"]["status"] == "active" and after["16C32G"]["previous_version"] == before["8C16G"]["id"]
    assert after["8C16G"]["status"] == "retracted" and after["8C16G"]["closed_reason"] == "source edited: 2026-11-03.md:5"
    assert len(rows(s)) == 7

    # the same log digested again: nothing at all changes
    again = digest_day(s, "default", D1, logs)
    assert again["already_applied"] == 6 and again["facts_added"] == again["facts_reinforced"] == again["facts_retracted"] == 0
    assert by_object(s) == after


def test_an_edit_that_still_says_the_fact_keeps_it_without_raising_its_confidence(tmp_path):
    s, logs = log_workspace(tmp_path)
    write(logs, "2026-11-03.md", LINES)
    digest_day(s, "default", D1, logs)
    before = by_object(s)
    edited = list(LINES)
    edited[1] = "[09:01] 用户:   数据库端口是 5432 。"  # spacing only: the same content
    edited[2] = "[09:07] 用户: 我住在杭州。"  # the time corrected: another line, the same fact
    write(logs, "2026-11-03.md", edited)
    r = digest_day(s, "default", D1, logs)
    after = by_object(s)
    assert r["facts_added"] == r["facts_reinforced"] == r["facts_retracted"] == 0
    assert {k: (v["id"], v["status"], v["confidence"]) for k, v in after.items()} == \
        {k: (v["id"], v["status"], v["confidence"]) for k, v in before.items()}


def test_a_removed_log_retracts_the_facts_only_it_said_at_the_next_night(tmp_path):
    s, logs = log_workspace(tmp_path)
    write(logs, "2026-11-03.md", ["[09:00] 用户: 我叫林晓。", "[09:01] 用户: 数据库端口是 5432。", "[09:02] 用户: 我的项目代号是 Atlas。"])
    write(logs, "2026-11-03-extra.md", ["[10:00] 用户: 我住在杭州。"])
    write(logs, "2026-11-04.md", ["[09:00] 用户: 我叫林晓。", "[09:01] 用户: 数据库端口改为 5433。"])
    assert nightly(s, logs) == [D1, D2]
    ids = {k: v["id"] for k, v in by_object(s).items()}
    ws = Workspace(s.home)
    assert any("杭州" in p.name for p in (ws.cards_dir / "default").glob("h_20261103_*.md"))

    # one extra file of a day removed: the day is pending again, what only that file said is retracted
    (logs / "2026-11-03-extra.md").unlink()
    assert pending_days(s, "default", logs, D2) == [D1]
    nightly(s, logs)
    assert by_object(s)["杭州"]["status"] == "retracted"
    assert by_object(s)["杭州"]["closed_reason"] == "source removed: 2026-11-03-extra.md:1"
    assert pending_days(s, "default", logs, D2) == []
    cards_d1 = sorted(p.name for p in (ws.cards_dir / "default").glob("h_20261103_*.md"))
    assert cards_d1 and not any("杭州" in c for c in cards_d1)  # the removed file's card went with it

    # every log of a day removed: the day is found, its only-evidence facts retracted, its cards and summary emptied
    (logs / "2026-11-04.md").unlink()
    assert pending_days(s, "default", logs, D2) == [D2]
    nightly(s, logs)
    after = by_object(s)
    assert after["5433"]["status"] == "retracted" and after["5433"]["closed_reason"] == "source removed: 2026-11-04.md:2"
    assert after["5432"]["status"] == "active" and after["5432"]["valid_to"] is None  # the value it superseded holds again
    assert after["林晓"]["status"] == "active" and after["林晓"]["id"] == ids["林晓"]  # 2026-11-03.md says it too
    assert after["Atlas"]["status"] == "active"
    assert not list((ws.cards_dir / "default").glob("h_20261104_*.md"))
    assert sorted(p.name for p in (ws.cards_dir / "default").glob("h_20261103_*.md")) == cards_d1
    summary = frontmatter.load(ws.summaries_dir / "default" / "2026-11-04.md")
    assert summary.metadata["files"] == [] and "5433" not in summary.content
    assert pending_days(s, "default", logs, D2) == []
    store = FactStore(s.home / "agent-local/memory/facts.db")
    try:
        assert [f["object"] for f in store.current("default") if f["subject"] == "数据库端口"] == ["5432"]
    finally:
        store.close()

    # the log put back: its facts are learnt again (the retracted rows stay, as history)
    write(logs, "2026-11-04.md", ["[09:00] 用户: 我叫林晓。", "[09:01] 用户: 数据库端口改为 5433。"])
    assert nightly(s, logs) == [D2]
    current = {r["object"] for r in rows(s) if r["status"] == "active"}
    assert "5433" in current and "5432" not in current


def test_a_day_read_from_another_folder_is_not_retracted(tmp_path):
    s, logs = log_workspace(tmp_path)
    other = tmp_path / "other"
    other.mkdir()
    write(other, "2026-11-03.md", ["[09:00] 用户: 我叫林晓。"])
    digest_day(s, "default", D1, other)
    assert pending_days(s, "default", logs, D2) == []  # not this folder's day
    digest_day(s, "default", D1, logs)  # a folder without that day's logs: a clean no-op
    assert by_object(s)["林晓"]["status"] == "active"


def test_legacy_observations_are_keyed_from_the_archive_on_the_next_digest(tmp_path):
    """A facts.db written before observations were keyed by content: the first digest of an edited day reads the
    archived revision its rows cite, so the unchanged lines are not applied a second time."""
    s, logs = log_workspace(tmp_path)
    write(logs, "2026-11-03.md", LINES)
    digest_day(s, "default", D1, logs)
    db = s.home / "agent-local/memory/facts.db"
    con = sqlite3.connect(db)  # as the migration leaves a store of before: file-hash keys, no content, no folder
    con.execute("update evidence set origin='legacy', obs_hash=null, obs_occurrence=null, candidate_key='legacy-' || rowid")
    con.execute("update digested set folder=null")
    con.commit()
    con.close()
    before = by_object(s)
    edited = list(LINES)
    edited[3] = "[09:03] 用户: 我喜欢喝咖啡。"
    write(logs, "2026-11-03.md", edited)
    r = digest_day(s, "default", D1, logs)
    after = by_object(s)
    assert r["already_applied"] == 5 and r["facts_reinforced"] == 0 and r["facts_retracted"] == 1
    assert after["喝茶"]["status"] == "retracted" and after["喝咖啡"]["status"] == "active"
    for obj in ("林晓", "5432", "杭州", "8C16G", "Atlas"):
        assert after[obj]["confidence"] == before[obj]["confidence"] and after[obj]["status"] == "active", obj
