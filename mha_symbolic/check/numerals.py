r"""Numbers as written: the decimal mark and digit grouping of a document.

A document that writes decimals with a comma (``1,5 GiB``, ``0,75``, in LaTeX ``0{,}125``) groups thousands
with spaces (``196 608``, ``5 368 709 120``), as SI and most of Europe do.  :func:`decimal_comma` decides it
from unambiguous evidence -- a comma decimal with a leading zero, one with one or two places before a unit of
memory, or LaTeX's ``{,}`` before other than three digits -- and :func:`as_points` rewrites that document's
numbers with a point and no grouping, keeping every line in place.  Elsewhere nothing changes: ``1,536`` stays
a thousands separator and a MATLAB row ``[100 200 300]`` three numbers.

>>> decimal_comma("Total: 1 610 612 736 B = 1,5 GiB."), decimal_comma("d = 1,536, x = (1,2), [0,1] or 0,1 ]")
(True, False)
>>> as_points("24 GiB / 128 KiB = 196 608 tokens; 0,75 GiB; 0,125; $e \\approx 2{,}718$")
'24 GiB / 128 KiB = 196608  tokens; 0.75 GiB; 0.125; $e \\approx 2.718  $'
"""

from __future__ import annotations

import re

__all__ = ["decimal_comma", "as_points"]

#: a comma decimal nobody reads as a thousands separator: 0,75 or 1,5 GiB (one or two places before a unit)
_EVIDENCE = re.compile(r"(?<![\d.,\[({])(?:0,\d+|\d+,\d{1,2})\s*(?:[KMGTP]i?B|[KMGTP]?FLOPs?|%)(?![\w\])}])"
                       r"|(?<![\d.,\[({])0,\d+(?=\s+[^\W\d_])"
                       r"|(?<![\d.,])0\{,\}\d|\d\{,\}(?:\d{1,2}|\d{4,})(?!\d)")  # LaTeX's 0{,}125 or 7{,}5
#: digits grouped by spaces (ordinary, no-break, thin or narrow no-break): 196 608, 5 368 709 120
_GROUPED = re.compile(r"(?<![\d.,])\d{1,3}(?:[ \u00a0\u2009\u202f]\d{3})+(?![\d,])")
#: in such a document every 1,5, 0,125 or 7{,}389 (LaTeX's decimal comma) is a decimal, its thousands being
#: grouped by spaces; never (0,1) or [1,0] (a pair, a vector) nor 1,2,3 (a list)
_COMMA_DECIMAL = re.compile(r"(?<![\d.,\[({])(\d+)(,)(\d+)(?![\d,\])}])|(?<![\d.,])(\d+)(\{,\})(\d+)(?![\d,])")


def decimal_comma(text: str) -> bool:
    """Does the document write decimals with a comma?"""
    return bool(_EVIDENCE.search(text))


def as_points(text: str) -> str:
    """The document's numbers with a decimal point and no grouping, each line the same length."""
    text = _GROUPED.sub(lambda m: re.sub(r"\D", "", m.group(0)) + " " * (len(m.group(0)) -
                                                                         len(re.sub(r"\D", "", m.group(0)))), text)
    def point(m: re.Match[str]) -> str:
        whole, mark, fraction = m.groups()[:3] if m.group(1) else m.groups()[3:]
        return f"{whole}.{fraction}" + " " * (len(mark) - 1)

    return _COMMA_DECIMAL.sub(point, text)
