"""Family: where someone else is. "同事小李在广州分部", "小李调去深圳了", "女儿朵朵……，在实验小学" ->
(小李, "lives_in", 广州). The fact lands on that person, never on the user, and the person's key is their name
when the sentence gives one (女儿朵朵 -> 朵朵), so a later "朵朵转学了，在外国语小学上课" supersedes it. A clause
with no person of its own ("，在实验小学") continues the person of the clause before it in the same sentence."""

from __future__ import annotations

import re

from agentos_mem.digest.extract.normalize import Sentence
from agentos_mem.digest.extract.rule import Found
from agentos_mem.vocabulary.people import EN_RELATIONS, ZH_RELATIONS

# The relation words of both languages (vocabulary.people), for the families that ask whose value a sentence states.
_REL = ZH_RELATIONS
# A person inside a fact's subject: a relation and a name ("coworker Priya", "同事老周", "女儿朵朵"), or the relation
# whose thing the subject is ("manager's name", "妈妈的手机").
PERSON_IN_SUBJECT = re.compile(rf"\b(?:{EN_RELATIONS})\s+[A-Z][a-z]+\b|(?:{ZH_RELATIONS})(?:[小老阿][\u4e00-\u9fff]|([\u4e00-\u9fff])\1)"
                               rf"|^(?P<rel>(?:{EN_RELATIONS})(?='s\b)|(?:{ZH_RELATIONS})(?=的))", re.I)
# A short name: 小李 / 老王 / 阿强, or a doubled name (朵朵).
_NAME = r"(?:[小老阿][\u4e00-\u9fff])(?![\u4e00-\u9fff]{{0,1}}(?:时|点|会|分))|(?P<{g}>[\u4e00-\u9fff])(?P={g})"
NAME1, _NAME2 = _NAME.format(g="d1"), _NAME.format(g="d2")
_WHO = re.compile(
    rf"^\s*(?:我的|我们的|我)?(?:(?P<rel>{_REL})(?P<name>{NAME1})?|(?P<name2>{_NAME2}))"
    r"(?:今年|已经|刚刚|刚|也|还|现在|目前|这周|最近|上个月|下个月|马上|就)*"
)
_TAIL = r"(?:已经|刚刚|刚|也|还|现在|目前|这周|最近|就)*"
# Moves name the new place directly; 在 needs a workplace or school: a place word, or work/study after it.
_MOVE = re.compile(
    rf"^{_TAIL}(?:调去|调到|搬去|搬到|转去|转到|转学到|转学去|跳槽到|跳槽去|去了)了?(?P<obj>[\u4e00-\u9fffA-Za-z0-9]{{2,12}}?)"
    r"(?:分部|总部|分公司|办公室)?(?:工作|上班|上学|读书)?了?\s*$"
)
_PLACE_WORDS = r"小学|中学|高中|大学|学校|幼儿园|学院|医院|公司"
_AT = re.compile(
    rf"^{_TAIL}在(?:(?P<obj>[\u4e00-\u9fffA-Za-z0-9]{{1,10}}?(?:{_PLACE_WORDS}))|(?P<obj2>[\u4e00-\u9fffA-Za-z0-9]{{2,12}}?)"
    r"(?:分部|总部|分公司|办公室|上课|上学|读书|工作|上班|实习))"
)


# One word for one kin, whichever form was said (我妈, 老妈, 妈 -> 妈妈): the same person's facts share a subject.
_KIN = {"妈": "妈妈", "老妈": "妈妈", "我妈": "妈妈", "爸": "爸爸", "老爸": "爸爸", "我爸": "爸爸", "哥": "哥哥", "姐": "姐姐",
        "弟": "弟弟", "妹": "妹妹", "媳妇": "老婆", "妻子": "老婆", "丈夫": "老公"}


# Whom he / she / his / her can mean: a person of that sex by the relation word, or one the word does not tell.
_MALE = re.compile(r"\b(?:husband|boyfriend|brother|dad|father|son|uncle|grandpa)\b|老公|丈夫|男朋友|爸|哥|弟|儿子|爷爷|外公|舅舅|叔叔|表哥|表弟|堂哥", re.I)
_FEMALE = re.compile(r"\b(?:wife|girlfriend|sister|mom|mum|mother|daughter|aunt|grandma)\b|老婆|妻子|媳妇|女朋友|妈|姐|妹|女儿|奶奶|外婆|阿姨|表姐|表妹|堂姐", re.I)


def pronoun_person(pronoun: str, recent: list[str] | None) -> str | None:
    """The latest of ``recent`` a pronoun can mean: "his" / "他" never a wife or a mother, "her" / "她" never a husband."""
    p = pronoun.strip().lower()
    male = p.startswith(("he", "his", "him", "他"))
    for person in reversed(recent or []):
        if (_FEMALE if male else _MALE).search(person) and not (_MALE if male else _FEMALE).search(person):
            continue
        return person
    return None


def kin(word: str) -> str:
    """The one form of a Chinese kinship word (老妈 -> 妈妈); any other word as it is."""
    return _KIN.get(word, word)


def _person(m: re.Match[str]) -> str:
    return m.group("name") or m.group("name2") or kin(m.group("rel"))


# "她上周跳槽去了阿里": he or she opening a clause is the person last spoken of (the caller's ``recent``).
_ZH_PRONOUN = re.compile(r"^\s*(?:她|他)(?!们)(?:今年|已经|刚刚|刚|也|还|现在|目前|这周|最近|上周|上个月|下个月|马上|就)*")
# Work, not where one is: "在腾讯上班", "跳槽去了阿里", "入职字节".
_WORK = re.compile(r"上班|工作|跳槽|入职|加入|实习")


