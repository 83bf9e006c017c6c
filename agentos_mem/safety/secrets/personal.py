"""Personal data: Chinese resident ID card numbers, bank card numbers and mainland China phone numbers, masked like
secrets (by default) wherever secrets are, through the same entry point (mask.py).

A long number alone says little: order numbers, timestamps, versions and ids are long numbers too. So each class is
judged by what makes it one, never by length alone:

- **ID card** (``id_card``): 18 characters, GB 11643: a province code that exists, a birth date that exists
  (in 1900-2099), three digits, and the ISO 7064 MOD 11-2 check character (``0``-``9`` or ``X``); written
  whole or grouped 6-8-4. The 15-digit first-generation form has no check character, so it counts only after an ID
  card cue (身份证, ID card ...) a few characters before it, and only with a date that exists.
- **Bank card** (``bank_card``): 13 to 19 digits, whole or in groups of 3 or more split by single spaces or dashes
  ("6222 0212 3456 7890 128"), whose first digits are those the card schemes issue from for that length (UnionPay
  62, Visa 4, Mastercard 51-55 and 22-27, Amex 34/37 ...: an epoch timestamp or a snowflake id starts with 1) and
  which passes the Luhn check.
- **Phone** (``phone``): a mainland mobile number, 1[3-9] and nine more digits, optionally after +86, 0086 or
  (+86), with a space or a dash allowed between its 3-4-4 groups. It has no check digit, so the shape decides, at
  number boundaries: never inside a longer run of digits, letters, a dotted version or a dashed id.

The checksums are python-stdnum's (``stdnum.cn.ric``, ``stdnum.luhn``): maintained and tested against the
standards. What counts as a number in Chinese text (no spaces around it: "身份证号是11010519491231002X，手机13812345678"),
the grouping and the boundaries are ours. Full-width digits are found by the folded reading of find.py (NFKC).

Whether a class is masked is the setting ``AGENTOS_PERSONAL_DATA`` (``personal_data`` in agentos.toml): ``mask``
(the default: every class), ``keep`` (none), or ``keep:phone,bank_card`` (the classes named are kept). It is read
where the masking runs, as every process reads its settings (the CLI, the MCP server, a flow's worker): once for
each text ``mask_lines`` masks, or for each line ``find_secrets`` is handed without the classes."""

from __future__ import annotations

import os
import re
from datetime import date

from agentos_mem.kernel.settings import config_file, load_settings
from agentos_mem.safety.secrets.common import Lazy

CLASSES = ("id_card", "bank_card", "phone")

# Eleven digits or more, single spaces or dashes between them allowed: the least any class holds (a phone number).
# Most lines hold no such run, and then no detector below runs.
PERSONAL_STEM = Lazy(r"[0-9](?:[ \-]?[0-9]){10}")

# Number boundaries, in Chinese text too (a CJK character is a boundary: "手机13812345678"): no letter, digit or "_"
# touches the number (an identifier: a photo's "52305614789_9683e023fc_z.jpg"), nor a "." or "-" that continues a
# version or a dashed id ("1.13812345678", "13812345678-2").
_B = r"(?<![0-9A-Za-z_])(?<![0-9][.\-])"
_E = r"(?![0-9A-Za-z_])(?![.\-][0-9])"

_ID18 = Lazy(_B + r"(?P<n>[1-9][0-9]{5}[ \-]?(?:19|20)[0-9]{2}(?:0[1-9]|1[0-2])(?:0[1-9]|[12][0-9]|3[01])[ \-]?[0-9]{3}[0-9Xx])" + _E)
_ID15 = Lazy(_B + r"(?P<n>[1-9][0-9]{5}[0-9]{2}(?:0[1-9]|1[0-2])(?:0[1-9]|[12][0-9]|3[01])[0-9]{3})" + _E)
_ID_CUE = Lazy(r"(?:身份证|身份證|居民身份|证件号|證件號|\bID\s*(?:card|number|no\.?)|\bidentity\s+card|\bresident\s+id)[^0-9\n]{0,12}$",
               re.IGNORECASE)
# GB/T 2260 province-level codes (the first two digits), with 83 (Taiwan residents' permits) and 91 (permanent
# residence of foreigners, issued since 2023 in the same 18-character form).
_PROVINCES = frozenset("11 12 13 14 15 21 22 23 31 32 33 34 35 36 37 41 42 43 44 45 46 50 51 52 53 54 61 62 63 64 65 "
                       "71 81 82 83 91".split())

# Digits in groups of three or more: "6222 0212 3456 7890 128", "6222-0212-...", "6222021234567890128".
_RUN = Lazy(_B + r"[0-9]{3,}(?:[ \-][0-9]{3,})*" + _E)
# The first digits a card scheme issues from, by length: Visa 4 (13, 16, 19), Diners 30/36/38 (14), Amex 34/37 (15),
# Mastercard 51-55 and 2221-2720, Discover 6011/64/65, JCB 35, UnionPay 62 (16-19) and the 19-digit domestic
# debit cards of Chinese banks that start with 95 (9558 ...). An epoch timestamp or a snowflake id (1...) is none.
_IIN = {13: Lazy(r"4"), 14: Lazy(r"3[068]"), 15: Lazy(r"3[47]"), 16: Lazy(r"2[2-7]|3[5-8]|4|5[1-5]|6[0-9]"),
        17: Lazy(r"4|6[0-9]"), 18: Lazy(r"4|6[0-9]|35"), 19: Lazy(r"4|6[0-9]|35|95")}

