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


@pytest.mark.heavy  # `memory recall` through run_cli loads the embedder (a command in a string: the rules cannot see it)
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
    from agentos_mem.kernel.files import UnsafePath
    from agentos_mem.kernel.settings import load_settings
    from agentos_mem.query.recall import recall
    from agentos_mem.storage.memory_records import open_book

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

    from agentos_mem.digest.stages import pending_days
    from agentos_mem.kernel.settings import load_settings
    from agentos_mem.storage.facts import open_facts

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


# -- the stores the digest writes and the night reads: raw archive, cards, index, journal, rules, inbox, logs -------

DAY = "2026-11-28"


@pytest.fixture
def alice_digested(home):
    """alice's day, digested through the plain stage functions (no Prefect): her raw archive and her cards exist."""
    from datetime import date

    from agentos_mem.digest.stages import digest_day
    from agentos_mem.kernel.settings import load_settings

    folder = home / "agent-sync" / "04_memory" / "working" / "alice"
    folder.mkdir(parents=True)
    (folder / f"{DAY}.md").write_text(ALICE_LOG, encoding="utf-8")
    digest_day(load_settings(user="alice"), "alice", date.fromisoformat(DAY), folder)
    return home


def test_raw_bob_linked_to_alices_archive_reads_nothing_of_hers(alice_digested, tmp_path):
    home = alice_digested
    raw = home / "agent-local" / "memory" / "raw"
    assert (raw / "alice" / DAY / "r1" / f"{DAY}.md").is_file()
    bob = link(raw / "bob", raw / "alice")
    ref = f"bob/{DAY}/r1/{DAY}.md"
    p = run_cli("raw", ref, "--lines", "1-2", "--user", "bob", home=home, check=False)
    assert p.returncode != 0 and "林晓" not in p.stdout and _refused(p.stderr, bob), p.stderr
    mine = run_cli("raw", f"alice/{DAY}/r1/{DAY}.md", "--lines", "1-1", "--user", "alice", home=home)
    assert "林晓" in mine.stdout  # alice still reads her own


def test_mcp_raw_read_through_a_linked_user_archive_serves_nothing(alice_digested, tmp_path):
    pytest.importorskip("mcp")
    from tests.kit.mcp import session

    home = alice_digested
    raw = home / "agent-local" / "memory" / "raw"
    link(raw / "default", raw / "alice")

    async def script(s):
        return await s.call_tool("raw_read", {"ref": f"default/{DAY}/r1/{DAY}.md", "start": 1, "end": 2})

    out, _ = session(home, tmp_path / "err.log", script)
    assert out.is_error and "林晓" not in out.content[0].text


def test_rebuild_never_indexes_a_card_folder_linked_to_another_users(alice_digested):
    from agentos_mem.index.stages import collect_units
    from agentos_mem.kernel.settings import load_settings

    home = alice_digested
    cards = home / "agent-local" / "memory" / "cards"
    assert list((cards / "alice").glob("*.md"))
    bob = link(cards / "bob", cards / "alice")
    snap = collect_units(load_settings())
    users = {c["user"] for c in snap.collections.values() if c["units"]}
    assert "alice" in users and "bob" not in users
    assert any(str(bob) in p and "symbolic link" in p for p in snap.problems)


def test_a_card_file_linked_outside_is_neither_indexed_nor_removed_by_a_re_digest(alice_digested, outside):
    from datetime import date

    from agentos_mem.digest.stages import digest_day
    from agentos_mem.index.stages import collect_units
    from agentos_mem.kernel.settings import load_settings

    home = alice_digested
    cards = home / "agent-local" / "memory" / "cards" / "alice"
    bad = link(cards / f"testhost_{DAY.replace('-', '')}_stale.md", outside.root / "notes.md")  # a stale card of the day, by name
    snap = collect_units(load_settings())
    assert OUTSIDE_WORD not in json.dumps([u.text for u in snap.units()], ensure_ascii=False)
    assert any(str(bad) in p for p in snap.problems)
    (home / "agent-sync/04_memory/working/alice" / f"{DAY}.md").write_text(ALICE_LOG + "[09:05] 用户: 我喜欢喝龙井。\n", encoding="utf-8")
    digest_day(load_settings(user="alice"), "alice", date.fromisoformat(DAY), home / "agent-sync/04_memory/working/alice")
    assert bad.is_symlink()
    outside.assert_untouched()


