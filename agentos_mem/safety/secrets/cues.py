"""Stated secrets: a cue word, a bridge, then the value, which is masked (the cue stays).

A *cue* (password, pass word, passphrase, PIN, API key, access token, credentials, private key, 密码, 口令, 密钥, 私钥,
令牌, 凭证, 验证码 ... and identifiers ending in one: ``DB_PASSWORD``, ``"api_key"``, ``--token``), then a *bridge* (an
optional qualifier, "for the NAS", ``(prod)``, 现在, 已经, then a copula or separator: is, was, =, :, ：, 是, 为, 改成,
设为, changed to, set to, ...), then the *value* ("NAS password is [secret masked]" still says what it was). Also
the reverse, "hunter2 is my NAS password", "abc123 是我的密码", and a cue directly followed by a value that looks like
a credential ("PIN 4821", "password hunter2", "验证码483920").

Each cue has a value class (``CUES``): ``any``, ``token`` (token, bearer, ``*_KEY``) or ``code`` (PIN, 验证码, CVV);
what each accepts is judged in values.py. ``stated_spans`` finds the values in a line; ``secret_subject`` says
whether a fact's subject names a secret ("NAS password"); the request side (request.py) reads the same cues."""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterator

from agentos_mem.safety.secrets.common import Lazy
from agentos_mem.safety.secrets.lists import ENUM, more_items
from agentos_mem.safety.secrets.values import OPEN_QUOTES, is_stop, looks_like_credential, value_ok, value_span

# cue -> value class. English cues: spaces, "-" and "_" between words are interchangeable and optional
# ("api key", "api-key", "API_KEY", "apikey"); a trailing "s" is allowed. Traditional forms are listed too.
CUES: dict[str, str] = {
    # passwords and passphrases
    "password": "any", "pass word": "any", "passwd": "any", "pwd": "any", "passphrase": "any", "pass phrase": "any",
    "passcode": "any", "login password": "any", "wifi password": "any", "one time password": "code",
    "root password": "any", "admin password": "any", "master password": "any", "app password": "any",
    # keys and secrets
    "api key": "any", "access key": "any", "access key id": "token", "secret key": "any", "secret access key": "any",
    "private key": "any", "client secret": "any", "app secret": "any", "api secret": "any", "webhook secret": "any",
    "shared secret": "any", "signing key": "any", "encryption key": "any", "master key": "any", "license key": "any",
    "product key": "any", "ssh key": "any", "secret": "token",
    # tokens
    "token": "token", "access token": "any", "auth token": "any", "api token": "any", "bearer token": "any",
    "refresh token": "any", "session token": "any", "personal access token": "any", "bot token": "any", "bearer": "token",
    "session id": "token", "cookie": "token",
    # credentials
    "credential": "any", "credentials": "any", "login credentials": "any",
    # codes
    "pin": "code", "pin code": "code", "pin number": "code", "security code": "code", "verification code": "code",
    "auth code": "code", "otp": "code", "2fa code": "code", "mfa code": "code", "one time code": "code",
    "recovery code": "any", "backup code": "any", "cvv": "code", "cvc": "code", "seed phrase": "any",
    "recovery phrase": "any", "mnemonic": "any", "unlock code": "code", "unlock pin": "code", "access code": "code",
    "door code": "code", "gate code": "code", "alarm code": "code", "lock code": "code", "safe code": "code",
    # Chinese (simplified and traditional)
    "密码": "any", "密碼": "any", "口令": "any", "密钥": "any", "密鑰": "any", "秘钥": "any", "秘鑰": "any",
    "私钥": "any", "私鑰": "any", "公钥私钥": "any", "令牌": "token", "访问令牌": "any", "訪問令牌": "any",
    "凭证": "any", "憑證": "any", "凭据": "any", "憑據": "any", "支付密码": "any", "登录密码": "any", "开机密码": "any",
    "锁屏密码": "any", "助记词": "any", "助記詞": "any", "验证码": "code", "驗證碼": "code", "校验码": "code",
    "动态码": "code", "動態碼": "code", "安全码": "code", "安全碼": "code", "授权码": "code", "授權碼": "code",
    "提取码": "code", "提取碼": "code", "激活码": "token", "激活碼": "token", "口令码": "any", "暗号": "any",
    "暗號": "any", "通行码": "code", "pin码": "code", "密保": "any", "解锁码": "code", "解鎖碼": "code", "开锁码": "code",
    "開鎖碼": "code", "门禁码": "code", "門禁碼": "code", "恢复码": "any", "恢復碼": "any", "备用码": "code", "備用碼": "code",
    "配对码": "code", "配對碼": "code", "金钥": "any", "金鑰": "any",  # 金鑰: the word for a key in Taiwan
}

