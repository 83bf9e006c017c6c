"""Collect (归集): material from the configured sources into the five inbox partitions, with provenance.

Sources are listed in ``03_knowledge/99_system/sources.yaml`` (a commented default is written when it is
absent): local material folders (``agent-local/materials/`` always), web clippings (Markdown whose frontmatter
carries the page URL), RSS/Atom feeds (URL or local file), tool submissions, personal notes and memory cards.
Every item becomes one Markdown file ``{YYYYMMDD}_{slug}.md`` in its partition of ``00_stream/inbox/`` with
frontmatter ``title, source, source_type, scope, owner, fetched_at, content_hash`` (plus ``feed, link,
published`` for feed entries, ``source_file`` and ``source_meta`` for files). A file is named relative to the workspace,
or as ``<source name>:<path in its folder>`` (``portable_source``): synced files never name a local absolute path.

Rules:
- Sources are only read: never changed, moved or deleted.
- The same text is collected once: ``content_hash`` (sha256 of the body as collected) is kept in
  ``99_system/collected.jsonl`` across partitions and runs, so a re-run writes nothing and an item that refine
  already moved out of the inbox is not collected again. A source whose text changed is collected again.
- Only Markdown (``.md``, ``.markdown``) and UTF-8 text (``.txt``) are read. Anything else (PDF, Word, images,
  binary content, invalid UTF-8, files over ``max_file_mb``, symlinks leading out of the source folder) is
  refused with a message that names the file and what to do; it goes to ``logs/quarantine.jsonl`` and the run
  goes on. Hidden files and folders (``.obsidian``, ``.DS_Store``) are skipped.
- Broken frontmatter is a warning: the body is still collected (a clipping's URL is then unknown).
- A feed that cannot be downloaded or parsed is reported and skipped; the other sources are still collected.

Plain functions, no Prefect: ``tasks/knowledge.py`` wraps ``fetch_feed`` and ``collect_source`` as tasks
(``flows/collect.py``: ``tasks.knowledge``), one task run per source, never per document.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from dataclasses import asdict, dataclass, field
from datetime import date, datetime
from pathlib import Path

import yaml

from agentos_mem.kernel import clock, progress
from agentos_mem.kernel.files import NotARegularFile, read_regular_file
from agentos_mem.kernel.settings import Settings
from agentos_mem.kernel.text import slugify, truncate
from agentos_mem.kernel.workspace import Workspace
from agentos_mem.storage.guards import workspace_lock
from agentos_mem.knowledge import feeds
from agentos_mem.knowledge.feeds import FeedError
from agentos_mem.knowledge.report import CollectReport, SourceReport
from agentos_mem.safety.secrets import mask_text
from agentos_mem.storage.eventlog import append_lines, record_quarantine

SOURCE_TYPES = ("folder", "clipping", "feed", "tools", "personal", "memory")
PARTITIONS = ("knowledge/clipping", "knowledge/feed", "memory", "tools", "personal")
DEFAULT_PARTITION = {"folder": "personal", "clipping": "knowledge/clipping", "feed": "knowledge/feed",
                     "tools": "tools", "personal": "personal", "memory": "memory"}
SCOPES = ("personal", "system")
TEXT_SUFFIXES = (".md", ".markdown", ".txt")
MATERIALS = "agent-local/materials"
DEFAULT_MAX_FILE_MB = 2.0
DEFAULT_MAX_FEED_MB = 10.0
DEFAULT_FEED_TIMEOUT_S = 20.0
URL_KEYS = ("source", "url", "source_url", "link", "original_url")
_KNOWN_FORMATS = {".pdf": "a PDF document", ".doc": "a Word document", ".docx": "a Word document", ".odt": "an OpenDocument text",
                  ".rtf": "an RTF document", ".pages": "a Pages document", ".ppt": "a PowerPoint deck", ".pptx": "a PowerPoint deck",
                  ".xls": "a spreadsheet", ".xlsx": "a spreadsheet", ".csv": "a CSV table", ".epub": "an e-book",
                  ".html": "an HTML page", ".htm": "an HTML page", ".png": "an image", ".jpg": "an image", ".jpeg": "an image",
                  ".gif": "an image", ".webp": "an image", ".heic": "an image", ".svg": "an image", ".mp3": "audio", ".m4a": "audio",
                  ".wav": "audio", ".mp4": "a video", ".mov": "a video", ".zip": "an archive", ".json": "a JSON file"}

DEFAULT_SOURCES_YAML = """\
# Sources for `agentos collect` (the collect-to-inbox flow, 归集): what is copied into 00_stream/inbox/.
# Sources are only read, never changed or moved. Each item becomes {YYYYMMDD}_{slug}.md in its inbox
# partition with provenance frontmatter (source, source_type, fetched_at, content_hash, title, scope, owner).
# The same text is collected once (99_system/collected.jsonl remembers every content_hash).
# Paths are relative to the workspace (AGENTOS_HOME) unless absolute; ~ is expanded.

