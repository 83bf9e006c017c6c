"""Text tooling that treats Chinese as first-class: normalised keys, slugs, words, token estimates, lines. Never an
ASCII-only regex here: ``\\w`` is Unicode-aware in Python 3 and CJK ranges are spelled out where a class needs them."""

from __future__ import annotations

import logging
import re
import threading
import unicodedata
from pathlib import Path

# The one definition of Chinese and its neighbours, for every regular expression in the project.
# CJK: Han ideographs (unified, extension A, compatibility, extensions B-F); each counts as a token.
# CJK_SCRIPTS: writing that runs without spaces (Han, kana, hangul): where word boundaries are not spaces.
CJK = "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\U00020000-\U0002ebef"
CJK_SCRIPTS = CJK + "\u3040-\u30ff\uac00-\ud7af"
_CJK_CHAR = re.compile(f"[{CJK}]")
_PUNCT_OR_SPACE = re.compile(r"[\s\W_]+", re.UNICODE)
# Articles, possessives and "new / current" ("my new manager", "现在的主力编辑器"): the slot is the same.
_LEADING_ARTICLES = re.compile(r"^(?:the|my|our|your|a|an|new|current|present|我的|我们的|咱们的|你的|现在的|目前的|现任)\s*", re.IGNORECASE)
_WORDISH = re.compile(rf"[{CJK}]|[^\W_]+", re.UNICODE)

STOPWORDS = frozenset(
    """
    的 了 和 是 在 我 你 他 她 它 我们 你们 他们 这 那 这个 那个 就 也 都 还 又 很 吧 吗 呢 啊 呀 哦 嗯 好 好的 一个
    有 没有 不 要 会 能 可以 把 被 让 给 跟 对 说 想 去 来 到 上 下 里 中 与 及 或 而 但 但是 因为 所以 如果 然后 已经
    什么 怎么 为什么 哪 哪里 谁 多少 一下 一些 一点 现在 今天 昨天 明天 时候 自己 东西 事情 觉得 知道 真的 非常 比较
    the a an and or but if then so to of in on at for with by from as is are was were be been being it its this that
    these those i me my we our you your he she they them his her their what which who whom how when where why do does
    did done have has had not no yes ok okay just also very really can could will would should shall may might must
    about into over than too more most some any all each there here up down out off again once only own same such
    let lets get got go going gonna hey hi hello thanks thank oh yeah um well like im i'm it's that's
    """.split()
)


def nfkc(text: str) -> str:
    return unicodedata.normalize("NFKC", text)


# Characters that render as nothing (zero-width space, joiners, word joiner, BOM, soft hyphen, bidi marks: Unicode's
# "format" category Cf) and the fillers that render as blank: "pass\u200bword" reads "password" on screen.
_FILLERS = frozenset("\u034f\u115f\u1160\u17b4\u17b5\u3164\uffa0")
# Letters typed one by one: "p a s s w o r d", "P.A.S.S", "p-a-s-s" (three or more single letters, each followed by
# one to three spaces, dots, hyphens, underscores, stars or middle dots, the last by no letter).
_SPACED = re.compile(r"(?<![^\W\d_])(?:[^\W\d_][ \t._*·\-]{1,3}){2,}[^\W\d_](?![^\W\d_])")
_SPACED_SEP = re.compile(r"[ \t._*·\-]+")


def fold_request(text: str) -> str:
    """A request as the reader sees it, for rules that match words: NFKC (full-width "ｐａｓｓ" is "pass"), characters
    that render as nothing removed ("密\u200b码" is "密码"), and letters spaced one by one joined ("p a s s w o r d" is
    "password"; "a b c of backups" becomes "abc of backups", harmless for a check). Only for matching: what is shown
    or stored keeps the user's text."""
    if not isinstance(text, str):
        return text
    t = nfkc(text)
    t = "".join(ch for ch in t if ch not in _FILLERS and unicodedata.category(ch) != "Cf")
    return _SPACED.sub(lambda m: _SPACED_SEP.sub("", m.group(0)), t)


def normalize_key(text: str) -> str:
    """Matching key for subjects and objects: NFKC, case-folded, articles and punctuation dropped.

    "我们的 服务器配置" and "服务器配置", "8C16G" and "８ｃ１６ｇ", "The DB port" and "db port" match.
    """
    s = nfkc(text).strip().casefold()
    prev = None
    while prev != s:
        prev = s
        s = _LEADING_ARTICLES.sub("", s).strip()
    return _PUNCT_OR_SPACE.sub("", s)


def has_cjk(text: str) -> bool:
    return bool(_CJK_CHAR.search(text))


_NON_CJK_WORD = re.compile(rf"[^\W_{CJK}]+", re.UNICODE)


def count_tokens(text: str) -> int:
    """The token count answers report: Chinese characters plus words of other scripts (numbers count as words)."""
    return len(_CJK_CHAR.findall(text)) + len(_NON_CJK_WORD.findall(text))


def truncate(text: str, limit: int) -> str:
    """Cut to at most ``limit`` characters (code points, so Chinese is never split mid-character)."""
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: max(0, limit - 1)].rstrip() + "…"


def slugify(text: str, max_len: int = 48) -> str:
    """GitHub-style slug that keeps Chinese: lower-case, punctuation dropped, spaces to hyphens."""
    s = nfkc(text).strip().lower()
    s = re.sub(r"[^\w\- ]+", "", s, flags=re.UNICODE).replace("_", "-")
    s = re.sub(r"[\s\-]+", "-", s).strip("-")
    if len(s) > max_len:
        s = s[:max_len].rstrip("-")
    return s


