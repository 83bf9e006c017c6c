"""Family: configuration values, the core of supersession. "X 是/改成/升级到 Y", "my X is Y", "X changed to Y",
"we upgraded the server to 8C16G" -> (X, "value", Y). At most one value per clause (the first copula that
validates). Evaluations ("X is great", "很重要") and relative clauses produce nothing; a value needs a technical
or attribute subject, a value-like object (digits, Latin inside Chinese, a proper noun) or "我的X改成了Y"."""

from __future__ import annotations

import re
from datetime import date

from agentos_mem.digest.extract.normalize import HAS_CJK, has_any, Sentence
from agentos_mem.digest.extract.objects import OBJ_TAIL_NOW, cut, trim
from agentos_mem.digest.extract.rule import Found
from agentos_mem.digest.extract.people import pronoun_person
from agentos_mem.digest.extract.subjects import NOT_MINE, YOUR
from agentos_mem.digest.extract.vocab import ATTRIBUTE, PRONOUN_SUBJECTS, is_question, is_technical
from agentos_mem.vocabulary.dates import find_date
from agentos_mem.vocabulary.valuetypes import typed_extent

_ANY_DAY = date(2000, 1, 1)  # only where a date phrase is matters here, not which day it names

_ZH_CHANGE = (
    r"改为|改成|改到|换成|换为|换到|升级到|升级为|升级成|升到|降级到|降级为|调整为|调整到|调整成|调到|调成|设为|"
    r"设置为|设置成|设定为|设成|变成|变为|迁移到|迁移至|迁到|切换到|切换为|切换成|更新为|更新到|更换为|"
    r"扩容到|扩容至|扩到|增加到|提高到|提升到|减少到|降到|降低到"
)
# Copulas in a clause: a change verb, or 是/为 when they are not part of another word (但是, 因为, 认为 ...).
_ZH_COPULA = re.compile(rf"(?P<change>(?:{_ZH_CHANGE})了?)|(?<![但可总要于只不倒老凡像算还真硬或若即])是(?!否|不是)|(?<![因认成作以称行更视])为(?!了|什么|何|止|主|期|难|人|此)")
# "X从A<verb>到/成/为B" is a change whatever the verb (加到, 涨到, 搬到, 调去 ...): the 从A names the old value,
# so the verb is recognised by its shape, not from a list.
_ZH_FROM_CHANGE = re.compile(r"从[^,;:!?。从]{1,24}?(?P<change>[\u4e00-\u9fff]{1,2}?(?:到|至|成|为|去)了?)(?=\s*[^\s了,;:!?。])")
_ZH_SUBJ_LEAD = re.compile(
    r"(?:(?:对了|另外|还有|顺便说一下|顺便说|顺便|然后|而且|但是|不过|所以|因为|其实|实际上|现在|目前|如今|今天|昨天|最近|刚刚|刚才|已经|终于|哦|噢|嗯|啊|好的|好|那么|不对|更正一下|更正|纠正一下|纠正|抱歉|话说|另|我觉得|我认为|我猜|我记得|"
    r"我想|好像|可能|大概|也许|应该|告诉你|跟你说)[,:\s]*)+"
)
_ZH_SUBJ_SINCE = re.compile(r"\s*(?:从|自|由)[^,;:!?。从]{1,12}?(?:起|开始)[,\s]*")
# "他们给我们的 rate limit", "我用的输入法", "我开的车": the head noun after a pronoun's (or its verb's) 的
_ZH_SUBJ_WHOSE = re.compile(r".*[我你您他她它们](?:用|开|住|带|买|租|养|骑|穿|戴|听|看|玩|读|学|坐)?的\s*")
_ZH_SUBJ_POSS = re.compile(r"(?:我们公司的|我们家的|我们的|咱们的|我家的|我的|我们|咱们|我)\s*")
# 会 after a thing is will ("服务器会升级到"), except where it ends a noun (周会, 站会, 年会)
_ZH_SUBJ_TAIL = re.compile(r"(?:倒是|倒|确实|的确|真的|已经|现在|目前|如今|都|也|就|又|还|已|刚刚|刚|终于|正式|将|(?<![周例站晨年班大聚茶舞晚早夜约工学协议展博庙商社运机酒宴])会|要|被|应该|其实|实际上|今天|昨天|最近|可能|大概|也许|或许|好像|似乎|估计|\s)+$")
_ZH_SUBJ_BAD = re.compile(r"[了过着吗呢吧啊我你您他她它]|喜欢|觉得|认为|知道|感觉|时候|有时|很多|有些|一些|大家|人们|自己|的$|^[这那哪谁]")
_ZH_OBJ_BAD_START = re.compile(r"^(?:很|非常|太|挺|真|好|有点|比较|特别|十分|越来越|不|没|也|都|还|就|一种|一件|因为|为了|怎么|什么|这|那|我|你|他|她|它|关于|根据|由于)")

