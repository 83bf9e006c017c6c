"""An MCP client session over stdio against the real ``agentos mcp``, as an agent runs it.

Import it after ``pytest.importorskip("mcp")``: it needs the ``mcp`` client package.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path

from mcp import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

AGENTOS = str(Path(sys.executable).parent / "agentos")
TIMEOUT = 120  # seconds for a whole session: generous, a hang must fail rather than block the suite


def server_params(home: Path) -> StdioServerParameters:
    """``agentos mcp`` over the workspace ``home`` (hostname testhost, a minimal environment)."""
    env = {"AGENTOS_HOME": str(home), "AGENTOS_HOSTNAME": "testhost", "PATH": os.environ.get("PATH", ""),
           "HOME": os.environ.get("HOME", str(home)), "DO_NOT_TRACK": "1"}
    if os.environ.get("PYTHONPATH"):  # the code under test, when the suite runs from a checkout beside the installed one
        env["PYTHONPATH"] = os.environ["PYTHONPATH"]
    return StdioServerParameters(command=AGENTOS, args=["mcp"], env=env)


def session(home: Path, errlog_path: Path, script):
    """Run ``await script(session)`` in a fresh client session; return its result and what reached the client
    besides protocol messages (anything on stdout that is not JSON-RPC arrives as an exception)."""
    stray: list[object] = []

    async def on_message(message) -> None:
        if isinstance(message, Exception):
            stray.append(message)

    async def main():
        with errlog_path.open("w", encoding="utf-8") as errlog:
            async with stdio_client(server_params(home), errlog=errlog) as (read, write):
                async with ClientSession(read, write, message_handler=on_message) as client:
                    await client.initialize()
                    return await script(client)

    async def bounded():
        return await asyncio.wait_for(main(), TIMEOUT)

    return asyncio.run(bounded()), stray


def data(result) -> dict:
    """A tool's structured answer, checked to be no error and the same as its text content."""
    assert not result.is_error, result.content[0].text if result.content else result
    out = result.structured_content
    # the same answer as text, for clients that only read content
    assert json.loads(result.content[0].text) == out
    return out


def error_text(result) -> str:
    """A tool error's text (the call must have failed)."""
    assert result.is_error, result
    return result.content[0].text
