"""Reads over L2 facts and the L3 archive, for the CLI and (next) the layered query and MCP server.

Dict in, dict out; no Prefect. Each call opens the stores, answers and closes them.
"""

from __future__ import annotations

from datetime import date

from kernel.settings import Settings
from storage.facts import open_facts
from kernel.workspace import Workspace
from storage.raw_archive import RawArchive


def facts_as_of(settings: Settings, when: date | None = None, *, min_confidence: float = 0.0) -> dict:
    """The facts valid now (or at the end of ``when``), not expired, at or above ``min_confidence``."""
    store = open_facts(settings)
    try:
        rows = store.as_of(settings.user, when, min_confidence=min_confidence)
    finally:
        store.close()
    return {"user": settings.user, "as_of": when.isoformat() if when else "now", "facts": rows}


def fact_history(settings: Settings, subject: str) -> dict:
    """Every version of the facts about ``subject``, oldest first."""
    store = open_facts(settings)
    try:
        rows = store.history(settings.user, subject)
    finally:
        store.close()
    return {"user": settings.user, "subject": subject, "versions": rows}


def conflicts(settings: Settings, *, include_resolved: bool = False) -> dict:
    store = open_facts(settings)
    try:
        rows = store.conflicts(settings.user, status=None if include_resolved else "open")
    finally:
        store.close()
    return {"user": settings.user, "conflicts": rows}


def raw_lines(settings: Settings, ref: str, start: int, end: int) -> dict:
    """Lines ``start``..``end`` of an archived log (L3), only on explicit request."""
    lines = RawArchive(Workspace(settings.home).raw_dir).read_lines(ref, start, end)
    return {"ref": ref, "lines": [start, end], "text": lines}
