"""A killed night blocks no later one (issue 25, item 4): real ``agentos nightly`` processes on Prefect's ephemeral
server, the way cron or a user starts them. A run killed with ``kill -9`` while it holds the workspace's slots (an
OOM kill, a power cut) leaves them counted taken in Prefect's database and its ephemeral server orphaned; the next
run gives the dead run's slots back, stops the orphaned server and finishes. A run that waits for a live holder
says whom it waits for and ends on SIGTERM (or Ctrl-C) with a clear line and a non-zero exit.

Every wait here is for a condition (a lock file naming the holder, a line on stderr, a process ending), with a
generous deadline only as a safety net; nothing depends on how fast the machine is."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import time
from pathlib import Path

from tests.kit.cli import AGENTOS

SAFETY = 600  # seconds: only a net for a hung run, never a measure of speed


def _as_in_a_terminal() -> None:
    # A command started in the background by a non-interactive shell inherits SIGINT ignored; in a terminal,
    # Ctrl-C reaches it: restore that, so a test run started either way sends the run a Ctrl-C it can see.
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def _start(home: Path, *args: str, err: Path) -> subprocess.Popen:
    return subprocess.Popen(AGENTOS + list(args), stdout=subprocess.PIPE, stderr=err.open("w"), text=True,
                            env={**os.environ, "AGENTOS_HOME": str(home)}, preexec_fn=_as_in_a_terminal)


def _until(what: str, condition, proc: subprocess.Popen | None = None):
    deadline = time.monotonic() + SAFETY
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        if proc is not None and proc.poll() is not None:
            raise AssertionError(f"the run ended (exit {proc.returncode}) before {what}")
        time.sleep(0.2)
    raise AssertionError(f"not seen within {SAFETY} s: {what}")


def _days_done(err: str) -> tuple[int, list[str]]:
    """From a nightly's stderr: how many days it set out to digest, and the days it reports digested (each line
    "nightly i/N: DAY: ..." is logged once the day is committed)."""
    found = re.search(r"nightly: (\d+) day\(s\) to digest", err)
    return (int(found.group(1)) if found else 0), re.findall(r"nightly \d+/\d+: (\d{4}-\d\d-\d\d):", err)


def _gone(pid: int) -> bool:
    from agentos_mem.tasks.slots import alive

    return not alive(pid, None)



def _waiter_stopped(home, err_file, sig, code) -> str:
    """Start a nightly that must wait for the slot, send it ``sig`` once it says what it waits for, and return its
    stderr after checking it ended with ``code``."""
    waiter = _start(home, "nightly", err=err_file)
    try:
        _until("the run says what it waits for", lambda: "waiting for slot" in err_file.read_text(), waiter)
        os.kill(waiter.pid, sig)
        waiter.communicate(timeout=SAFETY)
    finally:
        waiter.kill()
    err = err_file.read_text()
    assert waiter.returncode == code, err[-2000:]
    return err

def test_a_killed_nightly_blocks_no_later_one_and_a_waiting_run_stops_on_sigterm_or_ctrl_c(demo_home, tmp_path):
    from agentos_mem.kernel.prefect_env import orphaned_servers

    home, prefect_home = demo_home, demo_home / "agent-local/runtime/prefect"
    first_err = tmp_path / "first.err"
    first = _start(home, "nightly", err=first_err)
    try:
        # a day digested: the run holds the user's slot (taken around the whole digest, released after the last day)
        _until("the first run has digested a day", lambda: _days_done(first_err.read_text())[1], first)
        os.kill(first.pid, signal.SIGSTOP)  # alive, holding the slot, for as long as the test needs

        # A second run waits for it, says for whom, and stops on SIGTERM; the next one the same way on Ctrl-C.
        err = _waiter_stopped(home, tmp_path / "second.err", signal.SIGTERM, 143)
        waiting = next(line for line in err.splitlines() if "waiting for slot" in line)
        assert f"held by pid {first.pid} (`agentos nightly`, since " in waiting, err[-2000:]
        assert "SIGTERM stops the wait" in waiting
        assert "agentos: stopped (SIGTERM)" in err and "Traceback" not in err
        err = _waiter_stopped(home, tmp_path / "interrupted.err", signal.SIGINT, 130)
        assert "agentos: interrupted (Ctrl-C)" in err and "Traceback" not in err

        # kill -9 while it holds the slots: its ephemeral server lives on, orphaned.
        os.kill(first.pid, signal.SIGKILL)
        first.wait(timeout=SAFETY)
    finally:
        first.kill()
    orphans = _until("the killed run's ephemeral server is orphaned", lambda: orphaned_servers(prefect_home))

    third_err = tmp_path / "third.err"
    third = _start(home, "nightly", "--json", err=third_err)
    try:
        out, _ = third.communicate(timeout=SAFETY)
    finally:
        third.kill()
    err = third_err.read_text()
    assert third.returncode == 0, err[-3000:]
    report = json.loads(out)
    planned, done = _days_done(first_err.read_text())
    # the killed run's committed days stay done; the rest (the one it was in, too) are digested now
    assert done and not set(done) & set(report["digest"]["days"])
    assert len(done) + len(report["digest"]["days"]) == planned
    assert report["index"]["status"] == "rebuilt"
    assert f"was still taken by pid {first.pid} (`agentos nightly`, since " in err and "no longer runs" in err
    assert f"stopped the Prefect server(s) a killed run left behind (pid {', '.join(map(str, orphans))})" in err
    _until("the orphaned server has ended", lambda: all(_gone(p) for p in orphans))

    # and the night after is an ordinary one: nothing left taken, nothing to free
    fourth = subprocess.run(AGENTOS + ["nightly", "--json"], capture_output=True, text=True, timeout=SAFETY,
                            env={**os.environ, "AGENTOS_HOME": str(home)})
    assert fourth.returncode == 0, fourth.stderr[-3000:]
    assert json.loads(fourth.stdout)["digest"]["days"] == []
    assert "still taken" not in fourth.stderr and "waiting for slot" not in fourth.stderr


def _unshare_available() -> bool:
    import shutil

    if not shutil.which("unshare"):
        return False
    probe = subprocess.run(["unshare", "--user", "--map-root-user", "--mount", "true"], capture_output=True)
    return probe.returncode == 0


def test_a_nightly_on_a_full_disk_says_no_space_left_naming_the_folder(demo_home):
    """The workspace's runtime folder on a small file system that is full (a tmpfs of 4 MiB, filled, mounted in a
    mount namespace of the run's own, so nothing outside the test sees it): the run ends at once with "no space
    left on device" and the folder, not two minutes later with Prefect's "Timed out ... ephemeral Prefect API
    server"; nothing is digested and nothing the user had is lost."""
    import shlex

    import pytest

    if not _unshare_available():
        pytest.skip("needs `unshare --user --mount` (user namespaces) to mount a small tmpfs without root")
    runtime = demo_home / "agent-local/runtime"
    runtime.mkdir(parents=True, exist_ok=True)
    logs_before = {f.relative_to(demo_home): f.read_bytes() for f in (demo_home / "agent-sync").rglob("*") if f.is_file()}
    script = (f"mount -t tmpfs -o size=4m tmpfs {shlex.quote(str(runtime))} && "
              f"(cat /dev/zero > {shlex.quote(str(runtime / 'filler'))} 2>/dev/null; true) && "
              f"exec {' '.join(map(shlex.quote, AGENTOS))} nightly")
    p = subprocess.run(["unshare", "--user", "--map-root-user", "--mount", "sh", "-c", script], capture_output=True,
                       text=True, timeout=SAFETY, env={**os.environ, "AGENTOS_HOME": str(demo_home)})
    assert p.returncode == 2, p.stderr[-3000:]
    assert f"agentos: error: no space left on device: {runtime / 'prefect'}" in p.stderr, p.stderr[-3000:]
    assert "Timed out" not in p.stderr and "Traceback" not in p.stderr
    assert {f.relative_to(demo_home): f.read_bytes() for f in (demo_home / "agent-sync").rglob("*") if f.is_file()} == logs_before


