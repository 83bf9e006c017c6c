"""Credentials without a cue word are never served, and a disguised request for a password is refused (issue 25,
item 2), through the interfaces a user has.

A day's log holds the corpus's credential lines (tests/kit/bad_secrets.py: ``user / password``, ``user:password``,
``user:password@host``, unlock codes, PINs, 验证码, 解锁码); a knowledge document collected from a source folder
holds others. The real digest, collect, refine, approval and index rebuild run. Then ``agentos query --raw``,
``agentos raw``, ``agentos facts list --json``, ``agentos kb search / ask / read`` (in process) and the MCP tools
over a real stdio session (``memory_query``, ``fact_lookup``, ``raw_read``, ``kb_search``, ``kb_answer``,
``kb_read``) never return a secret; no store at rest holds one (the raw archive and the user's own log keep the
bytes the user gave: the markers point there); no synced file holds one or names a local absolute path. Requests
for a password with zero-width characters, letters spaced one by one or full-width letters are refused by the L0
rule like the plain one; innocent ones are answered.
"""

from __future__ import annotations

import json
import re
from datetime import date
from pathlib import Path

import pytest

from tests.kit.bad_secrets import DISGUISED, INNOCENT, PAIRS
from tests.kit.cli import run_cli
from tests.kit.knowledge import kb_settings, module_ws, refine_all

DAY = date(2026, 11, 20)
LOG = ("## 设备和账号\n\n" + "".join(f"[09:{i:02d}] 用户: {line}\n" for i, (line, _, _) in enumerate(PAIRS, 1))
       + "[09:59] 用户: 我们的数据库端口是 5433。\n")
KB_DOC = ("---\ntitle: 机房运维手册\nsource: https://example.org/ops-manual\n---\n\n# 机房运维手册\n\n## 交换机\n\n"
          "核心交换机的管理账号 admin / Kq7#mZ2pX，只能从跳板机登录。\n\n"
          "## 数据库主机\n\nThe database host is reached as root:Vx9$Lp2w@10.0.0.5 from the bastion; the replica with "
          "postgres://repl:Rp4%tG7wQz@10.0.0.6:5432/main.\n\n"
          "## 门禁\n\n机房门禁的解锁码是 3308-1947-2265，每月更换。\n\n"
          "## 巡检\n\nEvery Monday the on-call engineer checks the UPS at 10:30 and files the report under ops/weekly.\n")
KB_SECRETS = ["Kq7#mZ2pX", "Vx9$Lp2w", "Rp4%tG7wQz", "3308-1947-2265"]
SECRETS = [s for _, s, _ in PAIRS] + KB_SECRETS
QUESTIONS = ["NAS", "备份盘", "192.168.1.10", "跳板机", "staging", "摄像头后台", "printer", "门禁卡", "保险柜", "backup drive",
             "garage door", "公司大门", "门锁", "migration", "nas.home.arpa"]
KB_QUESTIONS = ["核心交换机怎么登录", "database host", "机房门禁", "UPS 巡检", "replica"]


def _leaks(text: str) -> list[str]:
    """The secrets in ``text``, each as a whole token (a short code must not be found inside a hash)."""
    return [s for s in SECRETS if re.search(rf"(?<![0-9A-Za-z]){re.escape(s)}(?![0-9A-Za-z])", text)]


@pytest.fixture(scope="module")
def digested(tmp_path_factory, kit_cache):
    """A workspace after the digest of the log, and a document collected from a folder outside the workspace,
    refined, approved, indexed (once for the module: the tests only read)."""
    with module_ws(tmp_path_factory, "cueless") as ws:
        yield _digest(ws, kit_cache, tmp_path_factory.mktemp("outside"))


