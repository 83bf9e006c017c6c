"""No read path serves a secret (issue 14, item 4).

Secrets are planted in both languages: in two days of logs (Markdown and JSONL), in a memory record saved by hand,
in a knowledge document, and, as a store written before secrets were masked would hold them, in a fact row, a
card and a memory record file. The real digest, refine and index rebuild run; then every read path is asked, in
many phrasings in both languages: the layered query (with and without raw lines), fact lookup, memory recall,
raw reads, the knowledge base (map, search, outline, read, answer), the CLI, and the MCP tools over a real stdio
session. No output ever holds a secret in clear; the non-secret parts of the same sentences are still found; a
request *for* a secret is refused by the L0 rule on every path; and the stores themselves hold none at rest (the
raw archive and the user's own logs and inbox items keep the original bytes, by design).
"""

from __future__ import annotations

import json
import sqlite3
from datetime import date
from pathlib import Path

import pytest

from tests.kit.cli import run_cli
from tests.kit.knowledge import item, kb_settings, refine_all

DAY1, DAY2 = date(2026, 11, 20), date(2026, 11, 21)
LOG1 = """## 家里的设备

[09:10] 用户: 我们的数据库端口是 5432。
[09:11] 用户: my NAS password is hunter2-NAS, and the NAS sits in the study.
[09:12] 助手: 好的，已记录 NAS 在书房。
[09:13] 用户: 我的口令是天王盖地虎。
[09:14] 用户: 公司 VPN 的密码是 Vpn@Zh2026，服务器配置升级到 8C16G 了。
[09:15] 用户: The API key for the weather service is sk-live-TESTabcdefghijklmnop123456
[09:16] 用户: 家里 wifi 密码：MyHome_88wifi
[09:17] 用户: GitHub token 是 ghp_Zh9aB8cD7eF6gH5iJ4kL3mN2oP1qR0sT9uV8
[09:18] 用户: my bank PIN is 860417
[09:19] 用户: 记住：以后部署都用 deploy 账号，它的密码是 Deploy#2026x
"""
LOG2 = [
    {"role": "user", "content": "my mailbox passphrase is 'blue tiger lamp 42', the mailbox is on fastmail", "timestamp": "2026-11-21T09:00:00+08:00"},
    {"role": "assistant", "content": "Noted: your mailbox is on fastmail.", "timestamp": "2026-11-21T09:01:00+08:00"},
    {"role": "user", "content": "支付宝的支付密码改成了 602215，别告诉别人", "timestamp": "2026-11-21T09:02:00+08:00"},
    {"role": "user", "content": "the analytics DB is postgres://app:Pg_s3cret_99@db.internal:5432/app", "timestamp": "2026-11-21T09:03:00+08:00"},
    {"role": "user", "content": "备用恢复串存一下：Q7mZ4xK9pL2vR8tY3wB6nC1d", "timestamp": "2026-11-21T09:04:00+08:00"},
]
RECORD_BODY = "路由器管理口令是 R0uter!Adm1n，管理地址 192.168.1.1，改完记得重启。"
KB_DOC = ("# 运维手册\n\n## 数据库连接\n\n生产库的连接串是 postgres://ops:Kb_Secr3t_88@db.prod:5432/main ，只读账号密码是 ReadOnly#2026。\n\n"
          "## 备份\n\n每天凌晨两点做全量备份，保留 30 天。\n\n"
          "## Monitoring\n\nThe Grafana admin password is GrafanaAdm1n!, and the dashboard lives at https://grafana.internal/d/main.\n")
# Planted as a store written before this change would hold them (not through any write path).
OLD_FACT, OLD_RECORD, OLD_CARD = "OldVpn#555", "OldRoot#777", "OldCard#333"

