"""Settings as a user meets them on the command line (in process through ``cli.main.main``): a value out of range
stops the command in one line naming the variable, its value and the allowed range (exit 2) before anything is
read or written; an unknown AGENTOS_* variable is named on stderr with the nearest known one, and the command runs."""

from __future__ import annotations

import pytest

from tests.kit.bad_inputs import BAD_SETTINGS, UNKNOWN_SETTINGS
from tests.kit.cli import run_cli


@pytest.fixture(scope="module")
def home(tmp_path_factory):
    home = tmp_path_factory.mktemp("settings") / "ws"
    run_cli("init", home=home)
    return home


@pytest.mark.parametrize(("variable", "value", "allowed"), BAD_SETTINGS)
def test_a_bad_value_stops_the_command_naming_it(home, variable, value, allowed):
    for argv in (["facts", "list"], ["query", "数据库端口"], ["config"]):
        out = run_cli(*argv, home=home, check=False, **{variable: value})
        assert out.returncode == 2, (argv, out.stderr)
        assert f"{variable}={value}" in out.stderr and allowed in out.stderr, out.stderr
        assert "Traceback" not in out.stderr and out.stdout == ""


def test_max_log_bytes_minus_one_no_longer_quarantines_every_log(home):
    """``AGENTOS_MAX_LOG_BYTES=-1 agentos nightly`` once quarantined every log and exited 0: now nothing runs."""
    logs = home / "agent-sync/04_memory/working/default"
    logs.mkdir(parents=True, exist_ok=True)
    (logs / "2026-03-10.md").write_text("[09:00] 用户: 数据库端口是 5432。\n", encoding="utf-8")
    out = run_cli("nightly", home=home, check=False, AGENTOS_MAX_LOG_BYTES="-1")
    assert out.returncode == 2 and "AGENTOS_MAX_LOG_BYTES=-1" in out.stderr, out.stderr
    from agentos_mem.kernel.workspace import Workspace

    assert not (Workspace(home).logs / "quarantine.jsonl").exists()


@pytest.mark.parametrize(("variable", "near"), UNKNOWN_SETTINGS)
def test_an_unknown_variable_is_named_with_the_nearest_known_one_and_the_command_runs(home, variable, near):
    out = run_cli("config", "--json", home=home, **{variable: "1"})
    warning = [line for line in out.stderr.splitlines() if variable in line]
    assert len(warning) == 1 and "not a setting" in warning[0], out.stderr
    assert (near in warning[0]) if near else ("did you mean" not in warning[0])
    assert '"max_log_bytes"' in out.stdout


def test_the_variables_the_tools_set_are_not_warned_about(home):
    out = run_cli("config", home=home, AGENTOS_NOW="2026-03-10T10:00:00+08:00", AGENTOS_HOSTNAME="h", AGENTOS_USER="default")
    assert "warning" not in out.stderr, out.stderr
