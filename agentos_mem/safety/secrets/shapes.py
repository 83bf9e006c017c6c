"""Shapes: secrets known by their form alone, without any cue.

Well-known key prefixes (``SHAPES``: ``sk-``, ``sk_live_``, ``ghp_``, ``github_pat_``, ``glpat-``, ``xoxb-``, ``AKIA``
+ 16, ``AIza...``, ``hf_``, JWTs ``eyJ.eyJ.``, ...), PEM private key blocks, the password of a URL
(``scheme://user:PASS@host``: user and host stay) and an HTTP ``Authorization:`` value (``shape_spans``). A PEM block
on one line is a shape; one that spans lines is masked line by line between ``PEM_BEGIN`` and ``PEM_END`` by
``mask_lines`` (mask.py)."""

from __future__ import annotations

import re

from agentos_mem.safety.secrets.common import PLACEHOLDER, Lazy

SHAPES: tuple[tuple[str, str], ...] = (
    ("openai/anthropic key", r"(?<![A-Za-z0-9_])sk-(?:[A-Za-z0-9]+-)*[A-Za-z0-9_-]{16,}"),
    ("stripe key", r"(?<![A-Za-z0-9_])(?:sk|pk|rk)_(?:live|test)_[A-Za-z0-9]{10,}"),
    ("stripe webhook secret", r"(?<![A-Za-z0-9_])whsec_[A-Za-z0-9]{16,}"),
    ("github token", r"(?<![A-Za-z0-9_])gh[pousr]_[A-Za-z0-9]{20,}"),
    ("github fine-grained token", r"(?<![A-Za-z0-9_])github_pat_[A-Za-z0-9_]{20,}"),
    ("gitlab token", r"(?<![A-Za-z0-9_])glpat-[A-Za-z0-9_-]{16,}"),
    ("slack token", r"(?<![A-Za-z0-9_])xox[abposr]-[A-Za-z0-9-]{10,}"),
    ("slack webhook", r"https://hooks\.slack\.com/services/[A-Za-z0-9/_-]{16,}"),
    ("aws access key id", r"(?<![A-Za-z0-9_])(?:AKIA|ASIA|AGPA|AIDA|AROA|ANPA|ANVA|AIPA)[0-9A-Z]{16}(?![A-Za-z0-9])"),
    ("google api key", r"(?<![A-Za-z0-9_])AIza[0-9A-Za-z_-]{30,}"),
    ("google oauth token", r"(?<![A-Za-z0-9_])ya29\.[0-9A-Za-z_-]{20,}"),
    ("google oauth secret", r"(?<![A-Za-z0-9_])GOCSPX-[0-9A-Za-z_-]{20,}"),
    ("hugging face token", r"(?<![A-Za-z0-9_])hf_[A-Za-z0-9]{30,}"),
    ("npm token", r"(?<![A-Za-z0-9_])npm_[A-Za-z0-9]{30,}"),
    ("pypi token", r"(?<![A-Za-z0-9_])pypi-[A-Za-z0-9_-]{40,}"),
    ("digitalocean token", r"(?<![A-Za-z0-9_])do[por]_v1_[a-f0-9]{40,}"),
    ("shopify token", r"(?<![A-Za-z0-9_])shp(?:at|ca|pa|ss)_[a-fA-F0-9]{20,}"),
    ("sendgrid key", r"(?<![A-Za-z0-9_])SG\.[A-Za-z0-9_-]{16,}\.[A-Za-z0-9_-]{16,}"),
    ("telegram bot token", r"(?<![A-Za-z0-9_])\d{8,10}:AA[A-Za-z0-9_-]{30,}"),
    ("jwt", r"(?<![A-Za-z0-9_])eyJ[A-Za-z0-9_-]{6,}\.eyJ[A-Za-z0-9_-]{6,}\.[A-Za-z0-9_-]{6,}"),
    ("private key (one line)", r"-----BEGIN [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----.+?(?:-----END [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----|$)"),
)
SHAPES_RE = Lazy("|".join(f"(?:{p})" for _, p in SHAPES))
# The password of scheme://user:PASS@host (user and host stay).
# The value runs to the last "@" of the authority: a password may hold "@" ("app:p@ss@db" loses "p@ss", not "p").
# The user may be empty: redis://:PASS@host is Redis's own form (requirepass without a user).
_URL_CRED = Lazy(r"(?<![A-Za-z0-9_])[A-Za-z][A-Za-z0-9+.-]{1,20}://[^\s:/@]{0,128}:(?P<value>[^\s/]{1,256}?)@(?=[^\s@/]+(?:$|[/?#\s]))")
# A password given on a database client's command line, glued to its flag: mysql -pPASS (mysqldump, mysqladmin,
# mariadb alike; "-p" alone asks for it at the prompt and holds nothing).
_CLI_PASSWORD = Lazy(r"(?<![\w./-])(?:mysql|mysqldump|mysqladmin|mysqlimport|mariadb|mariadb-dump)(?![\w-])[^\n|;&]*?"
                     r"\s-p(?P<value>[^\s'\"]{1,128})")
_AUTH_HEADER = Lazy(r"(?<![A-Za-z0-9_])Authorization\s*[:=]\s*(?:(?:Bearer|Basic|Token|Digest|Bot)\s+)?(?P<value>[A-Za-z0-9+/=._~-]{8,})", re.IGNORECASE)
PEM_BEGIN = Lazy(r"-----BEGIN [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----")
PEM_END = Lazy(r"-----END [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----")

# A cheap prefilter (a plain search over the text): most lines hold no key prefix, and then SHAPES is not run.
SHAPE_STEMS = Lazy(r"sk[-_]|[pr]k_|whsec_|gh[pousr]_|github_pat_|glpat-|xox[abposr]-|hooks\.slack|"
                   r"A(?:KIA|SIA|GPA|IDA|ROA|NPA|NVA|IPA|Iza)|ya29\.|GOCSPX-|hf_|npm_|pypi-|do[por]_v1_|shp(?:at|ca|pa|ss)_|"
                   r"SG\.|:AA|eyJ|-----BEGIN")


def shape_spans(text: str) -> list[tuple[int, int, str, str]]:
    """(start, end, kind, cue) of each known shape (kind "shape"), URL password ("url") and ``Authorization:`` value
    ("shape", cue "authorization") in ``text``, in that order (``find_secrets`` keeps the first of overlapping spans)."""
    out: list[tuple[int, int, str, str]] = []
    if SHAPE_STEMS.search(text):
        for m in SHAPES_RE.finditer(text):
            out.append((m.start(), m.end(), "shape", ""))
    for m in _URL_CRED.finditer(text) if "://" in text else ():
        v = m.group("value")
        if not PLACEHOLDER.match(v) and not v.startswith(("$", "{", "<", "%")):
            out.append((m.start("value"), m.end("value"), "url", ""))
    for m in _CLI_PASSWORD.finditer(text) if ("mysql" in text or "mariadb" in text) else ():
        if not PLACEHOLDER.match(m.group("value")) and not m.group("value").startswith(("$", "{", "<", "%")):
            out.append((m.start("value"), m.end("value"), "shape", "command-line password"))
    for m in _AUTH_HEADER.finditer(text) if "authorization" in text.lower() else ():
        out.append((m.start("value"), m.end("value"), "shape", "authorization"))
    return out
