"""``agentos refine`` and ``agentos kb ...`` as a user runs them, real files: ``kb`` in process through ``cli.main.main``,
``refine`` (a Prefect flow) as the installed script in a subprocess."""

from __future__ import annotations

import json
import re

import pytest

from tests.kit.cli import agentos, run_cli
from tests.kit.knowledge import item


@pytest.mark.e2e  # `agentos refine` runs the refine flow, in a subprocess: Prefect's settings and server are process-wide
def test_refine_then_review_from_the_command_line(tmp_path, prefect_server):
    home = tmp_path / "ws"
    run_cli("init", home=home)
    item(home, "knowledge/clipping", "go.md", "# Go 并发模式\n\n用 channel 在 goroutine 之间传递数据。\n", title="Go 并发模式",
          source="https://go.dev/blog/pipelines")
    item(home, "personal", "bob.md", "# Bob 的笔记\n\n周会改到周四。\n", title="Bob 的笔记", source_type="personal", scope="personal", owner="bob")
    out = json.loads(agentos("refine", "--json", "--quiet", home=home, AGENTOS_HOSTNAME="testhost", PREFECT_API_URL=prefect_server).stdout)
    assert len(out["refined"]) == 2

    pending = json.loads(run_cli("kb", "pending", "--json", home=home).stdout)
    ids = {d["title"]: d["id"] for d in pending}
    assert set(ids) == {"Go 并发模式"} and all(d["status"] == "pending" for d in pending)  # bob's personal note is his alone
    mine = json.loads(run_cli("kb", "pending", "--json", "--mine", "--user", "bob", home=home).stdout)
    assert [d["title"] for d in mine] == ["Bob 的笔记"]  # bob is no admin: only his own
    ids["Bob 的笔记"] = mine[0]["id"]

    refused = run_cli("kb", "approve", ids["Bob 的笔记"], home=home, check=False)  # the default user is not bob
    assert refused.returncode == 2 and "no knowledge document" in refused.stderr  # another user's: as if unknown
    run_cli("kb", "approve", ids["Go 并发模式"], home=home)
    run_cli("kb", "approve", ids["Bob 的笔记"], "--user", "bob", home=home)
    again = run_cli("kb", "approve", ids["Go 并发模式"], home=home, check=False)
    assert again.returncode == 2 and "not pending" in again.stderr
    missing = run_cli("kb", "show", "nope", home=home, check=False)
    assert missing.returncode == 2 and "no knowledge document" in missing.stderr

    listed = json.loads(run_cli("kb", "list", "--json", home=home).stdout)
    assert [d["title"] for d in listed] == ["Go 并发模式"]
    assert {d["title"] for d in json.loads(run_cli("kb", "list", "--json", "--user", "bob", home=home).stdout)} == {"Go 并发模式", "Bob 的笔记"}
    shown = run_cli("kb", "show", ids["Go 并发模式"], home=home).stdout
    assert "ready" in shown and "reliability 0.8" in shown and "go.dev" in shown


def test_a_pending_documents_facts_wait_for_approval_on_the_command_line(tmp_path):
    """`kb pending` / `kb show` say how many fact candidates wait; `facts list` has none of them until `kb approve`."""
    from agentos_mem.knowledge.refine import refine
    from agentos_mem.kernel.settings import load_settings

    home = tmp_path / "ws"
    run_cli("init", home=home)
    item(home, "knowledge/clipping", "py.md", "# Python 3.13 新特性\n\nPython 最新版本是 3.13。\n\n默认解释器是 CPython。\n",
         title="Python 3.13 新特性", source="https://docs.python.org/3/whatsnew/3.13.html")
    settings = load_settings(home=home, hostname="testhost", llm_base_url=None)
    (doc,) = refine(settings)["refined"]
    assert json.loads(run_cli("facts", "list", "--json", home=home).stdout)["facts"] == []
    assert "2 fact candidates" in run_cli("kb", "pending", home=home).stdout
    assert json.loads(run_cli("kb", "pending", "--json", home=home).stdout)[0]["fact_candidates"] == 2
    assert "2 fact candidates, written only if approved" in run_cli("kb", "show", doc["doc_id"], home=home).stdout
    run_cli("kb", "approve", doc["doc_id"], home=home)
    facts = json.loads(run_cli("facts", "list", "--json", home=home).stdout)["facts"]
    assert {f["object"] for f in facts} == {"3.13", "CPython"}
    assert "2 applied on approval" in run_cli("kb", "show", doc["doc_id"], home=home).stdout


