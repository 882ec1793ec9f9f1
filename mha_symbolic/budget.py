"""Budgets for untrusted work: wall-clock time and memory, in any thread, leaving the caller's signals alone.

Explanation
===========

A document (or any call on text a user handed us) may be pathological: a formula that takes minutes, a number
with a billion digits.  :func:`run_within` runs such a job in a forked worker process: the child sets its own
address-space limit (``resource.setrlimit``) and may use its own SIGALRM timers (:func:`time_limit`) without
touching the caller's; the parent waits at most ``seconds`` and kills the child when it runs over.  It works
from any thread of the caller.  Where ``fork`` is not available (Windows) the job runs in the caller's process
and only the cooperative limits apply: a :class:`Deadline` that the job checks between its pieces.

:class:`BudgetExceeded` (an :class:`~mha_symbolic.errors.MHASymbolicError`) says which limit was hit.

Examples
========

>>> run_within(Budget(seconds=10), sum, [1, 2, 3])
6
>>> def forever():
...     while True:
...         pass
>>> run_within(Budget(seconds=0.5), forever)
Traceback (most recent call last):
...
mha_symbolic.budget.BudgetExceeded: the work took longer than its budget of 0.5 s and was stopped
>>> Deadline(None).remaining() is None, Deadline(5).expired()
(True, False)
"""

from __future__ import annotations

import atexit
import os
import pickle
import select
import signal
import sys
import threading
import time
import traceback
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, TypeVar

from .errors import InputError, MHASymbolicError

__all__ = ["Budget", "BudgetExceeded", "Deadline", "PieceTimeout", "run_within", "time_limit", "fired",
           "can_isolate", "stop_workers"]

T = TypeVar("T")
GIB = 1 << 30


class BudgetExceeded(MHASymbolicError):
    """Work ran past its time or memory budget and was stopped; the message says which and how much."""


class PieceTimeout(BaseException):
    """One piece of a job ran past its own time limit (raised inside the job, by :func:`time_limit`).

    A ``BaseException``, like ``KeyboardInterrupt``: code that turns a library's ``Exception`` into a reading
    error must not swallow the interruption and go on working."""


@dataclass(frozen=True)
class Budget:
    """Limits for one job: ``seconds`` of wall-clock time and ``memory`` bytes of new address space
    (``None``: no limit of that kind).

    >>> Budget(seconds=-1)
    Traceback (most recent call last):
    ...
    mha_symbolic.errors.InputError: Budget: seconds must be a positive number or None, got -1
    """

    seconds: float | None = 60.0
    memory: int | None = GIB

    def __post_init__(self) -> None:
        for name in ("seconds", "memory"):
            value = getattr(self, name)
            if value is not None and (isinstance(value, bool) or not isinstance(value, (int, float))
                                      or not value > 0 or value != value or value == float("inf")):
                raise InputError(f"Budget: {name} must be a positive number or None, got {value!r}")


#: The clock every budget in this process is measured with (the parent's side: when a worker's answer is late).
#: Tests of the limits replace it with a clock they move themselves, so that no test waits on, or depends on,
#: the real time or the machine's load.
clock: Callable[[], float] = time.monotonic


class Deadline:
    """A point in time a job must finish by (``None`` seconds: never); checked cooperatively."""

    def __init__(self, seconds: float | None) -> None:
        Budget(seconds=seconds, memory=None)  # validates: a positive number or None, the error naming it
        self.seconds = seconds
        self._end = None if seconds is None else clock() + seconds

    def remaining(self) -> float | None:
        return None if self._end is None else self._end - clock()

    def expired(self) -> bool:
        left = self.remaining()
        return left is not None and left <= 0


def can_isolate() -> bool:
    """Whether jobs can run in a forked worker process here (POSIX)."""
    return hasattr(os, "fork") and sys.platform != "win32"


