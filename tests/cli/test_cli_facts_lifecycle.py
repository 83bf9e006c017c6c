"""Stale, not vanished; forget means forget (issue 15), as a user sees them on the command line (in process)."""

from __future__ import annotations

import json
from datetime import date

import frontmatter

from agentos_mem.digest.stages import digest_day
from agentos_mem.kernel.workspace import Workspace
from tests.kit.cli import run_cli
from tests.kit.digest import digested_workspace

MARCH = date(2026, 3, 10)
LOG = "[09:04] 用户: 服务器配置是 8C16G。\n[09:05] 用户: 我喜欢喝茶。\n[09:06] 用户: 数据库端口是 5432。\n"


def listed(home, **env) -> dict[str, dict]:
    return {f["object"]: f for f in json.loads(run_cli("facts", "list", "--json", home=home, **env).stdout)["facts"]}


def test_a_fact_past_its_expiry_is_listed_stale_with_its_date(tmp_path):
    s, _ = digested_workspace(tmp_path, LOG, MARCH)
    march = listed(s.home, AGENTOS_NOW="2026-03-11T10:00:00+08:00")
    assert march["8C16G"]["stale"] is False and march["8C16G"]["stale_since"] is None

    # September: the technical facts' 180 days are over; the user's last known value is shown as possibly outdated
    later = run_cli("facts", "list", "--json", home=s.home, AGENTOS_NOW="2026-10-01T10:00:00+08:00")
    facts = json.loads(later.stdout)["facts"]
    assert facts[0]["object"] == "喝茶" and {f["object"] for f in facts[1:]} == {"8C16G", "5432"}  # fresh first, then the stale
    stale = {f["object"]: f for f in facts}
    assert stale["8C16G"]["stale"] is True and stale["8C16G"]["stale_since"] == "2026-09-06"
    assert stale["喝茶"]["stale"] is False  # a preference never expires
    text = run_cli("facts", "list", home=s.home, AGENTOS_NOW="2026-10-01T10:00:00+08:00").stdout
    line = next(x for x in text.splitlines() if "8C16G" in x)
    assert "possibly outdated since 2026-09-06" in line
    # and on a day before it expired it was simply valid
    then = json.loads(run_cli("facts", "list", "--as-of", "2026-08-01", "--json", home=s.home,
                              AGENTOS_NOW="2026-10-01T10:00:00+08:00").stdout)["facts"]
    assert {f["object"]: f["stale"] for f in then} == {"喝茶": False, "8C16G": False, "5432": False}


def test_query_serves_a_stale_fact_flagged_and_below_the_fresh_ones(indexed_home):
    late = "2027-12-01T10:00:00+08:00"  # every technical fact of the demo has expired by then
    out = json.loads(run_cli("query", "服务器现在是什么配置？", "--json", home=indexed_home, AGENTOS_NOW=late).stdout)
    facts = [i for i in out["items"] if i["kind"] == "fact"]
    hit = [f for f in facts if f["text"].startswith("服务器配置 · value · 8C16G")]
    assert out["status"] == "ok" and hit, out
    assert hit[0]["source"]["stale"] is True and hit[0]["source"]["stale_since"].startswith("2027-")
    assert hit[0]["text"].endswith(f"(possibly outdated since {hit[0]['source']['stale_since']})")
    kinds = [bool(i["source"].get("stale")) for i in out["items"]]
    assert kinds == sorted(kinds)  # nothing fresh after a stale fact
    fresh = json.loads(run_cli("query", "服务器现在是什么配置？", "--json", home=indexed_home).stdout)
    assert all(i["source"].get("stale") is False for i in fresh["items"] if i["kind"] == "fact")


