"""tasks.stops: a run being stopped is never a stage that failed. When SIGTERM reaches the model's extraction task while
it is starting, Prefect raises an error of its own ("Task run is not set") with the signal only as that error's
context; the digest, whose rules carry a day when the model's task fails, must stop instead of carrying on."""

from __future__ import annotations

import signal
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
