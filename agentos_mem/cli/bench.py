"""``agentos bench locomo / madial / beir / links / facts / crosslingual / restore / perf``: benchmarks over public data through the real flows
and query path (bench); a readable table, a Markdown report, or ``--json``. ``agentos bench data fetch / list``: the public
sets fetched from their upstream at a pinned commit (bench.data). A runner's data path defaults to its set under the
data root (``--data DIR``, else ``$AGENTOS_EVAL_DIR``, else the fetched cache in the workspace)."""

from __future__ import annotations

import sys
from pathlib import Path

from agentos_mem.cli.common import CliError, add_quiet, counted, emit, finish_stage

COMMANDS = ("bench",)


def _report_and_emit(args, res: dict, runner, command: str) -> None:
    """Write the Markdown report (``--report``) and print the result, for a runner module with ``markdown(res,
    command)`` and ``render(res)`` (locomo and perf write theirs through bench.report)."""
    if args.report:
        Path(args.report).write_text(runner.markdown(res, command), encoding="utf-8")
    emit(args, res, lambda o: print(runner.render(o)))


# Each runner's data under the data root when its path is not given.
DEFAULT_DATA = {"locomo": "locomo/locomo.json", "madial": "madial", "beir": "cmrc2018", "links": "vue_docs_zh_cn",
                "facts": "fact_updates", "crosslingual": "."}


def _data_path(args) -> None:
    """Fill ``args.path`` from the data root when the runner was given none; a missing set is one line naming how to
    get it."""
    # lazy: bench.data reads the settings only when asked
    from agentos_mem.bench import data

    if getattr(args, "path", None) or args.runner not in DEFAULT_DATA:
        return
    try:
        args.path = str(data.need(data.data_root(args.data), DEFAULT_DATA[args.runner], f"bench {args.runner}"))
    except data.DataError as e:
        raise CliError(str(e)) from None


def cmd_data(args) -> int:
    """``agentos bench data fetch NAME|all`` / ``agentos bench data list``."""
    # lazy: bench.data reads the settings only when asked
    from agentos_mem.bench import data

    log = lambda m: print(f"[bench data] {m}", file=sys.stderr, flush=True)  # noqa: E731
    if args.action == "list":
        root = data.data_root(args.data)
        rows = data.status(root)
        emit(args, {"root": str(root), "sets": rows}, lambda o: print("\n".join(
            [f"data root: {o['root']}"] + [f"{r['name']:<16} {'present' if r['present'] else 'not fetched':<12} {r['licence']:<6} "
                                            f"{r['repo']}@{r['commit'][:12]}: {r['what']}" for r in o["sets"]])))
        return 0
    dest = Path(args.to) if args.to else data.cache_dir()
    try:
        rows = data.fetch(args.names, dest, base=args.from_url or data.UPSTREAM, log=log)
    except data.DataError as e:
        raise CliError(str(e)) from None
    emit(args, {"root": str(dest), "sets": rows}, lambda o: print("\n".join(
        f"{r['name']}: {r['fetched']} fetched, {r['kept']} already there ({r['licence']}) -> {r['folder']}" for r in o["sets"])))
    return 0


