"""The nightly digest's memory stage: guarded automatic extraction over each task of the day.

A day's log holds one or more tasks: each topic section of each file (a file without headings is one
task). Like an agent host at task end, the stage looks at each task's last 3 user/assistant exchanges
(memory.extract.extract: cue gate, scopes, salience, equivalence, the 0.6 merge, the
number/date/negation guard, manual records only ever proposed to). A task that fails is logged and
skipped; the digest goes on. Re-running a day writes nothing new (duplicates and the same pending
proposals are recognised).
"""

from __future__ import annotations

import logging

from agentos_mem.kernel.settings import Settings
from agentos_mem.memory.report import MemoryReport
from agentos_mem.storage.memory_records import open_book

log = logging.getLogger(__name__)


def tasks_of(turns: list) -> list[list]:
    """Turns grouped by (file, topic heading), in the order they first appear."""
    groups: dict[tuple[str, str | None], list] = {}
    for t in turns:
        groups.setdefault((t.source_file, t.topic), []).append(t)
    return list(groups.values())


def extract_day(settings: Settings, user: str, day, turns: list) -> dict:
    """Run the extraction over every task of a day; one ``MemoryReport`` (memory/report.py) for the digest's
    report and artifact, as a dict (the day's report holds it in that form under ``memories``)."""
    # lazy: memory.extract pulls httpx: only when this runs
    from agentos_mem.memory.extract import extract, messages_from_turns

    out = MemoryReport(extractor="rules")
    try:
        book = open_book(settings)
    except Exception as e:  # noqa: BLE001 - the memory stage never stops the digest
        out.errors.append(f"open memory book: {type(e).__name__}: {e}")
        log.warning("memory extraction skipped: %s", out.errors[-1])
        return out.to_dict()
    try:
        for turns_of_task in tasks_of(turns):
            out.tasks += 1
            where = f"{turns_of_task[0].source_file} ({turns_of_task[0].topic or 'no heading'})"
            try:
                r = extract(book, user, messages_from_turns(turns_of_task), settings=settings, day=day)
            except Exception as e:  # noqa: BLE001 - one task's failure is logged and skipped
                out.errors.append(f"{where}: {type(e).__name__}: {e}")
                log.warning("memory extraction failed for %s: %s", where, e)
                continue
            out.created += r.get("created") or []
            out.updated += r.get("updated") or []
            out.duplicates += r.get("duplicates") or []
            out.proposals += r.get("proposals") or []
            out.errors += [f"{where}: {e}" for e in r.get("errors") or []]
            if r.get("extractor") and r["extractor"] != "rules":
                out.extractor = r["extractor"]
        out.pending = [{"id": p["id"], "kind": p["kind"], "target": p["target"], "description": p["record"].get("description"),
                        "reason": p["reason"]} for p in book.pending(user)]
    finally:
        if book.proposals:
            book.proposals.close()
    return out.to_dict()
