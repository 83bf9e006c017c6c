"""The layers are a contract, checked over the import graph (every import, those inside functions too).

    flows -> tasks -> pipelines (digest, memory, index, knowledge, restore) -> services -> storage -> floor -> kernel
    query -> storage, floor, kernel          demo, bench (the benchmarks) and deployments above them
    floor: the packages of domain logic on the kernel (safety, embedders, documents, retrieval, vocabulary)
    cli and mcp_server on top: the two transports, over query and services (the MCP server writes memory records
    and recall counts, which is why it is not part of query)

- the kernel imports nothing of the project above it, and holds only what every layer needs (``KERNEL_MODULES``);
- each floor package imports only the kernel and its own modules (never another floor package, nor Prefect);
- storage imports only the kernel, the floor and storage (never services: the stores keep rows, the services their
  policy);
- services (the write policies over the stores: what supersedes what) import only the kernel, the floor, storage and
  services;
- the pipelines import only the kernel, the floor, storage, services and each other (never query, flows, tasks,
  Prefect, the CLI);
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

from tests.kit.importgraph import (FLOOR, KERNEL_MODULES, PACKAGES, PIPELINES, PROJECT, ROOT, folder, graph, imports_of, layer,
                                   modules)

# query -> pipeline edges still to remove (issue 13: query imports only the kernel and storage).
QUERY_TO_PIPELINES_LEFT: set[tuple[str, str]] = set()
# The kernel stays small (issue 41: it had grown to 2,406 lines).
KERNEL_LINES = 2000
# Import cycles still to break (each as its sorted members).
CYCLES_LEFT: set[tuple[str, ...]] = set()


def edges_where(g, source_layers, target_test) -> set[tuple[str, str]]:
    return {(m, t) for m, targets in g.items() if layer(m) in source_layers for t in targets if target_test(t)}


def test_the_kernel_imports_nothing_above_it():
    bad = edges_where(graph(), {"kernel"}, lambda t: layer(t) in PROJECT - {"kernel"})
    assert not bad, sorted(bad)


def test_the_kernel_holds_only_what_every_layer_needs():
    """Settings, domain types, the clock, files, the workspace, text, templates, the chat-model client, Prefect's
    environment and stage progress (which the pipelines, tasks, flows, the CLI and the benchmarks all report through);
    domain logic lives in the floor packages (the BM25 tokenizer in retrieval, the fact subjects' keys in vocabulary),
    the writer lock and the restore marker with the stores they guard (storage.guards). At most KERNEL_LINES lines."""
    held = {m.removeprefix("kernel.") for m in modules() if layer(m) == "kernel" and m != "kernel"}
    assert held == KERNEL_MODULES, f"not listed: {sorted(held - KERNEL_MODULES)}, gone: {sorted(KERNEL_MODULES - held)}"
    assert not [p.name for p in (folder("kernel")).iterdir() if p.is_dir() and p.name != "__pycache__"], "no subpackages"
    lines = sum(len(p.read_text(encoding="utf-8").splitlines()) for p in folder("kernel").glob("*.py"))
    assert lines <= KERNEL_LINES, f"the kernel holds {lines} lines, more than {KERNEL_LINES}: move domain logic out"


def floor_edges(g) -> set[tuple[str, str]]:
    """Imports of a floor package that reach past the kernel and itself: the project above, another floor package,
    Prefect."""
    return {(m, t) for m, t in edges_where(g, FLOOR, lambda t: layer(t) in PROJECT or t == "prefect")
            if layer(t) not in {"kernel", layer(m)}}


def test_each_floor_package_imports_only_the_kernel_and_itself():
    bad = floor_edges(graph())
    assert not bad, sorted(bad)


def test_storage_imports_only_the_kernel_the_floor_and_storage():
    bad = edges_where(graph(), {"storage"}, lambda t: layer(t) in PROJECT - {"kernel", "storage"} - FLOOR or t == "prefect")
    assert not bad, sorted(bad)


def test_services_import_only_the_kernel_the_floor_storage_and_services():
    bad = edges_where(graph(), {"services"}, lambda t: layer(t) in PROJECT - {"kernel", "storage", "services"} - FLOOR
                      or t == "prefect")
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
    floor = {"safety.s": {"kernel.a", "safety.t", "retrieval.r", "storage.b", "prefect"}, "safety.t": {"kernel.a"}}
    assert floor_edges(floor) == {("safety.s", "retrieval.r"), ("safety.s", "storage.b"), ("safety.s", "prefect")}
    probe = folder("storage") / "_layer_probe_for_test.py"
    try:
        probe.write_text("def f():\n    from agentos_mem.flows.nightly import nightly\n    import prefect.flows\n")
        assert imports_of(probe, "storage._layer_probe_for_test", set(modules())) >= {"flows.nightly", "prefect"}
    finally:
        probe.unlink()


def test_every_import_of_the_project_goes_through_its_one_package(tmp_path):
    """``agentos_mem`` is the one name the project installs: a module that imports a layer by its bare name
    (``from query.ask import ask``, the layout before one package) would find nothing installed, or another
    distribution's package of that name (``query``, ``tasks``, ``storage`` are all taken on the registry)."""
    bare = {(m, t) for m, targets in graph().items() for t in targets if t == "<top>"}
    assert not bare, sorted(bare)
    probe = tmp_path / "probe.py"
    probe.write_text("from query.ask import ask\nimport tasks.digest\nfrom agentos_mem import digest\n", encoding="utf-8")
    assert imports_of(probe, "cli.probe", set(modules())) == {"<top>", "digest"}


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


def test_flows_import_only_tasks_and_the_kernel():
    """A flow reaches the pipelines (and what lies below them) only through tasks/: its body is the list of its
    task calls, and what it puts around them (reports, plans, the writer limits, the days of a range, the rebuild,
    a stage that may fail without failing the night) tasks/ hands it too. No flow imports another flow module: one
    flow's helpers would be a second place where stages are put together."""
    bad = edges_where(graph(), {"flows"}, lambda t: layer(t) in PROJECT - {"tasks", "kernel"})
    assert not bad, sorted(bad)


def test_the_days_stages_are_written_once_and_every_day_runner_follows_them():
    """``digest.stages.DAY_STAGES`` is the one order: ``run_day`` loops over it, ``tasks.digest.DAY_TASKS`` is built
    from it (one task, or the extract pair, per step, by name), and the flows digest a day only through
    ``day_stages`` (daily-digest) and the ``digest-day`` task (backfill, nightly), which loop over ``DAY_TASKS``."""
    from prefect import Task

    from agentos_mem.digest import stages
    from agentos_mem.tasks import digest as t

    assert [f.__name__ for f in t.DAY_TASKS] == [s.__name__ for s in stages.DAY_STAGES]
    assert [getattr(f, "fn", f).__module__ for f in t.DAY_TASKS] == ["agentos_mem.tasks.digest"] * len(stages.DAY_STAGES)
    # every step is a task but the extract step, which calls the model's and the rules' tasks
    assert [f.__name__ for f in t.DAY_TASKS if not isinstance(f, Task)] == ["extract_step"]
    assert isinstance(t.extract_model, Task) and isinstance(t.extract_rules, Task)
    for runner, steps in ((folder("digest") / "stages.py", "run_day"), (folder("tasks") / "digest.py", "day_stages")):
        calls = _calls(runner, steps)
        assert not set(calls) & {s.__name__ for s in stages.DAY_STAGES}, f"{steps} calls a stage by name: {calls}"
    assert "DAY_STAGES" in _names(folder("digest") / "stages.py", "run_day") and "DAY_TASKS" in _names(folder("tasks") / "digest.py", "day_stages")
    assert "day_stages" in _attrs(folder("tasks") / "digest.py", "whole_day", None)
    # no flow calls a stage's task (or a stage) itself: a second list of the day could only start there
    step_tasks = {f.__name__ for f in t.DAY_TASKS} | {"extract_model", "extract_rules", "run_day", "digest_day"}
    _no_flow_names(step_tasks)
    assert "day_stages" in _attrs(folder("flows") / "daily.py", "daily_digest", "t")
    assert "whole_day" in _attrs(folder("tasks") / "digest.py", "digest_days", None)
    assert "digest_days" in _attrs(folder("flows") / "daily.py", "backfill", "t") and "digest_days" in _attrs(folder("flows") / "nightly.py", "nightly", "d")


def _no_flow_names(names: set[str]) -> None:
    """No module of flows/ names any of ``names`` (a stage, or its task): a second list of stages could only start there."""
    for path in sorted((folder("flows")).glob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        used = {n.attr for n in ast.walk(tree) if isinstance(n, ast.Attribute)} | {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)}
        assert not used & names, f"{path.name} calls {sorted(used & names)}"


def _names(path: Path, function: str) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    fn = next(n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef) and n.name == function)
    return {n.id for n in ast.walk(fn) if isinstance(n, ast.Name)}


