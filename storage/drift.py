"""Facts that may have changed (issue 26): the user said something on a later day about the same person and topic
that no rule read as a value ("Neovim has been my daily driver since spring", "周会挪到午饭后了"). The older fact is
then no longer served as plainly current: ``may_have_changed``, with the day (``changed_on``) and the newer sentence
(``newer``) beside it, until the user states its value again or a rule reads the slot's new value.

One table in the facts database, ``drift``: one row per (older fact, newer sentence), written by the digest for the
day the sentence was said (``set_day``: a day digested again replaces that day's rows, so re-running a day changes
nothing and a removed log takes its flags with it). A flag holds while

- the older fact has not been said again since (its ``last_seen_at`` is before the newer sentence),
- the statement kept from the newer sentence, when one was, is still served (not retracted or forgotten),
- and the newer sentence was said by the time asked about (an as-of view of an earlier day shows no later flag).

The read side (``changes``, ``as_served``) only reads. ``as_served`` also serves a self-disclosure the rules kept as a
statement (``STATEMENT``) as what it is: what the user said on that day (status ``statement``), never a plain current
fact.
"""

from __future__ import annotations

import sqlite_utils

from agentos_mem.storage.migrations import Migrations

MAY_HAVE_CHANGED = "may_have_changed"
# A self-disclosure no rule read (digest.extract.disclosures), kept as a statement: its extractor, and how it is served:
# what the user said on that day, not a plain current fact (the rules are unsure of what it means).
STATEMENT = "rules:statement"
SAID = "statement"

# Its own step list in the facts database (store name ``drift``): the facts store's list stays as it was.
migrations = Migrations("drift")


@migrations
def m001_drift(db: sqlite_utils.Database) -> None:
    db.executescript(
        """
        create table drift (
            id integer primary key,
            user_id text not null,
            fact_id integer not null references facts(id),  -- the older fact that may have changed
            changed_at text not null,                       -- when the newer sentence was said (ISO, wall time)
            newer text not null,                            -- the newer sentence, masked
            newer_fact integer references facts(id),        -- the statement kept from it, when one was
            source_day text not null,
            source_file text not null,
            line_start integer not null,
            line_end integer not null,
            unique (user_id, fact_id, source_day, source_file, line_start, newer)
        );
        create index drift_fact on drift (user_id, fact_id);
        create index drift_day on drift (user_id, source_day);
        """
    )


def set_day(db: sqlite_utils.Database, user: str, day: str, flags: list[dict]) -> int:
    """The flags the newer sentences of ``day`` raise, in place of the day's earlier ones (rows that stay the same are
    left as they are). Each flag: fact_id, changed_at, newer, newer_fact, source_file, line_start, line_end. Returns how
    many rows were added."""
    key = ("fact_id", "source_file", "line_start", "newer")
    want = {tuple(f[k] for k in key): f for f in flags}
    have = {tuple(r[1:]): r[0] for r in db.execute(
        "select id, fact_id, source_file, line_start, newer from drift where user_id=? and source_day=?", [user, day]).fetchall()}
    for k, rid in have.items():
        if k not in want:
            db.execute("delete from drift where id=?", [rid])
    added = 0
    for k, f in want.items():
        if k in have:
            continue
        db.execute("insert into drift (user_id, fact_id, changed_at, newer, newer_fact, source_day, source_file, line_start, line_end)"
                   " values (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                   [user, f["fact_id"], f["changed_at"], f["newer"], f.get("newer_fact"), day, f["source_file"], f["line_start"], f["line_end"]])
        added += 1
    return added


def changes(db: sqlite_utils.Database, user: str, at: str) -> dict[int, dict]:
    """fact id -> the latest flag that holds at ``at`` (an ISO wall time): ``changed_on`` (its day), ``changed_at``,
    ``newer`` (the sentence), ``newer_fact``."""
    if "drift" not in db.table_names():
        return {}
    cur = db.execute(
        "select d.fact_id, d.changed_at, d.newer, d.newer_fact from drift d join facts f on f.id = d.fact_id"
        " left join facts n on n.id = d.newer_fact where d.user_id=? and d.changed_at <= ? and f.last_seen_at < d.changed_at"
        " and (d.newer_fact is null or n.status in ('active', 'superseded')) order by d.changed_at, d.id", [user, at])
    out: dict[int, dict] = {}
    for fid, changed_at, newer, newer_fact in cur.fetchall():
        out[fid] = {"changed_on": changed_at[:10], "changed_at": changed_at, "newer": newer, "newer_fact": newer_fact}
    return out


def is_statement(row: dict) -> bool:
    """``row`` is a self-disclosure the rules kept as a dated sentence (its value is the sentence), not a value."""
    return row.get("predicate") == "states" and row.get("extractor") == STATEMENT


def said_only(row: dict) -> bool:
    """``row`` is served as what was said on its day, never as a plain current value: a sentence kept whole (a
    statement the rules kept, or a change told in free words, which closes the fact it replaces all the same), or an
    event ("got a pair of binoculars this morning", "Priya transferred last week").

    A sentence is no one value: served as current, "笑死，Amy 说 PyCharm 太吃内存，这周 switched to VS Code" held the
    old editor beside the new one (issue 40: a claim only where subject, attribute and one value are all sure).
    Measured with `agentos bench facts`, dev / unseen: stale claims 0.034 / 0.050 -> 0.022 / 0.037, false facts among
    current ones 0.034 / 0.088 -> 0.024 / 0.056, question accuracy 0.651 / 0.413 -> 0.628 / 0.400 (three answers were
    such sentences).

    An event is something that happened on a day, told in the user's words: no attribute with one value that holds now.
    Measured with `agentos bench facts`: stale claims 0.067 -> 0.034 (dev) and 0.113 -> 0.075 (unseen); question
    accuracy 0.698 -> 0.616 (dev: its additive and repeat questions were answered by event sentences) and 0.360 ->
    0.387 (unseen); false facts among current ones 0.053 -> 0.031 (dev) and 0.136 -> 0.091 (unseen)."""
    return row.get("predicate") in ("states", "event")


def as_served(row: dict, change: dict | None) -> dict:
    """``row`` as it is served. A current fact a later sentence may have changed: status ``may_have_changed`` with
    ``changed_on``, ``newer`` and ``newer_fact``. A self-disclosure kept as a statement, or an event: status
    ``statement`` with ``said_on`` (``said_only``). Any other row as it was."""
    if row.get("status") != "active":
        return row
    if change:
        return {**row, "status": MAY_HAVE_CHANGED, "changed_on": change["changed_on"], "newer": change["newer"],
                "newer_fact": change["newer_fact"]}
    if said_only(row):
        return {**row, "status": SAID, "said_on": (row.get("valid_from") or "")[:10]}
    return row


def flag_text(row: dict) -> str:
    """How a text answer shows a served row's status: "(may have changed on 2026-05-11: “…”)", "(said on 2026-05-04)";
    empty for a plain one."""
    if row.get("status") == MAY_HAVE_CHANGED:
        return f" (may have changed on {row['changed_on']}: “{row['newer']}”)"
    if row.get("status") == SAID:
        return f" (said on {row['said_on']})"
    return ""
