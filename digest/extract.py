"""Deterministic bilingual (Chinese + English) fact extraction: patterns only, no model.

``extract_candidates(turns, day)`` reads a day's turns and proposes :class:`Candidate` facts:

* identity   name / role / works_at / lives_in / from           (nature "fact", single-valued)
* taste      likes / dislikes (one candidate per list item), prefers / prefers_not ("Go over Java")
* values     "X 是/改成/升级到 Y", "my X is Y", "X changed to Y"   -> (X, "value", Y), the core of supersession
* plans      plans (event) / decided (fact)
* events     a sentence with a date or a day word, resolved against ``day``  -> event_date
* opinions   thinks;  rules of conduct: rule (axiom)

Who the subject is: first person in a "user" turn is ``"user"``; in an "other" turn (a named participant)
it is the speaker's name, and their "my birthday" becomes "Caroline's birthday" so two participants' values
never supersede each other. Assistant turns never state facts: only their restatements about the user
("你的X是Y", "you seem to prefer X") come out, as "inferred".

Precision over recall: questions, hypotheticals, negations, evaluations ("X is great"), relative clauses and
chat boilerplate ("I'll try it", "明天再聊") produce nothing. Rule families run in a fixed order (identity,
preferences, rules, corrections, decisions, plans, values, opinions) and a later family never reads text an
earlier one already used, so "我的爱好是X" is a preference, not a value.

Matching runs on an NFKC-normalised copy of the text (full-width letters, digits and punctuation become
half-width; curly quotes become straight); every object and subject is cut from the ORIGINAL text through an
index map, so "８Ｃ１６Ｇ" stays as written. Chinese is matched with explicit CJK classes or Unicode ``\\w``.
All patterns are compiled at import, each rule with a few literal keywords checked first (a substring test is
far cheaper than a regex search); nothing here holds mutable state between calls.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from datetime import date, timedelta
from typing import Callable

from kernel.domain import Candidate, Turn

__all__ = ["extract_candidates"]

EVIDENCE_CHARS = 120
CJK = "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\u3040-\u30ff\uac00-\ud7af"
_HAS_CJK = re.compile(f"[{CJK}]")
_HAS_LATIN = re.compile(r"[A-Za-z]")

# predicate -> (nature, multi_valued, base confidence)
_PREDICATES: dict[str, tuple[str, bool, float]] = {
    "name": ("fact", False, 0.9),
    "nickname": ("fact", False, 0.9),
    "role": ("fact", False, 0.9),
    "works_at": ("fact", False, 0.9),
    "lives_in": ("fact", False, 0.9),
    "from": ("fact", False, 0.9),
    "value": ("fact", False, 0.9),
    "likes": ("preference", True, 0.85),
    "dislikes": ("preference", True, 0.85),
    # Multi-valued: "用中文回答" and "Go over Java" are different preferences, neither replaces the other.
    # The rejected side of a comparison is kept as prefers_not, so a later "you seem to prefer Java" meets it.
    "prefers": ("preference", True, 0.85),
    "prefers_not": ("preference", True, 0.85),
    "plans": ("event", True, 0.8),
    "decided": ("fact", True, 0.85),
    "event": ("event", True, 0.8),
    "thinks": ("opinion", True, 0.6),
    "rule": ("axiom", True, 0.9),
}
_CORRECTABLE = {"name", "nickname", "role", "works_at", "lives_in", "from", "value"}  # what a correction turn upgrades
CONF_CORRECTED = 0.95
CONF_INFERRED = 0.6


# ------------------------------------------------------------------------------------------------------------
# Normalisation with an index map back to the original text
# ------------------------------------------------------------------------------------------------------------

_QUOTES = str.maketrans({"\u2018": "'", "\u2019": "'", "\u201c": '"', "\u201d": '"', "\u300c": '"', "\u300d": '"'})


class _Source:
    """A turn's text: ``norm`` for matching, ``orig(a, b)`` to cut the same span out of the original."""

    __slots__ = ("text", "norm", "_idx")

    def __init__(self, text: str):
        self.text = text
        if text.isascii():
            self.norm, self._idx = text, None
            return
        norm = unicodedata.normalize("NFKC", text).translate(_QUOTES)
        if len(norm) == len(text) and all(
            a == b or unicodedata.normalize("NFKC", a).translate(_QUOTES) == b for a, b in zip(text, norm)
        ):
            self.norm, self._idx = norm, None  # one character for one: positions need no map (the usual case)
            return
        parts: list[str] = []
        idx: list[int] = []
        for i, ch in enumerate(text):
            n = ch if ch < "\x80" else unicodedata.normalize("NFKC", ch).translate(_QUOTES)
            parts.append(n)
            idx.extend([i] * len(n))
        self.norm, self._idx = "".join(parts), idx

    def orig(self, a: int, b: int) -> str:
        if a >= b:
            return ""
        if self._idx is None:
            return self.text[a:b]
        return self.text[self._idx[a] : self._idx[b - 1] + 1]


@dataclass
class _Sentence:
    src: _Source
    start: int  # offset of ``s`` inside src.norm
    s: str  # normalised sentence text (terminator included)
    clauses: list[tuple[int, int]]  # comma-separated parts of ``s``
    cjk: bool
    latin: bool  # has ASCII letters (English rules can apply)
    lower: str = ""  # ``s`` lower-cased, for keyword pre-checks

    def __post_init__(self) -> None:
        self.lower = self.s.lower()

    def orig(self, a: int, b: int) -> str:
        return self.src.orig(self.start + a, self.start + b).strip()

    def clause_at(self, pos: int) -> int:
        for i, (a, b) in enumerate(self.clauses):
            if a <= pos < b:
                return i
        return len(self.clauses) - 1


# A sentence ends at 。！？；!?; or a newline (with any closing quotes), at "..." or at ". " (not "v2.1.0").
_SENT_END = re.compile(r"(?:[。!?;\n]+|\.{3,}|\.(?=\s|$))[\"')\]」』》]*")
# Clauses: commas (not "1,000"), colons (not "10:30"), dashes.
_CLAUSE_SPLIT = re.compile(r",(?!\d{3}\b)|(?<!\d):|:(?!\d)|\s+[-–—]+\s+|—+")


def _sentences(src: _Source) -> list[_Sentence]:
    out: list[_Sentence] = []
    norm, pos = src.norm, 0
    bounds = [m.end() for m in _SENT_END.finditer(norm)]
    if not bounds or bounds[-1] < len(norm):
        bounds.append(len(norm))
    for end in bounds:
        a, b = pos, end
        pos = end
        while a < b and norm[a].isspace():
            a += 1
        while b > a and norm[b - 1].isspace():
            b -= 1
        if a >= b or not any(ch.isalnum() for ch in norm[a:b]):
            continue
        s = norm[a:b]
        clauses, c0 = [], 0
        for m in _CLAUSE_SPLIT.finditer(s):
            clauses.append((c0, m.start()))
            c0 = m.end()
        clauses.append((c0, len(s)))
        out.append(_Sentence(src, a, s, clauses, bool(_HAS_CJK.search(s)), bool(_HAS_LATIN.search(s))))
    return out


# ------------------------------------------------------------------------------------------------------------
# Shared vocabulary
# ------------------------------------------------------------------------------------------------------------

_ZH_I = r"(?:我们|咱们|我)"
# Adverbs that may sit between 我 and the verb ("我也很喜欢", "我现在住在"). Never 更 (that is "prefers").
_ZH_ADV = (
    r"(?:也|还是|还|都|很|非常|特别|真的|真心|真|一直|最|挺|蛮|超级|超|就|又|确实|其实|本来|向来|一向|从小就|从小|"
    r"十分|尤其|相当|好|老|平时|平常|现在|目前|如今|越来越|开始|渐渐|已经|依然|仍然|始终|比较|实在|同样|一样|"
    r"可能|大概|也许|或许|好像|似乎|应该)"
)
_EN_I = r"\b(?:I|we)"
_EN_IS = r"\b(?:I|we)(?:\s+|(?='))"  # "I " or "I'm"
_EN_ADV = (
    r"(?:(?:also|really|just|absolutely|still|do|genuinely|quite|truly|always|especially|actually|totally|"
    r"definitely|generally|usually|sincerely|deeply|particularly|personally|now|currently|so|too|kind\s+of|"
    r"sort\s+of|even|certainly|all|both|mostly|simply|probably|maybe|perhaps|possibly)\s+)"
)
_ZH_ROLE = (
    r"工程师|程序员|开发者|开发人员|架构师|设计师|产品经理|项目经理|经理|总监|主管|总裁|董事长|老板|创始人|合伙人|"
    r"学生|大学生|研究生|博士生|硕士生|本科生|高中生|初中生|小学生|留学生|实习生|老师|教师|教授|讲师|医生|护士|"
    r"律师|会计师|会计|分析师|科学家|研究员|作家|记者|编辑|翻译|主播|销售|店长|厨师|司机|警察|演员|歌手|画家|"
    r"摄影师|音乐人|顾问|职员|员工|工人|农民|军人|公务员|自由职业者|创业者|运维|咨询师|社工|志愿者|家庭主妇|"
    r"全职妈妈|全职爸爸|宝妈|博主|运营|策划|数据分析师|CEO|CTO|COO|CFO|HR"
)
_EN_ADV_NO_DO = _EN_ADV.replace("|do|", "|")  # "I will do some exercises": "do" is the verb there
_EN_ROLE = (
    r"engineer|developer|programmer|coder|architect|designer|manager|director|student|teacher|professor|"
    r"lecturer|tutor|doctor|physician|surgeon|nurse|dentist|pharmacist|therapist|counselor|counsellor|"
    r"psychologist|lawyer|attorney|accountant|analyst|scientist|researcher|writer|author|journalist|editor|"
    r"translator|artist|painter|musician|singer|photographer|chef|cook|baker|driver|pilot|officer|soldier|"
    r"veteran|consultant|founder|co-founder|CEO|CTO|CFO|COO|intern|freelancer|entrepreneur|owner|employee|"
    r"worker|clerk|cashier|librarian|mechanic|electrician|plumber|farmer|volunteer|activist|coach|trainer|"
    r"retiree|homemaker|housewife|mom|mother|dad|father|parent|postdoc|undergrad|specialist|technician|"
    r"administrator|secretary|salesperson|marketer|recruiter|streamer|blogger|youtuber|dancer|actor|actress|"
    r"athlete|woman|man"
)
# Words that make a subject or object technical (technical facts expire sooner).
_TECH = re.compile(
    r"\b(?:ports?|servers?|hosts?|hostname|databases?|db|redis|mysql|postgres(?:ql)?|sqlite|mongo(?:db)?|api|urls?|endpoints?|ip|versions?|"
    r"config(?:uration)?|memory|ram|cpu|gpu|vcpu|disk|storage|cluster|nodes?|deploy(?:ment|ed|s)?|framework|(?:programming\s+)?language|library|sdk|"
    r"timeout|tokens?|domain|dns|ssl|tls|docker|kubernetes|k8s|branch|repo(?:sitory)?|build|staging|production|prod|env(?:ironment)?|python|java|"
    r"javascript|typescript|node\.js|rust|golang|linux|ubuntu|os|kernel|bandwidth|latency|qps|cache|proxy|nginx|backend|frontend|schema|index|queue|"
    r"bucket|region|instance|vm|container|image|runtime|compiler|editor|ide|shell|cron|webhook|ci|cd|pipeline|replica|shard|git|http|https|json|"
    r"yaml|cli)\b|端口|服务器|主机|配置|数据库|版本|接口|域名|内存|显存|显卡|硬盘|磁盘|存储|集群|节点|部署|框架|编程语言|语言|缓存|超时|密钥|环境|分支|仓库|系统|带宽|代码|容器|镜像|依赖|编译|线上|后端|前端|实例|机器|网关|中间件|"
    r"队列|\d+\s*[cC]\s*\d+\s*[gG]|\b\d+\s*(?:GB|MB|TB|G|C|核|vCPU|ms)\b|\d+\s*(?:核|G|"
    r"GB)|\b\d{1,3}(?:\.\d{1,3}){3}\b|\bv?\d+\.\d+\.\d+\b|\bv\d+(?:\.\d+)?\b|https?://|localhost",
    re.I,
)
# Subjects whose head (last word) is an attribute of a person or thing: "X 是 Y" then states a value even
# without digits ("my favourite colour is blue", "女儿的名字是小美"; not "The Name of the Wind is great").
_ATTRIBUTE = re.compile(
    r"(?:\b(?:name|email|e-mail|phone|number|address|birthday|age|colou?r|city|hometown|company|employer|school|university|college|major|team|"
    r"manager|boss|budget|deadline|goal|time\s*zone|pet|dog|cat|username|password|account|id|model|brand|size|height|weight|blood\s+type|wife|"
    r"husband|partner|girlfriend|boyfriend|son|daughter|font|salary|rent|title|position|department|office|meeting|flight|room|seat|car|schedule|"
    r"price|cost|rate|score|grade|level|status|location|zip|postcode|website|handle|nickname|alias|favou?rite\s+\w+)\b|名字|名称|昵称|邮箱|电子邮件|电话|手机号?|号码|"
    r"地址|生日|年龄|颜色|城市|家乡|老家|公司|单位|学校|大学|专业|团队|部门|领导|老板|经理|预算|截止日期|期限|目标|时区|宠物|猫|狗|用户名|账号|帐号|密码|型号|品牌|尺码|尺寸|身高|体重|血型|星座|老婆|老公|妻子|丈夫|女朋友|男朋友|对象|儿子|女儿|"
    r"字体|工资|薪水|房租|职位|职称|岗位|会议|航班|房间|座位|车牌|日程|价格|费用|成本|分数|成绩|等级|位置|邮编|网站|学号|工号|时间|日期|地点)\W*$",
    re.I,
)
_PRONOUN_SUBJECTS = frozenset(
    "我 你 您 他 她 它 我们 你们 他们 她们 这 那 这个 那个 这些 那些 这里 那里 谁 "
    "i me you he she it we they him her us them this that these those there here what which who one "
    "my your his our their its glad".split()
)
# Question clauses: Chinese question words anywhere, English interrogatives at the clause start (with a "?").
_ZH_QUESTION = re.compile(r"吗|什么|哪|怎么|怎样|为什么|为何|多少|几点|几号|几个|几岁|是否|是不是|有没有|能不能|可不可以|要不要|会不会|好不好|对不对|呢\s*[?]?\s*$")
_EN_QUESTION_START = re.compile(
    r"^\s*(?:(?:so|and|but|well|oh|hey|also|then|ok|okay|by\s+the\s+way|btw)[,\s]+)?(?:what|which|how|why|where|when|who|whom|whose|do|does|did|are|"
    r"is|am|was|were|can|could|would|will|should|shall|have|has|may|isn't|aren't|don't|doesn't|didn't|won't|wouldn't|any)\b",
    re.I,
)
# A value is never read from a clause that asks something.
_EN_QUESTION_WORD = re.compile(r"\b(?:what|which|how|whether|who)\b", re.I)
# Hypotheticals: nothing in the sentence is a fact.
_HYPOTHETICAL = re.compile(
    r"如果|假如|假设|假使|(?<!主)(?<!只)(?<!就)要是|万一|倘若|若是|哪怕|\bif\b|\bsuppose\b|\bsupposing\b|\bimagine\b|\bin\s+case\b|\bassuming\b|\bwhat\s+if\b",
    re.I,
)
# Hedges turn a statement into an inference.
_HEDGE = re.compile(
    r"可能|大概|也许|或许|好像|似乎|估计|说不定|不确定|不太确定|我猜|应该吧|我觉得|我认为|\b(?:maybe|probably|perhaps|possibly|might|i\s+guess|i\s+think|i\s+believe|i\s+suppose|"
    r"not\s+sure)\b",
    re.I,
)
# A turn that corrects something said before: these mark every value/identity fact of the turn.
_CORRECTION = re.compile(
    r"不对|不是的|^\s*不是\s*[,!。]|更正|纠正|搞错了|说错了|弄错了|记错了|写错了|打错了|应该是|准确地说|确切地说|准确来说|不是\S{1,20}?[,]?\s*而是|\bcorrection\b|\bI\s+meant\b|\bsorry,?\s+(?:it's|"
    r"it\s+is|I\s+meant|that's)|^\s*sorry\b|\bno,?\s+(?:it's|it\s+is|that's)|\bI\s+was\s+wrong\b|\bmy\s+(?:mistake|"
    r"bad)\b|\bscratch\s+that\b|\bI\s+misspoke\b|\bmake\s+that\b|\bit's\s+\S+,?\s+not\b|\bisn't\s+\S+,\s+it's\b",
    re.I,
)
# Weaker markers ("其实我很喜欢…", "Actually, I love music") correct only what follows them in the same sentence.
_CORRECTION_WEAK = re.compile(r"其实|实际上|事实上|\bactually\b|\bin\s+fact\b", re.I)


