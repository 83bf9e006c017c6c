"""What a digest run reports: one ``DayReport`` per day, one ``RangeReport`` for a backfill or a nightly
catch-up. Each owns its field names (spelled here once), its Prefect artifact table and its CLI summary;
flows and the CLI pass them on as plain dicts (``to_dict``), the JSON users and agents read."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, fields

from agentos_mem.memory.report import MemoryReport, memories_markdown

COUNTS = ("lines_read", "turns", "facts_added", "facts_reinforced", "facts_superseded", "facts_retracted", "conflicts", "already_applied", "cards")
NO_MEMORIES = MemoryReport().to_dict()  # a day whose memory stage did not run


@dataclass
class DayReport:
    user: str
    day: str
    files: list[str]
    lines_read: int
    turns: int
    candidates: int
    extractor: str
    facts_added: int
    facts_reinforced: int
    facts_superseded: int
    conflicts: int
    already_applied: int
    cards: int
    card_ids: list[str]
    quarantined: list[str]
    memories: dict = field(default_factory=lambda: MemoryReport().to_dict())  # the day's MemoryReport, in its dict form
    facts_retracted: int = 0  # facts whose only evidence was a removed or edited log line

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, d: dict) -> DayReport:
        return cls(**{f.name: d[f.name] for f in fields(cls) if f.name in d})

    def artifact_markdown(self) -> str:
        rows = [("files", ", ".join(self.files) or "(none)"), ("lines read", self.lines_read), ("turns", self.turns),
                ("extractor", self.extractor), ("facts added", self.facts_added), ("facts reinforced", self.facts_reinforced),
                ("facts superseded", self.facts_superseded), ("facts retracted (source removed or edited)", self.facts_retracted),
                ("conflicts", self.conflicts),
                ("already applied (re-run)", self.already_applied), ("cards", self.cards), ("files/lines quarantined", len(self.quarantined))]
        md = [f"# Daily digest {self.day} · {self.user}", "", "| measure | value |", "|---|---|"]
        md += [f"| {k} | {v} |" for k, v in rows]
        md += memories_markdown(self.memories)
        if self.quarantined:
            md += ["", "## Quarantined", *[f"- `{q}`" for q in self.quarantined]]
        return "\n".join(md) + "\n"

    def log_line(self) -> str:
        return (f"{self.day}: {self.turns} turns, facts +{self.facts_added} added, {self.facts_reinforced} reinforced, "
                f"{self.facts_superseded} superseded, {self.conflicts} conflicts, {len(self.quarantined)} quarantined")


@dataclass
class RangeReport:
    user: str
    days: list[str]
    per_day: list[DayReport]

    @classmethod
    def combine(cls, user: str, reports: list[DayReport]) -> RangeReport:
        return cls(user, [r.day for r in reports], reports)

    def total(self, name: str) -> int:
        return sum(getattr(r, name) for r in self.per_day)

    @property
    def quarantined(self) -> list[str]:
        return [q for r in self.per_day for q in r.quarantined]

    def to_dict(self) -> dict:
        return {"user": self.user, "days": self.days, **{k: self.total(k) for k in COUNTS}, "quarantined": self.quarantined,
                "per_day": [r.to_dict() for r in self.per_day]}

    @classmethod
    def from_dict(cls, d: dict) -> RangeReport:
        return cls(d["user"], d["days"], [DayReport.from_dict(r) for r in d["per_day"]])

    def artifact_markdown(self, kind: str) -> str:
        md = [f"# {kind} · {self.user} · {len(self.days)} day(s)", "",
              "| day | lines | turns | added | reinforced | superseded | retracted | conflicts | cards | quarantined |",
              "|---|---|---|---|---|---|---|---|---|---|"]
        md += [f"| {r.day} | {r.lines_read} | {r.turns} | {r.facts_added} | {r.facts_reinforced} | {r.facts_superseded} | "
               f"{r.facts_retracted} | {r.conflicts} | {r.cards} | {len(r.quarantined)} |" for r in self.per_day]
        mems = [MemoryReport.from_dict(r.memories) for r in self.per_day if r.memories]
        if any(m.worth_showing for m in mems):
            md += MemoryReport.merge(mems).markdown_section()
        if self.quarantined:
            md += ["", "## Quarantined", *[f"- `{q}`" for q in self.quarantined]]
        return "\n".join(md) + "\n"


def summary_lines(r: dict) -> list[str]:
    """The CLI's summary of a day's or a range's report (as the flows return it)."""
    days = r.get("days", [r.get("day")])
    out = [f"user {r['user']}: {len(days)} day(s) digested" + (f" ({days[0]} .. {days[-1]})" if days and days[0] else ""),
           f"  lines read {r['lines_read']}, turns {r['turns']}",
           f"  facts added {r['facts_added']}, reinforced {r['facts_reinforced']}, superseded {r['facts_superseded']}, "
           f"retracted {r.get('facts_retracted', 0)}, conflicts {r['conflicts']}, already applied {r['already_applied']}",
           f"  index cards {r['cards']}"]
    if r.get("rewound"):
        w = r["rewound"]
        out.insert(1, f"  {w['from']} changed after later days were digested: the facts were made again from {w['days']} day(s) "
                      f"in date order ({w['decisions_applied_again']} decision(s) of the journal applied again)")
    if r["quarantined"]:
        out.append(f"  quarantined ({len(r['quarantined'])}):")
        out += [f"    - {q}" for q in r["quarantined"]]
    return out
