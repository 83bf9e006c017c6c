"""Publishing: pending -> ready (or rejected, kept and marked), by the person allowed to decide.

System documents are approved by an admin (``kb_admins`` in the settings), personal documents by their
owner. Only ``ready`` documents are ever retrieved (``visible``). The same functions serve the CLI
(``agentos kb ...``) and the ``review`` flow a person runs from the Prefect UI.
"""

from __future__ import annotations

from kernel.settings import Settings
from knowledge.refine import kb_paths, open_kb
from storage.kb_cards import restamp


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
    """The listing form of a document (``agentos kb pending --json``; ``id`` is what approve/reject take)."""
    return {"id": doc["id"], "title": doc["title"], "category": doc["category"], "scope": doc["scope"], "owner": doc["owner"],
            "status": doc["status"], "version": doc["version"], "reliability": doc["reliability"], "nature": doc["nature"],
            "valid_until": doc["valid_until"], "summary": doc["summary"], "source": doc["source_url"] or doc["source"],
            "version_rule": (doc["review"] or {}).get("version_rule"), "conflicts": ((doc["review"] or {}).get("consistency") or {}).get("conflicts", 0),
            "path": doc["path"]}


def pending(settings: Settings, who: str | None = None) -> list[dict]:
    """Pending documents; with ``who``, only those that person may decide."""
    store = open_kb(settings)
    try:
        docs = store.documents(status="pending")
    finally:
        store.close()
    return [item(d) for d in docs if who is None or may_decide(settings, d, who) is None]


def show(settings: Settings, doc_id: str) -> dict:
    store = open_kb(settings)
    try:
        return store.get(doc_id)
    finally:
        store.close()


def decide(settings: Settings, doc_id: str, decision: str, who: str, note: str | None = None) -> dict:
    """Approve (-> ready) or reject (-> rejected) a pending document; the card's frontmatter follows."""
    if decision not in ("approve", "reject"):
        raise ValueError(f"a decision is approve or reject, not {decision!r}")
    store = open_kb(settings)
    try:
        doc = store.get(doc_id)
        if doc["status"] != "pending":
            raise ValueError(f"{doc_id} is {doc['status']}, not pending: only pending documents are decided")
        why = may_decide(settings, doc, who)
        if why:
            raise NotAllowed(why)
        store.set_status(doc_id, "ready" if decision == "approve" else "rejected", by=who, note=note)
        doc = store.get(doc_id)
    finally:
        store.close()
    path = kb_paths(settings)["knowledge"] / doc["path"]
    if path.exists():
        restamp(path, doc)
    return item(doc)


def visible(settings: Settings, user: str, *, include_expired: bool = False) -> list[dict]:
    """What ``user`` may retrieve: ready, system or their own, not past valid_until."""
    store = open_kb(settings)
    try:
        return [item(d) for d in store.visible(user, include_expired=include_expired)]
    finally:
        store.close()
