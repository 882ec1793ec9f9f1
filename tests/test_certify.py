"""Ball-arithmetic and exact rank certificates, piece by piece (rank/certify.py).

Each test pins a value that a wrong implementation would change: the ball of an
expression (its midpoint to 1e-25), the minor that complete pivoting chooses, the size
``certified_rank`` reaches on matrices of balls built so that only some minors certify.
"""

from __future__ import annotations

from fractions import Fraction

import flint
import numpy as np
import pytest
from sympy import E, Float, ImmutableMatrix, Matrix, Pow, Rational, Symbol, exp, log, pi, sqrt

from mha_symbolic.errors import InputError
from mha_symbolic.rank.certify import (
    MinorCertificate,
    _pivots,
    certified_rank,
    certify_rank_at_least,
    exact_dyadic,
    exact_rank,
    numerical_rank,
    to_arb,
    working_precision,
)


def _close(ball: flint.arb, expr) -> bool:
    """The ball is narrow (radius < 1e-30) and its midpoint agrees with a 40-digit value."""
    return float(ball.rad()) < 1e-30 and abs(float(ball.mid()) - float(expr.evalf(40))) < 1e-25 * max(
        1.0, abs(float(expr.evalf(40))))


@pytest.mark.parametrize("expr", [
    1 + sqrt(2),                      # Add: the sum starts at 0
    3 * sqrt(2),                      # Mul: the product starts at 1 and multiplies every factor
    Pow(pi, 3),                       # integer power
    Pow(pi, Rational(3, 2)),          # half-integer power through sqrt
    Pow(pi, Rational(1, 3)),          # other rational powers: exp(e log b)
    Pow(pi, pi),                      # irrational exponent (no .q)
    exp(Rational(1, 3)) + log(3) + E,
    Rational(-7, 3),
])
def test_to_arb_encloses_the_value(expr):
    with working_precision(128):
        ball = to_arb(expr)
        assert _close(ball, expr)
        assert ball.contains(to_arb(expr))


def test_to_arb_integers_and_floats():
    with working_precision(128):
        assert to_arb(np.int64(7)) == 7 and to_arb(7) == 7
        # a SymPy Float is read from its decimal digits: the ball contains 1/10 exactly
        ball = to_arb(Float("0.1", 30))
        m, e = ball.mid().man_exp()
        rm, re = ball.rad().man_exp()
        mid, rad = Fraction(int(m)) * Fraction(2) ** int(e), Fraction(int(rm)) * Fraction(2) ** int(re)
        assert abs(mid - Fraction(1, 10)) <= rad < Fraction(1, 10**30)


def test_to_arb_refuses_symbols_naming_them():
    with pytest.raises(InputError, match=r"cannot evaluate x in ball arithmetic"):
        to_arb(Symbol("x"))


def test_pivots_follow_complete_pivoting_after_elimination():
    # after the pivot 10 at (0, 0), row 1 becomes exactly zero, so the second pivot is (2, 2)
    F = np.array([[10.0, 9.0, 0.0], [9.0, 8.1, 0.0], [0.0, 0.0, 1.0]])
    assert _pivots(F, 2) == ((0, 2), (0, 2))
    # largest entry first, not the first entry
    assert _pivots(np.array([[1.0, 0.0], [0.0, 5.0]]), 1) == ((1,), (1,))
    # a remaining maximum of exactly 1 is a pivot; a remaining maximum of 0 stops
    assert _pivots(np.array([[2.0, 0.0], [0.0, 1.0]]), 2) == ((0, 1), (0, 1))
    assert _pivots(np.array([[1.0, 2.0], [2.0, 4.0]]), 2) == ((1,), (1,))
    # asking for more pivots than the matrix has stops at its size
    assert _pivots(np.eye(2), 3) == ((0, 1), (0, 1))


def test_minor_certificates_in_full():
    M = Matrix([[1, sqrt(2)], [sqrt(3), 1]])
    assert certify_rank_at_least(M, 2) == MinorCertificate(2, (0, 1), (0, 1), "[-1.449489743 +/- 2.17e-10]", 128,
                                                           True)
    assert certify_rank_at_least(Matrix([[2, 1], [1, 1]]), 2).det == "1.000000000"
    assert certify_rank_at_least(M, 0) == MinorCertificate(0, (), (), "1", 128, True)
    # no pivot at all: a failed certificate with an empty minor
    assert certify_rank_at_least(Matrix.zeros(2, 2), 1) == MinorCertificate(1, (), (), "0", 128, False)
    with pytest.raises(InputError, match=r"rank 3 is impossible for a 2 x 2 matrix"):
        certify_rank_at_least(M, 3)
    with pytest.raises(InputError, match=r"at least one precision"):
        certify_rank_at_least(M, 1, precisions=())


