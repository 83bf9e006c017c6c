"""The Markdown outline parser: CommonMark headings, GitHub slugs, explicit anchors, line ranges, stability."""

from __future__ import annotations

import html
import json
import re
from pathlib import Path

import pytest
from tests.conftest import eval_path, missing_data

from agentos_mem.documents.outline import (
    PREAMBLE_ANCHOR,
    Outline,
    Slugger,
    github_slug,
    heading_text,
    outline_markdown,
    parse_file,
    parse_headings,
    parse_outline,
)
from agentos_mem.kernel.text import count_tokens


def _load(rel: str) -> list:
    root = eval_path()
    path = root / rel if root else None
    return json.loads(path.read_text(encoding="utf-8")) if path and path.is_file() else []


HEADING_EXAMPLES = {e["example"]: e for e in _load("commonmark_spec/heading_examples.json")}
_H_TAG = re.compile(r"<h([1-6])>(.*?)</h\1>", re.DOTALL)


def _expected_headings(rendered: str) -> list[tuple[int, str]]:
    """(level, text content) of every <hN> in CommonMark's expected HTML."""
    return [(int(lv), html.unescape(re.sub(r"<[^>]+>", "", inner))) for lv, inner in _H_TAG.findall(rendered)]


# -- CommonMark heading examples ----------------------------------------------------------------------------
@pytest.mark.parametrize("number", sorted(HEADING_EXAMPLES) or [0])
def test_commonmark_heading_example(eval_dir, number):
    example = HEADING_EXAMPLES[number]
    expected = _expected_headings(example["html"])
    headings, _ = parse_headings(example["markdown"])
    assert [(h.level, h.text) for h in headings] == expected, example["markdown"]
    # the outline shows the same headings: whitespace-collapsed titles, anchors slugged from the exact text
    outline = parse_outline(example["markdown"])
    got = [s for s in outline.sections if s.level > 0]
    assert [(s.level, s.title) for s in got] == [(lv, " ".join(t.split())) for lv, t in expected]
    slugger = Slugger()
    slugger.reserve(PREAMBLE_ANCHOR)
    assert [s.anchor for s in got] == [slugger.unique(github_slug(t) or "section") for _, t in expected]


def test_all_45_commonmark_heading_examples_are_present(eval_dir):
    assert len(HEADING_EXAMPLES) == 45


# -- GitHub slugs ---------------------------------------------------------------------------------------------
def test_github_slugger_fixtures_in_order_on_one_instance(eval_dir):
    fixtures = _load("github_slugger/fixtures.json")
    assert len(fixtures) == 78
    slugger = Slugger()
    for case in fixtures:
        assert slugger.slug(case["input"]) == case["expected"], case["name"]


def _escape_markdown(text: str) -> str:
    return "".join("\\" + ch if ch in "!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~" else ch for ch in text)


def test_github_slugger_fixtures_as_one_markdown_document(eval_dir):
    """The same fixtures written as headings of one document: the outline's anchors come out the same."""
    fixtures = _load("github_slugger/fixtures.json")
    doc = "\n\n".join(case.get("markdownOverwrite") or "# " + _escape_markdown(case["input"]) for case in fixtures)
    outline = parse_outline(doc + "\n")
    assert [s.anchor for s in outline.sections] == [case["expected"] for case in fixtures]


def test_slugs_keep_chinese_and_drop_punctuation():
    assert github_slug("数据库 配置：端口（Port）") == "数据库-配置端口port"
    assert github_slug("API 风格") == "api-风格"
    s = Slugger()
    assert [s.slug("示例"), s.slug("示例"), s.slug("示例")] == ["示例", "示例-1", "示例-2"]


def test_heading_text_strips_inline_markup_like_a_renderer():
    assert heading_text("`<Transition>` 组件") == "<Transition> 组件"
    assert heading_text("app.onUnmount() <sup class=\"vt-badge\" data-text=\"3.5+\" />") == "app.onUnmount() "
    assert heading_text("[链接](https://example.com \"t\") and ![图](a.png)") == "链接 and 图"
    assert heading_text("**粗体** _斜体_ ~~删除~~ snake_case_name") == "粗体 斜体 删除 snake_case_name"
    assert heading_text("\\<script setup> &amp; &#x4e2d;") == "<script setup> & 中"
    assert heading_text("<https://vuejs.org>") == "https://vuejs.org"


