"""Benchmark: how fast the package starts, as ratios measured in one run.

Each figure is the median of REPEATS fresh interpreter processes (so nothing is cached in-process):
  import mha_symbolic                               / import sympy   (target <= 1.2)
  from mha_symbolic import MultiHeadAttention        / import sympy   (the first model: SymPy itself is imported)
  mha-symbolic --help                                (target <= 0.3 s; imports no SymPy)
  mha-symbolic check on a one-paragraph document     (target <= 1 s on a quiet machine; the parser's prediction
                                                      cache warm, as after any earlier check; and the very first
                                                      check, with no cache, for comparison)
  python -c pass                                     (the interpreter's own start, for scale)

Run: python benchmarks/bench_startup.py [--repeats 7]
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

PARAGRAPH = ("With $n = 2$ tokens, $d_{model} = 4$ and $h = 2$ heads, each head has width\n"
             "$d_k = d_{model} / h = 2$, and the scores $S_1 = Q_1 K_1^T$ are $2 \\times 2$.\n")


CPU: dict[str, float] = {}  # the median CPU seconds (user + system) of the last command measured, by its name


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def wall(argv: list[str], repeats: int, env: dict[str, str] | None = None, name: str = "") -> float:
    """The median wall time of ``repeats`` runs; their median CPU time is kept in ``CPU[name]`` (a shared VM's
    stolen time shows as wall time the process never used)."""
    times, cpu = [], []
    for _ in range(repeats):
        t, c = time.perf_counter(), _children_cpu()
        subprocess.run(argv, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
        times.append(time.perf_counter() - t)
        cpu.append(_children_cpu() - c)
    CPU[name] = statistics.median(cpu)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=7)
    repeats = parser.parse_args().repeats
    py = sys.executable
    base = wall([py, "-c", "pass"], repeats)
    sympy = wall([py, "-c", "import sympy"], repeats)
    package = wall([py, "-c", "import mha_symbolic"], repeats)
    model = wall([py, "-c", "from mha_symbolic import MultiHeadAttention; MultiHeadAttention()"], repeats)
    cli = [py, "-m", "mha_symbolic.cli"]
    helped = wall([*cli, "--help"], repeats)
    with tempfile.TemporaryDirectory() as tmp:
        doc = Path(tmp) / "paragraph.md"
        doc.write_text(PARAGRAPH, encoding="utf-8")
        cold = {**os.environ, "MHA_CACHE_DIR": "off"}
        warm = {**os.environ, "MHA_CACHE_DIR": str(Path(tmp) / "cache")}
        first = wall([*cli, "check", str(doc)], repeats, cold, "first")
        wall([*cli, "check", str(doc)], 1, warm)  # fills the prediction cache, as any earlier check would
        checked = wall([*cli, "check", str(doc)], repeats, warm, "check")
    print(f"python -c pass                                   {base:6.3f} s")
    print(f"import sympy                                     {sympy:6.3f} s")
    print(f"import mha_symbolic                              {package:6.3f} s   ratio to sympy {package / sympy:5.2f}"
          f"  (target <= 1.2)")
    print(f"from mha_symbolic import MultiHeadAttention; M() {model:6.3f} s   ratio to sympy {model / sympy:5.2f}")
    print(f"mha-symbolic --help                              {helped:6.3f} s   (target <= 0.3 s)")
    print(f"mha-symbolic check, one paragraph                {checked:6.3f} s   (target <= 1 s)   "
          f"CPU {CPU['check']:.3f} s")
    print(f"  the same with no prediction cache (a first run)  {first:6.3f} s                     "
          f"CPU {CPU['first']:.3f} s")


if __name__ == "__main__":
    main()
