"""What a person watching the Prefect UI sees of a long run: each stage of the run as a progress artifact that
reaches 100 when the stage ends, and the stage's count in the run's logs (a line when it starts, one when it ends,
a throttled count between: never a line per unit)."""

from __future__ import annotations

import asyncio
from datetime import date

import pytest

pytestmark = pytest.mark.usefixtures("prefect_harness")


def _run_record(flow_run_id):
    """(the run's progress artifacts, the messages of its logs), read back through the Prefect client."""
    from prefect.client.orchestration import get_client
    from prefect.client.schemas.filters import (ArtifactFilter, ArtifactFilterFlowRunId, ArtifactFilterType, LogFilter,
                                                LogFilterFlowRunId)

    async def read():
        async with get_client() as c:
            arts = await c.read_artifacts(artifact_filter=ArtifactFilter(flow_run_id=ArtifactFilterFlowRunId(any_=[flow_run_id]),
                                                                         type=ArtifactFilterType(any_=["progress"])))
            logs = await c.read_logs(log_filter=LogFilter(flow_run_id=LogFilterFlowRunId(any_=[flow_run_id])))
            return arts, [entry.message for entry in logs]

    return asyncio.run(read())


def _flush_logs():
    """The run's log lines reach the server through a background worker: wait until it has sent them all."""
    from prefect.logging.handlers import APILogWorker

    APILogWorker.drain_all()


def test_a_backfill_and_a_rebuild_leave_progress_artifacts_at_100_and_counted_log_lines(demo_home):
    from agentos_mem.flows.daily import backfill
    from agentos_mem.flows.rebuild import index_rebuild

    state = backfill(start=date(2026, 11, 22), end=date(2026, 11, 24), return_state=True)
    assert len(state.result()["days"]) == 3
    _flush_logs()
    arts, logs = _run_record(state.state_details.flow_run_id)
    (days,) = [a for a in arts if a.key == "backfill-digesting-days-progress"]
    assert days.data == 100 and "digesting days: 3/3" in days.description
    assert "digesting days: 3 to do" in logs and any(m.startswith("digesting days: 3/3 done in") for m in logs), logs

    state = index_rebuild(return_state=True)
    r = state.result()
    assert r["status"] == "rebuilt" and r["embedded"] == r["units"] > 0
    _flush_logs()
    arts, logs = _run_record(state.state_details.flow_run_id)
    by_key = {a.key: a for a in arts}
    for stage in ("reading-cards", "tokenizing", "embedding", "writing-the-index"):
        art = by_key[f"index-rebuild-{stage}-progress"]
        assert art.data == 100, (stage, art.data, art.description)
    assert f"embedding: {r['units']}/{r['units']}" in by_key["index-rebuild-embedding-progress"].description
    assert f"writing the index: {r['units']}/{r['units']}" in by_key["index-rebuild-writing-the-index-progress"].description
    counted = [m for m in logs if m.startswith("embedding: ")]
    assert counted[0] == f"embedding: {r['units']} to do" and counted[-1].startswith(f"embedding: {r['units']}/{r['units']} done in")
