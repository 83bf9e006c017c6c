"""The one tokenizer that the keyword (BM25) index and the query both use.

Indexing and querying must split text the same way, so everything that turns text into BM25 terms goes
through :class:`Tokenizer`, and an index stores :attr:`Tokenizer.identity` next to its data: when the
identity changes (jieba version, these rules, the stop-word list, the user dictionary), the index is stale
and must be rebuilt.

How a text becomes tokens:

1. NFKC (full-width letters and digits become half-width, compatibility ideographs become the unified
   ones), then ``casefold`` (``"Straße"`` -> ``"strasse"``), and curly apostrophes become ``'``.
2. *Protected spans* are found first and emitted whole, because jieba would cut them apart
   (``"v2.1.0"`` -> ``"v2", ".", "1", ...``). They are ASCII technical tokens, see :func:`protected_tokens`:

   - dotted, underscored or ``&``-joined chains: ``v2.1.0``, ``2.1.0``, ``192.168.1.10``, ``3.14159``,
     ``node.js``, ``docker-compose.yml``, ``qwen2.5-7b``, ``max_memory``, ``at&t``;
   - e-mail addresses, whole: ``a.b@c.com``;
   - hyphenated chains that contain a digit: ``gpt-4o``, ``utf-8``, ``2024-11-29`` (hyphenated words
     without a digit are split: ``e-mail`` -> ``e``, ``mail``);
   - words mixing letters and digits: ``8c16g``, ``4gb``, ``16g``, ``h264``, ``iphone8``, ``3d``;
   - ``c++``, ``c#``, ``g++``, ``f#``, ``c++17``; percentages ``5%``, ``2.5%``.

   Plain numbers (``5433``) and plain Latin words need no protection: they come out whole anyway.
   A span is only protected on ASCII word boundaries, so ``"升级到8C16G了"`` gives ``8c16g`` while
   ``"192.168.1.10:5432"`` gives ``192.168.1.10`` and ``5432``. The price: a protected span is never joined
   with the Chinese after it, so jieba's ``4S店`` becomes ``4s``, ``店`` (``1号店``, ``T恤`` are unaffected).
   Dotted words are one token even when a space is missing after a full stop (``"done.Then"``).
3. The text between protected spans is cut into Unicode word runs (letters and digits of any script,
   with inner apostrophes: ``don't``, ``it's``). A run without Chinese characters is one token
   (``café``, ``straße``, ``привет``, ``ありがとう``; scripts written without spaces other than Chinese,
   such as Thai or kana-only Japanese, therefore give whole runs). A run with Chinese characters goes to
   jieba precise mode (``cut_all=False, HMM=True``) together with the ASCII letters and digits next to it,
   so dictionary words such as ``T恤``, ``B超``, ``AA制``, ``1号店`` stay whole; words of other scripts
   inside such a run are cut out first and kept whole.
4. Tokens without a letter or digit are dropped (whitespace, punctuation), and stop words (Chinese and
   English, :data:`kernel.text.STOPWORDS`) unless ``stopwords=False``.
5. An English word (ASCII letters, an inner apostrophe allowed) loses its possessive (``caroline's`` ->
   ``caroline``, ``parents'`` -> ``parents``) and is cut to its Snowball English stem (``camped``, ``camping`` ->
   ``camp``; ``cities`` -> ``citi``): a question asks "where has she camped?" of a memory that says "went
   camping", and a possessive name is the name (kept whole it was a word no memory holds, which counted against
   every unit at the gate). Stop words are dropped before stemming (the list holds the words as written); other
   scripts and protected spans are kept as they are (Chinese has no inflection to fold). ``stem=False`` keeps the
   words as segmented (the parity test against jieba's reference cut).
6. With rule 5, a date written as digits (``2023-06-16``, ``2023.6.16``) also gives its year, its month's English
   name and number and its day (``2023``, ``june``, ``6``, ``16``), and an ordinal is its number (``8th`` -> ``8``): a
   memory's units carry their day as ``2023-06-16``, a question asks about "16 June, 2023", "June 2023" or
   "2023年6月16日" (jieba: ``2023`` ``年`` ``6`` ``月`` ``16`` ``日``); kept as one span, the question's date words met
   nothing and counted against every unit at the gate. ("May" is a stop word as the verb: a question's May meets its
   day by the year and the day alone.)

Single Chinese characters are kept (``"猫"`` must find a note about the cat), except those in the stop list
(``的``, ``了``, ``我`` ...).

Case: jieba's dictionary has some words with capitals (``T恤``, ``B超``, ``IP地址``); the tokenizer segments
lower-cased text against a private copy of the dictionary that also holds the lower-cased forms, so
``"T恤"`` and ``"t恤"`` give the same token. jieba's global default dictionary (``jieba.dt``) is never
changed: the lower-cased copy is shared by every :class:`Tokenizer` without a user dictionary in the
process (about 15 MB, built once), and each user dictionary gets its own copy, so two workspaces in one
process never see each other's words.
"""

