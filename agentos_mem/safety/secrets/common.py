"""What every secret detector and the masking share: the lazy pattern, the marker's text, the CJK range, and the
placeholders that are never a secret's value.

A marker (``[secret masked]``, ``[secret masked · original at <where>]``, and for personal data ``[phone masked]``,
``[ID card masked · original at <where>]`` ...) is never masked again: every detector
passes over what ``MARKER_RE`` matches, which is why its text lives here and not only with the masking (mask.py)
that writes it."""

from __future__ import annotations

import re

MARK = "secret masked"
# Personal data is masked by the same markers with a label of its own (personal.py), so that a reader knows what
# was there: [ID card masked], [bank card masked], [phone masked]. Every marker is one of these.
LABELS = {"id_card": "ID card masked", "bank_card": "bank card masked", "phone": "phone masked"}
ANY_LABEL = "(?:" + "|".join(re.escape(label) for label in (MARK, *LABELS.values())) + ")"


class Lazy:
    """A pattern compiled on first use: importing the detectors (every CLI command does) stays cheap."""

    def __init__(self, pattern: str, flags: int = 0):
        self.pattern, self.flags, self._rx = pattern, flags, None

    def __getattr__(self, name: str):
        if self._rx is None:
            self._rx = re.compile(self.pattern, self.flags)
        return getattr(self._rx, name)


MARKER_RE = Lazy(r"\[(?P<label>" + ANY_LABEL + r")(?: · original at [^\]\n]{0,300})?\]")
# The start of any marker, whole or cut short: a text that holds one is never masked as a secret's value again.
MARKER_START = Lazy(r"\[" + ANY_LABEL)
CJK = "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"

# Placeholders, never a secret's value: "****", "<password>", "${DB_PASS}", "$TOKEN", "{{ secret }}", "%s", "???".
PLACEHOLDER = Lazy(r"^(?:[*xX•·.…_-]+|<[^<>]*>|\$\{[^}]*\}|\$[A-Z_][A-Z0-9_]*|\{\{[^}]*\}\}|%s|\?+|…+|\.\.\.|\[[^\]]*\])$")
