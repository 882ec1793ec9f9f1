"""Strict shape algebra, in two levels (as in SymPy's ``matrices/expressions/_shape.py``).

* ``*_condition`` functions return ``True``, ``False`` or a symbolic condition
  (``Eq(n, d_k)``) -- for proofs.
* ``check_*`` validators raise :class:`~mha_symbolic.errors.ShapeError` only when the
  mismatch is certain (concrete sizes, or a provably nonzero difference), naming the
  step and both shapes; otherwise they return the conditions still to be met.

SymPy 1.14 itself accepts ``X*X`` for ``X`` of shape ``n x d``; these checks are ours.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sympy import Eq, Expr, MatMul

from ._convert import as_sympy
from ._text import shape_text, text
from .dims import Dims
from .errors import ShapeError

Shape = tuple[Any, Any]


def _equal(a: Any, b: Any, dims: Dims | None) -> bool | Eq:
    if dims is not None:
        return dims.equal(a, b)
    return Dims(relations=()).equal(a, b)


def matmul_condition(left: Shape, right: Shape, dims: Dims | None = None) -> bool | Eq:
    """When may a ``left`` matrix multiply a ``right`` one?  ``True``, ``False`` or ``Eq(...)``.

    >>> from sympy import Symbol
    >>> from mha_symbolic.dims import Dims
    >>> D = Dims()
    >>> matmul_condition((D.n, D.d_model), (D.d_model, D.d_k), D)
    True
    >>> matmul_condition((8, 2), (4, 2))
    False
    >>> matmul_condition((D.n, D.d_k), (D.n, D.d_k), D)
    Eq(d_k, n)
    """
    return _equal(left[1], right[0], dims)


def check_matmul(step: str, left: Shape, right: Shape, dims: Dims | None = None) -> list[Eq]:
    """Raise :class:`ShapeError` if ``left x right`` certainly does not fit.

    >>> check_matmul("Q_1 = X_head1 W_Q^1", (8, 2), (4, 2))
    Traceback (most recent call last):
    ...
    mha_symbolic.errors.ShapeError: step Q_1 = X_head1 W_Q^1: (8, 2) x (4, 2) — inner dimensions 2 and 4 differ
    """
    cond = matmul_condition(left, right, dims)
    if cond is True:
        return []
    if cond is False:
        raise ShapeError(
            f"step {step}: {shape_text(left)} x {shape_text(right)} — inner dimensions "
            f"{text(as_sympy(left[1]))} and {text(as_sympy(right[0]))} differ"
        )
    return [cond]


def checked_matmul(step: str, factors: Sequence[Any], dims: Dims | None = None) -> tuple[Expr, list[Eq]]:
    """The product of ``factors`` (scalars allowed) after checking every inner dimension.

    Returns the SymPy ``MatMul`` and the list of conditions not yet proven.
    """
    conditions: list[Eq] = []
    shape: Shape | None = None
    for f in factors:
        f = as_sympy(f)
        if not getattr(f, "is_Matrix", False):
            continue
        if shape is not None:
            conditions += check_matmul(step, shape, f.shape, dims)
            shape = (shape[0], f.shape[1])
        else:
            shape = f.shape
    return MatMul(*factors).doit(deep=False), conditions


def check_same_shape(step: str, left: Shape, right: Shape, dims: Dims | None = None) -> list[Eq]:
    """Matrices added together must have equal shapes."""
    conditions: list[Eq] = []
    for a, b in zip(left, right, strict=True):
        cond = _equal(a, b, dims)
        if cond is False:
            raise ShapeError(f"step {step}: cannot add {shape_text(left)} and {shape_text(right)}")
        if cond is not True:
            conditions.append(cond)
    return conditions


def check_same_rows(step: str, blocks: Sequence[Any], dims: Dims | None = None) -> list[Eq]:
    """Blocks placed side by side must have equal row counts."""
    conditions: list[Eq] = []
    first = blocks[0].shape
    for k, b in enumerate(blocks[1:], start=2):
        cond = _equal(first[0], b.shape[0], dims)
        if cond is False:
            raise ShapeError(
                f"step {step}: block 1 has shape {shape_text(first)} but block {k} has "
                f"{shape_text(b.shape)} — row counts differ"
            )
        if cond is not True:
            conditions.append(cond)
    return conditions


def check_result(step: str, got: Shape, expected: Shape, names: str = "") -> None:
    """Raise if an explicit result's shape differs from the shape the model declares."""
    if tuple(int(x) for x in got) != tuple(int(x) for x in expected):
        extra = f" = {names}" if names else ""
        raise ShapeError(
            f"step {step}: the result has shape {shape_text(got)}, but the model expects "
            f"{shape_text(expected)}{extra}"
        )