from __future__ import annotations

import functools
import hashlib
import importlib.metadata
import re
import threading
import unicodedata
from collections.abc import Iterable
from pathlib import Path

import snowballstemmer

from agentos_mem.kernel.settings import load_settings
from agentos_mem.kernel.text import CJK, STOPWORDS, jieba_pieces, shared_jieba

#: Bumped whenever the rules in this module change the tokens they produce (part of ``identity``).
RULES_VERSION = 3  # 2: English words stemmed, possessives dropped (rule 5); 3: dates and ordinals (rule 6)

USER_DICT_RELPATH = Path("agent-sync/03_knowledge/99_system/user_dict.txt")

# ASCII technical tokens that jieba would cut apart; the text is already NFKC'd and case-folded.
# Every repetition that can run along a chain of separators is bounded, so a pathological input
# ("a-a-a-a-...", "a+a+a+...") costs linear time, not quadratic.
_PROTECTED = re.compile(
    r"""
    (?<![a-z0-9])
    (?:
        [a-z0-9](?:[a-z0-9._%+\-]{0,62}[a-z0-9])?                    # e-mail: local part (<= 64)
          @[a-z0-9](?:[a-z0-9\-]{0,61}[a-z0-9])?                       #   @ domain
          (?:\.[a-z0-9](?:[a-z0-9\-]{0,61}[a-z0-9])?){1,8}             #   .tld
      | [0-9]+(?:\.[0-9]+)?%                                           # percentage: 5%, 2.5%
      | [a-z][a-z0-9]*(?:\+\+|\#)[0-9]*(?![a-z0-9+\#])                 # c++, c#, g++, f#, c++17
      | [a-z0-9]+(?:-[a-z0-9]+){0,8}(?:[._&][a-z0-9]+(?:-[a-z0-9]+)*)+  # v2.1.0, 192.168.1.10, node.js, max_memory, at&t
      | (?=[a-z0-9\-]{0,64}[0-9])[a-z0-9]+(?:-[a-z0-9]+)+              # hyphenated with a digit: gpt-4o, utf-8
      | [a-z0-9]*(?:[a-z][0-9]|[0-9][a-z])[a-z0-9]*                    # letters and digits: 8c16g, 4gb, h264
    )
    (?![a-z0-9])
    """,
    re.VERBOSE,
)
# A word run: letters/digits of any script (``[^\W_]``), inner apostrophes allowed.
_WORD = re.compile(r"[^\W_]+(?:'[^\W_]+)*")
_HAS_CJK = re.compile(f"[{CJK}]")
# Inside a run with Chinese: the non-Chinese word chunks (kept whole unless plain ASCII letters/digits).
_NON_CJK_CHUNK = re.compile(rf"[^\W_{CJK}]+(?:'[^\W_{CJK}]+)*")
_HAS_WORD_CHAR = re.compile(r"[^\W_]")
_APOSTROPHES = str.maketrans({"\u2019": "'", "\u2018": "'", "\u02bc": "'"})
_ENGLISH_WORD = re.compile(r"[a-z]+(?:'[a-z]+)*")
_STEMMER = snowballstemmer.stemmer("english")
_SNOWBALL = importlib.metadata.version("snowballstemmer")  # part of the identity: another stemmer, other terms
_DATE = re.compile(r"(\d{4})[-./](\d{1,2})[-./](\d{1,2})")
_ORDINAL = re.compile(r"(\d+)(?:st|nd|rd|th)")
# vocabulary.dates.MONTH_NAMES, which a floor package may not import (tests/contract/test_layers.py)
_MONTHS = ("january", "february", "march", "april", "may", "june", "july", "august", "september", "october", "november",
           "december")
_USERDICT_LINE = re.compile(r"^(.+?)( [0-9]+)?( [a-z]+)?$")  # jieba's own user-dictionary line format