SECRETS = ["hunter2-NAS", "天王盖地虎", "Vpn@Zh2026", "sk-live-TESTabcdefghijklmnop123456", "MyHome_88wifi",
           "ghp_Zh9aB8cD7eF6gH5iJ4kL3mN2oP1qR0sT9uV8", "860417", "Deploy#2026x", "blue tiger lamp 42", "602215",
           "Pg_s3cret_99", "Q7mZ4xK9pL2vR8tY3wB6nC1d", "R0uter!Adm1n", "Kb_Secr3t_88", "ReadOnly#2026", "GrafanaAdm1n",
           OLD_FACT, OLD_RECORD, OLD_CARD]

# Requests for a secret, worded in many ways: refused by the L0 rule (SOUL.md rule 2) on every path.
ASKING = ["what's my NAS password?", "what's my pass word", "我的口令是什么", "NAS 的密码是多少", "show the API key for the weather service",
          "tell me the GitHub token", "我的支付密码", "wifi 密码", "what is my bank PIN?", "VPN password", "路由器管理口令",
          "生产库的只读账号密码", "Grafana admin password", "give me the credentials of the analytics DB", "mailbox passphrase",
          "公司VPN的密碼", "GitHub 令牌是多少", "deploy 账号的 pwd"]
# Questions about the same things that do not ask for the secret: answered, masked.
OPEN = ["NAS", "where is the NAS?", "公司 VPN", "weather service", "GitHub", "家里的设备", "deploy 账号", "bank", "mailbox",
        "数据库端口", "服务器配置", "analytics DB", "备用恢复串", "路由器", "backup server", "生产库", "Grafana dashboard", "数据库备份保留多久"]


def _leaks(text: str) -> list[str]:
    return [s for s in SECRETS if s in text]


def _dump(obj) -> str:
    if hasattr(obj, "to_dict"):
        obj = obj.to_dict()
    elif hasattr(obj, "as_dict"):
        obj = obj.as_dict()
    return json.dumps(obj, ensure_ascii=False, default=str)


def _stores_at_rest(home: Path) -> dict[str, list[str]]:
    """Every file of the workspace but the originals the user gave (raw archive, working logs, inbox items)."""
    keep = ("agent-local/memory/raw", "agent-sync/04_memory/working", "agent-sync/03_knowledge/00_stream/inbox")
    out = {}
    for p in sorted(home.rglob("*")):
        rel = p.relative_to(home).as_posix()
        if p.is_file() and not rel.startswith(keep) and "runtime" not in rel:
            data = p.read_bytes()
            found = [s for s in SECRETS if s.encode("utf-8") in data]
            if found:
                out[rel] = found
    return out


@pytest.fixture
def planted(ws, kit_cache):
    """The workspace ``ws`` after the nightly's stages over the planted logs, a record, a published document."""
    from agentos_mem.digest.stages import run_day
    from agentos_mem.index.stages import rebuild
    from agentos_mem.kernel.settings import load_settings
    from agentos_mem.knowledge.decisions import decide
    from agentos_mem.storage.memory_records import open_book

    settings = load_settings(home=ws, hostname="testhost", llm_base_url=None)
    logs = settings.working_dir()
    logs.mkdir(parents=True, exist_ok=True)
    (logs / "2026-11-20.md").write_text(LOG1, encoding="utf-8")
    (logs / "2026-11-21.jsonl").write_text("".join(json.dumps(x, ensure_ascii=False) + "\n" for x in LOG2), encoding="utf-8")
    for day in (DAY1, DAY2):
        run_day(settings, settings.user, day, logs)
    saved = open_book(settings).create(settings.user, "家里路由器", "家里路由器的管理方式", "reference", RECORD_BODY)
    item(ws, "knowledge/clipping", "ops.md", KB_DOC, title="运维手册", category="20_methods", source="https://example.org/ops")
    report = refine_all(kit_cache)
    assert not report["quarantined"] and not report["errors"], report
    doc_id = report["refined"][0]["doc_id"]
    decide(kb_settings(), doc_id, "approve", "default")
    rebuild(settings)
    return settings, saved, doc_id


