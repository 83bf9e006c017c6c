"""``agentos restore``: a machine that has only agent-sync gets every derived store back.

What is synced is what a person or an agent wrote (``kernel.workspace``): logs, memory records, knowledge documents
and their inbox, identity files, the journal of decisions, a chat model's extraction cache. From it, in order:

1. the knowledge registry from the document cards (all pending until the journal decides them);
2. for each user, every logged day up to the nightly's last day, digested in date order (facts, raw archive, memory
   cards and daily summaries; not the memory records, which are synced: a restore writes nothing into agent-sync,
   so a machine restored without the chat model cannot add records the model would not have), each day followed by the journal's
   decisions made when the user's history had reached it (so a conflict accepted before a later day superseded
   it is settled before that day, as it was);
3. the journal's remaining decisions, then documents decided before the journal existed, as their cards say;
4. the indexes (BM25, vectors, knowledge sections) and the memory records' vectors.

Embeddings come from the embedding cache when agent-local still has one, else they are computed again; a chat
model's fact extraction comes from the synced extraction cache, so a restore needs no model for what it saw before.

A restore never leaves less than it found: the stores it moves aside (``--force``) come back to their places when it
fails or is stopped part way, and what it had made by then goes to ``agent-local/restore-failed-<time>/``
(``RestoreFailed`` says where); a damaged journal line is named and skipped (``storage.journal.read``), never a crash.
"""

from __future__ import annotations

import errno
import os
import shutil
import time
from dataclasses import asdict, dataclass, field
from datetime import date
from pathlib import Path

from agentos_mem.digest.logformat import list_days
from agentos_mem.index.stages import rebuild
from agentos_mem.index.vectors import embed_records, embed_sections
from agentos_mem.kernel import clock, progress
from agentos_mem.kernel.files import UnsafePath, guard
from agentos_mem.kernel.settings import Settings
from agentos_mem.kernel.workspace import Workspace
from agentos_mem.storage.guards import RestoreInProgress, restore_marker, workspace_lock
from agentos_mem.storage.health import free_bytes, no_room, room_problem
from agentos_mem.restore import registry
from agentos_mem.restore.replay import ReplayReport, replay


class RestoreError(RuntimeError):
    """The workspace cannot be restored as asked (no agent-sync, or derived stores present without ``force``)."""


class RestoreFailed(RestoreError):
    """The restore failed part way; the stores it found are back in their places (the message says so)."""


@dataclass
class RestoreReport:
    home: str
    users: dict[str, list[str]] = field(default_factory=dict)  # user -> days digested
    documents: list[str] = field(default_factory=list)
    settled_from_cards: list[str] = field(default_factory=list)
    decisions: dict = field(default_factory=dict)
    moved_aside: str | None = None
    problems: list[str] = field(default_factory=list)
    index: dict = field(default_factory=dict)
    seconds: dict = field(default_factory=dict)

    def to_dict(self) -> dict:
        return asdict(self)


def derived_present(ws: Workspace) -> list[Path]:
    """The derived stores this machine already holds (a restore would be made over them)."""
    stores = [ws.facts_db, ws.kb_db, ws.cards_dir, ws.summaries_dir, ws.memory_proposals_db, ws.raw_dir, ws.index_dir]
    return [p for p in stores if p.exists() and (p.is_file() or any(p.iterdir()))]


def unique_folder(parent: Path, name: str) -> Path:
    """A new, empty folder ``parent/name`` (or ``name-2``, ``name-3``, ... when that exists): two restores in the
    same second (or with the clock pinned) must never share a backup folder, or the second would move its stores
    over the first's. Created here with ``mkdir`` without ``exist_ok``, so two processes racing for a name cannot
    both get it."""
    parent.mkdir(parents=True, exist_ok=True)
    n = 1
    while True:
        target = parent / (name if n == 1 else f"{name}-{n}")
        try:
            target.mkdir()
            return target
        except FileExistsError:  # a folder or a file of that name: never reused
            n += 1


def _move_aside(ws: Workspace, prefix: str = "restore-backup", moved: list | None = None) -> tuple[Path, list[tuple[Path, Path]]]:
    """Move the derived stores into ``agent-local/<prefix>-<stamp>/`` (a new folder each time): nothing this machine
    made is deleted. Returns the folder and each (place, where it went); ``moved`` (when given) is that list as it
    grows, so a move that fails part way can be undone."""
    target = unique_folder(ws.local, f"{prefix}-{clock.now(None).strftime('%Y%m%dT%H%M%S')}")
    moved = [] if moved is None else moved
    for p in derived_present(ws) + [q for q in (ws.logs,) if q.exists()]:
        companions = [p.with_name(p.name + s) for s in ("-wal", "-shm")] if p.is_file() else []
        for src in [p, *[c for c in companions if c.exists()]]:
            dest = target / src.relative_to(ws.home)
            dest.parent.mkdir(parents=True, exist_ok=True)
            shutil.move(str(src), str(dest))
            moved.append((src, dest))
    return target, moved


