"""collect-to-inbox: material, clippings, feeds, tools, personal notes and memory cards into the inbox.

What a user notices: where each item lands and the provenance it carries, that sources stay untouched, that
nothing is collected twice, what is refused and why, and that feeds come from a real (loopback) HTTP server.
"""

from __future__ import annotations

import hashlib
import json
import os
import threading
from datetime import datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import frontmatter
import pytest

from agentos_mem.knowledge.collect import collect, collect_markdown, load_sources, registry_path, sources_file
from agentos_mem.kernel.settings import load_settings
from agentos_mem.kernel.workspace import init_workspace

INBOX = "agent-sync/03_knowledge/00_stream/inbox"


@pytest.fixture
def home(tmp_path, monkeypatch) -> Path:
    home = tmp_path / "home"
    init_workspace(home)
    monkeypatch.setenv("AGENTOS_HOME", str(home))
    monkeypatch.delenv("AGENTOS_TIMEZONE", raising=False)
    return home


def settings(home: Path):
    return load_settings(home=home, user="alice", timezone="Asia/Shanghai")


def materials(home: Path) -> Path:
    return home / "agent-local" / "materials"


def write(path: Path, text: str | bytes) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8")
    return path


def inbox_files(home: Path, partition: str = "") -> list[Path]:
    return sorted(p for p in (home / INBOX / partition).rglob("*.md") if not p.name.startswith("."))


def tree(root: Path) -> dict:
    """Every file under root: bytes and mtime."""
    return {str(p.relative_to(root)): (p.read_bytes(), p.stat().st_mtime_ns) for p in sorted(root.rglob("*")) if p.is_file()}


def item(path: Path) -> tuple[dict, str]:
    post = frontmatter.load(path)
    return dict(post.metadata), post.content


def by_title(home: Path, title: str) -> Path:
    found = [p for p in inbox_files(home) if item(p)[0].get("title") == title]
    assert len(found) == 1, f"{title!r}: {[str(p) for p in inbox_files(home)]}"
    return found[0]


def add_sources(home: Path, extra_yaml: str, *, replace: tuple[str, str] = ("", "")) -> None:
    """Append entries to the default sources.yaml (written on first use), as a user would edit it."""
    s = settings(home)
    load_sources(s)  # writes the commented default
    path = sources_file(s)
    text = path.read_text(encoding="utf-8")
    if replace[0]:
        assert replace[0] in text
        text = text.replace(*replace)
    path.write_text(text + extra_yaml, encoding="utf-8")


# -- folders, provenance, sources untouched -------------------------------------------------------------------
NOTE = "---\ntitle: 深度学习入门\ntags: [ai, 笔记]\ndate: 2026-01-02\n---\n\n# 第一章\n\n神经网络由层组成。反向传播计算梯度。\n"


def test_folder_material_lands_in_personal_with_provenance(home, monkeypatch):
    # 17:30 UTC on the last day of November is already 1 December in Asia/Shanghai: the item is named
    # for the workspace's day, whatever the host's clock says.
    monkeypatch.setenv("AGENTOS_NOW", "2026-11-30T17:30:00+00:00")
    src = write(materials(home) / "读书笔记.md", NOTE)
    write(materials(home) / "ideas.txt", "A plain text idea.\r\nSecond line.\r\n")
    before = tree(materials(home))

    r = collect(settings(home), "alice")

    assert sources_file(settings(home)).read_text(encoding="utf-8").startswith("# Sources for `agentos collect`")
    assert {c["partition"] for c in r["collected"]} == {"personal"} and len(r["collected"]) == 2
    assert r["refused"] == [] and r["errors"] == []
    path = by_title(home, "深度学习入门")
    assert path.parent == home / INBOX / "personal" and path.name == "20261201_深度学习入门.md"
    meta, body = item(path)
    assert body == "# 第一章\n\n神经网络由层组成。反向传播计算梯度。"  # the source's body, its own frontmatter not repeated
    assert meta["source"] == src.relative_to(home).as_posix() and meta["source_type"] == "folder"  # synced: no local path
    assert meta["scope"] == "personal" and meta["owner"] == "alice"
    assert meta["content_hash"] == hashlib.sha256(body.encode()).hexdigest()
    fetched = datetime.fromisoformat(meta["fetched_at"])
    assert fetched.utcoffset().total_seconds() == 8 * 3600
    assert meta["source_meta"]["tags"] == ["ai", "笔记"] and meta["source_meta"]["date"] == "2026-01-02"
    # a .txt: its first-line-free title is the file name; Windows line ends normalised
    meta, body = item(by_title(home, "ideas"))
    assert body == "A plain text idea.\nSecond line." and meta["source"].endswith("ideas.txt")
    assert tree(materials(home)) == before  # sources never changed, moved or touched


