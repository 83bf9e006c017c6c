"""Markdown structure of a knowledge document: a heading tree with stable anchors, line ranges and sizes.

``parse_outline(text)`` reads Markdown (or plain UTF-8 text with ``markdown=False``) into an ``Outline``:
one ``Section`` per heading, in document order, plus a synthetic *preamble* section (level 0, anchor
``PREAMBLE_ANCHOR`` = ``"_preamble"``) holding any non-blank text before the first heading. A document
without headings (a ``.txt`` file, or Markdown without any) is one preamble section covering every line.

Headings follow CommonMark 0.31 (ATX and Setext, never inside fenced or indented code, HTML blocks or YAML
frontmatter). Headings inside list items count (renderers give them anchors, and the Vue docs use them);
headings inside block quotes do not (quoted material, not the document's structure). YAML frontmatter is
a ``---`` first line, a closing ``---``/``...`` line and content that is empty or opens with a
``key:`` line (so a thematic break followed by a Setext heading is not mistaken for it). Inline markup
in heading text is reduced to the plain text a renderer shows (emphasis, code spans, inline links and
reference links whose label the document defines, images, raw HTML, entities), and anchors are made from
that text the way GitHub does (``Slugger``): lower-case; everything but letters, marks, decimal and
letter numbers, connector punctuation (``_``), ``-`` and spaces dropped; spaces to ``-``; CJK kept;
duplicates suffixed ``-1``, ``-2`` ... in document order.

Explicit anchors: a heading ending in ``{#custom-id}`` (the Vue/VitePress convention; extra attributes
after the id, as in ``{#id .cls}``, are allowed) gets ``custom-id`` as its anchor, verbatim, and the
``{...}`` is dropped from the title. Explicit ids are reserved before any slug is assigned, so a slugged
heading never takes one of them (it gets a ``-N`` suffix instead), whatever the order. A repeated explicit
id gets ``-1``, ``-2`` suffixes like a repeated slug. A heading whose slug is empty (say, only emoji) gets
``section`` as its base. ``_preamble`` is reserved too.

Stability of anchors under edits:
- Editing a section's body never changes any anchor (anchors depend on heading text only), unless the
  edit changes what is a heading (say, leaves a code fence unclosed) or defines a link label a heading
  uses as ``[label]``.
- Explicit ``{#id}`` anchors never change, whatever is edited, added or removed around them.
- Adding a section whose slug is new (not equal to an existing slug or an existing ``base-N`` suffix
  form) leaves every other anchor unchanged; removing a uniquely titled section likewise.
- Duplicate suffixes depend on order, exactly as on GitHub: inserting a heading with the same text as a
  later one (``Example`` before the third ``Example``) shifts the suffixes of the later duplicates, and
  so does a new heading whose slug equals a later ``base-N`` form. Give such headings an explicit
  ``{#id}`` where links must not move. Compatibility with GitHub's anchors (links written by people keep
  resolving) is chosen over suffixes that never shift.

Line numbers are 1-based and count every physical line of the file (frontmatter included, so they match
an editor). ``line_end`` is the line before the next heading of any level; ``subtree_end`` the line
before the next heading of the same or a higher level (both: the file's last line at the end).
``tokens`` is ``kernel.text.count_tokens`` (CJK characters plus other words) of the section's own lines
(``line_start``..``line_end``); ``subtree_tokens`` of ``line_start``..``subtree_end``.
"""

from __future__ import annotations

import html
import re
import unicodedata
from dataclasses import asdict, dataclass, field
from pathlib import Path

from kernel.text import count_tokens

PREAMBLE_ANCHOR = "_preamble"
EMPTY_SLUG_BASE = "section"
MARKDOWN_SUFFIXES = frozenset({".md", ".markdown", ".mdx", ".mdown", ".mkd"})

__all__ = [
    "PREAMBLE_ANCHOR",
    "Heading",
    "Outline",
    "Section",
    "Slugger",
    "github_slug",
    "heading_text",
    "outline_markdown",
    "parse_file",
    "parse_headings",
    "parse_outline",
]


