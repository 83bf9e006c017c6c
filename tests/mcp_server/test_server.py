"""The MCP server as an agent sees it: a real client session over stdio, spawning the real ``agentos mcp``.

Each spawn loads the tokenizer and embedder (a few seconds), so one session covers many tools.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("mcp")

from mcp import ClientSession  # noqa: E402

from tests.kit.mcp import data, error_text, session  # noqa: E402


def _facts(answer: dict) -> list[dict]:
    return [i for i in answer["items"] if i["kind"] == "fact"]


def test_mcp_session_over_stdio(indexed_home, tmp_path):
    # a long archived file, to see raw_read cut a range at 200 lines
    long_ref = "default/2026-11-30/r1/long.md"
    long_file = indexed_home / "agent-local/memory/raw" / long_ref
    long_file.parent.mkdir(parents=True)
    long_file.write_text("".join(f"line {n}\n" for n in range(1, 301)), encoding="utf-8")

    async def script(s: ClientSession):
        out = {"tools": (await s.list_tools()).tools}
        call = s.call_tool
        out["server"] = await call("memory_query", {"text": "服务器现在是什么配置？"})
        out["port"] = await call("memory_query", {"text": "what is the database port?"})
        out["mars"] = await call("memory_query", {"text": "what is the weather on Mars?"})
        out["empty"] = await call("memory_query", {"text": "   ???  "})
        out["raw"] = await call("memory_query", {"text": "database migration", "raw": True})
        out["history"] = await call("fact_lookup", {"subject": "database port", "history": True})
        out["then"] = await call("fact_lookup", {"subject": "database port", "as_of": "2026-11-24"})
        out["now"] = await call("fact_lookup", {"subject": "database port"})
        out["zh"] = await call("fact_lookup", {"subject": "数据库端口"})
        out["bad_date"] = await call("fact_lookup", {"subject": "database port", "as_of": "24/11/2026"})
        fact = _facts(data(out["port"]))[0]["source"]
        out["fact_source"] = fact
        out["read"] = await call("raw_read", {"ref": fact["raw_ref"], "start": fact["lines"][0], "end": fact["lines"][1]})
        out["escape"] = await call("raw_read", {"ref": "../../etc/passwd", "start": 1, "end": 2})
        out["other_user"] = await call("raw_read", {"ref": "someone/2026-11-26/r1/2026-11-26.md", "start": 1, "end": 2})
        out["bad_range"] = await call("raw_read", {"ref": fact["raw_ref"], "start": 5, "end": 2})
        out["long"] = await call("raw_read", {"ref": long_ref, "start": 1, "end": 500})
        return out

    errlog = tmp_path / "server-stderr.txt"
    out, stray = session(indexed_home, errlog, script)

    # only protocol messages on stdout: jieba, the embedder and logging stay off the wire
    assert stray == []

    # the three read tools (the memory-record tools are tested in test_mcp_memory.py), described for the
    # agent, with typed and described parameters
    tools = {t.name: t for t in out["tools"] if t.name in ("memory_query", "fact_lookup", "raw_read")}
    assert set(tools) == {"memory_query", "fact_lookup", "raw_read"}
    for t in tools.values():
        assert len(t.description) > 80
        props = t.input_schema["properties"]
        assert props and all(p.get("description") for p in props.values()), t.name
    assert tools["memory_query"].input_schema["required"] == ["text"]
    assert set(tools["memory_query"].input_schema["properties"]) == {"text", "raw", "k", "budget", "history"}
    assert tools["memory_query"].input_schema["properties"]["raw"]["type"] == "boolean"
    assert tools["fact_lookup"].input_schema["required"] == ["subject"]
    assert set(tools["raw_read"].input_schema["required"]) == {"ref", "start", "end"}
    assert tools["raw_read"].input_schema["properties"]["start"]["type"] == "integer"
    assert all(t.annotations and t.annotations.read_only_hint for t in tools.values())

    # a Chinese question finds the current server configuration, with its source
    ans = data(out["server"])
    assert ans["status"] == "ok" and ans["user"] == "default"
    hit = [f for f in _facts(ans) if "8C16G" in f["text"]]
    assert hit, ans["items"]
    assert hit[0]["source"]["file"].endswith(".md") and len(hit[0]["source"]["lines"]) == 2
    assert ans["tokens"] > 0 and ans["constraints"]
    assert set(ans) >= {"status", "layer", "query", "user", "items", "constraints", "rule", "tokens", "tokens_raw",
                        "notices", "generation", "timings_ms"}
    assert set(ans["items"][0]) == {"layer", "kind", "id", "text", "tokens", "source", "score"}

    # an English question finds the corrected port, not the old one
    port = _facts(data(out["port"]))
    assert any("5433" in f["text"] for f in port)
    assert not any("5432" in f["text"] for f in port)

    # nothing in memory: said so, with nothing made up
    mars = data(out["mars"])
    assert mars["status"] == "no_history" and mars["items"] == []

    # an empty question is the caller's mistake, reported as a tool error in plain words
    msg = error_text(out["empty"])
    assert msg.startswith("empty query") and "Traceback" not in msg

    # raw=True adds the archived lines (L3), citing the archive
    raw = [i for i in data(out["raw"])["items"] if i["kind"] == "raw"]
    assert raw and raw[0]["layer"] == "L3"
    assert raw[0]["source"]["raw_ref"].startswith("default/") and len(raw[0]["source"]["lines"]) == 2
    assert "5433" in raw[0]["text"] or "migration" in raw[0]["text"]

    # fact_lookup: the history, the value on an earlier day, the value now (in either language)
    versions = data(out["history"])["versions"]
    assert [(v["object"], v["status"]) for v in versions] == [("5432", "superseded"), ("5433", "active")]
    then = data(out["then"])
    assert then["as_of"] == "2026-11-24" and [f["object"] for f in then["facts"]] == ["5432"]
    now = data(out["now"])
    assert now["as_of"] == "now" and now["subject"] == "database port" and [f["object"] for f in now["facts"]] == ["5433"]
    assert [f["object"] for f in data(out["zh"])["facts"]] == ["5433"]
    assert "YYYY-MM-DD" in error_text(out["bad_date"])

    # raw_read: the cited line, word for word
    read = data(out["read"])
    assert read["ref"] == out["fact_source"]["raw_ref"]
    assert len(read["text"]) == 1 and "5433" in read["text"][0]
    assert "notice" not in read
    assert "not a raw reference" in error_text(out["escape"])
    assert "someone" in error_text(out["other_user"])
    assert "bad line range" in error_text(out["bad_range"])
    long = data(out["long"])
    assert long["lines"] == [1, 200] and len(long["text"]) == 200 and long["text"][-1] == "line 200"
    assert "200" in long["notice"]

    # the tool errors above were anticipated: no traceback in the server's log either
    assert "Traceback" not in errlog.read_text(encoding="utf-8")


def test_mcp_without_index_says_to_rebuild(tmp_path):
    from agentos_mem.kernel.workspace import init_workspace

    home = tmp_path / "home"
    init_workspace(home)

    async def script(s: ClientSession):
        return await s.call_tool("memory_query", {"text": "what is the database port?"})

    result, stray = session(home, tmp_path / "server-stderr.txt", script)
    assert stray == []
    msg = error_text(result)
    assert "agentos rebuild" in msg and "Traceback" not in msg


def test_mcp_server_module_does_not_import_prefect(indexed_home):
    code = (
        "import sys\n"
        "from agentos_mem.kernel.settings import load_settings\n"
        "from agentos_mem.mcp_server.server import build_server\n"
        "build_server(load_settings())\n"
        "assert 'prefect' not in sys.modules, 'prefect was imported'\n"
        "assert 'agentos_mem.query.ask' not in sys.modules, 'the query stack loads on first use'\n"
    )
    env = {**os.environ, "AGENTOS_HOME": str(indexed_home), "AGENTOS_HOSTNAME": "testhost"}
    proc = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120,
                          cwd=Path(__file__).resolve().parents[2])
    assert proc.returncode == 0, proc.stderr
