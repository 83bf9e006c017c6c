"""``agentos facts list / history / conflicts / resolve / forget``: the L2 facts, their versions and the conflicts kept
for review. No Prefect here."""

from __future__ import annotations

from agentos_mem.cli.common import CliError, counted, emit, fraction, need_workspace, parse_date, settings_from_args
from agentos_mem.kernel.domain import ROW_ID_MAX

COMMANDS = ("facts",)


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
        if r.get("status") == "may_have_changed":  # a later sentence no rule read may have changed it (storage.drift)
            extra.append(f"may have changed on {r['changed_on']}: “{r['newer']}”")
        elif r.get("status") == "statement":  # a self-disclosure no rule read: what the user said that day
            extra.append(f"statement said on {r['said_on']}")
        elif r.get("status") == "earlier":  # a newer fact of its topic thread replaced it (query.threads)
            extra.append(f"earlier: on {r['newer_on']} “{r['newer']}”")
        if r.get("stale"):
            extra.append(f"possibly outdated since {r['stale_since']}")
        elif r.get("expires_at"):
            extra.append(f"expires {r['expires_at'][:10]}")
        if r.get("closed_reason") and r.get("status") in ("retracted", "forgotten"):
            extra.append(f"{r['status']}: {r['closed_reason']}")
        tail = f" ({', '.join(extra)})" if extra else ""
        valid = r["valid_from"][:10] + (f"..{r['valid_to'][:10]}" if r.get("valid_to") else "..")
        print(f"#{r['id']:<4} {r['subject']} · {r['predicate']} · {r['object']}   "
              f"[{r['nature']}, {r['explicitness']}, {r['confidence']:.2f}, v{r['version']}, {valid}]{status}{tail}")


def cmd_facts_list(args) -> int:
    # lazy: the query stack (query.facts) stays off `agentos` start-up
    from agentos_mem.query.facts import facts_as_of

    settings = settings_from_args(args)
    need_workspace(settings)
    out = facts_as_of(settings, args.as_of, min_confidence=args.min_confidence)
    when = f"on {args.as_of}" if args.as_of else "now"
    emit(args, out, lambda o: (print(f"facts valid {when} for {settings.user}: {len(o['facts'])}"), _facts_table(o["facts"]),
                               _upcoming(o["upcoming"])))
    return 0


def _upcoming(rows: list[dict]) -> None:
    if rows:
        print(f"starting later: {len(rows)}")
        for r in rows:
            print(f"#{r['id']:<4} {r['subject']} · {r['predicate']} · {r['object']}   [from {r['valid_from'][:10]}]")


def cmd_facts_history(args) -> int:
    # lazy: the query stack (query.facts) stays off `agentos` start-up
    from agentos_mem.query.facts import fact_history

    settings = settings_from_args(args)
    need_workspace(settings)
    out = fact_history(settings, args.subject, closed=True)  # a person's own view: forgotten and retracted versions too
    if out.get("status") == "blocked" and not args.json:
        raise CliError(f"{out['notices'][0]}: {out['rule']}")
    if not out["versions"] and not args.json:
        raise CliError(f"no facts about {args.subject!r} for user {settings.user}")
    emit(args, out, lambda o: (print(f"history of {args.subject!r}: {len(o['versions'])} version(s)"), _facts_table(o["versions"], show_status=True)))
    return 0


def cmd_facts_conflicts(args) -> int:
    # lazy: the query stack (query.facts) stays off `agentos` start-up
    from agentos_mem.query.facts import conflicts

    settings = settings_from_args(args)
    need_workspace(settings)
    out = conflicts(settings, include_resolved=args.all)

    def render(o):
        print(f"conflicts for {settings.user}: {len(o['conflicts'])}")
        for c in o["conflicts"]:
            print(f"#{c['id']} {c['subject']}: kept '{c['existing_predicate']} {c['existing_object']}' ({c['existing_explicitness']}, fact #{c['existing_fact_id']}),"
                  f" not '{c['predicate']} {c['candidate_object']}' ({c['candidate_explicitness']}) from {c['source_file']}:{c['line_start']} [{c['status']}]")

    emit(args, out, render)
    return 0


