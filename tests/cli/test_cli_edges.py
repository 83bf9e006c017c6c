"""Edges of the command line a user meets: counts of zero refused in one line (in process, through ``cli.main.main``),
a closed pipe ends quietly (the installed script in a subprocess: the exit status and the pipe are the process's)."""

from __future__ import annotations

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
