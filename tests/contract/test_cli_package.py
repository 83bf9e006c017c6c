"""The command line package's own contract: the group modules use cli.common's public helpers (no private
name crosses a module boundary into or out of cli/), import no other group and never cli.main, and every
command a group declares is registered by cli.main in the order of ``agentos --help``."""

from __future__ import annotations

import ast
from pathlib import Path

from tests.kit.importgraph import PKG, PROJECT, graph, local, modules


def _resolve(node: ast.ImportFrom, name: str, path: Path) -> str:
    if not node.level:
        return local(node.module or "")
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    parts = package.split(".")[: len(package.split(".")) - node.level + 1]
    return ".".join(parts + ([node.module] if node.module else []))


def private_uses(path: Path, name: str, known: set[str]) -> set[tuple[str, str]]:
    """(module, private name) for each underscore name this file takes from another project module: by
    ``from M import _x`` or as ``M._x`` on a module it imported."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    out: set[tuple[str, str]] = set()
    bound: dict[str, str] = {}  # local name -> the project module it is
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            base = _resolve(node, name, path)
            if base == PKG:  # from agentos_mem import digest: a layer, bound by its name
                bound.update({a.asname or a.name: a.name for a in node.names if a.name in PROJECT})
                continue
            if base.split(".")[0] not in PROJECT:
                continue
            for a in node.names:
                if f"{base}.{a.name}" in known:
                    bound[a.asname or a.name] = f"{base}.{a.name}"
                elif a.name.startswith("_") and not a.name.startswith("__"):
                    out.add((base, a.name))
        elif isinstance(node, ast.Import):
            for a in node.names:
                if a.name.split(".")[0] in (*PROJECT, PKG):
                    bound[a.asname or a.name.split(".")[0]] = a.name if a.asname else a.name.split(".")[0]
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and node.attr.startswith("_") and not node.attr.startswith("__"):
            chain, value = [], node.value
            while isinstance(value, ast.Attribute):
                chain.append(value.attr)
                value = value.value
            if isinstance(value, ast.Name) and value.id in bound:
                out.add((local(".".join([bound[value.id], *reversed(chain)])).removeprefix("<top>."), node.attr))
    return {(m, n) for m, n in out if m != name}


def test_no_private_name_crosses_into_or_out_of_cli():
    mods = modules()
    known = set(mods)
    bad = set()
    for name, path in mods.items():
        for target, private in private_uses(path, name, known):
            if name.split(".")[0] == "cli" or target.split(".")[0] == "cli":
                bad.add((name, f"{target}.{private}"))
    assert not bad, sorted(bad)


def test_the_private_name_check_sees_both_forms(tmp_path):
    probe = tmp_path / "probe.py"
    probe.write_text("from agentos_mem.cli.common import _x, emit\nimport agentos_mem.kernel.clock\nfrom agentos_mem.cli import common\n"
                     "def f():\n    return agentos_mem.kernel.clock._now, common._y, emit\n", encoding="utf-8")
    found = private_uses(probe, "cli.probe", set(modules()))
    assert found == {("cli.common", "_x"), ("kernel.clock", "_now"), ("cli.common", "_y")}


def test_group_modules_import_only_cli_common_of_the_cli():
    g = graph()
    assert {t for t in g["cli.common"] if t.split(".")[0] == "cli"} == set()
    bad = {(m, t) for m, targets in g.items() if m.split(".")[0] == "cli" and m not in ("cli.main", "cli")
           for t in targets if t.split(".")[0] == "cli" and t != "cli.common"}
    assert not bad, sorted(bad)


def test_main_registers_every_group_command_once_in_help_order():
    from agentos_mem.cli import demo
    from agentos_mem.cli.main import COMMANDS, GROUPS, build_parser

    declared = [c for group in GROUPS for c in group.COMMANDS]
    assert sorted(declared) == sorted(COMMANDS) and len(set(COMMANDS)) == len(COMMANDS)
    sub = next(a for a in build_parser()._actions if a.dest == "command")
    assert list(sub.choices) == [*COMMANDS, *demo.COMMANDS]
    assert {Path(g.__file__).stem for g in (*GROUPS, demo)} | {"__init__", "common", "main"} == {
        p.stem for p in Path(demo.__file__).parent.glob("*.py")}, "a group module that cli.main does not register"
