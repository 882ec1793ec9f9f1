"""The worst inputs of issue 13, each within its budget: time and peak memory of each, measured in one run.

Each case runs in a fresh Python process (so its peak memory is its own), through the public API or the CLI as
a user would call it, with the package's default budgets.  Targets: any single pathological document within
10 s and 1 GiB; a 2 MB document of 10^5 formulas within 60 s (pieces not reached in the document's time budget
are reported ``unchecked`` with that reason).  Peak memory is the larger of the case's process and its worker
processes (the checker's worker), as resident set size.

Run:  python benchmarks/bench_adversarial.py [--only NAME ...]
Exit status 1 when a case misses its target (a benchmark that fails loudly), else 0.

``--measure`` prints the measurements of the second reliability round instead, each in its own process:
  * CPU time per formula of a document of 10^3 and 10^4 formulas (10^5 with ``--large``), in one paragraph and in
    separate paragraphs, checked with no time budget: flat per formula when reading is linear;
  * peak memory of the masked forward pass (a key-padding mask) against the plain path on the same input;
  * CPU time of one 768-wide layer's exact ranks (``ranks --weights``) on one BLAS thread and on two.
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import time

GIB = 1 << 30

SETUP = "from mha_symbolic import check_text, MultiHeadAttention; from mha_symbolic.cli import main\n"

#: name -> (code run in the case's process, seconds allowed, what it shows)
CASES: dict[str, tuple[str, float, str]] = {
    "unclosed-display-brackets": ("r = check_text('\\\\[' * 50000)", 10, "50,000 unclosed \\[ (was 35 s)"),
    "unclosed-html-comment": ("r = check_text('<!--' + 'a b c d ' * 50000)", 10, "400 KB after <!-- (was 256 s)"),
    "unclosed-dollar-list": ("r = check_text('$x = [' + ', '.join(['1'] * 50000))", 10,
                             "$x = [1, 1, ..., 1 never closed"),
    "exponent-tower": ("r = check_text('$$10^{10^{10}} = 5$$')", 10, "refused before evaluation"),
    "huge-factorial": ("r = check_text('$$(10^{9})! = 3$$')", 10, "refused before evaluation"),
    "tower-through-reader": ("from mha_symbolic.parse import read_expression\n"
                             "try:\n    read_expression('10^{10^{10}}')\nexcept Exception as e:\n    r = e", 10,
                             "read_expression / equivalent refuse it"),
    "nested-parentheses": ("r = check_text('$$' + '(' * 10000 + 'x' + ')' * 10000 + ' = 1$$')", 10,
                           "10,000 levels (was 79 s, 832 MB)"),
    "nested-braces-at-limit": ("r = check_text('$$' + '{' * 12 + 'x' + '}' * 12 + ' = 1$$')", 10,
                               "12 levels: the deepest the reader takes on"),
    "derive-decimals-1e9": ("try:\n    main(['derive', '--decimals', '1000000000'])\nexcept SystemExit as e:\n"
                            "    r = e.code", 10, "an argparse error (was 2.9 GB)"),
    "evaluate-1000x512": ("import numpy as np\nfrom mha_symbolic import SizeLimitError\ntry:\n"
                          "    MultiHeadAttention(n=None, d_model=None, h=8).evaluate(X=np.ones((1000, 512)))\n"
                          "except SizeLimitError as e:\n    r = e", 10, "refused before converting (was 9 s)"),
    "sweep-workers-100000": ("try:\n    main(['ranks', '--sweep', '--workers', '100000'])\nexcept SystemExit as e:\n"
                             "    r = e.code", 10, "an argparse error (forked without a cap)"),
    "slow-formula": ("r = check_text('$$' + ' + '.join(f'\\\\frac{{{k}}}{{{k + 1}}}' for k in range(1, 2000)) "
                     "+ ' = 1$$')", 10, "one piece over its 5 s limit"),
    "document-2MB-1e5-formulas": ("doc = '\\n'.join(f'The value $$x_{{{k % 97}}} = {k}.{k % 7}$$ and "
                                  "$h = {k % 5 + 1}$' for k in range(50000))\nassert len(doc) > 2_000_000, len(doc)\n"
                                  "r = check_text(doc)", 60, "10^5 formulas, 2 MB (was ~28 min)"),
}


def run_case(name: str) -> None:
    """In the case's own process: run it and print seconds, peak memory and what came back, as JSON."""
    code, _, _ = CASES[name]
    scope: dict[str, object] = {}
    exec(SETUP, scope)  # noqa: S102 - the benchmark's own fixed code, not user input
    start = time.perf_counter()
    exec(code, scope)  # noqa: S102
    seconds = time.perf_counter() - start
    r = scope.get("r")
    if hasattr(r, "findings"):
        statuses: dict[str, int] = {}
        for f in r.findings:  # type: ignore[attr-defined]
            statuses[f.status] = statuses.get(f.status, 0) + 1
        first = r.findings[0].message[:70] if r.findings else "no findings"  # type: ignore[attr-defined]
        outcome = f"{len(r.findings)} findings {statuses}; first: {first}"  # type: ignore[attr-defined]
    else:
        outcome = f"{type(r).__name__}: {str(r)[:90]}"
    from mha_symbolic.budget import stop_workers

    stop_workers()  # reaped, the checker's worker process counts in RUSAGE_CHILDREN
    peak = max(resource.getrusage(who).ru_maxrss for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN))
    print(json.dumps({"seconds": seconds, "peak_bytes": peak * 1024, "outcome": outcome}))


