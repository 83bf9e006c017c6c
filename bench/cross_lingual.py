"""``agentos bench crosslingual``: a question in one language about memory or knowledge written in the other.

Two read paths, each asked in its own language (the reference) and in the other, with an unrelated control:

- **memory recall** (``query.recall.recall``) on MADial-Bench: user 1's memories exist in both languages with the
  same ids (Bart's events, ``zh_memories`` / ``en_memories``), and so do his dialogue contexts. Each context is
  recalled over his records in Chinese and in English. *Passed*: recall served something; *evidence*: it served a
  gold memory. Control: LoCoMo questions (other people's lives, English) recalled over the same records must serve
  nothing.
- **knowledge answers** (``query.kb_answer.answer``) on the Vue docs in Chinese, published as a knowledge base: the
  English headings aligned with the Chinese ones (``derived/zh_en_heading_alignment.jsonl``) are the cross-lingual
  questions, the Chinese link texts (descriptive) the same-language reference. *Passed*: not ``not_covered``;
  *evidence*: the aligned section is among the answer's citations or pointers. Control: LoCoMo questions must
  come back ``not_covered``.

The memory query's own cross-lingual figures are in ``bench/results/facts.md`` (fact_updates' cross-lingual
questions) and ``bench/results/gate-calibration.md`` (MemoryBank, the demo's unrelated questions).

    agentos bench crosslingual $AGENTOS_EVAL_DIR --work /tmp/xl --report bench/results/cross-lingual.md
"""

from __future__ import annotations

import json
import random
import shutil
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from agentos_mem.bench.beir import USER as KB_USER, bench_workspace, publish, warm
from agentos_mem.bench.links import doc_id_of, en_heading_queries, title_of, zh_link_queries
from agentos_mem.bench.locomo import library_versions
from agentos_mem.bench.madial import load, record_of
from agentos_mem.index.stages import make_settings_embedder
from agentos_mem.kernel.settings import load_settings
from agentos_mem.kernel.workspace import init_workspace
from agentos_mem.knowledge.refine import outline_of
from agentos_mem.query.kb import KBQueryError
from agentos_mem.query.kb_answer import answer
from agentos_mem.query.recall import LexicalSelector, recall, record_tokenizer
from agentos_mem.storage.memory_records import open_book

USER = "u1"
CONTROL_QUESTIONS = 100


def locomo_questions(eval_dir: Path, n: int = CONTROL_QUESTIONS, seed: int = 5) -> list[str]:
    """``n`` LoCoMo questions drawn across its conversations (a fixed draw): questions no MADial or Vue text answers."""
    rows = [json.loads(line) for line in (eval_dir / "locomo" / "qa.jsonl").read_text(encoding="utf-8").splitlines() if line.strip()]
    qs = sorted({r["question"] for r in rows if r.get("category") != 5})
    return random.Random(seed).sample(qs, min(n, len(qs)))


def _rate(xs: list[bool]) -> float | None:
    return round(sum(xs) / len(xs), 3) if xs else None


# -- memory recall on MADial ------------------------------------------------------------------------------


def recall_part(eval_dir: Path, work: Path, controls: list[str], limit: int | None, log) -> dict:
    folder = eval_dir / "madial"
    data = {lang: load(folder, lang) for lang in ("zh", "en")}
    out: dict = {}
    for mem_lang in ("zh", "en"):
        memories, _, owner = data[mem_lang]
        mine = [m for m in memories if owner[m["memory_id"]] == 1]
        home = work / f"madial-{mem_lang}" / "home"
        shutil.rmtree(home.parent, ignore_errors=True)
        init_workspace(home)
        settings = load_settings(home=home, llm_base_url=None, recall_selector="lexical", memory_backend="files")
        book = open_book(settings)
        for m in mine:
            name, desc, body = record_of(m, mem_lang)
            book.create(USER, name, desc, "user", body)
        held = {m["memory_id"] for m in mine}
        sel = LexicalSelector(record_tokenizer(home), make_settings_embedder(settings))
        for q_lang in ("zh", "en"):
            queries = [q for q in data[q_lang][1] if q["user_id"] == 1 and set(q["relevant_memory_ids"]) & held][:limit]
            passed, evidence = [], []
            for q in queries:
                r = recall(q["query_context"], user=USER, settings=settings, book=book, selector=sel)
                got = {int(h["name"].removeprefix("madial-")) for h in r.hits}
                passed.append(bool(got))
                evidence.append(bool(got & set(q["relevant_memory_ids"])))
            stopped = [not recall(c, user=USER, settings=settings, book=book, selector=sel).hits for c in controls] if q_lang == "en" else []
            key = f"{q_lang}>{mem_lang}"
            # the cross-lingual constants of query.recall were chosen on the even-numbered half: both halves apart
            out[key] = {"queries": len(queries), "passed": _rate(passed), "evidence": _rate(evidence),
                        "evidence_even": _rate(evidence[0::2]), "evidence_odd": _rate(evidence[1::2])}
            if stopped:
                out[f"unrelated(en)>{mem_lang}"] = {"queries": len(stopped), "stopped": _rate(stopped),
                                                    "stopped_even": _rate(stopped[0::2]), "stopped_odd": _rate(stopped[1::2])}
            log(f"crosslingual recall {key}: passed {out[key]['passed']}, evidence {out[key]['evidence']} over {len(queries)}")
    return out


# -- knowledge answers on the Vue docs ---------------------------------------------------------------------------


