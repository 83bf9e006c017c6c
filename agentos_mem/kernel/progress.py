"""How far long work has got, told to whoever watches, without the work knowing who that is.

The pipelines (index rebuild, digest days, restore, collect, refine, the benchmarks) open a *stage* around each long
loop and advance it as units finish::

    with progress.stage("embedding", total=len(pending)) as st:
        for batch in batches:
            ...
            st.advance(len(batch))

    for item in progress.track(items, "refining"):   # the same, for a plain loop
        ...

Who watches is set by the caller, for the current context only (a ``contextvars`` variable: threads a task runner
starts with a copy of the context see it, other callers in other contexts do not): the CLI adds a terminal bar on
stderr, a Prefect flow adds a progress artifact and throttled run-log lines (``flows/progress.py``). With nobody
watching (the default: the MCP server, tests, a library caller) a stage only counts, so the loops cost nothing
measurable. Nothing here imports Prefect or rich: the sinks that do live with their callers.

A *sink* gets ``started``, ``advanced`` and ``finished`` calls with the stage; it decides how often to show
anything (a terminal redraws a few times a second, the Prefect sink writes at most every few seconds), so ``advance``
may be called once per unit. ``depth`` tells a sink whether the stage runs inside another one (a rebuild inside a
benchmark's loop), which it may show less of.
"""

from __future__ import annotations

import contextvars
import threading
import time
from contextlib import contextmanager
from typing import Iterable, Iterator, Protocol, TypeVar

T = TypeVar("T")


class Sink(Protocol):
    def started(self, stage: "Stage") -> None: ...

    def advanced(self, stage: "Stage") -> None: ...

    def finished(self, stage: "Stage", ok: bool) -> None: ...


_sinks: contextvars.ContextVar[tuple[Sink, ...]] = contextvars.ContextVar("agentos_progress_sinks", default=())
_open: contextvars.ContextVar[tuple["Stage", ...]] = contextvars.ContextVar("agentos_progress_open", default=())


class Stage:
    """One named stage: ``done`` of ``total`` units (``total`` None: not known ahead). Safe to advance from threads."""

    def __init__(self, name: str, total: int | None, sinks: tuple[Sink, ...], depth: int):
        self.name, self.total, self.done, self.depth = name, total, 0, depth
        self.started_at = time.monotonic()
        self.ended = False
        self._sinks = sinks
        self._lock = threading.Lock() if sinks else None
        for s in sinks:
            _told(s.started, self)

    @property
    def fraction(self) -> float | None:
        """How much of the stage is done, 0..1 (None without a total)."""
        if self.total is None:
            return None
        return 1.0 if self.total <= 0 else min(1.0, self.done / self.total)

    def advance(self, k: int = 1) -> None:
        if not self._sinks:  # nobody watches: only count (the loops' cost when nothing is shown)
            self.done += k
            return
        with self._lock:
            self.done += k
        for s in self._sinks:
            _told(s.advanced, self)

    def set_total(self, total: int | None) -> None:
        """The total, once it is known (a stage that finds its units as it goes)."""
        self.total = total
        for s in self._sinks:
            _told(s.advanced, self)

    def finish(self, ok: bool = True) -> None:
        if self.ended:
            return
        self.ended = True
        for s in self._sinks:
            _told(s.finished, self, ok)

    def __enter__(self) -> "Stage":
        self._token = _open.set(_open.get() + (self,))
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        try:
            _open.reset(self._token)
        except ValueError:  # left in another context (a generator closed elsewhere): nothing to undo there
            pass
        self.finish(ok=exc_type is None)


# Seconds the work has spent inside the sinks' calls, in this process: what showing progress costs the loops that
# report it (``cost``). Counted only when someone watches; nobody watching costs the loops no clock read at all.
_spent = [0.0]
_spent_lock = threading.Lock()


def _told(fn, *args) -> None:
    t0 = time.perf_counter()
    _quietly(fn, *args)
    dt = time.perf_counter() - t0
    with _spent_lock:
        _spent[0] += dt


def cost() -> float:
    """Seconds that showing progress has cost this process so far: the time the work spent inside the sinks' calls,
    plus the CPU time of the threads the current sinks run on their own (a terminal's redraw: a sink's
    ``thread_seconds()``, where it has one). ``agentos bench perf`` reads it around its full build (issue 28: the cost
    of progress, measured where it is spent rather than as the difference of two noisy wall-clock runs)."""
    own = 0.0
    for s in _sinks.get():
        seconds = getattr(s, "thread_seconds", None)
        if seconds is not None:
            try:
                own += float(seconds())
            except Exception:  # noqa: BLE001 - a sink that cannot tell adds nothing
                pass
    with _spent_lock:
        return _spent[0] + own


def _quietly(fn, *args) -> None:
    """A sink that fails (a closed terminal, an unreachable Prefect API) never fails the work it reports on."""
    try:
        fn(*args)
    except Exception:  # noqa: BLE001 - progress is a courtesy; the run goes on
        pass


def stage(name: str, total: int | None = None) -> Stage:
    """A new stage, told to the sinks of the current context; use it as a context manager (it finishes on exit)."""
    return Stage(name, total, _sinks.get(), depth=len(_open.get()))


def advance(k: int = 1) -> None:
    """Advance the innermost open stage of this context (no-op outside one)."""
    opened = _open.get()
    if opened:
        opened[-1].advance(k)


def track(items: Iterable[T], name: str, total: int | None = None) -> Iterator[T]:
    """``items`` as they come, one unit each, inside a stage named ``name`` (total: ``len(items)`` when it has one)."""
    if total is None and hasattr(items, "__len__"):
        total = len(items)  # type: ignore[arg-type]
    with stage(name, total) as st:
        for item in items:
            yield item
            st.advance()


def depth() -> int:
    """How many stages are open in this context (a sink installed inside one counts its own top level from here)."""
    return len(_open.get())


def elapsed(stage: Stage) -> float:
    """Seconds since ``stage`` started."""
    return time.monotonic() - stage.started_at


def watched() -> bool:
    """Whether anyone watches in this context (a caller may skip work done only to be shown)."""
    return bool(_sinks.get())


def sinks() -> tuple[Sink, ...]:
    return _sinks.get()


@contextmanager
def reporting(sink: Sink):
    """Tell ``sink`` about every stage opened in this context (and the threads started from it) until the block
    ends; sinks already set keep getting them too."""
    token = _sinks.set(_sinks.get() + (sink,))
    try:
        yield sink
    finally:
        _sinks.reset(token)


class Throttle:
    """At most one ``ready()`` per ``every`` seconds (monotonic clock), for sinks that write somewhere costly."""

    def __init__(self, every: float):
        self.every, self.last = every, float("-inf")

    def ready(self) -> bool:
        now = time.monotonic()
        if now - self.last >= self.every:
            self.last = now
            return True
        return False
