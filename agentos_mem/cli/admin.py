"""``agentos init``, ``restore``, ``config``, ``import`` and ``serve``: the workspace (new, or a second machine's from
agent-sync), its settings, public datasets as logs, and the local Prefect server."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from agentos_mem.cli.common import CliError, add_command, add_quiet, counted, emit, need_workspace, settings_from_args
from agentos_mem.demo import init_demo_workspace
from agentos_mem.kernel import clock
from agentos_mem.kernel.settings import Settings
from agentos_mem.kernel.workspace import init_workspace
from agentos_mem.safety.secrets import mask_text

COMMANDS = ("init", "restore", "config", "import", "serve")
SIGNAL_POLL_S = 1.0  # how often `serve --query-only`'s main thread wakes to act on a signal another thread received


def cmd_init(args) -> int:
    settings = settings_from_args(args)
    end = clock.yesterday(settings.timezone)
    out = (init_demo_workspace(settings.home, user=settings.user, end_day=end) if args.demo else init_workspace(settings.home))
    emit(args, out, lambda o: print(f"workspace ready at {o['home']}" + (f"; {len(o['demo_logs'])} demo log files written" if o["demo_logs"] else "")))
    return 0


def cmd_restore(args) -> int:
    # lazy: restore.run (27 modules) stays off `agentos` start-up
    from agentos_mem.restore.run import RestoreError, RestoreFailed, restore

    settings = settings_from_args(args)
    try:
        report = restore(settings, force=args.force, log=(lambda m: None) if args.json else (lambda m: print(m, flush=True))).to_dict()
    except RestoreFailed as e:  # not the user's to fix as asked: one line, exit 1, nothing lost
        print(f"agentos: error: {e}", file=sys.stderr)
        return 1
    except RestoreError as e:
        raise CliError(str(e)) from None

    def render(r):
        days = sum(len(d) for d in r["users"].values())
        print(f"restored {r['home']} from agent-sync in {r['seconds']['total']} s: {days} day(s) of {len(r['users'])} user(s) digested, "
              f"{len(r['documents'])} knowledge document(s), {len(r['decisions']['applied'])} decision(s) replayed from the journal")
        if r["moved_aside"]:
            print(f"  this machine's earlier derived stores: {r['moved_aside']}")
        for d in r["decisions"]["waiting"]:
            print(f"  waiting (its target is not here yet; retried by every nightly run): {d}")
        for p in r["problems"] + r["decisions"]["problems"]:
            print(f"  problem: {p}")
        print(f"  indexes: generation {r['index'].get('generation')}, {r['index'].get('units')} unit(s), "
              f"{r['index'].get('sections')} knowledge section(s)")

    emit(args, report, render)
    return 0


def cmd_config(args) -> int:
    settings = settings_from_args(args)
    def shown(name):  # secrets are never printed: a key, nor the password inside a URL (http://user:PASS@host/v1)
        value = getattr(settings, name)
        if name.endswith("api_key") and value:
            return "***"
        return mask_text(value) if isinstance(value, str) and "://" in value else value

    fields = {name: {"value": shown(name), "description": f.description} for name, f in Settings.model_fields.items()}
    emit(args, {k: v["value"] for k, v in fields.items()},
          lambda o: [print(f"AGENTOS_{k.upper():<18} = {v['value']!s:<40}  # {v['description']}") for k, v in fields.items()])
    return 0


def cmd_import(args) -> int:
    # lazy: digest.importers (4 modules) stays off `agentos` start-up
    from agentos_mem.digest import importers

    fn = {"memorybank": importers.import_memorybank, "locomo": importers.import_locomo}[args.dataset]
    src = Path(args.src)
    if not src.is_file():
        raise CliError(f"no such file: {src}")
    out = fn(src, Path(args.out))
    emit(args, out, lambda o: print(json.dumps({k: v for k, v in o.items() if k != "files"}, ensure_ascii=False)))
    return 0


def cmd_serve(args) -> int:
    # lazy: mcp_server.local_service (4 modules) stays off `agentos` start-up
    from agentos_mem.mcp_server.local_service import QueryService

    settings = settings_from_args(args)
    need_workspace(settings)
    # Before `serve` changes the working directory and the environment its scheduled runs inherit.
    service = QueryService(settings)
    try:
        # started inside the try: a SIGTERM that lands while it starts (its service file written, its warm-up thread
        # not yet running) still removes the file on the way out
        service.start()
        if args.query_only:
            import threading

            # lazy: mcp_server.local_service (4 modules) stays off `agentos` start-up
            from agentos_mem.mcp_server.local_service import idle_for

            idle = args.idle_exit
            print(f"[agentos] query service on 127.0.0.1:{service.port} for {service.home} "
                  f"(`agentos query` uses it; Ctrl-C stops it{f'; exits after {idle} s without a question' if idle else ''})", flush=True)
            wake = threading.Event()
            while not (idle and idle_for(service) >= idle):
                # never an untimed wait: a SIGTERM the kernel hands to another of the process's threads (the answering
                # one, the model's) only trips a flag, which the main thread acts on when it next runs; blocked for good
                # in a lock, it never would (seen: a stopped service that never stopped)
                wake.wait(min(idle, SIGNAL_POLL_S) if idle else SIGNAL_POLL_S)
            return 0
        # lazy: deployments.serve (6 modules) stays off `agentos` start-up
        from agentos_mem.deployments.serve import serve

        return serve(settings, port=args.port, host=args.host)
    finally:
        service.stop()


def add_parser(sub, name: str) -> None:
    """Register the command ``name`` (one of COMMANDS); cli.main decides the order of ``agentos --help``."""
    if name == "init":
        sp = add_command(sub, "init", cmd_init, "create the workspace tree (and, with --demo, a week of sample logs)")
        sp.add_argument("--demo", action="store_true", help="write demo working-memory logs ending yesterday")
    elif name == "restore":
        sp = add_command(sub, "restore", cmd_restore, "make every derived store (facts, cards, knowledge registry, indexes) again from "
                         "agent-sync: a second machine, or a lost agent-local", user=False)
        sp.add_argument("--force", action="store_true", help="this machine already holds derived stores: move them to "
                        "agent-local/restore-backup-<time>/ and restore anyway")
        add_quiet(sp)
    elif name == "config":
        add_command(sub, "config", cmd_config, "show the settings in effect and what each means")
    elif name == "import":
        sp = add_command(sub, "import", cmd_import, "turn a public dataset into daily logs", user=False)
        sp.add_argument("dataset", choices=["memorybank", "locomo"])
        sp.add_argument("src", help="the dataset's JSON file")
        sp.add_argument("--out", required=True, help="folder to write <user>/<YYYY-MM-DD>.md into")
    elif name == "serve":
        sp = add_command(sub, "serve", cmd_serve, "run a local Prefect server (with UI) and serve every deployment on its schedule; "
                         "keep the warm query service `agentos query` uses", json_flag=False)
        sp.add_argument("--query-only", action="store_true", help="only keep the warm query service (no Prefect server, no schedules)")
        sp.add_argument("--idle-exit", type=counted(), metavar="SECONDS", help="with --query-only: exit after this many seconds without a question")
        sp.add_argument("--port", type=counted(1, 65535), help="port of the server and its UI (default: AGENTOS_PREFECT_PORT, 4200)")
        sp.add_argument("--host", help="address to bind (default: AGENTOS_PREFECT_HOST, 127.0.0.1; 0.0.0.0 for every interface)")
    else:
        raise ValueError(f"not an admin command: {name!r}")
