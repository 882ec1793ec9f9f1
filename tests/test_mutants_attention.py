"""Tests written against surviving mutants of mha_symbolic/attention.py (issue 11).

The printed forms of a model (``str``, ``repr`` of its steps, LaTeX) were not pinned by any test:
every dimension, every option and the scale must appear exactly once, and only when set.
"""

from __future__ import annotations

import pytest
from sympy import Rational, Symbol, latex, sqrt

from mha_symbolic import InputError, MultiHeadAttention
from mha_symbolic.dims import dimension_symbol


def test_str_with_every_option_and_distinct_dimensions():
    M = MultiHeadAttention(n=5, d_model=6, h=2, d_k=4, d_v=7, causal=True, bias=True, scale=Rational(1, 5))
    assert str(M) == ("MultiHeadAttention(n=5, d_model=6, h=2, d_k=4, d_v=7, convention='projection', "
                      "causal=True, bias=True, scale=1/5)")


def test_str_with_default_options_names_no_option():
    M = MultiHeadAttention(n=5, d_model=6, h=3, d_k=4, d_v=7, convention="split")
    assert str(M) == "MultiHeadAttention(n=5, d_model=6, h=3, d_k=4, d_v=7, convention='split')"


def test_str_with_one_option_each():
    causal = MultiHeadAttention(n=3, d_model=6, h=2, causal=True)
    bias = MultiHeadAttention(n=3, d_model=6, h=2, bias=True)
    scaled = MultiHeadAttention(n=3, d_model=6, h=2, scale=1 / dimension_symbol("d_k"))
    assert str(causal) == "MultiHeadAttention(n=3, d_model=6, h=2, d_k=3, d_v=3, convention='projection', causal=True)"
    assert str(bias) == "MultiHeadAttention(n=3, d_model=6, h=2, d_k=3, d_v=3, convention='projection', bias=True)"
    assert str(scaled) == "MultiHeadAttention(n=3, d_model=6, h=2, d_k=3, d_v=3, convention='projection', scale=1/d_k)"


def test_symbolic_model_str():
    assert str(MultiHeadAttention()) == ("MultiHeadAttention(n=n, d_model=d_model, h=h, d_k=d_k, d_v=d_v, "
                                         "convention='projection')")


def test_steps_repr_lists_every_step_in_order():
    steps = MultiHeadAttention(n=3, d_model=6, h=2, convention="split").steps
    assert repr(steps) == ("Steps(X_head1, Q_1, K_1, V_1, S_1, S'_1, A_1, head_1, "
                           "X_head2, Q_2, K_2, V_2, S_2, S'_2, A_2, head_2, Concat, Output)")


def test_latex_of_a_model_is_its_output_expression():
    M = MultiHeadAttention(n=1, d_model=3, h=1)
    assert latex(M) == (r"\mathrm{MultiHead}(X) = \mathrm{Concat}(\mathrm{softmax}\left(\frac{\left(X W_1^{Q}\right) "
                        r"\left(X W_1^{K}\right)^{T}}{\sqrt{3}}\right) \left(X W_1^{V}\right)) W^{O}")
    assert M.scale == 1 / sqrt(3)


def test_bias_rows_have_the_width_of_their_projection():
    # d_k = 4, d_v = 5: b_Q, b_K are 1 x d_k and b_V is 1 x d_v
    M = MultiHeadAttention(n=3, d_model=6, h=2, d_k=4, d_v=5, bias=True)
    assert [M.b(k, 2).shape for k in "QKV"] == [(1, 4), (1, 4), (1, 5)]
    assert [b.shape for b in M.inputs["b_K"]] == [(1, 4), (1, 4)]
    assert (M.steps["Q_1"].shape, M.steps["K_2"].shape, M.steps["V_2"].shape) == ((3, 4), (3, 4), (3, 5))
    assert str(M.steps["K_2"].definition) == "X*W_K^2 + 1*b_K^2"


def test_scale_numbers_become_exact_rationals():
    assert MultiHeadAttention(n=2, d_model=4, h=2, scale=0.25).args[4] == Rational(1, 4)
    assert MultiHeadAttention(n=2, d_model=4, h=2, scale=3).scale == 3
    M = MultiHeadAttention(n=2, d_model=6, h=2, scale=0.5)
    assert str(M.steps["S'_1"].definition) == "(1/2)*S_1"


