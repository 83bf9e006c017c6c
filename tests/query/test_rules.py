"""L0 hard constraints from SOUL.md: the rule format, the matching a user would notice, loading and caching."""

from __future__ import annotations

import os

import pytest

from agentos_mem.kernel.templates import core_templates
from agentos_mem.query.rules import Rule, RulesError, check, load_rules, parse_rules

SOUL = core_templates()["SOUL.md"]


@pytest.fixture
def demo_rules() -> list[Rule]:
    return parse_rules(SOUL)


def blocked_by(rules: list[Rule], request: str) -> int | None:
    hit = check(rules, request)
    return hit[0].number if hit else None


def test_demo_template_has_four_rules_and_no_l1_items(demo_rules):
    assert [r.number for r in demo_rules] == [1, 2, 3, 4]
    assert demo_rules[0].text == "绝不删除用户数据。Never delete user data."
    assert "删除*记忆" in demo_rules[0].blocks and "password" in demo_rules[1].blocks
    assert demo_rules[2].blocks == () and demo_rules[3].blocks == ()
    lines = SOUL.splitlines()
    assert all(lines[r.line - 1].startswith(f"{r.number}. ") for r in demo_rules)


@pytest.mark.parametrize("request_", ["我的数据库密码是多少？", "what is my API key?", "tell me the admin password",
                                      "ＡＰＩ ＫＥＹ 是什么", "Show me the ACCESS TOKEN",
                                      "我的API key是多少"])
def test_secret_requests_are_blocked_by_rule_2(demo_rules, request_):
    assert blocked_by(demo_rules, request_) == 2


@pytest.mark.parametrize("request_", ["数据库端口是多少", "how do tokenizers work", "what is the tokenizer",
                                      "what is my API version?", "I deleted nothing today"])
def test_ordinary_requests_pass(demo_rules, request_):
    assert check(demo_rules, request_) is None


@pytest.mark.parametrize("request_", ["如何重置密码", "忘记密码怎么办", "密码复杂度要求是什么", "how do I reset a password?",
                                      "what is the team's password policy", "API key 轮换规范"])
def test_questions_about_handling_secrets_are_not_requests_for_one(demo_rules, request_):
    """The rule's bare "密码" / "password" blocks asking for a password, not a knowledge-base question about them."""
    assert check(demo_rules, request_) is None


@pytest.mark.parametrize("request_", ["请帮我删除所有记忆", "delete all my memories", "Please wipe my memory",
                                      "清空 全部 记忆"])
def test_wildcards_block_deletion_by_rule_1(demo_rules, request_):
    assert blocked_by(demo_rules, request_) == 1


def test_check_returns_the_phrase_that_matched(demo_rules):
    rule, phrase = check(demo_rules, "delete all my memories")
    assert (rule.number, phrase) == (1, "delete * memories")


def test_latin_phrases_match_whole_words_only():
    rules = parse_rules("## L0\n\n1. No tokens.\n   - blocks: token\n")
    assert blocked_by(rules, "print the token") == 1 and blocked_by(rules, "把token发给我") == 1
    assert check(rules, "how do tokenizers work") is None and check(rules, "what is the tokenizer") is None
    assert check(rules, "detokenize the text") is None and check(rules, "tokén") is None


def test_rule_without_blocks_never_blocks():
    rules = parse_rules("## L0\n\n1. Ask before any destructive action.\n\n## L1\n\n1. rm -rf everything\n")
    assert len(rules) == 1 and rules[0].blocks == ()
    assert check(rules, "Ask before any destructive action. rm -rf everything") is None


def test_regex_and_separators():
    text = "## l0 rules\n\n1. No prod.\n   - 拦截：/\\bprod(uction)?\\s+db\\b/，生产库、 drop table\n"
    rules = parse_rules(text)
    assert rules[0].blocks == ("/\\bprod(uction)?\\s+db\\b/", "生产库", "drop table")
    assert blocked_by(rules, "connect to the PRODUCTION DB") == 1
    assert blocked_by(rules, "查一下生产库") == 1
    assert blocked_by(rules, "DROP TABLE users") == 1
    assert check(rules, "the product dbs") is None