# Files larger than this (MB) are refused and listed in logs/quarantine.jsonl: split or convert them first.
max_file_mb: 2
# Seconds before a feed download is abandoned (the feed is reported and skipped; the run goes on).
feed_timeout_s: 20
# Feeds larger than this (MB) are not read.
max_feed_mb: 10

# One entry per source. Keys:
#   type:      folder | clipping | feed | tools | personal | memory
#                folder    plain material (Markdown / UTF-8 text); default partition personal
#                clipping  web clippings: Markdown whose frontmatter has `source:` or `url:` (the page URL)
#                feed      an RSS/Atom feed: `url:` (http/https) or `path:` (a local .xml file); one item per entry
#                tools     tool submissions            personal  personal notes
#                memory    memory consolidation cards (frontmatter type/description), taken by the nightly memory stage
#   path:      the folder (or, for a feed, the local feed file)
#   url:       the feed URL (feeds only)
#   partition: inbox partition: knowledge/clipping | knowledge/feed | memory | tools | personal
#              (default: by type, as above)
#   scope:     personal (default) or system: who may see what refine makes of it
#   name:      a short label for reports (default: type and path or URL)
# agent-local/materials/ is always a source (type folder), even if not listed; folders that are
# themselves listed sources (clippings/, tools/, personal/, memory/ below) are left to their own entry.
sources:
  - name: materials
    type: folder
    path: agent-local/materials
    partition: personal
  - name: clippings
    type: clipping
    path: agent-local/materials/clippings
  - name: tools
    type: tools
    path: agent-local/materials/tools
  - name: personal
    type: personal
    path: agent-local/materials/personal
  - name: memory
    type: memory
    path: agent-local/materials/memory
  # - name: 阮一峰的网络日志
  #   type: feed
  #   url: https://www.ruanyifeng.com/blog/atom.xml
  #   scope: system
  # - name: saved feed
  #   type: feed
  #   path: agent-local/materials/feeds/example.xml
