"""Family: values found by their shape. A spec, a version, a clock time, weekdays, a quantity with its unit or a
counted number (vocabulary.valuetypes.find_values) stated by the speaker is a value whatever verb carries it: "测试机
升级到8C16G", "那台现在还是4C8G的", "我自己还是用 Pixel 8", "baseline 写现在的 190ms 吧", "we moved it to Postgres 16".

The attribute is the noun the clause names before the value (jieba's parts of speech for Chinese, the last content
words for English), or the verb when no noun does ("每天坐2号线" -> 坐). A day ("今晚", "tonight") or a copula (是) names
no attribute. With none named, the value is of nothing the sentence says (issue 40: a claim only where subject,
attribute and value are all sure): a spec or a version is named by its type, since it says what it is of; a time is
too, but stands only as a correction's new value ("scratch that, it's at 9:45"); an amount, or a count by a measure word
("两台"), is no claim. A relation word before the value in the sentence (我妈, my brother) makes it that person's slot.
The fact store then matches slots by the value's type and related attribute words, so neither wording nor verb has to
repeat for a change to supersede.
Runs after the sentence patterns: it only reads values they left unread.
"""

from __future__ import annotations

import re
from datetime import date

from agentos_mem.digest.extract.normalize import Sentence, naming
from agentos_mem.digest.extract.people import EN_RELATIONS, ZH_RELATIONS, kin
from agentos_mem.digest.extract.rule import Found
from agentos_mem.digest.extract.subjects import NOT_MINE
from agentos_mem.digest.extract.vocab import hedged, is_question, is_technical
from agentos_mem.kernel.text import STOPWORDS, has_cjk
from agentos_mem.vocabulary.dates import find_date
from agentos_mem.vocabulary.valuetypes import find_values, typed_extent

def _spoken_amount(kind: str, text: str) -> bool:
    """An amount said in Chinese numerals or with a half ("顶两天", "等了十分钟", "5分半"): read to compare values
    (query.threads, digest.drift), never as a claim by its shape. Said that way it mostly tells how long or how much
    something took; measured on fact_updates, of the 11 claims such amounts made, 5 took a verb for their attribute, 2
    a wrong value and 1 a stopped habit's (a stale claim on dev), and they moved no question on either set."""
    return kind.startswith("quantity:") and (not re.search(r"\d", text) or "半" in text)


# Value types that say only when or how much, never of what: with no attribute named, no claim.
UNNAMED_UNSURE = frozenset({"clock", "weekday"})

_ZH_PERSON = re.compile(rf"(?:我的|我|给我)?(?P<p>{ZH_RELATIONS})")
_EN_PERSON = re.compile(rf"\bmy\s+(?P<p>{EN_RELATIONS})\b", re.I)
# The speaker back after the person ("我自己还是用", "跟我这边北京总部", "my wife got me into F1"): the value is the
# speaker's own, not the person's.
_SELF = re.compile(r"我|\b(?:I|me|my|mine|myself)\b", re.I)
# Parts of speech (jieba) that name a thing: nouns, foreign words, nominal verbs, place and organisation names.
_NOUNISH = ("n", "eng", "vn", "nz", "ns", "nt", "nr", "j", "l")
_ZH_WEAK = frozenset("那台 这台 那个 这个 它 这 那 现在 目前 还是 就是 今天 每天".split())
_EN_SKIP = frozenset(
    """a an the my our your his her their its this that these those it i we you he she they is are was were be been am
    to on at in for of with by from into as now still currently already just also really then so and or but not
    use uses used using run runs running ran have has had get got getting set moved switched upgraded changed went
    keep keeping kept pay paying paid bought buy me him us them about around roughly approximately nearly almost instead
    ll ve re d m 's s hasn haven isn aren wasn weren doesn don didn won can couldn shouldn wouldn""".split()
)
# What a day or a clock time cannot be the value of: a word that says how often or when ("usually · 6pm", "every ·
# Saturday"), a part of the day ("Sunday night": one date), or a name ("a final round with Initech on Tuesday", "Changi
# around 2pm": when something happens there, not a value it has).
_EN_NOT_TIMED = frozenset("""usually always often sometimes never normally generally typically every each
    morning mornings afternoon afternoons evening evenings night nights tonight noon midnight weekend weekends""".split())
