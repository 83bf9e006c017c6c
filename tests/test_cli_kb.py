"""``agentos refine`` and ``agentos kb ...`` as a user runs them (the installed entry point, real files)."""

from __future__ import annotations

import json

from tests.test_cli import agentos
from tests.test_refine import _item


def test_refine_then_review_from_the_command_line(tmp_path):
    home = tmp_path / "ws"
    agentos("init", home=home)
    _item(home, "knowledge/clipping", "go.md", "# Go 并发模式\n\n用 channel 在 goroutine 之间传递数据。\n", title="Go 并发模式",
          source="https://go.dev/blog/pipelines")
    _item(home, "personal", "bob.md", "# Bob 的笔记\n\n周会改到周四。\n", title="Bob 的笔记", source_type="personal", scope="personal", owner="bob")
    out = json.loads(agentos("refine", "--json", "--quiet", home=home, AGENTOS_HOSTNAME="testhost").stdout)
    assert len(out["refined"]) == 2

    pending = json.loads(agentos("kb", "pending", "--json", home=home).stdout)
    ids = {d["title"]: d["id"] for d in pending}
    assert set(ids) == {"Go 并发模式", "Bob 的笔记"} and all(d["status"] == "pending" for d in pending)
    mine = json.loads(agentos("kb", "pending", "--json", "--mine", "--user", "bob", home=home).stdout)
    assert [d["title"] for d in mine] == ["Bob 的笔记"]  # bob is no admin: only his own

    refused = agentos("kb", "approve", ids["Bob 的笔记"], home=home, check=False)  # the default user is not bob
    assert refused.returncode == 2 and "only its owner" in refused.stderr
    agentos("kb", "approve", ids["Go 并发模式"], home=home)
    agentos("kb", "approve", ids["Bob 的笔记"], "--user", "bob", home=home)
    again = agentos("kb", "approve", ids["Go 并发模式"], home=home, check=False)
    assert again.returncode == 2 and "not pending" in again.stderr
    missing = agentos("kb", "show", "nope", home=home, check=False)
    assert missing.returncode == 2 and "no knowledge document" in missing.stderr

    listed = json.loads(agentos("kb", "list", "--json", home=home).stdout)
    assert [d["title"] for d in listed] == ["Go 并发模式"]
    assert {d["title"] for d in json.loads(agentos("kb", "list", "--json", "--user", "bob", home=home).stdout)} == {"Go 并发模式", "Bob 的笔记"}
    shown = agentos("kb", "show", ids["Go 并发模式"], home=home).stdout
    assert "ready" in shown and "reliability 0.8" in shown and "go.dev" in shown
