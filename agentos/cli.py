"""The ``agentos`` command line.

Read commands (``query``, ``facts``, ``raw``, ``doctor``, ``config``, ``mcp``) read the stores directly and
never import Prefect, so they answer at once. Stage commands (``digest``, ``backfill``, ``nightly``,
``rebuild``) run the Prefect flows on
the server ``agentos serve`` runs, a configured ``PREFECT_API_URL``, or Prefect's ephemeral server.
"""

from __future__ import annotations

import argparse
import json
import sys
from datetime import date, timedelta
from pathlib import Path

from kernel import clock


class CliError(Exception):
    """A problem the user can fix, reported in one line."""


def _date(s: str) -> date:
    try:
        return date.fromisoformat(s)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a date (YYYY-MM-DD): {s!r}") from None


def _settings(args):
    from kernel.settings import load_settings

    return load_settings(user=getattr(args, "user", None), logs_dir=getattr(args, "logs", None))


def _emit(args, payload, render) -> None:
    if getattr(args, "json", False):
        json.dump(payload, sys.stdout, ensure_ascii=False, indent=1, default=str)
        sys.stdout.write("\n")
    else:
        render(payload)


def _need_workspace(settings) -> None:
    from kernel.workspace import Workspace

    if not Workspace(settings.home).exists():
        raise CliError(f"no workspace at {settings.home}: run `agentos init` (or set AGENTOS_HOME)")


# -- init ------------------------------------------------------------------------------------------
def cmd_init(args) -> int:
    from agentos.demo import init_demo_workspace
    from kernel.workspace import init_workspace

    settings = _settings(args)
    end = clock.yesterday(settings.timezone)
    out = (init_demo_workspace(settings.home, user=settings.user, end_day=end) if args.demo else init_workspace(settings.home))
    _emit(args, out, lambda o: print(f"workspace ready at {o['home']}" + (f"; {len(o['demo_logs'])} demo log files written" if o["demo_logs"] else "")))
    return 0


# -- stage commands ---------------------------------------------------------------------------------
def _flows(settings, quiet: bool):
    from kernel import prefect_env

    api = prefect_env.prepare(settings.home, quiet=quiet)
    print(f"[agentos] running on Prefect {'server ' + api if api else 'ephemeral server (first run takes ~20 s)'}", file=sys.stderr)
    import flows.collect
    import flows.daily
    import flows.rebuild
    import flows.nightly
    import flows.refine

    return flows


def _finish_stage() -> None:
    from kernel.prefect_env import let_ephemeral_server_drain

    let_ephemeral_server_drain()


def _print_digest(r: dict) -> None:
    days = r.get("days", [r.get("day")])
    print(f"user {r['user']}: {len(days)} day(s) digested" + (f" ({days[0]} .. {days[-1]})" if days and days[0] else ""))
    print(f"  lines read {r['lines_read']}, turns {r['turns']}")
    print(f"  facts added {r['facts_added']}, reinforced {r['facts_reinforced']}, superseded {r['facts_superseded']}, "
          f"conflicts {r['conflicts']}, already applied {r['already_applied']}")
    print(f"  index cards {r['cards']}")
    if r["quarantined"]:
        print(f"  quarantined ({len(r['quarantined'])}):")
        for q in r["quarantined"]:
            print(f"    - {q}")


def cmd_digest(args) -> int:
    settings = _settings(args)
    _need_workspace(settings)
    fl = _flows(settings, args.quiet)
    r = fl.daily.daily_digest(day=args.day, user=settings.user, logs_dir=str(settings.working_dir()))
    _finish_stage()
    _emit(args, r, _print_digest)
    return 0


def cmd_backfill(args) -> int:
    settings = _settings(args)
    _need_workspace(settings)
    fl = _flows(settings, args.quiet)
    r = fl.daily.backfill(start=args.start, end=args.end, user=settings.user, logs_dir=str(settings.working_dir()))
    _finish_stage()
    _emit(args, r, _print_digest)
    return 0


