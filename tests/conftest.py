"""Shared test fixtures and the test tiers.

The folders under tests/ mirror the packages (tests/kernel/, tests/storage/, ... tests/flows/, tests/cli/), plus
tests/bench/ (the benchmarks), tests/contract/ (the project's static contracts) and tests/kit/ (shared helpers:
test modules import only from tests.kit and this file, never from each other).

``eval_dir``: the public evaluation data (``shared/eval`` next to the repository, or $AGENTOS_EVAL_DIR).
Tests that need it skip, saying why, when it is absent: the project must test without it.

Markers (registered in pyproject.toml, assigned below in ``pytest_collection_modifyitems``; an explicit
``@pytest.mark.<tier>`` on a test adds to these rules):

- ``bench``: every test in tests/bench/;
- ``service``: any test that uses the ``chroma_server`` fixture (a real ``chroma run`` subprocess) or the ``postgres``
  one (a real PostgreSQL server, tests/flows/test_workers_postgres.py);
- ``cli``: every test in tests/cli/ (the command line in process through ``cli.main.main``: tests.kit.cli.run_cli);
- ``prefect``: every test in tests/flows/, and any test that uses the ``prefect_harness`` fixture;
- ``e2e``: tests/flows/test_serve.py, tests/flows/test_deployment.py, tests/flows/test_workers_postgres.py, and the tests marked explicitly that run the
  installed ``agentos`` script as a subprocess (tests.kit.cli.agentos: the script itself, and commands that run a
  Prefect flow, since Prefect's settings and its ephemeral server are process-wide);
- ``unit``: every test that has none of the above, the fast tier (``python -m pytest -m unit``).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.kit.knowledge import kit_cache, ws  # noqa: F401 - fixtures for tests/knowledge, query, flows, cli

DEFAULT_EVAL_DIR = Path(__file__).resolve().parents[2] / "shared" / "eval"


def eval_path() -> Path:
    if os.environ.get("AGENTOS_EVAL_DIR"):
        return Path(os.environ["AGENTOS_EVAL_DIR"])
    for candidate in (DEFAULT_EVAL_DIR, Path("/work/shared/eval")):
        if candidate.is_dir():
            return candidate
    return DEFAULT_EVAL_DIR


# The workspace's clock for every test (and every process a test starts): the day after the demo logs end,
# so that "yesterday", "now" and the 180-day expiry of technical facts give the same answers on any date
# the suite runs. Tests about dates pin their own instants (tests/kernel/test_clock.py); the serve test pins the
# real time, because Prefect's scheduler runs on the real clock.
SUITE_NOW = "2026-11-30T10:00:00+08:00"


@pytest.fixture(autouse=True)
def _pinned_clock(monkeypatch):
    monkeypatch.setenv("AGENTOS_NOW", SUITE_NOW)


@pytest.fixture
def eval_dir() -> Path:
    path = eval_path()
    if not path.is_dir():
        pytest.skip(f"evaluation data not found at {path} (set AGENTOS_EVAL_DIR to the shared/eval folder)")
    return path


# -- shared fixtures for the digest ---------------------------------------------------------------------
import datetime as _dt  # noqa: E402

DEMO_END = _dt.date(2026, 11, 29)


@pytest.fixture
def demo_home(tmp_path, monkeypatch):
    """A fresh workspace with the demo logs (8+ days ending DEMO_END), selected through AGENTOS_HOME."""
    from demo import init_demo_workspace

    home = tmp_path / "home"
    init_demo_workspace(home, end_day=DEMO_END)
    monkeypatch.setenv("AGENTOS_HOME", str(home))
    monkeypatch.setenv("AGENTOS_HOSTNAME", "testhost")
    monkeypatch.delenv("AGENTOS_LLM_BASE_URL", raising=False)
    return home


@pytest.fixture(scope="session")
def prefect_harness(tmp_path_factory):
    """One temporary Prefect server for the whole session (starting one costs ~20 s)."""
    os.environ.setdefault("DO_NOT_TRACK", "1")
    os.environ.setdefault("PREFECT_SERVER_ANALYTICS_ENABLED", "false")
    os.environ.setdefault("PREFECT_LOGGING_TO_API_WHEN_MISSING_FLOW", "ignore")
    from prefect.testing.utilities import prefect_test_harness

    with prefect_test_harness(server_startup_timeout=180):
        yield


@pytest.fixture(scope="session")
def chroma_server(tmp_path_factory):
    """One real Chroma server for the session (``chroma run`` on a free loopback port); workspaces on it keep apart
    by their keys, as they would on a shared server."""
    from tests.kit.chroma_server import ChromaServer

    server = ChromaServer(tmp_path_factory.mktemp("chroma-server")).start()
    try:
        yield server
    finally:
        server.stop()


def snapshot(home: Path) -> dict:
    """Every byte and modification time under the stores a re-run must leave as they were."""
    import sqlite3

    out = {}
    for sub in ("agent-local/memory/cards", "agent-local/memory/daily_summaries", "agent-local/memory/raw",
                "agent-sync/04_memory/records"):
        for p in sorted((home / sub).rglob("*")):
            if p.is_file():
                out[str(p.relative_to(home))] = (p.read_bytes(), p.stat().st_mtime_ns)
    con = sqlite3.connect(home / "agent-local/memory/facts.db")
    for table in ("facts", "evidence", "conflicts", "digested"):
        out[table] = con.execute(f"select * from {table} order by rowid").fetchall()
    con.close()
    return out


# -- an indexed demo workspace (digested and rebuilt once per session, copied per test) --------------------


@pytest.fixture(scope="session")
def indexed_template(tmp_path_factory) -> Path:
    """The demo workspace after the nightly stages, run as plain functions (no Prefect): digest, rebuild."""
    from digest.stages import pending_days, run_day
    from index.stages import rebuild
    from kernel.settings import load_settings
    from demo import init_demo_workspace

    home = tmp_path_factory.mktemp("indexed") / "home"
    init_demo_workspace(home, end_day=DEMO_END)
    settings = load_settings(home=home, hostname="testhost", llm_base_url=None)
    folder = settings.working_dir()
    for day in pending_days(settings, settings.user, folder, DEMO_END):
        run_day(settings, settings.user, day, folder)
    rebuild(settings)
    return home


@pytest.fixture
def indexed_home(indexed_template, tmp_path, monkeypatch) -> Path:
    """A private copy of the indexed demo workspace, selected through AGENTOS_HOME."""
    import shutil

    home = tmp_path / "home"
    shutil.copytree(indexed_template, home, symlinks=True)
    monkeypatch.setenv("AGENTOS_HOME", str(home))
    monkeypatch.setenv("AGENTOS_HOSTNAME", "testhost")
    monkeypatch.delenv("AGENTOS_LLM_BASE_URL", raising=False)
    return home


# -- the test tiers ---------------------------------------------------------------------------------------------
TESTS = Path(__file__).resolve().parent
TIERS = ("unit", "cli", "prefect", "e2e", "bench", "service")
E2E_FILES = {("flows", "test_serve.py"), ("flows", "test_deployment.py"), ("flows", "test_workers_postgres.py")}


def tiers_of(folder: str, filename: str, fixturenames) -> set[str]:
    """The markers the layout gives a test in tests/<folder>/<filename> that uses ``fixturenames``."""
    out = set()
    if folder == "bench":
        out.add("bench")
    if folder == "cli":
        out.add("cli")
    if folder == "flows" or "prefect_harness" in fixturenames:
        out.add("prefect")
    if (folder, filename) in E2E_FILES:
        out.add("e2e")
    if "chroma_server" in fixturenames or "postgres" in fixturenames:
        out.add("service")
    return out


def pytest_collection_modifyitems(config, items):
    for item in items:
        path = Path(item.path).resolve()
        parts = path.relative_to(TESTS).parts if path.is_relative_to(TESTS) else ()
        folder = parts[0] if len(parts) > 1 else ""
        marks = tiers_of(folder, path.name, item.fixturenames)
        explicit = {t for t in TIERS if item.get_closest_marker(t)}
        if not marks and not explicit:
            marks = {"unit"}
        for name in sorted(marks - explicit):
            item.add_marker(name)
