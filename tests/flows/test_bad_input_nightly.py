"""The bad-input corpus (tests/kit/bad_logs.py) through the REAL nightly flow on a temporary Prefect server: the
night completes, the good days and lines are digested, the index rebuild runs, every bad case is in
quarantine.jsonl with file, line and reason, and nothing prints a traceback. A day that fails outright costs
only itself."""

import json
from datetime import date

import pytest

from tests.kit.bad_logs import DAYS, matching, write_corpus

pytestmark = pytest.mark.usefixtures("prefect_harness")
# ``ws``: the fresh workspace of tests/kit/knowledge.py, registered for every test folder by tests/conftest.py.


def test_the_nightly_gets_through_the_bad_input_corpus(ws, tmp_path, capfd):
    from agentos_mem.flows.nightly import nightly
    from agentos_mem.kernel.settings import load_settings
    from agentos_mem.storage.facts import open_facts

    c = write_corpus(tmp_path / "logs", tmp_path / "outside")
    try:
        r = nightly(logs_dir=str(c.folder))
    finally:
        c.close()
    out, err = capfd.readouterr()
    assert "Traceback" not in out + err and "Crash detected" not in err and "Finished in state Failed" not in err
    assert r["digest"]["days"] == [d.isoformat() for d in DAYS]
    assert all(d["extractor"] == "rules" and d["turns"] > 0 for d in r["digest"]["per_day"])
    assert r["index"]["status"] == "rebuilt" and r["index"]["units"] > 0  # the rebuild after the digest ran

    logs = ws / "agent-local/logs"
    entries = [json.loads(x) for x in (logs / "quarantine.jsonl").read_text(encoding="utf-8").split("\n") if x]
    errors = (logs / "errors.log").read_text(encoding="utf-8")
    for case in c.cases:
        assert matching(entries, case), case
        assert (f"{case.file}:{case.line}: " if case.line else f"{case.file}: ") in errors, case
    assert all(e["day"] and e["path"] for e in entries)
    # the run's report lists them too
    for case in c.cases:
        assert any(q.startswith(f"{case.file}:{case.line}: " if case.line else f"{case.file}: ") and case.reason in q
                   for q in r["digest"]["quarantined"]), case

    store = open_facts(load_settings())
    try:
        objects = {row["object"] for d in DAYS for row in store.facts_of_day("default", d)}
    finally:
        store.close()
    for obj in c.facts:
        assert any(obj in o for o in objects), obj

    again = nightly(logs_dir=str(c.folder))  # refused files are remembered: nothing left to do
    assert again["digest"]["days"] == []


def test_a_day_that_fails_outright_costs_only_itself(ws, tmp_path, monkeypatch):
    import agentos_mem.digest.stages
    from agentos_mem import digest
    from agentos_mem.flows.nightly import nightly

    logs = tmp_path / "logs"
    logs.mkdir()
    for d, text in ((20, "我叫林晓。"), (21, "数据库端口是 5432。"), (22, "服务器配置是 8C16G。")):
        (logs / f"2026-11-{d}.md").write_text(f"[09:00] 用户: {text}\n", encoding="utf-8")
    real = digest.stages.write_cards

    def broken(settings, inp, *a, **k):
        if inp.day == date(2026, 11, 21):
            raise RuntimeError("disk on fire")
        return real(settings, inp, *a, **k)

    monkeypatch.setattr(digest.stages, "write_cards", broken)
    r = nightly(logs_dir=str(logs))
    per_day = {d["day"]: d for d in r["digest"]["per_day"]}
    assert per_day["2026-11-20"]["facts_added"] == 1 and per_day["2026-11-22"]["facts_added"] == 1
    assert per_day["2026-11-21"]["extractor"] == "failed"
    (reason,) = per_day["2026-11-21"]["quarantined"]
    assert reason.startswith("(day 2026-11-21): the day's digest failed (RuntimeError: disk on fire)")
    assert r["index"]["status"] == "rebuilt"
    ws_logs = ws / "agent-local/logs"
    assert "disk on fire" in (ws_logs / "errors.log").read_text(encoding="utf-8")
    assert "disk on fire" in (ws_logs / "quarantine.jsonl").read_text(encoding="utf-8")

    monkeypatch.setattr(digest.stages, "write_cards", real)
    again = nightly(logs_dir=str(logs))  # not marked digested: the next night tries the day again
    # 11-21 comes before the digested 11-22: the facts are made again in date order (digest.rewind), each day once
    assert again["digest"]["days"] == ["2026-11-20", "2026-11-21", "2026-11-22"] and again["digest"]["rewound"]["from"] == "2026-11-21"
    assert again["digest"]["cards"] == 3 and again["digest"]["facts_added"] == 3


def test_damaged_and_forged_journal_lines_never_stop_the_night(indexed_home, capfd):
    """The bad-journal corpus (tests/kit/bad_journal.py) in agent-sync's journal: the nightly completes, names each
    line (file:line) with why it was skipped or refused, and applies none of them."""
    import sqlite3

    from agentos_mem.flows.nightly import nightly
    from agentos_mem.kernel.workspace import Workspace
    from tests.kit.bad_journal import reported, write_bad_journal

    con = sqlite3.connect(Workspace(indexed_home).facts_db)
    con.row_factory = sqlite3.Row
    target = dict(con.execute("select * from facts where object='8C16G' and status='active'").fetchone())
    con.close()
    cases = write_bad_journal(Workspace(indexed_home).journal_dir, target)
    r = nightly()
    out, err = capfd.readouterr()
    assert "Traceback" not in out + err and "Finished in state Failed" not in err
    assert r["index"]["status"] in ("rebuilt", "unchanged") and r["journal"]["applied"] == []
    for case in cases:
        assert reported(r["journal"]["problems"], case), (case, r["journal"]["problems"])
    con = sqlite3.connect(Workspace(indexed_home).facts_db)
    assert con.execute("select status from facts where id=?", [target["id"]]).fetchone() == ("active",)
    con.close()


def test_a_working_folder_linked_to_another_users_is_named_and_the_night_goes_on(ws):
    """Issue 25: ``working/bob -> working/alice`` never digests alice's log into bob's facts; the nightly names the
    link in errors.log and quarantine.jsonl, and its other stages (collect, refine, the index rebuild) still run."""
    import os

    from agentos_mem.flows.nightly import nightly
    from agentos_mem.kernel.settings import load_settings
    from agentos_mem.storage.facts import open_facts

    working = ws / "agent-sync" / "04_memory" / "working"
    (working / "alice").mkdir(parents=True)
    (working / "alice" / "2026-11-28.md").write_text("[09:00] 用户: 我叫林晓，我住在杭州西湖区。\n", encoding="utf-8")
    os.symlink(working / "alice", working / "bob")
    r = nightly(user="bob")
    assert r["digest"]["days"] == []
    assert r["index"]["status"] in ("rebuilt", "unchanged")  # the chain went on past the refused folder
    logs = ws / "agent-local" / "logs"
    errors = (logs / "errors.log").read_text(encoding="utf-8")
    assert str(working / "bob") in errors and "is a symbolic link" in errors
    entries = [json.loads(x) for x in (logs / "quarantine.jsonl").read_text(encoding="utf-8").splitlines() if x]
    assert any(e["user"] == "bob" and e["path"] == str(working / "bob") for e in entries)
    store = open_facts(load_settings())
    try:
        assert store.current("bob") == []
    finally:
        store.close()
