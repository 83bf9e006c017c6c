"""Knowledge cards on disk: Markdown in the taxonomy folders, frontmatter mirroring the registry row.

A card is written whole and atomically (temporary file + rename); a status change rewrites the
frontmatter only, the body byte for byte as it was.
"""

from __future__ import annotations

from pathlib import Path

import frontmatter
import yaml

from agentos_mem.kernel.files import atomic_write, guard

CARD_KEYS = ("id", "title", "category", "scope", "owner", "status", "nature", "confidence", "reliability", "source", "source_url",
             "valid_until", "version", "previous_version", "superseded_by", "related", "content_hash", "summary", "created", "updated")


def render_card(doc: dict, body: str) -> str:
    meta = {k: doc.get(k) for k in CARD_KEYS}
    head = yaml.safe_dump(meta, allow_unicode=True, sort_keys=False, default_flow_style=False, width=10_000)
    return f"---\n{head}---\n\n{body.rstrip()}\n"


def read_body(path: Path) -> str:
    """A card's body (its frontmatter removed); the whole text when the frontmatter does not parse."""
    text = guard(path).read_text(path)  # a document that is a link (or a FIFO) is named, never read (kernel.files.Below)
    try:
        return frontmatter.parse(text)[1].strip("\n")
    except Exception:  # noqa: BLE001 - a hand-edited card: the text is still the body
        return text


def restamp(path: Path, doc: dict) -> None:
    """Rewrite a card's frontmatter from ``doc``; the body stays as it is."""
    atomic_write(path, render_card(doc, read_body(path)))
