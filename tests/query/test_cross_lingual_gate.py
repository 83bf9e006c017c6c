"""The no-history gate across languages (issue 15): a question in one language about memory in the other finds the
fact instead of stopping at no_history, and an unrelated question in the other language still stops. The floor of
each language pair (query.ask.CROSS_LINGUAL_OFFSET) is measured by bench/gate_calibration.py."""

from __future__ import annotations

import json
from datetime import date

import pytest

import agentos_mem.query.ask as qa
from agentos_mem.query.ask import ask, gate_cosines, gate_matches, script_lang, unit_lang, vector_matches

NOW = "2026-11-20T23:00:00+08:00"
DAY = "2026-11-20"
ZH_LOG = ["数据库备份时间是每天凌晨两点。", "周会改到周三下午三点。", "测试服务器的配置是 8C16G。"]
EN_LOG = ["The database backup time is 2 am every night.", "The weekly meeting moved to Wednesday 3 pm.", "The test server spec is 8C16G."]


@pytest.fixture(scope="module")
def two_logs(tmp_path_factory):
    """One workspace through the real stages (digest_day, then rebuild; the clock pinned): li chats in Chinese,
    amy in English, each a JSONL chat export of one day."""
    from agentos_mem.digest.stages import digest_day
    from agentos_mem.index.stages import rebuild
    from agentos_mem.kernel.settings import load_settings
    from agentos_mem.kernel.workspace import init_workspace

    home = tmp_path_factory.mktemp("cross_lingual") / "home"
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("AGENTOS_NOW", NOW)
        mp.delenv("AGENTOS_LLM_BASE_URL", raising=False)
        init_workspace(home)
        settings = load_settings(home=home, hostname="testhost", timezone="Asia/Shanghai")
        for user, lines in (("li", ZH_LOG), ("amy", EN_LOG)):
            folder = home / "chat" / user
            folder.mkdir(parents=True)
            rows = [{"role": "user", "content": text, "timestamp": f"{DAY}T10:{i:02d}:00+08:00"} for i, text in enumerate(lines)]
            (folder / f"{DAY}.jsonl").write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
            digest_day(settings, user, date.fromisoformat(DAY), folder)
        rebuild(settings)
    return settings


def _facts(a) -> str:
    return " | ".join(i.text for i in a.items if i.kind == "fact")


@pytest.mark.parametrize("question, value", [("When is the weekly meeting?", "周三下午三点"), ("What spec is the test server?", "8C16G"),
                                             ("What time does the database backup run?", "每天凌晨两点")])
def test_an_english_question_finds_the_fact_of_a_chinese_log(two_logs, question, value):
    a = ask(question, user="li", settings=two_logs)
    assert a.status == "ok" and a.layer == "L2", (question, a.status)
    assert value in _facts(a), _facts(a)


def test_the_floor_of_the_pair_is_what_lets_it_through(two_logs, monkeypatch):
    # the English question over Chinese memory scores under the one floor of a single language (0.83): without the
    # cross-lingual floor (and the dictionary bridge) it stopped at no_history, as the issue reports
    monkeypatch.setattr(qa, "BRIDGE_COVERAGE", 1.01)
    monkeypatch.setattr(qa, "CROWD_UNIT_MARGIN", 2.0)  # the small memory's stand-in crowd off too (tested below)
    assert ask("When is the weekly meeting?", user="li", settings=two_logs).status == "ok"
    monkeypatch.setattr(qa, "CROSS_LINGUAL_OFFSET", {})
    assert ask("When is the weekly meeting?", user="li", settings=two_logs).status == "no_history"


def test_in_a_small_memory_the_stand_in_crowd_lets_the_question_through(two_logs, monkeypatch):
    # li's memory holds fewer units than the gap test's crowd needs; with the pair's floor and the dictionary off, the
    # floor alone stopped the question: standing clear of what the unit scores against a crowd of unrelated questions
    # in English lets it through, and the fact answers
    monkeypatch.setattr(qa, "BRIDGE_COVERAGE", 1.01)
    monkeypatch.setattr(qa, "CROSS_LINGUAL_OFFSET", {})
    a = ask("When is the weekly meeting?", user="li", settings=two_logs)
    assert a.status == "ok" and "周三下午三点" in _facts(a), (a.status, _facts(a))
    monkeypatch.setattr(qa, "CROWD_UNIT_MARGIN", 2.0)
    assert ask("When is the weekly meeting?", user="li", settings=two_logs).status == "no_history"


