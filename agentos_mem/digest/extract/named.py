"""Family: a named thing in the role a construction gives it. No attribute word has to be said: the construction says
which slot the name fills.

- tool and purpose: "We use Jira for tickets", "My team uses Terraform to manage infra", "我用 Notion 记笔记",
  "我每天骑电动车上班", "我们公司用飞书沟通" -> (owner, purpose, tool): the purpose is the slot, so a later tool for the same
  purpose supersedes ("我现在用 Obsidian 记笔记");
- where a thing is kept: "I keep my dotfiles on GitHub", "我们的文档都放在 Confluence 上" -> (dotfiles, Github);
- a habitual verb and its named object: "I drive a Honda Civic", "my daughter goes to Lincoln Elementary" -> (owner, the verb);
- what a thing of mine is or is called: "我的车是一辆卡罗拉", "我们家的猫叫年糕", "Our office is in Shenzhen",
  "my cat is called Mochi" -> (车, 卡罗拉).

A name is a capitalised (or digit-bearing) phrase in English, a Latin-script phrase or a run of nouns (jieba) in Chinese.
The verbs are classes (using, riding and driving, keeping, attending), not topics. Runs after the sentence patterns:
it only reads what they left unread; wishes, questions, quotes and examples are left alone (the engine and the
shared checks below)."""

from __future__ import annotations

import re

from agentos_mem.digest.extract.anchored import NOT_REAL, OTHERS, TENTATIVE
from agentos_mem.digest.extract.normalize import Sentence
from agentos_mem.digest.extract.people import EN_RELATIONS, ZH_RELATIONS, kin
from agentos_mem.digest.extract.people import NAME1 as _ZH_GIVEN
from agentos_mem.digest.extract.rule import Found
from agentos_mem.digest.extract.subjects import NOT_MINE
from agentos_mem.digest.extract.vocab import hedged, is_question, is_technical
from agentos_mem.vocabulary.valuetypes import find_values

# -- English -------------------------------------------------------------------------------------------------------

# a name: capitalised or digit-led words ("Honda Civic", "VS Code", "Postgres 16"), or an iName / eName ("iCloud", "eBay")
_CAP = r"(?-i:[A-Z0-9]|[ie][A-Z])"
_EN_NAME = rf"(?P<name>{_CAP}[\w+#.\-]*(?:\s+{_CAP}[\w+#.\-]*){{0,3}})"
_EN_OWNER = (rf"(?P<who>\bI|\bwe|\bmy\s+(?:team|company|family|(?:{EN_RELATIONS})(?:\s+(?-i:[A-Z][a-z]+))?)|\bour\s+(?:team|company|family|group|office)|"
             r"(?:(?<=^)|(?<=[,;]\s)|(?<=\band\s))(?!(?:I|We|My|Our|The|This|That|It|They|He|She|You|Your|There|Then|So|But|And|Now)\b)(?-i:[A-Z][a-z]+))")
_EN_ADV = r"(?:\s+(?:also|usually|always|mostly|mainly|still|now|currently|normally|generally|just|only|all))*"
_EN_PURPOSE = r"(?P<purpose>[a-z]+(?:\s+(?!and\b|but\b|because\b|since\b|now\b|these\b|every\b)[a-z]+){0,3})"
_EN_TOOL = re.compile(rf"{_EN_OWNER}{_EN_ADV}\s+(?:use|uses|rely\s+on|relies\s+on|run|runs)\s+(?:the\s+|a\s+|an\s+)?{_EN_NAME}"
                      rf"\s+(?:for|to)\s+(?:the\s+|our\s+|my\s+)?{_EN_PURPOSE}", re.I)
_EN_KEEP = re.compile(rf"{_EN_OWNER}{_EN_ADV}\s+(?:keep|keeps|store|stores|host|hosts|back\s+up|backs\s+up|save|saves|put|puts)\s+"
                      rf"(?:all\s+)?(?:my|our|the)\s+(?P<thing>[a-z]+(?:\s+[a-z]+)?)\s+(?:on|in|at|to|with)\s+(?:the\s+)?{_EN_NAME}", re.I)