# -- GitHub slugs -----------------------------------------------------------------------------------------
# github-slugger (what GitHub's renderer does): lower-case, drop everything that is not \p{Word} (letters,
# marks, decimal and letter numbers, connector punctuation), '-' or ' ', then ' ' -> '-'.
_OTHER_ALPHABETIC_SYMBOLS = ((0x24B6, 0x24E9), (0x1F130, 0x1F149), (0x1F150, 0x1F169), (0x1F170, 0x1F189))


def _slug_keeps(ch: str) -> bool:
    if ch in " -":
        return True
    cat = unicodedata.category(ch)
    if cat[0] in "LM" or cat in ("Nd", "Nl", "Pc"):
        return True
    cp = ord(ch)
    return cat == "So" and any(lo <= cp <= hi for lo, hi in _OTHER_ALPHABETIC_SYMBOLS)


class _SlugTable(dict):
    """``str.translate`` table filled on demand: code point -> itself (kept) or None (dropped)."""

    def __missing__(self, cp: int) -> str | None:
        ch = chr(cp)
        value = ch if _slug_keeps(ch) else None
        if len(self) < 200_000:
            self[cp] = value
        return value


_SLUG_TABLE = _SlugTable()


def github_slug(text: str, maintain_case: bool = False) -> str:
    """One heading text -> its slug, without duplicate handling (``Slugger.slug`` adds that)."""
    if not maintain_case:
        text = text.lower()
    return text.translate(_SLUG_TABLE).replace(" ", "-")


class Slugger:
    """GitHub's slugger: one instance per document; a repeated slug gets ``-1``, ``-2``, ... in order."""

    def __init__(self) -> None:
        self.occurrences: dict[str, int] = {}

    def slug(self, value: str, maintain_case: bool = False) -> str:
        return self.unique(github_slug(value, maintain_case))

    def unique(self, base: str) -> str:
        result = base
        while result in self.occurrences:
            self.occurrences[base] = self.occurrences.get(base, 0) + 1
            result = f"{base}-{self.occurrences[base]}"
        self.occurrences[result] = 0
        return result

    def reserve(self, name: str) -> None:
        """Mark ``name`` as taken (an explicit anchor): a later equal slug gets a suffix."""
        self.occurrences.setdefault(name, 0)

    def reset(self) -> None:
        self.occurrences.clear()


# -- inline Markdown -> plain text ---------------------------------------------------------------------------
_ESCAPABLE = frozenset("!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~")
_ENTITY = re.compile(r"&(?:#[0-9]{1,7}|#[xX][0-9a-fA-F]{1,6}|[A-Za-z][A-Za-z0-9]{1,31});")
_AUTOLINK = re.compile(
    r"<([A-Za-z][A-Za-z0-9+.\-]{1,31}:[^\s<>]*|[a-zA-Z0-9.!#$%&'*+/=?^_`{|}~\-]+@[a-zA-Z0-9]"
    r"(?:[a-zA-Z0-9\-]{0,61}[a-zA-Z0-9])?(?:\.[a-zA-Z0-9](?:[a-zA-Z0-9\-]{0,61}[a-zA-Z0-9])?)*)>"
)
_ATTR = r"""(?:\s+[A-Za-z_:][A-Za-z0-9_.:\-]*(?:\s*=\s*(?:[^\s"'=<>`]+|'[^']*'|"[^"]*"))?)"""
_OPEN_TAG = rf"<[A-Za-z][A-Za-z0-9\-]*{_ATTR}*\s*/?>"
_CLOSE_TAG = r"</[A-Za-z][A-Za-z0-9\-]*\s*>"
_INLINE_HTML = re.compile(
    rf"{_OPEN_TAG}|{_CLOSE_TAG}|<!---?>|<!--[\s\S]*?-->|<\?[\s\S]*?\?>|<![A-Za-z][^>]*>|<!\[CDATA\[[\s\S]*?\]\]>"
)
_REF_LABEL = re.compile(r"\[((?:[^\[\]\\]|\\.){0,999})\]")
_REF_DEF = re.compile(
    r"""\[((?:[^\[\]\\]|\\.){0,999})\]:[ \t]*(?:<[^<>\n]*>|[^\s<]\S*)(?:[ \t]+(?:"[^"]*"|'[^']*'|\([^()]*\)))?[ \t]*$"""
)
_PLAIN_RUN = re.compile(r"[^\\`<&\[!*_~]*")
_code_close_cache: dict[int, re.Pattern] = {}


