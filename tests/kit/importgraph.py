"""The project's import graph, read from the source (every import, those inside functions too): what the layer
contract (tests/contract/test_layers.py) and the CLI package contract check."""

from __future__ import annotations

import ast
from functools import cache
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
# The one installed package; a module is named here without it ("kernel.settings" for agentos_mem.kernel.settings), so
# the layer contract reads as the design map does.
PKG = "agentos_mem"
PIPELINES = {"digest", "memory", "index", "knowledge", "restore"}
# The packages of domain logic on the kernel (each imports only the kernel): what storage and every layer above it
# may use. The kernel itself holds only KERNEL_MODULES.
FLOOR = {"safety", "embedders", "documents", "retrieval", "vocabulary"}
KERNEL_MODULES = {"settings", "domain", "clock", "files", "workspace", "text", "templates", "llm", "prefect_env",
                  "progress"}
PACKAGES = ["kernel", *sorted(FLOOR), "storage", "services", *sorted(PIPELINES), "demo", "bench", "query", "mcp_server",
            "flows", "tasks", "deployments", "cli"]
PROJECT = set(PACKAGES)
# The design map's folders at the repository's top, mapped into the package by pyproject.toml's package-dir.
MAPPED = {"flows", "tasks", "storage", "deployments", "bench"}


def folder(pkg: str) -> Path:
    """Where a layer's source lies: its folder at the top (MAPPED) or in agentos_mem/."""
    return ROOT / pkg if pkg in MAPPED else ROOT / PKG / pkg


def module_name(path: Path) -> str:
    rel = path.relative_to(ROOT)
    parts = list((rel.relative_to(PKG) if rel.parts[0] == PKG else rel).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def modules() -> dict[str, Path]:
    return {module_name(p): p for pkg in PACKAGES for p in sorted(folder(pkg).rglob("*.py"))}


def local(name: str) -> str:
    """A module's name within the package ("agentos_mem.kernel.clock" -> "kernel.clock"); a top-level import of a layer's
    bare name ("kernel.clock", the layout before one package) keeps a mark that no layer has: it names no module."""
    if name == PKG or name.startswith(PKG + "."):
        return name[len(PKG) + 1:] or PKG
    return f"<top>.{name}" if name.split(".")[0] in PROJECT else name


def imports_of(path: Path, name: str, known: set[str]) -> set[str]:
    """The modules ``path`` imports: project modules by their full name, anything else by its top package."""
    out: set[str] = set()
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), filename=str(path))):
        if isinstance(node, ast.Import):
            targets = [local(a.name) for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                base = ".".join(package.split(".")[: len(package.split(".")) - node.level + 1] + ([base] if base else []))
            else:
                base = local(base)
            if base == PKG:  # from agentos_mem import digest: the layer itself
                targets = [a.name for a in node.names]
            else:
                targets = [f"{base}.{a.name}" if f"{base}.{a.name}" in known else base for a in node.names]
        else:
            continue
        for t in targets:
            while t not in known and "." in t and t.split(".")[0] in PROJECT:
                t = t.rpartition(".")[0]
            out.add(t if t in known or t.split(".")[0] in PROJECT else t.split(".")[0])
    out.discard(name)
    return out


def graph() -> dict[str, set[str]]:
    """module -> the modules it imports; a fresh copy of one reading per test session (the source does not change
    while the suite runs, and reading it costs a second or more a contract test)."""
    return {name: set(targets) for name, targets in _read_graph().items()}


@cache
def _read_graph() -> dict[str, frozenset[str]]:
    mods = modules()
    return {name: frozenset(imports_of(path, name, set(mods))) for name, path in mods.items()}


def layer(module: str) -> str:
    return module.split(".")[0]
