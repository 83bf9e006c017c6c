"""Per-user views: every CLI command and MCP tool that shows stored data shows the caller only what the caller may
see. A workspace with two users, alice and bob, each with facts (a digested day of logs, a fact conflict), memory
records and a proposal, the raw archive of their logs, and personal knowledge documents (pending, published,
rejected), beside the team's system documents (one published, one pending). Every string of alice's data carries
``amberfox``, every string of bob's ``cobaltowl``; system documents carry neither.

For each view (the ``agentos`` command in process through ``tests.kit.cli.run_cli``, the MCP tools over a real stdio
session of ``agentos mcp`` per user) hypothesis draws the caller, the user whose item the call addresses, and the
view's other arguments. Whatever the call: nothing of the other user's markers reaches the output (beyond what the
caller typed), the caller's own items do appear where the view lists them, and an address of the other user's
item (a document id, a raw reference, a record name) is answered exactly as an unknown one, so not even its
existence is revealed.
"""

from __future__ import annotations

import asyncio
import json
import threading
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings as hsettings, strategies as st

from tests.kit.cli import run_cli
from tests.kit.knowledge import item

USERS = ("alice", "bob")
MARK = {"alice": "amberfox", "bob": "cobaltowl"}
NOW = "2026-11-30T10:00:00+08:00"  # the suite's pinned clock (tests/conftest.py), also for the module's fixture
DAY1, DAY2 = date(2026, 11, 28), date(2026, 11, 29)
ENV = {"AGENTOS_NOW": NOW, "AGENTOS_HOSTNAME": "testhost"}


def other(user: str) -> str:
    return "bob" if user == "alice" else "alice"


def _log(m: str, day: date) -> str:
    return (f"# {day}\n\n## 项目\n\n[09:12] 用户: 我的项目代号是 {m}7。\n[09:13] 助手：好的，已记录项目代号 {m}7。\n"
            f"[09:20] user: My editor is {m}vim.\n[09:21] assistant: Noted.\n[09:30] 用户: 服务器配置是 {m}16G。\n")


def _log2(m: str, day: date) -> str:  # digested after the index rebuild: drift for `agentos doctor`
    return f"# {day}\n\n## 宠物\n\n[10:00] 用户: 我的猫叫 {m}cat。\n[10:01] 助手：好的，你的猫叫 {m}cat。\n"


@dataclass(repr=False)  # hypothesis prints the fixture's value with a failing example
class Workspace:
    home: Path
    raw: dict = field(default_factory=dict)      # user -> raw_ref of their day-1 log
    record: dict = field(default_factory=dict)   # user -> the name of their manual record
    docs: dict = field(default_factory=dict)     # user -> {pending, published, rejected: doc id}
    system: dict = field(default_factory=dict)   # published / pending -> doc id
    anchor: dict = field(default_factory=dict)   # doc id -> a section anchor


def _conflict(settings, user: str, m: str) -> None:
    """The user said ``{m}port1``; later the assistant inferred ``{m}port2``: an open conflict."""
    from agentos_mem.kernel.domain import Candidate
    from agentos_mem.services.supersession import Supersession
    from agentos_mem.storage.facts import open_facts

    def cand(obj, day, explicitness, conf):
        return Candidate(subject="数据库端口", predicate="value", object=obj, nature="fact", confidence=conf, explicitness=explicitness,
                         source_file=f"{day}-port.md", line_start=1, line_end=1, observed_at=f"{day}T09:00:00")

    facts = open_facts(settings)
    try:
        for day, c in ((date(2026, 11, 26), cand(f"{m}port1", date(2026, 11, 26), "stated", 0.9)),
                       (date(2026, 11, 27), cand(f"{m}port2", date(2026, 11, 27), "inferred", 0.6))):
            Supersession(facts).apply(user, day, [c], file_sha={c.source_file: "sha" + c.source_file}, raw_refs={})
    finally:
        facts.close()


