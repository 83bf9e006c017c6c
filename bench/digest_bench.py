"""Digest benchmark on real public chat logs: MemoryBank-SiliconFriend (zh, en) and LoCoMo.

Imports each dataset into daily logs, then digests every user's days in date order through the same
stage functions the Prefect flow runs (``--prefect`` runs the real ``backfill`` flow instead), and
prints lines per second, facts per day and peak memory.

    .venv/bin/python bench/digest_bench.py [--eval ../shared/eval] [--prefect] [--json]
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


def run_dataset(name: str, logs_root: Path, home: Path, use_prefect: bool) -> dict:
    from agentos.digest import digest_day
    from agentos.logformat import list_days
    from agentos.settings import Settings
    from agentos.workspace import Workspace

    Workspace(home).ensure()
    users = sorted(p for p in logs_root.iterdir() if p.is_dir())
    totals = {"users": len(users), "days": 0, "lines": 0, "turns": 0, "facts_added": 0, "superseded": 0, "reinforced": 0,
              "conflicts": 0, "cards": 0, "quarantined": 0}
    t0 = time.perf_counter()
    for folder in users:
        settings = Settings(home=home, user=folder.name, logs_dir=folder, hostname="bench")
        days = list_days(folder)
        if use_prefect:
            from flows.digest import backfill

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


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--eval", default=os.environ.get("AGENTOS_EVAL_DIR", str(ROOT.parent / "shared" / "eval")))
    ap.add_argument("--prefect", action="store_true", help="run the backfill flow (ephemeral Prefect) instead of the plain stages")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    if args.prefect:
        from agentos.prefect_env import DEFAULTS

        for k, v in DEFAULTS.items():
            os.environ.setdefault(k, v)
        os.environ.setdefault("PREFECT_LOGGING_LEVEL", "WARNING")
    from agentos.importers import import_locomo, import_memorybank

    eval_dir = Path(args.eval)
    if not eval_dir.is_dir():
        print(f"evaluation data not found at {eval_dir}", file=sys.stderr)
        return 2
    from agentos.text import _idf_table, configure_jieba

    t0 = time.perf_counter()
    configure_jieba()  # one-time per process: jieba's dictionary and IDF table, reported apart
    _idf_table()
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
    if args.prefect:
        from agentos.prefect_env import let_ephemeral_server_drain

        let_ephemeral_server_drain()
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    if args.json:
        print(json.dumps({"mode": "prefect" if args.prefect else "stages", "startup_s": round(startup, 2), "peak_rss_mb": round(peak_mb, 1),
                          "datasets": rows}, ensure_ascii=False))
        return 0
    print(f"digest benchmark ({'Prefect backfill flow' if args.prefect else 'plain stage functions'}), "
          f"one-time start-up (jieba dictionary + IDF) {startup:.1f} s, peak RSS {peak_mb:.0f} MB")
    print(f"{'dataset':<15}{'users':>6}{'days':>6}{'lines':>8}{'turns':>7}{'sec':>8}{'ms/day':>8}{'lines/s':>9}{'facts':>7}{'facts/day':>10}{'supers.':>8}{'reinf.':>7}{'confl.':>7}{'cards':>7}")
    for r in rows:
        print(f"{r['dataset']:<15}{r['users']:>6}{r['days']:>6}{r['lines']:>8}{r['turns']:>7}{r['seconds']:>8}{r['ms_per_day']:>8}{r['lines_per_s']:>9}"
              f"{r['facts_added']:>7}{r['facts_per_day']:>10}{r['superseded']:>8}{r['reinforced']:>7}{r['conflicts']:>7}{r['cards']:>7}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
