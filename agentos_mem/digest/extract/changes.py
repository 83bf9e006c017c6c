"""Family: a change that names both values and no attribute. "从Vim换到了Helix", "不用Notion了，改用Obsidian",
"switched from Vim to Helix", "replaced Jenkins with GitHub Actions", "we moved from cn-hangzhou to ap-southeast-1".

The candidate carries the old value (``replaces``): the fact store finds the current fact that holds it and continues
that slot with the new value (its subject and predicate), so a change said with other words than the first statement
still supersedes it. With no such fact, the old value is kept as history beside the new one.
Runs after the sentence patterns ("服务器配置从4C8G升级到8C16G" is theirs, with its subject).
"""

from __future__ import annotations

import re

from agentos_mem.digest.extract.anchored import NOT_REAL, anchored_person
from agentos_mem.digest.extract.normalize import Sentence
from agentos_mem.digest.extract.rule import Found
from agentos_mem.digest.extract.values import zh_subject, zh_subject_ok
from agentos_mem.digest.extract.vocab import is_question
from agentos_mem.vocabulary.valuetypes import find_values, value_type

_ZH_ITEM = r"[A-Za-z0-9][\w+#.\- ]{0,30}?|[\u4e00-\u9fffA-Za-z0-9+#.\-]{1,12}?"
_ZH_VERB = r"(?:换|改|切换?|迁移?|搬|转|升级?|降级?|调|跳槽)"
_ZH_CHANGES = (
    re.compile(rf"从\s*(?P<old>{_ZH_ITEM})\s*{_ZH_VERB}(?:成|到|为|去|至)了?\s*(?P<new>{_ZH_ITEM})\s*(?=$|[,;:!?。了的啦，])"),
    re.compile(rf"不(?:再)?用\s*(?!了)(?P<old>{_ZH_ITEM})\s*了?\s*[,，]\s*(?:改用|换用|换成|改成|用)了?\s*(?P<new>{_ZH_ITEM})\s*(?=$|[,;:!?。了的啦])"),
    re.compile(rf"(?P<old>{_ZH_ITEM})\s*不(?:再)?用了\s*[,，]\s*(?:改用|换用|换成|改成)了?\s*(?P<new>{_ZH_ITEM})\s*(?=$|[,;:!?。了的啦])"),
)
_EN_ITEM = r"[A-Za-z0-9][\w+#.\-]*(?:\s+[A-Za-z0-9][\w+#.\-]*){0,3}?"
_EN_CHANGES = (
    re.compile(
        r"\b(?:switched|moved|migrated|changed|went|upgraded|downgraded|transferred|relocated|converted|jumped)\s+"
        rf"(?P<attr>(?:[\w']+\s+){{0,3}}?)from\s+(?:the\s+|my\s+|our\s+)?(?P<old>{_EN_ITEM})\s+(?:to|into|over\s+to)\s+(?:the\s+|a\s+)?(?P<new>{_EN_ITEM})"
        r"(?=\s*(?:$|[,;:!?.]|\s(?:and|but|last|this|yesterday|today|a\s+while|since|because|after|when|now)\b))",
        re.I,
    ),
    re.compile(rf"\breplaced\s+(?:the\s+|my\s+|our\s+)?(?P<old>{_EN_ITEM})\s+with\s+(?:the\s+|a\s+)?(?P<new>{_EN_ITEM})(?=\s*(?:$|[,;:!?.]|\s(?:and|but|last|this|since)\b))", re.I),
)
# "he left BMW for a battery startup called Voltaro", "swapped the Kindle for a Kobo": the old, then the new.
_EN_LEFT_FOR = re.compile(
    rf"\b(?:left|quit|swapped|traded|ditched|dropped)\s+(?:the\s+|my\s+|our\s+|his\s+|her\s+)?(?P<old>{_EN_ITEM})\s+for\s+"
    r"(?:(?:a|an|the)\s+(?:[\w\-]+\s+){0,3}?(?:called|named)\s+)?(?:a\s+|an\s+|the\s+)?(?P<new>[A-Z][\w+#.\-]*(?:\s+[A-Z][\w+#.\-]*){0,2})"
)
# "we moved it to 5433": "it" is the value of the same type said before it in the sentence ("since 5432 kept clashing").
_EN_IT_TO = re.compile(r"\b(?:moved|changed|switched|bumped|set|upgraded|migrated|pushed|raised|lowered)\s+it\s+(?:over\s+)?to\s+(?P<new>[^\s,;:!?]+)", re.I)
_WISH = re.compile(r"想|打算|准备|要不要|考虑|是否|如果|\b(?:thinking|planning|plan\s+to|want\s+to|going\s+to|should|might|may|if|whether)\b", re.I)