def test_the_default_embedders_crowd_ships_with_the_package_and_is_what_the_embedder_makes(two_logs):
    import numpy as np

    from agentos_mem.embedders import make_embedder
    from agentos_mem.kernel.workspace import Workspace
    from agentos_mem.retrieval import crowd

    runtime = Workspace(two_logs.home).runtime
    vecs = crowd.load(runtime, two_logs.embedder)
    assert {k: v.shape[0] for k, v in vecs["sentences"].items()} == {k: len(v) for k, v in crowd.SENTENCES.items()}
    assert {k: v.shape[0] for k, v in vecs["questions"].items()} == {k: len(v) for k, v in crowd.QUESTIONS.items()}
    assert not (runtime / crowd.file_name(two_logs.embedder)).exists()  # nothing embedded for the workspace
    # the shipped file is what the pinned embedder makes of the lines now (bench/crowd_vectors.py makes it again): each
    # line's vector points the same way. Not equal to the digit: the quantised model's kernels round differently on
    # another CPU (AVX2 against AVX-512: up to ~5% of one component), as the workspace's own vectors do
    model = make_embedder(two_logs.embedder)
    made = crowd.embed("check-shipped:" + two_logs.embedder, model.embed_documents, model.embed_query)
    for side in ("sentences", "questions"):
        for lang in ("en", "zh"):
            a, b = vecs[side][lang], made[side][lang]
            cos = (a * b).sum(axis=1) / (np.linalg.norm(a, axis=1) * np.linalg.norm(b, axis=1))
            assert cos.min() > 0.999, (side, lang, float(cos.min()))
            # and the lines stay in order: each line's shipped vector is nearest its own fresh one
            assert ((a @ b.T).argmax(axis=1) == np.arange(len(a))).all(), (side, lang)


def test_another_embedders_crowd_is_made_once_in_the_workspace(tmp_path):
    from agentos_mem.retrieval import crowd

    calls = []

    def documents(texts):
        calls.append(len(texts))
        return [[1.0, 0.0]] * len(texts)

    def query(text):
        calls.append(1)
        return [0.0, 1.0]

    spec = "openai:http://127.0.0.1:9/v1#crowd-test"
    path = crowd.prepare(tmp_path, spec, documents, query)
    assert path.parent == tmp_path and path.is_file() and calls
    made = len(calls)
    assert crowd.prepare(tmp_path, spec, documents, query) == path and len(calls) == made  # made once
    vecs = crowd.load(tmp_path, spec)
    assert vecs["questions"]["zh"].shape == (len(crowd.QUESTIONS["zh"]), 2) and float(vecs["sentences"]["en"][0, 0]) == 1.0
    assert crowd.load(tmp_path, "openai:http://127.0.0.1:9/v1#another-model") is None  # another embedder's is not this one's


def test_a_unit_every_question_meets_needs_more_than_its_cosine():
    # a unit passes when the question stands clear of the crowd's sentences (gap 0.03) and the unit stands clear of the
    # crowd's questions: a unit that scores 0.80 against every unrelated question is not let through at 0.81
    vec = [("hub", 0.81), ("plain", 0.75)]
    q_refs = {"hub": 0.70, "plain": 0.70}
    assert qa.crowd_matches(vec, q_refs, {"hub": 0.815, "plain": 0.70}, 0.03) == {"plain"}
    assert qa.crowd_matches(vec, {"hub": 0.79, "plain": 0.70}, {"hub": 0.70, "plain": 0.70}, 0.03) == {"plain"}
    assert qa.crowd_matches(vec, {"plain": 0.70}, {"hub": 0.70, "plain": 0.70}, 0.03) == {"plain"}  # no reference: not by it


