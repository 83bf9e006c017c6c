"""The knowledge base on real files for tests: inbox items, refine runs that load the embedder once per module,
and two documents (PG, RUNBOOK) that answer questions in Chinese and in English.

The fixtures ``ws`` and ``kit_cache`` are registered for every test folder by tests/conftest.py.
"""

from __future__ import annotations

from contextlib import contextmanager
from datetime import date
from pathlib import Path

import pytest

TODAY = date(2026, 11, 30)

LONG = "\n\n".join(f"第{i}条：订阅端按事务顺序应用变更，每个事务提交后才对订阅者可见。" for i in range(1, 61))
PG = ("# PostgreSQL 逻辑复制\n\nPostgreSQL 的逻辑复制把数据变更按表发送给订阅者。\n\n"
      "## 概念\n\n逻辑复制基于发布和订阅：发布端定义发布，订阅端创建订阅。一个订阅可以订阅多个发布。\n\n"
      "## 配置\n\n需要把 wal_level 设为 logical，并重启数据库。发布端还要允许复制连接。\n\n"
      f"## 事务顺序\n\n{LONG}\n")
RUNBOOK = ("# Backup runbook\n\n## Steps\n\nStop writes first. Export a snapshot of the database. "
           "Verify the checksum of the snapshot, then upload it to object storage.\n\n"
           "## Retention\n\nDaily snapshots are kept for 30 days. Monthly snapshots are kept for one year.\n")


def _new_workspace(home: Path, mp: pytest.MonkeyPatch) -> Path:
    """Create a workspace at ``home`` and select it through AGENTOS_HOME (hostname testhost, no chat model)."""
    from agentos_mem.kernel.workspace import init_workspace

    init_workspace(home)
    mp.setenv("AGENTOS_HOME", str(home))
    mp.setenv("AGENTOS_HOSTNAME", "testhost")
    mp.delenv("AGENTOS_LLM_BASE_URL", raising=False)
    return home


@pytest.fixture
def ws(tmp_path, monkeypatch):
    """A fresh workspace, selected through AGENTOS_HOME (hostname testhost, no chat model)."""
    return _new_workspace(tmp_path / "home", monkeypatch)


@contextmanager
def module_ws(tmp_path_factory, name: str):
    """``ws`` for a module-scoped fixture (documents refined once for the module): a fresh workspace under
    ``tmp_path_factory.mktemp(name)``, selected until the block ends (the ``monkeypatch`` fixture is per test)."""
    home = tmp_path_factory.mktemp(name) / "home"
    with pytest.MonkeyPatch.context() as mp:
        yield _new_workspace(home, mp)


@pytest.fixture(scope="module")
def kit_cache():
    """Where ``refine_kit`` keeps the embedder and tokenizer: loaded once per test module."""
    return {}


def kb_settings(**kw):
    """The workspace's settings (``load_settings(**kw)``), imported late like the rest of the project."""
    from agentos_mem.kernel.settings import load_settings

    return load_settings(**kw)


def refine_kit(settings, kit_cache):
    """The refine kit (embedder, tokenizer, taxonomy, reliability lists, no chat client), the models cached."""
    from agentos_mem.knowledge.refine import make_kit

    if "kit" not in kit_cache:  # the embedder and tokenizer load once for the module
        kit_cache["kit"] = make_kit(settings)
    kit = dict(kit_cache["kit"])
    from agentos_mem.knowledge.review import load_reliability
    from agentos_mem.knowledge.taxonomy import load_taxonomy
    from agentos_mem.knowledge.refine import kb_paths

    kit.update(taxonomy=load_taxonomy(settings), lists=load_reliability(kb_paths(settings)["reliability"]), client=None)
    return kit


def item(home: Path, part: str, name: str, body: str, **meta) -> Path:
    """Write an inbox item ``inbox/<part>/<name>``: ``body`` under a YAML frontmatter of ``meta`` (none if empty)."""
    import yaml

    path = home / "agent-sync/03_knowledge/00_stream/inbox" / part / name
    path.parent.mkdir(parents=True, exist_ok=True)
    head = yaml.safe_dump(meta, allow_unicode=True, sort_keys=False) if meta else ""
    path.write_text((f"---\n{head}---\n" if meta else "") + body, encoding="utf-8")
    return path


def refine_all(kit_cache, today=TODAY, **kw):
    """Refine everything in the inbox (settings from ``kb_settings(**kw)``); return refine's report."""
    from agentos_mem.knowledge.refine import refine

    s = kb_settings(**kw)
    return refine(s, kit=refine_kit(s, kit_cache), today=today)


def refine_clean(kit_cache) -> dict[str, str]:
    """``refine_all`` for tests whose inbox must refine without quarantine or errors: the new documents' ids by title."""
    report = refine_all(kit_cache)
    assert not report["quarantined"] and not report["errors"], report
    return {d["title"]: d["doc_id"] for d in report["refined"]}


def answer_items(home: Path) -> None:
    """The inbox of the answer tests (kb_answer, the MCP kb tools): PG and RUNBOOK, to be published; a document
    left pending and bob's personal note, whose answers no one else may be given."""
    clip = "knowledge/clipping"
    item(home, clip, "pg.md", PG, title="PostgreSQL 逻辑复制", category="10_concepts/cs", source="https://example.org/pg")
    item(home, clip, "runbook.md", RUNBOOK, title="Backup runbook", category="20_methods", source="https://example.org/runbook")
    item(home, clip, "pending.md", "# 斑马集群\n\n斑马集群的迁移窗口是每周六凌晨两点。\n", title="斑马集群", category="10_concepts/cs")
    item(home, "personal", "bob.md", "# Kangaroo notes\n\nThe kangaroo cluster quota is 40 GB per tenant.\n", title="Kangaroo notes",
         scope="personal", owner="bob", category="10_concepts/cs")


def write_selection(home: Path, name: str, text: str) -> Path:
    """Write the knowledge selection ``name`` (YAML ``text``); returns the selections folder."""
    sel = home / "agent-sync/03_knowledge/99_system/selections"
    sel.mkdir(parents=True, exist_ok=True)
    (sel / f"{name}.yaml").write_text(text, encoding="utf-8")
    return sel
