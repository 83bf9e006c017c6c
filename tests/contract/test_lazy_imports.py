"""A project import inside a function says why it is there: a ``#`` comment on the import's line, or on the line(s)
immediately above it inside the function, names the start-up cost it saves (``# lazy: Prefect (~2 s) only when a flow
runs``) or the cycle it breaks. One comment covers a block of consecutive imports. Every other project import sits
at the top of its module, where the import graph and a reader see it at once."""

from __future__ import annotations

import ast
import io
import tokenize
from pathlib import Path

from tests.kit.importgraph import PROJECT, ROOT, local, modules


def _imported(node: ast.Import | ast.ImportFrom, name: str, path: Path) -> list[str]:
    if isinstance(node, ast.Import):
        return [local(a.name) for a in node.names]
    if not node.level:
        module = local(node.module or "")
        return [a.name for a in node.names] if module == "agentos_mem" else [module]
    package = (name if path.name == "__init__.py" else name.rpartition(".")[0]).split(".")
    return [".".join(package[: len(package) - node.level + 1] + ([node.module] if node.module else []))]


def _comment_lines(source: str) -> tuple[set[int], set[int]]:
    """(lines with a comment, lines that are only a comment)."""
    anywhere, alone = set(), set()
    lines = source.splitlines()
    for tok in tokenize.generate_tokens(io.StringIO(source).readline):
        if tok.type == tokenize.COMMENT:
            anywhere.add(tok.start[0])
            if not lines[tok.start[0] - 1][: tok.start[1]].strip():
                alone.add(tok.start[0])
    return anywhere, alone


def _function_imports(tree: ast.AST):
    """(import, the function it is in, the statement just before it in the same block or None)."""
    out = []

    def visit(node, fn):
        for _, value in ast.iter_fields(node):
            if not isinstance(value, list):
                continue
            before = None
            for child in value:
                if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    visit(child, child)
                elif isinstance(child, ast.AST):
                    if isinstance(child, (ast.Import, ast.ImportFrom)) and fn is not None:
                        out.append((child, fn, before))
                    visit(child, fn)
                if isinstance(child, ast.stmt):
                    before = child

    visit(tree, None)
    return out


def uncommented(path: Path, name: str, root: Path = ROOT) -> list[str]:
    """``path:line import`` for each function-level project import in ``path`` that no comment explains."""
    source = path.read_text(encoding="utf-8")
    anywhere, alone = _comment_lines(source)
    found = _function_imports(ast.parse(source, filename=str(path)))
    before_of = {id(node): before for node, _, before in found}

    def explained(node, fn) -> bool:
        if any(line in anywhere for line in range(node.lineno, node.end_lineno + 1)):
            return True
        if node.lineno - 1 > fn.lineno and node.lineno - 1 in alone:  # the line above, inside the function
            return True
        before = before_of.get(id(node))  # the import just above it in a block of imports: the block's comment
        return (isinstance(before, (ast.Import, ast.ImportFrom)) and before.end_lineno == node.lineno - 1
                and explained(before, fn))

    return [f"{path.relative_to(root)}:{node.lineno} {ast.unparse(node)}" for node, fn, _ in found
            if any(m.split(".")[0] in PROJECT for m in _imported(node, name, path)) and not explained(node, fn)]


def test_every_function_level_project_import_says_why():
    bad = [line for name, path in modules().items() for line in uncommented(path, name)]
    assert not bad, "a project import inside a function needs a comment saying which start-up cost it saves or " \
                    "which cycle it breaks (or belongs at the module's top):\n" + "\n".join(bad)


def test_the_check_sees_a_bare_import_and_accepts_a_commented_block(tmp_path):
    src = tmp_path / "kernel" / "sample.py"
    src.parent.mkdir()
    src.write_text(
        "def bare():\n"
        "    from agentos_mem.kernel.clock import today\n"
        "\n"
        "def block():\n"
        "    x = 1  # a comment on another statement covers nothing\n"
        "    from agentos_mem.kernel import text\n"
        "\n"
        "def covered():\n"
        "    # lazy: the query stack stays off `agentos` start-up\n"
        "    from agentos_mem.query.ask import ask\n"
        "    from agentos_mem.query.kb import read_doc\n"
        "    from agentos_mem.kernel import files  # lazy: a cycle\n"
        "    import json\n", encoding="utf-8")
    found = uncommented(src, "kernel.sample", root=tmp_path)
    assert [f.split(" ", 1)[1] for f in found] == ["from agentos_mem.kernel.clock import today", "from agentos_mem.kernel import text"]