"""


class SourcesError(ValueError):
    """sources.yaml cannot be read at all (the message names the file and the problem)."""


@dataclass
class Source:
    name: str
    type: str
    partition: str
    scope: str = "personal"
    path: Path | None = None
    url: str | None = None
    exclude: list[Path] = field(default_factory=list)  # other sources' folders inside this one
    configured: bool = True  # False for a default folder nobody listed (a missing one is not an error)

    @property
    def location(self) -> str:
        return self.url or str(self.path)


@dataclass
class CollectConfig:
    max_file_bytes: int
    max_feed_bytes: int
    feed_timeout_s: float


# -- sources.yaml ------------------------------------------------------------------------------------------
def sources_file(settings: Settings) -> Path:
    return Workspace(settings.home).knowledge / "99_system" / "sources.yaml"


def ensure_sources_file(settings: Settings) -> Path:
    """Write the commented default sources.yaml when there is none; an existing one is never touched."""
    path = sources_file(settings)
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f".{path.name}.tmp")
        tmp.write_text(DEFAULT_SOURCES_YAML, encoding="utf-8")
        try:
            os.link(tmp, path)  # never replaces a file someone wrote meanwhile
        except FileExistsError:
            pass
        finally:
            tmp.unlink(missing_ok=True)
    return path


def _read_config(settings: Settings) -> dict:
    path = ensure_sources_file(settings)
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except UnicodeDecodeError:
        raise SourcesError(f"{path}: not UTF-8 text; save it as UTF-8") from None
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        where = f" (line {mark.line + 1})" if mark else ""
        raise SourcesError(f"{path}: not valid YAML{where}: {getattr(e, 'problem', None) or e}; fix it, or delete it to get the commented default") from None
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise SourcesError(f"{path}: expected keys (max_file_mb, sources, ...), found {type(data).__name__}")
    return data


def _number(data: dict, key: str, default: float, problems: list[str]) -> float:
    value = data.get(key, default)
    if isinstance(value, bool) or not isinstance(value, int | float) or value <= 0:
        problems.append(f"sources.yaml: {key} must be a positive number, not {value!r}; using {default:g}")
        return default
    return float(value)


def load_config(settings: Settings, problems: list[str] | None = None) -> CollectConfig:
    problems = problems if problems is not None else []
    data = _read_config(settings)
    return CollectConfig(max_file_bytes=int(_number(data, "max_file_mb", DEFAULT_MAX_FILE_MB, problems) * 1024 * 1024),
                         max_feed_bytes=int(_number(data, "max_feed_mb", DEFAULT_MAX_FEED_MB, problems) * 1024 * 1024),
                         feed_timeout_s=_number(data, "feed_timeout_s", DEFAULT_FEED_TIMEOUT_S, problems))


def _resolve(settings: Settings, raw: str) -> Path:
    p = Path(os.path.expanduser(raw))
    return p if p.is_absolute() else Path(settings.home) / p


def load_sources(settings: Settings, problems: list[str] | None = None) -> list[Source]:
    """The sources in sources.yaml (written with defaults when absent), plus agent-local/materials always.

    An entry that cannot be used (unknown type, no path, bad partition or scope) is left out with a
    message appended to ``problems``; an unreadable file raises SourcesError.
    """
    problems = problems if problems is not None else []
    data = _read_config(settings)
    entries = data.get("sources") or []
    if not isinstance(entries, list):
        problems.append("sources.yaml: `sources` must be a list of entries; none read")
        entries = []
    out: list[Source] = []
    names: set[str] = set()
    for i, e in enumerate(entries, 1):
        where = f"sources.yaml entry {i}"
        if not isinstance(e, dict):
            problems.append(f"{where}: not a mapping of keys (type, path, ...); skipped")
            continue
        stype = str(e.get("type") or ("feed" if e.get("url") else "folder")).strip().lower()
        if stype not in SOURCE_TYPES:
            problems.append(f"{where}: type {stype!r} is not one of {', '.join(SOURCE_TYPES)}; skipped")
            continue
        partition = str(e.get("partition") or DEFAULT_PARTITION[stype]).strip().strip("/")
        if partition not in PARTITIONS:
            problems.append(f"{where}: partition {partition!r} is not one of {', '.join(PARTITIONS)}; skipped")
            continue
        scope = str(e.get("scope") or "personal").strip().lower()
        if scope not in SCOPES:
            problems.append(f"{where}: scope {scope!r} is not personal or system; skipped")
            continue
        url = e.get("url")
        path = e.get("path")
        if stype == "feed":
            if url and path:
                problems.append(f"{where}: a feed has either url or path, not both; skipped")
                continue
            if not (url or path):
                problems.append(f"{where}: a feed needs `url:` (http/https) or `path:` (a local file); skipped")
                continue
        elif not path:
            problems.append(f"{where}: type {stype} needs `path:` (a folder); skipped")
            continue
        src = Source(name="", type=stype, partition=partition, scope=scope,
                     path=_resolve(settings, str(path)) if path else None, url=str(url).strip() if url else None)
        base = str(e.get("name") or "").strip() or (f"feed {src.url or path}" if stype == "feed" else f"{stype} {path}")
        name, n = base, 2
        while name in names:
            name, n = f"{base} ({n})", n + 1
        names.add(name)
        src.name = name
        out.append(src)
    materials = Path(settings.home) / MATERIALS
    if not any(s.path is not None and s.type != "feed" and _same(s.path, materials) for s in out):
        out.insert(0, Source(name="materials" if "materials" not in names else "materials (always)", type="folder",
                             partition="personal", path=materials, configured=False))
    # A folder that is itself a source is collected by that source only, not by a folder that holds it.
    folders = [s for s in out if s.type != "feed"]
    for s in folders:
        s.exclude = [o.path for o in folders if o is not s and _inside(o.path, s.path) and not _same(o.path, s.path)]
    return out


def _same(a: Path, b: Path) -> bool:
    return os.path.realpath(a) == os.path.realpath(b)


def _inside(child: Path, parent: Path) -> bool:
    c, p = os.path.realpath(child), os.path.realpath(parent)
    return c == p or c.startswith(p.rstrip(os.sep) + os.sep)


# -- the registry of what was collected ---------------------------------------------------------------------
def registry_path(settings: Settings) -> Path:
    return Workspace(settings.home).knowledge / "99_system" / "collected.jsonl"


def collected_hashes(settings: Settings) -> set[str]:
    path = registry_path(settings)
    out: set[str] = set()
    if path.exists():
        for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
            try:
                out.add(json.loads(line)["content_hash"])
            except (json.JSONDecodeError, KeyError, TypeError):
                continue
    return out


def inbox_dir(settings: Settings) -> Path:
    return Workspace(settings.home).knowledge / "00_stream" / "inbox"


# -- reading one file ------------------------------------------------------------------------------------------
@dataclass
class Refused:
    file: str  # absolute path
    reason: str  # names the file and says what to do
    severity: str = "error"
    sha256: str | None = None


def read_text_file(path: Path, shown: str, max_bytes: int) -> tuple[str | None, Refused | None]:
    """The file's text (BOM dropped, LF line ends), or why it is refused. ``shown`` names it in messages."""
    convert = "convert it to Markdown (.md) or UTF-8 text (.txt) first"
    suffix = path.suffix.lower()
    if suffix not in TEXT_SUFFIXES:
        kind = _KNOWN_FORMATS.get(suffix) or (f"a '{suffix}' file" if suffix else "a file without extension")
        return None, Refused(str(path), f"{shown}: {kind} is not collected (only Markdown and UTF-8 text); {convert}")
    try:
        size = path.stat().st_size
        if size > max_bytes:
            return None, Refused(str(path), f"{shown}: {size / 1048576:.1f} MB is over the {max_bytes / 1048576:g} MB limit "
                                            f"(max_file_mb in sources.yaml); split it or {convert}")
        data = read_regular_file(path, max_bytes)
    except NotARegularFile as e:
        return None, Refused(str(path), f"{shown}: {e.kind}, not a regular file; only regular files are collected")
    except OSError as e:
        return None, Refused(str(path), f"{shown}: cannot be read ({e.strerror or e})")
    if len(data) > max_bytes:  # it grew after the size check
        return None, Refused(str(path), f"{shown}: over the {max_bytes / 1048576:g} MB limit (max_file_mb in sources.yaml); "
                                        f"split it or {convert}")
    sha = hashlib.sha256(data).hexdigest()
    if b"\x00" in data:
        return None, Refused(str(path), f"{shown}: binary content (NUL bytes) under a text name; {convert}", sha256=sha)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        line = data[: e.start].count(b"\n") + 1
        return None, Refused(str(path), f"{shown}: not valid UTF-8 (byte 0x{data[e.start]:02x} at offset {e.start}, line {line}); "
                                        f"{convert}", sha256=sha)
    text = text.removeprefix("\ufeff").replace("\r\n", "\n").replace("\r", "\n")
    if not text.strip():
        return None, Refused(str(path), f"{shown}: empty file, nothing to collect", severity="warning", sha256=sha)
    return text, None