def _address_space() -> int:
    """Bytes of address space this process uses now (0 when unknown)."""
    try:
        with open("/proc/self/statm") as fh:
            return int(fh.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return 0


def _limit_memory(extra: int | None) -> None:
    if extra is None:
        return
    try:
        import resource
    except ImportError:  # pragma: no cover - not POSIX
        return
    used = _address_space()
    if not used:
        return
    limit = used + int(extra)
    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    if hard != resource.RLIM_INFINITY:
        limit = min(limit, hard)
    resource.setrlimit(resource.RLIMIT_AS, (limit, hard))


def _outcome(fn: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple[str, bytes]:
    """The kind and the pickled outcome of ``fn(*args, **kwargs)``: ("ok", result), ("memory", None),
    ("error", our error) or ("crash", the traceback of a bug)."""
    try:
        outcome: tuple[str, Any] = ("ok", fn(*args, **kwargs))
    except MemoryError:
        outcome = ("memory", None)
    except MHASymbolicError as e:
        outcome = ("error", e)
    except Exception as e:  # a bug: carried to the parent with its traceback, never a silent result
        outcome = ("crash", f"{type(e).__name__}: {e}\n{traceback.format_exc()}")
    try:
        return outcome[0], pickle.dumps(outcome)
    except Exception as e:  # an unpicklable result or error
        return "crash", pickle.dumps(("crash", f"the result could not be sent back: {type(e).__name__}: {e}"))


def _write_frame(fd: int, data: bytes) -> None:
    view = memoryview(len(data).to_bytes(8, "little") + data)
    while view:
        view = view[os.write(fd, view):]


def _read_exactly(fd: int, size: int, end: float | None) -> bytes | None:
    """``size`` bytes from ``fd``, or None at end of file; raises TimeoutError past ``end``."""
    chunks, got = [], 0
    while got < size:
        wait = None if end is None else end - clock()
        if wait is not None and wait <= 0:
            raise TimeoutError
        ready, _, _ = select.select([fd], [], [], wait)
        if not ready:
            continue
        chunk = os.read(fd, min(size - got, 1 << 20))
        if not chunk:
            return None
        chunks.append(chunk)
        got += len(chunk)
    return b"".join(chunks)


def _read_frame(fd: int, end: float | None) -> bytes | None:
    head = _read_exactly(fd, 8, end)
    return None if head is None else _read_exactly(fd, int.from_bytes(head, "little"), end)


def _serve(requests: int, results: int, memory: int | None) -> None:  # pragma: no cover - the worker process
    """The worker's loop: read a job, run it, answer; exit at end of input or after running out of memory."""
    code = 0
    try:
        signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent decides when the worker stops
        _limit_memory(memory)
        while True:
            frame = _read_frame(requests, None)
            if frame is None:
                break
            fn, args, kwargs = pickle.loads(frame)
            kind, answer = _outcome(fn, args, kwargs)
            _write_frame(results, answer)
            if kind == "memory":
                break  # a worker that ran out of memory is not trusted with the next job
    except BaseException:
        code = 1
    finally:
        os._exit(code)


class _Worker:
    """A forked worker process that runs jobs one at a time, kept warm between jobs (SymPy's and the
    parser's caches stay filled); killed and replaced when a job overruns its time."""

    def __init__(self, memory: int | None) -> None:
        self.memory, self.owner, self.lock = memory, os.getpid(), threading.Lock()
        req_r, req_w = os.pipe()
        res_r, res_w = os.pipe()
        sys.stdout.flush()
        sys.stderr.flush()
        pid = os.fork()
        if pid == 0:  # pragma: no cover - the worker
            os.close(req_w)
            os.close(res_r)
            _serve(req_r, res_w, memory)
        os.close(req_r)
        os.close(res_w)
        self.pid, self.requests, self.results, self.alive = pid, req_w, res_r, True

    def run(self, seconds: float | None, job: bytes) -> tuple[str, Any]:
        end = None if seconds is None else clock() + seconds
        answered = False
        try:
            _write_frame(self.requests, job)
            frame = _read_frame(self.results, end)
            answered = frame is not None
        except TimeoutError:
            return ("timeout", None)
        except OSError:  # the worker is gone (a broken pipe)
            frame = None
        finally:
            if not answered:
                self.stop()
        if frame is None:
            return ("died", None)
        outcome: tuple[str, Any] = pickle.loads(frame)
        if outcome[0] == "memory":
            self.stop()
        return outcome

    def stop(self) -> None:
        if not self.alive:
            return
        self.alive = False
        for fd in (self.requests, self.results):
            try:
                os.close(fd)
            except OSError:
                pass
        _kill(self.pid)
        _reap(self.pid)


_WORKERS: list[_Worker] = []
_WORKERS_LOCK = threading.Lock()


def _free_worker(memory: int | None) -> _Worker | None:
    """The shared worker with this memory limit, locked for the caller; None when it is busy."""
    with _WORKERS_LOCK:
        for w in list(_WORKERS):
            if not w.alive or w.owner != os.getpid():  # dead, or inherited through a fork of the caller
                _WORKERS.remove(w)
                if w.owner == os.getpid():
                    w.stop()
        worker = next((w for w in _WORKERS if w.memory == memory), None)
        if worker is None:  # one warm worker at a time: replace an idle one, never one that is working
            idle = [w for w in _WORKERS if w.lock.acquire(blocking=False)]
            for w in idle:
                if len(idle) == len(_WORKERS):
                    w.stop()
                w.lock.release()
            if len(idle) < len(_WORKERS):
                return None
            _WORKERS.clear()
            worker = _Worker(memory)
            _WORKERS.append(worker)
        return worker if worker.lock.acquire(blocking=False) else None


@atexit.register
def stop_workers() -> None:
    """Stop the shared worker processes (also done at exit); the next job starts a new one."""
    for w in _WORKERS:
        if w.owner == os.getpid():
            w.stop()


def _one_off(seconds: float | None, memory: int | None, fn: Callable[..., Any], args: tuple[Any, ...],
             kwargs: dict[str, Any]) -> tuple[str, Any]:
    """Run one job in a process forked for it alone (the function need not be picklable)."""
    sys.stdout.flush()
    sys.stderr.flush()
    read_fd, write_fd = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child
        code = 0
        try:
            os.close(read_fd)
            signal.signal(signal.SIGINT, signal.SIG_IGN)
            _limit_memory(memory)
            _write_frame(write_fd, _outcome(fn, args, kwargs)[1])
        except BaseException:
            code = 1
        finally:
            os._exit(code)
    os.close(write_fd)
    answered = False
    try:
        frame = _read_frame(read_fd, None if seconds is None else clock() + seconds)
        answered = True
    except TimeoutError:
        frame = None
    finally:
        os.close(read_fd)
        if not answered:
            _kill(pid)
        _reap(pid)
    if not answered:
        return ("timeout", None)
    return ("died", None) if frame is None else pickle.loads(frame)  # type: ignore[no-any-return]


def run_within(budget: Budget, fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
    """``fn(*args, **kwargs)`` in a worker process limited by ``budget``; its result, or its
    :class:`~mha_symbolic.errors.MHASymbolicError`, or :class:`BudgetExceeded`.

    A picklable ``fn`` runs in a shared worker process kept warm between calls (one job at a time; a call
    made while it is busy, from another thread, gets a process of its own); any other callable in a process
    forked for it.  The result and errors travel back by pickle.  Without ``fork`` the call runs here,
    unlimited (callers pass a :class:`Deadline` to the job for the cooperative limit).
    """
    if not isinstance(budget, Budget):
        raise InputError(f"run_within needs a Budget, got {type(budget).__name__}")
    if not can_isolate():  # pragma: no cover - Windows
        return fn(*args, **kwargs)
    try:
        job = pickle.dumps((fn, args, kwargs))
    except Exception:  # a lambda or a local function: a process of its own
        job = None
    worker = _free_worker(budget.memory) if job is not None else None
    if worker is not None and job is not None:
        try:
            kind, value = worker.run(budget.seconds, job)
        finally:
            worker.lock.release()
    else:
        kind, value = _one_off(budget.seconds, budget.memory, fn, args, kwargs)
    if kind == "ok":
        return value  # type: ignore[no-any-return]
    if kind == "timeout":
        raise BudgetExceeded(f"the work took longer than its budget of {budget.seconds:g} s and was stopped")
    if kind == "died":
        memory = f" (memory budget {budget.memory / GIB:.3g} GiB)" if budget.memory else ""
        raise BudgetExceeded(f"the worker process stopped before it answered{memory}")
    if kind == "memory":
        raise BudgetExceeded(f"the work needed more than its memory budget of {budget.memory / GIB:.3g} GiB "
                             "and was stopped" if budget.memory else "the work ran out of memory")
    if kind == "error":
        raise value
    raise RuntimeError(f"internal error in a worker process: {value}")


def _kill(pid: int) -> None:
    try:
        os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


def _reap(pid: int) -> int:
    while True:
        try:
            return os.waitpid(pid, 0)[1]
        except ChildProcessError:
            return 0
        except InterruptedError:  # pragma: no cover - PEP 475 retries this
            continue


#: how many times a piece's timer has fired in this process (see :func:`fired`)
_FIRED = 0


def fired() -> int:
    """How many times a piece's timer has fired in this process: a library that catches every exception may
    swallow :class:`PieceTimeout` and raise its own error instead; comparing this count before and after a call
    tells the caller that it was the timer (so a piece over its time is reported as that, whatever the load)."""
    return _FIRED


@contextmanager
def time_limit(seconds: float | None) -> Iterator[None]:
    """Raise :class:`PieceTimeout` inside the block after ``seconds``.

    A SIGALRM timer: it applies on the main thread of a POSIX process only (a worker process of
    :func:`run_within` is one), and it puts back whatever timer and handler the process had.  Elsewhere it
    does not limit; the job's :class:`Deadline` still does, between pieces.
    """
    if not seconds or threading.current_thread() is not threading.main_thread() or not hasattr(signal, "setitimer"):
        yield
        return

    def handler(signum: int, frame: Any) -> None:
        global _FIRED
        _FIRED += 1
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
