"""A second machine from agent-sync (``agentos restore``), as plain functions: the first machine is the indexed demo
workspace with decisions made on it; the second gets a copy of its agent-sync only.

The same scenario through the CLI and the nightly flow, with a knowledge approval and two machines converging after
each adds a day, is tests/flows/test_second_machine.py."""

from __future__ import annotations

import json
import shutil
import sqlite3
from datetime import date

import pytest

from agentos_mem.kernel.settings import load_settings
from agentos_mem.kernel.workspace import Workspace
from tests.kit.chat_server import ChatServer
from tests.kit.machines import conflicts_ids_aside, facts_ids_aside, sqlite_files, synced_bytes

def answer_ids_aside(a) -> list[tuple]:
    """What an answer says: status, layer, and each item's kind and text (a card's id names the machine that built it)."""
    return [a.status, a.layer] + [(i.kind, i.text) for i in a.items]


@pytest.fixture
def machine_a(indexed_home):
    """The demo after its nights, then a person's decisions: a fact forgotten, the open conflict accepted."""
    from agentos_mem.knowledge.decisions import open_conflicts
    from agentos_mem.services.decisions import forget_fact, resolve_conflict

    settings = load_settings(home=indexed_home, hostname="laptop")
    con = sqlite3.connect(Workspace(indexed_home).facts_db)
    (coffee,) = con.execute("select id from facts where object='coffee' and status='active'").fetchone()
    con.close()
    forget_fact(settings, settings.user, coffee, "I switched to tea")
    (java,) = [c for c in open_conflicts(settings, settings.user) if c["candidate_object"] == "Java"]
    resolve_conflict(settings, settings.user, java["id"], accept=True)
    from agentos_mem.index.stages import rebuild

    rebuild(settings)
    return indexed_home


def test_a_second_machine_gets_the_same_memory_from_agent_sync_alone(machine_a, tmp_path, monkeypatch):
    from agentos_mem.digest.logformat import list_days
    from agentos_mem.query.ask import ask
    from agentos_mem.restore.run import restore

    journal = list((machine_a / "agent-sync/04_memory/journal").glob("*.jsonl"))
    assert [p.name for p in journal] == ["laptop.jsonl"]
    kinds = [json.loads(line)["kind"] for line in journal[0].read_text(encoding="utf-8").splitlines()]
    assert kinds == ["fact.forget", "fact.resolve"]
    assert sqlite_files(machine_a / "agent-sync") == []  # nothing a sync tool copies is a SQLite file

    b = tmp_path / "b"
    shutil.copytree(machine_a / "agent-sync", b / "agent-sync")
    before = synced_bytes(b)
    settings_b = load_settings(home=b, hostname="desktop", llm_base_url=None)
    report = restore(settings_b, log=lambda m: None)

    assert report.users == {"default": [d.isoformat() for d in list_days(b / "agent-sync/04_memory/working/default")]}
    assert len(report.decisions["applied"]) == 2 and report.decisions["waiting"] == []
    fa, fb = facts_ids_aside(machine_a), facts_ids_aside(b)
    assert [f for f in fb if f not in fa] == [f for f in fa if f not in fb] == []  # the forgotten fact and the accepted value too
    assert conflicts_ids_aside(b) == conflicts_ids_aside(machine_a)
    assert synced_bytes(b) == before  # a restore writes nothing a sync would carry back
    assert sqlite_files(b / "agent-sync") == []

    settings_a = load_settings(home=machine_a, hostname="laptop")
    for q in ["服务器现在是什么配置？", "what is the database port?", "我喜欢喝什么？", "which database did we pick, and why?",
              "我的数据库密码是多少？", "what is the weather on Mars?", "Do I like Java?"]:
        assert answer_ids_aside(ask(q, settings=settings_b)) == answer_ids_aside(ask(q, settings=settings_a)), q
    served = [i.text for i in ask("what do I like to drink?", settings=settings_b).items if i.kind == "fact"]
    assert served and not any("coffee" in t for t in served)  # forgotten on the first machine: never served on the second


