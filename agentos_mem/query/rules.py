"""L0 hard constraints from the workspace's SOUL.md: parsed, cached, and checked against a request.

Format (plain Markdown, readable in Obsidian). Under the heading whose text contains "L0":

    ## L0 硬约束 / Hard constraints

    1. 绝不泄露密钥、密码或令牌。Never reveal secrets, passwords or tokens.
       - blocks: 密码, 密钥, api key, password, `删除*记忆`, delete * memories, /\\bsecrets?\\b/

* Each numbered item (``1. ...``) is a rule; its line is the text shown to agents with every answer.
* An indented ``- blocks:`` (or ``- 拦截:``) bullet lists request phrases the rule forbids, separated
  by ``,`` ``，`` or ``、``, each optionally in backticks (so Markdown leaves ``*`` alone). No such
  line: the rule is still a constraint (shown with every answer), it just never blocks.
* Phrases match the request after ``kernel.text.fold_request`` (NFKC, characters that render as nothing removed,
  letters spaced one by one joined) + casefold. A phrase with CJK characters matches as a
  substring (spaces in it are optional); a Latin phrase matches whole words only ("token" does not
  match "tokenizer", but does match "我的token"). ``*`` is any run of characters (``删除*记忆``);
  a space beside it is a word edge (``delete * memories`` matches "delete memories", not "deleted").
* ``/regex/`` is a case-insensitive Python regex. An invalid one raises ``RulesError`` (file:line). A user's regex
  runs with a bound, since one rule must never hang every query (``/(x+x+)+y/`` against 44 x's once did): a pattern
  of a catastrophic shape (a repetition inside a repetition) is not used, and the answer's notices name it
  (file:line); the others run through the ``regex`` module with a time limit per request, on at most
  ``RULE_INPUT_CHARS`` characters, and one that runs out of time is not applied to that request, with a notice.
* A rule that blocks a secret (a phrase naming one: password, 密码, api key ...) blocks every request for
  one, however it is worded: ``safety.secrets.asks_for_secret`` knows the cues of both languages ("pass word",
  "口令", "PIN", "验证码", "GitHub token"), so "我的口令是什么" is refused like "我的密码是什么".

``check_request`` is what every read path calls (query, fact lookup, recall, raw reads, the knowledge base,
the MCP tools): the rules of the workspace's SOUL.md, checked against the request.

Stdlib only (plus ``kernel.text``, and the ``regex`` module for users' regexes: its per-search timeout); no Prefect:
the query path calls this before anything else.
"""

from __future__ import annotations

import functools
import logging
import os
import re
from dataclasses import dataclass
from pathlib import Path

from agentos_mem.kernel.files import UnsafePath, guard
from agentos_mem.kernel.text import CJK, fold_request, nfkc
from agentos_mem.kernel.workspace import Workspace
from agentos_mem.safety.secrets import asks_for_secret

log = logging.getLogger(__name__)

_HEADING = re.compile(r"^(#{1,6})\s+(.*)$")
_NUMBERED = re.compile(r"^\s{0,3}(\d+)[.)]\s+(.+?)\s*$")
# The sub-bullet; a full-width colon is accepted too, since it is what a Chinese keyboard types.
_BLOCKS = re.compile(r"^\s*[-*+]\s*(?:blocks|拦截)\s*[:：]\s*(.*?)\s*$", re.IGNORECASE)
# An item may be wrapped in backticks, so Obsidian shows `删除*记忆` as written instead of italics.
# A /regex/ item runs to the first "/" that is followed by a separator or the end, so the regex itself
# may contain "," or "/"; a plain item runs to the next separator.
_QUOTED_ITEM = re.compile(r"\s*`([^`]+)`\s*(?:[,，、]|\Z)")
_REGEX_ITEM = re.compile(r"\s*(/.+?/)\s*(?:[,，、]|\Z)")
_PLAIN_ITEM = re.compile(r"([^,，、]*)(?:[,，、]|\Z)")
_CJK_CHAR = re.compile(f"[{CJK}]")
# A letter or digit of a Latin-style word: \w (Unicode) minus CJK. Chinese glues English words to its own
# characters ("我的API key是多少"), so a Han character next to a Latin phrase must not count as "inside a word".
_WORD = rf"[^\W{CJK}]"