def _attrs(path: Path, function: str, prefix: str | None) -> set[str]:
    """The names ``function`` calls: ``prefix.name(...)``, or bare ``name(...)`` when ``prefix`` is None."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    fn = next(n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef) and n.name == function)
    out = set()
    for node in ast.walk(fn):
        if isinstance(node, ast.Call):
            f = node.func
            if prefix is None and isinstance(f, ast.Name):
                out.add(f.id)
            elif prefix and isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name) and f.value.id == prefix:
                out.add(f.attr)
    return out


@pytest.mark.heavy  # it imports the tasks modules, and Prefect with them
def test_the_rebuilds_stages_are_written_once_and_both_runners_follow_them():
    """``index.stages.REBUILD_STAGES`` is the one order: ``rebuild`` loops over it, ``tasks.index.REBUILD_TASKS`` is
    built from it (one task per step by name, the embedding step mapping ``embed-batch`` tasks), and the flows rebuild
    only through ``rebuild_indexes`` and its ``rebuild_stages``, which loops over ``REBUILD_TASKS``."""
    from prefect import Task

    from agentos_mem.index import stages
    from agentos_mem.tasks import index as t

    assert [f.__name__ for f in t.REBUILD_TASKS] == [s.__name__ for s in stages.REBUILD_STAGES]
    assert [getattr(f, "fn", f).__module__ for f in t.REBUILD_TASKS] == ["agentos_mem.tasks.index"] * len(stages.REBUILD_STAGES)
    # every step is a task but the two that call theirs inside what they hold: the limit the stores are read under,
    # the task runner that maps the embedding batches
    assert [f.__name__ for f in t.REBUILD_TASKS if not isinstance(f, Task)] == ["collect_step", "embed_step"]
    assert isinstance(t.collect_units, Task) and isinstance(t.embed_batch, Task)
    assert "embed_all" in _attrs(folder("tasks") / "index.py", "embed_step", None)
    for runner, steps in ((folder("index") / "stages.py", "rebuild"), (folder("tasks") / "index.py", "rebuild_stages")):
        calls = _calls(runner, steps)
        assert not set(calls) & {s.__name__ for s in stages.REBUILD_STAGES}, f"{steps} calls a stage by name: {calls}"
    assert "REBUILD_STAGES" in _names(folder("index") / "stages.py", "rebuild")
    assert "REBUILD_TASKS" in _names(folder("tasks") / "index.py", "rebuild_stages")
    step_tasks = {f.__name__ for f in t.REBUILD_TASKS} | {"collect_units", "embed_batch", "embed_all", "rebuild"}
    _no_flow_names(step_tasks)
    assert "rebuild_stages" in _attrs(folder("tasks") / "index.py", "rebuild_indexes", None)
    assert "rebuild_indexes" in _attrs(folder("flows") / "rebuild.py", "index_rebuild", "t") and "rebuild_indexes" in _attrs(folder("flows") / "nightly.py", "nightly", "ix")


@pytest.mark.heavy  # it imports the tasks modules, and Prefect with them
def test_collect_is_written_once_and_the_flows_run_it_with_its_tasks():
    """``knowledge.collect.collect`` is the one list of the collect's stages (plan, each source fetched and collected,
    the report); ``tasks.knowledge.collect_all`` runs it with the fetch and collect tasks, and the flows collect only
    through ``collect_all``."""
    import inspect

    from prefect import Task

    from agentos_mem.knowledge import collect as plain
    from agentos_mem.tasks import knowledge as t

    params = inspect.signature(plain.collect).parameters
    assert params["fetch"].default is plain.fetch_feed and params["take"].default is plain.collect_source
    assert isinstance(t.fetch_feed, Task) and isinstance(t.collect_source, Task)
    tree = ast.parse((folder("tasks") / "knowledge.py").read_text(encoding="utf-8"))
    fn = next(n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef) and n.name == "collect_all")
    (call,) = [n for n in ast.walk(fn) if isinstance(n, ast.Call)]
    assert ast.unparse(call.func) == "_collect.collect"
    assert {k.arg: ast.unparse(k.value) for k in call.keywords} == {"fetch": "fetch_feed", "take": "collect_source",
                                                                     "stop": "reraise_stop"}
    stage_names = {"fetch_feed", "collect_source", "plan_sources", "failed_source", "finish_collect", "collect"}
    for path in sorted((folder("flows")).glob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        used = {n.attr for n in ast.walk(tree) if isinstance(n, ast.Attribute)}
        assert not used & stage_names, f"{path.name} calls {sorted(used & stage_names)}"
    assert "collect_all" in _attrs(folder("flows") / "collect.py", "collect_to_inbox", "t")
    tree = ast.parse((folder("flows") / "nightly.py").read_text(encoding="utf-8"))
    fn = next(n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef) and n.name == "nightly")
    assert "collect_all" in {n.attr for n in ast.walk(fn) if isinstance(n, ast.Attribute)}  # handed to or_failed


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
