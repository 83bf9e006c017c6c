"""``inbox-refine``: inbox items become reviewed, classified, versioned knowledge cards, all ``pending``.

Per item, in order: read (bad input -> quarantine, the run goes on) -> classify into the taxonomy ->
ingest review (source reliability; consistency with the owner's L2 facts, read only: the document's fact
candidates are staged with it and written only when a person approves it, where identical raises the fact's
confidence slightly, new detail is added as a new fact entry, a contradiction becomes a conflict for review,
nothing is overwritten; rejecting drops them; time validity) -> version rule against earlier documents (duplicate, hard update,
soft upgrade, opinion confirmed) -> structure (outline with anchors and line ranges; a summary that never
blocks) -> the card file, then its registry row (pending), then the log line in ``logs/kb_ingest.log``.

Inbox files are read, never moved or changed; each version of an item is taken once (by the sha256 of its
bytes), so a re-run changes nothing. The ``memory`` partition is user memory (memory.inbox).
"""

from __future__ import annotations

import hashlib
import json
import logging
from contextlib import nullcontext
from datetime import date
from pathlib import Path

import frontmatter

from agentos_mem.kernel import clock, progress
from agentos_mem.kernel.domain import Candidate, Turn
from agentos_mem.kernel.files import UnsafePath, atomic_write, guard
from agentos_mem.kernel.settings import Settings
from agentos_mem.safety.secrets import mask_text
from agentos_mem.kernel.text import normalize_key, sentences, slugify, truncate
from agentos_mem.vocabulary.subjects import subject_key
from agentos_mem.kernel.workspace import Workspace, kb_paths
from agentos_mem.knowledge.review import (
    changed_values,
    load_reliability,
    reliability,
    validity,
    version_rule,
)
from agentos_mem.digest.extract import extract_candidates
from agentos_mem.documents.outline import parse_outline
from agentos_mem.index.stages import make_settings_embedder, open_cache
from agentos_mem.retrieval.tokenize import default_tokenizer
from agentos_mem.knowledge.classify import classify
from agentos_mem.knowledge.report import RefineReport
from agentos_mem.knowledge.taxonomy import load_taxonomy
from agentos_mem.services.supersession import OPPOSITES, Supersession
from agentos_mem.storage.eventlog import append_lines, log_conflicts, record_quarantine
from agentos_mem.storage.facts import FactStore, facts_for, open_facts
from agentos_mem.storage.kb_cards import read_body, render_card, restamp
from agentos_mem.storage.kb_store import KBStore, title_key

log = logging.getLogger(__name__)

PARTITIONS = ("knowledge/clipping", "knowledge/feed", "tools", "personal")
MAX_ITEM_BYTES = 2 * 1024 * 1024
FACT_MIN_RELIABILITY = 0.6  # below this a document may only raise conflicts, never add or reinforce facts
SUMMARY_CHARS = 200


class ItemError(ValueError):
    """An inbox item that cannot be taken as it is (the message says why and what to do)."""


def open_kb(settings: Settings) -> KBStore:
    return KBStore(kb_paths(settings)["db"], timezone=settings.timezone)


# -- reading an inbox item ------------------------------------------------------------------------------
def inbox_items(settings: Settings) -> list[tuple[str, Path]]:
    """Every item of the inbox's partitions: its regular files, and what is refused there (a link, a FIFO, a
    partition folder that is itself a link), which ``read_item`` names and the run quarantines; never a walk
    through a link (kernel.files.Below)."""
    root = kb_paths(settings)["inbox"]
    below = guard(root)
    out = []
    for part in PARTITIONS:
        try:
            files, refused = below.tree(root / part)
        except UnsafePath as e:
            files, refused = [], [e]
        out += [(part, p) for p in sorted([*files, *(e.path for e in refused)]) if not p.name.startswith(".")]
    return out


