"""Answer a question from the selected, published knowledge: map -> search -> sections within a token budget.

``answer(settings, user, question)`` navigates the read path of ``query.kb`` (so the three conditions hold for
every section it reads and cites: the document is ready, visible to ``user``, and in ``selection``):

1. the question's *key terms*: words of non-CJK scripts (``wal_level`` and ``write-ahead`` stay one term),
   Chinese runs cut by jieba into words, and "quoted phrases" whole; stop words and question words (如何,
   怎么样, explain, ...) dropped;
2. ``search_docs`` ranks sections; a hit is a candidate only when it shares terms with the question
   (``coverage`` > 0, so a hit found by meaning alone never is) and its text holds at least one key term.
   A key term no hit holds is searched for alone, so that a section holding it can join;
3. sections are read (``read_section``): the search's best first, then preferring one that brings a key term not
   read yet, while their pages fit in ``budget`` tokens (``count_tokens``); a section longer than what is left is
   read as its page holding the most key terms;
4. the answer comes from those pages only: extractive (the sentences holding the most key terms, the best one of
   the section read first leading and the others in reading order, each cited ``[n]`` with its document title,
   section anchor and lines), or, with a chat model (``client``, or one at ``settings.llm_base_url``), written by
   the model from the numbered sections in its prompt, told to answer from them only and to say what is missing;
   its JSON is validated (it may cite only the sections it was given) and any failure falls back to the
   extractive answer, said in ``method``.

Coverage is decided from the terms actually present in the sections the answer cites, never from dense
similarity (a dense ranking always returns something): ``answered`` when every key term is in them,
``partial`` when some are (``missing`` names the others: "知识库中没有关于「…」的内容" / "The knowledge base has
nothing on …"; a term that is in a section the answer could not use, for the budget or because the model left
it out, is named as such, and that section is one of the ``pointers`` with ``cited: false``),
``not_covered`` when the sections read hold fewer than half the key terms, or (three terms or more) those holding
two terms or more do (none, or a few words the question shares with unrelated sections, one section each: "What
does John like about Lebron James?" over the Vue docs, whose examples name a John): then ``answer`` is the
statement of what the base lacks ("No section of the knowledge base speaks of … together" where the words are
there, scattered), nothing else, and no model is asked (it could only answer from general knowledge). Half is the
rule the dictionary bridge uses too (``retrieval.bilingual``); on the Vue docs it took unrelated LoCoMo questions
stopped from 0.19 to 0.72 and cost no answerable question its evidence; asking it of the sections holding two terms
or more took them to 0.94, again at no cost (bench/results/cross-lingual.md). The statement is also the end of the
answer text, so a caller reading only ``answer`` sees the gap too.

Matching is lexical (with a light stem match for words like configure ~ configuration, and half the characters
of a Chinese word), and crosses languages through a dictionary (retrieval.bilingual, CC-CEDICT): a section in the
other language is a candidate when at least half the key terms meet it through their translations ("logical
replication" -> 逻辑, 复制), and a term counts as covered when its translation is in a cited section. A question
whose words the dictionary cannot carry across is still answered ``not_covered``: what the base can show, not a guess.

No Prefect here.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Mapping

from agentos_mem.query.forgotten import forgotten_values, without_forgotten
from agentos_mem.kernel.settings import Settings
from agentos_mem.kernel.text import CJK, STOPWORDS, count_tokens, has_cjk, sentences, shared_jieba
from agentos_mem.kernel.workspace import Workspace
from agentos_mem.query.kb import KBBlocked, KBQueryError, Query, phrase_norm, window, check_l0, kb_terms, parse_query, read_section, search, search_docs
from agentos_mem.query.kb import section_index, selected
from agentos_mem.retrieval import bilingual

BUDGET = (50, 8000)  # tokens of section text an answer may read (and the most its answer text may hold)
SEARCH_K = 20  # sections ranked for the question
TERM_K = 3  # sections ranked for a key term no hit holds
MAX_SECTIONS = 5
MAX_EXTRA = 2  # sections read that bring no key term the others lack
MAX_SENTENCES = 6
MAX_NAMED = 8  # key terms a missing statement names
SENTENCE_CHARS = 220
MAX_PAGE_WALK = 30  # pages of one long section looked through for the one holding the question's terms
MIN_PAGE = 10  # read_section's smallest page

# Words that ask rather than name what is asked about: never a key term, never "missing".
QUESTION_WORDS = frozenset(
    """
    如何 怎样 怎么样 怎么办 哪些 哪个 哪种 是否 请问 介绍 解释 说明 告诉 一下 有关 关于 什么样 多少 为何 区别 意思 作用 方法
    办法 支持 以及 及其 还有 或者 并且 而且 等等 之间 其中 相关 可以吗 能否 需要 应该 吗 呢 么 啥 咋 要不要 有没有 是不是 能不能 可不可以 一般 主要 具体 哪儿 几 些 请 帮 我要 给我
    explain describe tell show give list mean means meaning work works use used using need needs happen happens difference
    support supports supported say says said mention mentions cover covers example examples please way ways best does did do know want find help about regarding whether which kind kinds thing things
    """.split()
)

HOW_WORDS = frozenset("long much many often far old big large soon".split())  # "how long" asks, "long" names nothing

_LATIN = re.compile(rf"[^\W_{CJK}]+(?:[_\-.'][^\W_{CJK}]+)*", re.UNICODE)
_CJK_RUN = re.compile(rf"[{CJK}]+")
_PHRASE = re.compile(r'"([^"]*)"|“([^”]*)”|「([^」]*)」|『([^』]*)』')
_LIST_MARK = re.compile(r"^\s*(?:[-*+>]\s+|\d+[.)、]\s*|#+\s+)")

SYSTEM_PROMPT = """You answer a question for an AI agent from a knowledge base, using ONLY the numbered sections given
below (S1, S2, ...). Never add general knowledge, guesses or anything the sections do not say. Answer in the
language of the question, briefly, and mark each statement with the id of the section it comes from, e.g. [S1].
If the sections do not cover the question or a part of it, say exactly what is missing in "missing".
Return only JSON: {"answer": "...", "citations": ["S1", ...], "missing": "..." or null}.
"citations" lists the ids of the sections the answer uses; use only ids that are given."""


# -- key terms ----------------------------------------------------------------------------------------------------
def key_terms(question: str) -> list[str]:
    """What the question asks about, in question order: quoted phrases whole, non-CJK words (compounds like
    wal_level kept), Chinese words (jieba); stop words, question words and lone Chinese characters dropped."""
    q = unicodedata.normalize("NFKC", question)
    out: list[str] = []
    for m in _PHRASE.finditer(q):
        p = next((g for g in m.groups() if g is not None), "").strip()
        if p:
            out.append(p)
    for piece in re.split(f"([{CJK}]+)", _PHRASE.sub(" ", q)):  # Chinese runs and what lies between them
        if not piece:
            continue
        if _CJK_RUN.fullmatch(piece):
            # shared_jieba: on a run of Chinese it cuts as jieba's global dictionary does
            out.extend(w for w in shared_jieba().lcut(piece)
                       if w.strip() and w not in STOPWORDS and w not in QUESTION_WORDS and (len(w) > 1 or len(piece) == 1))
            continue
        prev = ""
        for m in _LATIN.finditer(piece):
            w = m.group().strip(".'-")
            low = w.casefold()
            after_how, prev = prev == "how" and low in HOW_WORDS, low
            if w and low not in STOPWORDS and low not in QUESTION_WORDS and not after_how and (len(w) > 1 or w.isdigit()):
                out.append(w)
    seen: set[str] = set()
    terms = []
    for t in out:
        if t.casefold() not in seen:
            seen.add(t.casefold())
            terms.append(t)
    return terms


class _Text:
    """A section (or page) text prepared for key-term matching."""

    def __init__(self, text: str):
        self.norm = phrase_norm(text)
        words: set[str] = set()
        for m in _LATIN.finditer(self.norm):
            w = m.group().strip(".'-")
            words.add(w)
            words.update(p for p in re.split(r"[_\-.']", w) if p)
        self.words = words
        self._stems: set[str] | None = None

    def has(self, term: str, *, loose: bool = True) -> bool:
        """The term is in the text: a phrase or Chinese word as written (case-insensitively), a word of another
        script as a word or one sharing most of its stem (configure ~ configuration); with ``loose``, a
        Chinese word of two or more characters also when at least half its characters are there, and a word
        whose translation is (``translated``)."""
        t = phrase_norm(term)
        if not t:
            return False
        if has_cjk(t) or " " in t:
            if t in self.norm:
                return True
            chars = [c for c in t if has_cjk(c)]
            if loose and len(chars) >= 2 and not _LATIN.search(_CJK_RUN.sub(" ", t)) and sum(c in self.norm for c in chars) * 2 >= len(chars):
                return True
            return loose and self.translated(term)
        if t in self.words:
            return True
        if len(t) >= 5 and t.isalpha() and any(_stem_match(t, w) for w in self.words if len(w) >= 5 and w[:3] == t[:3]):
            return True
        return loose and self.translated(term)

    def translated(self, term: str) -> bool:
        """The term in the other language (retrieval.bilingual, CC-CEDICT): an English word one of whose Chinese words
        is in the text, or a Chinese word one of whose English words is a word of the text. Words that say nothing
        of a subject (use, make, 哪些 ...) never count."""
        t = phrase_norm(term)
        if " " in t or not bilingual.is_content(t):
            return False
        if has_cjk(t):
            if _LATIN.search(t) or len(t) < bilingual.MIN_HAN:
                return False
            if self._stems is None:
                self._stems = {st for w in self.words for st in bilingual.stems(w)}
            return bool(bilingual.english_for(t) & self._stems)
        return t.isascii() and t.isalpha() and len(t) >= 3 and any(z in self.norm for z in bilingual.chinese_for(t))


def _stem_match(a: str, b: str) -> bool:
    n = 0
    for x, y in zip(a, b):
        if x != y:
            break
        n += 1
    return n >= max(5, min(len(a), len(b)) - 3) and n >= 0.6 * max(len(a), len(b))


# -- the answer ---------------------------------------------------------------------------------------------------
def answer(settings: Settings, user: str, question: str, *, selection: str | Mapping | None = None, budget: int = 1200,
           mode: str = "hybrid", client=None) -> dict:
    """Answer ``question`` from the sections of the selected, published knowledge ``user`` may see.

    Returns {status: answered | partial | not_covered, answer, citations: [{doc_id, title, anchor, section, lines}],
    missing (the statement of what the cited sections do not cover, or None), sections_read, tokens (of the
    answer text), tokens_read (of the section pages read; both at most ``budget``), pointers: [{doc_id, anchor,
    cited}] (what to keep in context and read again with read_section: the cited sections, then any section
    holding a key term the answer leaves out), method: extractive | llm:<model> | extractive (model failed:
    <why>), terms: {key, covered, missing}, notice (the search's: how many sections have no vector yet and were
    found by keywords only, or None)}. ``mode`` is the search mode (hybrid, bm25, dense).
    Raises KBQueryError for what the caller can fix (empty question, bad budget or mode, unknown selection).
    """
    if isinstance(budget, bool) or not isinstance(budget, int) or not BUDGET[0] <= budget <= BUDGET[1]:
        raise KBQueryError(f"budget must be a whole number of tokens from {BUDGET[0]} to {BUDGET[1]}")
    q = parse_query(question)
    zh = has_cjk(question)
    try:
        check_l0(settings, question)
    except KBBlocked as e:  # an answer that says why, as the layered query's `blocked`
        text = str(e)
        return {"status": "blocked", "answer": text, "citations": [], "missing": None, "tokens": count_tokens(text), "pointers": [],
                "method": "l0", "sections_read": 0, "tokens_read": 0, "rule": e.refusal.rule_text,
                "terms": {"key": [], "covered": [], "missing": []}}
    keys = key_terms(question) or _fallback_terms(q)
    if not keys:
        raise KBQueryError(f"nothing to look up in {question!r}: name what the question is about")

    candidates, notice = _candidates(settings, user, question, q, keys, selection=selection, mode=mode)
    read, unread = _read(settings, user, candidates, keys, budget, selection=selection)
    # notice: the sections the search had no vector for (ranked by keywords), as `kb search` says it
    base = {"sections_read": len(read), "tokens_read": sum(r["tokens"] for r in read), "notice": notice}

    def gaps(cited: list[dict]) -> tuple[list[str], str | None]:
        """(key terms the cited sections hold, the statement of the rest: not in the base, or only in sections
        the answer does not use)."""
        covered = [t for t in keys if any(r["match"].has(t) for r in cited)]
        elsewhere = {}
        for t in keys:
            if t in covered:
                continue
            other = next((r for r in read if all(r is not c for c in cited) and r["match"].has(t)), None)
            if other is not None:
                elsewhere[t] = (other["doc_id"], other["anchor"])
            elif t in unread:
                elsewhere[t] = unread[t]
        absent = [t for t in keys if t not in covered and t not in elsewhere]
        return covered, _missing_text(zh, absent, elsewhere)

    per_section = [{t for t in keys if r["match"].has(t)} for r in read]  # each section read: the key terms it holds
    held = [t for t in keys if any(t in mine for mine in per_section)]
    together = {t for mine in per_section if len(mine) >= 2 for t in mine}  # in sections holding two terms or more
    if 2 * len(held) < len(keys) or (len(keys) > 2 and 2 * len(together) < len(keys)):
        # Fewer than half of what the question is about is in the base, or (a question of three terms or more) in
        # sections that hold two of its terms or more: the few words it shares with some sections, one here, one
        # there ("John" in an example, "2023" in a release note, "name" in an API table), do not make them an answer.
        # The statement names what is not there, or that no section speaks of it together. The second half: 300
        # LoCoMo questions over the Vue docs (none answerable there; not the benchmark's control) stopped 0.74 ->
        # 0.92; CMRC2018, RGB and the Vue docs' own questions answered and cited exactly as before. A two-term
        # question keeps the half rule ("潘嘉丽的职业是什么？": the passage names 潘嘉丽, not 职业; asking two terms
        # together cost CMRC2018 0.006 of its answers)
        if 2 * len(held) < len(keys):
            missing = _missing_text(zh, [t for t in keys if t not in held] or keys, {})
        else:
            missing = _scattered_text(zh, keys)
        return {"status": "not_covered", "answer": missing, "citations": [], "missing": missing, "tokens": count_tokens(missing),
                "pointers": [], "method": "extractive", **base, "terms": {"key": keys, "covered": [], "missing": keys}}

    out = None
    method = "extractive"
    model = client if client is not None else _settings_client(settings)
    if model is not None:
        # lazy: kernel.llm pulls httpx: only when this runs
        from agentos_mem.kernel.llm import LLMError

        try:
            out = _llm_answer(model, question, read, zh, budget, gaps)
            method = f"llm:{model.model}"
        except LLMError as e:
            method = f"extractive (model failed: {_short(str(e))})"
    if out is None:
        out = _extractive(q, keys, read, zh, budget, gaps)
    cited = out.pop("cited")
    covered = gaps(cited)[0]
    pointers = [{"doc_id": r["doc_id"], "anchor": r["anchor"], "cited": True} for r in cited]
    keep = {(r["doc_id"], r["anchor"]) for r in cited}
    for t in keys:  # the sections holding what the answer leaves out
        if t in covered:
            continue
        other = next((r for r in read if (r["doc_id"], r["anchor"]) not in keep and r["match"].has(t)), None)
        where = (other["doc_id"], other["anchor"]) if other is not None else unread.get(t)
        if where and where not in keep:
            keep.add(where)
            pointers.append({"doc_id": where[0], "anchor": where[1], "cited": False})
    # a value the user forgot is in no text an agent reads, a knowledge answer's included (query.forgotten)
    text = without_forgotten(_within(out["answer"], budget), forgotten_values(settings, user))
    return {**out, "answer": text, "status": "partial" if out["missing"] else "answered", "method": method,
            "citations": [_citation(r) for r in cited], "pointers": pointers, "tokens": count_tokens(text), **base,
            "terms": {"key": keys, "covered": covered, "missing": [t for t in keys if t not in covered]}}


def _within(text: str, budget: int) -> str:
    """``text``, cut at the end to at most ``budget`` tokens (only a very long missing statement needs it)."""
    if count_tokens(text) <= budget:
        return text
    lo, hi = 0, len(text)
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if count_tokens(text[:mid]) + 1 <= budget:
            lo = mid
        else:
            hi = mid - 1
    return text[:lo].rstrip() + "…"


def _fallback_terms(q: Query) -> list[str]:
    return [t for t in q.terms if len(t) > 1 and t not in QUESTION_WORDS]


def _settings_client(settings: Settings):
    if not getattr(settings, "llm_base_url", None):
        return None
    # lazy: kernel.llm pulls httpx: only when this runs
    from agentos_mem.kernel.llm import ChatClient

    return ChatClient.for_settings(settings)


def _short(text: str, limit: int = 160) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _candidates(settings, user, question, q: Query, keys: list[str], *, selection, mode: str) -> tuple[list[dict], str | None]:
    """Search hits worth reading, best first: sharing terms with the question and holding a key term; each with
    its section text prepared for matching. And the search's notice (sections without vectors), or None."""
    bilingual.configure(Workspace(settings.home).runtime)  # where its built dictionary lives, if a term needs it
    found = search(settings, user, question, selection=selection, k=SEARCH_K, mode=mode)
    hits = found["hits"]
    docs = selected(settings, user, selection)
    if not docs.docs:
        return [], found["notice"]
    units = {(u.doc_id, u.anchor): u for u in section_index(docs.docs, docs.key).units}
    out: dict[tuple, dict] = {}

    def consider(h: dict, rank: float) -> None:
        key = (h["doc_id"], h["anchor"])
        u = units.get(key)
        if key in out or u is None:
            return
        match = _Text(u.match_text)
        held = [t for t in keys if match.has(t, loose=False)] if h["coverage"] > 0 else []  # coverage 0: found by meaning alone
        if not held:
            # a section in the other language: it is one when half the key terms meet it through the dictionary
            met = [t for t in keys if match.translated(t)]
            held = met if len(met) >= bilingual.BRIDGE_COVERAGE * len(keys) else []
        if held:
            out[key] = {**h, "rank": rank, "held": held}

    for i, h in enumerate(hits):
        consider(h, i)
    for t in keys:  # a key term no hit holds: the sections holding it, searched for alone
        if any(t in c["held"] for c in out.values()):
            continue
        try:
            alone = search_docs(settings, user, t if not q.phrases or t not in q.phrases else f'"{t}"', selection=selection,
                                k=TERM_K, mode="bm25")
        except KBQueryError:
            continue
        for j, h in enumerate(alone):
            consider(h, SEARCH_K + j)
    return sorted(out.values(), key=lambda c: c["rank"]), found["notice"]


