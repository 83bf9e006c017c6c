"""``agentos demo``: init --demo, the nightly flow, then a few reads (what ``make run`` shows).

Its steps are other commands, run through the ``main`` that cli.main hands to ``add_parser`` (this module
never imports cli.main)."""

from __future__ import annotations

from datetime import date, timedelta
from functools import partial

from agentos_mem.cli.common import add_command, settings_from_args
from agentos_mem.demo import write_demo_materials, write_demo_memories

COMMANDS = ("demo",)


def cmd_demo(args, main) -> int:
    """init --demo, the nightly flow, then a few reads: what `make run` shows; ``main`` runs each step."""
    import shlex

    settings = settings_from_args(args)
    steps = [["init", "--demo"], ["nightly"], ["facts", "list"]]
    for argv in steps:
        print(f"\n$ agentos {shlex.join(argv)}", flush=True)
        if rc := main(argv):
            return rc
        if argv[0] == "init" and write_demo_memories(settings.home, settings.user):
            print("(demo: a memory record written by hand, records/default/回答风格.md, and a memory card in the inbox)")
        if argv[0] == "init" and write_demo_materials(settings.home):
            print("(demo: knowledge material in agent-local/materials/: two web clippings, a personal note and a PDF)")
    # lazy: storage.facts (8 modules) stays off `agentos` start-up
    from agentos_mem.storage.facts import open_facts

    store = open_facts(settings)  # pick the most-revised values of the demo to show their history
    subjects = [r[0] for r in store.db.execute(
        "select subject, count(*) n from facts where user_id=? and predicate='value' group by subject_key order by n desc, subject limit 2", [settings.user]).fetchall()]
    first_day = store.db.execute("select min(source_day) from facts where user_id=?", [settings.user]).fetchone()[0]
    store.close()
    reads = [["facts", "history", s] for s in subjects]
    if first_day:
        reads.append(["facts", "list", "--as-of", (date.fromisoformat(first_day) + timedelta(days=1)).isoformat()])
    reads.append(["facts", "conflicts"])
    reads += [["doctor"], ["query", "服务器现在是什么配置？"], ["query", "what is the database port?"], ["query", "我喜欢喝什么？"],
              ["query", "which database did we pick, and why?", "--raw", "--budget", "300"], ["query", "我的数据库密码是多少？"],
              ["query", "what is the weather on Mars?"],
              ["memory", "list"], ["memory", "proposals"], ["memory", "recall", "帮我写这周的周报"],
              ["memory", "recall", "what coffee do I like?"], ["kb", "pending"]]
    for argv in reads:
        print(f"\n$ agentos {shlex.join(argv)}", flush=True)
        if rc := main(argv):
            return rc
    # lazy: knowledge.decisions (32 modules) stays off `agentos` start-up
    from agentos_mem.knowledge.decisions import pending

    waiting = pending(settings, settings.user)  # the owner publishes the first pending document
    for argv in ([["kb", "approve", waiting[0]["id"]], ["kb", "show", waiting[0]["id"]]] if waiting else []) + [["kb", "list"]]:
        print(f"\n$ agentos {shlex.join(argv)}", flush=True)
        if rc := main(argv):
            return rc
    return 0


def add_parser(sub, main) -> None:
    """Register ``demo``; ``main(argv) -> exit code`` runs each of its steps."""
    add_command(sub, "demo", partial(cmd_demo, main=main), "init --demo, run the nightly flow and print a few queries (what `make run` does)",
                json_flag=False)
