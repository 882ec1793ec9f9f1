r"""Concatenation of head outputs along the feature (column) axis.

Explanation
===========

``Concat(head_1, ..., head_h)`` places blocks side by side; it is shape-checked
(all blocks need the same number of rows) and evaluates to an explicit matrix when
every block is explicit.  For a symbolic number of heads, ``ConcatHeads(template, i, h)``
stands for ``Concat(template|_{i=1}, ..., template|_{i=h})`` and prints with dots; for
an integer ``h`` its ``doit()`` gives the explicit :class:`Concat`.

Examples
========

>>> from sympy import MatrixSymbol, Symbol, Matrix, latex
>>> from mha_symbolic.concat import Concat, ConcatHeads
>>> n, d = Symbol("n"), Symbol("d_v")
>>> C = Concat(MatrixSymbol("head_1", n, d), MatrixSymbol("head_2", n, d))
>>> C.shape
(n, 2*d_v)
>>> latex(C)
'\\mathrm{Concat}(head_{1}, head_{2})'
>>> Concat(Matrix([[1, 2]]), Matrix([[3]])).doit()
Matrix([[1, 2, 3]])
>>> from mha_symbolic.heads import HeadMatrix
>>> i, h = Symbol("i"), Symbol("h")
>>> X = MatrixSymbol("X", n, 4)
>>> latex(ConcatHeads(X * HeadMatrix("W_V", 4, d, i), i, h))
'\\mathrm{Concat}(X W_1^{V}, \\dots, X W_h^{V})'
"""

from __future__ import annotations

from typing import Any

from sympy import Add, Basic, ImmutableMatrix, Matrix
from sympy.matrices import MatrixBase
from sympy.matrices.expressions import BlockMatrix, MatrixExpr

from ._convert import as_sympy
from .errors import InputError, ShapeError
from .latex import LatexReprMixin

__all__ = ["Concat", "ConcatHeads"]


class Concat(LatexReprMixin, MatrixExpr):
    """Blocks side by side: ``[B_1  B_2  ...  B_h]``, unevaluated.

    See Also
    ========

    ConcatHeads : the same for a symbolic number of heads.
    """

    def __new__(cls, *blocks: Any) -> Concat:
        if not blocks:
            raise InputError("Concat needs at least one block")
        blocks = tuple(as_sympy(b) for b in blocks)
        for b in blocks:
            if not getattr(b, "is_Matrix", False):
                raise InputError(f"Concat blocks must be matrices, got {b!r}")
        rows = {as_sympy(b.shape[0]) for b in blocks}
        if len(rows) > 1 and all(r.is_Integer for r in rows):
            raise ShapeError(f"Concat: blocks have different row counts {sorted(int(r) for r in rows)}")
        return Basic.__new__(cls, *blocks)

    @property
    def blocks(self) -> tuple[Any, ...]:
        return self.args

    @property
    def shape(self) -> tuple[Any, Any]:
        return (self.args[0].shape[0], Add(*[b.shape[1] for b in self.args]))

    def as_block_matrix(self) -> BlockMatrix:
        """The same matrix as a SymPy :class:`~sympy.matrices.expressions.BlockMatrix` (one block row)."""
        return BlockMatrix([list(self.args)])

    def _entry(self, i: Any, j: Any, **kwargs: Any) -> Any:
        return self.as_block_matrix()._entry(i, j, **kwargs)

    def doit(self, **hints: Any) -> Any:
        blocks = [b.doit(**hints) for b in self.args] if hints.get("deep", True) else list(self.args)
        if all(isinstance(b, MatrixBase) for b in blocks):
            return ImmutableMatrix(Matrix.hstack(*blocks))
        return self.func(*blocks)

    def _latex(self, printer: Any) -> str:
        return r"\mathrm{Concat}(%s)" % ", ".join(printer._print(b) for b in self.args)

    def _sympystr(self, printer: Any) -> str:
        return "Concat(%s)" % ", ".join(printer._print(b) for b in self.args)


class ConcatHeads(LatexReprMixin, MatrixExpr):
    """``Concat(template_{i=1}, ..., template_{i=h})`` for a possibly symbolic ``h``.

    Parameters
    ==========

    template : matrix expression in the head index ``i``
    index : Symbol ``i``
    h : number of heads (integer or symbol)
    """

    def __new__(cls, template: Any, index: Any, h: Any) -> ConcatHeads:
        return Basic.__new__(cls, as_sympy(template), as_sympy(index), as_sympy(h))

    template = property(lambda self: self.args[0])
    index = property(lambda self: self.args[1])
    h = property(lambda self: self.args[2])

    @property
    def shape(self) -> tuple[Any, Any]:
        t = self.template
        return (t.shape[0], self.h * t.shape[1])

    def head(self, k: Any) -> Any:
        """The block of head ``k`` (1-based)."""
        return self.template.subs(self.index, k)

    def doit(self, **hints: Any) -> Any:
        if self.h.is_Integer:
            return Concat(*[self.head(k) for k in range(1, int(self.h) + 1)]).doit(**hints)
        return self

    def _latex(self, printer: Any) -> str:
        if self.h.is_Integer and self.h <= 3:
            return r"\mathrm{Concat}(%s)" % ", ".join(printer._print(self.head(k)) for k in range(1, int(self.h) + 1))
        first, last = printer._print(self.head(1)), printer._print(self.head(self.h))
        return r"\mathrm{Concat}(%s, \dots, %s)" % (first, last)

    def _sympystr(self, printer: Any) -> str:
        return "Concat(%s, ..., %s)" % (printer._print(self.head(1)), printer._print(self.head(self.h)))