# What may stand between a cue and its copula: a qualifier ("for the NAS", "of prod", "(home)") or Chinese
# adverbs ("现在", "已经", "也").
_QUAL_EN = r"(?:\s*\([^()\n]{1,40}\)|\s+(?:for|of|on|at|in|to|from)\s+(?:[^\s:=：，。,;()]+\s+){0,3}?[^\s:=：，。,;()]+)"
_QUAL_ZH = r"(?:\s*(?:现在|現在|目前|当前|當前|已经|已經|已|暂时|暫時|仍然|依然|还是|還是|一直|统一|統一|默认|默認|也|还|還|就|都|呢|先|我|我们|我們|被|又|再|重新|刚刚|剛剛|刚|剛|最近|后来|後來|之前|以前|新的|新))"
# Copulas and separators: "is", "=", ":", "是", "改成" ... (a colon may follow: "是：").
_COP_EN = (r"(?:\s+(?:(?:is|was|has\s+been|have\s+been|had\s+been|got|gets|were)\s+)?(?:(?:now|still|currently|just|then|recently)\s+)?"
           r"(?:changed(?:\s+back)?|set|updated|reset|rotated|switched|moved)\s+(?:it\s+)?to\s+"
           r"|\s*(?:'s|’s)\s+|\s+(?:is|was|are|were|will\s+be|remains|stays|became|becomes|reads|be)"
           r"(?:\s+(?:now|still|currently|just|actually|simply|always|then|probably))?\s*[:：]?\s*)")
_COP_SEP = r"(?:\s*[\"'`”’]?\s*(?::=|=>|->|→|[:：=|])\s*)"
_COP_ZH = (r"(?:\s*(?:改成|改为|改為|换成|換成|设为|設為|设成|設成|设置为|設置為|设置成|設置成|设定为|設定為|设定成|更新为|更新為|"
           r"更改为|更改為|变成|變成|变更为|變更為|重置为|重置為|重置成|重设为|重設為|修改为|修改為|用的是|就是|都是|也是|还是|還是|"
           r"仍是|依然是|定为|定為|叫做|叫|是|为|為)了?\s*[:：]?\s*)")
_COP_TO = r"(?:\s+to\s+)"  # "set my password to X": only with a verb before the cue (see _VERB_BEFORE)
_VERB_BEFORE = Lazy(r"(?:(?<![A-Za-z])(?:set|change|changed|changing|reset|update|updated|rotate|rotated|use|used|using)(?![A-Za-z])"
                    r"|设|改|换|用)", re.IGNORECASE)


def _has_cjk(text: str) -> bool:
    return any("\u3400" <= ch <= "\u9fff" or "\uf900" <= ch <= "\ufaff" for ch in text)


def _cue_pattern(cue: str) -> str:
    if _has_cjk(cue):
        return r"\s?".join(re.escape(c) for c in cue)  # "密 码" typed with a space is still the cue
    parts = cue.split()
    return r"[\s_.-]?".join(re.escape(p) for p in parts) + "s?"


