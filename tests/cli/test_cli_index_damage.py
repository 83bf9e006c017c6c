"""A damaged live index is healed by the command the message names, and doctor checks the live generation (issue 42,
item 9), on the command line in process.

Before: with bytes of the live generation's chroma.sqlite3 overwritten, the query said to run `agentos rebuild`, but
the rebuild answered "unchanged" (the manifest holds no digest of Chroma's file, which Chroma rewrites when it opens
it): only `rebuild --full` repaired it. After that, doctor failed on the damaged generation the rebuild keeps for a
while and never checked the live one."""

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path

from agentos_mem.kernel.workspace import Workspace
from tests.kit.cli import run_cli

QUESTION = "服务器现在是什么配置？"


def _damage_pages(db: Path, tables: tuple[str, ...]) -> None:
    """Overwrite the first page of each table (its root) with junk: what a disk error or a copy taken mid-write leaves."""
    con = sqlite3.connect(db)
    size = con.execute("pragma page_size").fetchone()[0]
    roots = dict(con.execute("select name, rootpage from sqlite_master where type='table'").fetchall())
    con.close()
    data = bytearray(db.read_bytes())
    for table in tables:
        data[(roots[table] - 1) * size:roots[table] * size] = b"\xa5" * size
    db.write_bytes(bytes(data))


def test_a_damaged_live_chroma_file_is_healed_by_the_rebuild_the_query_names(indexed_home, tmp_path):
    home = indexed_home
    index = Workspace(home).index_dir
    twin = tmp_path / "twin"  # the answer, asked of a copy: this process then keeps no reader of home's index
    shutil.copytree(home, twin, symlinks=True)
    answer = run_cli("query", QUESTION, "--in-process", home=twin).stdout
    live = (index / "CURRENT").read_text(encoding="utf-8").strip()
    assert [p.name for p in index.glob("gen-*")] == [live]  # no earlier generation to answer from
    _damage_pages(index / live / "chroma/chroma.sqlite3", ("collections",))

    q = run_cli("query", QUESTION, "--in-process", home=home, check=False)
    assert q.returncode != 0 and "agentos rebuild" in q.stderr, q.stderr
    before = run_cli("doctor", home=home, check=False)
    assert before.returncode == 1
    assert f"damaged: agent-local/vector_db/{live}/chroma/chroma.sqlite3 is damaged (database disk image is malformed): " \
           "`agentos rebuild` makes the index again" in before.stdout, before.stdout

    r = run_cli("rebuild", "--direct", home=home)  # the command the query named, not --full
    assert f"indexes: rebuilt (live index damaged (index generation {live}: chroma/chroma.sqlite3 is damaged (" in r.stdout, r.stdout
    new = (index / "CURRENT").read_text(encoding="utf-8").strip()
    assert new != live and (index / live).is_dir()  # the damaged one is kept a while, as every older generation is
    assert run_cli("query", QUESTION, "--in-process", home=home).stdout == answer

    after = run_cli("doctor", home=home, check=False)
    assert after.returncode == 0, after.stdout  # the live generation checked, the kept damaged one only a note
    assert f"index generation {new}, embedder " in after.stdout and "ok: cards, facts, keyword index and vector index agree" in after.stdout
    assert "  user default: stores " in after.stdout
    assert f"warning: agent-local/vector_db/{live}/chroma/chroma.sqlite3 (an older index generation, kept a while for " \
           "readers still on it) is damaged (" in after.stdout, after.stdout
    assert "damaged:" not in after.stdout
    assert run_cli("rebuild", "--direct", home=home).stdout.startswith("indexes: unchanged")  # healed: nothing to do