def test_rerun_collects_nothing_and_changes_nothing(home):
    write(materials(home) / "a.md", "# Alpha\n\nfirst\n")
    write(materials(home) / "personal" / "日记.md", "今天读完了《三体》。\n")
    first = collect(settings(home), "alice")
    assert len(first["collected"]) == 2
    snapshot = tree(home / "agent-sync")

    again = collect(settings(home), "alice")
    assert again["collected"] == [] and again["duplicates"] == 2
    assert tree(home / "agent-sync") == snapshot


def test_same_content_in_two_places_is_collected_once(home):
    text = "# Same\n\n同一段内容，放在两个地方。\n"
    write(materials(home) / "one.md", text)
    write(materials(home) / "tools" / "two.md", text)
    write(materials(home) / "clippings" / "three.md", "---\nurl: https://example.com/same\n---\n" + text)  # same body
    r = collect(settings(home), "alice")
    assert len(r["collected"]) == 1 and r["duplicates"] == 2
    assert len(inbox_files(home)) == 1


def test_changed_content_is_collected_again_but_refined_items_are_not(home):
    src = write(materials(home) / "plan.md", "# 计划\n\n周一：写代码。\n")
    collect(settings(home), "alice")
    (first,) = inbox_files(home)
    first.rename(home / "agent-sync/03_knowledge/20_methods" / first.name)  # refine took it out of the inbox
    assert collect(settings(home), "alice")["collected"] == []  # not collected again

    src.write_text("# 计划\n\n周一：写代码。周二：测试。\n", encoding="utf-8")
    r = collect(settings(home), "alice")
    assert len(r["collected"]) == 1
    (second,) = inbox_files(home)
    assert item(second)[1].endswith("周二：测试。")
    # the same name on the same day stays unique
    src.write_text("# 计划\n\n第三版。\n", encoding="utf-8")
    collect(settings(home), "alice")
    names = sorted(p.name for p in inbox_files(home))
    assert len(names) == 2 and names[0] != names[1] and all("计划" in n for n in names)
    registry = [json.loads(line) for line in registry_path(settings(home)).read_text(encoding="utf-8").splitlines()]
    assert len(registry) == 3 and len({e["content_hash"] for e in registry}) == 3


def test_clippings_keep_their_source_url_and_broken_frontmatter_still_collects(home):
    clip = materials(home) / "clippings"
    write(clip / "rrf.md", "---\ntitle: Reciprocal Rank Fusion\nurl: https://example.com/rrf\nauthor: Cormack\n---\nRRF sums 1/(k+rank).\n")
    write(clip / "中文剪藏.md", "---\nsource: https://example.cn/文章\n---\n# 检索增强生成\n\n先检索，再生成。\n")
    write(clip / "broken.md", "---\ntitle: [unclosed\nsource: https://lost.example\n---\n正文仍然保留。\n")
    r = collect(settings(home), "alice")

    assert {c["partition"] for c in r["collected"]} == {"knowledge/clipping"} and len(r["collected"]) == 3
    meta, body = item(by_title(home, "Reciprocal Rank Fusion"))
    assert meta["source"] == "https://example.com/rrf" and meta["source_type"] == "clipping"
    assert meta["source_file"] == (clip / "rrf.md").relative_to(home).as_posix() and meta["source_meta"]["author"] == "Cormack"
    assert item(by_title(home, "检索增强生成"))[0]["source"] == "https://example.cn/文章"
    meta, body = item(by_title(home, "broken"))
    assert body == "正文仍然保留。" and meta["source"] == (clip / "broken.md").relative_to(home).as_posix()
    assert any(w.startswith("broken.md:") and "source URL unknown" in w for w in r["warnings"])
    assert "source URL unknown" in meta["collect_warnings"][0]