def read_item(path: Path, data: bytes) -> tuple[dict, str, list[str]]:
    """(frontmatter, body, warnings) of an inbox item, or ItemError naming what is wrong."""
    if path.is_symlink():
        raise ItemError("a symbolic link in the inbox is not followed: copy the file itself")
    try:
        guard(path).check(path)
    except UnsafePath as e:  # a FIFO, a device, a socket; or a link further up
        raise ItemError(f"{e.path} {e.reason}: not read (only regular files in the inbox are refined)") from None
    if path.suffix.lower() not in (".md", ".markdown", ".txt"):
        raise ItemError(f"{path.suffix or 'no extension'} is not supported: convert it to Markdown or UTF-8 text first")
    if len(data) > MAX_ITEM_BYTES:
        raise ItemError(f"larger than {MAX_ITEM_BYTES // (1024 * 1024)} MB: split it or raise the limit")
    if b"\x00" in data[:65536]:
        raise ItemError("binary content in a text file: convert it to Markdown or UTF-8 text first")
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        raise ItemError(f"not valid UTF-8 (byte {e.start}): re-save it as UTF-8") from None
    warnings = []
    try:
        meta, body = frontmatter.parse(text)
        if not isinstance(meta, dict):
            raise ValueError("frontmatter is not a mapping")
    except Exception as e:  # noqa: BLE001 - broken YAML: quarantined, so nobody publishes an item with lost provenance
        raise ItemError(f"frontmatter unreadable ({type(e).__name__}): fix the YAML between the '---' lines") from None
    if not body.strip():
        raise ItemError("no text after the frontmatter")
    return meta, body.strip("\n"), warnings


def _body_offset(data: bytes, body: str) -> int:
    """How many lines of the item come before its body (the frontmatter), for markers that name the item's line."""
    text = data.decode("utf-8-sig", errors="replace")
    first = body.split("\n", 1)[0]
    at = text.find(first) if first else -1
    return text.count("\n", 0, at) if at > 0 else 0


def _title(meta: dict, body: str, path: Path) -> str:
    if meta.get("title"):
        return truncate(mask_text(str(meta["title"])), 200)
    for line in body.splitlines():
        s = line.strip()
        if s.startswith("#"):
            return truncate(s.lstrip("#").strip(), 200) or path.stem
    return path.stem


# -- the stages ---------------------------------------------------------------------------------------------
def classify_item(settings: Settings, title: str, body: str, meta: dict, kit: dict) -> dict:
    return classify(title, body, taxonomy=kit["taxonomy"], embedder=kit.get("embedder"), cache=kit.get("cache"),
                    tokenizer=kit.get("tokenizer"), client=kit.get("client"), meta=meta)


def _statements(doc_id: str, rel_path: str, body: str, rel: float, day: date) -> list[Candidate]:
    """The facts the document states (the digest's rule extractor over its prose lines), as inferences weighted by
    how reliable the source is; the card (``rel_path``) is their source file, ``kb:{doc_id}`` their extractor."""
    turns, lines = [], body.splitlines()
    for i, line in enumerate(lines, 1):
        if line.strip() and not line.lstrip().startswith(("#", "```", "|", ">")):
            turns.append(Turn(index=len(turns), role="other", speaker=doc_id, text=line.strip(), time=None,
                              source_file=rel_path, line_start=i, line_end=i))
    cands: list[Candidate] = extract_candidates(turns, day)
    for c in cands:  # a document's statement is an inference for memory, weighted by how reliable its source is
        c.explicitness, c.confidence, c.extractor = "inferred", round(min(0.95, rel + 0.2), 3), f"kb:{doc_id}"
    return cands