# -- explicit anchors ------------------------------------------------------------------------------------------
def test_explicit_anchors_are_honoured_and_removed_from_the_title():
    doc = (
        "# 响应式基础 {#reactivity-fundamentals}\n\n"
        "## 声明响应式状态 \\* {#declaring-reactive-state}\n\n"
        "## Declaring Reactive State\n\n"  # its slug is taken by no one: plain slug
        "## Custom Id\n\n"  # slug equals a later explicit id: that id is reserved, so this one gets -1
        "### `ref()` {#custom-id}\n\n"
        "### 带属性 {#with-attrs .cls data-x=1}\n\n"
        "### again {#custom-id}\n"
    )
    o = parse_outline(doc)
    assert [(s.anchor, s.title, s.explicit) for s in o.sections] == [
        ("reactivity-fundamentals", "响应式基础", True),
        ("declaring-reactive-state", "声明响应式状态 *", True),
        ("declaring-reactive-state-1", "Declaring Reactive State", False),
        ("custom-id-1", "Custom Id", False),
        ("custom-id", "ref()", True),
        ("with-attrs", "带属性", True),
        ("custom-id-2", "again", True),  # a repeated explicit id is suffixed like a repeated slug
    ]
    assert len(set(o.anchors())) == len(o.sections)


# -- code, HTML and frontmatter hide heading-like lines --------------------------------------------------------
def test_code_fences_and_indented_code_hide_hash_lines():
    doc = "\n".join([
        "# 真标题",            # 1
        "```bash",            # 2
        "# 注释，不是标题",      # 3
        "```",                # 4
        "~~~~ python title",  # 5
        "# comment",          # 6
        "~~~",                # 7 too short: does not close
        "```",                # 8 other character: does not close
        "## still code",      # 9
        "~~~~~",              # 10 closes
        "",                   # 11
        "    # indented code",  # 12
        "",                   # 13
        "<div class=\"tip\">",  # 14 HTML block: up to the blank line
        "# html, not a heading",  # 15
        "</div>",             # 16
        "",                   # 17
        "## Second {#second}",  # 18
        "  ```js",            # 19 fence in a list-less indent of 2
        "  # not a heading",  # 20
        "  ```",              # 21
        "Setext 标题",          # 22
        "---",                # 23
        "```",                # 24 unclosed fence hides everything after it
        "# hidden",           # 25
    ])
    o = parse_outline(doc)
    assert [(s.anchor, s.level, s.line_start, s.line_end) for s in o.sections] == [
        ("真标题", 1, 1, 17),
        ("second", 2, 18, 21),
        ("setext-标题", 2, 22, 25),
    ]
    assert o.sections[2].heading_end == 23


def test_frontmatter_is_skipped_and_line_numbers_count_it():
    doc = "---\ntitle: 指南\ntags: [a, b]\n---\n\n前言一段。\n\n# 第一章 {#ch1}\n正文\n\n## 1.1 小节\n内容\n"
    o = parse_outline(doc)
    assert o.frontmatter_lines == 4
    pre, ch1, sub = o.sections
    assert (pre.anchor, pre.level, pre.line_start, pre.line_end) == (PREAMBLE_ANCHOR, 0, 5, 7)
    assert (ch1.anchor, ch1.line_start, ch1.line_end, ch1.subtree_end) == ("ch1", 8, 10, 12)
    assert (sub.anchor, sub.line_start, sub.line_end, sub.parent) == ("11-小节", 11, 12, "ch1")
    # a leading thematic break followed by a Setext heading is no frontmatter
    o2 = parse_outline("---\nFoo\n---\nBar\n")
    assert o2.frontmatter_lines == 0 and [s.title for s in o2.sections if s.level] == ["Foo"]
    # turned off: the block is read as Markdown (a thematic break, a Setext heading)
    o3 = parse_outline("---\ntitle: x\n---\n", frontmatter=False)
    assert [(s.title, s.level, s.line_start) for s in o3.sections] == [("", 0, 1), ("title: x", 2, 2)]


# -- line ranges, parents and sizes on a small bilingual document ----------------------------------------------
BILINGUAL = """\
这是文档开头的说明。
Intro line before any heading.

# 用户指南 User Guide

总览。

## 安装 Installation

pip install agentos

### Linux

apt 安装说明。

## 配置 Configuration {#config}

数据库端口是 5432。

#### 深层 Deep

跳级的标题。

Usage
=====

Top-level Setext heading.
"""


