"""Family: decisions (predicate ``decided``, a fact). 我们决定采用X / 定了用X / "we decided to use X",
"we'll go with X", "we settled on X"."""

from __future__ import annotations

from agentos_mem.digest.extract.plans import not_boilerplate
from agentos_mem.digest.extract.rule import en, indexed, Rule, zh
from agentos_mem.digest.extract.vocab import ZH_ADV, ZH_I

DECISIONS = indexed(
    # 我们决定(采用)X / 决定采用X / 定了用X (not 没决定).
    Rule(
        "decided",
        zh(rf"{ZH_I}{ZH_ADV}{{0,2}}(?:最终|最后|已经|一致)?(?:决定了?|定了|选定了?|敲定了?)(?:要|去)?(?:采用|使用|选用|选择|改用|用)?(?P<obj>.+)"),
        check=not_boilerplate,
        keys="决定|定了|选定|敲定",
    ),
    Rule(
        "decided",
        zh(r"(?<!没)(?<!未)(?<!不)(?:最终|最后)?(?:决定|定了|敲定)(?:采用|使用|选用|改用|用)(?P<obj>.+)"),
        check=not_boilerplate,
        keys="决定|定了|敲定",
    ),
    # "we decided to (use) X", "we'll go with X", "let's go with X", "we settled on X".
    Rule(
        "decided",
        en(
            r"\b(?:we|I)(?:\s+|(?='))(?:have\s+|'ve\s+|finally\s+|just\s+|already\s+|all\s+|eventually\s+)*decided\s+(?:to\s+(?:use\s+|adopt\s+|"
            r"go\s+with\s+)?|on\s+(?:using\s+)?|that\s+)(?P<obj>.+)"
        ),
        check=not_boilerplate,
        keys="decided",
    ),
    Rule(
        "decided",
        en(
            r"\b(?:(?:we|I)(?:'ll|\s+will|'re\s+going\s+to|\s+are\s+going\s+to|\s+am\s+going\s+to|'m\s+going\s+to)\s+go|(?:we|I)(?:'re|\s+are|"
            r"'m|\s+am)\s+going|let's\s+go)\s+with\s+(?P<obj>.+)"
        ),
        check=not_boilerplate,
        keys="with",
    ),
    Rule(
        "decided",
        en(
            r"\b(?:we(?:\s+|(?='))(?:have\s+|'ve\s+|finally\s+)*(?:chose|picked(?!\s+up))|(?:we|I)(?:\s+|(?='))(?:have\s+|'ve\s+|"
            r"finally\s+)*(?:settled\s+on|opted\s+for))\s+(?P<obj>.+)"
        ),
        check=not_boilerplate,
        keys="settled|chose|picked|opted",
    ),
)
