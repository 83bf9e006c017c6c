"""Classify an inbox item into the knowledge taxonomy (design doc 3.1/3.2, "Refine: classify").

Two paths:

* **chat model** (``client``, any OpenAI-compatible endpoint): one call that lists every category (path and
  description) and asks for ``{"category": path, "confidence": x}``; the answer is validated (the path must be
  a category of the taxonomy). Any failure falls back to the offline path and ``method`` says so.
* **offline**: rules, then embedding similarity, combined.

  - An explicit ``category:`` (frontmatter or ``meta``) naming a known category is decisive.
  - *Form* rules look at how an item is written, which the topic embedding cannot see: a step-by-step
    procedure is a method whatever its subject, "I think" makes an opinion, a page of links is a resource,
    "deprecated" archives it, endpoints and parameters make a reference, a page dense with figures is facts.
    Each rule adds a weight to its category; a clear winner (weight >= ``DECISIVE`` and a margin) decides
    alone (``method="rules"``).
  - Otherwise the item (title + head, embedded once and cached) is compared with every category's
    description and examples from ``99_system/taxonomy.md``: the score of a category is the mean of its best
    example similarity and its centroid similarity. E5 similarities are compressed (unrelated texts still
    score ~0.8), so they are z-scored across categories before being mixed with the rule weights and the
    taxonomy's keyword hits (``method="embedding+rules"``, or ``"embedding"`` when nothing else fired).

The rules were written together with the "dev" half of ``bench/data/kb_classify_sample.jsonl``, and the one weight
changed after measuring was chosen on its odd lines; ``bench/kb_classify_bench.py`` reports those splits and the
"fresh" items written after the classifier was frozen (results in ``bench/results/kb_classify.md``).
"""

from __future__ import annotations

import hashlib
import math
import re
from collections.abc import Sequence

import numpy as np

from agentos_mem.knowledge.taxonomy import Category
from agentos_mem.kernel.text import CJK

HEAD_CHARS = 500  # embedding a whole document costs ~1 s on two cores; its head carries the topic
DECISIVE = 2.0  # rule weight at which rules decide alone ...
DECISIVE_MARGIN = 1.0  # ... when no other category's rule weight comes within this margin
Z_SCALE = 1.6  # z-scored embedding similarity -> logit
RULE_SCALE = 1.0  # rule weight -> logit
KEYWORD_SCALE = 1.0  # one taxonomy keyword hit -> logit (capped at KEYWORD_CAP hits)
KEYWORD_CAP = 3

# -- rules ----------------------------------------------------------------------------------------------------

_N = r"[一二三四五六七八九十百千0-9０-９]+"  # Chinese or Arabic numerals, for 第X条 / 第X步
_I = re.IGNORECASE | re.MULTILINE