_EN_CHANGE_VERB = (
    r"(?:changed|upgraded|updated|set|switched|moved|migrated|bumped|increased|reduced|raised|lowered|"
    r"downgraded|renamed|scaled|resized|expanded|extended|shortened|postponed|pushed|rescheduled)"
)
_EN_COPULA = re.compile(
    rf"(?P<change>\s+(?:is|was|has\s+been|have\s+been|had\s+been|got|are|were)\s+(?:now\s+|just\s+|finally\s+|recently\s+|already\s+|"
    rf"been\s+)*{_EN_CHANGE_VERB}\s+(?:from\s+[^,;]+?\s+)?(?:to|into)\s+"
    r"|\s+(?:has\s+|have\s+|just\s+|now\s+)*(?:changed|switched|moved|migrated|went\s+up|went\s+down|grew|dropped)\s+"
    r"(?:from\s+[^,;]+?\s+)?to\s+"
    r"|\s+(?:is|are)\s+now\s+(?:on\s+|at\s+|in\s+|running\s+|using\s+)?)"
    r"|(?P<weak>\s+(?:is|are)\s+(?:currently\s+|still\s+)?(?:on\s+|running\s+)?|\s*=\s*)",
    re.I,
)
_EN_CHANGE_KEYS = (
    "chang", "upgrad", "updat", "set", "switch", "mov", "migrat", "bump", "increas", "reduc", "rais", "lower",
    "downgrad", "renam", "scal", "resiz", "expand", "extend", "shorten", "postpon", "push", "reschedul",
    "went", "grew", "dropp",
)
_EN_COPULA_KEYS = _EN_CHANGE_KEYS + (" is", " are", " was", " were", "=", " been", " got")
# Active voice: "we upgraded the server to 8C16G", "I moved the meeting to Friday".
_EN_ACTIVE = re.compile(
    rf"\b(?:I|we|they|he|she|you|someone|the\s+team|ops)\s+(?:have\s+|'ve\s+|just\s+|finally\s+|already\s+|also\s+|"
    rf"recently\s+)*{_EN_CHANGE_VERB}\s+(?P<subj>[^,;]+?)\s+(?:from\s+[^,;]+?\s+)?(?:to|into)\s+(?P<obj>[^,;]+)",
    re.I,
)
_EN_SUBJ_LEAD = re.compile(
    r"(?:(?:so|and|but|also|btw|by\s+the\s+way|oh|ok|okay|well|now|actually|currently|update|fyi|note|correction|sorry|no|yes|yeah|hey|hi|"
    r"just\s+so\s+you\s+know|as\s+of\s+(?:today|now)|today|quick\s+update|heads\s+up|I\s+think(?:\s+that)?|I\s+believe(?:\s+that)?|I\s+guess|"
    r"I'm\s+(?:pretty\s+)?sure(?:\s+that)?|maybe|probably|I\s+remember(?:\s+that)?|remember(?:\s+that)?)[,:]?\s+)+",
    re.I,
)
_EN_SUBJ_BREAK = re.compile(r".*(?:[^\w\s'’\-./+#&]|\s[-–—]\s)\s*")
_EN_SUBJ_DET = re.compile(r"(?:my|our|the|this|that|these|those)\s+(?=\S)", re.I)
_EN_SUBJ_TAIL = re.compile(r"(?:\s+(?:now|currently|already|still|just|finally|also|actually|today))+$", re.I)
_EN_SUBJ_BAD_WORDS = frozenset(
    """am was were be been being have has had do does did will would can could should went go going goes think
    feel know like love want need got get make made said say to i'm it's that's there's what's he's she's today
    tomorrow yesterday tonight weather life day everything""".split()
)
_EN_SUBJ_STOP = frozenset(
    "out up off back on over away aside forward down in about myself ourselves yourself it that this them".split()
)
_EN_OBJ_BAD_START = re.compile(
    r"^(?:not|n't|a\s+bit|very|really|so|too|quite|pretty|kind\s+of|sort\s+of|also|just|always|never|getting|going|being|in|on|at|for|with|about|"
    r"like|that|what|how|why|where|when|who|it|there|because|still|such|one\s+of|based\s+on|according\s+to|from)\b",
    re.I,
)
# "X is tough / 很重要": an evaluation, not a value.
_EVALUATIVE = re.compile(
    r"(?:tough|hard|easy|great|good|bad|awesome|amazing|key|important|nice|fun|cool|okay|ok|fine|true|crucial|essential|worth\s+it|beautiful|"
    r"wonderful|terrible|awful|interesting|difficult|challenging|helpful|useful|perfect|lovely|incredible|fantastic|special|everything|life|"
    r"the\s+best|the\s+worst|重要|关键|困难|容易|不错|很棒|最好|最重要)\W*$",
    re.I,
)


