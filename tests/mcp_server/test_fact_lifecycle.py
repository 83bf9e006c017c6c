"""Stale facts and ``fact_forget`` as an agent sees them: a real client session spawning ``agentos mcp`` over stdio."""

from __future__ import annotations

from datetime import date

import pytest

pytest.importorskip("mcp")

from mcp import ClientSession  # noqa: E402
from mcp.client.stdio import StdioServerParameters  # noqa: E402

import tests.kit.mcp as mcpkit  # noqa: E402
from agentos_mem.digest.stages import digest_day  # noqa: E402
from agentos_mem.storage.facts import FactStore  # noqa: E402
from tests.kit.digest import digested_workspace  # noqa: E402
from tests.kit.mcp import data, error_text, session  # noqa: E402

DAY = date(2026, 3, 10)
LOG = "[09:04] 用户: 服务器配置是 8C16G。\n[09:05] 用户: 我喜欢喝茶。\n[09:06] 用户: 数据库端口是 5432。\n"


def test_fact_lookup_flags_stale_facts_and_fact_forget_closes_one_for_good(tmp_path, monkeypatch):
    s, logs = digested_workspace(tmp_path, LOG, DAY)

    plain = mcpkit.server_params

    def pinned(h):  # the server's clock: October, past the technical facts' 180 days
        p = plain(h)
        return StdioServerParameters(command=p.command, args=p.args, env={**p.env, "AGENTOS_NOW": "2026-10-01T10:00:00+08:00"})

    monkeypatch.setattr(mcpkit, "server_params", pinned)

    async def script(c: ClientSession):
        out = {"tools": {t.name: t for t in (await c.list_tools()).tools}}
        out["server"] = await c.call_tool("fact_lookup", {"subject": "服务器配置"})
        port = data(await c.call_tool("fact_lookup", {"subject": "数据库端口"}))["facts"][0]
        out["port"] = port
        out["forget"] = await c.call_tool("fact_forget", {"fact_id": port["id"], "reason": "the user said it is wrong"})
        out["after"] = await c.call_tool("fact_lookup", {"subject": "数据库端口"})
        out["history"] = await c.call_tool("fact_lookup", {"subject": "数据库端口", "history": True})
        out["again"] = await c.call_tool("fact_forget", {"fact_id": port["id"]})
        out["unknown"] = await c.call_tool("fact_forget", {"fact_id": 9999})
        return out

    out, stray = session(s.home, tmp_path / "server-stderr.txt", script)
    assert stray == []

    tool = out["tools"]["fact_forget"]
    assert tool.annotations.destructive_hint and not tool.annotations.read_only_hint
    assert set(tool.input_schema["required"]) == {"fact_id"} and len(tool.description) > 80

    (server,) = data(out["server"])["facts"]
    assert server["object"] == "8C16G" and server["stale"] is True and server["stale_since"] == "2026-09-06"

    forgotten = data(out["forget"])["fact"]
    assert forgotten["id"] == out["port"]["id"] and forgotten["status"] == "forgotten"
    assert forgotten["closed_reason"] == "the user said it is wrong"
    assert data(out["after"])["facts"] == []
    assert data(out["history"])["versions"] == []  # an agent is never shown a forgotten fact, not even as history
    assert "already forgotten" in error_text(out["again"])
    assert "no fact #9999" in error_text(out["unknown"])

    # the same log digested again does not bring it back
    digest_day(s, "default", DAY, logs)
    store = FactStore(s.home / "agent-local/memory/facts.db")
    try:
        assert [(r["object"], r["status"]) for r in store.history("default", "数据库端口")] == [("5432", "forgotten")]
    finally:
        store.close()


def test_fact_lookup_shows_a_value_that_starts_later_apart_from_the_current_one(tmp_path, monkeypatch):
    now = "2026-03-12T20:00:00+08:00"
    monkeypatch.setenv("AGENTOS_NOW", now)  # the digest's clock: the change starts after it
    log = "[09:00] 用户: 我的服务器配置是4C8G。\n[09:01] 用户: 下周一服务器会升级到8C16G。\n"
    s, logs = digested_workspace(tmp_path, log, date(2026, 3, 12))

    plain = mcpkit.server_params

    def pinned(h):
        p = plain(h)
        return StdioServerParameters(command=p.command, args=p.args, env={**p.env, "AGENTOS_NOW": now})

    monkeypatch.setattr(mcpkit, "server_params", pinned)

    async def script(c: ClientSession):
        return {"lookup": await c.call_tool("fact_lookup", {"subject": "服务器配置"})}

    out, stray = session(s.home, tmp_path / "server-stderr.txt", script)
    assert stray == []
    got = data(out["lookup"])
    assert [f["object"] for f in got["facts"]] == ["4C8G"]
    assert [(f["object"], f["valid_from"][:10]) for f in got["upcoming"]] == [("8C16G", "2026-03-16")]


def test_a_forget_or_a_deletion_the_journal_cannot_hold_is_not_made(tmp_path):
    """A decision is journaled or not made (issue 25): with agent-sync's journal folder unusable (a file stands where
    it should be), fact_forget and memory_delete answer a tool error that says so, and nothing is forgotten or deleted."""
    s, logs = digested_workspace(tmp_path, LOG, DAY)
    journal = s.home / "agent-sync/04_memory/journal"
    journal.rmdir()
    journal.write_text("", encoding="utf-8")

    async def script(c: ClientSession):
        port = data(await c.call_tool("fact_lookup", {"subject": "数据库端口"}))["facts"][0]
        await c.call_tool("memory_save", {"name": "editor", "description": "用 Vim 写代码", "type": "user"})
        return {"port": port, "forget": await c.call_tool("fact_forget", {"fact_id": port["id"]}),
                "delete": await c.call_tool("memory_delete", {"name": "editor"}),
                "after": data(await c.call_tool("fact_lookup", {"subject": "数据库端口"}))["facts"]}

    out, stray = session(s.home, tmp_path / "server-stderr.txt", script)
    assert stray == []
    for name in ("forget", "delete"):
        assert error_text(out[name]).startswith("the decision was not made: this machine's journal "), out[name]
    assert [f["id"] for f in out["after"]] == [out["port"]["id"]]
    assert (s.home / "agent-sync/04_memory/records/default/editor.md").is_file()


def test_a_fact_id_no_store_can_hold_is_an_error_naming_the_field(tmp_path):
    """``fact_forget(2**70)`` once answered an opaque "Error executing tool fact_forget" (SQLite cannot hold the id);
    every id of the bad-input corpus (out of range, not a whole number) is answered with the field, what was given
    and the range, and nothing is forgotten."""
    from tests.kit.bad_inputs import BAD_IDS

    s, logs = digested_workspace(tmp_path, LOG, DAY)

    async def script(c: ClientSession):
        out = {bad.what: await c.call_tool("fact_forget", {"fact_id": bad.mcp}) for bad in BAD_IDS}
        out["facts"] = data(await c.call_tool("fact_lookup", {"subject": "数据库端口"}))["facts"]
        return out

    out, stray = session(s.home, tmp_path / "server-stderr.txt", script)
    assert stray == []
    for bad in BAD_IDS:
        text = error_text(out[bad.what])
        assert "fact_id" in text and bad.said in text, (bad.what, text)
        assert "Error executing tool" not in text and "errors.pydantic.dev" not in text, text
    assert [f["object"] for f in out["facts"]] == ["5432"]
