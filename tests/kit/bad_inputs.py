"""A corpus of the bad input a user's ordinary day hands the transports and settings (issue 25, item 6), each once
answered with an opaque error, a hang or silence. Tests throw every entry at the interface the user has (the CLI
in process, the MCP server over stdio, the Python API) and assert the answer names what was wrong.

- ``BAD_IDS``: fact, conflict and proposal ids no store row can have (past SQLite's 64-bit integers, zero,
  negative, not a number), as the MCP argument and as the CLI word.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class BadId:
    what: str
    mcp: object  # the JSON value an agent passes
    cli: str  # the word a person types
    said: str  # a piece of the answer's text


BAD_IDS = [
    BadId("2**70: past SQLite's integers", 2**70, str(2**70), "9223372036854775807"),
    BadId("twenty nines", 99999999999999999999, "99999999999999999999", "9223372036854775807"),
    BadId("zero", 0, "0", "1"),
    BadId("negative", -5, "-5", "1"),
    BadId("a word", "abc", "abc", "abc"),
    BadId("a fraction", 1.5, "1.5", "1.5"),
]
