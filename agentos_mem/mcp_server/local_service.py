"""The warm query service: the layered query answered by a process that already holds the tokenizer, the
embedding model and the open index, so ``agentos query`` from a fresh process answers in a fraction of a second.

Why it exists: a fresh process pays ~1.5 s before its first answer (jieba's dictionary, the embedding model,
chromadb's imports), and agent hosts that shell out to the CLI pay it on every question. ``agentos serve``
(the nightly server), ``agentos serve --query-only`` and ``agentos mcp`` keep this service; ``agentos query``
uses it when one is running for its workspace and answers in-process otherwise, with the same output.

Protocol: one TCP connection on 127.0.0.1 per question: one JSON line from the client; from the service an
acknowledgement line at once (``{"working": true}``), then the answer line. A service that does not acknowledge
within ``ACK_TIMEOUT_S`` (stopped with SIGSTOP, starved) is passed over: the client answers in-process and says
so on stderr, instead of waiting two minutes. Where to connect is in
``<workspace>/agent-local/runtime/query-service.json`` (port, a random token, pid; readable by the owner
only): only someone who can read the workspace can ask, and the token is compared in constant time.

The service answers only for a client whose ``AGENTOS_*`` environment equals the one it started with (the
same settings), and reloads the workspace's config file when it changes; otherwise, and whenever it cannot
answer as asked (not running, settings differ, an unexpected error), the client answers in-process. So the
service changes how fast an answer comes, never what it says. This module imports only the standard
library at the top: the client side runs in the CLI before anything heavy is imported.
"""

from __future__ import annotations

import json
import logging
import os
import secrets
import socket
import threading
import time
from pathlib import Path

from agentos_mem.kernel.files import atomic_write, guard
from agentos_mem.kernel.settings import config_file, load_settings

log = logging.getLogger(__name__)

SERVICE_FILE = "query-service.json"
ASK_FIELDS = ("text", "user", "raw", "k", "budget", "history")
# ``agentos kb search`` asks the same service: a fresh process pays the registry read, every card and the BM25 build
# over every section before its first search (36.5 s at 100,000 sections, bench/results/perf.md), the service once.
KB_SEARCH_FIELDS = ("user", "query", "selection", "k", "mode")
CONNECT_TIMEOUT_S = 0.5
# A service acknowledges a question as soon as it has read it, before it waits for anything (the model loading, the
# question before): a live one does so in milliseconds. One that does not within this time is stopped (SIGSTOP, a
# debugger) or starved, and the client answers in-process instead of waiting: a stopped service once stalled every
# `agentos query` for two minutes. Generous against a busy machine; short against a person waiting.
ACK_TIMEOUT_S = 5.0
ANSWER_TIMEOUT_S = 120.0  # after the acknowledgement: a first question may still wait for the model to load
MAX_REQUEST_BYTES = 1 << 20


def service_file(home: Path) -> Path:
    return Path(home) / "agent-local" / "runtime" / SERVICE_FILE


def settings_env(environ=None) -> dict[str, str]:
    """The environment that decides the settings (every ``AGENTOS_*`` variable but the workspace itself, which
    the service file's location already pins)."""
    environ = os.environ if environ is None else environ
    return {k: v for k, v in environ.items() if k.startswith("AGENTOS_") and k != "AGENTOS_HOME"}


def workspace_home(environ=None) -> Path:
    """The workspace as the settings resolve it (``AGENTOS_HOME``, default ``./agentos-home``), absolute."""
    environ = os.environ if environ is None else environ
    return Path(environ.get("AGENTOS_HOME", "agentos-home")).resolve()


# -- client --------------------------------------------------------------------------------------------


class Unavailable(Exception):
    """The service cannot answer this question as asked: answer in-process (the reason is for logs and tests).
    ``none_running``: no service at all for this workspace (not one for other settings, or one that failed)."""

    def __init__(self, message: str, *, none_running: bool = False, notice: str | None = None):
        super().__init__(message)
        self.none_running = none_running
        self.notice = notice  # what the user is told on stderr (a service that stalled), None: nothing to say


class Refused(Exception):
    """The service answered with a problem the user can fix (an empty question, no index): shown as is."""


def ask_service(request: dict, *, home: Path | None = None, environ=None) -> dict:
    """``{"answer": Answer.to_dict(), "text": format_answer(...)}`` from the running service.

    Raises Unavailable when no service answers for this workspace and environment, Refused with the
    user-facing message of a QueryError."""
    return _call("ask", {k: request.get(k) for k in ASK_FIELDS}, home, environ)


def kb_search_service(request: dict, *, home: Path | None = None, environ=None) -> dict:
    """``{"answer": query.kb.search(...)}`` (fields ``KB_SEARCH_FIELDS``) from the running service; Unavailable and
    Refused (a KBQueryError's message) as ``ask_service``."""
    return _call("kb_search", {k: request.get(k) for k in KB_SEARCH_FIELDS}, home, environ)


