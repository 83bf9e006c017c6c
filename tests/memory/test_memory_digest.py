"""User memory inside the nightly chain: extraction in the digest, memory cards from the inbox, the artifacts."""

from __future__ import annotations

import json
from pathlib import Path

from tests.conftest import DEMO_END, snapshot


def _settings():
    from agentos_mem.kernel.settings import load_settings

    return load_settings(llm_base_url=None)


def _digest_all(settings) -> list[dict]:
    from agentos_mem.digest.stages import pending_days, run_day

    folder = settings.working_dir()
    return [run_day(settings, settings.user, d, folder) for d in pending_days(settings, settings.user, folder, DEMO_END)]


def _records(home: Path, user: str = "default") -> dict[str, str]:
    folder = home / "agent-sync/04_memory/records" / user
    return {p.stem: p.read_text(encoding="utf-8") for p in sorted(folder.glob("*.md"))} if folder.is_dir() else {}


def test_digest_writes_lasting_memories_and_a_rerun_changes_nothing(demo_home):
    from agentos_mem.storage.memory_records import open_book

    settings = _settings()
    results = _digest_all(settings)
    created = [n for r in results for n in r["memories"]["created"]]
    book = open_book(settings)
    recs = {r.name: r for r in book.list("default")}
    assert set(created) == set(recs) and all(r.source == "auto" for r in recs.values())
    descriptions = " | ".join(r.description for r in recs.values())
    # the standing instruction (以后…都) and who the user is become memories, each with its source line
    assert "请以后都用中文回答" in descriptions and "后端工程师" in descriptions
    feedback = next(r for r in recs.values() if "请以后都用中文回答" in r.description)
    assert feedback.type == "feedback" and "2026-11-22.md:10" in feedback.body
    # facts of the day (ports, server sizes, release dates) are facts, not user memories
    assert "5432" not in descriptions and "8C16G" not in descriptions

    before = snapshot(demo_home)
    for day in {r["day"] for r in results}:  # digest every day again
        from datetime import date

        from agentos_mem.digest.stages import run_day

        again = run_day(settings, "default", date.fromisoformat(day), settings.working_dir())
        assert again["memories"]["created"] == again["memories"]["updated"] == again["memories"]["proposals"] == []
    assert snapshot(demo_home) == before


def test_a_manual_memory_is_proposed_to_never_changed(demo_home):
    from agentos_mem.storage.memory_records import open_book

    settings = _settings()
    book = open_book(settings)
    # the user already wrote this down by hand, in slightly different words
    book.create("default", "answer-language", "请以后都用中文回答，尽量简短", "feedback", "我自己写的：中文，简短。")
    mine = _records(demo_home)["answer-language"]
    results = _digest_all(settings)
    assert _records(demo_home)["answer-language"] == mine
    proposals = [p for r in results for p in r["memories"]["proposals"]]
    pending = book.pending("default")
    assert proposals and [p["id"] for p in pending] == proposals
    assert pending[0]["target"] == "answer-language" and "written by the user" in pending[0]["reason"]

    from agentos_mem.tasks.digest import digest_markdown

    md = digest_markdown(next(r for r in results if r["memories"]["proposals"]))
    assert "## User memories" in md and "Proposals waiting for the user" in md and f"#{pending[0]['id']}" in md


def test_a_failing_memory_stage_never_stops_the_digest(demo_home):
    settings = _settings()
    records = demo_home / "agent-sync/04_memory/records"
    records.mkdir(parents=True, exist_ok=True)
    (records / "default").write_text("a file where the user's folder should be")  # every write must fail
    results = _digest_all(settings)
    assert sum(r["facts_added"] for r in results) > 10 and sum(r["cards"] for r in results) > 5
    errors = [e for r in results for e in r["memories"]["errors"]]
    assert errors and all(r["memories"]["created"] == [] for r in results)


def _card(inbox: Path, name: str, data: bytes) -> Path:
    inbox.mkdir(parents=True, exist_ok=True)
    (inbox / name).write_bytes(data)
    return inbox / name


def test_memory_cards_from_the_inbox_join_the_records_once(demo_home):
    from agentos_mem.storage.memory_records import open_book
    from agentos_mem.memory.inbox import ingest_cards, inbox_dir

    settings = _settings()
    inbox = inbox_dir(settings)
    good = _card(inbox, "weekly.md", "---\ntype: feedback\ndescription: 以后所有周报都用简洁格式\n---\n周报不超过一页，先写结论。\n".encode())
    _card(inbox, "other-user.md", b"---\nuser: bob\ndescription: bob likes tea\n---\nbody\n")
    _card(inbox, "latin1.md", "caf\xe9".encode("latin-1"))
    _card(inbox, "blob.md", b"\x00\x01\x02binary")
    _card(inbox, "badtype.md", b"---\ntype: secret\n---\nbody\n")
    card_bytes = good.read_bytes()

    r = ingest_cards(settings, "default")
    assert r["cards"] == 1 and len(r["created"]) == 1 and r["errors"] == []
    rec = open_book(settings).read("default", r["created"][0])
    assert (rec.type, rec.source, rec.description) == ("feedback", "auto", "以后所有周报都用简洁格式") and "先写结论" in rec.body
    assert good.read_bytes() == card_bytes  # the card is read, never moved or changed
    reasons = " ".join(r["quarantined"])
    assert "latin1.md" in reasons and "UTF-8" in reasons and "blob.md" in reasons and "binary" in reasons
    assert "badtype.md" in reasons and "'type'" in reasons
    quarantine = [json.loads(x) for x in (demo_home / "agent-local/logs/quarantine.jsonl").read_text().splitlines()]
    assert {"latin1.md", "blob.md", "badtype.md"} <= {q["file"] for q in quarantine}
    assert _records(demo_home, "bob") == {}  # bob's card waits for bob's run

    # taken once: the next night does nothing, even after the user deleted the record it made
    open_book(settings).delete("default", r["created"][0])
    again = ingest_cards(settings, "default")
    assert again["cards"] == 0 and again["created"] == [] and _records(demo_home) == {}
    # an edited card is a new version: taken again
    good.write_text("---\ntype: feedback\ndescription: 以后所有周报都用简洁格式，并附上下周计划\n---\n附上下周计划。\n", encoding="utf-8")
    assert ingest_cards(settings, "default")["cards"] == 1