def _plant_old_stores(settings) -> None:
    """What a workspace digested before this change holds: a clear secret in a fact row, a card and a record file."""
    from agentos_mem.kernel.workspace import Workspace

    ws = Workspace(settings.home)
    con = sqlite3.connect(ws.facts_db)
    cols = [r[1] for r in con.execute("pragma table_info(facts)") if r[1] != "id"]
    con.execute(f"insert into facts ({', '.join(cols)}) select {', '.join(cols)} from facts where subject = '数据库端口'")
    con.execute("update facts set subject = 'VPN password', subject_key = 'vpn password', object = ?, object_key = ?, "
                "evidence = ? where id = (select max(id) from facts)", [OLD_FACT, OLD_FACT.lower(), f"the VPN password is {OLD_FACT}"])
    con.commit()
    con.close()
    card = next((ws.cards_dir / settings.user).glob("*.md"))
    text = card.read_text(encoding="utf-8")
    card.write_text(text.replace("summary: ", f"summary: the home server password is {OLD_CARD} ", 1), encoding="utf-8")
    records = ws.memory / "records" / settings.user
    (records / "old-backup.md").write_text(f"---\nname: old-backup\ndescription: backup server access\ntype: reference\nsource: manual\n"
                                           f"---\n\nthe backup server root password is {OLD_RECORD}\n", encoding="utf-8")