# habitual verbs of driving and riding, attending, working, shopping, following (present tense: a past one is a story);
# not "use", "own", "take": one uses, owns and takes many things at once, so the verb alone names no slot
_EN_HABIT = re.compile(
    rf"{_EN_OWNER}{_EN_ADV}\s+(?P<verb>drives?|rides?|goes\s+to|go\s+to|attends?|"
    rf"plays?\s+for|supports?|works?\s+(?:at|for)|shops?\s+at|banks?\s+with|flies|fly)\s+(?:a\s+|an\s+|the\s+|my\s+|our\s+)?{_EN_NAME}", re.I)
_EN_IS = re.compile(rf"\b(?P<who>my|our)\s+(?P<thing>[a-z]+(?:\s+[a-z]+)?)\s+(?:is|are)\s+(?:(?P<named>called|named)\s+|(?:located\s+|based\s+)?(?:in|at)\s+)"
                    rf"{_EN_NAME}", re.I)
# what one has, earned or took in (a multi-valued "has": a new one adds): "I have an AWS SAA", "We adopted Biscuit"
_EN_HAS = re.compile(rf"{_EN_OWNER}{_EN_ADV}\s+(?:have|has|own|owns|got|earned|passed|bought|adopted|hold|holds)\s+"
                     rf"(?:a\s+|an\s+|my\s+|our\s+|the\s+|two\s+|three\s+)?{_EN_NAME}", re.I)
# what one pays for or subscribes to, a list of names ("we pay for Netflix Premium, YouTube Premium and iCloud 200GB")
_EN_PAYS = re.compile(rf"{_EN_OWNER}{_EN_ADV}(?:\s+|(?='))(?:(?:pay|pays|paid|are\s+paying|'re\s+paying)\s+for|"
                      r"(?:subscribe|subscribed|am\s+subscribed|are\s+subscribed|'m\s+subscribed|'re\s+subscribed)\s+to)", re.I)
_EN_LIST_ITEM = re.compile(rf"\s*(?:,\s*(?:and\s+)?|\s+and\s+|\s+)?(?:the\s+|a\s+|an\s+)?(?P<name>{_CAP}[A-Za-z0-9+#.\-]*(?:\s+{_CAP}[A-Za-z0-9+#.\-]*){{0,3}})", re.I)
# a team one is on or moves to, named in lower case as teams are ("I'm still on search infra", "moving to the ads
# ranking team"): the slot is the team
_EN_TEAM = re.compile(r"\b(?:I'?m|I\s+am|we'?re|we\s+are)\s+(?:still\s+|now\s+|currently\s+)?(?:on|in|moving\s+to|joining)\s+(?:the\s+)?"
                      r"(?P<name>[a-z][a-z0-9\- ]{1,30}?)(?:\s+team\b|(?=\s+(?:until|till|for\s+now)\b))", re.I)
_EN_VERB_BASE = {"drives": "drive", "rides": "ride", "goes to": "go to", "attends": "attend", "supports": "support", "flies": "fly", "plays for": "play for", "works at": "work at",
                 "works for": "work for", "shops at": "shop at", "banks with": "bank with"}
# "for everything", "for work", "to do it": no purpose one tool holds
_EN_NO_PURPOSE = frozenset("everything anything something all it that this work fun me us them him her do be get make".split())
_EN_FUNCTION = frozenset("a an the my our your his her their its this that it them me us".split())


# A verb in the plural (or base) form after the owner: "Metrics go to", "Builds run", "Logs use". A person named by a
# capitalised word takes the singular ("Amy goes to", "Priya drives"); a thing in the plural does not.
_PLURAL_VERB = re.compile(rf"{_EN_ADV}\s+(?:use|rely|run|keep|store|host|back|save|put|drive|ride|go|attend|play|support|work|"
                          r"shop|bank|fly|have|own|get|earn|pass|buy|adopt|hold|pay|subscribe)\b", re.I)