def _read(settings, user, candidates: list[dict], keys: list[str], budget: int, *, selection):
    """Read sections while they fit, the search's best first, then those adding key terms not read yet; returns (read
    pages, {key term: (doc_id, anchor)} of terms only in candidates that did not fit)."""
    read: list[dict] = []
    left = budget
    pool = list(candidates)
    extra = 0
    while pool and len(read) < MAX_SECTIONS and left >= MIN_PAGE:
        have = {t for r in read for t in keys if r["match"].has(t)}
        if not read:  # the search's best first: on RGB's hard negatives (they share the question's words) the
            # section holding most key terms was first read, and the answer hit 0.90; the search's best: 0.93
            best = min(pool, key=lambda c: c["rank"])
        else:
            best = max(pool, key=lambda c: (len(set(c["held"]) - have), -c["rank"]))
        if read and not (set(best["held"]) - have):  # nothing new: only a few as strong as the best read
            if extra >= MAX_EXTRA or len(best["held"]) < max(len(r["held"]) for r in read):
                break
            extra += 1
        pool.remove(best)
        page = _best_page(settings, user, best, keys, left, selection=selection)
        if page is None:
            continue
        read.append(page)
        left -= page["tokens"]
    have = {t for r in read for t in keys if r["match"].has(t)}
    unread = {}
    for c in pool:
        for t in c["held"]:
            if t not in have:
                unread.setdefault(t, (c["doc_id"], c["anchor"]))
    return read, unread


