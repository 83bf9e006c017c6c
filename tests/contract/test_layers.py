"""The layers are a contract, checked over the import graph (every import, those inside functions too).

    flows -> tasks -> pipelines (digest, memory, index, knowledge, restore) -> services -> storage -> kernel
    query -> storage, kernel          demo, bench (the benchmarks) and deployments above them
    cli and mcp_server on top: the two transports, over query and services (the MCP server writes memory records
    and recall counts, which is why it is not part of query)

- the kernel imports nothing of the project above it;
- storage imports only the kernel and storage (never services: the stores keep rows, the services their policy);
- services (the write policies over the stores: what supersedes what) import only the kernel, storage and services;
- the pipelines import only the kernel, storage, services and each other (never query, flows, tasks, Prefect, the CLI);
- query never imports services (the read path writes nothing);
- nothing below flows/ and tasks/ imports Prefect (the kernel's Prefect environment and the deployments'
  serve entry aside);
- query never reaches Prefect, flows, tasks, deployments or the CLI;
- nothing outside cli/ imports the CLI (cli.main imports the command-group modules, which import only
  cli.common and the layers below: no import cycle).

One rule of the redesign (issue 13) is not met yet: query still reaches some pipeline modules. Its remaining
edges are listed below; a new edge fails, and so does a listed edge that has gone (delete it from the list),
so the lists only shrink.
"""

from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

import pytest

from tests.kit.importgraph import PACKAGES, PIPELINES, PROJECT, ROOT, graph, imports_of, layer, modules

# query -> pipeline edges still to remove (issue 13: query imports only the kernel and storage).
QUERY_TO_PIPELINES_LEFT: set[tuple[str, str]] = set()
# Import cycles still to break (each as its sorted members).
CYCLES_LEFT: set[tuple[str, ...]] = set()


def edges_where(g, source_layers, target_test) -> set[tuple[str, str]]:
    return {(m, t) for m, targets in g.items() if layer(m) in source_layers for t in targets if target_test(t)}


def test_the_kernel_imports_nothing_above_it():
    bad = edges_where(graph(), {"kernel"}, lambda t: layer(t) in PROJECT - {"kernel"})
    assert not bad, sorted(bad)


def test_storage_imports_only_the_kernel_and_storage():
    bad = edges_where(graph(), {"storage"}, lambda t: layer(t) in PROJECT - {"kernel", "storage"} or t == "prefect")
    assert not bad, sorted(bad)


def test_services_import_only_the_kernel_storage_and_services():
    bad = edges_where(graph(), {"services"}, lambda t: layer(t) in PROJECT - {"kernel", "storage", "services"} or t == "prefect")
    assert not bad, sorted(bad)


def test_pipelines_import_the_kernel_storage_services_and_each_other_only():
    bad = edges_where(graph(), PIPELINES, lambda t: layer(t) in {"query", "flows", "tasks", "deployments", "demo", "bench"} or t == "prefect")
    assert not bad, sorted(bad)


def test_nothing_below_flows_and_tasks_imports_prefect():
    allowed = {"flows", "tasks", "deployments"}
    bad = {(m, t) for m, t in edges_where(graph(), PROJECT - allowed, lambda t: t == "prefect") if m != "kernel.prefect_env"}
    assert not bad, sorted(bad)


def test_query_never_reaches_prefect_flows_tasks_services_or_the_cli():
    bad = edges_where(graph(), {"query"}, lambda t: t == "prefect" or layer(t) in {"flows", "tasks", "deployments", "services"}
                      or layer(t) == "cli")
    assert not bad, sorted(bad)


def test_nothing_outside_cli_imports_it():
    bad = edges_where(graph(), PROJECT - {"cli"}, lambda t: layer(t) == "cli")
    assert not bad, sorted(bad)


def test_the_mcp_server_is_a_transport_nothing_imports_and_it_reaches_no_prefect():
    below = edges_where(graph(), PROJECT - {"mcp_server", "cli"}, lambda t: layer(t) == "mcp_server")
    assert not below, sorted(below)
    bad = edges_where(graph(), {"mcp_server"}, lambda t: t == "prefect" or layer(t) in {"flows", "tasks", "deployments", "cli"})
    assert not bad, sorted(bad)