def test_invalid_regex_names_file_and_line():
    text = "# Soul\n\n## L0 Hard\n\n1. ok\n2. bad\n   - blocks: fine, /([unclosed/\n"
    with pytest.raises(RulesError, match=r"my/SOUL\.md:7"):
        parse_rules(text, source="my/SOUL.md")


def test_missing_file_is_no_rules(tmp_path):
    assert load_rules(tmp_path / "absent" / "SOUL.md") == []


def test_non_utf8_file_names_the_file(tmp_path):
    path = tmp_path / "SOUL.md"
    path.write_bytes("## L0\n\n1. 绝不删除用户数据\n".encode("gbk"))
    with pytest.raises(RulesError, match="SOUL.md"):
        load_rules(path)


def test_edited_file_is_reloaded(tmp_path):
    path = tmp_path / "SOUL.md"
    path.write_text("## L0\n\n1. No secrets.\n   - blocks: password\n", encoding="utf-8")
    os.utime(path, ns=(1_000_000_000, 1_000_000_000))
    first = load_rules(path)
    assert blocked_by(first, "the password") == 1
    assert load_rules(path) == first  # unchanged file: served from the cache

    path.write_text("## L0\n\n1. No secrets.\n2. Never touch prod.\n   - blocks: prod\n", encoding="utf-8")
    os.utime(path, ns=(2_000_000_000, 2_000_000_000))
    second = load_rules(path)
    assert [r.number for r in second] == [1, 2]
    assert check(second, "the password") is None and blocked_by(second, "deploy to prod") == 2


def test_demo_rules_leave_token_bucket_questions_alone():
    """令牌桶 (token bucket, rate limiting) is engineering, not a secret; 访问令牌 (access token) is."""
    rules = parse_rules(core_templates()["SOUL.md"])
    assert check(rules, "令牌桶限流怎么配置？") is None
    assert check(rules, "把访问令牌发给我")[0].number == 2


def _soul(*blocks: str) -> str:
    return "## L0 Hard constraints\n\n1. Never reveal secrets.\n   - blocks: password, 密码\n" + "".join(
        f"{n}. Rule {n}.\n   - blocks: {b}\n" for n, b in enumerate(blocks, 2))


def test_a_regex_of_a_catastrophic_shape_is_not_used_and_named_by_line():
    from tests.kit.bad_inputs import SLOW_REGEXES

    shaped = [r for r, how, _ in SLOW_REGEXES if how == "shape"]
    rules = parse_rules(_soul(*shaped, "/\\bsecrets?\\b/", "/(\\d{3}-)+\\d{4}/"), source="ws/SOUL.md")
    unusable = [line for r in rules for line in r.unusable]
    assert [u.split(":")[1] for u in unusable] == [str(6 + 2 * i) for i in range(len(shaped))]  # each one's blocks line
    assert all("is not used" in u and "repetition inside a repetition" in u for u in unusable)
    for rule, regex in zip(rules[1:], shaped):
        assert regex not in rule.blocks
    # the safe ones are kept (a fixed count inside a repetition cannot backtrack exponentially)
    assert rules[-2].blocks == ("/\\bsecrets?\\b/",) and rules[-1].blocks == ("/(\\d{3}-)+\\d{4}/",)
    notices: list[str] = []
    assert check(rules, "x" * 44, notices) is None and notices == unusable
    assert check(rules, "my password please")[0].number == 1  # the other rules still apply
    assert check(rules, "call 555-123-4567")[0].number == len(rules)


def test_a_regex_that_runs_out_of_time_is_not_applied_to_that_request_and_named():
    from tests.kit.bad_inputs import SLOW_REGEXES

    for regex, how, request in SLOW_REGEXES:
        if how != "time":
            continue
        rules = parse_rules(_soul(regex))
        assert rules[1].blocks == (regex,) and rules[1].unusable == ()  # its shape looks harmless
        notices: list[str] = []
        assert check(rules, request, notices) is None
        assert len(notices) == 1 and "L0 rule 2 (line 5)" in notices[0] and "did not finish" in notices[0], notices
        assert check(rules, "xxy")[0].number == 2  # it still blocks what it matches quickly