# (category, weight, pattern, why). Weights: 2+ is an unmistakable marker, 1 a strong hint, 0.5 a weak one.
# Patterns are Unicode-aware on purpose: Chinese markers need no word boundaries, English ones do.
RULES: list[tuple[str, float, re.Pattern, str]] = [
    ("90_archive", 2.5, re.compile(r"已废弃|已作废|已过时|已停用|已失效|已下线|已注销|（过时）|\(过时\)|【废弃】|不再(?:使用|适用|维护|有效)|"
                                   r"\b(?:deprecated|obsolete|superseded|no longer (?:used|built|maintained|supported|valid)|shut down|archived for)\b", _I),
     "deprecated/obsolete marker"),
    ("90_archive", 1.0, re.compile(r"废弃|过时|停用|作废|旧版|\blegacy\b|\bretired\b|\bdo not (?:follow|use)\b", _I), "outdated hint"),
    ("20_methods", 2.0, re.compile(rf"第{_N}步|(?:^|\n)\s*(?:步骤|step)\s*{_N}|\bSOP\b|操作流程|\bhow to\b|\bchecklist\b|\bsteps? to\b", _I),
     "procedure marker"),
    ("20_methods", 1.0, re.compile(r"步骤|流程|指南|教程|清单|^如何|^怎么|如何做|怎样|\bstart by\b|\bthen\b.*\bthen\b|\bfirst\b.*\bthen\b|"
                                   r"\bwalkthrough\b|\btutorial\b|^#+\s*steps\b", _I),
     "how-to hint"),
    ("60_opinions", 2.0, re.compile(r"我认为|我觉得|个人看法|在我看来|我不建议|我建议|书评|影评|\bI think\b|\bI believe\b|\bin my (?:view|opinion)\b|"
                                    r"\breview:|\bI (?:disagree|would recommend|would not recommend)\b|\boverrated\b|\boversold\b", _I),
     "opinion marker"),
    ("60_opinions", 1.0, re.compile(r"值得一读|不值得|评论|看法|\bshould\b|\boverused\b|\bunderestimated\b|\brecommend\b", _I), "judgement hint"),
    ("10_concepts/personal-insight", 2.0, re.compile(r"我发现|我意识到|让我意识到|我才明白|我(?:的)?体会|反思|复盘|教训|踩过的坑|"
                                                     r"\bI (?:noticed|realised|realized|learned|learnt)\b|\blessons? learned\b|\btaught me\b|"
                                                     r"\bmy biggest realisation\b|\bnote to myself\b", _I),
     "first-person reflection"),
    ("50_resources", 2.0, re.compile(r"资源合集|书单|工具(?:清单|合集|推荐)|网站汇总|链接汇总|\bawesome\b|\blist of\b|\bworth following\b|"
                                     r"\buseful (?:links|public datasets|resources)\b|\bfree (?:\w+ )?courses\b", _I),
     "link/resource list marker"),
    ("50_resources", 1.0, re.compile(r"合集|汇总|推荐|常用的|课程|\bresources\b|\bpodcasts?\b|\bdatasets\b|\bcourses?\b", _I), "resource hint"),
    ("40_references", 2.0, re.compile(r"\b(?:GET|POST|PUT|PATCH|DELETE)\s+/|速查|接口文档|配置项|命令参考|\bquick reference\b|\bcheat ?sheet\b|"
                                      r"\bRFC\s?\d+|\bISO\s?\d{3,}|\bparameters?:|请求体|返回值", _I),
     "API/spec marker"),
    ("40_references", 1.0, re.compile(r"参数|返回|默认|\breturns?\b|\bdefaults? to\b|\boptions?\b|\bformat\b", _I), "reference hint"),
    ("30_facts", 1.0, re.compile(r"统计公报|统计|同比|合计|记录|\brecords?\b|\bmetrics\b|\bfigures?\b|\bas of \d{4}\b", _I), "data hint"),
    ("10_concepts/law", 1.0, re.compile(rf"第{_N}条|[法律]规定|条例|法院|合同法|民法典|刑事|\bstatute\b|\bcourts?\b|\bregulation\b|\bGDPR\b", _I),
     "law marker"),
]

# Numbers with a unit or separator count as figures; a page with many is data whatever its topic.
_FIGURE = re.compile(r"\d[\d,.:]*\s*(?:%|‰|元|万|亿|吨|人|GB|TB|MB|核|小时|年|月|个|次|percent\b|hours?\b|billion\b|million\b)?")


_NOT_FIGURES = re.compile(r"^\s*\d+[.、)]\s|`[^`\n]*`|```.*?```", re.M | re.S)  # list numbers and code are not data


def _figure_weight(text: str) -> tuple[float, str] | None:
    n = len(_FIGURE.findall(_NOT_FIGURES.sub(" ", text)))
    if n >= 8:
        return 2.0, f"{n} figures"
    if n >= 5:
        return 1.0, f"{n} figures"
    return None


def _url_weight(text: str) -> tuple[float, str] | None:
    n = len(re.findall(r"https?://|www\.", text))
    return (2.0, f"{n} links") if n >= 2 else None


def rule_scores(text: str, known: set[str]) -> dict[str, tuple[float, list[str]]]:
    """Rule weight and reasons per category (each rule counts once)."""
    out: dict[str, tuple[float, list[str]]] = {}

    def add(cat: str, weight: float, why: str) -> None:
        if cat in known:
            w, reasons = out.get(cat, (0.0, []))
            out[cat] = (w + weight, [*reasons, why])

    for cat, weight, pattern, why in RULES:
        if pattern.search(text):
            add(cat, weight, why)
    for cat, fn in (("30_facts", _figure_weight), ("50_resources", _url_weight)):
        hit = fn(text)
        if hit:
            add(cat, *hit)
    return out


