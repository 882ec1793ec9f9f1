r"""The document checker's entry points: every formula and number of a tutorial, recomputed and adjudicated.

Explanation
===========

:func:`check_text` and :func:`check_file` run the checker's pipeline (:mod:`mha_symbolic.check`):
Markdown, plain text and Jupyter notebooks are read with real parsers (markdown-it-py, nbformat, pylatexenc,
``ast``), every relation is read with its operator through the one LaTeX reader, a document model keeps what
the document has said (sizes bind only by equality, givens, notation, 0-based heads, the split convention),
and every verdict comes from the engine: exact evaluation, the model's shapes, rank proofs and certified
counterexamples, the score statistics.

Each :class:`Finding` has a ``status`` (see :mod:`mha_symbolic.check.report`): ``correct``, ``wrong``,
``assumed``, ``inconsistent``, ``given`` (an input or definition, not a verdict) or ``unchecked`` (with
the reason, never a guessed verdict), a ``kind`` and the ``basis`` of the verdict.

Examples
========

>>> text = "We use $n = 1$ token.\n```\nX = [[1, 2]]\nWV1 = [[1, 0], [0, 1]]\n```\n$$V_1 = X W_V^1 = [1, 3]$$\n"
>>> [(f.line, f.status) for f in check_text(text).findings]
[(1, 'given'), (3, 'given'), (4, 'given'), (6, 'wrong')]
"""

from __future__ import annotations

import os
from typing import Any

from .budget import GIB, Budget, BudgetExceeded, Deadline, can_isolate, run_within
from .check.pipeline import check_document
from .check.report import STATUSES, Finding, Report
from .errors import InputError, ParseError, require
from .files import DOCUMENT_BYTES, read_limited

__all__ = ["Finding", "Report", "check_text", "check_file", "document_seconds", "STATUSES", "DOCUMENT_SECONDS",
           "DOCUMENT_MEMORY"]

#: no wall-clock limit per piece by default: a verdict never depends on the machine's load (issue 25).  The work a
#: piece may take is bounded by counts instead (the reader's limits on a formula's size and depth, the digits of
#: a number, the operations of a ball evaluation); ``seconds_per_fragment`` remains an opt-in safety limit
FRAGMENT_SECONDS: float | None = None
#: the default budget of one document grows with its size (:func:`document_seconds`): DOCUMENT_SECONDS, plus
#: SECONDS_PER_LINE for each line that is not blank (several times what a line of formulas takes on one core), at
#: most DOCUMENT_SECONDS_CAP; and DOCUMENT_MEMORY bytes of memory beyond what the caller uses
DOCUMENT_SECONDS = 50.0
SECONDS_PER_LINE = 0.02
DOCUMENT_SECONDS_CAP = 3600.0
DOCUMENT_MEMORY = GIB


def document_seconds(text: str) -> float:
    """The default time budget of a document: proportional to its size, so that a long document is checked to
    its end instead of stopping early (a document that does stop says so, and exits 3).

    >>> document_seconds("one line"), document_seconds("x\\n" * 10_000), document_seconds("x\\n" * 10**6)
    (50.02, 250.0, 3600.0)
    """
    require(text, str, "document_seconds' text", "the document as str")
    lines = sum(1 for line in text.splitlines() if line.strip())
    return min(DOCUMENT_SECONDS + SECONDS_PER_LINE * lines, DOCUMENT_SECONDS_CAP)


def check_file(path: str, seconds_per_fragment: float | None = FRAGMENT_SECONDS, **budget: Any) -> Report:
    """Check a file (UTF-8; mojibake repaired; ``.ipynb`` read as a notebook).  Unreadable files, and anything
    but a regular file of at most :data:`~mha_symbolic.files.DOCUMENT_BYTES` bytes, raise :class:`ParseError`;
    ``budget`` is passed to :func:`check_text` (``timeout``, ``memory``, ``isolate``, ``progress``)."""
    if not isinstance(path, (str, bytes)) and not hasattr(path, "__fspath__"):
        raise ParseError(f"check_file needs a path, got {type(path).__name__}")
    raw = read_limited(path, "the document", DOCUMENT_BYTES, ParseError)  # a regular file, its size checked first
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as e:
        raise ParseError(f"{path} is not UTF-8 (byte {e.start}): save it as UTF-8 first") from None
    return check_text(text, name=str(path), seconds_per_fragment=seconds_per_fragment, **budget)


def check_text(text: str, name: str = "<text>", seconds_per_fragment: float | None = FRAGMENT_SECONDS, *,
               timeout: float | str | None = "auto", memory: int | None = DOCUMENT_MEMORY,
               isolate: bool | None = None, progress: bool = False) -> Report:
    """Check a document given as text; a ``name`` ending in ``.ipynb`` reads it as a notebook.

    The document runs within a budget (:mod:`mha_symbolic.budget`): by default no piece has a time limit
    (verdicts depend on work counts, never on the clock); ``seconds_per_fragment`` sets one if asked.  The whole
    document gets ``timeout`` seconds (``"auto"``: :func:`document_seconds`, in proportion to its size), a
    guard against a hang (pieces left when it runs out are reported ``unchecked`` with that reason, and the
    report says it stopped), and ``memory`` bytes.  With ``isolate`` (the default, where ``fork``
    exists) the work runs in a worker process that is stopped if it overruns, from any thread, without touching
    the caller's signals; a document stopped that way gets one ``unchecked`` finding saying why.
    ``isolate=False`` runs here: a per-piece limit, if asked, is then a SIGALRM timer (main thread only) and the
    document's limit is checked between pieces.  ``isolate=None`` (the default) isolates unless the environment
    sets ``MHA_CHECK_IN_PROCESS=1`` (for tools that cannot follow a forked worker: profilers, coverage, mutation
    testing).  ``progress`` draws
    a progress bar on standard error for long documents.
    """
    if not isinstance(text, str):
        raise ParseError(f"check_text needs the document as str, got {type(text).__name__}")
    if not isinstance(name, str):
        raise InputError(f"check_text: name must be a str, got {type(name).__name__}")
    if isinstance(timeout, str):
        if timeout != "auto":
            raise InputError(f"check_text: timeout must be a number of seconds, None or 'auto', got {timeout!r}")
        timeout = document_seconds(text)
    budget = Budget(seconds=timeout, memory=memory)  # validates both
    Budget(seconds=seconds_per_fragment, memory=None)
    if isolate is None:
        isolate = os.environ.get("MHA_CHECK_IN_PROCESS") != "1"
    if not isolate or not can_isolate():
        return _check(text, name, seconds_per_fragment, timeout, progress)
    # the hard limit leaves the document's own deadline time to report the pieces it did not reach
    hard = None if timeout is None else timeout + (seconds_per_fragment or 0) + 5
    try:
        return run_within(Budget(hard, budget.memory), _check, text, name, seconds_per_fragment, timeout, progress)
    except BudgetExceeded as e:
        message = f"the document was not checked: {e}"
    except RuntimeError as e:  # a bug in the checker: reported on this document, the caller's other work goes on
        message = f"the document was not checked: {str(e).splitlines()[0]}"
    report = Report(name, False, None, stopped=message)
    report.findings.append(Finding(1, "", "unchecked", None, message))
    return report


def _check(text: str, name: str, seconds_per_fragment: float | None, timeout: float | None,
           progress: bool) -> Report:
    from .parse.prediction_cache import save

    report = check_document(text, name, seconds_per_fragment, Deadline(timeout), progress)
    save()  # the parser's prediction cache, for the next process (see mha_symbolic.parse.prediction_cache)
    return report