def _held(held: list[dict], aliases: dict, c: Candidate) -> tuple[str, dict | None]:
    """What the owner's current facts (``held``) say to a candidate, read only (Supersession.apply's rules with
    contradictions as conflicts): ``identical`` (would reinforce), ``conflict`` (a different value is held), ``new``,
    or ``skip`` (nothing to key it by)."""
    skey, okey = subject_key(c.subject, aliases), normalize_key(c.object)
    if not skey or not okey:
        return "skip", None
    rows = [r for r in held if r["subject_key"] == skey and r["status"] == "active"]
    if c.multi_valued:
        if any(r["predicate"] == c.predicate and r["object_key"] == okey for r in rows):
            return "identical", None

        opp = next((r for r in rows if r["predicate"] == OPPOSITES.get(c.predicate) and r["object_key"] == okey), None)
        return ("conflict", opp) if opp else ("new", None)
    old = next((r for r in reversed(rows) if r["predicate"] == c.predicate), None)
    if old is None:
        return "new", None
    return ("identical", old) if old["object_key"] == okey else ("conflict", old)


def _admissible(store, owner: str, cands: list[Candidate], rel: float) -> list[Candidate]:
    """A source below FACT_MIN_RELIABILITY may only raise conflicts: its other statements neither add nor reinforce."""
    if rel >= FACT_MIN_RELIABILITY:
        return list(cands)
    held = store.current(owner)
    return [c for c in cands if _held(held, store.aliases, c)[0] == "conflict"]


def consistency(settings: Settings, owner: str, doc_id: str, rel_path: str, body: str, rel: float, day: date,
                facts: FactStore | None = None) -> tuple[dict, list[dict]]:
    """Facts the document states, against the owner's L2 facts, read only: nothing unreviewed writes facts. ``facts``:
    the run's fact store (a refine opens one for all its items), None: one for this call.

    Returns (the review's consistency: what approval would do today, {statements, candidates, identical, added,
    conflicts, source_sha}; the fact candidates to stage with the pending document, as ``Candidate.to_dict()``).
    Approving the document applies them (``apply_fact_candidates``); rejecting drops them."""
    cands = _statements(doc_id, rel_path, body, rel, day)
    with facts_for(settings, facts) as store:
        staged, held = _admissible(store, owner, cands, rel), store.current(owner)
        seen = [_held(held, store.aliases, c)[0] for c in staged]
    return ({"statements": len(cands), "candidates": len(staged), "identical": seen.count("identical"), "added": seen.count("new"),
             "conflicts": seen.count("conflict"), "source_sha": hashlib.sha256(body.encode()).hexdigest()},
            [c.to_dict() for c in staged])


def apply_fact_candidates(settings: Settings, doc: dict) -> dict:
    """Apply an approved document's staged fact candidates to its owner's facts through ``Supersession.apply`` (the
    digest's write path) with the card as their source and contradictions as conflicts for review (nothing held is
    overwritten); the reliability rule is checked again against the facts as they are now. Idempotent: each
    observation is keyed by the document's bytes and line, so approving again after a failure applies nothing twice.
    Returns {applied, identical, added, conflicts, fact_ids}."""
    staged = [Candidate(**c) for c in doc.get("fact_candidates") or []]
    if not staged:
        return {"applied": 0, "identical": 0, "added": 0, "conflicts": 0, "fact_ids": []}
    now = clock.wall_iso(settings.timezone)
    for c in staged:  # memory learns it when a person approves it (never dated before it was refined)
        c.observed_at = max(c.observed_at, now)
    day = date.fromisoformat(max(c.observed_at for c in staged)[:10])
    sha = ((doc.get("review") or {}).get("consistency") or {}).get("source_sha") or doc["content_hash"]
    store = open_facts(settings)
    try:
        cands = _admissible(store, doc["owner"], staged, doc["reliability"])
        report = Supersession(store).apply(doc["owner"], day, cands, file_sha={c.source_file: sha for c in cands}, raw_refs={},
                                           contradictions="conflict")
    finally:
        store.close()
    log_conflicts(Workspace(settings.home).logs, report.conflict_lines)
    return {"applied": len(cands), "identical": report.reinforced, "added": report.added,
            "conflicts": report.conflicts, "fact_ids": [f for f in report.fact_ids if f]}


