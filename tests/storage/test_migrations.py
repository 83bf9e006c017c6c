"""Stores opened for the first time by several processes at once (two workers' first nightly runs)."""

import subprocess
import sys


def test_processes_opening_a_new_facts_store_at_once_all_get_it(tmp_path):
    code = ("import sys; from agentos_mem.storage.facts import FactStore; s = FactStore(sys.argv[1]); "
            "print(s.db.execute('select count(*) from _migrations').fetchone()[0]); s.close()")
    db = tmp_path / "facts.db"
    procs = [subprocess.Popen([sys.executable, "-c", code, str(db)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for _ in range(6)]
    results = [p.communicate(timeout=120) for p in procs]
    assert [p.returncode for p in procs] == [0] * 6, [err[-800:] for _, err in results]
    assert len({out.strip() for out, _ in results}) == 1  # every process sees every step applied, once
    import sqlite3

    con = sqlite3.connect(db)
    names = [r[0] for r in con.execute("select name from _migrations where store = 'facts'")]
    assert len(names) == len(set(names)) > 0