def _document(formulas: int, paragraphs: bool) -> str:
    rows = [f"Step {k}: we have ${2 + k % 89} \\times {3 + k % 71} = {(2 + k % 89) * (3 + k % 71)}$ and"
            for k in range(formulas)]
    return ("\n\n" if paragraphs else "\n").join(rows) + "\n"


def _code_block(assignments: int) -> str:
    """A code block of ``assignments`` lines of scalar assignments, then a one-head example with an error in its
    last line (Q's entry (2, 2) is 4)."""
    lines = ["One head: $n = 2$ tokens, $d_{model} = 2$, $h = 1$.", "", "```python", "import numpy as np"]
    lines += [f"x{k} = {k} * 2" if k % 2 else f"a{k} = {k} + n" for k in range(assignments)]
    lines += ["X = [[1, 0], [0, 1]]", "W_Q = [[1, 2], [3, 4]]", "Q = [[1, 2], [3, 5]]", "```"]
    return "\n".join(lines) + "\n"


#: name -> code run in its own process; it leaves a dict of figures in ``r``
MEASURES: dict[str, str] = {
    **{f"formulas-{n}-{kind}": (
        "import time\nfrom benchmarks.bench_adversarial import _document\n"
        f"doc = _document({n}, {kind == 'paragraphs'})\nc = time.process_time()\n"
        "rep = check_text(doc, isolate=False, timeout=None)\n"
        f"r = {{'ms per formula': 1000 * (time.process_time() - c) / {n}, 'correct': rep.counts()['correct']}}")
       for n in (1000, 10000, 100000) for kind in ("paragraph", "paragraphs")},
    **{f"code-lines-{n}": (
        "import time\nfrom benchmarks.bench_adversarial import _code_block\n"
        f"doc = _code_block({n})\nc = time.process_time()\n"
        "rep = check_text(doc, isolate=False)\n"
        f"r = {{'ms per line': 1000 * (time.process_time() - c) / {n}, 'wrong': rep.counts()['wrong'], "
        "'stopped': bool(rep.stopped)}") for n in (1000, 10000)},
    **{f"masked-pass-{kind}": (
        "import numpy as np\nfrom mha_symbolic.pytorch import from_pytorch\nrng = np.random.default_rng(0)\n"
        "E = 64\nm = from_pytorch(rng.normal(size=(3 * E, E)), rng.normal(size=3 * E), rng.normal(size=(E, E)), "
        "rng.normal(size=E), num_heads=4)\nX = rng.normal(size=(4, 2048, E))\n"
        + ("out = m(X)\n" if kind == "plain" else "out = m(X, key_padding_mask=np.zeros((4, 2048), bool))\n")
        + "r = {'input MiB': X.nbytes / 2**20}") for kind in ("plain", "masked")},
    **{f"layer-ranks-{threads}-blas": (
        "import time, contextlib\nimport numpy as np\nfrom mha_symbolic.weights import from_state_dict\n"
        "from mha_symbolic.rank import circuits\nrng = np.random.default_rng(0)\n"
        "sd = {f'encoder.layer.0.attention.{m}.weight': rng.normal(size=(768, 768)).astype(np.float32) "
        "for m in ('self.query', 'self.key', 'self.value', 'output.dense')}\n"
        "[w] = from_state_dict(sd, num_heads=12)\n"
        + ("import threadpoolctl\nthreadpoolctl.threadpool_limits = lambda **k: contextlib.nullcontext()\n"
           if threads == "two" else "")
        + "c, t = time.process_time(), time.perf_counter()\nranks = circuits.layer_ranks(w)\n"
        "r = {'CPU s': time.process_time() - c, 'wall s': time.perf_counter() - t}") for threads in ("one", "two")},
}


