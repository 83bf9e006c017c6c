"""What an index rebuild reports: ``RebuildReport`` owns its field names, its Prefect artifact table and its
CLI summary; flows and the CLI pass it on as a plain dict (``to_dict``), the JSON users read."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class RebuildReport:
    status: str  # rebuilt | unchanged
    generation: str | None
    units: int
    problems: list[str]
    full: bool
    reason: str
    previous: str | None
    changed: int
    deleted: int
    seconds: float
    embedded: int = 0
    tokenized: int = 0
    pruned: list[str] = field(default_factory=list)

    def to_dict(self) -> dict:
        head = {"status": self.status, "generation": self.generation}
        if self.status == "rebuilt":
            head |= {"pruned": self.pruned, "units": self.units, "embedded": self.embedded, "tokenized": self.tokenized}
        else:
            head |= {"units": self.units}
        return head | {"problems": self.problems, "full": self.full, "reason": self.reason, "previous": self.previous,
                       "changed": self.changed, "deleted": self.deleted, "seconds": self.seconds}

    @classmethod
    def from_dict(cls, d: dict) -> RebuildReport:
        return cls(**{k: d[k] for k in cls.__dataclass_fields__ if k in d})

    def artifact_markdown(self) -> str:
        rows = [(k, getattr(self, k)) for k in ("status", "generation", "reason", "units", "changed", "deleted", "embedded", "tokenized", "seconds")]
        if self.status != "rebuilt":  # what the dict form leaves out reads as empty, as before
            rows = [(k, None if k in ("embedded", "tokenized") else v) for k, v in rows]
        md = ["# Index rebuild", "", "| measure | value |", "|---|---|", *[f"| {k} | {v} |" for k, v in rows]]
        if self.problems:
            md += ["", "## Left out (unreadable)", *[f"- `{p}`" for p in self.problems]]
        return "\n".join(md) + "\n"

    def summary_lines(self) -> list[str]:
        if self.status == "unchanged":
            out = [f"indexes: unchanged ({self.units} units, generation {self.generation}, {self.seconds} s)"]
        else:
            out = [f"indexes: rebuilt ({self.reason}): generation {self.generation}, {self.units} units, {self.changed} new or changed, "
                   f"{self.deleted} removed, {self.embedded} embedded, {self.seconds} s"]
        return out + [f"  left out: {p}" for p in self.problems]

    def log_line(self) -> str:
        return (f"{self.status} ({self.reason}), {self.units} units, {self.changed} changed, {self.deleted} deleted, "
                f"{self.embedded} embedded, {self.seconds:.1f} s")
