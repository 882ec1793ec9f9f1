"""Tests written against surviving mutants of mha_symbolic/attention.py (issue 11).

The printed forms of a model (``str``, ``repr`` of its steps, LaTeX) were not pinned by any test:
every dimension, every option and the scale must appear exactly once, and only when set.
"""

from __future__ import annotations

from sympy import Rational, latex, sqrt

from mha_symbolic import MultiHeadAttention
from mha_symbolic.dims import dimension_symbol


def test_str_with_every_option_and_distinct_dimensions():
    M = MultiHeadAttention(5, 6, 2, d_k=4, d_v=7, causal=True, bias=True, scale=Rational(1, 5))
    assert str(M) == ("MultiHeadAttention(n=5, d_model=6, h=2, d_k=4, d_v=7, convention='projection', "
                      "causal=True, bias=True, scale=1/5)")


def test_str_with_default_options_names_no_option():
    M = MultiHeadAttention(5, 6, 3, d_k=4, d_v=7, convention="split")
    assert str(M) == "MultiHeadAttention(n=5, d_model=6, h=3, d_k=4, d_v=7, convention='split')"


def test_str_with_one_option_each():
    causal = MultiHeadAttention(3, 6, 2, causal=True)
    bias = MultiHeadAttention(3, 6, 2, bias=True)
    scaled = MultiHeadAttention(3, 6, 2, scale=1 / dimension_symbol("d_k"))
    assert str(causal) == "MultiHeadAttention(n=3, d_model=6, h=2, d_k=3, d_v=3, convention='projection', causal=True)"
    assert str(bias) == "MultiHeadAttention(n=3, d_model=6, h=2, d_k=3, d_v=3, convention='projection', bias=True)"
    assert str(scaled) == "MultiHeadAttention(n=3, d_model=6, h=2, d_k=3, d_v=3, convention='projection', scale=1/d_k)"


def test_symbolic_model_str():
    assert str(MultiHeadAttention()) == ("MultiHeadAttention(n=n, d_model=d_model, h=h, d_k=d_k, d_v=d_v, "
                                         "convention='projection')")


def test_steps_repr_lists_every_step_in_order():
    steps = MultiHeadAttention(3, 6, 2, convention="split").steps
    assert repr(steps) == ("Steps(X_head1, Q_1, K_1, V_1, S_1, S'_1, A_1, head_1, "
                           "X_head2, Q_2, K_2, V_2, S_2, S'_2, A_2, head_2, Concat, Output)")


def test_latex_of_a_model_is_its_output_expression():
    M = MultiHeadAttention(1, 3, 1)
    assert latex(M) == (r"\mathrm{MultiHead}(X) = \mathrm{Concat}(\mathrm{softmax}\left(\frac{\left(X W_1^{Q}\right) "
                        r"\left(X W_1^{K}\right)^{T}}{\sqrt{3}}\right) \left(X W_1^{V}\right)) W^{O}")
    assert M.scale == 1 / sqrt(3)


def test_bias_rows_have_the_width_of_their_projection():
    # d_k = 4, d_v = 5: b_Q, b_K are 1 x d_k and b_V is 1 x d_v
    M = MultiHeadAttention(3, 6, 2, d_k=4, d_v=5, bias=True)
    assert [M.b(k, 2).shape for k in "QKV"] == [(1, 4), (1, 4), (1, 5)]
    assert [b.shape for b in M.inputs["b_K"]] == [(1, 4), (1, 4)]
    assert (M.steps["Q_1"].shape, M.steps["K_2"].shape, M.steps["V_2"].shape) == ((3, 4), (3, 4), (3, 5))
    assert str(M.steps["K_2"].definition) == "X*W_K^2 + 1*b_K^2"
