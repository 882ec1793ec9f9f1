r"""The checker's second room (mha_symbolic.check.read): relation chains, normalisation, prose settings,
constraints, scopes and the Python-code reader.  Every assertion is an exact result."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sympy import (
    BlockMatrix,
    ImmutableMatrix,
    Integer,
    MatAdd,
    MatMul,
    MatrixSymbol,
    Rational,
    Symbol,
    Transpose,
    floor,
)
from sympy.matrices.expressions.slice import MatrixSlice

from mha_symbolic.check import read
from mha_symbolic.check.read import (
    OPS,
    Chain,
    Constraint,
    Setting,
    chains,
    code_expression,
    constraints,
    hypothetical,
    normalise,
    scope,
)
from mha_symbolic.errors import ParseError, ShapeError
from mha_symbolic.scaling import ScaledScores
from mha_symbolic.softmax import Softmax

CORPUS = Path(__file__).parent / "corpus"


def sides_ops(tex: str) -> list[tuple[tuple[str, ...], tuple[str, ...]]]:
    return [(c.sides, c.ops) for c in chains(tex)]


# ----- chains: the old checker's failures ---------------------------------------------------------------
def test_left_paren_is_not_le():
    (c,) = chains(r"\left(\frac{QK^T}{\sqrt{d_k}}\right) \le 3")
    assert c == Chain((r"\left(\frac{QK^T}{\sqrt{d_k}}\right)", "3"), ("le",),
                      r"\left(\frac{QK^T}{\sqrt{d_k}}\right) \le 3", 0, False)


def test_quad_separated_weight_matrices_are_three_chains():
    tex = (r"W_1^Q = \begin{bmatrix} 1 & 0 \\ 0 & 1 \end{bmatrix}, \quad "
           r"W_1^K = \begin{bmatrix} 0 & 1 \\ 1 & 0 \end{bmatrix}, \quad "
           r"W_1^V = \begin{bmatrix} 2 & 0 \\ 0 & 2 \end{bmatrix}")
    assert sides_ops(tex) == [
        (("W_1^Q", r"\begin{bmatrix} 1 & 0 \\ 0 & 1 \end{bmatrix}"), ("eq",)),
        (("W_1^K", r"\begin{bmatrix} 0 & 1 \\ 1 & 0 \end{bmatrix}"), ("eq",)),
        (("W_1^V", r"\begin{bmatrix} 2 & 0 \\ 0 & 2 \end{bmatrix}"), ("eq",)),
    ]
    assert [c.text for c in chains(tex)] == [
        r"W_1^Q = \begin{bmatrix} 1 & 0 \\ 0 & 1 \end{bmatrix}",
        r"W_1^K = \begin{bmatrix} 0 & 1 \\ 1 & 0 \end{bmatrix}",
        r"W_1^V = \begin{bmatrix} 2 & 0 \\ 0 & 2 \end{bmatrix}",
    ]


def test_d2l_quad_triple_from_the_corpus():
    tex = (r"\mathbf{W}_i^{(q)} \in \mathbb{R}^{d \times p_q}, \quad \mathbf{W}_i^{(k)} \in \mathbb{R}^{d \times p_k}, "
           r"\quad \mathbf{W}_i^{(v)} \in \mathbb{R}^{d \times p_v}")
    assert sides_ops(tex) == [((r"\mathbf{W}_i^{(q)}", r"\mathbb{R}^{d \times p_q}"), ("in",)),
                              ((r"\mathbf{W}_i^{(k)}", r"\mathbb{R}^{d \times p_k}"), ("in",)),
                              ((r"\mathbf{W}_i^{(v)}", r"\mathbb{R}^{d \times p_v}"), ("in",))]


def test_range_is_one_chain():
    assert sides_ops(r"1 \le N \le 10^4") == [(("1", "N", "10^4"), ("le", "le"))]


def test_long_equality_chain():
    assert sides_ops(r"d_k = d_v = d_{\text{model}}/h = 6/3 = 2") == [
        (("d_k", "d_v", r"d_{\text{model}}/h", "6/3", "2"), ("eq", "eq", "eq", "eq"))]


# ----- chains: rows ---------------------------------------------------------------------------------------
def test_align_rows_continue_with_relation():
    tex = ("\\begin{align*}\n\\mathrm{rank}(Q_iK_i^T) &\\le \\min(\\mathrm{rank}(Q_i), \\mathrm{rank}(K_i)) \\\\\n"
           "&\\le \\min(n, d_k) \\\\\n&= d_k\n\\end{align*}")
    (c,) = chains(tex)
    assert c.sides == (r"\mathrm{rank}(Q_iK_i^T)", r"\min(\mathrm{rank}(Q_i), \mathrm{rank}(K_i))", r"\min(n, d_k)",
                       "d_k")
    assert c.ops == ("le", "le", "eq")
    assert (c.row, c.side_rows) == (1, (1, 1, 2, 3))
    assert c.text == (r"\mathrm{rank}(Q_iK_i^T) \le \min(\mathrm{rank}(Q_i), \mathrm{rank}(K_i)) \le \min(n, d_k) "
                      r"= d_k")


def test_aligned_rows_without_continuation_are_separate_chains():
    tex = ("\\begin{aligned}\n\\mathbb{E}[q \\cdot k] &= 0 \\\\\n\\mathrm{Var}(q_j k_j) &= 1 \\\\\n"
           "\\mathrm{Var}(q \\cdot k) &= d_k\n\\end{aligned}")
    assert [(c.sides, c.ops, c.row) for c in chains(tex)] == [
        ((r"\mathbb{E}[q \cdot k]", "0"), ("eq",), 1),
        ((r"\mathrm{Var}(q_j k_j)", "1"), ("eq",), 2),
        ((r"\mathrm{Var}(q \cdot k)", "d_k"), ("eq",), 3)]


def test_aligned_continuation_of_a_side_and_after_a_trailing_relation():
    assert sides_ops(r"\begin{aligned} A &= B \\ &\quad + C \\ &= D \end{aligned}") == [
        (("A", "B + C", "D"), ("eq", "eq"))]
    assert sides_ops(r"A = \\ B + C") == [(("A", "B + C"), ("eq",))]


def test_second_ampersand_separates_two_equations():
    assert sides_ops(r"\begin{aligned} a &= 1 & b &= 2 \\ c &= 3 \end{aligned}") == [
        (("a", "1"), ("eq",)), (("b", "2"), ("eq",)), (("c", "3"), ("eq",))]


def test_gather_and_split_rows():
    assert sides_ops(r"\begin{gather} a = 1 \\ b = 2 \end{gather}") == [(("a", "1"), ("eq",)), (("b", "2"), ("eq",))]
    assert sides_ops(r"\begin{split} a &= b \\ &= c \end{split}") == [(("a", "b", "c"), ("eq", "eq"))]


def test_line_break_outside_a_matrix():
    assert [(c.sides, c.row) for c in chains("a = 1 \\\\\nb = 2")] == [(("a", "1"), 0), (("b", "2"), 1)]


def test_cases_rows_with_conditions():
    tex = "f(x) = \\begin{cases}\n0 & \\text{if } x < 0 \\\\\n1 & \\text{otherwise}\n\\end{cases}"
    assert [(c.sides, c.ops, c.condition, c.row) for c in chains(tex)] == [
        (("f(x)", "0"), ("eq",), False, 1),
        (("x", "0"), ("lt",), True, 1),
        (("f(x)", "1"), ("eq",), False, 2),
        ((r"\text{otherwise}",), (), True, 2)]


def test_multiline_display_rows():
    tex = "\nX =\n\\begin{bmatrix}\n1 & 0 \\\\\n0 & 1\n\\end{bmatrix}\n"
    (c,) = chains(tex)
    assert (c.sides, c.ops, c.row, c.side_rows) == (
        ("X", r"\begin{bmatrix} 1 & 0 \\ 0 & 1 \end{bmatrix}"), ("eq",), 1, (1, 2))
    assert [(c.sides, c.row) for c in chains("a = 1\nb = 2")] == [(("a", "1"), 0), (("b", "2"), 1)]
    assert sides_ops("A = B\n  = C") == [(("A", "B", "C"), ("eq", "eq"))]
    assert sides_ops("S = QK^T =\n\\begin{bmatrix} 1 \\end{bmatrix}") == [
        (("S", "QK^T", r"\begin{bmatrix} 1 \end{bmatrix}"), ("eq", "eq"))]


# ----- chains: lists, commas, words ---------------------------------------------------------------------
@pytest.mark.parametrize("tex, expected", [
    (r"d_k = 2, h = 3", [(("d_k", "2"), ("eq",)), (("h", "3"), ("eq",))]),
    (r"f(a, b) = 1", [(("f(a, b)", "1"), ("eq",))]),
    (r"i = 0, 1", [(("i", "0, 1"), ("eq",))]),
    (r"j = 1, \ldots, d_k", [(("j", r"1, \ldots, d_k"), ("eq",))]),
    (r"W_i^Q, W_i^K \in \mathbb{R}^{d \times d_k}", [((r"W_i^Q, W_i^K", r"\mathbb{R}^{d \times d_k}"), ("in",))]),
    (r"x = 1, 2, y = 3", [(("x", "1, 2"), ("eq",)), (("y", "3"), ("eq",))]),
    (r"d_k = 2,\ h = 3", [(("d_k", "2"), ("eq",)), (("h", "3"), ("eq",))]),
    (r"a = 1; b = 2", [(("a", "1"), ("eq",)), (("b", "2"), ("eq",))]),
    (r"a = 1 \qquad b = 2", [(("a", "1"), ("eq",)), (("b", "2"), ("eq",))]),
    (r"x \in \mathbb{R},\; y = 2", [(("x", r"\mathbb{R}"), ("in",)), (("y", "2"), ("eq",))]),
    (r"h = 8 \Rightarrow d_k = 64", [(("h", "8"), ("eq",)), (("d_k", "64"), ("eq",))]),
    (r"\mathrm{softmax}\left(\frac{QK^{\top}}{\sqrt{d_k}}\right)V,",
     [((r"\mathrm{softmax}\left(\frac{QK^T}{\sqrt{d_k}}\right)V",), ())]),
])
def test_lists_and_commas(tex, expected):
    assert sides_ops(tex) == expected


@pytest.mark.parametrize("tex", [
    r"X = \begin{bmatrix} 1, 2 \\ 3, 4 \end{bmatrix}",
    r"X = \begin{pmatrix} a = 1 & b \le 2 \\ c & d \end{pmatrix}",
    r"X = \left[\begin{array}{cc} 1 & 2 \\ 3 & 4 \end{array}\right]",
    r"X = \begin{matrix} 1 & 2 \\ 3 & 4 \end{matrix}",
])
def test_matrix_rows_never_split(tex):
    (c,) = chains(tex)
    assert c.sides == ("X", tex[4:]) and c.ops == ("eq",)


def test_vectors_in_brackets_never_split():
    assert sides_ops(r"A \approx [0.5, 0.5], \quad B = (1, 2)") == [
        (("A", "[0.5, 0.5]"), ("approx",)), (("B", "(1, 2)"), ("eq",))]


@pytest.mark.parametrize("tex, expected", [
    (r"Z = AV \text{ where } A = \mathrm{softmax}(S)", [(("Z", "AV"), False), (("A", r"\mathrm{softmax}(S)"), True)]),
    (r"\mathrm{rank}(Q) \le d \text{ with } d = 2", [((r"\mathrm{rank}(Q)", "d"), False), (("d", "2"), True)]),
    (r"q_j = 0 \quad \text{for } j = 1, \ldots, d_k", [(("q_j", "0"), False), (("j", r"1, \ldots, d_k"), True)]),
    (r"y = 1 \text{ if } x > 0", [(("y", "1"), False), (("x", "0"), True)]),
    (r"a = 1 \text{ and } b = 2", [(("a", "1"), False), (("b", "2"), False)]),
    (r"r \le 1 \text{ for } n = 3 \text{ and } d_k = 1",
     [(("r", "1"), False), (("n", "3"), True), (("d_k", "1"), True)]),
    (r"0 \le A_{ij} \le 1 \quad \forall i, j", [(("0", "A_{ij}", "1"), False), (("i, j",), True)]),
    (r"\mathrm{rank}(Q_1K_1^T) \le 1 \text{ whenever } d_k = 2", [((r"\mathrm{rank}(Q_1K_1^T)", "1"), False),
                                                                (("d_k", "2"), True)]),
    ("0 ≤ (A₁)ᵢⱼ ≤ 1 for every i, j", [(("0", "(A_{1})_{ij}", "1"), False), (("i, j",), True)]),
    (r"W \in \mathbb{R}^{12 \times 4} \quad (i = 1, 2, 3)", [(("W", r"\mathbb{R}^{12 \times 4}"), False),
                                                            (("i", "1, 2, 3"), True)]),
])
def test_words_and_conditions(tex, expected):
    assert [(c.sides, c.condition) for c in chains(tex)] == expected


def test_text_sides_stay_sides():
    assert sides_ops(r"\text{sequence length} = 8") == [((r"\text{sequence length}", "8"), ("eq",))]
    assert sides_ops(r"\text{and} = 1") == [(("", "1"), ("eq",))]  # a lone keyword word is a separator


def test_no_relation_and_blank():
    tex = r"\mathrm{Concat}(\mathrm{head}_1, \mathrm{head}_2)"
    assert chains(tex) == [Chain((tex,), (), tex)]
    assert chains("") == [] and chains("  \n ") == []


def test_a_formula_continuing_the_previous_one_has_an_empty_first_side():
    assert sides_ops(r"= (8, 4) \times (4, 4) = (8, 4)") == [(("", r"(8, 4) \times (4, 4)", "(8, 4)"), ("eq", "eq"))]
    assert sides_ops(r"\text{sequence length} = 8 \rightarrow") == [
        ((r"\text{sequence length}", "8", ""), ("eq", "to"))]


@pytest.mark.parametrize("tex, op", [
    ("a = b", "eq"), (r"a \approx b", "approx"), (r"a \simeq b", "approx"), ("a ≈ b", "approx"),
    ("a < b", "lt"), (r"a \lt b", "lt"), (r"a \le b", "le"), (r"a \leq b", "le"), (r"a \leqslant b", "le"),
    ("a ≤ b", "le"), ("a <= b", "le"), ("a > b", "gt"), (r"a \gt b", "gt"), (r"a \ge b", "ge"), (r"a \geq b", "ge"),
    (r"a \geqslant b", "ge"), ("a ≥ b", "ge"), ("a >= b", "ge"), (r"a \ne b", "ne"), (r"a \neq b", "ne"),
    (r"a \not= b", "ne"), ("a ≠ b", "ne"), ("a != b", "ne"), (r"a \in b", "in"), ("a ∈ b", "in"), ("a : b", "colon"),
    (r"a \colon b", "colon"), (r"a \to b", "to"), (r"a \rightarrow b", "to"), (r"a \mapsto b", "to"), ("a → b", "to"),
    ("a -> b", "to"), ("a := b", "def"), (r"a \coloneqq b", "def"), (r"a \equiv b", "def"), (r"a \triangleq b", "def"),
    ("a ≡ b", "def"), (r"a \overset{\text{def}}{=} b", "def"), (r"a \stackrel{?}{=} b", "eq"),
])
def test_each_operator(tex, op):
    assert sides_ops(tex) == [(("a", "b"), (op,))]
    assert op in OPS


@pytest.mark.parametrize("tex, expected", [
    (r"a \leftarrow b \neq c", [((r"a \leftarrow b", "c"), ("ne",))]),
    (r"\left[ a \right] \leq b", [((r"\left[ a \right]", "b"), ("le",))]),
    (r"\langle q, k \rangle < 1", [((r"\langle q, k \rangle", "1"), ("lt",))]),
    (r"f\left(x = 1\right) = 2", [((r"f\left(x = 1\right)", "2"), ("eq",))]),
    (r"\frac{a = b}{c} = d", [((r"\frac{a = b}{c}", "d"), ("eq",))]),
    (r"x_{i \le j} = 1", [((r"x_{i \le j}", "1"), ("eq",))]),
    (r"X[:, 0:2] = Y", [(("X[:, 0:2]", "Y"), ("eq",))]),
    (r"\leftrightarrow = 1", [((r"\leftrightarrow", "1"), ("eq",))]),
])
def test_operators_are_whole_top_level_tokens(tex, expected):
    assert sides_ops(tex) == expected


def test_unbalanced_text_uses_the_fallback_splitter():
    assert sides_ops("a } b = c") == [(("a } b", "c"), ("eq",))]
    # an unclosed brace counts as nothing (what it would enclose is unknown)
    assert sides_ops(r"a = \frac{1}{2 \le b") == [(("a", r"\frac{1}{2", "b"), ("eq", "le"))]
    assert sides_ops(r"\left\{ x = 1 \right.") == [((r"\left\{ x", "1"), ("eq",))]


def test_unicode_formulas():
    assert sides_ops("A ≈ [0.5, 0.5]") == [(("A", "[0.5, 0.5]"), ("approx",))]
    assert sides_ops("rank(A) ≤ 2") == [(("rank(A)", "2"), ("le",))]
    assert sides_ops("QKᵀ/√d_k") == [((r"QK^T/\sqrt{d_k}",), ())]
    assert sides_ops("X ∈ ℝ^{2×4}") == [(("X", r"\mathbb{R}^{2\times4}"), ("in",))]
    assert sides_ops("x = −1") == [(("x", "-1"), ("eq",))]
    assert sides_ops("Q₁K₁ᵀ / √3 ≈ [[0.577, 0.000], [1.155, −0.577]]") == [
        ((r"Q_{1}K_{1}^T / \sqrt{3}", "[[0.577, 0.000], [1.155, -0.577]]"), ("approx",))]
    assert sides_ops("A₁ ≠ A₂") == [(("A_{1}", "A_{2}"), ("ne",))]


# ----- normalise --------------------------------------------------------------------------------------------
@pytest.mark.parametrize("text, expected", [
    ("A ≈ [0.5, 0.5]", r"A \approx [0.5, 0.5]"),
    ("rank(A) ≤ 2", r"rank(A) \le 2"),
    ("a ≥ b ≠ c", r"a \ge b \ne c"),
    ("(2 × 4)", r"(2 \times 4)"),
    ("h·d_v", r"h\cdot d_v"),
    ("QKᵀ/√d_k", r"QK^T/\sqrt{d_k}"),
    ("K^⊤ + K^{⊤} + K⊤", "K^T + K^T + K^T"),
    ("√(d_k + 1)", r"\sqrt{d_k + 1}"),
    ("√3 ≈ 1.732", r"\sqrt{3} \approx 1.732"),
    ("√d_{model}", r"\sqrt{d_{model}}"),
    ("√\\pi", r"\sqrt{\pi}"),
    ("−1", "-1"),
    ("X ∈ ℝ^{2×4}", r"X \in \mathbb{R}^{2\times4}"),
    ("f: A → B", r"f: A \to B"),
    ("x² + 10⁻³", "x^{2} + 10^{-3}"),
    ("head₁, (A₁)ᵢⱼ, Wᴼ", "head_{1}, (A_{1})_{ij}, W^{O}"),
    ("d_model, n_heads, W_Q1, x_12", "d_{model}, n_{heads}, W_{Q1}, x_{12}"),
    ("Q_iK_i^T, 2^10", "Q_iK_i^T, 2^{10}"),
    ("a<=b, c>=d, e!=f, g->h, i==j", r"a\le b, c\ge d, e\ne f, g\to h, i=j"),
    (r"\displaystyle\frac{a}{b}", r"\frac{a}{b}"),
    (r"h\,p_v + a\!b + c\;d + \alpha\,x", r"h p_v + a b + c d + \alpha x"),
    (r"\left.\frac{a}{b}\right|_{x} + \left(y\right.", r"\frac{a}{b}\right|_{x} + \left(y"),
    (r"\bigl( x \bigr) \Big[ y \Big]", r"( x ) [ y ]"),
    (r"K^{\top} K^\top K^{\intercal} K^{\mathsf{T}}", "K^T K^T K^T K^T"),
    (r"a = b \label{eq:1} \tag{2}", "a = b  "),
    (r"a \\; b \quad c", r"a \\; b \quad c"),  # a row break then ";" is kept, \quad is kept
    (r"\left(\frac{QK^T}{\sqrt{d_k}}\right)", r"\left(\frac{QK^T}{\sqrt{d_k}}\right)"),
    ("a\u00a0=\u2009b\u200b", "a = b"),
])
def test_normalise(text, expected):
    assert normalise(text) == expected


def test_normalise_keeps_lines():
    text = "a ≈ b\n\\displaystyle c \\le d\n√x"
    assert normalise(text).count("\n") == 2


# ----- prose settings and constraints ---------------------------------------------------------------------
@pytest.mark.parametrize("prose, expected", [
    ("d_model is 6", [("d_model", 6)]),
    ("$d_{model}$ = 6", [("d_model", 6)]),
    ("Number of heads (h): 2", [("h", 2)]),
    ("h: 2", [("h", 2)]),
    ("Sequence length (n): 2", [("n", 2)]),
    ("We feed a sequence length of 3 tokens.", [("n", 3)]),
    ("3 tokens", [("n", 3)]),
    ("Only one token.", [("n", 1)]),
    ("The input is a single token.", [("n", 1)]),
    ("We use two heads.", [("h", 2)]),
    ("a two-head self-attention layer", [("h", 2)]),
    ("Take twelve heads and 8 tokens.", [("h", 12), ("n", 8)]),
    ("The model dimension 512 is standard.", [("d_model", 512)]),
    ("We use head dimension d_k = 64 throughout.", [("d_k", 64)]),
    ("head dimension 64", [("d_k", 64)]),
    ("The model width is $d_{model} = 4$.", [("d_model", 4)]),
    ("model width $d = 8$", [("d_model", 8)]),
    ("We use $h = 2$ heads.", [("h", 2)]),
    ("$d_{\\text{model}} = 4$ , $h = 2$ heads, $\\text{sequence length} = 8 \\rightarrow$ Each head: $d_k = 2$ dims",
     [("d_model", 4), ("h", 2), ("n", 8), ("d_k", 2)]),
    ("Take $N = 5$ tokens,", [("n", 5)]),
    ("`n_tokens = 4`, `n_heads = 2`", [("n", 4), ("h", 2)]),
    ("$d_k = d_v = 64$", [("d_k", 64), ("d_v", 64)]),
    ("Anzahl der Köpfe: $h = 2$.", [("h", 2)]),
    ("Es gibt zwei Token, also $n = 2$.", [("n", 2)]),
    ("Número de cabezas: $h = 2$", [("h", 2)]),
    ("Longitud de la secuencia: $n = 3$", [("n", 3)]),
    ("হেডের সংখ্যা: $h = 2$", [("h", 2)]),
    ("Modellbreite: $d_{model} = 8$.", [("d_model", 8)]),
    ("Number of heads (h): 2. d_model is 6.\nSequence length = 2 tokens", [("h", 2), ("d_model", 6), ("n", 2)]),
    # "20 / 4" is one term of the chain: d_k is derived (5), not set to 20
    ("d_model = 20, h = 4 heads, so each head has d_k = 20 / 4 = 5.", [("d_model", 20), ("h", 4)]),
])
def test_settings(prose, expected):
    assert [(s.name, s.value) for s in read.settings(prose)] == expected


@pytest.mark.parametrize("prose", [
    "at most 10 heads",
    "up to 512 tokens",
    "between 2 and 8 heads",
    "1 ≤ N ≤ 10^4",
    "$1 \\le N \\le 10^4$",
    "There are several heads, $h \\ge 2$.",
    "Each head therefore works in $d_k = d_v = d_{model}/h = 2$ dimensions.",
    "Head size: $d_k = d_{model} / h = 2$, and $d_v = d_k$.",
    "(With $h = 1$ we would instead have $d_k = d_{model} = 4$.)",
    "For comparison, with `d_model = 768` and `n_heads = 12` one gets `dk = 64`.",
    "the first two heads attend to syntax",
    "2 × 3 tokens",
    "Each row of X is one token.",
    "$\\sqrt{d_k} = 2$",
])
def test_not_settings(prose):
    assert read.settings(prose) == []


def test_setting_records_its_text():
    assert read.settings("Number of heads (h): 2") == [Setting("h", 2, "Number of heads (h): 2")]
    assert read.settings("We use $h = 2$ heads.") == [Setting("h", 2, "h = 2 heads")]


@pytest.mark.parametrize("prose, expected", [
    ("1 ≤ N ≤ 10^4", [("N", "ge", 1), ("N", "le", 10000)]),
    ("The sequence length may be anything in the range $1 \\le N \\le 10^4$.", [("N", "ge", 1), ("N", "le", 10000)]),
    # a lone d is the model width
    ("The model width satisfies $2 \\le d$ and is a multiple of $h$.", [("d_model", "ge", 2)]),
    ("There are several heads, $h \\ge 2$.", [("h", "ge", 2)]),
    ("The sequence is longer than a head is wide: $d_k < n$.", [("d_k", "lt", "n")]),
    ("Note $p_v < N$ here.", [("p_v", "lt", "N")]),
    ("numbered $0 \\le i \\le h - 1$", [("i", "ge", 0), ("i", "le", "h - 1")]),
    ("for $j = 1, \\ldots, d_k$ and any width $d_k \\ge 1$.", [("d_k", "ge", 1)]),
    ("`n_heads >= 2`", [("h", "ge", 2)]),
    ("h ≠ 0", [("h", "ne", 0)]),
    ("at most 10 heads", [("h", "le", 10)]),
    ("at least 2 attention heads", [("h", "ge", 2)]),
    ("up to 512 tokens", [("n", "le", 512)]),
    ("fewer than 4 heads", [("h", "lt", 4)]),
    ("between 2 and 8 heads", [("h", "ge", 2), ("h", "le", 8)]),
    ("d_model is at most 1024", [("d_model", "le", 1024)]),
    ("We use $h = 2$ heads.", []),
    ("The two heads give different weights: A₁ ≠ A₂.", []),
    ("$\\mathrm{rank}(A) \\le 2$", []),
])
def test_constraints(prose, expected):
    assert [(c.name, c.op, c.value) for c in constraints(prose)] == expected


def test_a_sentence_with_a_setting_and_a_range():
    prose = "We use $h = 2$ heads, numbered $0 \\le i \\le h - 1$, and at most 10 heads fit in memory."
    assert read.settings(prose) == [Setting("h", 2, "h = 2 heads")]
    assert constraints(prose) == [Constraint("i", "ge", 0, "0 ≤ i ≤ h - 1"),
                                  Constraint("i", "le", "h - 1", "0 ≤ i ≤ h - 1"),
                                  Constraint("h", "le", 10, "at most 10 heads")]


# ----- scope -------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("sentence, expected", [
    ("with h = 1", {"h": 1}),
    ("(With $h = 1$ we would instead have $d_k = d_{model} = 4$.)", {"h": 1}),
    ("With $h = 1$ the bound reads $\\mathrm{rank}(Q_1K_1^T) \\le d_{model}$.", {"h": 1}),
    ("For comparison, with `d_model = 768` and `n_heads = 12` one gets `dk = 64`.", {"d_model": 768, "h": 12}),
    ("Indeed, for $n = 3$, $d_k = 1$ and logits $Q_1K_1^T = xx^T$ with $x = (0, 1, 2)^T$.", {"n": 3, "d_k": 1}),
    ("For example, take $n = 2$, $h = 2$, $d_k = 1$, $X = I_2$.", {"n": 2, "h": 2, "d_k": 1}),
    ("For two-dimensional heads, $\\mathrm{rank}(Q_1K_1^T) \\le 1$ whenever $d_k = 2$.", {"d_k": 2}),
    ("if d_model = 4 the heads are 2 wide", {"d_model": 4}),
    ("mit $h = 4$ wäre das anders", {"h": 4}),
    ("for head 2", {"head": 2}),
    ("for the second head", {"head": 2}),
    ("in head 2", {"head": 2}),
    ("für Kopf 2", {"head": 2}),
    ("für den zweiten Kopf", {"head": 2}),
    ("para la cabeza 2", {"head": 2}),
    ("para la segunda cabeza", {"head": 2}),
    ("Head 2's score matrix is invertible", {"head": 2}),
    ("the first token", {"token": 1}),
    ("token 1", {"token": 1}),
    ("the weights of the third token", {"token": 3}),
    ("La salida del primer token es aproximadamente $(2.245, -2.249)$", {"token": 1}),
    ("The first token of head 0 almost ignores the second token.", {"head": 0, "token": 1}),
    ("We work with $h = 2$ heads.", {}),
    ("We use $h = 2$ heads.", {}),
    ("With only one token, attention has nothing to choose between.", {}),
    ("Stacking 3 tokens gives", {}),
    ("Der erste Eintrag der zweiten Zeile von $A_2$", {"token": 2}),  # a row of the weights is a token's; no head
    ("with head dimension d_k = 64 throughout", {"d_k": 64}),
])
def test_scope(sentence, expected):
    assert scope(sentence) == expected


def test_settings_skip_sentences_with_a_local_condition():
    prose = "We use $h = 2$ heads. (With $h = 1$ we would instead have $d_k = d_{model} = 4$.) The model width is 4."
    assert [(s.name, s.value) for s in read.settings(prose)] == [("h", 2)]


@pytest.mark.parametrize("sentence, expected", [
    ("(With $h = 1$ we would instead have $d_k = 4$.)", True),
    ("For comparison, with `d_model = 768` one gets", True),
    ("For example, take $n = 2$", True),
    ("With $d_{model} = 512$ and $h = 8$,", False),
    ("Indeed, for $n = 3$ the determinant is small.", False),
])
def test_hypothetical(sentence, expected):
    assert hypothetical(sentence) is expected


# ----- code_expression ----------------------------------------------------------------------------------------
X = MatrixSymbol("X", 3, 4)
W = MatrixSymbol("W_Q1", 4, 2)
Q, K, V = MatrixSymbol("Q_1", 3, 2), MatrixSymbol("K_1", 3, 2), MatrixSymbol("V_1", 3, 2)
S = MatrixSymbol("S", 3, 3)
H0, H1 = MatrixSymbol("H_0", 3, 2), MatrixSymbol("H_1", 3, 2)
D = Symbol("d_k", positive=True)
NAMES = {"X": X, "WQ1": W, "Q1": Q, "K1": K, "V1": V, "S": S, "dk": D, "d_k": 2, "d_model": 6, "n_heads": 4,
         ("heads", 0): H0, ("heads", 1): H1, ("W_q", 0): W}


def resolve(name, index):
    return NAMES.get(name if index is None else (name, index))


def code(source):
    return code_expression(source, resolve)


@pytest.mark.parametrize("source", ["X @ WQ1", "np.matmul(X, WQ1)", "np.dot(X, WQ1)", "torch.matmul(X, WQ1)",
                                    "X.dot(WQ1)", "X.matmul(WQ1)", "torch.mm(X, WQ1)"])
def test_code_matmul(source):
    assert code(source) == MatMul(X, W)


@pytest.mark.parametrize("source", ["Q1 @ K1.T", "Q1 @ K1.transpose(-2, -1)", "Q1 @ K1.transpose(-1, -2)",
                                    "Q1 @ K1.transpose(0, 1)", "Q1 @ K1.transpose()", "Q1 @ np.transpose(K1)",
                                    "Q1 @ torch.transpose(K1, 0, 1)", "Q1 @ K1.mT", "Q1 @ K1.t()",
                                    "Q1 @ K1.permute(1, 0)"])
def test_code_transpose(source):
    assert code(source) == MatMul(Q, Transpose(K))


@pytest.mark.parametrize("source, expected", [
    ("S / np.sqrt(dk)", ScaledScores(S, D)),
    ("S / math.sqrt(dk)", ScaledScores(S, D)),
    ("S / torch.sqrt(dk)", ScaledScores(S, D)),
    ("S / dk ** 0.5", ScaledScores(S, D)),
    ("S * dk ** -0.5", ScaledScores(S, D)),
    ("dk ** -0.5 * S", ScaledScores(S, D)),
    ("S / d_k ** 0.5", ScaledScores(S, Integer(2))),
    ("(1 / np.sqrt(d_k)) * S", ScaledScores(S, Integer(2))),
    ("S / dk", MatMul(1 / D, S)),
    ("S / 2", MatMul(Rational(1, 2), S)),
    ("0.5 * S", MatMul(Rational(1, 2), S)),
    ("S * 3", MatMul(3, S)),
    ("-S", MatMul(-1, S)),
    ("S + S / np.sqrt(dk)", MatAdd(S, ScaledScores(S, D))),
    ("d_model // n_heads", Integer(1)),
    ("6 // 4 + 1", Integer(2)),
    ("dk ** 2", D**2),
    ("dk // 2", floor(D / 2)),
])
def test_code_scalars(source, expected):
    assert code(source) == expected


@pytest.mark.parametrize("source", ["softmax(S)", "softmax(S, axis=-1)", "softmax(S, -1)", "softmax(S, axis=1)",
                                    "scipy.special.softmax(S, axis=1)", "special.softmax(S, axis=-1)",
                                    "torch.softmax(S, dim=-1)", "torch.softmax(S, -1)", "F.softmax(S, dim=-1)",
                                    "torch.nn.functional.softmax(S, dim=1)", "S.softmax(-1)", "S.softmax(dim=-1)",
                                    "jax.nn.softmax(S)"])
def test_code_row_softmax(source):
    assert code(source) == Softmax(S)


@pytest.mark.parametrize("source", ["softmax(S, axis=0)", "scipy.special.softmax(S, axis=0)", "F.softmax(S, dim=-2)",
                                    "torch.softmax(S, dim=0)", "S.softmax(0)", "S.softmax(dim=-2)"])
def test_code_column_softmax_is_told_apart(source):
    got = code(source)
    assert got == Transpose(Softmax(Transpose(S)))
    assert got != Softmax(S)
    M = ImmutableMatrix([[0, 1], [2, 0]])
    explicit = code_expression(source.replace("S", "M"), lambda name, index: M if name == "M" else None)
    assert explicit.doit() != Softmax(M).doit()
    assert explicit.doit() == Softmax(M.T).doit().T


def test_code_full_attention_line_keeps_its_structure():
    got = code("softmax(Q1 @ K1.T / np.sqrt(dk)) @ V1")
    assert got == MatMul(Softmax(ScaledScores(MatMul(Q, Transpose(K)), D)), V)
    assert code("torch.softmax(S / d_k ** 0.5, dim=-1)") == Softmax(ScaledScores(S, Integer(2)))


@pytest.mark.parametrize("source, expected", [
    ("np.concatenate([heads[0], heads[1]], axis=-1)", BlockMatrix([[H0, H1]])),
    ("np.concatenate([heads[0], heads[1]], axis=1)", BlockMatrix([[H0, H1]])),
    ("np.concatenate((heads[0], heads[1]), -1)", BlockMatrix([[H0, H1]])),
    ("np.hstack([heads[0], heads[1]])", BlockMatrix([[H0, H1]])),
    ("torch.cat([heads[0], heads[1]], dim=-1)", BlockMatrix([[H0, H1]])),
    ("torch.concat([heads[0], heads[1]], dim=1)", BlockMatrix([[H0, H1]])),
    ("np.concatenate([heads[0], heads[1]], axis=0)", BlockMatrix([[H0], [H1]])),
    ("np.concatenate([heads[0], heads[1]])", BlockMatrix([[H0], [H1]])),
    ("np.vstack([heads[0], heads[1]])", BlockMatrix([[H0], [H1]])),
    ("torch.cat([heads[0], heads[1]])", BlockMatrix([[H0], [H1]])),
])
def test_code_concatenate(source, expected):
    assert code(source) == expected


@pytest.mark.parametrize("source, expected", [
    ("X[:, 0:2]", MatrixSlice(X, (0, 3, 1), (0, 2, 1))),
    ("X[:, 2:4]", MatrixSlice(X, (0, 3, 1), (2, 4, 1))),
    ("X[:, :2]", MatrixSlice(X, (0, 3, 1), (0, 2, 1))),
    ("X[1:3, :]", MatrixSlice(X, (1, 3, 1), (0, 4, 1))),
    ("X[0:2]", MatrixSlice(X, (0, 2, 1), (0, 4, 1))),
    ("X[0]", MatrixSlice(X, (0, 1, 1), (0, 4, 1))),
    ("X[:, d_k:2 * d_k]", MatrixSlice(X, (0, 3, 1), (2, 4, 1))),
])
def test_code_slices(source, expected):
    assert code(source) == expected


def test_code_indexed_names_go_through_resolve():
    calls = []

    def recording(name, index):
        calls.append((name, index))
        return resolve(name, index)

    assert code_expression("X @ W_q[0]", recording) == MatMul(X, W)
    assert calls == [("X", None), ("W_q", 0)]


def test_code_literals_are_exact():
    assert code("np.array([[1, 2.5], [3, -4]])") == ImmutableMatrix([[1, Rational(5, 2)], [3, -4]])
    assert code("[0.1, 2]") == ImmutableMatrix([[Rational(1, 10), 2]])
    assert code("torch.tensor([[[1., 2.]], [[3., 4.]]], dtype=torch.float32)") == (
        ImmutableMatrix([[1, 2]]), ImmutableMatrix([[3, 4]]))
    assert code("Q1, K1") == (Q, K)


@pytest.mark.parametrize("source, message", [
    ("np.linalg.inv(X)", "cannot read 'np.linalg.inv(X)': the function np.linalg.inv is not supported"),
    ("len(X)", "cannot read 'len(X)': the function len is not supported"),
    ("X.max(axis=-1)", "cannot read 'X.max(axis=-1)': the keyword axis= is not supported"),
    ("S.sum()", "cannot read 'S.sum()': the method .sum() is not supported"),
    ("S * S", "cannot read 'S * S': the elementwise product * of two matrices is not supported (use @)"),
    ("S + 1", "cannot read 'S + 1': adding a scalar to a matrix (broadcasting) is not supported"),
    ("X ** 2", "cannot read 'X ** 2': elementwise power of a matrix is not supported"),
    ("np.sqrt(S)", "cannot read 'np.sqrt(S)': np.sqrt of a matrix (elementwise) is not supported"),
    ("unknown @ X", "cannot read 'unknown @ X': unknown name unknown"),
    ("heads[5]", "cannot read 'heads[5]': unknown name heads[5]"),
    ("scipy.special.softmax(S)", "cannot read 'scipy.special.softmax(S)': scipy.special.softmax without an axis "
                                 "(it does not normalise each row)"),
    ("F.softmax(S)", "cannot read 'F.softmax(S)': F.softmax without an axis (it does not normalise each row)"),
    ("softmax(S, axis=2)", "cannot read 'softmax(S, axis=2)': softmax along axis 2 of a matrix"),
    ("S.transpose(0, 2)", "cannot read 'S.transpose(0, 2)': .transpose(0, 2) is not a matrix transpose"),
    ("[h for h in heads]", "cannot read '[h for h in heads]': a list comprehension is not supported"),
    ("X.shape", "cannot read 'X.shape': the attribute .shape is not supported"),
    ("X[..., :2]", "cannot read 'X[..., :2]': an Ellipsis (...) index is not supported"),
    ("X[0, 1]", "cannot read 'X[0, 1]': the index [(0, 1)] is not supported (only slices of a matrix)"),
    ("q @ k =", "cannot read 'q @ k =': not a Python expression (invalid syntax)"),
    ("np", "cannot read 'np': the module np used as a value"),
    ("x if y else z", "cannot read 'x if y else z': a conditional expression is not supported"),
    ("'W' @ X", "cannot read \"'W' @ X\": the constant 'W' is not a number"),
])
def test_code_unsupported_constructs_are_named(source, message):
    with pytest.raises(ParseError) as err:
        code(source)
    assert str(err.value) == message


def test_code_is_never_executed():
    with pytest.raises(ParseError, match="the function __import__ is not supported"):
        code("__import__('os').system('touch /tmp/should_not_exist')")
    with pytest.raises(ParseError, match=r"the function eval is not supported"):
        code("eval('1')")


def test_code_shape_errors():
    with pytest.raises(ShapeError, match=re.escape("X @ X: (3, 4) @ (3, 4) — inner dimensions 4 and 3 differ")):
        code("X @ X")
    with pytest.raises(ShapeError, match="cannot be placed side by side"):
        code("np.concatenate([heads[0], S.T[0:2]], axis=1)")


# ----- robustness -------------------------------------------------------------------------------------------
_PIECES = st.sampled_from([
    r"\left", r"\right", r"\left(", r"\right)", r"\left.", r"\right.", r"\le", r"\leq", r"\leftarrow", r"\neq",
    "{", "}", "&", r"\\", "=", ",", ";", ":", "<", ">", "≤", "≈", "×", "√", "ᵀ", "₁", "−", " ", "\n", "a", "x_1",
    "(", ")", "[", "]",
    r"\begin{aligned}", r"\end{aligned}", r"\begin{cases}", r"\end{cases}", r"\begin{bmatrix}", r"\end{bmatrix}",
    r"\text{and}", r"\text{if}", r"\quad", r"\langle", r"\rangle", r"\not", r"\frac", "^", "_", "\\", "%", r"\,", "for",
])


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(_PIECES, max_size=30).map("".join) | st.text(max_size=40))
def test_chains_and_normalise_never_raise(tex):
    normalise(tex)
    for c in chains(tex):
        assert len(c.sides) == len(c.ops) + 1
        assert len(c.side_rows) == len(c.sides)
        assert set(c.ops) <= set(OPS)
        assert 0 <= c.row <= tex.count("\n")


def test_every_corpus_formula_reads():
    """Every inline and display formula of the corpus gives well-formed chains."""
    count = 0
    for path in sorted(CORPUS.glob("*.md")) + sorted(CORPUS.glob("*.txt")):
        if path.name == "README.md":
            continue
        text = path.read_text(encoding="utf-8")
        for display, inline in re.findall(r"\$\$(.+?)\$\$|\$([^$\n]+?)\$", text, re.S):
            for c in chains(display or inline):
                assert len(c.sides) == len(c.ops) + 1
                count += 1
    assert count > 400
