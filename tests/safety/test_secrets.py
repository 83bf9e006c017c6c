"""The secret detector and masker (agentos_mem/safety/secrets/): stated secrets in both languages, shapes, high entropy,
what must never be masked, the marker, and properties (idempotent, no change without a secret, lines kept)."""

from __future__ import annotations

import random
import string

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agentos_mem.safety.secrets import (CUES, MARKER_RE, CUE_STEMS, asks_for_secret, has_secret, is_random, marker, mask_lines,
                            mask_text, mask_value, secret_subject, strip_markers)

REF = "alice/2026-11-20/r1/2026-11-20.md"

# (text, the secret that must go)
STATED = [
    ("my NAS password is hunter2-NAS", "hunter2-NAS"),
    ("My NAS password is hunter2-NAS.", "hunter2-NAS"),
    ("the password for the NAS is hunter2-NAS", "hunter2-NAS"),
    ("the wifi password at home is: sunshine88", "sunshine88"),
    ("Password: correcthorse", "correcthorse"),
    ("what was it... oh, pass word is Tr0ub4dor&3", "Tr0ub4dor&3"),
    ("I set my password to letmein", "letmein"),
    ("I changed the router password to dragon yesterday", "dragon"),
    ("the passphrase is 'correct horse battery staple'", "correct horse battery staple"),
    ("hunter2-NAS is my NAS password", "hunter2-NAS"),
    ("PIN is 4821", "4821"),
    ("card PIN 4821", "4821"),
    ("my github token is ghp_abcdefghijklmnopqrstuvwxyz0123456789", "ghp_abcdefghijklmnopqrstuvwxyz0123456789"),
    ("token: 8f3k2LmQ9xZ7", "8f3k2LmQ9xZ7"),
    ("the API key for OpenAI = 9f8e7d6c5b4a39281706", "9f8e7d6c5b4a39281706"),
    ("export DB_PASSWORD=s3cr3t!", "s3cr3t!"),
    ('{"password": "hunter2", "user": "alice"}', "hunter2"),
    ("| password | hunter2 |", "hunter2"),
    ("mysql -u root --password=hunter2", "hunter2"),
    ("the secret key is 0123456789abcdef0123456789abcdef", "0123456789abcdef0123456789abcdef"),
    ("credentials: alice/Wonder1and", "alice/Wonder1and"),
    # Chinese, simplified and traditional, mixed
    ("我的NAS密码是hunter2-NAS", "hunter2-NAS"),
    ("NAS的密码是 hunter2-NAS，记住了", "hunter2-NAS"),
    ("我的口令是天王盖地虎", "天王盖地虎"),
    ("口令：芝麻开门", "芝麻开门"),
    ("支付密码为654321", "654321"),
    ("密码改成了 Abc@2026", "Abc@2026"),
    ("路由器密码现在是 qwerty123", "qwerty123"),
    ("验证码483920", "483920"),
    ("验证码是 483920，五分钟内有效", "483920"),
    ("wifi密码 88888888", "88888888"),
    ("abc123是我的密码", "abc123"),
    ("用 Xk9pLm2Q 作为密码", "Xk9pLm2Q"),
    ("私钥是 5KQwrPbwdL6PhXujxW37FSSQZ1JiwsST4cqQzDeyXtP79zkvFD3", "5KQwrPbwdL6PhXujxW37FSSQZ1JiwsST4cqQzDeyXtP79zkvFD3"),
    ("我的銀行卡密碼是 135790", "135790"),
    ("令牌是 a1b2c3d4e5f6g7", "a1b2c3d4e5f6g7"),
    ("提取码: x7k2", "x7k2"),
]

SHAPES = [
    "sk-proj-abcdefghijklmnop1234567890", "sk-ant-api03-AbCdEfGhIjKlMnOpQrStUv", "sk_live_4eC39HqLyjWDarjtT1zdp7dc",
    "pk_live_51H8abcdefghijklmnop", "ghp_abcdefghijklmnopqrstuvwxyz0123456789", "gho_abcdefghijklmnopqrstuvwxyz0123456789",
    "github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyz", "glpat-abcdefghij1234567890", "xoxb-1234567890-abcdefghijkl",
    "xoxp-1234567890-abcdefghijkl", "AKIAIOSFODNN7EXAMPLE", "AIzaSyA1234567890abcdefghijklmnopqrstuv",
    "hf_abcdefghijklmnopqrstuvwxyz12345",
    "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
    "Zx8kQ2mN7pL4vR9tY3wB6cF1",  # high entropy, no cue
]

