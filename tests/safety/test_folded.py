"""``folded`` (how the secret detectors read a text: NFKC per character, invisible characters dropped, Traditional
cue characters Simplified) against the reference it replaces: one normalisation per character. Its fast path (a
text that is its own NFKC form is translated one to one) must give the same reading and the same mapping back for
every character, alone and beside the characters that compose with it."""

from __future__ import annotations

import unicodedata

import pytest

from agentos_mem.safety.secrets.find import _INVISIBLE, _TRADITIONAL, find_secrets, folded


def reference(text: str) -> tuple[str, list[int]]:
    out, where = [], []
    for i, ch in enumerate(text):
        if ch in _INVISIBLE:
            continue
        for c in unicodedata.normalize("NFKC", ch).translate(_TRADITIONAL):
            out.append(c)
            where.append(i)
    return "".join(out), where


@pytest.mark.parametrize("context", ["{}", "a{}", "{}\u0301", "한{}\u1161", "密{}码"])
def test_every_character_reads_as_the_reference_reads_it(context):
    wrong = []
    for cp in [*range(0x30000), *range(0xE0000, 0xE01F0)]:  # every plane with assigned characters but private use
        if 0xD800 <= cp <= 0xDFFF:
            continue
        text = context.format(chr(cp))
        seen, where = folded(text)
        if (seen, list(where)) != reference(text):
            wrong.append(hex(cp))
    assert wrong == []


def test_a_cue_written_in_full_width_traditional_or_with_invisible_characters_is_still_found():
    for line in ("ｐａｓｓｗｏｒｄ: hunter2hunter2", "密碼：Xk9#mQ2vLp8z", "密\u200b码：Xk9#mQ2vLp8z", "数据库的密码是 Xk9#mQ2vLp8z"):
        found = find_secrets(line)
        assert found and line[found[0].start:found[0].end].endswith(("hunter2hunter2", "Xk9#mQ2vLp8z")), line
