r"""Row-wise softmax as a SymPy matrix expression, with an optional causal mask.

Explanation
===========

``Softmax(S)`` holds the expression unevaluated and keeps the shape of ``S``;
``softmax(S) = Softmax(S).doit()`` evaluates it when ``S`` is an explicit matrix::

    softmax(S)_{ij} = exp(s_ij) / sum_k exp(s_ik)

With ``causal=True`` entry ``(i, j)`` with ``j > i`` is exactly ``0`` and each row
is normalised over ``k <= i`` only (the masked softmax of decoder self-attention).
Entries stay exact: ``exp`` of a rational or of ``sqrt(2)/2`` is kept symbolic.

Examples
========

>>> from sympy import Matrix, MatrixSymbol, Symbol, sqrt, latex
>>> from mha_symbolic.softmax import Softmax, softmax
>>> softmax(Matrix([[sqrt(2)/2, 0]]))
Matrix([[exp(sqrt(2)/2)/(1 + exp(sqrt(2)/2)), 1/(1 + exp(sqrt(2)/2))]])
>>> softmax(Matrix([[1, 2], [3, 4]]), causal=True)[0, :]
Matrix([[1, 0]])
>>> n = Symbol("n", integer=True, positive=True)
>>> S = MatrixSymbol("S", n, n)
>>> Softmax(S).shape
(n, n)
>>> latex(Softmax(S))
'\\mathrm{softmax}\\left(S\\right)'
>>> Softmax(S)[0, 1]
exp(S[0, 1])/Sum(exp(S[0, _k]), (_k, 0, n - 1))
"""

from __future__ import annotations

import sys
from typing import Any

from sympy import Add, Basic, Dummy, ImmutableMatrix, Piecewise, StrictGreaterThan, Sum, exp
from sympy.logic.boolalg import BooleanAtom, false, true
from sympy.matrices import MatrixBase
from sympy.matrices.expressions import MatrixExpr

from ._convert import as_sympy
from .errors import InputError, MaskError, ShapeError, require
from .latex import LatexReprMixin

__all__ = ["Softmax", "softmax", "explicit_softmax"]


def _explicit(M: Any, what: str) -> ImmutableMatrix:
    """``M`` as an explicit matrix whose entries are numbers or SymPy expressions (``-oo`` allowed); text is
    refused entry by entry (SymPy's ``Matrix`` would ``sympify`` it), a ragged or empty list is named."""
    if isinstance(M, MatrixBase):
        return ImmutableMatrix(M)
    np = sys.modules.get("numpy")  # an array exists only if NumPy was imported: the model itself does not need it
    if np is not None and isinstance(M, np.ndarray):
        M = M.tolist()
    require(M, (list, tuple), what, "a matrix (a SymPy Matrix, nested lists or a NumPy array)")
    rows = [r.tolist() if np is not None and isinstance(r, np.ndarray) else r for r in M]
    if not rows or not all(isinstance(r, (list, tuple)) for r in rows) or len({len(r) for r in rows}) != 1 \
            or not rows[0]:
        raise InputError(f"{what} must be a non-empty list of rows of equal length")
    return ImmutableMatrix([[as_sympy(x, f"{what} entry ({i + 1}, {j + 1})") for j, x in enumerate(r)]
                            for i, r in enumerate(rows)])


def explicit_softmax(M: Any, causal: bool = False, keep: Any = None) -> ImmutableMatrix:
    """Row-wise softmax of an explicit matrix, entries exact (``exp`` kept symbolic).

    ``keep`` is a key-padding row of 0/1 weights (1 = attend): entry ``(i, j)`` is
    ``keep_j exp(s_ij) / sum_k keep_k exp(s_ik)``.  Entries ``-oo`` (an additive mask) get weight 0.  A row
    with no key left is an error (:class:`~mha_symbolic.errors.MaskError`), not ``nan``.

    >>> from sympy import Matrix, oo
    >>> explicit_softmax(Matrix([[0, 0]]))
    Matrix([[1/2, 1/2]])
    >>> explicit_softmax(Matrix([[0, 0, 5]]), keep=Matrix([[1, 1, 0]]))
    Matrix([[1/2, 1/2, 0]])
    >>> explicit_softmax(Matrix([[0, -oo]]))
    Matrix([[1, 0]])
    >>> explicit_softmax(Matrix([[1, 2]]), keep=Matrix([[0, 0]]))
    Traceback (most recent call last):
    ...
    mha_symbolic.errors.MaskError: softmax of a fully masked row: row 1 has no key left to attend to
    (key padding m = [0, 0])
    """
    M = _explicit(M, "explicit_softmax's scores")
    weights = None
    if keep is not None:
        keep = _explicit(keep, "explicit_softmax's key-padding row")
        if keep.shape != (1, M.cols):
            raise ShapeError(f"the key-padding row has shape {keep.shape}; the scores have {M.cols} keys, so it "
                             f"must be (1, {M.cols})")
        bad = [x for x in keep if x not in (0, 1)]
        if bad:
            raise InputError(f"the key-padding row must hold 0 (masked) or 1 (attend), got {bad[0]}")
        weights = list(keep)
    rows = []
    for i in range(M.rows):
        stop = min(i + 1, M.cols) if causal else M.cols
        exps = [exp(M[i, j]) if weights is None or weights[j] else as_sympy(0) for j in range(stop)]
        if all(e == 0 for e in exps):
            why = f" (key padding m = {list(weights)})" if weights is not None else \
                " (every score is -oo)" if stop == M.cols else " (the causal mask leaves keys with score -oo)"
            raise MaskError(f"softmax of a fully masked row: row {i + 1} has no key left to attend to{why}")
        total = Add(*exps)
        rows.append([e / total for e in exps] + [as_sympy(0)] * (M.cols - stop))
    return ImmutableMatrix(M.rows, M.cols, [x for r in rows for x in r])


