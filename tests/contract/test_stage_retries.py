"""The retries a day's stage task declares are the ones that run, in every flow that digests a day: a real Prefect run
(the session's temporary server) where ``write-cards-l1`` fails as often as it may be retried, then works. The day
comes through whole, its stages before the failing one run once (the stage was retried, not the day)."""

from datetime import date

import pytest

pytestmark = pytest.mark.usefixtures("prefect_harness")

FLAKY_DAY = date(2026, 11, 21)


def flaky_cards(monkeypatch) -> dict[str, list[date]]:
    """``write_cards`` failing on ``FLAKY_DAY`` as many times as its task retries, then the real one; and the days
    each of ``read_day`` and ``write_cards`` was called for."""
    import agentos_mem.digest.stages
    from agentos_mem import digest
    from agentos_mem.tasks.digest import cards_step

    calls: dict[str, list[date]] = {"read": [], "cards": []}
    real_read, real_cards = digest.stages.read_day, digest.stages.write_cards

    def read_day(settings, user, day, *a, **k):
        calls["read"].append(day)
        return real_read(settings, user, day, *a, **k)

    def write_cards(settings, inp, *a, **k):
        calls["cards"].append(inp.day)
        if inp.day == FLAKY_DAY and calls["cards"].count(FLAKY_DAY) <= cards_step.retries:
            raise RuntimeError("the disk was busy for a moment")
        return real_cards(settings, inp, *a, **k)

    monkeypatch.setattr(digest.stages, "read_day", read_day)
    monkeypatch.setattr(digest.stages, "write_cards", write_cards)
    return calls


def logs(tmp_path):
    folder = tmp_path / "logs"
    folder.mkdir()
    for d, text in ((20, "我叫林晓。"), (21, "数据库端口是 5432。"), (22, "服务器配置是 8C16G。")):
        (folder / f"2026-11-{d}.md").write_text(f"[09:00] 用户: {text}\n", encoding="utf-8")
    return folder


def assert_retried_not_failed(report: dict, calls: dict[str, list[date]]) -> None:
    from agentos_mem.tasks.digest import cards_step

    assert cards_step.retries >= 1
    per_day = {d["day"]: d for d in report["per_day"]}
    assert [d["extractor"] for d in per_day.values()] == ["rules"] * 3 and report["quarantined"] == []
    assert per_day[FLAKY_DAY.isoformat()]["facts_added"] == 1 and per_day[FLAKY_DAY.isoformat()]["cards"] == 1
    assert calls["cards"].count(FLAKY_DAY) == cards_step.retries + 1  # every declared retry, then the one that worked
    assert calls["read"].count(FLAKY_DAY) == 1  # the stage was retried, not the whole day


def test_a_stage_tasks_retries_apply_inside_nightly(ws, tmp_path, monkeypatch):
    from agentos_mem.flows.nightly import nightly

    calls = flaky_cards(monkeypatch)
    r = nightly(logs_dir=str(logs(tmp_path)))
    assert_retried_not_failed(r["digest"], calls)


def test_a_stage_tasks_retries_apply_inside_backfill(ws, tmp_path, monkeypatch):
    from agentos_mem.flows.daily import backfill

    calls = flaky_cards(monkeypatch)
    r = backfill(start=date(2026, 11, 20), end=date(2026, 11, 22), logs_dir=str(logs(tmp_path)))
    assert_retried_not_failed(r, calls)
