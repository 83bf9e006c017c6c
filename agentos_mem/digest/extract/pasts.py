"""Family: what used to hold. "I used to live in Boston", "I used to play tennis every weekend", "我以前住在北京",
"我以前在腾讯工作", "我原来用Notion" -> the fact as history: it held before the day it was said and holds no more
(``ended``), so it answers "where did I live before" and is never a current value.
"""

from __future__ import annotations

import re

from agentos_mem.digest.extract.normalize import Sentence
from agentos_mem.digest.extract.rule import Found
from agentos_mem.digest.extract.vocab import is_question

_OBJ_EN = r"(?P<obj>[A-Za-z0-9][\w&.'\-]*(?:\s+[A-Za-z0-9][\w&.'\-]*){0,3}?)(?=\s*(?:$|[,;.!?]|\s+(?:every|on|at|in|for|with|when|but|and|before|until|back|a\s+lot)\b))"
_OBJ_ZH = r"(?P<obj>[\u4e00-\u9fffA-Za-z0-9 ]{1,15}?)(?=$|[,;:!?。]|了|的时候|那会|工作|上班)"
_PASTS = (
    ("lives_in", re.compile(rf"\bI\s+used\s+to\s+live\s+(?:in|at|near)\s+{_OBJ_EN}", re.I)),
    ("works_at", re.compile(rf"\bI\s+used\s+to\s+work\s+(?:at|for)\s+{_OBJ_EN}", re.I)),
    ("does", re.compile(rf"\bI\s+used\s+to\s+(?:play|do|practi[cs]e|study|learn|use|drive|ride|run|swim)\s+(?:the\s+|a\s+|an\s+)?{_OBJ_EN}", re.I)),
    ("lives_in", re.compile(rf"我(?:以前|曾经|过去|原来|之前)(?:一直)?(?:住在|生活在|在){_OBJ_ZH}(?=住|生活|$|[,;:!?。])")),
    ("works_at", re.compile(rf"我(?:以前|曾经|过去|原来|之前)(?:一直)?在{_OBJ_ZH}(?:工作|上班)")),
    ("does", re.compile(rf"我(?:以前|曾经|过去|原来)(?:一直|经常|常常)?(?:用|玩|打|开|学|练)过?{_OBJ_ZH}")),
)


def past_facts(sent: Sentence, subject: str) -> list[Found]:
    out: list[Found] = []
    for pred, rx in _PASTS:
        for m in rx.finditer(sent.s):
            if is_question(sent, sent.clause_at(m.start())) or any(a < m.end() and m.start() < b for a, b in (f.span for f in out)):
                continue
            obj = sent.orig(*m.span("obj")).strip()
            if obj:
                out.append(Found(subject, pred, obj, m.span(), ended=True))
    return out