def _call(op: str, request: dict, home: Path | None, environ) -> dict:
    home = workspace_home(environ) if home is None else Path(home)
    try:
        path = service_file(home)
        info = json.loads(guard(path).read_bytes(path))  # a link or a FIFO there: no service (never followed, never blocks)
        port, token = int(info["port"]), str(info["token"])
        # A service killed without cleaning up leaves its file: its port may now be another program's, which must
        # not be sent the question.
        os.kill(int(info["pid"]), 0)
    except PermissionError:
        pass  # the pid is alive (another user's process would not have been able to write our file)
    except (OSError, ValueError, KeyError, TypeError) as e:
        raise Unavailable(f"no query service for {home}: {e}", none_running=True) from None
    payload = {"token": token, "env": settings_env(environ), op: request}
    pid = info.get("pid")
    stage = "connect"
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=CONNECT_TIMEOUT_S) as s:
            s.settimeout(ACK_TIMEOUT_S)
            s.sendall(json.dumps(payload, ensure_ascii=False).encode("utf-8") + b"\n")
            with s.makefile("rb") as f:
                stage = "acknowledge"
                line = f.readline(64 * MAX_REQUEST_BYTES)
                if _reply(line).get("working"):  # alive and on it: now the answer may take its time
                    stage = "answer"
                    s.settimeout(ANSWER_TIMEOUT_S)
                    line = f.readline(64 * MAX_REQUEST_BYTES)
    except TimeoutError:
        within = ACK_TIMEOUT_S if stage != "answer" else ANSWER_TIMEOUT_S
        raise Unavailable(f"query service pid {pid} on port {port}: no {stage} within {within:g} s",
                          notice=f"the query service (pid {pid}) did not answer within {within:g} s (stopped or overloaded): "
                                 "answered in this process") from None
    except OSError as e:  # refused (a service that died without removing its file), reset
        raise Unavailable(f"query service on port {port}: {e}") from None
    reply = _reply(line)
    if not reply:
        raise Unavailable("query service sent no answer")
    if "refused" in reply:
        raise Refused(reply["refused"])
    if "answer" not in reply:
        raise Unavailable(reply.get("unavailable") or "query service could not answer")
    return reply


def _reply(line: bytes) -> dict:
    """One JSON line of the service ({} when it is none)."""
    try:
        reply = json.loads(line)
    except ValueError:
        return {}
    return reply if isinstance(reply, dict) else {}


# -- server --------------------------------------------------------------------------------------------


class QueryService:
    """The service over one workspace; ``start()`` binds a loopback port and answers in a daemon thread."""

    def __init__(self, settings, *, environ=None, host: str = "127.0.0.1"):
        self.home = Path(settings.home).resolve()
        # Absolute, so the answers stay right when the serving process changes its working directory.
        self.settings = settings.model_copy(update={"home": self.home})
        self.env = settings_env(environ)
        self.host = host
        self.token = secrets.token_hex(16)
        self.file = service_file(self.home)
        self._lock = threading.Lock()  # one question at a time: each takes tens of milliseconds
        self._config_mtime = self._config_stamp()
        self._sock: socket.socket | None = None
        self._thread: threading.Thread | None = None
        self._stopped = threading.Event()
        self.last_request = time.monotonic()

    @property
    def port(self) -> int:
        return self._sock.getsockname()[1] if self._sock else 0

    def _config_stamp(self):
        try:
            return config_file().stat().st_mtime_ns
        except OSError:
            return None

    def _current_settings(self):
        stamp = self._config_stamp()
        if stamp != self._config_mtime:  # the user edited agentos.toml: answer with what it says now
            self.settings = load_settings(user=self.settings.user, home=self.home)
            self._config_mtime = stamp
        return self.settings

    def answer(self, payload: dict) -> dict:
        """One request -> one reply (see ``ask_service``); never raises."""
        if not secrets.compare_digest(str(payload.get("token", "")), self.token):
            return {"unavailable": "wrong token"}
        if payload.get("env") != self.env:
            return {"unavailable": "the client's AGENTOS_* settings differ from the service's"}
        if isinstance(payload.get("kb_search"), dict):
            return self._kb_search(payload["kb_search"])
        req = payload.get("ask") or {}
        # lazy: the query stack only where the service answers, not in the `agentos query` client
        from agentos_mem.query.ask import QueryError, ask, format_answer

        try:
            with self._lock:
                settings = self._current_settings()
                a = ask(str(req.get("text") or ""), user=req.get("user") or None, raw=bool(req.get("raw")), k=req.get("k"),
                        budget=req.get("budget"), history=bool(req.get("history")), settings=settings)
        except QueryError as e:
            return {"refused": str(e)}
        except Exception as e:  # noqa: BLE001 - the client answers in-process and reports it the usual way
            return {"unavailable": f"{type(e).__name__}: {e}"}
        return {"answer": json.loads(json.dumps(a.to_dict(), ensure_ascii=False, default=str)), "text": format_answer(a)}

    def _kb_search(self, req: dict) -> dict:
        # lazy: the knowledge read path only where the service answers
        from agentos_mem.query.kb import KBQueryError, search

        try:
            with self._lock:
                settings = self._current_settings()
                found = search(settings, str(req.get("user") or settings.user), str(req.get("query") or ""), selection=req.get("selection"),
                               k=req.get("k") if req.get("k") is not None else 10, mode=req.get("mode") or "hybrid")
        except KBQueryError as e:  # its blocked kind included: the same sentence the CLI prints in-process
            return {"refused": str(e)}
        except Exception as e:  # noqa: BLE001 - the client searches in-process and reports it the usual way
            return {"unavailable": f"{type(e).__name__}: {e}"}
        return {"answer": json.loads(json.dumps(found, ensure_ascii=False, default=str))}

    def _serve(self) -> None:
        while not self._stopped.is_set():
            try:
                conn, _ = self._sock.accept()
            except OSError:
                return  # closed by stop()
            threading.Thread(target=self._handle, args=(conn,), name="agentos-query-service-conn", daemon=True).start()

    def _handle(self, conn: socket.socket) -> None:
        self.last_request = time.monotonic()
        with conn:
            try:
                conn.settimeout(10.0)
                with conn.makefile("rb") as f:
                    line = f.readline(MAX_REQUEST_BYTES)
                conn.sendall(b'{"working": true}\n')  # read: the client now waits for the answer (ACK_TIMEOUT_S)
                try:
                    payload = json.loads(line)
                    reply = self.answer(payload) if isinstance(payload, dict) else {"unavailable": "not a request"}
                except ValueError:
                    reply = {"unavailable": "not a request"}
                conn.sendall(json.dumps(reply, ensure_ascii=False).encode("utf-8") + b"\n")
            except OSError:
                pass  # the client went away

    def start(self, *, warm: bool = True) -> "QueryService":
        """Bind, write the service file (owner-only) and answer in the background; ``warm`` loads the tokenizer
        and embedding model now rather than at the first question."""
        self._sock = socket.create_server((self.host, 0))
        self._thread = threading.Thread(target=self._serve, name="agentos-query-service", daemon=True)
        self._thread.start()
        # owner-only (mkstemp's 0600), whole or not at all, never through a link (kernel.files)
        atomic_write(self.file, json.dumps({"port": self.port, "token": self.token, "pid": os.getpid(), "home": str(self.home)}),
                     prefix=f".{self.file.name}.")
        if warm:
            threading.Thread(target=self._warm, name="agentos-query-service-warm-up", daemon=True).start()
        return self

    def _warm(self) -> None:
        with self._lock:
            warm_up(self.settings)

    def stop(self) -> None:
        """Stop answering and remove the service file if it is still ours."""
        self._stopped.set()
        try:
            below = guard(self.file)
            info = json.loads(below.read_bytes(self.file))
            if info.get("token") == self.token:
                below.unlink(self.file, missing_ok=True)
        except (OSError, ValueError):
            pass
        if self._sock is not None:
            try:
                self._sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            self._sock.close()