def cmd_nightly(args) -> int:
    settings = _settings(args)
    _need_workspace(settings)
    fl = _flows(settings, args.quiet)
    r = fl.nightly.nightly(user=settings.user, logs_dir=str(settings.working_dir()), include_today=args.include_today or None)
    _finish_stage()
    _emit(args, r, lambda o: (print("nightly chain: " + " -> ".join(o["stages"])), _print_digest(o["digest"]), _print_knowledge(o),
                              _print_rebuild(o["index"])))
    return 0


def _print_knowledge(o: dict) -> None:
    c, r, m = o.get("collect") or {}, o.get("refine") or {}, o.get("memory_inbox") or {}
    print(f"knowledge: collected {len(c.get('collected', []))} item(s), refused {len(c.get('refused', []))}"
          + "".join(f"\n  refused {x['file']}: {x['reason']}" for x in c.get("refused", [])))
    print(f"  refined {len(r.get('refined', []))} into pending documents, {len(r.get('duplicates', []))} duplicate(s), "
          f"{len(r.get('quarantined', []))} quarantined; memory cards taken: {m.get('cards', 0)}")
    for e in c.get("errors", []) + r.get("errors", []):
        print(f"  error (skipped): {e}")


def _print_rebuild(r: dict) -> None:
    if r["status"] == "unchanged":
        print(f"indexes: unchanged ({r['units']} units, generation {r['generation']}, {r['seconds']} s)")
    else:
        print(f"indexes: rebuilt ({r['reason']}): generation {r['generation']}, {r['units']} units, {r['changed']} new or changed, "
              f"{r['deleted']} removed, {r['embedded']} embedded, {r['seconds']} s")
    for p in r.get("problems") or []:
        print(f"  left out: {p}")


def cmd_rebuild(args) -> int:
    settings = _settings(args)
    _need_workspace(settings)
    if args.direct:
        from index.stages import rebuild

        r = rebuild(settings, full=args.full)
    else:
        fl = _flows(settings, args.quiet)
        r = fl.rebuild.index_rebuild(full=args.full)
        _finish_stage()
    _emit(args, r, _print_rebuild)
    return 0


def cmd_doctor(args) -> int:
    from index.stages import doctor

    settings = _settings(args)
    _need_workspace(settings)
    r = doctor(settings)

    def render(o):
        print(f"index generation {o['generation'] or '(none)'}" + (f", embedder {o['embedder']}" if o.get("embedder") else ""))
        for name, c in (o.get("counts") or {}).items():
            print(f"  user {c['user']}: stores {c['stores']} units, manifest {c['manifest']}, keyword {c['keyword']}, vector {c['vector']}")
        if o["ok"]:
            print("ok: cards, facts, keyword index and vector index agree")
        else:
            print(f"drift ({len(o['drift'])}): the next rebuild (`agentos rebuild`, or the nightly flow) repairs it")
            for line in o["drift"]:
                print(f"  - {line}")

    _emit(args, r, render)
    return 0 if r["ok"] else 1


def cmd_query(args) -> int:
    from query.ask import QueryError, ask, format_answer

    settings = _settings(args)
    _need_workspace(settings)
    try:
        a = ask(args.text, user=settings.user, raw=args.raw, k=args.k, budget=args.budget, history=args.history, settings=settings)
    except QueryError as e:
        raise CliError(str(e)) from None
    _emit(args, a.to_dict(), lambda o: print(format_answer(a)))
    return 0


