"""Who may write now, across hosts: Prefect's global concurrency limits, limit 1, one per user and one per workspace.

A host's file lock (``storage.guards.workspace_lock``) only sees the processes of that host (flock on a network
mount is not to be trusted); workers on two hosts sharing one workspace need the server to decide. Two limits,
always taken in this order (so never a deadlock):

- ``agentos-user-<ws>-<user>``: held across a user's whole digest (the pending days are found inside it, then
  digested in date order): one user's runs one after the other on every host, so a second run finds the days done.
- ``agentos-ws-<ws>``: held by each write to what the users share, a day at a time (every user's facts are in one
  SQLite file, which takes no concurrent writers from two hosts over a network file system), by the journal
  replay, by collect and refine (the inbox, the knowledge base) and by the index rebuild's snapshot (so it never
  reads half a day). Between days another user's run gets its turn.
- ``agentos-index-<ws>``: held by a whole index rebuild (taken before the workspace's): one build of the indexes at
  a time on every host, while digests go on beside its embedding.

A limit that does not exist would let everyone through (Prefect only warns), so each is created before use, and
slots are taken with ``strict=True``: a missing limit is an error, never a silent free-for-all.

A killed run never blocks the next one. Each slot is first taken on this host through its lock file
(``tasks.slots``: the operating system drops it when the holder dies, kill -9 included), so a waiting run says whom it waits
for and stops on SIGTERM or Ctrl-C. On Prefect's ephemeral server the database is this host's alone
(``agent-local/runtime/prefect``) and every run that uses it holds the lock file while it holds the slot: a run that
has the lock and still finds the slot counted taken knows the count is a dead run's and gives it back. On a shared
server (``agentos serve``, ``PREFECT_API_URL``) another host may hold it: there the run waits, in short
interruptible polls, for the server's lease to expire (Prefect's repossessor gives a dead holder's slot back after
``LEASE_SECONDS``).
"""

from __future__ import annotations

import hashlib
import re
import sys
import time
from contextlib import ExitStack, contextmanager

from prefect.client.orchestration import get_client
from prefect.concurrency.sync import concurrency
from prefect.exceptions import ObjectAlreadyExists, ObjectNotFound

from agentos_mem.kernel.settings import Settings
from agentos_mem.tasks.slots import SlotLock
from agentos_mem.kernel.workspace import workspace_key

# A held slot's lease is renewed every 3/4 of this; on a shared server a dead holder's slot is free again after it.
LEASE_SECONDS = 120


def _slug(user: str) -> str:
    """Limit names allow only some characters: a user id that is not plain lowercase ASCII gets a short hash."""
    slug = re.sub(r"[^a-z0-9]+", "-", user.lower()).strip("-")
    if not slug or slug != user.lower():
        slug = (slug + "-" if slug else "u") + hashlib.sha1(user.encode()).hexdigest()[:8]
    return slug


def workspace_limit(settings: Settings) -> str:
    return f"agentos-ws-{workspace_key(settings.home)}"


def index_limit(settings: Settings) -> str:
    return f"agentos-index-{workspace_key(settings.home)}"


def user_limit(settings: Settings, user: str) -> str:
    return f"agentos-user-{workspace_key(settings.home)}-{_slug(user)}"


def ensure_limits(names: list[str]) -> None:
    """Create each limit with limit 1 unless it exists (idempotent; two hosts creating one at once is fine)."""
    from prefect.client.schemas.actions import GlobalConcurrencyLimitCreate

    with get_client(sync_client=True) as client:
        for name in names:
            try:  # read first: a create that collides is an error in the database's log on every run
                client.read_global_concurrency_limit_by_name(name)
            except ObjectNotFound:
                try:
                    client.create_global_concurrency_limit(GlobalConcurrencyLimitCreate(name=name, limit=1))
                except ObjectAlreadyExists:
                    pass


def _say(text: str) -> None:
    print(f"[agentos] {text}", file=sys.stderr, flush=True)


def _ephemeral() -> bool:
    """Whether the flows talk to Prefect's ephemeral server (a database of this host's alone), not a shared one."""
    from prefect.settings import PREFECT_API_URL

    return not PREFECT_API_URL.value()


def _give_back_dead(client, name: str, lock: SlotLock) -> None:
    """With the host's lock on ``name`` held and an ephemeral server: a slot still counted taken is a dead run's."""
    from prefect.client.schemas.actions import GlobalConcurrencyLimitUpdate

    limit = client.read_global_concurrency_limit_by_name(name)
    if limit.active_slots <= 0:
        return
    who = lock.previous.describe() if lock.previous else "a run that left no record"
    _say(f"slot {name} was still taken by {who}, which no longer runs (killed, or it stopped before it could give the "
         "slot back): freed")
    client.update_global_concurrency_limit(name, GlobalConcurrencyLimitUpdate(active_slots=0))


def _wait_on_server(client, name: str) -> None:
    """On a shared server: wait, in interruptible polls, until the limit has a free slot (another host's run holds
    it, or a dead run's lease has not expired yet)."""
    told = False
    while True:
        limit = client.read_global_concurrency_limit_by_name(name)
        if limit.active_slots < limit.limit:
            return
        if not told:
            _say(f"waiting for slot {name}: held on the Prefect server by a run of another host, or by a run that "
                 f"was killed (its lease expires within {LEASE_SECONDS} s); Ctrl-C or SIGTERM stops the wait")
            told = True
        time.sleep(SlotLock.POLL_SECONDS * 2)


def _take_locks(stack: ExitStack, settings: Settings, names: list[str]) -> list[SlotLock]:
    locks = []
    for name in names:
        def on_wait(holder, name=name):
            who = holder.describe() if holder else "another run of this host"
            _say(f"waiting for slot {name}: held by {who}; Ctrl-C or SIGTERM stops the wait")

        lock = SlotLock(settings.home, name).take(on_wait)
        stack.callback(lock.release)
        locks.append(lock)
    return locks


@contextmanager
def _hold(settings: Settings, names: list[str]):
    ensure_limits(names)
    with ExitStack() as stack:
        locks = _take_locks(stack, settings, names)
        ephemeral = _ephemeral()
        with get_client(sync_client=True) as client:
            for name, lock in zip(names, locks):
                if ephemeral and lock.held:
                    _give_back_dead(client, name, lock)
                else:
                    _wait_on_server(client, name)
        while True:
            # A bounded attempt: one left waiting inside Prefect blocks the process's exit (its at-exit drain waits
            # for it), so a stopped run would hang instead of ending. The lease is renewed while the slot is held; if
            # renewal fails the run stops (strict) rather than write unguarded. Given back before the lock files.
            try:
                stack.enter_context(concurrency(names, occupy=1, strict=True, lease_duration=LEASE_SECONDS,
                                                timeout_seconds=30))
                break
            except TimeoutError:
                _say(f"still waiting for slot(s) {', '.join(names)} on the Prefect server")
        yield


@contextmanager
def user_writer(settings: Settings, user: str):
    """One writer of ``user``'s memory at a time, on every host."""
    with _hold(settings, [user_limit(settings, user)]):
        yield


@contextmanager
def workspace_writer(settings: Settings):
    """One writer of what the workspace's users share at a time, on every host."""
    with _hold(settings, [workspace_limit(settings)]):
        yield


@contextmanager
def index_writer(settings: Settings):
    """One build of the workspace's indexes at a time, on every host."""
    with _hold(settings, [index_limit(settings)]):
        yield
