"""The test tiers (tests/kit/tiers.py, assigned by tests/conftest.py): one tier a test, declared in pyproject in the order
of cost, and the rules that keep the unit tier cheap see what a test uses through its fixtures and its helpers."""

from __future__ import annotations

import ast
import tomllib
from pathlib import Path

import pytest

from tests.kit.tiers import (HEAVY_FIXTURES, SERVICE_FIXTURES, TESTS, TIERS, Module, dearest, fixture_def,
                             heavy_reason, mechanical_tiers, module_at, names_in)

ROOT = TESTS.parent


def test_pyproject_declares_each_tier_with_its_meaning_in_the_order_of_cost():
    markers = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["pytest"]["ini_options"]["markers"]
    names = [m.split(":", 1)[0] for m in markers]
    assert names == list(TIERS)
    assert all(m.split(":", 1)[1].strip() for m in markers)


def test_every_selected_test_has_exactly_one_tier(request):
    counts = {item.nodeid: [t for t in TIERS if item.get_closest_marker(t)] for item in request.session.items}
    assert {k: v for k, v in counts.items() if len(v) != 1} == {}


def test_the_unit_tier_is_what_no_other_rule_claims():
    assert mechanical_tiers("kernel", "test_x.py", ["tmp_path"], None) == {"unit"}
    assert mechanical_tiers("kernel", "test_x.py", ["tmp_path"], "calls digest_day") == {"heavy"}
    assert mechanical_tiers("index", "test_x.py", ["chroma_server"], "calls rebuild") == {"service", "heavy"}
    assert mechanical_tiers("cli", "test_x.py", ["indexed_home"], "uses the fixture indexed_home") == {"cli", "heavy"}
    assert mechanical_tiers("query", "test_x.py", ["prefect_harness"], None) == {"prefect"}
    assert mechanical_tiers("flows", "test_serve.py", [], "uses subprocess") == {"e2e", "prefect", "heavy"}
    assert dearest({"cli", "heavy"}) == "cli" and dearest({"e2e", "prefect", "heavy"}) == "e2e"
    assert dearest({"bench", "e2e"}) == "bench" and dearest({"unit"}) == "unit"


SOURCE = '''
import subprocess
from tests.kit.digest import digested_workspace, log_workspace

def pure(x):
    return x + 1

def helper(tmp_path):
    return digested_workspace(tmp_path, "", None)

def test_pure():
    assert pure(1) == 2

def test_through_a_local_helper(tmp_path):
    helper(tmp_path)

def test_through_the_kit(tmp_path):
    log_workspace(tmp_path)

def test_import_inside(tmp_path):
    from agentos_mem.digest.stages import digest_day as d

def test_process():
    subprocess.run(["true"])

class TestGroup:
    def test_method(self, tmp_path):
        digested_workspace(tmp_path, "", None)
'''


def test_heavy_is_seen_through_local_helpers_the_kit_and_imports(tmp_path):
    path = tmp_path / "test_example.py"
    path.write_text(SOURCE, encoding="utf-8")
    m = Module(path)
    reasons = {name: heavy_reason(m, m.functions[name]) for name in m.functions if name.startswith("test_")}
    assert reasons == {
        "test_pure": None,
        "test_through_a_local_helper": "helper digested_workspace calls digest_day",
        "test_through_the_kit": None,  # a fresh workspace and a logs folder cost nothing
        "test_import_inside": "calls digest_day",
        "test_process": "uses subprocess",
    }
    method = next(n for n in m.functions["TestGroup"].body if n.name == "test_method")
    assert heavy_reason(m, method) == "digested_workspace calls digest_day"


def fixtures_of_the_suite():
    """(module, name, node) of every fixture in tests/conftest.py and tests/kit/."""
    for path in [TESTS / "conftest.py", *sorted((TESTS / "kit").glob("*.py"))]:
        m = module_at(path)
        for name, node in m.fixtures.items():
            yield m, name, node


@pytest.mark.parametrize("needs", ["prefect", "subprocess"])
def test_no_shared_fixture_that_runs_prefect_or_a_process_can_reach_the_unit_tier(needs):
    """A fixture whose body (or a helper it calls) imports Prefect or starts a process is claimed by a rule: by its name
    (prefect_harness, the service fixtures, HEAVY_FIXTURES) or by what it calls."""
    claimed = {"prefect_harness"} | SERVICE_FIXTURES | HEAVY_FIXTURES
    free = [name for m, name, node in fixtures_of_the_suite()
            if needs in names_in(node) and name not in claimed and heavy_reason(m, node) is None]
    assert not free, f"shared fixtures that {needs} and no tier rule claims: {free}"


def test_the_expensive_shared_fixtures_are_heavy():
    conftest = module_at(TESTS / "conftest.py")
    for name in ("indexed_template", "indexed_home", "demo_home"):
        assert heavy_reason(*fixture_def(name, conftest)), name
    for name in ("ws", "eval_dir", "kit_cache"):
        assert heavy_reason(*fixture_def(name, conftest)) is None, name


def test_an_explicit_tier_marker_names_a_tier_once():
    """Explicit markers may raise a tier; two on one test would leave it in two (the collection refuses that too)."""
    doubled = []
    for path in sorted(TESTS.rglob("test_*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                marks = [d.attr for d in node.decorator_list if isinstance(d, ast.Attribute) and d.attr in TIERS]
                if len(marks) > 1:
                    doubled.append(f"{path.relative_to(TESTS)}:{node.lineno} {node.name}: {marks}")
    assert not doubled, doubled