def cmd_bench(args) -> int:
    """Benchmarks over public data through the real flows and query path; readable table or --json."""
    import shlex

    from agentos.benchmarks import report

    log = lambda m: print(f"[bench] {m}", file=sys.stderr, flush=True)  # noqa: E731
    command = "agentos " + shlex.join(sys.argv[1:] if sys.argv[1:2] == ["bench"] else ["bench", args.runner])
    if args.runner == "locomo":
        from agentos.benchmarks import locomo

        if not Path(args.path).is_file():
            raise CliError(f"no LoCoMo file at {args.path}")
        res = locomo.run(args.path, limit=args.limit, log=log)
        if args.plot:
            report.locomo_plot(res, Path(args.plot))
        if args.report:
            plot = Path(args.plot).name if args.plot else None
            Path(args.report).write_text(report.locomo_markdown(res, command, plot), encoding="utf-8")
        _finish_stage()
        _emit(args, res, lambda o: print(locomo.render(o)))
    elif args.runner == "madial":
        from agentos.benchmarks import madial

        if not (Path(args.path) / f"{args.lang}_memories.jsonl").is_file():
            raise CliError(f"no {args.lang}_memories.jsonl in {args.path} (the MADial-Bench data folder)")
        res = madial.run(args.path, lang=args.lang, limit=args.limit, llm=args.llm, log=log)
        if args.report:
            Path(args.report).write_text(madial.markdown(res, command), encoding="utf-8")
        _emit(args, res, lambda o: print(madial.render(o)))
    elif args.runner == "beir":
        from agentos.benchmarks import beir

        if not (Path(args.path) / "corpus.jsonl").is_file():
            raise CliError(f"no corpus.jsonl in {args.path} (a BEIR-layout folder: corpus.jsonl, queries.jsonl, qrels.tsv)")
        res = beir.run(args.path, limit=args.limit, k=args.k, work=args.work, log=log)
        if args.report:
            Path(args.report).write_text(beir.markdown(res, command), encoding="utf-8")
        _emit(args, res, lambda o: print(beir.render(o)))
    elif args.runner == "links":
        from agentos.benchmarks import links

        if not (Path(args.path) / "derived" / "internal_anchor_links.jsonl").is_file():
            raise CliError(f"no derived/internal_anchor_links.jsonl in {args.path} (the vue_docs_zh_cn folder)")
        if args.en and not (Path(args.en) / "src").is_dir():
            raise CliError(f"no src/ in {args.en} (the vue_docs_en folder)")
        res = links.run(args.path, en=args.en, limit=args.limit, work=args.work, log=log)
        if args.report:
            Path(args.report).write_text(links.markdown(res, command), encoding="utf-8")
        _emit(args, res, lambda o: print(links.render(o)))
    else:
        from agentos.benchmarks import perf

        res = perf.run(args.size or [1000, 10000], queries=args.queries, log=log)
        if args.report:
            Path(args.report).write_text(report.perf_markdown(res, command), encoding="utf-8")
        _emit(args, res, lambda o: print(perf.render_sizes(o)))
    return 0


def cmd_mcp(args) -> int:
    from query.mcp_server import run_stdio

    settings = _settings(args)
    _need_workspace(settings)
    run_stdio(settings)
    return 0


# -- read commands -----------------------------------------------------------------------------------
def _facts_table(rows: list[dict], *, show_status: bool = False) -> None:
    if not rows:
        print("(no facts)")
        return
    for r in rows:
        status = f" [{r['status']}]" if show_status else ""
        extra = []
        if r.get("previous_version"):
            extra.append(f"prev #{r['previous_version']}")
        if r.get("superseded_by"):
            extra.append(f"superseded by #{r['superseded_by']}")
        if r.get("expires_at"):
            extra.append(f"expires {r['expires_at'][:10]}")
        tail = f" ({', '.join(extra)})" if extra else ""
        valid = r["valid_from"][:10] + (f"..{r['valid_to'][:10]}" if r.get("valid_to") else "..")
        print(f"#{r['id']:<4} {r['subject']} · {r['predicate']} · {r['object']}   "
              f"[{r['nature']}, {r['explicitness']}, {r['confidence']:.2f}, v{r['version']}, {valid}]{status}{tail}")


def cmd_facts_list(args) -> int:
    from query.facts import facts_as_of

    settings = _settings(args)
    _need_workspace(settings)
    out = facts_as_of(settings, args.as_of, min_confidence=args.min_confidence)
    when = f"on {args.as_of}" if args.as_of else "now"
    _emit(args, out, lambda o: (print(f"facts valid {when} for {settings.user}: {len(o['facts'])}"), _facts_table(o["facts"])))
    return 0


def cmd_facts_history(args) -> int:
    from query.facts import fact_history

    settings = _settings(args)
    _need_workspace(settings)
    out = fact_history(settings, args.subject)
    if not out["versions"] and not args.json:
        raise CliError(f"no facts about {args.subject!r} for user {settings.user}")
    _emit(args, out, lambda o: (print(f"history of {args.subject!r}: {len(o['versions'])} version(s)"), _facts_table(o["versions"], show_status=True)))
    return 0