def answer_part(eval_dir: Path, work: Path, controls: list[str], limit: int | None, log) -> dict:
    folder = eval_dir / "vue_docs_zh_cn"
    settings = bench_workspace(work / "vue")
    src = folder / "src"
    sets = {"en>zh (English headings)": en_heading_queries(folder),
            "zh>zh (Chinese link texts)": [q for q in zh_link_queries(folder) if q["descriptive"]]}
    files = ["src/" + p.relative_to(src).as_posix() for p in sorted(src.rglob("*.md"))]
    if limit:  # a quick run: the files its questions target, and as many others
        sets = {name: qs[:limit] for name, qs in sets.items()}
        need = {q["file"] for qs in sets.values() for q in qs}
        files = [f for f in files if f in need] + [f for f in files if f not in need][:len(need)]
    docs, file_of = [], {}
    for rel in files:
        p = folder / rel
        body = p.read_text(encoding="utf-8")
        doc_id = doc_id_of(rel)
        file_of[doc_id] = rel
        docs.append({"id": doc_id, "title": title_of(outline_of(body), rel), "body": body, "source": rel})
    outlines = publish(settings, docs, source_type="vue-docs")
    anchors = {file_of[d]: {s["anchor"] for s in o} for d, o in outlines.items()}
    sections, seconds, _ = warm(settings, log)
    log(f"crosslingual answers: {len(docs)} documents, {sections} sections ({seconds} s to embed)")
    out: dict = {}
    for name, qs in sets.items():
        qs = [q for q in qs if q["anchor"] in anchors.get(q["file"], ())]
        passed, evidence, refused = [], [], 0
        for q in qs:
            try:
                a = answer(settings, KB_USER, q["text"])
            except KBQueryError:  # nothing to look up ("Get Support": question words only): not answered
                refused += 1
                passed.append(False)
                evidence.append(False)
                continue
            where = {(file_of.get(c["doc_id"]), c["anchor"]) for c in [*a.get("citations", []), *a.get("pointers", [])]}
            passed.append(a["status"] != "not_covered")
            evidence.append((q["file"], q["anchor"]) in where)
        out[name] = {"queries": len(qs), "passed": _rate(passed), "evidence": _rate(evidence), "no_key_terms": refused}
        log(f"crosslingual answers {name}: passed {out[name]['passed']}, evidence {out[name]['evidence']} over {len(qs)}")
    stopped = []
    for c in controls:
        try:
            stopped.append(answer(settings, KB_USER, c)["status"] == "not_covered")
        except KBQueryError:
            stopped.append(True)
    out["unrelated(en)>zh (LoCoMo questions)"] = {"queries": len(stopped), "stopped": _rate(stopped)}
    return out


# -- the run -----------------------------------------------------------------------------------------------------


def run(path, *, work=None, limit: int | None = None, log: Callable[[str], None] = print) -> dict:
    eval_dir = Path(path)
    for need in ("madial/zh_memories.jsonl", "locomo/qa.jsonl", "vue_docs_zh_cn/derived/zh_en_heading_alignment.jsonl"):
        if not (eval_dir / need).is_file():
            raise FileNotFoundError(f"no {need} in {eval_dir} (the shared eval folder)")
    t0 = time.perf_counter()
    controls = locomo_questions(eval_dir, limit or CONTROL_QUESTIONS)
    tmp = None
    if work is None:
        tmp = work = Path(tempfile.mkdtemp(prefix="agentos-bench-xl-"))
    try:
        res = {"recall": recall_part(eval_dir, Path(work), controls, limit, log),
               "answers": answer_part(eval_dir, Path(work), controls, limit, log)}
    finally:
        if tmp is not None:
            shutil.rmtree(tmp, ignore_errors=True)

    res.update(dataset=str(eval_dir), limit=limit, controls=len(controls), versions=library_versions(), seconds=round(time.perf_counter() - t0, 1))
    return res


def render(res: dict) -> str:
    lines = []
    for part, title in (("recall", "memory recall (MADial, user 1)"), ("answers", "knowledge answers (Vue docs in Chinese)")):
        lines.append(title)
        for name, r in res[part].items():
            figs = ", ".join(f"{k} {v}" for k, v in r.items() if k in ("passed", "evidence", "stopped"))
            lines.append(f"  {name:<34} {figs} ({r['queries']} questions)")
    return "\n".join(lines)


def markdown(res: dict, command: str) -> str:
    md = ["# Cross-lingual questions: memory recall and knowledge answers", "", f"`{command}`", "",
          "Method: bench/cross_lingual.py's docstring. *passed*: the read path served something (recall) or did not answer "
          "`not_covered` (knowledge); *evidence*: what it served holds the gold memory or the aligned section; *stopped*: "
          "an unrelated question got nothing. Pairs read question language > memory language.", ""]
    for part, title in (("recall", "Memory recall (MADial, user 1's memories in both languages)"),
                        ("answers", "Knowledge answers (Vue docs in Chinese published as a knowledge base)")):
        md += [f"## {title}", "", "| pair | questions | passed | evidence (even / odd half) | unrelated stopped (even / odd half) |",
               "|---|---|---|---|---|"]
        halves = lambda r, k: f" ({r[k + '_even']} / {r[k + '_odd']})" if k + "_even" in r else ""  # noqa: E731
        for name, r in res[part].items():
            ev = f"{r['evidence']}{halves(r, 'evidence')}" if "evidence" in r else ""
            st = f"{r['stopped']}{halves(r, 'stopped')}" if "stopped" in r else ""
            md.append(f"| {name} | {r['queries']} | {r.get('passed', '')} | {ev} | {st} |")
        md.append("")
    md += ["```json", json.dumps(res, ensure_ascii=False, indent=1), "```", ""]
    return "\n".join(md)