def build(home: Path) -> Workspace:
    """The two users' workspace, through the real pipelines (digest, refine, decisions, index rebuild)."""
    from agentos_mem.digest.stages import run_day
    from agentos_mem.index.stages import rebuild
    from agentos_mem.kernel.settings import load_settings
    from agentos_mem.kernel.workspace import init_workspace
    from agentos_mem.knowledge.decisions import decide
    from agentos_mem.knowledge.refine import refine
    from agentos_mem.storage.memory_records import open_book

    init_workspace(home)
    w = Workspace(home)
    base = load_settings(home=home, hostname="testhost", llm_base_url=None)
    for user, m in MARK.items():
        logs = home / "agent-sync/04_memory/working" / user
        logs.mkdir(parents=True, exist_ok=True)
        (logs / f"{DAY1}.md").write_text(_log(m, DAY1), encoding="utf-8")
        s = load_settings(home=home, user=user, hostname="testhost", llm_base_url=None)
        run_day(s, user, DAY1, s.working_dir())
        w.raw[user] = f"{user}/{DAY1}/r1/{DAY1}.md"
        _conflict(s, user, m)
        book = open_book(s)
        w.record[user] = f"{m}-周报格式"
        book.create(user, w.record[user], f"以后周报都用 {m} 简洁格式", "feedback", f"周报不超过一页，先写结论。{m}body")
        book.propose(user, "create", None, {"name": f"{m}-提议", "description": f"提议：{m}proposal", "type": "user", "body": ""}, "test")
        for kind in ("pending", "published", "rejected"):
            item(home, "personal", f"{user}-{kind}.md",
                 f"# {m} {kind} 周报模板\n\n## {m}{kind} 写法\n\n周报模板：先写结论，再写风险。{m}{kind}secret 细节。\n",
                 title=f"{m} {kind} 周报模板", source_type="personal", scope="personal", owner=user)
    item(home, "knowledge/clipping", "team-published.md", "# 团队发布流程\n\n## 评审\n\n发布前需要两人评审。周报模板统一放在团队空间。\n",
         title="团队发布流程", scope="system", source="https://martinfowler.com/release")
    item(home, "knowledge/clipping", "team-pending.md", "# 团队值班规范\n\n## 交接\n\n值班交接时写清未结事项。\n",
         title="团队值班规范", scope="system", source="https://martinfowler.com/oncall")
    ids = {d["title"]: d["doc_id"] for d in refine(base)["refined"]}
    for user, m in MARK.items():
        w.docs[user] = {kind: ids[f"{m} {kind} 周报模板"] for kind in ("pending", "published", "rejected")}
        decide(base, w.docs[user]["published"], "approve", user)
        decide(base, w.docs[user]["rejected"], "reject", user)
        for kind in ("pending", "published", "rejected"):
            w.anchor[w.docs[user][kind]] = f"{m}{kind}-写法"
    w.system = {"published": ids["团队发布流程"], "pending": ids["团队值班规范"]}
    w.anchor[w.system["published"]] = "评审"
    decide(base, w.system["published"], "approve", "default")
    rebuild(base)
    for user, m in MARK.items():  # a second day after the rebuild: the index drifts (doctor lists it)
        (home / "agent-sync/04_memory/working" / user / f"{DAY2}.md").write_text(_log2(m, DAY2), encoding="utf-8")
        s = load_settings(home=home, user=user, hostname="testhost", llm_base_url=None)
        run_day(s, user, DAY2, s.working_dir())
    return w