def _put_back(ws: Workspace, moved: list[tuple[Path, Path]]) -> Path | None:
    """A restore that failed: what it made goes aside (``restore-failed-<stamp>/``), the stores it moved aside come
    back to their places. Returns where the failed attempt's stores are (None: it had made none)."""
    failed, partial = None, []
    if derived_present(ws) or ws.logs.exists():
        try:
            failed, partial = _move_aside(ws, "restore-failed")
        except OSError as e:
            if e.errno not in (errno.ENOSPC, errno.EDQUOT):
                raise
            # no room even for the folders to keep the attempt in (a disk that filled part way): what is left at the
            # places is only what this attempt made from agent-sync, which any restore makes again; it goes, so the
            # stores it found can come back
            for p in derived_present(ws) + [q for q in (ws.logs,) if q.exists()]:
                if p.is_dir() and not p.is_symlink():
                    shutil.rmtree(p)
                else:
                    p.unlink()
                for suffix in ("-wal", "-shm"):
                    p.with_name(p.name + suffix).unlink(missing_ok=True)
    for place, kept in moved:
        if place.is_dir() and not place.is_symlink() and not any(place.iterdir()):
            place.rmdir()  # an empty folder the attempt made (it moves only stores with something in them)
        place.parent.mkdir(parents=True, exist_ok=True)
        shutil.move(str(kept), str(place))
    return failed if partial else None


def users_with_logs(settings: Settings) -> list[str]:
    """The users whose logs agent-sync holds (one folder each under ``04_memory/working``), or the configured user
    when ``AGENTOS_LOGS_DIR`` names the folder."""
    if settings.logs_dir is not None:
        return [settings.user]
    working = Workspace(settings.home).memory / "working"
    return sorted(p.name for p in working.iterdir() if p.is_dir() and not p.name.startswith(".")) if working.is_dir() else []


def restore(settings: Settings, *, force: bool = False, log=print) -> RestoreReport:
    """Rebuild every derived store from agent-sync (see the module). Raises RestoreError when agent-sync is missing,
    or when this machine already holds derived stores and ``force`` is not given (with ``force`` they are moved aside,
    never deleted, and put back if the restore fails: RestoreFailed)."""
    ws = Workspace(settings.home)
    if not ws.sync.is_dir():
        raise RestoreError(f"no agent-sync folder at {ws.sync}: copy or sync it there first")
    report = RestoreReport(home=str(ws.home))
    present = derived_present(ws)
    if present and not force:
        names = ", ".join(str(p.relative_to(ws.home)) for p in present)
        raise RestoreError(f"this machine already holds derived stores ({names}); `agentos restore --force` moves them to "
                           "agent-local/restore-backup-<time>/ and makes them again from agent-sync")
    short = room_to_restore(ws, present)  # before the marker and before anything moves: a refusal changes nothing
    if short:
        raise RestoreError(short)
    try:
        with restore_marker(ws.home) as marker:  # held until the end: every read meanwhile says a restore is in progress
            _restore_over(settings, ws, report, bool(present), log, marker)
    except RestoreInProgress as e:  # only the marker raises it: another restore holds it
        raise RestoreError(str(e)) from None
    return report


# Room a restore needs beyond the stores it makes again: SQLite's journals, the index build's Chroma files and
# what the digest writes beside them while it runs.
RESTORE_SLACK = 16 << 20


def _size(path: Path) -> int:
    """Bytes ``path`` takes on its file system (a folder: everything below it, links not followed)."""
    try:
        st = path.lstat()
    except OSError:
        return 0
    if not path.is_dir() or path.is_symlink():
        return st.st_blocks * 512
    total = 0
    for folder, _, files in os.walk(path):
        for name in files:
            try:
                total += os.lstat(os.path.join(folder, name)).st_blocks * 512
            except OSError:
                pass
    return total


def room_to_restore(ws: Workspace, present: list[Path]) -> str | None:
    """Why agent-local's file system cannot take this restore, or None. The restore makes every derived store again
    beside the ones it keeps (moved, not copied, into restore-backup-<time>/): about as much room as they take now (on
    a new machine, as the logs and documents it reads take), and ``RESTORE_SLACK`` more. A restore refused part way for
    room left its marker, and every command then answered "a restore did not finish" (issue 42, item 9): this is asked
    before the marker is written or anything is moved, so a refusal changes nothing."""
    need = sum(_size(p) for p in present) or 2 * (_size(ws.memory / "working") + _size(ws.knowledge))
    need += RESTORE_SLACK
    why = room_problem(ws.local)
    free = free_bytes(ws.local)
    if why is None and (free is None or free >= need):
        return None
    again = "agentos restore --force" if present else "agentos restore"
    return (f"not enough room to restore: {ws.local} ({why or f'{free >> 20} MiB free'}; the restore needs about "
            f"{-(-need >> 20)} MiB to make the derived stores again beside the ones it keeps); free some space there and "
            f"run `{again}` again; nothing was changed")