def _en_owner(who: str) -> str | None:
    """The person a clause is about ("my sister", "my daughter", "Amy"), or None for the speaker (I, we, my team)."""
    who = who.strip()
    m = re.match(rf"my\s+((?:{EN_RELATIONS})(?:\s+[A-Z][a-z]+)?)$", who, re.I)
    if m:
        rel, _, name = m.group(1).partition(" ")
        return f"{rel.lower()} {name}".strip()
    return who if re.fullmatch(r"[A-Z][a-z]+", who) and who.lower() not in ("i", "we", "my", "our") else None


def _en_phrase(text: str, limit: int = 3) -> str:
    words = [w for w in text.split() if w.lower() not in _EN_FUNCTION]
    return " ".join(words[:limit])


# -- Chinese -------------------------------------------------------------------------------------------------------

_ZH_OWNER = rf"(?P<who>我们公司|我们家|我们组|我们团队|我们|咱们|我家|(?:我的?)?(?:{ZH_RELATIONS})?(?:{_ZH_GIVEN})|我的?(?:{ZH_RELATIONS})|我)"
# what one has, passed or took in: "我有 CKA 证书", "我考了 AWS SAA", "我家养了一只柯基"
_ZH_HAS = re.compile(rf"{_ZH_OWNER}(?:也|还|又|刚|已经|今年|去年)*(?:有|考了|考到了|考过了|拿到了|拿了|买了|领养了|养了)"
                     r"(?:一只|一条|一个|一台|一辆|一张|两只|两个|只|个|台|辆|张)?\s*")
_ZH_TOOL_VERB = re.compile(rf"{_ZH_OWNER}[^,;:!?。，]{{0,6}}?(?<![不没别])(?:用|拿|靠|通过|骑|坐|开|乘|搭)(?!了)\s*")
_ZH_POSS = re.compile(rf"(?P<who>我们家的|我们家|我家的|我家|我们的|我的|(?:我的?)?(?:{ZH_RELATIONS})的)(?:养了|养的|有)?(?:[一两三四五六七八九\d]?[只个条辆台位部])?(?P<thing>[\u4e00-\u9fff]{{1,8}}?)"
                      r"(?:现在|目前|如今|已经|也|还|都|就|一直)*(?:是|叫做|叫)(?:一辆|一台|一只|一条|一个|一部|一款|一位|一家)?\s*")
_ZH_PLACE = re.compile(rf"(?:{_ZH_OWNER}的?|(?:^|(?<=[，,;；]))\s*)(?P<thing>[\u4e00-\u9fff]{{2,6}}?)(?:就|都|也|一直|一直都|一般|平时|现在)*"
                       r"(?:放在|存在|存到|记在|部署在|托管在|跑在|放到|备份到|同步到)\s*")
_NOUN_TAGS = ("n", "nz", "nr", "ns", "nt", "eng", "j", "x")
_ZH_NOT_NAME = frozenset("这个 那个 一些 什么 东西 时候 地方 问题 事情 情况 现在 以前 这里 那里".split())


def _zh_words(text: str) -> list[tuple[str, str]]:
    import jieba.posseg as pseg  # lazy: only a sentence one of these constructions matches pays for the tagger

    return [(w, f) for w, f in pseg.lcut(text) if w.strip()]


def _zh_name(rest: str, one: bool = False) -> tuple[str, str]:
    """The name at the start of ``rest`` (a Latin-script phrase, or a run of nouns; ``one``: one noun, for a tool
    with its purpose after it, "骑自行车上学") and what follows it."""
    m = re.match(r"[A-Za-z][A-Za-z0-9+#.\-]*(?:\s+[A-Za-z0-9][A-Za-z0-9+#.\-]*){0,3}", rest)  # ASCII: not the Chinese after it
    if m:
        return m.group(0).strip(), rest[m.end():]
    words = _zh_words(rest[:16])
    name, used = "", 0
    for w, f in words:
        if f.startswith(_NOUN_TAGS) and w not in _ZH_NOT_NAME and re.fullmatch(r"[\u4e00-\u9fff]+", w):
            name += w
            used += len(w)
            if one and len(name) >= 2:
                break
            continue
        break
    return (name, rest[used:]) if len(name) >= 2 else ("", rest)


