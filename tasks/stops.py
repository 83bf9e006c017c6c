"""A run being stopped (SIGTERM, Ctrl-C) is never a stage that failed.

Inside a flow run Prefect turns SIGTERM into its ``TerminationSignal``. When the signal reaches a task while the task
is still starting (its task run not created yet), Prefect's crash handling fails with a ``ValueError`` of its own
("Task run is not set"), the signal kept only as that error's context. A flow that lets one day or one stage fail
without stopping the others (``except Exception``) would take that for a failed day and go on with the night; it
asks ``stopped_by`` first and lets the stop through.

Prefect's engines log that error themselves before it reaches the flow ("Task run failed with exception:
ValueError('Task run is not set')", a traceback under it), so a run told to stop would print a traceback beside its
own one line. ``quiet_stops`` keeps such records off Prefect's handlers.
"""

from __future__ import annotations

import logging
from functools import wraps

from prefect import get_run_logger


def stopped_by(error: BaseException) -> BaseException | None:
    """The signal behind ``error`` (anything not an ``Exception``: ``TerminationSignal``, ``KeyboardInterrupt``) when
    ``error`` was raised while the signal was handled; None for an ordinary failure."""
    seen: set[int] = set()
    e: BaseException | None = error
    while e is not None and id(e) not in seen:
        seen.add(id(e))
        if not isinstance(e, Exception):
            return e
        e = e.__cause__ or e.__context__
    return None


def reraise_stop(error: BaseException) -> None:
    """Raise the signal behind ``error``, if any (see ``stopped_by``); otherwise return, and the failure is the caller's."""
    stop = stopped_by(error)
    if stop is not None:
        raise stop.with_traceback(stop.__traceback__) from None


def stops_through(fn):
    """``fn``, except that a failure which is a run being stopped (``stopped_by``) raises the stop itself: a caller that
    carries on after any ``Exception`` (the digest, whose rules carry the day when the model's task fails) never takes a
    SIGTERM that reached the task while it was starting for a failed model, and the run stops as it was told."""
    @wraps(fn)
    def call(*args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except Exception as e:
            reraise_stop(e)
            raise
    return call


def or_failed(what: str, failed: dict | None, stage, *args, then=None):
    """``stage(*args)``: a task (with its retries) or a stage of tasks, then ``then(result)`` (its artifact). When
    either still fails, the night goes on: the error is logged as ``what`` and the stage reports ``failed`` with the
    error (None: it reports nothing)."""
    try:
        result = stage(*args)
        if then is not None:
            then(result)
        return result
    except Exception as e:  # noqa: BLE001 - e.g. an unreadable sources.yaml: reported, the rest of the night still runs
        reraise_stop(e)  # but a run being stopped stops here
        get_run_logger().warning("%s: %s", what, e)
        return None if failed is None else {**failed, "errors": [str(e)]}


class _StopFilter(logging.Filter):
    """A record about a run being stopped: Prefect's own failure while the signal was handled (an ``Exception`` with
    the signal in its chain) is dropped; the signal itself is said in one line, without its traceback."""

    def filter(self, record: logging.LogRecord) -> bool:
        error = record.exc_info[1] if record.exc_info else None
        if error is None or stopped_by(error) is None:
            return True
        if isinstance(error, Exception):
            return False
        record.exc_info, record.exc_text = None, None
        return True


_STOP_FILTER = _StopFilter()


def quiet_stops() -> None:
    """Put ``_StopFilter`` on every handler Prefect's logging set up (its console and API handlers, on the root and
    ``prefect`` loggers): a filter on a handler sees every record that reaches it, whichever child logger made it.
    Called once Prefect is imported (its logging is configured then); calling it again adds nothing."""
    loggers = [logging.getLogger()] + [lg for lg in logging.root.manager.loggerDict.values() if isinstance(lg, logging.Logger)]
    for lg in loggers:
        for handler in lg.handlers:
            if _STOP_FILTER not in handler.filters:
                handler.addFilter(_STOP_FILTER)
