"""A person's decisions about their facts, one function each, journaled: forgetting a fact and settling a fact
conflict. Every transport calls these same functions (``agentos facts forget|resolve``, the MCP ``fact_forget``
tool, the ``review`` flow through ``knowledge.decisions.apply_review``), and ``restore.replay`` replays their
journal lines with ``replayed=True``.

Each decision is written to this machine's journal in agent-sync (``storage.journal``) before it is applied, by
content rather than by row id, so a restore or another machine makes the same decision; a journal that cannot be
written leaves the store as it was (``JournalUnwritable``). Deciding a knowledge document (approve, reject) stays
with the knowledge pipeline (``knowledge.decisions.decide``): it applies the document's staged fact candidates,
which is refine's work, not a policy over the stores.
"""

from __future__ import annotations

from datetime import date

from agentos_mem.kernel.settings import Settings
from agentos_mem.kernel.workspace import Workspace
from agentos_mem.storage.guards import workspace_lock
from agentos_mem.services.supersession import Supersession
from agentos_mem.storage import journal
from agentos_mem.storage.cards import CardStore
from agentos_mem.storage.facts import FactStore, facts_for


def forget_fact(settings: Settings, user: str, fact_id: int, reason: str, *, replayed: bool = False,
                store: FactStore | None = None) -> dict:
    """A person forgets a fact (``agentos facts forget``, MCP ``fact_forget``): closed in the fact store with the
    reason, and dropped from the cards and daily summaries that list it. The indexes drop it at their next rebuild;
    until then no read serves it (reads re-check the store). Raises KeyError for an unknown fact (another user's
    included), ValueError for one already forgotten.

    The decision goes to this machine's journal in agent-sync (``storage.journal``), by content (subject, predicate,
    value, the days and files that said it), so another machine, or a restore, forgets the same fact; ``replayed``:
    this is that replay (``restore.replay``), already in a journal. ``store``: the caller's fact store (a replay's),
    else one opened for this decision."""
    with workspace_lock(settings.home):
        with facts_for(settings, store) as store:
            f = store.forgettable(user, fact_id)  # checked before the journal is written: a refused forget writes no line
            evidence = store.evidence_of(fact_id)
            days = sorted({e["source_day"] for e in evidence} | {f["source_day"]})
            if replayed:
                row = store.forget(user, fact_id, reason)
            else:  # journaled first: a journal that cannot be written leaves the fact as it is (JournalUnwritable)
                sources = sorted({f"{e['source_day']}|{e['source_file']}" for e in evidence} | {f"{f['source_day']}|{f['source_file']}"})
                row = journal.record(store, Workspace(settings.home).journal_dir, settings.hostname, "fact.forget", user,
                                     {"subject": f["subject"], "subject_key": f["subject_key"], "predicate": f["predicate"],
                                      "object": f["object"], "object_key": f["object_key"], "sources": sources,
                                      "reason": store.forget_reason(reason)},
                                     apply=lambda: store.forget(user, fact_id, reason))["applied"]
        ws = Workspace(settings.home)
        changed = CardStore(ws.cards_dir, ws.summaries_dir).drop_fact(user, [date.fromisoformat(d) for d in days], fact_id)
    return {"fact": row, "cards_changed": changed}


def resolve_conflict(settings: Settings, user: str, conflict_id: int, *, accept: bool, replayed: bool = False,
                     store: FactStore | None = None) -> dict:
    """Settle one of the user's fact conflicts: ``accept`` makes the contested value current, otherwise the store
    keeps what it holds. Raises KeyError (no such open conflict) or ValueError. The decision goes to the journal by
    the conflict's content (its subject, both values, the lines that raised it); ``replayed``: this is its replay.
    ``store``: the caller's fact store (a replay's), else one opened for this decision."""
    with facts_for(settings, store) as facts:
        if replayed:
            return Supersession(facts).resolve_conflict(user, int(conflict_id), accept=accept)
        c = facts.open_conflict(user, int(conflict_id))  # checked first: a refused decision writes no journal line
        # journaled first: a journal that cannot be written leaves the conflict open (JournalUnwritable)
        return journal.record(facts, Workspace(settings.home).journal_dir, settings.hostname, "fact.resolve", user,
                              {"accept": bool(accept), **{k: c[k] for k in CONFLICT_KEY}},
                              apply=lambda: Supersession(facts).resolve_conflict(user, int(conflict_id), accept=accept))["applied"]


# What names a conflict on every machine (its row id is one machine's).
CONFLICT_KEY = ("subject", "predicate", "existing_object", "candidate_object", "source_day", "source_file", "line_start", "line_end")
