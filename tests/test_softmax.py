from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sympy import (
    Dummy,
    ImmutableMatrix,
    Integer,
    MatMul,
    Matrix,
    MatrixSymbol,
    Rational,
    Sum,
    Symbol,
    exp,
    latex,
    simplify,
    sqrt,
)

from mha_symbolic import InputError, Softmax
from mha_symbolic.softmax import softmax


def test_exact_seed000_row():
    A = softmax(Matrix([[sqrt(2) / 2, 0], [0, sqrt(2) / 2]]))
    e = exp(sqrt(2) / 2)
    assert A[0, 0] == e / (1 + e)
    assert A[0, 1] == 1 / (1 + e)
    assert simplify(A[0, 0] + A[0, 1]) == 1


def test_shape_preserved_and_unevaluated_for_symbols():
    n, m = Symbol("n", positive=True, integer=True), Symbol("m", positive=True, integer=True)
    S = MatrixSymbol("S", n, m)
    assert Softmax(S).shape == (n, m)
    assert softmax(S) == Softmax(S)  # nothing to evaluate


def test_explicit_form_of_entries():
    n = Symbol("n", positive=True, integer=True)
    S = MatrixSymbol("S", n, n)
    entry = Softmax(S)[1, 2]
    k = entry.atoms(Dummy).pop()
    assert entry == exp(S[1, 2]) / Sum(exp(S[1, k]), (k, 0, n - 1))
    S3 = MatrixSymbol("S", 3, 3)
    explicit = Softmax(S3).as_explicit()
    assert simplify(explicit[0, 0] - exp(S3[0, 0]) / (exp(S3[0, 0]) + exp(S3[0, 1]) + exp(S3[0, 2]))) == 0


def test_causal_mask_exact_zeros_and_rows_sum_to_one():
    S = Matrix(3, 3, [1, 2, 3, 4, 5, 6, 7, 8, 9])
    A = softmax(S, causal=True)
    assert [A[i, j] for i in range(3) for j in range(3) if j > i] == [0, 0, 0]
    assert A[0, 0] == 1
    for i in range(3):
        assert simplify(sum(A.row(i)) - 1) == 0
    assert A[1, 0] == exp(4) / (exp(4) + exp(5))


def test_causal_symbolic_entry_is_piecewise_zero_above_diagonal():
    S = MatrixSymbol("S", 3, 3)
    assert Softmax(S, causal=True).as_explicit()[0, 2] == 0
    # on and below the diagonal the sum runs over columns 0..i only (not the whole row)
    assert Softmax(S, causal=True)[1, 0].doit() == exp(S[1, 0]) / (exp(S[1, 0]) + exp(S[1, 1]))
    assert Softmax(S, causal=True)[2, 2].doit() == exp(S[2, 2]) / (exp(S[2, 0]) + exp(S[2, 1]) + exp(S[2, 2]))
    assert Softmax(S)[1, 0].doit() == exp(S[1, 0]) / (exp(S[1, 0]) + exp(S[1, 1]) + exp(S[1, 2]))


def test_doit_deep_and_shallow():
    A = ImmutableMatrix([[1, 2], [0, 1]])
    B = ImmutableMatrix([[0, 1], [1, 0]])
    product = MatMul(A, B)
    assert Softmax(product).doit() == softmax(A * B)
    shallow = Softmax(product).doit(deep=False)
    assert isinstance(shallow, Softmax) and shallow.arg == product


def test_shift_invariance_exact():
    c = Symbol("c", real=True)
    a, b = Symbol("a", real=True), Symbol("b", real=True)
    A = softmax(Matrix([[a, b]]))
    B = softmax(Matrix([[a + c, b + c]]))
    assert simplify(A - B) == Matrix([[0, 0]])


def test_printing():
    S = MatrixSymbol("S", 2, 2)
    assert latex(Softmax(S)) == r"\mathrm{softmax}\left(S\right)"
    assert latex(Softmax(S, causal=True)) == r"\mathrm{softmax}_{\mathrm{causal}}\left(S\right)"
    assert str(Softmax(S)) == "softmax(S)"
    assert str(Softmax(S, causal=True)) == "causal_softmax(S)"


