"""Open the workspace's stores with the settings in effect (one place, for the digest and the read path)."""

from __future__ import annotations

from kernel.settings import Settings
from kernel.text import load_aliases
from kernel.workspace import Workspace
from storage.facts import FactStore


def open_facts(settings: Settings) -> FactStore:
    ws = Workspace(settings.home)
    return FactStore(ws.facts_db, expiry_days=settings.expiry_days, reinforce_step=settings.reinforce_step,
                     aliases=load_aliases(ws.knowledge / "99_system" / "subject_aliases.txt"), timezone=settings.timezone)