def test_partition_and_scope_are_configurable_per_source(home, tmp_path):
    team = write(tmp_path / "team-docs" / "部署手册.md", "# 部署手册\n\n先备份，再升级。\n").parent
    add_sources(home, f"  - name: team docs\n    type: folder\n    path: {team}\n    partition: tools\n    scope: system\n"
                      "  - name: nonsense\n    type: podcast\n    path: somewhere\n"
                      f"  - name: gone\n    type: folder\n    path: {tmp_path / 'nowhere'}\n")
    r = collect(settings(home), "alice")
    meta, _ = item(by_title(home, "部署手册"))
    assert by_title(home, "部署手册").parent == home / INBOX / "tools"
    assert meta["scope"] == "system" and meta["source_type"] == "folder"
    assert any("podcast" in e for e in r["errors"]) and any("nowhere" in e and "does not exist" in e for e in r["errors"])
    assert r["per_source"]["team docs"]["collected"] == 1


# -- refused input --------------------------------------------------------------------------------------------
def test_refused_formats_are_named_quarantined_and_the_rest_is_collected(home):
    m = materials(home)
    write(m / "paper.pdf", b"%PDF-1.7\n%\xe2\xe3\xcf\xd3\n1 0 obj\n")
    write(m / "合同.docx", b"PK\x03\x04\x14\x00\x06\x00")
    write(m / "fake.md", b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")
    write(m / "gbk.txt", "中文内容".encode("gbk"))
    write(m / "huge.md", "# Huge\n\n" + "很长的内容。" * 700)  # ~12 KB, over the 0.01 MB limit below
    write(m / "good.md", "# 好文件\n\n这一篇可以收集。\n")
    add_sources(home, "", replace=("max_file_mb: 2\n", "max_file_mb: 0.01\n"))

    r = collect(settings(home), "alice")

    assert [c["title"] for c in r["collected"]] == ["好文件"]
    reasons = {Path(x["file"]).name: x["reason"] for x in r["refused"]}
    assert set(reasons) == {"paper.pdf", "合同.docx", "fake.md", "gbk.txt", "huge.md"}
    for name, reason in reasons.items():
        assert reason.startswith(f"{name}:") and "convert" in reason and "Markdown" in reason
    assert "PDF" in reasons["paper.pdf"] and "Word" in reasons["合同.docx"]
    assert "binary" in reasons["fake.md"] and "UTF-8" in reasons["gbk.txt"] and "limit" in reasons["huge.md"]
    quarantine = [json.loads(line) for line in (home / "agent-local/logs/quarantine.jsonl").read_text(encoding="utf-8").splitlines()]
    assert {Path(q["file"]).name for q in quarantine if q["stage"] == "collect"} == set(reasons)
    assert all(q["user"] == "alice" and q["reason"] == reasons[Path(q["file"]).name] for q in quarantine)
    md = collect_markdown(r)
    assert "## Refused" in md and all(name in md for name in reasons)
    # a re-run lists them again (they are still there) but quarantine.jsonl does not grow
    assert len(collect(settings(home), "alice")["refused"]) == 5
    assert len((home / "agent-local/logs/quarantine.jsonl").read_text(encoding="utf-8").splitlines()) == len(quarantine)


def test_symlinks_out_of_the_folder_are_refused_not_followed(home, tmp_path):
    outside = write(tmp_path / "outside" / "secret.md", "# Secret\n\nprivate key material\n")
    m = materials(home)
    os.symlink(outside, m / "innocent.md")
    os.symlink(outside.parent, m / "linked-dir")
    write(m / "real.md", "# Real\n\ninside the folder\n")
    os.symlink(m / "real.md", m / "alias.md")  # a link that stays inside: fine (and the same text, once)
    r = collect(settings(home), "alice")

    refused = {Path(x["file"]).name: x["reason"] for x in r["refused"]}
    assert set(refused) == {"innocent.md", "linked-dir"}
    assert all("outside the source folder" in why and "not followed" in why for why in refused.values())
    assert [c["title"] for c in r["collected"]] == ["Real"] and r["duplicates"] == 1
    assert not any("private key" in p.read_text(encoding="utf-8") for p in inbox_files(home))


def test_pipes_and_sockets_in_a_source_are_refused_without_blocking(home, tmp_path):
    """A FIFO named like a note would block a reader forever; a socket cannot be read: both are refused with the
    reason, never opened for reading, and the rest of the folder is collected."""
    import signal
    import socket

    m = materials(home)
    write(m / "real.md", "# Real\n\ninside the folder\n")
    os.mkfifo(m / "pipe.md")
    sock = socket.socket(socket.AF_UNIX)
    sock.bind(str(m / "sock.md"))
    os.mkfifo(tmp_path / "outside-pipe")
    os.symlink(m / "pipe.md", m / "link-to-pipe.md")
    signal.signal(signal.SIGALRM, lambda *_: (_ for _ in ()).throw(TimeoutError("collect blocked on a pipe")))
    signal.alarm(60)
    try:
        r = collect(settings(home), "alice")
    finally:
        signal.alarm(0)
        sock.close()
    refused = {Path(x["file"]).name: x["reason"] for x in r["refused"]}
    assert "named pipe (FIFO), not a regular file" in refused["pipe.md"] and "socket" in refused["sock.md"]
    assert "not a file" in refused["link-to-pipe.md"]
    assert [c["title"] for c in r["collected"]] == ["Real"]


# -- memory cards -----------------------------------------------------------------------------------------------
def test_memory_cards_go_to_the_memory_partition_readable_by_the_memory_stage(home):
    write(materials(home) / "memory" / "偏好.md", "---\ntype: feedback\ndescription: 回答尽量简短\n---\n用户希望回答简短，先给结论。\n")
    r = collect(settings(home), "alice")
    (card,) = inbox_files(home, "memory")
    assert r["collected"][0]["partition"] == "memory"
    meta, _ = item(card)
    assert meta["source_type"] == "memory" and meta["type"] == "feedback" and meta["user"] == "alice"
    from agentos_mem.memory.inbox import read_card

    cand = read_card(card, "someone-else")
    assert cand["user"] == "alice" and cand["type"] == "feedback" and cand["description"] == "回答尽量简短"


# -- feeds from a loopback HTTP server ---------------------------------------------------------------------------
RSS = """<?xml version="1.0" encoding="UTF-8"?>
<rss version="2.0"><channel><title>技术周刊</title><link>https://example.com/</link><description>每周</description>
<item><title>向量数据库入门</title><link>https://example.com/posts/vector-db</link>
<pubDate>Mon, 02 Mar 2026 08:00:00 GMT</pubDate>
<description><![CDATA[<p>ChromaDB 是一个<b>嵌入式</b>向量库。详见<a href="https://docs.trychroma.com/">官方文档</a>。</p><script>alert(1)</script>]]></description></item>
<item><title>Release notes 1.2</title><link>https://example.com/posts/release-1-2</link>
<pubDate>Tue, 03 Mar 2026 10:30:00 GMT</pubDate><description>Bug fixes and a faster index.</description></item>
</channel></rss>
"""
ATOM = """<?xml version="1.0" encoding="utf-8"?>
<feed xmlns="http://www.w3.org/2005/Atom"><title>Atom Example</title><id>urn:example:feed</id>
<updated>2026-03-04T09:00:00Z</updated>
<entry><title>Hybrid retrieval with RRF</title><link href="https://example.org/rrf"/><id>urn:example:1</id>
<published>2026-03-04T09:00:00Z</published><updated>2026-03-04T09:00:00Z</updated>
<content type="html">&lt;h2&gt;Why fuse&lt;/h2&gt;&lt;p&gt;BM25 and vectors &lt;em&gt;complement&lt;/em&gt; each other.&lt;/p&gt;</content></entry>
</feed>
"""


class FeedServer:
    """Serves fixed bytes per path on 127.0.0.1; anything else is a 404."""

    def __init__(self, files: dict[str, tuple[str, bytes]], *, fail_first: dict[str, int] | None = None):
        """``fail_first``: path -> how many requests get a 503 before it is served."""
        self.hits: list[str] = []
        fails = dict(fail_first or {})
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *a):
                pass

            def do_GET(self):
                outer.hits.append(self.path)
                ctype, data = files.get(self.path, ("text/plain", b"not found"))
                status = 200 if self.path in files else 404
                if fails.get(self.path, 0) > 0:
                    fails[self.path] -= 1
                    status, data = 503, b"busy"
                self.send_response(status)
                self.send_header("Content-Type", ctype)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.httpd.shutdown()
        self.httpd.server_close()