def zh_subject(c: str, a: int, b: int) -> tuple[int, int, bool]:
    """Trim a Chinese subject span: lead-ins, 我的/我们的, 把, 从Z, trailing 已经/现在. Returns (a, b, possessive)."""
    poss = False
    while a < b and c[a].isspace():
        a += 1
    for _ in range(2):
        m = _ZH_SUBJ_LEAD.match(c, a, b)
        if m:
            a = m.end()
        m = _ZH_SUBJ_POSS.match(c, a, b)
        if m:
            a, poss = m.end(), True
    m = _ZH_SUBJ_SINCE.match(c, a, b)  # "从4月1号起X": the start date is not part of the subject
    if m:
        a = m.end()
    k = c.rfind("把", a, b)
    if k >= 0:
        a = k + 1
    m = _ZH_SUBJ_WHOSE.search(c, a, b)  # "他们给我们的 rate limit": the head noun after a pronoun's 的
    if m:
        a = m.end()
    k = c.find("从", a, b)
    if k > a:
        b = k
    m = _ZH_SUBJ_TAIL.search(c[a:b])
    if m:
        b = a + m.start()
    while a < b and c[a].isspace():
        a += 1
    return a, b, poss


def en_subject(c: str, a: int, b: int) -> tuple[int, int, bool]:
    poss = False
    while a < b and c[a].isspace():
        a += 1
    m = _EN_SUBJ_BREAK.search(c, a, b)  # "Migration's done 🎉 staging is ...": the subject starts after the break
    if m:
        a = m.end()
    m = _EN_SUBJ_LEAD.match(c, a, b)
    if m:
        a = m.end()
    m = _EN_SUBJ_DET.match(c, a, b)
    if m:
        poss = m.group().strip().lower() in ("my", "our")
        a = m.end()
    m = _EN_SUBJ_TAIL.search(c[a:b])
    if m:
        b = a + m.start()
    while a < b and c[a].isspace():
        a += 1
    return a, b, poss


def zh_subject_ok(t: str) -> bool:
    return 1 <= len(t) <= 30 and t.lower() not in PRONOUN_SUBJECTS and not _ZH_SUBJ_BAD.search(t) and not t.isdigit()


def _en_subject_ok(t: str) -> bool:
    words = t.lower().split()
    return (
        1 <= len(t) <= 30
        and 1 <= len(words) <= 5
        and not any(w in PRONOUN_SUBJECTS or w in _EN_SUBJ_BAD_WORDS for w in words)
        and words[0] not in _EN_SUBJ_STOP
        and not t.isdigit()
        and t[0] not in "\"'"
        and (not words[0].endswith("ing") or is_technical(t))  # "Losing a pet is tough" is no value
    )


# A typed value spelled in Chinese: a weekday, a clock time, a date, a quantity in Chinese numerals.
_ZH_TYPED = re.compile(
    r"(?:周|星期|礼拜)[一二三四五六日天末]|[零一二三四五六七八九十百千万两半\d]+\s*(?:点|号|月|日|年|岁|个|位|台|块|元|天|周|小时|分钟|公里|米|斤|G|T|核)"
)


