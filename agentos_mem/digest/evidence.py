"""Every fact knows its evidence: the observations a day's logs hold and the earlier ones they no longer hold.
A person forgetting a fact is ``services.decisions.forget_fact``.

An observation is a candidate fact read from some lines of a log. It is known by its day, its file, the content of
its lines (normalised: NFKC, runs of blanks as one space) and which occurrence of that content in the file it is,
and by the fact it states (``FactStore.observation_key``), never by line numbers or the whole file's hash. So:

- re-digesting an edited log applies only its new and changed lines: an unchanged line is the same observation, even
  when an edit above moved it (no second confidence raise, no duplicate row);
- an earlier observation whose content the day's logs no longer hold (its file removed, its line edited) is retired,
  and a fact left with no live evidence is retracted (``Supersession.apply``'s ``retire``); a fact another line or day
  also says keeps it;
- a day whose every log was removed is found by ``vanished_days`` and digested as an empty day: its facts of those
  logs are retracted, its cards and summary emptied.

Which folder a file was read from is recorded with it: a day is only retracted for files of the folder being
digested (a day read from another folder with ``--logs`` is left alone). Files recorded before this was kept count
as the default logs folder's, or any folder's that still has logs of that day.

Observations written before content keys existed (``legacy`` rows) are re-keyed from the raw archive the first time
their day is digested again (``adopt_legacy``); one that cannot be read back is never retired.
"""

from __future__ import annotations

import hashlib
from bisect import bisect_left
from datetime import date
from pathlib import Path

from agentos_mem.kernel.domain import Candidate
from agentos_mem.kernel.settings import Settings
from agentos_mem.kernel.text import nfkc, split_lines
from agentos_mem.kernel.workspace import Workspace
from agentos_mem.storage.facts import FactStore, open_facts
from agentos_mem.storage.raw_archive import ArchiveError, RawArchive


def _h(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:24]


class LineIndex:
    """A file's lines as content hashes, and where a window of lines with a given content occurs. A window's content
    is its first line's hash (one line) or that hash and the whole window's (several): occurrences are looked for only
    where the first line matches, so the work stays linear in the file however long its turns."""

    def __init__(self, data: bytes):
        lines = split_lines(data.removeprefix(b"\xef\xbb\xbf"))
        self.hashes = [_h(" ".join(nfkc(line.decode("utf-8", errors="replace")).split())) for line in lines]
        self._first: dict[str, list[int]] = {}
        for n, h in enumerate(self.hashes, 1):
            self._first.setdefault(h, []).append(n)
        self._at: dict[tuple[str, int], list[int]] = {}

    def window(self, start: int, end: int) -> str | None:
        if start < 1 or end < start or end > len(self.hashes):
            return None
        first = self.hashes[start - 1]
        return first if start == end else f"{first}.{_h('|'.join(self.hashes[start - 1:end]))[:16]}"

    def starts(self, content: str, n: int) -> list[int]:
        """The lines where a window of ``n`` lines with this content starts, in order."""
        if (content, n) not in self._at:
            first = content.split(".")[0]
            self._at[content, n] = [s for s in self._first.get(first, []) if self.window(s, s + n - 1) == content]
        return self._at[content, n]

    def observe(self, start: int, end: int) -> tuple[str, int] | None:
        """(content, occurrence) of lines start..end, or None when they are not in the file."""
        h = self.window(start, end)
        if h is None:
            return None
        return h, bisect_left(self.starts(h, end - start + 1), start)

    def holds(self, content: str, occurrence: int, n: int) -> bool:
        return len(self.starts(content, n)) > occurrence


def folder_key(settings: Settings, folder: Path | str) -> str:
    """How a logs folder is recorded: relative to the workspace when inside it (the default ``working/<user>``: the
    same on every machine the workspace is synced to), else its absolute path."""
    path, home = Path(folder).resolve(), Path(settings.home).resolve()
    try:
        return "~/" + path.relative_to(home).as_posix()
    except ValueError:
        return str(path)


def _owned(row: dict, folder: Path, settings: Settings, day_has_files: bool) -> bool:
    """Whether a digested file row is the folder's: read from it, or recorded before folders were (then it is the
    default logs folder's, or the folder's that still has logs of its day)."""
    if row.get("folder") is not None:
        return row["folder"] == folder_key(settings, folder)
    return day_has_files or folder_key(settings, folder) == folder_key(settings, settings.working_dir())