def test_forget_closes_a_fact_and_the_same_lines_do_not_bring_it_back(tmp_path):
    s, logs = digested_workspace(tmp_path, LOG, date(2026, 11, 3))
    day = date(2026, 11, 3)
    port = listed(s.home)["5432"]
    out = run_cli("facts", "forget", str(port["id"]), "--reason", "wrong: never said", home=s.home)
    assert f"fact #{port['id']} forgotten (wrong: never said)" in out.stdout
    assert "5432" not in listed(s.home)
    history = json.loads(run_cli("facts", "history", "数据库端口", "--json", home=s.home).stdout)["versions"]
    assert [(v["object"], v["status"], v["closed_reason"]) for v in history] == [("5432", "forgotten", "wrong: never said")]
    assert "forgotten: wrong: never said" in run_cli("facts", "history", "数据库端口", home=s.home).stdout

    # the cards and the day's summary no longer list it
    ws = Workspace(s.home)
    for card in (ws.cards_dir / "default").glob("*.md"):
        post = frontmatter.load(card)
        assert port["id"] not in post.metadata["facts"] and "5432" not in post.content.split("## Source")[0].split("## Facts")[-1]
    assert f"#{port['id']} " not in (ws.summaries_dir / "default" / "2026-11-03.md").read_text(encoding="utf-8")

    # digesting the same log again, or an edit of that line, does not re-learn it
    r = digest_day(s, "default", day, logs)
    assert r["facts_added"] == 0 and r["already_applied"] == 3
    (logs / "2026-11-03.md").write_text(LOG.replace("[09:06] 用户: 数据库端口是 5432。", "[09:08] 用户: 数据库端口是 5432 。"), encoding="utf-8")
    digest_day(s, "default", day, logs)
    assert "5432" not in listed(s.home)
    versions = json.loads(run_cli("facts", "history", "数据库端口", "--json", home=s.home).stdout)["versions"]
    assert [v["status"] for v in versions] == ["forgotten"]  # no second row
    cards = [frontmatter.load(p) for p in (ws.cards_dir / "default").glob("*.md")]
    assert all(port["id"] not in c.metadata["facts"] for c in cards)

    # a person's mistakes are told plainly
    again = run_cli("facts", "forget", str(port["id"]), home=s.home, check=False)
    assert again.returncode != 0 and "already forgotten" in again.stderr
    unknown = run_cli("facts", "forget", "9999", home=s.home, check=False)
    assert unknown.returncode != 0 and "no fact #9999" in unknown.stderr
    other = run_cli("facts", "forget", str(listed(s.home)["8C16G"]["id"]), "--user", "bob", home=s.home, check=False)
    assert other.returncode != 0 and "no fact #" in other.stderr  # another user's fact reads as an unknown one


def test_an_id_no_store_can_hold_is_refused_in_one_line_naming_the_argument(tmp_path):
    """``agentos facts forget 99999999999999999999`` (and every id of the bad-input corpus, for forget, resolve and the
    memory proposals) is a usage error naming the argument and the range (exit 2), not a traceback; nothing changes."""
    from tests.kit.bad_inputs import BAD_IDS

    s, _ = digested_workspace(tmp_path, LOG, MARCH)
    before = listed(s.home)
    for bad in BAD_IDS:
        for argv, name in ((["facts", "forget", bad.cli], "fact_id"), (["facts", "resolve", bad.cli, "--reject"], "conflict_id"),
                           (["memory", "proposals", "--accept", bad.cli], "--accept")):
            out = run_cli(*argv, home=s.home, check=False)
            assert out.returncode == 2, (argv, out.stderr)
            assert name in out.stderr and bad.said in out.stderr and "Traceback" not in out.stderr, (argv, out.stderr)
    assert listed(s.home) == before


def test_the_python_api_refuses_an_id_past_sqlite_integers_by_name(tmp_path):
    from agentos_mem.services.decisions import forget_fact

    import pytest

    s, _ = digested_workspace(tmp_path, LOG, MARCH)
    for bad in (2**70, -1, "1"):
        with pytest.raises(ValueError, match=r"fact id .*9223372036854775807"):
            forget_fact(s, "default", bad, "")