def _has_any(text: str, keys: tuple[str, ...]) -> bool:
    """Cheap keyword pre-check (substring tests) before an expensive alternation regex runs."""
    for k in keys:
        if k in text:
            return True
    return False


# Every branch of _CORRECTION / _HYPOTHETICAL / _CORRECTION_WEAK contains one of these (lower-cased) keywords.
_CORRECTION_KEYS = (
    "不对", "不是", "更正", "纠正", "错了", "应该是", "准确", "确切", "correction", "meant", "sorry", "no", "wrong",
    "mistake", "my bad", "scratch", "misspoke", "make that", "it's", "isn't",
)
_HYPOTHETICAL_KEYS = (
    "如果", "假如", "假设", "假使", "要是", "万一", "倘若", "若是", "哪怕", "if", "suppos", "imagine", "in case", "assuming",
)
_CORRECTION_WEAK_KEYS = ("其实", "实际上", "事实上", "actually", "in fact")


def _hypothetical(sent: "_Sentence") -> bool:
    return _has_any(sent.lower, _HYPOTHETICAL_KEYS) and bool(_HYPOTHETICAL.search(sent.s))


def _weak_correction(sent: "_Sentence") -> re.Match[str] | None:
    return _CORRECTION_WEAK.search(sent.s) if _has_any(sent.lower, _CORRECTION_WEAK_KEYS) else None


def _technical(*texts: str) -> bool:
    return any(t and _TECH.search(t) for t in texts)


# ------------------------------------------------------------------------------------------------------------
# Cutting and trimming objects (all positions are in the normalised sentence)
# ------------------------------------------------------------------------------------------------------------

_ZH_STOP = re.compile(r"[,;:。!?()\"《]|\.{3}")
# English clause breakers: a conjunction or a new subject ends the object ("jazz, especially bebop").
_EN_BREAK = re.compile(
    r"\s*(?:[;:!?()\"]|\s[-–—]+\s|\s+'cause\b|\.(?:\s|$)|,\s*(?=(?:but|because|'cause|cause|cuz|since|although|though|so|as|when|while|which|who|"
    r"where|especially|particularly|like|such\s+as|including|and\s+(?:I|we|it|he|she|they|you|my|that|this|then|also)|I|we|it|he|she|they|you|my|"
    r"that|this|then|not|which|too|etc)\b)|\s+(?:but|because|since|although|though|so\s+that|when|while|which|who|whenever|especially|particularly|"
    r"as\s+well\s+as|such\s+as|rather\s+than|instead\s+of|over|more\s+than)\b|(?<!\bI)(?<!\bwe)(?<!\byou)(?<!\bthey)\s+like\b|\s+and\s+(?:I|we|it|"
    r"he|she|they|you|my|that|this|then|also)\b)",
    re.I,
)
_EN_COMMA = re.compile(r"\s*,")
_TRIM_LEAD = re.compile(r"[\s,.:;!?~\-了是为着]+")
_TRIM_TAIL = re.compile(
    r"(?:[\s,.:;!?~\-。]|(?<=[" + CJK + r"\w\s])(?:了|啦|呀|啊|哦|喔|吧|呢|嘛|哈|哟|的啦|咯|呐)(?=[\s,.:;!?~。]*$))+$"
)


_CLOSING = {'"': '"', "《": "》", "'": "'"}


def _cut(sent: _Sentence, a: int, b: int, lists: bool = False) -> int:
    """End of the object that starts at ``a``: the clause end (CJK), or the first breaker (English)."""
    s = sent.s
    while a < b and s[a].isspace():
        a += 1
    if a < b and s[a] in _CLOSING:  # a quoted title is one object: "Listen to Mom", 《百年孤独》
        k = s.find(_CLOSING[s[a]], a + 1, b)
        if k > a:
            return k + 1
    if sent.cjk:
        m = _ZH_STOP.search(s, a, b)
        if m:
            b = m.start()
        if not lists or not _HAS_CJK.search(s, a, b):
            m2 = _EN_BREAK.search(s, a, b)
            if m2 and not _HAS_CJK.search(s, a, m2.start()):
                b = m2.start()
        return b
    m = _EN_BREAK.search(s, a, b)
    if m:
        b = m.start()
    if not lists:
        m = _EN_COMMA.search(s, a, b)
        if m:
            b = m.start()
    return b


def _trim(s: str, a: int, b: int) -> tuple[int, int]:
    """Drop edge punctuation, spaces and sentence particles; drop quotes around the whole object or left unpaired."""
    for _ in range(2):
        m = _TRIM_LEAD.match(s, a, b)
        if m:
            a = m.end()
        m = _TRIM_TAIL.search(s[a:b])
        if m:
            b = a + m.start()
        if b - a < 2:
            break
        q = s[a]
        if q in "\"'" and s[b - 1] == q and s.count(q, a, b) == 2:
            a, b = a + 1, b - 1
        elif q in "\"'" and s.count(q, a, b) % 2:
            a += 1
        elif s[b - 1] in "\"'" and s.count(s[b - 1], a, b) % 2:
            b -= 1
        else:
            break
    return a, b


# List items: 、 always; a final 和/及/以及/还有/或 when 、 is there; 和/与/跟 between two short items.
# ("AC/DC、枪与玫瑰等摇滚乐队": 与 inside a 、 list is part of a name, and "等…" closes the list.)
_ZH_LIST_SEP = re.compile(r"、|以及|和|及|还有|或者|或")
_ZH_PAIR_SEP = re.compile(r"和|与|跟")
_ZH_ETC = re.compile(r"等(?:等)?[^、]*$")
_EN_LIST_SEP = re.compile(r"\s*,\s*(?:and\s+|or\s+)?|\s+(?:and|or)\s+", re.I)


# A list inside a prepositional phrase ("在海滩、山脉和湖泊附近拍摄") is one thing, not three.
_ZH_PP_START = re.compile(r"[在和跟与去到用对给为从把向往]")
# An English item that starts with an adverb or a verb of its own ends the list ("..., and often focus on").
_EN_PP_END = re.compile(r"\s(?:near|in|at|on|around|by|from)\s+[\w\-']+$", re.I)
_EN_ITEM_STOP = re.compile(
    r"(?:often|usually|sometimes|always|also|then|still|even|really|just|especially|so|but)\b", re.I
)


def _split_list(sent: _Sentence, a: int, b: int) -> list[tuple[int, int]]:
    s = sent.s
    seg = s[a:b]
    if sent.cjk and _HAS_CJK.search(seg):
        if _ZH_PP_START.match(seg):
            return [(a, b)]
        if "、" in seg:
            etc = _ZH_ETC.search(seg)
            if etc and etc.start() > 0:
                b = a + etc.start()
            seps = list(_ZH_LIST_SEP.finditer(s, a, b))
        else:
            seps = list(_ZH_PAIR_SEP.finditer(s, a, b))
            if len(seps) != 1:
                return [(a, b)]
            left, right = s[a : seps[0].start()], s[seps[0].end() : b]
            if not (1 <= len(left) <= 4 and 1 <= len(right) <= 4 and "的" not in left + right):
                return [(a, b)]
    else:
        # a real list has "and"/"or" before its last item or several commas ("a safe, inviting place" is one thing)
        commas = seg.count(",")
        if not commas:
            return [(a, b)]
        if commas == 1 and not re.search(r"\s(?:and|or)\s", seg[seg.rfind(",") :], re.I):
            return [(a, a + seg.index(","))]
        if _EN_PP_END.search(seg, 0, seg.index(",")):
            return [(a, b)]  # "shooting near beaches, mountains, and lakes": the list belongs to the preposition
        seps = list(_EN_LIST_SEP.finditer(s, a, b))
    spans, p = [], a
    for m in seps:
        if m.start() > p:
            spans.append((p, m.start()))
        p = m.end()
    spans.append((p, b))
    spans = [sp for sp in spans if sp[1] > sp[0]] or [(a, b)]
    if sent.cjk:
        # "晴朗、温暖的天气": adjectives sharing one head noun stay together
        if len(spans) > 1 and "的" in s[spans[-1][0] : spans[-1][1]] and not any("的" in s[x:y] for x, y in spans[:-1]):
            return [(a, b)]
        return spans
    for i, (x, _y) in enumerate(spans[1:], start=1):
        if _EN_ITEM_STOP.match(s, x):
            return spans[:i]
    return spans


def _evidence(sent: _Sentence) -> str:
    return sent.orig(0, len(sent.s))[:EVIDENCE_CHARS]


# ------------------------------------------------------------------------------------------------------------
# Regex rules: identity, preferences, axioms, decisions, plans, opinions
# ------------------------------------------------------------------------------------------------------------


def _indexed(*rules: "_Rule") -> tuple[tuple["_Rule", bool, tuple[str, ...]], ...]:
    """Rules with their language and pre-check keywords, computed once at import (the keywords skip most
    regex searches: a sentence without "喜" or "爱" cannot say 我喜欢)."""
    return tuple((r, r.chinese, tuple(k for k in r.keys.split("|") if k)) for r in rules)


@dataclass(frozen=True)
class _Rule:
    predicate: str
    regex: re.Pattern[str]
    group: str = "obj"
    lists: bool = False  # split "A、B和C" / "A, B and C" into one candidate per item
    keep_tail: bool = False  # object runs to the sentence end (opinions), not the clause end
    check: Callable[[str], bool] | None = None  # extra validation of the (normalised) object
    after_i: bool = False  # a clause with its 我 dropped: an earlier clause of the sentence must start with 我
    keys: str = ""  # "a|b": cheap pre-check, one of these must occur in the (lower-cased) sentence

    @property
    def chinese(self) -> bool:
        """A Chinese rule (its pattern spells CJK words): skipped for sentences without CJK, and vice versa."""
        return bool(_HAS_CJK.search(self.regex.pattern))


