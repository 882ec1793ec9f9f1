r"""The scaled scores ``S / sqrt(d_k)`` as one matrix expression.

Explanation
===========

``ScaledScores(S, d_k)`` keeps the scaling visible: it prints as
``\frac{S}{\sqrt{d_k}}`` (SymPy would print ``\frac{1}{\sqrt{d_k}} S``, or with
``d_k = d_model/h`` substituted, ``\frac{\sqrt{h}}{\sqrt{d_{model}}} S``), keeps ``d_k``
named, and ``doit()`` gives the plain scalar product.

Examples
========

>>> from sympy import MatrixSymbol, Symbol, Matrix, latex
>>> from mha_symbolic.scaling import ScaledScores
>>> d_k = Symbol("d_k", positive=True)
>>> S = MatrixSymbol("S", 3, 3)
>>> latex(ScaledScores(S, d_k))
'\\frac{S}{\\sqrt{d_{k}}}'
>>> ScaledScores(S, d_k).doit()
1/sqrt(d_k)*S
>>> ScaledScores(Matrix([[1, 0]]), 2).doit()
Matrix([[sqrt(2)/2, 0]])
"""

from __future__ import annotations

from typing import Any

from sympy import Basic, ImmutableMatrix, MatMul, sqrt
from sympy.matrices import MatrixBase
from sympy.matrices.expressions import MatrixExpr

from ._convert import as_sympy
from .errors import InputError
from .latex import LatexReprMixin

__all__ = ["ScaledScores"]


class ScaledScores(LatexReprMixin, MatrixExpr):
    """``S / sqrt(d)``, unevaluated: the scores divided by the square root of the key width.

    Parameters
    ==========

    scores : matrix expression ``S``
    d : the key width ``d_k`` (a symbol or a positive integer)
    """

    def __new__(cls, scores: Any, d: Any) -> ScaledScores:
        scores, d = as_sympy(scores), as_sympy(d)
        if not getattr(scores, "is_Matrix", False):
            raise InputError(f"ScaledScores needs a matrix, got {scores!r}")
        return Basic.__new__(cls, scores, d)

    scores = property(lambda self: self.args[0], doc="the unscaled scores S")
    d = property(lambda self: self.args[1], doc="the width whose square root divides")

    @property
    def shape(self) -> tuple[Any, Any]:
        return self.scores.shape

    @property
    def factor(self) -> Any:
        """The scalar ``1/sqrt(d)``."""
        return 1 / sqrt(self.d)

    def _entry(self, i: Any, j: Any, **kwargs: Any) -> Any:
        return self.factor * self.scores[i, j]

    def doit(self, **hints: Any) -> Any:
        scores = self.scores.doit(**hints) if hints.get("deep", True) else self.scores
        if isinstance(scores, MatrixBase):
            return ImmutableMatrix(scores.applyfunc(lambda x: self.factor * x))
        return MatMul(self.factor, scores).doit(deep=False)

    def _latex(self, printer: Any) -> str:
        return r"\frac{%s}{\sqrt{%s}}" % (printer._print(self.scores), printer._print(self.d))

    def _sympystr(self, printer: Any) -> str:
        return f"{printer.parenthesize(self.scores, 50, strict=True)} / sqrt({printer._print(self.d)})"