def _is_punct(ch: str) -> bool:
    return unicodedata.category(ch)[0] in "PS"


def _code_close(run: int) -> re.Pattern:
    pat = _code_close_cache.get(run)
    if pat is None:
        pat = _code_close_cache[run] = re.compile(r"(?<!`)`{%d}(?!`)" % run)
    return pat


def _skip_code_span(s: str, i: int) -> int | None:
    """``s[i]`` starts a backtick run: the index after the closing run, or None when unclosed."""
    j = i
    while j < len(s) and s[j] == "`":
        j += 1
    m = _code_close(j - i).search(s, j)
    return m.end() if m else None


def _label_key(label: str) -> str:
    return " ".join(label.split()).casefold()


def _link_at(s: str, i: int, refs: frozenset[str] | set[str]) -> tuple[str, int] | None:
    """``s[i] == '['``: a link -> (its text, index after it), else None.

    Inline links ``[text](dest "title")``, and reference links (``[text][label]``, ``[text][]``,
    ``[label]``) whose label is among the document's definitions ``refs`` (normalised by ``_label_key``).
    """
    n = len(s)
    depth = 0
    j = i
    while j < n:
        ch = s[j]
        if ch == "\\":
            j += 2
            continue
        if ch == "`":
            end = _skip_code_span(s, j)
            if end is not None:
                j = end
                continue
            while j < n and s[j] == "`":
                j += 1
            continue
        if ch == "<":
            m = _INLINE_HTML.match(s, j) or _AUTOLINK.match(s, j)
            if m:
                j = m.end()
                continue
        if ch == "[":
            depth += 1
        elif ch == "]":
            depth -= 1
            if depth == 0:
                break
        j += 1
    if j >= n:
        return None
    text = s[i + 1 : j]
    if j + 1 < n and s[j + 1] == "(":
        p = j + 1
        depth = 0
        while p < n:
            ch = s[p]
            if ch == "\\":
                p += 2
                continue
            if ch == "(":
                depth += 1
            elif ch == ")":
                depth -= 1
                if depth == 0:
                    return text, p + 1
            p += 1
    if not refs:
        return None
    m = _REF_LABEL.match(s, j + 1)
    if m:  # full [text][label] or collapsed [text][]
        label = m.group(1) if m.group(1).strip() else text
        return (text, m.end()) if _label_key(label) in refs else None
    return (text, j + 1) if _label_key(text) in refs else None  # shortcut [label]


class _Delim:
    __slots__ = ("char", "count", "orig", "can_open", "can_close")

    def __init__(self, char: str, count: int, can_open: bool, can_close: bool) -> None:
        self.char, self.count, self.orig = char, count, count
        self.can_open, self.can_close = can_open, can_close


