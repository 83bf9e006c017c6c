"""A person's second machine, through the commands a person types: machine A runs the demo's nights (its knowledge
approval included) and makes decisions; B gets a copy of A's agent-sync and runs ``agentos restore``; both answer
the demo's questions alike. Then each adds a day on its own, B forgets a fact, the two sync, and after a nightly
run each they hold the same facts and give the same answers, and their agent-sync folders are the same files.

(Ids aside: a fact's number is each machine's own, and a memory card's name starts with the host that built it.)"""

from __future__ import annotations

import json
import shutil

from tests.kit.cli import agentos, run_cli
from tests.kit.machines import conflicts_ids_aside, facts_ids_aside, printed_ids_aside, sqlite_files, sync, synced_bytes

HOSTS = ["laptop", "desktop"]
QUESTIONS = [["query", "服务器现在是什么配置？"], ["query", "what is the database port?"], ["query", "我喜欢喝什么？"],
             ["query", "which database did we pick, and why?", "--raw", "--budget", "300"], ["query", "我的数据库密码是多少？"],
             ["query", "what is the weather on Mars?"], ["facts", "list"], ["facts", "conflicts"], ["kb", "list"],
             ["kb", "ask", "How do I create the autoscaler?"]]


def answers(home, host, extra=(), **env) -> list[str]:
    """What each question prints, read through the command line in this process (``run_cli``: the reads start no
    Prefect, and a process a question would cost ~2 s each; a warm query service would be one machine's too)."""
    out = []
    for argv in [*QUESTIONS, *extra]:
        args = [*argv, "--in-process"] if argv[0] == "query" else argv
        out.append(printed_ids_aside(run_cli(*args, home=home, AGENTOS_HOSTNAME=host, **env).stdout, HOSTS))
    return out


def test_a_second_machine_restored_from_agent_sync_answers_alike_and_both_converge_after_a_sync(tmp_path, prefect_server):
    a, b = tmp_path / "a", tmp_path / "b"
    server = {"PREFECT_API_URL": prefect_server}  # the flows run on a running Prefect server, as with `agentos serve`
    agentos("demo", home=a, AGENTOS_HOSTNAME="laptop", **server)  # init, the nightly flow, reads, and a knowledge approval
    facts = json.loads(run_cli("facts", "list", "--json", home=a).stdout)
    coffee = next(f for f in facts["facts"] if f["object"] == "coffee")
    run_cli("facts", "forget", str(coffee["id"]), "--reason", "switched to tea", home=a, AGENTOS_HOSTNAME="laptop")
    (java,) = [c for c in json.loads(run_cli("facts", "conflicts", "--json", home=a).stdout)["conflicts"] if c["candidate_object"] == "Java"]
    run_cli("facts", "resolve", str(java["id"]), "--accept", home=a, AGENTOS_HOSTNAME="laptop")
    run_cli("rebuild", "--direct", home=a, AGENTOS_HOSTNAME="laptop")  # what A's next night would do
    kinds = [json.loads(x)["kind"] for x in (a / "agent-sync/04_memory/journal/laptop.jsonl").read_text(encoding="utf-8").splitlines()]
    assert kinds == ["kb.decide", "fact.forget", "fact.resolve"]
    assert sqlite_files(a / "agent-sync") == []

    # -- B has only agent-sync -------------------------------------------------------------------------------------
    shutil.copytree(a / "agent-sync", b / "agent-sync")
    restored = json.loads(run_cli("restore", "--json", home=b, AGENTOS_HOSTNAME="desktop").stdout)
    assert len(restored["decisions"]["applied"]) == 3 and restored["decisions"]["waiting"] == []
    assert len(restored["documents"]) == 3 and restored["index"]["units"] > 0
    assert facts_ids_aside(b) == facts_ids_aside(a) and conflicts_ids_aside(b) == conflicts_ids_aside(a)
    assert answers(b, "desktop") == answers(a, "laptop")
    assert synced_bytes(b) == synced_bytes(a)  # the restore wrote nothing a sync would carry back

    # -- each adds a day on its own, B forgets a fact, they sync, each runs its nightly ----------------------------
    logs = "agent-sync/04_memory/working/default"
    (a / logs / "2026-11-30.laptop.md").write_text("- [20:00] 用户: Redis 的最大内存调到 8GB 了。\n- [20:01] 助手: 好的，记下了。\n", encoding="utf-8")
    (b / logs / "2026-11-30.desktop.md").write_text("- [21:00] 用户: 我的新猫叫年糕。\n- [21:01] 助手: 好名字！\n", encoding="utf-8")
    clipping = a / "agent-sync/03_knowledge/00_stream/inbox/personal/redis-eviction.md"  # the owner decides it
    clipping.write_text("---\nsource: https://redis.io/docs/latest/develop/reference/eviction/\ntitle: Redis eviction\n---\n# Redis eviction\n\n"
                        "When maxmemory is reached, Redis evicts keys by the maxmemory-policy, for example allkeys-lru.\n", encoding="utf-8")
    day_after = {"AGENTOS_NOW": "2026-12-01T09:00:00+08:00"}
    agentos("nightly", home=a, AGENTOS_HOSTNAME="laptop", **day_after, **server)  # refines the clipping into a pending document
    agentos("nightly", home=b, AGENTOS_HOSTNAME="desktop", **day_after, **server)
    (new,) = [d["id"] for d in json.loads(run_cli("kb", "pending", "--json", home=a, **day_after).stdout) if "Redis" in d["title"]]
    run_cli("kb", "approve", new, home=a, AGENTOS_HOSTNAME="laptop", **day_after)  # a decision on A ...
    # ... and one on B, before they sync
    plans = next(f for f in json.loads(run_cli("facts", "list", "--json", home=b, **day_after).stdout)["facts"] if f["object"] == "上线")
    run_cli("facts", "forget", str(plans["id"]), "--reason", "shipped", home=b, AGENTOS_HOSTNAME="desktop", **day_after)
    assert sync(a, b) > 0
    later = {"AGENTOS_NOW": "2026-12-01T10:00:00+08:00"}
    ra = json.loads(agentos("nightly", "--json", home=a, AGENTOS_HOSTNAME="laptop", **later, **server).stdout)
    rb = json.loads(agentos("nightly", "--json", home=b, AGENTOS_HOSTNAME="desktop", **later, **server).stdout)
    assert any("forgot fact" in x for x in ra["journal"]["applied"])  # B's forget, on A
    assert any("approved" in x for x in rb["journal"]["applied"])  # A's approval, on B
    assert any(d.startswith("laptop_") for d in rb["journal"]["documents"])  # the document A refined, registered on B
    assert ra["digest"]["days"] == rb["digest"]["days"] == ["2026-11-30"]  # the day's other file arrived on each

    assert facts_ids_aside(a) == facts_ids_aside(b) and conflicts_ids_aside(a) == conflicts_ids_aside(b)
    ids = lambda home: sorted(d["id"] for d in json.loads(run_cli("kb", "pending", "--json", home=home, **later).stdout))  # noqa: E731
    assert ids(a) == ids(b)  # no document twice: B took A's card in before refining the same clipping
    extra = [["query", "Redis 的最大内存是多少？"], ["query", "我的猫叫什么？"], ["kb", "ask", "What does Redis do when maxmemory is reached?"]]
    assert answers(a, "laptop", extra, **later) == answers(b, "desktop", extra, **later)
    assert synced_bytes(a) == synced_bytes(b)
    assert sqlite_files(a / "agent-sync") == sqlite_files(b / "agent-sync") == []
