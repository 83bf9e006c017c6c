"""The supersession policy's named target (``Candidate.target``): a candidate that names the current fact it continues
("a new value for fact #k", "fact #k ended") continues or stops exactly that fact; a target that is not the same
person's current fact, or that starts after the candidate was said, is ignored (the candidate is applied as any other).
A change that names the value it leaves ("从 Vim 换到 Helix": ``Candidate.replaces``) continues the fact holding it."""

from __future__ import annotations

from dataclasses import replace
from datetime import date

import pytest

from agentos_mem.kernel.domain import Candidate
from agentos_mem.services.supersession import Supersession
from agentos_mem.storage.facts import FactStore

D1, D2, D3 = date(2026, 11, 1), date(2026, 11, 2), date(2026, 11, 3)


def cand(subject, predicate, obj, *, day=D1, line=1, at=None, nature="fact", explicitness="stated", conf=0.9, multi=False,
         target=None, file=None):
    return Candidate(subject=subject, predicate=predicate, object=obj, nature=nature, confidence=conf, explicitness=explicitness,
                     source_file=file or f"{day}.md", line_start=line, line_end=line, observed_at=at or f"{day}T09:{line:02d}:00",
                     multi_valued=multi, target=target)


@pytest.fixture
def store(tmp_path):
    s = FactStore(tmp_path / "facts.db")
    yield s
    s.close()


def apply(store, day, cands, user="u", **kw):
    return Supersession(store).apply(user, day, cands, file_sha={c.source_file: f"sha-{c.source_file}" for c in cands}, raw_refs={}, **kw)


def one(store, day, c, user="u", **kw) -> int | None:
    return apply(store, day, [c], user=user, **kw).fact_ids[0]


def test_a_target_defaults_to_none_and_candidates_without_one_apply_as_before(store):
    assert Candidate(**{k: v for k, v in cand("a", "value", "1").to_dict().items() if k != "target"}).target is None
    old = one(store, D1, cand("数据库端口", "value", "5432"))
    new = one(store, D2, cand("数据库端口", "value", "5433", day=D2))
    assert store.get(old)["superseded_by"] == new and store.get(new)["previous_version"] == old


def test_a_new_value_takes_its_targets_slot_and_supersedes_exactly_it(store):
    spec = one(store, D1, cand("服务器配置", "value", "4C8G"))
    other = one(store, D1, cand("测试机配置", "value", "2C4G", line=2))
    r = apply(store, D2, [cand("那台机器", "spec", "8C16G", day=D2, line=4, explicitness="corrected", conf=0.8, target=spec)])
    new = store.get(r.fact_ids[0])
    assert (r.added, r.superseded, r.reinforced, r.conflicts) == (0, 1, 0, 0)
    assert (new["subject"], new["subject_key"], new["predicate"], new["nature"], new["object"]) == \
        ("服务器配置", store.get(spec)["subject_key"], "value", "fact", "8C16G")
    assert (new["explicitness"], new["confidence"], new["line_start"], new["version"], new["previous_version"]) == ("corrected", 0.8, 4, 2, spec)
    old = store.get(spec)
    assert (old["status"], old["valid_to"], old["superseded_by"]) == ("superseded", "2026-11-02T09:04:00", new["id"])
    assert store.get(other)["status"] == "active"
    assert sorted(f["object"] for f in store.current("u")) == ["2C4G", "8C16G"]


def test_a_new_value_for_a_multi_valued_target_replaces_that_one_only(store):
    coffee = one(store, D1, cand("user", "likes", "咖啡", nature="preference", multi=True))
    tea = one(store, D1, cand("user", "likes", "茶", line=2, nature="preference", multi=True))
    r = apply(store, D2, [cand("user", "drinks", "豆浆", day=D2, target=coffee)])
    new = store.get(r.fact_ids[0])
    assert (new["predicate"], new["nature"], new["multi_valued"], new["previous_version"]) == ("likes", "preference", 1, coffee)
    assert store.get(coffee)["status"] == "superseded" and store.get(tea)["status"] == "active"


