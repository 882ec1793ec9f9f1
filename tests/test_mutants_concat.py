"""Tests written against surviving mutants of mha_symbolic/concat.py (issue 11)."""

from __future__ import annotations

from sympy import Matrix, MatrixSymbol, Symbol

from mha_symbolic.concat import Concat


def test_entries_of_a_concat_come_from_the_right_block():
    n = Symbol("n")
    A, B = MatrixSymbol("A", 2, 3), MatrixSymbol("B", 2, 2)
    C = Concat(A, B)
    assert C[1, 2] == A[1, 2]
    assert C[0, 3] == B[0, 0]
    assert C[1, 4] == B[1, 1]
    assert C[0, 1] == A[0, 1]
    # explicit blocks of different widths: entry (1, 3) is the first column of the second block
    E = Concat(Matrix([[1, 2, 3], [4, 5, 6]]), Matrix([[7, 8], [9, 10]]))
    assert [E[i, j] for i in range(2) for j in range(5)] == [1, 2, 3, 7, 8, 4, 5, 6, 9, 10]
    # symbolic rows: still resolved by column
    S = Concat(MatrixSymbol("P", n, 1), MatrixSymbol("R", n, 2))
    assert S[0, 2] == MatrixSymbol("R", n, 2)[0, 1]


def _unevaluated_concat():
    from sympy import ImmutableMatrix, MatMul

    product = MatMul(ImmutableMatrix([[1, 2], [3, 4]]), ImmutableMatrix([[0, 1], [1, 0]]), evaluate=False)
    return Concat(product, ImmutableMatrix([[5], [7]])), product


def test_doit_evaluates_blocks_by_default():
    C, _ = _unevaluated_concat()
    assert C.doit() == Matrix([[2, 1, 5], [4, 3, 7]])
    assert C.doit(deep=True) == Matrix([[2, 1, 5], [4, 3, 7]])


def test_doit_not_deep_leaves_unevaluated_blocks():
    C, product = _unevaluated_concat()
    shallow = C.doit(deep=False)
    assert isinstance(shallow, Concat)
    assert shallow.blocks[0] is product and shallow.blocks[1] == Matrix([[5], [7]])
    # explicit blocks are joined even without deep
    assert Concat(Matrix([[1, 2]]), Matrix([[3]])).doit(deep=False) == Matrix([[1, 2, 3]])


def test_concat_heads_latex_lists_up_to_three_heads():
    from sympy import latex

    from mha_symbolic.concat import ConcatHeads
    from mha_symbolic.heads import HeadMatrix

    i, n = Symbol("i"), Symbol("n")
    X = MatrixSymbol("X", n, 4)
    template = X * HeadMatrix("W_V", 4, 2, i)
    assert latex(ConcatHeads(template, i, 2)) == r"\mathrm{Concat}(X W_1^{V}, X W_2^{V})"
    assert latex(ConcatHeads(template, i, 3)) == r"\mathrm{Concat}(X W_1^{V}, X W_2^{V}, X W_3^{V})"
    assert latex(ConcatHeads(template, i, 4)) == r"\mathrm{Concat}(X W_1^{V}, \dots, X W_4^{V})"


def test_concat_str_lists_its_blocks():
    A, B = MatrixSymbol("A", 2, 3), MatrixSymbol("B", 2, 2)
    assert str(Concat(A, B)) == "Concat(A, B)"
    assert str(Concat(B, A, B)) == "Concat(B, A, B)"
