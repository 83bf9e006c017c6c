"""Append-only text logs in ``logs/``: errors.log, conflicts.log, quarantine.jsonl, llm_usage.jsonl.

Lines are appended whole under an exclusive lock, so two runs writing at once never interleave.
"""

from __future__ import annotations

import json
from pathlib import Path

from agentos_mem.kernel import clock
from agentos_mem.kernel.files import guard


def append_lines(path: Path, lines: list[str]) -> None:
    if not lines:
        return
    # never through a link below the workspace, never into a FIFO (kernel.files.Below)
    guard(path).append(path, "".join(line.rstrip("\n") + "\n" for line in lines))


def log_errors(logs_dir: Path, run: str, problems: list) -> None:
    stamp = clock.stamp()
    # one line each, whatever a file name or a reason holds
    append_lines(logs_dir / "errors.log", [f"{stamp} {run} {p.severity.upper()} {p}".replace("\r", "\\r").replace("\n", "\\n") for p in problems])


def log_conflicts(logs_dir: Path, lines: list[str]) -> None:
    stamp = clock.stamp()
    append_lines(logs_dir / "conflicts.log", [f"{stamp} {line}" for line in lines])


def log_model_usage(logs_dir: Path, entry: dict) -> None:
    """One line per digested day that asked the chat model: what it answered, what validation dropped, its tokens and
    seconds (``llm_usage.jsonl``: what a model costs per day, read by ``agentos bench facts``)."""
    append_lines(logs_dir / "llm_usage.jsonl", [json.dumps({"at": clock.stamp(), **entry}, ensure_ascii=False, sort_keys=True)])


def record_quarantine(logs_dir: Path, entries: list[dict]) -> int:
    """Add entries to quarantine.jsonl unless the same (file sha, file, line, reason) is already there."""
    path = logs_dir / "quarantine.jsonl"
    seen = set()
    below = guard(path)
    if below.is_file(path):
        for line in below.read_bytes(path).decode("utf-8", errors="replace").splitlines():
            try:
                e = json.loads(line)
            except json.JSONDecodeError:
                continue
            seen.add((e.get("sha256"), e.get("file"), e.get("line"), e.get("reason")))
    new = [e for e in entries if (e.get("sha256"), e.get("file"), e.get("line"), e.get("reason")) not in seen]
    append_lines(path, [json.dumps({**e, "recorded_at": clock.stamp()}, ensure_ascii=False) for e in new])
    return len(new)
