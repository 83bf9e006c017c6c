"""tasks.stops: a run being stopped is never a stage that failed. When SIGTERM reaches the model's extraction task while
it is starting, Prefect raises an error of its own ("Task run is not set") with the signal only as that error's
context; the digest, whose rules carry a day when the model's task fails, must stop instead of carrying on."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from datetime import date

import pytest
from prefect.exceptions import TerminationSignal

from agentos_mem.digest.stages import DayInput, extract
from agentos_mem.kernel.settings import load_settings
from agentos_mem.tasks.stops import stops_through


def _stopped_while_starting(*_args):
    try:
        raise TerminationSignal(signal=signal.SIGTERM)
    except TerminationSignal:
        raise ValueError("Task run is not set")  # Prefect's crash handling failing, the signal kept as its context


def _model_down(*_args):
    raise ConnectionError("the model's server is down")


def test_a_stop_while_the_model_task_starts_stops_the_day_and_the_rules_do_not_carry_it(tmp_path):
    settings = load_settings(home=tmp_path, llm_base_url="http://127.0.0.1:9/v1")
    inp = DayInput(user="default", day=date(2026, 11, 22), folder=str(tmp_path))
    by_rules = []
    with pytest.raises(TerminationSignal):
        extract(settings, inp, stops_through(_stopped_while_starting), lambda i: by_rules.append(i) or [])
    assert by_rules == []


def test_a_model_that_fails_is_still_carried_by_the_rules(tmp_path):
    settings = load_settings(home=tmp_path, llm_base_url="http://127.0.0.1:9/v1")
    inp = DayInput(user="default", day=date(2026, 11, 22), folder=str(tmp_path))
    cands, extractor = extract(settings, inp, stops_through(_model_down), lambda i: [])
    assert (cands, extractor) == ([], "rules (model failed)")


_PREFECT_LOGS_A_STOP = r"""
import logging, signal, sys
import prefect  # its logging is configured here: the console handler the user's terminal sees
from prefect.exceptions import TerminationSignal
from agentos_mem.tasks.stops import quiet_stops

quiet_stops()
quiet_stops()  # twice, as a second stage command in one process would: one filter still
# what Prefect's run loggers add to each record (their console format names the run)
names = {"flow_run_name": "night", "flow_run_id": None, "flow_name": "nightly", "task_run_name": "extract-0",
         "task_run_id": None, "task_name": "extract"}
tasks = logging.LoggerAdapter(logging.getLogger("prefect.task_runs"), names)
flows = logging.LoggerAdapter(logging.getLogger("prefect.flow_runs"), names)
try:
    try:
        raise TerminationSignal(signal=signal.SIGTERM)
    except TerminationSignal:
        raise ValueError("Task run is not set")
except ValueError as e:  # Prefect's task engine failing on the signal, logged the way it logs a failed task
    tasks.error("Task run failed with exception: %r", e, exc_info=True)
try:
    raise TerminationSignal(signal=signal.SIGTERM)
except TerminationSignal:
    flows.error("Crash detected! Execution was aborted by a termination signal.", exc_info=True)
try:
    raise KeyError("sources.yaml")
except KeyError:
    flows.exception("Encountered exception during execution: %r", "KeyError")
"""


def test_prefect_says_a_stop_in_one_line_without_a_traceback_and_a_real_failure_keeps_its_own():
    """SIGTERM landing while Prefect creates a task run: Prefect's engine fails on it with an error of its own and logs
    that with a traceback. On the run's stderr the stop is one line, Prefect's error about it is not there, and a real
    failure logged beside it still shows its traceback (the details a user needs)."""
    env = {**os.environ, "PREFECT_LOGGING_TO_API_WHEN_MISSING_FLOW": "ignore"}
    run = subprocess.run([sys.executable, "-c", _PREFECT_LOGS_A_STOP], capture_output=True, text=True, timeout=300,
                         env=env)
    assert run.returncode == 0, run.stderr[-3000:]
    err = run.stderr
    assert "Task run is not set" not in err
    assert "Crash detected! Execution was aborted by a termination signal." in err
    assert "TerminationSignal" not in err  # the stop's traceback is not printed
    assert err.count("Traceback") == 1 and "KeyError: 'sources.yaml'" in err