def _zh_purpose(rest: str) -> str:
    """What the tool is for, right after it ("记笔记", "上班", "沟通", "写代码"): the first words of the clause, two to
    four characters, not a particle, an adverb or a copula."""
    rest = re.sub(r"^\s*(?:来|去)", "", rest)
    clause = re.split(r"[,;:!?。，、和跟与及\s]", rest.strip(), maxsplit=1)[0]
    out = ""
    for w, f in _zh_words(clause[:8]):
        if not out and (f.startswith(("u", "d", "p", "c", "r", "m", "q", "y", "zg")) or w in ("是", "有", "了", "的", "在")):
            return ""
        if len(out) + len(w) > 4:
            break
        out += w
        if len(out) >= 2:
            break
    return out if re.fullmatch(r"[\u4e00-\u9fff]{2,4}", out) else ""


# A description, not a name: an adverb of degree or a negation first, or a 的 at the end ("很可爱", "红色的").
_ZH_DESCRIBES = re.compile(r"^(?:很|太|挺|真|好|不|没|比较|非常|特别|有点|超|蛮|最)|的$")


def _zh_whole(rest: str) -> str:
    """The rest of the clause as a name ("一辆卡罗拉" -> 卡罗拉 was cut before), when it reads as one."""
    clause = re.split(r"[,;:!?。，]", rest, maxsplit=1)[0].strip()
    clause = re.sub(r"(?:了|啦|呀|哦|呢|吧|上|里|那边|这边)+$", "", clause).strip()
    if not 2 <= len(clause) <= 12 or _ZH_DESCRIBES.search(clause):
        return ""
    words = _zh_words(clause)
    if not words or words[0][1].startswith(("a", "d", "v", "p", "r", "zg", "u", "c")):
        return ""
    return clause


def _zh_owner(who: str) -> str | None:
    """The person a clause is about (老公, 同事小李 -> 小李, 朵朵), or None for the speaker (我, 我们, 我家)."""
    if m := re.search(_ZH_GIVEN, who or ""):
        return m.group(0)
    m = re.search(ZH_RELATIONS, who or "")
    return kin(m.group(0)) if m else None


def _overlap(span: tuple[int, int], found: list[Found], typed: list[tuple[int, int, str]] = ()) -> bool:
    """The span is taken already, or cuts a typed value short ("at 9" of "at 9:30": the shape reads it whole)."""
    a, b = span
    return (any(a < f.span[1] and f.span[0] < b for f in found)
            or any(a < y and x < b and not (a <= x and y <= b) for x, y, _k in typed))


# -- the family ----------------------------------------------------------------------------------------------------

def _clause_ok(sent: Sentence, a: int) -> bool:
    ci = sent.clause_at(a)
    ca, cb = sent.clauses[ci]
    c = sent.s[ca:cb]
    return not (is_question(sent, ci) or NOT_MINE.match(c) or OTHERS.match(c) or TENTATIVE.search(sent.s, ca, a)
                or hedged(sent, ca, cb))


def _found(subject: str, name: str, span: tuple[int, int], who: str | None, speaker: str, predicate: str = "value") -> Found | None:
    if predicate == "has":  # whose it is is the subject itself
        if find_values(name):  # a typed name ("iPhone 15", "Model 3") is a value of its type: a newer one supersedes it
            return None
        return Found(who or speaker, "has", name, span)
    if who:
        subject = f"{who}的{subject}" if re.search(r"[\u4e00-\u9fff]", who + subject) else f"{who}'s {subject}"
    elif speaker != "user":
        subject = f"{speaker}'s {subject}"
    return Found(subject, "value", name, span, technical=is_technical(subject, name))


