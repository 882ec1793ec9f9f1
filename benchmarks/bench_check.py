"""Benchmark: checking the five seed tutorials with `mha-symbolic check` (target < 10 s in total).

Prints one line per file and the total, all measured in this run (cold start included).
Run: python benchmarks/bench_check.py [SEEDS_DIR]
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

from mha_symbolic.document import check_file


def main() -> None:
    seeds = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).resolve().parents[2] / "shared" / "seeds"
    files = sorted(p for p in seeds.glob("0*.txt") if not p.name.endswith(".fixed.txt"))
    if not files:
        print(f"no seed files in {seeds}")
        return
    total = time.perf_counter()
    for path in files:
        t = time.perf_counter()
        report = check_file(str(path))
        counts = ", ".join(f"{k}: {v}" for k, v in report.counts().items() if v)
        print(f"{path.name}: {time.perf_counter() - t:.2f} s ({counts})")
    print(f"all {len(files)} seeds: {time.perf_counter() - total:.2f} s (target < 10 s)")


if __name__ == "__main__":
    main()