def test_line_ranges_parents_paths_and_subtrees_on_a_bilingual_document():
    o = parse_outline(BILINGUAL)
    rows = [(s.anchor, s.level, s.line_start, s.line_end, s.subtree_end, s.parent, s.path) for s in o.sections]
    assert rows == [
        (PREAMBLE_ANCHOR, 0, 1, 3, 3, None, []),
        ("用户指南-user-guide", 1, 4, 7, 23, None, []),
        ("安装-installation", 2, 8, 11, 15, "用户指南-user-guide", ["用户指南 User Guide"]),
        ("linux", 3, 12, 15, 15, "安装-installation", ["用户指南 User Guide", "安装 Installation"]),
        ("config", 2, 16, 19, 23, "用户指南-user-guide", ["用户指南 User Guide"]),
        ("深层-deep", 4, 20, 23, 23, "config", ["用户指南 User Guide", "配置 Configuration"]),
        ("usage", 1, 24, 27, 27, None, []),
    ]
    assert o.line_count == 27
    usage = o.find("usage")
    assert usage.heading_end == 25 and usage.title == "Usage"
    assert o.find("#config") is o.find("config") and o.find("nope") is None
    assert [s.anchor for s in o.children("用户指南-user-guide")] == ["安装-installation", "config"]
    assert [s.anchor for s in o.subtree("config")] == ["config", "深层-deep"]
    lines = BILINGUAL.splitlines()
    for s in o.sections:
        assert s.tokens == count_tokens("\n".join(lines[s.line_start - 1 : s.line_end]))
        assert s.subtree_tokens == (s.tokens if s.level == 0 else count_tokens("\n".join(lines[s.line_start - 1 : s.subtree_end])))


def test_tokens_count_chinese_characters():
    o = parse_outline("# 数据库\n\n数据库端口是五四三二。\n")
    (sec,) = o.sections
    assert sec.tokens == count_tokens("# 数据库\n\n数据库端口是五四三二。") == 3 + 10
    assert parse_outline("# DB\n\nThe port is 5432.\n").sections[0].tokens == 5


def test_to_dict_is_json_and_round_trips():
    o = parse_outline(BILINGUAL)
    data = json.loads(json.dumps(o.to_dict(), ensure_ascii=False))
    assert data["sections"][4]["anchor"] == "config" and data["line_count"] == 27
    back = Outline.from_dict(data)
    assert back == o and back.find("config").title == "配置 Configuration"


def test_outline_markdown_lists_sections_with_anchors_lines_and_sizes():
    text = outline_markdown(parse_outline(BILINGUAL))
    lines = text.splitlines()
    assert lines[0].startswith("- (preamble) `#_preamble` L1-3")
    assert lines[1].startswith("- 用户指南 User Guide `#用户指南-user-guide` L4-7 (~")
    assert "with subsections" in lines[1]
    assert lines[3].startswith("    - Linux `#linux` L12-15 (~")
    assert lines[5].startswith("    - 深层 Deep `#深层-deep` L20-23")  # depth from the tree, not the level


# -- plain text ------------------------------------------------------------------------------------------------
def test_a_txt_file_without_headings_is_one_section(tmp_path):
    body = "第一行笔记\n# 这不是标题，只是文本\n\nsecond paragraph\n"
    p = tmp_path / "notes.txt"
    p.write_text(body, encoding="utf-8")
    o = parse_file(p)
    assert len(o.sections) == 1
    sec = o.sections[0]
    assert (sec.anchor, sec.level, sec.line_start, sec.line_end, sec.parent) == (PREAMBLE_ANCHOR, 0, 1, 4, None)
    assert sec.tokens == count_tokens(body)
    md = parse_outline("just text\nno headings here\n")
    assert [(s.anchor, s.line_start, s.line_end) for s in md.sections] == [(PREAMBLE_ANCHOR, 1, 2)]
    assert parse_outline("").sections == [] and parse_outline("\n\n").sections == []


def test_crlf_and_bom_are_handled():
    o = parse_outline("\ufeff# 标题\r\n正文\r\n## 二\r\n")
    assert [(s.anchor, s.line_start, s.line_end) for s in o.sections] == [("标题", 1, 2), ("二", 3, 3)]


# -- the Vue docs: every heading, every link target, anchor stability ----------------------------------------
def _vue_root(eval_dir: Path, corpus: str = "vue_docs_zh_cn") -> Path:
    root = eval_dir / corpus
    if not (root / "src").is_dir():
        missing_data(f"Vue docs not found under {root}")
    return root


