"""A user's SOUL.md regex rule never hangs the query (issue 25, item 6): ``/(x+x+)+y/`` with a query of 44 x's once
hung every ``agentos query``. As a user runs it (in process through ``cli.main.main``): the query answers, the rule
that cannot be used is named with its SOUL.md line, and the other rules still block."""

from __future__ import annotations

import json

from agentos_mem.kernel.workspace import Workspace
from tests.kit.bad_inputs import SLOW_REGEXES
from tests.kit.cli import run_cli


def test_a_slow_regex_rule_is_named_and_the_query_answers(indexed_home):
    soul = Workspace(indexed_home).core / "SOUL.md"
    text = soul.read_text(encoding="utf-8")
    head = "## L0 硬约束 / Hard constraints\n"
    added = "".join(f"9{n}. Slow rule {n}.\n   - blocks: {regex}\n" for n, (regex, _, _) in enumerate(SLOW_REGEXES))
    soul.write_text(text.replace("## L1", added + "\n## L1", 1), encoding="utf-8")
    lines = soul.read_text(encoding="utf-8").splitlines()
    assert head.strip() in lines

    for regex, how, request in SLOW_REGEXES:
        out = run_cli("query", request, "--in-process", "--json", home=indexed_home)
        answer = json.loads(out.stdout)
        assert answer["status"] != "blocked", (regex, answer)
        said = [n for n in answer["notices"] if regex in n]
        assert said, (regex, answer["notices"])
        if how == "shape":  # named by the line the user wrote it on
            line = next(i for i, t in enumerate(lines, 1) if regex in t)
            assert f"SOUL.md:{line}: the regex {regex} is not used" in said[0], said
        else:
            assert "did not finish" in said[0], said
    # the rules that can be used still block, in the same answers
    blocked = json.loads(run_cli("query", "我的数据库密码是多少？", "--in-process", "--json", home=indexed_home).stdout)
    assert blocked["status"] == "blocked" and "L0 rule 2" in blocked["rule"]
    plain = run_cli("query", "服务器现在是什么配置？", "--in-process", home=indexed_home)
    assert "8C16G" in plain.stdout