def _attr(s: str, ca: int, m: re.Match[str]) -> str:
    """The attribute a change names: before 从 in Chinese ("服务器配置从…"), between the verb and "from" in English
    ("switched my editor from …"); "" when it names none ("我从字节跳槽到了网易", "replaced X with Y")."""
    if "attr" in m.groupdict():
        words = [w for w in (m.group("attr") or "").split() if w.lower() not in ("my", "our", "the", "his", "her", "their", "over", "it", "everything")]
        return " ".join(words)
    k = s.rfind("从", ca, m.start("old"))
    if k < 0:
        return ""
    a, b, _poss = zh_subject(s, ca, k)
    text = s[a:b].strip()
    return text if text and zh_subject_ok(text) else ""


def change_facts(sent: Sentence, subject: str) -> list[Found]:
    out: list[Found] = []
    s = sent.s
    if NOT_REAL.search(s):  # an example, test data or a joke changes nothing
        return out
    for ci, (ca, cb) in enumerate(sent.clauses):
        if is_question(sent, ci):
            continue
        # a change may span two clauses ("不用Notion了，改用Obsidian"): read from this clause to the sentence's end
        for rx in (*_ZH_CHANGES, *_EN_CHANGES, _EN_LEFT_FOR):
            m = rx.search(s, ca)
            if not m or m.start() >= cb or _WISH.search(s, ca, m.start("new")):
                continue
            old, new = sent.orig(*m.span("old")).strip(), sent.orig(*m.span("new")).strip().rstrip(".。")
            if not old or not new or old.lower() == new.lower():
                continue
            if any(a < m.end("new") and m.start("old") < b for a, b in (f.span for f in out)):
                continue
            attr = _attr(s, ca, m)
            person = anchored_person(sent, m.start("old"))  # "my brother moved from Munich to Berlin": the brother's
            owner = person or (None if subject == "user" else subject)
            sep = "的" if re.search(r"[\u4e00-\u9fff]", f"{owner}{attr}") else "'s "
            who = (f"{owner}{sep}{attr}" if attr else owner) if owner else (attr or subject)
            f = Found(who, "value", new, (m.start("old"), m.end("new")), change=True)
            f.replaces = old
            out.append(f)
    out.extend(_it_changes(sent, subject, out))
    return out


def _it_changes(sent: Sentence, subject: str, taken: list[Found]) -> list[Found]:
    """"… 5432 kept clashing, so we moved it to 5433": the new value replaces the nearest earlier value of its type."""
    s, out = sent.s, []
    for m in _EN_IT_TO.finditer(s):
        new = sent.orig(*m.span("new")).strip(" .")
        kind = value_type(new)
        if kind is None or _WISH.search(s, 0, m.start()) or any(a < m.end() and m.start() < b for a, b in (f.span for f in taken)):
            continue
        before = [(a, b) for a, b, k in find_values(s[: m.start()]) if value_type(s[a:b]) == kind] or \
                 [(x.start(), x.end()) for x in re.finditer(r"\b\d+(?:\.\d+)?\b", s[: m.start()]) if value_type(x.group()) == kind]
        if not before:
            continue
        a, b = before[-1]
        f = Found(subject, "value", new, m.span("new"), change=True)
        f.replaces = sent.orig(a, b).strip()
        out.append(f)
    return out
