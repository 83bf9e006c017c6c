"""The digest commands' one-line errors (issue 14, item 7) and SIGTERM: in process, through ``cli.main.main``."""

import os
import signal

import pytest

from agentos_mem.cli.main import main


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_backfill_with_the_range_reversed_is_one_line(ws, capsys):
    code, out, err = run(capsys, "backfill", "--from", "2026-11-30", "--to", "2026-11-01")
    assert (code, out, err) == (2, "", "agentos: error: --to 2026-11-01 is before --from 2026-11-30\n")


@pytest.mark.parametrize("command", [["digest"], ["backfill", "--from", "2026-11-01", "--to", "2026-11-02"], ["nightly"]])
def test_a_logs_folder_that_is_not_there_is_an_error_not_an_empty_day(ws, tmp_path, capsys, command):
    code, out, err = run(capsys, *command, "--logs", str(tmp_path / "nonexistent"))
    assert (code, out) == (2, "") and err == f"agentos: error: logs folder {tmp_path / 'nonexistent'} (--logs) does not exist\n"
    (tmp_path / "a-file").write_text("x")
    code, out, err = run(capsys, *command, "--logs", str(tmp_path / "a-file"))
    assert code == 2 and err.endswith("(--logs) is not a folder\n")


def test_sigterm_stops_a_command_with_one_line(ws, capsys, monkeypatch):
    import agentos_mem.cli.stages
    from agentos_mem import cli
    def stage(args):  # a stage that runs until it is stopped
        os.kill(os.getpid(), signal.SIGTERM)
        while True:
            pass

    monkeypatch.setattr(cli.stages, "cmd_doctor", stage)
    before = signal.getsignal(signal.SIGTERM)
    code, out, err = run(capsys, "doctor")
    assert code == 143 and err.startswith("agentos: stopped (SIGTERM)") and "Traceback" not in err
    assert signal.getsignal(signal.SIGTERM) == before  # the handler is main's only while a command runs


def test_prefects_termination_signal_is_reported_the_same_way(ws, capsys, monkeypatch):
    from prefect.exceptions import TerminationSignal

    import agentos_mem.cli.stages

    from agentos_mem import cli
    def stage(args):  # inside a flow, Prefect's own SIGTERM handler raises this
        raise TerminationSignal(signal.SIGTERM)

    monkeypatch.setattr(cli.stages, "cmd_doctor", stage)
    code, out, err = run(capsys, "doctor")
    assert code == 143 and err.startswith("agentos: stopped (SIGTERM)")