def test_a_file_size_limit_is_named_like_a_full_disk(demo_home):
    """Without any mount: the run under a file size limit (RLIMIT_FSIZE, as ``ulimit -f`` sets it) too small for its
    files is told so, naming the folder, instead of a Prefect timeout."""
    import resource

    def small_files():
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past the limit fails with EFBIG instead of killing
        resource.setrlimit(resource.RLIMIT_FSIZE, (32 << 10, 32 << 10))

    p = subprocess.run(AGENTOS + ["nightly"], capture_output=True, text=True, timeout=SAFETY, preexec_fn=small_files,
                       env={**os.environ, "AGENTOS_HOME": str(demo_home)})
    assert p.returncode == 2, p.stderr[-3000:]
    folder = demo_home / "agent-local"
    assert "agentos: error: file size limit reached (no room for a file): " in p.stderr, p.stderr[-3000:]
    assert str(folder) in p.stderr and "Timed out" not in p.stderr and "Traceback" not in p.stderr


def test_a_nightly_stopped_by_sigterm_ends_at_once_keeps_its_days_and_the_next_picks_up(demo_home, tmp_path):
    """SIGTERM in the middle of the digest (the night is too long, the machine shuts down): the run ends with one
    line and exit 143, leaves no Prefect server behind, keeps the days it committed, and the next run digests only
    the rest."""
    from agentos_mem.kernel.prefect_env import orphaned_servers

    err_file = tmp_path / "stopped.err"
    run = _start(demo_home, "nightly", err=err_file)
    try:
        _until("the run has digested a day", lambda: _days_done(err_file.read_text())[1], run)
        os.kill(run.pid, signal.SIGTERM)
        run.communicate(timeout=SAFETY)
    finally:
        run.kill()
    err = err_file.read_text()
    assert run.returncode == 143, err[-3000:]
    assert "agentos: stopped (SIGTERM); what was written before stays" in err and "Traceback" not in err
    assert orphaned_servers(demo_home / "agent-local/runtime/prefect") == []
    planned, done = _days_done(err)

    after = subprocess.run(AGENTOS + ["nightly", "--json"], capture_output=True, text=True, timeout=SAFETY,
                           env={**os.environ, "AGENTOS_HOME": str(demo_home)})
    assert after.returncode == 0, after.stderr[-3000:]
    days = json.loads(after.stdout)["digest"]["days"]
    assert done and not set(done) & set(days) and len(done) + len(days) == planned
    assert "still taken" not in after.stderr and "waiting for slot" not in after.stderr
