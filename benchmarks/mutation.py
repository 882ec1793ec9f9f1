"""Mutation testing of the mathematical modules with mutmut (a habit, not part of CI: a full run takes hours).

Runs ``mutmut run`` in the repository root (configuration: ``[tool.mutmut]`` in pyproject.toml; mutants and
results are kept in ``mutants/``), then prints, for every module asked for: killed / survived / timeout /
suspicious / no-tests counts and the score (killed / total), then every mutant that was not killed with its
mutmut name, ``file:line`` and the changed lines of its diff (``mutmut show NAME`` prints the whole diff), and
the wall time.

Run:
  python benchmarks/mutation.py --modules softmax.py scaling.py rank/certify.py
  python benchmarks/mutation.py --modules rank/ proofs/ --max-children 2
  python benchmarks/mutation.py                  # every module in [tool.mutmut] only_mutate (~6 h on 2 cores)
  python benchmarks/mutation.py --report-only    # print the stored results of the last runs, run nothing
  python benchmarks/mutation.py --modules softmax.py --survivors-only   # re-test only last run's survivors
  python benchmarks/mutation.py --modules proofs/ statements/ --sample 200 --seed 1   # a uniform sample

``--sample N`` tests N mutants drawn uniformly (with ``--seed``) from the named modules' mutants and reports the
score of the sample with a 95 % interval (Wilson): an estimate of the full score in a bounded time (a full run of
every module is ~7,600 mutants, hours on 2 cores).  The mutants must have been generated once (any earlier run
in this checkout); otherwise a first run generates them and tests the sample.

Naming modules re-tests their mutants even when mutmut has a stored result (so new tests count); a run
without --modules re-tests only the functions whose source changed since the last run.  After adding tests,
``--survivors-only`` re-tests just the mutants that survived before.  ``--fresh`` deletes mutants/ first.
Exit status 0 whatever the score (it is a benchmark), also with a one-line message when mutmut is not installed;
1 only when ``mutmut run`` itself fails (for example the unmutated tests fail in mutants/), with the end of its log.
"""

from __future__ import annotations

import argparse
import ast
import fnmatch
import json
import math
import os
import random
import shutil
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = "mha_symbolic"

#: mutmut's exit-code meanings (mutmut/stats.py), for when its module cannot be imported.
STATUS_BY_EXIT_CODE = {1: "killed", 3: "killed", 0: "survived", 5: "no tests", 2: "check was interrupted by user",
                       None: "not checked", 33: "no tests", 34: "skipped", 35: "suspicious", 36: "timeout",
                       37: "caught by type check", -24: "timeout", 24: "timeout", 152: "timeout", 255: "timeout",
                       -11: "segfault", -9: "segfault"}
COLUMNS = ["killed", "survived", "timeout", "suspicious", "no tests", "segfault", "not checked"]
NOT_KILLED = ("survived", "no tests", "suspicious", "segfault", "check was interrupted by user")


def status_of(exit_code: int | None) -> str:
    try:
        from mutmut.stats import status_by_exit_code
        return str(status_by_exit_code[exit_code])
    except ImportError:
        return STATUS_BY_EXIT_CODE.get(exit_code, "suspicious")


def configured_patterns() -> list[str]:
    """The ``only_mutate`` globs of [tool.mutmut] in pyproject.toml."""
    text = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    try:
        import tomllib
        data = tomllib.loads(text)
    except ImportError:  # Python 3.10: mutmut depends on `toml` there
        import toml
        data = toml.loads(text)
    return list(data.get("tool", {}).get("mutmut", {}).get("only_mutate", []))


def configured_files() -> list[Path]:
    patterns = configured_patterns()
    files = sorted(p.relative_to(ROOT) for p in (ROOT / PACKAGE).rglob("*.py"))
    return [f for f in files if any(fnmatch.fnmatch(f.as_posix(), pat) for pat in patterns)]


