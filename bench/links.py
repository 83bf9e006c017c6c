"""``agentos bench links DIR [--en DIR]``: section retrieval through the knowledge read path
(``query.kb.search_docs``) on the Chinese Vue docs (vuejs-translations/docs-zh-cn, CC BY 4.0).

Every ``src/**.md`` file becomes one ready, system-scoped knowledge document (the body as it is; written directly,
no collect/refine); ``parse_outline`` gives its sections and anchors (the docs' explicit ``{#id}`` anchors). Each
query names a gold section (file, anchor); a hit is right when its document is that file and its anchor that anchor.

Query sets:

- ``zh_links``: the text of each internal link (``derived/internal_anchor_links.jsonl``) -> the section it links
  to. Identical (text, target) pairs count once. Link texts that name nothing (``这里``, ``这个示例``, ``更多细节``
  ...: :data:`NON_DESCRIPTIVE`) cannot be answered from their own words: they are scored apart
  (``zh_links_nondescriptive``), and the headline figure is over the descriptive ones.
- ``en_headings``: the English text of each heading (``derived/zh_en_heading_alignment.jsonl``) -> the zh section
  with that anchor (cross-lingual: English words against Chinese text).
- ``en_links`` (with ``--en``): the text of each internal anchor link in the English docs -> the zh section of the
  same file and anchor (the translation keeps the English anchors as explicit ids), deduplicated likewise, the
  non-descriptive ones left out.

A query whose gold anchor is not among its file's parsed anchors cannot be found and is left out of the figures;
the report counts them (``gold``). Figures per set and mode (``hybrid``, ``bm25``, ``dense``, the same run and
workspace): hit@1, hit@5, hit@10, MRR@10, and p50 latency. Goal: on the descriptive zh links, hybrid hit@5 above
both bm25-only and dense-only.

``limit``: the first N queries of each set, and only the files they target plus ``DISTRACTOR_FILES`` others
(a quick run; figures are not comparable with the full set's).
"""

from __future__ import annotations

import json
import re
import shutil
import tempfile
import time
from pathlib import Path
from typing import Callable

from agentos_mem.bench.beir import (MODES, bench_workspace, dedupe, latency, publish, score, search_all, warm)
from agentos_mem.bench.locomo import library_versions
from agentos_mem.knowledge.refine import outline_of
from agentos_mem.query import fusion, kb

DISTRACTOR_FILES = 1
HEADLINE = "zh_links"
# Link texts that name nothing: deictic or generic words, answerable only from where the link stands.
NON_DESCRIPTIVE = frozenset({
    "这里", "此处", "这儿", "点击这里", "这个示例", "这个例子", "完整的示例", "完整示例", "下一步", "下方的说明", "下面的说明",
    "之前小节", "之前的小节", "在下面讨论", "更多细节", "更多", "详情", "相同格式", "相同的格式", "相同的限制", "方式不同",
    "here", "click here", "this", "this example", "the example", "full example", "the full example", "see here", "below",
    "above", "more", "details", "more details", "next", "previous section", "the previous section", "discussed below",
    "explained below", "below section", "same format", "the same format", "same limitations", "the same limitations", "later",
    "this section", "that section", "read more", "learn more", "example",
})
_LINK = re.compile(r"(?<!!)\[((?:[^\[\]]|\[[^\[\]]*\])+)\]\(([^()\s]*(?:\([^()]*\))?[^()\s]*)(?:\s+\"[^\"]*\")?\)")
_FENCE = re.compile(r"^\s{0,3}(```|~~~)")


def normalized(text: str) -> str:
    """Link text without markup, punctuation at the ends and case: what NON_DESCRIPTIVE is matched on."""
    s = re.sub(r"[`*_]", "", text).strip()
    s = re.sub(r"^[\W_]+|[\W_]+$", "", s, flags=re.UNICODE)
    return " ".join(s.lower().split())


def descriptive(text: str) -> bool:
    return bool(normalized(text)) and normalized(text) not in NON_DESCRIPTIVE


# -- the data ----------------------------------------------------------------------------------------------


def _jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def zh_link_queries(folder: Path) -> list[dict]:
    """[{text, file, anchor, descriptive, count, resolved_upstream}] of the zh internal links, identical
    (text, target) pairs once, in file order."""
    out: dict[tuple, dict] = {}
    for r in _jsonl(folder / "derived" / "internal_anchor_links.jsonl"):
        key = (r["link_text"], r["target_file"], r["target_anchor"])
        if key in out:
            out[key]["count"] += 1
            continue
        out[key] = {"text": r["link_text"], "file": r["target_file"], "anchor": r["target_anchor"], "descriptive": descriptive(r["link_text"]),
                    "count": 1, "resolved_upstream": bool(r.get("resolved"))}
    return list(out.values())


