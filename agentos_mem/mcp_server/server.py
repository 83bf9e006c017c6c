"""The MCP server: the layered query, fact lookups, raw reads, memory records and the knowledge base, served to
agents over stdio.

``agentos mcp`` runs :func:`run_stdio`. Thirteen tools, all scoped to the configured user (``AGENTOS_USER``)
of the workspace in ``AGENTOS_HOME``, one module per group in ``mcp_server/tools/`` (module-level functions that
take the settings and the memory book; :func:`build_server` registers them):

- ``tools/ask.py``: ``memory_query`` (:func:`query.ask.ask`: L0 rules -> L1 cards -> L2 facts -> L3 raw lines, as a
  dict) and ``raw_read`` (lines of an archived log, L3, by the ``raw_ref`` that facts and cards cite);
- ``tools/facts.py``: ``fact_lookup`` (the facts about a subject valid now or at the end of a day, or every version)
  and ``fact_forget``, the one tool that writes a fact: it closes a fact the user wants forgotten
  (``services.decisions.forget_fact``, as ``agentos facts forget``);
- ``tools/memory.py``: ``memory_save``, ``memory_update``, ``memory_recall``, ``memory_delete``, one record each. No
  tool clears all memories;
- ``tools/kb.py``: the published knowledge base: ``kb_map``, ``kb_search``, ``kb_outline``, ``kb_read``, ``kb_answer``.

A request the stores cannot answer as asked (empty query, no index, bad date, unknown reference) comes back
as a tool error (``isError``) whose text says what to do, never as a traceback. No Prefect here; the
tokenizer and embedder load on first use (and in the background as soon as the stdio server starts).
Nothing but the protocol goes to stdout: while serving, the SDK points file descriptor 1 at stderr.
"""

import logging
import sys
import threading
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError, UnexpectedToolError
from pydantic import ValidationError

from agentos_mem.kernel.settings import Settings, warn_unknown_variables
from agentos_mem.storage.guards import restore_state
from agentos_mem.mcp_server.local_service import start_unless_running, warm_up
from agentos_mem.mcp_server.tools import ask, facts, kb, memory, register

log = logging.getLogger(__name__)

_INSTRUCTIONS = """\
Long-term memory of one user (Chinese and English): facts distilled from past conversations, with
versions and time validity, and the archived conversation logs they came from.
Start with memory_query (any language); every item cites its source (fact id, file and lines, raw_ref).
Use fact_lookup for what is true about a subject now, on an earlier day, or how it changed; raw_read to
read the original lines a source points to. A fact flagged stale may be outdated: say so; one with status
`may_have_changed` may have been changed by the newer sentence beside it (`changed_on`, `newer`): say so; one with
status `statement` is what the user said on `said_on`, in their words, not a checked current fact. When the user asks
you to forget a fact (or says it is wrong), call fact_forget with its id. Always respect the returned `constraints` (hard rules).
The user's memory records (preferences, feedback on your work, project background, references): call
memory_recall with the request at the start of a task; memory_save / memory_update / memory_delete one
record when the user states something lasting or asks you to remember or forget it.
The knowledge base (published, reviewed documents): kb_answer for a cited answer (it says what the base does
not cover); or navigate yourself: kb_map -> kb_search (sections) -> kb_outline -> kb_read (paged by cursor).
Keep only document ids and section anchors in your context afterwards."""


def argument_errors(tool: str, error) -> str:
    """A tool call whose arguments fail the input schema, said in one line per field: the field, what was given
    and what it must be (the SDK's own text is a pydantic dump the model must decode; a value a schema lets
    through but no store can hold, such as an id past 2**63, is checked in the tool and answered the same way)."""
    lines = []
    for err in error.errors(include_url=False):
        field = ".".join(str(part) for part in err.get("loc", ())) or "arguments"
        given = "missing" if err.get("type") == "missing" else f"got {repr(err.get('input'))[:80]}"
        lines.append(f"{tool}: bad argument {field!r} ({given}): {err.get('msg', 'invalid')}")
    return "\n".join(lines) or f"{tool}: bad arguments"


class AgentosServer(MCPServer):
    """The MCP server over one workspace's settings: no tool runs while a restore is under way (a restore's partial
    store is never served as the memory), and a call whose arguments fail the input schema is answered in one line
    per field (``argument_errors``)."""

    def __init__(self, settings: Settings, *, warm: bool = False):
        super().__init__("agentos-memory", instructions=_INSTRUCTIONS, log_level="WARNING", lifespan=warm_on_start)
        self.workspace_settings = settings
        self.warm_models = warm

    async def call_tool(self, name, arguments, context=None):
        during = restore_state(self.workspace_settings.home)
        if during is not None:
            raise ToolError(during)
        try:
            return await super().call_tool(name, arguments, context)
        except ToolError as e:
            # the caller's arguments against the schema (not a crash, nor our own output failing its schema)
            if isinstance(e.__cause__, ValidationError) and not isinstance(e, UnexpectedToolError):
                raise ToolError(argument_errors(name, e.__cause__)) from e.__cause__
            raise


@asynccontextmanager
async def warm_on_start(server: AgentosServer) -> AsyncIterator[dict]:
    """With ``warm``, load the tokenizer and embedder in the background once the server starts. This runs once the
    transport holds stdin/stdout, so nothing the models print can reach the wire."""
    if server.warm_models:
        threading.Thread(target=warm_up, args=(server.workspace_settings,), name="agentos-mcp-warm-up", daemon=True).start()
    yield {}


# Every tool, in the order a client lists them.
TOOLS = (ask.memory_query, facts.fact_lookup, facts.fact_forget, ask.raw_read,
         memory.memory_save, memory.memory_update, memory.memory_recall, memory.memory_delete,
         kb.kb_map, kb.kb_search, kb.kb_outline, kb.kb_read, kb.kb_answer)


def build_server(settings: Settings, *, warm: bool = False) -> AgentosServer:
    """The ``agentos-memory`` MCP server over the stores of ``settings`` (not started): every tool of ``TOOLS``,
    given the settings and the server's one memory book.

    ``warm``: when the server starts, load the tokenizer and embedder in the background (``mcp_server.local_service.warm_up``).
    """
    server = AgentosServer(settings, warm=warm)
    deps = {"settings": settings, "book": memory.BookOnDemand(settings)}
    for fn in TOOLS:
        register(server, fn, deps)
    return server


def run_stdio(settings: Settings) -> None:
    """Serve the tools over stdin/stdout until the client closes stdin (blocking)."""
    warn_unknown_variables()  # on stderr: the agent host's log shows a misspelt setting
    server = build_server(settings, warm=True)
    sys.stdout.flush()  # nothing may reach the wire but the protocol
    # The same warm process answers `agentos query` from a shell (unless another agent host's server already does).
    service = start_unless_running(settings, warm=False)  # build_server's lifespan warms this process
    try:
        server.run("stdio")
    finally:
        if service is not None:
            service.stop()