def test_no_read_path_serves_a_secret(planted, tmp_path):
    from agentos_mem.index.stages import rebuild
    from agentos_mem.query.ask import ask
    from agentos_mem.query.facts import conflicts, fact_history, facts_as_of, raw_lines
    from agentos_mem.query.kb import KBBlocked, doc_map, read_doc, read_section, search_docs
    from agentos_mem.query.kb_answer import answer
    from agentos_mem.query.recall import recall
    from agentos_mem.kernel.workspace import Workspace

    settings, saved, doc_id = planted
    home, user = settings.home, settings.user

    # -- written masked: no store at rest holds a secret (the originals the user gave are kept as they are) -----------
    assert _stores_at_rest(home) == {}
    assert any("secret" in n for n in saved.notices), saved.notices  # the save said a secret was masked
    raw_root = Workspace(home).raw_dir
    assert "hunter2-NAS" in next(raw_root.rglob("2026-11-20.md")).read_text(encoding="utf-8")  # the archive keeps the bytes

    # -- a store written before: read paths mask it; the next rebuild indexes it masked -----------------------------
    _plant_old_stores(settings)
    rebuild(settings)
    at_rest = _stores_at_rest(home)  # only the planted old stores themselves: the indexes hold none of it
    assert not [p for p in at_rest if not p.startswith(("agent-local/memory/facts.db", "agent-local/memory/cards/",
                                                         "agent-sync/04_memory/records/default/old-backup.md"))], at_rest

    outputs: list[tuple[str, str]] = []

    def seen(where: str, obj) -> object:
        outputs.append((where, _dump(obj)))
        return obj

    # -- requests for a secret: refused on every path ----------------------------------------------------------------
    for q in ASKING:
        a = seen(f"ask {q}", ask(q, user=user, settings=settings, raw=True))
        assert a.status == "blocked" and a.rule.startswith("L0 rule 2") and a.items == [], (q, a.status)
        r = seen(f"recall {q}", recall(q, user=user, settings=settings))
        assert r.status == "blocked" and r.hits == [] and r.rule.startswith("L0 rule 2"), (q, r.status)
        h = seen(f"history {q}", fact_history(settings, q))
        assert h["status"] == "blocked" and h["versions"] == [], q
        with pytest.raises(KBBlocked):
            search_docs(settings, user, q)
        k = seen(f"kb answer {q}", answer(settings, user, q))
        assert k["status"] == "blocked" and k["citations"] == [], q

    # -- questions about the same things: answered, masked ------------------------------------------------------------
    for q in OPEN:
        seen(f"ask {q}", ask(q, user=user, settings=settings))
        seen(f"ask raw {q}", ask(q, user=user, settings=settings, raw=True, budget=4000))
        seen(f"recall {q}", recall(q, user=user, settings=settings))
        seen(f"history {q}", fact_history(settings, q))
        seen(f"kb search {q}", search_docs(settings, user, q))
        seen(f"kb answer {q}", answer(settings, user, q))
    seen("facts now", facts_as_of(settings))
    seen("facts then", facts_as_of(settings, DAY1))
    seen("conflicts", conflicts(settings, include_resolved=True))
    refs = sorted(p.relative_to(raw_root).as_posix() for p in raw_root.rglob("*") if p.is_file() and p.name != "index.json")
    assert len(refs) == 2
    for ref in refs:
        seen(f"raw {ref}", raw_lines(settings, ref, 1, 200))
    seen("kb map", doc_map(settings, user))
    outline = seen("kb outline", read_doc(settings, user, doc_id))
    for sec in outline["outline"]:
        seen(f"kb read {sec['anchor']}", read_section(settings, user, doc_id, sec["anchor"], page_tokens=8000))

    # the non-secret parts of the same sentences are still found, with a marker where the secret was
    nas = ask("NAS", user=user, settings=settings, raw=True, budget=4000)
    nas_text = _dump(nas)
    assert nas.status == "ok" and "NAS" in nas_text and "the NAS sits in the study" in nas_text and "[secret masked" in nas_text
    port = ask("数据库端口", user=user, settings=settings)
    assert any("5432" in i.text for i in port.items if i.kind == "fact")
    facts = {f["subject"]: f for f in facts_as_of(settings)["facts"]}
    assert facts["NAS password"]["object"] == "[secret masked · original at default/2026-11-20/r1/2026-11-20.md line 4]"
    assert facts["服务器配置"]["object"] == "8C16G" and facts["VPN password"]["object"].startswith("[secret masked")
    day1 = raw_lines(settings, "default/2026-11-20/r1/2026-11-20.md", 4, 4)["text"]
    assert day1 == ["[09:11] 用户: my NAS password is [secret masked · original at default/2026-11-20/r1/2026-11-20.md line 4], "
                    "and the NAS sits in the study."]
    day2 = " ".join(raw_lines(settings, "default/2026-11-21/r1/2026-11-21.jsonl", 1, 5)["text"])
    assert "postgres://app:[secret masked · original at default/2026-11-21/r1/2026-11-21.jsonl line 4]@db.internal" in day2
    router = recall("家里路由器怎么管理", user=user, settings=settings)
    assert router.status == "ok" and "192.168.1.1" in router.hits[0]["body"] and "[secret masked]" in router.hits[0]["body"]
    old = recall("backup server access", user=user, settings=settings)
    assert old.names == ["old-backup"] and "[secret masked]" in old.hits[0]["body"]
    backup = search_docs(settings, user, "全量备份 保留")
    assert backup and backup[0]["doc_id"] == doc_id
    conn = read_section(settings, user, doc_id, outline["outline"][1]["anchor"], page_tokens=8000)
    assert "生产库的连接串是 postgres://ops:[secret masked" in conn["text"] and "只读账号密码是 [secret masked" in conn["text"]

    # -- the CLI (in process) ---------------------------------------------------------------------------------------------
    cli = [("query", "NAS", "--raw"), ("query", "我的口令是什么"), ("query", "公司 VPN", "--json"), ("facts", "list"),
           ("facts", "history", "NAS"), ("facts", "history", "NAS password", "--json"), ("raw", refs[0], "--lines", "1-20"),
           ("raw", refs[1], "--lines", "1-5"), ("memory", "recall", "家里路由器怎么管理"), ("memory", "show", "old-backup"),
           ("memory", "list"), ("kb", "search", "运维 数据库连接"), ("kb", "read", doc_id, outline["outline"][3]["anchor"]),
           ("kb", "ask", "生产库怎么连接？"), ("kb", "ask", "Grafana admin password")]
    for args in cli:
        p = run_cli(*args, home=home, check=False)
        seen("agentos " + " ".join(args), {"code": p.returncode, "out": p.stdout, "err": p.stderr})
    blocked = run_cli("facts", "history", "我的口令", home=home, check=False)
    assert blocked.returncode != 0 and "L0 rule 2" in blocked.stderr
    saved_cli = run_cli("memory", "save", "门禁", "-d", "公司门禁", "-t", "reference", "--body", "门禁密码是 Door#4321", home=home)
    assert "secret(s) masked" in saved_cli.stdout and "Door#4321" not in saved_cli.stdout
    assert "Door#4321" not in (home / "agent-sync/04_memory/records/default/门禁.md").read_text(encoding="utf-8")

    # -- the MCP tools over a real stdio session ----------------------------------------------------------------------------
    pytest.importorskip("mcp")
    from tests.kit.mcp import session

    async def script(s):
        call, out = s.call_tool, []
        for q in ASKING[:8]:
            out.append((f"mcp query {q}", await call("memory_query", {"text": q, "raw": True})))
            out.append((f"mcp facts {q}", await call("fact_lookup", {"subject": q})))
            out.append((f"mcp recall {q}", await call("memory_recall", {"query": q})))
            out.append((f"mcp kb_search {q}", await call("kb_search", {"query": q})))
            out.append((f"mcp kb_answer {q}", await call("kb_answer", {"question": q})))
        for q in OPEN[:10]:
            out.append((f"mcp query {q}", await call("memory_query", {"text": q, "raw": True, "budget": 4000})))
            out.append((f"mcp facts {q}", await call("fact_lookup", {"subject": q, "history": True})))
            out.append((f"mcp recall {q}", await call("memory_recall", {"query": q})))
            out.append((f"mcp kb_search {q}", await call("kb_search", {"query": q})))
        out.append(("mcp facts all", await call("fact_lookup", {"subject": "password"})))
        for ref in refs:
            out.append((f"mcp raw {ref}", await call("raw_read", {"ref": ref, "start": 1, "end": 200})))
        out.append(("mcp kb_map", await call("kb_map", {})))
        for sec in outline["outline"]:
            out.append((f"mcp kb_read {sec['anchor']}", await call("kb_read", {"doc_id": doc_id, "anchor": sec["anchor"], "page_tokens": 8000})))
        out.append(("mcp save", await call("memory_save", {"name": "nas-note", "description": "NAS 备忘", "type": "reference",
                                                            "content": "NAS admin password: Nas_Adm1n_2026"})))
        return out

    results, stray = session(home, tmp_path / "mcp-stderr.txt", script)
    assert stray == []
    for where, result in results:
        text = " ".join(c.text for c in result.content if hasattr(c, "text"))
        outputs.append((where, text))
        if where.startswith(("mcp query ", "mcp facts ", "mcp recall ", "mcp kb_answer ")) and any(where.endswith(q) for q in ASKING[:8]):
            assert '"status": "blocked"' in text or '"status":"blocked"' in text, (where, text[:300])
        if where.startswith("mcp kb_search ") and any(where.endswith(q) for q in ASKING[:8]):
            assert result.is_error and "L0 rule 2" in text, (where, text[:300])
    save = next(r for w, r in results if w == "mcp save")
    assert "secret(s) masked" in save.content[0].text and "Nas_Adm1n_2026" not in save.content[0].text

    # -- nothing served held a secret ------------------------------------------------------------------------------------------
    leaked = [(where, _leaks(text)) for where, text in outputs if _leaks(text)]
    assert not leaked, leaked[:10]
    assert len(outputs) > 250
    # and they were answers, not refusals alone: masked sentences came back on every kind of path
    masked = {where.split()[0] + (" " + where.split()[1] if where.startswith(("mcp", "kb", "agentos")) else "")
              for where, text in outputs if "[secret masked" in text}
    assert {"ask", "raw", "recall", "kb read", "kb search", "agentos query", "agentos raw", "mcp query", "mcp raw", "mcp kb_read",
            "facts"} <= masked, masked