def en_heading_queries(folder: Path) -> list[dict]:
    path = folder / "derived" / "zh_en_heading_alignment.jsonl"
    if not path.is_file():
        return []
    out: dict[tuple, dict] = {}
    for r in _jsonl(path):
        key = (r["en_text"], r["file"], r["anchor"])
        out.setdefault(key, {"text": r["en_text"], "file": r["file"], "anchor": r["anchor"], "descriptive": True, "count": 0})["count"] += 1
    return list(out.values())


def resolve_target(source: str, href: str, files: set[str]) -> tuple[str, str] | None:
    """(target file as 'src/...md', anchor) of an internal anchor link, or None (external, no anchor, unknown file)."""
    if "#" not in href or re.match(r"^[a-z][a-z0-9+.-]*:", href, re.I) or href.startswith("//"):
        return None
    page, anchor = href.split("#", 1)
    anchor = anchor.strip()
    if not anchor:
        return None
    if not page:
        return (source, anchor) if source in files else None
    page = re.sub(r"\.(md|html)$", "", page.split("?")[0]).rstrip("/")
    if page.startswith("/"):
        base = "src" + page
    else:
        parts = Path(source).parent.joinpath(page).parts
        stack: list[str] = []
        for p in parts:
            if p == "..":
                if stack:
                    stack.pop()
            elif p != ".":
                stack.append(p)
        base = "/".join(stack)
    for cand in (f"{base}.md", f"{base}/index.md"):
        if cand in files:
            return cand, anchor
    return None


def en_link_queries(en_folder: Path, files: set[str]) -> list[dict]:
    """Internal anchor links of the English docs (outside code fences) whose target file is a zh file."""
    src = en_folder / "src"
    out: dict[tuple, dict] = {}
    for path in sorted(src.rglob("*.md")):
        rel = "src/" + path.relative_to(src).as_posix()
        fence = None
        for line in path.read_text(encoding="utf-8").splitlines():
            m = _FENCE.match(line)
            if m:
                fence = None if fence == m.group(1) else (fence or m.group(1))
                continue
            if fence:
                continue
            for lm in _LINK.finditer(line):
                target = resolve_target(rel, lm.group(2), files)
                if target is None:
                    continue
                key = (lm.group(1), *target)
                if key in out:
                    out[key]["count"] += 1
                else:
                    out[key] = {"text": lm.group(1), "file": target[0], "anchor": target[1], "descriptive": descriptive(lm.group(1)), "count": 1}
    return list(out.values())


def doc_id_of(rel: str) -> str:
    stem = rel.removeprefix("src/").removesuffix(".md")
    return "vue_" + re.sub(r"[^0-9A-Za-z_-]+", "-", stem.replace("/", "__")).strip("-")


def title_of(outline: list[dict], rel: str) -> str:
    h1 = next((s["title"] for s in outline if s.get("level") == 1 and s.get("title")), None)
    return h1 or rel.removeprefix("src/").removesuffix(".md")


# -- the run -----------------------------------------------------------------------------------------------


def run(path, en=None, limit: int | None = None, work=None, log: Callable[[str], None] = print) -> dict:
    folder = Path(path)
    if not (folder / "derived" / "internal_anchor_links.jsonl").is_file() or not (folder / "src").is_dir():
        raise FileNotFoundError(f"no src/ and derived/internal_anchor_links.jsonl in {folder} (the vue_docs_zh_cn folder)")
    t0 = time.perf_counter()
    src = folder / "src"
    files = {"src/" + p.relative_to(src).as_posix(): p for p in sorted(src.rglob("*.md"))}
    sets = {"zh_links": zh_link_queries(folder), "en_headings": en_heading_queries(folder)}
    if en:
        sets["en_links"] = [q for q in en_link_queries(Path(en), set(files)) if q["descriptive"]]
    if limit:
        sets = {name: qs[:limit] for name, qs in sets.items()}
        need = {q["file"] for qs in sets.values() for q in qs if q["file"] in files}
        keep = need | set([f for f in files if f not in need][:DISTRACTOR_FILES])
        files = {f: p for f, p in files.items() if f in keep}
    tmp = None
    if work is None:
        tmp = work = Path(tempfile.mkdtemp(prefix="agentos-bench-links-"))
    try:
        res = _run(Path(work), files, sets, log)
    finally:
        if tmp is not None:
            shutil.rmtree(tmp, ignore_errors=True)
    res.update(dataset=str(folder), en=str(en) if en else None, limit=limit, distractor_files=DISTRACTOR_FILES if limit else None,
               versions=library_versions(), seconds=round(time.perf_counter() - t0, 1))
    return res


