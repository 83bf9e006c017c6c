"""What a person forgot is never in a text an agent is served (issue 42, item 6).

``facts forget`` closes the fact; the day's own words still hold the value elsewhere: a card's summary ("服务器配置还是
8C16G"), a statement the digest kept whole, the raw lines of a card, a memory record the day gave, a knowledge
document's section. Every read path passes what it serves through ``without_forgotten`` with the values
``FactStore.forgotten_values`` lists (a value said anew since, and current, is not among them)."""

from __future__ import annotations

import re

from agentos_mem.kernel.settings import Settings
from agentos_mem.storage.facts import open_facts

FORGOTTEN = "[forgotten]"


def forgotten_values(settings: Settings, user: str) -> list[str]:
    """The values ``user`` forgot that no current fact says again, longest first (none when there is no fact store)."""
    store = open_facts(settings)
    try:
        return store.forgotten_values(user)
    finally:
        store.close()


def without_forgotten(text: str, forgotten: list[str]) -> str:
    """``text`` with every value a person forgot replaced by ``[forgotten]``. A Latin value is matched as a whole word,
    any case; a Chinese one anywhere."""
    for value in forgotten:
        text = re.sub(rf"(?<![A-Za-z0-9]){re.escape(value)}(?![A-Za-z0-9])", FORGOTTEN, text, flags=re.IGNORECASE)
    return text
