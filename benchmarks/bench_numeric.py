"""Benchmark: lambdified MultiHeadAttention (its fused code) against hand-written NumPy, torch and the GEMM floor.

Prints one line per figure, all measured in this run:

1. In this process (float64, BLAS with its default threads), as before: the compile time of lambdify (target < 1 s);
   at n = d_model = 512, h = 8, batch 1 and 8, the median time of the lambdified function and its median paired
   ratio to a hand-written loop over heads (target <= 1.10) and the peak memory of one call of each (tracemalloc,
   which NumPy reports its buffers to); the same for grouped-query attention with g = 2 key/value heads against a
   hand-written GQA that computes each shared K_j, V_j once (issue 15; target <= 1.10).
2. float32, n = d_model = 512, h = 8, for batch 1 and 8 and for 1 and 2 threads (issue 15), each implementation
   timed in its own process (OMP_NUM_THREADS, OPENBLAS_NUM_THREADS and MKL_NUM_THREADS set, and
   torch.set_num_threads; torch's idle OpenMP threads slow the BLAS calls that follow them in one process):
   the lambdified function against a fused hand-written NumPy MHA (target <= 1.05; also its generated code
   alone, without the call's input validation and output check), against torch CPU
   ``nn.MultiheadAttention`` (eval, inference mode, need_weights=False: its fast path; when torch is importable;
   target <= 1.0) and against the GEMM floor (target <= 1.3): its FLOPs, 8 n d^2 + 4 n^2 d per batch element,
   at the rate of one 1024 x 1024 x 1024 float32 product timed in the same process.  The processes run in
   ``--rounds`` alternating rounds.  Ratios between implementations of one process are medians of paired calls
   (each repeat's ratio: the calls ran next to each other, so a slow phase of a shared machine hits both), with
   their quartiles for the fused NumPy version; the ratio to torch (another process) is a ratio of medians.

Run: python benchmarks/bench_numeric.py [--repeats N] [--rounds R] [--part 1|2]
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import statistics
import subprocess
import sys
import time
import tracemalloc

import numpy as np

N, D_MODEL, H = 512, 512, 8
D_K = D_MODEL // H
GEMM = 1024  # the side of the product whose rate sets the GEMM floor


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


def hand_written_fused(X, WQ, WK, WV, WO):
    """The fastest NumPy MHA we know how to write by hand, from the same (h, d_model, d_k) weights.

    Every head's projection in one product (the weights side by side, the scale times log2(e) folded into the
    queries' copy, so that the softmax takes exp2, twice as fast as exp in float32;
    the batch's rows stacked into one matrix, so that each projection is one large BLAS call),
    per-head views, one scores buffer reused by every head, the softmax in place -- shifted by the row maximum
    only when a Cauchy-Schwarz bound (largest query norm x largest key norm) does not keep exp far from overflow
    (as the lambdified code does) -- with the row sums as a matrix-vector product and every head's rows
    multiplied by their reciprocals at once after the products with V, heads written over the queries they came
    from, the output over the keys.
    """
    h, d, dk = WQ.shape
    dv = WV.shape[2]
    rows = X.reshape(-1, d)  # the batch's rows in one product: one large BLAS call
    scale = float(np.log2(np.e) / np.sqrt(dk))  # the scores in units of log2: the softmax takes exp2 (faster)
    Q = (rows @ (WQ.transpose(1, 0, 2).reshape(d, h * dk) * scale)).reshape(X.shape[:-1] + (-1,))
    K = (rows @ WK.transpose(1, 0, 2).reshape(d, h * dk)).reshape(X.shape[:-1] + (-1,))
    V = (rows @ WV.transpose(1, 0, 2).reshape(d, h * dv)).reshape(X.shape[:-1] + (-1,))
    Qh, Kh, Vh = (A.reshape(*A.shape[:-1], h, -1) for A in (Q, K, V))
    limit = np.log2(np.finfo(Q.dtype).max) / 4
    bound = np.sqrt(np.einsum("...hd,...hd->...h", Qh, Qh).reshape(-1, h).max(0) *
                    np.einsum("...hd,...hd->...h", Kh, Kh).reshape(-1, h).max(0))
    n = X.shape[-2]
    S = np.empty(X.shape[:-1] + (n,), Q.dtype)
    r = np.empty(X.shape[:-1] + (1,), Q.dtype)
    sums = np.empty(X.shape[:-1] + (h, 1), Q.dtype)
    ones = np.ones((n, 1), Q.dtype)
    for i in range(h):
        np.matmul(Qh[..., i, :], np.swapaxes(Kh[..., i, :], -1, -2), out=S)
        if bound[i] > limit:
            np.max(S, axis=-1, keepdims=True, out=r)
            S -= r
        np.exp2(S, out=S)
        np.matmul(S, ones, out=sums[..., i, :])
        np.matmul(S, Vh[..., i, :], out=Qh[..., i, :])
    Qh *= np.reciprocal(sums, out=sums)
    np.matmul(Q.reshape(-1, d), WO, out=K.reshape(-1, d))
    return K


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


def sample_times(fns, repeats):
    """Each function's times; the order rotates every repeat, so that each follows every other alike (a function
    timed right after a large product finds its data evicted from the caches)."""
    times: list[list[float]] = [[] for _ in fns]
    for r in range(repeats):
        for step in range(len(fns)):
            k = (step + r) % len(fns)
            t = time.perf_counter()
            fns[k]()
            times[k].append(time.perf_counter() - t)
    return times


def peak_mib(fn):
    tracemalloc.start()
    fn()
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return peak / 2**20


def weights(dtype, g=H):
    rng = np.random.default_rng(0)
    W = {k: (rng.normal(size=(H if k == "W_Q" else g, D_MODEL, D_K)) / np.sqrt(D_MODEL)).astype(dtype)
         for k in ("W_Q", "W_K", "W_V")}
    return W, (rng.normal(size=(D_MODEL, D_MODEL)) / np.sqrt(D_MODEL)).astype(dtype)


def gemm_flops(batch):
    """FLOPs of one call: 8 n d^2 (four projections) + 4 n^2 d (scores and weighted values), per batch element."""
    return batch * (8 * N * D_MODEL**2 + 4 * N**2 * D_MODEL)


# ----- part 1: in this process --------------------------------------------------------------------
def part1(repeats: int) -> None:
    from mha_symbolic import MultiHeadAttention

    t = time.perf_counter()
    f = MultiHeadAttention(d_model=D_MODEL, h=H).lambdify()
    W, WO = weights(np.float64)
    rng = np.random.default_rng(1)
    f(rng.normal(size=(N, D_MODEL)), **W, W_O=WO)  # first call compiles for these sizes
    compile_s = time.perf_counter() - t
    print(f"lambdify compile time (n={N}, d_model={D_MODEL}, h={H}): {compile_s:.3f} s (target < 1 s)")
    print("float64, default threads, against a loop over heads:")
    for batch in (1, 8):
        report(batch, f, rng.normal(size=(batch, N, D_MODEL)), W, WO, repeats)

    g = 2
    gqa = MultiHeadAttention(d_model=D_MODEL, h=H, kv_heads=g).lambdify()
    Wg = {"W_Q": W["W_Q"], "W_K": W["W_K"][:g].copy(), "W_V": W["W_V"][:g].copy()}
    print(f"grouped-query attention, h = {H}, g = {g} key/value heads:")
    for batch in (1, 8):
        report(batch, gqa, rng.normal(size=(batch, N, D_MODEL)), Wg, WO, repeats, hand_written_gqa)


def report(batch, f, X, W, WO, repeats, reference=hand_written) -> None:
    def ours():
        return f(X, **W, W_O=WO)

    def hand():
        return reference(X, W["W_Q"], W["W_K"], W["W_V"], WO)

    err = float(np.abs(ours() - hand()).max())
    times = sample_times([ours, hand], repeats)
    t_ours, t_hand = (statistics.median(t) for t in times)
    ratio = statistics.median(paired(*times))
    print(f"batch {batch}: lambdified {t_ours * 1e3:.1f} ms, hand-written {t_hand * 1e3:.1f} ms, "
          f"ratio {ratio:.3f} (target <= 1.10; median of {repeats} paired calls; max |diff| {err:.1e})")
    m_ours, m_hand = peak_mib(ours), peak_mib(hand)
    print(f"batch {batch}: peak memory lambdified {m_ours:.1f} MiB, hand-written {m_hand:.1f} MiB, "
          f"ratio {m_ours / m_hand:.2f}")


# ----- part 2: float32, one process per implementation and thread count ---------------------------
def worker_numpy(batch: int, repeats: int) -> dict:
    """Times (seconds) of the lambdified function, of its generated code alone (called without the input
    validation and the output check), of the fused and the loop hand-written versions and of the GEMM."""
    from mha_symbolic import MultiHeadAttention

    f = MultiHeadAttention(d_model=D_MODEL, h=H).lambdify()
    W, WO = weights(np.float32)
    X = np.random.default_rng(1).normal(size=(batch, N, D_MODEL)).astype(np.float32)
    A, B = (np.random.default_rng(k).normal(size=(GEMM, GEMM)).astype(np.float32) for k in (2, 3))
    generated = f._compiled({}, keep_steps=False)[1].function
    args = [X, *W["W_Q"], *W["W_K"], *W["W_V"], WO]
    fns = {"lambdified": lambda: f(X, **W, W_O=WO),
           "generated": lambda: generated(*args),
           "fused": lambda: hand_written_fused(X, W["W_Q"], W["W_K"], W["W_V"], WO),
           "loop": lambda: hand_written(X, W["W_Q"], W["W_K"], W["W_V"], WO),
           "gemm": lambda: A @ B}
    out, want = fns["lambdified"](), fns["fused"]()
    assert out.dtype == np.float32
    for fn in fns.values():  # warm up
        fn()
    times = sample_times(list(fns.values()), repeats)
    return {"times": dict(zip(fns, times, strict=True)), "diff": float(np.abs(out - want).max())}


def worker_torch(batch: int, repeats: int, threads: int) -> dict:
    import torch

    torch.set_num_threads(threads)
    W, WO = weights(np.float32)
    X = np.random.default_rng(1).normal(size=(batch, N, D_MODEL)).astype(np.float32)
    m = torch.nn.MultiheadAttention(D_MODEL, H, bias=False, batch_first=True).eval()
    with torch.no_grad():  # our layout X W_Q^i is torch's x W_q^T with W_q's rows (i-1) d_k .. i d_k = W_Q^i^T
        stacked = [W[k].transpose(1, 0, 2).reshape(D_MODEL, D_MODEL).T for k in ("W_Q", "W_K", "W_V")]
        m.in_proj_weight.copy_(torch.from_numpy(np.ascontiguousarray(np.concatenate(stacked))))
        m.out_proj.weight.copy_(torch.from_numpy(np.ascontiguousarray(WO.T)))
    x = torch.from_numpy(X)
    with torch.inference_mode():
        out = m(x, x, x, need_weights=False)[0].numpy()
        diff = float(np.abs(out - hand_written_fused(X, W["W_Q"], W["W_K"], W["W_V"], WO)).max())
        for _ in range(2):
            m(x, x, x, need_weights=False)
        times = sample_times([lambda: m(x, x, x, need_weights=False)], repeats)[0]
    return {"times": {"torch": times}, "diff": diff}


def run_worker(kind: str, batch: int, threads: int, repeats: int) -> dict:
    env = dict(os.environ, OMP_NUM_THREADS=str(threads), OPENBLAS_NUM_THREADS=str(threads),
               MKL_NUM_THREADS=str(threads))
    cmd = [sys.executable, __file__, "--worker", kind, "--batch", str(batch), "--threads", str(threads),
           "--repeats", str(repeats)]
    done = subprocess.run(cmd, env=env, capture_output=True, text=True, check=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def part2(repeats: int, rounds: int) -> None:
    have_torch = importlib.util.find_spec("torch") is not None
    kinds = ["numpy"] + (["torch"] if have_torch else [])
    configs = [(batch, threads) for batch in (1, 8) for threads in (1, 2)]
    samples: dict[tuple[int, int], dict[str, list[float]]] = {c: {} for c in configs}
    diffs: dict[tuple[int, int, str], float] = {}
    for _ in range(rounds):
        for batch, threads in configs:
            for kind in kinds:
                result = run_worker(kind, batch, threads, repeats)
                for name, ts in result["times"].items():
                    samples[batch, threads].setdefault(name, []).extend(ts)
                diffs[batch, threads, kind] = result["diff"]
    print(f"float32, n = d_model = {N}, h = {H}; each implementation in its own process; median of "
          f"{rounds} rounds x {repeats} calls:")
    if not have_torch:
        print("torch is not importable: no torch figures")
    for batch, threads in configs:
        ts = samples[batch, threads]
        med = {name: statistics.median(t) for name, t in ts.items()}
        ours = med["lambdified"]
        floors = [gemm_flops(batch) * g / (2 * GEMM**3) for g in ts["gemm"]]  # each repeat's own GEMM rate
        fused_q = quartiles(paired(ts["lambdified"], ts["fused"]))
        alone = statistics.median(paired(ts["generated"], ts["fused"]))
        line = (f"batch {batch}, {threads} thread{'s' if threads > 1 else ' '}: lambdified {ours * 1e3:6.1f} ms; "
                f"/ fused NumPy {fused_q[1]:.3f} [{fused_q[0]:.3f}-{fused_q[2]:.3f}] (<= 1.05; "
                f"{med['fused'] * 1e3:.1f} ms; the generated code alone {alone:.3f})")
        if "torch" in med:
            line += f", / torch {ours / med['torch']:.3f} (<= 1.0; {med['torch'] * 1e3:.1f} ms)"
        floor = statistics.median(floors)
        line += (f", / GEMM floor {statistics.median(paired(ts['lambdified'], floors)):.3f} (<= 1.3; "
                 f"{floor * 1e3:.1f} ms at {gemm_flops(batch) / floor / 1e9:.0f} GFLOP/s)"
                 f", / loop over heads {statistics.median(paired(ts['lambdified'], ts['loop'])):.3f}")
        print(line)
        extra = (f"  max |diff| vs fused NumPy {diffs[batch, threads, 'numpy']:.1e}; the fused NumPy itself / GEMM "
                 f"floor {statistics.median(paired(ts['fused'], floors)):.3f}")
        if "torch" in med:
            extra += (f", torch vs fused NumPy {diffs[batch, threads, 'torch']:.1e}; torch / GEMM floor "
                      f"{med['torch'] / floor:.3f}")
        print(extra)


def paired(times, references):
    """Each repeat's ratio: the two calls ran next to each other, so a slow phase of the machine hits both."""
    return [t / r for t, r in zip(times, references, strict=True)]


def quartiles(values):
    q1, q2, q3 = statistics.quantiles(values, n=4)
    return q1, q2, q3


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=15, help="calls per implementation (part 1) or per round")
    parser.add_argument("--rounds", type=int, default=3, help="alternating rounds of the part 2 processes")
    parser.add_argument("--part", type=int, choices=(1, 2), help="only this part")
    parser.add_argument("--worker", choices=("numpy", "torch"), help=argparse.SUPPRESS)
    parser.add_argument("--batch", type=int, default=1, help=argparse.SUPPRESS)
    parser.add_argument("--threads", type=int, default=1, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker == "numpy":
        print(json.dumps(worker_numpy(args.batch, args.repeats)))
    elif args.worker == "torch":
        print(json.dumps(worker_torch(args.batch, args.repeats, args.threads)))
    else:
        if args.part in (None, 1):
            part1(args.repeats)
        if args.part in (None, 2):
            part2(args.repeats, args.rounds)


if __name__ == "__main__":
    main()
