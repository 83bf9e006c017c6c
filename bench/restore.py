"""``agentos bench restore``: how long a second machine takes to get its memory back from agent-sync, and whether
it holds what the first machine holds.

For the demo workspace and for LoCoMo conversations (imported as day logs): machine A digests every day and
rebuilds its indexes (the nightly stages as plain calls), a person's decisions are made on it (the first open
conflict accepted, one fact forgotten: both go to A's journal), then a copy of A's agent-sync alone becomes
machine B and ``restore`` runs there, timed, on a cold machine (no embedding cache: every vector is computed
again). Then a line is added to A's first day (a late note) and A's nightly digest runs: the user's facts are made
again in date order (``digest.rewind``), timed. Reported: A's digest time, A's rewind time, B's restore time (digest, indexes, total), facts identical with row ids aside,
and the questions answered alike (the demo's questions; for LoCoMo, its first 20 questions per conversation).
"""

from __future__ import annotations

import json
import re
import shutil
import sqlite3
import tempfile
import time
from pathlib import Path

from agentos_mem.demo import init_demo_workspace
from agentos_mem.digest import rewind
from agentos_mem.digest.importers import import_locomo
from agentos_mem.digest.stages import pending_days, run_day
from agentos_mem.index.stages import rebuild
from agentos_mem.kernel import clock
from agentos_mem.kernel.settings import load_settings
from agentos_mem.kernel.workspace import Workspace
from agentos_mem.knowledge.decisions import open_conflicts
from agentos_mem.query.ask import ask
from agentos_mem.restore.run import restore
from agentos_mem.services.decisions import forget_fact, resolve_conflict
from agentos_mem.storage.facts import open_facts

DEMO_QUESTIONS = ["服务器现在是什么配置？", "what is the database port?", "我喜欢喝什么？", "which database did we pick, and why?",
                  "我的数据库密码是多少？", "what is the weather on Mars?"]
# one machine's row ids; when it read the line; which revision of its raw archive holds the lines (a day edited on A is
# its r2 there, the same bytes are r1 on B, which archived only the edited day)
MACHINE_BOUND = {"id", "previous_version", "superseded_by", "learned_at", "raw_ref"}


def _facts(home: Path) -> list[str]:
    con = sqlite3.connect(Workspace(home).facts_db)
    con.row_factory = sqlite3.Row
    rows = {r["id"]: dict(r) for r in con.execute("select * from facts")}
    con.close()
    ref = lambda fid: None if fid not in rows else [rows[fid][k] for k in ("subject_key", "predicate", "object_key", "valid_from")]  # noqa: E731
    return sorted(json.dumps({**{k: v for k, v in r.items() if k not in MACHINE_BOUND}, "prev": ref(r["previous_version"]),
                              "next": ref(r["superseded_by"])}, sort_keys=True, ensure_ascii=False) for r in rows.values())


def _said(answer) -> list:
    """An answer with what names one machine aside (card ids start with the host; fact numbers are each store's)."""
    return [answer.status, answer.layer] + [(i.kind, re.sub(r"#\d+", "#N", i.text)) for i in answer.items]


