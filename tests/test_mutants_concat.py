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