def test_flows_and_tasks_never_call_the_read_side():
    """The write side fills what the read side reads (e.g. knowledge section vectors), never the reverse."""
    bad = edges_where(graph(), {"flows", "tasks"}, lambda t: layer(t) == "query")
    assert not bad, sorted(bad)


QUERY_WRITES_LEFT: set[str] = set()  # writes the read path still makes (none left)


def test_query_writes_through_no_write_helper():
    """The read path writes nothing: no atomic writes, no cache or vector puts, no index publishing or
    rebuilding (recall statistics, which the records' format asks for, go through the memory book)."""
    bad = []
    for name, path in modules().items():
        if layer(name) != "query":
            continue
        text = path.read_text(encoding="utf-8")
        bad += [f"{name}: {w}" for w in ("atomic_write", "put_vectors", "put_tokens", "put_cards", ".publish(", "rebuild(", "mark_recalled(", ".save(", ".delete(") if w in text]
    assert set(bad) - QUERY_WRITES_LEFT == set(), sorted(set(bad) - QUERY_WRITES_LEFT)
    assert QUERY_WRITES_LEFT - set(bad) == set(), f"gone (delete from the list): {sorted(QUERY_WRITES_LEFT - set(bad))}"


def test_query_reaches_no_pipeline_beyond_the_listed_remainder():
    now = edges_where(graph(), {"query"}, lambda t: layer(t) in PIPELINES | {"demo", "bench"})
    assert now - QUERY_TO_PIPELINES_LEFT == set(), f"new query -> pipeline imports: {sorted(now - QUERY_TO_PIPELINES_LEFT)}"
    assert QUERY_TO_PIPELINES_LEFT - now == set(), f"gone (delete from the list): {sorted(QUERY_TO_PIPELINES_LEFT - now)}"


