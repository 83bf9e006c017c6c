"""Indexable units: what the keyword and vector indexes hold, built from the stores that are the truth.

A unit is one L1 card or one current L2 fact. Its text carries who, when and where as well as what
(measured on LoCoMo: indexing a turn as "speaker: text" more than doubled dense recall@5, because
questions name people and turns rarely name their own speaker). A card's text includes its turns,
read from the immutable raw archive by the card's line range, each as "speaker: text".

``text_hash`` keys the token and vector caches (same text, same vectors); ``hash`` also covers the
metadata the query returns, so the manifest notices a card whose fact list changed.
"""

from __future__ import annotations

import re
from pathlib import Path
from dataclasses import replace

import frontmatter

from agentos_mem.digest.logformat import read_log
from agentos_mem.kernel.files import guard
from agentos_mem.safety.secrets import mask_lines, mask_value, short_markers
from agentos_mem.kernel.text import count_tokens
from agentos_mem.storage.index_units import Unit
from agentos_mem.storage.raw_archive import ArchiveError, RawArchive

# How much of a unit is embedded: e5 reads 512 model tokens at a time and longer texts cost a window
# each; the head of a card (header, summary, keywords, first turns) carries its topic. BM25 gets it all.
MAX_TURN_CHARS = 400
MAX_CARD_CHARS = 6000

# Predicates as words a question in either language would use ("where do I live" / "我住在哪").
PREDICATE_WORDS = {
    "name": "name 名字 叫", "nickname": "nickname 昵称", "role": "role job 职位 工作", "works_at": "works at employer 公司 就职",
    "lives_in": "lives in 住在 城市", "from": "comes from 来自", "value": "is 是", "likes": "likes 喜欢",
    "dislikes": "dislikes 不喜欢", "prefers": "prefers 偏好 喜欢用", "prefers_not": "avoids 不想用 不喜欢用",
    "does": "does learns plays 在学 会 玩 练", "plans": "plans 计划 打算", "decided": "decided 决定", "event": "event 事件", "thinks": "thinks 认为", "rule": "rule 规则",
    "states": "says 说", "has": "has owns 有 拥有",
}


# -- cards -----------------------------------------------------------------------------------------------

_SPACE = re.compile(r"\s+")


def _one_line(text: str, limit: int) -> str:
    text = _SPACE.sub(" ", text).strip()
    return text if len(text) <= limit else text[: limit - 1] + "…"


class TurnReader:
    """Turns of archived logs by line range, each file parsed once per rebuild."""

    def __init__(self, archive: RawArchive, timezone: str):
        self.archive = archive
        self.timezone = timezone
        self._turns: dict[str, list] = {}

    def turns(self, ref: str | None, start: int, end: int) -> list:
        if not ref:
            return []
        if ref not in self._turns:
            try:
                log = read_log(self.archive.path_of(ref), max_bytes=1 << 62, tz=self.timezone)
                # the archive keeps the log's bytes: its secrets are masked on the way into the index
                self._turns[ref] = [replace(t, text=mask_lines(t.text)[0]) for t in log.turns]
            except (ArchiveError, OSError):
                self._turns[ref] = []
        return [t for t in self._turns[ref] if t.line_start <= end and t.line_end >= start]