_CUE_LIST = sorted(CUES, key=lambda c: (-len(c), c))
# Latin cues end and start at a non-alphanumeric (so "_" and "-" of identifiers are edges: DB_PASSWORD).
CUE_RE = Lazy(
    "(?<![A-Za-z0-9])(?:" + "|".join(_cue_pattern(c) for c in _CUE_LIST if not _has_cjk(c)) + ")(?![A-Za-z0-9_]|-[A-Za-z0-9])"
    "|(?:" + "|".join(_cue_pattern(c) for c in _CUE_LIST if _has_cjk(c)) + ")", re.IGNORECASE)
# "STRIPE_KEY=", "ssh-key:", "apikey": an identifier ending in key / secret / token.
IDENT_KEY_RE = Lazy(r"(?<![A-Za-z0-9])[A-Za-z][A-Za-z0-9]*(?:[_-][A-Za-z0-9]+)*[_-](?:key|keys|secret|token)(?![A-Za-z0-9_]|-[A-Za-z0-9])|(?<![A-Za-z0-9])apikey(?![A-Za-z0-9_])", re.IGNORECASE)
# How far after a cue its copula is looked for: a bridge is a few words, and a bounded window keeps the nested
# optional parts of the pattern from backtracking over a long run of spaces (a 64,000-character turn took 26 s).
_WINDOW = 160
_BRIDGE = Lazy(rf"(?:{_QUAL_EN})?(?:{_QUAL_ZH}){{0,3}}(?:{_COP_SEP}|{_COP_ZH}|{_COP_EN})", re.IGNORECASE)
_BRIDGE_QUAL = Lazy(rf"(?:{_QUAL_EN})?(?:{_QUAL_ZH}){{0,3}}", re.IGNORECASE)
_BRIDGE_TO = Lazy(rf"(?:{_QUAL_EN})??{_COP_TO}", re.IGNORECASE)
_DIRECT = Lazy(r"[ \t]*")
_REVERSE = Lazy(r"(?<![^\s，。；;、,:：（(\"'“”])(?P<value>[^\s，。；;、,()（）\"'“”]{4,80}?)(?:\s+(?:is|was|as)\s+|\s*(?:是|作为|作為|当作|當作|当|當|做)\s*)"
                r"(?:(?:my|the|our|your|his|her|their|a|new|我的|我们的|我們的|你的|他的|她的|新的?)\s*){0,2}"
                r"(?:[A-Za-z0-9-]+\s+|[A-Za-z0-9-]+的?|[\u4e00-\u9fff]{1,4}的){0,2}$", re.IGNORECASE)

# A cheap prefilter (plain substrings of the lower-cased text): most lines hold no cue, and then none is looked for.
CUE_STEMS = ("pass", "pwd", "pin", "key", "secret", "token", "bearer", "cookie", "session", "credential", "code", "otp",
             "cvv", "cvc", "mnemonic", "phrase", "密", "口令", "钥", "鑰", "令牌", "凭", "憑", "码", "碼", "暗号", "暗號", "助记", "助記")


