"""``agentos``: the parser over every command group, ``main`` (argv -> exit code) and the console entry point.

Exit codes: 0 done, 1 an unexpected error (one line; the details are in the logs) or what the command
reports (``doctor`` finding drift, ``collect`` with a failed source, ...), 2 a problem the user can fix
(CliError, or argparse refusing the arguments), 130 interrupted, 143 stopped by SIGTERM (one line, no traceback;
inside a flow Prefect's own handler marks the run and the stage stops at once), 141 the reader of the output went away
(``agentos ... | head``: quiet, as a Unix tool killed by SIGPIPE).
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
import threading

from cli import admin, bench, demo, facts, kb, knowledge, memory, query, stages
from cli.common import CliError
from kernel.files import UnsafePath
from storage.journal import JournalUnwritable

GROUPS = (admin, stages, facts, query, bench, memory, knowledge, kb)
# The order of `agentos --help` (demo, which runs the others through main, comes last).
COMMANDS = ("init", "restore", "digest", "backfill", "nightly", "facts", "query", "rebuild", "doctor", "mcp", "bench", "raw", "config",
            "memory", "collect", "kb", "refine", "import", "serve")


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="agentos", description="AgentOS Memory: layered memory for AI agents (workspace: AGENTOS_HOME).")
    sub = p.add_subparsers(dest="command", required=True)
    group_of = {name: group for group in GROUPS for name in group.COMMANDS}
    for name in COMMANDS:
        group_of[name].add_parser(sub, name)
    demo.add_parser(sub, main)
    return p


class Terminated(BaseException):
    """SIGTERM outside a flow (inside one, Prefect raises its TerminationSignal): unwinds like KeyboardInterrupt."""


def _on_sigterm(signum, frame):
    raise Terminated()


def _stopped(e: BaseException) -> bool:
    return isinstance(e, Terminated) or getattr(e, "signal", None) == signal.SIGTERM


def _damaged_stores(e: BaseException) -> list[str]:
    """After a database error (``database disk image is malformed`` names no file): each damaged store of the
    workspace and the command that makes it again (``storage.health``); empty for any other error."""
    import sqlite3

    seen, err = set(), e
    while err is not None and id(err) not in seen:  # the error itself, or what a flow or a task wrapped
        if isinstance(err, sqlite3.DatabaseError):
            break
        seen.add(id(err))
        err = err.__cause__ or err.__context__
    else:
        return []
    try:
        from kernel.settings import load_settings
        from storage.health import damaged

        home = load_settings().home
        return [d.line(home) for d in damaged(home)]
    except Exception:  # noqa: BLE001 - the settings themselves may be what fails: then the plain message
        return []


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    previous = None
    if threading.current_thread() is threading.main_thread():
        previous = signal.signal(signal.SIGTERM, _on_sigterm)
    try:
        return args.fn(args) or 0
    except CliError as e:
        print(f"agentos: error: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        raise  # the entry point ends quietly
    except JournalUnwritable as e:
        print(f"agentos: error: {e.strerror}", file=sys.stderr)
        return 2
    except UnsafePath as e:  # a link, a FIFO or '..' below the workspace: named, never used
        print(f"agentos: error: {e}", file=sys.stderr)
        return 2
    except Exception as e:  # noqa: BLE001 - one line for the user; the details are in the logs
        damage = _damaged_stores(e)
        if damage:
            print("\n".join(f"agentos: error: {line}" for line in damage), file=sys.stderr)
            return 1
        print(f"agentos: error: {type(e).__name__}: {e}", file=sys.stderr)
        return 1
    except BaseException as e:
        if not _stopped(e):
            raise
        print("agentos: stopped (SIGTERM); what was written before stays, an interrupted day is digested again next time",
              file=sys.stderr)
        return 143
    finally:
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)


def entrypoint() -> None:
    try:
        code = main()
        sys.stdout.flush()  # a closed pipe shows here for output still buffered
    except BrokenPipeError:
        # Python would complain again while flushing at exit: point stdout at /dev/null first.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        code = 141
    sys.exit(code)


if __name__ == "__main__":
    entrypoint()
