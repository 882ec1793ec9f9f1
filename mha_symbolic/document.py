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

from .check.pipeline import check_document
from .check.report import STATUSES, Finding, Report
from .errors import ParseError

__all__ = ["Finding", "Report", "check_text", "check_file", "STATUSES"]

FRAGMENT_SECONDS = 5.0


def check_file(path: str, seconds_per_fragment: float = FRAGMENT_SECONDS) -> Report:
    """Check a file (UTF-8; mojibake repaired; ``.ipynb`` read as a notebook).  Unreadable files raise
    :class:`ParseError`."""
    if not isinstance(path, (str, bytes)) and not hasattr(path, "__fspath__"):
        raise ParseError(f"check_file needs a path, got {type(path).__name__}")
    try:
        with open(path, "rb") as fh:
            raw = fh.read()
    except OSError as e:
        raise ParseError(f"cannot read {path}: {e.strerror}") from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as e:
        raise ParseError(f"{path} is not UTF-8 (byte {e.start}): save it as UTF-8 first") from None
    return check_text(text, name=str(path), seconds_per_fragment=seconds_per_fragment)


def check_text(text: str, name: str = "<text>", seconds_per_fragment: float = FRAGMENT_SECONDS) -> Report:
    """Check a document given as text; a ``name`` ending in ``.ipynb`` reads it as a notebook."""
    if not isinstance(text, str):
        raise ParseError(f"check_text needs the document as str, got {type(text).__name__}")
    return check_document(text, name, seconds_per_piece=seconds_per_fragment)