def card_unit(path: Path, turns: TurnReader) -> Unit:
    """One card file -> its unit. Raises ValueError naming the file when the card cannot be read."""
    try:
        post = frontmatter.loads(guard(path).read_text(path))  # never through a link swapped in (kernel.files.Below)
    except Exception as e:  # YAML errors, bad UTF-8, a link or a FIFO
        raise ValueError(f"card {path.name}: unreadable frontmatter ({type(e).__name__}: {e})") from e
    m = post.metadata
    raw = m.get("raw") or {}
    lines = raw.get("lines") or [None, None]
    card_id = str(m.get("id") or path.stem)
    speakers = [str(s) for s in (m.get("speakers") or [])]
    when = " ".join(str(x) for x in (m.get("date"), m.get("time")) if x)
    # the host that built the card is left out of the indexed text: it says nothing about the conversation, and two
    # machines restored from one agent-sync (each naming cards after itself) must index the same words
    where = f"{raw.get('file') or ''}:{lines[0]}-{lines[1]}".strip()
    head = " · ".join(x for x in (str(m.get("topic") or ""), when, ", ".join(speakers), where) if x)
    parts = [head, str(m.get("summary") or ""), "keywords: " + " ".join(str(k) for k in (m.get("keywords") or []))]
    raw_tokens = 0
    if lines[0] is not None:
        for t in turns.turns(raw.get("ref"), int(lines[0]), int(lines[1])):
            parts.append(f"{t.speaker}: {_one_line(t.text, MAX_TURN_CHARS)}")
            raw_tokens += count_tokens(f"{t.speaker}: {t.text}")
    # no secret is indexed (a card written before masking neither); a marker's origin is not worth indexing
    text = short_markers(mask_lines("\n".join(p for p in parts if p))[0])[:MAX_CARD_CHARS]
    meta = {
        "card": card_id, "user": str(m.get("user") or path.parent.name), "date": str(m.get("date") or ""),
        "time": m.get("time"), "topic": m.get("topic"), "summary": str(m.get("summary") or ""),
        "keywords": [str(k) for k in (m.get("keywords") or [])], "speakers": speakers,
        "facts": [int(f) for f in (m.get("facts") or [])], "raw_ref": raw.get("ref"), "file": raw.get("file"),
        "lines": [lines[0], lines[1]], "path": path.name, "raw_tokens": raw_tokens,
    }
    meta["topic"], meta["summary"] = (mask_lines(x)[0] if isinstance(x, str) else x for x in (meta["topic"], meta["summary"]))
    return Unit(f"card:{card_id}", "card", text, meta)


# -- facts -----------------------------------------------------------------------------------------------


_SHORT_CJK = re.compile(r"^[\u4e00-\u9fff]{2,3}$")


def romanized(*names: str) -> str:
    """Pinyin of the short Chinese names among ``names`` (a person's key 朵朵 / 小李, a city 深圳), joined and by syllable
    ("duoduo duo duo"), so an English question that writes the name as it is said ("Duoduo", "Xiao Li", "Shenzhen")
    meets the fact. Longer phrases are left alone: they are not names, and their pinyin would only add noise."""
    from pypinyin import lazy_pinyin  # lazy: a rebuild with no Chinese fact never loads its dictionary

    out = []
    for name in names:
        if _SHORT_CJK.match(name or ""):
            syllables = lazy_pinyin(name)
            out += ["".join(syllables), *syllables]
    return " ".join(dict.fromkeys(out))


def fact_unit(row: dict) -> Unit:
    where = row.get("raw_ref") or row["source_file"]
    obj = mask_value(row["subject"], row["object"], where, row["line_start"])[0]
    row = {**row, "object": obj, "evidence": mask_lines(row.get("evidence") or "", where, row["line_start"])[0]}
    pred = row["predicate"]
    what = f"{row['subject']} {PREDICATE_WORDS.get(pred, pred)} {row['object']}"
    if spoken := romanized(row["subject"], row["object"]):
        what += f" ({spoken})"
    when = (row.get("event_date") or row.get("valid_from") or "")[:16].replace("T", " ")
    where = f"{row['source_file']}:{row['line_start']}-{row['line_end']}"
    text = short_markers("\n".join(x for x in (f"{what} · {when} · {where}", _one_line(row.get("evidence") or "", MAX_TURN_CHARS)) if x))
    meta = {
        "fact": int(row["id"]), "user": row["user_id"], "subject": row["subject"], "predicate": pred, "object": row["object"],
        "date": row["source_day"], "file": row["source_file"], "raw_ref": row.get("raw_ref"),
        "lines": [row["line_start"], row["line_end"]],
    }
    return Unit(f"fact:{row['id']}", "fact", text, meta)