def heading_text(inline: str, refs: frozenset[str] | set[str] = frozenset()) -> str:
    """The plain text a renderer shows for inline Markdown (what GitHub slugs): markup removed.

    ``refs``: the document's link reference labels (``_label_key`` form), so ``[text][label]`` reads "text".
    """
    nodes: list[str | _Delim] = []
    buf: list[str] = []
    s, n, i = inline, len(inline), 0
    while i < n:
        c = s[i]
        if c == "\\":
            nxt = s[i + 1] if i + 1 < n else ""
            if nxt in _ESCAPABLE and nxt:
                buf.append(nxt)
                i += 2
            elif nxt == "\n":  # hard line break
                buf.append("\n")
                i += 2
            else:
                buf.append("\\")
                i += 1
            continue
        if c == "`":
            j = i
            while j < n and s[j] == "`":
                j += 1
            m = _code_close(j - i).search(s, j)
            if m:
                code = s[j : m.start()].replace("\r\n", " ").replace("\n", " ")
                if len(code) >= 2 and code[0] == " " and code[-1] == " " and code.strip(" "):
                    code = code[1:-1]
                buf.append(code)
                i = m.end()
            else:
                buf.append(s[i:j])
                i = j
            continue
        if c == "<":
            m = _AUTOLINK.match(s, i)
            if m:
                buf.append(m.group(1))
                i = m.end()
                continue
            m = _INLINE_HTML.match(s, i)
            if m:
                i = m.end()
                continue
        elif c == "&":
            m = _ENTITY.match(s, i)
            if m:
                buf.append(html.unescape(m.group()))
                i = m.end()
                continue
        elif c == "[" or (c == "!" and i + 1 < n and s[i + 1] == "["):
            start = i + 1 if c == "!" else i
            link = _link_at(s, start, refs)
            if link:
                buf.append(heading_text(link[0], refs))
                i = link[1]
                continue
        elif c in "*_~":
            j = i
            while j < n and s[j] == c:
                j += 1
            before = s[i - 1] if i > 0 else " "
            after = s[j] if j < n else " "
            left = not after.isspace() and (not _is_punct(after) or before.isspace() or _is_punct(before))
            right = not before.isspace() and (not _is_punct(before) or after.isspace() or _is_punct(after))
            if c == "_":
                can_open = left and (not right or _is_punct(before))
                can_close = right and (not left or _is_punct(after))
            else:
                can_open, can_close = left, right
            if c == "~" and j - i > 2:  # GFM strikethrough uses ~ or ~~ only
                can_open = can_close = False
            if buf:
                nodes.append("".join(buf))
                buf = []
            nodes.append(_Delim(c, j - i, can_open, can_close))
            i = j
            continue
        m = _PLAIN_RUN.match(s, i + 1)  # ordinary characters up to the next one that may start markup
        buf.append(s[i : m.end()])
        i = m.end()
    if buf:
        nodes.append("".join(buf))
    _match_emphasis([d for d in nodes if isinstance(d, _Delim)])
    return "".join(d if isinstance(d, str) else d.char * d.count for d in nodes)


def _match_emphasis(delims: list[_Delim]) -> None:
    """CommonMark's "process emphasis": matched delimiter characters are used up (count reduced).

    One stack of potential openers; the delimiters between a matched opener and closer leave it (they stay
    literal); ``bottom`` remembers where a failed search for a kind of closer stopped, keeping this linear.
    """
    openers: list[_Delim] = []
    bottom: dict[tuple[str, bool, int], int] = {}
    for closer in delims:
        while closer.can_close and closer.count > 0:
            key = (closer.char, closer.can_open, closer.orig % 3)
            low = min(bottom.get(key, 0), len(openers))
            found = -1
            for oi in range(len(openers) - 1, low - 1, -1):
                op = openers[oi]
                if op.char != closer.char:
                    continue
                if closer.char == "~":
                    if op.count == closer.count:
                        found = oi
                        break
                elif not (
                    (op.can_close or closer.can_open)
                    and (op.orig + closer.orig) % 3 == 0
                    and not (op.orig % 3 == 0 and closer.orig % 3 == 0)
                ):
                    found = oi
                    break
            if found < 0:
                bottom[key] = len(openers)
                break
            op = openers[found]
            use = closer.count if closer.char == "~" else (2 if op.count >= 2 and closer.count >= 2 else 1)
            op.count -= use
            closer.count -= use
            del openers[found + (1 if op.count else 0) :]  # those between stay literal
            for k, v in bottom.items():
                if v > len(openers):
                    bottom[k] = len(openers)
        if closer.can_open and closer.count > 0:
            openers.append(closer)


