"""What every command group shares: settings from the flags, the workspace check, ``--json`` or text output,
the Prefect stage plumbing, date arguments, and the error a user can fix (one line, exit 2)."""

from __future__ import annotations

import argparse
import json
import sys
from datetime import date


class CliError(Exception):
    """A problem the user can fix, reported in one line."""


def parse_date(s: str) -> date:
    """An argparse ``type``: YYYY-MM-DD."""
    try:
        return date.fromisoformat(s)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a date (YYYY-MM-DD): {s!r}") from None


def counted(low: int = 1, high: int | None = None):
    """An argparse type for a count or a size: a whole number from ``low`` (to ``high``), refused in one line."""
    def parse(s: str) -> int:
        try:
            n = int(s)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{s!r} is not a whole number") from None
        if n < low or (high is not None and n > high):
            raise argparse.ArgumentTypeError(f"{n} is out of range: give {low}" + (f" to {high}" if high is not None else " or more"))
        return n

    parse.__name__ = "number"  # what argparse names in its message
    return parse


def read_given_text(path, what: str) -> str:
    """The UTF-8 text of a file the user named on the command line, or a CliError naming it. A named pipe, a
    device, a socket or a folder is refused without being opened for a blocking read (``kernel.files``): a FIFO
    given by mistake must not hang the command waiting for a writer."""
    from kernel.files import NotARegularFile, read_regular_file

    try:
        return read_regular_file(path).decode("utf-8")
    except UnicodeDecodeError as e:
        raise CliError(f"cannot read {what} from {path}: not UTF-8 text (byte {e.start})") from None
    except NotARegularFile as e:  # its text names the path and what it is
        raise CliError(f"cannot read {what}: {e}") from None
    except OSError as e:
        raise CliError(f"cannot read {what} from {path}: {e.strerror or e}") from None


def settings_from_args(args):
    """The settings in effect, with ``--user`` and ``--logs`` when the command has them."""
    from kernel.settings import load_settings

    return load_settings(user=getattr(args, "user", None), logs_dir=getattr(args, "logs", None))


def emit(args, payload, render) -> None:
    """One JSON document on stdout with ``--json``, else ``render(payload)``."""
    if getattr(args, "json", False):
        json.dump(payload, sys.stdout, ensure_ascii=False, indent=1, default=str)
        sys.stdout.write("\n")
    else:
        render(payload)


def need_workspace(settings) -> None:
    """CliError unless the workspace exists."""
    from kernel.workspace import Workspace

    if not Workspace(settings.home).exists():
        raise CliError(f"no workspace at {settings.home}: run `agentos init` (or set AGENTOS_HOME)")


def workspace_settings(args):
    """settings_from_args, after need_workspace."""
    settings = settings_from_args(args)
    need_workspace(settings)
    return settings


def prepare_flows(settings, quiet: bool):
    """Point Prefect at this workspace's server (or the ephemeral one), say which on stderr, and return the
    ``flows`` package with its flow modules imported."""
    from kernel import prefect_env

    api = prefect_env.prepare(settings.home, quiet=quiet)
    problem = prefect_env.space_problem(space_folders(settings, ephemeral=not api))
    if problem:  # said now, not after Prefect's two-minute "Timed out ... ephemeral Prefect API server"
        raise CliError(problem)
    print(f"[agentos] running on Prefect {'server ' + api if api else 'ephemeral server (first run takes ~20 s)'}", file=sys.stderr)
    import flows.collect
    import flows.daily
    import flows.rebuild
    import flows.nightly
    import flows.refine

    return flows


def space_folders(settings, *, ephemeral: bool = True) -> list:
    """The folders a stage writes on this host: the workspace's agent-local, and Prefect's (ephemeral) database."""
    import os
    from pathlib import Path

    from kernel.workspace import Workspace

    ws = Workspace(settings.home)
    return [ws.local] + ([Path(os.environ.get("PREFECT_HOME") or ws.runtime / "prefect")] if ephemeral else [])


def finish_stage() -> None:
    """After a stage command's flow: let an ephemeral Prefect server drain its writes."""
    from kernel.prefect_env import let_ephemeral_server_drain

    let_ephemeral_server_drain()


def add_command(sub, name, fn, help, *, json_flag=True, user=True, logs=False, stage=False, description=None,
                user_help="user id (default: AGENTOS_USER)"):
    """A top-level command with the usual flags: ``--json``, ``--user``, ``--logs DIR``, ``--quiet`` (Prefect).
    ``description`` (default: ``help``) and ``user_help`` let a command say more in its own ``--help``."""
    sp = sub.add_parser(name, help=help, description=help if description is None else description)
    sp.set_defaults(fn=fn)
    if json_flag:
        sp.add_argument("--json", action="store_true", help="print one JSON document on stdout")
    if user:
        sp.add_argument("--user", help=user_help)
    if logs:
        sp.add_argument("--logs", metavar="DIR", help="working-memory folder with YYYY-MM-DD.md/.jsonl logs")
    if stage:
        sp.add_argument("--quiet", action="store_true", help="only warnings from Prefect")
    return sp
