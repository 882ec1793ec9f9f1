"""The seeds' worked examples, reproduced exactly; numbers restated from the seed documents."""

from __future__ import annotations

import pytest
from sympy import Float, ImmutableMatrix, Matrix, N, Rational, exp, eye, sqrt

from mha_symbolic import EXAMPLES, InputError, MultiHeadAttention, ShapeError, example
from mha_symbolic.examples import DEFAULT_EXAMPLE, seed001_as_stated


def rounded(M, places):
    return [[round(float(N(x, 30)), places) for x in M.row(i)] for i in range(M.rows)]


class TestSeed000:
    """Two tokens, d_model = 4, h = 2; the seed rounds to 2 (and 3) decimals."""

    E = example("seed000").evaluate()

    def test_dimensions(self):
        D = self.E.model.dims
        assert (D.n, D.d_model, D.h, D.d_k) == (2, 4, 2, 2)  # d_k = 4/2 = 2
        assert self.E["Concat"].shape == (2, 4) and self.E.inputs["X"].shape == (2, 4)

    def test_head_inputs_and_scores(self):
        assert self.E["X_head1"] == eye(2) and self.E["X_head2"] == eye(2)
        for name in ("Q_1", "K_1", "V_1", "S_1"):
            assert self.E[name] == eye(2)

    def test_scaling(self):
        scaled = self.E.model.steps["S'_1"].expr  # the model divides by sqrt(d_k) = sqrt(2) ~ 1.414
        assert scaled.d == 2 and scaled.factor == 1 / sqrt(2) and round(float(1 / scaled.factor), 3) == 1.414
        assert self.E["S'_1"] == ImmutableMatrix([[sqrt(2) / 2, 0], [0, sqrt(2) / 2]])
        assert rounded(self.E["S'_1"], 3) == [[0.707, 0.0], [0.0, 0.707]]

    def test_softmax_exact_and_rounded(self):
        e = exp(sqrt(2) / 2)
        A = self.E["A_1"]
        assert A[0, 0] == e / (1 + e) and A[0, 1] == 1 / (1 + e)
        assert abs(float(N(A[0, 0], 30)) - 0.6698) < 5e-5
        assert rounded(A, 2) == [[0.67, 0.33], [0.33, 0.67]]

    def test_head_outputs(self):
        Z1 = self.E["head_1"]
        assert Z1 == self.E["A_1"]  # V_1 = I
        assert rounded(Z1, 2) == [[0.67, 0.33], [0.33, 0.67]]

    def test_assumed_Z2_is_not_what_identity_weights_give(self):
        assumed = Matrix([[0.60, 0.40], [0.40, 0.60]])
        assert rounded(self.E["head_2"], 2) != [[0.6, 0.4], [0.4, 0.6]]
        # the seed's concatenation is right *given* its assumed Z_2
        concat = Matrix.hstack(self.E["head_1"], assumed)
        assert rounded(concat, 2) == [[0.67, 0.33, 0.60, 0.40], [0.33, 0.67, 0.40, 0.60]]

    def test_output_shape(self):
        assert self.E.output.shape == (2, 4)
        assert self.E.output == self.E["Concat"]  # W_O = I_4 as documented


class TestSeed003:
    E = example("seed003").evaluate()

    def test_one_token_softmax_is_exactly_one(self):
        assert self.E["A_1"] == ImmutableMatrix([[1]]) and self.E["A_2"] == ImmutableMatrix([[1]])

    def test_heads_are_X_W_V(self):
        assert self.E["head_1"] == ImmutableMatrix([[4, 11]])
        assert self.E["head_2"] == ImmutableMatrix([[6, 9]])
        assert self.E["V_1"] == self.E["head_1"]

    def test_documents_outputs_cannot_come_from_its_matrices(self):
        assert self.E["head_1"] != ImmutableMatrix([[Float("0.5"), Float("1.2")]])
        assert self.E["head_2"] != ImmutableMatrix([[Float("-0.4"), Float("2.3")]])
        assert self.E["Concat"] == ImmutableMatrix([[4, 11, 6, 9]])


class TestSeed001:
    def test_stated_W_Q_shape_is_inconsistent(self):
        M = MultiHeadAttention(n=8, d_model=4, h=2, convention="split")
        with pytest.raises(ShapeError) as info:
            M.evaluate(**seed001_as_stated())
        assert str(info.value) == "step Q_1 = X_head1 W_Q^1: (8, 2) x (4, 2) — inner dimensions 2 and 4 differ"

    def test_split_with_2x2_weights_works(self):
        E = example("seed001").evaluate()
        assert E["X_head1"].shape == (8, 2) and E["Q_1"].shape == (8, 2)
        assert E["S_1"].shape == (8, 8) and E["A_1"].shape == (8, 8)
        assert E["head_1"].shape == (8, 2) and E["Concat"].shape == (8, 4) and E["Output"].shape == (8, 4)
        assert E["X_head1"][0, :] == ImmutableMatrix([[Rational(1, 5), Rational(1, 2)]])  # token 1: 0.2, 0.5
        assert E["X_head2"][7, :] == ImmutableMatrix([[Rational(7, 10), Rational(3, 5)]])  # token 8: 0.7, 0.6

    def test_dimensions_in_the_seed(self):
        big = MultiHeadAttention(d_model=512, h=8)
        assert big.dims.d_k == 64 and big.dims.d_v == 64  # 512 / 8
        assert big.W("Q", 1).shape == (512, 64) and big.steps["head_8"].expr.shape == (big.dims.n, 64)
        assert big.steps["Concat"].expr.shape == (big.dims.n, 512)  # 8 heads of width 64 fill d_model
        assert big.steps["S'_1"].expr.d == 64  # scores scaled by sqrt(64) = 8


def test_registry():
    assert DEFAULT_EXAMPLE in EXAMPLES
    assert set(EXAMPLES) == {"seed000", "seed001", "seed003"}
    for ex in EXAMPLES.values():
        assert ex.chosen, f"{ex.name} must say what it chose"
    with pytest.raises(InputError, match="no example 'seed999'; examples are seed000, seed001, seed003"):
        example("seed999")