def _best_page(settings, user, cand: dict, keys: list[str], left: int, *, selection) -> dict | None:
    """The section whole when it fits in ``left`` tokens, else its page (of at most ``left`` tokens) holding the
    most key terms; None when not even one page fits."""
    size = min(left, 8000)
    if size < MIN_PAGE:
        return None
    try:
        page = read_section(settings, user, cand["doc_id"], cand["anchor"], page_tokens=size, selection=selection)
        best, best_score = page, _page_score(page, keys)
        walked = 1
        while page["next_cursor"] and walked < MAX_PAGE_WALK:
            page = read_section(settings, user, cand["doc_id"], cand["anchor"], cursor=page["next_cursor"], selection=selection)
            walked += 1
            score = _page_score(page, keys)
            if score > best_score:
                best, best_score = page, score
    except KBQueryError:  # unpublished, edited or deselected since the search: not readable now, so not cited
        return None
    if best["tokens"] > left:
        return None
    return {**best, "match": _Text("\n".join([best["title"], *best["path"], best["section"] or "", best["text"]])), "held": cand["held"],
            "rank": cand["rank"]}


def _page_score(page: dict, keys: list[str]) -> int:
    m = _Text(page["text"])
    return sum(2 if m.has(t, loose=False) else 1 if m.has(t) else 0 for t in keys)


