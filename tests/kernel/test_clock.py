""""Now" and "today" are the workspace's (Asia/Shanghai by default), never the host's.

The host runs on UTC here, as in CI. Between 16:00 and 24:00 UTC the two disagree on the day, and at a month
or a year end on the month and the year too. Each date-sensitive behaviour runs at three instants: a month
end that is also a UTC/Asia-Shanghai day split, a year end split the same way, and an ordinary afternoon.
``AGENTOS_NOW`` pins the workspace's clock for the test process and every process it starts.
"""

from __future__ import annotations

import ast
import json
import time
from datetime import date, datetime, timedelta
from pathlib import Path

import pytest

from agentos_mem.kernel import clock
from tests.kit.cli import agentos
from tests.kit.cli import run_cli
from tests.kit.importgraph import PACKAGES, folder

ROOT = Path(__file__).resolve().parents[2]

# (instant as the host sees it in UTC, the workspace's day in Asia/Shanghai)
INSTANTS = {
    "month-end-split": ("2026-11-30T17:30:00+00:00", date(2026, 12, 1)),
    "year-end-split": ("2026-12-31T18:05:00+00:00", date(2027, 1, 1)),
    "same-day": ("2026-06-15T04:00:00+00:00", date(2026, 6, 15)),
}


@pytest.fixture(params=list(INSTANTS), ids=list(INSTANTS))
def at(request, monkeypatch):
    """The workspace's clock pinned at one instant, the host on UTC (for this process and its children)."""
    instant, shanghai_day = INSTANTS[request.param]
    monkeypatch.setenv("AGENTOS_NOW", instant)
    monkeypatch.setenv("TZ", "UTC")
    time.tzset()
    yield datetime.fromisoformat(instant), shanghai_day
    monkeypatch.undo()
    time.tzset()


# -- the clock itself -------------------------------------------------------------------------------------------
def test_today_is_the_workspace_day_not_the_hosts(at):
    instant, day = at
    assert clock.today("Asia/Shanghai") == day
    assert clock.yesterday("Asia/Shanghai") == day - timedelta(days=1)
    assert clock.today("UTC") == instant.date()  # the host's day, for contrast: a different one at a split
    assert clock.now("Asia/Shanghai").utcoffset() == timedelta(hours=8)
    assert clock.wall_iso("Asia/Shanghai").startswith(day.isoformat() + "T")
    assert datetime.fromisoformat(clock.stamp("Asia/Shanghai")) == instant  # the same instant, with its offset


@pytest.mark.parametrize("host_tz", ["UTC", "America/Los_Angeles", "Pacific/Kiritimati"])
def test_the_hosts_time_zone_changes_nothing(monkeypatch, host_tz):
    monkeypatch.setenv("AGENTOS_NOW", "2026-12-31T18:05:00+00:00")
    monkeypatch.setenv("TZ", host_tz)
    time.tzset()
    try:
        assert clock.today("Asia/Shanghai") == date(2027, 1, 1)
        assert clock.wall_iso("Asia/Shanghai") == "2027-01-01T02:05:00"
    finally:
        monkeypatch.undo()
        time.tzset()


def test_a_pin_names_its_offset(monkeypatch):
    monkeypatch.setenv("AGENTOS_NOW", "2026-12-01T00:30:00+08:00")
    assert clock.now("UTC").isoformat() == "2026-11-30T16:30:00+00:00"
    monkeypatch.setenv("AGENTOS_NOW", "2026-11-30T16:30:00Z")
    assert clock.today("Asia/Shanghai") == date(2026, 12, 1)
    monkeypatch.setenv("AGENTOS_NOW", "2026-12-01T00:30:00")  # which zone's half past midnight?
    with pytest.raises(clock.ClockError, match="no UTC offset"):
        clock.today("Asia/Shanghai")


def test_a_bad_pin_or_zone_names_itself(monkeypatch):
    monkeypatch.setenv("AGENTOS_NOW", "yesterday-ish")
    with pytest.raises(clock.ClockError, match="AGENTOS_NOW"):
        clock.today("Asia/Shanghai")
    monkeypatch.delenv("AGENTOS_NOW")
    with pytest.raises(clock.ClockError, match="Mars/Olympus"):
        clock.today("Mars/Olympus")


def test_unpinned_it_is_the_system_clock(monkeypatch):
    monkeypatch.delenv("AGENTOS_NOW", raising=False)
    from zoneinfo import ZoneInfo

    before = datetime.now(ZoneInfo("Asia/Shanghai")).replace(microsecond=0)
    got = clock.now("Asia/Shanghai")
    assert before <= got <= datetime.now(ZoneInfo("Asia/Shanghai"))


# -- nothing else asks the host for the time --------------------------------------------------------------------
PRODUCTION = [p for p in PACKAGES if p != "bench"]  # every production package (the benchmarks time themselves)


