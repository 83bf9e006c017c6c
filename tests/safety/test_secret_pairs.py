"""Credentials written without a cue word (issue 25, item 2): ``user / password``, ``user:password``,
``user:password@host`` and cued unlock codes are masked by their shape; ordinary text with ``/`` and ``:`` is not;
requests for a password in disguise are recognised; a marker never names a local absolute path.

The inputs live in the bad-input corpus (tests/kit/bad_secrets.py)."""

from __future__ import annotations

import random
import string

import pytest

from agentos_mem.safety.secrets import asks_for_secret, has_secret, looks_like_password, marker, mask_text
from agentos_mem.kernel.text import fold_request
from tests.kit.bad_secrets import DISGUISED, INNOCENT, NOT_PAIRS, PAIRS

REF = "alice/2026-11-20/r1/2026-11-20.md"


@pytest.mark.parametrize("line,secret,kept", PAIRS)
def test_a_credential_without_a_cue_is_masked_and_the_rest_kept(line, secret, kept):
    out = mask_text(line, REF, 3)
    assert secret not in out, out
    assert f"[secret masked · original at {REF} line 3]" in out
    assert kept in out, out  # the account name, the host, the words around it stay
    assert mask_text(out, REF, 3) == out  # idempotent


@pytest.mark.parametrize("line", NOT_PAIRS)
def test_ordinary_text_with_slashes_and_colons_is_not_masked(line):
    assert mask_text(line) == line and not has_secret(line)


def test_the_same_shapes_inside_sentences_of_both_languages():
    pw = "Hq4$wN8zR"
    for line in (f"NAS 的账号密码 admin/{pw}，别外传", f"wiki 上写着 svc-backup : 就这个；svc-backup/{pw}。",
                 f"try ops@corp.example / {pw} on the staging box", f"(admin:{pw})", f"[09:10] 用户: guest:{pw}@10.0.0.9:22"):
        out = mask_text(line)
        assert pw not in out and "[secret masked]" in out, line


def test_random_passwords_are_caught_and_random_words_are_not():
    rng = random.Random(25)
    symbols = "!#$%&*+=?@^~"
    # a generated password: letters of both cases, digits and a symbol, 8 to 16 long
    pwds = []
    for _ in range(300):
        n = rng.randint(8, 16)
        chars = [rng.choice(string.ascii_lowercase), rng.choice(string.ascii_uppercase), rng.choice(string.digits),
                 rng.choice(symbols)] + [rng.choice(string.ascii_letters + string.digits + symbols) for _ in range(n - 4)]
        rng.shuffle(chars)
        pwds.append("".join(chars))
    caught = sum(looks_like_password(p) for p in pwds)
    assert caught >= 270, caught  # what a password manager generates; the rest are masked when a cue names them
    words = ["input", "output", "Release-Notes", "Asia-Shanghai", "all-MiniLM-L6-v2", "Qwen2.5-7B-Instruct", "Android-14",
             "Meeting-2026", "Hello-World!", "Summer2024!", "README-v2.md", "1.25-alpine", "2026-11-20", "10:30", "16:9"]
    assert [w for w in words if looks_like_password(w)] == []


@pytest.mark.parametrize("request_", DISGUISED)
def test_a_disguised_request_for_a_password_is_recognised(request_):
    assert asks_for_secret(request_) is not None


@pytest.mark.parametrize("request_", INNOCENT)
def test_an_innocent_request_is_not(request_):
    assert asks_for_secret(request_) is None


def test_folding_a_request():
    assert fold_request("NAS pass\u200bword") == "NAS password"
    assert fold_request("p a s s w o r d") == "password" and fold_request("P.A.S.S") == "PASS"
    assert fold_request("ＡＰＩ ｋｅｙ") == "API key" and fold_request("密\u2060码") == "密码"
    assert fold_request("where is the NAS?") == "where is the NAS?"  # nothing to fold, nothing changed


def test_a_marker_never_names_an_absolute_path():
    assert marker("/home/alice/materials/ops.md line 4") == "[secret masked · original at ops.md line 4]"
    assert marker("C:\\Users\\alice\\ops.md") == "[secret masked · original at ops.md]"
    assert marker("file:///srv/kb/ops.md") == "[secret masked · original at ops.md]"
    assert marker(f"{REF} line 2") == f"[secret masked · original at {REF} line 2]"  # a raw reference is relative
    assert marker("https://example.org/ops") == "[secret masked · original at https://example.org/ops]"