def _missing_text(zh: bool, absent: list[str], over: dict[str, tuple]) -> str | None:
    parts = []
    absent = absent[:MAX_NAMED] + (["…"] if len(absent) > MAX_NAMED else [])
    if absent:
        if zh:
            parts.append("知识库中没有关于" + "".join(f"「{t}」" for t in absent) + "的内容。")
        else:
            parts.append("The knowledge base has nothing on " + ", ".join(f"“{t}”" for t in absent) + ".")
    if over:
        if zh:
            parts.append("".join(f"「{t}」" for t in over) + "只出现在本答案未采用的章节中（pointers 里 cited 为 false 的章节）。")
        else:
            parts.append(", ".join(f"“{t}”" for t in over) + " only in sections this answer does not use (the pointers with cited false).")
    return " ".join(parts) or None


def _scattered_text(zh: bool, keys: list[str]) -> str:
    named = keys[:MAX_NAMED] + (["…"] if len(keys) > MAX_NAMED else [])
    if zh:
        return "知识库中没有同时讲到" + "".join(f"「{t}」" for t in named) + "的章节，只有零散提到其中个别词的内容。"
    return "No section of the knowledge base speaks of " + ", ".join(f"“{t}”" for t in named) + " together, only of a word or two apart."


def _source_line(n, r: dict, zh: bool) -> str:
    a, b = r["lines"]
    where = f"第{a}–{b}行" if zh else f"lines {a}-{b}"
    return f"[{n}] 《{r['title']}》#{r['anchor']}，{where}" if zh else f"[{n}] {r['title']} #{r['anchor']}, {where}"


