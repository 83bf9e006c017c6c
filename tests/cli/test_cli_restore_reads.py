"""While a restore makes the stores again, reads say so instead of serving the partial store (issue 25, item 6): on the
command line (in process), over MCP (the official client over stdio) and through the Python API; after a restore
that was killed part way, they say it did not finish and name the command that finishes it."""

from __future__ import annotations

import os
import signal
import subprocess

import pytest

from agentos_mem.kernel.settings import load_settings
from agentos_mem.kernel.workspace import Workspace
from agentos_mem.storage.guards import RESTORE_MARKER, RestoreInProgress
from tests.kit.cli import AGENTOS, run_cli

QUESTION = "服务器现在是什么配置？"
READS = (["facts", "list"], ["facts", "history", "服务器配置"], ["facts", "conflicts"], ["query", QUESTION, "--in-process"],
         ["query", QUESTION], ["kb", "search", "部署"], ["memory", "list"], ["nightly"])


def _mcp_reads(home, tmp_path):
    pytest.importorskip("mcp")
    from tests.kit.mcp import error_text, session

    async def script(c):
        return {"query": await c.call_tool("memory_query", {"text": QUESTION}),
                "lookup": await c.call_tool("fact_lookup", {"subject": "服务器配置"})}

    out, stray = session(home, tmp_path / "server-stderr.txt", script)
    assert stray == []
    return {name: error_text(result) for name, result in out.items()}


def test_reads_during_a_restore_say_a_restore_is_in_progress(indexed_home, tmp_path):
    from agentos_mem.query.ask import ask
    from agentos_mem.restore.run import restore

    home = indexed_home
    before = run_cli("facts", "list", home=home).stdout
    seen: dict = {}

    def log(message):  # called by the restore part way: the stores are aside, the new ones half made
        if seen:
            return
        for argv in READS:
            seen[" ".join(argv)] = run_cli(*argv, home=home, check=False)
        seen["mcp"] = _mcp_reads(home, tmp_path)
        try:
            ask(QUESTION, settings=load_settings(home=home))
        except RestoreInProgress as e:
            seen["api"] = str(e)

    restore(load_settings(home=home), force=True, log=log)

    for argv in READS:
        out = seen[" ".join(argv)]
        assert out.returncode == 1 and "a restore is in progress" in out.stderr, (argv, out.stdout, out.stderr)
        assert out.stdout == "", argv  # nothing of the partial store
    assert all("a restore is in progress" in text for text in seen["mcp"].values()), seen["mcp"]
    assert "a restore is in progress" in seen["api"]
    # once it has finished, everything reads as before
    assert run_cli("facts", "list", home=home).stdout == before
    assert not (Workspace(home).runtime / RESTORE_MARKER).exists()


def test_after_a_killed_restore_reads_say_it_did_not_finish_until_it_is_run_again(indexed_home):
    home = indexed_home
    before = run_cli("facts", "list", home=home).stdout
    marker = Workspace(home).runtime / RESTORE_MARKER
    p = subprocess.Popen(AGENTOS + ["restore", "--force"], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
                         env={**os.environ, "AGENTOS_HOME": str(home)})
    try:
        line = p.stdout.readline()  # its first progress line: the marker is held, the stores are aside
        assert line.startswith("restore:"), line
        assert marker.exists()
        os.kill(p.pid, signal.SIGKILL)  # an OOM kill, a power cut
    finally:
        p.wait()
    out = run_cli("facts", "list", home=home, check=False)
    assert out.returncode == 1 and "a restore did not finish" in out.stderr and "agentos restore --force" in out.stderr, out.stderr
    assert out.stdout == ""
    run_cli("restore", "--force", home=home)
    assert run_cli("facts", "list", home=home).stdout == before


def test_a_second_restore_while_one_runs_is_refused(indexed_home):
    from agentos_mem.restore.run import restore

    home = indexed_home
    seen = []

    def log(message):
        if not seen:
            seen.append(run_cli("restore", "--force", home=home, check=False))

    restore(load_settings(home=home), force=True, log=log)
    (second,) = seen
    assert second.returncode == 2 and "a restore is in progress" in second.stderr, second.stderr
