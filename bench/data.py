"""The benchmarks' data: where it is read from, and the public sets fetched from their upstream at a pinned commit.

Where a benchmark reads (``data_root``): ``--data DIR`` (an offline copy), else ``$AGENTOS_EVAL_DIR`` (the maintainers'
evaluation folder; only ``.ci/run`` says where it lies), else the cache ``agentos bench data fetch`` fills in the
workspace (``agent-local/bench-data/``, never outside the workspace).

``fetch`` downloads each file of a set from its upstream repository at the commit the manifest pins, checks its
sha256 while it streams into a temporary file, and only then moves it into place: a file whose checksum differs is
refused (nothing is left of it) with its name, the expected and the received checksum. Each fetched set gets a
``SOURCE.md`` naming its upstream, commit and licence.

The manifest holds only sets whose files are the upstream's own bytes and whose checksums were checked against the
upstream at the pinned commit. The other sets the benchmarks read (LoCoMo's five conversations, MADial's split,
CMRC2018 and RGB in BEIR layout, MemoryBank's daily logs, the Vue docs' derived link sets, fact_updates) are derived
from their upstreams by the maintainers or not public; they are read from ``--data`` or ``$AGENTOS_EVAL_DIR``.
"""

from __future__ import annotations

import hashlib
import os
import urllib.error
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

EVAL_ENV = "AGENTOS_EVAL_DIR"
CACHE = "bench-data"  # under the workspace's agent-local/
UPSTREAM = "https://raw.githubusercontent.com"  # {UPSTREAM}/{owner}/{repo}/{commit}/{path}
CHUNK = 1 << 16
TIMEOUT_S = 60


class DataError(Exception):
    """A set that cannot be fetched or read: its message names the set, the file and what to do."""


@dataclass(frozen=True)
class File:
    upstream: str  # path in the upstream repository
    local: str  # path under the set's folder, as the benchmarks read it
    sha256: str


@dataclass(frozen=True)
class DataSet:
    name: str  # the folder under the data root
    repo: str  # owner/name of the upstream repository
    commit: str
    licence: str
    what: str
    files: tuple[File, ...]


SETS: dict[str, DataSet] = {s.name: s for s in (
    DataSet("github_slugger", "Flet/github-slugger", "af59f343dc7fe88a94a79c721fb3225a275a095d", "ISC",
            "heading -> anchor slug rules, CJK and duplicate suffixes included (the knowledge outline's anchors)",
            (File("test/fixtures.json", "fixtures.json", "26e59aec9fb3adee7a56445049ef2d537126b28581802903b529d2556778b248"),)),
)}


def cache_dir(home: str | Path | None = None) -> Path:
    """The fetched sets' folder in the workspace (``AGENTOS_HOME``'s agent-local)."""
    from agentos_mem.kernel.settings import load_settings  # lazy: settings read the environment once asked
    from agentos_mem.kernel.workspace import Workspace

    return Workspace(Path(home) if home else Path(load_settings().home)).local / CACHE


def data_root(explicit: str | Path | None = None, home: str | Path | None = None) -> Path:
    """Where the benchmarks read their data: ``explicit`` (``--data``), else ``$AGENTOS_EVAL_DIR``, else the cache."""
    if explicit:
        return Path(explicit)
    if os.environ.get(EVAL_ENV):
        return Path(os.environ[EVAL_ENV])
    return cache_dir(home)


def sha256_of(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(CHUNK), b""):
            h.update(block)
    return h.hexdigest()


def _url(base: str, ds: DataSet, f: File) -> str:
    return f"{base.rstrip('/')}/{ds.repo}/{ds.commit}/{f.upstream}"


def _download(url: str, dest: Path, expected: str, what: str) -> None:
    """``url`` into ``dest`` through a temporary file beside it, kept only when its sha256 is ``expected``."""
    tmp = dest.with_name(f".{dest.name}.part")
    h = hashlib.sha256()
    try:
        with urllib.request.urlopen(url, timeout=TIMEOUT_S) as r, open(tmp, "wb") as out:  # noqa: S310 - a pinned https URL or the --from mirror
            for block in iter(lambda: r.read(CHUNK), b""):
                h.update(block)
                out.write(block)
    except (urllib.error.URLError, OSError) as e:
        tmp.unlink(missing_ok=True)
        raise DataError(f"{what}: could not download {url}: {e}") from None
    got = h.hexdigest()
    if got != expected:
        tmp.unlink(missing_ok=True)
        raise DataError(f"{what}: refused {url}: its sha256 is {got}, the pinned one is {expected} "
                        "(a changed or tampered file; nothing was kept)")
    os.replace(tmp, dest)


def fetch(names: list[str], dest: Path, *, base: str = UPSTREAM, log: Callable[[str], None] = lambda m: None) -> list[dict]:
    """Fetch the named sets (``all`` for every one) into ``dest``; a file already there with the pinned checksum is
    kept. Returns one row per set: name, folder, files fetched and kept."""
    wanted = list(SETS) if "all" in names else names
    unknown = [n for n in wanted if n not in SETS]
    if unknown:
        raise DataError(f"no such data set: {', '.join(unknown)} (the sets: {', '.join(SETS)}; the others the benchmarks "
                        f"read come from --data or ${EVAL_ENV})")
    rows = []
    for name in wanted:
        ds = SETS[name]
        folder = dest / ds.name
        folder.mkdir(parents=True, exist_ok=True)
        fetched = kept = 0
        for f in ds.files:
            target = folder / f.local
            target.parent.mkdir(parents=True, exist_ok=True)
            if target.is_file() and sha256_of(target) == f.sha256:
                kept += 1
                continue
            log(f"{ds.name}: {f.upstream} from {ds.repo}@{ds.commit[:12]}")
            _download(_url(base, ds, f), target, f.sha256, f"{ds.name}/{f.local}")
            fetched += 1
        (folder / "SOURCE.md").write_text(
            f"# {ds.name}\n\n{ds.what}.\n\nFrom https://github.com/{ds.repo} at commit {ds.commit}, unchanged; licence: "
            f"{ds.licence} (the upstream's).\n\n" + "".join(f"- `{f.local}`: `{f.upstream}`, sha256 {f.sha256}\n" for f in ds.files),
            encoding="utf-8")
        rows.append({"name": ds.name, "folder": str(folder), "fetched": fetched, "kept": kept, "licence": ds.licence})
    return rows


def status(root: Path) -> list[dict]:
    """Each set of the manifest: where it would be read, and whether its files are there with their checksums."""
    out = []
    for ds in SETS.values():
        folder = root / ds.name
        ok = all((folder / f.local).is_file() and sha256_of(folder / f.local) == f.sha256 for f in ds.files)
        out.append({"name": ds.name, "repo": ds.repo, "commit": ds.commit, "licence": ds.licence, "what": ds.what,
                    "folder": str(folder), "present": ok})
    return out


def need(root: Path, rel: str, what: str) -> Path:
    """``root / rel``, or a DataError saying where the benchmark looked and how to get the data."""
    path = root / rel
    if path.exists():
        return path
    top = rel.split("/")[0]
    how = (f"`agentos bench data fetch {top}`" if top in SETS
           else f"a copy of the evaluation data: --data DIR or ${EVAL_ENV}")
    raise DataError(f"{what}: {path} not found (get it with {how})")
