"""Index and query performance at one size (the code is bench/perf.py; `agentos bench perf` runs several sizes).

    .venv/bin/python bench/index_bench.py [--cards 10000] [--facts 10000] [--queries 200] [--json] [--report FILE]
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from agentos_mem.bench.perf import main  # noqa: E402

if __name__ == "__main__":
    sys.exit(main())
