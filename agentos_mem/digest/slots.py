"""Which subjects name the same slot: "服务器" and "服务器配置", "测试机" and "集成测试机", "Postgres port" and "staging
Postgres port", "spec" (a value said with no attribute) and whatever last held a spec.

The fact store asks this only about two current facts whose values are of one type (a spec, a version, a clock time:
vocabulary.valuetypes), so a loose match of words is safe there; the subjects of two different people never match ("手机"
is not "妈妈的手机"). The digest passes one matcher to the store for a day's candidates.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

from agentos_mem.kernel.text import has_cjk, normalize_key
from agentos_mem.vocabulary.content import EN_COMMON
from agentos_mem.vocabulary.people import persons as _persons
from agentos_mem.vocabulary.valuetypes import TYPE_WORDS

_WORD = re.compile(r"[a-z0-9]+")


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


# Everyday statements of no one topic, in both languages: what any sentence resembles a little. A change told in free
# words replaces an earlier fact only when it resembles that fact more than all of these but one (E5 cosines are compressed
# and differ by language, so a fixed floor cannot tell; README, "A change in free words").
BACKGROUND = (
    "今天天气不错，出去走了走", "最近工作有点累", "周末和朋友吃了顿火锅", "我家楼下新开了一家面包店", "这个月开销有点大",
    "晚上看了一部电影", "孩子最近挺乖的", "下午开了三个会", "我平时喜欢听播客", "我们小区停车很难", "今天早上跑步了",
    "这周要交季度报告", "I had a long day at work", "The weather is nice today", "We had dinner with friends on Saturday",
    "I watched a movie last night", "My kids were great this week", "I usually listen to podcasts on the way",
    "Traffic was terrible this morning", "I'm reading a book about history", "We went to the park with the dog",
    "I have three meetings this afternoon", "I cooked pasta for dinner", "My back hurts a little",
)
# How far the best fact must stand above the second when the two texts share no word (and above the background).
CLEAR_MARGIN = 0.03
_CJK_RUN = re.compile(r"[\u4e00-\u9fff]+")
_EN_CONTENT = re.compile(r"[a-z][a-z0-9+#]{2,}")
_ZH_COMMON = frozenset("现在 如今 目前 已经 以后 从此 今后 最近 时候 我们 自己 一个 这个 那个 开始 了一 上个 这个 个月 上周 之前 以前".split())


def content(text: str) -> set[str]:
    """Words that name something: English words past the common ones (cut to five letters, so "pipelines" meets
    "pipeline"), Chinese character pairs past the time and function ones."""
    words = {w[:5] for w in _EN_CONTENT.findall(text.casefold()) if w not in EN_COMMON}
    for run in _CJK_RUN.findall(text):
        words |= {run[i:i + 2] for i in range(len(run) - 1) if run[i:i + 2] not in _ZH_COMMON}
    return words


class SubjectSlots:
    """``related(a, b)``: the same person (or none), and one subject unnamed (``_unnamed``) or containing the other.
    ``loose``: only the person must agree; the store asks so for a correction ("说错了，是周三", "sorry, I meant 5433"
    takes back the last value of its type whatever names it) and for a value that names its own thing ("3 cups").

    Not by embeddings: multilingual-e5-small scores unrelated attribute phrases as alike as related ones ("测试机" /
    "系统盘" 0.87, "server spec" / "服务器配置" 0.84; README, fact slots), so a cosine floor would merge slots. Subjects
    across languages meet through the subject aliases (kernel.text, and the workspace's own list).

    ``nearest`` (with ``embed``, texts -> unit vectors as documents): whole sentences, not attribute phrases, are
    what a free-worded change is matched on; see :meth:`nearest`."""

    def __init__(self, embed: Callable[[Sequence[str]], list[list[float]]] | None = None):
        self._embed = embed
        self._background: list[list[float]] | None = None

    def slot_name(self, old: str, new: str) -> str:
        """The old name of a slot, unless it names nothing ("spec", "是") and the new one does."""
        return new if _unnamed(old) and not _unnamed(new) else old

    def related(self, a: str, b: str, loose: bool = False) -> bool:
        if _persons(a) != _persons(b):
            return False
        return loose or _unnamed(a) or _unnamed(b) or _contains(a, b)

    def nearest(self, text: str, options: list[tuple[int, str]], *, strict: bool = False) -> int | None:
        """The option (fact id, its sentence) a change told in free words replaces: the one whose sentence is most
        alike, if it is more alike than all everyday sentences of ``BACKGROUND`` but one, and either shares a content word
        with the change ("周报" / "周报", "pipelines" / "pipeline") or stands ``CLEAR_MARGIN`` above the next option.
        None without an embedder or when no option clearly is the one.

        ``strict`` (a word that tells no change, digest.drift): the option must be more alike than every everyday
        sentence and every other option, and share a content word with the text or stand ``CLEAR_MARGIN`` clear of
        them all."""
        if self._embed is None or not options:
            return None
        if self._background is None:
            self._background = self._embed(list(BACKGROUND))
        texts = list(dict.fromkeys(o[1] for o in options))  # facts read from one sentence are one option
        vecs = self._embed([text] + texts)
        if vecs is None or self._background is None:  # the embedder could not load: nothing is replaced on meaning
            return None
        q = vecs[0]

        def cos(v: list[float]) -> float:
            return sum(a * b for a, b in zip(q, v))

        floor = sorted(cos(v) for v in self._background)[-2]  # the second: one everyday sentence may happen to be close
        scored = sorted(((cos(v), i) for i, v in enumerate(vecs[1:])), reverse=True)
        best, i = scored[0]
        second = scored[1][0] if len(scored) > 1 else floor
        if best <= floor:
            return None
        if strict:
            above = best - max(second, max(cos(v) for v in self._background))
            shared = bool(content(text) & content(texts[i]))
            return next(o[0] for o in options if o[1] == texts[i]) if above > 0 and (shared or above >= CLEAR_MARGIN) else None
        if content(text) & content(texts[i]) or best - max(second, floor) >= CLEAR_MARGIN:
            return next(o[0] for o in options if o[1] == texts[i])
        return None
