"""Family: assistant restatements about the user ("看起来你更喜欢X", "you seem to prefer X", "it sounds like you
love X"). They come out as inferred, never as stated facts."""

from __future__ import annotations

from agentos_mem.digest.extract.preferences import pref_ok
from agentos_mem.digest.extract.rule import en, indexed, Rule, zh
from agentos_mem.digest.extract.vocab import EN_ADV, ZH_ADV

# Assistant restatements about the user: "看起来你更喜欢X", "you seem to prefer X", "it sounds like you love X".
ASSISTANT_PREFS = indexed(
    Rule(
        "prefers",
        zh(rf"(?:看起来|看来|似乎|好像|听起来|感觉)[,\s]*(?:你|您){ZH_ADV}{{0,2}}(?:更喜欢|更偏爱|更偏好|偏好|偏爱|更倾向于|倾向于)(?:用|使用|采用)?(?P<obj>.+)"),
        check=pref_ok,
        keys="你|您",
    ),
    Rule(
        "likes",
        zh(rf"(?:看起来|看来|似乎|好像|听起来|感觉)[,\s]*(?:你|您){ZH_ADV}{{0,2}}(?:热爱|喜爱|喜欢|爱)(?!的)(?P<obj>.+)"),
        lists=True,
        check=pref_ok,
        keys="你|您",
    ),
    Rule(
        "likes",
        zh(rf"(?:看起来|看来|似乎|好像|听起来|感觉)[,\s]*(?:你|您){ZH_ADV}{{0,2}}对(?P<obj>[^,;:!?。]{{1,30}}?)(?:很|非常|特别|挺|十分)*(?:感兴趣|有兴趣|有热情|充满热情)"),
        keys="你|您",
    ),
    Rule(
        "prefers",
        en(
            rf"\byou\s+(?:seem|appear)\s+to\s+{EN_ADV}{{0,2}}prefer\s+"
            rf"(?P<obj>.+)|\b(?:it\s+)?(?:sounds|seems|looks)\s+like\s+you\s+{EN_ADV}{{0,2}}prefer\s+(?P<obj2>.+)"
        ),
        check=pref_ok,
        keys="prefer",
    ),
    Rule(
        "likes",
        en(
            rf"\byou\s+(?:seem|appear)\s+to\s+{EN_ADV}{{0,2}}(?:like|love|enjoy|have\s+a\s+(?:real\s+|great\s+|strong\s+|deep\s+)?passion\s+for|"
            rf"be\s+(?:really\s+|very\s+)?(?:interested\s+in|into|passionate\s+about))\s+(?P<obj>.+)"
        ),
        lists=True,
        check=pref_ok,
        keys="seem|appear",
    ),
    Rule(
        "likes",
        en(
            rf"\b(?:it\s+)?(?:sounds|seems|looks)\s+like\s+you\s+{EN_ADV}{{0,2}}(?:like|love|enjoy|have\s+a\s+(?:real\s+|great\s+|strong\s+|"
            rf"deep\s+)?passion\s+for|are\s+(?:really\s+|very\s+)?(?:interested\s+in|into|passionate\s+about))\s+(?P<obj>.+)"
        ),
        lists=True,
        check=pref_ok,
        keys="sound|seem|look",
    ),
)