def value_like(obj_norm: str, obj_orig: str) -> bool:
    """An object that reads as a value by itself: digits, Latin inside Chinese, a proper noun, quotes, e-mail, URL,
    a typed Chinese value (周三, 下午三点, 两台)."""
    if re.search(r"\d|@|://|^[\"《]", obj_norm) or _ZH_TYPED.search(obj_norm):
        return True
    if HAS_CJK.search(obj_norm):
        return bool(re.search(r"[A-Za-z]", obj_norm))
    return bool(re.search(r"(?:^|\s)[A-Z]", obj_orig))


def _value_gate(subj: str, obj_norm: str, obj_orig: str, change: bool, poss: bool) -> bool:
    return (
        is_technical(subj, obj_norm)
        or bool(ATTRIBUTE.search(subj))
        or value_like(obj_norm, obj_orig)
        or (change and poss)  # "我的X改成了Y": a change to something of mine
    )


# A trailing time expression is when, not what: "Helix last week", "ap-southeast-1 上周", "10点 from next Monday".
_TIME_LEAD_TAIL = re.compile(r"(?:\s+(?:from|since|starting|until|till|as\s+of|by|on|at|in)|从|自|于|在)\s*$", re.I)


def _untimed(s: str, oa: int, ob: int) -> int:
    """End of the value without a trailing date or time phrase (kept when the date is the whole value)."""
    found = find_date(s[oa:ob], _ANY_DAY)
    if not found or found[1] == 0 or s[oa + found[2] : ob].strip(" ,.。了的"):
        return ob
    end = oa + found[1]
    m = _TIME_LEAD_TAIL.search(s, oa, end)
    if m:
        end = m.start()
    _a, b = trim(s, oa, end)
    return b if b > oa else ob


def value_found(
    sent: Sentence, sa: int, sb: int, oa: int, ob: int, change: bool, poss: bool, cjk: bool
) -> Found | None:
    """Validate and build a value from subject [sa, sb) and object [oa, ob) (``change``: a change verb was used;
    ``poss``: the subject had 我的/my)."""
    s = sent.s
    oa, ob = trim(s, oa, ob)
    typed = typed_extent(s[oa:ob])  # "闹钟改到6:45了", "moved to 10am starting today": the value is its typed part
    if cjk:
        ob = min(ob, cut(sent, oa, ob))
    else:
        ob = cut(sent, oa, ob)
        m = OBJ_TAIL_NOW.search(s, oa, ob)
        if m:
            ob = m.start()
    oa, ob = trim(s, oa, ob)
    ob = _untimed(s, oa, ob) if typed is None else oa + typed
    if not cjk and (art := re.match(r"(?:a|an|the)\s+(?=\S)", s[oa:ob], re.I)):  # "a ThinkPad X1": the value is the name
        oa += art.end()
    if not cjk and (where := re.match(r"(?:based|located|living|staying|stationed|headquartered)\s+(?:in|at|out\s+of)\s+(?=\S)", s[oa:ob], re.I)):
        oa += where.end()  # "Priya is based in Toronto": the value is the place
    found = find_date(s[sa:sb], _ANY_DAY)  # "主集群上周迁到X": the subject is 主集群
    if found and found[1] == 0 and not s[sa + found[2] : sb].strip(" 的'’s"):
        return None  # "今晚是公司年会", "Tonight is pizza night": a day is when something is, not an attribute of it
    if found and found[1] > 0 and not s[sa + found[2] : sb].strip():
        sb = sa + found[1]
        while sb > sa and s[sb - 1].isspace():
            sb -= 1
    elif found and found[1] == 0 and s[sa + found[2] : sb].strip():  # "下周一服务器会升级到X": when, then the subject
        sa += found[2]
        while sa < sb and s[sa].isspace():
            sa += 1
        tail = _ZH_SUBJ_TAIL.search(s[sa:sb]) if cjk else None
        if tail:
            sb = sa + tail.start()
    subj_n, obj_n = s[sa:sb].strip(), s[oa:ob]
    if not (1 <= len(obj_n) <= 60):
        return None
    if cjk:
        if not zh_subject_ok(subj_n) or _ZH_OBJ_BAD_START.match(obj_n):
            return None
    else:
        if not _en_subject_ok(subj_n) or _EN_OBJ_BAD_START.match(obj_n) or obj_n.lower() in PRONOUN_SUBJECTS:
            return None
        if not change and len(obj_n.split()) > 6:
            return None
    if not change and (len(obj_n) > 30 or _EVALUATIVE.match(obj_n)):
        return None
    subj_o, obj_o = sent.orig(sa, sb), sent.orig(oa, ob)
    if not _value_gate(subj_n, obj_n, obj_o, change, poss):
        return None
    return Found(subj_o, "value", obj_o, (sa, ob), technical=is_technical(subj_n, obj_n), possessive=poss, change=change)


