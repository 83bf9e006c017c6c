"""Digest time against the length of one line: is the work per line linear in its length?

Each case is a day log with one ordinary turn and one long user line, digested by the plain stages
(``digest.stages.run_day``: read, archive, extract facts, write facts and cards, user memories) in a fresh
workspace, in a child process with a time limit (a case that runs past it prints ``> N s``). The time
excludes the one-off start-up (imports, jieba's dictionary), which a warm-up day in the same process pays.

Shapes of the long line:
  prose         mixed Chinese / English sentences, no memory cue
  cue           a preference cue ("我喜欢…") and then clauses without a sentence end: one long statement that
                fact and memory extraction both work on
  cue-unbroken  a cue, then one token with no space or sentence end (``a.b/c-1_``…: paths, base64, minified code)
  cue-spaces    a cue, then words separated by long runs of spaces and tabs (pasted tables, indented code)
  han-run       a cue, then one Chinese character repeated (jieba's HMM is quadratic in such a run)
  key-values    a cue, then ``x=`` repeated: a value match at every third character (the rules' worst case found)
  secret-spaces a secret's cue ("我的密码") and then a run of spaces (secret masking at read time reads the line)

A turn is digested from its first 64,000 characters (``digest.logformat.MAX_TURN_CHARS``; the raw archive keeps
it whole, and a warning names its line), so beyond that the time grows only with reading, hashing and archiving.

    .venv/bin/python bench/digest_line_bench.py [--sizes 1K,10K,100K,1M,5M,20M] [--shapes cue,prose] [--limit 300]
        [--report bench/results/digest-line.md] [--json]

Figures only: no test asserts a timing.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from datetime import date
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from agentos_mem.digest.stages import run_day
from agentos_mem.kernel.settings import Settings
from agentos_mem.kernel.workspace import init_workspace

DAY = date(2026, 11, 3)
SHAPES = ("prose", "cue", "cue-unbroken", "cue-spaces", "han-run", "key-values", "secret-spaces")
_PROSE = "我们今天讨论了服务器的部署方案，决定下周上线。The team reviewed the rollout plan and agreed on the schedule. "
_CUE = "我喜欢"  # no sentence end after it: the whole line is one statement with a cue
_CLAUSES = "用 vim 编辑配置文件，the team prefers tabs over spaces, "
_UNBROKEN = "a.b/c-1_"
_SPACES = "word \t  \t  "


def parse_size(s: str) -> int:
    s = s.strip().upper()
    mult = {"K": 1000, "M": 1000 * 1000}.get(s[-1:], 1)
    return int(float(s.rstrip("KM")) * mult)


def label(n: int) -> str:
    return f"{n // 1000**2} MB" if n >= 1000**2 else f"{n // 1000} KB" if n >= 1000 else f"{n} B"


def long_line(shape: str, size: int) -> str:
    """One user line of ``size`` UTF-8 bytes (about: a Chinese character is three)."""
    head = "[09:05] 用户: " + {"prose": "", "secret-spaces": "我的密码"}.get(shape, _CUE)
    unit = {"prose": _PROSE, "cue": _CLAUSES, "cue-unbroken": _UNBROKEN, "cue-spaces": _SPACES, "han-run": "中",
            "key-values": "x=", "secret-spaces": " "}[shape]
    ub = len(unit.encode("utf-8"))
    left = max(0, size - len(head.encode("utf-8")))
    tail = "x" if shape == "secret-spaces" else ""  # else the run is a trailing space, stripped from the turn
    return head + unit * ((left - len(tail)) // ub) + tail


def _digest(home: Path, logs: Path, line: str, day: date) -> tuple[float, dict]:
    (logs / f"{day.isoformat()}.md").write_text("[09:00] 用户: 我叫林晓，数据库端口是 5432。\n" + line + "\n", encoding="utf-8")
    settings = Settings(home=home, hostname="bench", logs_dir=logs, llm_base_url=None)
    t0 = time.perf_counter()
    r = run_day(settings, "default", day, logs)
    return time.perf_counter() - t0, r


def one(shape: str, size: int) -> dict:
    """Run in the child: a warm-up day, then the measured day."""
    with tempfile.TemporaryDirectory() as tmp:
        home, logs = Path(tmp) / "home", Path(tmp) / "logs"
        init_workspace(home)
        logs.mkdir()
        _digest(home, logs, "[09:05] 用户: 我喜欢喝咖啡。", date(2026, 11, 2))  # imports, jieba, stores
        line = long_line(shape, size)
        secs, r = _digest(home, logs, line, DAY)
        return {"shape": shape, "bytes": len(line.encode("utf-8")), "seconds": round(secs, 3), "turns": r["turns"],
                "facts": r["facts_added"], "cards": r["cards"], "quarantined": r["quarantined"]}


def measure(shape: str, size: int, limit: float) -> dict:
    cmd = [sys.executable, __file__, "--one", shape, str(size)]
    try:
        out = subprocess.run(cmd, capture_output=True, text=True, timeout=limit, cwd=ROOT)
    except subprocess.TimeoutExpired:
        return {"shape": shape, "bytes": size, "seconds": None, "error": f"> {limit:g} s"}
    if out.returncode != 0:
        tail = (out.stderr.strip().splitlines() or ["?"])[-1]
        return {"shape": shape, "bytes": size, "seconds": None, "error": tail[:120]}
    return json.loads(out.stdout.strip().splitlines()[-1])


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", default="1K,10K,100K,1M,5M,20M", help="line lengths in bytes (K = 1,000, M = 1,000,000)")
    ap.add_argument("--shapes", default=",".join(SHAPES), help=f"any of {', '.join(SHAPES)}")
    ap.add_argument("--limit", type=float, default=300, help="seconds a case may run before it is stopped")
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--report", metavar="PATH", help="also write the table (Markdown) to PATH")
    ap.add_argument("--one", nargs=2, metavar=("SHAPE", "SIZE"), help=argparse.SUPPRESS)
    a = ap.parse_args(argv)
    if a.one:
        print(json.dumps(one(a.one[0], int(a.one[1]))))
        return 0
    sizes = [parse_size(s) for s in a.sizes.split(",") if s.strip()]
    shapes = [s.strip() for s in a.shapes.split(",") if s.strip()]
    rows = []
    for size in sizes:
        row = {"size": label(size)}
        for shape in shapes:
            r = measure(shape, size, a.limit)
            row[shape] = r
            print(f"  {label(size):>6} {shape:<13} {r.get('error') or str(r['seconds']) + ' s'}", file=sys.stderr, flush=True)
        rows.append(row)
    if a.json:
        print(json.dumps(rows, ensure_ascii=False, indent=1))
        return 0
    table = ["| line length | " + " | ".join(shapes) + " |", "|---|" + "---|" * len(shapes)]
    for row in rows:
        cells = [(row[s].get("error") or f"{row[s]['seconds']:.2f} s") for s in shapes]
        table.append(f"| {row['size']} | " + " | ".join(cells) + " |")
    note = (f"Seconds for the plain stages of one day (warm process): one ordinary turn plus one line of the given length "
            f"(K = 1,000 bytes, M = 1,000,000; the file limit is 20 MiB); a case stopped after {a.limit:g} s shows `> {a.limit:g} s`. "
            f"{os.cpu_count()} CPU(s), Python {sys.version.split()[0]}.")
    print("\n".join(table) + "\n\n" + note)
    if a.report:
        doc = ["# Digest time against line length", "", "`" + " ".join(["bench/digest_line_bench.py", *(argv if argv is not None else sys.argv[1:])]) + "`",
               "", (__doc__ or "").split("\n\n", 1)[1].split("\n    .venv")[0].strip(), "", *table, "", note, ""]
        Path(a.report).parent.mkdir(parents=True, exist_ok=True)
        Path(a.report).write_text("\n".join(doc), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