def split_frontmatter(text: str) -> tuple[dict, str, str | None]:
    """(meta, body, warning). Broken frontmatter: no meta, the body after it (or the whole text), a warning."""
    lines = text.split("\n")
    if not lines or lines[0].strip() != "---":
        return {}, text, None
    end = next((i for i in range(1, len(lines)) if lines[i].strip() in ("---", "...")), None)
    if end is None:
        return {}, text, "frontmatter opened with '---' but never closed; the whole file was collected as the body"
    body = "\n".join(lines[end + 1:])
    try:
        meta = yaml.safe_load("\n".join(lines[1:end]))
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        where = f" at line {mark.line + 2}" if mark else ""
        return {}, body, f"frontmatter is not valid YAML{where} ({getattr(e, 'problem', None) or type(e).__name__}); body collected, its fields ignored"
    if meta is None:
        return {}, body, None
    if not isinstance(meta, dict):
        return {}, body, f"frontmatter is a {type(meta).__name__}, not key: value pairs; body collected, its fields ignored"
    return _plain(meta), body, None


def _plain(value):
    """YAML values made JSON/YAML-safe (dates to ISO strings, keys to strings)."""
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    if isinstance(value, datetime | date):
        return value.isoformat()
    if value is None or isinstance(value, bool | int | float | str):
        return value
    return str(value)


