"""Reads over L2 facts and the L3 archive, for the CLI and (next) the layered query and MCP server.

Dict in, dict out; no Prefect. Each call opens the stores, answers and closes them.
"""

from __future__ import annotations

from datetime import date

from agentos_mem.safety.secrets import mask_lines, mask_value
from agentos_mem.kernel.settings import Settings
from agentos_mem.storage.guards import check_no_restore
from agentos_mem.query.rules import check_request
from agentos_mem.query.threads import Piece, replaced
from agentos_mem.storage.drift import as_served
from agentos_mem.storage.facts import open_facts
from agentos_mem.kernel.workspace import Workspace
from agentos_mem.storage.raw_archive import ArchiveError, RawArchive


def facts_as_of(settings: Settings, when: date | None = None, *, min_confidence: float = 0.0) -> dict:
    """The facts valid now (or at the end of ``when``), at or above ``min_confidence``. A fact past its expiry is the
    user's last known value: it is still listed, after the fresh ones, with ``stale: true`` and ``stale_since`` (its
    expiry's date). A fact the user may have changed since in words no rule read (``storage.drift``) is listed with
    status ``may_have_changed``, ``changed_on`` and the newer sentence (``newer``), not as ``active``; a self-disclosure
    no rule read, kept as a statement, with status ``statement`` and ``said_on``; a fact a newer one of its topic thread
    makes history (``in_threads``), with status ``earlier``. Retracted and forgotten facts never are. ``upcoming``:
    values that start after now ("from April 1"), not valid yet."""
    check_no_restore(settings.home)  # a restore's partial store is never served as the memory
    store = open_facts(settings)
    try:
        rows = store.as_of(settings.user, when, min_confidence=min_confidence, stale=True)
        # a fact a later sentence may have changed: status may_have_changed, its day and the sentence beside it; a
        # self-disclosure no rule read: status statement, the day it was said
        changed = store.changes(settings.user, when)
        rows = in_threads([as_served(r, changed.get(r["id"])) for r in rows])
        # still to come, seen from now (a past as-of view does not list what was learnt after that day)
        later = [r for r in store.upcoming(settings.user) if r["confidence"] >= min_confidence]
    finally:
        store.close()
    return {"user": settings.user, "as_of": when.isoformat() if when else "now", "facts": [masked(r) for r in rows],
            "upcoming": [masked(r) for r in later]}


EARLIER = "earlier"


def in_threads(rows: list[dict]) -> list[dict]:
    """``rows`` (as served) with every claim a newer row of its topic thread makes history (query.threads ``replaced``)
    served as status ``earlier``: its day (``earlier``), the newer row's day (``newer_on``) and what it says (``newer``)."""
    pieces = [Piece.of_fact(r, claim=r["status"] == "active") for r in rows]
    out = list(rows)
    for i, j in replaced(pieces).items():
        newer = rows[j]
        out[i] = {**rows[i], "status": EARLIER, "earlier": rows[i]["valid_from"][:10], "newer_on": newer["valid_from"][:10],
                  "newer": f"{newer['subject']} · {newer['predicate']} · {newer['object']}"}
    return out


def fact_history(settings: Settings, subject: str, *, closed: bool = False) -> dict:
    """Every version of the facts about ``subject``, oldest first; a subject the L0 rules forbid ("NAS password",
    "我的口令") is refused: ``status`` blocked, the rule, no versions. ``closed``: the retracted and forgotten versions
    too, with their reason (a person's own view, ``agentos facts history``; an agent never gets them)."""
    check_no_restore(settings.home)  # a restore's partial store is never served as the memory
    refusal = check_request(settings.home, subject)
    if refusal is not None:
        return {"user": settings.user, "subject": subject, "versions": [], **refusal.as_dict()}
    store = open_facts(settings)
    try:
        rows = store.history(settings.user, subject, closed=closed)
    finally:
        store.close()
    return {"user": settings.user, "subject": subject, "versions": [masked(r) for r in rows]}


def conflicts(settings: Settings, *, include_resolved: bool = False) -> dict:
    check_no_restore(settings.home)  # a restore's partial store is never served as the memory
    store = open_facts(settings)
    try:
        rows = store.conflicts(settings.user, status=None if include_resolved else "open")
    finally:
        store.close()
    return {"user": settings.user, "conflicts": [masked(r) for r in rows]}


def masked(row: dict) -> dict:
    """A fact or conflict row as it is served: any secret its text holds masked (a store written before secrets
    were masked at write time still serves none; the marker names the raw reference and line of the original)."""
    where = row.get("raw_ref") or row.get("source_file")
    line = row.get("line_start")
    out = dict(row)
    for key in ("subject", "evidence", "newer"):
        if isinstance(out.get(key), str):
            out[key] = mask_lines(out[key], where, line)[0]
    for key in ("object", "existing_object", "candidate_object"):
        if isinstance(out.get(key), str):
            out[key] = mask_value(out.get("subject") or "", out[key], where, line)[0]
    return out


def raw_lines(settings: Settings, ref: str, start: int, end: int) -> dict:
    """Lines ``start``..``end`` of an archived log (L3), only on explicit request, and only of the caller's
    (``settings.user``) own archive: a reference into another user's archive is refused exactly as one that
    does not exist (ArchiveError), before anything is read, so whether it exists is never revealed."""
    check_no_restore(settings.home)  # a restore's partial store is never served as the memory
    parts = ref.split("/")
    if len(parts) == 4 and parts[2].startswith("r") and parts[0] != settings.user:
        raise ArchiveError(f"no archived file for {ref!r}")  # RawArchive.path_of's words for an unknown reference
    lines = RawArchive(Workspace(settings.home).raw_dir).read_lines(ref, start, end)
    # The archive keeps the user's bytes; what a read serves has its secrets masked (the marker names this line).
    lines = mask_lines("\n".join(lines), ref, start)[0].split("\n") if lines else lines
    return {"ref": ref, "lines": [start, end], "text": lines}