@dataclass(frozen=True)
class Rule:
    number: int
    text: str
    blocks: tuple[str, ...]
    line: int
    unusable: tuple[str, ...] = ()  # "file:line: why" for each blocks phrase that is not used (a catastrophic regex)
    source: str = "SOUL.md"


# A user's /regex/ runs on at most this many characters of a request, for at most this long (seconds): far more than
# any sane rule needs (they run in microseconds), and short enough that a pathological one costs a query nothing.
RULE_INPUT_CHARS = 4000
RULE_TIMEOUT_S = 0.05


class RulesError(ValueError): """A SOUL.md that cannot be read or a ``blocks:`` entry that cannot be compiled."""


def _normal(text: str) -> str:
    # One form for phrases and requests alike: full-width "ＡＰＩ ＫＥＹ" and "api key" are the same.
    return nfkc(text).casefold()


def _is_regex(phrase: str) -> bool:
    return len(phrase) > 2 and phrase.startswith("/") and phrase.endswith("/")


def _unbounded_shape(items, inside: bool = False) -> str | None:
    """Why a parsed regex can take exponential time, or None: a repetition (``+``, ``*``, ``{2,}``) whose body holds
    another repetition of varying length, the shape of ``(x+x+)+``, ``(a*)*``, ``(\w+\s?)+``. ``inside``: already within a
    repetition, so any repetition found is the nested one. Alternation overlap (``(a|aa)+``) is left to the time limit."""
    from re import _constants as c  # the stdlib's own regex parser: the same syntax `re` compiles

    for op, av in items:
        if op in (c.MAX_REPEAT, c.MIN_REPEAT, getattr(c, "POSSESSIVE_REPEAT", None)):
            low, high, body = av
            many = high > 1  # MAXREPEAT (unbounded) included
            if many and inside and low != high:  # a fixed count inside (\d{3}) gives the outer one no choice to undo
                return "a repetition inside a repetition"
            why = _unbounded_shape(body, inside=inside or many)
            if why:
                return why
        elif op is c.SUBPATTERN:
            why = _unbounded_shape(av[-1], inside)
            if why:
                return why
        elif op is c.BRANCH:
            for branch in av[1]:
                why = _unbounded_shape(branch, inside)
                if why:
                    return why
        elif op in (c.ASSERT, c.ASSERT_NOT):
            why = _unbounded_shape(av[1], inside)
            if why:
                return why
    return None


def catastrophic(pattern: str) -> str | None:
    """Why the regex ``pattern`` (without its slashes) may backtrack exponentially, or None when its shape is safe."""
    from re import _parser

    try:
        return _unbounded_shape(_parser.parse(pattern, re.IGNORECASE | re.DOTALL))
    except re.error:
        return None  # the compile reports it


def _user_regex(pattern: str):
    """A user's regex as the ``regex`` module compiles it (it takes a timeout per search), else the stdlib's
    (the shape check and the input cap then bound it)."""
    try:
        import regex
    except ImportError:  # pragma: no cover - installed with the project
        return re.compile(pattern, re.IGNORECASE | re.DOTALL)
    try:
        return regex.compile(pattern, regex.IGNORECASE | regex.DOTALL | regex.V0)
    except regex.error as e:
        raise re.error(str(e)) from None


def _search(pattern, text: str):
    """``pattern.search(text)`` bounded: a user's regex gets at most RULE_INPUT_CHARS characters and RULE_TIMEOUT_S
    seconds (TimeoutError past it)."""
    if isinstance(pattern, re.Pattern):  # the phrases the project writes itself (and a regex without the module)
        return pattern.search(text)
    return pattern.search(text[:RULE_INPUT_CHARS], timeout=RULE_TIMEOUT_S)


