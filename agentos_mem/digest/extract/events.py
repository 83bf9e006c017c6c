"""Family: events. A sentence with a date or a day word: its plans and decisions get the date
(``event_date``); with none, the sentence itself is an event on that date, unless it is about the chat
("今天想和你聊聊", "see you tomorrow")."""

from __future__ import annotations

import re

from agentos_mem.digest.extract.normalize import EVIDENCE_CHARS, Sentence
from agentos_mem.digest.extract.objects import trim
from agentos_mem.digest.extract.rule import CORRECTABLE, CONF_INFERRED, Found
from agentos_mem.digest.extract.vocab import hedged, is_question

# A greeting or a bare vocative ("你好", "AI伴侣", "Hello friend") opening an event sentence is dropped.
GREETING = re.compile(
    r"^\s*(?:你好|您好|嗨|哈喽|早上好|晚上好|下午好|(?:hi|hello|hey|good\s+(?:morning|evening|afternoon))\b)"
    r"|^\s*(?:亲爱的|my\s+|dear\s+)*(?:AI伴侣|AI助手|AI|朋友|老朋友|伙伴|小助手|助手|伴侣|AI\s+companion|friend|buddy|companion|assistant)\W*$",
    re.I,
)
# Events about the chat itself ("今天想和你聊聊", "see you tomorrow") are not events in the person's life.
CHAT_BOILERPLATE = re.compile(
    "|".join(
        [
            r"聊天|聊聊|聊一下|再见|明天见|下次见|先到这|就到这|想(?:和你|跟你)?(?:聊|谈|说说)|请教|谢谢|感谢|问你|谈谈|谈一谈|谈论",
            r"想问|问一个|问个|有一个(?:小)?问题|有个(?:小)?问题",
            r"\btalk\s+again\b|\blet's\s+talk\b|\bwant(?:ed)?\s+to\s+talk\b|\bchat(?:ting)?\b|\btalk(?:ing)?\s+(?:to|with)\s+you\b",
            r"\bsee\s+you\b|\bgoodbye\b|\bbye\b|\bthank|\bthat's\s+it\b|\bask\s+you\b|\bquestions?\s+(?:to\s+ask|for)\s+you\b",
            r"\b(?:have|got)\s+a\s+(?:small\s+|quick\s+)?question\b",
        ]
    ),
    re.I,
)

# "no gym today", "nothing new this week": what did not happen is no event.
NOTHING = re.compile(r"^\s*(?:no|not|nothing|never|none)\b(?!\s+(?:longer|more)\b)", re.I)


def event_object(sent: Sentence, taken: list[tuple[int, int]] | None = None) -> str:
    """The sentence without a leading greeting and without trailing question clauses; without the clauses that
    ``taken`` (the spans of values already found) overlap, when there are such."""
    clauses = sent.clauses
    if taken:
        rest = [(a, b) for a, b in clauses if not any(a < tb and ta < b for ta, tb in taken)]
        parts = [sent.orig(*trim(sent.s, a, b)) for a, b in rest if not is_question(sent, clauses.index((a, b)))]
        parts = [p for p in parts if p and not GREETING.match(p)]
        return ("，" if sent.cjk else ", ").join(parts)[:EVIDENCE_CHARS]
    first, last = 0, len(clauses) - 1
    while first < last and GREETING.match(sent.s[clauses[first][0] : clauses[first][1]]):
        first += 1
    while last > first and is_question(sent, last):
        last -= 1
    if is_question(sent, last):
        return ""
    a, b = trim(sent.s, clauses[first][0], clauses[last][1])
    return sent.orig(a, b)[:EVIDENCE_CHARS]


def dated_events(sent: Sentence, found: list[Found], subject: str, dated: tuple[str, int, int] | None) -> None:
    """Date the plans and decisions of ``found``; a dated sentence with neither (and no value that contains
    the date) becomes an event of its own, appended to ``found``."""
    if dated and not is_question(sent, sent.clause_at(dated[1])):
        iso, da, db = dated
        plans = [f for f in found if f.predicate in ("plans", "decided")]
        for f in plans:
            f.event_date = f.event_date or iso
        # The clauses that state a value ("测试机升级到8C16G") are that value, not an event as well: the whole
        # sentence would keep the old value of a change ("从9点改成10点") current beside the new one.
        # A change ("主集群已经迁到X，Y那边的机器上周释放了") or a stop ("cancelled Netflix last night") is the whole story
        # of its sentence: no event at all.
        taken = [f.span for f in found if f.predicate in CORRECTABLE]
        changed = any(f.change for f in found if f.predicate in CORRECTABLE) or any(f.predicate == "stopped" for f in found)
        if not plans and not changed:
            obj = event_object(sent, taken)
            if obj and len(obj) >= (5 if sent.cjk else 12) and not CHAT_BOILERPLATE.search(obj) and not NOTHING.match(obj):
                ev = Found(subject, "event", obj, (0, len(sent.s)), event_date=iso)
                if hedged(sent, da, sent.clauses[sent.clause_at(da)][1]):
                    ev.explicitness, ev.confidence = "inferred", CONF_INFERRED
                found.append(ev)
