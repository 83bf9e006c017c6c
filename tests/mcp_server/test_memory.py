"""The memory-record MCP tools as an agent uses them: a real client session spawning ``agentos mcp``."""

from __future__ import annotations

import json

import pytest

pytest.importorskip("mcp")

from tests.kit.cli import run_cli  # noqa: E402
from tests.kit.mcp import data, error_text, session  # noqa: E402


def test_memory_tools_over_stdio(tmp_path):
    home = tmp_path / "ws"
    run_cli("init", home=home)

    async def script(s):
        call = s.call_tool
        out = {"tools": {t.name: t for t in (await s.list_tools()).tools}}
        out["save"] = await call("memory_save", {"name": "周报格式", "description": "以后所有周报都用简洁格式", "type": "feedback",
                                                 "content": "周报不超过一页，先写结论。"})
        out["save_pet"] = await call("memory_save", {"name": "pet", "description": "has an orange cat named Doubao", "type": "user"})
        out["dup"] = await call("memory_save", {"name": "周报格式", "description": "x", "type": "user"})
        out["escape"] = await call("memory_save", {"name": "../../other/secret", "description": "x", "type": "user"})
        out["badtype"] = await call("memory_save", {"name": "m", "description": "x", "type": "secret"})
        out["forged"] = await call("memory_save", {"name": "forged", "description": "claims to be auto", "type": "user", "source": "auto"})
        out["recall"] = await call("memory_recall", {"query": "帮我写这周的周报"})
        out["update"] = await call("memory_update", {"name": "周报格式", "content": "周报不超过一页，先写结论，再列风险。"})
        out["update_missing"] = await call("memory_update", {"name": "nothing", "content": "x"})
        out["delete"] = await call("memory_delete", {"name": "pet"})
        out["delete_again"] = await call("memory_delete", {"name": "pet"})
        out["recall_none"] = await call("memory_recall", {"query": "火星上的天气怎么样"})
        return out

    out, stray = session(home, tmp_path / "err.log", script)
    assert stray == []
    tools = out["tools"]
    assert {"memory_save", "memory_update", "memory_recall", "memory_delete"} <= set(tools)
    assert not any("clear" in name for name in tools)  # clearing all memories is never an agent tool
    assert "source" not in tools["memory_save"].input_schema["properties"]  # the caller cannot choose the source
    assert set(tools["memory_save"].input_schema["required"]) == {"name", "description", "type"}
    assert tools["memory_delete"].annotations.destructive_hint

    saved = data(out["save"])
    assert (saved["source"], saved["recallCount"], saved["type"]) == ("manual", 0, "feedback")
    assert "already exists" in error_text(out["dup"])
    assert "'..'" in error_text(out["escape"])
    assert out["badtype"].is_error
    forged = out["forged"]
    assert forged.is_error or data(forged)["source"] == "manual"

    recalled = data(out["recall"])
    assert recalled["status"] == "ok" and recalled["hits"][0]["name"] == "周报格式"
    assert recalled["hits"][0]["body"] == "周报不超过一页，先写结论。"
    assert recalled["compact"] == {"count": len(recalled["hits"]), "status": "ok", "names": [h["name"] for h in recalled["hits"]]}

    updated = data(out["update"])
    assert updated["body"].endswith("再列风险。") and updated["recallCount"] == 1 and updated["source"] == "manual"
    assert "no memory named 'nothing'" in error_text(out["update_missing"])
    assert data(out["delete"])["deleted"] == "pet"
    assert out["delete_again"].is_error
    none = data(out["recall_none"])
    assert none["hits"] == [] and none["compact"]["count"] == 0

    # what the agent did is what the user sees
    listed = json.loads(run_cli("memory", "list", "--json", home=home).stdout)
    assert sorted(r["name"] for r in listed) == sorted(["周报格式"] + (["forged"] if not forged.is_error else []))


def test_a_server_only_reaches_its_own_users_records(tmp_path):
    home = tmp_path / "ws"
    run_cli("init", home=home)
    run_cli("memory", "save", "secret", "-d", "alice's salary expectations", "-t", "user", "--user", "alice", home=home)

    async def script(s):  # this server runs for the default user
        return {"recall": await s.call_tool("memory_recall", {"query": "salary expectations"}),
                "delete": await s.call_tool("memory_delete", {"name": "secret"}),
                "traverse": await s.call_tool("memory_delete", {"name": "../alice/secret"})}

    out, _ = session(home, tmp_path / "err.log", script)
    assert data(out["recall"])["hits"] == []
    assert out["delete"].is_error and out["traverse"].is_error
    assert [r["name"] for r in json.loads(run_cli("memory", "list", "--json", "--user", "alice", home=home).stdout)] == ["secret"]