# -- documents refined before their facts waited for review ----------------------------------------------------
def written_unreviewed(doc: dict) -> bool:
    """A document refined by an earlier version, which wrote its facts when it refined it (its review lists their
    ids; staging records ``source_sha`` instead), and not settled since."""
    c = (doc.get("review") or {}).get("consistency") or {}
    return "fact_ids" in c and "source_sha" not in c and "legacy_settled" not in c


def retract_unreviewed(settings: Settings, doc: dict, why: str, facts: FactStore | None = None) -> dict:
    """Take back what refining ``doc`` wrote before review: its observations are retired through ``Supersession.apply``
    (``retire``), so a fact only it said is retracted (the version it superseded, if any, current again) and a
    conflict only it raised is withdrawn; a fact other evidence also says stays (a reinforcement's small confidence
    step is not undone). Its observations are found by recomputing their keys from the card (the same extractor,
    bytes and lines), and, for a first version (no earlier version shares its card), also as the card's evidence of
    the facts its review lists. Returns {retired, retracted}."""
    path = kb_paths(settings)["knowledge"] / doc["path"]
    body = read_body(path) if path.exists() else ""
    sha = hashlib.sha256(body.encode()).hexdigest()
    day = date.fromisoformat(str(doc.get("created") or clock.stamp(settings.timezone))[:10])
    keys = {c.key(doc["owner"], sha) for c in _statements(doc["id"], doc["path"], body, doc["reliability"], day)} if body else set()
    with facts_for(settings, facts) as store:
        if doc["version"] == 1:
            for fid in ((doc.get("review") or {}).get("consistency") or {}).get("fact_ids") or []:
                keys |= {e["candidate_key"] for e in store.evidence_of(fid)
                         if e["source_file"] == doc["path"] and e["user_id"] == doc["owner"] and not e.get("retracted_at")}
        report = Supersession(store).apply(doc["owner"], day, [], file_sha={}, raw_refs={}, retire=[(k, why) for k in sorted(keys)])
    return {"retired": len(keys), "retracted": report.retracted}


def settle_unreviewed(settings: Settings, store: KBStore, today: date, facts: FactStore | None = None) -> list[str]:
    """Once, for documents an earlier version refined (``written_unreviewed``): a pending one's facts are taken back
    and its statements staged for its review, as if refined now; a rejected one's are taken back; an approved one's
    stay. Returns the ids settled."""
    out = []
    for doc in store.documents():
        if doc["status"] == "ready" or not written_unreviewed(doc):
            continue
        done = retract_unreviewed(settings, doc, f"knowledge document {doc['id']} is {doc['status']}: its facts wait for approval",
                                  facts)
        review = doc["review"] or {}
        if doc["status"] == "pending":
            path = kb_paths(settings)["knowledge"] / doc["path"]
            body = read_body(path) if path.exists() else ""
            review["consistency"], doc["fact_candidates"] = consistency(settings, doc["owner"], doc["id"], doc["path"], body,
                                                                        doc["reliability"], today, facts)
        review["consistency"] = {**review.get("consistency", {}), "legacy_settled": done}
        doc["review"] = review
        store.put(doc)
        out.append(doc["id"])
        _log(kb_paths(settings)["log"], {"doc_id": doc["id"], "outcome": "facts taken back for review", **done})
    return out


