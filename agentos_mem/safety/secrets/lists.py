"""Lists of codes a cue introduces: every item is masked, not only the first.

2FA backup and recovery codes come as a list: "GitHub backup codes: 3f9a-21bc, 88d1-0e2f, 7c3b-9aa0",
"恢复码：48213907 59302148 11820374", or one item a line under "Recovery codes:". The cue states the first value
(cues.py); ``more_items`` reads on from it, over list separators (``,`` ``，`` ``、`` ``;`` spaces, "and", 和),
taking each item that has the same make-up as the first (letters and digits in the same places, a digit in it): a
list of codes is uniform, the words after it are not ("PIN 4821, 5 attempts left" keeps "5 attempts left").

Across lines, ``list_line`` reads one line under a cue that ends its line ("Recovery codes:", "恢复码如下：";
``cues.list_opener``): a bullet or a number may lead it, then only items of one make-up; mask.py's ``mask_lines``
carries the cue from line to line until a line that is no such item."""

from __future__ import annotations

import re
from collections.abc import Iterator

from agentos_mem.safety.secrets.common import Lazy

# A number before an item ("1. 3f9a-21bc", "(2) ...", "（3）..."): the list's, not a value of its own.
ENUM = Lazy(r"(?:\(?[0-9]{1,2}[.)、]|（[0-9]{1,2}）)[ \t]+(?=[A-Za-z0-9])")
# Between two items: a comma, an enumeration comma, a semicolon, a bar or a slash (spaces around allowed), "and",
# "or", 和 / 及 / 与 / 或, or spaces alone; an item may be numbered ("1. 3f9a-21bc 2. 88d1-0e2f", "(2)", "（2）").
_SEP = Lazy(r"(?:\s*[,，、;；|/]\s*|\s+(?:and|or|&)\s+|\s*(?:和|及|以及|与|與|或者|或)\s*|[ \t]+)"
            r"(?:(?:\(?[0-9]{1,2}[.)、]|（[0-9]{1,2}）)[ \t]*)?", re.IGNORECASE)
# One code: letters and digits, dashes between groups (never a "." or ":": versions, times, addresses).
_ITEM = Lazy(r"[A-Za-z0-9]+(?:-[A-Za-z0-9]+)*(?![A-Za-z0-9_@:]|[.\-][A-Za-z0-9])")
# What leads a line of a list: a bullet or a number.
_BULLET = Lazy(r"[ \t]*(?:(?:[-*+•·]|[0-9]{1,2}[.)、]|[(（][0-9]{1,2}[)）])[ \t]*)?")
# What may close a line of items: a full stop, a comma, a note in brackets ("(used)", "（已用）").
_TAIL = Lazy(r"[ \t]*(?:[,，;；。.]|[(（][^()（）\n]{0,40}[)）])?[ \t]*$")
_DATE = Lazy(r"[0-9]{4}-[0-9]{1,2}-[0-9]{1,2}|[0-9]{1,2}-[0-9]{1,2}")


def shape(value: str) -> str:
    """The make-up of a code: each letter or digit an ``x``, every other character itself ("3f9a-21bc" and
    "88d1-0e2f" are both ``xxxx-xxxx``)."""
    return re.sub(r"[A-Za-z0-9]", "x", value)


def _code(item: str) -> bool:
    return any(c.isdigit() for c in item) and not _DATE.fullmatch(item)


def more_items(text: str, end: int, first: str) -> Iterator[tuple[int, int]]:
    """(start, end) of each further item of the list whose first value ``first`` ends at ``end`` in ``text``: items
    of ``first``'s make-up, one separator apart, up to the first thing that is not one."""
    if not _ITEM.fullmatch(first) or not _code(first):
        return
    want = shape(first)
    pos = end
    while True:
        sep = _SEP.match(text, pos)
        item = _ITEM.match(text, sep.end()) if sep else None
        if not item or shape(item.group(0)) != want or not _code(item.group(0)):
            return
        yield item.start(), item.end()
        pos = item.end()


def list_line(line: str, want: str | None) -> tuple[list[tuple[int, int]], str | None]:
    """A line under a cue that opened a list: the (start, end) of its items and their make-up, when the whole line
    (after a bullet or a number, before a closing note) is items of one make-up (``want``, when items before it set
    one); else ``([], want)``, and the list has ended. The first item of a list holds four characters or more."""
    lead = _BULLET.match(line)
    item = _ITEM.match(line, lead.end())
    if not item or not _code(item.group(0)) or (want is None and len(item.group(0)) < 4):
        return [], want
    first = item.group(0)
    if want is not None and shape(first) != want:
        return [], want
    spans = [(item.start(), item.end())]
    spans += list(more_items(line, item.end(), first))
    if not _TAIL.match(line, spans[-1][1]):
        return [], want
    return spans, shape(first)