def _zh(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern)


def _en(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern, re.I)


_ZH_NAME_BAD = re.compile(r"[了过着在去吃做说想要会能是的把被给让很也都就我你他她它这那啊吧呢吗]")
_EN_NOT_NAMES = frozenset(
    """sorry fine good ok okay back here glad happy ready done not sure so very just also still the a an in at on
    american chinese british english french german japanese korean canadian australian indian italian spanish
    mexican russian christian muslim jewish buddhist catholic asian european african swedish dutch irish
    scottish welsh brazilian thai vietnamese filipino""".split()
)
_ZH_SURNAME = (
    "王李张刘陈杨黄赵吴周徐孙马朱胡郭何高林罗郑梁谢宋唐许韩冯邓曹彭曾肖田董袁潘于蒋蔡余杜叶程苏魏吕丁任沈姚卢姜"
    "崔钟谭陆汪范金石廖贾夏韦付方白邹孟熊秦邱江尹薛闫段雷侯龙史陶黎贺顾毛郝龚邵万钱严覃武戴莫孔向汤欧司上诸"
)
_ZH_FROM_BAD = frozenset("成年 年轻 中年 老年 普通 有钱 外行 内行 局外 当事 过来 明白 好 坏 穷 病 懒 一个 这样 那样".split())


_ZH_PLACE_BAD = re.compile(r"^[这那哪]|想|思考|考虑|换|找|学|做|看|听|写|忙|准备|尝试|努力|寻找|适应|开始|继续|家里的")


def _zh_place_ok(o: str) -> bool:
    """An employer or a place, not a verb phrase after the progressive 在 ("我在思考换工作")."""
    return 1 <= len(o) <= 15 and not _ZH_PLACE_BAD.search(o)


def _zh_name_ok(o: str) -> bool:
    return 1 <= len(o) <= 12 and not _ZH_NAME_BAD.search(o)


def _en_name_ok(o: str) -> bool:
    words = o.split()
    return 1 <= len(words) <= 4 and words[0].lower() not in _EN_NOT_NAMES and words[0].lower() not in _PRONOUN_SUBJECTS


def _zh_greeting_name_ok(o: str) -> bool:
    return 2 <= len(o) <= 3 and (o[0] in _ZH_SURNAME or o[0] in "小老阿") and not _ZH_NAME_BAD.search(o)


def _short(limit: int) -> Callable[[str], bool]:
    return lambda o: len(o) <= limit


# Clauses that start with 我 (after a discourse word), or with someone else.
_CLAUSE_I = re.compile(r"\s*(?:(?:其实|而且|但是|不过|所以|另外|平时|现在|最近|目前|嗯|对|是的)[,\s]*)?(?:我们|我)")
_CLAUSE_OTHER = re.compile(r"\s*(?:你|您|他|她|它|大家|别人|朋友|家人|[A-Za-z])")


def _inherits_i(sent: "_Sentence", pos: int) -> bool:
    """"我是工程师，在腾讯工作，住在深圳": walk back over subjectless clauses to one that starts with 我."""
    for j in range(sent.clause_at(pos) - 1, -1, -1):
        a, b = sent.clauses[j]
        if _CLAUSE_I.match(sent.s, a, b):
            return True
        if _CLAUSE_OTHER.match(sent.s, a, b):
            return False
    return False


_IDENTITY = _indexed(
    # 我叫X / 我的名字是X / 叫我X: a short name, not "我叫了外卖".
    _Rule("name", _zh(r"我(?:的名字|的姓名|名字)(?:应该|其实|实际上|现在)?(?:是|叫)\s*(?P<obj>.+)"), check=_zh_name_ok, keys="名字|姓名"),
    _Rule(
        "name",
        _zh(r"我(?:也|就|现在)?叫(?!了|过|着|他|她|你|它|人|车|外卖|醒|起|住|来|去|上|出|做|什么)\s*(?P<obj>.+)"),
        check=_zh_name_ok,
        keys="叫",
    ),
    # 叫我X is what to call them (a nickname), not a new name: it never supersedes 我叫张志强.
    _Rule(
        "nickname",
        _zh(r"(?:(?:你|您|大家)(?:也)?(?:可以|就|都)?|(?:^|(?<=[,\s])))叫我\s*(?P<obj>.+)"),
        check=_zh_name_ok,
        keys="叫我",
    ),
    # "你好，我是小琳": only a bare 2-3 character name after a greeting, starting with a surname or 小/老/阿.
    _Rule(
        "name",
        _zh(r"^(?:你好|您好|大家好|嗨|哈喽|hi|hello)[^,]{0,6},\s*我是(?P<obj>[" + CJK + r"]{2,3})\s*(?:[,。!]|$)"),
        check=_zh_greeting_name_ok,
        keys="我是",
    ),
    # "my name is Emily": first word anything, then only capitalised words.
    _Rule(
        "name",
        re.compile(
            r"(?i:\bmy\s+(?:first\s+|full\s+)?name\s+is|\bmy\s+name's|\bI(?:'m|\s+am)\s+called)\s+"
            r"(?P<obj>[^\s,.;!?\"]+(?:\s+[A-Z][\w'\-]*){0,3})"
        ),
        check=_en_name_ok,
        keys="name|called",
    ),
    # "call me Em": what to call them, a nickname that never supersedes the name.
    _Rule(
        "nickname",
        re.compile(r"(?i:\bcall\s+me)\s+(?P<obj>[^\s,.;!?\"]+(?:\s+[A-Z][\w'\-]*){0,2})"),
        check=_en_name_ok,
        keys="call me",
    ),
    # "I'm Emily" (case-sensitive: a capitalised name right after, then the clause ends).
    _Rule(
        "name",
        re.compile(r"\b(?:I'm|I\s+am|i'm)\s+(?P<obj>[A-Z][a-z][\w'\-]*(?:[ \-][A-Z][\w'\-]*){0,2})(?=\s*(?:[,.!;?]|$)|\s+(?:and|from|here)\b)"),
        check=_en_name_ok,
        keys="i'm|i am",
    ),
    # 我是(一名)X工程师: a role noun ends the clause.
    _Rule(
        "role",
        _zh(rf"{_ZH_I}{_ZH_ADV}{{0,3}}是(?:一名|一位|一个|一|名|个)?(?P<obj>[^,;:!?。]{{0,16}}?(?:{_ZH_ROLE}))(?=\s*(?:$|[,;:!?。]|了|啦|呀|哦|呢))"),
        keys="是",
    ),
    # 我的工作/职业是X.
    _Rule("role", _zh(r"我的(?:工作|职业|职位|身份)是(?:一名|一位|一个|一|名|个)?(?P<obj>.+)"), check=_short(20), keys="我的"),
    # 我在X当/做/担任Y (role) and 我在X工作 (works_at) below.
    _Rule(
        "role",
        _zh(rf"我{_ZH_ADV}{{0,3}}在[^,;:!?。]{{1,20}}?(?:当|做|担任|任)(?:一名|一位|一个|一|名|个)?(?P<obj>[^,;:!?。]{{0,12}}?(?:{_ZH_ROLE}))"),
        keys="在",
    ),
    # "I am a software engineer", "I'm also a teacher": needs a role noun.
    _Rule(
        "role",
        _en(rf"\bI(?:'m|\s+am)\s+{_EN_ADV}{{0,3}}(?:a|an)\s+(?P<obj>(?:[\w\-]+\s+){{0,3}}?(?:{_EN_ROLE})s?)\b"),
        keys="i'm|i am",
    ),
    # "I work as a nurse".
    _Rule(
        "role",
        _en(
            rf"\bI\s+{_EN_ADV}{{0,2}}(?:work|am\s+working|'m\s+working)\s+as\s+(?:a\s+|an\s+|the\s+)?"
            rf"(?P<obj>[\w\- ]{{1,40}}?)(?=\s+(?:at|for|in|with)\b|\s*[,.;!?]|$)"
        ),
        keys="work",
    ),
    _Rule(
        "role",
        _en(rf"\bmy\s+(?:job|profession|occupation)\s+is\s+(?:a|an)\s+(?P<obj>.+)"),
        check=_short(40),
        keys="my job|my prof|my occup",
    ),
    # 我在X工作/上班/实习.
    _Rule(
        "works_at",
        _zh(rf"我{_ZH_ADV}{{0,3}}在(?P<obj>[^,;:!?。]{{1,20}}?)(?:工作|上班|实习|任职|就职|打工)(?![\u4e00-\u9fff])"),
        check=_zh_place_ok,
        keys="在",
    ),
    _Rule(
        "works_at",
        _zh(rf"我{_ZH_ADV}{{0,3}}在(?P<obj>[^,;:!?。]{{1,20}}?)(?:当|做|担任)(?:一名|一位|一个|一|名|个)?[^,;:!?。]{{0,12}}?(?:{_ZH_ROLE})"),
        check=_zh_place_ok,
        keys="在",
    ),
    # "我是工程师，在腾讯工作，住在深圳": Chinese drops the repeated 我 after a comma.
    _Rule(
        "works_at",
        _zh(rf"(?<=,)\s*{_ZH_ADV}{{0,3}}在(?P<obj>[^,;:!?。]{{1,20}}?)(?:工作|上班|实习|任职|就职)(?![\u4e00-\u9fff])"),
        after_i=True,
        check=_zh_place_ok,
        keys="在",
    ),
    _Rule(
        "lives_in",
        _zh(rf"(?<=,)\s*{_ZH_ADV}{{0,3}}(?:住在|居住在|生活在|定居在|家住|家在)(?P<obj>[^,;:!?。]{{1,25}})"),
        after_i=True,
        keys="住|家",
    ),
    # "我叫林晓，是一名后端工程师", "base 在杭州": the same dropped 我 before a role or a base city.
    _Rule(
        "role",
        _zh(rf"(?<=,)\s*{_ZH_ADV}{{0,3}}是(?:一名|一位|一个|一|名|个)?(?P<obj>[^,;:!?。]{{0,16}}?(?:{_ZH_ROLE}))(?=\s*(?:$|[,;:!?。]|了|啦|呀|哦|呢))"),
        after_i=True,
        keys="是",
    ),
    _Rule(
        "lives_in",
        _zh(r"(?:^|(?<=,))\s*(?:我)?(?:人)?(?:base|Base|BASE|常驻|驻扎)\s*在(?P<obj>[^,;:!?。\s]{1,15})"),
        check=_zh_place_ok,
        keys="base|常驻|驻扎",
    ),
    _Rule("works_at", _zh(rf"我{_ZH_ADV}{{0,3}}(?:就职于|任职于|供职于)(?P<obj>.+)"), keys="于"),
    # "I work at/for X", "I'm a student at MIT", "I'm employed by X".
    _Rule(
        "works_at",
        _en(rf"\bI\s+{_EN_ADV}{{0,2}}(?:work|am\s+working|'m\s+working)\s+(?:as\s+[\w\- ]{{1,40}}?\s+)?(?:at|for)\s+(?P<obj>.+)"),
        check=_short(50),
        keys="work",
    ),
    _Rule(
        "works_at",
        _en(rf"\bI(?:'m|\s+am)\s+{_EN_ADV}{{0,2}}(?:a|an)\s+(?:[\w\-]+\s+){{0,3}}?(?:{_EN_ROLE})\s+(?:at|with)\s+(?P<obj>.+)"),
        check=_short(50),
        keys=" at | with ",
    ),
    _Rule(
        "works_at",
        _en(r"\bI(?:'m|\s+am)\s+employed\s+(?:at|by)\s+(?P<obj>.+)"),
        check=_short(50),
        keys="employed",
    ),
    # 我住在X / I live in X.
    _Rule(
        "lives_in",
        _zh(rf"{_ZH_I}{_ZH_ADV}{{0,3}}(?:住在|居住在|生活在|定居在|家住|家在)(?P<obj>.+)"),
        check=_short(25),
        keys="住|家|生活|居",
    ),
    _Rule(
        "lives_in",
        _en(rf"{_EN_IS}{_EN_ADV}{{0,3}}(?:live|am\s+living|'m\s+living|'re\s+living|reside|am\s+based|'m\s+based)\s+(?:in|at|near)\s+(?P<obj>.+)"),
        check=_short(50),
        keys="live|reside|based",
    ),
    # 我来自X / 我是X人 / 老家在X / I'm from X.
    _Rule("from", _zh(rf"{_ZH_I}{_ZH_ADV}{{0,3}}(?:来自|出生在|出生于|生在)(?P<obj>.+)"), check=_short(25), keys="来自|出生|生在"),
    _Rule(
        "from",
        _zh(rf"我{_ZH_ADV}{{0,2}}是(?P<obj>[{CJK}]{{2,6}}?)人(?=\s*(?:$|[,;:!?。]|啊|呀|哦))"),
        check=lambda o: o not in _ZH_FROM_BAD,
        keys="人",
    ),
    _Rule("from", _zh(r"我的?(?:老家|家乡)(?:是|在)(?P<obj>.+)"), check=_short(25), keys="老家|家乡"),
    _Rule(
        "from",
        _en(rf"\bI(?:'m|\s+am)\s+{_EN_ADV}{{0,2}}(?:originally\s+)?from\s+(?P<obj>.+)"),
        check=_short(50),
        keys="from",
    ),
    _Rule(
        "from",
        _en(
            r"\bI\s+(?:originally\s+)?come\s+from\s+(?P<obj>.+)|\bI\s+was\s+born\s+(?:and\s+raised\s+)?in\s+(?P<obj2>.+)|\bmy\s+hometown\s+is\s+"
            r"(?P<obj3>.+)"
        ),
        check=_short(50),
        keys="come|born|hometown",
    ),
)