def run_measure(name: str) -> None:
    scope: dict[str, object] = {}
    sys.path.insert(0, str(__import__("pathlib").Path(__file__).resolve().parents[1]))
    exec(SETUP, scope)  # noqa: S102 - the benchmark's own fixed code, not user input
    exec(MEASURES[name], scope)  # noqa: S102
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    print(json.dumps({**scope["r"], "peak MiB": peak / 2**20}))  # type: ignore[dict-item]


def measure(large: bool) -> int:
    print(f"{'measure':30} figures")
    for name in MEASURES:
        if "100000" in name and not large:
            continue
        r = subprocess.run([sys.executable, __file__, "--measure-one", name], capture_output=True, text=True,
                           timeout=3600)
        if r.returncode != 0 or not r.stdout.strip():
            print(f"{name:30} failed: {(r.stderr or r.stdout).strip().splitlines()[-1:]}")
            continue
        data = json.loads(r.stdout.strip().splitlines()[-1])
        print(f"{name:30} " + ", ".join(f"{k} {v:.3g}" if isinstance(v, float) else f"{k} {v}"
                                         for k, v in data.items()))
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", nargs="+", choices=sorted(CASES), help="run only these cases")
    parser.add_argument("--case", choices=sorted(CASES), help=argparse.SUPPRESS)  # internal: one case, here
    parser.add_argument("--measure", action="store_true", help="print the scaling, memory and BLAS measurements")
    parser.add_argument("--large", action="store_true", help="with --measure: also 10^5 formulas (slow)")
    parser.add_argument("--measure-one", choices=sorted(MEASURES), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.case:
        run_case(args.case)
        return 0
    if args.measure_one:
        run_measure(args.measure_one)
        return 0
    if args.measure:
        return measure(args.large)
    failed = 0
    print(f"{'case':28} {'seconds':>8} {'target':>7} {'peak MiB':>9}  outcome")
    for name in args.only or CASES:
        _, target, what = CASES[name]
        r = subprocess.run([sys.executable, __file__, "--case", name], capture_output=True, text=True, timeout=600)
        if r.returncode != 0 or not r.stdout.strip():
            print(f"{name:28} failed: {(r.stderr or r.stdout).strip().splitlines()[-1:]}")
            failed += 1
            continue
        data = json.loads(r.stdout.strip().splitlines()[-1])
        ok = data["seconds"] <= target and data["peak_bytes"] <= GIB
        failed += not ok
        print(f"{name:28} {data['seconds']:8.2f} {target:7.0f} {data['peak_bytes'] / 2**20:9.0f}  "
              f"{'' if ok else 'OVER BUDGET: '}{what}; {data['outcome']}")
    print(f"\n{len(args.only or CASES) - failed} of {len(args.only or CASES)} within budget "
          f"(time target each; memory 1024 MiB)")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
