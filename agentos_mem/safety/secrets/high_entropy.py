"""High entropy: a long token that looks like a random key, found without any cue or known shape.

Decided on a run of ``[A-Za-z0-9+/=_.~-]`` of at least 20 letters and digits (``name=value`` split
at "="; a URL or a path judged by its ``/``- and ``.``-separated segments, since its words must not add up to a
random-looking whole). A run is random when it has at least 2 digits and 2 letters (or both letter cases), at most
half of it digits, a Shannon entropy of at least 3.3 bits a character (a random base62 string of 20 has about 4;
"aaaa1111bbbb2222cccc" 2.3), and the character class (lower, upper, digit) changes between neighbours often:
in at least 45% of the pairs (random base62: about 60%; camelCase about 40%; words, snake_case, dates far less),
or in at least 25% when at most 40% of it sits in word-like humps (``getUserById`` -> get, User, By, Id; a hump
is word-like from four letters with vowels in it). Measured: 99% of random base62 strings of 20-64 characters and
of base64 strings of 32 are caught; of the 134,000 lines of the LoCoMo, MemoryBank, CMRC, RGB and Vue-docs data,
only the compressed state in Vue playground links (base64: masking it is harmless) and one "&passcode=..." are.
Never random: hexadecimal alone (git commits, SHA-256 sums, UUIDs: identifiers this project and its users print
everywhere, not secrets; a hex *key* is still masked when it is stated as one, "secret key is 0123abcd..."),
digits alone (phone numbers, timestamps, ids), version strings and ISO dates, paths and URLs without
credentials, and Chinese text (only ASCII runs are ever candidates).

``random_spans`` finds them in a line; ``is_random`` judges one token. ``HUMPS``, ``wordlike`` and
``class_shifts`` also judge a password without a cue (pairs.py)."""

from __future__ import annotations

import math
import re
from collections import Counter

from agentos_mem.safety.secrets.common import Lazy

MIN_RANDOM_LEN = 20
MIN_ENTROPY = 3.3
MAX_WORDISH = 0.4
MIN_SHIFTS = 0.25  # with few words in it
MIN_SHIFTS_ALONE = 0.45  # random whatever its humps say
RUN = Lazy(r"(?<![A-Za-z0-9+/=_.~-])[A-Za-z0-9+/=_.~-]{%d,}" % MIN_RANDOM_LEN)
HUMPS = Lazy(r"[A-Z]{2,}(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|\d+")
_HEX = Lazy(r"^[0-9a-f]+$|^[0-9A-F]+$")


def entropy(text: str) -> float:
    """Shannon entropy of ``text`` in bits per character."""
    if not text:
        return 0.0
    n = len(text)
    return -sum(c / n * math.log2(c / n) for c in Counter(text).values())


_VOWEL_RUNS = Lazy(r"[aeiouy]+", re.IGNORECASE)
_CONSONANT_RUN = Lazy(r"[b-df-hj-np-tv-xz]{5,}", re.IGNORECASE)


def wordlike(hump: str) -> bool:
    """A hump that reads as a word: four letters or more, vowels in it, no run of five consonants."""
    if len(hump) < 4 or not hump.isalpha():
        return False
    vowels = sum(len(v) for v in _VOWEL_RUNS.findall(hump))
    return 0.2 <= vowels / len(hump) <= 0.8 and not _CONSONANT_RUN.search(hump)


def is_random(token: str) -> bool:
    """Whether ``token`` (ASCII, no spaces) looks like a random key rather than a word, a name, a path, a version,
    a date or a hash (see the module docstring for the measure)."""
    core = "".join(ch for ch in token if ch.isascii() and ch.isalnum())
    if len(core) < MIN_RANDOM_LEN or _HEX.match(core) or core.isdigit():
        return False
    digits = sum(ch.isdigit() for ch in core)
    lower = sum(ch.islower() for ch in core)
    upper = sum(ch.isupper() for ch in core)
    if lower + upper < 2:
        return False
    if digits < 2 and not (lower >= 2 and upper >= 2):
        return False
    if digits > 0.5 * len(core) or entropy(core) < MIN_ENTROPY:
        return False  # mostly a number: dates, stamps, ids, references (random base62 is about 16% digits)
    # How often the character class (lower, upper, digit) changes between neighbours: random base62 about 0.6,
    # camelCase about 0.4, snake_case, words and dates far less.
    shifts = class_shifts(token)
    if shifts >= MIN_SHIFTS_ALONE:
        return True
    wordish = sum(len(h) for h in HUMPS.findall(token) if wordlike(h))  # separators split words too
    return wordish <= MAX_WORDISH * len(core) and shifts >= MIN_SHIFTS


def class_shifts(token: str) -> float:
    """The share of neighbouring letter/digit pairs (inside one segment) whose class differs (lower, upper, digit)."""
    pairs = shifts = 0
    for a, b in zip(token, token[1:]):
        if a.isascii() and b.isascii() and a.isalnum() and b.isalnum():
            pairs += 1
            shifts += (a.isdigit(), a.isupper()) != (b.isdigit(), b.isupper())
    return shifts / pairs if pairs else 0.0


def _runs(text: str) -> list[tuple[int, int]]:
    """Candidate runs: trailing punctuation cut, ``name=value`` split (only the value can be the key)."""
    out = []
    for m in RUN.finditer(text):
        s, e = m.start(), m.end()
        while e > s and text[e - 1] in ".-_~/+":
            e -= 1  # trailing sentence punctuation is not part of the token ("=" padding is)
        tail = e  # "=" padding at the end is part of the value, never a name=value split
        while tail > s and text[tail - 1] == "=":
            tail -= 1
        eq = text.find("=", s, tail)  # (found without slicing the run: "x=x=x=..." stays linear)
        while eq != -1 and eq + 1 < e:
            out.append((s, eq))
            s = eq + 1
            eq = text.find("=", s, tail)
        out.append((s, e))
    return out


def random_spans(text: str, base: int = 0) -> list[tuple[int, int]]:
    out = []
    for s, e in _runs(text):
        tok = text[s:e]
        # A URL or a path is judged by its segments (its words must not add up to a random-looking whole);
        # a base64 blob has a "/" now and then, a path one every few characters.
        pathlike = "/" in tok and ("://" in text[max(0, s - 3):e] or tok.startswith(("/", "~", ".")) or "www." in tok
                                   or tok.count("/") * 16 > len(tok))
        if not pathlike and len(tok) >= MIN_RANDOM_LEN and is_random(tok):
            out.append((base + s, base + e))
            continue
        # A path or URL whose segments are words may still carry one random segment (/d/<id>/, ?k=<key>).
        pos = s
        for seg in re.split(r"([/.])", tok):
            if seg not in ("/", ".") and len(seg) >= MIN_RANDOM_LEN and is_random(seg):
                out.append((base + pos, base + pos + len(seg)))
            pos += len(seg)
    return out
