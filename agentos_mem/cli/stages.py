"""``agentos digest``, ``backfill``, ``nightly`` and ``rebuild`` run the Prefect flows (on the server ``agentos
serve`` runs, a configured ``PREFECT_API_URL``, or Prefect's ephemeral server; ``rebuild --direct`` without
Prefect); ``doctor`` checks, without Prefect, what ``rebuild`` repairs."""

from __future__ import annotations

from agentos_mem.cli.common import CliError, add_command, emit, finish_stage, need_workspace, parse_date, prepare_flows, settings_from_args
from agentos_mem.digest.report import summary_lines
from agentos_mem.index.report import RebuildReport
from agentos_mem.kernel.workspace import Workspace

COMMANDS = ("digest", "backfill", "nightly", "rebuild", "doctor")


def _print_digest(r: dict) -> None:
    print("\n".join(summary_lines(r)))


def _need_logs(args, settings) -> None:
    """CliError when the logs folder named by ``--logs`` (or AGENTOS_LOGS_DIR) is not there: a typo must not read
    as a day without logs. The workspace's own folder may be missing: no logs yet."""
    from pathlib import Path

    if settings.logs_dir is not None and not Path(settings.logs_dir).is_dir():
        how = "--logs" if getattr(args, "logs", None) else "AGENTOS_LOGS_DIR"
        what = "is not a folder" if Path(settings.logs_dir).exists() else "does not exist"
        raise CliError(f"logs folder {settings.logs_dir} ({how}) {what}")


def _run_over_logs(args, settings, stage, render) -> int:
    """Run ``stage(flows, logs_dir)``, a flow over the logs folder, and print its report. The folder is checked
    before Prefect starts, and the ephemeral server drains before the report is printed."""
    _need_logs(args, settings)
    fl = prepare_flows(settings, args.quiet)
    r = stage(fl, str(settings.working_dir()))
    finish_stage()
    emit(args, r, render)
    return 0


def cmd_digest(args) -> int:
    settings = settings_from_args(args)
    need_workspace(settings)
    return _run_over_logs(args, settings, lambda fl, logs: fl.daily.daily_digest(day=args.day, user=settings.user, logs_dir=logs),
                          _print_digest)


def cmd_backfill(args) -> int:
    settings = settings_from_args(args)
    need_workspace(settings)
    if args.end < args.start:
        raise CliError(f"--to {args.end} is before --from {args.start}")
    return _run_over_logs(
        args, settings, lambda fl, logs: fl.daily.backfill(start=args.start, end=args.end, user=settings.user, logs_dir=logs), _print_digest
    )


def cmd_nightly(args) -> int:
    settings = settings_from_args(args)
    need_workspace(settings)
    return _run_over_logs(
        args,
        settings,
        lambda fl, logs: fl.nightly.nightly(user=settings.user, logs_dir=logs, include_today=args.include_today or None),
        lambda o: (print("nightly chain: " + " -> ".join(o["stages"])), _print_digest(o["digest"]), _print_knowledge(o),
                   _print_rebuild(o["index"])),
    )


def _print_knowledge(o: dict) -> None:
    c, r, m = o.get("collect") or {}, o.get("refine") or {}, o.get("memory_inbox") or {}
    print(f"knowledge: collected {len(c.get('collected', []))} item(s), refused {len(c.get('refused', []))}"
          + "".join(f"\n  refused {x['file']}: {x['reason']}" for x in c.get("refused", [])))
    print(f"  refined {len(r.get('refined', []))} into pending documents, {len(r.get('duplicates', []))} duplicate(s), "
          f"{len(r.get('quarantined', []))} quarantined; memory cards taken: {m.get('cards', 0)}")
    for e in c.get("errors", []) + r.get("errors", []):
        print(f"  error (skipped): {e}")


def _print_rebuild(r: dict) -> None:
    print("\n".join(RebuildReport.from_dict(r).summary_lines()))
    kb = r.get("sections")  # `agentos rebuild`'s: the knowledge sections embedded beside the memory indexes
    if kb:
        print(f"knowledge sections: {kb['sections']}, {kb['embedded']} embedded now"
              + (f" (and {kb['sentences_embedded']} of their sentences)" if kb.get("sentences_embedded") else ""))


def cmd_rebuild(args) -> int:
    settings = settings_from_args(args)
    need_workspace(settings)
    if args.direct:
        # lazy: index.stages (30 modules) and index.vectors stay off `agentos` start-up
        from agentos_mem.index.stages import rebuild
        from agentos_mem.index.vectors import embed_sections

        r = rebuild(settings, full=args.full)
        # as the index-rebuild flow does: the sections knowledge search would otherwise rank by keywords alone
        r["sections"] = embed_sections(settings)
    else:
        fl = prepare_flows(settings, args.quiet)
        r = fl.rebuild.index_rebuild(full=args.full)
        finish_stage()
    emit(args, r, _print_rebuild)
    return 0


