"""RSS / Atom feeds for the collect stage: download (httpx) or read a local file, parse (feedparser), entries as text.

feedparser is only ever given bytes, never a URL: every download goes through ``download`` (timeout, size cap,
http/https only), so a feed cannot make the parser fetch anything on its own. HTML in summaries and content is
turned into plain text with simple Markdown (links kept as ``[text](url)``, list items, headings).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import datetime, timezone
from html.parser import HTMLParser
from pathlib import Path
from zoneinfo import ZoneInfo

USER_AGENT = "agentos-collect/0.1 (feed reader)"


class FeedError(Exception):
    """A feed that could not be downloaded, read or parsed; the message says why in one line.

    ``transient``: worth another try (timeout, connection failure, HTTP 429 or 5xx); a 404 or a page that is
    not a feed is not."""

    def __init__(self, message: str, *, transient: bool = False):
        super().__init__(message)
        self.transient = transient


@dataclass
class FeedEntry:
    title: str
    link: str | None
    published: str | None
    text: str
    entry_id: str | None = None


@dataclass
class ParsedFeed:
    title: str | None
    entries: list[FeedEntry] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)


def download(url: str, *, timeout_s: float, max_bytes: int) -> bytes:
    """The feed's bytes, or FeedError (bad scheme, connection failure, timeout, HTTP error status, too large)."""
    import httpx

    if not re.match(r"^https?://", url, re.IGNORECASE):
        raise FeedError(f"feed {url}: only http:// and https:// URLs are fetched (use `path:` for a local file)")
    try:
        with httpx.stream("GET", url, timeout=timeout_s, follow_redirects=True,
                          headers={"User-Agent": USER_AGENT, "Accept": "application/rss+xml, application/atom+xml, application/xml, text/xml, */*"}) as r:
            if r.status_code >= 400:
                raise FeedError(f"feed {url} could not be downloaded: HTTP {r.status_code} {r.reason_phrase}",
                                transient=r.status_code == 429 or r.status_code >= 500)
            buf = bytearray()
            for chunk in r.iter_bytes():
                buf += chunk
                if len(buf) > max_bytes:
                    raise FeedError(f"feed {url} is larger than {max_bytes / 1e6:.1f} MB (max_feed_mb in sources.yaml); not read")
            return bytes(buf)
    except httpx.TimeoutException:
        raise FeedError(f"feed {url} could not be downloaded: no answer within {timeout_s:g} s", transient=True) from None
    except httpx.HTTPError as e:
        raise FeedError(f"feed {url} could not be downloaded: {type(e).__name__}: {e}", transient=True) from None


def read_local(path: Path, *, max_bytes: int) -> bytes:
    try:
        size = path.stat().st_size
    except OSError as e:
        raise FeedError(f"feed file {path} cannot be read: {e.strerror or e}") from None
    if size > max_bytes:
        raise FeedError(f"feed file {path} is larger than {max_bytes / 1e6:.1f} MB (max_feed_mb in sources.yaml); not read")
    try:
        return path.read_bytes()
    except OSError as e:
        raise FeedError(f"feed file {path} cannot be read: {e.strerror or e}") from None


def _iso(parsed, raw: str | None, tz: str) -> str | None:
    if parsed:
        try:
            return datetime(*parsed[:6], tzinfo=timezone.utc).astimezone(ZoneInfo(tz)).isoformat()
        except (TypeError, ValueError):
            pass
    return raw or None


def _entry_text(entry) -> str:
    """The entry's fullest text: content (Atom content, content:encoded), else summary; HTML made plain."""
    candidates = []
    for c in entry.get("content") or []:
        if c.get("value"):
            candidates.append((c.get("value"), c.get("type") or ""))
    if entry.get("summary"):
        detail = entry.get("summary_detail") or {}
        candidates.append((entry["summary"], detail.get("type") or "text/html"))
    if not candidates:
        return ""
    value, ctype = max(candidates, key=lambda vc: len(vc[0]))
    return html_to_text(value) if "html" in ctype else normalize_text(value)


