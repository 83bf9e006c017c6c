"""What every command group shares: settings from the flags, the workspace check, ``--json`` or text output,
the Prefect stage plumbing, date arguments, the progress bar of long commands, and the error a user can fix (one
line, exit 2)."""

from __future__ import annotations

import argparse
import io
import json
import re
import sys
import threading
import time
from contextlib import contextmanager
from datetime import date

from agentos_mem.kernel.files import NotARegularFile, read_regular_file
from agentos_mem.kernel.settings import load_settings
from agentos_mem.kernel.workspace import Workspace
from agentos_mem.storage.memory_store import name_problem


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
    try:
        return read_regular_file(path).decode("utf-8")
    except UnicodeDecodeError as e:
        raise CliError(f"cannot read {what} from {path}: not UTF-8 text (byte {e.start})") from None
    except NotARegularFile as e:  # its text names the path and what it is
        raise CliError(f"cannot read {what}: {e}") from None
    except OSError as e:
        raise CliError(f"cannot read {what} from {path}: {e.strerror or e}") from None


def settings_from_args(args):
    """The settings in effect, with ``--user`` and ``--logs`` when the command has them. A user id that could not name
    a user's folder ("../bob", an absolute path, a control character) is refused here, for every command alike, as
    ``memory`` refuses it (``storage.memory_store.name_problem``), instead of answering "0 facts" for a user that
    cannot exist."""
    user = getattr(args, "user", None)
    if user is not None:
        problem = name_problem(user, "user id")
        if problem:
            raise CliError(problem)
    return load_settings(user=user, logs_dir=getattr(args, "logs", None))


def fraction(text: str) -> float:
    """An argparse type: a number from 0 to 1 (a confidence), as the settings' own fields take it; nan and the rest
    are refused with the range."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number from 0 to 1") from None
    if not 0.0 <= value <= 1.0:  # false for nan too
        raise argparse.ArgumentTypeError(f"{text!r} is not a number from 0 to 1")
    return value


def emit(args, payload, render) -> None:
    """One JSON document on stdout with ``--json``, else ``render(payload)`` (the progress bar ends first, so the
    summary is not drawn over), every character that would act on the terminal instead of showing shown escaped."""
    stop_progress()
    if getattr(args, "json", False):
        json.dump(payload, sys.stdout, ensure_ascii=False, indent=1, default=str)
        sys.stdout.write("\n")
    else:
        real = sys.stdout
        sys.stdout = _Shown(real)
        try:
            render(payload)
        finally:
            sys.stdout = real


# What a reader's terminal would act on instead of showing: C0 and C1 controls (a NUL, an escape sequence that moves
# the cursor or retitles the window) and the bidirectional overrides that reorder what follows (U+202E makes
# "txt.exe" read "exe.txt"). A title, a fact or a summary is whatever someone wrote into a file: printed for a person,
# they appear as \u escapes. Line breaks and tabs stay; --json carries the text as it is.
_ACTS = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def shown(text: str) -> str:
    """``text`` with every character a terminal would act on written as its ``\\uXXXX`` escape."""
    return _ACTS.sub(lambda m: f"\\u{ord(m.group(0)):04x}", text)


class _Shown:
    """A text stream that writes through ``shown``."""

    def __init__(self, stream):
        self._stream = stream

    def write(self, text: str) -> int:
        return self._stream.write(shown(text))

    def __getattr__(self, name):
        return getattr(self._stream, name)


def need_workspace(settings) -> None:
    """CliError unless the workspace exists."""
    if not Workspace(settings.home).exists():
        raise CliError(f"no workspace at {settings.home}: run `agentos init` (or set AGENTOS_HOME)")


def start_service_if_asked() -> None:
    """No query service at all for this workspace (never a second one beside one for other settings): start one in
    the background when ``AGENTOS_QUERY_SERVICE_IDLE`` > 0 (``agentos query`` and ``agentos kb search`` use it)."""
    # lazy: mcp_server.local_service (4 modules) stays off `agentos` start-up
    from agentos_mem.mcp_server.local_service import spawn, workspace_home

    settings = load_settings()
    if settings.query_service_idle > 0 and Workspace(settings.home).exists():
        spawn(workspace_home(), settings.query_service_idle)


def workspace_settings(args):
    """settings_from_args, after need_workspace."""
    settings = settings_from_args(args)
    need_workspace(settings)
    return settings


def prepare_flows(settings, quiet: bool):
    """Point Prefect at this workspace's server (or the ephemeral one), say which on stderr, and return the
    ``flows`` package with its flow modules imported."""
    # lazy: kernel.prefect_env (2 modules) stays off `agentos` start-up
    from agentos_mem.kernel import prefect_env

    api = prefect_env.prepare(settings.home, quiet=quiet)
    problem = prefect_env.space_problem(space_folders(settings, ephemeral=not api))
    if problem:  # said now, not after Prefect's two-minute "Timed out ... ephemeral Prefect API server"
        raise CliError(problem)
    print(f"[agentos] running on Prefect {'server ' + api if api else 'ephemeral server (first run takes ~20 s)'}", file=sys.stderr)
    # lazy: flows.collect, flows.daily, flows.rebuild, flows.nightly, flows.refine pull Prefect (~2 s): kept off
    # `agentos` start-up
    import agentos_mem.flows.collect
    import agentos_mem.flows.daily
    import agentos_mem.flows.nightly
    import agentos_mem.flows.rebuild
    import agentos_mem.flows.refine
    from agentos_mem import flows
    from agentos_mem.tasks.stops import quiet_stops

    quiet_stops()  # a run told to stop says so in one line, never with Prefect's traceback of its own shutdown
    return flows


def space_folders(settings, *, ephemeral: bool = True) -> list:
    """The folders a stage writes on this host: the workspace's agent-local, and Prefect's (ephemeral) database."""
    import os
    from pathlib import Path

    ws = Workspace(settings.home)
    return [ws.local] + ([Path(os.environ.get("PREFECT_HOME") or ws.runtime / "prefect")] if ephemeral else [])


def finish_stage() -> None:
    """After a stage command's flow: let an ephemeral Prefect server drain its writes."""
    # lazy: kernel.prefect_env (2 modules) stays off `agentos` start-up
    from agentos_mem.kernel.prefect_env import let_ephemeral_server_drain

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
        add_quiet(sp)
    return sp