def test_the_references_are_read_in_the_right_language():
    import numpy as np

    from agentos_mem.retrieval import crowd

    e1, e2 = [1.0, 0.0], [0.0, 1.0]
    block = {"en": np.array([e1] * 3, dtype=np.float32), "zh": np.array([e2] * 3, dtype=np.float32)}
    vectors = {"sentences": block, "questions": block}
    assert crowd.unit_refs(vectors, {"u": e1}, "en", 2) == {"u": 1.0}  # the unit against questions in the question's language
    assert crowd.unit_refs(vectors, {"u": e1}, "zh", 2) == {"u": 0.0}
    assert crowd.unit_refs(vectors, {"u": e1}, "mixed", 2) == {"u": 1.0}  # no one language: the higher reference
    assert crowd.unit_refs(vectors, {"u": [1.0, 0.0, 0.0]}, "en", 2) == {}  # another embedder's dimension: none
    # the question against sentences in each unit's language
    assert crowd.question_refs(vectors, e2, {"a": "en", "b": "zh"}, ["a", "b", "c"], 2) == {"a": 0.0, "b": 1.0, "c": 1.0}


READING = ["我的读书笔记一直都记在Notion里，这两天同步老转圈。", "算了，Notion不用了，改用Obsidian，仓库就放在iCloud文件夹里同步。"]


def chat_workspace(tmp_path_factory, name: str, now: str, days: dict[str, list[tuple[str, str]]]):
    """li's chat, a JSONL export a day ({day: [(role, text)]}), digested day by day and indexed by the real stages
    with the clock pinned at ``now``."""
    from agentos_mem.digest.stages import digest_day
    from agentos_mem.index.stages import rebuild
    from agentos_mem.kernel.settings import load_settings
    from agentos_mem.kernel.workspace import init_workspace

    home = tmp_path_factory.mktemp(name) / "home"
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("AGENTOS_NOW", now)
        mp.delenv("AGENTOS_LLM_BASE_URL", raising=False)
        init_workspace(home)
        settings = load_settings(home=home, hostname="testhost", timezone="Asia/Shanghai")
        folder = home / "chat" / "li"
        folder.mkdir(parents=True)
        for day, turns in days.items():
            rows = [{"role": r, "content": t, "timestamp": f"{day}T21:{i:02d}:00+08:00"} for i, (r, t) in enumerate(turns)]
            (folder / f"{day}.jsonl").write_text("".join(json.dumps(x, ensure_ascii=False) + "\n" for x in rows), encoding="utf-8")
            digest_day(settings, "li", date.fromisoformat(day), folder)
        rebuild(settings)
    return settings


@pytest.fixture(scope="module")
def notes_log(tmp_path_factory):
    """A Chinese chat about where reading notes are kept (two days), digested and indexed by the real stages."""
    return chat_workspace(tmp_path_factory, "bridge", "2026-03-09T23:00:00+08:00",
                          {day: [("user", line)] for day, line in zip(("2026-03-04", "2026-03-09"), READING)})


def test_the_words_of_the_question_meet_the_memory_through_the_dictionary(notes_log, monkeypatch):
    # "notes" meets 读书笔记 (CC-CEDICT: 笔记 notes); the cosine floor of the pair and the crowd are switched off, so the bridge alone
    # decides: on, the question finds where the notes are kept; off, it stops as before the bridge
    monkeypatch.setenv("AGENTOS_NOW", "2026-03-09T23:00:00+08:00")
    monkeypatch.setattr(qa, "CROSS_LINGUAL_OFFSET", {})
    monkeypatch.setattr(qa, "CROWD_UNIT_MARGIN", 2.0)  # and the small memory's stand-in crowd
    q = "What do I use for notes now?"
    a = ask(q, user="li", settings=notes_log)
    assert a.status == "ok", a.status
    assert "Obsidian" in " ".join(i.text for i in a.items), [i.text for i in a.items]
    monkeypatch.setattr(qa, "BRIDGE_COVERAGE", 1.01)
    assert ask(q, user="li", settings=notes_log).status == "no_history"


@pytest.mark.parametrize("question", ["How do I bake sourdough bread?", "Which city do I live in now?", "What is my manager's name?",
                                      "explain the rules of cricket"])
