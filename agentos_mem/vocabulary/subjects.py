"""A fact's subject as one key, whichever language or spelling named it, and whether a text names a value whole: the
fact store, the supersession service, the digest and the read side compare subjects and values through these."""

from __future__ import annotations

import re
from pathlib import Path

from agentos_mem.kernel.text import normalize_key

# The same subject said in either language gets one key, so "The database port is now 5433" supersedes
# "数据库端口是 5432". Keys are ``normalize_key`` forms; a workspace adds its own in
# ``03_knowledge/99_system/subject_aliases.txt`` (one "alias = canonical" per line).
SUBJECT_ALIASES = {
    "databaseport": "数据库端口", "dbport": "数据库端口",
    "serverconfig": "服务器配置", "serverconfiguration": "服务器配置", "serverspec": "服务器配置", "serverspecs": "服务器配置",
    "apiversion": "api版本",
    "redismaxmemory": "redis最大内存", "redis的最大内存": "redis最大内存", "redis最大内存": "redis最大内存",
    "techstack": "技术栈", "technologystack": "技术栈",
    "timezone": "时区",
}


def subject_key(text: str, extra: dict[str, str] | None = None) -> str:
    """``normalize_key`` plus bilingual aliases: one key for one subject, whichever language named it."""
    key = normalize_key(text)
    if extra and key in extra:
        return extra[key]
    return SUBJECT_ALIASES.get(key, key)


def load_aliases(path: Path) -> dict[str, str]:
    """``alias = canonical`` lines (``#`` comments allowed), both sides normalised."""
    out: dict[str, str] = {}
    if path.is_file():
        for line in path.read_text(encoding="utf-8").splitlines():
            line = line.split("#", 1)[0]
            if "=" in line:
                alias, canonical = (normalize_key(x) for x in line.split("=", 1))
                if alias and canonical:
                    out[alias] = canonical
    return out


def names_whole(text: str, value: str) -> bool:
    """``text`` (case-folded) names ``value`` as a whole: a word of its own in Latin script ("500 rps", not "sql" in
    "postgresql"), anywhere in Chinese."""
    v = value.casefold().strip()
    if not v:
        return False
    return re.search(rf"(?<![a-z0-9]){re.escape(v)}(?![a-z0-9])", text) is not None