def cmd_facts_conflicts(args) -> int:
    from query.facts import conflicts

    settings = _settings(args)
    _need_workspace(settings)
    out = conflicts(settings, include_resolved=args.all)

    def render(o):
        print(f"conflicts for {settings.user}: {len(o['conflicts'])}")
        for c in o["conflicts"]:
            print(f"#{c['id']} {c['subject']}: kept '{c['existing_predicate']} {c['existing_object']}' ({c['existing_explicitness']}, fact #{c['existing_fact_id']}),"
                  f" not '{c['predicate']} {c['candidate_object']}' ({c['candidate_explicitness']}) from {c['source_file']}:{c['line_start']} [{c['status']}]")

    _emit(args, out, render)
    return 0


def cmd_facts_resolve(args) -> int:
    from storage.facts import open_facts

    settings = _settings(args)
    _need_workspace(settings)
    store = open_facts(settings)
    try:
        out = store.resolve_conflict(settings.user, args.conflict_id, accept=args.accept)
    except (KeyError, ValueError) as e:
        raise CliError(str(e).strip("'\"")) from None
    finally:
        store.close()

    def render(o):
        if o["fact"]:
            f = o["fact"]
            print(f"conflict #{o['id']} accepted: fact #{f['id']} {f['subject']} · {f['predicate']} · {f['object']} is now current")
        else:
            print(f"conflict #{o['id']} rejected: the store keeps '{o['existing_predicate']} {o['existing_object']}'")

    _emit(args, out, render)
    return 0


def cmd_raw(args) -> int:
    from query.facts import raw_lines
    from storage.raw_archive import ArchiveError

    settings = _settings(args)
    _need_workspace(settings)
    start, _, end = args.lines.partition("-")
    try:
        out = raw_lines(settings, args.ref, int(start), int(end) if end else int(start))
    except (ArchiveError, ValueError) as e:
        raise CliError(str(e)) from None
    _emit(args, out, lambda o: print("\n".join(o["text"])))
    return 0


def cmd_config(args) -> int:
    from kernel.settings import Settings

    settings = _settings(args)
    def shown(name):  # secrets are never printed
        value = getattr(settings, name)
        return "***" if name.endswith("api_key") and value else value

    fields = {name: {"value": shown(name), "description": f.description} for name, f in Settings.model_fields.items()}
    _emit(args, {k: v["value"] for k, v in fields.items()},
          lambda o: [print(f"AGENTOS_{k.upper():<18} = {v['value']!s:<40}  # {v['description']}") for k, v in fields.items()])
    return 0


def cmd_import(args) -> int:
    from digest import importers

    fn = {"memorybank": importers.import_memorybank, "locomo": importers.import_locomo}[args.dataset]
    src = Path(args.src)
    if not src.is_file():
        raise CliError(f"no such file: {src}")
    out = fn(src, Path(args.out))
    _emit(args, out, lambda o: print(json.dumps({k: v for k, v in o.items() if k != "files"}, ensure_ascii=False)))
    return 0


def cmd_serve(args) -> int:
    from deployments.serve import serve

    settings = _settings(args)
    _need_workspace(settings)
    return serve(settings, port=args.port, host=args.host, project_dir=Path(__file__).resolve().parents[1])