def test_rss_and_atom_feeds_from_a_loopback_server(home, tmp_path):
    local = write(tmp_path / "saved.xml", RSS.replace("向量数据库入门", "本地订阅").replace("ChromaDB 是", "本地文件里 ChromaDB 是")
                  .replace("Bug fixes", "Local bug fixes"))
    with FeedServer({"/rss.xml": ("application/rss+xml; charset=utf-8", RSS.encode()),
                     "/atom.xml": ("application/atom+xml", ATOM.encode())}) as srv:
        add_sources(home, f"  - name: 技术周刊\n    type: feed\n    url: {srv.url}/rss.xml\n    scope: system\n"
                          f"  - name: atom\n    type: feed\n    url: {srv.url}/atom.xml\n"
                          f"  - name: gone\n    type: feed\n    url: {srv.url}/missing.xml\n"
                          f"  - name: saved\n    type: feed\n    path: {local}\n")
        r = collect(settings(home), "alice")
        assert {"/rss.xml", "/atom.xml", "/missing.xml"} <= set(srv.hits)

        feed_items = inbox_files(home, "knowledge/feed")
        assert len(feed_items) == 5 and len(r["collected"]) == 5
        meta, body = item(by_title(home, "向量数据库入门"))
        assert meta["source_type"] == "feed" and meta["feed"] == f"{srv.url}/rss.xml" and meta["scope"] == "system"
        assert meta["link"] == meta["source"] == "https://example.com/posts/vector-db"
        assert meta["published"] == "2026-03-02T16:00:00+08:00" and meta["feed_title"] == "技术周刊"
        assert body == "ChromaDB 是一个嵌入式向量库。详见[官方文档](https://docs.trychroma.com/)。"  # tags stripped, link kept
        assert meta["content_hash"] == hashlib.sha256(body.encode()).hexdigest()
        meta, body = item(by_title(home, "Hybrid retrieval with RRF"))
        assert meta["link"] == "https://example.org/rrf" and meta["published"] == "2026-03-04T17:00:00+08:00"
        assert body == "## Why fuse\n\nBM25 and vectors complement each other."
        assert item(by_title(home, "本地订阅"))[0]["feed"] == str(local)

        # the 404 is reported (naming the URL), the other feeds and sources went on
        assert r["per_source"]["gone"]["status"] == "failed"
        assert any("missing.xml" in e and "404" in e for e in r["errors"])
        assert "404" in (home / "agent-local/logs/errors.log").read_text(encoding="utf-8")

        again = collect(settings(home), "alice")
        assert again["collected"] == [] and again["duplicates"] == 5


