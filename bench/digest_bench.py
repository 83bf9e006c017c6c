"""Digest benchmark on real public chat logs: MemoryBank-SiliconFriend (zh, en) and LoCoMo.

Imports each dataset into daily logs, then digests every user's days in date order through the same
stage functions the Prefect flow runs (``--prefect`` runs the real ``backfill`` flow instead), and
prints lines per second, facts per day and peak memory.

    .venv/bin/python bench/digest_bench.py [--eval $AGENTOS_EVAL_DIR] [--prefect] [--json]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from agentos_mem.bench.data import data_root
from agentos_mem.digest.importers import import_locomo, import_memorybank
from agentos_mem.digest.logformat import list_days
from agentos_mem.digest.stages import digest_day
from agentos_mem.kernel.prefect_env import DEFAULTS, let_ephemeral_server_drain
from agentos_mem.kernel.settings import Settings
from agentos_mem.kernel.text import configure_jieba, idf_table
from agentos_mem.kernel.workspace import Workspace


def run_dataset(name: str, logs_root: Path, home: Path, use_prefect: bool) -> dict:
    Workspace(home).ensure()
    users = sorted(p for p in logs_root.iterdir() if p.is_dir())
    totals = {"users": len(users), "days": 0, "lines": 0, "turns": 0, "facts_added": 0, "superseded": 0, "reinforced": 0,
              "conflicts": 0, "cards": 0, "quarantined": 0}
    t0 = time.perf_counter()
    for folder in users:
        settings = Settings(home=home, user=folder.name, logs_dir=folder, hostname="bench")
        days = list_days(folder)
        if use_prefect:
            # lazy: flows.daily pulls Prefect (~2 s): only when this runs
            from agentos_mem.flows.daily import backfill

            os.environ["AGENTOS_HOME"] = str(home)
            results = backfill(start=days[0], end=days[-1], user=folder.name, logs_dir=str(folder))["per_day"]
        else:
            results = [digest_day(settings, folder.name, d, folder) for d in days]
        for r in results:
            totals["days"] += 1
            totals["lines"] += r["lines_read"]
            totals["turns"] += r["turns"]
            totals["facts_added"] += r["facts_added"]
            totals["superseded"] += r["facts_superseded"]
            totals["reinforced"] += r["facts_reinforced"]
            totals["conflicts"] += r["conflicts"]
            totals["cards"] += r["cards"]
            totals["quarantined"] += len(r["quarantined"])
    secs = time.perf_counter() - t0
    totals.update(dataset=name, seconds=round(secs, 2), lines_per_s=round(totals["lines"] / secs, 1),
                  ms_per_day=round(1000 * secs / max(1, totals["days"]), 1),
                  facts_per_day=round(totals["facts_added"] / max(1, totals["days"]), 2))
    return totals


def one_big_day(src: Path, out: Path) -> None:
    """Every LoCoMo turn in a single day's log: the throughput of a long day, not per-day overhead."""
    import frontmatter

    speakers, bodies = {}, []
    for f in sorted(src.rglob("*.md")):
        post = frontmatter.load(f)
        speakers.update(post.get("speakers") or {})
        bodies.append(post.content)
    (out / "bigday").mkdir(parents=True, exist_ok=True)
    meta = "---\nspeakers:\n" + "".join(f"  {name}: {role}\n" for name, role in sorted(speakers.items())) + "---\n"
    (out / "bigday" / "2030-01-01.md").write_text(meta + "\n\n".join(bodies) + "\n", encoding="utf-8")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--eval", default=None, help="the evaluation data (default: $AGENTOS_EVAL_DIR, else the fetched cache)")
    ap.add_argument("--prefect", action="store_true", help="run the backfill flow (ephemeral Prefect) instead of the plain stages")
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--report", metavar="PATH", help="also write the table as Markdown (with the command and versions) to PATH")
    args = ap.parse_args()
    if args.prefect:
        for k, v in DEFAULTS.items():
            os.environ.setdefault(k, v)
        os.environ.setdefault("PREFECT_LOGGING_LEVEL", "WARNING")

    eval_dir = data_root(args.eval)
    if not eval_dir.is_dir():
        print(f"evaluation data not found at {eval_dir}", file=sys.stderr)
        return 2

    t0 = time.perf_counter()
    configure_jieba()  # one-time per process: jieba's dictionary and IDF table, reported apart
    idf_table()
    startup = time.perf_counter() - t0
    rows = []
    with tempfile.TemporaryDirectory(prefix="agentos-bench-") as tmp:
        tmp = Path(tmp)
        if args.prefect:
            os.environ.setdefault("PREFECT_HOME", str(tmp / "prefect"))
        sets = [("memorybank-zh", import_memorybank, eval_dir / "memorybank_siliconfriend/memory_bank_cn.json"),
                ("memorybank-en", import_memorybank, eval_dir / "memorybank_siliconfriend/memory_bank_en.json"),
                ("locomo", import_locomo, eval_dir / "locomo/locomo.json")]
        for name, importer, src in sets:
            importer(src, tmp / name / "logs")
            rows.append(run_dataset(name, tmp / name / "logs", tmp / name / "home", args.prefect))
        one_big_day(tmp / "locomo" / "logs", tmp / "locomo-one-day" / "logs")
        rows.append(run_dataset("locomo-one-day", tmp / "locomo-one-day" / "logs", tmp / "locomo-one-day" / "home", args.prefect))
    if args.prefect:
        let_ephemeral_server_drain()
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    if args.json:
        print(json.dumps({"mode": "prefect" if args.prefect else "stages", "startup_s": round(startup, 2), "peak_rss_mb": round(peak_mb, 1),
                          "datasets": rows}, ensure_ascii=False))
        return 0
    mode = "Prefect backfill flow" if args.prefect else "plain stage functions"
    head = (f"digest benchmark ({mode}), one-time start-up (jieba dictionary + IDF) {startup:.1f} s, peak RSS {peak_mb:.0f} MB")
    cols = ["dataset", "users", "days", "lines", "turns", "seconds", "ms_per_day", "lines_per_s", "facts_added", "facts_per_day",
            "superseded", "reinforced", "conflicts", "cards", "quarantined"]
    print(head)
    print("".join(f"{c:>14}" if i else f"{c:<16}" for i, c in enumerate(cols)))
    for r in rows:
        print("".join(f"{r[c]!s:>14}" if i else f"{r[c]:<16}" for i, c in enumerate(cols)))
    if args.report:
        import platform
        from importlib.metadata import version

        md = [f"## Digest ({mode})", "", f"`{' '.join(['python', 'bench/digest_bench.py', *sys.argv[1:]])}` on "
              f"{time.strftime('%Y-%m-%d')}, Python {platform.python_version()}, prefect {version('prefect')}, jieba {version('jieba')}, "
              f"{os.cpu_count()} cores. {head}.", "", "| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
        md += ["| " + " | ".join(str(r[c]) for c in cols) + " |" for r in rows]
        Path(args.report).parent.mkdir(parents=True, exist_ok=True)
        Path(args.report).write_text("\n".join(md) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