@functools.lru_cache(maxsize=1024)
def _compile(phrase: str):
    """The pattern for one phrase as written in SOUL.md (cached: check() runs on every request)."""
    if _is_regex(phrase):
        return _user_regex(phrase[1:-1])
    p = _normal(phrase).strip()
    cjk = bool(_CJK_CHAR.search(p))
    out = []
    # Split on "*" keeping the spaces around it: a space next to "*" in a Latin phrase means a word
    # ends (or starts) there, so "delete * memories" matches "delete memories" but not "deleted memories".
    for part in re.split(r"(\s*\*\s*)", p):
        if "*" in part:
            spaced_left, spaced_right = part[:1].isspace(), part[-1:].isspace()
            out.append((f"(?!{_WORD})" if spaced_left and not cjk else "") + ".*?"
                       + (f"(?<!{_WORD})" if spaced_right and not cjk else ""))
        else:
            # Chinese is usually written without spaces, so inside a CJK phrase a space is optional.
            out.append((r"\s*" if cjk else r"\s+").join(re.escape(w) for w in part.split()))
    body = "".join(out)
    if not cjk:
        # Unicode word boundaries (never [A-Za-z]): "token" must not match "tokenizer" or "tokén".
        body = f"(?<!{_WORD}){body}(?!{_WORD})"
    return re.compile(body, re.DOTALL)


def _split_phrases(entry: str) -> list[str]:
    out, i = [], 0
    while i < len(entry):
        m = _QUOTED_ITEM.match(entry, i) or _REGEX_ITEM.match(entry, i) or _PLAIN_ITEM.match(entry, i)
        out.append(m.group(1).strip())
        i = m.end()
    return [p for p in out if p]


def parse_rules(text: str, source: str = "SOUL.md") -> list[Rule]:
    """The numbered rules under the L0 heading(s), in order, with their ``blocks:`` phrases compiled-checked."""
    rules: list[dict] = []
    l0_level = 0  # heading level of the L0 section we are in; 0 = outside it
    fenced = False
    for lineno, line in enumerate(text.splitlines(), 1):
        if line.lstrip().startswith(("```", "~~~")):
            fenced = not fenced  # an example inside a code fence is not a rule
            continue
        if fenced:
            continue
        if h := _HEADING.match(line):
            level = len(h.group(1))
            if "l0" in h.group(2).casefold():
                l0_level = level
            elif l0_level and level <= l0_level:
                l0_level = 0  # a sibling heading (e.g. "## L1") ends the section; "### ..." stays inside
            continue
        if not l0_level:
            continue
        if b := _BLOCKS.match(line):
            if not rules:
                raise RulesError(f"{source}:{lineno}: 'blocks:' line before any numbered rule")
            for phrase in _split_phrases(b.group(1)):
                try:
                    pattern = _compile(phrase)
                except re.error as e:
                    raise RulesError(f"{source}:{lineno}: invalid regex {phrase}: {e}") from None
                why = catastrophic(phrase[1:-1]) if _is_regex(phrase) else None
                if why:  # never run: one such rule would hang every query; the rest of the rules still apply
                    rules[-1]["unusable"].append(f"{source}:{lineno}: the regex {phrase} is not used: {why} can take "
                                                 "exponential time on some requests; rewrite it without one")
                    continue
                # "*" or "/.*/" alone would block every request: surely a typo, so say so now.
                if _search(pattern, ""):
                    raise RulesError(f"{source}:{lineno}: phrase {phrase!r} matches an empty request")
                rules[-1]["blocks"].append(phrase)
        elif n := _NUMBERED.match(line):
            rules.append({"number": int(n.group(1)), "text": n.group(2), "blocks": [], "line": lineno, "unusable": []})
    return [Rule(r["number"], r["text"], tuple(r["blocks"]), r["line"], tuple(r["unusable"]), source) for r in rules]


# path -> ((mtime_ns, size), rules). Keyed by path so an edited file replaces its entry instead of piling up.
_cache: dict[str, tuple[tuple[int, int], list[Rule]]] = {}


