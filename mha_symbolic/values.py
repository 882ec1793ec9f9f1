"""Reading user-supplied matrices into exact SymPy matrices.

Explanation
===========

Integers stay integers; decimals become exact rationals (``0.2 -> 1/5``: the
shortest decimal that round-trips the float, i.e. the number the user typed);
SymPy expressions (``sqrt(2)``, symbols) are kept.  With ``exact=False`` floats
stay SymPy ``Float``.  Strings are read only as decimal or fraction literals
(``"0.25"``, ``"1/3"``) through :class:`fractions.Fraction` -- never ``sympify``.
NaN, infinities, complex numbers and booleans are refused, naming the argument and
the entry.

Examples
========

>>> from mha_symbolic.values import to_matrix, to_head_list
>>> to_matrix([[0.2, 1], [3, "1/3"]], "X")
Matrix([
[1/5,   1],
[  3, 1/3]])
>>> to_matrix([1, 2, 3, 4], "X", vector_as_row=True).shape
(1, 4)
>>> to_matrix([[1.0, float("nan")]], "X")
Traceback (most recent call last):
...
mha_symbolic.errors.InputError: X entry (0, 1) is nan; every entry must be finite
>>> len(to_head_list([[[1, 0]], [[0, 1]]], "W_Q", 2))
2
"""

from __future__ import annotations

import decimal
import fractions
import math
import numbers
from typing import Any

import numpy as np
from sympy import Basic, Expr, Float, ImmutableMatrix, Integer, Rational, S
from sympy.matrices import MatrixBase

from .errors import InputError

__all__ = ["to_mask", "to_exact", "to_matrix", "to_head_list", "to_head_vectors"]


def to_exact(x: Any, where: str, exact: bool = True) -> Expr:
    """One entry as a SymPy number or expression; ``where`` names it in errors."""
    if isinstance(x, (bool, np.bool_)):
        raise InputError(f"{where} is the bool {x!r}; expected a number")
    if isinstance(x, Basic):
        if not isinstance(x, Expr):
            raise InputError(f"{where} is {x!r}; expected a number or a scalar expression")
        if x.has(S.NaN, S.Infinity, S.NegativeInfinity, S.ComplexInfinity):
            raise InputError(f"{where} is {x}; every entry must be finite")
        if exact and x.is_Float:
            return Rational(str(x))
        return x
    if isinstance(x, numbers.Integral):
        return Integer(int(x))
    if isinstance(x, (float, np.floating)):
        if not math.isfinite(float(x)):
            raise InputError(f"{where} is {x}; every entry must be finite")
        if not exact:
            return Float(float(x))
        fr = fractions.Fraction(str(x))  # numpy prints the shortest round-trip decimal for its dtype
        return Rational(fr.numerator, fr.denominator)
    if isinstance(x, fractions.Fraction):
        return Rational(x.numerator, x.denominator)
    if isinstance(x, decimal.Decimal):
        if not x.is_finite():
            raise InputError(f"{where} is {x}; every entry must be finite")
        fr = fractions.Fraction(x)
        return Rational(fr.numerator, fr.denominator)
    if isinstance(x, str):
        try:
            fr = fractions.Fraction(x.strip().replace("\u2212", "-"))
        except (ValueError, ZeroDivisionError):
            raise InputError(f"{where} is the text {x!r}, which is not a decimal or fraction") from None
        return Rational(fr.numerator, fr.denominator)
    if isinstance(x, (complex, np.complexfloating)):
        raise InputError(f"{where} is the complex number {x}; entries must be real")
    raise InputError(f"{where} has type {type(x).__name__}; expected a number")


def to_matrix(value: Any, name: str, *, exact: bool = True, vector_as_row: bool = False) -> ImmutableMatrix:
    """A 2-D matrix from nested lists, a NumPy array or a SymPy matrix.

    A 1-D vector is accepted only with ``vector_as_row`` (one token: ``X = [1, 2, 3, 4]``).
    """
    if isinstance(value, MatrixBase):
        rows = value.tolist()
    elif getattr(value, "is_Matrix", False):
        raise InputError(f"{name} must be an explicit matrix, got the expression {value}")
    elif isinstance(value, np.ndarray):
        arr = value.reshape(1, -1) if value.ndim == 1 and vector_as_row else value
        if arr.ndim != 2:
            raise InputError(f"{name} must be a 2-D matrix, got an array of shape {tuple(arr.shape)}")
        if arr.dtype.kind not in "biufcO":
            raise InputError(f"{name} has non-numeric dtype {arr.dtype}")
        rows = [list(r) for r in arr]
    elif isinstance(value, (list, tuple)):
        rows = [list(r) if isinstance(r, (list, tuple, np.ndarray)) else r for r in value]
        nested = [isinstance(r, list) for r in rows]
        if not any(nested) and vector_as_row:
            rows = [rows]
        elif not all(nested):
            raise InputError(f"{name} must be a 2-D matrix (a list of rows); got a list of {len(rows)} numbers"
                             if not any(nested) else f"{name} mixes rows and single numbers")
        if len({len(r) for r in rows}) > 1:
            raise InputError(f"{name} is ragged: its rows have lengths {[len(r) for r in rows]}")
    else:
        raise InputError(f"{name} must be a matrix (nested lists, NumPy array or SymPy Matrix), "
                         f"got {type(value).__name__}")
    if not rows or not rows[0]:
        raise InputError(f"{name} is empty")
    entries = [[to_exact(x, f"{name} entry ({i}, {j})", exact) for j, x in enumerate(r)]
               for i, r in enumerate(rows)]
    return ImmutableMatrix(entries)


