"""The tool functions themselves, without a client: module-level, called with the objects they work with, and
registered with the client's arguments only (the configured defaults in their descriptions)."""

from __future__ import annotations

import asyncio

import pytest

pytest.importorskip("mcp")


def test_a_tool_is_a_plain_function_called_with_its_settings(tmp_path):
    from agentos_mem.kernel.settings import load_settings
    from agentos_mem.mcp_server.tools import facts

    settings = load_settings(home=tmp_path)
    refused = facts.fact_lookup(settings, "  ")
    assert refused.is_error and refused.content[0].text == "give a subject to look up, e.g. 'database port'"
    bad = facts.fact_lookup(settings, "database port", as_of="24/11/2026")
    assert bad.is_error and "YYYY-MM-DD" in bad.content[0].text


def test_the_schema_holds_the_clients_arguments_and_the_configured_defaults(tmp_path):
    from agentos_mem.kernel.settings import load_settings
    from agentos_mem.mcp_server.server import build_server

    tools = {t.name: t for t in asyncio.run(build_server(load_settings(home=tmp_path, query_k=7, query_budget=900)).list_tools())}
    props = tools["memory_query"].input_schema["properties"]
    assert "settings" not in props and "book" not in set(tools["memory_save"].input_schema["properties"])
    assert props["k"]["description"].endswith("Default: 7.") and props["budget"]["description"].endswith("Default: 900.")


def test_a_tool_needing_what_the_server_lacks_is_refused_when_registered(tmp_path):
    from agentos_mem.kernel.settings import load_settings
    from agentos_mem.mcp_server.tools import bind, memory

    with pytest.raises(TypeError, match="book"):
        bind(memory.memory_delete, {"settings": load_settings(home=tmp_path)})
