"""Secrets in text: find passwords, keys, tokens and credentials, and mask them (one detector for every path).

What counts as a secret, in Chinese and English, each kind found by a detector of its own:

1. **Stated** secrets (``cues``): a cue word (password, API key, PIN, 密码, 口令, 验证码, ``DB_PASSWORD`` ...), a
   bridge (is, =, :, 是, 改成, set to ...), then the value ("NAS password is hunter2-NAS", "PIN 4821", and the
   reverse, "hunter2 is my NAS password"); what a cue's value may be is judged in ``values``.
2. **Shapes** (``shapes``), without any cue: well-known key prefixes (``sk-``, ``ghp_``, ``AKIA`` + 16, JWTs ...), PEM
   private keys, the password of a URL and an HTTP ``Authorization:`` value.
3. **Credential pairs** (``pairs``), without any cue: "admin / Xy9#kL2mQ", "root:Vx9$Lp2w@10.0.0.5".
4. **High entropy** (``high_entropy``): long tokens that look like random keys (never hex alone, digits alone,
   versions, dates, paths or URLs without credentials).
5. **Lists** a cue introduces (``lists``): every code of "backup codes: 3f9a-21bc, 88d1-0e2f" or of the lines under
   "Recovery codes:", not only the first.
6. **Personal data** (``personal``), masked unless the setting ``personal_data`` keeps it: Chinese resident ID card
   numbers (GB 11643 check character), bank card numbers (issuer prefix and Luhn) and mainland phone numbers (shape),
   each with a marker of its own (``[ID card masked]``, ``[bank card masked]``, ``[phone masked]``).

``find_secrets`` (``find``) runs them all over a line and merges their spans. Masking (``mask``) is the one entry
point callers use: ``mask_lines``, ``mask_text``, ``mask_value`` and ``mask_fields`` replace each value with a marker,
``[secret masked · original at <where>]`` or ``[secret masked]``, idempotently, never changing text without a secret
nor its lines. ``asks_for_secret`` (``request``) is the request side, for the L0 rules. ``common`` holds what they all
share (the marker's text, the lazy pattern).

Every name other modules and the tests import is re-exported here: ``from agentos_mem.safety.secrets import
mask_lines``.
"""

from __future__ import annotations

from agentos_mem.safety.secrets.common import LABELS, MARK, MARKER_RE
from agentos_mem.safety.secrets.cues import CUE_STEMS, CUES, secret_subject
from agentos_mem.safety.secrets.find import Found, find_secrets
from agentos_mem.safety.secrets.high_entropy import (MAX_WORDISH, MIN_ENTROPY, MIN_RANDOM_LEN, MIN_SHIFTS, MIN_SHIFTS_ALONE,
                                                     entropy, is_random)
from agentos_mem.safety.secrets.mask import (has_secret, locate_markers, marker, mask_fields, mask_line, mask_lines, mask_text,
                                             mask_value, repair_markers, short_markers, strip_markers)
from agentos_mem.safety.secrets.pairs import looks_like_password
from agentos_mem.safety.secrets.personal import CLASSES, masked_classes, parse_policy, personal_spans
from agentos_mem.safety.secrets.request import asks_for_secret
from agentos_mem.safety.secrets.shapes import SHAPES
from agentos_mem.safety.secrets.values import STOP_VALUES, STOP_ZH, looks_like_credential, value_ok

__all__ = [
    # the marker
    "MARK", "MARKER_RE", "LABELS",
    # the detectors and their data
    "CUES", "CUE_STEMS", "SHAPES", "STOP_VALUES", "STOP_ZH", "MIN_RANDOM_LEN", "MIN_ENTROPY", "MAX_WORDISH", "MIN_SHIFTS",
    "MIN_SHIFTS_ALONE", "entropy", "is_random", "looks_like_credential", "looks_like_password", "value_ok",
    "secret_subject", "Found", "find_secrets",
    # personal data and its setting
    "CLASSES", "personal_spans", "masked_classes", "parse_policy",
    # masking: the entry point
    "marker", "repair_markers", "locate_markers", "short_markers", "strip_markers", "mask_line", "mask_lines",
    "mask_text", "mask_value", "mask_fields", "has_secret",
    # the request side
    "asks_for_secret",
]