def parse(data: bytes, *, location: str, tz: str = "Asia/Shanghai") -> ParsedFeed:
    """Parse RSS 0.9x/1.0/2.0 or Atom bytes. FeedError when nothing feed-like is in them."""
    import feedparser

    d = feedparser.parse(data)
    if d.get("bozo") and not d.get("entries"):
        exc = d.get("bozo_exception")
        raise FeedError(f"feed {location} is not a readable RSS/Atom feed: {exc or 'no entries'}")
    if not d.get("version") and not d.get("entries"):
        raise FeedError(f"feed {location} is not an RSS/Atom feed (no channel or entries found)")
    out = ParsedFeed(title=(d.feed.get("title") or None) if d.get("feed") else None)
    if d.get("bozo"):
        out.warnings.append(f"feed {location} is not well-formed ({d.get('bozo_exception')}); its readable entries were taken")
    for e in d.get("entries") or []:
        text = _entry_text(e)
        title = " ".join(html_to_text(e.get("title") or "").split())
        link = e.get("link") or None
        if not title:
            title = next((ln.strip("#- ").strip() for ln in text.splitlines() if ln.strip()), "") or link or "untitled"
        out.entries.append(FeedEntry(title=title, link=link, entry_id=e.get("id") or None, text=text or title,
                                     published=_iso(e.get("published_parsed") or e.get("updated_parsed"),
                                                    e.get("published") or e.get("updated"), tz)))
    return out


# -- HTML to plain text / simple Markdown ------------------------------------------------------------------
_BLOCK = {"p", "div", "section", "article", "header", "footer", "blockquote", "pre", "table", "tr", "ul", "ol",
          "figure", "figcaption", "dl", "dt", "dd", "hr"}
_SKIP = {"script", "style", "head", "noscript", "template"}


class _ToText(HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.out: list[str] = []
        self.skip = 0
        self.links: list[tuple[str | None, int]] = []
        self.pre = 0

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag in _SKIP:
            self.skip += 1
        elif tag in _BLOCK:
            self.out.append("\n\n")
            self.pre += tag == "pre"
        elif tag == "br":
            self.out.append("\n")
        elif tag == "li":
            self.out.append("\n- ")
        elif re.fullmatch(r"h[1-6]", tag):
            self.out.append("\n\n" + "#" * int(tag[1]) + " ")
        elif tag == "a":
            href = a.get("href")
            self.links.append((href if href and not href.lower().startswith("javascript:") else None, len(self.out)))
        elif tag == "img" and a.get("alt"):
            self.out.append(a["alt"])
        elif tag in ("td", "th"):
            self.out.append(" | ")

    def handle_endtag(self, tag):
        if tag in _SKIP:
            self.skip = max(0, self.skip - 1)
        elif tag in _BLOCK or re.fullmatch(r"h[1-6]", tag):
            self.out.append("\n\n")
            if tag == "pre":
                self.pre = max(0, self.pre - 1)
        elif tag == "a" and self.links:
            href, start = self.links.pop()
            label = " ".join("".join(self.out[start:]).split())
            if href and label and label != href:
                self.out[start:] = [f"[{label}]({href})"]
            elif href:
                self.out[start:] = [href]

    def handle_data(self, data):
        if self.skip:
            return
        self.out.append(data if self.pre else re.sub(r"\s+", " ", data))


def html_to_text(html: str) -> str:
    p = _ToText()
    try:
        p.feed(html)
        p.close()
    except Exception:  # noqa: BLE001 - malformed markup: fall back to dropping anything tag-like
        return normalize_text(re.sub(r"<[^>]*>", " ", html))
    return normalize_text("".join(p.out))


def normalize_text(text: str) -> str:
    lines = [ln.rstrip() for ln in text.replace("\r\n", "\n").replace("\r", "\n").split("\n")]
    lines = [ln.strip() if not ln.startswith("    ") else ln for ln in lines]
    return re.sub(r"\n{3,}", "\n\n", "\n".join(lines)).strip()
