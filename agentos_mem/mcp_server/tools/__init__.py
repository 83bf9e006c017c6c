"""The MCP tools, one module per tool group, each tool a plain module-level function:

- ``ask``: ``memory_query`` (the layered query, ``query.ask``) and ``raw_read`` (the archived lines its sources cite);
- ``facts``: ``fact_lookup`` (``query.facts``) and ``fact_forget`` (``services.decisions.forget_fact``, the function
  ``agentos facts forget`` calls);
- ``memory``: ``memory_save``, ``memory_update``, ``memory_recall``, ``memory_delete``, one record each (the memory book,
  ``query.recall``);
- ``kb``: ``kb_map``, ``kb_search``, ``kb_outline``, ``kb_read``, ``kb_answer`` (``query.kb``, ``query.kb_answer``).

A tool function's first parameters are what it works with, named from ``DEPENDENCIES`` (``settings``; the record
tools also ``book``); the rest are the arguments an MCP client passes. ``register`` puts a tool on a server with its
dependencies filled in, so the input schema a client reads holds only the client's own arguments; a test or
another transport calls the same function with the objects it has. ``@tool`` only records the name, title and
hints a client is shown; the function itself is left as written.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Annotated, Any, get_args, get_origin

from pydantic.fields import FieldInfo

# The parameters a tool may take that no client ever passes: filled by ``register`` from the server's objects.
DEPENDENCIES = ("settings", "book")

# The hints a client is shown (``ToolAnnotations``): most tools only read; the write hints are in their modules.
READ_ONLY = {"read_only_hint": True, "destructive_hint": False, "idempotent_hint": True, "open_world_hint": False}


@dataclass(frozen=True)
class ToolSpec:
    """What a client is shown of a tool besides its arguments and description; used as a decorator (``@tool``), it
    marks a module-level function as that tool and returns the function unchanged."""

    name: str
    title: str
    hints: Mapping[str, bool]

    def __call__(self, fn):
        fn.mcp_tool = self
        return fn


tool = ToolSpec


def error(message: str):
    """A tool error the model reads as is: ``isError`` with just this text (no prefix, no traceback)."""
    from mcp.types import CallToolResult, TextContent

    return CallToolResult(content=[TextContent(type="text", text=message)], is_error=True)


def served_description(doc: str) -> str:
    """The description a client reads: the docstring with its continuation lines four spaces deeper. The tools were
    once nested in ``build_server``, where their docstrings sat eight spaces in; clients (and hosts that cache a
    tool list) keep reading the same bytes."""
    return doc.replace("\n    ", "\n        ")


def _with_settings(param: inspect.Parameter, settings) -> inspect.Parameter:
    """``param`` with ``{settings.name}`` in its Field description filled from ``settings`` (a default the
    description names, e.g. ``query_k``, is the configured one)."""
    ann = param.annotation
    if get_origin(ann) is not Annotated:
        return param
    base, *meta = get_args(ann)
    filled = [FieldInfo.merge_field_infos(m, description=m.description.format(settings=settings))
              if isinstance(m, FieldInfo) and m.description and "{settings." in m.description else m for m in meta]
    return param.replace(annotation=Annotated[(base, *filled)])


def bind(fn: Callable[..., Any], deps: Mapping[str, Any]) -> functools.partial:
    """``fn`` with its dependency parameters given from ``deps``; its signature is the client's arguments only."""
    sig = inspect.signature(fn, eval_str=True)
    wanted = [n for n in sig.parameters if n in DEPENDENCIES]
    missing = [n for n in wanted if n not in deps]
    if missing:
        raise TypeError(f"{fn.__name__} needs {', '.join(missing)}, which the server does not provide")
    bound = functools.partial(fn, **{n: deps[n] for n in wanted})
    bound.__signature__ = sig.replace(parameters=[_with_settings(p, deps.get("settings")) for n, p in sig.parameters.items()
                                                  if n not in wanted])
    bound.__name__ = fn.__name__  # the SDK names the argument and output models after it
    bound.__doc__ = fn.__doc__
    return bound


def register(server, fn: Callable[..., Any], deps: Mapping[str, Any]) -> None:
    """Add the tool ``fn`` (marked with ``@tool``) to the MCP ``server``, its dependencies taken from ``deps``."""
    from mcp.types import ToolAnnotations

    spec: ToolSpec = fn.mcp_tool
    server.add_tool(bind(fn, deps), name=spec.name, title=spec.title, description=served_description(fn.__doc__),
                    annotations=ToolAnnotations(**spec.hints))
