from __future__ import annotations

import pytest
from sympy import BlockMatrix, Matrix, MatrixSymbol, Symbol, latex

from mha_symbolic import Concat, ConcatHeads, HeadMatrix, InputError, ShapeError


def test_shape_and_block_matrix():
    n, d = Symbol("n"), Symbol("d_v")
    a, b = MatrixSymbol("a", n, d), MatrixSymbol("b", n, d)
    C = Concat(a, b)
    assert C.shape == (n, 2 * d)
    assert C.as_block_matrix() == BlockMatrix([[a, b]])
    assert C.func(*C.args) == C


def test_explicit_hstack():
    assert Concat(Matrix([[1, 2], [3, 4]]), Matrix([[5], [6]])).doit() == Matrix([[1, 2, 5], [3, 4, 6]])


def test_row_mismatch_refused():
    with pytest.raises(ShapeError, match="different row counts"):
        Concat(Matrix([[1]]), Matrix([[1], [2]]))
    with pytest.raises(InputError):
        Concat()


def test_concat_heads_symbolic_and_doit():
    i, h = Symbol("i", integer=True, positive=True), Symbol("h", integer=True, positive=True)
    X = MatrixSymbol("X", 3, 4)
    C = ConcatHeads(X * HeadMatrix("W_V", 4, 2, i), i, h)
    assert C.shape == (3, 2 * h)
    assert latex(C) == r"\mathrm{Concat}(X W_1^{V}, \dots, X W_h^{V})"
    assert C.func(*C.args) == C
    C2 = ConcatHeads(X * HeadMatrix("W_V", 4, 2, i), i, 2).doit()
    assert C2 == Concat(X * HeadMatrix("W_V", 4, 2, 1), X * HeadMatrix("W_V", 4, 2, 2))
