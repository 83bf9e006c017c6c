"""What the knowledge stages report: ``SourceReport`` for one source of a collect run, ``CollectReport`` for
the whole run (collect-to-inbox), ``RefineReport`` for an inbox-refine run. Each owns its field names (spelled
here once), its Prefect artifact table and its CLI summary; flows and the CLI pass them on as plain dicts
(``to_dict``), the JSON users and agents read.

Collected items (``{partition, file, source, title, source_type, from}``), refused files (``{file, reason,
severity, sha256}``) and refined documents (``{file, outcome, doc_id, title, ...}``) stay dicts: they are
records the JSON carries as they are.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, fields

REVIEW_HINT = "Decide with `agentos kb pending`, `agentos kb approve ID` / `reject ID`, or the `review` deployment."


def _cell(s: str) -> str:
    return str(s).replace("|", "\\|").replace("\n", " ")


# -- collect ----------------------------------------------------------------------------------------------------
@dataclass
class SourceReport:
    """What happened to one source of a collect run."""

    name: str
    type: str
    partition: str
    location: str
    status: str = "ok"  # ok | errors | absent | failed
    collected: list[dict] = field(default_factory=list)
    duplicates: int = 0
    refused: list[dict] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    feed_title: str | None = None  # a feed's own title, when it has one (the dict form leaves it out otherwise)

    def to_dict(self) -> dict:
        d = asdict(self)
        if self.feed_title is None:
            del d["feed_title"]
        return d

    @classmethod
    def from_dict(cls, d: dict) -> SourceReport:
        return cls(**{f.name: d[f.name] for f in fields(cls) if f.name in d})

    def counts(self) -> SourceCounts:
        return SourceCounts(type=self.type, partition=self.partition, location=self.location, status=self.status,
                            collected=len(self.collected), duplicates=self.duplicates, refused=len(self.refused))


@dataclass
class SourceCounts:
    """One source's line in a collect run's report (``per_source``)."""

    type: str
    partition: str
    location: str
    status: str
    collected: int
    duplicates: int
    refused: int


@dataclass
class CollectReport:
    """One collect-to-inbox run: every source's items, refusals, warnings and errors, and a line per source."""

    user: str
    collected: list[dict] = field(default_factory=list)
    duplicates: int = 0
    refused: list[dict] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    per_source: dict[str, SourceCounts] = field(default_factory=dict)

    @classmethod
    def combine(cls, user: str, reports: list[SourceReport], problems: list[str] | None = None) -> CollectReport:
        """The run's report from its sources' (``problems``: what was wrong with the source list, errors first)."""
        return cls(user=user, collected=[c for r in reports for c in r.collected], duplicates=sum(r.duplicates for r in reports),
                   refused=[x for r in reports for x in r.refused], warnings=[w for r in reports for w in r.warnings],
                   errors=list(problems or []) + [e for r in reports for e in r.errors],
                   per_source={r.name: r.counts() for r in reports})

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, d: dict) -> CollectReport:
        """Also reads a partial report (the nightly chain's stand-in for a collect stage that failed)."""
        kw = {f.name: d[f.name] for f in fields(cls) if f.name in d}
        kw["per_source"] = {name: SourceCounts(**p) for name, p in (d.get("per_source") or {}).items()}
        return cls(**{"user": "", **kw})

    @property
    def failed(self) -> bool:
        """A source could not be collected at all (`agentos collect` exits 1)."""
        return any(p.status == "failed" for p in self.per_source.values())

    def artifact_markdown(self) -> str:
        """The run's report for people (the flow's artifact)."""
        c, refused, errors = self.collected, self.refused, self.errors
        md = [f"# Collect to inbox · {self.user}", "",
              f"**{len(c)} collected**, {self.duplicates} duplicate(s) skipped, {len(refused)} refused, {len(errors)} error(s).", ""]
        md += ["## Sources", "", "| source | type | partition | status | collected | duplicates | refused |", "|---|---|---|---|---|---|---|"]
        for name, p in self.per_source.items():
            md.append(f"| {_cell(name)} | {p.type} | {p.partition} | {p.status} | {p.collected} | {p.duplicates} | {p.refused} |")
        if c:
            md += ["", "## Collected", "", "| partition | file | title | source |", "|---|---|---|---|"]
            md += [f"| {x['partition']} | `{_cell(x['file'])}` | {_cell(x['title'])} | {_cell(x['source'])} |" for x in c]
        if refused:
            md += ["", "## Refused (convert to Markdown / UTF-8 text first; also in logs/quarantine.jsonl)", ""]
            md += [f"- `{_cell(r['file'])}`: {r['reason']}" for r in refused]
        if errors:
            md += ["", "## Errors", "", *[f"- {e}" for e in errors]]
        if self.warnings:
            md += ["", "## Warnings", "", *[f"- {w}" for w in self.warnings]]
        return "\n".join(md) + "\n"

    def artifact_description(self) -> str:
        return (f"collect-to-inbox for {self.user}: {len(self.collected)} collected, {self.duplicates} duplicate(s), "
                f"{len(self.refused)} refused")

    def summary_lines(self) -> list[str]:
        """`agentos collect` without --json."""
        out = [f"user {self.user}: {len(self.collected)} item(s) collected into the inbox, {self.duplicates} duplicate(s) skipped"]
        out += [f"  + {c['partition']}/{c['file'].split('/')[-1]}  <- {c['source']}" for c in self.collected]
        if self.refused:
            out.append(f"  refused ({len(self.refused)}; also in logs/quarantine.jsonl):")
            out += [f"    - {x['reason']}  [{x['file']}]" for x in self.refused]
        out += [f"  error: {e}" for e in self.errors]
        out += [f"  warning: {w}" for w in self.warnings]
        return out

    def log_line(self) -> str:
        return (f"{len(self.collected)} item(s) for {self.user}: {self.duplicates} duplicate(s) skipped, {len(self.refused)} refused, "
                f"{len(self.errors)} error(s)")