def test_the_same_value_reinforces_its_target(store):
    spec = one(store, D1, cand("服务器配置", "value", "8C16G"))
    r = apply(store, D2, [cand("机器", "spec", "８Ｃ１６Ｇ", day=D2, target=spec)])
    assert r.reinforced == 1 and r.fact_ids == [spec] and store.get(spec)["reinforcements"] == 1
    assert len(store.history("u", "服务器配置")) == 1 and store.history("u", "机器") == []


def test_an_inference_against_a_stated_target_is_a_conflict_and_so_is_a_document(store):
    port = one(store, D1, cand("数据库端口", "value", "5432"))
    r = apply(store, D2, [cand("端口", "port", "6543", day=D2, explicitness="inferred", conf=0.6, target=port)])
    assert r.conflicts == 1 and r.fact_ids == [None]
    r = apply(store, D3, [cand("端口", "port", "7654", day=D3, target=port)], contradictions="conflict")
    assert r.conflicts == 1 and r.fact_ids == [None]
    first, second = store.conflicts("u")
    assert (first["subject"], first["predicate"], first["existing_fact_id"], first["candidate_object"]) == ("数据库端口", "value", port, "6543")
    assert "inference" in first["reason"] and "kept for review" in second["reason"]
    assert store.get(port)["status"] == "active" and [f["object"] for f in store.current("u")] == ["5432"]


def test_a_new_value_that_starts_later_keeps_its_target_current_until_then(store):
    spec = one(store, D1, cand("服务器配置", "value", "4C8G"))
    event = one(store, D1, cand("user", "event", "那台现在还是4C8G的，一跑e2e就OOM", line=2, nature="event", multi=True))
    # the suite's clock is 2026-11-30T10:00: December is later
    r = apply(store, D3, [cand("机器", "value", "16C32G", day=D3, at="2026-12-05T00:00:00", target=spec)])
    new = store.get(r.fact_ids[0])
    old = store.get(spec)
    assert (old["status"], old["valid_to"], old["superseded_by"]) == ("active", "2026-12-05T00:00:00", new["id"])
    assert store.get(event)["status"] == "active"  # until the change holds, what the events tell still holds
    assert [f["object"] for f in store.upcoming("u")] == ["16C32G"]


def test_a_new_value_closes_the_events_that_tell_of_its_targets_value(store):
    spec = one(store, D1, cand("服务器配置", "value", "4C8G"))
    event = one(store, D1, cand("user", "event", "那台现在还是4C8G的，一跑e2e就OOM", line=2, nature="event", multi=True))
    new = one(store, D2, cand("机器", "value", "8C16G", day=D2, target=spec))
    assert (store.get(event)["status"], store.get(event)["superseded_by"]) == ("superseded", new)


def test_a_stop_closes_exactly_its_target_and_is_kept_as_history(store):
    netflix = one(store, D1, cand("user", "subscribes", "Netflix", multi=True))
    plan = one(store, D1, cand("Netflix 会员", "value", "年付", line=2))
    r = apply(store, D2, [cand("user", "stopped", "Netflix", day=D2, target=netflix)])
    stop = store.get(r.fact_ids[0])
    assert (r.added, r.superseded) == (1, 1)
    assert (stop["predicate"], stop["status"], stop["valid_to"]) == ("stopped", "superseded", stop["valid_from"])
    closed = store.get(netflix)
    assert (closed["status"], closed["valid_to"], closed["superseded_by"]) == ("superseded", "2026-11-02T09:01:00", stop["id"])
    assert store.get(plan)["status"] == "active"  # the normal stop would close it too (it names Netflix)


def test_a_stop_without_a_target_closes_every_fact_naming_its_thing(store):
    netflix = one(store, D1, cand("user", "subscribes", "Netflix", multi=True))
    plan = one(store, D1, cand("Netflix 会员", "value", "年付", line=2))
    r = apply(store, D2, [cand("user", "stopped", "Netflix", day=D2)])
    assert r.superseded == 2 and {store.get(netflix)["status"], store.get(plan)["status"]} == {"superseded"}