def _citation(r: dict) -> dict:
    return {"doc_id": r["doc_id"], "title": r["title"], "anchor": r["anchor"], "section": r["section"], "lines": list(r["lines"])}


# -- extractive ---------------------------------------------------------------------------------------------------
def _extractive(q: Query, keys: list[str], read: list[dict], zh: bool, budget: int, gaps) -> dict:
    """The read pages' sentences holding the most key terms, the first section's best first and the others in
    reading order, each cited, then the statement of what the cited sections do not cover; {answer, missing,
    cited}, the answer within ``budget`` tokens."""
    qterms = set(q.terms)
    scored = []  # (score, section index, position, sentence)
    for si, r in enumerate(read):
        heading = _Text(r["section"] or "")
        titled = [t for t in keys if heading.has(t, loose=False)]  # what the section's own title says it is about
        pos = 0
        for line in r["text"].split("\n"):
            if not line.strip() or line.lstrip().startswith("#"):
                continue  # headings name the section; the sources say it
            body = _LIST_MARK.sub("", line).strip()
            for s in sentences(body):
                m = _Text(s)
                exact = sum(1 for t in keys if m.has(t, loose=False))
                loose = sum(1 for t in keys if m.has(t)) - exact
                overlap = len(qterms & set(kb_terms(s))) / (len(qterms) or 1)
                by_title = sum(1 for t in titled if not m.has(t, loose=False))
                score = 2.0 * exact + 0.5 * loose + 1.0 * by_title + overlap
                # a sentence in the other language: half the key terms meet it through the dictionary
                crossed = not exact and 2 * sum(1 for t in keys if m.translated(t)) >= len(keys)
                if exact or by_title or overlap >= 0.3 or crossed:
                    text = s if len(s) <= SENTENCE_CHARS else window(s, q, SENTENCE_CHARS)
                    scored.append((score, si, pos, text))
                pos += 1
    by_score = sorted(scored, key=lambda x: (-x[0], x[1], x[2]))
    firsts: dict[int, tuple] = {}
    for item in by_score:  # each section's best sentence first, then the rest by score
        firsts.setdefault(item[1], item)
    ranked = list(firsts.values()) + [x for x in by_score if x is not firsts[x[1]]]
    chosen: list[tuple] = []
    best: tuple[str, list[dict], str | None] | None = None
    seeds = list(firsts.values())
    # The answer leads with the best sentence of the section read first (the one citation [1] names), the others follow
    # in reading order: the first line is what a caller with a small budget reads. `agentos bench beir` on CMRC2018: in
    # reading order alone the first line held the answer for 0.265 of the questions, led this way 0.750; led by the
    # best sentence of any section read 0.746, with [1] then a relevant passage less often (0.956 against 0.977)
    lead = next((x for x in by_score if x[1] == 0), by_score[0]) if by_score else None

    def in_order(items: list[tuple]) -> list[tuple]:
        return sorted(items, key=lambda x: (x is not lead, x[1], x[2]))

    for n in range(len(seeds), 1, -1):  # one sentence from each of several sections first, when they fit together
        trial = _compose(in_order(seeds[:n]), read, zh, gaps)
        if count_tokens(trial[0]) <= budget:
            chosen, best = seeds[:n], trial
            break
    for item in ranked:
        if len(chosen) >= MAX_SENTENCES:
            break
        if any(item[3] == c[3] for c in chosen):
            continue
        trial = _compose(in_order([*chosen, item]), read, zh, gaps)
        if count_tokens(trial[0]) <= budget:
            chosen.append(item)
            best = trial
    if best is None:  # not even one sentence fits: point to the sections instead, as many as fit
        head = "相关章节：\n" if zh else "Relevant sections:\n"
        for n in range(len(read), 0, -1):
            cited = read[:n]
            missing = gaps(cited)[1]
            text = "\n\n".join(x for x in [head + "\n".join(_source_line(i + 1, r, zh) for i, r in enumerate(cited)), missing] if x)
            if count_tokens(text) <= budget or n == 1:
                best = (text, cited, missing)
                break
    return {"answer": best[0], "cited": best[1], "missing": best[2]}