def resolve_modules(specs: list[str]) -> list[Path]:
    """``softmax.py``, ``softmax``, ``rank/``, ``rank/certify.py``, ``mha_symbolic.rank.certify`` -> source files."""
    configured = configured_files()
    chosen: list[Path] = []
    for spec in specs:
        s = spec.strip().replace("\\", "/").removeprefix(f"{PACKAGE}/").removeprefix(f"{PACKAGE}.")
        if "/" not in s and not s.endswith(".py"):
            s = s.replace(".", "/")
        target = ROOT / PACKAGE / s
        if target.is_dir():
            found = [f for f in configured if (ROOT / f).is_relative_to(target)]
        elif target.with_suffix(".py").is_file():
            rel = target.with_suffix(".py").relative_to(ROOT)
            found = [rel] if rel in configured else []
        else:
            print(f"note: no module {spec!r} under {PACKAGE}/; skipped")
            continue
        if not found:
            print(f"note: {spec!r} is not in [tool.mutmut] only_mutate; skipped")
        chosen += [f for f in found if f not in chosen]
    return chosen


def dotted(path: Path) -> str:
    parts = list(path.with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def mutant_glob(path: Path) -> str:
    # mutmut names a mutant <module>.x_<function>__mutmut_<n> or <module>.xǁ<Class>ǁ<method>__mutmut_<n>
    return f"{dotted(path)}.x*"


def load_results(path: Path) -> dict:
    meta = ROOT / "mutants" / f"{path.as_posix()}.meta"
    if not meta.is_file():
        return {}
    return json.loads(meta.read_text(encoding="utf-8"))


def has_mutants(path: Path) -> bool:
    """Whether the file has functions to mutate (mutmut 3 only mutates code inside functions)."""
    tree = ast.parse((ROOT / path).read_text(encoding="utf-8"))
    return any(isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) for n in ast.walk(tree))


def diff_of(name: str, path: Path) -> str:
    try:
        from mutmut.mutation.diff_apply import get_diff_for_mutant
        return str(get_diff_for_mutant(name, path=path))
    except Exception:  # an older/newer mutmut: ask its CLI
        r = subprocess.run(["mutmut", "show", name], cwd=ROOT, capture_output=True, text=True)
        return r.stdout


def mutated_line(name: str, diff: list[str], source: str) -> int | None:
    """The source line of the first line the mutant changes.

    mutmut diffs the function on its own, so the hunk's line numbers count from the function's first line
    (its first decorator); that is mapped back onto the file, checking that the text matches.
    """
    relative = pos = None
    for d in diff:
        if d.startswith("@@"):
            pos = int(d.split()[1].split(",")[0].lstrip("-"))
        elif pos is not None and d.startswith("-"):
            relative = pos
            break
        elif pos is not None and d.startswith(" "):
            pos += 1
    removed = next((d[1:].strip() for d in diff if d.startswith("-") and not d.startswith("---")), None)
    if relative is None or removed is None:
        return None
    mangled = name.partition("__mutmut_")[0].rpartition(".")[2]
    cls, func = (mangled.split("ǁ")[1:3] if "ǁ" in mangled else (None, mangled[2:]))
    tree = ast.parse(source)
    scopes = [n for n in ast.walk(tree) if isinstance(n, ast.ClassDef) and n.name == cls] if cls else [tree]
    lines = source.splitlines()
    for scope in scopes:
        for node in scope.body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == func:
                first = min([d.lineno for d in node.decorator_list] + [node.lineno])
                guess = first + relative - 1
                end = node.end_lineno or node.lineno
                candidates = [i for i in range(first, end + 1) if lines[i - 1].strip() == removed]
                if candidates:  # the guess, or the nearest identical line (comments above the function shift it)
                    return min(candidates, key=lambda i: abs(i - guess))
    return None


def changed_lines(name: str, path: Path, source: str) -> list[str]:
    """``file:line`` and the ``- old`` / ``+ new`` lines of the mutant's diff."""
    diff = diff_of(name, path).splitlines()
    removed = [d[1:] for d in diff if d.startswith("-") and not d.startswith("---")]
    added = [d[1:] for d in diff if d.startswith("+") and not d.startswith("+++")]
    line = mutated_line(name, diff, source)
    out = [f"{path.as_posix()}" + (f":{line}" if line else "")]
    out += [f"      - {r.strip()}" for r in removed[:3]] + [f"      + {a.strip()}" for a in added[:3]]
    if len(removed) > 3 or len(added) > 3:
        out.append("      ...")
    return out