_PREF_BAD_START = re.compile(
    r"^(?:你|您|他|她|它|这|那|上你|听你|和你|跟你|与你|看你|and\b|or\b|but\b|you\b|your\b|their\b|his\b|its\b|(?:to|so|too)$|it\b|it's\b|that\b|this\b|these\b|"
    r"those\b|them\b|him\b|her\b|how\b|what\b|when\b|the\s+way\b|the\s+idea\b|to\s+hear\b|hearing\s+from\b|chatting\b|talking\s+to\b)",
    re.I,
)


def _pref_ok(o: str) -> bool:
    return 1 <= len(o) <= 60 and not _PREF_BAD_START.search(o) and not re.search(r"\byou(?:r)?\b|你|您", o, re.I)


_PREFERENCES = _indexed(
    # 我最喜欢的X是Y / 我的爱好是Y / my favourite X is Y / my hobbies are Y: the value is the liked thing.
    _Rule(
        "likes",
        _zh(rf"我{_ZH_ADV}{{0,2}}(?:最喜欢|最爱|喜欢|喜爱)的[^,;:!?。是]{{0,10}}是(?P<obj>.+)"),
        lists=True,
        check=_pref_ok,
        keys="的",
    ),
    _Rule("likes", _zh(r"我的(?:兴趣)?爱好(?:是|有|包括)(?P<obj>.+)"), lists=True, check=_pref_ok, keys="爱好"),
    _Rule(
        "likes",
        _en(r"\bmy\s+(?:absolute\s+)?(?:favou?rite|fav)\s+(?:[\w\-]+\s+){0,3}?(?:is|are|would\s+be|has\s+to\s+be)\s+(?P<obj>.+)"),
        lists=True,
        check=_pref_ok,
        keys="fav",
    ),
    _Rule(
        "likes",
        _en(r"\bmy\s+hobb(?:y|ies)\s+(?:is|are|include|includes)\s+(?P<obj>.+)"),
        lists=True,
        check=_pref_ok,
        keys="hobb",
    ),
    # Dislikes before likes: 我不(太)喜欢X / 讨厌X / I don't like X / I hate X.
    _Rule(
        "dislikes",
        _zh(rf"{_ZH_I}{_ZH_ADV}{{0,3}}(?:一点也不|一点都不|并不|不太|不怎么|不是很|不是太|不大|不)(?:喜欢|爱|喜爱)(?!的)(?P<obj>.+)"),
        lists=True,
        check=_pref_ok,
        keys="不",
    ),
    _Rule(
        "dislikes",
        _zh(rf"{_ZH_I}{_ZH_ADV}{{0,3}}(?:讨厌|厌恶|反感|受不了|忍受不了)(?P<obj>.+)"),
        lists=True,
        check=_pref_ok,
        keys="讨厌|厌恶|反感|受不了",
    ),
    _Rule(
        "dislikes",
        _zh(rf"{_ZH_I}{_ZH_ADV}{{0,2}}对(?P<obj>[^,;:!?。]{{1,30}}?)(?:一点也|一点都|并|都|也)?(?:不(?:太|怎么)?感兴趣|没(?:有|什么)?兴趣)"),
        keys="兴趣",
    ),
    _Rule(
        "dislikes",
        _en(
            rf"{_EN_IS}{_EN_ADV}{{0,2}}(?:don't|do\s+not|didn't|did\s+not|no\s+longer|can't|cannot)\s+{_EN_ADV}{{0,2}}(?:like|love|enjoy|stand)\s+"
            rf"(?P<obj>.+)"
        ),
        lists=True,
        check=_pref_ok,
        keys="n't|not|no longer|cannot",
    ),
    _Rule(
        "dislikes",
        _en(rf"{_EN_IS}{_EN_ADV}{{0,3}}(?:dislike|hate|detest|loathe)\s+(?P<obj>.+)"),
        lists=True,
        check=_pref_ok,
        keys="dislike|hate|detest|loathe",
    ),
    _Rule(
        "dislikes",
        _en(r"\bI(?:'m|\s+am)\s+not\s+(?:a\s+(?:big\s+|huge\s+)?fan\s+of|into|interested\s+in)\s+(?P<obj>.+)"),
        lists=True,
        check=_pref_ok,
        keys="not",
    ),
    # Prefers (single-valued): 我更喜欢/偏好/倾向于X, 以后都用X, 请用X / I prefer X, please always use X.
    _Rule(
        "prefers",
        _zh(rf"{_ZH_I}{_ZH_ADV}{{0,3}}(?:更喜欢|更爱|更偏爱|更偏好|更偏向|偏好|偏爱|偏向|更倾向于|更倾向|倾向于|更愿意|宁愿|宁可)(?:用|使用|采用)?(?P<obj>.+)"),
        check=_pref_ok,
        keys="更|偏|倾向|宁",
    ),
    _Rule(
        "prefers",
        _zh(
            r"(?:以后|今后|往后|之后|从现在起|从今以后)[,\s]*(?:请|你)?(?:都|就|一律|统一|一直|全部)?(?:用|使用|采用|改用)"
            r"(?P<obj>[^,;:!?。]+?)(?:来|去)?(?:回答|回复|交流|沟通|写|编写)?(?=[,;:!?。]|$)"
        ),
        check=_pref_ok,
        keys="用",
    ),
    _Rule(
        "prefers",
        _zh(r"请(?:你|您)?(?:以后)?(?:总是|始终|一直|都|务必|统一|一律)?(?:用|使用|采用)(?P<obj>[^,;:!?。]+?)(?:来|去)?(?:回答|回复|交流|沟通|写|编写|和我说话|跟我说话|回答我|回复我)?(?=[,;:!?。]|$)"),
        check=_pref_ok,
        keys="请",
    ),
    _Rule(
        "prefers",
        _en(rf"{_EN_I}(?:\s+{_EN_ADV}{{0,3}}|'d\s+|\s+would\s+)(?:prefer|rather)\s+(?P<obj>.+)"),
        check=_pref_ok,
        keys="prefer|rather",
    ),
    _Rule(
        "prefers",
        _en(
            r"\b(?:please\s+(?:always\s+|only\s+)?|from\s+now\s+on,?\s+(?:please\s+)?(?:always\s+)?|"
            r"going\s+forward,?\s+(?:please\s+)?(?:always\s+)?)(?:use|reply\s+in|answer\s+in|respond\s+in|write\s+in|stick\s+(?:to|with))\s+"
            r"(?P<obj>.+)"
        ),
        check=_pref_ok,
        keys="use|reply|answer|respond|write|stick",
    ),
    # Likes: 我(也很)喜欢/爱/热爱X, 我对X很感兴趣 / I (really) like/love/enjoy X, I'm into X.
    _Rule(
        "likes",
        _zh(rf"{_ZH_I}{_ZH_ADV}{{0,3}}(?:热爱|喜爱|喜欢|爱)(?!好|人|心|情|护|戴|国|的)(?:上了|上)?(?P<obj>.+)"),
        lists=True,
        check=_pref_ok,
        keys="爱|喜",
    ),
    # "我喜欢猫，也喜欢狗" / "…，还讨厌葱": the repeated 我 is dropped after a comma.
    _Rule(
        "likes",
        _zh(rf"(?<=,)\s*(?:有时候|平时|偶尔)?(?:也|还|又){_ZH_ADV}{{0,2}}(?:热爱|喜爱|喜欢)(?!的)(?P<obj>.+)"),
        lists=True,
        check=_pref_ok,
        after_i=True,
        keys="喜|爱",
    ),
    _Rule(
        "dislikes",
        _zh(rf"(?<=,)\s*(?:也|还|又){_ZH_ADV}{{0,2}}(?:讨厌|不喜欢|不太喜欢|受不了)(?P<obj>.+)"),
        lists=True,
        check=_pref_ok,
        after_i=True,
        keys="讨厌|不|受不了",
    ),
    _Rule(
        "likes",
        _zh(rf"{_ZH_I}{_ZH_ADV}{{0,2}}对(?P<obj>[^,;:!?。]{{1,30}}?)(?:很|非常|特别|比较|挺|十分|也|都|还|更|一直|超级|蛮|越来越|开始|有点|有些)*(?:感兴趣|有兴趣|着迷|痴迷|充满热情|很有热情)"),
        keys="对",
    ),
    _Rule(
        "likes",
        _en(rf"{_EN_IS}{_EN_ADV}{{0,3}}(?:like|love|enjoy|adore)\s+(?:to\s+)?(?P<obj>.+)"),
        lists=True,
        check=_pref_ok,
        keys="like|love|enjoy|adore",
    ),
    _Rule(
        "likes",
        _en(
            rf"\bI(?:'m|\s+am)\s+{_EN_ADV}{{0,2}}(?:a\s+(?:big\s+|huge\s+|great\s+)?fan\s+of|into|interested\s+in|passionate\s+about|"
            rf"obsessed\s+with|fond\s+of)\s+(?P<obj>.+)"
        ),
        lists=True,
        check=_pref_ok,
        keys="fan|into|interest|passion|obsess|fond",
    ),
    _Rule(
        "likes",
        _en(rf"{_EN_IS}{_EN_ADV}{{0,2}}(?:have|'ve\s+got)\s+a\s+(?:real\s+|great\s+|deep\s+|strong\s+)?(?:passion|love)\s+for\s+(?P<obj>.+)"),
        lists=True,
        check=_pref_ok,
        keys="passion|love for",
    ),
)

_RULES_AXIOM = _indexed(
    # 原则/规则是X: the rule text follows the marker.
    _Rule("rule", _zh(r"(?:原则|规则|铁律|规矩|守则)(?:就)?(?:是|:)\s*(?P<obj>.+)"), check=_short(80), keys="原则|规则|铁律|规矩|守则"),
    # 永远不要在周五发布 / 必须始终X: the rule is the marker plus its clause.
    _Rule(
        "rule",
        _zh(r"(?P<obj>(?:永远不要|永远别|永远不能|绝不|绝对不要|绝对不能|千万不要|千万别|必须始终|必须总是|必须永远|始终要|任何时候都(?:要|不要|不能)|一律不|禁止)[^,;:!?。]+)"),
        keys="永远|绝|千万|必须|始终|任何时候|一律|禁止",
    ),
    # "rule of thumb: ...", "our rule is ...".
    _Rule(
        "rule",
        _en(r"\b(?:rule|principle|policy)(?:\s+of\s+thumb)?\s*(?:is|:)\s*(?:that\s+|to\s+)?(?P<obj>.+)"),
        check=_short(80),
        keys="rule|principle|policy",
    ),
    # Imperative always/never at a clause start ("Never deploy on Fridays"), or "we should always X".
    _Rule(
        "rule",
        _en(
            r"(?:^|(?<=[,;:]))\s*(?:(?:please|so|and|also|remember(?:\s+to)?|as\s+a\s+rule)[,:]?\s+)*"
            r"(?P<obj>(?:always|never)\s+(?!(?:been|had|was|were|did|mind|ever|thought|knew|saw|here|there|up|good|great|happy|glad|nice|fun|so|too|"
            r"a|an|the|my|your|calm|ready|welcome|fine|easy|hard|able|sure|say\s+never|on|in|at|for|with|have|has|do|does|will|would|could|can|again|before)\b)(?!\w+(?:ed|ing)\b)\w+[^,;:]*)"
        ),
        keys="always|never",
    ),
    _Rule(
        "rule",
        _en(r"\b(?:we|you|one|everyone|the\s+team)\s+(?:should|must|have\s+to|need\s+to)\s+(?P<obj>(?:always|never)\s+\w+[^,;:]*)"),
        keys="always|never",
    ),
)


# Plans that say nothing about the person: about the chat or the assistant, or "try them", "check those out".
_BOILERPLATE_PLAN = re.compile(
    "|".join(
        [
            r"你的建议|您的建议|你说的|尽力|试试看$|^看看$|^聊|再聊|聊天|和你聊|跟你聊",
            r"\byour\s+(?:advice|suggestions?|recommendations?|help|words)\b|\b(?:do|try)\s+my\s+best\b|^my\s+best\b",
            r"^(?:take\s+a\s+look|think\s+about\s+it|keep\s+(?:that|it)\s+in\s+mind|do\s+(?:that|it|so)|try\s+(?:that|it)|see|go)$",
            r"^(?:have\s+to\s+)?give\s+it\s+a\s+(?:try|shot|go)\b|^keep\s+(?:you|ya|that|this|it)\b|^let\s+you\s+know\b",
            r"\bto\s+my\s+list\b|^be\b|^(?:I|you)\b|\bchat\b|\btalk\s+to\s+you\b|^miss\s+you$",
            r"^(?:\w+\s+){0,2}(?:it|them|that|this|those|these|one)(?:\s+(?:out|carefully|again|up|seriously))?$",
        ]
    ),
    re.I,
)


