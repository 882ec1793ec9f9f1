"""Rank sweeps over a grid of sizes, in parallel with any ``concurrent.futures`` Executor.

Explanation
===========

:func:`rank_sweep` runs :func:`~mha_symbolic.rank.witness.rank_report` for every ``(n, d_model, h)``
of a grid.  By default it uses a local :class:`~concurrent.futures.ProcessPoolExecutor`;
any Executor works, e.g. a Dask cluster's::

    from dask.distributed import Client
    client = Client("scheduler:8786")
    results = rank_sweep(executor=client.get_executor())

Examples
========

>>> from mha_symbolic.rank.sweep import rank_sweep
>>> [r.tight for r in rank_sweep([(4, 4, 2), (8, 8, 4)], workers=1)]
[True, True]
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterable
from concurrent.futures import Executor, ProcessPoolExecutor, as_completed
from dataclasses import dataclass
from typing import Any

from ..errors import InputError, require, require_int
from .witness import RankRow, rank_report

__all__ = ["DEFAULT_GRID", "SweepResult", "rank_sweep", "text_progress"]

#: n in 2..64, d_model in 4..64, every h in {1, 2, 4, 8} dividing d_model (114 configurations).
DEFAULT_GRID: list[tuple[int, int, int]] = [(n, d, h) for n in (2, 4, 8, 16, 32, 64) for d in (4, 8, 16, 32, 64)
                                            for h in (1, 2, 4, 8) if d % h == 0 and d // h >= 1 and h <= d]


@dataclass(frozen=True)
class SweepResult:
    """The report of one configuration, and whether every bound was attained (certified)."""

    n: int
    d_model: int
    h: int
    rows: tuple[RankRow, ...]

    @property
    def tight(self) -> bool:
        return all(r.verdict == "tight" for r in self.rows)


def _one(config: tuple[int, int, int]) -> SweepResult:
    n, d, h = config
    return SweepResult(n, d, h, tuple(rank_report(n, d, h)))


def text_progress(done: int, total: int, stream: Any = None) -> None:
    """A one-line progress bar on stderr: ``[######....]  57/114``."""
    stream = stream or sys.stderr
    width = 30
    filled = width * done // max(total, 1)
    stream.write(f"\r[{'#' * filled}{'.' * (width - filled)}] {done:>4}/{total}")
    if done == total:
        stream.write("\n")
    stream.flush()


def rank_sweep(grid: Iterable[tuple[int, int, int]] | None = None, executor: Executor | None = None, workers: int = 2,
          progress: Callable[[int, int], None] | None = None) -> list[SweepResult]:
    """Reports for every configuration of ``grid`` (default :data:`DEFAULT_GRID`), in grid order."""
    require(grid, (Iterable, type(None)), "rank_sweep's grid", "an iterable of (n, d_model, h) or None")
    require_int(workers, "rank_sweep's workers", low=0)
    configs = list(DEFAULT_GRID if grid is None else grid)
    for k, c in enumerate(configs):
        if not isinstance(c, (tuple, list)) or len(c) != 3:
            raise InputError(f"rank_sweep's grid[{k}] must be a triple (n, d_model, h), got {c!r}")
        for label, v in zip(("n", "d_model", "h"), c, strict=True):
            require_int(v, f"rank_sweep's grid[{k}] {label}")
    if workers <= 1 and executor is None:
        results = []
        for k, c in enumerate(configs, start=1):
            results.append(_one(c))
            if progress:
                progress(k, len(configs))
        return results
    own = executor is None
    pool = executor or ProcessPoolExecutor(max_workers=workers)
    try:
        futures = {pool.submit(_one, c): k for k, c in enumerate(configs)}
        out: list[SweepResult | None] = [None] * len(configs)
        for done, fut in enumerate(as_completed(futures), start=1):
            out[futures[fut]] = fut.result()
            if progress:
                progress(done, len(configs))
    finally:
        if own:
            pool.shutdown()
    return [r for r in out if r is not None]