def test_a_question_whose_words_the_memory_lacks_still_stops(notes_log, monkeypatch, question):
    monkeypatch.setenv("AGENTOS_NOW", "2026-03-09T23:00:00+08:00")
    assert ask(question, user="li", settings=notes_log).status == "no_history", question


def test_bridge_matches_judges_only_units_in_the_other_language():
    units = {"zh": {"kind": "card", "meta": {"summary": "我的读书笔记都记在Obsidian里", "keywords": ["笔记"]}},
             "en": {"kind": "card", "meta": {"summary": "my reading notes live in Obsidian", "keywords": []}}}
    langs = {"zh": "zh", "en": "en"}
    q = "Where are my reading notes?"
    assert qa.bridge_matches(q, "en", units, langs) == {"zh"}  # the English unit is the keyword side's, not the bridge's
    assert qa.bridge_matches(q, "mixed", units, langs) == set() and qa.bridge_matches(q, None, units, langs) == set()
    assert qa.bridge_matches("我的读书笔记在哪里？", "zh", units, langs) == {"en"}


@pytest.mark.parametrize("question, value", [("周会是什么时候？", "Wednesday 3 pm"), ("数据库备份几点执行？", "2 am"),
                                             ("测试服务器是什么配置？", "8C16G")])
def test_a_chinese_question_finds_the_fact_of_an_english_log(two_logs, question, value):
    a = ask(question, user="amy", settings=two_logs)
    assert a.status == "ok" and value in _facts(a), (question, a.status, _facts(a))


@pytest.mark.parametrize("user, question", [("li", "How do I bake sourdough bread?"), ("li", "who won the world cup in 2018?"),
                                            ("li", "explain the rules of cricket"), ("amy", "红烧肉怎么做"), ("amy", "量子力学的薛定谔方程怎么解")])
def test_an_unrelated_question_in_the_other_language_still_stops(two_logs, user, question):
    a = ask(question, user=user, settings=two_logs)
    assert a.status == "no_history" and a.layer == "L1" and a.items == [], (question, a.status)


def test_script_lang_goes_by_the_share_of_han_characters():
    assert script_lang("What time does the database backup run?") == "en"
    assert script_lang("数据库备份几点执行？") == "zh"
    assert script_lang("staging 数据库现在是哪个 Postgres 版本？") == "zh"  # a Chinese question naming English things
    assert script_lang("Redis 最大内存") == "zh"
    assert script_lang("we moved 部署 to Kubernetes last week") == "mixed"
    assert script_lang("8C16G") == "en" and script_lang("5433 !!") is None  # numbers alone say nothing


def test_unit_lang_reads_what_the_index_keeps_of_a_unit():
    assert unit_lang({"kind": "fact", "meta": {"subject": "数据库备份时间", "predicate": "value", "object": "每天凌晨两点"}}) == "zh"
    assert unit_lang({"kind": "fact", "meta": {"subject": "user", "predicate": "lives_in", "object": "Hangzhou"}}) == "en"
    assert unit_lang({"kind": "card", "meta": {"topic": None, "summary": "测试机升级到8C16G", "keywords": ["8c16g", "测试机"]}}) == "zh"
    assert unit_lang(None) is None


def test_gate_cosines_raise_only_the_pairs_with_an_offset():
    vec = [("en-unit", 0.81), ("zh-unit", 0.80), ("mixed-unit", 0.79), ("unknown", 0.78)]
    langs = {"en-unit": "en", "zh-unit": "zh", "mixed-unit": "mixed", "unknown": None}
    table = {("en", "zh"): 0.035, ("zh", "en"): 0.0}
    lifted = gate_cosines(vec, "en", langs, table)
    assert lifted[0] == ("zh-unit", pytest.approx(0.835)) and dict(lifted)["en-unit"] == 0.81 and dict(lifted)["mixed-unit"] == 0.79
    assert vector_matches(lifted, 0.83, 0.03) == {"zh-unit"} and vector_matches(vec, 0.83, 0.03) == set()
    assert gate_cosines(vec, "mixed", langs, table) == vec and gate_cosines(vec, "zh", langs, table) == vec