def _run(work: Path, files: dict[str, Path], sets: dict[str, list[dict]], log) -> dict:
    settings = bench_workspace(work)
    docs, file_of = [], {}
    for rel, p in files.items():
        doc_id = doc_id_of(rel)
        file_of[doc_id] = rel
        docs.append({"id": doc_id, "title": rel, "body": p.read_text(encoding="utf-8"), "source": rel})
    # The title is the file's first level-1 heading: parse once to find it, then publish with it.
    for d in docs:
        d["title"] = title_of(outline_of(d["body"]), d["source"])
    t = time.perf_counter()
    outlines = publish(settings, docs, source_type="vue-docs")
    anchors = {file_of[doc_id]: {s["anchor"] for s in outline} for doc_id, outline in outlines.items()}
    log(f"links: {len(docs)} files published as documents in {time.perf_counter() - t:.1f} s")

    gold: dict[str, dict] = {}
    for name, qs in sets.items():
        for q in qs:
            q["found"] = q["anchor"] in anchors.get(q["file"], ())
        g = {"queries": len(qs), "gold_resolves": sum(q["found"] for q in qs)}
        if name == "zh_links":
            g["upstream_resolved"] = sum(q["resolved_upstream"] for q in qs)
            g["both_resolved"] = sum(q["found"] and q["resolved_upstream"] for q in qs)
            g["unresolved"] = [f"{q['file']}#{q['anchor']} ({q['text']})" for q in qs if not q["found"]]
            g["links_total"] = sum(q["count"] for q in qs)
        gold[name] = g
    log("links: gold anchors resolve: " + ", ".join(f"{n} {g['gold_resolves']}/{g['queries']}" for n, g in gold.items()))

    sections, warm_s, identity = warm(settings, log)
    log(f"links: {sections} sections embedded in {warm_s} s")
    texts = list(dict.fromkeys(q["text"] for qs in sets.values() for q in qs if q["found"]))
    qs_ids = [(str(i), t) for i, t in enumerate(texts)]
    id_of = {t: str(i) for i, t in enumerate(texts)}
    results, timings, errors = {}, {}, {}
    for mode in MODES:
        results[mode], timings[mode], errors[mode] = search_all(settings, qs_ids, mode, log)

    def table(qs: list[dict]) -> dict:
        out = {}
        for mode in MODES:
            rows = []
            for q in qs:
                ranked = dedupe((file_of[h["doc_id"]], h["anchor"]) for h in results[mode][id_of[q["text"]]])
                rows.append(({(q["file"], q["anchor"])}, ranked))
            out[mode] = score(rows, prefix="hit")
            mine = [timings[mode][int(id_of[q["text"]])] for q in qs]
            out[mode].update(latency(mine))
        return out

    figures = {}
    for name, qs in sets.items():
        usable = [q for q in qs if q["found"]]
        if name == "zh_links":
            figures["zh_links"] = table([q for q in usable if q["descriptive"]])
            figures["zh_links_nondescriptive"] = table([q for q in usable if not q["descriptive"]])
            figures["zh_links_all"] = table(usable)
        else:
            figures[name] = table(usable)
    head = figures[HEADLINE]
    met = head["hybrid"]["hit@5"] is not None and head["hybrid"]["hit@5"] > max(head["bm25"]["hit@5"], head["dense"]["hit@5"])

    nondesc = sorted({q["text"] for q in sets["zh_links"] if not q["descriptive"]})
    return {"files": len(docs), "sections": sections, "embedder": identity, "embed_seconds": warm_s, "alpha": kb.ALPHA, "alpha_crowded": fusion.ALPHA_CROWDED, "clear_top": fusion.CLEAR_TOP, "agree_top": fusion.AGREE_TOP,
            "dense_pool": kb.DENSE_POOL, "gold": gold, "sets": figures, "distinct_query_texts": len(texts),
            "errors": errors, "non_descriptive_texts": nondesc,
            "goal": {"zh_links hybrid hit@5 > bm25 and dense": met}}


