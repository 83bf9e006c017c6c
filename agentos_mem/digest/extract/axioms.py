"""Family: rules of conduct (predicate ``rule``, nature axiom). "原则是X", "永远不要在周五发布",
"rule of thumb: ...", "Never deploy on Fridays", "we should always X"."""

from __future__ import annotations

from agentos_mem.digest.extract.rule import en, indexed, Rule, short, zh

RULES_AXIOM = indexed(
    # 原则/规则是X: the rule text follows the marker.
    Rule("rule", zh(r"(?:原则|规则|铁律|规矩|守则)(?:就)?(?:是|:)\s*(?P<obj>.+)"), check=short(80), keys="原则|规则|铁律|规矩|守则"),
    # 永远不要在周五发布 / 必须始终X: the rule is the marker plus its clause.
    Rule(
        "rule",
        zh(r"(?P<obj>(?:永远不要|永远别|永远不能|绝不|绝对不要|绝对不能|千万不要|千万别|必须始终|必须总是|必须永远|始终要|任何时候都(?:要|不要|不能)|一律不|禁止)[^,;:!?。]+)"),
        keys="永远|绝|千万|必须|始终|任何时候|一律|禁止",
    ),
    # "rule of thumb: ...", "our rule is ...".
    Rule(
        "rule",
        en(r"\b(?:rule|principle|policy)(?:\s+of\s+thumb)?\s*(?:is|:)\s*(?:that\s+|to\s+)?(?P<obj>.+)"),
        check=short(80),
        keys="rule|principle|policy",
    ),
    # Imperative always/never at a clause start ("Never deploy on Fridays"), or "we should always X".
    Rule(
        "rule",
        en(
            r"(?:^|(?<=[,;:]))\s*(?:(?:please|so|and|also|remember(?:\s+to)?|as\s+a\s+rule)[,:]?\s+)*"
            r"(?P<obj>(?:always|never)\s+(?!(?:been|had|was|were|did|mind|ever|thought|knew|saw|here|there|up|good|great|happy|glad|nice|fun|so|too|"
            r"a|an|the|my|your|calm|ready|welcome|fine|easy|hard|able|sure|say\s+never|on|in|at|for|with|have|has|do|does|will|would|could|can|again|before)\b)(?!\w+(?:ed|ing)\b)\w+[^,;:]*)"
        ),
        keys="always|never",
    ),
    Rule(
        "rule",
        en(r"\b(?:we|you|one|everyone|the\s+team)\s+(?:should|must|have\s+to|need\s+to)\s+(?P<obj>(?:always|never)\s+\w+[^,;:]*)"),
        keys="always|never",
    ),
)