def cmd_facts_resolve(args) -> int:
    # lazy: services.decisions (18 modules) stays off `agentos` start-up
    from agentos_mem.services.decisions import resolve_conflict

    settings = settings_from_args(args)
    need_workspace(settings)
    try:
        out = resolve_conflict(settings, settings.user, args.conflict_id, accept=args.accept)
    except (KeyError, ValueError) as e:
        raise CliError(str(e).strip("'\"")) from None

    def render(o):
        if o["fact"]:
            f = o["fact"]
            print(f"conflict #{o['id']} accepted: fact #{f['id']} {f['subject']} · {f['predicate']} · {f['object']} is now current")
        else:
            print(f"conflict #{o['id']} rejected: the store keeps '{o['existing_predicate']} {o['existing_object']}'")

    emit(args, out, render)
    return 0


def cmd_facts_forget(args) -> int:
    # lazy: services.decisions (18 modules) stays off `agentos` start-up
    from agentos_mem.services.decisions import forget_fact

    settings = settings_from_args(args)
    need_workspace(settings)
    try:
        out = forget_fact(settings, settings.user, args.fact_id, args.reason)
    except (KeyError, ValueError) as e:
        raise CliError(str(e).strip("'\"")) from None

    def render(o):
        f = o["fact"]
        print(f"fact #{f['id']} forgotten ({f['closed_reason']}): {f['subject']} · {f['predicate']} · {f['object']}")
        print("  never served again; the same log lines do not bring it back; the indexes drop it at the next rebuild (agentos rebuild)")

    emit(args, out, render)
    return 0


def add_parser(sub, name: str = "facts") -> None:
    """Register ``facts`` and its subcommands."""
    if name != "facts":
        raise ValueError(f"not a facts command: {name!r}")
    facts = sub.add_parser("facts", help="read L2 facts", description="read L2 facts")
    fsub = facts.add_subparsers(dest="facts_command", required=True)
    for cmd, fn, help in (("list", cmd_facts_list, "facts valid now, or on --as-of DATE"),
                          ("history", cmd_facts_history, "every version of the facts about SUBJECT"),
                          ("conflicts", cmd_facts_conflicts, "conflicts kept for review"),
                          ("resolve", cmd_facts_resolve, "decide a conflict: --accept makes its value current, --reject keeps the store"),
                          ("forget", cmd_facts_forget, "forget a fact: closed with the reason, never served again, not re-learnt from the same lines")):
        sp = fsub.add_parser(cmd, help=help, description=help)
        sp.set_defaults(fn=fn)
        sp.add_argument("--json", action="store_true", help="print one JSON document on stdout")
        sp.add_argument("--user", help="user id (default: AGENTOS_USER)")
        if cmd == "list":
            sp.add_argument("--as-of", type=parse_date, help="YYYY-MM-DD: the facts that held on that day")
            sp.add_argument("--min-confidence", type=fraction, default=0.0, help="hide facts below this confidence (0 to 1)")
        elif cmd == "history":
            sp.add_argument("subject")
        elif cmd == "forget":
            sp.add_argument("fact_id", type=counted(1, ROW_ID_MAX), help="the fact's id, as facts list shows it")
            sp.add_argument("--reason", default="", help="why (kept with the fact); default: forgotten at the user's request")
        elif cmd == "resolve":
            sp.add_argument("conflict_id", type=counted(1, ROW_ID_MAX), help="the conflict's id, as facts conflicts shows it")
            choice = sp.add_mutually_exclusive_group(required=True)
            choice.add_argument("--accept", action="store_true", help="the contested value becomes a new version (as a user correction)")
            choice.add_argument("--reject", action="store_true", help="keep what the store holds")
        else:
            sp.add_argument("--all", action="store_true", help="include resolved conflicts")
