"""Values: whether what follows a cue is a secret's value, and where that value ends.

Each cue has a value class (cues.py, ``CUES``), checked by ``value_ok``: ``any`` (a password-like cue: any value but a
stop word, a question word or a placeholder: "the password is wrong" and "密码是什么" stay), ``token`` (the value must
look like a token, letters and digits, at least 8 characters) and ``code`` (the value must hold a digit). A value
with no copula before it must read as a credential itself (``looks_like_credential``: "PIN 4821", "password
hunter2"). ``value_span`` reads the value that starts after a copula: a quoted string, a Chinese run or an ASCII run.
Shared by the stated secrets (cues.py) and the credential pairs (pairs.py)."""

from __future__ import annotations

import re

from agentos_mem.safety.secrets.common import CJK, MARKER_RE, PLACEHOLDER
from agentos_mem.safety.secrets.high_entropy import is_random
from agentos_mem.safety.secrets.shapes import SHAPES_RE

# The quotes a value may stand in, each with its closing quote.
OPEN_QUOTES = {'"': '"', "'": "'", "`": "`", "“": "”", "‘": "’", "「": "」", "『": "』", "«": "»", "《": "》"}

# Values that are not secrets: words a copula is often followed by, question words (and placeholders: common.py).
STOP_VALUES = frozenset("""
a an the my your our their his her its this that these those it them one same what which who whom whose where when why how
not no none never nothing something anything wrong right correct incorrect invalid valid expired required needed necessary
optional missing empty blank set reset changed updated stored saved kept hidden encrypted hashed different weak strong long
short secure insecure safe unsafe too very so also still now currently being been in on at for of to from with by as and
or but if unknown forgotten lost ok okay fine good bad easy hard simple complex complicated below above here there
mandatory protected managed rotated revoked leaked compromised shared sent given provided generated sensitive private
public unchanged null nil n/a na tbd todo unset undefined default case-sensitive same-as please yes true false
written needs need must should will would can could may might is was are were be do does did has have had
about like just only probably usually always
string str int integer number boolean bool any object dict list array bytes char varchar text optional[str] str|none
""".split())
STOP_ZH = ("什么", "什麼", "多少", "啥", "哪", "几", "幾", "怎么", "怎麼", "如何", "对的", "對的", "错", "錯", "正确", "正確", "一样",
           "一樣", "相同", "不对", "不對", "空", "默认", "默認", "必填", "必须", "必須", "需要", "加密", "保密", "私密", "隐藏", "隱藏",
           "已", "之前", "以前", "多久", "这个", "這個", "那个", "那個", "这样", "這樣", "同一", "一个", "一個", "不", "没", "沒",
           "忘", "吗", "嗎", "呢", "吧", "么", "麼", "有效", "无效", "無效", "过期", "過期", "安全", "多长", "多長", "几位", "幾位")


def looks_like_credential(value: str) -> bool:
    """A value that reads as a password/key without a copula: letters with digits or symbols, or mixed case."""
    v = value.strip()
    if len(v) < 4 or re.search(f"[{CJK}]", v) or PLACEHOLDER.match(v) or "://" in v:
        return False
    letters = sum(ch.isalpha() for ch in v)
    digits = sum(ch.isdigit() for ch in v)
    symbols = sum(not ch.isalnum() for ch in v)
    if letters and digits:
        return not re.fullmatch(r"v?\d+(?:\.\d+)+[a-z]*|\d+(?:st|nd|rd|th|px|ms|s|m|h|d|k|kb|mb|gb|g|c|x|%)|\d{4}-\d{2}-\d{2}.*|[A-Za-z]\d", v,
                                re.IGNORECASE)
    if letters and symbols and not re.fullmatch(r"[A-Za-z]+(?:[-'.][A-Za-z]+)*[.!?,]?", v):
        return True
    return bool(letters >= 6 and any(c.isupper() for c in v[1:]) and any(c.islower() for c in v))


def _token_like(v: str) -> bool:
    core = re.sub(r"[^A-Za-z0-9]", "", v)
    return len(v) >= 8 and len(core) >= 6 and any(c.isdigit() for c in core) and any(c.isalpha() for c in core) \
        and not re.fullmatch(r"v?\d+(?:\.\d+)+[a-z]*", v, re.IGNORECASE) or bool(SHAPES_RE.fullmatch(v)) or is_random(v)


def is_stop(value: str) -> bool:
    v = value.strip().strip(".,;:!?。，；：！？").casefold()
    if not v or PLACEHOLDER.match(v) or MARKER_RE.match(value.strip()) or v in STOP_VALUES:
        return True
    return any(v.startswith(w) for w in STOP_ZH)


def value_ok(value: str, kind: str, *, loose: bool) -> bool:
    """Whether ``value`` is masked as the value of a cue of class ``kind`` (``loose``: after a copula)."""
    if is_stop(value):
        return False
    if kind == "code":
        return any(ch.isdigit() for ch in value) and len(value.strip()) >= 3
    if kind == "token":
        return _token_like(value)
    v = value.strip()
    return True if loose else looks_like_credential(v) or (v.isdigit() and len(v) >= 4)


_END_ASCII = set(".,;:?)]}>'\"”’」』》")


def value_span(text: str, i: int) -> tuple[int, int] | None:
    """The value starting at ``i`` (after a copula): a quoted string, a Chinese run or an ASCII run."""
    n = len(text)
    while i < n and text[i] in " \t":
        i += 1
    if i >= n:
        return None
    ch = text[i]
    if ch in OPEN_QUOTES:
        close = text.find(OPEN_QUOTES[ch], i + 1, min(n, i + 202))
        if close > i + 1 and "\n" not in text[i + 1:close]:
            return i + 1, close
        i += 1
        if i >= n:
            return None
        ch = text[i]
    if MARKER_RE.match(text, i):
        return None
    if re.match(f"[{CJK}]", ch):
        m = re.compile(rf"[{CJK}A-Za-z0-9_@#$%^&*+=!~.-]{{1,24}}").match(text, i)
        if not m:
            return None
        v = m.group(0)
        # "天王盖地虎" is a value; a clause after it ("然后", "记住") is not: cut at common continuations.
        cut = re.search(r"(?:然后|然後|记得|記得|记住|記住|别忘|別忘|以后|以後|下次|，|。|吧|哦|啊|呀)", v)
        v = v[: cut.start()] if cut else v
        return (i, i + len(v)) if v else None
    m = re.compile(r"[^\s，。；、,;()（）\[\]【】<>《》\"“”'‘’`「」『』]+").match(text, i)
    if not m:
        return None
    e = m.end()
    cjk = re.search(f"[{CJK}]", m.group(0))
    if cjk:
        e = i + cjk.start()
    while e > i and text[e - 1] in _END_ASCII:
        e -= 1
    return (i, e) if e > i else None