_HEADING = re.compile(r"^#{1,6}\s+(.+?)\s*#*\s*$")
_URL = re.compile(r"^https?://\S+$", re.IGNORECASE)


def title_of(meta: dict, body: str, fallback: str) -> str:
    t = meta.get("title")
    if isinstance(t, str | int | float) and str(t).strip():
        return truncate(str(t), 120)
    for ln in body.split("\n"):
        m = _HEADING.match(ln.strip())
        if m:
            return truncate(m.group(1), 120)
    return truncate(fallback, 120) or "untitled"


def url_of(meta: dict) -> str | None:
    for k in URL_KEYS:
        v = meta.get(k)
        if isinstance(v, str) and _URL.match(v.strip()):
            return v.strip()
    return None


def normalize_body(body: str) -> str:
    return "\n".join(ln.rstrip() for ln in body.replace("\r\n", "\n").split("\n")).strip("\n")


def content_hash(body: str) -> str:
    return hashlib.sha256(body.encode("utf-8")).hexdigest()


# -- writing one inbox item -------------------------------------------------------------------------------------
def _now(settings: Settings) -> datetime:
    return clock.now(settings.timezone)


def portable_source(settings: Settings, source: Source, rel: str, abs_path: str) -> str:
    """How synced files (the inbox item's ``source`` and ``source_file``, the collect registry, the mask markers) name
    a collected file: never by a local absolute path, which means nothing on the other machines the workspace syncs
    to and tells them where this one keeps its files. A file inside the workspace is named by its path relative to
    the workspace root (``agent-local/materials/clippings/ops.md``); any other by its source's name in sources.yaml
    and its path inside that source's folder (``team-docs:runbooks/ops.md``: sources.yaml says where that is). A
    source without a name is named by its folder's last part (the default name holds the path)."""
    try:
        return Path(abs_path).resolve().relative_to(Path(settings.home).resolve()).as_posix()
    except (ValueError, OSError):
        pass
    return f"{portable_name(source)}:{rel}"


def portable_name(source: Source) -> str:
    """The source's name as a synced file may hold it: its name in sources.yaml, or, for a source without one (whose
    default name holds its path), its folder's last part."""
    name = source.name
    if (source.path is not None and str(source.path) in name) or re.search(r"(?:^|\s)(?:~?/|[A-Za-z]:[\\/])", name):
        return Path(str(source.path)).name or "source"
    return name


def write_item(settings: Settings, partition: str, meta: dict, body: str, when: datetime) -> Path:
    """``{YYYYMMDD}_{slug}.md`` in the partition (``_2``, ``_3`` ... when taken); never replaces a file."""
    folder = inbox_dir(settings) / partition
    folder.mkdir(parents=True, exist_ok=True)

    # Secrets stay at the source: the inbox copy (and all that is refined from it) holds the marker instead.
    body = mask_text(body, str(meta.get("source_file") or meta.get("source") or "") or None)
    if meta.get("title"):
        meta = {**meta, "title": mask_text(str(meta["title"]))}
    slug = slugify(meta.get("title") or "") or "untitled"
    head = yaml.safe_dump(meta, allow_unicode=True, sort_keys=False, width=10_000)
    data = f"---\n{head}---\n\n{body}\n".encode()
    stem = f"{when:%Y%m%d}_{slug}"
    tmp = folder / f".{stem}.{os.getpid()}.tmp"
    tmp.write_bytes(data)
    try:
        n = 1
        while True:
            target = folder / (f"{stem}.md" if n == 1 else f"{stem}_{n}.md")
            try:
                os.link(tmp, target)  # atomic, and fails instead of replacing an existing file
                return target
            except FileExistsError:
                n += 1
    finally:
        tmp.unlink(missing_ok=True)


