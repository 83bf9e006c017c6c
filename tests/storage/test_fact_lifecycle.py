"""The fact store's side of issue 15: stale facts stay readable, forgotten and retracted ones are closed for good, and a
facts.db written before is migrated in place."""

from __future__ import annotations

import sqlite3
from datetime import date

import pytest
import sqlite_utils

from agentos_mem.kernel.domain import Candidate
from agentos_mem.services.supersession import Supersession
from agentos_mem.storage import facts as facts_module
from agentos_mem.storage.facts import FactStore

D1, D2 = date(2026, 3, 10), date(2026, 3, 11)


def cand(subject, predicate, obj, *, day=D1, line=1, technical=False, nature="fact"):
    return Candidate(subject=subject, predicate=predicate, object=obj, nature=nature, confidence=0.9, explicitness="stated",
                     source_file=f"{day}.md", line_start=line, line_end=line, observed_at=f"{day}T09:{line:02d}:00", technical=technical)


@pytest.fixture
def store(tmp_path):
    s = FactStore(tmp_path / "facts.db")
    yield s
    s.close()


def test_a_fact_past_its_expiry_is_stale_not_gone(store):
    Supersession(store).apply("u", D1, [cand("服务器配置", "value", "8C16G", technical=True), cand("user", "name", "林晓", line=2)],
                              file_sha={f"{D1}.md": "a"}, raw_refs={})
    october = date(2026, 10, 1)
    assert [r["object"] for r in store.as_of("u", october)] == ["林晓"]  # what the knowledge review compares with
    rows = store.as_of("u", october, stale=True)
    assert [(r["object"], r["stale"], r["stale_since"]) for r in rows] == [("林晓", False, None), ("8C16G", True, "2026-09-06")]
    assert [r["stale"] for r in store.as_of("u", date(2026, 9, 5), stale=True)] == [False, False]


def test_forget_closes_a_fact_and_its_lines_do_not_bring_it_back(store):
    Supersession(store).apply("u", D1, [cand("数据库端口", "value", "5432")], file_sha={f"{D1}.md": "a"}, raw_refs={})
    (row,) = store.current("u")
    with pytest.raises(KeyError, match="no fact"):
        store.forget("someone-else", row["id"], "x")
    out = store.forget("u", row["id"], "  never   said ")
    assert out["status"] == "forgotten" and out["closed_reason"] == "never said" and out["valid_to"]
    assert store.current("u", stale=True) == [] and store.as_of("u", D1) == []  # not even on the day it was said
    assert store.history("u", "数据库端口", closed=False) == []
    assert [r["status"] for r in store.history("u", "数据库端口")] == ["forgotten"]
    with pytest.raises(ValueError, match="already forgotten"):
        store.forget("u", row["id"], "again")
    # the same file, changed (another hash): the forgotten fact is not learnt again from it
    r = Supersession(store).apply("u", D1, [cand("数据库端口", "value", "5432", line=3)], file_sha={f"{D1}.md": "b"}, raw_refs={})
    assert r.forgotten == 1 and r.added == 0 and r.fact_ids == [None]
    # said again on another day, it is a new statement
    r = Supersession(store).apply("u", D2, [cand("数据库端口", "value", "5432", day=D2)], file_sha={f"{D2}.md": "c"}, raw_refs={})
    assert r.added == 1 and [x["object"] for x in store.current("u")] == ["5432"]


def test_a_facts_db_of_before_is_migrated_in_place(tmp_path):
    path = tmp_path / "facts.db"
    db = sqlite_utils.Database(path)
    db.execute("create table _migrations (store text, name text, applied_at text default CURRENT_TIMESTAMP, primary key (store, name))")
    facts_module.m001_initial(db)
    facts_module.m002_mask_secrets(db)
    for name in ("m001_initial", "m002_mask_secrets"):
        db.execute("insert into _migrations (store, name) values ('facts', ?)", [name])
    db.conn.commit()
    db.close()
    con = sqlite3.connect(path)  # a fact and its evidence as the store of before wrote them: without m003's columns
    con.execute("insert into facts (user_id, subject, subject_key, predicate, object, object_key, nature, confidence, explicitness, status,"
                " valid_from, learned_at, last_seen_at, source_day, source_file, line_start, line_end, extractor)"
                " values ('u', '数据库端口', '数据库端口', 'value', '5432', '5432', 'fact', 0.9, 'stated', 'active', '2026-03-10T09:01:00',"
                " 'x', '2026-03-10T09:01:00', '2026-03-10', '2026-03-10.md', 1, 1, 'rules')")
    con.execute("insert into evidence (candidate_key, user_id, action, fact_id, source_day, source_file, line_start, line_end, observed_at)"
                " values ('k1', 'u', 'added', 1, '2026-03-10', '2026-03-10.md', 1, 1, '2026-03-10T09:01:00')")
    con.execute("insert into digested values ('u', '2026-03-10', '2026-03-10.md', 'sha', null, 'x')")
    con.commit()
    con.close()

    s = FactStore(path)
    try:
        (fact,) = s.current("u")
        assert fact["object"] == "5432" and fact["status"] == "active" and fact["closed_reason"] is None
        (ev,) = s.evidence_of(fact["id"])
        assert ev["origin"] == "legacy" and ev["retracted_at"] is None and ev["candidate_key"] == "k1"
        (dig,) = s.digested_files("u")
        assert dig["folder"] is None and dig["retired_at"] is None and s.is_digested("u", D1, "2026-03-10.md", "sha")
        assert "forgotten" in s.db.table_names()
        names = [r[0] for r in s.db.execute("select name from _migrations where store='facts' order by rowid")]
        assert names == ["m001_initial", "m002_mask_secrets", "m003_evidence_lifecycle", "m004_journal_applied",
                         "m005_values_by_status"]
    finally:
        s.close()


def test_an_observation_is_its_lines_content_applied_once_and_retired_alone(store):
    a, b = cand("数据库端口", "value", "5432"), cand("user", "name", "林晓")
    line = ("c0ffee", 0)  # both from line 1, whose content hashes to c0ffee (first occurrence in the file)
    r = Supersession(store).apply("u", D1, [a, b], file_sha={f"{D1}.md": "sha1"}, raw_refs={}, observations=[line, line])
    assert r.added == 2
    # the file changed elsewhere (another hash), this line did not: nothing is applied again, however it is read now
    r = Supersession(store).apply("u", D1, [a, b, cand("数据库端口", "value", "5432/tcp")], file_sha={f"{D1}.md": "sha2"}, raw_refs={},
                                  observations=[line, line, line])
    assert (r.already_applied, r.added, r.reinforced, r.superseded) == (3, 0, 0, 0)
    assert {f["object"]: f["confidence"] for f in store.current("u")} == {"5432": 0.9, "林晓": 0.9}
    # the line edited away: its observations retire, and the facts only it said are retracted
    keys = [store.observation_key("u", D1, c, line) for c in (a, b)]
    Supersession(store).apply("u", D2, [cand("user", "name", "林晓", day=D2)], file_sha={f"{D2}.md": "x"}, raw_refs={}, observations=[("beef", 0)])
    r = Supersession(store).apply("u", D1, [], file_sha={}, raw_refs={}, retire=[(k, "source edited: 2026-03-10.md:1") for k in keys])
    assert r.retracted == 1
    assert {f["object"] for f in store.current("u")} == {"林晓"}  # said on another day too: kept
    (port,) = store.history("u", "数据库端口")
    assert port["status"] == "retracted" and port["closed_reason"] == "source edited: 2026-03-10.md:1"