# -- block structure ------------------------------------------------------------------------------------------
_LINE_BREAK = re.compile(r"\r\n|\r|\n")
_ATX = re.compile(r"(#{1,6})(?:[ \t]+(.*))?$")
_ATX_CLOSE = re.compile(r"(?:^|[ \t]+)#+[ \t]*$")
_SETEXT = re.compile(r"(=+|-+)[ \t]*$")
_THEMATIC = re.compile(r"([-*_])(?:[ \t]*\1){2,}[ \t]*$")
_FENCE = re.compile(r"(`{3,}|~{3,})(.*)$")
_LIST_ITEM = re.compile(r"([-+*]|(\d{1,9})[.)])([ \t]+|$)")
_EXPLICIT = re.compile(r"[ \t]*\{[ \t]*#([^\s{}]+)(?:[ \t]+[^{}]*)?\}[ \t]*$")
_HTML1 = re.compile(r"<(?:script|pre|style|textarea)(?:[\s>]|$)", re.IGNORECASE)
_HTML1_END = re.compile(r"</(?:script|pre|style|textarea)>", re.IGNORECASE)
_HTML6_TAGS = (
    "address|article|aside|base|basefont|blockquote|body|caption|center|col|colgroup|dd|details|dialog|dir|"
    "div|dl|dt|fieldset|figcaption|figure|footer|form|frame|frameset|h1|h2|h3|h4|h5|h6|head|header|hr|html|"
    "iframe|legend|li|link|main|menu|menuitem|nav|noframes|ol|optgroup|option|p|param|search|section|"
    "summary|table|tbody|td|tfoot|th|thead|title|tr|track|ul"
)
_HTML6 = re.compile(rf"</?(?:{_HTML6_TAGS})(?:[ \t>]|/>|$)", re.IGNORECASE)
_HTML7 = re.compile(rf"(?:{_OPEN_TAG}|{_CLOSE_TAG})[ \t]*$")
_HTML_STARTS = (
    (re.compile(r"<!--"), re.compile(r"-->")),
    (re.compile(r"<\?"), re.compile(r"\?>")),
    (re.compile(r"<![A-Za-z]"), re.compile(r">")),
    (re.compile(r"<!\[CDATA\["), re.compile(r"\]\]>")),
)
_YAML_KEY = re.compile(r"""["']?[^\s:#"'][^:]*["']?[ \t]*:(?:[ \t]|$)""")


def _indent(line: str) -> tuple[int, str]:
    """Leading whitespace width in columns (tabs to the next multiple of 4) and the rest of the line."""
    col = 0
    for k, ch in enumerate(line):
        if ch == " ":
            col += 1
        elif ch == "\t":
            col += 4 - col % 4
        else:
            return col, line[k:]
    return col, ""


def _html_start(s: str, para_open: bool) -> re.Pattern | bool | None:
    """An HTML block starting at ``s``: its end pattern (types 1-5), True (6-7: ends at a blank line), None."""
    if not s.startswith("<"):
        return None
    if _HTML1.match(s):
        return _HTML1_END
    for start, end in _HTML_STARTS:
        if start.match(s):
            return end
    if _HTML6.match(s):
        return True
    if not para_open and _HTML7.match(s) and not _HTML1.match(s):
        return True
    return None


def _interrupts(s: str, rel: int) -> bool:
    """Would this line (``rel`` columns into its container) end a paragraph instead of continuing it?"""
    if rel >= 4 or not s:
        return False
    if s[0] == ">" or _ATX.match(s) or _THEMATIC.match(s):
        return True
    m = _FENCE.match(s)
    if m and not (m.group(1)[0] == "`" and "`" in m.group(2)):
        return True
    m = _LIST_ITEM.match(s)
    if m and s[m.end() :].strip() and (m.group(2) is None or int(m.group(2)) == 1):
        return True
    return _html_start(s, True) is not None


@dataclass
class Heading:
    """One heading as found in the text: 1-based first line (Setext: the text's first line) and last line."""

    level: int
    line: int
    end_line: int
    raw: str  # the heading's inline Markdown, explicit anchor removed
    text: str  # plain text (what GitHub slugs)
    explicit_anchor: str | None = None


def _frontmatter_end(lines: list[str]) -> int:
    """Number of lines taken by YAML frontmatter at the top (0 if none).

    ``---`` on line 1, a closing ``---`` or ``...`` line, and content that is empty or starts like a YAML
    mapping (``key: value``): so a thematic break followed by a Setext heading is not taken for it.
    """
    if not lines or lines[0].rstrip() != "---":
        return 0
    for k in range(1, len(lines)):
        if lines[k].rstrip() in ("---", "..."):
            body = [ln for ln in lines[1:k] if ln.strip() and not ln.lstrip().startswith("#")]
            return k + 1 if not body or _YAML_KEY.match(body[0]) else 0
    return 0