def _host_clock_calls(path: Path) -> list[str]:
    """Calls that read the host's day or local time: date.today(), datetime.now() / today() without a
    zone or with one that is not UTC (those go through kernel.clock), time.localtime(), .astimezone()."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    out = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Attribute):
            continue
        name, target = node.func.attr, ast.unparse(node.func.value)
        utc = bool(node.args) and ast.unparse(node.args[0]) in ("timezone.utc", "UTC", "_dt.timezone.utc")
        if (name == "today" and target.endswith(("date", "datetime"))) or name in ("utcnow", "localtime") \
                or (name == "now" and target.endswith("datetime") and not utc) or (name == "astimezone" and not node.args):
            out.append(f"{path.relative_to(ROOT) if path.is_relative_to(ROOT) else path}:{node.lineno}: {ast.unparse(node)}")
    return out


def test_only_the_clock_module_reads_the_time_of_day():
    found = [hit for pkg in PRODUCTION for path in sorted(folder(pkg).rglob("*.py"))
             if path != folder("kernel") / "clock.py" for hit in _host_clock_calls(path)]
    assert not found, "use kernel.clock (the workspace's time zone):\n" + "\n".join(found)


def test_the_contract_check_sees_a_host_clock_call(tmp_path):
    bad = tmp_path / "_clock_probe_for_test.py"
    try:
        bad.write_text("import datetime\nx = datetime.date.today()\ny = datetime.datetime.now()\nz = datetime.datetime.now(tz)\n")
        assert len(_host_clock_calls(bad)) == 3
    finally:
        bad.unlink()


# -- what a user sees at those instants (the real CLI and the real nightly flow, host on UTC) ---------------------
def cli(*args, home, check=True):
    """The same command in this process, through cli.main.main."""
    return run_cli(*args, home=home, check=check, AGENTOS_HOSTNAME="testhost")


def test_init_demo_ends_on_the_workspaces_yesterday(at, tmp_path):
    _, today = at
    cli("init", "--demo", home=tmp_path / "h")
    days = sorted(p.name[:10] for p in (tmp_path / "h/agent-sync/04_memory/working/default").iterdir())
    assert days[-1] == (today - timedelta(days=1)).isoformat()


def _log(folder: Path, day: date, lines: list[str]) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{day.isoformat()}.md").write_text("\n".join(lines) + "\n", encoding="utf-8")


@pytest.mark.e2e  # the nightly flow (Prefect) as the installed script; init, facts, rebuild and query in this process
def test_nightly_digests_up_to_the_workspaces_yesterday_and_todays_facts_are_current(at, tmp_path, prefect_server):
    instant, today = at
    home = tmp_path / "h"
    cli("init", home=home)
    logs = home / "agent-sync/04_memory/working/default"
    _log(logs, today - timedelta(days=2), ["[09:30] 用户: 服务器配置是 4C8G，目前两台。"])
    _log(logs, today - timedelta(days=1), ["[10:10:00] user: 数据库端口是 5432，就是默认的那个。"])
    # Today's log, written minutes before the pinned instant (its wall time in Shanghai is after midnight).
    _log(logs, today, ["[00:10] 用户：服务器配置升级到 8C16G 了，昨晚运维刚弄好。"])

    # in a process of its own (Prefect's settings are process-wide), on a running server (as with `agentos serve`):
    # the clock is the pinned one all the same
    agentos("nightly", "--quiet", home=home, AGENTOS_HOSTNAME="testhost", PREFECT_API_URL=prefect_server)
    digested = {r[0] for r in _facts_db_days(home)}
    assert digested == {(today - timedelta(days=2)).isoformat(), (today - timedelta(days=1)).isoformat()}

    current = json.loads(cli("facts", "list", "--json", home=home).stdout)["facts"]
    assert ("服务器配置", "4C8G") in {(f["subject"], f["object"]) for f in current}

    from agentos_mem.digest.stages import digest_day
    from agentos_mem.kernel.settings import load_settings

    settings = load_settings(home=home, hostname="testhost")
    digest_day(settings, "default", today, logs)  # what `nightly --include-today` adds (its stages, without Prefect)
    current = json.loads(cli("facts", "list", "--json", home=home).stdout)["facts"]
    values = {(f["subject"], f["object"]) for f in current if f["predicate"] == "value"}
    assert ("服务器配置", "8C16G") in values and ("服务器配置", "4C8G") not in values, values
    cli("rebuild", "--direct", home=home)
    answer = json.loads(cli("query", "服务器现在是什么配置？", "--json", "--in-process", home=home).stdout)
    assert "8C16G" in json.dumps(answer, ensure_ascii=False)


def _facts_db_days(home: Path):
    import sqlite3

    con = sqlite3.connect(home / "agent-local/memory/facts.db")
    try:
        return con.execute("select distinct source_day from facts").fetchall()
    finally:
        con.close()


def test_a_document_valid_until_today_is_still_served_today(at, tmp_path):
    from agentos_mem.storage.kb_store import KBStore

    _, today = at
    store = KBStore(tmp_path / "kb.db", timezone="Asia/Shanghai")
    for i, until in enumerate([today, today - timedelta(days=1)]):
        store.put({"id": f"d{i}", "path": f"x/d{i}.md", "title": f"doc {i}", "category": "x", "scope": "system", "owner": "default",
                      "status": "ready", "nature": "technical", "confidence": 0.9, "reliability": 0.9,
                   "valid_until": until.isoformat(), "version": 1, "content_hash": f"h{i}"})
    assert [d["id"] for d in store.visible("default")] == ["d0"]
