"""The tests' own layout: every test module sits in a package folder that mirrors the project (none directly in
tests/), and test modules share code only through tests.kit and tests/conftest.py, never by importing each other."""

from __future__ import annotations

import ast
from pathlib import Path

from tests.kit.importgraph import folder

TESTS = Path(__file__).resolve().parents[1]


def all_test_files() -> list[Path]:
    return sorted(TESTS.rglob("test_*.py"))


def package_of(path: Path) -> str:
    return ".".join(("tests", *path.relative_to(TESTS).parent.parts))


def imported_test_modules(source: str, package: str) -> list[tuple[int, str]]:
    """(line, module) for each import of a test module (``tests[.<folder>].test_*``) in ``source``, a module of
    ``package``: absolute, relative or ``from tests.<folder> import test_x``, those inside functions too."""
    def is_test_module(name: str) -> bool:
        parts = name.split(".")
        return parts[0] == "tests" and any(p.startswith("test_") for p in parts[1:])

    out = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            out += [(node.lineno, a.name) for a in node.names if is_test_module(a.name)]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                up = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join(up + ([base] if base else []))
            if is_test_module(base):
                out.append((node.lineno, base))
            else:
                out += [(node.lineno, f"{base}.{a.name}") for a in node.names if is_test_module(f"{base}.{a.name}")]
    return sorted(out)


def test_no_test_module_imports_another():
    files = [*all_test_files(), *sorted((TESTS / "kit").rglob("*.py")), TESTS / "conftest.py"]
    found = [f"{p.relative_to(TESTS)}:{line}: {name}" for p in files
             for line, name in imported_test_modules(p.read_text(encoding="utf-8"), package_of(p))]
    assert not found, "share helpers through tests/kit/ (or fixtures in tests/conftest.py):\n" + "\n".join(found)


def test_every_test_module_sits_in_a_package_folder():
    loose = [p.name for p in TESTS.glob("test_*.py")]
    assert not loose, f"test modules directly in tests/ (move each into the folder of the package it tests): {loose}"
    assert (TESTS / "__init__.py").is_file()
    missing = sorted({str(p.parent.relative_to(TESTS)) for p in all_test_files()
                      for d in (p.parent, *p.parent.parents) if d.is_relative_to(TESTS) and not (d / "__init__.py").is_file()})
    assert not missing, f"folders without __init__.py (tests are imported as tests.<folder>.<module>): {missing}"
    assert not [p.name for p in TESTS.glob("*.py") if p.name not in ("__init__.py", "conftest.py")], \
        "support modules belong in tests/kit/"
    # each folder mirrors a project package (tests/flows/ holds the deployments' tests too), or is one of these
    folders = {p.relative_to(TESTS).parts[0] for p in all_test_files()}
    stray = sorted(f for f in folders - {"bench", "contract"} if not (folder(f) / "__init__.py").is_file())
    assert not stray, f"test folders that mirror no package: {stray}"


def test_the_check_sees_an_import_of_a_test_module():
    source = ("from tests.query.test_mcp import x\nimport tests.test_cli\nimport tests.kit.cli\n\ndef f():\n"
              "    from ..cli import test_cli\n    from tests.kit import cli\n    from .test_mcp import y\n")
    assert imported_test_modules(source, "tests.query") == [
        (1, "tests.query.test_mcp"), (2, "tests.test_cli"), (6, "tests.cli.test_cli"), (8, "tests.query.test_mcp")]
