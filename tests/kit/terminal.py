"""A command run the way a person at a terminal runs it: its stderr is a pseudo-terminal (``pty.openpty``), read
back as the bytes the terminal would have been sent; its stdout a pipe, as in ``agentos ... > out.json``."""

from __future__ import annotations

import fcntl
import os
import pty
import re
import select
import struct
import subprocess
import termios

ANSI = re.compile(rb"\x1b\[[0-9;?]*[A-Za-z]")


def run_on_terminal(argv: list[str], env: dict[str, str], *, columns: int = 120, timeout: float = 900) -> tuple[int, bytes, bytes]:
    """(exit code, stdout bytes, the bytes written to the terminal on stderr). ``timeout`` only bounds a hung
    command (the test then fails); nothing is asserted about how long anything takes."""
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 50, columns, 0, 0))  # a real terminal has a size
    p = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=slave, env=env)
    os.close(slave)
    chunks: list[bytes] = []
    out_chunks: list[bytes] = []
    streams = {master: chunks, p.stdout.fileno(): out_chunks}
    try:
        while streams:
            ready, _, _ = select.select(list(streams), [], [], timeout)
            if not ready:
                p.kill()
                raise TimeoutError(f"{argv} wrote nothing for {timeout} s")
            for fd in ready:
                try:
                    data = os.read(fd, 65536)
                except OSError:  # the terminal's other end closed (Linux reports EIO)
                    data = b""
                if data:
                    streams[fd].append(data)
                else:
                    del streams[fd]
        code = p.wait(timeout=timeout)
    finally:
        os.close(master)
        p.stdout.close()
    return code, b"".join(out_chunks), b"".join(chunks)


def plain(terminal_bytes: bytes) -> str:
    """What the terminal shows, roughly: escape sequences removed, carriage returns as line breaks."""
    return ANSI.sub(b"", terminal_bytes).replace(b"\r", b"\n").decode("utf-8", errors="replace")