def run_mutmut(globs: list[str], max_children: int, log: Path) -> int:
    cmd = ["mutmut", "run", "--max-children", str(max_children), *globs]
    shown = [*cmd[:4], *(f'"{g}"' for g in globs[:8])] + ([f"... ({len(globs)} names)"] if len(globs) > 8 else [])
    print("$", " ".join(shown), flush=True)
    log.parent.mkdir(exist_ok=True)
    # tests needing ../shared/seeds (absent from mutants/) skip with their reason instead of failing the clean run
    # OMP_NUM_THREADS=1: torch's OpenMP pool deadlocks in mutmut's forked workers (scaled_dot_product_attention in
    # the variant tests), which turned mutants into false timeouts
    env = dict(os.environ, PYTHONUNBUFFERED="1", MHA_ALLOW_MISSING_SEEDS="1", OMP_NUM_THREADS="1")
    with open(log, "w", encoding="utf-8") as f:
        r = subprocess.run(cmd, cwd=ROOT, stdout=f, stderr=subprocess.STDOUT, env=env)
    return r.returncode


def log_lines(log: Path) -> list[str]:
    """The log without mutmut's progress-spinner lines."""
    text = log.read_text(encoding="utf-8", errors="replace").replace("\r", "\n") if log.is_file() else ""
    return [line for line in text.splitlines() if line.strip() and not "\u2800" <= line[0] <= "\u28ff"]


