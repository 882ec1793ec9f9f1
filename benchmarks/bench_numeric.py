"""Benchmark: lambdified MultiHeadAttention vs a hand-written NumPy implementation.

Prints one line per figure, all measured in this run:
  compile time of lambdify (target < 1 s), median-of-N time of each implementation and
  their ratio (target <= 1.10) at n = 512, d_model = 512, h = 8 for batch 1 and 8, and the
  peak memory of one call of each (tracemalloc, which NumPy reports its buffers to); then the same for
  grouped-query attention with g = 2 key/value heads (issue 15; target <= 1.10 against a hand-written GQA that
  computes each shared K_j, V_j once).

Run: python benchmarks/bench_numeric.py [--repeats N]
"""

from __future__ import annotations

import argparse
import statistics
import time
import tracemalloc

import numpy as np

from mha_symbolic import MultiHeadAttention

N, D_MODEL, H = 512, 512, 8
D_K = D_MODEL // H


def hand_written(X, WQ, WK, WV, WO):
    """The implementation a person would write: a loop over heads, in-place stable softmax."""
    heads = []
    for i in range(WQ.shape[0]):
        Q, K, V = X @ WQ[i], X @ WK[i], X @ WV[i]
        S = Q @ np.swapaxes(K, -1, -2)
        S /= np.sqrt(Q.shape[-1])
        S -= S.max(axis=-1, keepdims=True)
        np.exp(S, out=S)
        S /= S.sum(axis=-1, keepdims=True)
        heads.append(S @ V)
    return np.concatenate(heads, axis=-1) @ WO


def hand_written_gqa(X, WQ, WK, WV, WO):
    """Grouped-query attention by hand: each of the g key/value heads projected once, read by h/g query heads."""
    h, g = WQ.shape[0], WK.shape[0]
    kv = [(X @ WK[j], X @ WV[j]) for j in range(g)]
    heads = []
    for i in range(h):
        K, V = kv[i // (h // g)]
        S = (X @ WQ[i]) @ np.swapaxes(K, -1, -2)
        S /= np.sqrt(WQ.shape[-1])
        S -= S.max(axis=-1, keepdims=True)
        np.exp(S, out=S)
        S /= S.sum(axis=-1, keepdims=True)
        heads.append(S @ V)
    return np.concatenate(heads, axis=-1) @ WO


def median_times(fns, repeats):
    """Median time of each function, calls interleaved so that machine drift hits both alike."""
    times: list[list[float]] = [[] for _ in fns]
    for _ in range(repeats):
        for fn, ts in zip(fns, times, strict=True):
            t = time.perf_counter()
            fn()
            ts.append(time.perf_counter() - t)
    return [statistics.median(ts) for ts in times]


def peak_mib(fn):
    tracemalloc.start()
    fn()
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return peak / 2**20


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=15)
    args = parser.parse_args()

    t = time.perf_counter()
    f = MultiHeadAttention(d_model=D_MODEL, h=H).lambdify()
    rng = np.random.default_rng(0)
    W = {k: rng.normal(size=(H, D_MODEL, D_K)) / np.sqrt(D_MODEL) for k in ("W_Q", "W_K", "W_V")}
    WO = rng.normal(size=(D_MODEL, D_MODEL)) / np.sqrt(D_MODEL)
    f(rng.normal(size=(N, D_MODEL)), **W, W_O=WO)  # first call compiles for these sizes
    compile_s = time.perf_counter() - t
    print(f"lambdify compile time (n={N}, d_model={D_MODEL}, h={H}): {compile_s:.3f} s (target < 1 s)")

    for batch in (1, 8):
        report(batch, f, rng.normal(size=(batch, N, D_MODEL)), W, WO, args.repeats)

    g = 2
    gqa = MultiHeadAttention(d_model=D_MODEL, h=H, kv_heads=g).lambdify()
    Wg = {"W_Q": W["W_Q"], "W_K": W["W_K"][:g].copy(), "W_V": W["W_V"][:g].copy()}
    print(f"grouped-query attention, h = {H}, g = {g} key/value heads:")
    for batch in (1, 8):
        report(batch, gqa, rng.normal(size=(batch, N, D_MODEL)), Wg, WO, args.repeats, hand_written_gqa)


def report(batch, f, X, W, WO, repeats, reference=hand_written) -> None:
    def ours():
        return f(X, **W, W_O=WO)

    def hand():
        return reference(X, W["W_Q"], W["W_K"], W["W_V"], WO)

    err = float(np.abs(ours() - hand()).max())
    t_ours, t_hand = median_times([ours, hand], repeats)
    print(f"batch {batch}: lambdified {t_ours * 1e3:.1f} ms, hand-written {t_hand * 1e3:.1f} ms, "
          f"ratio {t_ours / t_hand:.3f} (target <= 1.10; median of {repeats}; max |diff| {err:.1e})")
    m_ours, m_hand = peak_mib(ours), peak_mib(hand)
    print(f"batch {batch}: peak memory lambdified {m_ours:.1f} MiB, hand-written {m_hand:.1f} MiB, "
          f"ratio {m_ours / m_hand:.2f}")

if __name__ == "__main__":
    main()