def cmd_doctor(args) -> int:
    # lazy: index.stages (30 modules); storage.health (2 modules) stay off `agentos` start-up
    from agentos_mem.index.stages import doctor
    from agentos_mem.storage.health import damaged, kept_damage, no_room

    settings = settings_from_args(args)
    need_workspace(settings)
    bad = [d.line(settings.home) for d in damaged(settings.home)]  # first: a damaged store fails every check below
    # an older generation the rebuild keeps is read by nobody while the live one is intact: a note, never a failure
    kept = kept_damage(settings.home)
    if bad:
        r = {"ok": False, "generation": None, "drift": [], "damaged": bad, "warnings": kept, "counts": {}}
    else:
        try:
            r = doctor(settings, viewer=settings.user)  # other users' drift counted, their unit ids not shown
        except Exception as e:  # noqa: BLE001 - only a full disk is said here; anything else goes on up
            full = no_room(e, Workspace(settings.home).local)
            if full is None:
                raise
            # the stores were checked above and none is damaged; the indexes cannot be compared without room (Chroma
            # writes its file when it opens it, the card cache its -shm file): say so, never "damaged"
            r = {"ok": False, "generation": None, "drift": [], "disk_full": full, "warnings": [], "counts": {}}
        r["damaged"] = []
        r["warnings"] = [*(r.get("warnings") or []), *kept]
        # lazy: restore.replay (10 modules) stays off `agentos` start-up
        from agentos_mem.restore.replay import pending, refusal, workspace_users

        waiting, problems = pending(settings)  # the journal: decisions synced from another machine, damaged lines
        users = workspace_users(settings)
        refused = [f"{e['_file']}:{e['_line']}: {e['kind']}: not applied ({why})" for e in waiting
                   if (why := refusal(settings, e, users)) is not None]
        waiting = [e for e in waiting if refusal(settings, e, users) is None]
        problems = [*problems, *refused]
        r["journal"] = {"not_applied": len(waiting), "problems": problems}
        r["warnings"] = [*(r.get("warnings") or []), *[f"journal: {p}" for p in problems],
                         *([f"journal: {len(waiting)} decision(s) made on another machine are not applied here yet (the next "
                            "`agentos nightly` applies them; one whose log has not synced yet waits for it)"] if waiting else [])]

    def render(o):
        for line in o["damaged"]:
            print(f"damaged: {line}")
        print(f"index generation {o['generation'] or '(none)'}" + (f", embedder {o['embedder']}" if o.get("embedder") else ""))
        for name, c in (o.get("counts") or {}).items():
            print(f"  user {c['user']}: stores {c['stores']} units, manifest {c['manifest']}, keyword {c['keyword']}, vector {c['vector']}")
        if o["ok"]:
            print("ok: cards, facts, keyword index and vector index agree")
        elif o["damaged"]:
            print("not checked further: the stores above are damaged")
        elif o.get("disk_full"):
            print(f"{o['disk_full']}\nnot checked further: the stores read intact; comparing them with the indexes needs room")
        else:
            print(f"drift ({len(o['drift'])}): the next rebuild (`agentos rebuild`, or the nightly flow) repairs it")
            for line in o["drift"]:
                print(f"  - {line}")
        for line in o.get("warnings") or []:
            print(f"warning: {line}")

    emit(args, r, render)
    return 0 if r["ok"] else 1


def add_parser(sub, name: str) -> None:
    """Register the command ``name`` (one of COMMANDS); cli.main decides the order of ``agentos --help``."""
    if name == "digest":
        sp = add_command(sub, "digest", cmd_digest, "digest one day's logs (default: yesterday)", logs=True, stage=True)
        sp.add_argument("--day", type=parse_date, help="YYYY-MM-DD (default: yesterday in the configured time zone)")
    elif name == "backfill":
        sp = add_command(sub, "backfill", cmd_backfill, "digest a range of days in date order", logs=True, stage=True)
        sp.add_argument("--from", dest="start", type=parse_date, required=True, help="first day, YYYY-MM-DD")
        sp.add_argument("--to", dest="end", type=parse_date, required=True, help="last day, YYYY-MM-DD (inclusive)")
    elif name == "nightly":
        sp = add_command(sub, "nightly", cmd_nightly, "run the nightly chain (digest every new or changed day up to yesterday)", logs=True, stage=True)
        sp.add_argument("--include-today", action="store_true", help="also digest today's log")
    elif name == "rebuild":
        sp = add_command(sub, "rebuild", cmd_rebuild, "bring the keyword and vector indexes in step with cards and facts (the index-rebuild flow)", stage=True)
        sp.add_argument("--full", action="store_true", help="rebuild every unit, not only what changed")
        sp.add_argument("--direct", action="store_true", help="run the stages in this process without Prefect (no flow run is recorded)")
    elif name == "doctor":
        add_command(sub, "doctor", cmd_doctor, "check that cards, facts and both indexes agree; exit 1 and list the drift when they do not")
    else:
        raise ValueError(f"not a stages command: {name!r}")