def summarize(settings: Settings, title: str, body: str, client=None) -> str:
    """One or two sentences; with a chat model, its summary; raises on failure (the caller records it)."""
    body = mask_text(body)  # a card edited by hand since it was refined: its secrets reach neither the model nor the summary
    if client is not None:
        data = client.complete_json("Summarise the document in one or two sentences, in its own language. "
                                    'Return only JSON: {"summary": "..."}', f"# {title}\n\n{body[:6000]}")
        s = data.get("summary") if isinstance(data, dict) else None
        if not isinstance(s, str) or not s.strip():
            raise ValueError("model answer has no summary")
        return truncate(mask_text(s.strip()), SUMMARY_CHARS)
    import re

    prose = [line for line in body.splitlines() if line.strip() and not line.lstrip().startswith(("#", "```", "|", "-", "*", ">"))
             and not re.match(r"\s*\d+[.、)]\s", line)]  # list items are not the document's own summary
    text = "\n".join(prose)
    sents = sentences(text)
    if not sents:
        raise ValueError("no prose sentence to summarise")
    out = sents[0]
    if len(out) < 60 and len(sents) > 1:
        out += " " + sents[1]
    return truncate(out, SUMMARY_CHARS)


def outline_of(body: str) -> list[dict]:
    return parse_outline(body).to_dict()["sections"]


# -- one item -------------------------------------------------------------------------------------------------
def _doc_id(settings: Settings, store: KBStore, title: str, day: date, shelf: list[dict], owner: str) -> str:
    """``{hostname}_{YYYYMMDD}_{slug}``, made unique. Past a document on the item's own shelf it is numbered (-2, -3);
    past one the owner may not see it takes a suffix of the owner's own (a hash of owner and id), so the id says
    nothing of another user's document (a "-2" would say one exists with that title that day)."""
    slug = slugify(title, 40) or "doc"
    base = f"{settings.hostname}_{day.strftime('%Y%m%d')}_{slug}"
    mine = {d["id"] for d in shelf}
    if store.find(base) and base not in mine:
        own = hashlib.sha256("\0".join((owner, base)).encode("utf-8")).hexdigest()[:6]
        base = f"{base}-{own}"
    doc_id, n = base, 2
    while store.find(doc_id):
        doc_id, n = f"{base}-{n}", n + 1
    return doc_id


def _identity(shelf: list[dict], meta: dict, title: str) -> tuple[dict | None, str]:
    """The latest earlier document on the item's shelf (``KBStore.shelf``) that this item is (by source, else by
    title), and how it matched."""
    src = str(meta.get("source_url") or meta.get("link") or meta.get("source") or "") or None
    same_src = [d for d in shelf if src and (d["source_url"] == src or d["source"] == src)]
    if same_src:
        return max(same_src, key=lambda d: d["version"]), "source"
    key = title_key(title)
    same_title = [d for d in shelf if title_key(d["title"]) == key or title_key(_unversioned(d["title"])) == title_key(_unversioned(title))]
    if same_title:
        return max(same_title, key=lambda d: d["version"]), "title"
    return None, ""


def _unversioned(title: str) -> str:
    import re

    return re.sub(r"(?:\bv|版本\s*|version\s*)\d+(?:\.\d+)*", "", title, flags=re.I).strip(" -_·:：()（）")


