"""The MCP server: the layered query, fact lookups and raw reads, served to agents over stdio.

``agentos mcp`` runs :func:`run_stdio`. Thirteen tools, all scoped to the configured user (``AGENTOS_USER``)
of the workspace in ``AGENTOS_HOME``; three read the layered memory:

- ``memory_query``: :func:`query.ask.ask` (L0 rules -> L1 cards -> L2 facts -> L3 raw lines), as a dict.
- ``fact_lookup``: the facts about a subject valid now or at the end of a day, or every version of them.
- ``raw_read``: lines of an archived log (L3) by the ``raw_ref`` that facts and cards cite.

One writes a fact: ``fact_forget`` closes a fact the user wants forgotten (``services.decisions.forget_fact``, as
``agentos facts forget``); four work on single memory records (mcp_server/memory.py): ``memory_save``, ``memory_update``,
``memory_recall``, ``memory_delete``. No tool clears all memories. Five read the published knowledge base
(mcp_server/kb.py): ``kb_map``, ``kb_search``, ``kb_outline``, ``kb_read``, ``kb_answer``.

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
from datetime import date
from typing import Annotated, Any

from pydantic import Field

from kernel.domain import ROW_ID_MAX
from kernel.settings import Settings

RAW_READ_MAX_LINES = 200

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


def _error(message: str):
    """A tool error the model reads as is: ``isError`` with just this text (no prefix, no traceback)."""
    from mcp.types import CallToolResult, TextContent

    return CallToolResult(content=[TextContent(type="text", text=message)], is_error=True)


def _argument_errors(tool: str, error) -> str:
    """A tool call whose arguments fail the input schema, said in one line per field: the field, what was given
    and what it must be (the SDK's own text is a pydantic dump the model must decode; a value a schema lets
    through but no store can hold, such as an id past 2**63, is checked in the tool and answered the same way)."""
    lines = []
    for err in error.errors(include_url=False):
        field = ".".join(str(part) for part in err.get("loc", ())) or "arguments"
        given = "missing" if err.get("type") == "missing" else f"got {repr(err.get('input'))[:80]}"
        lines.append(f"{tool}: bad argument {field!r} ({given}): {err.get('msg', 'invalid')}")
    return "\n".join(lines) or f"{tool}: bad arguments"


def _matching(rows: list[dict], key: str) -> list[dict]:
    """Rows about ``key``: equal subject keys, else keys containing it (as ``FactStore.history`` matches)."""
    exact = [r for r in rows if r.get("subject_key") == key]
    if exact or not key:
        return exact
    return [r for r in rows if key in (r.get("subject_key") or "")]


def build_server(settings: Settings, *, warm: bool = False):
    """The ``agentos-memory`` MCP server over the stores of ``settings`` (not started).

    ``warm``: when the server starts, load the tokenizer and embedder in the background (``mcp_server.local_service.warm_up``).
    """
    from mcp.server.mcpserver import MCPServer
    from mcp.types import ToolAnnotations

    from mcp_server.local_service import warm_up

    @asynccontextmanager
    async def lifespan(_server) -> AsyncIterator[dict]:
        # Runs once the transport holds stdin/stdout, so nothing the models print can reach the wire.
        if warm:
            threading.Thread(target=warm_up, args=(settings,), name="agentos-mcp-warm-up", daemon=True).start()
        yield {}

    from mcp.server.mcpserver.exceptions import ToolError, UnexpectedToolError
    from pydantic import ValidationError

    class _Server(MCPServer):
        async def call_tool(self, name, arguments, context=None):
            from kernel.workspace import restore_state

            during = restore_state(settings.home)  # a restore's partial store is never served as the memory
            if during is not None:
                raise ToolError(during)
            try:
                return await super().call_tool(name, arguments, context)
            except ToolError as e:
                # the caller's arguments against the schema (not a crash, nor our own output failing its schema)
                if isinstance(e.__cause__, ValidationError) and not isinstance(e, UnexpectedToolError):
                    raise ToolError(_argument_errors(name, e.__cause__)) from e.__cause__
                raise

    server = _Server("agentos-memory", instructions=_INSTRUCTIONS, log_level="WARNING", lifespan=lifespan)
    read_only = ToolAnnotations(read_only_hint=True, destructive_hint=False, idempotent_hint=True, open_world_hint=False)

    @server.tool(name="memory_query", title="Ask memory", annotations=read_only)
    def memory_query(
        text: Annotated[str, Field(description="The question, in any language (Chinese or English), e.g. '服务器现在是什么配置？' or 'what is the database port?'.")],
        raw: Annotated[bool, Field(description="Also return the raw conversation lines (L3) behind the matched cards. Costs more tokens; use it when the facts are not enough.")] = False,
        k: Annotated[int | None, Field(ge=1, description=f"How many units (cards and facts) to match at most. Default: {settings.query_k}.")] = None,
        budget: Annotated[int | None, Field(ge=1, description=f"Token budget of the answer; items past it are left out, with a notice. Default: {settings.query_budget}.")] = None,
        history: Annotated[bool, Field(description="Also return the earlier (superseded) versions of the facts found, to see how a value changed.")] = False,
    ) -> dict[str, Any]:
        """Ask the user's long-term memory a question: the layered query.

        Layers: L0 hard rules (a forbidden request comes back `blocked`), L1 index cards matched by keywords
        and meaning, L2 the current facts they point to, and L3 the raw lines only when raw=true.
        Returns: status (`ok`; `blocked`; `no_history`: nothing in memory matches; `no_memory`: matching
        conversations but no confirmed fact, retry with raw=true to read them), layer (where it stopped),
        items [{layer, kind: fact|card|raw, id, text, tokens, source, score}] where source cites the fact id,
        file, lines [start, end] and raw_ref (pass raw_ref and lines to raw_read), constraints (hard rules
        to obey in any answer), tokens, tokens_raw, notices, timings_ms.
        """
        from kernel.embedders import EmbedderError
        from query.ask import QueryError, ask

        try:
            answer = ask(text, user=settings.user, raw=raw, k=k, budget=budget, history=history, settings=settings)
        except QueryError as e:
            return _error(str(e))
        except EmbedderError as e:  # a model that cannot load or be reached: a setting the user can fix
            return _error(f"the embedding model is unavailable: {e}")
        return answer.to_dict()

    @server.tool(name="fact_lookup", title="Look up facts", annotations=read_only)
    def fact_lookup(
        subject: Annotated[str, Field(description="What the fact is about, as the user would name it, in either language, e.g. 'database port', '数据库端口', '服务器配置'. Aliases map both languages to one subject; a part of a subject matches too.")],
        as_of: Annotated[str | None, Field(description="A day, YYYY-MM-DD: the facts that held at the end of that day. Default: now.")] = None,
        history: Annotated[bool, Field(description="Return every version of the facts about the subject instead, superseded ones included, oldest first (as_of is then ignored).")] = False,
    ) -> dict[str, Any]:
        """Look up the structured facts (L2) about one subject.

        Default: the facts valid now, or at the end of the day as_of. Returns {user, subject, as_of, facts},
        each fact with subject, predicate, object, status, valid_from, valid_to, confidence, version and its
        source (source_file, line_start, line_end, raw_ref for raw_read). A fact past its expiry (technical facts
        expire after 180 days) is still the user's last known value: it comes after the fresh ones with
        stale=true and stale_since (the date it may have become outdated); say so when you use it. A fact the user may
        have changed since, in words no rule read, has status `may_have_changed` with changed_on and the newer
        sentence (newer): not plainly current; say so. A sentence of the user's no rule read is kept as a statement
        (status `statement`, said_on): what they said that day. `upcoming`: values
        that start later ("from April 1"), with their valid_from: not true yet.
        With history=true: {user, subject, versions}, every version with status `active` or `superseded`
        and how they link (previous_version, superseded_by).
        """
        from kernel.text import load_aliases, subject_key
        from kernel.workspace import Workspace
        from query.facts import fact_history, facts_as_of

        if not subject or not subject.strip():
            return _error("give a subject to look up, e.g. 'database port'")
        from query.rules import check_request

        refusal = check_request(settings.home, subject)  # L0 first, as memory_query does
        if refusal is not None:
            return {"user": settings.user, "subject": subject, "facts": [], **refusal.as_dict()}
        if history:
            return fact_history(settings, subject)
        when = None
        if as_of:
            try:
                when = date.fromisoformat(as_of.strip())
            except ValueError:
                return _error(f"as_of must be a date in the form YYYY-MM-DD, got {as_of!r}")
        out = facts_as_of(settings, when)
        aliases = load_aliases(Workspace(settings.home).knowledge / "99_system" / "subject_aliases.txt")
        key = subject_key(subject, aliases)
        return {"user": out["user"], "subject": subject, "as_of": out["as_of"], "facts": _matching(out["facts"], key),
                "upcoming": _matching(out["upcoming"], key)}

    @server.tool(name="fact_forget", title="Forget a fact",
                 annotations=ToolAnnotations(read_only_hint=False, destructive_hint=True, idempotent_hint=False, open_world_hint=False))
    def fact_forget(
        fact_id: Annotated[int, Field(ge=1, le=ROW_ID_MAX, description="The fact's id, as memory_query's items (source.fact) and fact_lookup give it.")],
        reason: Annotated[str, Field(description="Why, in the user's words, e.g. 'the user asked to forget it' or 'wrong: never said'. Kept with the fact.")] = "",
    ) -> dict[str, Any]:
        """Forget one fact of the user's memory, when the user asks you to forget it or says it is wrong.

        The fact is closed with the reason: never served again (not as current, outdated or history), and
        digesting the same conversation lines again does not bring it back. Nothing else changes; the user can
        still state it anew. Returns {fact: {id, subject, predicate, object, status: forgotten, closed_reason},
        cards_changed}. An unknown id (or one of another user) is an error.
        """
        from services.decisions import forget_fact
        from storage.journal import JournalUnwritable

        try:
            out = forget_fact(settings, settings.user, int(fact_id), reason)
        except (KeyError, ValueError) as e:
            return _error(str(e).strip("'\""))
        except JournalUnwritable as e:  # a decision is journaled or not made: nothing changed
            return _error(e.strerror)
        f = out["fact"]
        from query.facts import masked

        return {"fact": masked({k: f[k] for k in ("id", "subject", "predicate", "object", "status", "closed_reason", "valid_from", "valid_to",
                                                "source_file", "line_start", "line_end", "raw_ref")}), "cards_changed": out["cards_changed"]}

    @server.tool(name="raw_read", title="Read archived lines", annotations=read_only)
    def raw_read(
        ref: Annotated[str, Field(description="An archived log's reference, <user>/<YYYY-MM-DD>/r<N>/<file>, as a source's raw_ref gives it.")],
        start: Annotated[int, Field(description="First line, 1-based (a source's lines[0]).")],
        end: Annotated[int, Field(description=f"Last line, inclusive (a source's lines[1]). At most {RAW_READ_MAX_LINES} lines per call.")],
    ) -> dict[str, Any]:
        """Read lines start..end of an archived conversation log (L3), the original text a fact or card cites.

        Returns {ref, lines: [start, end] as read, text: [line, ...]}, and `notice` when the range was cut
        (at most 200 lines per call; read the rest with another call) or the file ends before `end`.
        """
        from query.facts import raw_lines
        from storage.raw_archive import ArchiveError

        if start < 1 or end < start:
            return _error(f"bad line range {start}-{end}: lines are 1-based and end must not be before start")
        # another user's reference is refused by raw_lines exactly as an unknown one (nothing said about it)
        clipped = end - start + 1 > RAW_READ_MAX_LINES
        if clipped:
            end = start + RAW_READ_MAX_LINES - 1
        try:
            out = raw_lines(settings, ref, start, end)
        except ArchiveError as e:
            return _error(str(e))
        except UnicodeDecodeError:
            return _error(f"{ref!r} is not UTF-8 text and cannot be read by lines")
        got = len(out["text"])
        if got == 0:
            out["notice"] = f"the file has fewer than {start} lines"
        elif got < end - start + 1:
            out["lines"] = [start, start + got - 1]
            out["notice"] = f"the file ends at line {start + got - 1}"
        elif clipped:
            out["notice"] = (f"at most {RAW_READ_MAX_LINES} lines per call: read lines {start}-{end};"
                             f" call again from line {end + 1} for more")
        return out

    from mcp_server.memory import add_memory_tools

    add_memory_tools(server, settings, _error)
    from mcp_server.kb import add_kb_tools

    add_kb_tools(server, settings, _error)
    return server


def run_stdio(settings: Settings) -> None:
    """Serve the tools over stdin/stdout until the client closes stdin (blocking)."""
    from kernel.settings import warn_unknown_variables
    from mcp_server.local_service import start_unless_running

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
