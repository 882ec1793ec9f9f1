"""Plain-text rendering of matrix expressions for messages: ``Q_1 = X_head1 W_Q^1``.

SymPy's ``str`` writes ``X*W_Q^1``; error messages read better in the textbook form
with juxtaposition and ``^T``.  This is a small :class:`~sympy.printing.str.StrPrinter`
subclass, not a new printer.
"""

from __future__ import annotations

from typing import Any

from sympy import MatMul
from sympy.printing.str import StrPrinter


class _TextPrinter(StrPrinter):
    def _print_MatMul(self, expr: MatMul) -> str:
        coeff, factors = expr.as_coeff_matrices()
        parts = [self.parenthesize(f, 45) for f in factors]
        text = " ".join(parts)
        if coeff == 1:
            return text
        inverse = 1 / coeff
        if inverse.is_Pow or (inverse**2).is_Integer and not inverse.is_Integer:
            return f"{text} / {self._print(inverse)}"  # S_1 / sqrt(2), S_1 / sqrt(d_k)
        return f"{self._print(coeff)} {text}"

    def _print_MatrixSlice(self, expr: Any) -> str:
        def part(sl: Any, size: Any) -> str:
            start, stop, step = sl
            if start == 0 and stop == size and step == 1:
                return ":"
            return f"{self._print(start)}:{self._print(stop)}" + (f":{self._print(step)}" if step != 1 else "")

        parent = expr.parent
        return f"{self._print(parent)}[{part(expr.rowslice, parent.rows)}, {part(expr.colslice, parent.cols)}]"

    def _print_Transpose(self, expr: Any) -> str:
        return f"{self.parenthesize(expr.arg, 60)}^T"


def text(expr: Any) -> str:
    """Render ``expr`` for a message.

    >>> from sympy import MatrixSymbol, sqrt, Symbol
    >>> Q, K = MatrixSymbol("Q_1", 8, 2), MatrixSymbol("K_1", 8, 2)
    >>> text(Q * K.T / sqrt(Symbol("d_k"))), text(Q * K.T / sqrt(2))
    ('Q_1 K_1^T / sqrt(d_k)', 'Q_1 K_1^T / sqrt(2)')
    >>> text(MatrixSymbol("X", 8, 4)[:, 2:4])
    'X[:, 2:4]'
    """
    return _TextPrinter().doprint(expr)


def shape_text(shape: tuple[Any, Any]) -> str:
    """``(8, 2)`` for a shape tuple (SymPy integers print without ``Integer(...)``)."""
    return f"({text(shape[0])}, {text(shape[1])})"
