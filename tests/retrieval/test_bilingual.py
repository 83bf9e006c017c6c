"""The Chinese-English word bridge (retrieval.bilingual, from CC-CEDICT): what lets a question in one language meet
memory in the other at the no-history gate."""

from __future__ import annotations

import pytest

from agentos_mem.retrieval import bilingual as B


@pytest.mark.parametrize("word, chinese", [("notes", "笔记"), ("backup", "备份"), ("database", "数据库"), ("camera", "相机"),
                                           ("school", "学校"), ("server", "服务器"), ("city", "城市")])
def test_an_everyday_english_word_has_its_chinese_word(word, chinese):
    assert chinese in B.chinese_for(word)


def test_inflected_forms_meet_their_word_and_single_characters_never_stand_for_one():
    assert "笔记" in B.chinese_for("notes") and "备份" in B.chinese_for("backups")
    assert all(len(z) >= 2 for w in ("run", "main", "shoot", "go") for z in B.chinese_for(w))
    assert len(B.chinese_for("run")) <= B.PER_WORD


def test_a_chinese_word_has_the_english_words_of_its_short_senses():
    assert {"read", "note"} <= B.english_for("读书笔记")  # a compound the dictionary lacks: 读书 + 笔记
    assert "backup" in B.english_for("备份") and "database" in B.english_for("数据库")
    assert "editor" in B.english_for("编辑器") and "city" in B.english_for("城市")


def test_a_romanised_name_spells_its_characters():
    assert B.spells("duoduo", "朵朵转学了") and B.spells("Duoduo", "我女儿朵朵")
    assert not B.spells("duoduo", "我女儿上二年级") and not B.spells("li", "小李")  # one syllable says too little
    assert B.english_words("Which city is my colleague Xiao Li based in now?")[0] == "xiaoli"
    assert B.spells("xiaoli", "同事小李搬去了深圳")


def test_question_words_and_fillers_are_not_content():
    assert B.english_words("Which one do I use now?") == []
    assert B.english_words("What time does the database backup run?") == ["time", "database", "backup", "run"]
    assert "哪些" not in B.chinese_words("我有哪些爱好？") and "爱好" in B.chinese_words("我有哪些爱好？")


def test_a_clitic_is_not_part_of_its_word():
    # "what's" is a question word and "wife's" is the wife the dictionary knows: with the clitic kept, neither was
    assert B.english_words("What's my wife's job?") == ["wife", "job"]
    assert B.english_words("I'm sure it isn't the team's budget") == ["sure", "team", "budget"]
    assert B.coverage("What's my wife's job?", "en", "我老婆是护士，她的工作三班倒") == 1.0


def test_coverage_counts_the_question_words_a_translation_meets():
    memory = "我的读书笔记一直都记在Notion里"
    words, hit = B.met("Which app do I keep my reading notes in now?", "en", memory)
    assert "notes" in hit and words == ["app", "keep", "reading", "notes"]
    assert B.coverage("Where do I keep my notes?", "en", memory) == 0.5  # keep / notes: notes meets 笔记
    assert B.coverage("Is Notion still syncing?", "en", memory) > 0  # a name in Latin letters meets itself
    assert B.coverage("How do I bake sourdough bread?", "en", memory) == 0
    assert B.coverage("数据库备份几点执行？", "zh", "The database backup runs at 2 am every night") == 1.0
    assert B.coverage("红烧肉怎么做", "zh", "The database backup runs at 2 am every night") == 0
    assert B.coverage("???", "en", memory) == 0


def test_an_english_word_is_met_by_the_senses_of_the_memorys_chinese_words():
    """Both directions of the dictionary: an English word's few commonest renderings miss what a user writes (读书 is not
    among "reading"'s, 宠物 not among "pet"'s first), the Chinese word's own senses name it."""
    assert "读书" not in B.chinese_for("reading")
    memory = "读书笔记现在都放在 Logseq 里了"
    words, hit = B.met("Where are my reading notes kept?", "en", memory)
    assert words == ["reading", "notes", "kept"] and hit == ["reading", "notes"]
    assert B.coverage("Which pet did I adopt?", "en", "上周领养了一只宠物兔") == 1.0
    assert B.coverage("How do I bake sourdough bread?", "en", memory) == 0


def test_met_shares_weighs_a_memorys_rare_words_that_a_question_in_the_other_language_meets():
    """The memory's side of the bridge (recall's dialogue contexts): the share of a text's content words, weighted by
    their rarity among the texts, that the query meets through the dictionary; texts in the query's language get 0."""
    texts = {"party": "Bart在圣诞节晚会上跳舞，感觉非常开心。", "race": "Bart在学校的体育节上获得男子一百米第一名，感到非常开心。",
             "ice": "Bart在新开的冰淇淋店尝试了芒果口味的冰淇淋，感到非常开心。", "same": "Bart won a prize at the party."}
    shares = B.met_shares("I danced at the Christmas party and it was great", texts, list(texts))
    assert shares["party"] > 0.5 > 0.1 > max(shares["race"], shares["ice"]) and shares["same"] == 0.0
    assert set(B.met_shares("How do I bake sourdough bread?", texts, list(texts)).values()) == {0.0}
    assert B.content_words(texts["party"])[:3] == ["圣诞节", "晚会", "跳舞"]


def test_a_character_the_memory_writes_alone_carries_its_first_senses():
    """A Chinese memory often says a thing in one character (7楼, 租了): its first senses meet the question's word, but
    only where the character is a word of its own, and only its first senses (a common character has dozens)."""
    assert B.coverage("Which floor is my desk on now?", "en", "我们整个组被挪到了7楼，我现在靠窗坐") == 0.5  # floor: 楼
    assert B.coverage("Which floor is my desk on now?", "en", "楼下新开了一家咖啡店") == 0  # 楼下 is downstairs, not 楼
    assert B.coverage("Who did I fight with?", "en", "我打算周末去爬山") == 0  # 打算 is a word: no 打 in it
    assert "fight" not in B._char_senses("打") and "beat" in B._char_senses("打")  # its 8th sense, past the first few


def test_a_question_said_in_the_other_language_takes_each_words_first_rendering():
    # what the gate's last stage embeds (query.ask.translated_matches): one rendering a word, in the question's order
    assert B.first_sense("宠物") == "house pet" and B.first_sense("薛定谔") is None
    assert B.translation("Which keyboard does Nora use?", "en") == "键盘 nora"  # a name the dictionary lacks stays
    assert B.translation("我的数据库备份在哪里？", "zh") == "database backup"
    # a Chinese word the dictionary lacks says nothing in English: left out, not written in Han characters
    assert B.translation("薛定谔方程", "zh") == "mathematical equation" and B.translation("薛定谔", "zh") == ""
    assert B.translation("What is it?", "en") == "" and B.translation("What is it?", "mixed") == ""