def stated_spans(text: str, taken) -> Iterator[tuple[int, int, str]]:
    """(start, end, cue) of each value a cue states in ``text``: after a bridge ("password is X"), after "to" with a
    verb before the cue ("set my password to X"), right after the cue ("PIN 4821"), or before it ("X is my password").

    ``taken`` holds the spans found so far (``find_secrets``' disjoint spans: markers, shapes, values stated before):
    a cue inside one is passed over, so the caller adds each span it is handed before it asks for the next."""
    low = text.lower()
    if not any(stem in low for stem in CUE_STEMS):
        return
    cues = [(m.start(), m.end(), CUES.get(cue_key(m.group(0)), "any")) for m in CUE_RE.finditer(text)]
    cues += [(m.start(), m.end(), "token") for m in IDENT_KEY_RE.finditer(text)]
    for s, e, kind in sorted(cues):
        if taken.overlaps(s, e):
            continue
        span = None
        b = _BRIDGE.match(text, e, e + _WINDOW)
        if b:
            v = value_span(text, b.end())
            if v and value_ok(text[v[0]:v[1]], kind, loose=True):
                span = v
        if span is None and _VERB_BEFORE.search(text[max(0, s - 40):s]):
            b = _BRIDGE_TO.match(text, e, e + _WINDOW)
            if b:
                v = value_span(text, b.end())
                if v and value_ok(text[v[0]:v[1]], kind, loose=True):
                    span = v
        if span is None:
            d = _DIRECT.match(text, e, e + _WINDOW)
            # without a copula the value follows at once, unquoted ("PIN 4821", "密码abc123")
            v = value_span(text, d.end()) if d and d.end() < len(text) and text[d.end()] not in OPEN_QUOTES else None
            if v and value_ok(text[v[0]:v[1]], kind, loose=False):
                span = v
        before = False  # the value stands before its cue ("hunter2 is my password")
        if span is None:
            r = _REVERSE.search(text[max(0, s - 120):s])
            if r:
                off = max(0, s - 120)
                v = r.group("value")
                vs = off + r.start("value")
                if not is_stop(v) and (looks_like_credential(v) or (kind == "code" and any(c.isdigit() for c in v))):
                    span, before = (vs, vs + len(v)), True
        if span and not before and ENUM.match(text, span[0]):
            # "recovery codes: 1. ab12-cd34 2. ...": the number leads the list; its first item is the value
            v = value_span(text, ENUM.match(text, span[0]).end())
            span = v if v and value_ok(text[v[0]:v[1]], kind, loose=True) else span
        if span:
            yield span[0], span[1], text[s:e]
            if not before:  # a cue may introduce a list: every further code of the first one's make-up goes too
                for i, j in more_items(text, span[1], text[span[0]:span[1]]):
                    if not taken.overlaps(i, j):
                        yield i, j, text[s:e]


# What ends a line whose cue introduces a list on the lines below it: "Recovery codes:", "GitHub backup codes are:",
# "恢复码如下：", "## Backup codes" (a heading needs no colon).
_LIST_TAIL = Lazy(r"\s*(?:(?:are|is|as\s+follows|below)\s*)?[:：]\s*$|\s*(?:如下|如下所示)\s*[:：]?\s*$")
_HEADING = Lazy(r"\s{0,3}#{1,6}\s")


def list_opener(line: str) -> str | None:
    """The value class of the cue that ends ``line`` and introduces a list on the lines below it ("GitHub recovery
    codes:", "恢复码如下："), else None. lists.list_line reads those lines; mask.py's mask_lines carries the cue."""
    low = line.lower()
    if not any(stem in low for stem in CUE_STEMS):
        return None
    heading = bool(_HEADING.match(line))
    for m in CUE_RE.finditer(line):
        q = _BRIDGE_QUAL.match(line, m.end(), m.end() + _WINDOW)
        rest = q.end() if q else m.end()
        if _LIST_TAIL.match(line, rest) or (heading and not line[rest:].strip(" \t#")):
            return CUES.get(cue_key(m.group(0)), "any")
    return None


def cue_key(matched: str) -> str:
    k = unicodedata.normalize("NFKC", matched).casefold()
    k = re.sub(r"[\s_.-]+", " ", k).strip()
    if k in CUES:
        return k
    if k.endswith("s") and k[:-1] in CUES:
        return k[:-1]
    k2 = k.replace(" ", "")
    for c in CUES:
        if c.replace(" ", "") in (k2, k2[:-1]):
            return c
    return k


def secret_subject(subject: str) -> str | None:
    """The value class when ``subject`` names a secret ("NAS password", "wifi密码", "GitHub token"), else None."""
    if not isinstance(subject, str):
        return None
    s = " ".join(subject.split()).rstrip(":：= ")
    last = None
    for last in CUE_RE.finditer(s):
        pass
    if last is not None and last.end() == len(s):  # the subject ends in the cue: it is the secret itself
        return CUES.get(cue_key(last.group(0)), "any")
    if IDENT_KEY_RE.search(s) and re.search(r"(?:key|secret|token)s?\s*$", s, re.IGNORECASE):
        return "token"
    return None
