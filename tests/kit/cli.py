"""The ``agentos`` command line in tests, two ways with one call shape and one result shape
(a ``subprocess.CompletedProcess``: ``.args``, ``.returncode``, ``.stdout``, ``.stderr``):

- ``run_cli(*args, home, check=True, stdin=None, **env)``: in this process, through ``cli.main.main`` (the
  entry point's body: parse, dispatch, one line on stderr and an exit code). Modules, the tokenizer and the
  embedder load once per test session instead of once per command, which is what makes the CLI tests fast.
  For every command that does not start Prefect (Prefect's settings and its ephemeral server are process-wide).
- ``agentos(*args, home, check=True, stdin=None, **env)``: the installed ``agentos`` script as a subprocess, for
  the commands that run a Prefect flow and for the few end-to-end tests (marked ``e2e``) about the script itself.

Both set ``AGENTOS_HOME=home`` plus ``env`` for the command only, and assert exit code 0 unless ``check=False``.
In process, the environment, ``sys.argv``, ``sys.stdin`` and the working directory are restored after each call;
what the process keeps on purpose are its per-process caches (keyed by workspace, as in a long-lived MCP server).
A command that imports Prefect into a test process that had not loaded it fails the call: Prefect's settings and
its ephemeral server are process-wide, so such commands run in a subprocess. A library that keeps a reference to
``sys.stderr`` when first imported (jieba's log handler) keeps the capture of the call that imported it.
"""

from __future__ import annotations

import contextlib
import io
import os
import subprocess
import sys
from pathlib import Path

AGENTOS = [str(Path(sys.executable).with_name("agentos"))]


def agentos(*args, home, check=True, stdin=None, **env):
    """Run the installed ``agentos *args`` as a subprocess with AGENTOS_HOME=home (and any extra environment);
    assert success unless check=False."""
    p = subprocess.run(AGENTOS + [os.fspath(a) for a in args], check=False, capture_output=True, text=True,
                       timeout=600, input=stdin, env={**os.environ, "AGENTOS_HOME": os.fspath(home), **env})
    if check:
        assert p.returncode == 0, p.stderr[-3000:]
    return p


def _capture() -> io.TextIOWrapper:
    """A text stream like a redirected stdout/stderr: UTF-8, not a terminal, with a ``.buffer``."""
    return io.TextIOWrapper(io.BytesIO(), encoding="utf-8", errors="backslashreplace", newline="", write_through=True)


def _text_of(stream: io.TextIOWrapper) -> str:
    stream.flush()
    return stream.buffer.getvalue().decode("utf-8", errors="replace")


@contextlib.contextmanager
def _environment(changes: dict[str, str]):
    """os.environ with ``changes`` for the duration; afterwards exactly as before (what the command added,
    changed or removed, too)."""
    before = dict(os.environ)
    os.environ.update(changes)
    try:
        yield
    finally:
        for key in [k for k in os.environ if k not in before]:
            del os.environ[key]
        for key, value in before.items():
            if os.environ.get(key) != value:
                os.environ[key] = value


def _exit_code(e: SystemExit, stderr) -> int:
    """The status the interpreter would exit with (None: 0; a message: printed, 1)."""
    if e.code is None:
        return 0
    if isinstance(e.code, int):
        return e.code
    print(e.code, file=stderr)
    return 1


def run_cli(*args, home, check=True, stdin=None, **env):
    """``agentos *args`` in this process through ``cli.main.main``, with AGENTOS_HOME=home (and any extra
    environment) for this call only; stdout and stderr captured, ``stdin`` (text) as the standard input (empty,
    not a terminal, when None). Assert success unless check=False."""
    from agentos_mem.cli.main import main

    argv = [os.fspath(a) for a in args]
    prefect_before = "prefect" in sys.modules
    out, err = _capture(), _capture()
    saved_argv, saved_stdin, cwd = sys.argv, sys.stdin, os.getcwd()
    sys.argv, sys.stdin = ["agentos", *argv], io.StringIO(stdin or "")
    try:
        with _environment({"AGENTOS_HOME": os.fspath(home), **env}), \
                contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                code = main(argv)
            except SystemExit as e:  # argparse: a usage error (2) or --help (0)
                code = _exit_code(e, err)
    finally:
        sys.argv, sys.stdin = saved_argv, saved_stdin
        if os.getcwd() != cwd:
            os.chdir(cwd)
    p = subprocess.CompletedProcess(["agentos", *argv], code, _text_of(out), _text_of(err))
    assert prefect_before or "prefect" not in sys.modules, \
        f"`agentos {' '.join(argv)}` imported Prefect: run it with tests.kit.cli.agentos (a subprocess), not in process"
    if check:
        assert p.returncode == 0, p.stderr[-3000:]
    return p
