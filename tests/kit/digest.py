"""A workspace and a logs folder for the digest stages on real files (no Prefect), in ``tmp_path``.

- ``log_workspace(tmp_path)``: a fresh workspace ``tmp_path/home`` and an empty logs folder ``tmp_path/logs``,
  with the ``Settings`` that read them (hostname ``h``); the test writes its own logs.
- ``digested_workspace(tmp_path, log, day)``: the same with ``log`` as the day's Markdown log, already digested.
- ``night(settings, logs, day, *lines)``: the user says ``lines`` on ``day`` (one Markdown log) and that night digests it.
- ``current(settings, when=None)``: the objects of the current facts (as of ``when``), sorted.
- ``told(tmp_path, monkeypatch, {day: [lines]})``: the clock pinned to 2026-06-20 noon, each day's lines said and
  digested that night, the index rebuilt: the settings of a workspace ready to query.
"""

from __future__ import annotations

from datetime import date
from pathlib import Path


def log_workspace(tmp_path: Path):
    """``(settings, logs)``: a fresh workspace and an empty logs folder."""
    from agentos_mem.kernel.settings import Settings
    from agentos_mem.kernel.workspace import init_workspace

    home = tmp_path / "home"
    init_workspace(home)
    logs = tmp_path / "logs"
    logs.mkdir()
    return Settings(home=home, hostname="h", logs_dir=logs), logs


def digested_workspace(tmp_path: Path, log: str, day: date):
    """``(settings, logs)`` of ``log_workspace`` with ``log`` written as ``<day>.md`` and that day digested for the
    default user."""
    from agentos_mem.digest.stages import digest_day

    s, logs = log_workspace(tmp_path)
    (logs / f"{day}.md").write_text(log, encoding="utf-8")
    digest_day(s, "default", day, logs)
    return s, logs


def night(s, logs: Path, day: date, *lines: str) -> None:
    from agentos_mem.digest.stages import digest_day

    (logs / f"{day}.md").write_text("".join(f"[10:0{i}] 用户: {t}\n" for i, t in enumerate(lines)), encoding="utf-8")
    digest_day(s, "default", day, logs)


def current(s, when: date | None = None) -> list[str]:
    from agentos_mem.query.facts import facts_as_of

    return sorted(f["object"] for f in facts_as_of(s, when)["facts"])


def told(tmp_path: Path, monkeypatch, days: dict) -> object:
    from agentos_mem.index.stages import rebuild

    monkeypatch.setenv("AGENTOS_NOW", "2026-06-20T12:00:00+08:00")
    s, logs = log_workspace(tmp_path)
    for day, lines in days.items():
        night(s, logs, day, *lines)
    rebuild(s)
    return s