def _first_copula_value(sent: Sentence, lead: int, cb: int, assistant: bool, *, cjk: bool) -> Found | None:
    """The value read at the first copula of clause [lead, cb) that validates (Chinese or English patterns):
    later copulas are not tried, since a clause states at most one value."""
    copula, subject = (_ZH_COPULA, zh_subject) if cjk else (_EN_COPULA, en_subject)
    s = sent.s
    for m in copula.finditer(s, lead, cb):
        sa, sb, poss = subject(s, lead, m.start())
        f = value_found(sent, sa, sb, m.end(), cb, bool(m.group("change")), poss or assistant, cjk)
        if f:
            return f
    return None


# "his name is Kevin Cheng", "她的新公司是字节": his / her is the person last spoken of, when the caller knows one.
_THIRD = re.compile(r"\s*(?:his\b|her\b|他的|她的)\s*", re.I)


def value_facts(sent: Sentence, assistant: bool = False, recent: list[str] | None = None) -> list[Found]:
    """Value facts from each clause of the sentence; at most one per clause (the first copula that validates).
    ``recent``: the people spoken of so far, latest last (a clause opening on his / her is that person's)."""
    s, out = sent.s, []
    marks: list[tuple[int, str | None]] = []  # where each clause's values start in ``out``, and whose they are
    for ci, (ca, cb) in enumerate(sent.clauses):
        who = None
        marks.append((len(out), None))
        if is_question(sent, ci, values=True):
            continue
        clause = s[ca:cb]
        cjk = bool(HAS_CJK.search(clause))
        if assistant:  # only restatements of the user's own things: 你的X是Y / your X is Y
            m = YOUR.match(clause)
            if not m:
                continue
            lead = ca + m.end()
        else:
            third = _THIRD.match(clause)
            # only where nothing before it in the sentence could be whom it means ("Our one-year-old is so cute, his
            # name is Kyle": his is the child's): the sentence opens on it, or on a word or two ("Sorry, his name ...")
            opens = all(len(s[a:b].split()) <= 2 for a, b in sent.clauses[:ci]) if not cjk else ci == 0
            who = pronoun_person(third.group(0), recent) if third and recent and opens else None
            if who:
                lead = ca + third.end()
                marks[-1] = (len(out), who)
            elif NOT_MINE.match(clause):
                continue
            else:
                lead = ca
        if cjk:
            m = _ZH_FROM_CHANGE.search(s, lead, cb)
            if m:
                sa, sb, poss = zh_subject(s, lead, m.start())
                f = value_found(sent, sa, sb, m.end(), cb, True, poss or assistant, True)
                if f:
                    out.append(f)
                    continue
            f = _first_copula_value(sent, lead, cb, assistant, cjk=True)
            if f:
                out.append(f)
            continue
        low = sent.lower[lead:cb]
        m = _EN_ACTIVE.search(s, lead, cb) if not assistant and has_any(low, _EN_CHANGE_KEYS) else None
        if m:
            sa, sb, poss = en_subject(s, m.start("subj"), m.end("subj"))
            f = value_found(sent, sa, sb, m.start("obj"), m.end("obj"), True, poss, False)
            if f:
                out.append(f)
                continue
        if not has_any(low, _EN_COPULA_KEYS):
            continue
        f = _first_copula_value(sent, lead, cb, assistant, cjk=False)
        if f:
            out.append(f)
    for i, (at, who) in enumerate(marks):
        if who:
            _theirs(out[at:marks[i + 1][0] if i + 1 < len(marks) else len(out)], who)
    return out


def _theirs(found: list[Found], who: str) -> None:
    for f in found:
        f.subject = f"{who}的{f.subject}" if re.search(r"[\u4e00-\u9fff]", who + f.subject) else f"{who}'s {f.subject}"