# -- the callers: the CLI in process, one MCP session per user ----------------------------------------------
class McpSession:
    """A real ``agentos mcp`` over stdio for ``user``, open for the whole module (the tokenizer and the embedder
    load once per server); ``call`` runs one tool from the test's thread on the session's own event loop."""

    def __init__(self, home: Path, user: str, errlog: Path):
        import concurrent.futures

        from mcp import ClientSession
        from mcp.client.stdio import stdio_client

        from tests.kit.mcp import server_params

        params = server_params(home)
        params.env.update({"AGENTOS_USER": user, "AGENTOS_NOW": NOW})
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, name=f"mcp-{user}", daemon=True)
        self.thread.start()
        ready: concurrent.futures.Future = concurrent.futures.Future()

        async def main():
            self.stop = asyncio.Event()
            with errlog.open("w", encoding="utf-8") as err:
                async with stdio_client(params, errlog=err) as (read, write):
                    async with ClientSession(read, write) as session:
                        await session.initialize()
                        self.session = session
                        ready.set_result(None)
                        await self.stop.wait()

        self.done = asyncio.run_coroutine_threadsafe(main(), self.loop)
        concurrent.futures.wait([ready, self.done], timeout=180, return_when=concurrent.futures.FIRST_COMPLETED)
        if not ready.done():
            self.close()
            self.done.result(timeout=0)  # the server's failure, or a timeout
            raise AssertionError(f"the MCP server for {user} did not start")

    def call(self, tool: str, args: dict):
        return asyncio.run_coroutine_threadsafe(asyncio.wait_for(self.session.call_tool(tool, args), 120), self.loop).result(150)

    def close(self) -> None:
        if hasattr(self, "stop"):
            self.loop.call_soon_threadsafe(self.stop.set)
        try:
            self.done.result(timeout=60)
        finally:
            self.loop.call_soon_threadsafe(self.loop.stop)
            self.thread.join(timeout=10)


@pytest.fixture(scope="module")
def two_users(tmp_path_factory):
    """The workspace (built once for the module) and an MCP session for each user."""
    pytest.importorskip("mcp")
    root = tmp_path_factory.mktemp("user-views")
    with pytest.MonkeyPatch.context() as mp:  # the module's fixture runs before the suite's per-test clock
        for k, v in ENV.items():
            mp.setenv(k, v)
        mp.delenv("AGENTOS_LLM_BASE_URL", raising=False)
        w = build(root / "home")
    sessions = {}
    try:
        for user in USERS:
            sessions[user] = McpSession(w.home, user, root / f"mcp-{user}.log")
        yield w, sessions
    finally:
        for s in sessions.values():
            s.close()


# -- the views --------------------------------------------------------------------------------------------------
@dataclass
class Call:
    """One request: ``argv`` for the CLI, or ``tool`` and ``args`` for the caller's MCP session. ``own``: the
    caller's strings the answer must hold. ``address``: the other user's item it names, and ``unknown`` the same
    request naming an unknown item of the same shape in its place (both must get the same answer)."""

    argv: list | None = None
    tool: str | None = None
    args: dict | None = None
    own: list = field(default_factory=list)
    address: str | None = None
    unknown: str | None = None
    code: int | None = 0  # the CLI's exit code (None: not checked)

    def typed(self) -> list[str]:
        return [str(a) for a in (self.argv or [])] + [str(v) for v in (self.args or {}).values() if isinstance(v, str)]

    def replaced(self) -> Call:
        """The same request with ``unknown`` in place of ``address``."""
        def sub(v):
            return v.replace(self.address, self.unknown) if isinstance(v, str) else v
        return Call(argv=[sub(a) for a in self.argv] if self.argv else None, tool=self.tool,
                    args={k: sub(v) for k, v in self.args.items()} if self.args else None, code=None)


def _mark(user: str) -> str | None:
    return MARK.get(user)


def _own(caller: str, *fmt: str) -> list[str]:
    """The caller's strings ``fmt`` ({m}: their marker); none for a caller without data."""
    m = _mark(caller)
    return [f.format(m=m) for f in fmt] if m else []