@pytest.mark.parametrize("corpus", ["vue_docs_zh_cn", "vue_docs_en"])
def test_vue_docs_headings_match_the_reference_list(eval_dir, corpus):
    root = _vue_root(eval_dir, corpus)
    expected: dict[str, list] = {}
    for line in (root / "derived" / "headings.jsonl").read_text(encoding="utf-8").splitlines():
        r = json.loads(line)
        expected.setdefault(r["file"], []).append((r["line"], r["level"], r["explicit_anchor"], r["text"]))
    files = sorted(root.glob("src/**/*.md"))
    assert len(files) > 100
    for f in files:
        rel = f.relative_to(root).as_posix()
        text = f.read_text(encoding="utf-8")
        headings, _ = parse_headings(text)
        got = [(h.line, h.level, h.explicit_anchor, h.raw.strip()) for h in headings]
        if text.startswith("\ufeff"):  # the reference list missed the first heading behind a byte-order mark
            got = [g for g in got if g not in [(1, 1, "plugins", "Plugins")]]
        assert got == expected.get(rel, []), rel
        outline = parse_outline(text)
        assert len(set(outline.anchors())) == len(outline.sections), rel


def test_vue_internal_links_resolve_to_sections(eval_dir):
    root = _vue_root(eval_dir)
    outlines: dict[str, Outline] = {}
    n = 0
    for line in (root / "derived" / "internal_anchor_links.jsonl").read_text(encoding="utf-8").splitlines():
        r = json.loads(line)
        if not r["resolved"]:
            continue
        f = r["target_file"]
        if f not in outlines:
            outlines[f] = parse_file(root / f)
        assert outlines[f].find(r["target_anchor"]) is not None, (f, r["target_anchor"])
        n += 1
    assert n > 400


STABILITY_FILES = [
    "src/about/translation.md",  # no explicit anchors: GitHub slugs
    "src/guide/introduction.md",  # frontmatter
    "src/guide/essentials/class-and-style.md",  # repeated titles with explicit -1 ids
    "src/api/application.md",
    "src/api/general.md",  # headings inside list items
    "src/guide/essentials/reactivity-fundamentals.md",
]


def _lines(root: Path, rel: str) -> list[str]:
    return (root / rel).read_text(encoding="utf-8").split("\n")


@pytest.mark.parametrize("rel", STABILITY_FILES)
def test_vue_anchors_survive_body_edits(eval_dir, rel):
    root = _vue_root(eval_dir)
    lines = _lines(root, rel)
    before = parse_outline("\n".join(lines))
    edited = list(lines)
    changed = 0
    for sec in before.sections:  # every section: rewrite its first prose line and add a paragraph after it
        for k in range(sec.heading_end, sec.line_end):
            if re.match(r"[\w\u4e00-\u9fff]", edited[k]) and not edited[k].startswith(("http", "<")):
                edited[k] = edited[k] + "（此处正文已修改，加了 some English too）"
                edited.insert(k + 1, "\n新增的一段说明文字。New paragraph.")
                changed += 1
                break
    assert changed >= 3
    after = parse_outline("\n".join(edited))
    assert after.anchors() == before.anchors()
    assert [s.title for s in after.sections] == [s.title for s in before.sections]