def _split_lines(text: str) -> list[str]:
    if text.startswith("\ufeff"):
        text = text[1:]
    lines = _LINE_BREAK.split(text)
    if lines and lines[-1] == "":
        lines.pop()
    return lines


def _make_heading(level: int, line: int, end_line: int, content: str) -> Heading:
    explicit = None
    m = _EXPLICIT.search(content)
    if m:
        explicit = m.group(1)
        content = content[: m.start()]
    return Heading(level, line, end_line, content, "", explicit)  # text: once the references are known


def _atx_heading(m: re.Match, line: int) -> Heading:
    content = _ATX_CLOSE.sub("", (m.group(2) or "").strip(" \t"))
    return _make_heading(len(m.group(1)), line, line, content)


def parse_headings(text: str | list[str], *, frontmatter: bool = True) -> tuple[list[Heading], int]:
    """The document's headings (outside code, HTML blocks and block quotes) and its frontmatter size."""
    lines = _split_lines(text) if isinstance(text, str) else text
    start = _frontmatter_end(lines) if frontmatter else 0
    headings: list[Heading] = []
    fence: tuple[str, int, int] | None = None  # char, length, container indent
    html_end: re.Pattern | bool | None = None
    para: str | None = None  # open paragraph: None, "plain" (top level), "list" (in a list item) or "quote"
    para_start = 0
    para_lines: list[str] = []
    in_quote = False
    lists: list[int] = []  # content columns of the open list items, outermost first
    refs: set[str] = set()  # link reference labels defined anywhere in the document
    para_defs = 0  # how many of the paragraph's first lines are link reference definitions

    def add_para_line(text: str) -> None:
        nonlocal para_defs
        text = text.rstrip(" \t")
        if para_defs == len(para_lines):
            d = _REF_DEF.match(text)
            if d and d.group(1).strip():
                refs.add(_label_key(d.group(1)))
                para_defs += 1
        para_lines.append(text)

    for i in range(start, len(lines)):
        line = lines[i]
        ind, s = _indent(line)
        if fence is not None:
            char, length, base = fence
            if s.startswith(char * length) and ind - base < 4 and not s.lstrip(char).strip(" \t"):
                fence = None
                continue
            elif s and ind < base and lists:  # a line left of the item closes the item and its fence
                fence = None
            else:
                continue
        if html_end is not None:
            if html_end is True:
                if not s:
                    html_end = None
            elif html_end.search(line):
                html_end = None
            continue
        if not s:  # blank
            para = None
            in_quote = False
            continue

        # containers: block quotes and list items (followed only to know where their paragraphs end)
        if in_quote and not (ind < 4 and s[0] == ">"):
            if para == "quote" and not _interrupts(s, ind):
                continue  # lazy continuation line
            in_quote, para = False, None
        if lists and ind < lists[-1]:
            outer = [w for w in lists if ind >= w]
            rel_outer = ind - (outer[-1] if outer else 0)
            if para is not None and not _interrupts(s, rel_outer):
                add_para_line(s)
                continue  # lazy continuation of the item's paragraph
            del lists[len(outer) :]
            para = None
        base = lists[-1] if lists else 0
        rel = ind - base

        if rel >= 4:  # indented code, or a paragraph's continuation line
            if para is not None:
                add_para_line(s)
            continue
        if s[0] == ">":
            in_quote = True
            para = "quote" if s[1:].strip() else None
            continue

        m = _FENCE.match(s)
        if m and not (m.group(1)[0] == "`" and "`" in m.group(2)):
            fence = (m.group(1)[0], len(m.group(1)), base)
            para = None
            continue

        m = _ATX.match(s)
        if m:
            headings.append(_atx_heading(m, i + 1))
            para = None
            continue

        m = _SETEXT.match(s)
        if m and para in ("plain", "list") and para_defs < len(para_lines):
            # link reference definitions opening the paragraph are not part of the heading
            content = "\n".join(para_lines[para_defs:]).rstrip(" \t")
            level = 1 if m.group(1)[0] == "=" else 2
            headings.append(_make_heading(level, para_start + para_defs + 1, i + 1, content))
            para = None
            continue
        if m and para == "quote" and m.group(1)[0] == "=":
            continue  # lazy paragraph text

        if _THEMATIC.match(s):
            para = None
            continue

        m = _LIST_ITEM.match(s)
        if m:
            rest = s[m.end() :]
            empty = not rest.strip()
            if para is None or (not empty and (m.group(2) is None or int(m.group(2)) == 1)):
                gap = _indent(m.group(3))[0] if m.group(3) else 0
                width = len(m.group(1)) + (1 if empty or gap > 4 else gap)
                while lists and lists[-1] > ind:
                    lists.pop()
                lists.append(ind + width)
                para = None if empty else "list"
                _, inner = _indent(rest)
                para_start, para_lines, para_defs = i, [], 0
                add_para_line(inner)
                fm = _FENCE.match(inner)
                hm = _ATX.match(inner)
                if hm:
                    headings.append(_atx_heading(hm, i + 1))
                    para = None
                elif fm and not (fm.group(1)[0] == "`" and "`" in fm.group(2)):
                    fence = (fm.group(1)[0], len(fm.group(1)), ind + width)
                    para = None
                elif inner.startswith("<"):
                    html_end = _html_start(inner, False)
                    if html_end is not None:
                        para = None
                        if html_end is not True and html_end.search(inner):
                            html_end = None
                continue

        h = _html_start(s, para is not None)
        if h is not None:
            para = None
            html_end = None if (h is not True and h.search(s)) else h
            continue

        if para is None:
            para = "quote" if in_quote else "list" if lists else "plain"
            para_start = i
            para_lines = []
            para_defs = 0
        add_para_line(s)
    frozen = frozenset(refs)
    for h in headings:
        h.text = heading_text(h.raw, frozen)
    return headings, start