def test_a_forgotten_value_is_served_by_no_card_of_the_query(tmp_path):
    """Issue 42: after `facts forget` of 服务器配置 8C16G and a rebuild, `query` still served "服务器配置还是 8C16G"
    through an L1 card's summary. Every text the query serves shows the forgotten value as [forgotten]."""
    from agentos_mem.index.stages import rebuild

    day = date(2026, 11, 3)
    s, logs = digested_workspace(tmp_path, "## 服务器\n\n[09:00] 用户: 服务器配置还是 8C16G，内存够用。\n[09:01] 助手: 好的，8C16G。\n", day)
    rebuild(s)
    before = json.loads(run_cli("query", "服务器配置是什么", "--json", home=s.home).stdout)
    assert any("8C16G" in i["text"] for i in before["items"]), before
    fact = listed(s.home)["8C16G"]
    run_cli("facts", "forget", str(fact["id"]), home=s.home)
    rebuild(s)
    for q in ("服务器配置是什么", "what is the server spec", "8C16G"):
        out = json.loads(run_cli("query", q, "--json", home=s.home).stdout)
        assert not any("8c16g" in i["text"].lower() for i in out["items"]), (q, out["items"])
    assert "8C16G" not in run_cli("query", "服务器配置是什么", home=s.home).stdout


def test_a_forgotten_value_is_in_no_statement_raw_line_or_recalled_memory(tmp_path):
    """Issue 42, item 6, the rest of the read paths: a statement the digest kept whole, the raw lines `query --raw`
    serves and a memory record `memory recall` serves (CLI and the same service the MCP tool calls) show the value a
    person forgot as [forgotten]; the logs and the record's file keep the words (the README says how to remove them)."""
    from agentos_mem.index.stages import rebuild

    day = date(2026, 11, 3)
    s, logs = digested_workspace(tmp_path, "## 服务器\n\n[09:00] 用户: 服务器配置还是 8C16G，内存够用。\n[09:01] 助手: 好的，8C16G。\n", day)
    run_cli("memory", "save", "server-spec", "-d", "服务器配置 8C16G，两台", "-t", "project",
            "--body", "我们的服务器配置是 8C16G，部署在杭州机房。", home=s.home)
    rebuild(s)
    assert "8C16G" in run_cli("memory", "recall", "服务器配置", home=s.home).stdout
    run_cli("facts", "forget", str(listed(s.home)["8C16G"]["id"]), home=s.home)
    rebuild(s)

    raw = json.loads(run_cli("query", "服务器配置是什么", "--raw", "--json", home=s.home).stdout)
    assert [i for i in raw["items"] if i["kind"] == "raw"], raw  # the raw lines are served, the value in them is not
    assert not any("8c16g" in i["text"].lower() for i in raw["items"]), raw["items"]
    recalled = json.loads(run_cli("memory", "recall", "服务器配置", "--json", home=s.home).stdout)
    (hit,) = recalled["hits"]
    assert "8C16G" not in hit["body"] + hit["description"] and "[forgotten]" in hit["body"] and "杭州机房" in hit["body"]
    assert "8C16G" in run_cli("memory", "show", "server-spec", home=s.home).stdout  # the user's own text is theirs to edit


def test_a_forgotten_value_is_in_no_knowledge_search_answer_or_section(tmp_path):
    """Issue 42, item 6, knowledge: a published document that states a value the user forgot serves it as [forgotten]
    in `kb search` snippets, `kb ask` answers and `kb read` sections; the document's file keeps the user's words."""
    from agentos_mem.knowledge.refine import refine
    from tests.kit.knowledge import item

    day = date(2026, 11, 3)
    s, logs = digested_workspace(tmp_path, "[09:00] 用户: 服务器配置是 8C16G。\n", day)
    item(s.home, "knowledge/clipping", "srv.md", "# 服务器手册\n\n## 配置\n\n生产服务器配置是 8C16G，部署在杭州机房。\n",
         title="服务器手册", source="https://example.com/srv")
    (doc,) = refine(s)["refined"]
    run_cli("kb", "approve", doc["doc_id"], home=s.home)
    assert "8C16G" in run_cli("kb", "search", "服务器配置", home=s.home).stdout
    run_cli("facts", "forget", str(listed(s.home)["8C16G"]["id"]), home=s.home)
    found = json.loads(run_cli("kb", "search", "服务器配置", "--json", home=s.home).stdout)
    assert found["hits"] and not any("8C16G" in h["snippet"] for h in found["hits"])
    asked = json.loads(run_cli("kb", "ask", "服务器配置是什么", "--json", home=s.home).stdout)
    assert "8C16G" not in asked["answer"]