def load_rules(path: Path) -> list[Rule]:
    """The L0 rules of the SOUL.md at ``path``; ``[]`` when it does not exist. Re-read only when it changed."""
    path = Path(path)
    below = guard(path)
    try:
        below.check(path)  # 01_core or SOUL.md as a link (or a FIFO): named, never read
        st = os.stat(path)
    except FileNotFoundError:
        return []
    except UnsafePath as e:
        raise RulesError(str(e)) from None
    key, stamp = str(path.resolve()), (st.st_mtime_ns, st.st_size)
    hit = _cache.get(key)
    if hit and hit[0] == stamp:
        return list(hit[1])  # a copy: a caller appending to it must not change the cache
    try:
        text = below.read_bytes(path).decode("utf-8-sig")  # -sig: tolerate the BOM some Windows editors add
    except UnicodeDecodeError as e:
        raise RulesError(f"{path}: not valid UTF-8 (byte {e.start})") from None
    rules = parse_rules(text, str(path))
    _cache[key] = (stamp, rules)
    return list(rules)


def check(rules: list[Rule], request: str, notices: list[str] | None = None) -> tuple[Rule, str] | None:
    """The first rule (in order) that forbids ``request``, with the phrase that matched; None if none does.

    A request for a secret in words no phrase lists ("pass word", "口令") is forbidden by the rule that keeps
    secrets (``secret_rule``), the matched "phrase" then being the secret cue it named. ``notices``: where to say
    which rules could not be used (a catastrophic regex, one that ran out of time on this request); they are
    logged as warnings too."""
    # The request as its reader sees it: zero-width characters, letters spaced one by one and full-width forms do
    # not get past a rule ("pass\u200bword", "p a s s w o r d", "ｐａｓｓｗｏｒｄ" are "password").
    request = fold_request(request)
    req = _normal(request)
    cue = asks_for_secret(request)
    said = notices if notices is not None else []
    for rule in rules:
        for line in rule.unusable:
            _warn(said, line)
        for phrase in rule.blocks:
            try:
                found = _search(_compile(phrase), req)
            except TimeoutError:
                _warn(said, f"{rule.source}: L0 rule {rule.number} (line {rule.line}): the regex {phrase} did not finish "
                            f"within {RULE_TIMEOUT_S:g} s on this request and was not applied; rewrite it")
                continue
            if found:
                if cue is None and _names_a_secret(phrase):
                    continue  # "如何重置密码" names the word, and asks how, not for a password
                return rule, phrase
    if cue:
        rule = secret_rule(rules)
        if rule is not None:
            return rule, cue
    return None


def _warn(notices: list[str], line: str) -> None:
    if line not in notices:
        notices.append(line)
        log.warning("%s", line)


def _names_a_secret(phrase: str) -> bool:
    """A plain phrase that is only a secret's name ("密码", "api key"): it blocks requests for that secret."""
    return not (phrase.startswith("/") and phrase.endswith("/")) and "*" not in phrase and asks_for_secret(phrase) is not None


def secret_rule(rules: list[Rule]) -> Rule | None:
    """The first rule whose ``blocks:`` name a secret (password, 密码, api key ...), or None."""
    for rule in rules:
        if any(not (p.startswith("/") and p.endswith("/")) and asks_for_secret(p) for p in rule.blocks):
            return rule
    return None


@dataclass(frozen=True)
class Refusal:
    """A request an L0 rule forbids: what every read path answers instead of reading anything."""

    rule: Rule
    phrase: str

    @property
    def rule_text(self) -> str:
        return f"L0 rule {self.rule.number}: {self.rule.text}"

    @property
    def notice(self) -> str:
        return f"blocked by SOUL.md L0 rule {self.rule.number} (matched {self.phrase!r})"

    def as_dict(self) -> dict:
        return {"status": "blocked", "rule": self.rule_text, "notices": [self.notice]}


def check_request(home: Path, request: str) -> Refusal | None:
    """The L0 check of a read path: the workspace's SOUL.md rules (``home`` is AGENTOS_HOME) against ``request``."""
    if not isinstance(request, str) or not request.strip():
        return None
    hit = check(load_rules(Workspace(home).core / "SOUL.md"), request)
    return Refusal(*hit) if hit else None
