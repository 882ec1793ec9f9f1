"""Score the document checker against the answer keys of tests/corpus/ (measured in one run).

For every keyed statement the checker's verdict at the same place (line; for notebooks cell, and output or
source) is compared with the key.  Several findings on one line are combined by severity: wrong or
inconsistent, then assumed, then correct, then given, then unchecked (no finding counts as unchecked).

Printed, per kind (number, shape, rank, statistic, formula, setting) and in total:

* planted errors: how many the checker flags (any of wrong / inconsistent / assumed) and how many with the
  key's exact status ("caught");
* false alarms: a statement keyed correct or given that the checker calls wrong / inconsistent / assumed,
  plus any wrong / inconsistent finding on a line the key does not list (the worst failure: target 0);
* compared: of the statements keyed correct, how many the checker actually compared (correct or a flag),
  not left given/unchecked (target >= 80 % for number, shape, rank, statistic);
* precision and recall of "flagged" per kind.

Each corpus also gets one summary line: false alarms per 100 correct statements (wrong or inconsistent, and
separately assumed), the precision of wrong/inconsistent, the planted errors caught, and the share compared.
The output holds no timing unless ``--time`` is given, so two runs print the same (verdicts never depend on
the clock).

Run:  python benchmarks/score_corpus.py [--verbose] [--time] [--corpus tests/corpus --corpus tests/corpus_holdout]
Exit status 0 (it is a benchmark); per-document misses are listed with --verbose.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from mha_symbolic import check_file  # noqa: E402

KINDS = ("number", "shape", "rank", "statistic", "formula", "setting")
FLAGS = ("wrong", "inconsistent", "assumed")
SEVERITY = {"wrong": 5, "inconsistent": 5, "assumed": 4, "correct": 3, "given": 2, "unchecked": 1}


def _place(entry: Any) -> tuple[Any, bool, int]:
    if isinstance(entry, dict):
        return entry.get("cell"), bool(entry.get("output", False)), int(entry["line"])
    return getattr(entry, "cell", None), bool(getattr(entry, "output", False)), int(entry.line)


def score_document(doc: Path, key: dict[str, Any]) -> dict[str, Any]:
    started = time.perf_counter()
    report = check_file(str(doc))
    seconds = time.perf_counter() - started
    verdicts: dict[tuple[Any, bool, int], str] = {}
    for f in report.findings:
        place = _place(f)
        if SEVERITY.get(f.status, 0) > SEVERITY.get(verdicts.get(place, ""), 0):
            verdicts[place] = f.status
    rows = []
    keyed = set()
    for s in key["statements"]:
        place = _place(s)
        keyed.add(place)
        rows.append({"place": place, "kind": s["kind"], "expected": s["status"],
                     "got": verdicts.get(place, "unchecked"), "text": s.get("text", "")})
    stray = [(place, status) for place, status in verdicts.items()
             if place not in keyed and status in ("wrong", "inconsistent")]
    return {"rows": rows, "stray": stray, "seconds": seconds}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--corpus", action="append", help="a folder of documents and *.key.json (repeatable; "
                        "default tests/corpus and tests/corpus_holdout)")
    parser.add_argument("--verbose", action="store_true", help="list every miss and false alarm")
    parser.add_argument("--time", action="store_true", help="print the time each corpus took")
    args = parser.parse_args(argv)
    for corpus in args.corpus or [str(ROOT / "tests" / "corpus"), str(ROOT / "tests" / "corpus_holdout")]:
        print(f"== {Path(corpus).name}")
        _score(Path(corpus), args.verbose, args.time)
    return 0


def _score(corpus: Path, verbose: bool, timed: bool) -> None:
    per_kind: dict[str, Counter[str]] = defaultdict(Counter)
    misses: list[str] = []
    slowest = (0.0, "")
    total_seconds = 0.0
    for key_path in sorted(corpus.glob("*.key.json")):
        key = json.loads(key_path.read_text(encoding="utf-8"))
        doc = corpus / key["document"]
        result = score_document(doc, key)
        total_seconds += result["seconds"]
        slowest = max(slowest, (result["seconds"], doc.name))
        for r in result["rows"]:
            c = per_kind[r["kind"]]
            exp, got = r["expected"], r["got"]
            where = f"{doc.name}:{r['place']}"
            if exp in FLAGS:
                c["planted"] += 1
                c["flagged"] += got in FLAGS
                c["caught"] += got == exp
                if got not in FLAGS:
                    misses.append(f"missed  {where} {exp}->{got}: {r['text'][:70]}")
            else:
                c[exp] += 1
                if got in FLAGS:
                    c["false alarm"] += 1
                    c["alarm " + got] += 1
                    misses.append(f"ALARM   {where} {exp}->{got}: {r['text'][:70]}")
                if exp == "correct":
                    c["compared"] += got == "correct"
            if got in ("wrong", "inconsistent"):
                c["said wrong"] += 1
                c["rightly wrong"] += exp in FLAGS
        for place, status in result["stray"]:
            per_kind["(unkeyed)"]["false alarm"] += 1
            per_kind["(unkeyed)"]["alarm " + status] += 1
            per_kind["(unkeyed)"]["said wrong"] += 1
            misses.append(f"ALARM   {doc.name}:{place} unkeyed line -> {status}")
    print(f"{'kind':10} {'planted':>7} {'flagged':>7} {'caught':>6} {'false alarms':>12} {'correct':>7} "
          f"{'compared':>8} {'precision':>9} {'recall':>6}")
    total: Counter[str] = Counter()
    for kind in (*KINDS, "(unkeyed)"):
        c = per_kind.get(kind, Counter())
        total.update(c)
        print(_row(kind, c))
    print(_row("all", total))
    measured = sum(per_kind[k]["correct"] for k in ("number", "shape", "rank", "statistic"))
    compared = sum(per_kind[k]["compared"] for k in ("number", "shape", "rank", "statistic"))
    print(f"\nfalse alarms: {total['false alarm']} (target 0); planted errors caught: "
          f"{_pct(total['caught'], total['planted'])} (flagged {_pct(total['flagged'], total['planted'])}; "
          f"target >= 95 %); number/shape/rank/statistic statements compared: {_pct(compared, measured)} "
          f"(target >= 80 %)")
    wrong = total["alarm wrong"] + total["alarm inconsistent"]
    right = total["correct"] + total["given"]
    print(f"summary: false alarms per 100 correct statements: {_per100(wrong, right)} wrong/inconsistent, "
          f"{_per100(total['alarm assumed'], right)} assumed; precision of wrong/inconsistent: "
          f"{_pct(total['rightly wrong'], total['said wrong'])}; planted caught (exact status) "
          f"{_pct(total['caught'], total['planted'])}; compared {_pct(compared, measured)}")
    if timed:
        print(f"time: {total_seconds:.1f} s for the corpus; slowest document {slowest[1]} {slowest[0]:.1f} s")
    if verbose:
        print("\n" + "\n".join(misses))


def _per100(a: int, b: int) -> str:
    return f"{100 * a / b:.1f}" if b else "-"


def _pct(a: int, b: int) -> str:
    return f"{a}/{b} = {100 * a / b:.0f} %" if b else "0/0"


def _row(kind: str, c: Counter[str]) -> str:
    tp, fp = c["flagged"], c["false alarm"]
    precision = f"{tp / (tp + fp):.2f}" if tp + fp else "-"
    recall = f"{tp / c['planted']:.2f}" if c["planted"] else "-"
    return (f"{kind:10} {c['planted']:>7} {c['flagged']:>7} {c['caught']:>6} {fp:>12} {c['correct']:>7} "
            f"{c['compared']:>8} {precision:>9} {recall:>6}")


if __name__ == "__main__":
    sys.exit(main())