def people_places(sent: Sentence, recent: list[str] | None = None) -> list[Found]:
    """``recent``: the people spoken of before this sentence in the day, latest last; it gains this sentence's."""
    if not sent.cjk:
        return []
    s, out = sent.s, []
    who: str | None = None
    for ca, cb in sent.clauses:
        clause = s[ca:cb]
        m = _WHO.match(clause)
        rest_at = ca
        pro = _ZH_PRONOUN.match(clause)
        if m and m.end() > m.start() and _person(m):
            who, rest_at = _person(m), ca + m.end()
            if recent is not None:
                recent.append(who)
        elif pro and recent:
            who, rest_at = recent[-1], ca + pro.end()
        elif not clause.lstrip().startswith(("在", "已经", "这周", "现在", "目前")):
            who = None if re.match(r"\s*(?:我|我们|你|他|她)", clause) else who
            continue
        if not who:
            continue
        rest = s[rest_at:cb]
        mv = _MOVE.match(rest)
        if mv:
            a, b = rest_at + mv.start("obj"), rest_at + mv.end("obj")
        else:
            at = _AT.match(rest)
            if not at:
                continue
            g = "obj" if at.group("obj") else "obj2"
            a, b = rest_at + at.start(g), rest_at + at.end(g)
        out.append(Found(who, "works_at" if _WORK.search(rest) else "lives_in", sent.orig(a, b), (a, b)))
    return out


# English: "my sister lives in Chengdu", "my brother's in Munich working at BMW", "my wife works at Google", "my manager
# is Sarah", "my daughter goes to Lincoln Elementary", "my son is in 3rd grade", "my mom just moved to Florida". The fact
# lands on the relation word (brother, wife): a later sentence about the same relation supersedes it.
_EN_WHO = re.compile(rf"\bmy\s+(?P<rel>{EN_RELATIONS})\b(?:\s*,\s*(?P<name>(?-i:[A-Z][a-z]+))\s*,)?", re.I)
_EN_ADVS = r"(?:(?:now|still|just|recently|currently|finally|also|actually|already)\s+)*"
_EN_OBJ = r"(?P<obj>[A-Z0-9][\w&.'\-]*(?:\s+(?:of\s+|&\s+)?[A-Z0-9][\w&.'\-]*){0,4})"
_EN_PEOPLE = (
    ("lives_in", re.compile(rf"(?:'s|\s+is)?\s+{_EN_ADVS}(?:lives?\s+in|living\s+in|moved\s+to|relocated\s+to|is\s+based\s+in|'s\s+based\s+in|is\s+in|'s\s+in|"
                            rf"lives\s+over\s+in|moved\s+back\s+to|in(?=\s+[A-Z]))\s+(?:the\s+)?{_EN_OBJ}")),
    ("works_at", re.compile(rf"(?:'s|\s+is)?\s+{_EN_ADVS}(?:works?\s+(?:at|for)|working\s+(?:at|for)|is\s+working\s+(?:at|for)|joined|started\s+at|"
                            rf"got\s+a\s+job\s+at|is\s+employed\s+(?:at|by)|goes\s+to|studies\s+at|is\s+studying\s+at)\s+(?:the\s+)?{_EN_OBJ}")),
    ("role", re.compile(r"(?:'s|\s+is)?\s+" + _EN_ADVS + r"(?:works\s+as|is\s+(?:now\s+)?(?:a|an)|became\s+(?:a|an)|'s\s+(?:a|an))\s+(?:(?:a|an)\s+)?"
                        r"(?P<obj>[a-z][a-z\-]*(?:\s+[a-z][a-z\-]*){0,2}?)(?=\s*(?:$|[,;.!?]|\s+(?:at|in|for|and|but|now|since|this|last|next|recently|already)\b))")),
)


_EN_PRONOUN = re.compile(r"(?:^|(?<=[,;:—-])\s*|\band\s+|\bso\s+)(?:he|she)\b(?!\s+(?:said|says|thinks|thought|told|asked))", re.I)


def people_en(sent: Sentence, recent: list[str] | None = None) -> list[Found]:
    """Where someone else lives and works, and what they do, from "my <relation> ..." in English; a "he" or "she"
    is the person last spoken of (``recent``, which gains this sentence's)."""
    if not sent.latin:
        return []
    s, out = sent.s, []
    named = [(m, m.group("rel").lower()) for m in _EN_WHO.finditer(s)]
    if recent is not None:
        recent.extend(who for _m, who in named)
        last = named[-1][1] if named else (recent[-1] if recent else None)
        if last:
            named += [(m, last) for m in _EN_PRONOUN.finditer(s) if not any(a <= m.start() < b for a, b in (x.span() for x, _w in named))]
    for m, who in sorted(named, key=lambda x: x[0].start()):
        at, done = m.end(), set()
        while True:  # "lives in Chengdu and works as a nurse", "in Munich working at BMW": one person, several facts
            hit = next(((p, h) for p, rx in _EN_PEOPLE if p not in done and (h := rx.match(s, at))), None)
            if hit is None:
                break
            pred, h = hit
            a, b = h.span("obj")
            out.append(Found(who, pred, sent.orig(a, b).rstrip(".,"), (m.start(), b)))
            done.add(pred)
            more = _EN_AND.match(s, b)
            if not more:
                break
            at = more.end() - 1  # the patterns open on white space
    return out


_EN_AND = re.compile(r"\s*(?:,\s*(?:and\s+)?|\s+and\s+|\s+(?=working|living))")
