from __future__ import annotations

import functools

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sympy import MatrixSymbol, Rational, sqrt

from mha_symbolic import MultiHeadAttention, ParseError, Softmax, example
from mha_symbolic.formulas import standard_formulas
from mha_symbolic.latex import NOTATIONS, latex
from mha_symbolic.parse import SymbolTable, equivalent, read_expression, read_formula
from mha_symbolic.scaling import ScaledScores

models = st.builds(
    lambda dims, convention, causal, bias: MultiHeadAttention(n=dims[0], d_model=dims[1], h=dims[2],
                                                              convention=convention, causal=causal, bias=bias),
    st.sampled_from([(None, None, None), (None, None, 2), (3, 4, 2), (2, 6, 3), (None, 8, 4), (1, 4, 1)]),
    st.sampled_from(["projection", "split"]), st.booleans(), st.booleans())


@functools.cache
def table_for(model):
    return SymbolTable.for_model(model)


@settings(max_examples=25, deadline=None)
@given(models, st.sampled_from(sorted(NOTATIONS)), st.sampled_from(["top", "T"]))
def test_every_exported_formula_reads_back_equal(model, notation, transpose):
    table = table_for(model)
    for f in standard_formulas(model):
        r = read_formula(latex(f, notation=notation, transpose=transpose), table)
        assert len(r) == 1 and r[0].op == "eq"
        assert r[0].lhs == f.lhs and r[0].rhs == f.rhs
    for step in model.steps.values():
        r = read_formula(latex(step, notation=notation, transpose=transpose), table)[0]
        assert r.lhs == step.symbol and r.rhs == step.definition, latex(step, notation=notation)


@pytest.mark.parametrize("name", ["seed000", "seed003"])
def test_matrices_read_back_exactly(name):
    E = example(name).evaluate()
    for step in E:
        assert equivalent(read_expression(latex(E[step])), E[step]), step


def test_rounded_matrices_read_back_within_rounding():
    A = example("seed000").evaluate()["A_1"]
    back = read_expression(latex(A, decimals=2))
    assert all(abs(float(a) - float(b.evalf(20))) <= 0.005 for a, b in zip(back, A, strict=True))


def test_relations_are_split_not_dropped():
    rels = read_formula(r"\sqrt{2} \approx 1.414")
    assert [(r.lhs, r.op) for r in rels] == [(sqrt(2), "approx")]
    assert float(rels[0].rhs) == 1.414
    chain = read_formula(r"d_k = \dfrac{d_{model}}{h} = \dfrac{4}{2} = 2", SymbolTable.for_model(MultiHeadAttention()))
    assert [r.op for r in chain] == ["eq", "eq", "eq"]
    assert chain[1].rhs == 2 and chain[2].rhs == 2
    assert [r.op for r in read_formula(r"1 \le 2 \leq 3 \ne 4")] == ["le", "le", "ne"]


def test_document_spellings():
    table = SymbolTable.for_model(MultiHeadAttention())
    Q, K, V = (MatrixSymbol(c, *MultiHeadAttention().X.shape) for c in "QKV")
    expr = read_expression(r"\operatorname{softmax}\left( \dfrac{QK^{\intercal}}{\sqrt{d_k}} \right)\, V", table)
    d_k = MultiHeadAttention().dims.d_k
    assert expr.args == (Softmax(ScaledScores(Q * K.T, d_k)), V)
    assert read_expression(r"K Q", table) != read_expression(r"Q K", table)  # order kept: matrices
    assert read_expression(r"\text{softmax}(Q K^T)", table) == Softmax(Q * K.T)


@pytest.mark.parametrize("text, message", [
    pytest.param(r"\frac{1}{", "unbalanced braces|cannot read", id="unbalanced"),
    pytest.param(r"\mathrm{softmax}(Q, K)", "takes one matrix argument", id="arity"),
    pytest.param(r"Z_9 Q K^T", "unknown symbol", id="unknown-symbol"),
    pytest.param(r"= 3", "a side of a relation is empty", id="empty-side"),
    pytest.param(r"\mathrm{Concat}(a, \dots)", r"Concat\(first, \\dots, last\)", id="dots"),
    pytest.param(r"__import__('os').system('true')", "cannot read|unknown symbol", id="code-is-text"),
    pytest.param(r"(8, 2) \times (2, 8)", "cannot read", id="shape-arithmetic"),
])
def test_bad_latex_raises_parse_error(text, message):
    with pytest.raises(ParseError, match=message):
        read_formula(text, SymbolTable.for_model(MultiHeadAttention()))


def test_decimals_read_exactly_enough():
    assert equivalent(read_expression("0.2"), Rational(1, 5))