_PHONE = Lazy(_B + r"(?:\(?(?:\+|00)86\)?[ \-]?|86[ \-])?1[3-9][0-9][ \-]?[0-9]{4}[ \-]?[0-9]{4}" + _E)


def _valid_id18(number: str) -> bool:
    from stdnum.cn import ric  # lazy: stdnum.util costs ~25 ms at import, paid only when a line holds an ID-shaped number

    n = number.upper()
    if n[:2] not in _PROVINCES:
        return False
    try:
        ric.get_birth_date(n)  # a date that exists (no 19490230)
    except Exception:  # noqa: BLE001 - stdnum raises its InvalidComponent: no date, no ID
        return False
    # stdnum's own validate() also looks the county up in its table by the year of birth; a person registered in a
    # county created after their birth would then be served in clear, so the check character and the date decide.
    return ric.calc_check_digit(n) == n[-1]


def _valid_id15(number: str) -> bool:
    if number[:2] not in _PROVINCES:
        return False
    try:
        date(1900 + int(number[6:8]), int(number[8:10]), int(number[10:12]))
    except ValueError:
        return False
    return True


def _valid_card(digits: str) -> bool:
    from stdnum import luhn  # lazy: as above

    iin = _IIN.get(len(digits))
    return bool(iin and iin.match(digits)) and luhn.is_valid(digits)


def _card_spans(text: str, taken: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """Bank card numbers in ``text``: in each run of digit groups (3 digits or more each), the longest window of
    whole groups (13 to 19 digits) that is a card, from the left; the rest of the run is
    read on ("卡号 6222 0212 3456 7890 128 2025年到期" loses the card, not the year)."""
    out = []
    for m in _RUN.finditer(text):
        if len(m.group(0)) < 13:  # most runs: a year, a port, a price
            continue
        groups = [(g.start() + m.start(), g.end() + m.start()) for g in re.finditer(r"[0-9]+", m.group(0))]
        i = 0
        while i < len(groups):
            best, total = None, 0
            for j in range(i, len(groups)):
                total += groups[j][1] - groups[j][0]
                if total > 19:
                    break
                if total >= 13:
                    s, e = groups[i][0], groups[j][1]
                    if not any(a < e and s < b for a, b in taken) and _valid_card(re.sub(r"[ \-]", "", text[s:e])):
                        best = (s, e, j)
            if best:
                out.append(best[:2])
                i = best[2] + 1
            else:
                i += 1
    return out


def personal_spans(text: str, classes: frozenset[str] | None = None) -> list[tuple[int, int, str]]:
    """(start, end, class) of each ID card, bank card and phone number in ``text`` of the ``classes`` masked (by
    default those ``masked_classes`` says), never overlapping: an ID card before a card, a card before a phone."""
    if not PERSONAL_STEM.search(text):
        return []
    classes = masked_classes() if classes is None else classes
    out: list[tuple[int, int, str]] = []
    taken: list[tuple[int, int]] = []

    def add(s: int, e: int, kind: str) -> None:
        if not any(a < e and s < b for a, b in taken):
            taken.append((s, e))
            out.append((s, e, kind))

    if "id_card" in classes:
        for m in _ID18.finditer(text):
            if _valid_id18(re.sub(r"[ \-]", "", m.group("n"))):
                add(m.start(), m.end(), "id_card")
        for m in _ID15.finditer(text):
            if _ID_CUE.search(text[max(0, m.start() - 40):m.start()]) and _valid_id15(m.group("n")):
                add(m.start(), m.end(), "id_card")
    if "bank_card" in classes:
        for s, e in _card_spans(text, taken):
            add(s, e, "bank_card")
    if "phone" in classes:
        for m in _PHONE.finditer(text):
            add(m.start(), m.end(), "phone")
    return sorted(out)


def parse_policy(value: str | None) -> frozenset[str]:
    """The classes masked under a value of the setting: ``mask`` every class, ``keep`` none, ``keep:phone,bank_card``
    every class but those named. Anything else masks every class (a value the settings refuse never unmasks)."""
    v = (value or "mask").strip().lower()
    if v == "keep":
        return frozenset()
    if v.startswith("keep:"):
        kept = {c.strip() for c in v[5:].split(",")}
        if kept <= set(CLASSES):
            return frozenset(CLASSES) - kept
    return frozenset(CLASSES)


_policy: tuple[tuple, frozenset[str]] | None = None


def masked_classes() -> frozenset[str]:
    """The classes of personal data masked in this process now: the setting ``personal_data`` as the settings read
    it (the environment, then the settings file). Remembered until the variable or the file changes, so a call
    costs a stat of the settings file; settings that do not load (a bad value anywhere) mask every class."""
    global _policy
    path = config_file()
    try:
        st = path.stat()
        sig = (st.st_mtime_ns, st.st_size)
    except OSError:
        sig = None
    key = (os.environ.get("AGENTOS_PERSONAL_DATA"), str(path), sig)
    if _policy is None or _policy[0] != key:
        try:
            value = load_settings().personal_data
        except Exception:  # noqa: BLE001 - the command itself reports a bad setting; masking never fails open
            value = "mask"
        _policy = (key, parse_policy(value))
    return _policy[1]
