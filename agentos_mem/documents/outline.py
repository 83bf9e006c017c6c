"""Markdown structure of a knowledge document: a heading tree with stable anchors, line ranges and sizes.

``parse_outline(text)`` reads Markdown (or plain UTF-8 text with ``markdown=False``) into an ``Outline``:
one ``Section`` per heading, in document order, plus a synthetic *preamble* section (level 0, anchor
``PREAMBLE_ANCHOR`` = ``"_preamble"``) holding any non-blank text before the first heading. A document
without headings (a ``.txt`` file, or Markdown without any) is one preamble section covering every line.

Headings follow CommonMark (markdown-it-py's parser: ATX and Setext, never inside fenced or indented code,
HTML blocks or YAML frontmatter). Headings inside list items count (renderers give them anchors, and the Vue
docs use them); headings inside block quotes do not (quoted material, not the document's structure). YAML frontmatter is
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

import re
import unicodedata
from dataclasses import asdict, dataclass, field
from pathlib import Path

from markdown_it import MarkdownIt
from markdown_it.common.utils import normalizeReference
from markdown_it.token import Token

from agentos_mem.kernel.text import count_tokens

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
    "split_lines",
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


# -- Markdown parsing: markdown-it-py ----------------------------------------------------------------------------
# Block structure (which lines are headings, inside or outside fences, indented code, HTML blocks, lists and
# quotes) and heading inline markup come from markdown-it-py's CommonMark parser rather than a parser of our
# own: it follows the spec (and the Vue docs are rendered by markdown-it, via VitePress).
# - GFM strikethrough is on, in GitHub's mode (``~x~`` and ``~~x~~``; three or more tildes stay literal).
# - Links and link definitions are never rejected (``validateLink``): a renderer still shows the text of
#   ``[x](javascript:..)``.
# - Autolinks keep the URL as written (``normalizeLinkText``), as GitHub shows it and slugs it.
# Two instances, because markdown-it has one nesting limit for both parsers and it acts differently in each:
# - blocks: the core "inline" rule is off (only heading text is needed: ``parse_headings`` runs the inline
#   parser on the headings alone, not on every paragraph). Past ``maxNesting`` containers markdown-it drops
#   the rest of the document, so the limit is raised from the preset's 20 to 100 (about 300 stack frames).
# - inline: the preset's 20; past it markup reads as text, and a lower limit bounds pathological nesting.
_MD = MarkdownIt("commonmark", {"strikethrough_single_tilde": True}).enable("strikethrough")
_MD.validateLink = lambda url: True  # type: ignore[method-assign]
_MD.normalizeLinkText = lambda url: url  # type: ignore[method-assign]
_BLOCK_MD = MarkdownIt("commonmark", {"maxNesting": 100})
_BLOCK_MD.core.ruler.disable("inline")
_BLOCK_MD.validateLink = _MD.validateLink  # type: ignore[method-assign]  # definitions too: [a]: javascript:..

_LINE_BREAK = re.compile(r"\r\n|\r|\n")
# {#custom-id} (or {#id .cls k=v}) ending a heading: the Vue/VitePress explicit anchor; markdown-it does not
# know it (VitePress adds it with a plugin), so it is cut from the heading's source before the inline parse.
_EXPLICIT = re.compile(r"[ \t]*\{[ \t]*#([^\s{}]+)(?:[ \t]+[^{}]*)?\}[ \t]*$")
_YAML_KEY = re.compile(r"""["']?[^\s:#"'][^:]*["']?[ \t]*:(?:[ \t]|$)""")


def _plain(tokens: list[Token]) -> str:
    """Inline tokens -> the text a renderer shows: markup and raw HTML dropped, images read as their alt text."""
    out = []
    for t in tokens:
        if t.type in ("text", "text_special", "code_inline"):  # text_special: escapes and entities, decoded
            out.append(t.content)
        elif t.type in ("softbreak", "hardbreak"):
            out.append("\n")
        elif t.type == "image":
            out.append(_plain(t.children or []))
    return "".join(out)


def _inline_text(src: str, env: dict) -> str:
    tokens: list[Token] = []
    _MD.inline.parse(src, _MD, env, tokens)
    return _plain(tokens)


def heading_text(inline: str, refs: frozenset[str] | set[str] = frozenset()) -> str:
    """The plain text a renderer shows for inline Markdown (what GitHub slugs): markup removed.

    ``refs``: link reference labels the document defines, so ``[text][label]`` reads "text".
    """
    env = {"references": {normalizeReference(r): {"href": "", "title": ""} for r in refs}}
    return _inline_text(_LINE_BREAK.sub("\n", inline), env)


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

    Hand-written: CommonMark has no frontmatter, and mdit-py-plugins (its front_matter plugin) is not a
    dependency. ``---`` on line 1, a closing ``---`` or ``...`` line, and content that is empty or starts like
    a YAML mapping (``key: value``): so a thematic break followed by a Setext heading is not taken for it.
    """
    if not lines or lines[0].rstrip() != "---":
        return 0
    for k in range(1, len(lines)):
        if lines[k].rstrip() in ("---", "..."):
            body = [ln for ln in lines[1:k] if ln.strip() and not ln.lstrip().startswith("#")]
            return k + 1 if not body or _YAML_KEY.match(body[0]) else 0
    return 0


def split_lines(text: str) -> list[str]:
    """The file's physical lines (``\\r\\n``, lone ``\\r`` and ``\\n`` all end one, as in CommonMark and in
    markdown-it, so line numbers agree), without a byte-order mark or a final empty line."""
    if text.startswith("\ufeff"):
        text = text[1:]
    lines = _LINE_BREAK.split(text)
    if lines and lines[-1] == "":
        lines.pop()
    return lines


_split_lines = split_lines  # the name query/kb.py imports


def parse_headings(text: str | list[str], *, frontmatter: bool = True) -> tuple[list[Heading], int]:
    """The document's headings (outside code, HTML blocks and block quotes) and its frontmatter size."""
    lines = split_lines(text) if isinstance(text, str) else text
    start = _frontmatter_end(lines) if frontmatter else 0
    env: dict = {}  # markdown-it collects the document's link reference definitions here
    tokens = _BLOCK_MD.parse("\n".join(lines[start:]), env)
    headings: list[Heading] = []
    quoted = 0
    for k, tok in enumerate(tokens):
        if tok.type == "blockquote_open":
            quoted += 1
        elif tok.type == "blockquote_close":
            quoted -= 1
        elif tok.type == "heading_open" and not quoted:  # quoted headings are not the document's structure
            raw = tokens[k + 1].content
            if tok.markup in ("=", "-"):  # Setext: each line without its indentation, as the source shows it
                raw = "\n".join(ln.strip(" \t") for ln in raw.split("\n"))
            explicit = None
            m = _EXPLICIT.search(raw)
            if m:
                explicit, raw = m.group(1), raw[: m.start()]
            first, end = tok.map or (0, 1)
            level = int(tok.tag[1])
            headings.append(Heading(level, start + first + 1, start + end, raw, _inline_text(raw, env), explicit))
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