# -- output ------------------------------------------------------------------------------------------------
SET_NAMES = {"zh_links": "zh link texts (descriptive)", "zh_links_nondescriptive": "zh link texts (non-descriptive)",
             "zh_links_all": "zh link texts (all)", "en_headings": "English heading texts", "en_links": "English link texts (--en)"}


def render(res: dict) -> str:
    lines = [f"Vue docs zh ({res['dataset']}): {res['files']} files, {res['sections']} sections, embedder {res['embedder']}, "
             f"{res['seconds']} s" + (f", --limit {res['limit']}" if res.get("limit") else ""),
             "gold anchors resolve: " + ", ".join(f"{n} {g['gold_resolves']}/{g['queries']}" for n, g in res["gold"].items()),
             f"{'set':<34}{'mode':<8}{'hit@1':>7}{'hit@5':>7}{'hit@10':>7}{'MRR@10':>8}{'p50 ms':>8}{'n':>6}"]
    for name, modes in res["sets"].items():
        for mode, d in modes.items():
            if not d["queries"]:
                continue
            lines.append(f"{SET_NAMES.get(name, name):<34}{mode:<8}{d['hit@1']:>7.3f}{d['hit@5']:>7.3f}{d['hit@10']:>7.3f}"
                         f"{d['mrr@10']:>8.3f}{d['p50_ms']:>8}{d['queries']:>6}")
    ok = res["goal"]["zh_links hybrid hit@5 > bm25 and dense"]
    lines.append(f"goal (descriptive zh links: hybrid hit@5 above bm25-only and dense-only): {'met' if ok else 'NOT met'}")
    return "\n".join(lines)


def markdown(res: dict, command: str) -> str:
    g = res["gold"]["zh_links"]
    ok = res["goal"]["zh_links hybrid hit@5 > bm25 and dense"]
    md = ["# Vue docs (zh): section retrieval through the knowledge read path (`search_docs`)", "", f"`{command}`", "",
          f"{res['files']} Markdown files as {res['files']} knowledge documents ({res['sections']} sections), embedder "
          f"`{res['embedder']}` (section vectors embedded in {res['embed_seconds']} s), whole run {res['seconds']} s."
          + (f" Quick run: `--limit {res['limit']}`." if res.get("limit") else ""), "",
          f"Gold sections: of {g['links_total']} internal links, {g['queries']} distinct (text, target) pairs; the target anchor "
          f"is among the parsed anchors of its file for {g['gold_resolves']} (the data file marks {g['upstream_resolved']} resolved; "
          f"both: {g['both_resolved']}). "
          + "; ".join(f"{n}: {d['gold_resolves']}/{d['queries']} resolve" for n, d in res["gold"].items() if n != "zh_links") + ".", "",
          "| query set | mode | hit@1 | hit@5 | hit@10 | MRR@10 | p50 ms | queries |", "|---|---|---|---|---|---|---|---|"]
    for name, modes in res["sets"].items():
        for mode, d in modes.items():
            if not d["queries"]:
                continue
            strong = "**" if name == HEADLINE else ""
            md.append(f"| {SET_NAMES.get(name, name)} | `{mode}` | {d['hit@1']:.3f} | {strong}{d['hit@5']:.3f}{strong} | {d['hit@10']:.3f} | "
                      f"{d['mrr@10']:.3f} | {d['p50_ms']} | {d['queries']} |")
    md += ["", f"Goal (descriptive zh link texts: hybrid hit@5 above both bm25-only and dense-only): **{'met' if ok else 'not met'}**.", "",
           "- A hit is right when its document is the gold file and its anchor the gold anchor (the section's own lines; "
           "a parent or child section does not count).",
           "- Non-descriptive link texts (" + ", ".join(f"`{t}`" for t in res["non_descriptive_texts"]) + ") name nothing the "
           "target says; they are scored apart and left out of the headline.",
           "- English heading texts are cross-lingual queries: English words against Chinese sections whose explicit anchors are "
           "English slugs (the `{#anchor}` ids are in the text the read path indexes).",
           f"- Modes: `hybrid` (convex fusion, alpha {res['alpha']} on BM25, {res.get('alpha_crowded', res['alpha'])} when BM25's best does not stand {res.get('clear_top', 0)} above its second and the best by meaning is among BM25's first {res.get('agree_top', 0)}; dense pool {res['dense_pool']}), `bm25`, `dense`; "
           "latency is one `search_docs` call after the section vectors were embedded.", "",
           "```json", json.dumps(res, ensure_ascii=False, indent=1), "```", ""]
    return "\n".join(md)