def _addressed(call: Call, caller: str, target: str, address: str, unknown: str, *own: str) -> Call:
    """A request naming the ``target``'s item ``address``: the caller's own gives ``own``; another user's reads as
    ``unknown`` (an item that does not exist), with the error exit code."""
    if target == caller:
        call.own = _own(caller, *own)
    else:
        call.address, call.unknown, call.code = address, unknown, 2 if call.argv else None
    return call


def _json(d) -> list[str]:
    return ["--json"] if d.draw(st.booleans(), label="json") else []


def v_facts_list(w, caller, target, d):
    return Call(["facts", "list", *_json(d)], own=_own(caller, "{m}7", "{m}vim", "{m}16G"))


def v_facts_history(w, caller, target, d):
    subject, value = d.draw(st.sampled_from([("项目代号", "{m}7"), ("editor", "{m}vim"), ("服务器配置", "{m}16G")]), label="subject")
    return Call(["facts", "history", subject, "--json"], own=_own(caller, value))


def v_facts_conflicts(w, caller, target, d):
    return Call(["facts", "conflicts", *_json(d), *(["--all"] if d.draw(st.booleans(), label="all") else [])], own=_own(caller, "{m}port2"))


QUESTIONS = [("项目代号是什么？", "{m}7"), ("what is my editor?", "{m}vim"), ("服务器配置", "{m}16G")]


def v_query(w, caller, target, d):
    text, value = d.draw(st.sampled_from(QUESTIONS), label="question")
    raw = ["--raw"] if d.draw(st.booleans(), label="raw") else []
    return Call(["query", text, *raw, *_json(d)], own=_own(caller, value), code=0 if caller in MARK else 2)


def v_query_about_the_other(w, caller, target, d):
    """A question naming the target's own values: the caller learns nothing of them."""
    text = f"{MARK[target]}7 是什么？{MARK[target]}vim"
    return Call(["query", text, "--raw", "--json"], code=None)


def _range(d) -> tuple[int, int]:
    return d.draw(st.sampled_from([(1, 40), (5, 6), (9, 9)]), label="lines")


LINE_OF = {5: "{m}7", 6: "{m}7", 9: "{m}16G"}


def _raw_own(start: int, end: int) -> list[str]:
    return sorted({v for n, v in LINE_OF.items() if start <= n <= end})


def v_raw(w, caller, target, d):
    start, end = _range(d)
    ref = w.raw[target]
    call = Call(["raw", ref, "--lines", f"{start}-{end}", *_json(d)])
    return _addressed(call, caller, target, ref, f"{caller}/{DAY1}/r7/{DAY1}.md", *_raw_own(start, end))


def v_memory_list(w, caller, target, d):
    return Call(["memory", "list", *_json(d)], own=_own(caller, "{m}-周报格式", "{m}7"))


def v_memory_show(w, caller, target, d):
    name = w.record[target]
    return _addressed(Call(["memory", "show", name, *_json(d)]), caller, target, name, "zzunknown-周报格式", "{m}body")


def v_memory_recall(w, caller, target, d):
    return Call(["memory", "recall", d.draw(st.sampled_from(["周报格式", "以后周报怎么写"]), label="text"), *_json(d)],
                own=_own(caller, "{m}-周报格式"))


def v_memory_proposals(w, caller, target, d):
    return Call(["memory", "proposals", *_json(d)], own=_own(caller, "{m}proposal"))


def v_kb_pending(w, caller, target, d):
    mine = d.draw(st.booleans(), label="mine")
    own = _own(caller, "{m} pending 周报模板", "{m}pendingsecret") + ([] if mine and caller != "default" else ["团队值班规范"])
    return Call(["kb", "pending", *(["--mine"] if mine else []), *_json(d)], own=own)


def _doc(w, target, d, kinds=("pending", "published", "rejected")) -> tuple[str, str]:
    kind = d.draw(st.sampled_from(kinds), label="kind")
    return w.docs[target][kind], kind


