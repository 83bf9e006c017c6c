"""The bad-path corpus: links below the workspace (to a folder outside it, to another user's folder), FIFOs and
``..`` names, planted where the stores read, write or delete, and a snapshot of what lies outside the workspace so
a test can assert that nothing there was read into an answer, written, or deleted.

A planted link points at ``outside/`` (a folder beside the workspace, never inside it) or at another user's folder;
``Outside.assert_untouched`` checks every file there kept its bytes and its mtime and still exists, and that
nothing was added.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

# A record as a user's memory folder holds it: if a link were followed, these would be listed, served, counted
# (recallCount) or deleted.
RECORD = ("---\nname: {name}\ndescription: {description}\ntype: user\nsource: manual\nrecallCount: 0\n"
          "created: 2026-11-01T10:00:00+08:00\nupdated: 2026-11-01T10:00:00+08:00\n---\n{body}\n")
OUTSIDE_WORD = "outsidesecret"  # in every planted file outside: an answer that holds it read through a link
OUTSIDE_RECORDS = {
    "victim": RECORD.format(name="victim", description=f"victim diary {OUTSIDE_WORD} 日记", body=f"my diary {OUTSIDE_WORD} 日记"),
    "notes": RECORD.format(name="notes", description=f"notes about tea {OUTSIDE_WORD} 喝茶", body=f"I drink tea {OUTSIDE_WORD} 喝茶"),
}
ALICE_WORD = "alicesecret"  # in alice's own record: bob must never be served it
ALICE_RECORD = RECORD.format(name="alice-diary", description=f"alice likes jasmine tea {ALICE_WORD} 茉莉花茶",
                             body=f"alice's private note {ALICE_WORD} 茉莉花茶")
# A day log (the log format of digest/logformat.py) whose facts, if digested into another user, would show.
ALICE_LOG = "[09:00] 用户: 我叫林晓，我住在杭州西湖区。\n[09:01] 助手: 好的，记住了。\n"


@dataclass
class Outside:
    """A folder outside the workspace and what it held when planted."""

    root: Path
    before: dict[str, tuple[bytes, int]] = field(default_factory=dict)

    @classmethod
    def make(cls, root: Path, files: dict[str, str] | None = None) -> "Outside":
        root.mkdir(parents=True, exist_ok=True)
        for name, text in (files if files is not None else {f"{n}.md": t for n, t in OUTSIDE_RECORDS.items()}).items():
            (root / name).parent.mkdir(parents=True, exist_ok=True)
            (root / name).write_text(text, encoding="utf-8")
            os.utime(root / name, ns=(1_700_000_000_000_000_000, 1_700_000_000_000_000_000))  # a date no write gives
        out = cls(root)
        out.before = out.snapshot()
        return out

    def snapshot(self) -> dict[str, tuple[bytes, int]]:
        return {str(p.relative_to(self.root)): (p.read_bytes(), p.stat().st_mtime_ns)
                for p in sorted(self.root.rglob("*")) if p.is_file() and not p.is_symlink()}

    def assert_untouched(self) -> None:
        now = self.snapshot()
        assert set(now) == set(self.before), f"files outside added or removed: {set(now) ^ set(self.before)}"
        for name, (data, mtime) in self.before.items():
            assert now[name][0] == data, f"{name} outside the workspace was rewritten"
            assert now[name][1] == mtime, f"{name} outside the workspace was touched (mtime)"


def link(at: Path, target: Path) -> Path:
    """A symbolic link at ``at`` (its folder created) pointing to ``target``."""
    at.parent.mkdir(parents=True, exist_ok=True)
    os.symlink(target, at, target_is_directory=target.is_dir())
    return at


def fifo(at: Path) -> Path:
    at.parent.mkdir(parents=True, exist_ok=True)
    os.mkfifo(at)
    return at