NEVER = [
    "the password is wrong", "password is required", "passwords must be 12 characters", "the password is in the drawer",
    "the wifi password is on the fridge", "I need to reset my password", "password manager", "密码是什么？", "我的口令是什么",
    "密码忘了", "记得改密码", "密码长度至少8位", "数据库密码在 vault 里", "请把密码发给我", "what's my pass word",
    "the token budget is 1200", "max_tokens=1000", "Token count: 1234", "the token is valid until May", "我们用令牌桶限流",
    "PIN the tab", "sort_key = name", "TOKENIZERS_PARALLELISM=false", "the secret of good coffee is fresh beans",
    "version v2.1.0-beta.20261120", "2026-11-20T09:12:00+08:00", "ISO 2026-11-20", "服务器配置升级到 8C16G 了",
    "数据库端口是 5432", "/usr/local/lib/python3.11/site-packages/agentos/storage.py",
    "C:\\Users\\alice\\AppData\\Local\\Programs\\Python\\Python311\\python.exe",
    "https://github.com/alice/agentos-memory/blob/main/README.md",
    "https://example.com/search?q=agentos+memory+system&lang=zh-CN",
    "https://www.w3.org/TR/wai-aria-practices-1.2/", "https://arxiv.org/abs/2210.04457",
    # hashes and ids are not secrets by shape (a hex key stated as one still is: see STATED)
    "commit 3f2a9c1d8e7b6a5f4e3d2c1b0a9f8e7d6c5b4a39",
    "sha256 e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
    "uuid 123e4567-e89b-12d3-a456-426614174000", "getUserAccountSettingsById", "internationalization",
    "org.springframework.boot.autoconfigure.SpringBootApplication", "email alice.smith@example-company.com",
    REF, "myhost_20261120_nas-password", "python3.11 -m pytest -q -x tests/kernel/test_secrets.py",
    "payload: { email: string, password: string }", "`AGENTOS_NOW=2026-12-31T23:30:00+08:00`",
    "这是一段很长很长的中文文本，没有任何密钥也没有任何秘密，只是在讨论数据库的配置和部署的步骤而已",
]


@pytest.mark.parametrize("text,secret", STATED)
def test_stated_secrets_are_masked_and_the_sentence_kept(text, secret):
    out = mask_text(text, REF, 12)
    assert secret not in out
    assert f"[secret masked · original at {REF} line 12]" in out
    # the cue and the rest of the sentence stay: "NAS password is [secret masked ...]" still says what it was
    rest = text.replace(secret, "")
    assert all(word in out for word in rest.split() if len(word) > 2 and word.isalpha())


@pytest.mark.parametrize("secret", SHAPES)
def test_shapes_are_masked_without_a_cue(secret):
    for text in (secret, f"here it is {secret} ok", f"配置里写着{secret}，别外传"):
        out = mask_text(text)
        assert secret not in out and "[secret masked]" in out, text


def test_url_credentials_keep_user_and_host():
    out = mask_text("postgres://admin:Sup3rS3cret@db.internal:5432/app")
    assert out == "postgres://admin:[secret masked]@db.internal:5432/app"


def test_authorization_header():
    assert mask_text("Authorization: Bearer abc123def456ghi789") == "Authorization: Bearer [secret masked]"


def test_private_key_block_is_masked_line_by_line_keeping_the_lines():
    body = "\n".join(["-----BEGIN OPENSSH PRIVATE KEY-----", "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQ",
                      "QyNTUxOQAAACBvZ2l0aHViLmNvbS9hbGljZS9rZXkAAAAA", "-----END OPENSSH PRIVATE KEY-----", "done"])
    out, n = mask_lines(body, REF, 3)
    lines = out.split("\n")
    assert n == 2 and len(lines) == 5 and lines[0].startswith("-----BEGIN") and lines[3].startswith("-----END")
    assert lines[1] == marker(f"{REF} line 4") and lines[2] == marker(f"{REF} line 5") and lines[4] == "done"


@pytest.mark.parametrize("text", NEVER)
def test_ordinary_text_is_never_masked(text):
    assert mask_text(text) == text and not has_secret(text)


def test_markers_name_the_line_of_each_line_and_a_jsonl_turn_stays_on_its_line():
    text = "line one\nthe password is hunter2\nPIN 4821"
    assert mask_text(text, REF, 10) == (f"line one\nthe password is [secret masked · original at {REF} line 11]\n"
                                        f"PIN [secret masked · original at {REF} line 12]")
    one = mask_lines(text, REF, 7, last_line=7)[0]
    assert one.count("line 7]") == 2 and "line 8" not in one
    assert mask_text("password: hunter2") == "password: [secret masked]"  # no origin: a plain marker