def test_restore_over_existing_stores_needs_force_and_moves_them_aside(machine_a):
    from agentos_mem.restore.run import RestoreError, restore

    settings = load_settings(home=machine_a, hostname="laptop")
    old = Workspace(machine_a).facts_db.read_bytes()
    with pytest.raises(RestoreError, match="agentos restore --force"):
        restore(settings, log=lambda m: None)
    report = restore(settings, force=True, log=lambda m: None)
    backup = machine_a / report.moved_aside / "agent-local/memory/facts.db"
    assert backup.read_bytes()[:16] == old[:16] and backup.stat().st_size > 0  # kept, not deleted
    # the decisions made here were marked as held in the old store; the new one replays them from the journal
    assert len(report.decisions["applied"]) == 2


def test_a_decision_whose_log_has_not_synced_yet_waits_for_it(machine_a, tmp_path):
    """The journal arrives before the log that said the forgotten fact: the forget waits, and applies (on the next
    replay, which every nightly run does) once the day is digested."""
    from agentos_mem.digest.stages import run_day
    from agentos_mem.restore.replay import replay

    from agentos_mem.digest.logformat import list_days

    b = tmp_path / "b"
    shutil.copytree(machine_a / "agent-sync", b / "agent-sync")
    folder = b / "agent-sync/04_memory/working/default"
    (late,) = [p for p in folder.iterdir() if "coffee" in p.read_text(encoding="utf-8", errors="replace")]  # the day coffee was said
    held = late.read_bytes()
    late.unlink()
    settings = load_settings(home=b, hostname="desktop", llm_base_url=None)
    Workspace(b).ensure()
    for day in list_days(folder):
        run_day(settings, "default", day, folder)
    first = replay(settings, reached=True)
    assert not any("fact.forget" in a for a in first.applied) and any("fact.forget" in w for w in first.waiting)
    late.write_bytes(held)  # the sync catches up
    run_day(settings, "default", date.fromisoformat(late.name[:10]), folder)
    second = replay(settings, reached=True)
    assert any("forgot fact" in a for a in second.applied) and not any("fact.forget" in w for w in second.waiting)
    con = sqlite3.connect(Workspace(b).facts_db)
    assert con.execute("select status from facts where object='coffee'").fetchall() == [("forgotten",)]
    con.close()
    assert replay(settings).applied == []  # never twice


def test_a_workspace_from_before_the_split_is_read_in_place_and_moved_by_the_next_writer(indexed_home):
    from agentos_mem.query.ask import ask

    ws = Workspace(indexed_home)
    settings = load_settings(home=indexed_home)
    expected = answer_ids_aside(ask("服务器现在是什么配置？", settings=settings))
    legacy = {"agent-local/memory/facts.db": "agent-sync/04_memory/long_term/facts.db",
              "agent-local/memory/cards": "agent-sync/04_memory/cards",
              "agent-local/memory/daily_summaries": "agent-sync/04_memory/daily_summaries"}
    for new, old in legacy.items():
        (indexed_home / old).parent.mkdir(parents=True, exist_ok=True)
        for suffix in ("", "-wal", "-shm"):
            if (indexed_home / (new + suffix)).exists():
                shutil.move(indexed_home / (new + suffix), indexed_home / (old + suffix))
    assert ws.facts_db == indexed_home / "agent-sync/04_memory/long_term/facts.db"  # found where it is
    assert answer_ids_aside(ask("服务器现在是什么配置？", settings=settings)) == expected

    ws.ensure()  # what every flow (and init) runs first
    assert ws.facts_db == indexed_home / "agent-local/memory/facts.db" and ws.facts_db.is_file()
    assert not (indexed_home / "agent-sync/04_memory/long_term/facts.db").exists()
    assert any((indexed_home / "agent-local/memory/cards/default").glob("*.md"))
    assert sqlite_files(indexed_home / "agent-sync") == []
    assert answer_ids_aside(ask("服务器现在是什么配置？", settings=settings)) == expected


