from __future__ import annotations

import pytest
from sympy import MatrixSymbol, Symbol, latex

from mha_symbolic import HeadMatrix


def test_index_substitution_is_structural():
    i = Symbol("i", integer=True, positive=True)
    W = HeadMatrix("W_Q", 4, 2, i)
    assert W.subs(i, 3) == HeadMatrix("W_Q", 4, 2, 3)
    assert W.subs(i, 3).name == "W_Q^3"
    assert latex(W.subs(i, 3)) == "W_3^{Q}"


def test_styles_and_identity():
    assert str(HeadMatrix("Q", 8, 2, 1, "sub")) == "Q_1"
    assert str(HeadMatrix("X_head", 8, 2, 2, "plain")) == "X_head2"
    assert HeadMatrix("W_Q", 4, 2, 1) != HeadMatrix("W_Q", 4, 2, 2)
    assert HeadMatrix("W_Q", 4, 2, 1) != HeadMatrix("W_K", 4, 2, 1)
    W = HeadMatrix("W_V", 4, 2, 1, "sub")
    assert W.func(*W.args) == W
    assert W.as_symbol() == MatrixSymbol("W_V_1", 4, 2)
    with pytest.raises(ValueError, match="style must be one of"):
        HeadMatrix("W", 1, 1, 1, "wrong")
