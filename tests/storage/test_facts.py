"""L2 fact store: reinforcement, supersession with versions, correction vs inference, expiry, as-of reads."""

from datetime import date

import pytest

from agentos_mem.kernel.domain import Candidate
from agentos_mem.services.supersession import Supersession
from agentos_mem.storage.facts import FactStore

D1, D2, D3 = date(2026, 11, 1), date(2026, 11, 2), date(2026, 11, 3)


def cand(subject, predicate, obj, *, day=D1, line=1, nature="fact", explicitness="stated", conf=0.9, technical=False, multi=False, file=None):
    return Candidate(subject=subject, predicate=predicate, object=obj, nature=nature, confidence=conf, explicitness=explicitness,
                     source_file=file or f"{day}.md", line_start=line, line_end=line, observed_at=f"{day}T09:{line:02d}:00",
                     technical=technical, multi_valued=multi)


@pytest.fixture
def store(tmp_path):
    s = FactStore(tmp_path / "facts.db")
    yield s
    s.close()


def apply(store, day, cands, sha="sha"):
    return Supersession(store).apply("u", day, cands, file_sha={c.source_file: sha + c.source_file for c in cands}, raw_refs={})


def test_same_fact_again_raises_confidence_without_duplicate(store):
    apply(store, D1, [cand("服务器配置", "value", "8C16G")])
    r = apply(store, D2, [cand("我们的服务器配置", "value", "８Ｃ１６Ｇ", day=D2)])
    rows = store.history("u", "服务器配置")
    assert len(rows) == 1 and r.reinforced == 1
    assert 0.9 < rows[0]["confidence"] < 1.0 and rows[0]["reinforcements"] == 1


def test_new_value_supersedes_and_keeps_previous_version(store):
    apply(store, D1, [cand("数据库端口", "value", "5432", technical=True)])
    r = apply(store, D2, [cand("数据库端口", "value", "5433", day=D2, technical=True)])
    assert r.superseded == 1
    old, new = store.history("u", "数据库端口")
    assert old["status"] == "superseded" and old["superseded_by"] == new["id"] and old["valid_to"] == new["valid_from"]
    assert new["status"] == "active" and new["previous_version"] == old["id"] and new["version"] == 2
    assert old["object"] == "5432"  # nothing overwritten


def test_point_in_time_reads(store):
    apply(store, D1, [cand("API 版本", "value", "v2.1.0")])
    apply(store, D3, [cand("API 版本", "value", "v2.2.0", day=D3)])
    assert [r["object"] for r in store.as_of("u", D1)] == ["v2.1.0"]
    assert [r["object"] for r in store.as_of("u", D2)] == ["v2.1.0"]
    assert [r["object"] for r in store.as_of("u", D3)] == ["v2.2.0"]
    assert store.as_of("u", date(2026, 10, 31)) == []


def test_inference_never_supersedes_a_stated_fact(store, tmp_path):
    apply(store, D1, [cand("user", "prefers", "Go", nature="preference")])
    r = apply(store, D2, [cand("user", "prefers", "Java", day=D2, nature="preference", explicitness="inferred", conf=0.6)])
    assert r.conflicts == 1 and r.superseded == 0
    assert [f["object"] for f in store.current("u") if f["predicate"] == "prefers"] == ["Go"]
    (c,) = store.conflicts("u")
    assert c["existing_object"] == "Go" and c["candidate_object"] == "Java" and "inference" in c["reason"]
    assert r.conflict_lines and "Java" in r.conflict_lines[0]


def test_correction_outranks_inference(store):
    apply(store, D1, [cand("数据库端口", "value", "5432", explicitness="inferred", conf=0.6)])
    r = apply(store, D1, [cand("数据库端口", "value", "5433", line=5, explicitness="corrected", conf=0.95)])
    assert r.superseded == 1
    (cur,) = store.current("u")
    assert cur["object"] == "5433" and cur["explicitness"] == "corrected"


def test_later_statement_supersedes_a_correction(store):
    apply(store, D1, [cand("数据库端口", "value", "5433", explicitness="corrected", conf=0.95)])
    apply(store, D2, [cand("数据库端口", "value", "6432", day=D2)])
    assert [f["object"] for f in store.current("u")] == ["6432"]


def test_reapplying_the_same_observation_changes_nothing(store):
    cands = [cand("数据库端口", "value", "5432"), cand("user", "likes", "咖啡", line=2, nature="preference", multi=True)]
    apply(store, D1, cands)
    before = store.db.execute("select * from facts order by id").fetchall()
    r = apply(store, D1, cands)
    assert r.already_applied == 2 and r.added == r.reinforced == 0
    assert store.db.execute("select * from facts order by id").fetchall() == before


def test_multi_valued_predicates_accumulate_and_opposites_supersede(store):
    apply(store, D1, [cand("user", "likes", "咖啡", nature="preference", multi=True),
                      cand("user", "likes", "茶", line=2, nature="preference", multi=True)])
    assert sorted(f["object"] for f in store.current("u")) == ["咖啡", "茶"]
    apply(store, D2, [cand("user", "dislikes", "咖啡", day=D2, nature="preference", multi=True)])
    assert sorted((f["predicate"], f["object"]) for f in store.current("u")) == [("dislikes", "咖啡"), ("likes", "茶")]


