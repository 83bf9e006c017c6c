"""Issue 25, item 1: nothing outside the workspace is read, written or deleted, and nothing of another user's is
served, whatever links, FIFOs and ``..`` names sit below the workspace root, through every transport (the CLI in
process, the MCP server over stdio with the official client, the Python API) and every store.

Each case plants a bad path (tests/kit/bad_paths.py), acts through the interface a user has, and asserts: the
files outside kept their bytes and mtime and still exist; no answer holds what lies behind the link; a direct
action on the refused path fails with a message naming the path and why; a listing or a nightly leaves it out,
says so, and goes on with the rest. The workspace root itself may be a link (users put it on another disk).
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tests.kit.bad_paths import ALICE_LOG, ALICE_RECORD, ALICE_WORD, OUTSIDE_WORD, Outside, fifo, link
from tests.kit.cli import run_cli


def _records(home: Path) -> Path:
    return home / "agent-sync" / "04_memory" / "records"


@pytest.fixture
def home(tmp_path, monkeypatch):
    """A workspace reached through a link (allowed: links above the root are the user's), selected for the API."""
    real = tmp_path / "disk" / "ws"
    run_cli("init", home=real)
    home = link(tmp_path / "ws", real)
    monkeypatch.setenv("AGENTOS_HOME", str(home))
    monkeypatch.setenv("AGENTOS_HOSTNAME", "testhost")
    monkeypatch.delenv("AGENTOS_LLM_BASE_URL", raising=False)
    return home


@pytest.fixture
def outside(tmp_path):
    return Outside.make(tmp_path / "some" / "dir")


def _user_link_outside(home: Path, outside: Outside, user: str = "carol") -> Path:
    return link(_records(home) / user, outside.root)


def _alice_and_bob(home: Path) -> None:
    (_records(home) / "alice").mkdir(parents=True)
    (_records(home) / "alice" / "alice-diary.md").write_text(ALICE_RECORD, encoding="utf-8")
    link(_records(home) / "bob", _records(home) / "alice")


def _refused(text: str, path: Path, why: str = "is a symbolic link") -> bool:
    return str(path) in text and why in text


# -- the CLI -------------------------------------------------------------------------------------------------------

CLI_ACTIONS = {
    "list": ["memory", "list"],
    "show": ["memory", "show", "notes"],
    "update": ["memory", "update", "notes", "--body", "overwritten"],
    "delete": ["memory", "delete", "victim"],
    "recall": ["memory", "recall", "diary tea 日记 喝茶"],
    "save": ["memory", "save", "fresh", "-d", "a new memory", "-t", "user"],
}


@pytest.mark.parametrize("action", sorted(CLI_ACTIONS))
def test_cli_a_user_folder_linked_outside_is_never_followed(home, outside, action):
    folder = _user_link_outside(home, outside)
    p = run_cli(*CLI_ACTIONS[action], "--user", "carol", home=home, check=False)
    outside.assert_untouched()
    assert OUTSIDE_WORD not in p.stdout
    assert p.returncode != 0, p.stdout
    assert _refused(p.stderr + p.stdout, folder), p.stderr + p.stdout


@pytest.mark.parametrize("action", ["list", "show", "recall"])
def test_cli_bob_linked_to_alice_is_served_nothing_of_alice(home, action):
    _alice_and_bob(home)
    args = {"list": ["memory", "list"], "show": ["memory", "show", "alice-diary"],
            "recall": ["memory", "recall", "jasmine tea 茉莉花茶"]}[action]
    p = run_cli(*args, "--user", "bob", "--json", home=home, check=False)
    assert ALICE_WORD not in p.stdout and "alice-diary" not in p.stdout
    assert p.returncode != 0 and _refused(p.stderr + p.stdout, _records(home) / "bob")
    # alice's own record is untouched (not counted by bob's recall) and still hers
    mine = run_cli("memory", "show", "alice-diary", "--user", "alice", "--json", home=home)
    assert json.loads(mine.stdout)["recallCount"] == 0


@pytest.mark.parametrize("action", ["show", "update", "delete"])
def test_cli_a_record_file_linked_outside_is_refused_and_the_others_still_work(home, outside, action):
    mine = _records(home) / "dora"
    run_cli("memory", "save", "real", "-d", "a real memory about coffee", "-t", "user", "--user", "dora", home=home)
    bad = link(mine / "notes.md", outside.root / "notes.md")
    args = {"show": ["memory", "show", "notes"], "update": ["memory", "update", "notes", "--body", "overwritten"],
            "delete": ["memory", "delete", "notes"]}[action]
    p = run_cli(*args, "--user", "dora", home=home, check=False)
    outside.assert_untouched()
    assert bad.is_symlink()  # not removed either: the link is the user's to sort out
    assert p.returncode != 0 and _refused(p.stderr, bad), p.stderr
    listed = run_cli("memory", "list", "--user", "dora", "--json", home=home)
    assert [r["name"] for r in json.loads(listed.stdout)] == ["real"]
    assert _refused(listed.stderr, bad)  # the listing says what it left out
    assert OUTSIDE_WORD not in listed.stdout


def test_cli_a_fifo_record_is_listed_as_refused_and_never_opened(home):
    mine = _records(home) / "erin"
    run_cli("memory", "save", "real", "-d", "a real memory about coffee", "-t", "user", "--user", "erin", home=home)
    pipe = fifo(mine / "pipe.md")
    shown = run_cli("memory", "show", "pipe", "--user", "erin", home=home, check=False)  # would block on open()
    assert shown.returncode != 0 and _refused(shown.stderr, pipe, "named pipe")
    listed = run_cli("memory", "list", "--user", "erin", "--json", home=home)
    assert [r["name"] for r in json.loads(listed.stdout)] == ["real"] and _refused(listed.stderr, pipe, "named pipe")
    recalled = run_cli("memory", "recall", "coffee", "--user", "erin", "--json", home=home)
    assert [h["name"] for h in json.loads(recalled.stdout)["hits"]] == ["real"]


@pytest.mark.parametrize("name", ["../alice/alice-diary", "..", "a/../../b"])
def test_cli_dotdot_names_are_refused(home, name):
    _alice_and_bob(home)
    os.unlink(_records(home) / "bob")
    for args in (["memory", "show", name], ["memory", "delete", name], ["memory", "update", name, "--body", "x"]):
        p = run_cli(*args, "--user", "bob", home=home, check=False)
        assert p.returncode != 0 and "'..'" in p.stderr, (args, p.stderr)
    assert (_records(home) / "alice" / "alice-diary.md").read_text(encoding="utf-8") == ALICE_RECORD


# -- the Python API ------------------------------------------------------------------------------------------------


def test_api_the_memory_book_refuses_a_linked_user_folder(home, outside):
    from kernel.files import UnsafePath
    from kernel.settings import load_settings
    from query.recall import recall
    from storage.memory_records import open_book

    folder = _user_link_outside(home, outside)
    settings = load_settings()
    book = open_book(settings)
    for act in (lambda: book.list("carol"), lambda: book.read("carol", "notes"), lambda: book.delete("carol", "victim"),
                lambda: book.update("carol", "notes", body="x"), lambda: book.mark_recalled("carol", ["notes"]),
                lambda: book.create("carol", "fresh", "new", "user")):
        with pytest.raises(UnsafePath) as e:
            act()
        assert e.value.path == folder and "symbolic link" in str(e.value)
    res = recall("diary tea 日记 喝茶", user="carol", settings=settings, book=book)
    assert res.status == "error" and res.hits == [] and any(str(folder) in n for n in res.notices)
    outside.assert_untouched()


# -- the MCP server over stdio -------------------------------------------------------------------------------------


def test_mcp_memory_tools_refuse_a_linked_user_folder(home, outside, tmp_path):
    pytest.importorskip("mcp")
    from tests.kit.mcp import error_text, session

    folder = _user_link_outside(home, outside, "default")  # the server's user (AGENTOS_USER unset)

    async def script(s):
        return {"delete": await s.call_tool("memory_delete", {"name": "victim"}),
                "update": await s.call_tool("memory_update", {"name": "notes", "content": "overwritten"}),
                "save": await s.call_tool("memory_save", {"name": "fresh", "description": "x", "type": "user"}),
                "recall": await s.call_tool("memory_recall", {"query": "diary tea 日记 喝茶"})}

    out, stray = session(home, tmp_path / "err.log", script)
    assert stray == []
    outside.assert_untouched()
    for tool in ("delete", "update", "save"):
        assert _refused(error_text(out[tool]), folder), tool
    recalled = out["recall"]
    text = recalled.content[0].text
    assert OUTSIDE_WORD not in text and str(folder) in text


def test_mcp_bob_linked_to_alice_gets_nothing_of_alice(home, tmp_path):
    pytest.importorskip("mcp")
    from tests.kit.mcp import session

    (_records(home) / "alice").mkdir(parents=True)
    (_records(home) / "alice" / "alice-diary.md").write_text(ALICE_RECORD, encoding="utf-8")
    link(_records(home) / "default", _records(home) / "alice")

    async def script(s):
        return {"recall": await s.call_tool("memory_recall", {"query": "jasmine tea 茉莉花茶"}),
                "delete": await s.call_tool("memory_delete", {"name": "alice-diary"})}

    out, _ = session(home, tmp_path / "err.log", script)
    for r in out.values():
        assert ALICE_WORD not in r.content[0].text
    assert (_records(home) / "alice" / "alice-diary.md").read_text(encoding="utf-8") == ALICE_RECORD


# -- working logs: the digest (Python API; the nightly flow in tests/flows) -----------------------------------------


def test_digest_a_working_folder_linked_to_another_users_is_not_digested(home):
    from datetime import date

    from digest.stages import pending_days
    from kernel.settings import load_settings
    from storage.facts import open_facts

    working = home / "agent-sync" / "04_memory" / "working"
    (working / "alice").mkdir(parents=True)
    (working / "alice" / "2026-11-28.md").write_text(ALICE_LOG, encoding="utf-8")
    bob = link(working / "bob", working / "alice")
    settings = load_settings(user="bob")
    assert pending_days(settings, "bob", settings.working_dir(), date(2026, 11, 29)) == []
    errors = (home / "agent-local" / "logs" / "errors.log").read_text(encoding="utf-8")
    assert _refused(errors, bob)
    entries = [json.loads(x) for x in (home / "agent-local" / "logs" / "quarantine.jsonl").read_text(encoding="utf-8").splitlines()]
    assert any(e["user"] == "bob" and e["path"] == str(bob) for e in entries)
    store = open_facts(settings)
    try:
        assert store.facts_of_day("bob", date(2026, 11, 28)) == []
    finally:
        store.close()
