r"""Certified ranks: exact (FLINT) for rational matrices, ball-arithmetic minors for the rest.

Explanation
===========

* :func:`exact_rank` -- rational (or integer) entries: FLINT's ``fmpq_mat.rank`` /
  ``fmpz_mat.rank`` (0.2 s at 512 x 512; SymPy's ``DomainMatrix.rank`` is pure Python and
  minutes slow there, and ``Matrix.rank`` is wrong on symbolic entries).
* :func:`certify_rank_at_least` -- entries with ``exp``, ``log``, ``sqrt`` (softmax
  outputs): a floating-point elimination *proposes* an ``r x r`` minor; its determinant is
  then computed in ball arithmetic (``flint.arb_mat``, precision raised until decided);
  a ball that excludes 0 *proves* rank >= r.  The :class:`MinorCertificate` (rows,
  columns, the ball, the precision) is returned so anyone can recompute it.  A ball can
  prove "nonzero", never "zero": rank deficiency needs exact arithmetic or a proof.
* :func:`numerical_rank` -- singular values and the count above a stated tolerance,
  labelled as numerical evidence, never a verdict.

Examples
========

>>> from sympy import Matrix, exp, Rational
>>> from mha_symbolic.rank.certify import exact_rank, certify_rank_at_least
>>> exact_rank(Matrix([[1, 2], [2, 4]]))
1
>>> c = certify_rank_at_least(Matrix([[exp(1), 1], [1, exp(Rational(1, 2))]]), 2)
>>> c.rows, c.cols, c.excludes_zero
((0, 1), (0, 1), True)
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import flint
import numpy as np
from sympy import Abs, Add, E, Expr, ImmutableMatrix, Mul, Pow, Rational, exp, log, pi

from ..errors import InputError, require

__all__ = ["exact_rank", "to_arb", "arb_matrix", "MinorCertificate", "certify_rank_at_least", "certified_rank",
           "numerical_rank", "NumericalRank", "working_precision", "exact_dyadic"]


@contextmanager
def working_precision(bits: int) -> Iterator[None]:
    """Set FLINT's working precision (bits) for arb operations inside the block."""
    old = flint.ctx.prec
    flint.ctx.prec = bits
    try:
        yield
    finally:
        flint.ctx.prec = old


def _matrix(M: Any, who: str) -> ImmutableMatrix:
    """A user's matrix read by :func:`~mha_symbolic.values.to_matrix` (rectangular, finite, never text parsed
    as code); floats stay floats, so that an exact routine refuses them instead of guessing."""
    from ..values import to_matrix

    if isinstance(M, ImmutableMatrix):
        return M
    return to_matrix(M, who, exact=False)


def exact_rank(M: Any) -> int:
    """Exact rank of a matrix of rationals (SymPy matrix, nested lists or an integer NumPy array).

    >>> exact_rank([[1, 2], [3]])
    Traceback (most recent call last):
    ...
    mha_symbolic.errors.InputError: exact_rank's matrix is ragged: its rows have lengths [2, 1]
    """
    if isinstance(M, np.ndarray) and M.ndim == 2 and M.size:
        if M.dtype.kind not in "iub":
            raise InputError(f"exact_rank needs integer arrays (floats: convert with Fraction first), got {M.dtype}")
        return int(flint.fmpz_mat([[int(x) for x in row] for row in M.tolist()]).rank())
    M = _matrix(M, "exact_rank's matrix")
    if not all(x.is_Rational for x in M):
        raise InputError("exact_rank needs rational entries; use certify_rank_at_least for exp/sqrt entries")
    if all(x.is_Integer for x in M):
        return int(flint.fmpz_mat([[int(x) for x in M.row(i)] for i in range(M.rows)]).rank())
    entries = [flint.fmpq(int(x.p), int(x.q)) for x in M]
    return int(flint.fmpq_mat(M.rows, M.cols, entries).rank())