def test_a_chat_model_s_extraction_is_replayed_from_the_synced_cache_without_the_model(demo_home, tmp_path):
    from agentos_mem.digest.stages import run_day
    from agentos_mem.restore.run import restore

    # every part gets this answer: it holds for the project's part, whose first turn the rules keep as a statement (a
    # turn the rules read a value from stays theirs: the introduction's name and company)
    facts = {"ops": [{"op": "new", "turn": 1, "who": "user", "what": "项目", "value": "青鸟"},
                     {"op": "new", "turn": 1, "who": "user", "what": "项目用途", "value": "订单同步服务"}]}
    from agentos_mem.digest.logformat import list_days

    folder = demo_home / "agent-sync/04_memory/working/default"
    first = list_days(folder)[0]  # the day the user introduces themself
    with ChatServer([(200, json.dumps(facts, ensure_ascii=False))]) as srv:
        a = load_settings(home=demo_home, hostname="laptop", llm_base_url=srv.base_url)
        Workspace(demo_home).ensure()
        r = run_day(a, "default", first, folder)
        asked = len(srv.requests)
    assert r["extractor"].startswith("llm:") and asked >= 1
    cached = [json.loads(p.read_text(encoding="utf-8")) for p in (demo_home / "agent-sync/04_memory/cache/extraction").rglob("*.json")]
    assert cached and all(set(c) == {"model", "answer"} for c in cached)  # the answer only: never the log's lines

    b = tmp_path / "b"
    shutil.copytree(demo_home / "agent-sync", b / "agent-sync")
    for p in (b / "agent-sync/04_memory/working/default").iterdir():  # only the day the model read
        if not p.name.startswith(first.isoformat()):
            p.unlink()
    restore(load_settings(home=b, hostname="desktop", llm_base_url=None), log=lambda m: None)
    assert len(srv.requests) == asked  # the model was not asked again (it is not even configured there)
    got = [f for f in facts_ids_aside(b) if '"extractor": "llm:' in f]
    assert got and sorted(got) == sorted(f for f in facts_ids_aside(demo_home) if '"extractor": "llm:' in f)


HOLD_MARKER = ("import sys\nfrom pathlib import Path\nfrom agentos_mem.storage.guards import restore_marker\n"
               "with restore_marker(Path(sys.argv[1])):\n    print('held', flush=True)\n    sys.stdin.read()\n")


def test_every_writer_refuses_while_a_restore_runs_in_another_process(tmp_path):
    """Issue 42: `restore --force` started while a nightly digests left a wrong current fact, every exit code 0: the
    nightly's later days landed in the restore's half-made store. A writer that gets the workspace's lock while a
    restore holds its marker (another process: the nightly, a decision, a rebuild) refuses in one line, writes nothing."""
    import subprocess
    import sys

    from agentos_mem.digest.stages import digest_day
    from agentos_mem.index.stages import rebuild
    from agentos_mem.storage.guards import RestoreInProgress
    from tests.kit.cli import run_cli
    from tests.kit.digest import current, log_workspace, night

    s, logs = log_workspace(tmp_path)
    night(s, logs, date(2026, 11, 3), "服务器配置是 8C16G。")
    fact = json.loads(run_cli("facts", "list", "--json", home=s.home).stdout)["facts"][0]
    (logs / "2026-11-04.md").write_text("[10:00] 用户: 服务器配置升级到 16C32G 了。\n", encoding="utf-8")
    holder = subprocess.Popen([sys.executable, "-c", HOLD_MARKER, str(s.home)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                              text=True)
    try:
        assert holder.stdout.readline().strip() == "held"
        with pytest.raises(RestoreInProgress, match="a restore is in progress"):
            digest_day(s, "default", date(2026, 11, 4), logs)
        with pytest.raises(RestoreInProgress, match="a restore is in progress"):
            rebuild(s)
        out = run_cli("facts", "forget", str(fact["id"]), home=s.home, check=False)
        assert out.returncode != 0 and "a restore is in progress" in out.stderr and len(out.stderr.strip().splitlines()) == 1
    finally:
        holder.stdin.close()
        holder.wait(timeout=60)
    assert current(s) == ["8C16G"]  # nothing written meanwhile
    digest_day(s, "default", date(2026, 11, 4), logs)  # the restore over, writers write again
    assert current(s) == ["16C32G"]
