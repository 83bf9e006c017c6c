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

from agentos_mem.cli import admin, bench, demo, facts, kb, knowledge, memory, query, stages
from agentos_mem.cli.common import CliError, space_folders, terminal_progress
from agentos_mem.kernel.files import UnsafePath
from agentos_mem.kernel.settings import SettingsError, load_settings, warn_unknown_variables
from agentos_mem.kernel.workspace import Workspace
from agentos_mem.storage.guards import RestoreInProgress, check_no_restore
from agentos_mem.storage.journal import JournalUnwritable

GROUPS = (admin, stages, facts, query, bench, memory, knowledge, kb)
# The order of `agentos --help` (demo, which runs the others through main, comes last).
COMMANDS = ("init", "restore", "digest", "backfill", "nightly", "facts", "query", "rebuild", "doctor", "mcp", "bench", "raw", "config",
            "memory", "collect", "kb", "refine", "import", "serve")

# What runs while a restore is in progress (or after one that was killed): the restore itself, the commands that
# read no store, and the long-running servers, whose every request checks for itself (mcp_server, the query service).
_DURING_RESTORE = {"init", "restore", "config", "mcp", "serve", "bench", "demo"}


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
    """After a database error (``database disk image is malformed`` names no file; Chroma's errors name none either):
    each damaged store of the workspace and the command that makes it again (``storage.health``); empty for any other
    error."""
    import sqlite3

    if not any(isinstance(x, sqlite3.DatabaseError) or type(x).__module__.startswith("chromadb") or "malformed" in str(x)
               for x in _chain(e)):
        return []
    try:
        # lazy: storage.health (2 modules) stays off `agentos` start-up
        from agentos_mem.storage.health import damaged

        home = load_settings().home
        return [d.line(home) for d in damaged(home)]
    except Exception:  # noqa: BLE001 - the settings themselves may be what fails: then the plain message
        return []


def _chain(e: BaseException):
    # lazy: storage.health (2 modules) stays off `agentos` start-up
    from agentos_mem.storage.health import error_chain

    return error_chain(e)


def _full_disk(e: BaseException) -> str | None:
    """After an error a full disk explains: a write (or an open) that found no room, SQLite's "database or disk is full",
    the "disk I/O error" of a store whose files cannot grow on a full disk (``storage.health.no_room``: never damage,
    never a reason to restore), or Prefect's ephemeral server, which dies at start on a full disk and is reported as
    "Timed out while attempting to connect to ephemeral Prefect API server": the folder with no room left, as
    ``kernel.prefect_env.space_problem`` finds it; None for any other error, or when the disk has room after all
    and the error does not say it had none."""
    # lazy: storage.health (2 modules) stays off `agentos` start-up
    from agentos_mem.storage.health import NoRoom, may_be_no_room, no_room_line, says_no_room

    named = next((x for x in _chain(e) if isinstance(x, NoRoom)), None)
    if named is not None:  # a store that said where it found no room
        return str(named)
    certain, store = says_no_room(e), may_be_no_room(e)
    if not (certain or store or any("ephemeral Prefect API server" in str(x) for x in _chain(e))):
        return None
    try:
        # lazy: kernel.prefect_env (2 modules) stays off `agentos` start-up
        from agentos_mem.kernel.prefect_env import space_problem

        settings = load_settings()
        found = space_problem(space_folders(settings))
        if found:
            return found + ("; nothing is damaged, nothing needs restoring" if certain or store else "")
        if certain:  # room again by now (or a quota, a limit the probe did not meet): the write still found none
            return no_room_line(Workspace(settings.home).local, next(str(x) for x in _chain(e)))
    except Exception:  # noqa: BLE001 - the settings themselves may be what fails: then the plain message
        return None
    return None


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    warn_unknown_variables()  # a misspelt setting is otherwise ignored without a word
    previous = None
    if threading.current_thread() is threading.main_thread():
        previous = signal.signal(signal.SIGTERM, _on_sigterm)
    try:
        if args.command not in _DURING_RESTORE:
            check_no_restore(load_settings().home)
        with terminal_progress(args):  # a bar on stderr for a person at a terminal; nothing when piped, --quiet or --json
            return args.fn(args) or 0
    except RestoreInProgress as e:  # what a restore has made so far is not the memory: nothing is read or written
        print(f"agentos: error: {e}", file=sys.stderr)
        return 1
    except (CliError, SettingsError) as e:  # something the user fixes: a usage error's exit code
        print(f"agentos: error: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("agentos: interrupted (Ctrl-C); what was written before stays, an interrupted day is digested again next time",
              file=sys.stderr)
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
        full = _full_disk(e)
        if full:
            print(f"agentos: error: {full}", file=sys.stderr)
            return 2
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
    if code in (130, 143):
        _end_now(code)
    sys.exit(code)


def _end_now(code: int) -> None:
    """A stopped run ends now. Prefect's at-exit handlers drain its queues (logs, events, a slot request still
    waiting) to its server first, which can take minutes or never end (a request for a slot waits forever), so a
    run stopped by SIGTERM or Ctrl-C would look as if it ignored the signal. What the run wrote is committed already
    (each day and store write is its own transaction); the ephemeral server it started is stopped, then the process
    exits without the drains."""
    # lazy: kernel.prefect_env (2 modules) stays off `agentos` start-up
    from agentos_mem.kernel.prefect_env import stop_own_servers

    signal.signal(signal.SIGTERM, signal.SIG_DFL)  # a second SIGTERM while stopping ends it at once
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except Exception:  # noqa: BLE001 - a closed stream: nothing more to say
            pass
    stop_own_servers()
    os._exit(code)


if __name__ == "__main__":
    entrypoint()