def test_journal_a_linked_journal_file_is_never_appended_to_and_the_decision_not_made(home, tmp_path):
    from agentos_mem.kernel.settings import load_settings
    from agentos_mem.storage import journal

    target = tmp_path / "some" / "journal.jsonl"
    target.parent.mkdir(parents=True)
    target.write_text("", encoding="utf-8")
    before = target.stat().st_mtime_ns
    jdir = home / "agent-sync" / "04_memory" / "journal"
    bad = link(jdir / "testhost.jsonl", target)
    with pytest.raises(journal.JournalUnwritable) as e:
        journal.append(jdir, load_settings().hostname, {"kind": "fact_forget", "at": "2026-11-30T10:00:00+08:00", "user": "default"})
    assert str(bad) in e.value.strerror and "symbolic link" in e.value.strerror
    assert target.read_text(encoding="utf-8") == "" and target.stat().st_mtime_ns == before
    events, problems = journal.read(jdir)
    assert events == [] and problems == ["testhost.jsonl: not a regular file; not read"]


def test_journal_folder_linked_outside_is_not_replayed(home, tmp_path):
    from agentos_mem.storage import journal

    other = tmp_path / "forged"
    other.mkdir()
    (other / "x.jsonl").write_text(json.dumps({"id": "1", "kind": "fact_forget", "at": "2026-11-30T10:00:00+08:00", "user": "default",
                                              "host": "x", "seq": 0, "v": 1}) + "\n", encoding="utf-8")
    jdir = home / "agent-sync" / "04_memory" / "journal"
    jdir.rmdir()
    link(jdir, other)
    events, problems = journal.read(jdir)
    assert events == [] and len(problems) == 1 and _refused(problems[0], jdir)


def test_rules_a_soul_linked_outside_is_named_not_read(home, tmp_path):
    from agentos_mem.query.rules import RulesError, load_rules

    soul = home / "agent-sync" / "01_core" / "SOUL.md"
    elsewhere = tmp_path / "some" / "SOUL.md"
    elsewhere.parent.mkdir(parents=True)
    elsewhere.write_bytes(soul.read_bytes())
    soul.unlink()
    link(soul, elsewhere)
    with pytest.raises(RulesError) as e:
        load_rules(soul)
    assert _refused(str(e.value), soul)
    p = run_cli("query", "我住在哪里", "--in-process", home=home, check=False)
    assert p.returncode != 0 and _refused(p.stderr, soul), p.stderr


def test_memory_inbox_a_card_linked_outside_is_quarantined_and_the_rest_taken(home, outside):
    from agentos_mem.kernel.settings import load_settings
    from agentos_mem.memory.inbox import ingest_cards
    from agentos_mem.storage.memory_records import open_book

    inbox = home / "agent-sync" / "03_knowledge" / "00_stream" / "inbox" / "memory"
    (inbox / "real.md").write_text("---\ntype: user\n---\nprefers green tea in the morning\n", encoding="utf-8")
    bad = link(inbox / "notes.md", outside.root / "notes.md")
    pipe = fifo(inbox / "pipe.md")
    settings = load_settings()
    r = ingest_cards(settings, "default")
    outside.assert_untouched()
    assert any(str(bad) in q and "symbolic link" in q for q in r["quarantined"])
    assert any(str(pipe) in q and "named pipe" in q for q in r["quarantined"])
    names = [rec.description for rec in open_book(settings).list("default")]
    assert any("green tea" in d for d in names) and not any(OUTSIDE_WORD in d for d in names)


def test_event_logs_a_linked_errors_log_is_refused_not_appended(home, tmp_path):
    from agentos_mem.kernel.domain import Quarantined
    from agentos_mem.kernel.files import UnsafePath
    from agentos_mem.storage.eventlog import log_errors

    target = tmp_path / "some" / "errors.log"
    target.parent.mkdir(parents=True)
    target.write_text("", encoding="utf-8")
    logs = home / "agent-local" / "logs"
    bad = link(logs / "errors.log", target)
    with pytest.raises(UnsafePath) as e:
        log_errors(logs, "digest", [Quarantined("x.md", "a problem")])
    assert e.value.path == bad and target.read_text(encoding="utf-8") == ""