def cmd_bench(args) -> int:
    """Benchmarks over public data through the real flows and query path; readable table or --json."""
    import shlex

    # lazy: the query stack (bench.report) stays off `agentos` start-up
    from agentos_mem.bench import report

    log = lambda m: print(f"[bench] {m}", file=sys.stderr, flush=True)  # noqa: E731
    command = "agentos " + shlex.join(sys.argv[1:] if sys.argv[1:2] == ["bench"] else ["bench", args.runner])
    _data_path(args)
    if args.runner == "locomo":
        # lazy: the query stack (bench.locomo) stays off `agentos` start-up
        from agentos_mem.bench import locomo

        if not Path(args.path).is_file():
            raise CliError(f"no LoCoMo file at {args.path}")
        res = locomo.run(args.path, limit=args.limit, log=log)
        if args.plot:
            report.locomo_plot(res, Path(args.plot))
        if args.report:
            plot = Path(args.plot).name if args.plot else None
            Path(args.report).write_text(report.locomo_markdown(res, command, plot), encoding="utf-8")
        finish_stage()
        emit(args, res, lambda o: print(locomo.render(o)))
    elif args.runner == "madial":
        # lazy: the query stack (bench.madial) stays off `agentos` start-up
        from agentos_mem.bench import madial

        if not (Path(args.path) / f"{args.lang}_memories.jsonl").is_file():
            raise CliError(f"no {args.lang}_memories.jsonl in {args.path} (the MADial-Bench data folder)")
        res = madial.run(args.path, lang=args.lang, limit=args.limit, llm=args.llm, log=log)
        _report_and_emit(args, res, madial, command)
    elif args.runner == "beir":
        # lazy: the query stack (bench.beir) stays off `agentos` start-up
        from agentos_mem.bench import beir

        if not (Path(args.path) / "corpus.jsonl").is_file():
            raise CliError(f"no corpus.jsonl in {args.path} (a BEIR-layout folder: corpus.jsonl, queries.jsonl, qrels.tsv)")
        res = beir.run(args.path, limit=args.limit, k=args.k, work=args.work, log=log)
        _report_and_emit(args, res, beir, command)
    elif args.runner == "links":
        # lazy: the query stack (bench.links) stays off `agentos` start-up
        from agentos_mem.bench import links

        if not (Path(args.path) / "derived" / "internal_anchor_links.jsonl").is_file():
            raise CliError(f"no derived/internal_anchor_links.jsonl in {args.path} (the vue_docs_zh_cn folder)")
        if args.en and not (Path(args.en) / "src").is_dir():
            raise CliError(f"no src/ in {args.en} (the vue_docs_en folder)")
        res = links.run(args.path, en=args.en, limit=args.limit, work=args.work, log=log)
        _report_and_emit(args, res, links, command)
    elif args.runner == "crosslingual":
        # lazy: the query stack (bench.cross_lingual) stays off `agentos` start-up
        from agentos_mem.bench import cross_lingual

        if not (Path(args.path) / "madial").is_dir() or not (Path(args.path) / "vue_docs_zh_cn").is_dir():
            raise CliError(f"no madial/ and vue_docs_zh_cn/ in {args.path} (the evaluation data folder)")
        res = cross_lingual.run(args.path, work=args.work, limit=args.limit, log=log)
        _report_and_emit(args, res, cross_lingual, command)
    elif args.runner == "restore":
        # lazy: the query stack (bench.restore) stays off `agentos` start-up
        from agentos_mem.bench import restore

        if args.locomo and not Path(args.locomo).is_file():
            raise CliError(f"no LoCoMo file at {args.locomo}")
        res = restore.run(args.locomo, conversations=args.conversations, log=log)
        _report_and_emit(args, res, restore, command)
    elif args.runner == "facts":
        # lazy: the query stack (bench.facts) stays off `agentos` start-up
        from agentos_mem.bench import facts

        folder = Path(args.path)
        if not (any((folder / f"{s}.jsonl").is_file() for s in facts.SETS) if folder.is_dir() else folder.is_file()):
            raise CliError(f"no dev.jsonl or unseen.jsonl in {args.path} (the fact_updates folder)")
        try:
            res = facts.run(args.path, limit=args.limit, llm=args.llm, sets=args.set, log=log, llm_cache=args.llm_cache,
                            rules=not args.no_rules)
        except ValueError as e:
            raise CliError(str(e)) from None
        _report_and_emit(args, res, facts, command)
    else:
        # lazy: the query stack (bench.perf) stays off `agentos` start-up
        from agentos_mem.bench import perf

        res = perf.run([] if args.kb_only else (args.size or [1000, 10000]), queries=args.queries,
                       kb_sizes=[] if args.fanout_only else (args.kb_size or [1000, 10000, 100000]), log=log, workers=args.workers,
                       fanout_only=args.fanout_only)
        emit(args, res, lambda o: print(perf.render_sizes(o)))  # first: an hour's figures are never lost to the report
        if args.report:
            Path(args.report).write_text(report.perf_markdown(res, command), encoding="utf-8")
    return 0


def _runner(bsub, name: str, help: str, description: str):
    """One runner's parser: every runner goes through :func:`cmd_bench`, which branches on ``args.runner``."""
    sp = bsub.add_parser(name, help=help, description=description)
    sp.set_defaults(fn=cmd_bench)
    add_quiet(sp)  # progress off (`bench perf` with and without it: what the bar costs)
    return sp


def _add_data(sp) -> None:
    """``--data``: the folder holding the runner's set (an offline copy); default $AGENTOS_EVAL_DIR, else the cache
    ``agentos bench data fetch`` fills."""
    sp.add_argument("--data", metavar="DIR", help="the data root to read the set from (default: $AGENTOS_EVAL_DIR, else "
                    "the workspace's agent-local/bench-data/, which `agentos bench data fetch` fills)")


def _add_work(sp) -> None:
    """``--work``, for the runners that index documents (a kept workspace keeps its vector cache)."""
    sp.add_argument("--work", help="keep the bench workspace here so its vector cache is reused by the next run (default: a temporary one)")


def _add_outputs(sp, report_help: str) -> None:
    """``--report`` and ``--json``, the last options of a runner (its help text names where its report goes)."""
    sp.add_argument("--report", help=report_help)
    sp.add_argument("--json", action="store_true", help="print one JSON object on stdout")