# -- refine -----------------------------------------------------------------------------------------------------
@dataclass
class RefineReport:
    """One inbox-refine run. ``refined``: ``{file, outcome, doc_id, title, category, reliability, consistency,
    valid_until, summary_error}`` per new or updated pending document; ``duplicates``: ``{file, outcome, doc_id,
    title}``; ``quarantined`` and ``errors``: ``"inbox/file: reason"``; ``already``: items taken by an earlier
    run; ``edited``: documents whose body was edited by hand (back to pending); ``summaries_retried``."""

    refined: list[dict] = field(default_factory=list)
    duplicates: list[dict] = field(default_factory=list)
    quarantined: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    already: int = 0
    edited: list[str] = field(default_factory=list)
    summaries_retried: int = 0

    def add(self, item: dict) -> None:
        """One refined item (``{file, outcome, ...}``): a duplicate or a pending document."""
        (self.duplicates if item["outcome"] == "duplicate" else self.refined).append(item)

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, d: dict) -> RefineReport:
        """Also reads a partial report (the nightly chain's stand-in for a refine stage that failed)."""
        return cls(**{f.name: d[f.name] for f in fields(cls) if f.name in d})

    def artifact_markdown(self) -> str:
        md = ["# Inbox refine", "", (f"{len(self.refined)} document(s) refined (pending review), {len(self.duplicates)} duplicate(s), "
                                     f"{len(self.quarantined)} quarantined, {self.already} already taken, {len(self.errors)} error(s)."), ""]
        if self.refined:
            md += ["| document | outcome | category | reliability | facts: same / new / conflicts | valid until |", "|---|---|---|---|---|---|"]
            for d in self.refined:
                c = d.get("consistency") or {}
                md.append(f"| `{d['doc_id']}` {d['title']} | {d['outcome']} | {d.get('category')} | {d.get('reliability')} | "
                          f"{c.get('identical', 0)} / {c.get('added', 0)} / {c.get('conflicts', 0)} | {d.get('valid_until') or 'never'} |")
        if self.quarantined:
            md += ["", "## Quarantined", *[f"- {q}" for q in self.quarantined]]
        if self.errors:
            md += ["", "## Errors", *[f"- {e}" for e in self.errors]]
        md += ["", REVIEW_HINT]
        return "\n".join(md) + "\n"

    @staticmethod
    def artifact_description(user: str) -> str:
        return f"inbox refined into pending knowledge documents ({user})"

    def summary_line(self) -> str:
        """`agentos refine` without --json."""
        return (f"refined {len(self.refined)}, duplicates {len(self.duplicates)}, quarantined {len(self.quarantined)}, "
                f"errors {len(self.errors)}; pending review: `agentos kb pending`")

    def log_line(self) -> str:
        return (f"{len(self.refined)} item(s): {len(self.duplicates)} duplicate(s), {len(self.quarantined)} quarantined, "
                f"{len(self.errors)} error(s)")