def test_reading_published_knowledge_from_the_command_line(tmp_path):
    from agentos_mem.knowledge.decisions import decide
    from agentos_mem.knowledge.refine import refine
    from agentos_mem.kernel.settings import load_settings

    home = tmp_path / "ws"
    run_cli("init", home=home)
    long = "\n".join(f"第{i}条：部署前检查第{i}项配置，确认无误后再继续。" for i in range(1, 40))
    item(home, "knowledge/clipping", "ops.md", f"# 运维手册\n\n## 部署检查\n\n{long}\n\n## 回滚\n\n回滚时先停流量。\n", title="运维手册",
          source="https://kubernetes.io/ops")
    item(home, "knowledge/clipping", "draft.md", "# 草稿\n\n部署检查的草稿，尚未审核。\n", title="草稿", source="https://kubernetes.io/draft")
    settings = load_settings(home=home, hostname="testhost", llm_base_url=None)
    ids = {d["title"]: d["doc_id"] for d in refine(settings)["refined"]}
    decide(settings, ids["运维手册"], "approve", "default")  # the draft stays pending

    assert [d["title"] for d in json.loads(run_cli("kb", "map", "--json", home=home).stdout)] == ["运维手册"]
    hits = json.loads(run_cli("kb", "search", "部署检查", "--mode", "bm25", "--json", home=home).stdout)["hits"]
    assert hits and {h["doc_id"] for h in hits} == {ids["运维手册"]} and hits[0]["anchor"] == "部署检查"
    outline = run_cli("kb", "outline", ids["运维手册"], home=home).stdout
    assert "#部署检查" in outline and "#回滚" in outline
    assert run_cli("kb", "outline", ids["草稿"], home=home, check=False).returncode == 2  # pending: not readable
    pages, cursor = [], None
    while True:
        args = ["kb", "read", ids["运维手册"], "部署检查", "--page-tokens", "200", "--json"] + (["--cursor", cursor] if cursor else [])
        page = json.loads(run_cli(*args, home=home).stdout)
        pages.append(page["text"])
        cursor = page["next_cursor"]
        if not cursor:
            break
    assert len(pages) > 2 and "第39条" in pages[-1] and "\n".join(pages).count("部署前检查") == 39
    asked = json.loads(run_cli("kb", "ask", "回滚时先做什么？", "--json", home=home).stdout)
    assert asked["status"] == "answered" and "停流量" in asked["answer"]
    assert {c["doc_id"] for c in asked["citations"]} == {ids["运维手册"]}  # never the pending draft
    gap = json.loads(run_cli("kb", "ask", "火星上的天气怎么样？", "--json", home=home).stdout)
    assert gap["status"] == "not_covered" and gap["citations"] == [] and "火星" in gap["missing"]


