"""The knowledge review: publishing knowledge documents (pending -> ready, or rejected, kept and marked) and the
whole review a person applies (documents decided, fact conflicts settled through ``services.decisions.resolve_conflict``,
the one function ``agentos facts resolve`` calls too). A pending document's fact candidates are staged with it (refine
writes no fact): approving applies them to the owner's facts (contradictions become conflicts for review), rejecting
drops them; that is why deciding a document lives here, with refine, and not in ``services``.

System documents are approved by an admin (``kb_admins`` in the settings), personal documents by their
owner. Only ``ready`` documents are ever retrieved (``visible``); what a person is shown of the others
(``pending``, ``show``, and what ``decide`` admits exists) is the team's system documents and their own personal
ones (``may_see``): another user's personal document is an unknown id. The same functions serve the CLI
(``agentos kb approve|reject``) and the ``review`` flow a person runs from the
Prefect UI (``apply_review``: a whole decision, every refused part reported with its reason, the rest applied).
"""

from __future__ import annotations

import sqlite3
from dataclasses import asdict, dataclass, field

from agentos_mem.kernel.settings import Settings
from agentos_mem.knowledge.refine import apply_fact_candidates, kb_paths, open_kb, retract_unreviewed, written_unreviewed
from agentos_mem.kernel.workspace import Workspace
from agentos_mem.services.decisions import resolve_conflict
from agentos_mem.storage import journal
from agentos_mem.storage.facts import open_facts
from agentos_mem.storage.kb_cards import restamp
from agentos_mem.storage.kb_store import DocumentNotFound


class NotAllowed(PermissionError):
    """The person deciding may not decide this document."""


def may_decide(settings: Settings, doc: dict, who: str) -> str | None:
    """Why ``who`` may not approve or reject ``doc`` (None: they may)."""
    if doc["scope"] == "system" and who not in settings.kb_admins:
        return f"{doc['id']} is a system document: only an admin ({', '.join(settings.kb_admins) or 'none configured'}) decides it"
    if doc["scope"] == "personal" and who != doc["owner"]:
        return f"{doc['id']} is {doc['owner']}'s personal document: only its owner decides it"
    return None


def item(doc: dict) -> dict:
    """The listing form of a document (``agentos kb pending --json``; ``id`` is what approve/reject take).
    ``fact_candidates``: the facts staged with it, applied only if it is approved; ``conflicts``: how many of them
    contradict a fact memory holds (pending: as of refining; decided: what approval recorded)."""
    return {"id": doc["id"], "title": doc["title"], "category": doc["category"], "scope": doc["scope"], "owner": doc["owner"],
            "status": doc["status"], "version": doc["version"], "reliability": doc["reliability"], "nature": doc["nature"],
            "valid_until": doc["valid_until"], "summary": doc["summary"], "source": doc["source_url"] or doc["source"],
            "version_rule": (doc["review"] or {}).get("version_rule"), "conflicts": ((doc["review"] or {}).get("consistency") or {}).get("conflicts", 0),
            "fact_candidates": len(doc.get("fact_candidates") or []), "path": doc["path"]}


def may_see(doc: dict, viewer: str | None) -> bool:
    """Whether ``viewer`` may see ``doc`` in any state (pending, ready, rejected): a system document is the
    team's (everyone sees it, even under review; admins decide it), a personal one only its owner's: another
    user never learns that it exists, not even its title. ``None``: no viewer, the system's own callers."""
    return viewer is None or doc["scope"] == "system" or doc["owner"] == viewer


def _unknown(doc_id: str) -> DocumentNotFound:
    """What a document the viewer may not see looks like: exactly an unknown id (``KBStore.get``'s error)."""
    return DocumentNotFound(f"no knowledge document with id {doc_id!r}")


def pending(settings: Settings, who: str | None = None, *, viewer: str | None = None) -> list[dict]:
    """Pending documents ``viewer`` may see (system ones and their own personal ones); with ``who``, only those
    that person may decide (``who`` is then the viewer unless one is given). Without either: every pending
    document (the system's own callers only; every transport passes the caller)."""
    viewer = viewer if viewer is not None else who
    store = open_kb(settings)
    try:
        docs = store.documents(status="pending")
    finally:
        store.close()
    return [item(d) for d in docs if may_see(d, viewer) and (who is None or may_decide(settings, d, who) is None)]


