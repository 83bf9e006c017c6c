"""An earlier day edited after later days were digested, through the real nightly flow (issue 42, item 3): the later
day's word stands, as a restore of the same logs has it; what the person decided before (a fact forgotten, a knowledge
document approved) holds after the facts are made again."""

from __future__ import annotations

import json
import shutil
from datetime import date

import pytest

from agentos_mem.kernel.workspace import Workspace
from tests.kit.cli import run_cli
from tests.kit.knowledge import item

pytestmark = pytest.mark.usefixtures("prefect_harness")


def write_day(home, day: str, lines: list[str]) -> None:
    folder = Workspace(home).working_dir("default")
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{day}.md").write_text("".join(f"- [{9 + i:02d}:00] user: {x}\n" for i, x in enumerate(lines)), encoding="utf-8")


def facts(home) -> list[tuple[str, str, str]]:
    out = json.loads(run_cli("facts", "list", "--json", home=home).stdout)["facts"]
    return sorted((f["subject"], f["object"], f["status"]) for f in out)


def test_an_edited_earlier_day_is_read_in_date_order_and_keeps_the_persons_decisions(tmp_path, monkeypatch):
    from agentos_mem.flows.nightly import nightly
    from agentos_mem.kernel.settings import load_settings
    from agentos_mem.knowledge.refine import refine

    home = tmp_path / "ws"
    run_cli("init", home=home)
    monkeypatch.setenv("AGENTOS_HOME", str(home))  # the flows read the workspace as a nightly run does
    write_day(home, "2026-11-20", ["我们的服务器配置是 8C16G。", "我喜欢喝咖啡。"])
    write_day(home, "2026-11-23", ["服务器配置还是 8C16G，够用。"])
    nightly()
    # the person's decisions: a fact forgotten, a knowledge document approved (its facts applied)
    (coffee,) = [f for f in json.loads(run_cli("facts", "list", "--json", home=home).stdout)["facts"] if f["object"] == "喝咖啡"]
    run_cli("facts", "forget", str(coffee["id"]), "--reason", "not true", home=home)
    item(home, "knowledge/clipping", "py.md", "# Python 3.13 新特性\n\nPython 最新版本是 3.13。\n\n默认解释器是 CPython。\n",
         title="Python 3.13 新特性", source="https://docs.python.org/3/whatsnew/3.13.html")
    (doc,) = refine(load_settings(home=home, hostname="testhost", llm_base_url=None))["refined"]
    run_cli("kb", "approve", doc["doc_id"], home=home)
    before = facts(home)
    assert ("服务器配置", "8C16G", "active") in before and not any(o == "喝咖啡" for _, o, _ in before)

    write_day(home, "2026-11-20", ["我们的服务器配置是 16C32G。", "我喜欢喝咖啡。"])  # the earlier day edited
    r = nightly()
    assert r["digest"]["rewound"]["from"] == "2026-11-20" and r["digest"]["days"] == ["2026-11-20", "2026-11-23"]
    after = facts(home)
    assert ("服务器配置", "8C16G", "active") in after  # 11-23's word stands; 16C32G held 11-20 .. 11-23
    assert not any(o in ("16C32G", "喝咖啡") for _, o, _ in after)  # the forget holds after the rewind
    assert {o for _, o, _ in after} >= {"3.13", "CPython"}  # the approved document's facts too
    history = json.loads(run_cli("facts", "history", "服务器配置", "--json", home=home).stdout)
    assert sorted((v["object"], v["status"], v["valid_from"][:10], (v["valid_to"] or "")[:10]) for v in history["versions"]) \
        == [("16C32G", "superseded", "2026-11-20", "2026-11-23"), ("8C16G", "active", "2026-11-23", "")]

    # a second machine restored from agent-sync alone serves the same facts
    second = tmp_path / "second"
    shutil.copytree(home / "agent-sync", second / "agent-sync")
    run_cli("restore", home=second)
    assert facts(second) == after
    assert date.fromisoformat(r["digest"]["days"][-1]) == date(2026, 11, 23)
