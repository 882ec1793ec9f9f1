r"""Numbers as written: a decimal written with k places stands for every value that rounds to it.

Explanation
===========

``0.0879`` written in a document is not the rational 879/10000 but the interval [0.08785, 0.08795]: the
author rounded.  Decimals of one or two places (0.5, 0.25) are read as exact: they are values authors choose,
and a rounded result is printed to three or more places (:data:`MIN_PLACES`).
What a document computes from rounded numbers (a softmax of scores printed to four places,
a sum of rounded weights) is carried here as a ball (python-flint's ``arb``: a midpoint and a radius that
bounds every rounding), and a stated result is ``wrong`` only when no value it could stand for lies in that
ball.  Whole numbers and fractions are exact.

:func:`written_radii` reads the places of every decimal written in a formula; :func:`ball_entries` evaluates a
SymPy expression (a number or a matrix) with each such decimal widened to its interval; two sides can be equal
when their balls overlap.

Examples
========

>>> from sympy import Float
>>> radii = written_radii("3.5355 + 1.4142")
>>> sorted((float(k), float(v)) for k, v in radii.items())
[(1.4142, 4.99999...e-05), (3.5355, 4.99999...e-05)]
>>> [b] = ball_entries(Float("3.5355") + Float("1.4142"), radii)
>>> [c] = ball_entries(Rational(49497, 10000), written_radii("4.9497"))
>>> [d] = ball_entries(Rational(4952, 1000), written_radii("4.952"))
>>> b.overlaps(c), b.overlaps(d)
(True, False)
"""

from __future__ import annotations

import itertools
import re
from typing import Any

import flint
from sympy import Basic, Dummy, Float, MatrixBase, Rational, Symbol, preorder_traversal
from sympy.matrices.expressions import MatrixExpr

from ..errors import MHASymbolicError
from ..rank.certify import to_arb, working_precision

__all__ = ["written_radii", "ball_entries", "half_unit", "corners"]

#: bits of working precision: far more than any written decimal, so the radius is the rounding, not ours
_PREC = 128
#: decimals with fewer places are read as exact: 0.5 or 0.25 is a value the author chose (an input, a weight);
#: a rounded result is printed to three or more places (0.7337, 1.4142).  "0.2 + 0.1 = 0.4" stays wrong.
MIN_PLACES = 3
#: a whole expression of more operations than this is not evaluated as balls (a budget of work, not of time)
MAX_OPERATIONS = 20_000

#: a decimal as written; the mantissa of scientific notation (2.5e-3, 2.5 \times 10^{-3}) is read exactly, as its
#: significant digits are not intervals here yet
_DECIMAL = re.compile(r"(?<![\d.])(\d+)\.(\d+)(?![\d.])(?!\s*(?:[eE][-+]?\d|\\times\s*10\^))")


def half_unit(places: int | None) -> Rational:
    """Half a unit in the last of ``places`` decimals (0 for an exact number)."""
    return Rational(0) if places is None else Rational(1, 2 * 10**places)


def written_radii(tex: str) -> dict[Rational, Rational]:
    """Each decimal written in ``tex`` (as an exact rational) and half a unit in its last written place; a value
    written twice with different places keeps the larger radius."""
    out: dict[Rational, Rational] = {}
    for m in _DECIMAL.finditer(tex):
        if len(m.group(2)) < MIN_PLACES:
            continue  # 0.5, 0.25: a value chosen as written
        value = Rational(m.group(1) + "." + m.group(2))
        # rounding intervals are half-open: two written values that only touch ([0.00245, 0.00255) and
        # [0.00255, 0.00265)) cannot stand for the same number, so the closed ball is a hair narrower (arb
        # rounds a radius up in its last of 30 bits)
        radius = half_unit(len(m.group(2))) * (1 - Rational(1, 2**20))
        out[value] = max(out.get(value, Rational(0)), radius)
    return out


def corners(side: str, min_places: int = 1, most: int = 6) -> list[str] | None:
    """The side written again with every decimal of ``min_places`` places or more at either end of the interval it
    rounds from (never below 0), one text per corner; None when it holds none or more than ``most`` of them.  A side
    of ``+ - · /`` in which each decimal stands once takes its extremes at these corners.

    >>> corners("5 / 1.4142")
    ['5 / 1.41415', '5 / 1.41425']
    """
    decimals = [m for m in _DECIMAL.finditer(side) if len(m.group(2)) >= min_places]
    if not decimals or len(decimals) > most:
        return None
    out = []
    for corner in itertools.product((-1, 1), repeat=len(decimals)):
        text, at = "", 0
        for sign, m in zip(corner, decimals, strict=True):
            value = max(Rational(0), Rational(m.group(0)) + sign * half_unit(len(m.group(2))))
            text += side[at:m.start()] + _decimal_text(value)
            at = m.end()
        out.append(text + side[at:])
    return out


def _decimal_text(value: Rational) -> str:
    """An exact rational with a finite decimal expansion, written out (0.66975)."""
    digits = 0
    while (value * 10**digits).q != 1 and digits < 30:
        digits += 1
    whole = value * 10**digits
    return f"{int(whole) // 10**digits}.{int(whole) % 10**digits:0{digits}d}" if digits else str(int(whole))


def _arb_rational(q: Rational) -> Any:
    return flint.arb(flint.fmpq(int(q.p), int(q.q)))


def ball_entries(expr: Any, radii: dict[Rational, Rational]) -> list[Any] | None:
    """The entries of ``expr`` (a number, a matrix or a matrix expression) as arb balls, each written decimal
    of ``radii`` widened by its radius; None when the expression holds anything but numbers and the
    elementary functions, or is too large."""
    if not isinstance(expr, Basic):
        return None
    numbers = list(expr) if isinstance(expr, MatrixBase) else [expr]
    if all(isinstance(x, Rational) for x in numbers):  # stated numbers already exact: each its own interval
        with working_precision(_PREC):
            return [flint.arb(_arb_rational(x), _arb_rational(radii.get(x, Rational(0)))) for x in numbers]
    floats = {f for f in expr.atoms(Float)}
    shifts: dict[Any, Any] = {}
    env: dict[Any, Any] = {}
    for f in floats:
        radius = radii.get(Rational(str(f)))
        if radius:
            eps = Dummy("eps")
            shifts[f] = Rational(str(f)) + radius * eps
            env[eps] = flint.arb(0, 1)
    try:
        shifted = expr.xreplace(shifts) if shifts else expr
        value = shifted.doit() if hasattr(shifted, "doit") else shifted
        if isinstance(value, MatrixExpr):
            value = value.as_explicit()
        entries = list(value) if isinstance(value, MatrixBase) else [value]
        if sum(_size(x) for x in entries) > MAX_OPERATIONS:
            return None
        if any(s not in env for x in entries for s in x.free_symbols if isinstance(s, Symbol)):
            return None
        with working_precision(_PREC):
            return [to_arb(x, env) for x in entries]
    except (MHASymbolicError, ValueError, TypeError, ZeroDivisionError, AttributeError, RecursionError):
        return None


def _size(e: Any) -> int:
    """The number of nodes of an expression: the work its evaluation takes."""
    return sum(1 for _ in preorder_traversal(e))
