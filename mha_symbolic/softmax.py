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

from typing import Any

from sympy import Add, Basic, Dummy, ImmutableMatrix, Piecewise, StrictGreaterThan, Sum, exp
from sympy.logic.boolalg import BooleanAtom, false, true
from sympy.matrices import MatrixBase
from sympy.matrices.expressions import MatrixExpr

from ._convert import as_sympy
from .errors import InputError
from .latex import LatexReprMixin

__all__ = ["Softmax", "softmax", "explicit_softmax"]


def explicit_softmax(M: Any, causal: bool = False) -> ImmutableMatrix:
    """Row-wise softmax of an explicit matrix, entries exact (``exp`` kept symbolic).

    >>> from sympy import Matrix
    >>> explicit_softmax(Matrix([[0, 0]]))
    Matrix([[1/2, 1/2]])
    """
    M = ImmutableMatrix(M)
    rows = []
    for i in range(M.rows):
        stop = min(i + 1, M.cols) if causal else M.cols
        exps = [exp(M[i, j]) for j in range(stop)]
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

    See Also
    ========

    softmax : the evaluating function.
    """

    def __new__(cls, arg: Any, causal: Any = False) -> Softmax:
        arg = as_sympy(arg)
        if not getattr(arg, "is_Matrix", False):
            raise InputError(f"softmax needs a matrix, got {arg!r}")
        if not isinstance(causal, (BooleanAtom, bool, int)) or isinstance(causal, int) and causal not in (0, 1):
            raise InputError(f"causal must be True or False, got {causal!r}")
        flag = causal if isinstance(causal, BooleanAtom) else (true if causal else false)
        return Basic.__new__(cls, arg, flag)

    @property
    def arg(self) -> Any:
        return self.args[0]

    @property
    def causal(self) -> bool:
        return bool(self.args[1])

    @property
    def shape(self) -> tuple[Any, Any]:
        return self.arg.shape

    def _entry(self, i: Any, j: Any, **kwargs: Any) -> Any:
        k = Dummy("k", integer=True)
        last = i if self.causal else self.arg.shape[1] - 1
        value = exp(self.arg[i, j]) / Sum(exp(self.arg[i, k]), (k, 0, last))
        if self.causal:
            return Piecewise((0, StrictGreaterThan(j, i)), (value, True))
        return value

    def doit(self, **hints: Any) -> Any:
        arg = self.arg.doit(**hints) if hints.get("deep", True) else self.arg
        if isinstance(arg, MatrixBase):
            return explicit_softmax(arg, self.causal)
        return self.func(arg, self.args[1])

    def _latex(self, printer: Any) -> str:
        name = r"\mathrm{softmax}_{\mathrm{causal}}" if self.causal else r"\mathrm{softmax}"
        return rf"{name}\left({printer._print(self.arg)}\right)"

    def _sympystr(self, printer: Any) -> str:
        name = "causal_softmax" if self.causal else "softmax"
        return f"{name}({printer._print(self.arg)})"


def softmax(S: Any, causal: bool = False) -> Any:
    """Evaluate the row-wise softmax: explicit when ``S`` is explicit, else ``Softmax(S)``.

    >>> from sympy import Matrix
    >>> softmax(Matrix([[0, 0], [0, 0]]), causal=True)
    Matrix([
    [  1,   0],
    [1/2, 1/2]])
    """
    return Softmax(S, causal).doit()
