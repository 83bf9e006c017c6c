"""Knowledge search never embeds the corpus (issue 42, item 10): approving a document embeds its sections, once and
with progress; ``agentos rebuild`` embeds what is left; a search embeds its query alone, and sections it finds no
vector for are ranked by their keywords, which it says (``kb search`` text and ``--json``, ``kb ask``, MCP ``kb_search``).

The workspace's embedder (``agentos.toml``, as a user sets it) is an OpenAI-compatible endpoint on loopback that
records every text it is asked to embed: what a command embedded is what reached it."""

from __future__ import annotations

import hashlib
import json
import sqlite3

import pytest

from tests.kit.cli import run_cli
from tests.kit.knowledge import item
from tests.kit.loopback import JSONServer

DIM = 64
HEADINGS = 150
NOW = "2026-11-30T10:00:00+08:00"


def vector(text: str) -> list[float]:
    """The text's character bigrams hashed into DIM buckets (the client normalises): texts sharing words are near."""
    v = [0.0] * DIM
    t = text.casefold()
    for a, b in zip(t, t[1:]):
        v[int(hashlib.md5((a + b).encode()).hexdigest()[:8], 16) % DIM] += 1.0
    v[0] += 0.01  # never the zero vector
    return v


class Embeddings:
    """``/v1/embeddings`` on loopback; every text asked for is recorded; ``down``: it answers 503 (a model loading, an
    endpoint restarting)."""

    def __init__(self):
        self.down = False
        self.server = JSONServer(self._respond)

    def _respond(self, body, n):
        if self.down:
            return 503, {"error": {"message": "the model is loading"}}
        return 200, {"data": [{"index": i, "embedding": vector(t)} for i, t in enumerate(body["input"])], "model": "fake"}

    def mark(self) -> int:
        return len(self.server.requests)

    def texts(self, since: int = 0) -> list[str]:
        """The texts embedded since ``mark``, the client's probe of the dimension left out."""
        return [t for r in self.server.requests[since:] for t in r["body"]["input"] if t != "dimension probe"]

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.server.close()


def manual(name: str, first: int, n: int = HEADINGS) -> str:
    """A runbook of ``n`` headings, one service each (``svc<i>``), every section with its own words."""
    parts = [f"# {name}\n\n逐项巡检下列服务，每一节是一项。"]
    for i in range(first, first + n):
        parts.append(f"## 服务 svc{i} 的巡检\n\n巡检 svc{i} 时先查看监听端口 {20000 + i}，再核对 svc{i} 的告警规则 rule{i}。")
    return "\n\n".join(parts) + "\n"


@pytest.fixture
def home(tmp_path, monkeypatch):
    """An initialised workspace whose embedder is the loopback endpoint (``emb``); AGENTOS_HOME selects it (the
    settings file is read from there) and AGENTOS_NOW pins the clock."""
    home = tmp_path / "ws"
    monkeypatch.delenv("AGENTOS_EMBEDDER", raising=False)
    monkeypatch.setenv("AGENTOS_HOME", str(home))
    monkeypatch.setenv("AGENTOS_NOW", NOW)
    run_cli("init", home=home)
    return home


@pytest.fixture
def emb(home):
    with Embeddings() as e:
        (home / "agentos.toml").write_text(f'embedder = "openai:{e.server.base_url}#fake"\n', encoding="utf-8")
        yield e


def refined(home, **items) -> dict[str, str]:
    """Refine inbox items {title: body} into pending documents; their ids by title."""
    from agentos_mem.kernel.settings import load_settings
    from agentos_mem.knowledge.refine import refine

    for n, (title, body) in enumerate(items.items()):
        item(home, "knowledge/clipping", f"m{n}.md", body, title=title, category="20_methods", source=f"https://example.org/m{n}")
    report = refine(load_settings(home=home, hostname="testhost", llm_base_url=None))
    assert not report["quarantined"] and not report["errors"], report
    return {d["title"]: d["doc_id"] for d in report["refined"]}


def cached_vectors(home) -> int:
    """Rows of the workspace's embedding cache (agent-local/vector_db/cache.db)."""
    con = sqlite3.connect(home / "agent-local/vector_db/cache.db")
    try:
        return con.execute("select count(*) from vectors").fetchone()[0]
    finally:
        con.close()


def sections_of(home, doc_id: str) -> int:
    """How many sections (search units) the document's outline holds."""
    return len(json.loads(run_cli("kb", "show", doc_id, "--json", home=home).stdout)["outline"])


def search(home, query: str, *args) -> dict:
    return json.loads(run_cli("kb", "search", query, "--json", *args, home=home).stdout)


