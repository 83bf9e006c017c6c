"""Published knowledge documents as the read path and the write path both see them: a card's reviewed body
(read only while it still hashes to the registry's ``content_hash``), its stored outline, and each section
as a search unit whose ``match_text`` is what is ranked and embedded. The index pipeline embeds the units'
texts ahead of time (``index/vectors.py``); the read path ranks them and writes nothing."""

from __future__ import annotations

import hashlib
import json
import os
import threading
from dataclasses import dataclass
from pathlib import Path

from agentos_mem.documents.outline import PREAMBLE_ANCHOR as PREAMBLE
from agentos_mem.documents.outline import split_lines
from agentos_mem.safety.secrets import mask_lines
from agentos_mem.kernel.text import count_tokens, normalize_key, sentences
from agentos_mem.storage.kb_cards import read_body

EMBED_CHARS = 1200  # what of a section is embedded (its title path and head say what it is)
# Each section's first SENTENCE_MAX sentences (its title lines among them) are embedded too: knowledge search scores a
# candidate by its best sentence beside its whole text, so one precise sentence in a long section is not averaged away
# (query.fusion; bench/results/fusion-cv.md). Fewer than MIN_SENTENCE_CHARS characters is no sentence of its own.
SENTENCE_MAX = 12
MIN_SENTENCE_CHARS = 6
# Knowledge search asks an HNSW index (index/section_ann.py) for the nearest sections once a search covers this many
# (exact scoring below it). bench/perf.py's knowledge row (hybrid, warm, two cores): exact p50 2.8 ms at 1k, 8.9 at
# 5k, 21.5 at 10k, 241 at 100k sections; through the index 4.4, 6.3, 10.1 and 23.0 ms, recall@10 1.0 against exact
# search. The index pays from about 4k sections on; 5k keeps small bases on the exact path, which is never wrong.
ANN_MIN_SECTIONS = 5000  # the default of the setting kb_ann_min_sections
ANN_COLLECTION = "global"

_lock = threading.Lock()
_bodies: dict[str, tuple[int, int, str, list[str]]] = {}  # card path -> (mtime_ns, size, body hash, lines)


def body_lines(path: Path | str) -> tuple[str, list[str]] | None:
    """(hash of the body as refine computes content_hash, body lines), or None when the card is unreadable. A card
    unchanged since its last read (same mtime and size) is not read again: the same lines object comes back."""
    try:
        st = os.stat(path)  # every search stats every selected card: os.stat on the string, not a Path per card
        hit = _bodies.get(str(path))
        if hit and hit[0] == st.st_mtime_ns and hit[1] == st.st_size:
            return hit[2], hit[3]
        body = read_body(Path(path))
    except (OSError, UnicodeDecodeError):
        return None
    # Served masked (the hash is the body's as written): a card refined before secrets were masked at write time,
    # or edited by hand, never serves one in clear, nor puts one in a section index or a vector.
    lines = mask_lines("\n".join(split_lines(body)), f"knowledge card {os.path.basename(path)}", 1)[0].split("\n") if body else split_lines(body)
    entry = (st.st_mtime_ns, st.st_size, hashlib.sha256(normalize_key(body).encode("utf-8")).hexdigest(), lines)
    with _lock:
        if len(_bodies) > 20_000:
            _bodies.clear()
        _bodies[str(path)] = entry
    return entry[2], entry[3]


@dataclass(eq=False)
class Doc:
    row: dict  # the registry row (id, title, scope, category, summary, outline, content_hash, ...)
    lines: list[str]  # the card's body lines

    @property
    def id(self) -> str:
        return self.row["id"]

    @property
    def sections(self) -> list[dict]:
        """The stored outline, or one section over the whole body when it has none. Decoded from the row's JSON
        text on each use, never kept decoded: a long-lived search process held 100,000 sections as dicts (94 MB at
        10,000 documents) though a search reads them only to build its index."""
        outline = self.row.get("outline")
        if isinstance(outline, str):
            try:
                outline = json.loads(outline) if outline else []
            except ValueError:
                outline = []
        return doc_sections(outline if isinstance(outline, list) else [], self.lines)

    def section(self, anchor: str) -> dict | None:
        sections = self.sections
        anchor = anchor if any(s["anchor"] == anchor for s in sections) else anchor.removeprefix("#")
        return next((s for s in sections if s["anchor"] == anchor), None)


def doc_sections(outline: list, lines: list[str]) -> list[dict]:
    n = len(lines)
    secs = [s for s in outline if isinstance(s, dict) and "anchor" in s and 1 <= s["line_start"] <= max(n, 1)]
    if secs:
        return secs
    tokens = count_tokens("\n".join(lines))
    return [{"anchor": PREAMBLE, "title": "", "level": 0, "line_start": 1, "line_end": max(n, 1), "subtree_end": max(n, 1),
             "tokens": tokens, "subtree_tokens": tokens, "parent": None, "path": [], "explicit": False, "heading_end": 0}]


