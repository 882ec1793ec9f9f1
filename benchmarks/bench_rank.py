"""Benchmark: exact rank with FLINT vs SymPy's DomainMatrix, and the default rank sweep.

Prints one line per figure, all measured in this run:
  exact rank of a random 512 x 512 integer matrix with our path (target <= 0.5 s);
  our path vs DomainMatrix.rank at 256 x 256 (target >= 50x faster);
  wall time of the default sweep (114 configurations) with 2 worker processes (target <= 60 s).

Run: python benchmarks/bench_rank.py
"""

from __future__ import annotations

import time

import numpy as np
from sympy import ZZ
from sympy.polys.matrices import DomainMatrix

from mha_symbolic.rank import DEFAULT_GRID, exact_rank, rank_sweep


def timed(fn):
    t = time.perf_counter()
    value = fn()
    return value, time.perf_counter() - t


def main() -> None:
    rng = np.random.default_rng(0)
    A512 = rng.integers(-100, 101, size=(512, 512))
    r, t512 = timed(lambda: exact_rank(A512))
    print(f"exact rank 512x512 (FLINT fmpz_mat): rank {r}, {t512:.3f} s (target <= 0.5 s)")

    A256 = rng.integers(-100, 101, size=(256, 256))
    r_ours, t_ours = timed(lambda: exact_rank(A256))
    dm = DomainMatrix([[ZZ(int(x)) for x in row] for row in A256.tolist()], (256, 256), ZZ)
    r_dm, t_dm = timed(dm.rank)
    assert r_ours == r_dm
    print(f"exact rank 256x256: ours {t_ours:.3f} s, DomainMatrix {t_dm:.2f} s, speed-up {t_dm / t_ours:.0f}x "
          "(target >= 50x)")

    results, t_sweep = timed(lambda: rank_sweep(workers=2))
    tight = sum(r.tight for r in results)
    print(f"default sweep: {len(DEFAULT_GRID)} configurations, {tight} attain every bound, {t_sweep:.1f} s "
          "on 2 workers (target <= 60 s)")


if __name__ == "__main__":
    main()
