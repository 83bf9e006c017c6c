"""Replay the journal (``storage.journal``): apply, in the order they were made, the decisions this machine's fact
store does not hold yet: those synced from another machine, or all of them during a restore.

A decision whose target is not here yet (a forget of a fact from a log this machine has not digested, a conflict
not raised yet, a document not synced yet) waits: it is tried again at the next replay (every nightly run starts
and ends with one), and counted as waiting. A decision that can no longer apply (the conflict was settled here
already, the document was decided) is marked with what happened, never applied twice.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field

from kernel import clock
from kernel.settings import Settings
from kernel.workspace import Workspace
from storage import journal
from storage.facts import open_facts


@dataclass
class ReplayReport:
    applied: list[str] = field(default_factory=list)   # "<kind> <what>: <outcome>"
    waiting: list[str] = field(default_factory=list)   # target not here yet
    problems: list[str] = field(default_factory=list)  # unreadable journal lines, refused decisions

    def to_dict(self) -> dict:
        return asdict(self)

    def merge(self, other: "ReplayReport") -> None:
        self.applied += other.applied
        self.problems += [p for p in other.problems if p not in self.problems]
        self.waiting = other.waiting


def pending(settings: Settings, read: tuple[list[dict], list[str]] | None = None) -> tuple[list[dict], list[str]]:
    """The journal's decisions this machine's fact store does not hold, in order, and the journal's problems
    (``read``: the journal as ``storage.journal.read`` gave it, when the caller has read it already)."""
    events, problems = read or journal.read(Workspace(settings.home).journal_dir)
    facts = open_facts(settings)
    try:
        done = facts.journal_applied()
    finally:
        facts.close()
    return [e for e in events if e["id"] not in done], problems


def replay(settings: Settings, *, user: str | None = None, through: str | None = None, only_undated: bool = False,
           reached: bool = False, read: tuple[list[dict], list[str]] | None = None) -> ReplayReport:
    """Apply the pending decisions (of ``user`` only, when given): all of them, or only those made when the user's
    history reached ``through`` (an ISO day) or earlier, or (``only_undated``) those made before any day was digested,
    or (``reached``) those whose point in the history this machine has reached (the nightly run's rule: a decision
    made after a day is applied after that day is digested here)."""
    events, problems = pending(settings, read)
    report = ReplayReport(problems=problems)
    here: dict[str, str] = {}
    if reached:
        facts = open_facts(settings)
        try:
            here = {u: facts.last_digested_day(u) or "" for u in {ev["user"] for ev in events}}
        finally:
            facts.close()
    for ev in events:
        if user is not None and ev["user"] != user:
            continue
        if only_undated and ev.get("through"):
            continue
        if through is not None and ev.get("through") and str(ev["through"]) > through:
            continue
        if reached and ev.get("through") and str(ev["through"]) > here.get(ev["user"], ""):
            report.waiting.append(f"{ev['kind']} {_label(ev)} ({ev.get('host')}): made after {ev['through']}, not digested here yet")
            continue
        what = f"{ev['kind']} {_label(ev)} ({ev.get('host')}, {str(ev['at'])[:19]})"
        try:
            with clock.replaying(ev["at"]):  # what the decision stamps is what it stamped where it was made
                outcome = APPLY[ev["kind"]](settings, ev) if ev["kind"] in APPLY else f"unknown kind {ev['kind']!r}: not applied"
        except Exception as e:  # noqa: BLE001 - one decision never stops the replay; it stays pending and is reported
            report.problems.append(f"{what}: {type(e).__name__}: {e}")
            continue
        if outcome is None:
            report.waiting.append(what)
            continue
        facts = open_facts(settings)
        try:
            facts.mark_journal_applied(ev, outcome)
        finally:
            facts.close()
        report.applied.append(f"{what}: {outcome}")
    return report


def _label(ev: dict) -> str:
    if ev["kind"] == "kb.decide":
        return f"{ev.get('decision')} {ev.get('doc_id')}"
    if ev["kind"] == "fact.resolve":
        return f"{'accept' if ev.get('accept') else 'reject'} {ev.get('subject')}: {ev.get('existing_object')} -> {ev.get('candidate_object')}"
    return f"{ev.get('subject')} · {ev.get('predicate')} · {ev.get('object')}"


def _forget(settings: Settings, ev: dict) -> str | None:
    from digest.evidence import forget_fact

    facts = open_facts(settings)
    try:
        ids = facts.forget_targets(ev["user"], ev["subject_key"], ev["predicate"], ev["object_key"], list(ev.get("sources") or []))
    finally:
        facts.close()
    if not ids:
        return None
    for fid in ids:
        forget_fact(settings, ev["user"], fid, ev.get("reason") or "", replayed=True)
    return f"forgot fact {', '.join(f'#{i}' for i in ids)}"


def _resolve(settings: Settings, ev: dict) -> str | None:
    from knowledge.decisions import CONFLICT_KEY, resolve_conflict

    facts = open_facts(settings)
    try:
        c = facts.find_conflict(ev["user"], {k: ev.get(k) for k in CONFLICT_KEY})
    finally:
        facts.close()
    if c is None:
        return None
    out = resolve_conflict(settings, ev["user"], c["id"], accept=bool(ev.get("accept")), replayed=True)
    return f"conflict #{out['id']} {out['status']}"


def _decide(settings: Settings, ev: dict) -> str | None:
    from knowledge.decisions import decide
    from knowledge.refine import open_kb

    store = open_kb(settings)
    try:
        doc = store.find(ev["doc_id"])
    finally:
        store.close()
    if doc is None:
        return None
    if doc["status"] != "pending":
        return f"already {doc['status']}"
    decide(settings, ev["doc_id"], ev["decision"], ev["who"], ev.get("note"), replayed=True)
    return "approved" if ev["decision"] == "approve" else "rejected"


APPLY = {"fact.forget": _forget, "fact.resolve": _resolve, "kb.decide": _decide}


def take_in(settings: Settings) -> dict:
    """What another machine synced that this machine's derived stores lack, brought in (the nightly run's first and
    last stage): knowledge documents refined there (registered from their cards, pending), then the decisions made
    there whose point in the history this machine has reached; a document whose card says it was decided and that no
    journal line decides (decided before the journal existed) is settled as its card says."""
    from restore import registry

    regs = registry.register_documents(settings)
    read = journal.read(Workspace(settings.home).journal_dir)
    report = replay(settings, reached=True, read=read)
    journaled = {str(e.get("doc_id")) for e in read[0] if e.get("kind") == "kb.decide"}
    settled = registry.settle_from_cards(settings, {d: st for d, st in regs["card_status"].items() if d not in journaled})
    return {"documents": regs["registered"], "settled_from_cards": settled, **report.to_dict()}

