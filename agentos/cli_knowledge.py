"""``agentos collect``: run the collect-to-inbox flow (register with ``add_collect_parser(sub)`` in agentos.cli)."""

from __future__ import annotations


def _print_collect(r: dict) -> None:
    print(f"user {r['user']}: {len(r['collected'])} item(s) collected into the inbox, {r['duplicates']} duplicate(s) skipped")
    for c in r["collected"]:
        print(f"  + {c['partition']}/{c['file'].split('/')[-1]}  <- {c['source']}")
    if r["refused"]:
        print(f"  refused ({len(r['refused'])}; also in logs/quarantine.jsonl):")
        for x in r["refused"]:
            print(f"    - {x['reason']}  [{x['file']}]")
    for e in r["errors"]:
        print(f"  error: {e}")
    for w in r["warnings"]:
        print(f"  warning: {w}")


def cmd_collect(args) -> int:
    """Run the collect-to-inbox flow; exit 0 even when files were refused (they are listed), 1 when a source failed."""
    from agentos.cli import CliError, _emit, _finish_stage, _flows, _need_workspace, _settings
    from knowledge.collect import SourcesError, load_sources

    settings = _settings(args)
    _need_workspace(settings)
    try:
        load_sources(settings)  # a broken sources.yaml is one line here, before Prefect starts
    except SourcesError as e:
        raise CliError(str(e)) from None
    _flows(settings, getattr(args, "quiet", False))
    import flows.collect

    r = flows.collect.collect_to_inbox(user=settings.user)
    _finish_stage()
    _emit(args, r, _print_collect)
    return 1 if any(p["status"] == "failed" for p in r["per_source"].values()) else 0


def add_collect_parser(sub) -> None:
    help = "collect material (folders, clippings, feeds, tools, personal notes, memory cards) into the inbox, with provenance"
    sp = sub.add_parser("collect", help=help, description=help + "; sources are listed in 03_knowledge/99_system/sources.yaml")
    sp.set_defaults(fn=cmd_collect)
    sp.add_argument("--json", action="store_true", help="print one JSON document on stdout")
    sp.add_argument("--user", help="user id recorded as owner (default: AGENTOS_USER)")
    sp.add_argument("--quiet", action="store_true", help="only warnings from Prefect")
