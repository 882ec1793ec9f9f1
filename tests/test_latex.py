from __future__ import annotations

import pytest
from sympy import ImmutableMatrix, MatrixSymbol, Rational, exp, sqrt
from sympy import latex as sympy_latex

from mha_symbolic import HeadMatrix, InputError, MultiHeadAttention, Softmax, example
from mha_symbolic.formulas import standard_formulas
from mha_symbolic.latex import latex, terminating_decimal

EXPECTED = {
    "vaswani": [
        r"d_k = \frac{d_{model}}{h}",
        r"\mathrm{Attention}(Q, K, V) = \mathrm{softmax}\left(\frac{Q K^{\top}}{\sqrt{d_k}}\right) V",
        r"\mathrm{head}_i = \mathrm{Attention}(Q W_i^{Q}, K W_i^{K}, V W_i^{V})",
        r"\mathrm{MultiHead}(Q, K, V) = \mathrm{Concat}(\mathrm{head}_1, \dots, \mathrm{head}_h) W^{O}",
    ],
    "per-head": [
        r"d_k = \frac{d_{model}}{h}",
        r"\mathrm{Attention}(Q, K, V) = \mathrm{softmax}\left(\frac{Q K^{\top}}{\sqrt{d_k}}\right) V",
        r"\mathrm{head}_i = \mathrm{Attention}(Q W_Q^{i}, K W_K^{i}, V W_V^{i})",
        r"\mathrm{MultiHead}(Q, K, V) = \mathrm{Concat}(\mathrm{head}_1, \dots, \mathrm{head}_h) W_O",
    ],
    "numbered": [
        r"d_k = \frac{d_{model}}{h}",
        r"\mathrm{Attention}(Q, K, V) = \mathrm{softmax}\left(\frac{Q K^{\top}}{\sqrt{d_k}}\right) V",
        r"\mathrm{head}_i = \mathrm{Attention}(Q W_{Qi}, K W_{Ki}, V W_{Vi})",
        r"\mathrm{MultiHead}(Q, K, V) = \mathrm{Concat}(\mathrm{head}_1, \dots, \mathrm{head}_h) W_O",
    ],
}


@pytest.mark.parametrize("notation", sorted(EXPECTED))
def test_standard_formulas_per_preset(notation):
    got = [latex(f, notation=notation) for f in standard_formulas(MultiHeadAttention())]
    assert got == EXPECTED[notation]


def test_transpose_style_T():
    formulas = standard_formulas(MultiHeadAttention())
    assert latex(formulas[1], transpose="T") == EXPECTED["vaswani"][1].replace(r"^{\top}", "^{T}")


def test_concrete_heads_listed():
    f = standard_formulas(MultiHeadAttention(d_model=8, h=2))
    assert latex(f[-1]) == r"\mathrm{MultiHead}(Q, K, V) = \mathrm{Concat}(\mathrm{head}_1, \mathrm{head}_2) W^{O}"
    assert latex(f[0]).endswith(r"\left(\frac{Q K^{\top}}{\sqrt{4}}\right) V")
    f8 = standard_formulas(MultiHeadAttention(d_model=512, h=8))
    assert r"\mathrm{Concat}(\mathrm{head}_1, \dots, \mathrm{head}_8)" in latex(f8[-1])


def test_steps_keep_d_k_named():
    steps = MultiHeadAttention().steps
    assert latex(steps["S'_i"]) == r"S'_i = \frac{S_i}{\sqrt{d_k}}"
    assert latex(steps["Q_i"], notation="per-head") == r"Q_i = X W_Q^{i}"
    assert latex(steps["Output"]) == r"\mathrm{Output} = \mathrm{Concat} W^{O}"
    assert "sqrt{h}" not in latex(steps["A_i"].expr) and "d_{model}" not in latex(steps["A_i"].expr)
    assert latex(MultiHeadAttention(bias=True).steps["Q_i"]) == r"Q_i = X W_i^{Q} + \mathbf{1} b_i^{Q}"


def test_sympy_latex_works_on_every_object():
    M = MultiHeadAttention(n=2, d_model=4, h=2, convention="split", causal=True)
    for obj in [M, M.dims, *M.steps.values(), M.steps["A_1"].definition]:
        text = sympy_latex(obj)
        assert text and "\\" in text or "=" in text
        assert obj._repr_latex_().startswith(r"$\displaystyle ")
    assert sympy_latex(Softmax(MatrixSymbol("S", 2, 2))) == r"\mathrm{softmax}\left(S\right)"


def test_matrices_bmatrix_exact_and_decimals():
    A = example("seed000").evaluate()["A_1"]
    e = latex(A)
    assert e.startswith(r"\begin{bmatrix}\frac{e^{\frac{\sqrt{2}}{2}}}{1 + e^{\frac{\sqrt{2}}{2}}} & ")
    assert latex(A, decimals=2) == r"\begin{bmatrix}0.67 & 0.33 \\ 0.33 & 0.67\end{bmatrix}"
    assert latex(ImmutableMatrix([[Rational(1, 5), -Rational(7, 8)]])) == r"\begin{bmatrix}0.2 & -0.875\end{bmatrix}"
    assert latex(ImmutableMatrix([[Rational(1, 3)]])) == r"\begin{bmatrix}\frac{1}{3}\end{bmatrix}"
    assert latex(ImmutableMatrix([[-1e-9]]), decimals=2) == r"\begin{bmatrix}0.00\end{bmatrix}"
    assert latex(ImmutableMatrix([[exp(1)]]), decimals=3) == r"\begin{bmatrix}2.718\end{bmatrix}"


def test_terminating_decimal():
    assert terminating_decimal(Rational(707, 1000)) == "0.707"
    assert terminating_decimal(Rational(1, 3)) is None
    assert terminating_decimal(Rational(1, 2**20)) is None  # more than 6 places: keep the fraction
    assert terminating_decimal(sqrt(2)) is None


@pytest.mark.parametrize("settings, message", [
    pytest.param({"notation": "einstein"}, "notation must be one of", id="notation"),
    pytest.param({"transpose": "t"}, "transpose must be 'top' or 'T'", id="transpose"),
    pytest.param({"decimals": -1}, "decimals must be None or an integer from 0 to 30", id="decimals"),
])
def test_bad_settings(settings, message):
    with pytest.raises(InputError, match=message):
        latex(HeadMatrix("W_Q", 2, 2, 1), **settings)


def test_prose_latex_sets_text_mode_specials_in_math():
    """MathJax shows text-mode escapes literally; braces, backslashes and % & # $ ~ go to math mode, formula words
    (a subscript or a power) become math, and the text runs hold nothing else."""
    from mha_symbolic.latex import prose_latex

    out = prose_latex(r"the set {1, 2} of d_model, 50% & a\b")
    assert out == (r"\text{the set } \{ \text{1, 2} \} \text{ of } d_{model} \text{,} \text{ 50} \% \text{ } \& "
                   r"\text{ a} \backslash \text{b}")