def cycles(g: dict[str, set[str]]) -> set[tuple[str, ...]]:
    """Strongly connected components with more than one module (Tarjan)."""
    index, low, stack, on, out, counter = {}, {}, [], set(), set(), [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in g.get(v, ()):
            if w not in g:
                continue
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.add(tuple(sorted(comp)))

    for v in sorted(g):
        if v not in index:
            visit(v)
    return out


def test_no_import_cycles_beyond_the_listed_remainder():
    found = cycles(graph())
    assert found - CYCLES_LEFT == set(), f"new import cycles: {sorted(found - CYCLES_LEFT)}"
    assert CYCLES_LEFT - found == set(), f"gone (delete from the list): {sorted(CYCLES_LEFT - found)}"


def test_the_checks_see_what_they_check(tmp_path):
    g = {"kernel.a": {"storage.b"}, "storage.b": {"kernel.a", "prefect", "services.e"}, "query.c": {"flows.d", "cli.main"}}
    assert edges_where(g, {"kernel"}, lambda t: layer(t) in PROJECT - {"kernel"}) == {("kernel.a", "storage.b")}
    assert edges_where(g, {"storage"}, lambda t: layer(t) in PROJECT - {"kernel", "storage"}) == {("storage.b", "services.e")}
    assert ("storage.b", "prefect") in edges_where(g, {"storage"}, lambda t: t == "prefect")
    assert cycles(g) == {("kernel.a", "storage.b")}
    probe = ROOT / "storage" / "_layer_probe_for_test.py"
    try:
        probe.write_text("def f():\n    from flows.nightly import nightly\n    import prefect.flows\n")
        assert imports_of(probe, "storage._layer_probe_for_test", set(modules())) >= {"flows.nightly", "prefect"}
    finally:
        probe.unlink()


def test_no_flow_file_shadows_a_package():
    """Prefect loads a deployment's entrypoint by its path and puts flows/ on sys.path first: a flows/digest.py
    would then be what ``import digest`` finds inside every flow run, instead of the digest package."""
    clash = sorted(p.stem for p in (ROOT / "flows").glob("*.py") if p.stem in PROJECT or (ROOT / p.stem).is_dir())
    assert not clash, f"flows/ modules named like a top-level package: {clash}"


def test_every_production_module_is_in_a_layer():
    stray = [p.name for p in ROOT.glob("*.py")]
    assert not stray, f"modules outside the packages: {stray}"
    assert defaultdict(int, {layer(m): 1 for m in modules()}).keys() == PROJECT


# -- flows read as the list of their stages ---------------------------------------------------------------------
def _calls(path: Path, function: str, prefix: str = "") -> list[str]:
    """The stage calls in ``function``'s body, in source order: ``prefix.name(...)`` (task calls in a flow) or
    bare ``name(...)`` (the plain sequence)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    fn = next(n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef) and n.name == function)
    out = []
    for node in ast.walk(fn):
        if isinstance(node, ast.Call):
            f = node.func
            if prefix and isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name) and f.value.id == prefix:
                out.append((node.lineno, node.col_offset, f.attr))
            elif not prefix and isinstance(f, ast.Name):
                out.append((node.lineno, node.col_offset, f.id))
    return [name for *_, name in sorted(out)]


STAGE_PAIRS = [
    # (flow module, flow-side function, plain module, plain function, the stage functions both must call in order)
    ("flows/daily.py", "digest_one_day", "digest/stages.py", "run_day"),
    ("flows/rebuild.py", "rebuild_indexes", "index/stages.py", "rebuild"),
    ("flows/collect.py", "collect_sources", "knowledge/collect.py", "collect"),
]


@pytest.mark.heavy  # it imports the tasks modules, and Prefect with them (the static rules cannot see an import_module)
def test_each_flow_lists_its_stages_as_task_calls_in_the_plain_order():
    import importlib

    for flow_file, flow_fn, plain_file, plain_fn in STAGE_PAIRS:
        tasks_module = importlib.import_module({"flows/daily.py": "tasks.digest", "flows/rebuild.py": "tasks.index",
                                                "flows/collect.py": "tasks.knowledge"}[flow_file])
        task_calls = [c for c in _calls(ROOT / flow_file, flow_fn, "t") if not c.startswith("publish")]
        assert task_calls, f"{flow_file}:{flow_fn} calls no task"
        assert all(hasattr(tasks_module, c) for c in task_calls)
        plain = [c for c in _calls(ROOT / plain_file, plain_fn) if c in set(task_calls)]
        assert plain == task_calls, f"{flow_file}:{flow_fn} runs {task_calls}, {plain_file}:{plain_fn} runs {plain}"


def test_no_stage_runner_takes_a_module_of_stages():
    """No ``stages=`` duck typing: a flow's stages are its own task calls."""
    found = [f"{p.relative_to(ROOT)}:{n.lineno}" for pkg in PACKAGES for p in sorted((ROOT / pkg).rglob("*.py"))
             for n in ast.walk(ast.parse(p.read_text(encoding="utf-8"))) if isinstance(n, ast.Call)
             and any(k.arg == "stages" for k in n.keywords)]
    assert not found, found


def private_imports(paths: dict[str, Path], known: set[str]) -> list[str]:
    """Every ``from m import _name`` (m a project module, ``_name`` one underscore) in ``paths``: a name the module keeps
    to itself used as another's seam."""
    out = []
    for name, path in paths.items():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), filename=str(path))):
            if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module in known:
                out += [f"{name}: from {node.module} import {a.name}" for a in node.names
                        if a.name.startswith("_") and not a.name.startswith("__")]
    return sorted(out)


def test_no_module_imports_another_modules_private_name():
    mods = modules()
    tests = {f"tests.{p.relative_to(ROOT / 'tests').with_suffix('').as_posix().replace('/', '.')}": p
             for p in sorted((ROOT / "tests").rglob("*.py"))}
    bad = private_imports({**mods, **tests}, set(mods))
    assert not bad, "\n".join(bad)