def cmd_demo(args) -> int:
    """init --demo, the nightly flow, then a few reads: what `make run` shows."""
    import shlex

    from agentos.demo import write_demo_materials, write_demo_memories

    settings = _settings(args)
    steps = [["init", "--demo"], ["nightly"], ["facts", "list"]]
    for argv in steps:
        print(f"\n$ agentos {shlex.join(argv)}", flush=True)
        if rc := main(argv):
            return rc
        if argv[0] == "init" and write_demo_memories(settings.home, settings.user):
            print("(demo: a memory record written by hand, records/default/回答风格.md, and a memory card in the inbox)")
        if argv[0] == "init" and write_demo_materials(settings.home):
            print("(demo: knowledge material in agent-local/materials/: two web clippings, a personal note and a PDF)")
    from storage.facts import open_facts

    store = open_facts(settings)  # pick the most-revised values of the demo to show their history
    subjects = [r[0] for r in store.db.execute(
        "select subject, count(*) n from facts where user_id=? and predicate='value' group by subject_key order by n desc, subject limit 2", [settings.user]).fetchall()]
    first_day = store.db.execute("select min(source_day) from facts where user_id=?", [settings.user]).fetchone()[0]
    store.close()
    reads = [["facts", "history", s] for s in subjects]
    if first_day:
        reads.append(["facts", "list", "--as-of", (date.fromisoformat(first_day) + timedelta(days=1)).isoformat()])
    reads.append(["facts", "conflicts"])
    reads += [["doctor"], ["query", "服务器现在是什么配置？"], ["query", "what is the database port?"], ["query", "我喜欢喝什么？"],
              ["query", "which database did we pick, and why?", "--raw", "--budget", "300"], ["query", "我的数据库密码是多少？"],
              ["query", "what is the weather on Mars?"],
              ["memory", "list"], ["memory", "proposals"], ["memory", "recall", "帮我写这周的周报"],
              ["memory", "recall", "what coffee do I like?"], ["kb", "pending"]]
    for argv in reads:
        print(f"\n$ agentos {shlex.join(argv)}", flush=True)
        if rc := main(argv):
            return rc
    from knowledge.publish import pending

    waiting = pending(settings, settings.user)  # the owner publishes the first pending document
    for argv in ([["kb", "approve", waiting[0]["id"]], ["kb", "show", waiting[0]["id"]]] if waiting else []) + [["kb", "list"]]:
        print(f"\n$ agentos {shlex.join(argv)}", flush=True)
        if rc := main(argv):
            return rc
    return 0


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="agentos", description="AgentOS Memory: layered memory for AI agents (workspace: AGENTOS_HOME).")
    sub = p.add_subparsers(dest="command", required=True)

    def add(name, fn, help, *, json_flag=True, user=True, logs=False, stage=False):
        sp = sub.add_parser(name, help=help, description=help)
        sp.set_defaults(fn=fn)
        if json_flag:
            sp.add_argument("--json", action="store_true", help="print one JSON document on stdout")
        if user:
            sp.add_argument("--user", help="user id (default: AGENTOS_USER)")
        if logs:
            sp.add_argument("--logs", metavar="DIR", help="working-memory folder with YYYY-MM-DD.md/.jsonl logs")
        if stage:
            sp.add_argument("--quiet", action="store_true", help="only warnings from Prefect")
        return sp

    sp = add("init", cmd_init, "create the workspace tree (and, with --demo, a week of sample logs)")
    sp.add_argument("--demo", action="store_true", help="write demo working-memory logs ending yesterday")
    sp = add("digest", cmd_digest, "digest one day's logs (default: yesterday)", logs=True, stage=True)
    sp.add_argument("--day", type=_date, help="YYYY-MM-DD (default: yesterday in the configured time zone)")
    sp = add("backfill", cmd_backfill, "digest a range of days in date order", logs=True, stage=True)
    sp.add_argument("--from", dest="start", type=_date, required=True, help="first day, YYYY-MM-DD")
    sp.add_argument("--to", dest="end", type=_date, required=True, help="last day, YYYY-MM-DD (inclusive)")
    sp = add("nightly", cmd_nightly, "run the nightly chain (digest every new or changed day up to yesterday)", logs=True, stage=True)
    sp.add_argument("--include-today", action="store_true", help="also digest today's log")

    facts = sub.add_parser("facts", help="read L2 facts", description="read L2 facts")
    fsub = facts.add_subparsers(dest="facts_command", required=True)
    for name, fn, help in (("list", cmd_facts_list, "facts valid now, or on --as-of DATE"),
                           ("history", cmd_facts_history, "every version of the facts about SUBJECT"),
                           ("conflicts", cmd_facts_conflicts, "conflicts kept for review"),
                           ("resolve", cmd_facts_resolve, "decide a conflict: --accept makes its value current, --reject keeps the store")):
        sp = fsub.add_parser(name, help=help, description=help)
        sp.set_defaults(fn=fn)
        sp.add_argument("--json", action="store_true", help="print one JSON document on stdout")
        sp.add_argument("--user", help="user id (default: AGENTOS_USER)")
        if name == "list":
            sp.add_argument("--as-of", type=_date, help="YYYY-MM-DD: the facts that held on that day")
            sp.add_argument("--min-confidence", type=float, default=0.0, help="hide facts below this confidence")
        elif name == "history":
            sp.add_argument("subject")
        elif name == "resolve":
            sp.add_argument("conflict_id", type=int)
            choice = sp.add_mutually_exclusive_group(required=True)
            choice.add_argument("--accept", action="store_true", help="the contested value becomes a new version (as a user correction)")
            choice.add_argument("--reject", action="store_true", help="keep what the store holds")
        else:
            sp.add_argument("--all", action="store_true", help="include resolved conflicts")

    sp = add("query", cmd_query, "ask memory: L0 rules -> L1 cards -> L2 facts (-> L3 raw lines with --raw), with sources and token count")
    sp.add_argument("text", help="the question, in any language")
    sp.add_argument("--raw", action="store_true", help="also read the raw lines of the matched cards (L3)")
    sp.add_argument("--k", type=int, help="how many units (cards and facts) to match at most (default: AGENTOS_QUERY_K, 5)")
    sp.add_argument("--budget", type=int, help="token budget of the answer (default: AGENTOS_QUERY_BUDGET, 1000)")
    sp.add_argument("--history", action="store_true", help="also show earlier (superseded) versions of the facts found")
    sp = add("rebuild", cmd_rebuild, "bring the keyword and vector indexes in step with cards and facts (the index-rebuild flow)", stage=True)
    sp.add_argument("--full", action="store_true", help="rebuild every unit, not only what changed")
    sp.add_argument("--direct", action="store_true", help="run the stages in this process without Prefect (no flow run is recorded)")
    add("doctor", cmd_doctor, "check that cards, facts and both indexes agree; exit 1 and list the drift when they do not")
    add("mcp", cmd_mcp, "serve the layered query, fact lookups and raw reads to agents over MCP (stdio)", json_flag=False)
    bench = sub.add_parser("bench", help="benchmarks on public data (the real flows and query path)",
                           description="benchmarks on public data (the real flows and query path)")
    bsub = bench.add_subparsers(dest="runner", required=True)
    sp = bsub.add_parser("locomo", help="evidence recall on LoCoMo beside raw-turn baselines", description="evidence recall on LoCoMo beside BM25, dense and fused raw-turn baselines")
    sp.set_defaults(fn=cmd_bench)
    sp.add_argument("path", help="a file in the LoCoMo schema, e.g. ../shared/eval/locomo/locomo.json")
    sp.add_argument("--limit", type=int, help="only the first N conversations (a quick run)")
    sp.add_argument("--report", help="write the Markdown report here")
    sp.add_argument("--plot", help="write the recall-against-budget plot (PNG) here")
    sp.add_argument("--json", action="store_true", help="print one JSON object on stdout")
    sp = bsub.add_parser("madial", help="memory recall on MADial-Bench (zh or en) beside BM25 and dense baselines",
                         description="memory recall (query.recall) on MADial-Bench: recall@5, nDCG@5, MRR@10 beside BM25 and dense baselines")
    sp.set_defaults(fn=cmd_bench)
    sp.add_argument("path", help="the MADial-Bench folder with {zh,en}_memories.jsonl and {zh,en}_queries.jsonl, e.g. ../shared/eval/madial")
    sp.add_argument("--lang", choices=("zh", "en"), default="zh", help="which language's memories and queries (default zh)")
    sp.add_argument("--limit", type=int, help="only the first N queries (a quick run)")
    sp.add_argument("--llm", metavar="URL#MODEL", help="also measure the chat selector on this OpenAI-compatible endpoint, e.g. http://127.0.0.1:8000/v1#qwen3-8b")
    sp.add_argument("--report", help="write the Markdown report here (one file per language, e.g. bench/results/madial-zh.md)")
    sp.add_argument("--json", action="store_true", help="print one JSON object on stdout")
    sp = bsub.add_parser("beir", help="passage retrieval through the knowledge read path on a BEIR-layout corpus (e.g. CMRC2018)",
                         description="passage retrieval through search_docs on a BEIR-layout corpus: R@1, R@5, MRR@10 and latency "
                                     "for hybrid, bm25-only and dense-only (one knowledge document per passage)")
    sp.set_defaults(fn=cmd_bench)
    sp.add_argument("path", help="a folder with corpus.jsonl, queries.jsonl and qrels.tsv, e.g. ../shared/eval/cmrc2018")
    sp.add_argument("--limit", type=int, help="only the first N queries; the corpus is cut to their relevant passages plus 10 others (a quick run)")
    sp.add_argument("--k", type=int, default=10, help="sections asked of search_docs per query (default 10)")
    sp.add_argument("--work", help="keep the bench workspace here so its vector cache is reused by the next run (default: a temporary one)")
    sp.add_argument("--report", help="write the Markdown report here, e.g. bench/results/beir-cmrc2018.md")
    sp.add_argument("--json", action="store_true", help="print one JSON object on stdout")
    sp = bsub.add_parser("links", help="section retrieval on the Vue docs (zh): link texts and English headings -> the linked zh section",
                         description="section retrieval through search_docs on the Chinese Vue docs: internal link texts (zh), English "
                                     "heading texts (and, with --en, English link texts) -> the gold zh section; hit@1, hit@5, MRR@10 "
                                     "for hybrid, bm25-only and dense-only")
    sp.set_defaults(fn=cmd_bench)
    sp.add_argument("path", help="the vue_docs_zh_cn folder (src/ and derived/), e.g. ../shared/eval/vue_docs_zh_cn")
    sp.add_argument("--en", help="the vue_docs_en folder: also its internal link texts as English queries against the zh sections")
    sp.add_argument("--limit", type=int, help="only the first N queries of each set; only the files they target are indexed (a quick run)")
    sp.add_argument("--work", help="keep the bench workspace here so its vector cache is reused by the next run (default: a temporary one)")
    sp.add_argument("--report", help="write the Markdown report here, e.g. bench/results/links-vue.md")
    sp.add_argument("--json", action="store_true", help="print one JSON object on stdout")
    sp = bsub.add_parser("perf", help="index build, incremental runs, query latency and memory at several sizes",
                         description="index build, incremental runs, query latency and memory at several sizes (half cards, half facts)")
    sp.set_defaults(fn=cmd_bench)
    sp.add_argument("--size", type=int, action="append", help="units (repeatable; default 1000 and 10000; 100000 is optional and slow)")
    sp.add_argument("--queries", type=int, default=200, help="queries for the latency figures")
    sp.add_argument("--report", help="write the Markdown report here")
    sp.add_argument("--json", action="store_true", help="print one JSON object on stdout")
    sp = add("raw", cmd_raw, "read lines of an archived log (L3) by reference")
    sp.add_argument("ref", help="<user>/<day>/r<N>/<file>, as cards and facts give it")
    sp.add_argument("--lines", default="1-40", help="START-END, 1-based inclusive (default 1-40)")
    add("config", cmd_config, "show the settings in effect and what each means")
    from agentos.cli_kb import add_kb_parser
    from agentos.cli_knowledge import add_collect_parser
    from agentos.cli_memory import add_memory_parser

    add_memory_parser(sub)
    add_collect_parser(sub)
    add_kb_parser(sub, add)
    sp = add("import", cmd_import, "turn a public dataset into daily logs", user=False)
    sp.add_argument("dataset", choices=["memorybank", "locomo"])
    sp.add_argument("src", help="the dataset's JSON file")
    sp.add_argument("--out", required=True, help="folder to write <user>/<YYYY-MM-DD>.md into")
    sp = add("serve", cmd_serve, "run a local Prefect server (with UI) and serve every deployment on its schedule", json_flag=False)
    sp.add_argument("--port", type=int, help="port of the server and its UI (default: AGENTOS_PREFECT_PORT, 4200)")
    sp.add_argument("--host", help="address to bind (default: AGENTOS_PREFECT_HOST, 127.0.0.1; 0.0.0.0 for every interface)")
    add("demo", cmd_demo, "init --demo, run the nightly flow and print a few queries (what `make run` does)", json_flag=False)
    return p


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return args.fn(args) or 0
    except CliError as e:
        print(f"agentos: error: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
    except Exception as e:  # noqa: BLE001 - one line for the user; the details are in the logs
        print(f"agentos: error: {type(e).__name__}: {e}", file=sys.stderr)
        return 1


def entrypoint() -> None:
    sys.exit(main())


if __name__ == "__main__":
    entrypoint()