# -- jieba, loaded once per process, with its cache kept in the workspace runtime folder ----------------
_jieba_lock = threading.Lock()
_jieba_ready = False


def configure_jieba(cache_dir: Path | None = None) -> None:
    """Load jieba's dictionary once; cache it in ``cache_dir`` instead of the system temp folder."""
    global _jieba_ready
    with _jieba_lock:
        if _jieba_ready:
            return
        import jieba

        jieba.setLogLevel(logging.WARNING)
        if cache_dir is not None:
            cache_dir.mkdir(parents=True, exist_ok=True)
            jieba.dt.cache_file = str(Path(cache_dir) / "jieba.cache")
        jieba.initialize()
        _jieba_ready = True


_shared_lock = threading.Lock()
_shared = None  # the lower-cased copy of jieba's default dictionary (see shared_jieba)


def shared_jieba(cache_dir: Path | None = None):
    """This process's one ``jieba.Tokenizer`` over jieba's default dictionary with every word that has capitals
    also under its lower-cased form (text is case-folded before it is cut). It is loaded on its own, not copied from
    jieba's global ``jieba.dt``: a query process then holds one dictionary (~45 MB) instead of two; only the
    part-of-speech tagger (the digest) loads the global one."""
    global _shared
    with _shared_lock:
        if _shared is None:
            import jieba

            jieba.setLogLevel(logging.WARNING)
            tk = jieba.Tokenizer()
            if cache_dir is not None:
                cache_dir.mkdir(parents=True, exist_ok=True)
                tk.cache_file = str(Path(cache_dir) / "jieba.cache")
            tk.initialize()
            freq = tk.FREQ
            for word, n in list(freq.items()):
                if n and word != word.casefold():
                    low = word.casefold()
                    if not freq.get(low):
                        # Same frequency, total left as is: the lower-cased form is the same word, and
                        # leaving ``total`` alone keeps every other segmentation identical to jieba's.
                        freq[low] = n
                        for i in range(1, len(low)):
                            freq.setdefault(low[:i], 0)
            _shared = tk
        return _shared


# jieba's HMM (for runs of characters its dictionary does not know) copies a path per character: time quadratic
# in the run. Text goes to jieba in pieces of at most this many characters, so a 64,000-character run costs
# ~0.1 s instead of ~10 s; a real Chinese sentence is far shorter, so no segmentation changes.
JIEBA_PIECE_CHARS = 1000


def jieba_pieces(text: str, limit: int = JIEBA_PIECE_CHARS) -> list[str]:
    """``text`` in pieces of at most ``limit`` characters, each cut after a space or a punctuation mark in its
    second half when there is one (else at ``limit``)."""
    if len(text) <= limit:
        return [text]
    out, a = [], 0
    while len(text) - a > limit:
        cut = a + limit
        for i in range(cut - 1, a + limit // 2, -1):
            if not text[i].isalnum():
                cut = i + 1
                break
        out.append(text[a:cut])
        a = cut
    out.append(text[a:])
    return out


def words(text: str) -> list[str]:
    """Content words: jieba precise mode, lower-cased, punctuation and stop words dropped."""
    tk = shared_jieba()
    out = []
    for tok in (t for piece in jieba_pieces(nfkc(text)) for t in tk.lcut(piece)):
        tok = tok.strip().lower()
        if not tok or not _WORDISH.search(tok) or tok in STOPWORDS:
            continue
        out.append(tok)
    return out


_idf: tuple[dict[str, float], float] | None = None


def idf_table() -> tuple[dict[str, float], float]:
    """jieba's IDF table, read directly: importing ``jieba.analyse`` would also load the POS tagger (~1 s)."""
    global _idf
    if _idf is None:
        import jieba

        table = {}
        with open(Path(jieba.__file__).parent / "analyse" / "idf.txt", encoding="utf-8") as f:
            for line in f:
                word, _, value = line.strip().partition(" ")
                if value:
                    table[word] = float(value)
        values = sorted(table.values())
        _idf = (table, values[len(values) // 2])
    return _idf


# Line breaks as editors count them (VS Code; vim for \n and \r\n): \n, \r\n and a lone \r end a line. U+2028,
# U+2029, U+0085, form feed and vertical tab do not: they stay inside their line. The digest's line numbers, the raw
# archive's line references and ``agentos raw`` all count lines with ``split_lines``.
_LINE_BREAK = re.compile(r"\r\n|\r|\n")
_LINE_BREAK_BYTES = re.compile(rb"\r\n|\r|\n")


def split_lines(text):
    """The lines of ``text`` (str or bytes) without their line ends, numbered as an editor numbers them (see
    ``_LINE_BREAK``); a final line end does not start another line."""
    if not text:
        return []
    lines = (_LINE_BREAK_BYTES if isinstance(text, bytes) else _LINE_BREAK).split(text)
    if not lines[-1]:
        lines.pop()
    return lines


def sentences(text: str) -> list[str]:
    """Split on Chinese and Western sentence ends and line breaks; keeps the punctuation."""
    parts = re.split(r"(?<=[。！？!?；;])\s*|\n+|(?<=[.])\s+(?=[A-Z\u4e00-\u9fff\"'“])", text)
    return [p.strip() for p in parts if p and p.strip()]