def wilson(k: int, n: int, z: float = 1.96) -> tuple[float, float]:
    """The Wilson score interval of k successes in n trials."""
    p = k / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return centre - half, centre + half


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--modules", nargs="+", metavar="MODULE",
                        help="files or folders under mha_symbolic/ (softmax.py, rank/, rank/certify.py); "
                             "default: every module of [tool.mutmut] only_mutate")
    parser.add_argument("--max-children", type=int, default=os.cpu_count() or 2,
                        help="parallel mutant workers (default: CPU count)")
    parser.add_argument("--report-only", action="store_true", help="print the stored results; run nothing")
    parser.add_argument("--survivors-only", action="store_true",
                        help="re-test only the mutants that were not killed in the stored results")
    parser.add_argument("--fresh", action="store_true", help="delete mutants/ first (new stats, all mutants)")
    parser.add_argument("--sample", type=int, default=None, metavar="N",
                        help="test N mutants drawn uniformly from the modules; report the sample's score")
    parser.add_argument("--seed", type=int, default=0, help="random seed of --sample (default 0)")
    parser.add_argument("--no-diffs", action="store_true", help="list surviving mutants without their diffs")
    args = parser.parse_args(argv)

    if shutil.which("mutmut") is None:
        print("mutmut is not installed: pip install -e '.[test]' (or pip install 'mutmut>=3.2')", file=sys.stderr)
        return 0

    os.chdir(ROOT)  # mutmut reads pyproject.toml and mutants/ relative to the working directory
    files = resolve_modules(args.modules) if args.modules else configured_files()
    files = [f for f in files if has_mutants(f)]
    if not files:
        print("error: no configured module with functions to mutate matches --modules", file=sys.stderr)
        return 1

    start = time.perf_counter()
    if not args.report_only:
        if args.fresh and (ROOT / "mutants").exists():
            shutil.rmtree(ROOT / "mutants")
        if args.survivors_only:
            globs = [name for f in files for name, code in load_results(f).get("exit_code_by_key", {}).items()
                     if status_of(code) in NOT_KILLED]
            if not globs:
                print("no stored survivors in these modules; nothing to re-test")
        elif args.sample is not None:
            names = sorted(name for f in files for name in load_results(f).get("exit_code_by_key", {}))
            if not names:  # not generated yet: generate with a name that matches no mutant
                run_mutmut(["mha_symbolic.x_no_such_function__mutmut_0"], args.max_children,
                           ROOT / "mutants" / "mutation-generate.log")
                names = sorted(name for f in files for name in load_results(f).get("exit_code_by_key", {}))
            sample = sorted(random.Random(args.seed).sample(names, min(args.sample, len(names))))
            (ROOT / "mutants").mkdir(exist_ok=True)
            (ROOT / "mutants" / "mutation-sample.json").write_text(json.dumps(sample), encoding="utf-8")
            print(f"sample of {len(sample)} of {len(names)} mutants (seed {args.seed})")
            globs = sample
        else:
            globs = [mutant_glob(f) for f in files] if args.modules else []
        if globs or not args.survivors_only:
            log = ROOT / "mutants" / "mutation-run.log"
            code = run_mutmut(globs, args.max_children, log)
            lines = log_lines(log)
            if code != 0:
                print(f"error: mutmut run exited with {code}; the end of {log.relative_to(ROOT)}:", file=sys.stderr)
                print("\n".join(lines[-15:]), file=sys.stderr)
                return 1
            print("\n".join(line.strip() for line in lines if "mutations/second" in line or "Warning" in line))
    elapsed = time.perf_counter() - start

    totals: Counter[str] = Counter()
    survivors: list[tuple[Path, str, str]] = []
    rows = []
    mutant_seconds = 0.0
    sample_file = ROOT / "mutants" / "mutation-sample.json"
    only = set(json.loads(sample_file.read_text(encoding="utf-8"))) if args.sample is not None and \
        sample_file.is_file() else None
    for f in files:
        data = load_results(f)
        if only is not None:
            data = {k: {n: v for n, v in data.get(k, {}).items() if n in only}
                    for k in ("exit_code_by_key", "durations_by_key")}
        counts = Counter(status_of(c) for c in data.get("exit_code_by_key", {}).values())
        seconds = sum(data.get("durations_by_key", {}).values())
        mutant_seconds += seconds
        totals.update(counts)
        rows.append((f, counts, seconds))
        survivors += [(f, name, status_of(c)) for name, c in data.get("exit_code_by_key", {}).items()
                      if status_of(c) in NOT_KILLED]

    def score(c: Counter[str]) -> str:
        total = sum(v for k, v in c.items() if k != "not checked")
        if not total:
            return "no results"
        text = f"{c['killed']}/{total} = {100 * c['killed'] / total:5.1f}%"
        if c["timeout"]:  # mutmut's own score counts a timeout (the tests hung on the mutant) as detected
            text += f" ({100 * (c['killed'] + c['timeout']) / total:.1f}% with timeouts)"
        return text

    width = max(len(f.as_posix()) for f in files)
    widths = [max(len(c), 5) for c in COLUMNS]

    def row(name: str, c: Counter[str], seconds: float) -> str:
        cells = "  ".join(f"{c[k]:{w}d}" for k, w in zip(COLUMNS, widths, strict=True))
        return f"{name:{width}}  {cells}  {seconds:8.0f}  {score(c)}"

    print()
    print(f"{'module':{width}}  " + "  ".join(f"{c:>{w}}" for c, w in zip(COLUMNS, widths, strict=True))
          + "  mutant-s  score (killed/total)")
    for f, c, seconds in rows:
        print(row(f.as_posix(), c, seconds))
    print(row("all", totals, mutant_seconds))
    if only is not None:
        tested = sum(v for k, v in totals.items() if k != "not checked")
        if tested:
            low, high = wilson(totals["killed"], tested)
            print(f"sample estimate: {100 * totals['killed'] / tested:.1f}% killed, 95% interval "
                  f"{100 * low:.1f}%-{100 * high:.1f}% (Wilson, {tested} mutants tested)")
    other = sorted(set(totals) - set(COLUMNS) - {"killed"})
    if other:
        print("also: " + ", ".join(f"{k}: {totals[k]}" for k in other))

    print(f"\nnot killed ({len(survivors)}; `mutmut show NAME` prints the whole diff):")
    for f in files:
        mine = [(name, status) for g, name, status in survivors if g == f]
        if not mine:
            continue
        print(f"\n{f.as_posix()} ({len(mine)})")
        source = (ROOT / f).read_text(encoding="utf-8")
        for name, status in sorted(mine, key=lambda x: (x[0].partition("__mutmut_")[0],
                                                         int(x[0].rpartition("_")[2]))):
            tag = "" if status == "survived" else f"  [{status}]"
            if args.no_diffs:
                print(f"  {name}{tag}")
                continue
            where, *change = changed_lines(name, f, source)
            print(f"  {name}{tag}  ({where})")
            print("\n".join(change))

    what = "report" if args.report_only else "mutmut run and report"
    print(f"\nwall time ({what}): {elapsed:.0f} s; summed mutant test time {mutant_seconds:.0f} s "
          f"with {args.max_children} worker(s)")
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except BrokenPipeError:  # piped into head & co
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        sys.exit(0)
