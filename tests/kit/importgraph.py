"""The project's import graph, read from the source (every import, those inside functions too): what the layer
contract (tests/contract/test_layers.py) and the CLI package contract check."""

from __future__ import annotations

import ast
from functools import cache
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PIPELINES = {"digest", "memory", "index", "knowledge", "restore"}
# The packages of domain logic on the kernel (each imports only the kernel): what storage and every layer above it
# may use. The kernel itself holds only KERNEL_MODULES.
FLOOR = {"safety", "embedders", "documents", "retrieval", "vocabulary"}
KERNEL_MODULES = {"settings", "domain", "clock", "files", "workspace", "text", "templates", "llm", "prefect_env",
                  "tokenize", "progress"}
PACKAGES = ["kernel", *sorted(FLOOR), "storage", "services", *sorted(PIPELINES), "demo", "bench", "query", "mcp_server",
            "flows", "tasks", "deployments", "cli"]
PROJECT = set(PACKAGES)


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def modules() -> dict[str, Path]:
    return {module_name(p): p for pkg in PACKAGES for p in sorted((ROOT / pkg).rglob("*.py"))}


def imports_of(path: Path, name: str, known: set[str]) -> set[str]:
    """The modules ``path`` imports: project modules by their full name, anything else by its top package."""
    out: set[str] = set()
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), filename=str(path))):
        if isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                base = ".".join(package.split(".")[: len(package.split(".")) - node.level + 1] + ([base] if base else []))
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