_EN_WORD = re.compile(r"[A-Za-z][A-Za-z0-9+#.\-]*")
# A value right after these is not the speaker's value: denied ("是周三不是周二", "not 5432", "instead of X") or the old
# one of a change ("从40G加到了100G", "from 4C8G to 8C16G"), which the change itself supersedes.
_NOT_THE_VALUE = re.compile(
    r"(?:不是|并非|而不是|而非|不|没|从|由|原来的?|之前的?|以前的?|直到|截至|截止到?|"
    r"\b(?:not|isn't|wasn't|aren't|instead\s+of|rather\s+than|than|from|used\s+to\s+be|was\s+previously|until|till|through))\s*(?:the\s+|a\s+|an\s+)?$",
    re.I,
)


# How much something changed, not what it is now: "the bill dropped by 30%", "latency went down by 40ms", "成本降了三成",
# "延迟减少了40ms". A new value is said with "to" / 到 ("dropped to 300", "降到3000"), which this leaves alone.
_DELTA = re.compile(
    r"(?:\b(?:dropped|fell|rose|grew|increased|decreased|shrank|climbed|jumped|improved|cut|reduced|went\s+(?:up|down)|"
    r"is\s+(?:up|down)|was\s+(?:up|down)|'s\s+(?:up|down))\s+(?:by\s+)?|\bby\s+)"
    r"(?:roughly|about|around|nearly|almost|over|more\s+than|less\s+than|some|a\s+good)?\s*$"
    r"|(?:降|涨|减少|增加|下降|上涨|提升|提高|降低|缩短|少|多)了\s*(?:大概|大约|差不多|将近|近)?\s*$",
    re.I,
)


# A value handed on ("Model 3 出给了我一个同事", "the old MacBook went to my sister"): no longer the speaker's.
# A value said to be the old one ("8080 was the old one", "5432 是之前的"): the value before, not now.
_GIVEN_AWAY = re.compile(r"\s*(?:也|都|已经|就)?(?:出给|卖给|送给|转给|让给|转让给|卖掉|送人|\s(?:went|goes)\s+to\b|\s(?:is|was)\s+(?:sold|given)\b|"
                         r"\s(?:is|was)\s+(?:the\s+|my\s+|our\s+)?(?:old|previous|former|outdated)\b|是?(?:旧的|以前的|之前的|原来的|老的))", re.I)


def anchored_person(sent: Sentence, end: int) -> str | None:
    """The relation word nearest before ``end`` in the sentence (我妈, my brother), unless the speaker names
    themself after it ("我自己还是用")."""
    text = sent.s[:end]
    best = None
    for rx in (_ZH_PERSON, _EN_PERSON):
        for m in rx.finditer(text):
            if best is None or m.start() > best[0]:
                best = (m.start(), m.end(), m.group("p"))
    if best is None or _SELF.search(text, best[1]):
        return None
    return kin(best[2])


# A sentence that opens on he or she ("She adopted a cat", "他换了 HHKB"): its values are that person's.
_OPENS_ON_THIRD = re.compile(r"\s*(?:(?:she|he)\b|(?:她|他)(?!们))", re.I)
SOMEONE = "someone"  # owner_of: another person, not named in the sentence


def owner_of(text: str, value: str) -> str | None:
    """Whose ``value`` is, by the words before it in the sentence of ``text`` that names it: the relation word nearest
    before it (``anchored_person``: "my sister Nora adopted a cat named X" -> sister), or :data:`SOMEONE` when the
    sentence opens on he or she; None when nothing says it is another person's. The rules attribute values this way;
    a chat model's claim for the user is checked against it (digest.model_extract)."""
    spots = naming(text, value)
    if not spots:
        return None
    sent, pos = spots[0]
    return anchored_person(sent, pos) or (SOMEONE if _OPENS_ON_THIRD.match(sent.s) else None)


def _zh_attribute(prefix: str, after: bool = False) -> str:
    import jieba.posseg as pseg  # lazy: only a sentence with a typed value pays for the tagger

    words = [(w, f) for w, f in pseg.lcut(prefix) if w.strip()]
    if after:  # "七点四十的闹钟": 的 then a noun; "12点睡，7点起": the verb the time is of
        nouns = [w for w, f in words[:3] if f.startswith(_NOUNISH) and not f.startswith("nr")]
        if nouns and words[0][0] == "的":
            return nouns[0]
        return words[0][0] if words and words[0][1].startswith("v") and words[0][0] not in ("是", "有", "了") else ""
    nouns: list[str] = []
    verb = ""
    for w, f in reversed(words):
        if re.fullmatch(ZH_RELATIONS, w) or w in _ZH_WEAK:
            if nouns:
                break
            continue
        if f.startswith(_NOUNISH) and not f.startswith("nr"):
            nouns.insert(0, w)
            continue
        if nouns:
            break
        if f.startswith("v") and not verb:
            verb = w
    if nouns:
        return "".join(nouns)[-12:]
    return verb