def _balls(rows: list[list[str]]):
    """A callable ``prec -> arb_mat`` of balls written as "mid +/- rad" (or exact numbers); it
    checks that it is called with the working precision in effect."""
    seen: list[int] = []

    def M(prec: int) -> flint.arb_mat:
        assert isinstance(prec, int) and prec == flint.ctx.prec, (prec, flint.ctx.prec)
        seen.append(prec)
        return flint.arb_mat([[flint.arb(*[flint.arb(x) for x in e.split("+/-")]) for e in r] for r in rows])

    M.seen = seen  # type: ignore[attr-defined]
    return M


def test_a_ball_matrix_that_never_certifies_tries_every_precision():
    M = _balls([["1 +/- 2", "0"], ["0", "1"]])
    cert = certify_rank_at_least(M, 2)
    assert not cert.excludes_zero and cert.precision == 1024
    assert M.seen == [128, 256, 512, 1024]


def _diag(entries: list[str]) -> list[list[str]]:
    return [[entries[i] if i == j else "0" for j in range(len(entries))] for i in range(len(entries))]


def test_certified_rank_falls_back_by_halving():
    # rank 5 and 4 cannot be certified (each 4 x 4 pivot minor holds a ball around 0); 4 // 2 = 2 can
    M = _balls(_diag(["1", "1", "0.5 +/- 1", "0.5 +/- 1", "0.5 +/- 1"]))
    rank, cert = certified_rank(M, 5)
    assert type(rank) is int and rank == 2 and cert is not None and cert.rows == (0, 1)
    # from 3 the next size tried is 3 // 2 = 1: a certified lower bound, not the largest one
    rank, cert = certified_rank(_balls(_diag(["1", "1", "0.5 +/- 1", "0.5 +/- 1"])), 4)
    assert rank == 1 and cert is not None and cert.size == 1


def test_certified_rank_first_guess_is_the_numerical_rank_at_1e12():
    # singular values 1, 1e-11, 1e-11: numerical rank 3 at tolerance 1e-12 (1 at 1e-10), so the
    # fallback starts at min(upper - 1, 3) = 2 and certifies the 2 x 2 minor with 1e-11 in it
    M = _balls(_diag(["1", "1e-11", "1e-11 +/- 1"]))
    rank, cert = certified_rank(M, 3)
    assert rank == 2 and cert is not None and cert.excludes_zero


def test_certified_rank_of_nothing_is_zero_without_a_certificate():
    assert certified_rank(Matrix.zeros(2, 2), 0) == (0, None)
    assert certified_rank(Matrix.zeros(2, 2), 1) == (0, None)
    assert certified_rank(_balls([["0 +/- 1"]]), 1) == (0, None)


def test_exact_dyadic_non_square():
    A = exact_dyadic(np.array([[0.5, 0.25, 0.1]]))
    assert A.shape == (1, 3)
    assert A == ImmutableMatrix([[Rational(1, 2), Rational(1, 4), Rational(3602879701896397, 36028797018963968)]])


def test_exact_rank_refusals_name_the_problem():
    with pytest.raises(InputError, match=r"integer arrays .* got float64"):
        exact_rank(np.ones((2, 2)))
    with pytest.raises(InputError, match=r"^exact_rank needs rational entries"):
        exact_rank(Matrix([[sqrt(2)]]))


def test_numerical_rank_relative_tolerance():
    r = numerical_rank(np.diag([1.0, 1e-9]))
    assert r.rank == 2 and r.tolerance == 1e-10
    assert numerical_rank(np.diag([1e3, 1e-8])).rank == 1      # cutoff is tol * s_max = 1e-7
    assert numerical_rank(np.zeros((2, 2))).rank == 0           # strictly above the cutoff
    assert numerical_rank(np.zeros((0, 3))).rank == 0
    assert numerical_rank(Matrix([[1, 2], [3, 4]])).rank == 2  # SymPy matrices are read as floats
