from __future__ import annotations

import pytest
from sympy import Eq, MatrixSymbol

from mha_symbolic import Dims, ShapeError
from mha_symbolic._shape import check_matmul, check_same_rows, checked_matmul, matmul_condition


def test_condition_levels():
    D = Dims()
    assert matmul_condition((D.n, D.d_model), (D.d_model, D.d_k), D) is True
    assert matmul_condition((D.n, D.h * D.d_k), (D.d_model, D.d_k), D) is True  # uses d_k = d_model/h
    assert matmul_condition((8, 2), (4, 2)) is False
    assert matmul_condition((D.n, D.d_k), (D.n, D.d_k), D) == Eq(D.d_k, D.n)


def test_sympy_accepts_what_we_refuse():
    D = Dims()
    X = MatrixSymbol("X", D.n, D.d_model)
    assert (X * X).shape == (D.n, D.d_model)  # SymPy 1.14 does not object ...
    assert check_matmul("X X", X.shape, X.shape, D) == [Eq(D.d_model, D.n)]  # ... we return the condition


def test_concrete_mismatch_names_step_and_shapes():
    with pytest.raises(ShapeError) as info:
        check_matmul("Q_1 = X_head1 W_Q^1", (8, 2), (4, 2))
    assert str(info.value) == "step Q_1 = X_head1 W_Q^1: (8, 2) x (4, 2) — inner dimensions 2 and 4 differ"


def test_checked_matmul_chain_with_scalar():
    A, B, C = MatrixSymbol("A", 2, 3), MatrixSymbol("B", 3, 4), MatrixSymbol("C", 5, 1)
    expr, conds = checked_matmul("A B", [2, A, B])
    assert expr.shape == (2, 4) and conds == []
    with pytest.raises(ShapeError, match=r"\(2, 4\) x \(5, 1\) — inner dimensions 4 and 5 differ"):
        checked_matmul("A B C", [A, B, C])


def test_same_rows():
    with pytest.raises(ShapeError, match="block 1 has shape \\(2, 2\\) but block 2 has \\(3, 2\\)"):
        check_same_rows("Concat", [MatrixSymbol("a", 2, 2), MatrixSymbol("b", 3, 2)])
