"""The ``agentos`` command line as a user runs it: in process through ``cli.main.main`` (``run_cli``); the
installed script as a subprocess (``agentos``) where a command runs a Prefect flow, and in the ``e2e`` tests."""

import json
import os
import subprocess
import sys
from datetime import date

import pytest

from agentos_mem.digest.stages import digest_day
from agentos_mem.digest.logformat import list_days
from agentos_mem.kernel.settings import load_settings
from tests.kit.cli import agentos, run_cli


@pytest.fixture
def digested(demo_home):
    """The demo workspace with every day digested through the plain stage functions."""
    s = load_settings()
    for d in list_days(s.working_dir()):
        digest_day(s, s.user, d, s.working_dir())
    return demo_home


def test_init_creates_the_workspace_tree(tmp_path):
    home = tmp_path / "ws"
    run_cli("init", home=home)
    for rel in ["agent-sync/01_core/SOUL.md", "agent-sync/01_core/IDENTITY.md", "agent-sync/01_core/USER.md",
                "agent-sync/03_knowledge/00_stream/inbox/knowledge/clipping", "agent-sync/03_knowledge/00_stream/inbox/personal",
                "agent-sync/03_knowledge/10_concepts/ai", "agent-sync/03_knowledge/99_system", "agent-local/memory", "agent-local/knowledge", "agent-sync/04_memory/journal",
                "agent-local/logs", "agent-local/memory/raw", "agent-local/vector_db", "agent-local/runtime"]:
        assert (home / rel).exists(), rel
    soul = home / "agent-sync/01_core/SOUL.md"
    soul.write_text("my own constraints", encoding="utf-8")
    run_cli("init", "--demo", home=home)
    assert soul.read_text(encoding="utf-8") == "my own constraints"  # never overwritten
    assert len(list((home / "agent-sync/04_memory/working/default").glob("*.md"))) >= 8


def test_facts_list_and_as_of(digested):
    now = json.loads(run_cli("facts", "list", "--json", home=digested).stdout)
    values = {(f["subject"], f["object"]) for f in now["facts"] if f["predicate"] == "value"}
    assert ("服务器配置", "8C16G") in values and ("服务器配置", "4C8G") not in values
    early = json.loads(run_cli("facts", "list", "--as-of", "2026-11-23", "--json", home=digested).stdout)
    assert ("服务器配置", "4C8G") in {(f["subject"], f["object"]) for f in early["facts"]}
    text = run_cli("facts", "list", home=digested).stdout
    assert "服务器配置 · value · 8C16G" in text


def test_facts_history_shows_every_version(digested):
    out = json.loads(run_cli("facts", "history", "服务器配置", "--json", home=digested).stdout)
    objs = [v["object"] for v in out["versions"] if v["predicate"] == "value"]
    assert objs[:2] == ["4C8G", "8C16G"]
    old, new = out["versions"][0], out["versions"][1]
    assert old["superseded_by"] == new["id"] and new["previous_version"] == old["id"]


def test_conflicts_review_and_raw_read(digested):
    out = json.loads(run_cli("facts", "conflicts", "--json", home=digested).stdout)
    (java,) = [c for c in out["conflicts"] if c["candidate_object"] == "Java"]
    assert java["candidate_explicitness"] == "inferred" and java["existing_predicate"] == "prefers_not"
    assert "rejected" in run_cli("facts", "resolve", str(java["id"]), "--reject", home=digested).stdout
    again = run_cli("facts", "resolve", str(java["id"]), "--accept", home=digested, check=False)
    assert again.returncode != 0 and "already rejected" in again.stderr
    assert json.loads(run_cli("facts", "conflicts", "--json", home=digested).stdout)["conflicts"] == []
    fact = json.loads(run_cli("facts", "history", "服务器配置", "--json", home=digested).stdout)["versions"][0]
    raw = json.loads(run_cli("raw", fact["raw_ref"], "--lines", f"{fact['line_start']}-{fact['line_end']}", "--json", home=digested).stdout)
    assert "4C8G" in "\n".join(raw["text"])


def test_read_commands_do_not_import_prefect(digested):
    code = ("import sys; from agentos_mem.cli.main import main; main(['facts', 'list', '--json']); main(['facts', 'history', '服务器配置']); "
            "print('PREFECT_LOADED' if 'prefect' in sys.modules else 'NO_PREFECT', file=sys.stderr)")
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env={**os.environ, "AGENTOS_HOME": str(digested)})
    assert "NO_PREFECT" in p.stderr and "8C16G" in p.stdout


@pytest.mark.e2e  # the installed script's exit codes and its one-line errors
def test_errors_are_one_line_and_non_zero(tmp_path):
    p = agentos("facts", "list", home=tmp_path / "nowhere", check=False)
    assert p.returncode != 0 and p.stderr.strip().count("\n") == 0 and "agentos init" in p.stderr
    p = agentos("backfill", "--from", "2026-11-05", "--to", "yesterday", home=tmp_path, check=False)
    assert p.returncode != 0 and "not a date" in p.stderr


@pytest.mark.e2e  # the installed entry point itself
def test_the_installed_script_prints_its_help(tmp_path):
    p = agentos("--help", home=tmp_path)
    assert p.returncode == 0 and p.stdout.startswith("usage: agentos") and p.stderr == ""
    assert all(name in p.stdout for name in ("init", "query", "memory", "kb", "serve"))


def test_config_lists_described_settings(tmp_path):
    out = run_cli("config", home=tmp_path, AGENTOS_TIMEZONE="Europe/Berlin").stdout
    assert "AGENTOS_TIMEZONE" in out and "Europe/Berlin" in out and "time zone" in out
    (tmp_path / "agentos.toml").write_text('user = "alice"\n', encoding="utf-8")
    assert json.loads(run_cli("config", "--json", home=tmp_path).stdout)["user"] == "alice"
    shown = run_cli("config", home=tmp_path, AGENTOS_LLM_API_KEY="sk-secret").stdout
    assert "sk-secret" not in shown and "***" in shown


@pytest.mark.e2e  # `agentos digest` runs the daily flow, in a subprocess: Prefect's settings and server are process-wide
def test_stage_command_runs_the_flow(demo_home, prefect_server):
    p = agentos("digest", "--day", "2026-11-22", "--json", "--quiet", home=demo_home, PREFECT_API_URL=prefect_server)
    r = json.loads(p.stdout)
    assert r["day"] == "2026-11-22" and r["facts_added"] > 0
    assert date.fromisoformat(r["day"]) == date(2026, 11, 22)


def test_import_then_backfill_a_public_dataset(tmp_path, eval_dir):
    out = tmp_path / "logs"
    p = run_cli("import", "locomo", str(eval_dir / "locomo" / "locomo.json"), "--out", str(out), "--json", home=tmp_path)
    assert json.loads(p.stdout)["turns"] > 2000
    conv = out / "conv-26"
    s = load_settings(home=tmp_path / "home", user="conv-26", logs_dir=conv)
    from agentos_mem.kernel.workspace import Workspace

    Workspace(s.home).ensure()
    days = list_days(conv)
    for d in days[:3]:
        digest_day(s, "conv-26", d, conv)
    facts = json.loads(run_cli("facts", "list", "--user", "conv-26", "--as-of", days[2].isoformat(), "--json", home=tmp_path / "home").stdout)
    assert {f["subject"] for f in facts["facts"]} & {"Caroline", "Melanie"}