def test_one_users_refine_never_reowns_hides_changes_or_names_anothers_document(tmp_path):
    """Issue 42: a document's identity (content, source, title) is looked up within what its owner may change. Alice's
    clipping with the source URL of Bob's approved personal document, one with Bob's very text, and a note titled like
    Bob's pending one each become Alice's own documents; Bob's stay his, unchanged, and nothing Alice sees names them."""
    from agentos_mem.kernel.settings import load_settings
    from agentos_mem.knowledge.refine import refine

    home = tmp_path / "ws"
    run_cli("init", home=home)
    settings = load_settings(home=home, hostname="testhost", llm_base_url=None)
    src = "https://clinic.example.org/report/2026-11"
    bob_body = "# 体检报告\n\n血压 128/85，空腹血糖 5.4。\n"
    item(home, "personal", "bob-report.md", bob_body, title="体检报告", source=src, scope="personal", owner="bob")
    item(home, "personal", "bob-plan.md", "# 训练计划\n\n每周跑步三次。\n", title="训练计划", scope="personal", owner="bob")
    item(home, "knowledge/clipping", "team.md", "# 发布流程\n\n发布前两人评审。\n", title="发布流程", source="https://wiki.example/release")
    bob = {d["title"]: d["doc_id"] for d in refine(settings)["refined"]}
    team = bob.pop("发布流程")
    run_cli("kb", "approve", bob["体检报告"], "--user", "bob", home=home)
    run_cli("kb", "approve", team, home=home)

    item(home, "personal", "alice-clip.md", "# 我的体检\n\n视力 5.0。\n", title="我的体检", source=src, scope="personal", owner="alice")
    item(home, "personal", "alice-copy.md", bob_body.replace("体检报告", "抄来的报告"), title="抄来的报告", scope="personal",
         owner="alice")
    item(home, "personal", "alice-plan.md", "# 训练计划\n\n每天游泳。\n", title="训练计划", scope="personal", owner="alice")
    item(home, "personal", "alice-release.md", "# 我的发布笔记\n\n我只管打 tag。\n", title="我的发布笔记",
         source="https://wiki.example/release", scope="personal", owner="alice")
    report = refine(settings)
    assert not report["quarantined"] and not report.get("errors"), report
    alice = {d["title"]: d for d in report["refined"]}
    assert set(alice) == {"我的体检", "抄来的报告", "训练计划", "我的发布笔记"}
    assert all(d["outcome"] == "new" and d["doc_id"] not in bob.values() for d in alice.values()), alice

    shown = run_cli("kb", "show", bob["体检报告"], "--user", "bob", home=home).stdout
    assert "ready" in shown and "v1" in shown and "bob" in shown
    assert "血压 128/85" in run_cli("kb", "section", bob["体检报告"], "--user", "bob", home=home, check=False).stdout + \
        (home / "agent-sync/03_knowledge").joinpath(
            json.loads(run_cli("kb", "list", "--json", "--user", "bob", home=home).stdout)[0]["path"]).read_text(encoding="utf-8")
    for d in alice.values():
        mine = run_cli("kb", "show", d["doc_id"], "--user", "alice", home=home).stdout
        assert "血压" not in mine.replace(bob_body, "") or d["title"] == "抄来的报告"
        assert not any(re.search(rf"{re.escape(i)}(?![-\w])", mine) for i in bob.values()), mine
        assert not re.search(r"-\d+\b", d["doc_id"])  # not numbered past Bob's: nothing says his exists
    hidden = run_cli("kb", "show", bob["体检报告"], "--user", "alice", home=home, check=False)
    assert hidden.returncode == 2 and "no knowledge document" in hidden.stderr
    seen = run_cli("kb", "pending", "--json", "--mine", "--user", "alice", home=home).stdout
    assert {d["title"] for d in json.loads(seen)} == {"我的体检", "抄来的报告", "训练计划", "我的发布笔记"}
    shared = run_cli("kb", "show", team, "--user", "carol", home=home).stdout  # a system document stays everyone's
    assert "ready" in shared and "v1" in shared and "system" in shared
    assert not any(re.search(rf"{re.escape(i)}(?![-\w])", seen) for i in bob.values())
    bobs = {d["title"] for d in json.loads(run_cli("kb", "pending", "--json", "--mine", "--user", "bob", home=home).stdout)}
    assert bobs == {"训练计划"}  # his pending one, still his