def _digest(ws, kit_cache, tmp_path):
    from agentos_mem.digest.stages import run_day
    from agentos_mem.index.stages import rebuild
    from agentos_mem.knowledge.collect import collect, ensure_sources_file
    from agentos_mem.knowledge.decisions import decide
    from agentos_mem.kernel.settings import load_settings

    settings = load_settings(home=ws, hostname="testhost", llm_base_url=None)
    logs = settings.working_dir()
    logs.mkdir(parents=True, exist_ok=True)
    (logs / f"{DAY}.md").write_text(LOG, encoding="utf-8")
    report = run_day(settings, settings.user, DAY, logs)
    assert not report.get("errors"), report
    team = tmp_path / "team-docs"  # a source folder outside the workspace, listed in sources.yaml
    team.mkdir()
    (team / "ops-manual.md").write_text(KB_DOC, encoding="utf-8")
    sources = ensure_sources_file(settings)
    sources.write_text(sources.read_text(encoding="utf-8") + f"  - name: team-docs\n    type: clipping\n    path: {team}\n",
                       encoding="utf-8")
    got = collect(settings)
    assert len(got["collected"]) == 1 and not got["errors"], got
    refined = refine_all(kit_cache)
    assert not refined["quarantined"] and not refined["errors"], refined
    doc_id = refined["refined"][0]["doc_id"]
    decide(kb_settings(), doc_id, "approve", "default")
    rebuild(settings)
    return settings, doc_id, team


def test_credentials_without_a_cue_are_never_served_nor_kept(digested, tmp_path):
    from agentos_mem.kernel.workspace import Workspace

    settings, doc_id, team = digested
    home = settings.home
    outputs: list[tuple[str, str]] = []
    raw_root = Workspace(home).raw_dir
    ref = next(p for p in raw_root.rglob(f"{DAY}.md")).relative_to(raw_root).as_posix()
    assert "Xy9#kL2mQ" in (raw_root / ref).read_text(encoding="utf-8")  # the archive keeps the user's bytes

    # -- the CLI, in process ------------------------------------------------------------------------------------------
    for q in QUESTIONS:
        p = run_cli("query", q, "--raw", "--budget", "4000", home=home, check=False)
        outputs.append((f"query {q}", p.stdout + p.stderr))
    raw = run_cli("raw", ref, "--lines", f"1-{LOG.count(chr(10))}", home=home)
    outputs.append(("raw", raw.stdout))
    facts = run_cli("facts", "list", "--json", home=home)
    outputs.append(("facts list", facts.stdout))
    outline = json.loads(run_cli("kb", "outline", doc_id, "--json", home=home).stdout)
    anchors = [s["anchor"] for s in outline["outline"]]
    assert len(anchors) >= 4, outline
    for q in KB_QUESTIONS:
        for args in (("kb", "search", q), ("kb", "ask", q), ("kb", "search", q, "--json"), ("kb", "ask", q, "--json")):
            p = run_cli(*args, home=home, check=False)
            outputs.append((" ".join(args), p.stdout + p.stderr))
    for a in anchors:
        p = run_cli("kb", "read", doc_id, a, "--page-tokens", "8000", home=home)
        outputs.append((f"kb read {a}", p.stdout))

    # the lines are still there, each with a marker where its secret was
    lines = raw.stdout
    assert lines.count("[secret masked") >= len(PAIRS), lines
    assert "NAS 登录用 admin / [secret masked · original at" in lines and "on 192.168.1.10" in lines
    assert "root:[secret masked · original at" in lines and "@10.0.0.5" in lines
    assert "备份盘的解锁码是 [secret masked · original at" in lines
    read_all = " ".join(t for w, t in outputs if w.startswith("kb read"))
    assert "管理账号 admin / [secret masked" in read_all and "root:[secret masked" in read_all and "解锁码是 [secret masked" in read_all
    assert "10:30" in read_all and "ops/weekly" in read_all  # ordinary text beside them is untouched
    assert "ky77" not in facts.stdout  # the fact "Blue ky77 · value · 192.168.1.10" of the issue is gone with its secret
    listed = json.loads(facts.stdout)["facts"]
    assert any(f["object"] == "5433" for f in listed), listed  # the facts of the day are there
    assert [f for f in listed if "secret masked" in f["subject"]] == []  # and none is named by a marker

    # -- the MCP tools over a real stdio session ------------------------------------------------------------------------
    pytest.importorskip("mcp")
    from tests.kit.mcp import session

    async def script(s):
        call, out = s.call_tool, []
        for q in QUESTIONS:
            out.append((f"mcp query {q}", await call("memory_query", {"text": q, "raw": True, "budget": 4000})))
            out.append((f"mcp facts {q}", await call("fact_lookup", {"subject": q, "history": True})))
        out.append(("mcp raw", await call("raw_read", {"ref": ref, "start": 1, "end": LOG.count("\n")})))
        for q in KB_QUESTIONS:
            out.append((f"mcp kb_search {q}", await call("kb_search", {"query": q})))
            out.append((f"mcp kb_answer {q}", await call("kb_answer", {"question": q})))
        for a in anchors:
            out.append((f"mcp kb_read {a}", await call("kb_read", {"doc_id": doc_id, "anchor": a, "page_tokens": 8000})))
        return out

    results, stray = session(home, tmp_path / "mcp-stderr.txt", script)
    assert stray == []
    for where, result in results:
        assert not result.is_error, (where, result.content[0].text[:300])
        outputs.append((where, " ".join(c.text for c in result.content if hasattr(c, "text"))))
    mcp_raw = next(t for w, t in outputs if w == "mcp raw")
    assert mcp_raw.count("[secret masked") >= len(PAIRS)

    leaked = [(where, _leaks(text)) for where, text in outputs if _leaks(text)]
    assert not leaked, leaked[:10]
    # they were answers: masked lines came back from the logs and from the document on each kind of path
    kinds = ("query", "raw", "kb read", "kb search", "kb ask", "mcp query", "mcp raw", "mcp kb_read", "mcp kb_search")
    masked = {max((k for k in kinds if where.startswith(k)), key=len, default=where) for where, text in outputs
              if "[secret masked" in text}
    assert set(kinds) <= masked, masked

    # -- at rest: no store holds a secret; no synced file holds one or names a local path --------------------------------
    originals = ("agent-local/memory/raw/", "agent-sync/04_memory/working/")  # what the user gave, kept as given
    at_rest, paths = {}, {}
    local = [str(home), str(home.resolve()), str(team), str(team.resolve())]
    for p in sorted(home.rglob("*")):
        rel = p.relative_to(home).as_posix()
        if not p.is_file() or "runtime" in rel:
            continue
        text = p.read_bytes().decode("utf-8", errors="replace")
        if not rel.startswith(originals) and _leaks(text):
            at_rest[rel] = _leaks(text)
        # (sources.yaml is the user's own configuration: the paths the user wrote there stay)
        if rel.startswith("agent-sync/") and not rel.endswith("99_system/sources.yaml") and any(x in text for x in local):
            paths[rel] = [ln.strip()[:200] for ln in text.splitlines() if any(x in ln for x in local)][:3]
    assert at_rest == {}, at_rest
    assert paths == {}, paths