def test_a_stop_of_a_target_that_names_another_thing_still_closes_only_it(store):
    gym = one(store, D1, cand("user", "goes_to", "健身房", multi=True))
    swim = one(store, D1, cand("user", "likes", "游泳", line=2, multi=True))
    r = apply(store, D2, [cand("user", "stopped", "那张卡", day=D2, target=gym)])
    assert store.get(gym)["superseded_by"] == r.fact_ids[0] and store.get(swim)["status"] == "active"


def test_a_target_of_another_user_is_ignored(store):
    alices = one(store, D1, cand("数据库端口", "value", "5432"), user="alice")
    r = apply(store, D2, [cand("数据库端口", "value", "6543", day=D2, target=alices)], user="bob")
    assert (r.added, r.superseded) == (1, 0)
    assert store.get(alices)["status"] == "active" and [f["object"] for f in store.current("bob")] == ["6543"]
    r = apply(store, D3, [cand("user", "stopped", "端口", day=D3, target=alices)], user="bob")
    assert store.get(alices)["status"] == "active"


def test_a_target_no_longer_current_is_ignored(store):
    old = one(store, D1, cand("数据库端口", "value", "5432"))
    current = one(store, D2, cand("数据库端口", "value", "5433", day=D2))
    r = apply(store, D3, [cand("办公室", "value", "3楼", day=D3, target=old)])
    assert r.added == 1 and store.get(old)["superseded_by"] == current and store.get(current)["status"] == "active"
    # a retracted or forgotten one neither
    store.forget("u", current, "wrong")
    r = apply(store, D3, [cand("user", "stopped", "端口", day=D3, line=2, target=current)])
    assert store.get(current)["status"] == "forgotten" and store.get(current)["superseded_by"] is None


def test_a_target_that_starts_after_the_candidate_was_said_is_ignored(store):
    later = one(store, D3, cand("数据库端口", "value", "5433", day=D3))
    r = apply(store, D2, [cand("数据库端口", "value", "5432", day=D2, target=later)])
    assert r.added == 1  # the normal path: a backfill of an earlier day, history before the current value
    back = store.get(r.fact_ids[0])
    assert (back["status"], back["superseded_by"]) == ("superseded", later) and store.get(later)["status"] == "active"
    assert store.get(later)["version"] == 1 and back["previous_version"] is None


def test_a_target_said_at_the_same_moment_is_continued(store):
    spec = one(store, D1, cand("服务器配置", "value", "4C8G"))
    r = apply(store, D1, [cand("机器", "value", "8C16G", line=1, file="other.md", target=spec)])
    assert r.superseded == 1 and store.get(spec)["superseded_by"] == r.fact_ids[0]


def test_a_targeted_candidate_is_applied_once_and_a_forgotten_fact_stays_forgotten(store):
    spec = one(store, D1, cand("服务器配置", "value", "4C8G"))
    c = cand("机器", "value", "8C16G", day=D2, target=spec)
    first = apply(store, D2, [c])
    again = apply(store, D2, [c])
    assert again.already_applied == 1 and again.fact_ids == first.fact_ids and len(store.history("u", "服务器配置")) == 2
    gone = one(store, D2, cand("数据库端口", "value", "5432", day=D2, line=3))
    store.forget("u", gone, "not true")
    current = store.get(first.fact_ids[0])
    r = apply(store, D2, [cand("数据库端口", "value", "5432", day=D2, line=5, target=current["id"])])
    assert r.forgotten == 1 and r.fact_ids == [None] and store.get(current["id"])["status"] == "active"


def test_a_change_continues_the_fact_whose_value_is_the_old_one_not_one_that_only_holds_it(store):
    editor = one(store, D1, cand("主力编辑器", "value", "Vim"))
    plugins = one(store, D1, cand("插件管理", "value", "vim-plug", line=2))  # said later, and "vim" is in its value
    new = store.get(one(store, D2, replace(cand("user", "value", "Helix", day=D2, line=3), replaces="Vim")))
    assert (new["subject"], new["previous_version"]) == ("主力编辑器", editor)
    assert store.get(editor)["status"] == "superseded" and store.get(plugins)["status"] == "active"