@pytest.mark.parametrize("rel", STABILITY_FILES)
def test_vue_anchors_survive_inserting_a_new_section(eval_dir, rel):
    root = _vue_root(eval_dir)
    lines = _lines(root, rel)
    before = parse_outline("\n".join(lines))
    tops = [s for s in before.sections if s.level >= 2 and not lines[s.line_start - 1][:1].isspace()]
    assert len(tops) >= 3
    for n, target in enumerate([tops[0], tops[len(tops) // 2], tops[-1]]):
        edited = list(lines)
        title = f"新增小节 Added Section {n}"
        edited[target.line_start - 1 : target.line_start - 1] = [f"## {title}", "", "新的正文。", ""]
        after = parse_outline("\n".join(edited))
        added = [s for s in after.sections if s.title == title]
        assert len(added) == 1
        assert [a for a in after.anchors() if a != added[0].anchor] == before.anchors()
    # and appended at the very end
    after = parse_outline("\n".join([*lines, "", "## 附录 Appendix X", "", "内容"]))
    assert after.anchors()[:-1] == before.anchors()


@pytest.mark.parametrize("rel", STABILITY_FILES[1:])
def test_vue_explicit_anchors_survive_heading_text_edits(eval_dir, rel):
    root = _vue_root(eval_dir)
    lines = _lines(root, rel)
    before = parse_outline("\n".join(lines))
    explicit = [s for s in before.sections if s.explicit]
    assert explicit
    edited = list(lines)
    for s in explicit:
        k = s.line_start - 1
        edited[k] = re.sub(r"\s*(\{#[^}]+\})\s*$", r" —— 标题已改写 Renamed \1", edited[k])
    after = parse_outline("\n".join(edited))
    assert after.anchors() == before.anchors()
    assert all(a.title != b.title for a, b in zip(after.sections, before.sections) if b.explicit)


def test_duplicate_suffixes_follow_document_order_as_on_github():
    """Documented limit: an earlier duplicate shifts later suffixes (GitHub does the same)."""
    doc = "# A\n## 示例\n# B\n## 示例\n"
    assert parse_outline(doc).anchors() == ["a", "示例", "b", "示例-1"]
    inserted = "# A\n## 示例\n# New\n## 示例\n# B\n## 示例\n"
    assert parse_outline(inserted).anchors() == ["a", "示例", "new", "示例-1", "b", "示例-2"]
    # an explicit id pins it
    pinned = "# A\n## 示例\n# New\n## 示例\n# B\n## 示例 {#示例-1}\n"
    assert parse_outline(pinned).anchors()[-1] == "示例-1"


def test_a_ten_thousand_line_document_parses():
    block = "## 小节 {n}\n\n正文 text {n}\n\n```py\n# code\n```\n\n- item\n  - nested\n\n"
    doc = "# 大文档\n\n" + "".join(block.format(n=i) for i in range(1000))
    o = parse_outline(doc)
    assert o.line_count > 10_000
    assert len(o.sections) == 1001 and o.sections[-1].anchor == "小节-999"
    assert o.sections[0].subtree_end == o.line_count


def test_whole_commonmark_spec_headings_outside_block_quotes(eval_dir):
    """Beyond the 45 heading examples: all 655 spec examples agree on headings (block quotes aside)."""
    examples = _load("commonmark_spec/spec_examples.json")
    assert len(examples) > 600
    quoted = 0
    for ex in examples:
        rendered = ex["html"]
        if "<blockquote>" in rendered:  # headings inside quotes are deliberately not part of the outline
            without = re.sub(r"<blockquote>.*?</blockquote>", "", rendered, flags=re.DOTALL)
            quoted += without != rendered and bool(_H_TAG.search(rendered)) and not _H_TAG.search(without)
            rendered = without
        headings, _ = parse_headings(ex["markdown"], frontmatter=False)
        assert [(h.level, h.text) for h in headings] == _expected_headings(rendered), ex["example"]
    assert quoted >= 1


def test_reference_links_in_headings_read_as_their_text():
    doc = "# See [the guide][g] and [API]\n\n[g]: https://example.com/guide\n[api]: /api \"API\"\n\n## [not defined]\n"
    o = parse_outline(doc)
    assert [(s.title, s.anchor) for s in o.sections] == [
        ("See the guide and API", "see-the-guide-and-api"),
        ("[not defined]", "not-defined"),
    ]
    # a paragraph opening with definitions: only the rest becomes the Setext heading
    assert [(h.text, h.line) for h in parse_headings("[foo]: /url\nbar\n===\n")[0]] == [("bar", 2)]


def test_deep_nesting_and_pathological_inline_markup_keep_later_headings():
    """Lists nested past markdown-it's preset limit (20) must not swallow the rest of the document."""
    deep = "".join("  " * i + "- x\n" for i in range(40)) + "\n# After\n"
    assert [s.title for s in parse_outline(deep).sections if s.level] == ["After"]
    nested = "# " + "[a" * 2000 + "](u)" * 2000 + "\n\n## Next\n"
    assert parse_outline(nested).anchors()[-1] == "next"


def test_a_line_after_a_quoted_heading_is_not_lazy_quote_text():
    """A quoted ATX heading is no paragraph, so the next unquoted line starts a new block (here a Setext heading)."""
    doc = "# Top\n\n> # quoted\ntext\n---\n"
    assert [(h.level, h.text, h.line) for h in parse_headings(doc)[0]] == [(1, "Top", 1), (2, "text", 4)]
