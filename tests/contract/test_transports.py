"""The two transports (cli/, mcp_server/) are thin: the MCP server's tools are module-level functions, one module per
tool group, registered by ``build_server``; the MCP server reaches only the read path, the services and the stores
(no pipeline, so no ``digest`` internal); and a person's decisions (a forget, a conflict settled, a document
approved) are one public function each, which every caller imports from where it lives."""

from __future__ import annotations

import ast
import asyncio

from tests.kit.importgraph import PIPELINES, ROOT, folder, graph, layer, local

FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)


def nested_definitions(tree: ast.AST) -> list[tuple[int, str]]:
    """(line, name) of each function or class defined inside a function's body."""
    out = []
    for outer in ast.walk(tree):
        if isinstance(outer, FUNCTIONS):
            out += [(n.lineno, n.name) for body in outer.body for n in ast.walk(body)
                    if isinstance(n, (*FUNCTIONS, ast.ClassDef))]
    return sorted(set(out))


def test_no_function_in_mcp_server_is_defined_inside_another():
    """A tool nested in a builder can only be called through a server; a module-level one by anyone who has its
    dependencies (a test, another transport)."""
    found = [f"{p.relative_to(ROOT)}:{line}: {name}" for p in sorted((folder("mcp_server")).rglob("*.py"))
             for line, name in nested_definitions(ast.parse(p.read_text(encoding="utf-8")))]
    assert not found, found


def test_the_nesting_check_sees_a_nested_tool():
    source = "def build(server):\n    @server.tool()\n    def t():\n        pass\n    class S:\n        pass\n"
    assert nested_definitions(ast.parse(source)) == [(3, "t"), (5, "S")]
    assert nested_definitions(ast.parse("def a():\n    return lambda: 1\nclass B:\n    def c(self):\n        pass\n")) == []


def test_every_tool_is_a_module_level_function_of_a_tool_group_module(tmp_path):
    import importlib

    from agentos_mem.kernel.settings import load_settings
    from agentos_mem.mcp_server import server as mcp

    for fn in mcp.TOOLS:
        assert fn.__module__.startswith("agentos_mem.mcp_server.tools."), fn
        assert fn.__qualname__ == fn.__name__ and getattr(importlib.import_module(fn.__module__), fn.__name__) is fn, fn
    marked = {(m, n) for m in ("ask", "facts", "memory", "kb")
              for n, v in vars(importlib.import_module(f"agentos_mem.mcp_server.tools.{m}")).items() if hasattr(v, "mcp_tool")}
    assert marked == {(fn.__module__.rpartition(".")[2], fn.__name__) for fn in mcp.TOOLS}, "a @tool function build_server does not register"
    listed = asyncio.run(mcp.build_server(load_settings(home=tmp_path)).list_tools())
    assert [t.name for t in listed] == [fn.mcp_tool.name for fn in mcp.TOOLS]


def test_the_mcp_server_reaches_no_pipeline():
    """Its writes go through the services (a forget) and the stores (the memory book), as the CLI's do: no
    ``digest``, ``knowledge`` ... module, public or not, and nothing of the layers above."""
    bad = sorted((m, t) for m, targets in graph().items() if layer(m) == "mcp_server"
                 for t in targets if layer(t) in PIPELINES | {"cli", "flows", "tasks", "deployments", "demo", "bench"})
    assert not bad, bad


# A person's decision -> (the module that owns it, the modules that call it). The CLI and the MCP server call the same
# function; so do the review flow's ``apply_review`` and the journal's replay.
DECISIONS = {
    "forget_fact": ("services.decisions", {"cli.facts", "mcp_server.tools.facts", "restore.replay"}),
    "resolve_conflict": ("services.decisions", {"cli.facts", "knowledge.decisions", "restore.replay"}),
    "decide": ("knowledge.decisions", {"cli.kb", "restore.replay"}),
}


def imported_names(path) -> set[tuple[str, str]]:
    return {(local(n.module), a.name) for n in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
            if isinstance(n, ast.ImportFrom) and n.level == 0 and n.module for a in n.names}


def test_each_decision_is_one_function_that_every_transport_imports_from_its_owner():
    from tests.kit.importgraph import modules

    mods = modules()
    for name, (owner, callers) in DECISIONS.items():
        defined = sorted(m for m, p in mods.items() for n in ast.parse(p.read_text(encoding="utf-8")).body
                         if isinstance(n, FUNCTIONS) and n.name == name)
        assert defined == [owner], f"{name} is defined in {defined}, not only in {owner}"
        for caller in sorted(callers):
            assert (owner, name) in imported_names(mods[caller]), f"{caller} does not call {owner}.{name}"
        elsewhere = sorted(f"{m}: from {mod} import {name}" for m, p in mods.items()
                           for mod, n in imported_names(p) if n == name and mod != owner and mod in mods)
        assert not elsewhere, elsewhere
