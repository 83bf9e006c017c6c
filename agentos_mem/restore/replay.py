"""Replay the journal (``storage.journal``): apply, in the order they were made, the decisions this machine's fact
store does not hold yet: those synced from another machine, or all of them during a restore.

A decision whose target is not here yet (a forget of a fact from a log this machine has not digested, a conflict
not raised yet, a document not synced yet) waits: it is tried again at the next replay (every nightly run starts
and ends with one), and counted as waiting. A decision that can no longer apply (the conflict was settled here
already, the document was decided) is marked with what happened, never applied twice.

Who may make a decision is checked again here, whoever's file it came from (``refusal``): a journal line is applied
only when its user is a user of this workspace (a folder under ``04_memory/working`` or ``records``, the configured
user or a knowledge admin); a decision about a user's memory (a forget, a conflict settled, a memory deleted) is that
user's own, so a line saying another person (``who``) made it is refused; a document is decided only by someone
``knowledge.decisions.may_decide`` admits, for the document's owner as the line names it. ``storage.journal.read``
has already skipped lines that are damaged or that sit in another host's file than the one they name. A refused line
is reported by every replay (``problems``) and never marked: the journal is the record, not this machine's judgement.
What this cannot stop: anyone who can write agent-sync can write any host's file and any log; the journal is as
trustworthy as the synced folder, and these checks keep a line to what the person it names may decide.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field

from agentos_mem.kernel import clock
from agentos_mem.kernel.settings import Settings
from agentos_mem.kernel.workspace import Workspace
from agentos_mem.knowledge.decisions import NotAllowed, decide
from agentos_mem.knowledge.refine import open_kb
from agentos_mem.restore import registry
from agentos_mem.services.decisions import CONFLICT_KEY, forget_fact, resolve_conflict
from agentos_mem.storage import journal
from agentos_mem.storage.facts import FactStore, facts_for
from agentos_mem.storage.memory_proposals import ProposalStore


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


def pending(settings: Settings, read: tuple[list[dict], list[str]] | None = None,
            store: FactStore | None = None) -> tuple[list[dict], list[str]]:
    """The journal's decisions this machine's fact store does not hold, in order, and the journal's problems
    (``read``: the journal as ``storage.journal.read`` gave it, when the caller has read it already; ``store``: the
    caller's fact store)."""
    events, problems = read or journal.read(Workspace(settings.home).journal_dir)
    with facts_for(settings, store) as facts:
        done = facts.journal_applied()
    return [e for e in events if e["id"] not in done], problems


def replay(settings: Settings, *, user: str | None = None, through: str | None = None, only_undated: bool = False,
           reached: bool = False, read: tuple[list[dict], list[str]] | None = None) -> ReplayReport:
    """Apply the pending decisions (of ``user`` only, when given): all of them, or only those made when the user's
    history reached ``through`` (an ISO day) or earlier, or (``only_undated``) those made before any day was digested,
    or (``reached``) those whose point in the history this machine has reached (the nightly run's rule: a decision
    made after a day is applied after that day is digested here). The fact store is opened once for the whole replay:
    each decision reads and writes it through the same connection."""
    with facts_for(settings) as facts:
        return _replay(settings, facts, user=user, through=through, only_undated=only_undated, reached=reached, read=read)


def _replay(settings: Settings, facts: FactStore, *, user: str | None, through: str | None, only_undated: bool,
            reached: bool, read: tuple[list[dict], list[str]] | None) -> ReplayReport:
    events, problems = pending(settings, read, facts)
    report = ReplayReport(problems=problems)
    here: dict[str, str] = {}
    if reached:
        here = {u: facts.last_digested_day(u) or "" for u in {ev["user"] for ev in events}}
    users = workspace_users(settings)
    for ev in events:
        if user is not None and ev["user"] != user:
            continue
        why = refusal(settings, ev, users)
        if why is not None:
            report.problems.append(f"{ev['_file']}:{ev['_line']}: {ev['kind']} {_label(ev)}: not applied ({why})")
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
                outcome = APPLY[ev["kind"]](settings, ev, facts) if ev["kind"] in APPLY else f"unknown kind {ev['kind']!r}: not applied"
        except Exception as e:  # noqa: BLE001 - one decision never stops the replay; it stays pending and is reported
            report.problems.append(f"{what}: {type(e).__name__}: {e}")
            continue
        if outcome is None:
            report.waiting.append(what)
            continue
        facts.mark_journal_applied(ev, outcome)
        report.applied.append(f"{what}: {outcome}")
    return report


def workspace_users(settings: Settings) -> set[str]:
    """The users a journal line may name: a folder under ``04_memory/working`` or ``04_memory/records``, the configured
    user, the knowledge admins."""
    ws = Workspace(settings.home)
    out = {settings.user, *settings.kb_admins}
    for folder in (ws.memory / "working", ws.memory_records_dir):
        if folder.is_dir():
            out |= {p.name for p in folder.iterdir() if p.is_dir() and not p.is_symlink() and not p.name.startswith(".")}
    return out


# The kinds that decide about one user's memory: only that user makes them.
OWN = ("fact.forget", "fact.resolve", "memory.delete")


def refusal(settings: Settings, ev: dict, users: set[str]) -> str | None:
    """Why the decision ``ev`` may not be applied here whoever wrote it (None: it may); see the module."""
    damaged = journal.kind_problem(ev)
    if damaged is not None:
        return f"damaged: {damaged}"
    if ev["user"] not in users:
        return (f"{ev['user']!r} is not a user of this workspace: no folder of theirs in agent-sync/04_memory/working or records; "
                "applied once there is one")
    who = ev.get("who")
    if ev["kind"] in OWN and who is not None and who != ev["user"]:
        return f"a decision about {ev['user']}'s memory said to be made by {who!r}: only {ev['user']} decides it"
    if ev["kind"] == "kb.decide" and who not in users:
        return f"{who!r}, said to have decided it, is not a user of this workspace"
    return None


def _label(ev: dict) -> str:
    if ev["kind"] == "memory.delete":
        return f"memory {str(ev.get('name_hash') or '')[:12]} ({len(ev.get('keys') or [])} line(s))"
    if ev["kind"] == "kb.decide":
        return f"{ev.get('decision')} {ev.get('doc_id')}"
    if ev["kind"] == "fact.resolve":
        return f"{'accept' if ev.get('accept') else 'reject'} {ev.get('subject')}: {ev.get('existing_object')} -> {ev.get('candidate_object')}"
    return f"{ev.get('subject')} · {ev.get('predicate')} · {ev.get('object')}"


def _forget(settings: Settings, ev: dict, facts: FactStore) -> str | None:
    ids = facts.forget_targets(ev["user"], ev["subject_key"], ev["predicate"], ev["object_key"], list(ev.get("sources") or []))
    if not ids:
        return None
    for fid in ids:
        forget_fact(settings, ev["user"], fid, ev.get("reason") or "", replayed=True, store=facts)
    return f"forgot fact {', '.join(f'#{i}' for i in ids)}"


def _resolve(settings: Settings, ev: dict, facts: FactStore) -> str | None:
    c = facts.find_conflict(ev["user"], {k: ev.get(k) for k in CONFLICT_KEY})
    if c is None:
        return None
    out = resolve_conflict(settings, ev["user"], c["id"], accept=bool(ev.get("accept")), replayed=True, store=facts)
    return f"conflict #{out['id']} {out['status']}"


def _decide(settings: Settings, ev: dict, facts: FactStore) -> str | None:  # noqa: ARG001 - decide applies the facts itself
    store = open_kb(settings)
    try:
        doc = store.find(ev["doc_id"])
    finally:
        store.close()
    if doc is None:
        return None
    if doc["owner"] != ev["user"]:
        raise NotAllowed(f"the line names {ev['user']!r} as the document's owner; it is {doc['owner']!r}'s")
    if doc["status"] == "ready" and ev["decision"] == "approve":
        # approved here already, its decision not held by the fact store: a rewind took its facts back (or another
        # machine approved it too): they apply again, at this point of the history
        return registry.facts_again(settings, doc, ev.get("content_hash"))
    if doc["status"] != "pending":
        return f"already {doc['status']}"
    decide(settings, ev["doc_id"], ev["decision"], ev["who"], ev.get("note"), replayed=True)  # who may decide: checked there
    return "approved" if ev["decision"] == "approve" else "rejected"


def _memory_delete(settings: Settings, ev: dict, facts: FactStore) -> str:  # noqa: ARG001 - no fact changes
    """A memory record deleted (here before a restore, or on another machine): the lines it was made from never make
    it again here. The record's file itself is synced (gone from agent-sync); nothing here deletes a file."""
    keys = list(ev["keys"])
    if keys:
        store = ProposalStore(Workspace(settings.home).memory_proposals_db)
        try:
            store.remember_deleted(ev["user"], keys, None, name_hash=ev.get("name_hash"))
        finally:
            store.close()
    return f"{len(keys)} line(s) of a deleted memory never make it again"


# Each kind's apply function: (settings, the journal line, the replay's fact store) -> what it did, or None: waits.
APPLY = {"fact.forget": _forget, "fact.resolve": _resolve, "kb.decide": _decide, "memory.delete": _memory_delete}


def take_in(settings: Settings) -> dict:
    """What another machine synced that this machine's derived stores lack, brought in (the nightly run's first and
    last stage): knowledge documents refined there (registered from their cards, pending), then the decisions made
    there whose point in the history this machine has reached; a document whose card says it was decided and that no
    journal line decides (decided before the journal existed) is settled as its card says."""
    regs = registry.register_documents(settings)
    read = journal.read(Workspace(settings.home).journal_dir)
    report = replay(settings, reached=True, read=read)
    journaled = {str(e.get("doc_id")) for e in read[0] if e.get("kind") == "kb.decide"}
    settled = registry.settle_from_cards(settings, {d: st for d, st in regs["card_status"].items() if d not in journaled})
    return {"documents": regs["registered"], "settled_from_cards": settled, **report.to_dict()}