def v_kb_show(w, caller, target, d):
    if d.draw(st.booleans(), label="system"):  # the team's documents, pending or published: everyone's to see
        doc = w.system[d.draw(st.sampled_from(["pending", "published"]), label="system kind")]
        return Call(["kb", "show", doc, *_json(d)], own=[doc])
    doc, kind = _doc(w, target, d)
    return _addressed(Call(["kb", "show", doc, *_json(d)]), caller, target, doc, "testhost_20261130_zzunknown", f"{{m}}{kind}secret")


def v_kb_decide(w, caller, target, d):
    """approve / reject another user's personal document (always the other's: a decision on one's own would change
    the shared workspace): refused exactly as an unknown id."""
    target = other(caller) if caller in MARK else target
    doc, _ = _doc(w, target, d)
    verb = d.draw(st.sampled_from(["approve", "reject"]), label="verb")
    return _addressed(Call(["kb", verb, doc]), caller, target, doc, "testhost_20261130_zzunknown")


def v_kb_list(w, caller, target, d):
    return Call(["kb", "list", *_json(d)], own=_own(caller, "{m} published 周报模板") + ["团队发布流程"])


def v_kb_map(w, caller, target, d):
    return Call(["kb", "map", *_json(d)], own=_own(caller, "{m}publishedsecret") + ["团队发布流程"])


def v_kb_search(w, caller, target, d):
    mode = d.draw(st.sampled_from(["hybrid", "bm25", "dense"]), label="mode")
    return Call(["kb", "search", "周报模板", "--mode", mode, *_json(d)], own=_own(caller, "{m} published 周报模板"))


def v_kb_outline(w, caller, target, d):
    doc = w.docs[target]["published"]
    return _addressed(Call(["kb", "outline", doc, *_json(d)]), caller, target, doc, "testhost_20261130_zzunknown", "{m}published-写法")


def v_kb_read(w, caller, target, d):
    doc = w.docs[target]["published"]
    call = Call(["kb", "read", doc, w.anchor[doc], *_json(d)])
    return _addressed(call, caller, target, doc, "testhost_20261130_zzunknown", "{m}publishedsecret")


def v_kb_ask(w, caller, target, d):
    return Call(["kb", "ask", "周报模板怎么写？", *_json(d)], own=_own(caller, "{m} published 周报模板"))


def v_doctor(w, caller, target, d):
    # the index drifted (day 2 was digested after the rebuild): the caller's drift is itemised, the other's counted
    return Call(["doctor", *_json(d)], own=_own(caller, "{m}cat"), code=1)


# MCP: the same reads through the tools of the caller's server
def m_memory_query(w, caller, target, d):
    text, value = d.draw(st.sampled_from(QUESTIONS), label="question")
    return Call(tool="memory_query", args={"text": text, "raw": d.draw(st.booleans(), label="raw")}, own=_own(caller, value))


def m_fact_lookup(w, caller, target, d):
    subject, value = d.draw(st.sampled_from([("项目代号", "{m}7"), ("editor", "{m}vim"), ("数据库端口", "{m}port1")]), label="subject")
    return Call(tool="fact_lookup", args={"subject": subject, "history": d.draw(st.booleans(), label="history")}, own=_own(caller, value))


def m_raw_read(w, caller, target, d):
    start, end = _range(d)
    ref = w.raw[target]
    call = Call(tool="raw_read", args={"ref": ref, "start": start, "end": end})
    return _addressed(call, caller, target, ref, f"{caller}/{DAY1}/r7/{DAY1}.md", *_raw_own(start, end))


def m_memory_recall(w, caller, target, d):
    return Call(tool="memory_recall", args={"query": "周报格式"}, own=_own(caller, "{m}-周报格式"))


def m_kb_map(w, caller, target, d):
    return Call(tool="kb_map", args={}, own=_own(caller, "{m}publishedsecret") + ["团队发布流程"])


