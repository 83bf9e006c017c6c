"""kernel.progress: what a caller that watches is told, and that nobody watching costs the work nothing but a count."""

from __future__ import annotations

import contextvars
import threading

from agentos_mem.kernel import progress


class Recorder:
    """A sink that keeps what it was told, as (event, stage name, done, total, depth)."""

    def __init__(self):
        self.events = []
        self.lock = threading.Lock()

    def _add(self, event, st):
        with self.lock:
            self.events.append((event, st.name, st.done, st.total, st.depth))

    def started(self, st):
        self._add("start", st)

    def advanced(self, st):
        self._add("advance", st)

    def finished(self, st, ok):
        self._add("end" if ok else "failed", st)


def test_a_watcher_is_told_each_stage_its_counts_and_its_end():
    rec = Recorder()
    with progress.reporting(rec):
        with progress.stage("embedding", total=3) as st:
            st.advance(2)
            progress.advance()  # the innermost open stage
        items = list(progress.track(["a", "b"], "refining"))
    assert items == ["a", "b"]
    assert rec.events == [("start", "embedding", 0, 3, 0), ("advance", "embedding", 2, 3, 0), ("advance", "embedding", 3, 3, 0),
                          ("end", "embedding", 3, 3, 0), ("start", "refining", 0, 2, 0), ("advance", "refining", 1, 2, 0),
                          ("advance", "refining", 2, 2, 0), ("end", "refining", 2, 2, 0)]


def test_a_stage_inside_another_knows_its_depth_and_a_failed_one_says_so():
    rec = Recorder()
    with progress.reporting(rec):
        for _ in progress.track([1], "sizes"):
            try:
                with progress.stage("embedding", total=5) as st:
                    st.advance()
                    raise RuntimeError("the model went away")
            except RuntimeError:
                pass
    assert ("start", "embedding", 0, 5, 1) in rec.events and ("failed", "embedding", 1, 5, 1) in rec.events
    assert rec.events[-1] == ("end", "sizes", 1, 1, 0)


def test_nobody_watching_only_counts_and_a_broken_watcher_never_stops_the_work():
    with progress.stage("embedding", total=2) as st:
        st.advance(2)
    assert st.done == 2 and st.fraction == 1.0 and not progress.watched()

    class Broken:
        def started(self, st):
            raise OSError("the terminal closed")

        advanced = finished = started

    rec = Recorder()
    with progress.reporting(Broken()), progress.reporting(rec):
        assert sum(progress.track([1, 2, 3], "days")) == 6
    assert rec.events[-1] == ("end", "days", 3, 3, 0)
    assert progress.sinks() == ()  # the watchers end with their block


def test_threads_started_with_the_context_report_to_its_watchers_and_other_contexts_do_not():
    rec = Recorder()

    def batch(st):
        for _ in range(10):
            st.advance()
        with progress.stage("a batch's own stage", total=1) as own:  # opened in the thread: found through its context
            own.advance()

    with progress.reporting(rec):
        st = progress.stage("embedding", total=40)
        ctx = contextvars.copy_context()  # what a task runner's threads start with
        workers = [threading.Thread(target=ctx.copy().run, args=(batch, st)) for _ in range(4)]
        for w in workers:
            w.start()
        for w in workers:
            w.join()
        st.finish()
    contextvars.Context().run(lambda: progress.stage("elsewhere", total=1).finish())  # a context that never had the watcher
    assert st.done == 40 and rec.events[-1] == ("end", "embedding", 40, 40, 0)
    assert sum(1 for e in rec.events if e[:2] == ("end", "a batch's own stage")) == 4
    assert not any(e[1] == "elsewhere" for e in rec.events)


def test_the_cost_of_showing_progress_is_counted_where_it_is_spent_and_nothing_when_nobody_watches():
    """``progress.cost``: what ``agentos bench perf`` reports as the price of the bar: the time the work spent inside
    the sinks' calls, plus the CPU of a sink's own threads (a terminal's redraw)."""
    before = progress.cost()
    for _ in progress.track(range(100), "nobody watches"):
        pass
    assert progress.cost() == before  # no sink: not even a clock is read

    class Drawer(Recorder):
        def thread_seconds(self):
            return 2.5  # as a redraw thread would report its CPU time

    with progress.reporting(Recorder()):
        for _ in progress.track(range(100), "watched"):
            pass
        watched = progress.cost()
    assert watched > before and progress.cost() == watched  # the time inside the calls stays counted
    with progress.reporting(Drawer()):
        assert progress.cost() == watched + 2.5