def _compose(items: list[tuple], read: list[dict], zh: bool, gaps) -> tuple[str, list[dict], str | None]:
    order: list[int] = []
    for it in items:
        if it[1] not in order:
            order.append(it[1])
    number = {si: n + 1 for n, si in enumerate(order)}
    cited = [read[si] for si in order]
    missing = gaps(cited)[1]
    lines = [f"{it[3]} [{number[it[1]]}]" for it in items]
    sources = [_source_line(number[si], read[si], zh) for si in order]
    parts = ["\n".join(lines), ("来源：\n" if zh else "Sources:\n") + "\n".join(sources), missing]
    return "\n\n".join(p for p in parts if p), cited, missing


# -- with a chat model --------------------------------------------------------------------------------------------
def _llm_answer(client, question: str, read: list[dict], zh: bool, budget: int, gaps) -> dict:
    """The model's answer from the read sections; LLMError when it cannot be used as it is."""
    # lazy: kernel.llm pulls httpx: only when this runs
    from agentos_mem.kernel.llm import LLMError

    ids = {f"S{i + 1}": r for i, r in enumerate(read)}
    blocks = []
    for sid, r in ids.items():
        a, b = r["lines"]
        head = " › ".join([r["title"], *[p for p in r["path"] if p != r["title"]], *([r["section"]] if r["section"] and r["section"] != r["title"] else [])])
        blocks.append(f"[{sid}] {head} (#{r['anchor']}, lines {a}-{b})\n{r['text'].strip()}")
    prompt = f"Question: {question}\n\nSections:\n\n" + "\n\n".join(blocks)
    data = client.complete_json(SYSTEM_PROMPT, prompt)
    if not isinstance(data, dict):
        raise LLMError("model answer is not a JSON object")
    text = data.get("answer")
    if not isinstance(text, str) or not text.strip():
        raise LLMError("model answer has no 'answer' text")
    cites = data.get("citations")
    if isinstance(cites, str):
        cites = [cites]
    if not isinstance(cites, list) or not cites or not all(isinstance(c, str) for c in cites):
        raise LLMError("model answer cites no section")
    norm = [c.strip().strip("[]#").upper() for c in cites]
    bad = [c for c, n in zip(cites, norm) if n not in ids]
    if bad:
        raise LLMError(f"model cited {', '.join(map(repr, bad))}, not one of the sections it was given ({', '.join(ids)})")
    used = list(dict.fromkeys(norm))
    cited = [ids[s] for s in used]
    model_missing = data.get("missing")
    if model_missing is not None and not isinstance(model_missing, str):
        raise LLMError("model answer's 'missing' is not text")
    missing = gaps(cited)[1]
    if model_missing and model_missing.strip().casefold().strip("。. ") not in ("", "none", "null", "n/a", "无", "没有", "nothing"):
        missing = " ".join(x for x in (missing, model_missing.strip()) if x)
    sources = [f"[{sid}] " + _source_line(0, ids[sid], zh).split("] ", 1)[1] for sid in used]
    body = "\n\n".join(x for x in [text.strip(), ("来源：\n" if zh else "Sources:\n") + "\n".join(sources), missing] if x)
    if count_tokens(body) > budget:
        raise LLMError(f"model answer is longer than the budget of {budget} tokens")
    return {"answer": body, "cited": cited, "missing": missing}