def _not_boilerplate(o: str) -> bool:
    """Plans like "take a look" or "consider your advice" say nothing about the person."""
    return 2 <= len(o) <= 80 and not _BOILERPLATE_PLAN.search(o)


_DECISIONS = _indexed(
    # 我们决定(采用)X / 决定采用X / 定了用X (not 没决定).
    _Rule(
        "decided",
        _zh(rf"{_ZH_I}{_ZH_ADV}{{0,2}}(?:最终|最后|已经|一致)?(?:决定了?|定了|选定了?|敲定了?)(?:要|去)?(?:采用|使用|选用|选择|改用|用)?(?P<obj>.+)"),
        check=_not_boilerplate,
        keys="决定|定了|选定|敲定",
    ),
    _Rule(
        "decided",
        _zh(r"(?<!没)(?<!未)(?<!不)(?:最终|最后)?(?:决定|定了|敲定)(?:采用|使用|选用|改用|用)(?P<obj>.+)"),
        check=_not_boilerplate,
        keys="决定|定了|敲定",
    ),
    # "we decided to (use) X", "we'll go with X", "let's go with X", "we settled on X".
    _Rule(
        "decided",
        _en(
            r"\b(?:we|I)(?:\s+|(?='))(?:have\s+|'ve\s+|finally\s+|just\s+|already\s+|all\s+|eventually\s+)*decided\s+(?:to\s+(?:use\s+|adopt\s+|"
            r"go\s+with\s+)?|on\s+(?:using\s+)?|that\s+)(?P<obj>.+)"
        ),
        check=_not_boilerplate,
        keys="decided",
    ),
    _Rule(
        "decided",
        _en(
            r"\b(?:(?:we|I)(?:'ll|\s+will|'re\s+going\s+to|\s+are\s+going\s+to|\s+am\s+going\s+to|'m\s+going\s+to)\s+go|(?:we|I)(?:'re|\s+are|"
            r"'m|\s+am)\s+going|let's\s+go)\s+with\s+(?P<obj>.+)"
        ),
        check=_not_boilerplate,
        keys="with",
    ),
    _Rule(
        "decided",
        _en(
            r"\b(?:we(?:\s+|(?='))(?:have\s+|'ve\s+|finally\s+)*(?:chose|picked(?!\s+up))|(?:we|I)(?:\s+|(?='))(?:have\s+|'ve\s+|"
            r"finally\s+)*(?:settled\s+on|opted\s+for))\s+(?P<obj>.+)"
        ),
        check=_not_boilerplate,
        keys="settled|chose|picked|opted",
    ),
)

# Future time words that make "我明天要X" a plan (过去的"今天我去了" is not).
_ZH_FUTURE = (
    r"(?:明天|后天|大后天|下周[一二三四五六日天末]?|下星期[一二三四五六日天]?|下礼拜[一二三四五六日天]?|下个?月|明年|今晚|"
    r"今天晚上|这周末|周末|下周末|过几天|过两天|改天|以后|将来|待会儿?|等会儿?|一会儿|马上|月底|年底|"
    r"今天(?=要|会|打算|准备|计划))"
)
_PLANS = _indexed(
    # 我打算/计划/准备/将要X.
    _Rule(
        "plans",
        _zh(rf"{_ZH_I}{_ZH_ADV}{{0,3}}(?:{_ZH_FUTURE})?(?:正在|正)?(?:打算|计划|准备|规划|将要|即将|预计)(?:要)?(?P<obj>.+)"),
        check=_not_boilerplate,
        keys="打算|计划|准备|规划|将要|即将|预计",
    ),
    # 我下周要/明天会X and 下周我要X.
    _Rule(
        "plans",
        _zh(rf"{_ZH_I}{_ZH_ADV}{{0,2}}{_ZH_FUTURE}{_ZH_ADV}{{0,2}}(?:要|会|将|得|想)?(?P<obj>.+)"),
        check=_not_boilerplate,
        keys="我",
    ),
    _Rule(
        "plans",
        _zh(rf"{_ZH_FUTURE}[,\s]*{_ZH_I}{_ZH_ADV}{{0,2}}(?:要|会|将|打算|准备|计划|得)(?P<obj>.+)"),
        check=_not_boilerplate,
        keys="我",
    ),
    _Rule("plans", _zh(r"我的?(?:计划|打算)(?:是|就是)(?P<obj>.+)"), check=_not_boilerplate, keys="计划|打算"),
    # "I plan to", "I'm going to", "I will", "my plan is to".
    _Rule(
        "plans",
        _en(
            rf"{_EN_IS}{_EN_ADV}{{0,2}}(?:am\s+|'m\s+|are\s+|'re\s+)?{_EN_ADV}{{0,2}}(?:(?:planning|plan|going|intend|intending|about|hoping|"
            rf"hope)\s+to|gonna)\s+(?!(?:the|a|an|my|our|his|her|their|some)\b)(?P<obj>.+)"
        ),
        check=_not_boilerplate,
        keys="plan|going|intend|about|hop|gonna",
    ),
    # "I'm going to the dentist next Tuesday": a place, so the object keeps "going to".
    _Rule(
        "plans",
        _en(
            rf"{_EN_IS}{_EN_ADV}{{0,2}}(?:am\s+|'m\s+|are\s+|'re\s+){_EN_ADV}{{0,2}}(?P<obj>going\s+to\s+(?:the|a|an|my|our|his|her|their|some)\b.+)"
        ),
        check=_not_boilerplate,
        keys="going",
    ),
    _Rule(
        "plans",
        re.compile(
            rf"(?i:{_EN_I})(?:'ll|(?i:\s+will|\s+shall))\s+(?!(?i:be\s+(?:able|happy|glad|sure|fine|ok|okay)|never|always|"
            rf"not)\b)(?i:{_EN_ADV_NO_DO}{{0,2}})(?P<obj>.+)"
        ),
        check=_not_boilerplate,
        keys="'ll|will|shall",
    ),
    _Rule("plans", _en(r"\bmy\s+plan\s+is\s+(?:to\s+)?(?P<obj>.+)"), check=_not_boilerplate, keys="my plan"),
)

# Only when the sentence names a future date: "12月5日我要去参加婚礼", "I'm visiting my parents tomorrow".
_FUTURE_PLANS = _indexed(
    _Rule("plans", _zh(rf"{_ZH_I}{_ZH_ADV}{{0,2}}(?:要|会|将|得|想)(?P<obj>.+)"), check=_not_boilerplate, keys="我"),
    _Rule(
        "plans",
        _en(
            rf"{_EN_IS}(?:am\s+|'m\s+|are\s+|'re\s+|have\s+to\s+|need\s+to\s+|want\s+to\s+)"
            rf"(?P<obj>(?:\w+ing\b|go\b|visit\b|see\b|fly\b|meet\b|start\b).*)"
        ),
        check=_not_boilerplate,
        keys="'m|am|are|'re|have to|need to|want to",
    ),
)


_OPINION_BAD = re.compile(r"(?:(?:so|not|it|that|yes|no|so\s+too|这样|是的|对|也是)\W*$|你|您|you\b|you're\b)", re.I)


def _opinion_ok(o: str) -> bool:
    """Not "I think so" and not "我觉得你说得对" (agreeing with the assistant is no opinion of substance)."""
    return len(o) >= 2 and not _OPINION_BAD.match(o)


# Opinion markers count only at the start of a clause ("我认为很重要的项目" inside a clause is not an opinion).
_CLAUSE_START_ZH = r"(?:^|(?<=[,:]))\s*(?:(?:但是|不过|所以|而且|其实|可是|因此|嗯|好的|对|是的|说实话|老实说|总之)[,\s]*)?"
_CLAUSE_START_EN = (
    r"(?:^|(?<=[,:;]))\s*(?:(?:but|and|so|well|honestly|actually|also|yes|yeah|"
    r"oh|um|still|however|overall|anyway)[,\s]+)*"
)

_OPINIONS = _indexed(
    # 我觉得/我认为/我相信/在我看来X.
    _Rule(
        "thinks",
        _zh(rf"{_CLAUSE_START_ZH}我{_ZH_ADV}{{0,2}}(?:个人)?(?:觉得|认为)(?P<obj>.+)"),
        keep_tail=True,
        check=_opinion_ok,
        keys="觉得|认为",
    ),
    _Rule(
        "thinks",
        _zh(r"(?:在我看来|依我看|我的看法是|我的观点是)[,\s]*(?P<obj>.+)"),
        keep_tail=True,
        check=_opinion_ok,
        keys="看来|依我看|看法|观点",
    ),
    # "I think X", "I believe X", "in my opinion X".
    _Rule(
        "thinks",
        _en(rf"{_CLAUSE_START_EN}I\s+{_EN_ADV}{{0,2}}(?:think|believe|feel\s+that|reckon)\b(?!\s+(?:about|of|so|in)\b)\s*(?:that\s+)?(?P<obj>.+)"),
        keep_tail=True,
        check=_opinion_ok,
        keys="think|believe|feel|reckon",
    ),
    _Rule(
        "thinks",
        _en(r"\b(?:in\s+my\s+(?:opinion|view)|personally)\s*,\s*(?P<obj>.+)"),
        keep_tail=True,
        check=_opinion_ok,
        keys="opinion|view|personally",
    ),
)

# Assistant restatements about the user: "看起来你更喜欢X", "you seem to prefer X", "it sounds like you love X".
_ASSISTANT_PREFS = _indexed(
    _Rule(
        "prefers",
        _zh(rf"(?:看起来|看来|似乎|好像|听起来|感觉)[,\s]*(?:你|您){_ZH_ADV}{{0,2}}(?:更喜欢|更偏爱|更偏好|偏好|偏爱|更倾向于|倾向于)(?:用|使用|采用)?(?P<obj>.+)"),
        check=_pref_ok,
        keys="你|您",
    ),
    _Rule(
        "likes",
        _zh(rf"(?:看起来|看来|似乎|好像|听起来|感觉)[,\s]*(?:你|您){_ZH_ADV}{{0,2}}(?:热爱|喜爱|喜欢|爱)(?!的)(?P<obj>.+)"),
        lists=True,
        check=_pref_ok,
        keys="你|您",
    ),
    _Rule(
        "likes",
        _zh(rf"(?:看起来|看来|似乎|好像|听起来|感觉)[,\s]*(?:你|您){_ZH_ADV}{{0,2}}对(?P<obj>[^,;:!?。]{{1,30}}?)(?:很|非常|特别|挺|十分)*(?:感兴趣|有兴趣|有热情|充满热情)"),
        keys="你|您",
    ),
    _Rule(
        "prefers",
        _en(
            rf"\byou\s+(?:seem|appear)\s+to\s+{_EN_ADV}{{0,2}}prefer\s+"
            rf"(?P<obj>.+)|\b(?:it\s+)?(?:sounds|seems|looks)\s+like\s+you\s+{_EN_ADV}{{0,2}}prefer\s+(?P<obj2>.+)"
        ),
        check=_pref_ok,
        keys="prefer",
    ),
    _Rule(
        "likes",
        _en(
            rf"\byou\s+(?:seem|appear)\s+to\s+{_EN_ADV}{{0,2}}(?:like|love|enjoy|have\s+a\s+(?:real\s+|great\s+|strong\s+|deep\s+)?passion\s+for|"
            rf"be\s+(?:really\s+|very\s+)?(?:interested\s+in|into|passionate\s+about))\s+(?P<obj>.+)"
        ),
        lists=True,
        check=_pref_ok,
        keys="seem|appear",
    ),
    _Rule(
        "likes",
        _en(
            rf"\b(?:it\s+)?(?:sounds|seems|looks)\s+like\s+you\s+{_EN_ADV}{{0,2}}(?:like|love|enjoy|have\s+a\s+(?:real\s+|great\s+|strong\s+|"
            rf"deep\s+)?passion\s+for|are\s+(?:really\s+|very\s+)?(?:interested\s+in|into|passionate\s+about))\s+(?P<obj>.+)"
        ),
        lists=True,
        check=_pref_ok,
        keys="sound|seem|look",
    ),
)


# ------------------------------------------------------------------------------------------------------------
# Values: "X 是/改成 Y", "my X is Y", "X changed to Y"
# ------------------------------------------------------------------------------------------------------------

