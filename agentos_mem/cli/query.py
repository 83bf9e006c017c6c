"""``agentos query`` (the layered query), ``raw`` (archived log lines by reference) and ``mcp`` (the same reads
served to agents over MCP, stdio). No Prefect here."""

from __future__ import annotations

import sys

from agentos_mem.cli.common import CliError, add_command, counted, emit, need_workspace, settings_from_args, start_service_if_asked
from agentos_mem.kernel.settings import load_settings
from agentos_mem.kernel.workspace import Workspace

COMMANDS = ("query", "raw", "mcp")


def cmd_query(args) -> int:
    if not args.in_process:
        # lazy: mcp_server.local_service (4 modules) stays off `agentos` start-up
        from agentos_mem.mcp_server.local_service import Refused, Unavailable, ask_service

        try:
            reply = ask_service({"text": args.text, "user": getattr(args, "user", None), "raw": args.raw, "k": args.k,
                                 "budget": args.budget, "history": args.history})
        except Refused as e:
            raise CliError(str(e)) from None
        except Unavailable as e:
            # no warm service for this workspace and these settings: answer here, the same way (and, when the
            # settings ask for it, start one for the next questions); a service that stalled is named on stderr
            if e.notice:
                print(f"agentos: {e.notice}", file=sys.stderr)
            if e.none_running:
                start_service_if_asked()
        else:
            emit(args, reply["answer"], lambda o: print(reply["text"]))
            return 0
    # lazy: the query stack (query.ask) stays off `agentos` start-up
    from agentos_mem.query.ask import QueryError, ask, format_answer

    settings = settings_from_args(args)
    need_workspace(settings)
    try:
        a = ask(args.text, user=settings.user, raw=args.raw, k=args.k, budget=args.budget, history=args.history, settings=settings)
    except QueryError as e:
        raise CliError(str(e)) from None
    emit(args, a.to_dict(), lambda o: print(format_answer(a)))
    return 0


def cmd_raw(args) -> int:
    # lazy: the query stack (query.facts); storage.raw_archive (4 modules) stay off `agentos` start-up
    from agentos_mem.query.facts import raw_lines
    from agentos_mem.storage.raw_archive import ArchiveError

    settings = settings_from_args(args)
    need_workspace(settings)
    start, _, end = args.lines.partition("-")
    try:
        out = raw_lines(settings, args.ref, int(start), int(end) if end else int(start))
    except (ArchiveError, ValueError) as e:
        raise CliError(str(e)) from None
    emit(args, out, lambda o: print("\n".join(o["text"])))
    return 0


def cmd_mcp(args) -> int:
    # lazy: mcp_server.server pulls the MCP SDK: kept off `agentos` start-up
    from agentos_mem.mcp_server.server import run_stdio

    settings = settings_from_args(args)
    need_workspace(settings)
    run_stdio(settings)
    return 0


def add_parser(sub, name: str) -> None:
    """Register the command ``name`` (one of COMMANDS); cli.main decides the order of ``agentos --help``."""
    if name == "query":
        sp = add_command(sub, "query", cmd_query, "ask memory: L0 rules -> L1 cards -> L2 facts (-> L3 raw lines with --raw), with sources and token count")
        sp.add_argument("text", help="the question, in any language")
        sp.add_argument("--raw", action="store_true", help="also read the raw lines of the matched cards (L3)")
        sp.add_argument("--k", type=counted(), help="how many units (cards and facts) to match at most (default: AGENTOS_QUERY_K, 5)")
        sp.add_argument("--budget", type=counted(), help="token budget of the answer (default: AGENTOS_QUERY_BUDGET, 1000)")
        sp.add_argument("--history", action="store_true", help="also show earlier (superseded) versions of the facts found")
        sp.add_argument("--in-process", action="store_true",
                        help="answer in this process even when a warm query service (agentos serve / mcp) runs for the workspace")
    elif name == "raw":
        sp = add_command(sub, "raw", cmd_raw, "read lines of an archived log (L3) by reference")
        sp.add_argument("ref", help="<user>/<day>/r<N>/<file>, as cards and facts give it")
        sp.add_argument("--lines", default="1-40", help="START-END, 1-based inclusive (default 1-40)")
    elif name == "mcp":
        add_command(sub, "mcp", cmd_mcp, "serve the layered query, fact lookups and raw reads to agents over MCP (stdio)", json_flag=False)
    else:
        raise ValueError(f"not a query command: {name!r}")