# Short runs with Chinese (clauses between punctuation) are remembered per tokenizer: chat text repeats a
# lot. Long runs are not, so the cache stays small (at most ~32k entries of <= 48 characters).
_SEGMENT_CACHE = 32768
_SEGMENT_CACHE_MAX_LEN = 48


@functools.lru_cache(maxsize=65536)
def english_term(word: str) -> str:
    """Rule 5 for one normalised English word: the possessive dropped, then its Snowball stem. A word of one or two
    letters, or one that keeps an apostrophe (``don't``), stays as it is."""
    if word.endswith("'s"):
        word = word[:-2]
    elif word.endswith("s'"):
        word = word[:-1]
    if "'" in word or len(word) < 3:
        return word
    return _STEMMER.stemWord(word)


def _term(tok: str, stop: frozenset, stem: bool) -> str | None:
    """A token as the index keeps it (rule 5 for an English word when ``stem``), or None for a stop word."""
    if tok in stop:
        return None
    if stem and tok.isascii() and _ENGLISH_WORD.fullmatch(tok):
        tok = english_term(tok)
        if not tok or tok in stop:
            return None
    return tok


def normalize(text: str) -> str:
    """NFKC, case-folded, curly apostrophes straightened: the form every rule below works on."""
    return unicodedata.normalize("NFKC", text).casefold().translate(_APOSTROPHES)


def protected_tokens(text: str) -> list[str]:
    """The protected spans of ``text`` (normalised), in order: the tokens kept whole regardless of jieba."""
    return _PROTECTED.findall(normalize(text))


