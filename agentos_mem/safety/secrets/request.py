"""The request side: the secret cue a question asks about ("what's my pass word", "我的口令是什么", "show the API
key"), for the L0 rules (query/rules.py), read as its reader sees it (``kernel.text.fold_request``: "pass\u200bword",
"p a s s w o r d" and "ｐａｓｓｗｏｒｄ" are "password"). It reads the cues of cues.py; a question about handling
secrets ("如何重置密码", "password policy") asks for no value."""

from __future__ import annotations

import re

from agentos_mem.kernel.text import fold_request
from agentos_mem.safety.secrets.common import CJK, Lazy
from agentos_mem.safety.secrets.cues import CUE_RE, IDENT_KEY_RE, cue_key

# A request naming a cue asks for a secret (asks_for_secret); "token", "session id", "bearer" and "令牌" only as
# the thing asked for ("my token?"), never "token budget" or "令牌桶"; "secret" and "cookie" alone never
# ("tell me a secret", "cookie recipe"): "client secret", "session cookie" and the like are their own cues.
_REQUEST_WEAK = {"token", "session id", "bearer", "令牌", "pin"}
_REQUEST_NEVER = {"secret", "cookie"}

_REQUEST_WEAK_OK = Lazy(r"\s*(?:$|[?？!！.。,，:：;；)]|(?:for|of|on|to|is|was|please|again|that|which|used|i|we)\b|[\u4e00-\u9fff])",
                        re.IGNORECASE)


_QUANTITY_BEFORE = Lazy(r"(?:多少|几个|幾個|几|幾|\d|how\s+many|number\s+of|count\s+of|max(?:imum)?|per|每个|每個|每)\s*$", re.IGNORECASE)


# A question about how secrets are handled, not for a secret's value: "如何重置密码", "how do I reset a password",
# "密码复杂度要求", "password policy". These are knowledge-base questions a team asks every day.
_HOW_TO = Lazy(r"如何|怎么|怎样|怎麼|怎樣|咋|\bhow\s+(?:do|does|to|can|should|would)\b|\bsteps?\s+to\b|步骤|步驟|流程", re.IGNORECASE)
_TOPIC_AFTER = Lazy(r"\s*(?:的)?\s*(?:polic(?:y|ies)|requirements?|rules?|complexity|length|strength|reset|recovery|manager|rotation|expir\w*|"
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
    text = re.sub(rf"(?<=[{CJK}])\s+(?=[{CJK}])", "", text)  # "密 码" -> "密码"
    if _HOW_TO.search(text):
        return None
    for m in CUE_RE.finditer(text):
        if _TOPIC_AFTER.match(text, m.end()):
            continue
        key = cue_key(m.group(0))
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
    m = IDENT_KEY_RE.search(text)
    if m and not re.search(r"(?:sort|primary|foreign|dict|hash|map|cache|partition|shard|index|lookup|group|join|unique)[_-]keys?$",
                           m.group(0), re.IGNORECASE):
        return m.group(0)
    return None