def test_technical_facts_expire_preferences_never(tmp_path):
    s = FactStore(tmp_path / "f.db", expiry_days={"technical": 180, "preference": None})
    Supersession(s).apply("u", D1, [cand("服务器配置", "value", "4C8G", technical=True),
                                    cand("user", "likes", "简洁", line=2, nature="preference", multi=True)], file_sha={f"{D1}.md": "x"}, raw_refs={})
    tech, pref = sorted(s.as_of("u", D1), key=lambda r: r["predicate"], reverse=True)
    assert tech["expires_at"].startswith("2027-04-30") and pref["expires_at"] is None
    later = s.as_of("u", date(2027, 5, 1))
    assert [r["object"] for r in later] == ["简洁"]
    s.close()


def test_backfilled_older_value_becomes_history_not_current(store):
    apply(store, D3, [cand("服务器配置", "value", "8C16G", day=D3)])
    apply(store, D1, [cand("服务器配置", "value", "4C8G", day=D1)])
    assert [f["object"] for f in store.current("u")] == ["8C16G"]
    assert [f["object"] for f in store.as_of("u", D1)] == ["4C8G"]


def test_users_are_isolated(store):
    Supersession(store).apply("alice", D1, [cand("user", "name", "Alice")], file_sha={}, raw_refs={})
    Supersession(store).apply("bob", D1, [cand("user", "name", "Bob")], file_sha={}, raw_refs={})
    assert [f["object"] for f in store.current("alice")] == ["Alice"]
    assert [f["object"] for f in store.current("bob")] == ["Bob"]


def test_inferred_preference_against_a_stated_rejection_is_a_conflict(store):
    apply(store, D1, [cand("user", "prefers", "Go", nature="preference", multi=True),
                      cand("user", "prefers_not", "Java", line=1, nature="preference", multi=True)])
    r = apply(store, D2, [cand("user", "prefers", "Java", day=D2, nature="preference", explicitness="inferred", conf=0.6, multi=True)])
    assert r.conflicts == 1
    (c,) = store.conflicts("u")
    assert (c["existing_predicate"], c["existing_object"], c["predicate"], c["candidate_object"]) == ("prefers_not", "Java", "prefers", "Java")
    assert sorted((f["predicate"], f["object"]) for f in store.current("u")) == [("prefers", "Go"), ("prefers_not", "Java")]


def test_one_subject_in_two_languages_supersedes_across_them(store):
    apply(store, D1, [cand("数据库端口", "value", "5432")])
    r = apply(store, D2, [cand("The database port", "value", "5433", day=D2)])
    assert r.superseded == 1 and [f["object"] for f in store.history("u", "DB port")] == ["5432", "5433"]


def test_workspace_aliases_extend_the_built_in_ones(tmp_path):
    from agentos_mem.vocabulary.subjects import load_aliases

    f = tmp_path / "subject_aliases.txt"
    f.write_text("# mine\n灰度比例 = canary ratio\n", encoding="utf-8")
    s = FactStore(tmp_path / "f.db", aliases=load_aliases(f))
    Supersession(s).apply("u", D1, [cand("canary ratio", "value", "5%")], file_sha={}, raw_refs={})
    Supersession(s).apply("u", D2, [cand("灰度比例", "value", "20%", day=D2)], file_sha={}, raw_refs={})
    assert [r["object"] for r in s.current("u")] == ["20%"]
    s.close()


def test_a_person_resolves_conflicts(store):
    apply(store, D1, [cand("user", "prefers", "Go", nature="preference", multi=True),
                      cand("user", "prefers_not", "Java", nature="preference", multi=True)])
    apply(store, D2, [cand("user", "prefers", "Java", day=D2, nature="preference", explicitness="inferred", conf=0.6, multi=True),
                      cand("数据库端口", "value", "5432", day=D2, line=3)])
    apply(store, D3, [cand("数据库端口", "value", "6543", day=D3, explicitness="inferred", conf=0.6)])
    java, port = store.conflicts("u")
    accepted = Supersession(store).resolve_conflict("u", java["id"], accept=True)
    assert accepted["status"] == "accepted" and accepted["fact"]["object"] == "Java" and accepted["fact"]["explicitness"] == "corrected"
    assert ("prefers_not", "Java") not in {(f["predicate"], f["object"]) for f in store.current("u")}
    rejected = Supersession(store).resolve_conflict("u", port["id"], accept=False)
    assert rejected["status"] == "rejected" and [f["object"] for f in store.history("u", "数据库端口")] == ["5432"]
    assert store.conflicts("u") == [] and len(store.conflicts("u", status=None)) == 2
    with pytest.raises(ValueError):
        Supersession(store).resolve_conflict("u", port["id"], accept=True)
