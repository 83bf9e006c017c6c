"""Who may write now, across hosts: Prefect's global concurrency limits, limit 1, one per user and one per workspace.

A host's file lock (``kernel.workspace.workspace_lock``) only sees the processes of that host (flock on a network
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
"""

from __future__ import annotations

import hashlib
import re
from contextlib import contextmanager

from prefect.client.orchestration import get_client
from prefect.concurrency.sync import concurrency
from prefect.exceptions import ObjectAlreadyExists, ObjectNotFound

from kernel.settings import Settings
from kernel.workspace import workspace_key


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


@contextmanager
def _hold(names: list[str]):
    ensure_limits(names)
    # the lease is renewed while a day runs; if renewal fails the run stops (strict) rather than write unguarded
    with concurrency(names, occupy=1, strict=True):
        yield


@contextmanager
def user_writer(settings: Settings, user: str):
    """One writer of ``user``'s memory at a time, on every host."""
    with _hold([user_limit(settings, user)]):
        yield


@contextmanager
def workspace_writer(settings: Settings):
    """One writer of what the workspace's users share at a time, on every host."""
    with _hold([workspace_limit(settings)]):
        yield


@contextmanager
def index_writer(settings: Settings):
    """One build of the workspace's indexes at a time, on every host."""
    with _hold([index_limit(settings)]):
        yield
