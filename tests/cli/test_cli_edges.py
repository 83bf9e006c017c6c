"""Edges of the command line a user meets: counts of zero refused in one line (in process, through ``cli.main.main``),
a closed pipe ends quietly (the installed script in a subprocess: the exit status and the pipe are the process's)."""

from __future__ import annotations

import json
import os
import subprocess

import pytest

from tests.kit.cli import AGENTOS, run_cli


@pytest.mark.parametrize("argv, option", [
    (["query", "服务器配置", "--k", "0"], "--k"),
    (["query", "server", "--budget", "0"], "--budget"),
    (["query", "server", "--budget", "-5"], "--budget"),
    (["kb", "search", "限流", "--k", "0"], "--k"),
    (["memory", "recall", "coffee", "--limit", "6"], "--limit"),
    (["bench", "perf", "--size", "0"], "--size"),
    (["serve", "--port", "70000"], "--port"),
])
def test_counts_out_of_range_are_refused_in_one_line(tmp_path, argv, option):
    p = run_cli(*argv, home=tmp_path / "h", check=False)
    assert p.returncode == 2 and p.stdout == ""
    last = p.stderr.strip().splitlines()[-1]
    assert last.startswith(f"agentos {argv[0]}") and f"argument {option}" in last and "out of range" in last
    assert "Traceback" not in p.stderr


@pytest.mark.e2e  # the installed script's own exit status when its reader goes away
def test_a_reader_that_goes_away_ends_the_command_quietly(tmp_path):
    """`agentos ... | head`: no BrokenPipeError, nothing on stderr, the exit status of a tool ended by SIGPIPE."""
    home = tmp_path / "h"
    run_cli("init", "--demo", home=home)
    p = subprocess.Popen([*AGENTOS, "config", "--json"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         env={**os.environ, "AGENTOS_HOME": str(home)})
    p.stdout.close()  # the reader is gone before the first byte
    err = p.stderr.read().decode()
    assert p.wait(timeout=60) == 141 and err == ""


@pytest.mark.parametrize("value", ["5", "-0.1", "nan", "inf", "high"])
def test_a_confidence_out_of_range_is_refused_as_the_setting_refuses_it(tmp_path, value):
    """`facts list --min-confidence 5` (or nan) answered "(no facts)" where the setting refuses the same value."""
    run_cli("init", home=tmp_path)
    p = run_cli("facts", "list", "--min-confidence", value, home=tmp_path, check=False)
    assert p.returncode == 2 and "not a number from 0 to 1" in p.stderr and "no facts" not in p.stdout


@pytest.mark.parametrize("user", ["../bob", "/etc", ".hidden", "bo\x1bb"])
def test_a_user_id_that_names_no_users_folder_is_refused_by_every_command(tmp_path, user):
    """`facts list --user ../bob` answered "0 facts" where `memory show` refuses the name: one check for all."""
    run_cli("init", home=tmp_path)
    for argv in (["facts", "list"], ["query", "hello"], ["memory", "list"]):
        p = run_cli(*argv, "--user", user, home=tmp_path, check=False)
        assert p.returncode == 2 and "user id" in p.stderr and "0 facts" not in p.stdout, (argv, p.stderr)


def test_text_that_would_act_on_the_terminal_is_shown_escaped(tmp_path):
    """A knowledge title with an escape sequence or a right-to-left override reached the reviewer's terminal raw in
    `kb pending` / `kb list`; printed for a person it is escaped, and --json keeps it as it was written."""
    from agentos_mem.kernel.settings import load_settings
    from agentos_mem.knowledge.refine import refine
    from tests.kit.knowledge import item

    run_cli("init", home=tmp_path)
    title = "发布流程\u202egpj.exe\x1b[2J"
    item(tmp_path, "knowledge/clipping", "t.md", "# 发布流程\n\n发布前两人评审。\n", title=title, source="https://wiki.example/r")
    (doc,) = refine(load_settings(home=tmp_path, hostname="testhost", llm_base_url=None))["refined"]
    for argv in (["kb", "pending"], ["kb", "show", doc["doc_id"]]):
        out = run_cli(*argv, home=tmp_path).stdout
        assert "\u202e" not in out and "\x1b" not in out and "\\u202e" in out and "\\u001b" in out, out
    assert json.loads(run_cli("kb", "pending", "--json", home=tmp_path).stdout)[0]["title"] == title


def test_a_relative_workspace_folder_is_digested_indexed_and_queried(tmp_path, monkeypatch):
    """AGENTOS_HOME's default (agentos-home) is relative to where the command starts: `rebuild` failed on it, comparing
    a generation's absolute file paths with a relative folder. Every command resolves it where it starts."""
    from datetime import date

    from agentos_mem.digest.stages import digest_day
    from agentos_mem.kernel.settings import load_settings

    monkeypatch.chdir(tmp_path)
    run_cli("init", home="ws")
    settings = load_settings(home="ws", hostname="testhost", llm_base_url=None)
    assert settings.home == tmp_path / "ws"
    folder = settings.working_dir()
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "2026-11-20.md").write_text("- [09:00] user: 我们的服务器配置是 8C16G。\n", encoding="utf-8")
    digest_day(settings, settings.user, date(2026, 11, 20), folder)
    run_cli("rebuild", "--direct", home="ws")
    run_cli("rebuild", "--direct", "--full", home="ws")
    assert "8C16G" in run_cli("query", "服务器配置是什么", home="ws").stdout
