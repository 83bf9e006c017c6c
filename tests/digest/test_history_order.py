"""The same logs give the same facts, whichever way they are read (issue 42, item 3).

A nightly digests what changed since the last one; a restore digests every day once, in date order. When a day before
the user's latest digested day changes (an edit, a removal, a late file), the nightly rewinds the user's facts and
digests the days again in date order (``digest.rewind``), so the two agree by construction. The property test drives
random sequences of day writes, edits, removals and nightlies, then restores a copy of agent-sync on a second
machine and compares every fact served (current and history) and every conflict."""

from __future__ import annotations

import json
import shutil
import sqlite3
from datetime import date
from pathlib import Path

from hypothesis import HealthCheck, given, settings as hsettings, strategies as st

from agentos_mem.kernel.settings import load_settings
from agentos_mem.kernel.workspace import Workspace, init_workspace

DAYS = [date(2026, 11, d) for d in range(20, 26)]
UNTIL = date(2026, 11, 29)  # yesterday at the suite's pinned clock (tests/conftest.py SUITE_NOW)

# sentences the rules read as facts of a few slots (single-valued, a list, a stop), a value repeated, changed, corrected
LINES = st.sampled_from([
    "我们的服务器配置是 8C16G。", "服务器配置还是 8C16G，够用。", "服务器配置升级到 16C32G 了。", "不对，服务器配置是 4C8G。",
    "数据库端口是 5432。", "数据库端口改成 6432 了。", "my database port is 3306 now",
    "I like jazz.", "I like tea.", "我喜欢喝咖啡。", "我不再喝咖啡了。",
    "我住在杭州。", "我搬到上海了。",
])
DAY_TEXT = st.lists(LINES, min_size=1, max_size=3)
STEP = st.one_of(
    st.tuples(st.just("write"), st.sampled_from(DAYS), DAY_TEXT),  # a new day, or an edit of one digested already
    st.tuples(st.just("remove"), st.sampled_from(DAYS), st.just([])),
    st.tuples(st.just("nightly"), st.just(None), st.just([])),
)


def write_day(folder: Path, day: date, lines: list[str]) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    text = "".join(f"- [{9 + i:02d}:00] user: {line}\n" for i, line in enumerate(lines))
    (folder / f"{day.isoformat()}.md").write_text(text, encoding="utf-8")


def nightly_digest(settings) -> dict | None:
    """The nightly's digest stage as plain calls, the functions its tasks wrap (tasks.digest.digest_days): the days that
    changed, the rewind when one is behind the history, each day then the decisions it reached. Returns the rewind."""
    from agentos_mem.digest import rewind, stages

    folder = settings.working_dir()
    days = stages.pending_days(settings, settings.user, folder, UNTIL)
    days, asked, rewound = rewind.prepare(settings, settings.user, folder, days)
    for day in days:
        stages.run_day(settings, settings.user, day, folder, run="nightly", memories=day in asked)
        rewind.decisions_reached(settings, settings.user)
    return rewound


def served_facts(home: Path) -> list[str]:
    """Every fact an agent can be served (current or history), as a user reads it: ids replaced by what they name."""
    con = sqlite3.connect(Workspace(home).facts_db)
    con.row_factory = sqlite3.Row
    rows = {r["id"]: dict(r) for r in con.execute("select * from facts where status in ('active', 'superseded')")}
    con.close()

    def named(fid):
        r = rows.get(fid)
        return r and [r["subject_key"], r["predicate"], r["object_key"], r["valid_from"]]

    keep = ("subject", "predicate", "object", "status", "valid_from", "valid_to", "explicitness", "nature", "source_day",
            "source_file", "line_start", "expires_at", "version")
    return sorted(json.dumps({**{k: r[k] for k in keep}, "confidence": round(r["confidence"], 3),
                              "superseded_by": named(r["superseded_by"])}, ensure_ascii=False, sort_keys=True) for r in rows.values())


def open_conflicts(home: Path) -> list[tuple]:
    con = sqlite3.connect(Workspace(home).facts_db)
    out = sorted(con.execute("select subject, predicate, existing_object, candidate_object, source_day, source_file from conflicts"
                             " where status='open'").fetchall())
    con.close()
    return out


def restored_copy(home: Path, where: Path) -> Path:
    from agentos_mem.restore.run import restore

    shutil.rmtree(where, ignore_errors=True)
    shutil.copytree(home / "agent-sync", where / "agent-sync")
    restore(load_settings(home=where, hostname="second", llm_base_url=None), log=lambda m: None)
    return where


@hsettings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(steps=st.lists(STEP, min_size=2, max_size=7))
def test_the_nightly_gives_the_facts_a_restore_of_the_same_logs_gives(tmp_path_factory, steps):
    root = tmp_path_factory.mktemp("order")
    home = root / "a"
    init_workspace(home)
    settings = load_settings(home=home, hostname="first", llm_base_url=None)
    folder = settings.working_dir()
    for kind, day, lines in [*steps, ("nightly", None, [])]:
        if kind == "write":
            write_day(folder, day, lines)
        elif kind == "remove":
            (folder / f"{day.isoformat()}.md").unlink(missing_ok=True)
        else:
            nightly_digest(settings)
    second = restored_copy(home, root / "b")
    assert served_facts(home) == served_facts(second)
    assert open_conflicts(home) == open_conflicts(second)


def test_an_edit_of_an_earlier_day_never_outranks_a_later_days_word(tmp_path):
    """The issue's case: 12-05 says 8C16G, 12-08 says it again; 12-05 is edited to 16C32G. The later day's word
    stands (16C32G is history, 12-05..12-08), as a restore of the same logs has it; the run says it rewound."""
    from agentos_mem.query.facts import facts_as_of

    home = tmp_path / "home"
    init_workspace(home)
    settings = load_settings(home=home, hostname="first", llm_base_url=None)
    folder = settings.working_dir()
    write_day(folder, date(2026, 11, 20), ["我们的服务器配置是 8C16G。"])
    write_day(folder, date(2026, 11, 23), ["服务器配置还是 8C16G，够用。"])
    assert nightly_digest(settings) is None  # in order: nothing to rewind
    write_day(folder, date(2026, 11, 20), ["我们的服务器配置是 16C32G。"])
    rewound = nightly_digest(settings)
    assert rewound is not None and rewound["from"] == "2026-11-20" and rewound["days"] == 2

    current = [(f["subject"], f["object"], f["status"]) for f in facts_as_of(settings)["facts"]]
    assert current == [("服务器配置", "8C16G", "active")]
    assert served_facts(home) == served_facts(restored_copy(home, tmp_path / "second"))
