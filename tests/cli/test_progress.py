"""Long commands show their progress to a person at a terminal, and to nobody else: the stages and their counts
on a terminal's stderr; not one progress byte when stderr is piped, under ``--quiet`` or with ``--json`` (whose
JSON stays exactly what it was)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess

import pytest

from tests.kit.cli import AGENTOS
from tests.kit.terminal import plain, run_on_terminal

pytestmark = pytest.mark.e2e  # the installed script in a subprocess, its stderr a pseudo-terminal

BAR = "━".encode()  # the bar rich draws; the Prefect log lines that go beside it have none


def _env(home, prefect_api: str | None = None) -> dict[str, str]:
    """The command's environment; ``prefect_api``: the running Prefect server its flow runs on."""
    env = {**os.environ, "AGENTOS_HOME": str(home), "AGENTOS_HOSTNAME": "testhost", "DO_NOT_TRACK": "1",
           "PREFECT_SERVER_ANALYTICS_ENABLED": "false"}
    env.pop("AGENTOS_LLM_BASE_URL", None)
    if prefect_api:
        env["PREFECT_API_URL"] = prefect_api
    return env


def _piped(argv, env) -> subprocess.CompletedProcess:
    return subprocess.run(argv, capture_output=True, env=env, timeout=900, stdin=subprocess.DEVNULL)


def _no_progress_bytes(stderr: bytes) -> None:
    assert b"\r" not in stderr and b"\x1b" not in stderr and BAR not in stderr, stderr[-2000:]


@pytest.fixture
def unindexed_home(indexed_template, tmp_path):
    """The digested demo workspace with its indexes and vector cache removed: a rebuild does every stage again."""
    home = tmp_path / "home"
    shutil.copytree(indexed_template, home, symlinks=True)
    shutil.rmtree(home / "agent-local" / "vector_db")
    return home


def test_a_rebuild_at_a_terminal_shows_each_stage_and_its_final_count(unindexed_home, tmp_path):
    copy = tmp_path / "copy"
    shutil.copytree(unindexed_home, copy, symlinks=True)
    code, out, term = run_on_terminal([*AGENTOS, "rebuild", "--direct"], _env(unindexed_home))
    assert code == 0, plain(term)[-3000:]
    shown = plain(term)
    assert out.decode().startswith("indexes: rebuilt"), out  # the summary stays on stdout, without progress
    assert BAR in term and "\x1b".encode() in term  # drawn as a bar, on the terminal only
    piped = _piped([*AGENTOS, "rebuild", "--direct", "--json"], _env(copy))
    units = json.loads(piped.stdout)["units"]
    assert units > 10
    for name in ("reading cards", "tokenizing", "embedding", "writing the index"):
        assert name in shown, shown[-3000:]
    assert f"{units}/{units}" in shown, shown[-3000:]  # every unit read, embedded and written
    assert "left" in shown  # the time left
    assert BAR not in out and b"\x1b" not in out


def test_a_rebuild_piped_quiet_or_json_writes_no_progress_and_the_same_json(unindexed_home, tmp_path):
    homes = [tmp_path / f"h{i}" for i in range(3)]
    for h in homes:
        shutil.copytree(unindexed_home, h, symlinks=True)
    piped = _piped([*AGENTOS, "rebuild", "--direct"], _env(homes[0]))
    assert piped.returncode == 0, piped.stderr[-2000:]
    _no_progress_bytes(piped.stderr)
    code, out, term = run_on_terminal([*AGENTOS, "rebuild", "--direct", "--quiet"], _env(homes[1]))
    assert code == 0 and BAR not in term and b"\r" not in term, plain(term)[-2000:]
    code, on_terminal, term = run_on_terminal([*AGENTOS, "rebuild", "--direct", "--json"], _env(homes[2]))
    assert code == 0 and BAR not in term and b"\r" not in term, plain(term)[-2000:]
    again = _piped([*AGENTOS, "rebuild", "--direct", "--json"], _env(unindexed_home))
    _no_progress_bytes(again.stderr)
    volatile = ("seconds", "generation")  # the time it took and the generation's time-stamped name
    a, b = json.loads(on_terminal), json.loads(again.stdout)
    assert {k: v for k, v in a.items() if k not in volatile} == {k: v for k, v in b.items() if k not in volatile}
    assert on_terminal.decode().startswith("{\n") and on_terminal.endswith(b"}\n")  # one JSON document, nothing else


def test_a_backfill_at_a_terminal_counts_its_days_and_its_json_is_unchanged(demo_home, tmp_path, prefect_server):
    copy, other = tmp_path / "copy", tmp_path / "other"
    shutil.copytree(demo_home, copy, symlinks=True)
    shutil.copytree(demo_home, other, symlinks=True)
    days = ["--from", "2026-11-22", "--to", "2026-11-24"]
    code, out, term = run_on_terminal([*AGENTOS, "backfill", *days], _env(demo_home, prefect_server))
    assert code == 0, plain(term)[-3000:]
    shown = plain(term)
    assert BAR in term and "digesting days" in shown and "3/3" in shown, shown[-3000:]
    assert "3 day(s) digested" in out.decode(), out

    piped = _piped([*AGENTOS, "backfill", *days, "--json"], _env(copy, prefect_server))
    assert piped.returncode == 0, piped.stderr[-2000:]
    _no_progress_bytes(piped.stderr)
    code, on_terminal, term = run_on_terminal([*AGENTOS, "backfill", *days, "--json"], _env(other, prefect_server))
    assert code == 0 and BAR not in term and b"\r\x1b[2K" not in term, plain(term)[-2000:]
    assert on_terminal == piped.stdout  # byte for byte: the same days give the same JSON, terminal or not
    assert json.loads(on_terminal)["days"] == ["2026-11-22", "2026-11-23", "2026-11-24"]
