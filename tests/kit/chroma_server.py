"""A real Chroma server (``chroma run``, from the virtual environment's bin/) on a free loopback port, for the tests
of ``AGENTOS_CHROMA_URL``. Chroma and onnxruntime write under ``~/.cache`` when they start, so the server's HOME and
XDG_CACHE_HOME are a folder of the test's, never the user's."""

from __future__ import annotations

import os
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

from tests.kit.loopback import free_port

CHROMA = str(Path(sys.executable).parent / "chroma")


class ChromaServer:
    def __init__(self, folder: Path):
        self.folder = Path(folder)
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.proc: subprocess.Popen | None = None

    def start(self, timeout_s: float = 60.0) -> "ChromaServer":
        home = self.folder / "home"
        home.mkdir(parents=True, exist_ok=True)
        env = {**os.environ, "HOME": str(home), "XDG_CACHE_HOME": str(home / ".cache"), "ANONYMIZED_TELEMETRY": "False"}
        self.log = open(self.folder / "chroma.log", "wb")
        self.proc = subprocess.Popen([CHROMA, "run", "--path", str(self.folder / "db"), "--host", "127.0.0.1", "--port", str(self.port)],
                                     env=env, stdout=self.log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"chroma run exited with {self.proc.returncode}: {(self.folder / 'chroma.log').read_text(errors='replace')[-2000:]}")
            try:
                with urllib.request.urlopen(self.url + "/api/v2/heartbeat", timeout=1):
                    return self
            except OSError:
                time.sleep(0.1)
        self.stop()
        raise RuntimeError(f"chroma run did not answer its heartbeat within {timeout_s} s")

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.log.close()

    def collections(self) -> dict[str, int]:
        """Every collection on the server: name -> count (what a person sees with Chroma's own client)."""
        from agentos_mem.storage.vector_index import server_collections

        return server_collections(self.url, "")