# -- frontmatter ----------------------------------------------------------------------------------------------

_FRONTMATTER = re.compile(r"\A---\s*\n(.*?)\n---\s*(?:\n|\Z)", re.S)


def split_frontmatter(text: str) -> tuple[dict[str, str], str]:
    """Flat ``key: value`` frontmatter (enough for ``category:``) and the body after it."""
    m = _FRONTMATTER.match(text or "")
    if not m:
        return {}, text or ""
    meta = {}
    for line in m.group(1).splitlines():
        key, sep, value = line.partition(":")
        if sep and key.strip():
            meta[key.strip().lower()] = value.strip().strip("'\"")
    return meta, text[m.end():]


def _explicit_category(meta: dict, known: set[str]) -> str | None:
    value = str(meta.get("category") or meta.get("分类") or "").strip().strip("/")
    return value if value in known else None


# -- keywords -------------------------------------------------------------------------------------------------

_HAS_CJK = re.compile(f"[{CJK}]")


def keyword_hits(text: str, keywords: Sequence[str], tokenizer=None) -> list[str]:
    """Keywords present in the text. Chinese keywords match as substrings (jieba may cut a keyword differently
    in context); others match whole words (``\\b`` is Unicode-aware), or whole token runs with a tokenizer."""
    low = text.casefold()
    tokens = " " + " ".join(tokenizer.tokens(text)) + " " if tokenizer is not None else None
    hits = []
    for kw in keywords:
        k = kw.casefold().strip()
        if not k:
            continue
        if _HAS_CJK.search(k):
            found = k in low
        elif tokens is not None and tokenizer.tokens(k):
            found = " " + " ".join(tokenizer.tokens(k)) + " " in tokens
        else:
            found = re.search(rf"(?<!\w){re.escape(k)}(?!\w)", low) is not None
        if found:
            hits.append(kw)
    return hits


# -- embeddings -----------------------------------------------------------------------------------------------

_MEMO: dict[tuple[str, str], np.ndarray] = {}  # (embedder identity, text hash) -> vector, per process