# -- knowledge documents, the refine inbox, identity files, the index, a restore -------------------------------------

DOC = ("---\nid: doc-outside\ntitle: Outside doc\ncategory: 10_concepts/ai\nscope: system\nowner: default\nstatus: ready\n---\n\n"
       f"# Outside doc\n\n{OUTSIDE_WORD} text that never belongs to this workspace.\n")


def test_knowledge_a_taxonomy_folder_linked_outside_registers_nothing_from_it(home, tmp_path):
    from agentos_mem.kernel.settings import load_settings
    from agentos_mem.restore.registry import cards

    elsewhere = Outside.make(tmp_path / "some" / "kb", {"doc.md": DOC})
    ai = home / "agent-sync" / "03_knowledge" / "10_concepts" / "ai"
    ai.rmdir()
    link(ai, elsewhere.root)
    found, problems = cards(load_settings())
    assert all(OUTSIDE_WORD not in body for _, _, body in found)
    assert any("10_concepts/ai" in p and "symbolic link" in p for p in problems), problems
    elsewhere.assert_untouched()


def test_refine_inbox_a_linked_partition_and_a_fifo_are_named_items_never_read(home, outside):
    from agentos_mem.kernel.settings import load_settings
    from agentos_mem.knowledge.refine import ItemError, inbox_items, read_item

    inbox = home / "agent-sync" / "03_knowledge" / "00_stream" / "inbox"
    feed = inbox / "knowledge" / "feed"
    feed.rmdir()
    link(feed, outside.root)
    pipe = fifo(inbox / "knowledge" / "clipping" / "pipe.md")
    items = [p for _, p in inbox_items(load_settings())]
    assert feed in items and pipe in items and not any(p.parent == feed for p in items)
    for path, why in ((feed, "symbolic link"), (pipe, "named pipe")):
        with pytest.raises(ItemError) as e:
            read_item(path, b"")
        assert why in str(e.value)
    outside.assert_untouched()


def test_init_never_writes_an_identity_file_through_a_dangling_link(home, tmp_path):
    soul = home / "agent-sync" / "01_core" / "SOUL.md"
    soul.unlink()
    target = tmp_path / "some" / "new-SOUL.md"  # not there yet: a write through the link would create it
    target.parent.mkdir(parents=True)
    link(soul, target)
    run_cli("init", home=home)
    assert not target.exists() and soul.is_symlink()


def test_index_a_current_pointer_linked_outside_is_named_not_followed(home, tmp_path):
    from agentos_mem.index.stages import index_store
    from agentos_mem.kernel.settings import load_settings
    from agentos_mem.storage.index_store import IndexCorrupt

    target = tmp_path / "some" / "CURRENT"
    target.parent.mkdir(parents=True)
    target.write_text("gen-elsewhere\n", encoding="utf-8")
    current = link(home / "agent-local" / "vector_db" / "CURRENT", target)
    with pytest.raises(IndexCorrupt) as e:
        index_store(load_settings()).current()
    assert _refused(str(e.value), current) and "agentos rebuild" in str(e.value)


def test_restore_skips_a_working_folder_linked_to_another_users_and_restores_the_rest(alice_digested):
    home = alice_digested
    working = home / "agent-sync" / "04_memory" / "working"
    bob = link(working / "bob", working / "alice")
    p = run_cli("restore", "--force", "--json", home=home)
    report = json.loads(p.stdout)
    assert report["users"].get("alice") == [DAY] and "bob" not in report["users"]
    assert any(str(bob) in q and "symbolic link" in q for q in report["problems"])
    from agentos_mem.kernel.settings import load_settings
    from agentos_mem.storage.facts import open_facts

    store = open_facts(load_settings())
    try:
        assert store.current("bob") == [] and store.current("alice")
    finally:
        store.close()