def add_quiet(sp) -> None:
    """``--quiet``, for every long command: no progress bar (and only Prefect's warnings, where it runs a flow)."""
    sp.add_argument("--quiet", action="store_true", help="no progress bar on stderr; only warnings from Prefect")


# -- progress on the terminal ---------------------------------------------------------------------------------


def wants_progress(args, stream=None) -> bool:
    """A progress bar only for a person watching: stderr is a terminal, and neither ``--quiet`` nor ``--json``
    (whose output is for a program) is given. Piped or redirected stderr gets no progress bytes at all."""
    stream = sys.stderr if stream is None else stream
    if getattr(args, "quiet", False) or getattr(args, "json", False):
        return False
    try:
        return stream.isatty()
    except (AttributeError, ValueError):  # a closed or odd stream
        return False


class _Above(io.TextIOBase):
    """A terminal stream whose text goes above a live progress bar (through rich's FileProxy), for a rich Console
    of someone else's: a Console unwraps a FileProxy it is given, so this one hides what it wraps."""

    def __init__(self, proxy):
        self._proxy = proxy

    def write(self, text: str) -> int:
        return self._proxy.write(text)

    def flush(self) -> None:
        self._proxy.flush()

    def isatty(self) -> bool:
        return True


class TerminalProgress:
    """A ``kernel.progress`` sink: one rich.progress line per stage on stderr (its name, done/total, a bar and the
    time left), drawn from the first stage until the command prints its result. A stage nested inside another (a
    rebuild inside a benchmark's loop) leaves its line when it ends; the top-level stages stay, with their final
    count. While the bar is drawn, log records and prints go above it instead of through it."""

    def __init__(self, stream=None):
        self.stream = sys.stderr if stream is None else stream
        self._bar = None
        self._rows: dict[int, int] = {}
        self._rerouted: list[tuple] = []
        self._lock = threading.RLock()
        self._thread_cpu = 0.0  # the redraw thread's CPU seconds, last read

    def _start(self) -> None:
        from rich.console import Console
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

        console = Console(file=self.stream, stderr=True)
        # stdout goes above the bar only when it is the terminal too; a piped stdout is never touched
        to_tty = getattr(sys.stdout, "isatty", lambda: False)()
        self._bar = Progress(TextColumn("{task.description}", markup=False),  # a stage may be named after a source
                             BarColumn(bar_width=30), MofNCompleteColumn(),
                             TextColumn("left"), TimeRemainingColumn(), console=console, transient=False,
                             redirect_stdout=to_tty, redirect_stderr=True, refresh_per_second=4)
        self._bar.start()
        self._reroute_logging(console)

    def _reroute_logging(self, console) -> None:
        """Handlers that hold the real stderr (Prefect's console handler keeps a rich Console of its own, made when
        Prefect was imported) print through this bar's console while it is drawn, so a log line never tears it."""
        import logging
        from rich.file_proxy import FileProxy

        loggers = [logging.getLogger()] + [lg for lg in logging.root.manager.loggerDict.values() if isinstance(lg, logging.Logger)]
        for lg in loggers:
            for h in lg.handlers:
                if not isinstance(h, logging.StreamHandler) or getattr(h, "stream", None) is not self.stream:
                    continue
                inner = getattr(h, "console", None)
                if inner is not None and getattr(inner, "file", None) is self.stream:
                    # its own console keeps its styles and its markup setting; only where the text goes changes
                    self._rerouted.append((inner, "file", inner.file))
                    inner.file = _Above(FileProxy(console, self.stream))
                else:
                    self._rerouted.append((h, "stream", h.stream))
                    h.stream = FileProxy(console, self.stream)

    def thread_seconds(self) -> float:
        """CPU seconds rich's redraw thread has used so far (``kernel.progress.cost``): drawing's cost beside the
        sink's own calls, which the work pays for and ``kernel.progress`` counts."""
        with self._lock:
            live = getattr(self._bar, "live", None)
            thread = getattr(live, "_refresh_thread", None)  # rich.live.Live keeps its redraw thread there
            if thread is not None and thread.is_alive() and thread.ident is not None:
                try:
                    self._thread_cpu = time.clock_gettime(time.pthread_getcpuclockid(thread.ident))
                except (OSError, AttributeError):  # it ended between the check and the read, or no such clock here
                    pass
            return self._thread_cpu

    def started(self, stage) -> None:
        with self._lock:
            if self._bar is None:
                self._start()
            self._rows[id(stage)] = self._bar.add_task(stage.name, total=stage.total)

    def advanced(self, stage) -> None:
        row = self._rows.get(id(stage))
        if row is not None and self._bar is not None:
            self._bar.update(row, completed=stage.done, total=stage.total)

    def finished(self, stage, ok: bool) -> None:
        with self._lock:
            row = self._rows.pop(id(stage), None)
            if row is None or self._bar is None:
                return
            if stage.depth > 0:
                self._bar.remove_task(row)
            else:  # a stage without a total ends at what it counted: "12/12"
                self._bar.update(row, completed=stage.done, total=stage.total if stage.total is not None else stage.done)
                self._bar.stop_task(row)

    def stop(self) -> None:
        with self._lock:
            if self._bar is None:
                return
            self.thread_seconds()  # its last reading, while the thread still runs
            try:
                self._bar.stop()  # the last drawing: every top-level stage at its final count
            finally:
                for h, attr, old in reversed(self._rerouted):
                    setattr(h, attr, old)
                self._rerouted.clear()
                self._bar, self._rows = None, {}


def stop_progress() -> None:
    """End the terminal bar of this context, if one is drawn (before a command prints its result)."""
    # lazy: kernel.progress (2 modules) stays off `agentos` start-up
    from agentos_mem.kernel import progress

    for sink in progress.sinks():
        if isinstance(sink, TerminalProgress):
            sink.stop()


@contextmanager
def terminal_progress(args):
    """Around a command: its stages drawn on stderr when ``wants_progress``, else nothing at all (and nothing more
    for a command another runs through ``main``, as ``demo`` does: one bar per terminal)."""
    # lazy: kernel.progress (2 modules) stays off `agentos` start-up
    from agentos_mem.kernel import progress

    if not wants_progress(args) or any(isinstance(s, TerminalProgress) for s in progress.sinks()):
        yield
        return

    sink = TerminalProgress()
    try:
        with progress.reporting(sink):
            yield
    finally:
        sink.stop()