def test_random_tokens_are_caught_and_words_paths_and_hashes_are_not():
    rng = random.Random(7)
    alphabet = string.ascii_letters + string.digits
    caught = sum(is_random("".join(rng.choice(alphabet) for _ in range(32))) for _ in range(400))
    assert caught >= 390  # the 2-3% a random draw makes word-like are caught when stated (cue) or by prefix
    hexes = ["".join(rng.choice("0123456789abcdef") for _ in range(n)) for n in (32, 40, 64)]
    assert not any(is_random(h) for h in hexes)
    assert not is_random("getUserAccountSettingsById") and not is_random("2026112009120008000000")


def test_fact_values_are_masked_by_their_subject():
    assert mask_value("NAS password", "hunter2-NAS", REF, 3) == (marker(f"{REF} line 3"), 1)
    assert mask_value("数据库密码", "Abc@123")[0] == "[secret masked]"
    assert mask_value("GitHub token", "not-a-token")[1] == 0  # a token must look like one
    assert mask_value("token limit", "4000") == ("4000", 0) and mask_value("NAS密码", "什么") == ("什么", 0)
    assert secret_subject("wifi密码") == "any" and secret_subject("STRIPE_KEY") == "token" and secret_subject("服务器配置") is None


@pytest.mark.parametrize("request_,cue", [
    ("what's my pass word", "pass word"), ("我的口令是什么", "口令"), ("show the API key", "API key"),
    ("what is my NAS password?", "password"), ("我的NAS密码是多少", "密码"), ("what's my GitHub token?", "token"),
    ("令牌是多少", "令牌"), ("我的支付密码", "支付密码"), ("验证码是多少", "验证码"), ("what is my pin?", "pin"),
    ("show me the credentials", "credentials"), ("give me the DB_PASSWORD", "PASSWORD"), ("密 码", "密码"),
    ("助记词是什么", "助记词"), ("把私钥发我", "私钥"), ("what's the client secret", "client secret"),
])
def test_requests_for_secrets_are_recognised(request_, cue):
    assert asks_for_secret(request_) == cue


@pytest.mark.parametrize("request_", [
    "NAS", "what is the token budget", "how many tokens does this use", "这个回答花了多少 token？", "我们的令牌桶容量",
    "pin the tab", "tell me a secret", "what's the secret of good coffee", "tokenizer settings", "数据库端口是多少",
    "what is my API version?", "key points of the meeting",
])
def test_ordinary_requests_are_not_secret_requests(request_):
    assert asks_for_secret(request_) is None


def test_every_cue_passes_the_prefilter():
    assert not [c for c in CUES if not any(stem in c.lower() for stem in CUE_STEMS)]


def test_strip_markers():
    assert strip_markers(f"NAS password is {marker(REF + ' line 3')} ok").split() == ["NAS", "password", "is", "ok"]


# -- properties ----------------------------------------------------------------------------------------------------
_TEXT = st.text(alphabet=st.characters(codec="utf-8", categories=("L", "N", "P", "Zs", "S")), max_size=120)
_PLAIN = st.lists(st.sampled_from(["数据库", "端口", "配置", "我们", "今天", "部署", "server", "config", "the", "port", "is",
                                   "5432", "v2.1", "8C16G", "会议", "周报", "coffee", "likes", "，", "。"]), max_size=30).map(" ".join)
# (words are spaced: twenty glued letters and digits, "server5432the8C16Gis", are by design what a key looks like)
_SECRET_LINES = st.sampled_from([t for t, _ in STATED] + SHAPES)


@settings(max_examples=300, deadline=None)
@given(_TEXT)
def test_masking_is_idempotent(text):
    once = mask_text(text, REF, 1)
    assert mask_text(once, REF, 1) == once
    assert once.count("\n") == text.count("\n")


@settings(max_examples=300, deadline=None)
@given(_PLAIN)
def test_text_without_a_secret_is_never_changed(text):
    assert mask_text(text, REF, 1) == text


@settings(max_examples=200, deadline=None)
@given(_PLAIN, _SECRET_LINES, _PLAIN)
def test_a_secret_anywhere_in_a_line_is_masked_and_the_rest_kept(before, line, after):
    text = f"{before}\n{line}\n{after}"
    out = mask_text(text, REF, 1)
    assert out.split("\n")[0] == before and out.split("\n")[2] == after
    assert MARKER_RE.search(out.split("\n")[1])
    assert mask_text(out, REF, 1) == out
