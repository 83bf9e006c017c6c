"""What the user removed does not come back (issue 25, item 3), through the real nightly flow: a memory record deleted
on the command line stays deleted after ``agentos restore --force``, an edit of the day's log it was made from and a
nightly run; the deletion is in the journal, not only in this machine's agent-local."""

from __future__ import annotations

import json
import re

import pytest

from agentos_mem.kernel.workspace import Workspace
from tests.kit.cli import run_cli

pytestmark = pytest.mark.usefixtures("prefect_harness")


def memories(home) -> list[dict]:
    return json.loads(run_cli("memory", "list", "--json", home=home).stdout)


def test_a_deleted_memory_stays_deleted_after_a_restore_an_edit_of_its_day_and_a_nightly(indexed_home):
    from agentos_mem.flows.nightly import nightly

    home = indexed_home
    (rec,) = [r for r in memories(home) if "coffee" in r["name"]]
    body = json.loads(run_cli("memory", "show", rec["name"], "--json", home=home).stdout)["body"]
    day, file = re.search(r"^- (\d{4}-\d{2}-\d{2}): .* \(([^():]+):\d+", body, re.M).groups()
    run_cli("memory", "delete", rec["name"], home=home)
    assert [json.loads(x)["kind"] for x in (Workspace(home).journal_dir / "testhost.jsonl").read_text(encoding="utf-8").splitlines()] \
        == ["memory.delete"]

    run_cli("restore", "--force", home=home)  # agent-local made again: the proposals store that knew of it is aside
    log = Workspace(home).working_dir("default") / file
    log.write_text("# 那一天\n\n" + log.read_text(encoding="utf-8"), encoding="utf-8")  # an edit above moves every line
    r = nightly()
    assert day in r["digest"]["days"]  # the edited day was digested again, memories included
    assert not [m for m in memories(home) if "coffee" in m["name"] or "flat white" in m["description"]]
    assert not (Workspace(home).memory_records_dir / "default" / f"{rec['name']}.md").exists()

    # a memory the user did not delete is still made from an edited day: the deletion keeps only its own lines
    others = {m["name"] for m in memories(home)}
    assert others and all(run_cli("memory", "show", n, home=home).returncode == 0 for n in others)