# -- one source ---------------------------------------------------------------------------------------------------
@dataclass
class Item:
    """One thing to collect: its body and the frontmatter it will carry."""

    title: str
    body: str
    source: str
    source_type: str
    extra: dict = field(default_factory=dict)  # feed/link/published, source_file, source_meta, memory-card fields
    label: str = ""  # how reports name where it came from


def _empty_report(source: Source) -> SourceReport:
    return SourceReport(name=source.name, type=source.type, partition=source.partition, location=source.location)


def _walk(source: Source, report: SourceReport) -> list[tuple[Path, str]]:
    """(file, name relative to the folder) for every non-hidden file; symlinks out of the folder are refused."""
    root = source.path
    real_root = os.path.realpath(root)
    excluded = {os.path.realpath(p) for p in source.exclude}
    out: list[tuple[Path, str]] = []
    def unreadable(e: OSError) -> None:
        report.errors.append(f"source {source.name}: cannot list {e.filename}: {e.strerror or e}")

    for dirpath, dirnames, filenames in os.walk(root, onerror=unreadable, followlinks=False):
        keep = []
        for d in sorted(dirnames):
            full = Path(dirpath) / d
            if d.startswith(".") or os.path.realpath(full) in excluded:
                continue
            if full.is_symlink():
                target = os.path.realpath(full)
                if not _inside(Path(target), Path(real_root)):
                    rel = str(full.relative_to(root))
                    report.refused.append(asdict(Refused(str(full), f"{rel}: symbolic link to {target}, outside the source folder "
                                                                       f"{root}; not followed")))
                continue  # a link to a folder inside: its files are collected through the real path
            keep.append(d)
        dirnames[:] = keep
        for f in sorted(filenames):
            if f.startswith("."):
                continue
            full = Path(dirpath) / f
            rel = str(full.relative_to(root))
            if full.is_symlink():
                target = os.path.realpath(full)
                if not _inside(Path(target), Path(real_root)):
                    report.refused.append(asdict(Refused(str(full), f"{rel}: symbolic link to {target}, outside the source folder "
                                                                       f"{root}; not followed")))
                    continue
                if not os.path.isfile(target):
                    report.refused.append(asdict(Refused(str(full), f"{rel}: symbolic link to {target}, which is not a file")))
                    continue
            out.append((full, rel))
    return out


def _file_items(source: Source, report: SourceReport, cfg: CollectConfig) -> list[Item]:
    items: list[Item] = []
    for path, rel in _walk(source, report):
        text, refused = read_text_file(path, rel, cfg.max_file_bytes)
        if refused:
            report.refused.append(asdict(refused))
            continue
        if path.suffix.lower() == ".txt":
            meta, body, warning = {}, text, None
        else:
            meta, body, warning = split_frontmatter(text)
        body = normalize_body(body)
        notes = [warning + ("; source URL unknown" if source.type == "clipping" else "")] if warning else []
        if not body.strip():
            report.refused.append(asdict(Refused(str(path), f"{rel}: no text after the frontmatter, nothing to collect", "warning")))
            continue
        abs_path = str(Path(os.path.abspath(path)))
        extra: dict = {"source_file": abs_path}
        src = abs_path
        if source.type == "clipping":
            url = url_of(meta)
            if url:
                src = url
            elif not warning:
                notes.append("no source URL in the frontmatter (source: or url:); recorded with its file path")
        if notes:  # reported when the item is collected (a re-run does not repeat them)
            extra["collect_warnings"] = notes
        if source.partition == "memory":
            # memory cards keep the fields the memory stage reads (memory.inbox.read_card)
            for k in ("type", "description", "user"):
                if meta.get(k) not in (None, ""):
                    extra[k] = meta[k]
        if meta:
            extra["source_meta"] = meta
        items.append(Item(title=title_of(meta, body, path.stem), body=body, source=src, source_type=source.type,
                          extra=extra, label=rel))
    return items