def test_a_feed_that_is_not_a_feed_is_reported(home):
    with FeedServer({"/page": ("text/html", b"<html><body><p>just a web page</p></body></html>")}) as srv:
        add_sources(home, f"  - name: page\n    type: feed\n    url: {srv.url}/page\n")
        write(materials(home) / "still.md", "# Still collected\n\nyes\n")
        r = collect(settings(home), "alice")
    assert r["per_source"]["page"]["status"] == "failed" and any("not" in e and "feed" in e for e in r["errors"])
    assert [c["title"] for c in r["collected"]] == ["Still collected"]


def test_broken_sources_file_is_a_clear_error(home):
    from agentos_mem.knowledge.collect import SourcesError

    path = sources_file(settings(home))
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("sources:\n  - type: folder\n   path: [oops\n", encoding="utf-8")
    with pytest.raises(SourcesError, match="sources.yaml.*not valid YAML"):
        collect(settings(home), "alice")


# -- the Prefect flow and the CLI command ---------------------------------------------------------------------------
@pytest.mark.usefixtures("prefect_harness")
def test_collect_flow_publishes_an_artifact(home):
    import asyncio

    from prefect.client.orchestration import get_client

    from agentos_mem.flows.collect import collect_to_inbox

    async def read():
        async with get_client() as c:
            return await c.read_latest_artifacts()

    write(materials(home) / "会议纪要.md", "# 周会纪要\n\n决定下周上线检索服务。\n")
    write(materials(home) / "slides.pptx", b"PK\x03\x04")
    with FeedServer({"/atom.xml": ("application/atom+xml", ATOM.encode())}, fail_first={"/atom.xml": 1}) as srv:
        add_sources(home, f"  - name: flaky\n    type: feed\n    url: {srv.url}/atom.xml\n"
                          f"  - name: gone\n    type: feed\n    url: {srv.url}/missing.xml\n")
        r = collect_to_inbox(user="alice")
        # a 503 is retried by Prefect and the feed collected; a 404 is not retried, only reported
        assert srv.hits.count("/atom.xml") == 2 and srv.hits.count("/missing.xml") == 1
        assert sorted(c["title"] for c in r["collected"]) == ["Hybrid retrieval with RRF", "周会纪要"] and len(r["refused"]) == 1
        assert r["per_source"]["gone"]["status"] == "failed"
        (art,) = [a for a in asyncio.run(read()) if a.key == "collect-alice-latest"]
        assert "周会纪要" in art.data and "slides.pptx" in art.data and "convert it to Markdown" in art.data
        assert "missing.xml" in art.data and "404" in art.data

        again = collect_to_inbox(user="alice")
    assert again["collected"] == [] and again["duplicates"] == 2 and len(again["errors"]) == 1  # a re-run adds nothing