def _hash(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()  # same key as the index cache (index.units)


def embed_texts(texts: list[str], embedder, cache=None) -> np.ndarray:
    """Document vectors, from the process memo, then ``cache`` (indexing.Cache), then the embedder."""
    ident = embedder.identity
    hashes = [_hash(t) for t in texts]
    missing = [h for h in dict.fromkeys(hashes) if (ident, h) not in _MEMO]
    if missing and cache is not None:
        for h, v in cache.vectors(ident, missing).items():
            _MEMO[(ident, h)] = np.asarray(v, dtype=np.float32)
    todo = {h: t for h, t in zip(hashes, texts) if (ident, h) not in _MEMO}
    if todo:
        vectors = embedder.embed_documents(list(todo.values()))
        fresh = dict(zip(todo, vectors))
        for h, v in fresh.items():
            _MEMO[(ident, h)] = np.asarray(v, dtype=np.float32)
        if cache is not None:
            cache.put_vectors(ident, fresh)
    return np.stack([_MEMO[(ident, h)] for h in hashes])


def category_texts(cat: Category) -> list[str]:
    """What a category is compared by: its description (with its path, which names the domain) and examples."""
    return [f"{cat.path}: {cat.description}", *cat.examples]


def embedding_scores(item: str, taxonomy: list[Category], embedder, cache=None) -> dict[str, float]:
    """Per category: mean of the best example/description similarity and the centroid similarity."""
    texts = [t for c in taxonomy for t in category_texts(c)]
    vecs = embed_texts([item, *texts], embedder, cache)
    q, rest = vecs[0], vecs[1:]
    out, i = {}, 0
    for c in taxonomy:
        n = len(category_texts(c))
        block = rest[i:i + n]
        i += n
        centroid = block.mean(axis=0)
        centroid /= np.linalg.norm(centroid) or 1.0
        out[c.path] = float(0.5 * (block @ q).max() + 0.5 * (centroid @ q))
    return out


def _zscores(scores: dict[str, float]) -> dict[str, float]:
    vals = np.array(list(scores.values()))
    sd = float(vals.std()) or 1.0
    mean = float(vals.mean())
    return {k: (v - mean) / sd for k, v in scores.items()}


def _softmax(logits: dict[str, float]) -> dict[str, float]:
    top = max(logits.values())
    exp = {k: math.exp(v - top) for k, v in logits.items()}
    total = sum(exp.values())
    return {k: v / total for k, v in exp.items()}


def item_text(title: str, body: str) -> str:
    return f"{title.strip()}\n{body.strip()[:HEAD_CHARS]}".strip()


# -- the offline classifier -----------------------------------------------------------------------------------


def _result(category: str, confidence: float, method: str, ranked: list[tuple[str, float]], why: str) -> dict:
    return {"category": category, "confidence": round(float(min(1.0, max(0.0, confidence))), 3), "method": method,
            "scores": [(p, round(float(s), 3)) for p, s in ranked[:3]], "why": why}


def _decisive_rule(rules: dict[str, tuple[float, list[str]]]) -> str | None:
    ranked = sorted(rules.items(), key=lambda kv: -kv[1][0])
    if not ranked or ranked[0][1][0] < DECISIVE:
        return None
    runner_up = ranked[1][1][0] if len(ranked) > 1 else 0.0
    return ranked[0][0] if ranked[0][1][0] - runner_up >= DECISIVE_MARGIN else None


def classify_offline(title: str, text: str, *, taxonomy: list[Category], embedder=None, cache=None, tokenizer=None,
                     meta: dict | None = None, variant: str = "full") -> dict:
    """``variant``: "full" (rules + embedding + keywords), "rules" (rules and keywords only), "embedding"
    (similarity only). The last two exist so the benchmark can show what each part contributes."""
    known = {c.path for c in taxonomy}
    front, body = split_frontmatter(text)
    explicit = _explicit_category({**front, **(meta or {})}, known)
    if explicit and variant != "embedding":
        return _result(explicit, 1.0, "rules", [(explicit, 1.0)], "explicit category in frontmatter/meta")
    full = f"{title}\n{body}"
    rules = rule_scores(full, known) if variant != "embedding" else {}
    decisive = _decisive_rule(rules) if variant == "full" else None
    kw = {c.path: keyword_hits(full, c.keywords, tokenizer) for c in taxonomy} if variant != "embedding" else {}
    if decisive:
        ranked = sorted(((p, w) for p, (w, _) in rules.items()), key=lambda kv: -kv[1])
        return _result(decisive, _sigmoid_margin(rules, decisive), "rules", ranked, "; ".join(rules[decisive][1]))
    if variant == "rules":
        return _rules_only(taxonomy, rules, kw)
    if embedder is None:
        raise ValueError("the offline classifier needs an embedder for the embedding variant (or variant='rules')")
    sims = embedding_scores(item_text(title, body), taxonomy, embedder, cache)
    logits = {p: Z_SCALE * z for p, z in _zscores(sims).items()}
    for p in logits:
        logits[p] += RULE_SCALE * rules.get(p, (0.0, []))[0] + KEYWORD_SCALE * min(len(kw.get(p, [])), KEYWORD_CAP)
    probs = _softmax(logits)
    ranked = sorted(probs.items(), key=lambda kv: -kv[1])
    best = ranked[0][0]
    used_rules = bool(rules or any(kw.values()))
    why = _why(best, sims, rules, kw)
    return _result(best, ranked[0][1], "embedding+rules" if used_rules else "embedding", ranked, why)


def _sigmoid_margin(rules: dict[str, tuple[float, list[str]]], best: str) -> float:
    others = [w for p, (w, _) in rules.items() if p != best]
    margin = rules[best][0] - max(others, default=0.0)
    return 1.0 / (1.0 + math.exp(-margin))


def _rules_only(taxonomy: list[Category], rules: dict, kw: dict) -> dict:
    score = {c.path: rules.get(c.path, (0.0, []))[0] + KEYWORD_SCALE * min(len(kw.get(c.path, [])), KEYWORD_CAP) for c in taxonomy}
    ranked = sorted(score.items(), key=lambda kv: -kv[1])  # stable: ties keep taxonomy order
    if ranked[0][1] <= 0:
        return _result(ranked[0][0], 0.0, "rules", ranked, "no rule or keyword matched (taxonomy's first category)")
    probs = _softmax(score)
    return _result(ranked[0][0], probs[ranked[0][0]], "rules", ranked, _why(ranked[0][0], {}, rules, kw))


def _why(best: str, sims: dict, rules: dict, kw: dict) -> str:
    parts = []
    if sims:
        parts.append(f"similarity {sims[best]:.3f}")
    if best in rules:
        parts.append("; ".join(rules[best][1]))
    if kw.get(best):
        parts.append("keywords: " + ", ".join(kw[best][:KEYWORD_CAP]))
    return "; ".join(parts) or "closest category"


# -- the chat model -------------------------------------------------------------------------------------------

LLM_SYSTEM = """You file notes into a personal knowledge base. Pick exactly one category path from the list for the note.
Concept categories (10_concepts/<domain>) are for explanations of a domain's ideas; choose 20_methods for procedures and
how-tos, 30_facts for data and figures, 40_references for specs/API docs/manuals, 50_resources for lists of links or tools,
60_opinions for opinions and reviews, 90_archive for outdated or deprecated material, whatever their subject.
Return only JSON: {"category": "<one path from the list>", "confidence": 0.0-1.0}."""


def _llm_user(title: str, text: str, taxonomy: list[Category]) -> str:
    listing = "\n".join(f"- {c.path}: {c.description}" for c in taxonomy)
    return f"Categories:\n{listing}\n\nNote title: {title}\nNote:\n{text.strip()[:2000]}"


def classify_with_model(title: str, text: str, taxonomy: list[Category], client) -> dict:
    """Raises ``LLMError`` when the answer is unusable (not JSON, unknown category, bad confidence)."""
    # lazy: kernel.llm pulls httpx: only when this runs
    from agentos_mem.kernel.llm import LLMError

    data = client.complete_json(LLM_SYSTEM, _llm_user(title, text, taxonomy))
    if not isinstance(data, dict):
        raise LLMError("model answer is not a JSON object")
    path = str(data.get("category", "")).strip().strip("/")
    if path not in {c.path for c in taxonomy}:
        raise LLMError(f"model named an unknown category {path!r}")
    try:
        confidence = float(data.get("confidence", 0.8))
    except (TypeError, ValueError) as e:
        raise LLMError("model confidence is not a number") from e
    if not math.isfinite(confidence):
        raise LLMError("model confidence is not finite")
    return _result(path, confidence, f"llm:{client.model}", [(path, confidence)], "chosen by the chat model")


def classify(title: str, text: str, *, taxonomy: list[Category], embedder=None, cache=None, tokenizer=None, client=None,
             meta: dict | None = None, variant: str = "full") -> dict:
    """``{"category", "confidence", "method", "scores" (top 3), "why"}``; see the module docstring.

    An explicit ``category:`` beats the chat model too: the user said where the item goes."""
    known = {c.path for c in taxonomy}
    front, _ = split_frontmatter(text)
    if client is not None and not _explicit_category({**front, **(meta or {})}, known):
        # lazy: kernel.llm pulls httpx: only when this runs
        from agentos_mem.kernel.llm import LLMError

        try:
            return classify_with_model(title, text, taxonomy, client)
        except LLMError as e:
            out = classify_offline(title, text, taxonomy=taxonomy, embedder=embedder, cache=cache, tokenizer=tokenizer,
                                   meta=meta, variant=variant if embedder is not None else "rules")
            out["method"] += f" (model failed: {str(e)[:120]})"
            return out
    return classify_offline(title, text, taxonomy=taxonomy, embedder=embedder, cache=cache, tokenizer=tokenizer, meta=meta,
                            variant=variant)
