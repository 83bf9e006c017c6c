"""How far a flow run has got, in the Prefect UI and its logs: the Prefect sink of ``kernel.progress``.

Each top-level stage of the run (``digesting days``, ``embedding``, ``refining``, ...) keeps one progress artifact
up to date (``create_progress_artifact`` when it starts, ``update_progress_artifact`` at most every ``every``
seconds, and once more when it ends: 100 when it finished, what it reached when it failed), and its count goes to
the run's log at most as often, plus a line when it starts and one when it ends: never one line per unit. A stage
nested inside another (the items of one collect source) only logs. The artifact's key is the flow's and the stage's
name, so the UI's Artifacts page shows the latest run's value of each.

The pipelines know nothing of this (they import no Prefect): a flow body opens ``watch(flow name)`` and every stage
the pipelines open inside it, in the flow's thread or in a task runner's threads, reaches this sink. A subflow inside
a watched flow reports to the outer flow's sink (one set of artifacts per run the user started).
"""

from __future__ import annotations

import re
import threading
from contextlib import contextmanager

from agentos_mem.kernel import progress

EVERY_S = 3.0  # at most one artifact update and one log line per stage in this many seconds


class PrefectProgress:
    """A ``kernel.progress`` sink writing progress artifacts and run-log lines for the current flow run."""

    def __init__(self, flow: str, every: float = EVERY_S):
        self.flow, self.every = flow, every
        self.base = progress.depth()  # stages opened above the flow (none from the CLI) are not this run's top level
        self._artifact: dict[int, object] = {}
        self._throttle: dict[int, progress.Throttle] = {}
        self._lock = threading.Lock()

    def _log(self):
        try:
            from prefect import get_run_logger

            return get_run_logger()
        except Exception:  # noqa: BLE001 - outside a run context (a thread without one): Prefect's own logger
            from prefect.logging import get_logger

            return get_logger("agentos.progress")

    def key(self, stage: progress.Stage) -> str:
        return re.sub(r"[^a-z0-9]+", "-", f"{self.flow} {stage.name} progress".lower()).strip("-")

    @staticmethod
    def _line(stage: progress.Stage) -> str:
        return f"{stage.name}: {stage.done}/{stage.total if stage.total is not None else '?'}"

    @staticmethod
    def _percent(stage: progress.Stage) -> float:
        f = stage.fraction
        return round(100.0 * f, 1) if f is not None else 0.0

    def started(self, stage: progress.Stage) -> None:
        from prefect.artifacts import create_progress_artifact

        throttle = progress.Throttle(self.every)
        throttle.ready()  # the first count line comes ``every`` seconds after the start line
        with self._lock:
            self._throttle[id(stage)] = throttle
        self._log().info("%s: %s to do", stage.name, stage.total if stage.total is not None else "an unknown number")
        if stage.depth == self.base:
            aid = create_progress_artifact(progress=self._percent(stage), key=self.key(stage),
                                           description=f"{self.flow}: {self._line(stage)}")
            with self._lock:
                self._artifact[id(stage)] = aid

    def advanced(self, stage: progress.Stage) -> None:
        throttle = self._throttle.get(id(stage))
        if throttle is None or not throttle.ready():
            return
        self._log().info("%s", self._line(stage))
        aid = self._artifact.get(id(stage))
        if aid is not None:
            from prefect.artifacts import update_progress_artifact

            update_progress_artifact(aid, progress=self._percent(stage), description=f"{self.flow}: {self._line(stage)}")

    def finished(self, stage: progress.Stage, ok: bool) -> None:
        with self._lock:
            self._throttle.pop(id(stage), None)
            aid = self._artifact.pop(id(stage), None)
        seconds = progress.elapsed(stage)
        if ok:
            self._log().info("%s done in %.1f s", self._line(stage), seconds)
        else:
            self._log().warning("%s, stopped by an error after %.1f s", self._line(stage), seconds)
        if aid is not None:
            from prefect.artifacts import update_progress_artifact

            # a stage that finished is complete even when it found fewer units than it expected; a failed one shows
            # how far it got
            value = 100.0 if ok else self._percent(stage)
            update_progress_artifact(aid, progress=value, description=f"{self.flow}: {self._line(stage)}" + ("" if ok else " (failed)"))


@contextmanager
def watch(flow: str):
    """Around a flow's body: its stages as progress artifacts and run-log lines (once per run: a watched subflow
    adds nothing)."""
    if any(isinstance(s, PrefectProgress) for s in progress.sinks()):
        yield
        return
    with progress.reporting(PrefectProgress(flow)):
        yield