def _restore_over(settings: Settings, ws: Workspace, report: RestoreReport, present: bool, log, marker) -> None:
    """Move what is present aside, restore, and put it back if the restore does not finish (the marker stays when it
    cannot all be put back: the stores are not as they were)."""
    # A writer in the middle of a day (a nightly) finishes it first; every later one sees the marker and refuses.
    moved: list[tuple[Path, Path]] = []
    with workspace_lock(ws.home):
        try:
            backup, moved = _move_aside(ws, moved=moved) if present else (None, [])
        except BaseException:
            try:  # the stores moved before the move failed go back: the restore has not started
                for place, kept in reversed(moved):
                    shutil.move(str(kept), str(place))
            except BaseException:
                marker.unfinished = True  # not as they were: every command says so until a restore finishes
            raise
    if backup is not None:
        report.moved_aside = str(backup.relative_to(ws.home))
    try:
        _restore(settings, ws, report, log)
    except BaseException as e:
        try:
            failed = _put_back(ws, moved)
        except BaseException as back:
            marker.unfinished = True
            raise RestoreFailed(f"restore failed ({type(e).__name__}: {e}), and the stores it moved aside could not all be "
                                f"put back ({type(back).__name__}: {back}): they are in {report.moved_aside}; "
                                "`agentos restore --force` makes them again from agent-sync") from e
        if backup is not None and backup.is_dir() and not any(p.is_file() for p in backup.rglob("*")):
            shutil.rmtree(backup, ignore_errors=True)  # only the empty folders the stores were moved out of
        where = f"; what it had made is in {failed.relative_to(ws.home)}" if failed else ""
        if not isinstance(e, Exception):
            raise
        why = no_room(e, ws.local) or f"{type(e).__name__}: {e}"  # a disk that filled part way: said so
        raise RestoreFailed(f"restore failed ({why}); this machine's stores are back as they were{where}") from e


def _restore(settings: Settings, ws: Workspace, report: RestoreReport, log) -> None:
    # at call time: a test replaces digest.stages.run_day to fail a restore part way (tests/cli/test_cli_journal.py)
    from agentos_mem.digest.stages import run_day

    ws.ensure()
    t0 = time.perf_counter()

    regs = registry.register_documents(settings)
    report.documents, report.problems = regs["registered"], list(regs["problems"])
    log(f"restore: {len(report.documents)} knowledge document(s) registered from their cards")
    decisions = ReplayReport()
    until = last_day(settings)
    users, folders, days_of = [], {}, {}
    for user in users_with_logs(settings):
        folders[user] = Path(settings.model_copy(update={"user": user}).working_dir())
        try:
            days_of[user] = [d for d in list_days(folders[user]) if d <= until]
        except UnsafePath as e:  # working/bob -> working/alice: never digested as bob's; the restore goes on
            report.problems.append(f"{user}: {e}")
            log(f"restore: {user}: skipped: {e}")
            continue
        users.append(user)
    with progress.stage("digesting days", total=sum(len(v) for v in days_of.values())) as st:  # every user's, one count
        for user in users:
            mine = settings.model_copy(update={"user": user})
            folder, days = folders[user], days_of[user]
            decisions.merge(replay(mine, user=user, only_undated=True))
            for day in days:
                r = run_day(mine, user, day, folder, run="restore", memories=False)
                report.problems += [f"{user} {day}: {q}" for q in r.get("quarantined") or []]
                decisions.merge(replay(mine, user=user, through=day.isoformat()))
                st.advance()
            report.users[user] = [d.isoformat() for d in days]
            log(f"restore: {user}: {len(days)} day(s) digested")
    report.seconds["digest"] = round(time.perf_counter() - t0, 2)
    decisions.merge(replay(settings))
    report.settled_from_cards = registry.settle_from_cards(settings, regs["card_status"])
    report.decisions = {"applied": decisions.applied, "waiting": decisions.waiting, "problems": decisions.problems}
    log(f"restore: {len(decisions.applied)} journal decision(s) replayed, {len(decisions.waiting)} waiting")

    t1 = time.perf_counter()
    report.index = _rebuild_indexes(settings, sorted(set(report.users) | set(users_with_records(settings))))
    report.seconds["index"] = round(time.perf_counter() - t1, 2)
    report.seconds["total"] = round(time.perf_counter() - t0, 2)


def _rebuild_indexes(settings: Settings, users: list[str]) -> dict:
    out = rebuild(settings)
    out["sections"] = embed_sections(settings)
    out["records_embedded"] = {u: embed_records(settings.model_copy(update={"user": u}), u)["embedded"] for u in users}
    return {"generation": out.get("generation"), "units": out.get("units"), "sections": out["sections"].get("sections"),
            "records_embedded": out["records_embedded"]}


def last_day(settings: Settings) -> date:
    """The last day the nightly digests (today with ``AGENTOS_INCLUDE_TODAY``): a restore stops at the same day."""
    return clock.today(settings.timezone) if settings.include_today else clock.yesterday(settings.timezone)


def users_with_records(settings: Settings) -> list[str]:
    folder = Workspace(settings.home).memory_records_dir
    try:
        return sorted(guard(folder).folders(folder)[0])  # a user folder that is a link is not a user's records
    except UnsafePath:
        return []
