"""The project as a user installs it: one wheel, one import name, and `agentos demo` running from it.

The wheel is built from a copy of the project's files (nothing is written into the clone), installed into a fresh
virtual environment that sees the dependencies of the project's own .venv (a path file: no download, no second copy
of torch), and run from a folder outside the clone, so nothing can be imported from the source tree.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
# What the wheel is built from: pyproject.toml's package folders (agentos_mem/ and the design map's folders mapped
# into it) and the files it names.
SOURCES = ("pyproject.toml", "README.md", "agentos_mem", "flows", "tasks", "storage", "deployments", "bench")
PACKAGE = "agentos_mem"


def _copy_sources(dest: Path) -> None:
    for name in SOURCES:
        src = ROOT / name
        if src.is_dir():
            shutil.copytree(src, dest / name, ignore=shutil.ignore_patterns("__pycache__", "*.pyc", "results", "out"))
        else:
            shutil.copy2(src, dest / name)


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    """(the fresh venv's python, its site-packages, the wheel's file names)."""
    tmp = tmp_path_factory.mktemp("wheel")
    src = tmp / "src"
    src.mkdir()
    _copy_sources(src)
    dist = tmp / "dist"
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--disable-pip-version-check", "-q", "--no-deps",
                    "--no-build-isolation", "-w", str(dist), str(src)], check=True, capture_output=True, text=True)
    (wheel,) = dist.glob("*.whl")
    venv = tmp / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    python = venv / "bin" / "python"
    site = Path(subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                               check=True, capture_output=True, text=True).stdout.strip())
    before = set(os.listdir(site))
    subprocess.run([sys.executable, "-m", "pip", "--python", str(python), "install", "--disable-pip-version-check", "-q",
                    "--no-deps", "--no-index", str(wheel)], check=True, capture_output=True, text=True)
    added = set(os.listdir(site)) - before
    # the dependencies: the project's .venv, by path (its own editable install is a finder a path file would have to
    # run; a plain path entry does not run it, so agentos_mem comes from the wheel alone)
    (site / "zz_project_dependencies.pth").write_text(sysconfig.get_paths()["purelib"] + "\n", encoding="utf-8")
    return python, venv, added


def test_the_wheel_installs_one_import_name(installed):
    python, venv, added = installed
    assert {n for n in added if not n.endswith(".dist-info")} == {PACKAGE}, sorted(added)
    info = [n for n in added if n.endswith(".dist-info")]
    assert len(info) == 1 and info[0].startswith("agentos_mem-")
    assert (venv / "bin" / "agentos").is_file()
    out = subprocess.run([str(python), "-c", "import json, agentos_mem.query.ask as a, agentos_mem.flows.daily as d; "
                          "print(json.dumps([a.__file__, d.__file__]))"], check=True, capture_output=True, text=True,
                         cwd=venv).stdout
    assert all(str(venv) in f for f in json.loads(out)), out  # from the wheel, not from the clone


def test_prefect_yaml_entrypoints_load_from_the_wheel(installed):
    """The deployments' entrypoints are module paths (agentos_mem.flows.daily:daily_digest): a worker on a host with
    the wheel installed and no clone loads every flow."""
    python, venv, _ = installed
    code = ("import json, yaml, importlib.resources as r; from prefect.flows import load_flow_from_entrypoint; "
            "spec = yaml.safe_load((r.files('agentos_mem.deployments') / 'prefect.yaml').read_text()); "
            "print(json.dumps({d['name']: load_flow_from_entrypoint(d['entrypoint']).name for d in spec['deployments']}))")
    env = {**os.environ, "PREFECT_HOME": str(venv / "prefect-home")}
    out = subprocess.run([str(python), "-c", code], check=True, capture_output=True, text=True, cwd=venv, env=env).stdout
    flows = json.loads(out.strip().splitlines()[-1])
    assert {"daily-digest", "backfill", "nightly", "index-rebuild", "review"} <= set(flows), flows


@pytest.mark.e2e  # the installed script as a subprocess: the whole demo (digest, index, Prefect's ephemeral server)
def test_agentos_demo_runs_from_the_installed_wheel(installed, tmp_path):
    python, venv, _ = installed
    env = {k: v for k, v in os.environ.items() if not k.startswith(("AGENTOS_", "PREFECT_"))}
    env.update(AGENTOS_HOME=str(tmp_path / "home"), PREFECT_HOME=str(tmp_path / "prefect"))
    r = subprocess.run([str(venv / "bin" / "agentos"), "demo"], capture_output=True, text=True, cwd=tmp_path, env=env,
                       timeout=900)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    assert "$ agentos query" in r.stdout and "$ agentos kb list" in r.stdout
