"""Whose fact it is. First person in a "user" turn is ``"user"``; in an "other" turn (a named participant) it is
the speaker's name, and their "my birthday" becomes "Caroline's birthday" so two participants' values never
supersede each other. A speaker's "your / his / 她的 X" is a third party's, never the speaker's own; an
assistant's "你的X / your X" restates the user's."""

from __future__ import annotations

import re

from agentos_mem.digest.extract.normalize import HAS_CJK
from agentos_mem.digest.extract.rule import Found
from agentos_mem.kernel.domain import Turn

# An assistant restates the user's things ("你的X是Y", "your X is Y"); a speaker's "your/his X" is not theirs.
YOUR = re.compile(r"\s*(?:(?:所以|那么|好的|嗯|哦|so|ok|okay|got\s+it|great)[,\s]+)*(?:你的|您的|your\s+)", re.I)
NOT_MINE = re.compile(r"\s*(?:你的|您的|your\b|his\b|her\b|their\b|他的|她的|他们的)", re.I)

NAME_ATTRIBUTE = re.compile(r"\s*(?:名字|姓名|全名|name|first\s+name|full\s+name)\s*", re.I)


def owned(values: list[Found], speaker_subject: str) -> list[Found]:
    """Values of "my X": "my name" is the speaker's name; for a named participant "my birthday" is theirs
    ("Caroline's birthday", so two speakers' birthdays never supersede each other); users keep the bare X."""
    for v in values:
        if not v.possessive:
            continue
        if NAME_ATTRIBUTE.fullmatch(v.subject):
            v.subject, v.predicate = speaker_subject, "name"
        elif speaker_subject != "user":
            sep = "的" if HAS_CJK.search(v.subject) else "'s "
            v.subject = f"{speaker_subject}{sep}{v.subject}"
    return values


def subject_of_speaker(turn: Turn) -> str:
    if turn.role == "user":
        return "user"
    return (turn.speaker or "").strip() or "user"
