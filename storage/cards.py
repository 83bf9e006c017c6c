"""L1 index cards and daily summaries, as Markdown files with frontmatter (Obsidian-readable).

Cards live in ``04_memory/cards/<user>/{hostname}_{YYYYMMDD}_{slug}.md``; a day's set is replaced as
a whole when that day is digested again, and a file is only rewritten when its content changed, so a
re-run leaves every file (and its modification time) as it was.
"""

from __future__ import annotations

import fnmatch
from datetime import date
from pathlib import Path

import frontmatter

from agentos_mem.kernel.files import atomic_write, guard
from agentos_mem.storage.raw_archive import safe_name


def _write_if_changed(path: Path, text: str) -> bool:
    below = guard(path)  # a card or a user's folder that is a link (or a FIFO) is refused, never written through
    if below.is_file(path) and below.read_text(path, errors="replace") == text:
        return False
    atomic_write(path, text)
    return True


def _load(path: Path) -> frontmatter.Post:
    return frontmatter.loads(guard(path).read_text(path, errors="replace"))


def render(meta: dict, body: str) -> str:
    return frontmatter.dumps(frontmatter.Post(body, **meta)) + "\n"


class CardStore:
    def __init__(self, cards_dir: Path, summaries_dir: Path):
        self.cards_dir = Path(cards_dir)
        self.summaries_dir = Path(summaries_dir)

    def user_dir(self, user: str) -> Path:
        return self.cards_dir / safe_name(user)

    def replace_day(self, user: str, hostname: str, day: date, cards: list[tuple[str, dict, str]]) -> dict:
        """Write ``(card_id, meta, body)`` cards for one day and drop this host's stale cards of that day."""
        folder = self.user_dir(user)
        prefix = f"{hostname}_{day.strftime('%Y%m%d')}_"
        wanted = {}
        for card_id, meta, body in cards:
            safe_name(card_id + ".md")
            wanted[card_id + ".md"] = render(meta, body)
        written = sum(_write_if_changed(folder / name, text) for name, text in wanted.items())
        removed = 0
        below = guard(folder)
        for p in below.files(folder, ".md")[0]:  # a link or a FIFO there is not this store's: left alone
            if p.name.startswith(prefix) and p.name not in wanted:
                below.unlink(p)
                removed += 1
        return {"cards": len(wanted), "written": written, "removed": removed}

    def read(self, user: str, card_id: str) -> frontmatter.Post:
        return _load(self.user_dir(user) / f"{safe_name(card_id)}.md")

    def list(self, user: str, day: date | None = None) -> list[Path]:
        folder = self.user_dir(user)
        pattern = f"*_{day.strftime('%Y%m%d')}_*.md" if day else "*.md"
        return [p for p in guard(folder).files(folder, ".md")[0] if fnmatch.fnmatchcase(p.name, pattern)]

    def write_summary(self, user: str, day: date, meta: dict, body: str) -> bool:
        return _write_if_changed(self.summaries_dir / safe_name(user) / f"{day.isoformat()}.md", render(meta, body))

    def drop_fact(self, user: str, days: list[date], fact_id: int) -> int:
        """Take a fact out of the cards (their ``facts`` and the body's line about it) and the daily summaries of
        ``days`` (a fact a person forgot); returns how many files changed."""
        mark = f"#{int(fact_id)} "
        changed = 0
        for day in days:
            for path in self.list(user, day):
                post = _load(path)
                facts = post.metadata.get("facts") or []
                if fact_id not in facts and mark not in post.content:
                    continue
                post.metadata["facts"] = [f for f in facts if f != fact_id]
                body = "\n".join(line for line in post.content.split("\n") if not line.startswith(f"- {mark}"))
                changed += _write_if_changed(path, render(post.metadata, body.replace("## Facts\n\n", "")))
            summary = self.summary_path(user, day)
            if guard(summary).is_file(summary):
                post = _load(summary)
                body = "\n".join(line for line in post.content.split("\n") if not (line.startswith("- ") and f": {mark}" in line))
                changed += _write_if_changed(summary, render(post.metadata, body))
        return changed

    def summary_path(self, user: str, day: date) -> Path:
        return self.summaries_dir / safe_name(user) / f"{day.isoformat()}.md"
