"""The ingest review every knowledge item passes (AgentOS 3.3 入库审查): source reliability, consistency
with the L2 facts, time validity; and which version rule (3.4 知识版本管理) a re-ingested document falls under.

Plain functions over plain data; refine.py runs them in order and logs each outcome to ``logs/kb_ingest.log``.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from datetime import date, timedelta
from pathlib import Path
from urllib.parse import urlparse

import yaml

from agentos_mem.kernel.files import guard

BASELINE = 0.5
ADJUST = {"official": 0.3, "known_blog": 0.1, "own": 0.0, "forum": -0.1, "unknown": -0.3}
TECHNICAL_DAYS = 180

RELIABILITY_TEMPLATE = """\
# Source reliability lists for the knowledge ingest review (AgentOS 3.3).
# Score = 0.5 baseline + the class adjustment: official docs or papers +0.3, known technical blogs +0.1,
# your own notes and tool submissions 0.0, personal blogs or forums -0.1, unknown sources or social media -0.3.
# Entries are host names (a suffix matches: "python.org" covers "docs.python.org") or URL prefixes.
official:
  - docs.python.org
  - python.org
  - arxiv.org
  - acm.org
  - ieee.org
  - w3.org
  - ietf.org
  - rfc-editor.org
  - postgresql.org
  - kubernetes.io
  - go.dev
  - vuejs.org
  - developer.mozilla.org
  - learn.microsoft.com
  - docs.aws.amazon.com
  - cloud.google.com
  - gov.cn
  - npc.gov.cn
  - gov
known_blog:
  - martinfowler.com
  - blog.cloudflare.com
  - engineering.fb.com
  - netflixtechblog.com
  - ruanyifeng.com
  - infoq.cn
  - infoq.com
  - highscalability.com
forum:
  - medium.com
  - dev.to
  - stackoverflow.com
  - v2ex.com
  - zhihu.com
  - csdn.net
  - reddit.com
  - juejin.cn
  - segmentfault.com
social:
  - twitter.com
  - x.com
  - weibo.com
  - facebook.com
  - douyin.com
  - xiaohongshu.com
"""


def load_reliability(path: Path) -> dict[str, list[str]]:
    """The workspace's source lists (created from the template when absent; the user's edits win)."""
    below = guard(path)  # a link or a FIFO in its place is named, never followed (kernel.files.Below)
    if not os.path.lexists(path):
        below.write(path, RELIABILITY_TEMPLATE)
    try:
        data = yaml.safe_load(below.read_text(path)) or {}
    except yaml.YAMLError as e:
        raise ValueError(f"{path}: not valid YAML ({e})") from None
    return {k: [str(x).lower() for x in (data.get(k) or [])] for k in ("official", "known_blog", "forum", "social")}


def _listed(url: str, entries: list[str]) -> bool:
    """A host-name entry matches the host or any subdomain; an entry with a '/' is a URL prefix (scheme ignored)."""
    host = (urlparse(url).hostname or "").lower()
    bare = re.sub(r"^https?://", "", url.lower())
    for e in entries:
        e = re.sub(r"^https?://", "", e)
        if "/" in e:
            if bare.startswith(e):
                return True
        elif host == e or host.endswith("." + e):
            return True
    return False


def reliability(meta: dict, lists: dict[str, list[str]]) -> dict:
    """{score, class, why} for an item's source (frontmatter ``source``/``source_url``/``link``, ``source_type``)."""
    url = str(meta.get("source_url") or meta.get("link") or meta.get("source") or "")
    stype = str(meta.get("source_type") or "")
    if url.startswith(("http://", "https://")):
        for cls, key in (("official", "official"), ("known_blog", "known_blog"), ("forum", "forum"), ("unknown", "social")):
            if _listed(url, lists[key]):
                return _score(cls, f"{urlparse(url).hostname} is listed as {key.replace('_', ' ')}")
        if str(meta.get("kind", "")).lower() in ("paper", "论文"):
            return _score("official", "a paper (frontmatter kind)")
        return _score("unknown", f"{urlparse(url).hostname} is on no list (99_system/reliability.yaml)")
    if stype in ("personal", "tools", "folder", "memory"):
        return _score("own", f"the user's own material ({stype})")
    return _score("unknown", "no source given")