def add_parser(sub, name: str = "bench") -> None:
    """Register ``bench`` and its runners."""
    if name != "bench":
        raise ValueError(f"not a bench command: {name!r}")
    bench = sub.add_parser("bench", help="benchmarks on public data (the real flows and query path)",
                           description="benchmarks on public data (the real flows and query path)")
    bsub = bench.add_subparsers(dest="runner", required=True)
    sp = _runner(bsub, "locomo", "evidence recall on LoCoMo beside raw-turn baselines",
                 "evidence recall on LoCoMo beside BM25, dense and fused raw-turn baselines")
    sp.add_argument("path", nargs="?", help="a file in the LoCoMo schema (default: locomo/locomo.json under the data root)")
    _add_data(sp)
    sp.add_argument("--limit", type=counted(), help="only the first N conversations (a quick run)")
    sp.add_argument("--report", help="write the Markdown report here")
    sp.add_argument("--plot", help="write the recall-against-budget plot (PNG) here")
    sp.add_argument("--json", action="store_true", help="print one JSON object on stdout")
    sp = _runner(bsub, "madial", "memory recall on MADial-Bench (zh or en) beside BM25 and dense baselines",
                 "memory recall (query.recall) on MADial-Bench: recall@5, nDCG@5, MRR@10 beside BM25 and dense baselines")
    sp.add_argument("path", nargs="?", help="the MADial-Bench folder with {zh,en}_memories.jsonl and {zh,en}_queries.jsonl (default: madial/ under the data root)")
    _add_data(sp)
    sp.add_argument("--lang", choices=("zh", "en"), default="zh", help="which language's memories and queries (default zh)")
    sp.add_argument("--limit", type=counted(), help="only the first N queries (a quick run)")
    sp.add_argument("--llm", metavar="URL#MODEL", help="also measure the chat selector on this OpenAI-compatible endpoint, e.g. http://127.0.0.1:8000/v1#qwen3-8b")
    _add_outputs(sp, "write the Markdown report here (one file per language, e.g. bench/results/madial-zh.md)")
    sp = _runner(bsub, "beir", "passage retrieval through the knowledge read path on a BEIR-layout corpus (e.g. CMRC2018)",
                 "passage retrieval through search_docs on a BEIR-layout corpus: R@1, R@5, MRR@10 and latency "
                 "for hybrid, bm25-only and dense-only (one knowledge document per passage)")
    sp.add_argument("path", nargs="?", help="a folder with corpus.jsonl, queries.jsonl and qrels.tsv (default: cmrc2018/ under the data root)")
    _add_data(sp)
    sp.add_argument("--limit", type=counted(), help="only the first N queries; the corpus is cut to their relevant passages plus 10 others (a quick run)")
    sp.add_argument("--k", type=counted(), default=10, help="sections asked of search_docs per query (default 10)")
    _add_work(sp)
    _add_outputs(sp, "write the Markdown report here, e.g. bench/results/beir-cmrc2018.md")
    sp = _runner(bsub, "links", "section retrieval on the Vue docs (zh): link texts and English headings -> the linked zh section",
                 "section retrieval through search_docs on the Chinese Vue docs: internal link texts (zh), English "
                 "heading texts (and, with --en, English link texts) -> the gold zh section; hit@1, hit@5, MRR@10 "
                 "for hybrid, bm25-only and dense-only")
    sp.add_argument("path", nargs="?", help="the vue_docs_zh_cn folder, src/ and derived/ (default: vue_docs_zh_cn/ under the data root)")
    _add_data(sp)
    sp.add_argument("--en", help="the vue_docs_en folder: also its internal link texts as English queries against the zh sections")
    sp.add_argument("--limit", type=counted(), help="only the first N queries of each set; only the files they target are indexed (a quick run)")
    _add_work(sp)
    _add_outputs(sp, "write the Markdown report here, e.g. bench/results/links-vue.md")
    sp = _runner(bsub, "facts", "fact extraction with supersession on fact_updates (zh / en): slots, questions, false facts",
                 "fact extraction with supersession on fact_updates: each case's days through the digest's stages, "
                 "then its current facts and the layered query scored slot by slot and question by question "
                 "(by kind, language, same-language vs cross-lingual), the rule path beside the chat-model path")
    sp.add_argument("path", nargs="?", help="the fact_updates folder (dev.jsonl and unseen.jsonl, each its own column) or one of its "
                    "files (default: fact_updates/ under the data root)")
    _add_data(sp)
    sp.add_argument("--limit", type=counted(), help="only the first N cases of each set (a quick run)")
    sp.add_argument("--set", choices=("dev", "unseen", "all"), default="all",
                    help="which set: dev (tuned on), unseen (someone else's, never tuned on) or all (default; each its own column)")
    sp.add_argument("--llm", metavar="URL#MODEL", help="also run the digest's chat-model extractor on this OpenAI-compatible endpoint, "
                    "e.g. http://127.0.0.1:8090/v1#qwen2.5-coder-1.5b (`make llm` serves one there)")
    sp.add_argument("--llm-cache", metavar="DIR", help="keep the chat model's answers in DIR across runs (each case's synced "
                    "extraction cache is read from and written back to it): a re-run asks the model only what changed")
    sp.add_argument("--no-rules", action="store_true", help="with --llm: run only the chat-model path")
    _add_outputs(sp, "write the Markdown report here, e.g. bench/results/facts.md")
    sp = _runner(bsub, "crosslingual", "questions in one language over memory and knowledge in the other (recall, knowledge answers)",
                 "memory recall on MADial (the same memories in Chinese and English) and knowledge answers on the Chinese "
                 "Vue docs (English headings aligned with Chinese sections), each asked across languages and in its own, "
                 "with LoCoMo questions as the unrelated control")
    sp.add_argument("path", nargs="?", help="the evaluation data folder with madial/, vue_docs_zh_cn/, locomo/ (default: the data root)")
    _add_data(sp)
    sp.add_argument("--limit", type=counted(), help="only the first N questions of each set (a quick run)")
    _add_work(sp)
    _add_outputs(sp, "write the Markdown report here, e.g. bench/results/cross-lingual.md")
    sp = _runner(bsub, "restore", "a second machine from agent-sync: restore time, facts and answers against the first machine",
                 "machine A digests the demo (and LoCoMo conversations) and makes decisions; a copy of its agent-sync alone is "
                 "restored as machine B (cold: every vector computed again), timed; facts and answers compared, ids aside")
    sp.add_argument("locomo", nargs="?", help="the LoCoMo JSON file (locomo/locomo.json of the evaluation data); without it, the demo only")
    sp.add_argument("--conversations", type=counted(), default=1, help="how many LoCoMo conversations (default 1)")
    _add_outputs(sp, "write the Markdown report here, e.g. bench/results/restore.md")
    dp = bsub.add_parser("data", help="the public data sets: fetch them from their upstream (pinned commit, sha256 checked) or list them",
                         description="the public data sets the benchmarks read: fetched from their upstream at a pinned commit, "
                         "each file's sha256 checked, into the workspace's agent-local/bench-data/ (or --to DIR)")
    dsub = dp.add_subparsers(dest="action", required=True)
    fp = dsub.add_parser("fetch", help="fetch sets by name, or all", description="fetch sets by name, or all: each file from "
                         "its upstream at the pinned commit, refused unless its sha256 is the pinned one")
    fp.add_argument("names", nargs="+", metavar="NAME", help="a set's name (agentos bench data list), or all")
    fp.add_argument("--to", metavar="DIR", help="fetch into DIR (default: the workspace's agent-local/bench-data/)")
    fp.add_argument("--from", dest="from_url", metavar="URL", help="a mirror laid out as {URL}/{owner}/{repo}/{commit}/{path} "
                    "(default: the upstream's raw files)")
    fp.add_argument("--json", action="store_true", help="print one JSON object on stdout")
    fp.set_defaults(fn=cmd_data)
    lp = dsub.add_parser("list", help="the sets, their licence and upstream, and whether they are here",
                         description="the sets, their licence and upstream, and whether their files are under the data root")
    _add_data(lp)
    lp.add_argument("--json", action="store_true", help="print one JSON object on stdout")
    lp.set_defaults(fn=cmd_data)
    sp = _runner(bsub, "perf", "index build, incremental runs, query latency and memory at several sizes",
                 "index build, incremental runs, query latency and memory at several sizes (half cards, half facts)")
    sp.add_argument("--size", type=counted(), action="append", help="units (repeatable; default 1000 and 10000; 100000 is optional and slow)")
    sp.add_argument("--queries", type=counted(), default=200, help="queries for the latency figures")
    sp.add_argument("--kb-size", type=counted(), action="append",
                    help="knowledge sections for the knowledge row (repeatable; default 1000, 10000 and 100000)")
    sp.add_argument("--kb-only", action="store_true", help="only the knowledge row (no memory workspace to embed)")
    sp.add_argument("--workers", type=counted(), help="also the embedding fan-out: a full rebuild on the Dask runner with 1, then N "
                    "worker processes, and the speed-up")
    sp.add_argument("--fanout-only", action="store_true", help="with --workers: only the fan-out (generate each size, then rebuild)")
    _add_outputs(sp, "write the Markdown report here")