@pytest.mark.parametrize("store", ["agent-local/memory/facts.db", "agent-local/memory/memory_proposals.db"])
def test_a_sqlite_store_linked_outside_is_never_opened(home, tmp_path, store):
    target = tmp_path / "some" / Path(store).name
    target.parent.mkdir(parents=True)
    target.write_bytes(b"")
    (home / store).unlink(missing_ok=True)
    bad = link(home / store, target)
    args = ["facts", "list"] if "facts" in store else ["memory", "proposals"]
    p = run_cli(*args, home=home, check=False)
    assert p.returncode != 0 and _refused(p.stderr, bad), p.stderr
    assert target.read_bytes() == b"" and not (target.parent / (target.name + "-wal")).exists()


# -- the mechanism itself: every operation of kernel.files.Below against every bad path ------------------------------

BAD = ("folder-link-outside", "folder-link-inside", "file-link", "fifo", "dotdot")
OPS = ("read_bytes", "write", "append", "unlink", "files", "mkdirs", "open_lock", "database_file")


def _plant(tree: Path, outside: Outside, bad: str) -> tuple[Path, str]:
    """The path an operation is given, and the words its refusal must hold."""
    if bad == "folder-link-outside":
        link(tree / "records" / "carol", outside.root)
        return tree / "records" / "carol" / "victim.md", "is a symbolic link"
    if bad == "folder-link-inside":
        (tree / "records" / "alice").mkdir(parents=True)
        (tree / "records" / "alice" / "victim.md").write_text(ALICE_RECORD, encoding="utf-8")
        link(tree / "records" / "bob", tree / "records" / "alice")
        return tree / "records" / "bob" / "victim.md", "is a symbolic link"
    if bad == "file-link":
        link(tree / "records" / "dora" / "victim.md", outside.root / "victim.md")
        return tree / "records" / "dora" / "victim.md", "is a symbolic link"
    if bad == "fifo":
        return fifo(tree / "records" / "erin" / "victim.md"), "named pipe"
    # lexically below the tree, in fact the victim outside it (tmp_path/some/dir)
    return tree / "records" / "erin" / ".." / ".." / ".." / ".." / "some" / "dir" / "victim.md", "names '..'"


@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("bad", BAD)
def test_below_refuses_every_bad_path_for_every_operation(tmp_path, outside, bad, op):
    from agentos_mem.kernel.files import UnsafePath, guard, open_lock
    from agentos_mem.storage.guards import database_file

    tree = tmp_path / "ws" / "agent-sync"
    tree.mkdir(parents=True)
    path, words = _plant(tree, outside, bad)
    if op == "mkdirs" and bad == "fifo":
        words = "is not a folder"
    alice = tree / "records" / "alice" / "victim.md"
    below = guard(path)
    act = {"read_bytes": lambda: below.read_bytes(path), "write": lambda: below.write(path, "overwritten"),
           "append": lambda: below.append(path, "appended"), "unlink": lambda: below.unlink(path),
           "files": lambda: below.files(path.parent if bad != "file-link" and bad != "fifo" else path),
           "mkdirs": lambda: below.mkdirs(path if bad in ("file-link", "fifo") else path.parent / "sub"),
           "open_lock": lambda: os.close(open_lock(path)), "database_file": lambda: database_file(path)}[op]
    if op == "files" and bad in ("file-link", "fifo"):  # a listing leaves the entry out and says why
        ok, refused = below.files(path.parent)
        assert ok == [] and [e.path for e in refused] == [path] and words in refused[0].reason
    else:
        with pytest.raises(UnsafePath) as e:
            act()
        assert words in str(e.value) and str(e.value.path) in str(e.value)
    outside.assert_untouched()
    if bad == "folder-link-inside":
        assert alice.read_text(encoding="utf-8") == ALICE_RECORD


def test_below_takes_a_workspace_whose_root_and_trees_are_links(tmp_path):
    """AGENTOS_HOME, agent-sync and agent-local may be links (another disk, a synced mount): only below is checked."""
    from agentos_mem.kernel.files import guard

    disk = tmp_path / "disk"
    (disk / "sync").mkdir(parents=True)
    home = tmp_path / "home"
    home.mkdir()
    link(home / "agent-sync", disk / "sync")
    path = home / "agent-sync" / "04_memory" / "records" / "alice" / "m.md"
    guard(path).write(path, "kept")
    assert guard(path).read_bytes(path) == b"kept" and (disk / "sync" / "04_memory" / "records" / "alice" / "m.md").is_file()
