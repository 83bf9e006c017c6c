"""Which subjects name the same slot: "服务器" and "服务器配置", "测试机" and "集成测试机", "Postgres port" and "staging
Postgres port", "spec" (a value said with no attribute) and whatever last held a spec.

The fact store asks this only about two current facts whose values are of one type (a spec, a version, a clock time:
kernel.valuetypes), so a loose match of words is safe there; the subjects of two different people never match ("手机"
is not "妈妈的手机"). The digest passes one matcher to the store for a day's candidates.
"""

from __future__ import annotations

import re

from digest.extract.people import EN_RELATIONS, ZH_RELATIONS
from kernel.text import has_cjk, normalize_key
from kernel.valuetypes import TYPE_WORDS

_EN_PERSON = re.compile(rf"\b(?:{EN_RELATIONS})\b", re.I)
_ZH_PERSON = re.compile(ZH_RELATIONS)
_WORD = re.compile(r"[a-z0-9]+")


def _persons(text: str) -> frozenset[str]:
    """The relation words a subject names (妈妈, brother): a subject about someone else is that person's slot."""
    return frozenset(m.group(0).casefold() for rx in (_ZH_PERSON, _EN_PERSON) for m in rx.finditer(text))


def _unnamed(subject: str) -> bool:
    """A subject that names no attribute: only the value's type ("spec", "weekday") or the copula left by a bare
    statement ("是周三"). Such a value belongs to the slot of its type that was last spoken of."""
    key = normalize_key(subject)
    return key in TYPE_WORDS or key in _COPULAS


# What is left of a bare statement's subject when it names nothing ("是周三", "为8C16G"): a copula, not a verb (睡, 起).
_COPULAS = frozenset("是 为 在 有 叫".split())


def _contains(a: str, b: str) -> bool:
    """One subject is the other with words added: 服务器 / 服务器配置, 项目数据库 / 项目用的数据库, "Postgres port" /
    "staging Postgres port"."""
    ka, kb = normalize_key(a), normalize_key(b)
    if not ka or not kb:
        return False
    short, long_ = sorted((ka, kb), key=len)
    if has_cjk(short):
        # with words set between ("项目数据库" / "项目用的数据库"): the shorter, in order, most of the longer
        return len(short) >= 2 and (short in long_ or (_in_order(short, long_) and len(short) >= 0.6 * len(long_)))
    ws, wl = set(_WORD.findall(a.casefold())), set(_WORD.findall(b.casefold()))
    small, large = sorted((ws, wl), key=len)
    return bool(small) and small <= large


def _in_order(short: str, long_: str) -> bool:
    rest = iter(long_)
    return all(ch in rest for ch in short)


class SubjectSlots:
    """``related(a, b)``: the same person (or none), and one subject unnamed (``_unnamed``) or containing the other.
    ``loose``: only the person must agree; the store asks so for a correction ("说错了，是周三", "sorry, I meant 5433"
    takes back the last value of its type whatever names it) and for a value that names its own thing ("3 cups").

    Not by embeddings: multilingual-e5-small scores unrelated attribute phrases as alike as related ones ("测试机" /
    "系统盘" 0.87, "server spec" / "服务器配置" 0.84; README, fact slots), so a cosine floor would merge slots. Subjects
    across languages meet through the subject aliases (kernel.text, and the workspace's own list)."""

    def slot_name(self, old: str, new: str) -> str:
        """The old name of a slot, unless it names nothing ("spec", "是") and the new one does."""
        return new if _unnamed(old) and not _unnamed(new) else old

    def related(self, a: str, b: str, loose: bool = False) -> bool:
        if _persons(a) != _persons(b):
            return False
        return loose or _unnamed(a) or _unnamed(b) or _contains(a, b)