# -- the outline ------------------------------------------------------------------------------------------------
@dataclass
class Section:
    anchor: str
    title: str
    level: int  # 1-6; 0 for the preamble
    line_start: int  # 1-based, inclusive: the heading's first line
    line_end: int  # inclusive: the line before the next heading of any level
    subtree_end: int  # inclusive: the line before the next heading of the same or a higher level
    tokens: int  # count_tokens of line_start..line_end
    subtree_tokens: int  # count_tokens of line_start..subtree_end
    parent: str | None  # the enclosing section's anchor (never the preamble)
    path: list[str] = field(default_factory=list)  # ancestor titles, outermost first (self excluded)
    explicit: bool = False  # anchor came from {#id}
    heading_end: int = 0  # last line of the heading itself (a Setext underline); 0 for the preamble

    def to_dict(self) -> dict:
        return asdict(self)


@dataclass
class Outline:
    sections: list[Section]
    line_count: int
    frontmatter_lines: int = 0  # lines 1..frontmatter_lines are YAML frontmatter (in no section)
    _by_anchor: dict[str, Section] = field(default_factory=dict, repr=False, compare=False)

    def __post_init__(self) -> None:
        self._by_anchor = {s.anchor: s for s in self.sections}

    def find(self, anchor: str) -> Section | None:
        """The section with this anchor (a leading ``#`` is ignored), or None."""
        if anchor.startswith("#") and anchor not in self._by_anchor:
            anchor = anchor[1:]
        return self._by_anchor.get(anchor)

    def children(self, anchor: str | None) -> list[Section]:
        """Direct subsections of ``anchor`` (None: the top-level sections, preamble included)."""
        return [s for s in self.sections if s.parent == anchor]

    def subtree(self, anchor: str) -> list[Section]:
        """The section and all its descendants, in document order."""
        sec = self.find(anchor)
        if sec is None:
            return []
        return [s for s in self.sections if sec.line_start <= s.line_start <= sec.subtree_end]

    def anchors(self) -> list[str]:
        return [s.anchor for s in self.sections]

    def to_dict(self) -> dict:
        return {
            "line_count": self.line_count,
            "frontmatter_lines": self.frontmatter_lines,
            "sections": [s.to_dict() for s in self.sections],
        }

    @classmethod
    def from_dict(cls, data: dict) -> Outline:
        return cls(
            sections=[Section(**s) for s in data.get("sections", [])],
            line_count=int(data.get("line_count", 0)),
            frontmatter_lines=int(data.get("frontmatter_lines", 0)),
        )