def test_approving_embeds_the_sections_once_and_a_search_embeds_only_its_query(home, emb):
    doc = refined(home, 巡检手册=manual("巡检手册", 1))["巡检手册"]
    sections = sections_of(home, doc)
    assert sections > HEADINGS
    mark, rows = emb.mark(), cached_vectors(home)
    out = run_cli("kb", "approve", doc, home=home).stdout
    embedded = emb.texts(mark)
    sentences = len(embedded) - sections
    assert f"is now ready\n  {sections} section(s) ready for search ({sections} embedded now, and {sentences} of their sentences)" in out
    assert len(embedded) == len(set(embedded)) and sentences > sections  # every section and its sentences, each once
    assert cached_vectors(home) - rows == len(embedded)  # kept: no search embeds them again

    for query in ("svc137 监听端口", "rule42 告警规则"):
        mark, rows = emb.mark(), cached_vectors(home)
        found = search(home, query)  # hybrid, the default
        assert found["mode"] == "hybrid" and found["hits"], found
        assert found["hits"][0]["section"] == f"服务 {query.split()[0].replace('rule', 'svc')} 的巡检"
        assert found["sections"] == sections and found["without_vectors"] == 0 and found["notice"] is None
        assert emb.texts(mark) == [query]  # the query, and not one section
        assert cached_vectors(home) == rows
    mark = emb.mark()
    asked = json.loads(run_cli("kb", "ask", "svc137 的监听端口是多少？", "--json", home=home).stdout)
    assert asked["status"] == "answered" and "20137" in asked["answer"] and asked["notice"] is None
    assert not set(emb.texts(mark)) & set(embedded) and len(emb.texts(mark)) <= 1  # at most the question

    again = json.loads(run_cli("rebuild", "--direct", "--json", home=home).stdout)
    assert again["sections"]["sections"] == sections and again["sections"]["embedded"] == 0  # once


def test_sections_without_vectors_are_found_by_keywords_said_so_until_a_rebuild(home, emb, tmp_path):
    """A document approved while its embedding could not run (the endpoint down: as a crash between approving and
    embedding) is ready and searchable at once, by its keywords; every read says how many sections lack vectors,
    and `agentos rebuild` embeds them."""
    ids = refined(home, 巡检手册=manual("巡检手册", 1), 值班手册=manual("值班手册", 1001))
    first, late = ids["巡检手册"], ids["值班手册"]
    run_cli("kb", "approve", first, home=home)
    emb.down = True
    out = run_cli("kb", "approve", late, home=home).stdout
    assert f"{late} is now ready" in out and "its sections have no vectors yet" in out and "agentos rebuild" in out
    emb.down = False
    n_first, n_late = sections_of(home, first), sections_of(home, late)
    total = n_first + n_late
    notice = f"{n_late} sections of {total} have no vectors yet: answered by keywords for them; run `agentos rebuild`"

    mark, rows = emb.mark(), cached_vectors(home)
    found = search(home, "svc1042 监听端口")
    assert ("服务 svc1042 的巡检", late) in [(h["section"], h["doc_id"]) for h in found["hits"][:3]]  # by its keywords
    assert found["without_vectors"] == n_late and found["sections"] == total and found["notice"].startswith(notice)
    meaning = search(home, "svc7 监听端口")  # the embedded document's sections still fused by meaning
    assert meaning["hits"][0]["doc_id"] == first and meaning["hits"][0]["section"] == "服务 svc7 的巡检"
    text = run_cli("kb", "search", "svc1042 监听端口", home=home).stdout
    assert text.startswith(f"note: {notice}") and "值班手册 › 服务 svc1042 的巡检" in text
    dense = search(home, "svc1042 监听端口", "--mode", "dense")
    assert {h["doc_id"] for h in dense["hits"]} == {first} and "left out of this search by meaning" in dense["notice"]
    assert json.loads(run_cli("kb", "search", "svc1042", "--mode", "bm25", "--json", home=home).stdout)["notice"] is None
    asked = json.loads(run_cli("kb", "ask", "svc1042 的监听端口是多少？", "--json", home=home).stdout)
    assert "21042" in asked["answer"] and asked["notice"].startswith(notice)
    assert f"note: {notice}" in run_cli("kb", "ask", "svc1042 的监听端口是多少？", home=home).stdout
    assert emb.texts(mark) and all(t.startswith("svc") for t in emb.texts(mark))  # queries only, never a section
    assert cached_vectors(home) == rows

    pytest.importorskip("mcp")
    from tests.kit.mcp import data, session

    async def script(s):
        return await s.call_tool("kb_search", {"query": "svc1042 监听端口", "k": 3})

    got, stray = session(home, tmp_path / "mcp.log", script)
    assert not stray and not got.is_error
    assert data(got)["hits"][0]["doc_id"] == late and data(got)["without_vectors"] == n_late
    assert data(got)["notice"].startswith(notice)

    rebuilt = json.loads(run_cli("rebuild", "--direct", "--json", home=home).stdout)
    assert rebuilt["sections"]["embedded"] == n_late
    after = search(home, "svc1042 监听端口")
    assert after["without_vectors"] == 0 and after["notice"] is None and after["hits"][0]["doc_id"] == late
    assert "note:" not in run_cli("kb", "search", "svc1042 监听端口", home=home).stdout
