"""Family: the speaker stops something and nothing replaces it. "Copilot 全员停用", "Notion不用了", "夜跑彻底停了",
"cancelled the Netflix sub", "I quit Duolingo", "no longer use Evernote" -> (user, "stopped", Copilot).

The thing is what the cessation verb acts on: the noun (or Latin-script name) right before a Chinese verb that
ends something, or the words after an English one. The fact store closes the speaker's current facts that name it
(history keeps them) and records the stop itself as history: a stop is not a current fact.
Verbs are the cessation class of each language (stop, quit, cancel, sell, give up, no longer), not topics.
"""

from __future__ import annotations

import re

from agentos_mem.digest.extract.normalize import Sentence
from agentos_mem.digest.extract.rule import Found
from agentos_mem.digest.extract.vocab import is_question

# Chinese: the thing, then what ends it ("Copilot 全员停用", "车卖了", "夜跑彻底停了", "Notion不用了").
_ZH_STOP = re.compile(
    r"(?P<obj>[A-Za-z][\w+#.\- ]{0,30}?|[\u4e00-\u9fff]{2,8}?)\s*(?:也|都|就|先|已经|全员|全部|彻底|正式|直接|果断|终于|暂时)*\s*"
    r"(?:停用了?|停掉了?|停了|停止了|戒了|戒掉了|卖了|卖掉了|退了|退掉了|取消了|退订了|注销了|弃坑了|放弃了|"
    r"不(?:再)?(?:用|玩|跑|去|学|练|打|喝|抽|看|做|弹|骑|开|写)了|"
    r"cancel(?:led|ed)?\s*了|unsubscribe\s*了)"
)
# Chinese: what ends it, then the thing ("取消了Netflix", "停掉了夜跑", "不再用Evernote").
_ZH_STOP_BEFORE = re.compile(
    r"(?:取消了?|退订了?|停掉了?|停用了?|戒掉了?|卖掉了?|放弃了?|不再用|不再使用)\s*(?:我的|我们的|了)?\s*"
    r"(?P<obj>[A-Za-z][\w+#.\-]*(?:\s+(?-i:[A-Z])[\w+#.\-]*)*|[\u4e00-\u9fff]{2,8})"
)
# Chinese: 不 and the verb, the thing, then 了 ("我儿子不学钢琴了", "不玩原神了"): the 了 makes it a change, not a habit.
_ZH_STOP_NOT = re.compile(r"不再?(?:用|玩|学|练|打|弹|骑|开|喝|抽|看|去|跑)\s*(?P<obj>[A-Za-z][\w+#.\-]*(?:\s+[A-Za-z0-9][\w+#.\-]*)*|[\u4e00-\u9fff]{2,8}?)\s*了")
# (not "don't have X": that denies, it ends nothing; not "dropped off / by": those are other verbs)
_EN_STOP = re.compile(
    r"\b(?:cancel(?:l)?ed|quit|stopped(?:\s+using)?|sold|dropped(?!\s+(?:off|by|in|out|over|down|me|him|her|them|us)\b)|ditched|"
    r"gave\s+up(?:\s+on)?|got\s+rid\s+of|unsubscribed\s+from|no\s+longer\s+(?:use|have|do|play|run|pay\s+for))\s+"
    r"(?:using\s+|my\s+|our\s+|the\s+)*(?P<obj>[A-Za-z][\w+#\-]*(?:\s+(?-i:[A-Z])[\w+#\-]*)*)",
    re.I,
)
# Not a stop: a plan or a wish to stop, a question, a negation of the stop ("没停", "didn't cancel").
_NOT_DONE = re.compile(r"(?:想|打算|准备|要不要|是否|考虑|没有?|别|不要|不会|\b(?:should|would|might|thinking\s+(?:of|about)|plan(?:ning)?\s+to|"
                       r"going\s+to|want\s+to|didn't|did\s+not|never|won't|will\s+not|wouldn't|can't|cannot|couldn't|don't|"
                       r"do\s+not|not|if|when|whether))\s*\S{0,6}$", re.I)
# Words that open a clause before its thing ("所以夜跑彻底停了"): not part of the thing.
_ZH_LEAD = re.compile(r"^(?:所以|然后|但是|不过|而且|其实|反正|总之|现在|目前|已经|最近|就|也|都|把|我们的?|我的?|咱们的?)+")
# A wish or a plan anywhere before the verb ("我想把健身卡退了", "打算下个月停掉"): not done yet.
_WISH = re.compile(r"想|打算|准备|计划|考虑|要不要|是否|\b(?:thinking|planning|plan\s+to|want\s+to|going\s+to|should|might|may)\b", re.I)
_ZH_OBJ_BAD = re.compile(r"^(?:你|他|她|它|这|那|所有|一切|什么)")
_EN_OBJ_BAD = frozenset("it that this them him her me us you everything anything something all".split())


def stop_facts(sent: Sentence, subject: str) -> list[Found]:
    out: list[Found] = []
    s = sent.s
    for ci, (ca, cb) in enumerate(sent.clauses):
        if is_question(sent, ci):
            continue
        for rx in (_ZH_STOP_BEFORE, _ZH_STOP_NOT, _ZH_STOP, _EN_STOP):
            for m in rx.finditer(s, ca, cb):
                if (_NOT_DONE.search(s[ca : m.start()]) or _NOT_DONE.search(s[max(ca, m.start("obj") - 8) : m.start("obj")])
                        or _WISH.search(s, ca, m.end())):
                    continue
                a, b = m.span("obj")
                lead = _ZH_LEAD.match(s, a, b)
                if lead and lead.end() < b:
                    a = lead.end()
                thing = sent.orig(a, b).strip()
                low = thing.lower()
                if not thing or _ZH_OBJ_BAD.match(thing) or low in _EN_OBJ_BAD or len(low) < 2:
                    continue
                if any(a < y and x < b for x, y in (f.span for f in out)):
                    continue
                out.append(Found(subject, "stopped", thing, (a, b)))
    return out