def test_a_raised_crowd_never_hides_a_same_language_match():
    # an English question over a memory of both languages: the best English unit stands 0.05 clear of the plain
    # crowd, but raising the Chinese units lifts the 20th candidate to 0.835; the pair's floor only adds matches
    vec = [("en-best", 0.85)] + [(f"en-{i}", 0.81) for i in range(5)] + [(f"zh-{i}", 0.80) for i in range(19)]
    langs = {u: u.split("-")[0] for u, _ in vec}
    table = {("en", "zh"): 0.035}
    assert vector_matches(gate_cosines(vec, "en", langs, table), 0.83, 0.03) == set()
    assert gate_matches(vec, "en", langs, 0.83, 0.03, table) == {"en-best"} == vector_matches(vec, 0.83, 0.03)
    # a Chinese memory alone: the English question's cosines all rise, the best stands clear of the raised crowd
    zh_only = [("zh-best", 0.81)] + [(f"zh-{i}", 0.77) for i in range(24)]
    assert vector_matches(zh_only, 0.83, 0.03) == set()
    assert gate_matches(zh_only, "en", {u: "zh" for u, _ in zh_only}, 0.83, 0.03, table) == {"zh-best"}


def test_only_cross_lingual_pairs_have_offsets_and_none_tightens_a_floor():
    assert set(qa.CROSS_LINGUAL_OFFSET) <= {("en", "zh"), ("zh", "en")}
    assert all(0 <= v < 0.1 for v in qa.CROSS_LINGUAL_OFFSET.values())


# A Chinese chat about an allergy (two days, the assistant's replies too), for the gate's last stage: the question said
# in the memory's language (query.ask.translated_matches). Its margins over the stand-in crowd are 0.016 for the
# question about the allergy and below -0.04 for the unrelated ones (measured on this machine): far past a CPU's
# rounding. Where it decides in ask() (a question just short of every other stage) the margins are thinner, so the
# flip itself is measured by `agentos bench facts` and bench/gate_calibration.py, not asserted here.
ALLERGY = [[("user", "我对花粉过敏，一到春天就打喷嚏流鼻涕"), ("assistant", "花粉季可以提前吃抗过敏药，出门戴口罩。"), ("user", "好")],
           [("user", "今天又过敏了，眼睛痒了一整天"), ("assistant", "可以用人工泪液冲洗一下。"), ("user", "嗯")]]


@pytest.fixture(scope="module")
def allergy_log(tmp_path_factory):
    return chat_workspace(tmp_path_factory, "translated", "2026-04-06T23:00:00+08:00", dict(zip(("2026-04-05", "2026-04-06"), ALLERGY)))


def _translated(settings, question: str) -> set[str]:
    from agentos_mem.storage.index_units import collection_name

    reader = qa._reader(settings, [])
    return qa.translated_matches(settings, reader, collection_name("local", "li"), question, script_lang(question))


def test_a_question_said_in_the_memorys_language_meets_the_memory(allergy_log, monkeypatch):
    monkeypatch.setenv("AGENTOS_NOW", "2026-04-06T23:00:00+08:00")
    found = _translated(allergy_log, "What am I allergic to?")
    assert found and all(u.startswith(("card:", "fact:")) for u in found), found
    a = ask("What am I allergic to?", user="li", settings=allergy_log)
    assert a.status == "ok" and any("花粉" in i.text for i in a.items), (a.status, [i.text for i in a.items])


@pytest.mark.parametrize("question", ["How do I bake sourdough bread?", "explain the rules of cricket"])
def test_an_unrelated_question_said_in_the_memorys_language_still_stops(allergy_log, monkeypatch, question):
    monkeypatch.setenv("AGENTOS_NOW", "2026-04-06T23:00:00+08:00")
    assert _translated(allergy_log, question) == set(), question
    assert ask(question, user="li", settings=allergy_log).status == "no_history", question


def test_the_translated_question_judges_only_the_other_languages_units(allergy_log, monkeypatch):
    # a question in Chinese over this Chinese memory has no other language to be said in: the stage passes nothing
    monkeypatch.setenv("AGENTOS_NOW", "2026-04-06T23:00:00+08:00")
    assert _translated(allergy_log, "花粉季节我该吃什么药？") == set()
