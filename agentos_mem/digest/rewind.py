"""A day digested after a later one: the user's facts are made again in date order, as a restore makes them.

Supersession depends on order: "8C16G" on 12-05 then "still 8C16G" on 12-08 leaves 8C16G current; an edit of 12-05
to "16C32G" digested after 12-08 would, applied on its own, make 16C32G current over the later day's word. Rather
than patch the history where the change lands (every rule of ``services.supersession`` would need its own undo), a
change to a day before the user's latest digested day (or an edit or removal of lines of the latest day) rewinds the user's facts (``FactStore.rewind``): every day is
then digested again in date order, the decisions of the journal applied again at the points they were made at. The
result is what ``agentos restore`` makes of the same logs and journal, by construction; the cost is a re-digest of
the user's days (cached model extractions are reused), paid only when history changes behind the latest day.
"""

from __future__ import annotations

from contextlib import nullcontext
from datetime import date
from pathlib import Path

from agentos_mem.digest.evidence import gone_observations
from agentos_mem.digest.stages import day_changed, pending_days, read_day
from agentos_mem.restore.replay import replay
from agentos_mem.kernel.settings import Settings
from agentos_mem.kernel.workspace import Workspace
from agentos_mem.storage import journal
from agentos_mem.storage.facts import facts_for

# The journal's decisions that change a user's facts (a memory record's deletion does not): applied again after a rewind.
FACT_DECISIONS = ("fact.forget", "fact.resolve", "kb.decide")


def out_of_order(settings: Settings, user: str, folder: Path, days: list[date]) -> date | None:
    """The earliest of ``days`` whose logs are new, changed or gone since digested, when the user's digested history
    already reaches past it, or that is the latest digested day and no longer holds lines it was digested with (an
    edit or a removal: what those lines said would otherwise stay in the facts' form, a subject's wording, a first
    line); None when the days only extend the history (a new day, lines added to the latest one)."""
    with facts_for(settings) as store:
        last = store.last_digested_day(user)
        if not last:
            return None
        for d in sorted(days):
            if d.isoformat() > last or not day_changed(store, settings, user, folder, d):
                continue
            if d.isoformat() < last or gone_observations(settings, store, read_day(settings, user, d, folder, store)):
                return d
        return None


def rewind(settings: Settings, user: str) -> dict:
    """Take back the user's facts and the decisions applied to them (``FactStore.rewind``); every day the user's
    digests read is pending again. Returns counts and ``last``: the latest day digested before (ISO)."""
    events, _ = journal.read(Workspace(settings.home).journal_dir)
    ids = [e["id"] for e in events if e.get("user") == user and e.get("kind") in FACT_DECISIONS]
    with facts_for(settings) as store:
        last = store.last_digested_day(user)
        return {**store.rewind(user, ids), "last": last}


def prepare(settings: Settings, user: str, folder: Path, days: list[date], hold=nullcontext) -> tuple[list[date], set[date], dict | None]:
    """The days a run asked for (``days``, in date order), as they are to be digested: when one of them changed behind
    the user's latest digested day, the user's facts are rewound and every pending day of the user is digested again
    (up to the later of the asked days and the day reached before), after the decisions made before any day. Returns
    (the days to digest, the days asked for: they take memory records from their logs, the rewind's report or None).
    ``hold``: the context each write runs in (the flows' workspace writer slot)."""
    asked = set(days)
    if not days or (first := out_of_order(settings, user, folder, days)) is None:
        return sorted(days), asked, None
    with hold():
        rewound = {**rewind(settings, user), "from": first.isoformat()}
    until = max([*days, *([date.fromisoformat(rewound["last"])] if rewound["last"] else [])])
    again = pending_days(settings, user, folder, until)
    with hold():
        decisions_reached(settings, user)
    return again, asked, {**rewound, "days": len(again)}


def decisions_reached(settings: Settings, user: str) -> dict:
    """The journal's decisions of ``user`` made when the history had reached the day digested last (or before any
    day), applied now: between two days, as a restore applies them (a forget made after 12-05 closes what 12-05 said,
    not what 12-08 says again)."""
    return replay(settings.model_copy(update={"user": user}), user=user, reached=True).to_dict()