class Softmax(LatexReprMixin, MatrixExpr):
    """Row-wise softmax of a matrix expression, unevaluated; ``causal`` masks ``j > i``.

    Parameters
    ==========

    arg : matrix expression
        The (scaled) scores.
    causal : bool
        Mask future positions: weight exactly ``0`` for ``j > i``.
    keep : ``1 x c`` matrix expression, optional
        A key-padding row of 0/1 weights (1 = attend): entry ``(i, j)`` is
        ``keep_j exp(s_ij) / sum_k keep_k exp(s_ik)``.  (An additive mask is just ``Softmax(S + M)``.)

    See Also
    ========

    softmax : the evaluating function.
    """

    def __new__(cls, arg: Any, causal: Any = False, keep: Any = None) -> Softmax:
        arg = as_sympy(arg)
        if not getattr(arg, "is_Matrix", False):
            raise InputError(f"softmax needs a matrix, got {arg!r}")
        if not isinstance(causal, (BooleanAtom, bool, int)) or isinstance(causal, int) and causal not in (0, 1):
            raise InputError(f"causal must be True or False, got {causal!r}")
        flag = causal if isinstance(causal, BooleanAtom) else (true if causal else false)
        if keep is None:
            return Basic.__new__(cls, arg, flag)
        keep = as_sympy(keep)
        if not getattr(keep, "is_Matrix", False) or keep.shape[0] != 1:
            raise InputError(f"the key-padding mask must be a 1 x c row, got {keep!r}")
        if as_sympy(keep.shape[1] - arg.shape[1]).is_zero is False:
            raise ShapeError(f"the key-padding row has {keep.shape[1]} entries but the scores have "
                             f"{arg.shape[1]} keys")
        return Basic.__new__(cls, arg, flag, keep)

    @property
    def arg(self) -> Any:
        return self.args[0]

    @property
    def causal(self) -> bool:
        return bool(self.args[1])

    @property
    def keep(self) -> Any:
        """The key-padding row (``None`` without one)."""
        return self.args[2] if len(self.args) > 2 else None

    @property
    def shape(self) -> tuple[Any, Any]:
        return self.arg.shape

    def _entry(self, i: Any, j: Any, **kwargs: Any) -> Any:
        k = Dummy("k", integer=True)
        last = i if self.causal else self.arg.shape[1] - 1
        if self.keep is not None:
            m = self.keep
            value = m[0, j] * exp(self.arg[i, j]) / Sum(m[0, k] * exp(self.arg[i, k]), (k, 0, last))
        else:
            value = exp(self.arg[i, j]) / Sum(exp(self.arg[i, k]), (k, 0, last))
        if self.causal:
            return Piecewise((0, StrictGreaterThan(j, i)), (value, True))
        return value

    def doit(self, **hints: Any) -> Any:
        arg = self.arg.doit(**hints) if hints.get("deep", True) else self.arg
        keep = self.keep.doit(**hints) if self.keep is not None and hints.get("deep", True) else self.keep
        if isinstance(arg, MatrixBase) and (keep is None or isinstance(keep, MatrixBase)):
            return explicit_softmax(arg, self.causal, keep)
        return self.func(arg, self.args[1], keep)

    def _latex(self, printer: Any) -> str:
        marks = ([r"\mathrm{causal}"] if self.causal else []) + ([printer._print(self.keep)] if self.keep is not None
                                                                 else [])
        name = r"\mathrm{softmax}" + (r"_{%s}" % r",\,".join(marks) if marks else "")
        return rf"{name}\left({printer._print(self.arg)}\right)"

    def _sympystr(self, printer: Any) -> str:
        name = "causal_softmax" if self.causal else "softmax"
        keep = f", keep={printer._print(self.keep)}" if self.keep is not None else ""
        return f"{name}({printer._print(self.arg)}{keep})"


def softmax(S: Any, causal: bool = False) -> Any:
    """Evaluate the row-wise softmax: explicit when ``S`` is explicit, else ``Softmax(S)``.

    >>> from sympy import Matrix
    >>> softmax(Matrix([[0, 0], [0, 0]]), causal=True)
    Matrix([
    [  1,   0],
    [1/2, 1/2]])
    """
    return Softmax(S, causal).doit()