def _attribute(text: str, after: bool = False) -> str:
    """The attribute a value is of: named before it ("测试机升级到", "Our staging DB runs"), or, when nothing is,
    right after it ("our Sunday 9pm call", "七点四十的闹钟")."""
    if re.search(r"[\u4e00-\u9fff]", text):
        return _zh_attribute(text, after)
    return _en_attribute(text, after)


def _en_attribute(prefix: str, after: bool = False) -> str:
    words = _EN_WORD.findall(prefix)
    out: list[str] = []
    if after:  # the noun the value modifies: the first words that are not function words
        for w in words:
            if w.lower() in _EN_SKIP:
                break
            out.append(w)
            if len(out) == 2:
                break
        return " ".join(out)
    for w in reversed(words):
        if w.lower() in _EN_SKIP:
            if out:
                break
            continue
        out.insert(0, w)
        if len(out) == 3:
            break
    return " ".join(out)


def _not_timed(attr: str, sentence: str) -> bool:
    """An English attribute a day or a clock time is not the value of: a word of it says how often or when, or its
    last word is a name (capitalised, an acronym: "Initech", "first PR"; not the capital that opens the sentence,
    "Standup is at 9:45")."""
    words = attr.split()
    head = words[-1]
    opens = len(words) == 1 and sentence.lstrip().startswith(head)
    return any(w.lower() in _EN_NOT_TIMED for w in words) or (head[:1].isupper() and not opens)


_COPULAS = frozenset(["是", "有", "了", "就是", "还是"])


def _named(attr: str, day: date) -> str:
    """``attr`` when it names something: a day ("今晚", "Tonight") says when, and a copula (是) or a word every sentence
    is made of (能, 要, "it") says nothing."""
    if attr in _COPULAS or attr.casefold() in STOPWORDS:
        return ""
    found = find_date(attr, day)
    return "" if found and found[1] == 0 and not attr[found[2]:].strip(" .,;:!?，。；：！？") else attr


# A value only wished for, tried or weighed ("想开 Model 3 去", "我试试七点四十出门", "thinking of 9am"): read by its shape
# alone it would be a guess, so it is not read at all.
TENTATIVE = re.compile(
    r"想|打算|准备|试试|试一下|考虑|要不要|要不|或者|如果|假如|万一|是否|"
    r"\b(?:want|wanna|plan(?:ning)?|thinking|consider(?:ing)?|try(?:ing)?|would|could|should|if|whether|or)\b",
    re.I,
)


# Values that are not the speaker's: quoted words (someone else's, a line of a film), examples and test data
# ("比如 8C16G", "e.g. port 8080", "测试数据用 9:30"), jokes marked as such.
# An apostrophe inside or at the end of a word ("I'm", "it's", "the team's", "users'") opens and closes nothing: read
# as quotes, "I'm on Postgres 16 now, it's fast" hid its value between them.
QUOTES = re.compile(r"[“「『\"‘][^”」』\"’]{0,200}[”」』\"’]|(?<![A-Za-z0-9])'[^'\n]{1,200}'(?![A-Za-z0-9])")
NOT_REAL = re.compile(
    r"比如|例如|举个例子|举例|打个比方|测试数据|假数据|示例|样例|开玩笑|玩笑话|哈哈哈|"
    r"\b(?:e\.g\.|for\s+example|for\s+instance|example|sample|dummy|fake|mock|test\s+data|just\s+kidding|jk|lol|haha)\b",
    re.I,
)


# A clause about what someone else said or wants ("Someone asked to ship a hotfix on Friday", "有人说周五发布"): not
# the speaker's value.
OTHERS = re.compile(r"\s*(?:(?:someone|somebody|people|everyone|nobody)\b|有人|别人|大家)", re.I)
_FOR = re.compile(r"(?:\bfor|\bover|了|已经|足足|整整)\s*$", re.I)


# The weekday a date names beside it ("12月2日（周三）", "Dec 2, Wednesday"): part of the date.
_DATE_WEEKDAY = re.compile(r"\s*[（(,，]?\s*(?:周|星期|礼拜)[一二三四五六日天][)）]?|\s*[(,]?\s*(?:mon|tues|wednes|thurs|fri|satur|sun)day\)?", re.I)


