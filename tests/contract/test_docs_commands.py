"""Every `agentos` command the documentation shows is one `agentos --help` knows.

The documentation is README.md, DEVELOPMENT.md and docs/*.md. Its commands are read from fenced code blocks and
inline code spans: `agentos <command> [<word>]` (also `.venv/bin/agentos ...`). `<command>` must be a command of the
parser `agentos` builds (``agentos_mem.cli.main.build_parser``, in process: the same parser `agentos --help` prints).
Where that command has subcommands (`facts`, `memory`, `kb`, `bench`) or takes one of a fixed set of words first
(`import`), a second word that is a plain lowercase word (or each word of `a|b`) must be one of them, so
`agentos kb approve ID` and `agentos memory show|delete NAME` pass and `agentos kb publish ID` does not. Placeholders
(`TEXT`, `ID`, `<cmd>`), options and quoted arguments are not checked. A second test feeds made-up lines to the same
check, so that it is seen to fail.
"""

from __future__ import annotations

import argparse
import re
from pathlib import Path

from agentos_mem.cli.main import build_parser

ROOT = Path(__file__).resolve().parents[2]

# `agentos` as a command: not part of a longer name (agentos-mem, agentos_mem, agentos.toml, $AGENTOS_HOME), followed
# by blanks and a lowercase word; then the next word, if any, up to a blank or the end of the code span.
COMMAND = re.compile(r"(?<![\w.\-])agentos[ \t]+([a-z][a-z0-9_-]*)(?:[ \t]+([^\s`]+))?")
# An inline code span: backticks, then anything up to the same backticks, never across a blank line.
INLINE = re.compile(r"(`+)((?:(?!\n[ \t]*\n).)+?)\1", re.S)
PLAIN_WORD = re.compile(r"[a-z][a-z0-9-]*\Z")


def documentation() -> list[Path]:
    return [ROOT / "README.md", ROOT / "DEVELOPMENT.md", *sorted((ROOT / "docs").glob("*.md"))]


def command_tree(parser: argparse.ArgumentParser) -> dict[str, set[str]]:
    """Each command of ``parser`` -> the words its first positional argument may take: its subcommands, or the
    choices of a fixed-choice argument (``import``); empty when it takes anything (or nothing)."""
    tree: dict[str, set[str]] = {}
    commands = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    for name, sub in commands.choices.items():
        first = next((a for a in sub._actions if not a.option_strings), None)
        tree[name] = set(first.choices) if first is not None and first.choices else set()
    return tree


def code_of(markdown: str) -> list[str]:
    """The code of ``markdown``: each line of its fenced blocks, and each inline code span (blanks made one space)."""
    pieces, prose, fence = [], [], ""
    for line in markdown.splitlines():
        stripped = line.lstrip()
        if fence:
            if stripped.startswith(fence):
                fence = ""
            else:
                pieces.append(line)
            prose.append("")
        elif stripped.startswith(("```", "~~~")):
            fence = stripped[:3]
            prose.append("")
        else:
            prose.append(line)
    pieces += [" ".join(m.group(2).split()) for m in INLINE.finditer("\n".join(prose))]
    return pieces


def commands_in(markdown: str) -> list[tuple[str, str]]:
    """(command, the word after it or "") for every `agentos ...` in the code of ``markdown``."""
    return [(m.group(1), m.group(2) or "") for piece in code_of(markdown) for m in COMMAND.finditer(piece)]


def unknown_commands(markdown: str, tree: dict[str, set[str]]) -> list[str]:
    """What ``markdown`` shows that ``tree`` (from ``command_tree``) does not have, one line each."""
    found = []
    for command, second in commands_in(markdown):
        shown = f"agentos {command} {second}".strip()
        if command not in tree:
            found.append(f"{shown}: `{command}` is not an agentos command (agentos --help: {', '.join(sorted(tree))})")
            continue
        for word in second.rstrip(".,;:)]").split("|") if tree[command] else ():
            if PLAIN_WORD.match(word) and word not in tree[command]:
                found.append(f"{shown}: `{word}` is not one of `agentos {command}`'s: {', '.join(sorted(tree[command]))}")
    return found


def test_every_command_the_documentation_shows_is_in_agentos_help():
    tree = command_tree(build_parser())
    files = documentation()
    assert all(p.is_file() for p in files[:2]), "README.md and DEVELOPMENT.md are the documentation's entry points"
    shown = {p: commands_in(p.read_text(encoding="utf-8")) for p in files}
    # The extraction must see the documentation's commands at all: the README's tour alone shows a dozen.
    assert len(shown[ROOT / "README.md"]) >= 12, shown[ROOT / "README.md"]
    assert {c for cs in shown.values() for c, _ in cs} >= {"nightly", "query", "facts", "kb", "mcp", "bench"}
    problems = [f"{p.relative_to(ROOT)}: {line}" for p in files for line in unknown_commands(p.read_text(encoding="utf-8"), tree)]
    assert not problems, "commands the documentation shows that `agentos --help` does not have:\n" + "\n".join(problems)


def test_the_check_reports_what_agentos_does_not_have():
    tree = command_tree(build_parser())
    made_up = """
Run `agentos frobnicate` first, then:

```bash
agentos kb publish vm_1
.venv/bin/agentos import wikipedia dump.json --out logs/
agentos memory show|erase NAME
```
"""
    found = unknown_commands(made_up, tree)
    assert len(found) == 4, found
    for expected in ("agentos frobnicate: `frobnicate` is not an agentos command",
                     "agentos kb publish: `publish` is not one of `agentos kb`'s",
                     "agentos import wikipedia: `wikipedia` is not one of `agentos import`'s: locomo, memorybank",
                     "agentos memory show|erase: `erase` is not one of `agentos memory`'s"):
        assert [line for line in found if line.startswith(expected)], (expected, found)

    fine = """
`agentos kb approve ID`, `agentos memory show|delete NAME`, `agentos query '服务器现在是什么配置？'`,
`agentos facts
list --as-of DATE` (a span over two lines), `agentos <command> --help`, the distribution `agentos-mem`, the
package `agentos_mem`, `$AGENTOS_HOME/agentos.toml`, and in prose, outside code: agentos frobnicate.

```
cli/          `agentos`: main.py builds the parser
"command": "/path/to/repo/.venv/bin/agentos",
$ agentos bench perf --size 1000
```
"""
    assert unknown_commands(fine, tree) == []
    assert ("facts", "list") in commands_in(fine) and ("bench", "perf") in commands_in(fine)