_ZH_CHANGE = (
    r"改为|改成|改到|换成|换为|换到|升级到|升级为|升级成|升到|降级到|降级为|调整为|调整到|调整成|调到|调成|设为|"
    r"设置为|设置成|设定为|设成|变成|变为|迁移到|迁移至|迁到|切换到|切换为|切换成|更新为|更新到|更换为|"
    r"扩容到|扩容至|扩到|增加到|提高到|提升到|减少到|降到|降低到"
)
# Copulas in a clause: a change verb, or 是/为 when they are not part of another word (但是, 因为, 认为 ...).
_ZH_COPULA = re.compile(rf"(?P<change>{_ZH_CHANGE})|(?<![但可总要于只不倒老凡像算还真硬或若即])是(?!否|不是)|(?<![因认成作以称行更视])为(?!了|什么|何|止|主|期|难|人|此)")
_ZH_SUBJ_LEAD = re.compile(
    r"(?:(?:对了|另外|还有|顺便说一下|顺便说|顺便|然后|而且|但是|不过|所以|因为|其实|实际上|现在|目前|如今|今天|昨天|最近|刚刚|刚才|已经|终于|哦|噢|嗯|啊|好的|好|那么|不对|更正一下|更正|纠正一下|纠正|抱歉|话说|另|我觉得|我认为|我猜|我记得|"
    r"我想|好像|可能|大概|也许|应该|告诉你|跟你说)[,:\s]*)+"
)
_ZH_SUBJ_POSS = re.compile(r"(?:我们公司的|我们家的|我们的|咱们的|我家的|我的|我们|咱们|我)\s*")
_ZH_SUBJ_TAIL = re.compile(r"(?:已经|现在|目前|如今|都|也|就|又|还|已|刚刚|刚|终于|正式|将|会|要|被|应该|其实|实际上|今天|昨天|最近|可能|大概|也许|或许|好像|似乎|估计|\s)+$")
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
    r"|\s+(?:is|are)\s+now\s+)"
    r"|(?P<weak>\s+(?:is|are)\s+(?:currently\s+|still\s+)?|\s*=\s*)",
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
_OBJ_TAIL_NOW = re.compile(
    r"(?:\s+(?:now|already|today|yesterday|tomorrow|originally|as\s+well|too|also|currently|anymore|at\s+the\s+moment|these\s+days|right\s+now|"
    r"lately|recently|a\s+lot|very\s+much|so\s+much|sometimes|often|usually))+$",
    re.I,
)

# Corrections with both values in one sentence: "端口不是5432，是5433", "the port isn't 5432, it's 5433".
_ZH_NOT_BUT = re.compile(
    r"(?:^|(?<=[,:]))\s*(?P<subj>[^,;:!?。]{1,30}?)(?:并|其实|真的)?不是(?P<wrong>[^,;:!?。]{1,40}?)[,\s]*(?:而|应该|其实|实际上)?是(?P<obj>[^,;:!?。]{1,60})"
)
_EN_NOT_BUT = re.compile(
    r"(?:^|(?<=[,:;]))\s*(?P<subj>[^,;:]{1,40}?)\s+(?:is\s+not|isn't|is\s+no\s+longer|was\s+not|"
    r"wasn't)\s+(?P<wrong>[^,;:]+?),?\s+(?:but(?:\s+(?:it's|it\s+is|rather))?|it's|it\s+is|it's\s+now|rather)\s+(?P<obj>[^,;:]+)",
    re.I,
)
# Correction sentences with no subject: "不对，是5433", "No, it's 5433", "Sorry, I meant 5433".
_ZH_BARE_FIX = re.compile(
    r"^\s*(?:(?:不对|不是的?|错了|说错了|搞错了|弄错了|记错了|更正(?:一下)?|纠正(?:一下)?|抱歉|不好意思|哦|噢|啊|嗯|其实|实际上)[,:!。\s]*)*(?:应该是|其实是|实际上是|是|应为|改成|换成)\s*"
    r"(?P<obj>[^,;!?。]+?)(?:[,\s]*(?:而?不是|并非)(?P<wrong>[^。]+))?\s*[。!.]?\s*$"
)
_ZH_BARE_FIX_DIGITS = re.compile(r"^\s*(?:(?:不对|错了|说错了|搞错了|弄错了|记错了|更正|纠正)[,:!。\s]*)+(?P<obj>[^,;!?。]*\d[^,;!?。]*?)\s*[。!.]?\s*$")
_EN_BARE_FIX = re.compile(
    r"^\s*(?:(?:no|nope|sorry|oops|actually|correction|wait|my\s+bad|my\s+mistake|oh)[,:!.\s]*)*(?:it's|it\s+is|it\s+should\s+be|should\s+be|that's|"
    r"that\s+should\s+be|I\s+meant|make\s+(?:that|it))\s+(?P<obj>[^,;!?]+?)(?:,?\s*not\s+(?P<wrong>[^.]+))?\s*[.!]?\s*$",
    re.I,
)
_EN_BARE_FIX_DIGITS = re.compile(
    r"^\s*(?:(?:no|sorry|actually|correction)[,:!.\s]*)+(?P<obj>[^,;!?]*\d[^,;!?]*?)\s*[.!]?\s*$",
    re.I,
)
_EN_NOT_Z_BUT_Y = re.compile(r"^\s*not\s+(?P<wrong>[^,]+?),?\s+but\s+(?P<obj>[^,;!?]+?)\s*[.!]?\s*$", re.I)
_BARE_FIX_BAD = re.compile(r"我|你|因为|为了|所以|\b(?:I|me|my|you|because|so|that|this|fine|ok|okay|good|great|right)\b", re.I)


@dataclass
class _Found:
    """One extraction inside a sentence, before it becomes a Candidate."""

    subject: str
    predicate: str
    obj: str
    span: tuple[int, int]  # in the sentence: used to keep later rule families off text already read
    explicitness: str = "stated"
    confidence: float | None = None
    technical: bool = False
    event_date: str | None = None
    possessive: bool = False  # a value read from "my X" / "我的X"


def _zh_subject(c: str, a: int, b: int) -> tuple[int, int, bool]:
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
    k = c.rfind("把", a, b)
    if k >= 0:
        a = k + 1
    k = c.find("从", a, b)
    if k > a:
        b = k
    m = _ZH_SUBJ_TAIL.search(c[a:b])
    if m:
        b = a + m.start()
    while a < b and c[a].isspace():
        a += 1
    return a, b, poss


def _en_subject(c: str, a: int, b: int) -> tuple[int, int, bool]:
    poss = False
    while a < b and c[a].isspace():
        a += 1
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


def _zh_subject_ok(t: str) -> bool:
    return 1 <= len(t) <= 30 and t.lower() not in _PRONOUN_SUBJECTS and not _ZH_SUBJ_BAD.search(t) and not t.isdigit()


def _en_subject_ok(t: str) -> bool:
    words = t.lower().split()
    return (
        1 <= len(t) <= 30
        and 1 <= len(words) <= 5
        and not any(w in _PRONOUN_SUBJECTS or w in _EN_SUBJ_BAD_WORDS for w in words)
        and words[0] not in _EN_SUBJ_STOP
        and not t.isdigit()
        and t[0] not in "\"'"
        and (not words[0].endswith("ing") or _technical(t))  # "Losing a pet is tough" is no value
    )


def _value_like(obj_norm: str, obj_orig: str) -> bool:
    """An object that reads as a value by itself: digits, Latin inside Chinese, a proper noun, quotes, e-mail, URL."""
    if re.search(r"\d|@|://|^[\"《]", obj_norm):
        return True
    if _HAS_CJK.search(obj_norm):
        return bool(re.search(r"[A-Za-z]", obj_norm))
    return bool(re.search(r"(?:^|\s)[A-Z]", obj_orig))


def _value_gate(subj: str, obj_norm: str, obj_orig: str, change: bool, poss: bool) -> bool:
    return (
        _technical(subj, obj_norm)
        or bool(_ATTRIBUTE.search(subj))
        or _value_like(obj_norm, obj_orig)
        or (change and poss)  # "我的X改成了Y": a change to something of mine
    )


def _value_found(
    sent: _Sentence, sa: int, sb: int, oa: int, ob: int, change: bool, poss: bool, cjk: bool
) -> _Found | None:
    """Validate and build a value from subject [sa, sb) and object [oa, ob) (``change``: a change verb was used;
    ``poss``: the subject had 我的/my)."""
    s = sent.s
    oa, ob = _trim(s, oa, ob)
    if cjk:
        ob = min(ob, _cut(sent, oa, ob))
    else:
        ob = _cut(sent, oa, ob)
        m = _OBJ_TAIL_NOW.search(s, oa, ob)
        if m:
            ob = m.start()
    oa, ob = _trim(s, oa, ob)
    subj_n, obj_n = s[sa:sb].strip(), s[oa:ob]
    if not (1 <= len(obj_n) <= 60):
        return None
    if cjk:
        if not _zh_subject_ok(subj_n) or _ZH_OBJ_BAD_START.match(obj_n):
            return None
    else:
        if not _en_subject_ok(subj_n) or _EN_OBJ_BAD_START.match(obj_n) or obj_n.lower() in _PRONOUN_SUBJECTS:
            return None
        if not change and len(obj_n.split()) > 6:
            return None
    if not change and (len(obj_n) > 30 or _EVALUATIVE.match(obj_n)):
        return None
    subj_o, obj_o = sent.orig(sa, sb), sent.orig(oa, ob)
    if not _value_gate(subj_n, obj_n, obj_o, change, poss):
        return None
    return _Found(subj_o, "value", obj_o, (sa, ob), technical=_technical(subj_n, obj_n), possessive=poss)


# An assistant restates the user's things ("你的X是Y", "your X is Y"); a speaker's "your/his X" is not theirs.
_YOUR = re.compile(r"\s*(?:(?:所以|那么|好的|嗯|哦|so|ok|okay|got\s+it|great)[,\s]+)*(?:你的|您的|your\s+)", re.I)
_NOT_MINE = re.compile(r"\s*(?:你的|您的|your\b|his\b|her\b|their\b|他的|她的|他们的)", re.I)


def _values(sent: _Sentence, assistant: bool = False) -> list[_Found]:
    """Value facts from each clause of the sentence; at most one per clause (the first copula that validates)."""
    s, out = sent.s, []
    for ci, (ca, cb) in enumerate(sent.clauses):
        if _is_question(sent, ci, values=True):
            continue
        clause = s[ca:cb]
        cjk = bool(_HAS_CJK.search(clause))
        if assistant:  # only restatements of the user's own things: 你的X是Y / your X is Y
            m = _YOUR.match(clause)
            if not m:
                continue
            lead = ca + m.end()
        else:
            if _NOT_MINE.match(clause):
                continue
            lead = ca
        if cjk:
            for m in _ZH_COPULA.finditer(s, lead, cb):
                sa, sb, poss = _zh_subject(s, lead, m.start())
                f = _value_found(sent, sa, sb, m.end(), cb, bool(m.group("change")), poss or assistant, True)
                if f:
                    out.append(f)
                    break
            continue
        low = sent.lower[lead:cb]
        m = _EN_ACTIVE.search(s, lead, cb) if not assistant and _has_any(low, _EN_CHANGE_KEYS) else None
        if m:
            sa, sb, poss = _en_subject(s, m.start("subj"), m.end("subj"))
            f = _value_found(sent, sa, sb, m.start("obj"), m.end("obj"), True, poss, False)
            if f:
                out.append(f)
                continue
        if not _has_any(low, _EN_COPULA_KEYS):
            continue
        for m in _EN_COPULA.finditer(s, lead, cb):
            sa, sb, poss = _en_subject(s, lead, m.start())
            f = _value_found(sent, sa, sb, m.end(), cb, bool(m.group("change")), poss or assistant, False)
            if f:
                out.append(f)
                break
    return out


def _not_but(sent: _Sentence) -> list[_Found]:
    """"X不是Z，是Y" / "X isn't Z, it's Y": a corrected value Y for X."""
    out = []
    if not _has_any(sent.lower, ("不是", "not", "n't", "no longer")):
        return out
    regex = _ZH_NOT_BUT if sent.cjk else _EN_NOT_BUT
    for m in regex.finditer(sent.s):
        if sent.cjk:
            sa, sb, poss = _zh_subject(sent.s, m.start("subj"), m.end("subj"))
        else:
            sa, sb, poss = _en_subject(sent.s, m.start("subj"), m.end("subj"))
        wrong = m.group("wrong").strip()
        f = _value_found(sent, sa, sb, m.start("obj"), m.end("obj"), True, False, sent.cjk)
        if f:
            f.possessive = poss
        # a contrast ("Running a business isn't easy, but ...") is no correction: the wrong value must look like one
        if f and (_value_like(wrong, wrong) or _technical(sent.s[sa:sb]) or _ATTRIBUTE.search(sent.s[sa:sb])):
            f.explicitness = "corrected"
            out.append(f)
    return out


# ------------------------------------------------------------------------------------------------------------
# Dates
# ------------------------------------------------------------------------------------------------------------

