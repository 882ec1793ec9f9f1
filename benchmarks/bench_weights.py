"""Certified ranks of every head of a 6-layer, d_model 384, 12-head model: the exact factored route vs float SVD.

For each of the 72 heads, the exact ranks of W_QK = W_Q^i (W_K^i)^T and W_OV = W_V^i W_O^i from the dyadic values
of the stored float32 factors (``mha_symbolic.rank.circuits``), timed against the float route (an SVD of each
384 x 384 float32 product, numerical evidence only) and against the old route on one head (the exact rank of the
exact dyadic form of the *rounded* product: slow, and wrong -- it certifies the rounding).  Target: the exact route
in at most 60 s on 2 cores.

The checkpoint is all-MiniLM-L6-v2 when tests/test_circuits.py has cached it (``~/.cache/mha_symbolic``), else a
synthetic float32 model of the same sizes in the BERT layout.

Run: python benchmarks/bench_weights.py [--checkpoint FILE.safetensors]
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from pathlib import Path

import numpy as np

CACHED = Path(os.environ.get("MHA_CHECKPOINT_CACHE", Path.home() / ".cache" / "mha_symbolic")) / \
    "all-MiniLM-L6-v2" / "model.safetensors"


def synthetic(path: Path, layers: int = 6, E: int = 384, h: int = 12) -> None:
    from safetensors.numpy import save_file

    rng = np.random.default_rng(0)
    sd = {}
    for L in range(layers):
        for name in ("self.query", "self.key", "self.value", "output.dense"):
            sd[f"encoder.layer.{L}.attention.{name}.weight"] = (rng.normal(size=(E, E)) / np.sqrt(E)).astype(np.float32)
    save_file(sd, str(path))
    (path.parent / "config.json").write_text(f'{{"num_attention_heads": {h}}}')


PROBE = """
import json, resource, sys
from mha_symbolic.rank.circuits import circuit_ranks
peaks = [0]
for r in circuit_ranks(sys.argv[1]):
    peaks.append(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024)
whole = None
if sys.argv[2] == "whole":
    from safetensors.numpy import load_file
    load_file(sys.argv[1])
print(json.dumps(peaks[1:] if sys.argv[2] == "layers" else resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024))
"""


def layer_by_layer_memory(path: Path) -> dict[str, object]:
    """Peak resident memory of a fresh process ranking every layer (read lazily), after each layer, and of a
    fresh process that loads the whole file: a flat first series is memory bounded by one layer."""
    import json
    import subprocess
    import sys

    def run(mode: str) -> object:
        out = subprocess.run([sys.executable, "-c", PROBE, str(path), mode], capture_output=True, text=True,
                             check=True)
        return json.loads(out.stdout)

    return {"layers": run("layers"), "whole": run("whole")}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--checkpoint", type=Path, default=None)
    args = parser.parse_args()
    from mha_symbolic.rank.certify import exact_dyadic, exact_rank, numerical_rank
    from mha_symbolic.rank.circuits import circuits
    from mha_symbolic.weights import load_weights

    with tempfile.TemporaryDirectory() as tmp:
        path = args.checkpoint or (CACHED if CACHED.is_file() else Path(tmp) / "model.safetensors")
        if not path.is_file():
            synthetic(path)
        what = "all-MiniLM-L6-v2" if path == CACHED else path.name
        t0 = time.perf_counter()
        layers = list(load_weights(path))
        t_load = time.perf_counter() - t0
        heads = [c for w in layers for c in circuits(w)]

        t0 = time.perf_counter()
        exact = [(c.QK.rank().rank, c.OV.rank().rank) for c in heads]
        t_exact = time.perf_counter() - t0

        t0 = time.perf_counter()
        floats = [(numerical_rank((c.QK.L @ c.QK.R).astype(np.float64), 1e-10).rank,
                   numerical_rank((c.OV.L @ c.OV.R).astype(np.float64), 1e-10).rank) for c in heads]
        t_svd = time.perf_counter() - t0
        dtype_default = [(numerical_rank(c.QK.L @ c.QK.R).rank, numerical_rank(c.OV.L @ c.OV.R).rank) for c in heads]

        t0 = time.perf_counter()
        dtype_tol = [(c.QK.numerical_rank().rank, c.OV.numerical_rank().rank) for c in heads]
        t_factored_svd = time.perf_counter() - t0

        memory = layer_by_layer_memory(path)

        c = heads[0]
        t0 = time.perf_counter()
        old = exact_rank(exact_dyadic(c.QK.L @ c.QK.R))
        t_old = time.perf_counter() - t0

    def spread(pairs: list[tuple[int, int]]) -> str:
        qk, ov = [p[0] for p in pairs], [p[1] for p in pairs]
        one = lambda v: str(v[0]) if min(v) == max(v) else f"{min(v)}..{max(v)}"  # noqa: E731
        return f"({one(qk)}, {one(ov)})"

    w = layers[0]
    print(f"checkpoint: {what}: {len(layers)} layers x {w.heads} heads of d_k = {w.d_k}, d_model = {w.d_model}, "
          f"{w.dtype} (read in {t_load:.2f} s)")
    print(f"{'route':58} {'time (s)':>9} {'ranks (QK, OV)':>18}")
    print(f"{'exact, factored (L^T L R R^T of the dyadic factors)':58} {t_exact:9.2f} {spread(exact):>18}")
    print(f"{'float SVD of each float32 product, tol 1e-10 (evidence)':58} {t_svd:9.2f} {spread(floats):>18}")
    print(f"{'float SVD of each float32 product, float32 tolerance':58} {'':9} {spread(dtype_default):>18}")
    print(f"{'float SVD from the exact factors (float64)':58} {t_factored_svd:9.2f} "
          f"{spread(dtype_tol):>18}")
    print(f"{'old: exact rank of the rounded product (one head)':58} {t_old:9.2f} {str(old):>18}")
    print(f"peak RSS after each layer, read one at a time (MiB): {memory['layers']}; the whole file loaded "
          f"at once: {memory['whole']} MiB")
    print(f"ratio exact / float SVD: {t_exact / t_svd:.2f}; exact per head: {1000 * t_exact / len(heads):.1f} ms; "
          f"target exact <= 60 s: {'met' if t_exact <= 60 else 'NOT met'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
