"""A verdict never depends on the wall clock or the machine's load (issue 25): the same document checked twice,
once with the other core kept busy, gives identical findings."""

from __future__ import annotations

import multiprocessing
from pathlib import Path

from mha_symbolic import check_file
from mha_symbolic.document import FRAGMENT_SECONDS

DOCUMENT = Path(__file__).resolve().parent / "corpus_clean" / "f_worked_example.md"


def _spin(stop):  # pragma: no cover - runs in another process
    x = 0
    while not stop.is_set():
        x += 1


def _findings():
    report = check_file(str(DOCUMENT), isolate=False)
    return [(f.line, f.latex, f.status, f.message, f.expected) for f in report.findings]


def test_no_wall_clock_limit_per_piece_by_default():
    assert FRAGMENT_SECONDS is None


def test_two_runs_agree_with_the_other_core_busy():
    quiet = _findings()
    ctx = multiprocessing.get_context("fork")
    stop = ctx.Event()
    busy = [ctx.Process(target=_spin, args=(stop,)) for _ in range(2)]
    for b in busy:
        b.start()
    try:
        loaded = _findings()
    finally:
        stop.set()
        for b in busy:
            b.join(10)
    assert loaded == quiet
    assert any(status == "correct" for _, _, status, _, _ in quiet)  # it judged something
