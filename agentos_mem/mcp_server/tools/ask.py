"""The layered memory: ``memory_query`` (``query.ask.ask``: L0 rules -> L1 cards -> L2 facts -> L3 raw lines, as a
dict) and ``raw_read`` (lines of an archived log, L3, by the ``raw_ref`` that facts and cards cite).

``{settings.query_k}`` in a description is the configured value (``register`` fills it). The read path is imported
inside each tool, at its first call: the server answers ``initialize`` before the query modules (about half a second
of imports) load.
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import Field

from agentos_mem.embedders import EmbedderError
from agentos_mem.kernel.settings import Settings
from agentos_mem.mcp_server.tools import READ_ONLY, error, tool
from agentos_mem.storage.raw_archive import ArchiveError

RAW_READ_MAX_LINES = 200

@tool("memory_query", "Ask memory", READ_ONLY)
def memory_query(
    settings: Settings,
    text: Annotated[str, Field(description="The question, in any language (Chinese or English), e.g. '服务器现在是什么配置？' or 'what is the database port?'.")],
    raw: Annotated[bool, Field(description="Also return the raw conversation lines (L3) behind the matched cards. Costs more tokens; use it when the facts are not enough.")] = False,
    k: Annotated[int | None, Field(ge=1, description="How many units (cards and facts) to match at most. Default: {settings.query_k}.")] = None,
    budget: Annotated[int | None, Field(ge=1, description="Token budget of the answer; items past it are left out, with a notice. Default: {settings.query_budget}.")] = None,
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
    from agentos_mem.query.ask import QueryError, ask  # lazy: the query stack, not before `initialize`
    try:
        answer = ask(text, user=settings.user, raw=raw, k=k, budget=budget, history=history, settings=settings)
    except QueryError as e:
        return error(str(e))
    except EmbedderError as e:  # a model that cannot load or be reached: a setting the user can fix
        return error(f"the embedding model is unavailable: {e}")
    return answer.to_dict()


@tool("raw_read", "Read archived lines", READ_ONLY)
def raw_read(
    settings: Settings,
    ref: Annotated[str, Field(description="An archived log's reference, <user>/<YYYY-MM-DD>/r<N>/<file>, as a source's raw_ref gives it.")],
    start: Annotated[int, Field(description="First line, 1-based (a source's lines[0]).")],
    end: Annotated[int, Field(description=f"Last line, inclusive (a source's lines[1]). At most {RAW_READ_MAX_LINES} lines per call.")],
) -> dict[str, Any]:
    """Read lines start..end of an archived conversation log (L3), the original text a fact or card cites.

    Returns {ref, lines: [start, end] as read, text: [line, ...]}, and `notice` when the range was cut
    (at most 200 lines per call; read the rest with another call) or the file ends before `end`.
    """
    from agentos_mem.query.facts import raw_lines  # lazy: the query stack, not before `initialize`
    if start < 1 or end < start:
        return error(f"bad line range {start}-{end}: lines are 1-based and end must not be before start")
    # another user's reference is refused by raw_lines exactly as an unknown one (nothing said about it)
    clipped = end - start + 1 > RAW_READ_MAX_LINES
    if clipped:
        end = start + RAW_READ_MAX_LINES - 1
    try:
        out = raw_lines(settings, ref, start, end)
    except ArchiveError as e:
        return error(str(e))
    except UnicodeDecodeError:
        return error(f"{ref!r} is not UTF-8 text and cannot be read by lines")
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