def show(settings: Settings, doc_id: str, viewer: str | None = None) -> dict:
    """One document with its review, in any state; one ``viewer`` may not see is an unknown id (DocumentNotFound)."""
    store = open_kb(settings)
    try:
        doc = store.get(doc_id)
    finally:
        store.close()
    if not may_see(doc, viewer):
        raise _unknown(doc_id)
    return doc


def decide(settings: Settings, doc_id: str, decision: str, who: str, note: str | None = None, *, replayed: bool = False,
           checked: bool = True) -> dict:
    """Approve (-> ready) or reject (-> rejected) a pending document; the card's frontmatter follows, and the decision
    goes to this machine's journal in agent-sync (``storage.journal``) so a restore, or another machine, replays it.
    ``replayed``: this is that replay (``restore.replay``): the synced card already says what was decided, so it is
    not rewritten (a rewrite on every machine would make the sync tool see edits that conflict). ``checked=False``: a
    decision a person made elsewhere and that only the card records (who made it is not known here): not re-checked.
    Approving (not replayed) also embeds the document's sections: ``vectors`` in the result (``embed_approved``)."""
    if decision not in ("approve", "reject"):
        raise ValueError(f"a decision is approve or reject, not {decision!r}")
    store = open_kb(settings)
    try:
        doc = store.get(doc_id)
        if checked and not may_see(doc, who):  # another user's personal document: as if there were none
            raise _unknown(doc_id)
        if doc["status"] != "pending":
            raise ValueError(f"{doc_id} is {doc['status']}, not pending: only pending documents are decided")
        why = may_decide(settings, doc, who) if checked else None
        if why:
            raise NotAllowed(why)

        def apply() -> None:
            _settle_facts(settings, store, doc, decision)
            store.set_status(doc_id, "ready" if decision == "approve" else "rejected", by=who, note=note)

        if replayed:
            apply()
        else:  # journaled first: a journal that cannot be written leaves the document pending (JournalUnwritable)
            _journal(settings, doc["owner"], "kb.decide", {"doc_id": doc_id, "decision": decision, "who": who, "note": note,
                                                             "content_hash": doc["content_hash"]}, apply)
        doc = store.get(doc_id)
    finally:
        store.close()
    if not replayed:
        path = kb_paths(settings)["knowledge"] / doc["path"]
        if path.exists():
            restamp(path, doc)
    out = item(doc)
    if decision == "approve" and not replayed:  # a restore embeds every published section after its replay
        out["vectors"] = embed_approved(settings, doc_id)
    return out


def embed_approved(settings: Settings, doc_id: str) -> dict:
    """Embed an approved document's sections now, with progress (``index.vectors.embed_document``), so that no search
    ever embeds them: a search embedding what it lacked took minutes after approving a 3,000-heading document, in every
    new process (issue 42). {sections, embedded} or, when it cannot be done now, {sections: None, error}: the approval
    stands (it is journaled and applied), the search ranks the sections by their keywords and says so, and the next
    ``agentos rebuild`` or nightly embeds them."""
    # lazy: index.vectors reaches the embedders and the ANN index: only a decision that approves pays for them
    from agentos_mem.embedders import EmbedderError
    from agentos_mem.index.vectors import embed_document

    try:
        done = embed_document(settings, doc_id)
    except (EmbedderError, sqlite3.Error, OSError) as e:  # the model or its endpoint, the cache, the disk: said, not raised
        return {"sections": None, "embedded": 0, "error": f"{type(e).__name__}: {e}"}
    return {"sections": done["sections"], "embedded": done["embedded"], "sentences_embedded": done.get("sentences_embedded", 0)}


def _journal(settings: Settings, user: str, kind: str, fields: dict, apply) -> None:
    facts = open_facts(settings)
    try:
        journal.record(facts, Workspace(settings.home).journal_dir, settings.hostname, kind, user, fields, apply=apply)
    finally:
        facts.close()


def _settle_facts(settings: Settings, store, doc: dict, decision: str) -> None:
    """The document's staged fact candidates follow the decision: approving applies them to the owner's facts
    (``apply_fact_candidates``: identical reinforces, new detail is added, a contradiction becomes a conflict for
    review), rejecting drops them; either way the stage is emptied and the review records what happened. Runs
    before the status changes, so a failure leaves the document pending (approving again applies nothing twice).
    A document an earlier version refined (its facts written then, before review): rejecting takes them back
    (``retract_unreviewed``), approving keeps them."""
    staged = doc.get("fact_candidates") or []
    review = doc["review"] or {}
    c = dict(review.get("consistency") or {})
    if written_unreviewed(doc):  # refined by an earlier version, its facts written then: approving keeps them
        c["legacy_settled"] = (retract_unreviewed(settings, doc, f"knowledge document {doc['id']} was rejected")
                               if decision == "reject" else {"kept": len(c.get("fact_ids") or [])})
    elif not staged:
        return
    if staged and decision == "approve":
        done = apply_fact_candidates(settings, doc)
        c.update(applied=done["applied"], identical=done["identical"], added=done["added"], conflicts=done["conflicts"],
                 fact_ids=done["fact_ids"])
    elif staged:
        c["dropped"] = len(staged)
    review["consistency"] = c
    store.put({**doc, "review": review, "fact_candidates": []})