def _feed_items(settings: Settings, source: Source, data: bytes, report: SourceReport) -> list[Item]:
    parsed = feeds.parse(data, location=source.location, tz=settings.timezone)
    report.warnings += parsed.warnings
    if parsed.title:
        report.feed_title = parsed.title
    items = []
    for e in parsed.entries:
        extra = {"feed": source.location, "feed_title": parsed.title, "link": e.link, "published": e.published}
        items.append(Item(title=truncate(e.title, 120), body=normalize_body(e.text), source=e.link or source.location,
                          source_type="feed", extra={k: v for k, v in extra.items() if v is not None}, label=e.link or e.title))
    return items


def fetch_feed(settings: Settings, source: Source) -> bytes:
    """The feed's bytes (downloaded, or read from its local file); raises FeedError with a one-line reason."""
    cfg = load_config(settings)
    if source.url:
        return feeds.download(source.url, timeout_s=cfg.feed_timeout_s, max_bytes=cfg.max_feed_bytes)
    return feeds.read_local(source.path, max_bytes=cfg.max_feed_bytes)


def collect_source(settings: Settings, source: Source, user: str | None = None, *, data: bytes | None = None) -> SourceReport:
    """Collect one source into its inbox partition; returns what happened to it.

    For a feed, ``data`` is what ``fetch_feed`` returned (fetched here when not given).
    """
    user = user or settings.user
    ws = Workspace(settings.home)
    report = _empty_report(source)
    cfg = load_config(settings)
    try:
        if source.type == "feed":
            if data is None:
                data = fetch_feed(settings, source)
            items = _feed_items(settings, source, data, report)
        else:
            if not source.path.is_dir():
                report.status = "absent"
                if source.path.exists():
                    report.errors.append(f"source {source.name}: {source.path} is not a folder")
                elif source.configured and not _is_default(settings, source):
                    report.errors.append(f"source {source.name}: folder {source.path} does not exist")
                return _finish(settings, ws, user, report)
            items = _file_items(source, report, cfg)
    except FeedError as e:
        report.status = "failed"
        report.errors.append(str(e))
        return _finish(settings, ws, user, report)
    when = _now(settings)
    with workspace_lock(settings.home, "collect"):
        seen = collected_hashes(settings)
        rows = []
        for item in progress.track(items, f"collecting {source.name}"):
            h = content_hash(item.body)
            if h in seen:
                report.duplicates += 1
                continue
            meta = {"title": item.title, "source": item.source, "source_type": item.source_type, "scope": source.scope,
                    "owner": user, "fetched_at": when.isoformat(), "content_hash": h}
            extra = dict(item.extra)
            if source.partition == "memory":
                extra.setdefault("user", user)
            meta.update(extra)
            if meta.get("source_file"):  # a file: named the way a synced file may name it (``portable_source``)
                where = portable_source(settings, source, item.label, meta["source_file"])
                meta.update(source_file=where, **({"source": where} if meta["source"] == item.extra["source_file"] else {}))
            target = write_item(settings, source.partition, meta, item.body, when)
            rel = str(target.relative_to(inbox_dir(settings)))
            seen.add(h)
            rows.append(json.dumps({"content_hash": h, "file": rel, "partition": source.partition, "source": meta["source"],
                                    "source_type": item.source_type, "source_name": portable_name(source), "owner": user,
                                    "collected_at": when.isoformat()}, ensure_ascii=False))
            report.warnings += [f"{item.label}: {n}" for n in item.extra.get("collect_warnings", [])]
            report.collected.append({"partition": source.partition, "file": rel, "source": meta["source"], "title": item.title,
                                        "source_type": item.source_type, "from": item.label})
            append_lines(registry_path(settings), rows[-1:])  # one line per item: a crash loses nothing written
    return _finish(settings, ws, user, report)