def refine_item(settings: Settings, store: KBStore, part: str, path: Path, data: bytes, kit: dict, today: date, user: str,
                facts: FactStore | None = None) -> dict:
    paths = kb_paths(settings)
    meta, body, warnings = read_item(path, data)
    # Secrets never reach a card, its summary, the facts or the indexes (nor a chat model): masked here, the
    # marker naming the inbox item's line (the inbox keeps the item as it came).
    body = mask_text(body, f"inbox {part}/{path.name}", 1 + _body_offset(data, body))
    title = _title(meta, body, path)
    content_hash = hashlib.sha256(normalize_key(body).encode("utf-8")).hexdigest()
    scope = meta.get("scope") if meta.get("scope") in ("system", "personal") else ("personal" if part == "personal" else "system")
    owner = str(meta.get("owner") or user)
    rel = reliability(meta, kit["lists"])
    cls = classify_item(settings, title, body, meta, kit)
    category = cls["category"]
    val = validity(category, body, meta, today)
    # A document's identity (its content, source and title) is looked up among what the item's owner may see: the
    # system documents and their own personal ones. Another user's personal document is neither updated, nor hidden
    # behind a new version, nor named in a refusal or a "duplicate of" (issue 42: a clipping with the same source URL
    # as another user's approved document became that document's pending v2, readable by its new owner). A personal
    # item never takes a system document's place either: as its new version it would leave every other user's view.
    shelf = store.shelf(owner)
    same_content = [d for d in shelf if d["content_hash"] == content_hash]
    old, matched = _identity([d for d in shelf if scope == "system" or d["scope"] == "personal"], meta, title)
    rule = "new"
    if same_content:
        rule, old = "duplicate", same_content[0]
    elif old is not None:
        rule = version_rule(old, title, meta, content_hash, val.nature, rel["score"])
        if matched == "title" and rule == "hard_update":
            # Another document under a title already taken: not an update of it (that needs the same source).
            raise ItemError(f"duplicate title: {old['id']} is already titled {old['title']!r}; give this item another title, "
                            "or its version (v2) to add a new version, or the same source to update that document")
    if rule == "duplicate":
        return {"outcome": "duplicate", "doc_id": old["id"], "title": title}

    doc_id = old["id"] if rule in ("hard_update", "opinion_confirmed") else _doc_id(settings, store, title, today, shelf, owner)
    rel_path = f"{category}/{doc_id}.md"
    doc = {
        "id": doc_id, "path": rel_path, "title": title, "category": category, "scope": scope, "owner": owner, "status": "pending",
        "nature": val.nature, "confidence": rel["score"], "reliability": rel["score"], "source": str(meta.get("source") or path.name),
        "source_url": str(meta.get("source_url") or meta.get("link") or "") or (str(meta["source"]) if str(meta.get("source", "")).startswith("http") else None),
        "source_type": meta.get("source_type") or part, "valid_until": val.valid_until, "version": 1, "previous_version": None,
        "superseded_by": None, "related": [], "content_hash": content_hash, "inbox_file": f"{part}/{path.name}",
        "inbox_hash": hashlib.sha256(data).hexdigest(), "created": clock.stamp(settings.timezone),
    }
    if rule in ("hard_update", "opinion_confirmed"):
        doc.update(version=old["version"] + 1, related=old["related"], created=old["created"])
        old_body = read_body(paths["knowledge"] / old["path"]) if (paths["knowledge"] / old["path"]).exists() else ""
        archived = paths["archive"] / f"{old['id']}.v{old['version']}.md"
        atomic_write(archived, render_card({**old, "status": "superseded"}, old_body))
        doc["previous_version"] = json.dumps({"version": old["version"], "path": str(archived.relative_to(paths["knowledge"])),
                                              "values": changed_values(old_body, body)}, ensure_ascii=False)
        if rule == "opinion_confirmed":
            doc["nature"], doc["confidence"] = "fact", round(min(0.95, max(old["confidence"], rel["score"]) + 0.1), 2)
    elif rule == "soft_upgrade":
        doc.update(version=old["version"] + 1, related=[old["id"]])
    review = {"reliability": rel, "classification": {k: cls.get(k) for k in ("category", "confidence", "method", "why")},
              "validity": {"nature": doc["nature"], "valid_until": doc["valid_until"], "why": val.why}, "version_rule": rule,
              "warnings": warnings}
    # staged with the pending document (a new version restages): only a person's approval applies them
    review["consistency"], doc["fact_candidates"] = consistency(settings, owner, doc_id, rel_path, body, rel["score"], today, facts)
    doc["review"] = review
    try:
        doc["outline"] = outline_of(body)
    except Exception as e:  # noqa: BLE001 - a structure the parser cannot read still publishes as one section
        doc["outline"], review["warnings"] = [], [*warnings, f"outline: {type(e).__name__}: {e}"]
    try:
        doc["summary"], doc["summary_hash"], doc["summary_error"] = summarize(settings, title, body, kit.get("client")), content_hash, None
    except Exception as e:  # noqa: BLE001 - a failed summary never blocks: body and review stand, retried next run
        doc["summary"], doc["summary_hash"], doc["summary_error"] = None, None, f"{type(e).__name__}: {e}"
    atomic_write(paths["knowledge"] / rel_path, render_card(doc, body))
    if rule in ("hard_update", "opinion_confirmed") and old["path"] != rel_path:
        (paths["knowledge"] / old["path"]).unlink(missing_ok=True)  # the new card is written: the old path can go
    store.put(doc)
    if rule == "soft_upgrade":
        prev = store.get(old["id"])
        prev["related"] = sorted({*prev["related"], doc_id})
        store.put(prev)
        _restamp(paths["knowledge"], prev)
    return {"outcome": rule, "doc_id": doc_id, "title": title, "category": category, "reliability": rel["score"],
            "consistency": review["consistency"], "valid_until": doc["valid_until"], "summary_error": doc["summary_error"]}