def visible(settings: Settings, user: str, *, include_expired: bool = False) -> list[dict]:
    """What ``user`` may retrieve: ready, system or their own, not past valid_until."""
    store = open_kb(settings)
    try:
        return [item(d) for d in store.visible(user, include_expired=include_expired)]
    finally:
        store.close()


def open_conflicts(settings: Settings, user: str) -> list[dict]:
    """The user's open fact conflicts (what ``services.decisions.resolve_conflict`` takes the ids of)."""
    facts = open_facts(settings)
    try:
        return facts.conflicts(user)
    finally:
        facts.close()


@dataclass
class ReviewOutcome:
    """What applying one review decision did: the ids applied, and each refused part with its reason."""

    reviewer: str
    approved: list[str] = field(default_factory=list)
    rejected: list[str] = field(default_factory=list)
    conflicts_resolved: list[int] = field(default_factory=list)
    refused: list[str] = field(default_factory=list)

    def to_dict(self) -> dict:
        return asdict(self)

    def artifact_markdown(self) -> str:
        md = [f"# Review applied by {self.reviewer}", "", f"- approved: {', '.join(self.approved) or '(none)'}",
              f"- rejected: {', '.join(self.rejected) or '(none)'}",
              f"- conflicts resolved: {', '.join(map(str, self.conflicts_resolved)) or '(none)'}"]
        if self.refused:
            md += ["", "## Refused", *[f"- {r}" for r in self.refused]]
        return "\n".join(md) + "\n"


def apply_review(settings: Settings, decision: dict) -> ReviewOutcome:
    """Apply a review decision ({reviewer, approve: [doc ids], reject: [doc ids], accept_conflicts: [ids],
    reject_conflicts: [ids], note}) with the same rules as the CLI; every refused part is reported with its
    reason, the rest applied. The reviewer's own fact conflicts are the ones settled."""
    out = ReviewOutcome(reviewer=decision["reviewer"])
    for key, done in (("approve", out.approved), ("reject", out.rejected)):
        for doc_id in decision.get(key) or []:
            try:
                decide(settings, doc_id, key, out.reviewer, decision.get("note") or None)
                done.append(doc_id)
            except (PermissionError, ValueError, KeyError) as e:
                out.refused.append(f"{key} {doc_id}: {e}")
    for key, accept in (("accept_conflicts", True), ("reject_conflicts", False)):
        for cid in decision.get(key) or []:
            try:
                resolve_conflict(settings, settings.user, cid, accept=accept)
                out.conflicts_resolved.append(int(cid))
            except (ValueError, KeyError) as e:
                out.refused.append(f"{'accept' if accept else 'reject'} conflict {cid}: {e}")
    return out


def waiting_markdown(docs: list[dict], conflicts: list[dict]) -> str:
    """What waits for a decision, as the review flow shows it (artifact and form description)."""
    md = ["# Knowledge review", "", f"{len(docs)} pending document(s), {len(conflicts)} open fact conflict(s).", ""]
    if docs:
        md += ["| id | title | category | scope | owner | reliability | rule | facts (applied on approval) | conflicts |",
               "|---|---|---|---|---|---|---|---|---|"]
        md += [f"| `{d['id']}` | {d['title']} | {d['category']} | {d['scope']} | {d['owner']} | {d['reliability']} | "
               f"{d['version_rule']} | {d.get('fact_candidates', 0)} fact candidates | {d['conflicts']} |" for d in docs]
    if conflicts:
        md += ["", "| conflict | subject | memory holds | contested | source |", "|---|---|---|---|---|"]
        md += [f"| {c['id']} | {c['subject']} | {c['existing_object']} | {c['candidate_object']} | {c['source_file']} |" for c in conflicts]
    md += ["", "Resume this run with the ids to approve or reject."]
    return "\n".join(md)