def _score(cls: str, why: str) -> dict:
    return {"score": round(BASELINE + ADJUST[cls], 2), "class": cls, "why": why}


# -- time validity ------------------------------------------------------------------------------------------
_LAW_VALID = re.compile(r"(?:有效期(?:至|到)|施行至|废止日期|valid\s+(?:until|through)|expires?\s+on)\s*[:：]?\s*"
                        r"(\d{4})\s*[-年./]\s*(\d{1,2})\s*[-月./]\s*(\d{1,2})", re.I)
_AXIOM_DOMAINS = ("10_concepts/math", "10_concepts/physics")
_TECH_DOMAINS = ("10_concepts/cs", "10_concepts/ai", "20_methods", "40_references", "50_resources")


@dataclass
class Validity:
    nature: str
    valid_until: str | None
    why: str


def validity(category: str, text: str, meta: dict, today: date) -> Validity:
    """Technical knowledge expires after 180 days, law by its stated validity, opinions and personal insight
    never (nature opinion), axioms never; other facts do not expire."""
    if meta.get("valid_until"):
        return Validity(meta.get("nature") or "fact", str(meta["valid_until"])[:10], "valid_until given in the source")
    if category == "10_concepts/law":
        m = _LAW_VALID.search(text)
        if m:
            y, mo, d = (int(x) for x in m.groups())
            try:
                return Validity("law", date(y, mo, d).isoformat(), "the law states its validity")
            except ValueError:
                pass
        return Validity("law", None, "law without a stated end of validity: valid until superseded")
    if category in ("60_opinions", "10_concepts/personal-insight"):
        return Validity("opinion", None, "opinions and personal insight do not expire")
    if category in _AXIOM_DOMAINS:
        return Validity("axiom", None, "mathematics and physics: axioms do not expire")
    if category in _TECH_DOMAINS:
        return Validity("technical", (today + timedelta(days=TECHNICAL_DAYS)).isoformat(), f"technical knowledge: {TECHNICAL_DAYS} days")
    if category == "90_archive":
        return Validity("fact", today.isoformat(), "archived material is out of date")
    return Validity("fact", None, "facts and data do not expire by themselves")


# -- versions -----------------------------------------------------------------------------------------------
_VERSION = re.compile(r"(?:\bv|版本\s*|version\s*)(\d+(?:\.\d+)*)", re.I)


def version_marker(title: str, meta: dict) -> str | None:
    if meta.get("version") not in (None, ""):
        return str(meta["version"])
    m = _VERSION.search(title)
    return m.group(1) if m else None


def version_rule(old: dict, new_title: str, new_meta: dict, new_hash: str, new_nature: str, new_reliability: float) -> str:
    """What a document that matches an earlier one (same source URL or title) is:

    ``duplicate`` (same content), ``soft_upgrade`` (a new version marker: keep v1, add v2, linked by related),
    ``opinion_confirmed`` (the earlier one was an opinion, a reliable source now states it: becomes a fact),
    ``hard_update`` (the same document with changed content: the card is updated, the old body archived in
    previous_version)."""
    if old["content_hash"] == new_hash:
        return "duplicate"
    old_v = version_marker(old["title"], {"version": None})
    new_v = version_marker(new_title, new_meta)
    if new_v and new_v != old_v:
        return "soft_upgrade"
    if old["nature"] == "opinion" and new_nature != "opinion" and new_reliability >= 0.7:
        return "opinion_confirmed"
    return "hard_update"


_VALUE = re.compile(r"\b\d+(?:\.\d+)*[A-Za-z%]*\b|\d+[CcGg]\d+[Gg]?")


def changed_values(old_text: str, new_text: str) -> list[str]:
    """Values (numbers with units, versions, sizes like 8C16G) the old body had and the new one does not."""
    old = list(dict.fromkeys(_VALUE.findall(old_text)))
    new = set(_VALUE.findall(new_text))
    return [v for v in old if v not in new][:10]
