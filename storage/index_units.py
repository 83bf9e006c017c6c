"""What the indexes hold: one ``Unit`` per card or fact (its text, kind and metadata, hashed for the
incremental rebuild), and the Chroma-safe name of each user's collection. The index pipeline builds units;
the read side looks them up by id."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field

EMBED_CHARS = 1200


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class Unit:
    id: str  # "card:<card id>" or "fact:<fact id>"
    kind: str  # card | fact
    text: str
    meta: dict = field(default_factory=dict)

    @property
    def text_hash(self) -> str:
        return _sha(self.text)

    @property
    def hash(self) -> str:
        return _sha(self.kind + "\x00" + self.text + "\x00" + json.dumps(self.meta, ensure_ascii=False, sort_keys=True))

    @property
    def embed_text(self) -> str:
        return self.text[:EMBED_CHARS]

    @property
    def embed_hash(self) -> str:
        """What the vector cache keys the unit's vector by (the same text, the same vector)."""
        return _sha(self.embed_text)


def collection_name(scope: str, user: str | None = None) -> str:
    """Chroma-safe collection name: ``local-<10 hex of the user id>`` (user ids may be Chinese), ``global``."""
    if scope == "global":
        return "global"
    return f"local-{hashlib.sha1(user.encode('utf-8')).hexdigest()[:10]}"
