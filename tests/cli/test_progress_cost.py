"""The terminal bar tells what drawing it costs (``kernel.progress.cost``, read by ``agentos bench perf``): the CPU of
rich's redraw thread, still known after the bar is gone."""

from __future__ import annotations

import io

from agentos_mem.cli.common import TerminalProgress
from agentos_mem.kernel import progress


def test_the_terminal_bar_reports_its_redraw_threads_cpu_and_keeps_the_last_reading():
    sink = TerminalProgress(stream=io.StringIO())
    assert sink.thread_seconds() == 0.0  # nothing drawn yet: no thread
    with progress.reporting(sink):
        with progress.stage("embedding", total=2) as st:
            st.advance()
            drawing = sink.thread_seconds()
            assert drawing > 0.0 and progress.cost() >= drawing
    sink.stop()
    assert sink.thread_seconds() >= drawing  # the thread has ended; its last reading stays
