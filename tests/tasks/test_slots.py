"""tasks.slots: the lock file of a writer slot names its holder, and a holder killed with ``kill -9`` frees it.

The holder is a real child process that takes the lock and says so on stdout; every wait is for a condition."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap

HOLD = textwrap.dedent("""
    import sys
    from pathlib import Path
    from agentos_mem.tasks.slots import SlotLock
    held = SlotLock(Path(sys.argv[1]), "agentos-ws-test").take()  # kept: a dropped lock object closes its file
    print("held", flush=True)
    sys.stdin.read()  # hold until the test ends it
""")


def _holder(home):
    p = subprocess.Popen([sys.executable, "-c", HOLD, str(home)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
                         env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)})
    assert p.stdout.readline().strip() == "held"
    return p


def test_a_killed_holder_frees_the_slot_and_is_named_as_the_previous_one(tmp_path):
    from agentos_mem.tasks.slots import SlotLock, alive

    holder = _holder(tmp_path)
    try:
        seen = []
        lock = SlotLock(tmp_path, "agentos-ws-test")

        def on_wait(who):  # the waiter is told who holds it; then the holder is killed
            seen.append(who)
            os.kill(holder.pid, signal.SIGKILL)

        lock.take(on_wait)
        holder.wait(timeout=60)
    finally:
        holder.kill()
    try:
        assert seen and seen[0].pid == holder.pid and "-c" in seen[0].command
        assert lock.held and lock.previous.pid == holder.pid and not lock.previous.is_alive()
        assert not alive(holder.pid, seen[0].start)
        me = SlotLock(tmp_path, "agentos-ws-test")
        assert me.path.read_text(encoding="utf-8").count("\n") == 1 and f'"pid": {os.getpid()}' in me.path.read_text()
    finally:
        lock.release()
    # released: the next taker gets it at once, with this process as the previous (still alive) holder
    again = SlotLock(tmp_path, "agentos-ws-test").take(lambda who: (_ for _ in ()).throw(AssertionError("waited")))
    try:
        assert again.previous.pid == os.getpid() and again.previous.is_alive()
    finally:
        again.release()


def test_a_pid_reused_by_another_process_is_not_the_holder():
    from agentos_mem.tasks.slots import alive, process_start

    start = process_start(os.getpid())
    assert start is not None and alive(os.getpid(), start)
    assert not alive(os.getpid(), str(int(start) + 1))  # same pid, another start time: another process
    child = subprocess.Popen([sys.executable, "-c", "import sys; sys.stdin.read()"], stdin=subprocess.PIPE)
    child_start = process_start(child.pid)
    assert alive(child.pid, child_start)
    child.kill()
    child.wait(timeout=60)
    assert not alive(child.pid, child_start)  # gone (or its pid is another process's now)