def _restamp(root: Path, doc: dict) -> None:
    if (root / doc["path"]).exists():
        restamp(root / doc["path"], doc)


# -- the run --------------------------------------------------------------------------------------------------
def make_kit(settings: Settings) -> dict:
    """What every item needs, loaded once per run: taxonomy, source lists, tokenizer, embedder, chat model."""
    client = _chat(settings)
    return {"taxonomy": load_taxonomy(settings), "lists": load_reliability(kb_paths(settings)["reliability"]),
            "tokenizer": default_tokenizer(settings.home), "embedder": make_settings_embedder(settings), "cache": open_cache(settings),
            "client": client}


def _chat(settings: Settings):
    if not settings.llm_base_url:
        return None
    # lazy: kernel.llm pulls httpx: only when this runs
    from agentos_mem.kernel.llm import ChatClient

    return ChatClient.for_settings(settings)


def refine(settings: Settings, user: str | None = None, *, kit: dict | None = None, today: date | None = None) -> dict:
    """Refine every new inbox item; returns the run's ``RefineReport`` (knowledge/report.py) as a dict:
    {refined: [...], duplicates: [...], quarantined: [...], errors: [...], already, edited: [...], summaries_retried}."""
    user = user or settings.user
    today = today or clock.today(settings.timezone)
    report = RefineReport()
    items = inbox_items(settings)
    store = open_kb(settings)
    own_kit = kit is None  # made here: its cache connection is closed here too
    try:
        todo = []
        for part, path in items:
            below = guard(path)
            try:  # never through a link, never from a FIFO: what is refused is named by read_item and quarantined
                data = below.read_bytes(path) if below.is_file(path) else b""
            except OSError:
                data = b""
            sha = hashlib.sha256(data).hexdigest()
            if store.ingested(sha) and below.is_file(path):
                report.already += 1
            else:
                todo.append((part, path, data, sha))
        if todo and kit is None:
            kit = make_kit(settings)
        # the facts every item's review reads, opened once for the run (none when there is nothing to review)
        with facts_for(settings) if todo or store.documents() else nullcontext() as facts:
            refine_items(settings, store, todo, kit, today, user, facts, report)
            settle_unreviewed(settings, store, today, facts)  # a no-op once an earlier version's documents are settled
            report.edited = resync_edited(settings, store, today, facts)
        report.summaries_retried = retry_summaries(settings, store, kit["client"] if kit else _chat(settings))
    finally:
        store.close()
        if own_kit and kit is not None:
            kit["cache"].close()
    return report.to_dict()