@dataclass
class SectionUnit:
    """One section as a search unit."""

    doc_id: str
    doc_title: str
    anchor: str
    title: str
    path: list[str]
    line_start: int
    line_end: int
    heading_end: int
    tokens: int
    text: str  # the section's own lines

    @property
    def match_text(self) -> str:
        """What is ranked and embedded: the title path (the document's title first when the path lacks it), then
        the section's own lines."""
        head = list(self.path) if self.path[:1] == [self.doc_title] or self.title == self.doc_title else [self.doc_title, *self.path]
        return "\n".join([*head, self.text])


def units_of(doc_id: str, title: str, lines: list[str], sections: list[dict]) -> list[SectionUnit]:
    out = []
    for s in sections:
        a, b = s["line_start"], min(s["line_end"], len(lines))
        out.append(SectionUnit(doc_id, title, s["anchor"], s["title"], list(s.get("path") or []), a, b, int(s.get("heading_end") or 0),
                        int(s.get("tokens") or 0), "\n".join(lines[a - 1 : b])))
    return out


def embed_text(unit: SectionUnit) -> str:
    return unit.match_text[:EMBED_CHARS]


def sentences_of(text: str) -> list[str]:
    """A text's first ``SENTENCE_MAX`` sentences of ``MIN_SENTENCE_CHARS`` characters or more (kernel.text.sentences:
    Chinese and Western sentence ends, line breaks); the whole text when it has none."""
    parts = [p for p in sentences(text or "") if len(p) >= MIN_SENTENCE_CHARS]
    return (parts or [text or " "])[:SENTENCE_MAX]


def embed_sentences(unit: SectionUnit) -> list[str]:
    """The sentences of a section that are embedded one by one (its title lines, then its own lines')."""
    return sentences_of(unit.match_text)


def section_texts(units: list[SectionUnit]) -> dict[str, str]:
    """{cache key: text} of these sections' embedded texts."""
    return {text_hash(embed_text(u)): embed_text(u) for u in units}


def embed_texts(units: list[SectionUnit]) -> dict[str, str]:
    """{cache key: text} of everything embedded for these sections: each one's text, then (after all of those, so the
    sections are searchable by meaning first) their sentences."""
    out = section_texts(units)
    for u in units:
        for t in embed_sentences(u):
            out.setdefault(text_hash(t), t)
    return out


def section_key(unit: SectionUnit) -> str:
    """A section's id in the ANN index: document, anchor and the hash of its embedded text (an edit is a new key)."""
    return f"{unit.doc_id}#{unit.anchor}#{text_hash(embed_text(unit))[:16]}"


def text_hash(text: str) -> str:
    """The embedding cache's key of a text."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


_docs: dict[tuple, Doc] = {}  # a registry row as read (``KBStore.readable``: every value a string) -> its Doc


def published_docs(kb_root: Path, rows: list[dict]) -> list[Doc]:
    """The documents of these registry rows whose card still holds the reviewed body (an edited card is not
    the text that was reviewed: left out until it is refined and approved again).

    The read path calls this on every search with the rows of ``KBStore.readable`` (the outline still JSON text):
    a row unchanged since the last call, whose card is unchanged too (``body_lines`` gives back the same lines), is
    the Doc made then, so a search pays a stat per card, not a decode and a secrets scan of every document (the
    registry read was most of a search on a base of many documents: issue 43). Rows with decoded outlines (the index
    pipeline's, ``KBStore.documents``) are made anew."""
    out = []
    root = os.fspath(kb_root)
    for row in rows:
        body = body_lines(os.path.join(root, row["path"]))
        if body is None or body[0] != row["content_hash"]:
            continue
        key = tuple(row.values()) if isinstance(row.get("outline"), str) else None
        doc = _docs.get(key) if key is not None else None
        if doc is None or doc.lines is not body[1]:  # new, changed, or its card re-read since
            doc = _doc_of(row, body[1])
            if key is not None:
                with _lock:
                    if len(_docs) > 20_000:
                        _docs.clear()
                    _docs[key] = doc
        out.append(doc)
    return out


def still_published(kb_root: Path, doc: Doc) -> bool:
    """Whether ``doc``'s card still holds the body that was reviewed (a stat when unchanged). By hash, not by the
    lines object: ``body_lines`` forgets bodies past 20,000 cards, and a re-read of an unchanged card is the same body."""
    body = body_lines(os.path.join(os.fspath(kb_root), doc.row["path"]))
    return body is not None and body[0] == doc.row["content_hash"]


def _doc_of(row: dict, lines: list[str]) -> Doc:
    return Doc({**row, **{k: mask_lines(row[k])[0] for k in ("title", "summary") if isinstance(row.get(k), str)}}, lines)


def section_units(docs: list[Doc]) -> list[SectionUnit]:
    return [u for d in docs for u in units_of(d.id, d.row["title"], d.lines, d.sections)]
