"""Probe: could the fused code run its per-head loop on Python threads?  (Why it does not: issue 15.)

The per-head products (scores Q_i K_i^T: n x d_k x n) are small for BLAS: OpenBLAS's own two threads speed them up
little.  Two Python threads, each running single-threaded BLAS on its own heads, would; but OpenBLAS's worker
threads spin for a while (OPENBLAS_THREAD_TIMEOUT, about 0.1 s by default) after every multi-threaded call -- such as
the projections just before the head loop -- and take the second core from the Python thread.  This script prints,
each in its own process, the time of 16 score products of n = 512, d_k = 64 in float32:

1. one thread, BLAS with 2 threads (what the fused code does);
2. two Python threads, BLAS limited to 1 thread for the whole process (the best case);
3. two Python threads, BLAS switched from 2 threads to 1 (threadpoolctl) right after a 2-thread product;
4. as 3 with OPENBLAS_THREAD_TIMEOUT=4 (the worker threads sleep almost at once).

Run: python benchmarks/probe_threads.py   (case 3 and 4 need threadpoolctl; they are skipped without it)
"""

from __future__ import annotations

import importlib.util
import os
import statistics
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor

import numpy as np

N, D_K, PRODUCTS = 512, 64, 16


def timed(fn, before, repeats=30) -> float:
    times = []
    for _ in range(repeats):
        before()
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times) * 1e3


def worker(case: int) -> float:
    rng = np.random.default_rng(0)
    Q = rng.normal(size=(N, PRODUCTS * D_K)).astype(np.float32)
    big = rng.normal(size=(1024, 1024)).astype(np.float32)
    S = [np.empty((N, N), np.float32) for _ in range(2)]

    def scores(k, heads):
        for i in heads:
            block = Q[:, i * D_K:(i + 1) * D_K]
            np.matmul(block, block.T, out=S[k])

    pool = ThreadPoolExecutor(1)

    def two_threads():
        other = pool.submit(scores, 1, range(1, PRODUCTS, 2))
        scores(0, range(0, PRODUCTS, 2))
        other.result()

    if case == 1:
        return timed(lambda: scores(0, range(PRODUCTS)), lambda: big @ big)
    if case == 2:
        return timed(two_threads, lambda: big @ big)
    from threadpoolctl import ThreadpoolController

    blas = [lib for lib in ThreadpoolController().lib_controllers if lib.user_api == "blas"]

    def switched():
        for lib in blas:
            lib.set_num_threads(1)
        two_threads()
        for lib in blas:
            lib.set_num_threads(2)

    return timed(switched, lambda: big @ big)


def main() -> None:
    if len(sys.argv) == 3 and sys.argv[1] == "--worker":
        print(worker(int(sys.argv[2])))
        return
    cases = {1: ("1 thread, BLAS 2 threads", 2, {}),
             2: ("2 Python threads, BLAS 1 thread", 1, {}),
             3: ("2 Python threads, BLAS switched 2 -> 1 after a 2-thread product", 2, {}),
             4: ("as 3, OPENBLAS_THREAD_TIMEOUT=4", 2, {"OPENBLAS_THREAD_TIMEOUT": "4"})}
    have = importlib.util.find_spec("threadpoolctl") is not None
    base = None
    for case, (label, threads, extra) in cases.items():
        if case >= 3 and not have:
            print(f"{case}. {label}: skipped (threadpoolctl is not importable)")
            continue
        env = dict(os.environ, OMP_NUM_THREADS=str(threads), OPENBLAS_NUM_THREADS=str(threads), **extra)
        done = subprocess.run([sys.executable, __file__, "--worker", str(case)], env=env, capture_output=True,
                              text=True, check=True)
        ms = float(done.stdout.strip().splitlines()[-1])
        base = base or ms
        print(f"{case}. {label}: {ms:.2f} ms, {ms / base:.2f} x case 1")


if __name__ == "__main__":
    main()