def _sha8(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()[:8]


# -- private jieba instances ------------------------------------------------------------------------------
def _copy_jieba(src):
    """A new ``jieba.Tokenizer`` with its own copy of ``src``'s dictionary (copying beats reloading it)."""
    import jieba

    tk = jieba.Tokenizer()
    tk.FREQ = dict(src.FREQ)
    tk.total = src.total
    tk.initialized = True
    return tk


def _load_user_dict(tk, data: bytes) -> None:
    """Add ``word [freq] [tag]`` lines to the private instance ``tk`` (words normalised like the text).

    Blank lines and lines starting with ``#`` are skipped. Words are only found inside Chinese runs and
    never across a protected span or a space, so entries such as ``gpt-4o助手`` or ``machine learning``
    have no effect. A frequency of 0 removes the word from this
    dictionary; unlike ``jieba.del_word`` it does not touch jieba's process-wide HMM force-split list.
    """
    text = data.decode("utf-8").lstrip("\ufeff")
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        word, freq, _tag = _USERDICT_LINE.match(line).groups()
        word = normalize(word).strip()
        if not word:
            continue
        n = int(freq) if freq is not None else tk.suggest_freq(word, False)
        tk.FREQ[word] = n
        tk.total += n
        for i in range(1, len(word)):
            tk.FREQ.setdefault(word[:i], 0)


class Tokenizer:
    """Text -> BM25 terms, identically for documents and queries (see the module docstring for the rules)."""

    def __init__(self, *, user_dict: Path | None = None, cache_dir: Path | None = None, stopwords: bool = True,
                 stem: bool = True):
        import jieba

        base = shared_jieba(cache_dir)  # shared by Tokenizers without a user dict
        self.user_dict = Path(user_dict) if user_dict is not None else None
        self.stopwords = stopwords
        self.stem = stem
        self._stop = STOPWORDS if stopwords else frozenset()
        if self.user_dict is not None:
            data = self.user_dict.read_bytes()
            self._jieba = _copy_jieba(base)
            _load_user_dict(self._jieba, data)
            ud = _sha8(data)
        else:
            self._jieba = base
            ud = "none"
        sw = _sha8("\n".join(sorted(STOPWORDS)).encode()) if stopwords else "0"
        stemmer = f"snowball-en-{_SNOWBALL}" if stem else "nostem"
        self._identity = f"agentos-tok{RULES_VERSION}:jieba-{jieba.__version__}:precise:sw{sw}:{stemmer}:ud{ud}"
        self._segment = functools.lru_cache(maxsize=_SEGMENT_CACHE)(self._segment_run)

    @property
    def identity(self) -> str:
        """Stored with an index: a different identity means the index was built with other tokens."""
        return self._identity

    def __repr__(self) -> str:
        return f"Tokenizer({self._identity})"

    def tokens(self, text: str) -> list[str]:
        """BM25 terms of ``text``: order kept, duplicates kept."""
        if not text:
            return []
        s = normalize(text)
        stop = self._stop
        out: list[str] = []
        pos = 0
        for m in _PROTECTED.finditer(s):
            if m.start() > pos:
                self._gap(s[pos : m.start()], out)
            tok = m.group()
            if tok not in stop:
                out.extend(self._protected_terms(tok))
            pos = m.end()
        if pos < len(s):
            self._gap(s[pos:] if pos else s, out)
        return out

    def tokens_many(self, texts: Iterable[str]) -> list[list[str]]:
        return [self.tokens(t) for t in texts]

    # -- internals ----------------------------------------------------------------------------------------
    def _protected_terms(self, tok: str) -> list[str]:
        """A protected span's terms (rule 6): the span, and for a date its year, month (name and number) and day; an
        ordinal is its number."""
        if not self.stem:
            return [tok]
        if m := _ORDINAL.fullmatch(tok):
            return [m.group(1)]
        if (m := _DATE.fullmatch(tok)) and 1 <= int(m.group(2)) <= 12 and 1 <= int(m.group(3)) <= 31:
            month = int(m.group(2))
            return [tok, m.group(1), english_term(_MONTHS[month - 1]), str(month), str(int(m.group(3)))]
        return [tok]

    def _gap(self, gap: str, out: list[str]) -> None:
        stop = self._stop
        for m in _WORD.finditer(gap):
            run = m.group()
            if _HAS_CJK.search(run) is None:
                term = _term(run, stop, self.stem)
                if term:
                    out.append(term)
            else:
                seg = self._segment if len(run) <= _SEGMENT_CACHE_MAX_LEN else self._segment_run
                for tok in seg(run):
                    term = _term(tok, stop, self.stem)
                    if term:
                        out.append(term)

    def _segment_run(self, run: str) -> tuple[str, ...]:
        """A word run with Chinese: other-script words cut out whole, the rest through jieba precise mode."""
        pieces: list[str] = []
        pos = 0
        for m in _NON_CJK_CHUNK.finditer(run):
            chunk = m.group()
            if chunk.isascii() and chunk.isalnum():
                continue  # ASCII letters/digits stay with their Chinese neighbours (T恤, 1号店)
            if m.start() > pos:
                pieces.extend(self._cut(run[pos : m.start()]))
            pieces.append(chunk)
            pos = m.end()
        if pos < len(run):
            pieces.extend(self._cut(run[pos:] if pos else run))
        return tuple(p for p in pieces if _HAS_WORD_CHAR.search(p))

    def _cut(self, text: str) -> list[str]:
        """jieba precise mode, over pieces of ``kernel.text.JIEBA_PIECE_CHARS`` (its HMM is quadratic in a run's
        length; a run that long is a dump, not a sentence, so ordinary text segments as before)."""
        return [tok for piece in jieba_pieces(text) for tok in self._jieba.cut(piece, cut_all=False, HMM=True)]


_default_lock = threading.Lock()
_defaults: dict[tuple[str, tuple[int, int] | None], Tokenizer] = {}


def default_tokenizer(workspace_home: Path | None = None, *, stem: bool = True) -> Tokenizer:
    """The workspace's tokenizer: its user dictionary, jieba's cache in ``agent-local/runtime`` (``stem``: rules 5
    and 6; query.recall reads records with ``stem=False``).

    The user dictionary is ``<home>/agent-sync/03_knowledge/99_system/user_dict.txt`` when it exists
    (jieba format: ``word [freq] [tag]`` per line). Memoised per home and per state of that file (size and
    modification time), so an edited dictionary gives a new tokenizer, with a new ``identity``.
    """
    if workspace_home is None:
        workspace_home = load_settings().home
    home = Path(workspace_home).expanduser().resolve()
    ud_path = home / USER_DICT_RELPATH
    try:
        st = ud_path.stat()
        sig: tuple[int, int] | None = (st.st_size, st.st_mtime_ns)
    except OSError:
        sig = None
    key = (str(home), stem, sig)
    with _default_lock:
        tk = _defaults.get(key)
        if tk is None:
            tk = Tokenizer(user_dict=ud_path if sig is not None else None, cache_dir=home / "agent-local" / "runtime", stem=stem)
            for old in [k for k in _defaults if k[:2] == key[:2]]:
                del _defaults[old]
            _defaults[key] = tk
        return tk