def _machine_a(home: Path, user: str, log) -> dict:
    """The nightly stages over every day of ``user``'s logs, then a person's decisions."""
    settings = load_settings(home=home, user=user, hostname="machine-a", llm_base_url=None)
    Workspace(home).ensure()
    t0 = time.perf_counter()
    folder = settings.working_dir()
    days = pending_days(settings, user, folder, clock.yesterday(settings.timezone))
    for day in days:
        run_day(settings, user, day, folder)
    conflicts = open_conflicts(settings, user)
    if conflicts:
        resolve_conflict(settings, user, conflicts[0]["id"], accept=True)
    store = open_facts(settings)
    try:
        current = store.current(user)
    finally:
        store.close()
    if current:
        forget_fact(settings, user, current[len(current) // 2]["id"], "bench: a person forgets one fact")
    rebuild(settings)
    seconds = round(time.perf_counter() - t0, 1)
    log(f"machine A ({user}): {len(days)} day(s) digested and indexed in {seconds} s")
    rewind_s = _edit_first_day(settings, user, folder, days)
    log(f"machine A ({user}): its first day edited, the facts made again in date order in {rewind_s} s")
    return {"days": len(days), "digest_and_index_s": seconds, "decisions": int(bool(conflicts)) + int(bool(current)),
            "rewind_s": rewind_s}


def _edit_first_day(settings, user: str, folder: Path, days: list) -> float | None:
    """A line added to the first day after every day was digested (a late note): the nightly's digest stage as plain
    calls (``digest.rewind``: the user's facts made again in date order, the decisions applied again), timed. B is
    restored from the edited logs after it, so "identical" checks the rewind against a restore."""
    if not days:
        return None
    first = sorted(p for p in folder.iterdir() if p.name.startswith(days[0].isoformat()))[0]
    bullet = first.suffix == ".md"
    line = "- [23:59] user: 我们的服务器配置是 32C64G。\n" if bullet else json.dumps(
        {"time": "23:59", "speaker": "user", "text": "我们的服务器配置是 32C64G。"}, ensure_ascii=False) + "\n"
    text = first.read_text(encoding="utf-8")
    first.write_text(text + ("" if text.endswith("\n") else "\n") + line, encoding="utf-8")
    t0 = time.perf_counter()
    todo, asked, _ = rewind.prepare(settings, user, folder, pending_days(settings, user, folder, clock.yesterday(settings.timezone)))
    for day in todo:
        run_day(settings, user, day, folder, memories=day in asked)
        rewind.decisions_reached(settings, user)
    rebuild(settings)
    return round(time.perf_counter() - t0, 1)


def _restore_b(a: Path, b: Path, user: str, questions: list[str], log) -> dict:
    shutil.copytree(a / "agent-sync", b / "agent-sync")
    settings_b = load_settings(home=b, user=user, hostname="machine-b", llm_base_url=None)
    t0 = time.perf_counter()
    report = restore(settings_b, log=lambda m: None)
    total = round(time.perf_counter() - t0, 1)
    settings_a = load_settings(home=a, user=user, hostname="machine-a", llm_base_url=None)
    alike = sum(_said(ask(q, settings=settings_a)) == _said(ask(q, settings=settings_b)) for q in questions)
    fa, fb = _facts(a), _facts(b)
    out = {"restore_s": total, "restore_digest_s": report.seconds.get("digest"), "restore_index_s": report.seconds.get("index"),
           "facts": len(fa), "facts_identical": fa == fb, "decisions_replayed": len(report.decisions["applied"]),
           "decisions_waiting": len(report.decisions["waiting"]), "questions": len(questions), "answered_alike": alike}
    log(f"machine B ({user}): restored in {total} s; facts identical: {fa == fb}; {alike}/{len(questions)} answered alike")
    return out


def run(locomo: str | None = None, conversations: int = 1, log=print) -> dict:
    res: dict = {"rows": []}
    with tempfile.TemporaryDirectory(prefix="agentos-bench-restore-") as tmp:
        root = Path(tmp)
        init_demo_workspace(root / "demo-a", end_day=clock.yesterday("Asia/Shanghai"))
        row = {"workspace": "demo", **_machine_a(root / "demo-a", "default", log)}
        row.update(_restore_b(root / "demo-a", root / "demo-b", "default", DEMO_QUESTIONS, log))
        res["rows"].append(row)
        if locomo:
            samples = json.loads(Path(locomo).read_text(encoding="utf-8"))[:conversations]
            for sample in samples:
                sid = str(sample["sample_id"])
                home = root / f"{sid}-a"
                import_locomo(Path(locomo), home / "agent-sync/04_memory/working", conversations=[sid])
                questions = [str(q["question"]) for q in sample.get("qa", [])[:20]]
                row = {"workspace": f"LoCoMo {sid}", **_machine_a(home, sid, log)}
                row.update(_restore_b(home, root / f"{sid}-b", sid, questions, log))
                res["rows"].append(row)
    return res


def render(res: dict) -> str:
    lines = [f"{'workspace':<16} {'days':>5} {'A: digest+index':>16} {'A: rewind':>10} {'B: restore':>11} {'(digest / index)':>17} {'facts':>6} "
             f"{'identical':>9} {'decisions':>9} {'answered alike':>15}"]
    for r in res["rows"]:
        lines.append(f"{r['workspace']:<16} {r['days']:>5} {r['digest_and_index_s']:>15}s {r['rewind_s']:>9}s {r['restore_s']:>10}s "
                     f"{str(r['restore_digest_s']) + ' / ' + str(r['restore_index_s']):>17} {r['facts']:>6} {str(r['facts_identical']):>9} "
                     f"{r['decisions_replayed']:>9} {str(r['answered_alike']) + '/' + str(r['questions']):>15}")
    return "\n".join(lines)


def markdown(res: dict, command: str) -> str:
    md = ["# Restore: a second machine from agent-sync", "", f"`{command}`", "", __doc__.split("\n\n", 1)[1].strip(), "",
          "| workspace | days | A: digest + index | A: first day edited, rewind + index | B: restore (digest / index) | facts | identical (ids aside) | decisions replayed | answered alike |",
          "|---|---|---|---|---|---|---|---|---|"]
    for r in res["rows"]:
        md.append(f"| {r['workspace']} | {r['days']} | {r['digest_and_index_s']} s | {r['rewind_s']} s | {r['restore_s']} s ({r['restore_digest_s']} / "
                  f"{r['restore_index_s']}) | {r['facts']} | {'yes' if r['facts_identical'] else 'no'} | {r['decisions_replayed']} | "
                  f"{r['answered_alike']}/{r['questions']} |")
    return "\n".join(md) + "\n"
