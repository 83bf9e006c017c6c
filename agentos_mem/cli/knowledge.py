"""``agentos collect`` and ``agentos refine``: the collect-to-inbox and inbox-refine flows (Prefect)."""

from __future__ import annotations

from agentos_mem.cli.common import CliError, add_command, emit, finish_stage, need_workspace, prepare_flows, settings_from_args, workspace_settings
from agentos_mem.knowledge.report import CollectReport, RefineReport

COMMANDS = ("collect", "refine")


def _print_collect(r: dict) -> None:
    print("\n".join(CollectReport.from_dict(r).summary_lines()))


def cmd_collect(args) -> int:
    """Run the collect-to-inbox flow; exit 0 even when files were refused (they are listed), 1 when a source failed."""
    # lazy: knowledge.collect (8 modules) stays off `agentos` start-up
    from agentos_mem.knowledge.collect import SourcesError, load_sources

    settings = settings_from_args(args)
    need_workspace(settings)
    try:
        load_sources(settings)  # a broken sources.yaml is one line here, before Prefect starts
    except SourcesError as e:
        raise CliError(str(e)) from None
    prepare_flows(settings, getattr(args, "quiet", False))
    # lazy: flows.collect pulls Prefect (~2 s): kept off `agentos` start-up
    import agentos_mem.flows.collect
    from agentos_mem import flows
    r = flows.collect.collect_to_inbox(user=settings.user)
    finish_stage()
    emit(args, r, _print_collect)
    return 1 if CollectReport.from_dict(r).failed else 0


def cmd_refine(args) -> int:
    settings = workspace_settings(args)
    prepare_flows(settings, args.quiet)  # points Prefect at this workspace's server (or the ephemeral one)
    # lazy: flows.refine pulls Prefect (~2 s): kept off `agentos` start-up
    from agentos_mem.flows.refine import inbox_refine

    out = inbox_refine(user=settings.user)
    finish_stage()
    emit(args, out, lambda r: print(RefineReport.from_dict(r).summary_line()))
    return 0


def add_parser(sub, name: str) -> None:
    """Register the command ``name`` (one of COMMANDS); cli.main decides the order of ``agentos --help``."""
    if name == "collect":
        help = "collect material (folders, clippings, feeds, tools, personal notes, memory cards) into the inbox, with provenance"
        add_command(sub, "collect", cmd_collect, help, stage=True, description=help + "; sources are listed in 03_knowledge/99_system/sources.yaml",
                    user_help="user id recorded as owner (default: AGENTOS_USER)")
    elif name == "refine":
        add_command(sub, "refine", cmd_refine, "run the inbox-refine flow: inbox items -> classified, reviewed, pending documents", stage=True)
    else:
        raise ValueError(f"not a knowledge command: {name!r}")