def _date_spans(s: str, day: date) -> list[tuple[int, int]]:
    """Every date phrase of ``s`` ("下周三", "3 days ago", "2026年12月5日（周三）"): a date is when, not a value."""
    out, pos = [], 0
    while pos < len(s) and (found := find_date(s[pos:], day)):
        _iso, a, b = found
        if (wd := _DATE_WEEKDAY.match(s, pos + b)) is not None:
            b = wd.end() - pos
        out.append((pos + a, pos + b))
        pos += max(b, a + 1)
    return out


def _names_the_day(clause_prefix: str, day: date) -> bool:
    """"今天是星期日", "tomorrow is Friday": a day word and a copula before a weekday make it a date."""
    found = find_date(clause_prefix, day)
    return bool(found) and clause_prefix[found[2]:].strip().lower() in ("", "是", "就是", "is", "was", "will be")


_POSSESSIVE = re.compile(r"['’]s\b")


def anchored_facts(sent: Sentence, subject: str, day: date) -> list[Found]:
    """Values by their shape in each clause that is not a question and not about the listener's things."""
    out: list[Found] = []
    s = sent.s
    if NOT_REAL.search(s):
        return []
    dates = _date_spans(s, day) + [m.span() for m in QUOTES.finditer(s)]  # neither a date nor a quote is a value
    values = find_values(s)
    for ci, (ca, cb) in enumerate(sent.clauses):
        if is_question(sent, ci, values=True) or NOT_MINE.match(s[ca:cb]) or OTHERS.match(s[ca:cb]):
            continue
        start = ca
        # read over the whole sentence: a clause ends at a colon, and "KR1：" is a label by the colon after it
        for a, b, kind in [v for v in values if ca <= v[0] and v[1] <= cb and not _spoken_amount(v[2], s[v[0]:v[1]])]:
            if a < start:  # joined to the value before ("周一上午十点", "Sundays at 4pm"): read with it
                continue
            handed_on = _GIVEN_AWAY.match(s, b)
            b = a + (typed_extent(s[a:cb]) or b - a)
            # a value that owns what follows ("Thursday's arch review", "Postgres 16's planner") only says which one
            if (_NOT_THE_VALUE.search(s[max(ca, a - 24):a]) or handed_on or _POSSESSIVE.match(s, b) or _GIVEN_AWAY.match(s, b)
                    or any(a < y and x < b for x, y in dates)
                    or (kind == "weekday" and _names_the_day(s[ca:a], day))):
                start = b
                continue
            # a count after a perfective 了 is how often something happened ("今天跑了三次"), not a habit's value; a
            # duration after "for" / 了 is how long something went on ("known them for 4 years"); "100%" is certainty
            if (TENTATIVE.search(s, ca, a) or hedged(sent, a, b) or (kind.startswith("count:") and s[ca:a].rstrip().endswith("了"))
                    or (kind.startswith(("quantity:", "count:")) and _DELTA.search(s[max(ca, a - 24):a]))
                    or (kind == "quantity:duration" and _FOR.search(s[ca:a]))
                    or (kind == "quantity:percent" and s[a:b].strip().startswith("100"))):
                start = b
                continue
            attr = _named(_attribute(s[start:a]), day) or _named(_attribute(s[b:cb], after=True), day)
            if kind in UNNAMED_UNSURE and attr and not has_cjk(attr) and _not_timed(attr, s):
                start = b
                continue
            # an amount naming nothing ("5 years", "3000元") is an amount of what? A spec or a version says what it is of
            # ("那台还是4C8G的", "还是用 Pixel 8"): its type is its slot, and a new one of the type replaces it. A time
            # naming nothing ("下午三点", "周五") is read the same, marked ``unnamed``: only a correction makes it sure.
            if not attr and kind.startswith("quantity:"):
                start = b
                continue
            # a count by a Chinese measure word naming nothing ("目前两台", "刷了八百遍"): 台, 件, 遍 measure, they name no
            # thing ("5 brokers", "3 cats" do, and stay)
            if not attr and kind.startswith("count:") and len(unit := kind.split(":")[-1]) == 1 and has_cjk(unit):
                start = b
                continue
            unnamed = not attr and kind in UNNAMED_UNSURE
            attr = attr or kind.split(":")[-1]
            who = anchored_person(sent, a)
            if who:
                subj = f"{who}的{attr}" if re.search(r"[\u4e00-\u9fff]", who + attr) else f"{who}'s {attr}"
            else:
                subj = attr if subject == "user" else f"{subject}'s {attr}"
            value = sent.orig(a, b)  # a later date before it is its start (the engine reads it for every value)
            out.append(Found(subj, "value", value, (a, b), technical=is_technical(attr, value), anchored=True, unnamed=unnamed))
            start = b
    return out
