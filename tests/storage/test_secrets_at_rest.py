"""Stores never hold a secret in clear: the fact store masks what any extractor proposes (and a one-off migration
masks a store written before), memory records are masked when written and read (a save says so)."""

from __future__ import annotations

import sqlite3
from datetime import date

from agentos_mem.kernel.domain import Candidate
from agentos_mem.services.supersession import Supersession
from agentos_mem.storage.facts import FactStore
from agentos_mem.storage.memory_records import MemoryBook
from agentos_mem.storage.memory_store import FileRecordStore

REF = "alice/2026-11-20/r1/2026-11-20.md"


def _cand(subject, obj, line=4, evidence="", **kw) -> Candidate:
    return Candidate(subject=subject, predicate="value", object=obj, nature="fact", confidence=0.9, explicitness="stated",
                     source_file="2026-11-20.md", line_start=line, line_end=line, observed_at="2026-11-20T09:00:00",
                     evidence=evidence, **kw)


def test_the_fact_store_masks_any_extractor_and_names_the_raw_line(tmp_path):
    store = FactStore(tmp_path / "facts.db")
    try:
        report = Supersession(store).apply("alice", date(2026, 11, 20), [
            _cand("NAS password", "hunter2-NAS", evidence="my NAS password is hunter2-NAS"),  # an extractor that saw clear text
            _cand("数据库密码", "[secret masked]", line=6),  # the digest's bare marker
            _cand("数据库端口", "5432", line=7),
        ], file_sha={"2026-11-20.md": "x"}, raw_refs={"2026-11-20.md": REF})
        rows = {r["subject"]: r for r in store.current("alice")}
    finally:
        store.close()
    assert report.added == 3
    assert rows["NAS password"]["object"] == f"[secret masked · original at {REF} line 4]"
    assert rows["NAS password"]["evidence"] == f"my NAS password is [secret masked · original at {REF} line 4]"
    assert rows["数据库密码"]["object"] == f"[secret masked · original at {REF} line 6]"
    assert rows["数据库端口"]["object"] == "5432"
    assert b"hunter2-NAS" not in (tmp_path / "facts.db").read_bytes()


def test_a_store_written_before_is_masked_once_when_opened(tmp_path):
    path = tmp_path / "facts.db"
    FactStore(path).close()
    con = sqlite3.connect(path)  # rows as a store written before this change holds them
    con.execute("insert into facts (user_id, subject, subject_key, predicate, object, object_key, nature, confidence, explicitness,"
                " status, valid_from, learned_at, last_seen_at, source_day, source_file, raw_ref, line_start, line_end, extractor, evidence)"
                " values ('alice', 'VPN password', 'vpn password', 'value', 'OldVpn#555', 'oldvpn#555', 'fact', 0.9, 'stated', 'active',"
                " '2026-11-01T09:00:00', '2026-11-01T09:00:00', '2026-11-01T09:00:00', '2026-11-01', '2026-11-01.md', ?, 3, 3, 'rules',"
                " 'the VPN password is OldVpn#555')", [REF])
    con.execute("insert into facts (user_id, subject, subject_key, predicate, object, object_key, nature, confidence, explicitness,"
                " status, valid_from, learned_at, last_seen_at, source_day, source_file, raw_ref, line_start, line_end, extractor)"
                " values ('alice', '服务器配置', '服务器配置', 'value', '8C16G', '8c16g', 'fact', 0.9, 'stated', 'active',"
                " '2026-11-01T09:00:00', '2026-11-01T09:00:00', '2026-11-01T09:00:00', '2026-11-01', '2026-11-01.md', ?, 5, 5, 'rules')", [REF])
    con.execute("delete from _migrations where name = 'm002_mask_secrets'")
    con.commit()
    con.close()
    store = FactStore(path)
    try:
        rows = {r["subject"]: r for r in store.current("alice")}
    finally:
        store.close()
    assert rows["VPN password"]["object"] == f"[secret masked · original at {REF} line 3]"
    assert rows["VPN password"]["evidence"] == f"the VPN password is [secret masked · original at {REF} line 3]"
    assert rows["服务器配置"]["object"] == "8C16G"
    con = sqlite3.connect(path)
    assert con.execute("select count(*) from facts where object like '%OldVpn%' or evidence like '%OldVpn%'").fetchone()[0] == 0
    con.close()


def test_memory_records_are_masked_written_and_read(tmp_path):
    book = MemoryBook(FileRecordStore(tmp_path / "records"))
    rec = book.create("alice", "router", "家里路由器，管理口令是 R0uter!Adm1n", "reference", "admin password: R0uter!Adm1n\n地址 192.168.1.1")
    assert rec.notices and "2 secret(s) masked" in rec.notices[0] and rec.as_dict()["notices"] == rec.notices
    stored = (tmp_path / "records/alice/router.md").read_text(encoding="utf-8")
    assert "R0uter!Adm1n" not in stored and "[secret masked]" in stored and "192.168.1.1" in stored
    assert "notices" not in book.read("alice", "router").as_dict()  # a read has nothing to say

    # a record written before (or edited by hand): read masked, never served in clear, written masked on update
    (tmp_path / "records/alice/old.md").write_text("---\nname: old\ndescription: backup server\ntype: reference\napi_key: sk-abcdefghijklmnopqrstu\n"
                                                   "---\n\nroot password is OldRoot#777\n", encoding="utf-8")
    old = book.read("alice", "old")
    assert "OldRoot#777" not in old.body and old.extra["api_key"] == "[secret masked]"
    book.update("alice", "old", description="the backup server")
    assert "OldRoot#777" not in (tmp_path / "records/alice/old.md").read_text(encoding="utf-8")
    assert "OldRoot#777" not in str(book.manifest("alice"))