def _assign_anchors(headings: list[Heading]) -> list[str]:
    slugger = Slugger()
    slugger.reserve(PREAMBLE_ANCHOR)
    for h in headings:
        if h.explicit_anchor:
            slugger.reserve(h.explicit_anchor)
    explicit_seen: dict[str, int] = {}
    out = []
    for h in headings:
        if h.explicit_anchor:
            n = explicit_seen.get(h.explicit_anchor, 0)
            explicit_seen[h.explicit_anchor] = n + 1
            out.append(h.explicit_anchor if n == 0 else slugger.unique(h.explicit_anchor))
        else:
            base = github_slug(h.text)
            out.append(slugger.unique(base if base else EMPTY_SLUG_BASE))
    return out


def parse_outline(text: str, *, markdown: bool = True, frontmatter: bool = True, title: str = "") -> Outline:
    """Parse a document into its ``Outline``.

    ``markdown=False`` (plain ``.txt``): no headings, one section for the whole text. ``frontmatter=False``
    reads a leading ``---`` block as Markdown. ``title`` names the preamble section (default empty).
    """
    lines = _split_lines(text)
    n = len(lines)
    if markdown:
        headings, fm = parse_headings(lines, frontmatter=frontmatter)
    else:
        headings, fm = [], 0
    anchors = _assign_anchors(headings)

    def tokens(a: int, b: int) -> int:
        return count_tokens("\n".join(lines[a - 1 : b])) if b >= a else 0

    sections: list[Section] = []
    first = headings[0].line if headings else n + 1
    if any(lines[k].strip() for k in range(fm, first - 1)):
        end = first - 1
        t = tokens(fm + 1, end)
        sections.append(Section(PREAMBLE_ANCHOR, title, 0, fm + 1, end, end, t, t, None, [], False, 0))

    stack: list[tuple[int, Section]] = []  # open ancestors: (level, section)
    for k, (h, anchor) in enumerate(zip(headings, anchors)):
        line_end = headings[k + 1].line - 1 if k + 1 < len(headings) else n
        subtree_end = n
        for later in headings[k + 1 :]:
            if later.level <= h.level:
                subtree_end = later.line - 1
                break
        while stack and stack[-1][0] >= h.level:
            stack.pop()
        parent = stack[-1][1] if stack else None
        sec = Section(
            anchor=anchor,
            title=" ".join(h.text.split()),
            level=h.level,
            line_start=h.line,
            line_end=line_end,
            subtree_end=subtree_end,
            tokens=tokens(h.line, line_end),
            subtree_tokens=0,
            parent=parent.anchor if parent else None,
            path=[*parent.path, parent.title] if parent else [],
            explicit=bool(h.explicit_anchor),
            heading_end=h.end_line,
        )
        sections.append(sec)
        stack.append((h.level, sec))
    # subtree sizes: own tokens summed over the subtree (linear: sections are in order)
    for idx, sec in enumerate(sections):
        if sec.level == 0:
            continue
        total = sec.tokens
        for later in sections[idx + 1 :]:
            if later.line_start > sec.subtree_end:
                break
            total += later.tokens
        sec.subtree_tokens = total
    return Outline(sections, n, fm)


def parse_file(path: str | Path) -> Outline:
    """Read a UTF-8 file: Markdown suffixes are parsed for headings, anything else is one plain section."""
    p = Path(path)
    text = p.read_text(encoding="utf-8", errors="replace")
    return parse_outline(text, markdown=p.suffix.lower() in MARKDOWN_SUFFIXES)


def outline_markdown(outline: Outline) -> str:
    """An indented list of the sections with anchors, line ranges and sizes (the ``read_doc`` overview)."""
    out = []
    for s in outline.sections:
        depth = len(s.path)
        title = s.title or ("(preamble)" if s.level == 0 else "(untitled)")
        size = f"~{s.tokens} tok"
        if s.subtree_end > s.line_end:
            size += f", ~{s.subtree_tokens} with subsections"
        out.append(f"{'  ' * depth}- {title} `#{s.anchor}` L{s.line_start}-{s.line_end} ({size})")
    return "\n".join(out) + ("\n" if out else "")