def idle_for(service: QueryService) -> float:
    return time.monotonic() - service.last_request


def spawn(home: Path, idle_s: int, environ=None) -> None:
    """Start ``agentos serve --query-only --idle-exit idle_s`` for ``home`` in the background, detached (its output
    goes to the workspace's runtime folder); the caller answers its own question meanwhile."""
    import subprocess
    import sys

    log_path = service_file(home).with_name("query-service.log")
    guard(log_path).mkdirs(log_path.parent)
    guard(log_path).check(log_path)  # a link there is refused (UnsafePath), never appended through
    env = dict(os.environ if environ is None else environ)
    env["AGENTOS_HOME"] = str(home)
    with open(log_path, "ab", opener=lambda p, flags: os.open(p, flags | os.O_NOFOLLOW | os.O_NONBLOCK, 0o644)) as log_file:
        subprocess.Popen([sys.executable, "-m", "agentos_mem.cli.main", "serve", "--query-only", "--idle-exit", str(idle_s)], env=env,
                         stdin=subprocess.DEVNULL, stdout=log_file, stderr=subprocess.STDOUT, start_new_session=True)


def warm_up(settings) -> None:
    """Load the tokenizer and the embedding model now, so the first query does not wait for them."""
    try:
        # lazy: the query stack only where the service answers, not in the `agentos query` client
        from agentos_mem.query.ask import embedder, tokenizer

        tokenizer(settings).tokens("预热 warm up")
        embedder(settings).dim  # noqa: B018 - loads the model
    except Exception as e:  # the first query reports whatever is wrong
        log.debug("warm-up failed: %s", e)


def running(home: Path) -> bool:
    """Whether a service answers on the port that ``home``'s service file names (a left-over file does not count)."""
    try:
        path = service_file(home)
        info = json.loads(guard(path).read_bytes(path))
        with socket.create_connection(("127.0.0.1", int(info["port"])), timeout=CONNECT_TIMEOUT_S):
            return True
    except (OSError, ValueError, KeyError, TypeError):
        return False


def start_unless_running(settings, *, environ=None, warm: bool = True) -> QueryService | None:
    """Start a service for ``settings``' workspace unless another process already keeps one (``agentos mcp``:
    one agent host's server serves the CLI, the next one leaves it be)."""
    if running(Path(settings.home).resolve()):
        return None
    return QueryService(settings, environ=environ).start(warm=warm)