def _is_minus_infinity(x: Any) -> bool:
    if isinstance(x, Basic):
        return x == S.NegativeInfinity
    return isinstance(x, (float, np.floating)) and math.isinf(float(x)) and float(x) < 0


def to_mask(value: Any, name: str, kind: str, *, exact: bool = True) -> ImmutableMatrix:
    """A mask as an explicit matrix: ``kind="key_padding"`` a row of 0/1 (bools allowed; 1 = attend),
    ``kind="additive"`` a matrix of finite numbers or ``-oo`` (``float("-inf")``: the key is masked).

    >>> to_mask([True, False], "m", "key_padding")
    Matrix([[1, 0]])
    >>> to_mask([[0, float("-inf")]], "M", "additive")
    Matrix([[0, -oo]])
    >>> to_mask([1, 2], "m", "key_padding")
    Traceback (most recent call last):
    ...
    mha_symbolic.errors.InputError: m entry (0, 1) is 2; a key-padding mask holds 0 (masked) or 1 (attend)
    """
    try:
        arr = np.array(value.tolist() if isinstance(value, MatrixBase) else value, dtype=object)
    except ValueError:
        return to_matrix(value, name, exact=exact)  # ragged: to_matrix says how
    if arr.ndim == 1:
        arr = arr.reshape(1, -1)
    if arr.ndim != 2 or 0 in arr.shape:
        return to_matrix(value, name, exact=exact)
    if kind == "key_padding":
        arr = np.vectorize(lambda x: int(x) if isinstance(x, (bool, np.bool_)) else x, otypes=[object])(arr)
        M = to_matrix(arr, name, exact=exact)
        for (i, j), x in np.ndenumerate(np.array(M.tolist(), dtype=object)):
            if x not in (0, 1):
                raise InputError(f"{name} entry ({i}, {j}) is {x}; a key-padding mask holds 0 (masked) or 1 (attend)")
        return M
    minus = np.vectorize(_is_minus_infinity, otypes=[bool])(arr)
    arr[minus] = 0
    rows = to_matrix(arr, name, exact=exact).tolist()
    for i, j in zip(*np.nonzero(minus), strict=True):
        rows[i][j] = S.NegativeInfinity
    return ImmutableMatrix(rows)


def to_head_list(value: Any, name: str, h: int | None, *, exact: bool = True) -> list[ImmutableMatrix]:
    """Per-head matrices from a list of matrices or a stacked ``[h, rows, cols]`` array.

    An entry ``None`` in a list leaves that head's matrix unknown (symbolic entries).
    """
    if isinstance(value, (MatrixBase, np.ndarray)) and getattr(value, "ndim", 2) == 2:
        if h == 1:
            return [to_matrix(value, f"{name}[1]", exact=exact)]
        raise InputError(
            f"{name} must be a list of h={h} per-head matrices or an array of shape (h, rows, cols); "
            f"got one matrix of shape {tuple(value.shape)}"
        )
    if isinstance(value, np.ndarray):
        if value.ndim != 3:
            raise InputError(f"{name} must have shape (h, rows, cols), got {tuple(value.shape)}")
        items = list(value)
    elif isinstance(value, (list, tuple)):
        items = list(value)
        if items and all(isinstance(x, numbers.Number) for x in items):
            raise InputError(f"{name} must be a list of per-head matrices, got a flat list of numbers")
        if items and _depth(items) == 2 and h != 1:
            raise InputError(f"{name} must be a list of h={h} per-head matrices; got a single matrix")
        if items and _depth(items) == 2:
            items = [items]
    else:
        raise InputError(f"{name} must be a list of per-head matrices, got {type(value).__name__}")
    if not items:
        raise InputError(f"{name} is empty: give one matrix per head{f' (h={h})' if h is not None else ''}, "
                         f"or leave {name} out")
    if h is not None and len(items) != h:
        raise InputError(f"{name}: expected h={h} per-head matrices, got {len(items)}")
    if all(m is None for m in items):
        raise InputError(f"{name}: every per-head matrix is None; leave {name} out instead")
    return [None if m is None else to_matrix(m, f"{name}[{k}]", exact=exact)  # type: ignore[misc]
            for k, m in enumerate(items, start=1)]


def to_head_vectors(value: Any, name: str, h: int | None, *, exact: bool = True) -> list[ImmutableMatrix]:
    """Per-head bias rows from a list of ``h`` vectors or an array of shape ``(h, width)``."""
    if isinstance(value, np.ndarray):
        if value.ndim == 1 and h == 1:
            value = value[None, :]
        if value.ndim != 2:
            raise InputError(f"{name} must have shape (h, width) or be a list of h vectors, got {value.shape}")
        items = list(value)
    elif isinstance(value, (list, tuple)):
        items = list(value)
        if items and _depth(items) == 1:
            if h != 1:
                raise InputError(f"{name} must be a list of h={h} per-head vectors; got a single vector")
            items = [items]
    else:
        raise InputError(f"{name} must be a list of per-head vectors, got {type(value).__name__}")
    if h is not None and len(items) != h:
        raise InputError(f"{name}: expected h={h} per-head vectors, got {len(items)}")
    out = [to_matrix(v, f"{name}[{k}]", exact=exact, vector_as_row=True) for k, v in enumerate(items, start=1)]
    for k, v in enumerate(out, start=1):
        if v.rows != 1:
            raise InputError(f"{name}[{k}] must be a vector, got shape {v.shape}")
    return out


def _depth(x: Any) -> int:
    d = 0
    while isinstance(x, (list, tuple)) and x:
        d += 1
        x = x[0]
    return d