def to_arb(x: Any, env: dict[Any, Any] | None = None) -> flint.arb:
    """A rigorous ball containing the value of a SymPy expression (rationals, floats, +, *, powers, ``sqrt``,
    ``exp``, ``log``, ``Abs``, ``e``, ``pi``), at the current working precision; the symbols of ``env`` stand for
    the balls it maps them to (:mod:`mha_symbolic.check.balls` widens written decimals so)."""
    if env and x in env:
        return env[x]
    if isinstance(x, (int, np.integer)):
        return flint.arb(int(x))
    if x.is_Integer:
        return flint.arb(int(x))
    if x.is_Rational:
        return flint.arb(int(x.p)) / int(x.q)
    if x is E:
        return flint.arb(1).exp()
    if x is pi:
        return flint.arb.pi()
    if isinstance(x, Add):
        total = flint.arb(0)
        for a in x.args:
            total += to_arb(a, env)
        return total
    if isinstance(x, Mul):
        prod = flint.arb(1)
        for a in x.args:
            prod *= to_arb(a, env)
        return prod
    if isinstance(x, Pow):
        base, e = to_arb(x.base, env), x.exp
        if e.is_Integer:
            return base ** int(e)
        if e.is_Rational and e.q == 2:
            return base.sqrt() ** int(e.p)
        return (to_arb(e, env) * base.log()).exp()
    if isinstance(x, exp):
        return to_arb(x.args[0], env).exp()
    if isinstance(x, log) and len(x.args) == 1:
        return to_arb(x.args[0], env).log()
    if isinstance(x, Abs):
        return abs(to_arb(x.args[0], env))
    if isinstance(x, Expr) and x.is_Float:
        return flint.arb(str(x))
    raise InputError(f"cannot evaluate {x} in ball arithmetic (supported: rationals, +, *, powers, exp, log, sqrt)")


def arb_matrix(M: Any) -> flint.arb_mat:
    """The matrix as balls (at the current precision); accepts an ``arb_mat`` unchanged."""
    if isinstance(M, flint.arb_mat):
        return M
    M = _matrix(M, "the matrix")
    return flint.arb_mat(M.rows, M.cols, [to_arb(x) for x in M])


@dataclass(frozen=True)
class MinorCertificate:
    """Proof that rank >= ``size``: the minor on ``rows`` x ``cols`` has determinant ``det``
    (a ball, as text) computed at ``precision`` bits; ``excludes_zero`` is the verdict."""

    size: int
    rows: tuple[int, ...]
    cols: tuple[int, ...]
    det: str
    precision: int
    excludes_zero: bool


def _midpoints(A: flint.arb_mat) -> np.ndarray:
    return np.array([[float(A[i, j].mid()) for j in range(A.ncols())] for i in range(A.nrows())], dtype=float)


def _pivots(F: np.ndarray, r: int) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """Rows and columns of a well-conditioned r x r minor, by elimination with complete pivoting."""
    A = F.copy()
    rows, cols = list(range(A.shape[0])), list(range(A.shape[1]))
    chosen_r, chosen_c = [], []
    for _ in range(r):
        sub = np.abs(A[np.ix_(rows, cols)])
        if sub.size == 0 or sub.max() == 0:
            break
        i, j = np.unravel_index(int(np.argmax(sub)), sub.shape)
        pr, pc = rows[i], cols[j]
        chosen_r.append(pr)
        chosen_c.append(pc)
        rows.remove(pr)
        cols.remove(pc)
        for rr in rows:
            A[rr, :] -= A[rr, pc] / A[pr, pc] * A[pr, :]
    return tuple(sorted(chosen_r)), tuple(sorted(chosen_c))


def certify_rank_at_least(M: Any, r: int, precisions: tuple[int, ...] = (128, 256, 512, 1024)) -> MinorCertificate:
    """Try to prove rank(M) >= r with an r x r minor whose determinant ball excludes 0.

    ``M`` is a SymPy matrix (exact entries) or a function ``prec -> arb_mat`` giving the
    matrix as balls at a precision.  The returned certificate says whether it succeeded.
    """
    if isinstance(r, bool) or not isinstance(r, (int, np.integer)) or r < 0:
        raise InputError(f"certify_rank_at_least: r must be a non-negative integer, got {r!r}")
    if not callable(M) and not isinstance(M, flint.arb_mat):
        M = _matrix(M, "certify_rank_at_least's matrix")
    for k, prec in enumerate(precisions):
        with working_precision(prec):
            A = M(prec) if callable(M) else arb_matrix(M)
            if r == 0:
                return MinorCertificate(0, (), (), "1", prec, True)
            if r > min(A.nrows(), A.ncols()):
                raise InputError(f"rank {r} is impossible for a {A.nrows()} x {A.ncols()} matrix")
            rows, cols = _pivots(_midpoints(A), r)
            if len(rows) < r:
                return MinorCertificate(r, rows, cols, "0", prec, False)
            minor = flint.arb_mat(r, r, [A[i, j] for i in rows for j in cols])
            det = minor.det()
            cert = MinorCertificate(r, rows, cols, det.str(10, radius=True), prec, not det.contains(0))
            if cert.excludes_zero or k == len(precisions) - 1:
                return cert
    raise InputError("certify_rank_at_least needs at least one precision (bits) to try")


