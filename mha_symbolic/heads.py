"""Per-head matrices: ``W_Q^i``, ``W_K^i``, ``W_V^i`` with the head index held in ``args``.

Explanation
===========

A :class:`HeadMatrix` is a :class:`~sympy.matrices.expressions.MatrixSymbol` whose
head index is an argument, so ``expr.subs(i, 2)`` turns ``W_Q^i`` into ``W_Q^2``
structurally (no string surgery), and a symbolic ``i`` can stand for any head.

Examples
========

>>> from sympy import Symbol, latex
>>> from mha_symbolic.heads import HeadMatrix
>>> i = Symbol("i", integer=True, positive=True)
>>> W = HeadMatrix("W_Q", 4, 2, i)
>>> W, W.shape, W.subs(i, 2)
(W_Q^i, (4, 2), W_Q^2)
>>> latex(W.subs(i, 2))
'W_2^{Q}'
>>> W.func(*W.args) == W
True
>>> HeadMatrix("Q", 8, 2, 1, "sub"), HeadMatrix("X_head", 8, 2, 1, "plain")
(Q_1, X_head1)
"""

from __future__ import annotations

from typing import Any

from sympy import Basic, MatrixSymbol
from sympy.core.symbol import Str

from ._convert import as_sympy
from .latex import LatexReprMixin, notation_of, sub

__all__ = ["HeadMatrix", "ModelMatrix"]

_STYLES = {"sup": "{base}^{index}", "sub": "{base}_{index}", "plain": "{base}{index}"}


class HeadMatrix(LatexReprMixin, MatrixSymbol):
    """A named matrix of one head: ``base^index`` with shape ``rows x cols``.

    Parameters
    ==========

    base : str
        ``"W_Q"``, ``"W_K"``, ``"W_V"`` (or any name).
    rows, cols : dimension expressions
    index : the head index, an integer ``1..h`` or a symbol ``i``
    style : ``"sup"`` (``W_Q^1``), ``"sub"`` (``Q_1``) or ``"plain"`` (``X_head1``)
    """

    def __new__(cls, base: Any, rows: Any, cols: Any, index: Any, style: Any = "sup") -> HeadMatrix:
        base = Str(base) if isinstance(base, str) else base
        style = Str(style) if isinstance(style, str) else style
        if style.name not in _STYLES:
            raise ValueError(f"HeadMatrix style must be one of {sorted(_STYLES)}, got {style.name!r}")
        return Basic.__new__(cls, base, as_sympy(rows), as_sympy(cols), as_sympy(index), style)

    @property
    def shape(self) -> tuple[Any, Any]:
        return (self.args[1], self.args[2])

    @property
    def base(self) -> str:
        return self.args[0].name

    @property
    def index(self) -> Any:
        return self.args[3]

    @property
    def name(self) -> str:  # type: ignore[override]
        style = self.args[4].name
        if style == "plain" and not self.index.is_Integer:
            style = "sub"  # X_head_i for a symbolic head index
        return _STYLES[style].format(base=self.base, index=self.index)

    def _hashable_content(self) -> tuple[Any, ...]:
        return self.args

    def _latex(self, printer: Any) -> str:
        index = printer._print(self.index)
        style, base = self.args[4].name, self.base
        if style == "sup":
            if base[:2] in ("W_", "b_") and len(base) > 2:
                return notation_of(printer).head(base[0], base[2:], index)
            return f"{base}^{{{index}}}"
        if style == "plain":  # X_head1: the head's block of X
            return f"{base[0]}{sub(index)}"
        name = r"\mathrm{head}" if base == "head" else base
        return f"{name}{sub(index)}"

    def as_symbol(self) -> MatrixSymbol:
        """A plain :class:`MatrixSymbol` with an identifier name (``W_Q_1``), e.g. for lambdify."""
        return MatrixSymbol(f"{self.base}_{self.index}", *self.shape)


class ModelMatrix(LatexReprMixin, MatrixSymbol):
    r"""A named matrix of the whole model (``X``, ``W_O``, ``b_O``, ``Concat``, ``Output``).

    A plain :class:`MatrixSymbol` whose LaTeX follows the notation (``W^{O}`` or ``W_O``)
    and shows the step names upright (``\mathrm{Concat}``).

    >>> from sympy import latex
    >>> latex(ModelMatrix("W_O", 4, 4)), latex(ModelMatrix("Concat", 2, 4))
    ('W^{O}', '\\mathrm{Concat}')
    """

    def _latex(self, printer: Any) -> str:
        name = self.name
        if name in ("W_O", "b_O"):
            return notation_of(printer).out(name[0])
        if name in ("Concat", "Output"):
            return r"\mathrm{%s}" % name
        return printer._print_Symbol(self) if hasattr(printer, "_print_Symbol") else name