@pytest.mark.usefixtures("prefect_harness")
def test_cli_collect_runs_the_flow(home, capsys):
    import argparse

    from agentos_mem.cli.knowledge import add_parser

    write(materials(home) / "tools" / "jq.md", "# jq 速查\n\n`jq '.items[]'` 逐项输出。\n")
    parser = argparse.ArgumentParser(prog="agentos")
    add_parser(parser.add_subparsers(dest="command"), "collect")
    args = parser.parse_args(["collect", "--user", "alice", "--json", "--quiet"])
    saved = dict(os.environ)
    try:
        assert args.fn(args) == 0
    finally:
        os.environ.clear()
        os.environ.update(saved)
    out = json.loads(capsys.readouterr().out)
    assert out["collected"][0]["partition"] == "tools" and out["collected"][0]["title"] == "jq 速查"


def test_a_file_outside_the_workspace_is_named_without_its_local_path(home, tmp_path):
    """Issue 25: synced files (the inbox item, the collect registry, a mask marker) never name a local absolute path:
    a source folder outside the workspace, listed without a name, is named by its folder's last part."""
    outside = tmp_path / "outside" / "team-docs"
    write(outside / "runbooks" / "ops.md", "# 运维\n\n交换机账号 admin / Kq7#mZ2pX，只能从跳板机登录。\n")
    sources = sources_file(settings(home))
    collect(settings(home), "alice")  # writes the default sources.yaml
    sources.write_text(sources.read_text(encoding="utf-8") + f"  - type: folder\n    path: {outside}\n", encoding="utf-8")
    r = collect(settings(home), "alice")
    assert len(r["collected"]) == 1 and r["collected"][0]["source"] == "team-docs:runbooks/ops.md", r
    (path,) = inbox_files(home)
    meta, body = item(path)
    assert meta["source"] == meta["source_file"] == "team-docs:runbooks/ops.md"
    assert "Kq7#mZ2pX" not in body and "admin / [secret masked · original at team-docs:runbooks/ops.md]" in body
    for synced in (path, registry_path(settings(home))):
        assert str(tmp_path) not in synced.read_text(encoding="utf-8"), synced