def certified_rank(M: Any, upper: int) -> tuple[int, MinorCertificate | None]:
    """A certified lower bound on the rank, trying ``upper`` (a proven bound) first.

    If an ``upper x upper`` minor is certified, ``upper + 1`` is tried as well (when it
    fits the shape): a sound bound can never be exceeded, so a certified
    ``(upper + 1) x (upper + 1)`` minor proves the bound wrong, and that size is returned
    with its certificate (callers then see attained > bound).  If no ``upper x upper``
    minor is certified, the floating-point numerical rank proposes a smaller size, which
    is certified in turn (halving on failure).  Returns the size reached and its
    certificate (``(0, None)`` if nothing could be certified)."""
    cert = certify_rank_at_least(M, upper) if upper > 0 else None
    if upper == 0 or (cert is not None and cert.excludes_zero):
        with working_precision(128):
            A = M(128) if callable(M) else arb_matrix(M)
            fits = upper + 1 <= min(A.nrows(), A.ncols())
        if fits:
            above = certify_rank_at_least(M, upper + 1)
            if above.excludes_zero:
                return upper + 1, above
        return upper, cert
    with working_precision(128):
        A = M(128) if callable(M) else arb_matrix(M)
        guess = min(upper - 1, numerical_rank(_midpoints(A), 1e-12).rank)
    while guess > 0:
        cert = certify_rank_at_least(M, guess)
        if cert.excludes_zero:
            return guess, cert
        guess //= 2
    return 0, None


@dataclass(frozen=True)
class NumericalRank:
    """Numerical evidence only: singular values and how many exceed ``tol * s_max``."""

    rank: int
    tolerance: float
    singular_values: tuple[float, ...]
    label: str = "numerical evidence (floating-point SVD), not a proof"


def numerical_rank(M: Any, tol: float | None = None) -> NumericalRank:
    """Count singular values above ``tol`` times the largest (relative tolerance).

    By default ``tol`` follows the matrix's dtype: ``max(m, n) * eps`` for float16/float32 arrays (their entries
    carry 11 or 24 bits, so float64's default would count rounding noise as rank), ``1e-10`` otherwise.

    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> P = rng.normal(size=(64, 3)).astype(np.float32) @ rng.normal(size=(3, 64)).astype(np.float32)
    >>> numerical_rank(P).rank, numerical_rank(P.astype(np.float64)).rank > 60   # rank 3, rounded in float32
    (3, True)
    """
    source = getattr(M, "dtype", None)
    if tol is None:
        low = isinstance(source, np.dtype) and source.kind == "f" and source.itemsize < 8
        tol = max(np.shape(M) or (1,)) * float(np.finfo(source).eps) if low else 1e-10
    try:
        A = np.asarray(M, dtype=float)
    except (ValueError, TypeError) as e:
        raise InputError(f"numerical_rank needs a rectangular matrix of real numbers: {e}") from None
    if A.ndim != 2:
        raise InputError(f"numerical_rank needs a 2-D matrix, got shape {A.shape}")
    if not np.isfinite(A).all():
        bad = tuple(int(i) for i in np.argwhere(~np.isfinite(A))[0])
        raise InputError(f"numerical_rank: the matrix contains NaN or inf (first at index {bad})")
    if isinstance(tol, bool) or not isinstance(tol, (int, float, np.floating)) or not 0 <= tol < 1:
        raise InputError(f"numerical_rank: tol must be a number in [0, 1), got {tol!r}")
    s = np.linalg.svd(A, compute_uv=False)
    cutoff = tol * (s[0] if s.size else 0.0)
    return NumericalRank(int((s > cutoff).sum()), tol, tuple(float(x) for x in s))


def exact_dyadic(A: np.ndarray) -> ImmutableMatrix:
    """A float array as the exact dyadic rationals it stores (not the decimals it prints).

    >>> exact_dyadic(np.array([[0.1, 0.5]]))
    Matrix([[3602879701896397/36028797018963968, 1/2]])
    >>> exact_dyadic([[1.0]])
    Traceback (most recent call last):
    ...
    mha_symbolic.errors.InputError: exact_dyadic's A must be a 2-D NumPy float array, got list
    """
    from fractions import Fraction

    require(A, np.ndarray, "exact_dyadic's A", "a 2-D NumPy float array")
    if A.ndim != 2 or A.dtype.kind not in "fiu":
        raise InputError(f"exact_dyadic's A must be a 2-D NumPy float array, got shape {A.shape} of {A.dtype}")
    if not np.all(np.isfinite(A)):
        raise InputError("exact_dyadic's A has a NaN or infinite entry")

    return ImmutableMatrix(A.shape[0], A.shape[1],
                           [Rational(Fraction(float(x)).numerator, Fraction(float(x)).denominator) for x in A.ravel()])

