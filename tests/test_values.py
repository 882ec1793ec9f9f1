from __future__ import annotations

import decimal
import fractions

import numpy as np
import pytest
from sympy import Float, Rational, Symbol, sqrt

from mha_symbolic import InputError
from mha_symbolic.values import to_exact, to_head_list, to_matrix


@pytest.mark.parametrize(
    "value, expected",
    [
        pytest.param(3, Rational(3), id="int"),
        pytest.param(0.2, Rational(1, 5), id="float-decimal"),
        pytest.param(np.float64(0.707), Rational(707, 1000), id="numpy-float"),
        pytest.param(np.float32(0.1), Rational(1, 10), id="float32-decimal"),
        pytest.param("1/3", Rational(1, 3), id="fraction-text"),
        pytest.param("-0.25", Rational(-1, 4), id="decimal-text"),
        pytest.param(fractions.Fraction(2, 7), Rational(2, 7), id="Fraction"),
        pytest.param(decimal.Decimal("1.5"), Rational(3, 2), id="Decimal"),
        pytest.param(sqrt(2), sqrt(2), id="sympy-expr"),
        pytest.param(1e-05, Rational(1, 100000), id="scientific"),
    ],
)
def test_exact_conversion(value, expected):
    got = to_exact(value, "x")
    assert got == expected and type(got) is type(expected)


def test_symbols_kept_and_floats_optional():
    a = Symbol("a")
    assert to_exact(a, "x") == a
    assert to_exact(0.5, "x", exact=False) == Float(0.5)


@pytest.mark.parametrize(
    "value, message",
    [
        pytest.param(float("nan"), "is nan; every entry must be finite", id="nan"),
        pytest.param(float("inf"), "is inf; every entry must be finite", id="inf"),
        pytest.param(True, "is the bool True", id="bool"),
        pytest.param(1j, "complex", id="complex"),
        pytest.param("abc", "is the text 'abc', which is not a decimal or fraction", id="text"),
        pytest.param("__import__('os')", "not a decimal or fraction", id="code-is-not-run"),
        pytest.param(None, "has type NoneType", id="none"),
    ],
)
def test_bad_entries(value, message):
    with pytest.raises(InputError, match=message.replace("(", r"\(").replace(")", r"\)")):
        to_exact(value, "W_Q[1] entry (0, 0)")


def test_matrix_forms():
    assert to_matrix([1, 2, 3, 4], "X", vector_as_row=True).shape == (1, 4)
    assert to_matrix(np.arange(6).reshape(2, 3), "X").tolist() == [[0, 1, 2], [3, 4, 5]]
    with pytest.raises(InputError, match="X is ragged"):
        to_matrix([[1, 2], [3]], "X")
    with pytest.raises(InputError, match="X must be a 2-D matrix \\(a list of rows\\); got a list of 4 numbers"):
        to_matrix([1, 2, 3, 4], "X")
    with pytest.raises(InputError, match="X must be a 2-D matrix, got an array of shape \\(2, 2, 2\\)"):
        to_matrix(np.zeros((2, 2, 2)), "X")
    with pytest.raises(InputError, match="X must be a matrix"):
        to_matrix("1 2 3", "X")
    with pytest.raises(InputError, match="non-numeric dtype"):
        to_matrix(np.array([["a", "b"]]), "X")
    with pytest.raises(InputError, match=r"X entry \(1, 0\) is nan"):
        to_matrix(np.array([[1.0, 2.0], [np.nan, 0.0]]), "X")


def test_head_lists():
    stacked = np.zeros((2, 4, 2))
    assert [m.shape for m in to_head_list(stacked, "W_Q", 2)] == [(4, 2), (4, 2)]
    with pytest.raises(InputError, match="W_Q: expected h=2 per-head matrices, got 3"):
        to_head_list([np.eye(2)] * 3, "W_Q", 2)
    with pytest.raises(InputError, match="got one matrix of shape \\(4, 2\\)"):
        to_head_list(np.zeros((4, 2)), "W_Q", 2)
    with pytest.raises(InputError, match="got a single matrix"):
        to_head_list([[1, 0], [0, 1]], "W_K", 2)
    assert len(to_head_list([[1, 0], [0, 1]], "W_K", 1)) == 1