@pytest.mark.parametrize("scale, message", [
    (True, "scale must be a positive number or a SymPy expression of the dimensions, got True"),
    ("2", "scale must be a positive number or a SymPy expression of the dimensions, got '2'"),
    ([1], "scale must be a positive number or a SymPy expression of the dimensions, got [1]"),
    (-1, "scale must be positive, got -1"),
    (0, "scale must be positive, got 0"),
    (Symbol("x") / 2, "scale x/2 may use only the dimension symbols ['d_k', 'd_model', 'd_v', 'h', 'n']"),
])
def test_scale_refusals(scale, message):
    with pytest.raises(InputError) as e:
        MultiHeadAttention(n=2, d_model=4, h=2, scale=scale)
    assert str(e.value) == message


def test_scale_may_use_every_dimension_symbol():
    from mha_symbolic.dims import DIMENSION_NAMES

    every = 1
    for name in sorted(DIMENSION_NAMES):
        every *= dimension_symbol(name)
    M = MultiHeadAttention(n=2, d_model=6, h=3, scale=1 / every)  # d_k = d_v = 2: 1 / (2 * 6 * 3 * 2 * 2)
    assert M.scale == Rational(1, 144)


def test_flags_accept_zero_and_one():
    assert MultiHeadAttention(n=2, d_model=4, h=2, causal=True).causal is True
    assert MultiHeadAttention(n=2, d_model=4, h=2, bias=1).bias is True
    assert MultiHeadAttention(n=2, d_model=4, h=2, causal=0).causal is False
    with pytest.raises(InputError) as e:
        MultiHeadAttention(n=2, d_model=4, h=2, causal="False")
    assert str(e.value) == "causal must be True or False, got 'False'"


def test_flags_refuse_other_numbers():
    with pytest.raises(InputError) as e:
        MultiHeadAttention(n=2, d_model=4, h=2, bias=1.0)
    assert str(e.value) == "bias must be True or False, got 1.0"


def test_bind_keeps_every_option():
    M = MultiHeadAttention(n=None, d_model=6, h=2, d_v=5, convention="split", causal=True, bias=True, scale=2)
    assert str(M.bind(n=3)) == ("MultiHeadAttention(n=3, d_model=6, h=2, d_k=3, d_v=5, convention='split', "
                                "causal=True, bias=True, scale=2)")


def test_replace_options_changes_only_what_is_asked():
    M = MultiHeadAttention(n=None, d_model=6, h=2, d_v=5, convention="split", causal=True, bias=True, scale=2)
    assert str(M.replace_options(convention="projection", causal=False, bias=False, scale=None)) == (
        "MultiHeadAttention(n=n, d_model=6, h=2, d_k=3, d_v=5, convention='projection')")
    assert str(M.replace_options(causal=False)) == (
        "MultiHeadAttention(n=n, d_model=6, h=2, d_k=3, d_v=5, convention='split', bias=True, scale=2)")
    assert str(MultiHeadAttention(n=3, d_model=6, h=2).replace_options(scale=3, bias=True)) == (
        "MultiHeadAttention(n=3, d_model=6, h=2, d_k=3, d_v=3, convention='projection', bias=True, scale=3)")
    assert M.replace_options() == M
    with pytest.raises(InputError) as e:
        M.replace_options(heads=3, masked=True)
    assert str(e.value) == ("unknown model option(s) ['heads', 'masked']; options are "
                            "['bias', 'causal', 'convention', 'kv_heads', 'mask', 'n_kv', 'scale']")


def test_split_head_width_is_d_model_over_h_when_d_k_differs():
    # h d_k = 6 != d_model: blocks of d_model/h = 2
    M = MultiHeadAttention(n=2, d_model=4, h=2, d_k=3, convention="split")
    assert M.W("Q", 1).shape == (2, 3) and M.W("V", 2).shape == (2, 3)
    assert str(M.steps["X_head2"].definition) == "X[:, 2:]" and M.steps["X_head2"].shape == (2, 2)
    M2 = MultiHeadAttention(n=2, d_model=6, h=2, d_k=3, d_v=4, convention="split")  # h d_k = d_model: blocks of d_k
    assert M2.W("K", 2).shape == (3, 3) and M2.W("V", 1).shape == (3, 4)
