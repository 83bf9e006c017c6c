"""The knowledge registry (``kb.db``, derived, in agent-local) read back from the documents in ``03_knowledge``.

A refined document is a Markdown card whose frontmatter mirrors its registry row (``storage.kb_cards``), so the
row is made again from the card: the outline parsed from the body, the facts it states staged again for review.
Every card is registered ``pending``: the replay then decides it as the person did, applying its facts at that
point of the history; a card decided before the journal existed is settled from its frontmatter after the replay
(``settle_from_cards``).
"""

from __future__ import annotations

import hashlib
from datetime import date
from pathlib import Path

import frontmatter

from agentos_mem.kernel import clock
from agentos_mem.kernel.files import UnsafePath, guard
from agentos_mem.kernel.settings import Settings
from agentos_mem.kernel.text import normalize_key
from agentos_mem.knowledge.decisions import decide
from agentos_mem.knowledge.refine import apply_fact_candidates, consistency, kb_paths, open_kb, outline_of
from agentos_mem.storage.kb_cards import CARD_KEYS, read_body

# Folders of 03_knowledge that hold no published or pending document: the inbox (refine's input), the archive of
# earlier versions (90_archive/versions: a document filed as outdated, 90_archive itself, is one), the registry's own
# folder.
NOT_DOCUMENTS = ("00_stream", "90_archive/versions", "99_system")


def not_a_document(rel: Path) -> bool:
    """Whether a path under 03_knowledge lies in a folder that holds no document (``NOT_DOCUMENTS``)."""
    return any(rel.parts[:len(Path(f).parts)] == Path(f).parts for f in NOT_DOCUMENTS)
REQUIRED = ("id", "title", "category", "scope", "owner", "status")


def cards(settings: Settings, known: set[str] = frozenset()) -> tuple[list[tuple[Path, dict, str]], list[str]]:
    """Every document card (path, frontmatter, body) and the files that look like none, with why; ``known``: paths
    (relative to 03_knowledge) of registered documents, not read again (the nightly take-in reads only new files)."""
    root = kb_paths(settings)["knowledge"]
    out, problems = [], []
    below = guard(root)
    try:
        paths, refused = below.tree(root, (".md",))
    except UnsafePath as e:  # 03_knowledge itself is a link: no document is registered from it
        return [], [str(e)]
    for e in refused:  # a document or a folder that is a link (or a FIFO): named, never read
        rel = e.path.relative_to(root)
        if not not_a_document(rel):
            problems.append(f"03_knowledge/{rel}: {e.reason}; not read (only regular files, never through a link)")
    for path in paths:
        rel = path.relative_to(root)
        if not_a_document(rel) or str(rel) in known:
            continue
        try:
            meta, body = frontmatter.parse(below.read_text(path))
        except Exception as e:  # noqa: BLE001 - a card that does not parse is reported, the others registered
            problems.append(f"03_knowledge/{rel}: unreadable ({type(e).__name__}: {str(e)[:120]})")
            continue
        missing = [k for k in REQUIRED if not meta.get(k)]
        if missing:
            problems.append(f"03_knowledge/{rel}: not a refined document (no {', '.join(missing)} in its frontmatter); not registered")
            continue
        if meta["status"] not in ("pending", "ready", "rejected"):
            problems.append(f"03_knowledge/{rel}: unknown status {meta['status']!r}; not registered")
            continue
        out.append((path, dict(meta), body.strip("\n")))
    return out, problems


def register_documents(settings: Settings) -> dict:
    """Register every card not in the registry yet, pending. Returns {registered: [ids], card_status: {id: what its card
    says}, problems: [...]}."""
    root = kb_paths(settings)["knowledge"]
    registered = []
    store = open_kb(settings)
    try:
        found, problems = cards(settings, {d["path"] for d in store.documents()})
        for path, meta, body in found:
            doc_id = str(meta["id"])
            if store.find(doc_id) is not None:
                continue
            rel_path = str(path.relative_to(root))
            doc = {k: meta.get(k) for k in CARD_KEYS}
            # pending, whatever the card says: the replay (or ``settle_from_cards``) decides it as the person did
            doc.update(id=doc_id, path=rel_path, status="pending",
                       related=list(meta.get("related") or []), confidence=float(meta.get("confidence") or 0.0),
                       reliability=float(meta.get("reliability") or 0.0), version=int(meta.get("version") or 1),
                       content_hash=hashlib.sha256(normalize_key(body).encode("utf-8")).hexdigest(),
                       summary_hash=None, summary_error=None, source_type=None, inbox_file=None, inbox_hash=None,
                       created=str(meta.get("created") or clock.stamp(settings.timezone)))
            for k in ("valid_until", "created", "updated"):  # YAML reads an unquoted date as a date
                if doc.get(k) is not None:
                    doc[k] = str(doc[k])
            doc["summary_hash"] = doc["content_hash"] if doc.get("summary") else None
            try:
                doc["outline"] = outline_of(body)
            except Exception:  # noqa: BLE001 - as refine: a structure the parser cannot read is one section
                doc["outline"] = []
            review: dict = {"version_rule": "restored", "restored": "registered from its card by agentos restore"}
            # what approval would apply, staged as refine stages it
            day = date.fromisoformat(doc["created"][:10])
            review["consistency"], doc["fact_candidates"] = consistency(settings, doc["owner"], doc_id, rel_path, body,
                                                                        doc["reliability"], day)
            doc["review"] = review
            store.put(doc)
            registered.append((doc_id, meta["status"]))
    finally:
        store.close()
    return {"registered": [d for d, _ in registered], "card_status": dict(registered), "problems": problems}


def settle_from_cards(settings: Settings, card_status: dict[str, str]) -> list[str]:
    """Documents still pending after the replay whose card says they were decided (before the journal existed):
    decided as the card says, their facts applied on approval, the card left as it is. Returns the ids settled."""
    out = []
    store = open_kb(settings)
    try:
        still = {d["id"]: d for d in store.documents(status="pending")}
    finally:
        store.close()
    for doc_id, status in sorted(card_status.items()):
        if status != "pending" and doc_id in still:
            decide(settings, doc_id, "approve" if status == "ready" else "reject", still[doc_id]["owner"], "restored from its card",
                   replayed=True, checked=False)
            out.append(doc_id)
    return out


def facts_again(settings: Settings, doc: dict, content_hash: str | None) -> str:
    """An approved document's facts staged again from its card (as registering it stages them) and applied: what a
    rewind of its owner's facts (``storage.facts.FactStore.rewind``) took back, put back at the point of the history
    the approval was made at. Keyed by the card's bytes and lines, so facts already held are not applied twice. Only
    the content that was approved (``content_hash``, the journal line's): a card changed since is a later decision's."""
    path = kb_paths(settings)["knowledge"] / doc["path"]
    if not path.is_file():
        return f"already {doc['status']}; its card is gone, no facts applied"
    body = read_body(path).strip("\n")
    if content_hash and hashlib.sha256(normalize_key(body).encode("utf-8")).hexdigest() != content_hash:
        return f"already {doc['status']}; its card changed since, no facts applied"
    day = date.fromisoformat(str(doc.get("created") or clock.stamp(settings.timezone))[:10])
    _, staged = consistency(settings, doc["owner"], doc["id"], doc["path"], body, doc["reliability"], day)
    done = apply_fact_candidates(settings, {**doc, "fact_candidates": staged})
    return f"already {doc['status']}; {done['applied']} fact(s) of it applied ({done['added']} new)"