def named_facts(sent: Sentence, speaker: str) -> list[Found]:
    s = sent.s
    if NOT_REAL.search(s):
        return []
    out: list[Found] = []
    typed = find_values(s)
    if sent.latin and not sent.cjk:
        for m in _EN_PAYS.finditer(s):
            if not _clause_ok(sent, m.start()):
                continue
            who, at = _en_owner(m.group("who")), m.end()
            while (item := _EN_LIST_ITEM.match(s, at)) and item.group("name"):
                if not _overlap(item.span("name"), out, typed):
                    out.append(Found(who or speaker, "has", sent.orig(*item.span("name")).rstrip("."), item.span("name")))
                at = item.end()
        for m in _EN_TEAM.finditer(s):
            if _clause_ok(sent, m.start()) and not _overlap(m.span("name"), out, typed):
                out.append(_found("team", sent.orig(*m.span("name")), m.span("name"), None, speaker))
        for rx in (_EN_TOOL, _EN_KEEP, _EN_IS, _EN_HABIT, _EN_HAS):
            for m in rx.finditer(s):
                if not _clause_ok(sent, m.start()):
                    continue
                who = _en_owner(m.group("who"))
                # a capitalised word with a plural verb is no person but the thing the sentence is about: "Metrics go
                # to Prometheus" is where the metrics go (metrics go to · Prometheus), not a person called Metrics
                thing = who.lower() if who and who[:1].isupper() and " " not in who and _PLURAL_VERB.match(s, m.end("who")) else None
                if thing:
                    who = None
                if rx is _EN_TOOL:
                    subject = _en_phrase(m.group("purpose"))
                    if subject.split()[0].lower() in _EN_NO_PURPOSE if subject else True:
                        continue
                elif rx is _EN_KEEP or rx is _EN_IS:
                    subject = _en_phrase(m.group("thing"))
                    if rx is _EN_IS and m.group("named"):
                        subject = f"{subject} name"
                elif rx is _EN_HAS:
                    subject = "has"
                else:
                    verb = re.sub(r"\s+", " ", m.group("verb").lower())
                    subject = _EN_VERB_BASE.get(verb, verb)
                if thing and rx is not _EN_HAS:
                    subject = f"{thing} {subject}"
                elif thing:
                    continue  # "Builds have ...": what a thing has is no one's list
                if subject and not _overlap(m.span("name"), out, typed):
                    out.append(_found(subject, sent.orig(*m.span("name")).rstrip("."), m.span("name"), who, speaker,
                                      "has" if rx is _EN_HAS else "value"))
                    if out[-1] is None:
                        out.pop()
        return out
    if not sent.cjk:
        return out
    for m in _ZH_TOOL_VERB.finditer(s):
        if not _clause_ok(sent, m.start()):
            continue
        name, rest = _zh_name(s[m.end():], one=True)
        purpose = _zh_purpose(rest) if name else ""
        a = m.end() + s[m.end():].find(name)
        if name and purpose and not _overlap((a, a + len(name)), out, typed):
            out.append(_found(purpose, sent.orig(a, a + len(name)), (a, a + len(name)), _zh_owner(m.group("who")), speaker))
    for m in _ZH_HAS.finditer(s):
        if not _clause_ok(sent, m.start()):
            continue
        name, _rest = _zh_name(s[m.end():])
        a = m.end() + s[m.end():].find(name)
        if name and not _overlap((a, a + len(name)), out, typed):
            if f := _found("has", sent.orig(a, a + len(name)), (a, a + len(name)), _zh_owner(m.group("who")), speaker, "has"):
                out.append(f)
    for rx in (_ZH_POSS, _ZH_PLACE):
        for m in rx.finditer(s):
            if not _clause_ok(sent, m.start()):
                continue
            if rx is _ZH_POSS:  # the whole rest of its clause ("是一辆卡罗拉"), not a description ("是红色的")
                name = _zh_whole(s[m.end():])
            else:  # where it is kept: the name, not the folder after it ("放在iCloud文件夹里")
                # of a thing: the words before 放在 end on a noun ("仓库", "读书笔记"), not a manner ("周报模板统一放在")
                words = _zh_words(m.group("thing"))
                if not words or not (words[-1][1].startswith("n") and not words[-1][1].startswith("nr")):
                    continue
                name = _zh_name(s[m.end():])[0]
            a = m.end() + s[m.end():].find(name)
            if not name or _overlap((a, a + len(name)), out, typed):
                continue
            subject = m.group("thing")
            out.append(_found(subject, sent.orig(a, a + len(name)), (a, a + len(name)), _zh_owner(m.group("who")), speaker))
    return out