def observations(inp, candidates: list[Candidate]) -> list[tuple[str, int] | None]:
    """Per candidate, the content hash and occurrence of its lines in its file (None when not found there)."""
    index = {log.name: LineIndex(log.data) for log in inp.logs if log.data}
    return [index[c.source_file].observe(c.line_start, c.line_end) if c.source_file in index else None for c in candidates]


def gone_observations(settings: Settings, store: FactStore, inp) -> list[tuple[str, str]]:
    """(key, reason) of the day's earlier observations its logs no longer hold: the file was removed from the folder,
    or the lines were edited. A file that is there but could not be read this time keeps its observations."""
    day = inp.day
    live = store.observations(inp.user, day)
    if any(r["origin"] == "legacy" for r in live):
        adopt_legacy(settings, store, inp.user, day, [r for r in live if r["origin"] == "legacy"])
        live = store.observations(inp.user, day)
    index = {log.name: LineIndex(log.data) for log in inp.logs if log.data}
    present = {log.name for log in inp.logs}
    mine: dict[str, bool] = {}
    for r in store.digested_files(inp.user, day):
        mine[r["file"]] = mine.get(r["file"], False) or _owned(r, Path(inp.folder), settings, bool(inp.logs))
    others = {f for f, owned in mine.items() if not owned}  # read from another folder: not this digest's to retract
    out = []
    for r in live:
        if r["origin"] != "log" or r["obs_hash"] is None:
            continue
        f, where = r["source_file"], f"{r['source_file']}:{r['line_start']}"
        if f in index:
            if not index[f].holds(r["obs_hash"], r["obs_occurrence"] or 0, r["line_end"] - r["line_start"] + 1):
                out.append((r["candidate_key"], f"source edited: {where}"))
        elif f not in present and f not in others:
            out.append((r["candidate_key"], f"source removed: {where}"))
    return out


def adopt_legacy(settings: Settings, store: FactStore, user: str, day: date, rows: list[dict]) -> int:
    """Key the day's legacy observations by content, reading their lines back from the raw archive revision they
    cite. Rows of files the day never digested (documents, decisions) and rows without an archived revision are
    marked as not log observations: never retired."""
    archive = RawArchive(Workspace(settings.home).raw_dir)
    digested = store.digested_names(user, day)
    files: dict[str, LineIndex | None] = {}
    keyed = []
    for r in rows:
        obs = None
        if r["raw_ref"] and r["source_file"] in digested:
            if r["raw_ref"] not in files:
                try:
                    with open(archive.path_of(r["raw_ref"]), "rb") as f:
                        files[r["raw_ref"]] = LineIndex(f.read())
                except (ArchiveError, OSError):
                    files[r["raw_ref"]] = None
            lines = files[r["raw_ref"]]
            obs = lines.observe(r["line_start"], r["line_end"]) if lines else None
        keyed.append((r["candidate_key"], obs[0] if obs else None, obs[1] if obs else None, r["source_file"]))
    return store.adopt(user, day, keyed)


def left_the_day(store: FactStore, settings: Settings, user: str, day: date, folder: Path, names: set[str]) -> bool:
    """Whether a file the folder's last digest of ``day`` read is no longer among ``names`` (the day's files now)."""
    return any(r["file"] not in names for r in store.digested_files(user, day) if _owned(r, folder, settings, bool(names)))


def vanished_days(store: FactStore, settings: Settings, user: str, folder: Path, until: date, listed: set[date]) -> list[date]:
    """Days up to ``until`` the folder's digests read logs of that no longer have any there (every log removed)."""
    out = set()
    for r in store.digested_files(user):
        d = date.fromisoformat(r["day"])
        if d <= until and d not in listed and _owned(r, folder, settings, False):
            out.add(d)
    return sorted(out)


def had_logs(store: FactStore, settings: Settings, inp) -> bool:
    """Whether the folder's last digest of the day read logs (a day whose logs were all removed since is not a no-op:
    its facts of them are retracted and its cards emptied)."""
    return left_the_day(store, settings, inp.user, inp.day, Path(inp.folder), {log.name for log in inp.logs})


def retire_files(store: FactStore, settings: Settings, inp) -> int:
    """After a day's digest: the folder's files (and earlier contents of files) it did not read are no longer the day's."""
    now = {(log.name, log.sha256) for log in inp.logs}
    rows = [r["rowid"] for r in store.digested_files(inp.user, inp.day)
            if (r["file"], r["sha256"]) not in now and _owned(r, Path(inp.folder), settings, bool(inp.logs))]
    if rows:
        store.retire_digested(rows)
    return len(rows)