def refine_items(settings: Settings, store: KBStore, todo: list, kit: dict, today: date, user: str, facts: FactStore | None,
                 report: RefineReport) -> None:
    """Each new inbox item refined into a pending document (``refine_item``), its outcome added to ``report``; an item
    that fails is quarantined or logged, and the rest go on."""
    paths, ws = kb_paths(settings), Workspace(settings.home)
    for part, path, data, sha in progress.track(todo, "refining"):
        rel = f"{part}/{path.name}"
        try:
            r = refine_item(settings, store, part, path, data, kit, today, user, facts)
        except ItemError as e:
            record_quarantine(ws.logs, [{"user": user, "file": rel, "line": None, "reason": str(e), "severity": "error",
                                         "sha256": sha, "path": str(path), "stage": "inbox-refine"}])
            report.quarantined.append(f"{rel}: {e}")
            _log(paths["log"], {"file": rel, "outcome": "quarantined", "reason": str(e)})
            continue
        except Exception as e:  # noqa: BLE001 - one item's failure is logged; the rest are refined
            log.warning("refine failed for %s: %s", rel, e)
            report.errors.append(f"{rel}: {type(e).__name__}: {e}")
            _log(paths["log"], {"file": rel, "outcome": "error", "reason": f"{type(e).__name__}: {e}"})
            continue
        store.mark_ingested(sha, rel, r["doc_id"], r["outcome"])
        report.add({"file": rel, **r})
        _log(paths["log"], {"file": rel, **r})


def resync_edited(settings: Settings, store: KBStore, today: date | None = None, facts: FactStore | None = None) -> list[str]:
    """Cards whose body was edited by hand since they were refined: the outline is parsed again, the old summary
    is invalidated (made again below), and the document goes back to pending for review."""
    root, out = kb_paths(settings)["knowledge"], []
    for doc in store.documents():
        path = root / doc["path"]
        if not path.exists():
            continue
        try:
            body = read_body(path)
        except (OSError, UnicodeDecodeError):
            continue
        new_hash = hashlib.sha256(normalize_key(body).encode("utf-8")).hexdigest()
        if new_hash == doc["content_hash"]:
            continue
        doc.update(content_hash=new_hash, summary=None, summary_hash=None, summary_error=None, status="pending",
                   decision_note=f"body edited by hand (was {doc['status']}); review again")
        # the edited body's statements are staged again (what approval applies), the old ones dropped
        review = doc["review"] or {}
        review["consistency"], doc["fact_candidates"] = consistency(settings, doc["owner"], doc["id"], doc["path"], body,
                                                                    doc["reliability"], today or clock.today(settings.timezone), facts)
        doc["review"] = review
        try:
            doc["outline"] = outline_of(body)
        except Exception:  # noqa: BLE001 - the old outline is wrong now: better none than a stale one
            doc["outline"] = []
        store.put(doc)
        _restamp(root, doc)
        out.append(doc["id"])
        _log(kb_paths(settings)["log"], {"doc_id": doc["id"], "outcome": "edited", "reason": "body changed on disk"})
    return out


def retry_summaries(settings: Settings, store: KBStore, client) -> int:
    """Documents whose summary failed or whose body changed since: summarise again (never blocking)."""
    n = 0
    for doc in store.documents():
        if doc["summary"] and doc["summary_hash"] == doc["content_hash"]:
            continue
        path = kb_paths(settings)["knowledge"] / doc["path"]
        if not path.exists():
            continue
        try:
            doc["summary"] = summarize(settings, doc["title"], read_body(path), client)
            doc["summary_hash"], doc["summary_error"] = doc["content_hash"], None
        except Exception as e:  # noqa: BLE001
            doc["summary_error"] = f"{type(e).__name__}: {e}"
            store.put(doc)
            continue
        store.put(doc)
        _restamp(kb_paths(settings)["knowledge"], doc)
        n += 1
    return n


def _log(path: Path, entry: dict) -> None:
    """One JSON line per item in logs/kb_ingest.log (the self-learning log of AgentOS 3.3 step 4)."""
    append_lines(path, [json.dumps({"at": clock.stamp(), **entry}, ensure_ascii=False, default=str)])
