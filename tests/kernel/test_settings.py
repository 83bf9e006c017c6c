"""Settings through the Python API (``kernel.settings.load_settings``): every numeric setting has a range, a value
outside it is refused by name, and every AGENTOS_* name the project reads is known (so only a real typo warns)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from agentos_mem.kernel.settings import Settings, SettingsError, known_variables, load_settings, unknown_variables
from tests.kit.bad_inputs import BAD_SETTINGS, UNKNOWN_SETTINGS

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize(("variable", "value", "allowed"), BAD_SETTINGS)
def test_a_value_out_of_range_is_refused_naming_the_variable_the_value_and_the_range(variable, value, allowed, monkeypatch, tmp_path):
    monkeypatch.setenv("AGENTOS_HOME", str(tmp_path))
    monkeypatch.setenv(variable, value)
    with pytest.raises(SettingsError) as e:
        load_settings()
    assert f"{variable}={value}" in str(e.value) and allowed in str(e.value), str(e.value)


def test_the_defaults_and_the_edges_of_each_range_are_accepted(monkeypatch, tmp_path):
    monkeypatch.setenv("AGENTOS_HOME", str(tmp_path))
    load_settings()
    for variable, value in (("AGENTOS_MIN_CONFIDENCE", "0"), ("AGENTOS_MIN_CONFIDENCE", "1"), ("AGENTOS_MAX_LOG_BYTES", "1"),
                            ("AGENTOS_EXPIRY_DAYS", '{"technical": null, "event": 1}'), ("AGENTOS_PREFECT_PORT", "65535")):
        monkeypatch.setenv(variable, value)
        load_settings()


def test_every_numeric_setting_has_a_range():
    """A number without bounds is how ``RAW_MAX_LINES=-5`` got in: a new numeric setting must declare its range."""
    unbounded = [name for name, f in Settings.model_fields.items() if f.annotation in (int, float)
                 and not any(getattr(m, a, None) is not None for m in f.metadata for a in ("ge", "gt", "le", "lt"))]
    assert unbounded == []


@pytest.mark.parametrize(("variable", "near"), UNKNOWN_SETTINGS)
def test_an_unknown_variable_is_named_with_the_nearest_known_one(variable, near):
    (line,) = unknown_variables({variable: "1", "AGENTOS_HOME": "/x", "AGENTOS_NOW": "2026-01-01T00:00:00+08:00"})
    assert line.startswith(f"{variable} is not a setting")
    assert (f"did you mean {near}?" in line) if near else ("did you mean" not in line)


def test_every_agentos_variable_the_code_and_the_docs_name_is_known():
    """Tools and tests set AGENTOS_NOW, AGENTOS_CONFIG, AGENTOS_EVAL_DIR...: none of them may be warned about."""
    names = set()
    files = [p for p in ROOT.rglob("*") if p.suffix in (".py", ".md", ".yaml", ".sh", ".toml") or p.name == "Makefile"]
    for p in files:
        if ".venv" in p.parts or p.name == "bad_inputs.py" or not p.is_file():
            continue
        names |= set(re.findall(r"\bAGENTOS_[A-Z][A-Z0-9_]*[A-Z0-9]\b", p.read_text(encoding="utf-8", errors="replace")))
    assert len(names) > 20
    assert sorted(names - known_variables()) == []