_ZH_DIGITS = {"零": 0, "〇": 0, "一": 1, "二": 2, "两": 2, "三": 3, "四": 4, "五": 5, "六": 6, "七": 7, "八": 8, "九": 9}
_ZH_WEEKDAY = {"一": 0, "二": 1, "三": 2, "四": 3, "五": 4, "六": 5, "日": 6, "天": 6}
_MONTHS = {m: i + 1 for i, m in enumerate("jan feb mar apr may jun jul aug sep oct nov dec".split())}
_EN_WEEKDAYS = {d: i for i, d in enumerate("monday tuesday wednesday thursday friday saturday sunday".split())}
_EN_NUMBERS = {"a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "ten": 10}
_MONTH_NAME = (
    r"(?:Jan(?:uary)?|Feb(?:ruary)?|Mar(?:ch)?|Apr(?:il)?|May|June?|July?|Aug(?:ust)?|Sept?(?:ember)?|"
    r"Oct(?:ober)?|Nov(?:ember)?|Dec(?:ember)?)"
)
_ZH_NUM = r"(?:\d{1,2}|[一二三四五六七八九十两]{1,3})"

_DATE_ISO = re.compile(r"(?<!\d)(?P<y>\d{4})[-/.](?P<m>\d{1,2})[-/.](?P<d>\d{1,2})(?!\d)")
_DATE_ZH_FULL = re.compile(rf"(?P<y>\d{{4}})\s*年\s*(?P<m>{_ZH_NUM})\s*月\s*(?P<d>{_ZH_NUM})\s*[日号]")
_DATE_ZH_MD = re.compile(rf"(?<![\d年])(?P<m>{_ZH_NUM})\s*月\s*(?P<d>{_ZH_NUM})\s*[日号]?(?!\d)")
_DATE_ZH_D = re.compile(r"(?<![\d月年.:])(?P<d>\d{1,2}|[一二三]?十[一二三四五六七八九]?|[一二三四五六七八九])号(?![楼线房门床位球机车窗口店馆厅院屋桌码])")
_DATE_EN_MD = re.compile(rf"\b(?P<mon>{_MONTH_NAME})\.?\s+(?P<d>\d{{1,2}})(?:st|nd|rd|th)?\b(?:,?\s+(?P<y>\d{{4}}))?")
_DATE_EN_DM = re.compile(rf"\b(?P<d>\d{{1,2}})(?:st|nd|rd|th)?\s+(?:of\s+)?(?P<mon>{_MONTH_NAME})\b\.?(?:,?\s+(?P<y>\d{{4}}))?")
_REL_ZH_DAY = re.compile(r"大前天|前天|昨天|昨晚|昨日|今天|今晚|今早|今日|大后天|后天|明天|明早|明晚|明日")
_REL_ZH_WEEK = re.compile(r"(?P<w>上|下|这|本)(?:个)?(?:周|星期|礼拜)(?P<d>[一二三四五六日天末])?")
_REL_ZH_MONTH = re.compile(r"(?P<w>上|下)个?月(?![\d一二三四五六七八九十])")
_REL_ZH_AGO = re.compile(rf"(?P<n>{_ZH_NUM})\s*(?:个)?(?P<u>天|周|星期|礼拜)(?P<dir>前|后|以前|以后|之前|之后)")
_REL_EN_DAY = re.compile(
    r"\b(?:the\s+day\s+before\s+yesterday|the\s+day\s+after\s+tomorrow|yesterday|today|tonight|tomorrow|this\s+(?:morning|afternoon|evening)|"
    r"last\s+night)\b",
    re.I,
)
_REL_EN_WEEK = re.compile(
    r"\b(?P<w>last|next|this|coming)\s+(?P<u>week|weekend|month|monday|tuesday|wednesday|thursday|friday|saturday|sunday)\b",
    re.I,
)
# "3 days ago", "a week ago", "in two days" (not "in a day": "Rome wasn't built in a day").
_REL_EN_AGO = re.compile(
    r"\b(?P<n>\d{1,2}|a|an|one|two|three|four|five|six|seven|ten)\s+(?P<u>day|week)s?\s+ago\b"
    r"|\bin\s+(?P<n2>\d{1,2}|one|two|three|four|five|six|seven|ten)\s+(?P<u2>day|week)s?\b",
    re.I,
)
_ZH_REL_OFFSETS = {"大前天": -3, "前天": -2, "昨天": -1, "昨晚": -1, "昨日": -1, "今天": 0, "今晚": 0, "今早": 0, "今日": 0,
                   "明天": 1, "明早": 1, "明晚": 1, "明日": 1, "后天": 2, "大后天": 3}


def _zh_int(t: str) -> int | None:
    if t.isdigit():
        return int(t)
    if t == "十":
        return 10
    if "十" in t:
        tens, _, ones = t.partition("十")
        return (_ZH_DIGITS.get(tens, 1) if tens else 1) * 10 + (_ZH_DIGITS.get(ones, 0) if ones else 0)
    return _ZH_DIGITS.get(t) if len(t) == 1 else None


def _mk(y: int, m: int, d: int) -> date | None:
    try:
        return date(y, m, d)
    except ValueError:
        return None


def _near(day: date, m: int, d: int) -> date | None:
    """A month-day without a year: the year that puts it within six months of ``day``."""
    best = None
    for y in (day.year - 1, day.year, day.year + 1):
        c = _mk(y, m, d)
        if c and (best is None or abs((c - day).days) < abs((best - day).days)):
            best = c
    return best


def _month_start(day: date, step: int) -> date:
    """First day of the previous (step < 0) or next month."""
    first = day.replace(day=1)
    return (first - timedelta(days=1)).replace(day=1) if step < 0 else (first + timedelta(days=32)).replace(day=1)


def _monday(day: date) -> date:
    return day - timedelta(days=day.weekday())


# Cheap pre-check: no digit and none of these (lower-cased) words means no date at all.
_DIGIT = re.compile(r"\d")
_DATE_KEYS = (
    "号", "天", "晚", "早", "周", "期", "拜", "月", "day", "tonight", "tomorrow", "morning", "afternoon", "evening",
    "night", "week", "month", "ago", "jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec",
)


_MODAL_MAY = re.compile(r"\b(?:I|you|we|it|he|she|they)\s+$")


def _find_date(s: str, day: date) -> tuple[str, int, int] | None:
    """The first explicit or relative date in a sentence: (ISO date, start, end)."""
    if not _DIGIT.search(s) and not _has_any(s.lower(), _DATE_KEYS):
        return None
    m = _DATE_ISO.search(s) or _DATE_ZH_FULL.search(s)
    if m:
        d = _mk(int(m["y"]), _zh_int(m["m"]) or 0, _zh_int(m["d"]) or 0)
        if d:
            return d.isoformat(), m.start(), m.end()
    m = _DATE_ZH_MD.search(s)
    if m and (_zh_int(m["m"]) or 0) <= 12:
        d = _near(day, _zh_int(m["m"]) or 0, _zh_int(m["d"]) or 0)
        if d:
            return d.isoformat(), m.start(), m.end()
    for rx in (_DATE_EN_MD, _DATE_EN_DM):
        m = rx.search(s)
        if m and not (m["mon"] == "May" and rx is _DATE_EN_MD and _MODAL_MAY.search(s, 0, m.start())):  # "we May 5"
            mon = _MONTHS[m["mon"][:3].lower()]
            d = _mk(int(m["y"]), mon, int(m["d"])) if m["y"] else _near(day, mon, int(m["d"]))
            if d:
                return d.isoformat(), m.start(), m.end()
    m = _DATE_ZH_D.search(s)
    if m:
        d = _mk(day.year, day.month, _zh_int(m["d"]) or 0)
        if d:
            return d.isoformat(), m.start(), m.end()
    m = _REL_ZH_DAY.search(s)
    if m:
        return (day + timedelta(days=_ZH_REL_OFFSETS[m.group()])).isoformat(), m.start(), m.end()
    m = _REL_EN_DAY.search(s)
    if m:
        w = m.group().lower()
        if "before" in w:
            off = -2
        elif "after" in w:
            off = 2
        elif w == "yesterday" or w.startswith("last"):
            off = -1
        else:
            off = 1 if w == "tomorrow" else 0
        return (day + timedelta(days=off)).isoformat(), m.start(), m.end()
    m = _REL_ZH_WEEK.search(s)
    if m:
        shift = {"上": -7, "下": 7}.get(m["w"], 0)
        base = _monday(day) + timedelta(days=shift)
        if m["d"] == "末":
            base += timedelta(days=5)
        elif m["d"]:
            base += timedelta(days=_ZH_WEEKDAY[m["d"]])
        elif shift == 0:
            base = None  # "这周" alone says nothing
        if base:
            return base.isoformat(), m.start(), m.end()
    m = _REL_EN_WEEK.search(s)
    if m:
        w, u = m["w"].lower(), m["u"].lower()
        shift = {"last": -7, "next": 7}.get(w, 0)
        if u == "month":
            if shift:
                return _month_start(day, shift).isoformat(), m.start(), m.end()
        elif u == "week":
            if shift:
                return (_monday(day) + timedelta(days=shift)).isoformat(), m.start(), m.end()
        else:
            off = 5 if u == "weekend" else _EN_WEEKDAYS[u]
            return (_monday(day) + timedelta(days=shift + off)).isoformat(), m.start(), m.end()
    m = _REL_ZH_MONTH.search(s)
    if m:
        return _month_start(day, -1 if m["w"] == "上" else 1).isoformat(), m.start(), m.end()
    m = _REL_ZH_AGO.search(s)
    if m:
        n = _zh_int(m["n"]) or 0
        n *= 7 if m["u"] != "天" else 1
        return (day + timedelta(days=-n if "前" in m["dir"] else n)).isoformat(), m.start(), m.end()
    m = _REL_EN_AGO.search(s)
    if m:
        raw, unit = (m["n"], m["u"]) if m["n"] else (m["n2"], m["u2"])
        n = int(raw) if raw.isdigit() else _EN_NUMBERS[raw.lower()]
        n *= 7 if unit.lower() == "week" else 1
        return (day + timedelta(days=-n if m["n"] else n)).isoformat(), m.start(), m.end()
    return None


# ------------------------------------------------------------------------------------------------------------
# Sentence driver
# ------------------------------------------------------------------------------------------------------------


def _is_question(sent: _Sentence, ci: int, values: bool = False) -> bool:
    a, b = sent.clauses[ci]
    c = sent.s[a:b]
    if _ZH_QUESTION.search(c):
        return True
    qmark = sent.s.rstrip().endswith("?")
    if qmark and (ci == len(sent.clauses) - 1 or _EN_QUESTION_START.match(c)):
        return True
    return values and bool(_EN_QUESTION_WORD.search(c))


_TAG_QUESTION = re.compile(r"^\s*(?:对吧|是吧|对吗|是吗|对不对|是不是|没错吧|right|correct|isn't\s+it|is\s+that\s+right)\s*\??\s*$", re.I)


def _asks(sent: _Sentence, start: int) -> bool:
    """The clause at ``start`` is a question, or is followed only by a tag question ("…5432，对吧？")."""
    ci = sent.clause_at(start)
    if _is_question(sent, ci):
        return True
    if sent.s.rstrip().endswith("?") and ci + 1 < len(sent.clauses):
        a, b = sent.clauses[-1]
        return ci + 2 >= len(sent.clauses) and bool(_TAG_QUESTION.match(sent.s[a:b]))
    return False


def _hedged(sent: _Sentence, start: int, end: int) -> bool:
    ca = sent.clauses[sent.clause_at(start)][0]
    return bool(_HEDGE.search(sent.s, ca, end))


def _overlaps(span: tuple[int, int], claimed: list[tuple[int, int]]) -> bool:
    return any(span[0] < b and a < span[1] for a, b in claimed)


# English "I"/"we" must open a clause (or follow a conjunction): "things we enjoy doing" is a relative clause.
_EN_I_AT = re.compile(r"(?:I|we)\b", re.I)
_EN_LEAD_OK = re.compile(
    r"(?:^|[,;:(]|\b(?:and|but|so|because|also|actually|well|haha|yes|yeah|oh|really|now|though|although|since|as|then|when|while|um|personally|"
    r"honestly|however|besides|today|tonight|recently|lately|sometimes|usually|often|always|still|ok|okay|sure|hi|hello|hey|plus|anyway|generally|"
    r"mostly|i\s+(?:think|know|guess|feel|believe|mean|admit|must\s+say)(?:\s+that)?|and\s+that's\s+why))\s*$",
    re.I,
)
# A plan said in fear or hope is not a plan: "I'm afraid I'll forget my lines", "I hope we will ...".
_NOT_A_PLAN = re.compile(
    r"afraid|worried|scared|fear|hope|wish|sometimes|often|usually|every|担心|害怕|怕|希望|但愿|恐怕|有时|经常|每",
    re.I,
)


def _lead_ok(sent: _Sentence, m: re.Match[str], predicate: str) -> bool:
    s = sent.s
    ca = sent.clauses[sent.clause_at(m.start())][0]
    before = s[ca : m.start()]
    if predicate == "plans" and _NOT_A_PLAN.search(s, 0, m.start()):
        return False
    if _EN_I_AT.match(s, m.start()) and not _EN_LEAD_OK.search(before):
        return False
    return True


def _apply_rules(sent: _Sentence, rules: tuple[tuple[_Rule, bool, tuple[str, ...]], ...], subject: str) -> list[_Found]:
    out: list[_Found] = []
    for rule, chinese, keys in rules:
        if not (sent.cjk if chinese else sent.latin):
            continue
        if keys:
            low = sent.lower
            for k in keys:
                if k in low:
                    break
            else:
                continue
        pos = 0
        while pos < len(sent.s):
            m = rule.regex.search(sent.s, pos)
            if not m:
                break
            # the object ends at its clause, so "我喜欢猫，我也喜欢狗" / "I love X, but I also enjoy Y" match twice
            pos = max(_rule_match(sent, rule, m, subject, out), m.start() + 1)
    return out


def _rule_match(sent: _Sentence, rule: _Rule, m: re.Match[str], subject: str, out: list[_Found]) -> int:
    """Turn one rule match into findings (appended to ``out``); returns where the next search may start."""
    s = sent.s
    group = next((g for g in (rule.group, "obj2", "obj3") if g in m.groupdict() and m.group(g) is not None), None)
    if group is None or _is_question(sent, sent.clause_at(m.start())) or not _lead_ok(sent, m, rule.predicate):
        return m.start() + 1
    if rule.after_i and not _inherits_i(sent, m.end()):
        return m.start() + 1
    oa, ob = m.start(group), m.end(group)
    if rule.keep_tail:
        # opinions: to the end of the sentence, dropping trailing question clauses
        for ci in range(sent.clause_at(oa) + 1, len(sent.clauses)):
            if _is_question(sent, ci):
                ob = min(ob, sent.clauses[ci][0])
                break
    else:
        ob = _cut(sent, oa, ob, lists=rule.lists)
    oa, ob = _trim(s, oa, ob)
    if not _HAS_CJK.search(s, oa, ob):
        tail = _OBJ_TAIL_NOW.search(s, oa, ob)
        if tail:
            ob = tail.start()
    if ob <= oa:
        return m.start() + 1
    spans = _split_list(sent, oa, ob) if rule.lists else [(oa, ob)]
    for ia, ib in spans:
        ia, ib = _trim(s, ia, ib)
        if ib <= ia or (rule.check and not rule.check(s[ia:ib])):
            continue
        obj = sent.orig(ia, ib)
        if obj:
            out.append(_Found(subject, rule.predicate, obj, (m.start(), ob)))
    return ob


_NAME_ATTRIBUTE = re.compile(r"\s*(?:名字|姓名|全名|name|first\s+name|full\s+name)\s*", re.I)


def _owned(values: list[_Found], speaker_subject: str) -> list[_Found]:
    """Values of "my X": "my name" is the speaker's name; for a named participant "my birthday" is theirs
    ("Caroline's birthday", so two speakers' birthdays never supersede each other); users keep the bare X."""
    for v in values:
        if not v.possessive:
            continue
        if _NAME_ATTRIBUTE.fullmatch(v.subject):
            v.subject, v.predicate = speaker_subject, "name"
        elif speaker_subject != "user":
            sep = "的" if _HAS_CJK.search(v.subject) else "'s "
            v.subject = f"{speaker_subject}{sep}{v.subject}"
    return values


def _speaker_sentence(sent: _Sentence, subject: str, day: date, correction: bool) -> list[_Found]:
    """Everything a user or a named participant says in one sentence."""
    if _hypothetical(sent):
        return []
    found: list[_Found] = []
    claimed: list[tuple[int, int]] = []

    def take(items: list[_Found]) -> None:
        fresh = [f for f in items if not _overlaps(f.span, claimed)]
        found.extend(fresh)
        claimed.extend(f.span for f in fresh)

    take(_apply_rules(sent, _IDENTITY, subject))
    take(_apply_rules(sent, _PREFERENCES, subject))
    take(_apply_rules(sent, _RULES_AXIOM, subject))
    take(_owned(_not_but(sent), subject))
    take(_apply_rules(sent, _DECISIONS, subject))
    take(_apply_rules(sent, _PLANS, subject))
    dated = _find_date(sent.s, day)
    if dated and dated[0] > day.isoformat():
        take(_apply_rules(sent, _FUTURE_PLANS, subject))
    take(_owned(_values(sent), subject))
    take(_apply_rules(sent, _OPINIONS, subject))

    weak = _weak_correction(sent)
    for f in found:
        nature = _PREDICATES[f.predicate][0]
        marked = correction or (weak is not None and weak.start() <= f.span[0])
        if f.explicitness == "corrected" or (marked and f.predicate in _CORRECTABLE):
            f.explicitness = "corrected"
        if nature not in ("opinion", "axiom") and _hedged(sent, f.span[0], f.span[1]):
            f.explicitness, f.confidence = "inferred", CONF_INFERRED

    if dated and not _is_question(sent, sent.clause_at(dated[1])):
        iso, da, db = dated
        plans = [f for f in found if f.predicate in ("plans", "decided")]
        for f in plans:
            f.event_date = f.event_date or iso
        date_text = sent.s[da:db]
        in_value = any(f.predicate in _CORRECTABLE and date_text in sent.s[f.span[0] : f.span[1]] for f in found)
        if not plans and not in_value:
            obj = _event_object(sent)
            if obj and len(obj) >= (5 if sent.cjk else 12) and not _CHAT_BOILERPLATE.search(obj):
                ev = _Found(subject, "event", obj, (0, len(sent.s)), event_date=iso)
                if _hedged(sent, da, sent.clauses[sent.clause_at(da)][1]):
                    ev.explicitness, ev.confidence = "inferred", CONF_INFERRED
                found.append(ev)
    return found


# A greeting or a bare vocative ("你好", "AI伴侣", "Hello friend") opening an event sentence is dropped.
_GREETING = re.compile(
    r"^\s*(?:你好|您好|嗨|哈喽|早上好|晚上好|下午好|(?:hi|hello|hey|good\s+(?:morning|evening|afternoon))\b)"
    r"|^\s*(?:亲爱的|my\s+|dear\s+)*(?:AI伴侣|AI助手|AI|朋友|老朋友|伙伴|小助手|助手|伴侣|AI\s+companion|friend|buddy|companion|assistant)\W*$",
    re.I,
)
# Events about the chat itself ("今天想和你聊聊", "see you tomorrow") are not events in the person's life.
_CHAT_BOILERPLATE = re.compile(
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


def _event_object(sent: _Sentence) -> str:
    """The sentence without a leading greeting and without trailing question clauses."""
    clauses = sent.clauses
    first, last = 0, len(clauses) - 1
    while first < last and _GREETING.match(sent.s[clauses[first][0] : clauses[first][1]]):
        first += 1
    while last > first and _is_question(sent, last):
        last -= 1
    if _is_question(sent, last):
        return ""
    a, b = _trim(sent.s, clauses[first][0], clauses[last][1])
    return sent.orig(a, b)[:EVIDENCE_CHARS]


def _assistant_sentence(sent: _Sentence) -> list[_Found]:
    """Assistant restatements about the user; never a stated fact."""
    if _hypothetical(sent):
        return []
    found = _apply_rules(sent, _ASSISTANT_PREFS, "user")
    claimed = [f.span for f in found]
    for v in _values(sent, assistant=True):
        if _overlaps(v.span, claimed):
            continue
        if _NAME_ATTRIBUTE.fullmatch(v.subject):
            v.subject, v.predicate = "user", "name"
        found.append(v)
    for f in found:
        f.explicitness, f.confidence = "inferred", CONF_INFERRED
    return found


def _bare_correction(sent: _Sentence, anchors: list[tuple[int, Candidate]], pos: int) -> _Found | None:
    """"不对，是5433" / "No, it's 5433": the new value for the latest single-valued fact of the last few turns."""
    s = sent.s
    if sent.cjk:
        m = _ZH_BARE_FIX.match(s) or _ZH_BARE_FIX_DIGITS.match(s)
    else:
        m = _EN_BARE_FIX.match(s) or _EN_BARE_FIX_DIGITS.match(s) or _EN_NOT_Z_BUT_Y.match(s)
    if not m:
        return None
    oa, ob = _trim(s, m.start("obj"), m.end("obj"))
    obj_n = s[oa:ob]
    if not (1 <= len(obj_n) <= 30) or _BARE_FIX_BAD.search(obj_n):
        return None
    for turn_pos, ref in reversed(anchors):
        if pos - turn_pos > 4:
            return None
        ref_digits = bool(re.search(r"\d", unicodedata.normalize("NFKC", ref.object)))
        if ref_digits != bool(re.search(r"\d", obj_n)) or len(obj_n) > max(2 * len(ref.object), 20):
            continue
        obj = sent.orig(oa, ob)
        if obj == ref.object:
            continue
        return _Found(ref.subject, ref.predicate, obj, (0, len(s)), explicitness="corrected",
                      technical=ref.technical or _technical(obj_n))
    return None


# ------------------------------------------------------------------------------------------------------------
# Public API
# ------------------------------------------------------------------------------------------------------------


def _speaker_subject(turn: Turn) -> str:
    if turn.role == "user":
        return "user"
    return (turn.speaker or "").strip() or "user"


def _candidate(turn: Turn, day: date, f: _Found, evidence: str) -> Candidate:
    nature, multi, base = _PREDICATES[f.predicate]
    confidence = f.confidence
    if confidence is None:
        confidence = CONF_CORRECTED if f.explicitness == "corrected" else base
    return Candidate(
        subject=f.subject.strip(),
        predicate=f.predicate,
        object=f.obj.strip(),
        nature=nature,
        confidence=confidence,
        explicitness=f.explicitness,
        source_file=turn.source_file,
        line_start=turn.line_start,
        line_end=turn.line_end,
        observed_at=turn.at(day),
        speaker=turn.speaker,
        technical=f.technical,
        multi_valued=multi,
        event_date=f.event_date,
        extractor="rules",
        evidence=evidence,
    )


# "Go over Java", "Go rather than Java", "Go 而不是 Java": the alternative the speaker turned down.
_REJECTED = re.compile(
    r"^\s*(?:over|rather\s+than|instead\s+of|and\s+not|not)\s+(?P<en>[\w.+#-]+(?:\s+[\w.+#-]+)?)"
    r"|^\s*[,，]?\s*(?:而不是|而非|不是|胜过|多过|不要用|别用)\s*(?P<zh>[^,，。;；!?！？\s]{1,20})",
    re.I,
)


_RATHER = re.compile(r"\s*[,，]?\s*(?:而不是|而非|胜过)\s*|\s+(?:over|than|rather\s+than|instead\s+of)\s+", re.I)
_USE_PREFIX = re.compile(r"^(?:to\s+)?(?:use|using)\s+", re.I)


def _rejected_alternative(sentence: str, obj: str) -> str | None:
    at = sentence.find(obj)
    if at < 0:
        return None
    m = _REJECTED.match(sentence[at + len(obj):])
    if not m:
        return None
    alt = (m.group("en") or m.group("zh") or "").strip(" .。")
    return alt or None


def _extract_turn(turn: Turn, day: date, pos: int, anchors: list[tuple[int, Candidate]]) -> list[Candidate]:
    text = turn.text or ""
    if not text.strip():
        return []
    src = _Source(text)
    out: list[Candidate] = []
    seen: set[tuple[str, str, str]] = set()
    assistant = turn.role == "assistant"
    subject = _speaker_subject(turn)
    correction = not assistant and _has_any(src.norm.lower(), _CORRECTION_KEYS) and bool(_CORRECTION.search(src.norm))
    for sent in _sentences(src):
        if assistant:
            found = _assistant_sentence(sent)
        else:
            found = _speaker_sentence(sent, subject, day, correction)
            if (correction or _weak_correction(sent)) and not any(f.predicate in _CORRECTABLE for f in found):
                fix = _bare_correction(sent, anchors, pos)
                if fix:
                    found.append(fix)
        evidence = _evidence(sent)
        for f in found:
            key = (f.subject, f.predicate, f.obj)
            if key in seen:
                continue
            seen.add(key)
            rejected = None
            if f.predicate == "prefers":  # "Go 而不是 Java", "use Go than Java": the object is Go, Java is turned down
                parts = _RATHER.split(f.obj, maxsplit=1)
                if len(parts) == 2 and parts[0].strip() and parts[1].strip():
                    f.obj, rejected = _USE_PREFIX.sub("", parts[0]).strip(), parts[1].strip(" .。")
            cand = _candidate(turn, day, f, evidence)
            if assistant and _asks(sent, f.span[0]):
                # "你的数据库端口是 5432，对吧？" asks, it does not claim: no fact, but a user's bare
                # "不对，是 5433" that follows still knows which value it corrects.
                if not cand.multi_valued:
                    anchors.append((pos, cand))
                continue
            out.append(cand)
            if not cand.multi_valued:
                anchors.append((pos, cand))
            if f.predicate == "prefers" and not assistant:
                alt = rejected or _rejected_alternative(sent.orig(0, len(sent.s)), cand.object)
                if alt and (f.subject, "prefers_not", alt) not in seen:
                    seen.add((f.subject, "prefers_not", alt))
                    out.append(Candidate(**{**cand.to_dict(), "predicate": "prefers_not", "object": alt}))
    return out


def extract_candidates(turns: list[Turn], day: date) -> list[Candidate]:
    """Candidate facts from one day's turns, in turn and sentence order.

    ``day`` dates the turns (``observed_at``) and resolves relative dates ("昨天", "next week").
    A subjectless correction ("不对，是5433") applies to the latest single-valued candidate of the
    preceding few turns of this same list.
    """
    out: list[Candidate] = []
    anchors: list[tuple[int, Candidate]] = []  # single-valued candidates so far, with their turn position
    for pos, turn in enumerate(turns):
        out.extend(_extract_turn(turn, day, pos, anchors))
    return out
