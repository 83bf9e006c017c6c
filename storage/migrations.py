"""A small ordered-migrations runner for SQLite stores (in the spirit of sqlite-utils' Migrations).

Each migration is a function of the database, applied once, in order, inside a transaction; applied
names are recorded in ``_migrations``. Processes opening a new store at once (two workers' first runs) apply
each step once: the write lock is taken before a pending step is checked again.
"""

from __future__ import annotations

from collections.abc import Callable

import sqlite_utils

Migration = Callable[[sqlite_utils.Database], None]


class Migrations:
    def __init__(self, name: str):
        self.name = name
        self._steps: list[tuple[str, Migration]] = []

    def __call__(self, fn: Migration) -> Migration:
        self._steps.append((fn.__name__, fn))
        return fn

    def apply(self, db: sqlite_utils.Database) -> list[str]:
        db.execute("create table if not exists _migrations (store text, name text, applied_at text default CURRENT_TIMESTAMP, primary key (store, name))")
        done = {r[0] for r in db.execute("select name from _migrations where store = ?", [self.name]).fetchall()}
        applied = []
        for name, fn in self._steps:
            if name in done:
                continue
            with db.conn:
                db.conn.execute("begin immediate")  # waits for another process applying it (busy timeout), then sees it done
                if db.execute("select 1 from _migrations where store = ? and name = ?", [self.name, name]).fetchone():
                    continue
                fn(db)
                db.execute("insert into _migrations (store, name) values (?, ?)", [self.name, name])
            applied.append(name)
        return applied
