"""``agentos bench data``: a public set fetched at its pinned commit with its sha256 checked, a changed file refused,
and the benchmarks reading an offline copy (``--data``) or ``$AGENTOS_EVAL_DIR`` instead of the fetched cache.

The upstream is a real HTTP server on loopback laid out as raw files ({base}/{owner}/{repo}/{commit}/{path}); the
set it serves is a fixture entry of the manifest (the real ones point at their upstreams, which the suite cannot
reach)."""

from __future__ import annotations

import hashlib
import json
import threading
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from agentos_mem.bench import data
from tests.kit.cli import run_cli

BODY = '[{"name": "中文标题", "input": "你好 World", "expected": "你好-world"}]\n'.encode()
FIXTURE = data.DataSet("fixture_set", "someone/fixtures", "0123456789abcdef0123456789abcdef01234567", "MIT",
                       "a fixture set served on loopback",
                       (data.File("test/fixtures.json", "fixtures.json", hashlib.sha256(BODY).hexdigest()),))


class _Quiet(SimpleHTTPRequestHandler):
    def log_message(self, *a):
        pass


@pytest.fixture
def upstream(tmp_path, monkeypatch):
    """(base URL, the served file) with the fixture set in the manifest."""
    root = tmp_path / "upstream"
    served = root / FIXTURE.repo / FIXTURE.commit / FIXTURE.files[0].upstream
    served.parent.mkdir(parents=True)
    served.write_bytes(BODY)
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), partial(_Quiet, directory=str(root)))
    threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
    monkeypatch.setitem(data.SETS, FIXTURE.name, FIXTURE)
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}", served
    finally:
        httpd.shutdown()
        httpd.server_close()


def test_a_set_is_fetched_at_its_pinned_commit_into_the_workspace_cache(upstream, tmp_path):
    base, _ = upstream
    home = tmp_path / "home"
    p = run_cli("bench", "data", "fetch", "fixture_set", "--from", base, "--json", home=home, AGENTOS_EVAL_DIR="")
    (row,) = json.loads(p.stdout)["sets"]
    folder = home / "agent-local" / "bench-data" / "fixture_set"
    assert row["fetched"] == 1 and Path(row["folder"]) == folder
    assert (folder / "fixtures.json").read_bytes() == BODY
    source = (folder / "SOURCE.md").read_text(encoding="utf-8")
    assert FIXTURE.commit in source and "MIT" in source and "someone/fixtures" in source
    (again,) = json.loads(run_cli("bench", "data", "fetch", "fixture_set", "--from", base, "--json", home=home,
                                  AGENTOS_EVAL_DIR="").stdout)["sets"]
    assert (again["fetched"], again["kept"]) == (0, 1)  # there with its checksum: kept, not fetched again
    listed = json.loads(run_cli("bench", "data", "list", "--json", home=home, AGENTOS_EVAL_DIR="").stdout)
    assert {r["name"]: r["present"] for r in listed["sets"]}["fixture_set"] is True


def test_a_file_whose_checksum_differs_is_refused_and_nothing_is_kept(upstream, tmp_path):
    base, served = upstream
    served.write_bytes(BODY.replace("你好".encode(), "您好".encode()))
    dest = tmp_path / "data"
    p = run_cli("bench", "data", "fetch", "fixture_set", "--from", base, "--to", dest, home=tmp_path / "home", check=False)
    assert p.returncode != 0
    assert "fixture_set/fixtures.json" in p.stderr and "sha256" in p.stderr and FIXTURE.files[0].sha256 in p.stderr
    assert [f.name for f in (dest / "fixture_set").iterdir()] == []  # neither the file nor its partial download


def test_an_unknown_set_names_the_sets_there_are(tmp_path):
    p = run_cli("bench", "data", "fetch", "no_such_set", home=tmp_path / "home", check=False)
    assert p.returncode != 0 and "no such data set: no_such_set" in p.stderr and "github_slugger" in p.stderr


def test_the_benchmarks_read_an_offline_copy_or_the_evaluation_folder(tmp_path, monkeypatch):
    """--data first, then $AGENTOS_EVAL_DIR, then the cache; a set that is nowhere is one line saying how to get it."""
    offline, ev = tmp_path / "offline", tmp_path / "eval"
    monkeypatch.setenv("AGENTOS_EVAL_DIR", str(ev))
    assert data.data_root(offline) == offline and data.data_root() == ev
    monkeypatch.delenv("AGENTOS_EVAL_DIR")
    assert data.data_root(home=tmp_path / "home") == tmp_path / "home" / "agent-local" / "bench-data"
    p = run_cli("bench", "locomo", "--data", offline, home=tmp_path / "home", check=False)
    assert p.returncode != 0 and str(offline / "locomo" / "locomo.json") in p.stderr and "--data DIR" in p.stderr
    p = run_cli("bench", "data", "list", "--data", offline, "--json", home=tmp_path / "home")
    assert json.loads(p.stdout)["root"] == str(offline)