def test_func_args():
    S = MatrixSymbol("S", 2, 2)
    for obj in (Softmax(S), Softmax(S, causal=True)):
        assert obj.func(*obj.args) == obj


def test_rejects_scalar():
    with pytest.raises(InputError, match="softmax needs a matrix"):
        Softmax(Integer(3))


@settings(max_examples=50, deadline=None)
@given(st.lists(st.lists(st.integers(-5, 5), min_size=3, max_size=3), min_size=1, max_size=3), st.booleans())
def test_matches_plain_numpy(rows, causal):
    S = np.array(rows, dtype=float)
    got = np.array(softmax(ImmutableMatrix(rows), causal=causal).evalf(30).tolist(), dtype=float)
    z = S - S.max(axis=1, keepdims=True)
    if causal:
        z = np.where(np.arange(S.shape[1])[None, :] > np.arange(S.shape[0])[:, None], -np.inf, z)
    ref = np.exp(z) / np.exp(z).sum(axis=1, keepdims=True)
    np.testing.assert_allclose(got, ref, rtol=1e-13, atol=1e-15)


def test_rational_scores_stay_exact():
    A = softmax(Matrix([[0, 0, 0]]))
    assert list(A) == [Rational(1, 3)] * 3


def plain_softmax_rows(rows, causal=False):
    """Softmax along each row in plain Python (math.exp): token i weighs the keys j (j <= i if causal)."""
    import math

    out = []
    for i, row in enumerate(rows):
        keep = [j for j in range(len(row)) if not causal or j <= i]
        total = sum(math.exp(row[j]) for j in keep)
        out.append([math.exp(row[j]) / total if j in keep else 0.0 for j in range(len(row))])
    return out


def as_floats(A):
    return [[float(A[i, j].evalf(30)) for j in range(A.cols)] for i in range(A.rows)]


def test_rows_not_columns_on_an_asymmetric_non_square_matrix():
    rows = [[0, 1, 2], [3, 0, -1]]
    A = softmax(Matrix(rows))
    assert A.shape == (2, 3)
    ref = plain_softmax_rows(rows)
    got = as_floats(A)
    for i in range(2):
        for j in range(3):
            assert abs(got[i][j] - ref[i][j]) < 1e-15, (i, j, got[i][j], ref[i][j])
    e = exp(1)
    assert A[0, 2] == exp(2) / (1 + e + exp(2)) and A[1, 0] == exp(3) / (exp(3) + 1 + exp(-1))
    assert [simplify(sum(A.row(i))) for i in range(2)] == [1, 1]  # rows sum to exactly 1
    column_sums = [sum(got[i][j] for i in range(2)) for j in range(3)]
    assert max(abs(s - 1) for s in column_sums) > 0.5, column_sums  # columns do not (0.29 and 0.68)
    tall = softmax(Matrix(rows).T)  # 3 x 2: each row of the transpose has its own weights
    np.testing.assert_allclose(as_floats(tall), plain_softmax_rows([[0, 3], [1, 0], [2, -1]]), rtol=0, atol=1e-15)


@pytest.mark.parametrize("rows", [[[0, 5, -3], [2, -1, 4], [1, 3, 0]],  # S != S^T
                                  [[1, -2, 0, 3], [4, 0, 2, -1]],  # wide
                                  [[2, 0], [-1, 3], [0, 1], [5, -2]]],  # tall: rows 2.. see every key
                         ids=["square", "wide", "tall"])
def test_causal_on_asymmetric_scores(rows):
    A = softmax(Matrix(rows), causal=True)
    ref = plain_softmax_rows(rows, causal=True)
    got = as_floats(A)
    assert A.shape == (len(rows), len(rows[0]))
    for i in range(len(rows)):
        for j in range(len(rows[0])):
            if j > i:
                assert A[i, j] == 0  # exactly masked
            assert abs(got[i][j] - ref[i][j]) < 1e-15, (i, j, got[i][j], ref[i][j])
        assert simplify(sum(A.row(i)) - 1) == 0
    assert A[1, 0] == exp(rows[1][0]) / (exp(rows[1][0]) + exp(rows[1][1]))