def test_a_disguised_request_for_a_password_is_refused_on_every_path(digested, tmp_path):
    settings, doc_id, _ = digested
    home = settings.home
    for q in DISGUISED:
        p = run_cli("query", q, "--raw", "--json", home=home, check=False)
        out = json.loads(p.stdout)
        assert out["status"] == "blocked" and out["items"] == [] and out["rule"].startswith("L0 rule 2"), (q, p.stdout[:300])
        k = run_cli("kb", "search", q, home=home, check=False)
        assert k.returncode != 0 and "L0 rule 2" in k.stderr, (q, k.stdout[:200], k.stderr[:200])
    for q in INNOCENT:
        out = json.loads(run_cli("query", q, "--json", home=home, check=False).stdout)
        assert out["status"] != "blocked", (q, out)

    pytest.importorskip("mcp")
    from tests.kit.mcp import data, session

    async def script(s):
        out = []
        for q in DISGUISED:
            out.append((q, "query", data(await s.call_tool("memory_query", {"text": q, "raw": True}))))
            out.append((q, "facts", data(await s.call_tool("fact_lookup", {"subject": q}))))
            out.append((q, "recall", data(await s.call_tool("memory_recall", {"query": q}))))
        for q in INNOCENT:
            out.append((q, "innocent", data(await s.call_tool("memory_query", {"text": q}))))
        return out

    results, stray = session(home, tmp_path / "mcp-stderr.txt", script)
    assert stray == []
    for q, tool, answer in results:
        if tool == "innocent":
            assert answer["status"] != "blocked", (q, answer)
        else:
            assert answer["status"] == "blocked", (q, tool, answer)
