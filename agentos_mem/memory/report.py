"""What the user-memory stages report: ``MemoryReport`` for the memory stage of a day's digest (guarded
extraction over the day's tasks, memory/digest.py), ``InboxReport`` for the memory cards the nightly chain takes
from the inbox (memory/inbox.py). Each owns its field names (spelled here once), its Markdown and its summary;
flows pass them on as plain dicts (``to_dict``): a day's digest report (digest/report.py ``DayReport``) holds
its ``MemoryReport`` in that form under ``memories``, so the JSON users read stays as it is.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, fields

PROPOSALS_HINT = "Decide with `agentos memory proposals --accept ID` or `--reject ID`."


def _names(xs: list) -> str:
    return ", ".join(f"`{x}`" for x in xs) or "(none)"


@dataclass
class MemoryReport:
    """The memory stage of one day's digest (or several days' merged, for a range's artifact).

    ``created`` / ``updated`` / ``duplicates``: record names; ``proposals``: ids of proposals made now;
    ``pending``: every proposal waiting for the user, ``{id, kind, target, description, reason}``;
    ``errors``: ``"where: message"`` (each logged and skipped); ``extractor``: "rules", "llm:<model>" or
    "rules (model failed)", None when the stage did not run (the dict form then leaves it out)."""

    tasks: int = 0
    created: list[str] = field(default_factory=list)
    updated: list[str] = field(default_factory=list)
    duplicates: list[str] = field(default_factory=list)
    proposals: list[int] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    extractor: str | None = None
    pending: list[dict] = field(default_factory=list)

    def to_dict(self) -> dict:
        d = asdict(self)
        if self.extractor is None:
            del d["extractor"]
        return d

    @classmethod
    def from_dict(cls, d: dict) -> MemoryReport:
        """Reads the dict form, and the memory part of an ``InboxReport``'s (its other keys are left out)."""
        return cls(**{f.name: d[f.name] for f in fields(cls) if f.name in d})

    @classmethod
    def merge(cls, reports: list[MemoryReport]) -> MemoryReport:
        """Several days' in one (a range's artifact): the lists end to end, the proposals pending after the last day."""
        return cls(tasks=sum(r.tasks for r in reports), created=[x for r in reports for x in r.created],
                   updated=[x for r in reports for x in r.updated], duplicates=[x for r in reports for x in r.duplicates],
                   proposals=[x for r in reports for x in r.proposals], errors=[x for r in reports for x in r.errors],
                   pending=reports[-1].pending if reports else [])

    @property
    def worth_showing(self) -> bool:
        """Anything written, skipped, proposed, failed or waiting (a range's artifact shows the section only then)."""
        return bool(self.created or self.updated or self.duplicates or self.proposals or self.errors or self.pending)

    def markdown_section(self, pending: list[dict] | None = None) -> list[str]:
        """The user-memory section of a digest artifact: records created, updated, skipped as duplicates, and
        the proposals waiting for the user (``agentos memory proposals``); ``pending`` replaces this report's."""
        pending = self.pending if pending is None else pending
        md = ["", "## User memories", "", "| | records |", "|---|---|", f"| created | {_names(self.created)} |",
              f"| updated | {_names(self.updated)} |", f"| skipped as duplicates | {_names(self.duplicates)} |",
              f"| new proposals | {', '.join(f'#{i}' for i in self.proposals) or '(none)'} |"]
        if pending:
            md += ["", "### Proposals waiting for the user", "",
                   *[f"- #{p['id']} {p['kind']}{' -> `' + p['target'] + '`' if p['target'] else ''}: {p['description']} ({p['reason']})"
                     for p in pending], "", PROPOSALS_HINT]
        if self.errors:
            md += ["", "### Extraction errors (logged and skipped)", *[f"- {e}" for e in self.errors]]
        return md

    def log_line(self) -> str:
        return (f"{self.tasks} task(s): {len(self.created)} created, {len(self.updated)} updated, {len(self.duplicates)} duplicate(s), "
                f"{len(self.proposals)} new proposal(s), {len(self.pending)} pending, {len(self.errors)} error(s)")


def memories_markdown(m: dict | None, pending: list[dict] | None = None) -> list[str]:
    """``MemoryReport.markdown_section`` of a report's dict form (none for an empty one)."""
    return MemoryReport.from_dict(m).markdown_section(pending) if m else []


@dataclass
class InboxReport:
    """The memory cards one nightly run took from ``00_stream/inbox/memory/`` into the user's records.

    ``cards``: cards taken; ``created`` / ``updated`` / ``duplicates`` / ``proposals`` / ``errors`` as in
    ``MemoryReport``; ``already_proposed``: ids of identical proposals already pending; ``quarantined``:
    ``"card: reason"`` for each card that could not be read."""

    cards: int = 0
    created: list[str] = field(default_factory=list)
    updated: list[str] = field(default_factory=list)
    duplicates: list[str] = field(default_factory=list)
    proposals: list[int] = field(default_factory=list)
    already_proposed: list[int] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    quarantined: list[str] = field(default_factory=list)

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, d: dict) -> InboxReport:
        """Also reads a partial report (the nightly chain's stand-in for a stage that failed); keys the chain
        adds (``records_embedded``) are left out."""
        return cls(**{f.name: d[f.name] for f in fields(cls) if f.name in d})

    @property
    def worth_publishing(self) -> bool:
        """A card was taken or quarantined (a night without either publishes no artifact)."""
        return bool(self.cards or self.quarantined)

    def artifact_markdown(self, user: str) -> str:
        md = [f"# Memory inbox · {user}", "", f"{self.cards} card(s) taken from `00_stream/inbox/memory/`."]
        md += MemoryReport.from_dict(self.to_dict()).markdown_section(pending=[])
        if self.quarantined:
            md += ["", "## Quarantined", *[f"- `{q}`" for q in self.quarantined]]
        return "\n".join(md) + "\n"

    @staticmethod
    def artifact_description(user: str) -> str:
        return f"memory cards taken into {user}'s records"

    def log_line(self) -> str:
        return (f"{self.cards} card(s): {len(self.created)} created, {len(self.updated)} updated, {len(self.duplicates)} duplicate(s), "
                f"{len(self.proposals)} new proposal(s), {len(self.quarantined)} quarantined, {len(self.errors)} error(s)")
