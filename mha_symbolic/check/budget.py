"""Time limits for the checker's work on one piece of a document.

:func:`time_limit` interrupts a piece that runs longer than its budget with :class:`PieceTimeout`.  It uses a
SIGALRM timer, so it applies on the main thread of a POSIX process only, and it puts back whatever timer the
caller had set.  Elsewhere it does not limit (issue 13 replaces this with a worker-process budget).
"""

from __future__ import annotations

import signal
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

__all__ = ["PieceTimeout", "time_limit"]


class PieceTimeout(Exception):
    """A piece of a document ran past its time budget."""


@contextmanager
def time_limit(seconds: float | None) -> Iterator[None]:
    """Raise :class:`PieceTimeout` inside the block after ``seconds`` (main thread only)."""
    if not seconds or threading.current_thread() is not threading.main_thread() or not hasattr(signal, "setitimer"):
        yield
        return

    def handler(signum: int, frame: Any) -> None:
        raise PieceTimeout()

    old_handler = signal.signal(signal.SIGALRM, handler)
    old_delay, old_interval = signal.getitimer(signal.ITIMER_REAL)
    started = time.monotonic()
    signal.setitimer(signal.ITIMER_REAL, seconds if not old_delay else min(seconds, old_delay))
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old_handler)
        if old_delay:  # the caller's own timer, less the time spent here
            signal.setitimer(signal.ITIMER_REAL, max(old_delay - (time.monotonic() - started), 1e-3), old_interval)