def m_kb_search(w, caller, target, d):
    return Call(tool="kb_search", args={"query": "周报模板"}, own=_own(caller, "{m} published 周报模板"))


def m_kb_outline(w, caller, target, d):
    doc = w.docs[target]["published"]
    return _addressed(Call(tool="kb_outline", args={"doc_id": doc}), caller, target, doc, "testhost_20261130_zzunknown", "{m}published-写法")


def m_kb_read(w, caller, target, d):
    doc = w.docs[target]["published"]
    call = Call(tool="kb_read", args={"doc_id": doc, "anchor": w.anchor[doc]})
    return _addressed(call, caller, target, doc, "testhost_20261130_zzunknown", "{m}publishedsecret")


def m_kb_answer(w, caller, target, d):
    return Call(tool="kb_answer", args={"question": "周报模板怎么写？"}, own=_own(caller, "{m} published 周报模板"))


CLI_VIEWS = [v_facts_list, v_facts_history, v_facts_conflicts, v_query, v_query_about_the_other, v_raw, v_memory_list, v_memory_show,
             v_memory_recall, v_memory_proposals, v_kb_pending, v_kb_show, v_kb_decide, v_kb_list, v_kb_map, v_kb_search, v_kb_outline,
             v_kb_read, v_kb_ask, v_doctor]
MCP_VIEWS = [m_memory_query, m_fact_lookup, m_raw_read, m_memory_recall, m_kb_map, m_kb_search, m_kb_outline, m_kb_read, m_kb_answer]


def answer(w: Workspace, sessions: dict, caller: str, call: Call) -> tuple[int | None, str]:
    """(exit code, everything the caller gets back: stdout and stderr, or the tool result's content and structure)."""
    if call.argv is not None:
        p = run_cli(*call.argv, "--user", caller, home=w.home, check=False, **ENV)
        return p.returncode, p.stdout + "\n" + p.stderr
    r = sessions[caller].call(call.tool, call.args)
    text = "\n".join(getattr(c, "text", "") for c in r.content)
    return None, text + "\n" + json.dumps(r.structured_content or {}, ensure_ascii=False)


def check(w: Workspace, sessions: dict, caller: str, call: Call) -> None:
    code, out = answer(w, sessions, caller, call)
    if call.argv is not None and call.code is not None:
        assert code == call.code, out
    seen = out
    for t in sorted(call.typed(), key=len, reverse=True):  # what the caller typed may come back; nothing else may
        seen = seen.replace(t, "")
    for user, m in MARK.items():
        if user != caller:
            assert m not in seen, f"{user}'s data in {caller}'s view:\n{out}"
    for s in call.own:
        assert s in out, f"{caller}'s own {s!r} missing from the view:\n{out}"
    if call.address:  # another user's item reads exactly as an unknown one
        _, unknown = answer(w, sessions, caller, call.replaced())
        assert out.replace(call.address, "<item>") == unknown.replace(call.unknown, "<item>")


PROPERTY = hsettings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])


@pytest.mark.parametrize("view", CLI_VIEWS, ids=lambda v: v.__name__[2:])
@PROPERTY
@given(data=st.data())
def test_cli_views_show_the_caller_only_their_own(two_users, view, data):
    w, sessions = two_users
    caller = data.draw(st.sampled_from([*USERS, "default"]), label="caller")  # default: an admin without memory
    target = data.draw(st.sampled_from(USERS), label="target")
    check(w, sessions, caller, view(w, caller, target, data))


@pytest.mark.parametrize("view", MCP_VIEWS, ids=lambda v: v.__name__[2:])
@PROPERTY
@given(data=st.data())
def test_mcp_tools_show_the_caller_only_their_own(two_users, view, data):
    w, sessions = two_users
    caller = data.draw(st.sampled_from(USERS), label="caller")
    target = data.draw(st.sampled_from(USERS), label="target")
    check(w, sessions, caller, view(w, caller, target, data))