def _is_default(settings: Settings, source: Source) -> bool:
    """A default folder of the commented sources.yaml (absent until the user makes it: not an error)."""
    defaults = {f"{MATERIALS}/{d}" for d in ("clippings", "tools", "personal", "memory")} | {MATERIALS}
    return any(_same(source.path, Path(settings.home) / d) for d in defaults)


def _finish(settings: Settings, ws: Workspace, user: str, report: SourceReport) -> SourceReport:
    """Refused files to quarantine.jsonl (each distinct one once), errors to errors.log."""
    if report.refused:
        record_quarantine(ws.logs, [{"user": user, "file": r["file"], "line": None, "reason": r["reason"], "severity": r["severity"],
                                     "sha256": r.get("sha256"), "path": r["file"], "stage": "collect", "source": report.name}
                                    for r in report.refused])
    if report.errors:
        stamp = clock.stamp(settings.timezone)
        append_lines(ws.logs / "errors.log", [f"{stamp} collect-to-inbox ERROR {e}" for e in report.errors])
    if report.errors and report.status == "ok":
        report.status = "errors"
    return report


# -- all sources ---------------------------------------------------------------------------------------------------
def collect(settings: Settings, user: str | None = None, *, fetch=fetch_feed, take=collect_source, stop=None) -> dict:
    """Collect every configured source into the inbox: the sources planned, each fetched (a feed) and collected, the
    run's report. Returns the ``CollectReport`` (knowledge/report.py) as a dict::

        {user, collected: [{partition, file, source, title, source_type, from}], duplicates: n,
         refused: [{file, reason, severity, sha256}], warnings: [...], errors: [...], per_source: {name: {...}}}

    A source that fails (a feed that cannot be downloaded, an unexpected error) is reported; the rest go on.
    ``fetch`` and ``take``: the fetch and collect stages, plain or as tasks (``tasks.knowledge.collect_all``: one task
    run per source, never per document); ``stop(error)``: raises when a failure is a run being stopped (a flow's
    SIGTERM), so it is never taken for a failed source.
    """
    user = user or settings.user
    sources, problems = plan_sources(settings)
    reports = []
    for source in progress.track(sources, "collecting sources"):
        try:
            data = fetch(settings, source) if source.type == "feed" else None
        except Exception as e:  # noqa: BLE001 - a feed that cannot be fetched (after retries) is skipped
            if stop is not None:
                stop(e)
            reports.append(failed_source(settings, user, source, fetch_error(source, e)))
            continue
        try:
            reports.append(take(settings, source, user, data=data))
        except Exception as e:  # noqa: BLE001 - one broken source never costs the others
            if stop is not None:
                stop(e)
            reports.append(failed_source(settings, user, source, f"source {source.name}: {type(e).__name__}: {e}"))
    return finish_collect(settings, user, reports, problems).to_dict()


def plan_sources(settings: Settings) -> tuple[list[Source], list[str]]:
    """The configured sources (sources.yaml, with agent-local/materials/ always one), and what was wrong with the list."""
    Workspace(settings.home).ensure()
    problems: list[str] = []
    load_config(settings, problems)
    return load_sources(settings, problems), problems


def fetch_error(source: Source, e: Exception) -> str:
    return str(e) if _is_feed_error(e) else f"feed {source.location}: {type(e).__name__}: {e}"


def failed_source(settings: Settings, user: str, source: Source, error: str) -> SourceReport:
    """The report of a source that could not be collected (its error logged like any other)."""
    r = _empty_report(source)
    r.status = "failed"
    r.errors.append(error)
    return _finish(settings, Workspace(settings.home), user, r)


def finish_collect(settings: Settings, user: str, reports: list[SourceReport], problems: list[str]) -> CollectReport:
    """One report for the run; problems with the source list go to errors.log."""
    if problems:
        append_lines(Workspace(settings.home).logs / "errors.log", [f"{clock.stamp(settings.timezone)} collect-to-inbox ERROR {p}" for p in problems])
    return CollectReport.combine(user, reports, problems)


def _is_feed_error(e: Exception) -> bool:
    return isinstance(e, FeedError)


def collect_markdown(result: dict) -> str:
    """The run's report for people (the flow's artifact), from the dict ``collect`` returns."""
    return CollectReport.from_dict(result).artifact_markdown()
