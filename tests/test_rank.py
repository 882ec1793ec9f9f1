"""The rank explorer: bounds, certificates (checked independently here), witnesses, claims, sweeps."""

from __future__ import annotations

import json
from concurrent.futures import ProcessPoolExecutor

import flint
import mpmath
import numpy as np
import pytest
from sympy import ImmutableMatrix, Matrix, Min, Rational, Symbol, exp, log, sqrt

from mha_symbolic import InputError, MultiHeadAttention
from mha_symbolic.cli import main
from mha_symbolic.dims import dimension_symbol
from mha_symbolic.rank import (
    W_OV,
    W_QK,
    certified_rank,
    certify_rank_at_least,
    exact_dyadic,
    exact_rank,
    low_rank_bottleneck,
    multihead_rank_comparison,
    numerical_rank,
    rank_bound,
    rank_report,
    rank_sweep,
    softmax_rank_counterexample,
)

n, d_model, h, d_k, d_v = (dimension_symbol(s) for s in ("n", "d_model", "h", "d_k", "d_v"))


def parse_ball(text: str) -> flint.arb:
    """A determinant ball from its printed form: ``[m +/- r]``, ``[+/- r]`` or an exact ``m``."""
    text = text.strip()
    if "+/-" not in text:
        return flint.arb(text)
    mid, rad = text.strip("[]").split("+/-")
    return flint.arb(mid.strip() or "0", rad.strip())


def independent_det(M: Matrix, rows, cols) -> mpmath.mpf:
    """The minor's determinant with mpmath at 60 digits (no FLINT involved)."""
    with mpmath.workdps(60):
        minor = mpmath.matrix([[mpmath.mpf(str(M[i, j].evalf(70))) for j in cols] for i in rows])
        return mpmath.det(minor)


class TestBounds:
    M = MultiHeadAttention()

    @pytest.mark.parametrize("step, bound", [("S_i", Min(n, d_k)), ("S'_i", Min(n, d_k)), ("A_i", n),
                                             ("head_i", Min(n, d_v)), ("Concat", Min(n, d_model)),
                                             ("Output", Min(n, d_model)), ("Q_i", Min(n, d_k))])
    def test_model_bounds(self, step, bound):
        assert rank_bound(self.M.steps[step].expr, self.M.dims).bound == bound

    def test_untied_widths_keep_three_way_min(self):
        k, v = Symbol("k", integer=True, positive=True), Symbol("v", integer=True, positive=True)
        M = MultiHeadAttention(d_k=k, d_v=v)
        assert rank_bound(M.steps["Output"].expr, M.dims).bound == Min(d_model, n, h * v)
        assert rank_bound(M.steps["S_i"].expr, M.dims).bound == Min(k, d_model, n)

    def test_circuit_matrices(self):
        i = self.M.head_indices[0]
        assert rank_bound(W_QK(self.M, i), self.M.dims).bound == d_k
        assert rank_bound(W_OV(self.M, i), self.M.dims).bound == d_v
        assert W_QK(self.M, i).shape == (d_model, d_model) and W_OV(self.M, i).shape == (d_model, d_model)

    def test_softmax_gives_only_the_shape_bound(self):
        b = rank_bound(self.M.steps["A_i"].expr, self.M.dims)
        last = b.trace[-1]
        assert last.rule == "elementwise" and last.bound == n
        assert len(b.trace) == 1  # the logits' rank Min(n, d_k) is never propagated through the softmax

    def test_trace_renders_and_rules_are_sound_names(self):
        b = rank_bound(self.M.steps["Output"].expr, self.M.dims)
        assert {r.rule for r in b.trace} <= {"shape", "product", "transpose", "scalar", "concat", "sum", "slice",
                                             "elementwise", "exact", "row-stochastic"}
        assert b.latex().startswith(r"\begin{aligned}\operatorname{rank}")
        assert b.at(n=8, d_model=4) == 4

    def test_concrete_and_explicit(self):
        M = MultiHeadAttention(n=8, d_model=4, h=2)
        assert rank_bound(M.steps["S_1"].expr, M.dims).bound == 2
        assert rank_bound(Matrix([[1, 2], [2, 4]])).bound == 1  # exact rule
        with pytest.raises(InputError, match="needs a matrix expression"):
            rank_bound(Symbol("x"))


class TestCertify:
    def test_exact_rank_rational_and_integer(self):
        assert exact_rank(Matrix([[Rational(1, 2), 1], [1, 2]])) == 1
        assert exact_rank(np.arange(12).reshape(3, 4)) == 2
        with pytest.raises(InputError, match="needs rational entries"):
            exact_rank(Matrix([[exp(1)]]))

    def test_minor_certificate_checked_independently(self):
        A = Matrix([[exp(1), 1, 0], [1, exp(Rational(1, 2)), 1], [0, 1, log(3)]])
        cert = certify_rank_at_least(A, 3)
        assert cert.excludes_zero and cert.rows == (0, 1, 2)
        det = independent_det(A, cert.rows, cert.cols)
        ball = flint.arb(cert.det.split("+/-")[0].strip("[ ]"), cert.det.split("+/-")[1].strip("[ ]"))
        assert ball.contains(flint.arb(str(det))) and abs(det) > 0.1

    def test_singular_matrix_is_not_certified(self):
        A = Matrix([[exp(1), exp(2)], [2 * exp(1), 2 * exp(2)]])
        assert not certify_rank_at_least(A, 2).excludes_zero
        r, cert = certified_rank(A, 2)
        assert r == 1 and cert is not None and cert.excludes_zero

    def test_singular_minor_reaching_the_ball_stage_is_rejected(self):
        # sqrt(2)^2 = 2 exactly, but in floating point the 2x2 minor is not exactly singular, so
        # complete pivoting proposes it and only the determinant ball can refuse it.
        A = Matrix([[1, sqrt(2)], [sqrt(2), 2]])
        cert = certify_rank_at_least(A, 2)
        assert len(cert.rows) == 2 and len(cert.cols) == 2, "the 2x2 minor must reach the ball stage"
        assert cert.excludes_zero is False
        assert parse_ball(cert.det).contains(0)
        r, lower = certified_rank(A, 2)
        assert r == 1 and lower is not None and lower.size == 1 and lower.excludes_zero

    def test_certified_rank_tries_one_above_the_bound(self):
        full = Matrix([[1, 2, 0], [0, 1, 3], [5, 0, 1]])  # det 31: rank 3
        r, cert = certified_rank(full, 2)  # a wrong "bound" of 2 is exposed, not confirmed
        assert r == 3 and cert is not None and cert.size == 3 and cert.excludes_zero
        assert parse_ball(cert.det).contains(flint.arb(31))
        deficient = Matrix([[1, 2, 0], [0, 1, 3], [1, 3, 3]])  # row 3 = row 1 + row 2: rank 2
        r, cert = certified_rank(deficient, 2)
        assert r == 2 and cert is not None and cert.size == 2
        assert certified_rank(full, 3)[0] == 3  # 4 > min(3, 3): nothing above the shape is tried

    def test_float_weights_exact_vs_numerical(self):
        W = np.array([[0.1, 0.3], [1.0, 3.0]])  # 3 * 0.1 != 0.3 in binary
        assert exact_rank(exact_dyadic(W)) == 2
        num = numerical_rank(W, tol=1e-10)
        assert num.rank == 1 and "numerical evidence" in num.label and len(num.singular_values) == 2


class TestWitnesses:
    @pytest.mark.parametrize("sizes", [(8, 4, 2), (3, 6, 3), (16, 8, 1), (2, 8, 4)])
    def test_every_bound_attained(self, sizes):
        rows = rank_report(*sizes)
        assert [r.verdict for r in rows] == ["tight"] * 7
        assert [r.quantity for r in rows] == ["Q_1 K_1^T", "A_1", "head_1", "Concat", "Output", "W_QK^1", "W_OV^1"]

    def test_size_limit_refuses_before_working(self):
        from mha_symbolic import SizeLimitError

        with pytest.raises(SizeLimitError, match=r"not certified at these sizes: n = 100000 > 128 \(ball-arithmetic "
                           r"determinants grow with n\^3\); n h = 200000 > 1024"):
            rank_report(100_000, 4, 2)
        with pytest.raises(SizeLimitError, match=r"sizes: d_model = 2048 > 1024 \(the ball product Concat W_O"):
            rank_report(8, 2048, 16)

    def test_bert_sized_witness_is_certified(self):
        # d_model = 384 was refused (the message blamed n^3); W_QK and W_OV are ranked from their factors
        rows = rank_report(8, 384, 12)
        assert [(r.quantity, r.bound, r.attained) for r in rows][-2:] == [("W_QK^1", 32, 32), ("W_OV^1", 32, 32)]
        assert [r.verdict for r in rows] == ["tight"] * 7

    def test_sound_bound_is_tight_for_A_1(self):
        rows = rank_report(4, 4, 2)
        a1 = rows[1]
        assert a1.quantity == "A_1" and a1.bound == 4 and a1.attained == 4 and a1.verdict == "tight"

    def test_unsound_bound_is_reported_as_contradiction(self, monkeypatch):
        """A rank rule claiming softmax keeps the logits' rank (A_1 <= d_k = 2) is wrong: A_1 has rank 4."""
        import mha_symbolic.rank.witness as witness
        from mha_symbolic.rank.bounds import RankBound

        sound = witness.rank_bound

        def unsound(expr, dims=None):
            b = sound(expr, dims)
            if b.trace and b.trace[-1].rule == "elementwise":
                return RankBound(expr, dims.d_k, b.trace)
            return b

        monkeypatch.setattr(witness, "rank_bound", unsound)
        rows = rank_report(4, 4, 2)  # no seed can make A_1 tight now: all tries run, the best is kept
        a1 = rows[1]
        assert a1.quantity == "A_1" and a1.bound == 2
        assert a1.attained > a1.bound and a1.detail is not None and a1.detail.excludes_zero
        assert a1.verdict.startswith("CONTRADICTION"), a1.verdict
        assert [r.verdict for r in rows if r.quantity != "A_1"] == ["tight"] * 6

    def test_certificates_recomputed(self):
        rows = rank_report(4, 4, 2)
        a1 = rows[1]
        assert a1.detail is not None and a1.detail.size == 4 and a1.detail.excludes_zero
        assert rows[0].attained == 2 and rows[1].attained == 4


class TestCounterexamples:
    def test_softmax_rank_is_not_bounded_by_d_k(self):
        c = softmax_rank_counterexample()
        assert c.verdict == "false: certified counterexample" and not c
        A = c.instance["A"]
        det = independent_det(A, range(3), range(3))
        assert abs(det) > 0.02
        assert exact_rank(c.instance["X"] * c.instance["X"].T) == 1

    def test_seed002_multihead_rank_claim(self):
        c = multihead_rank_comparison()
        b, e = c.instance["bounds"], c.instance["exact_ranks"]
        assert b["h=1 concat"] == b["h=4 concat"] == Min(64, n)
        assert b["h=1 logits"] == Min(64, n) and b["h=4 logits"] == Min(16, n)
        assert e == {"h=1 logits": 64, "h=4 logits": 16}
        assert c.verdict.startswith("false")

    @pytest.mark.parametrize("size, d", [(3, 3), (2, 4)])
    def test_bottleneck_attains_every_P_when_d_k_at_least_n(self, size, d):
        c = low_rank_bottleneck(size, d)
        assert c.verdict == "true: exact construction"
        X, WQ, WK, P = (c.instance[k] for k in ("X", "W_Q", "W_K", "P"))
        S = (X * WQ * WK.T * X.T) / Rational(d) ** Rational(1, 2)
        rows = [[exp(S[i, j]) for j in range(size)] for i in range(size)]
        A = ImmutableMatrix([[x / sum(r) for x in r] for r in rows]).applyfunc(lambda x: x.simplify())
        assert A == P and any(e.has(log) for e in WQ)

    def test_bottleneck_unattainable_P_when_d_k_small(self):
        c = low_rank_bottleneck(4, 2)
        assert c.verdict == "true: certified"
        L = c.instance["log P"]
        assert abs(independent_det(L, range(4), range(4))) > 1e-3

    def test_boundary_case_is_reported_undecided(self):
        c = low_rank_bottleneck(4, 3)
        assert c.verdict.startswith("undecided") and "affine in c" in " ".join(c.reasoning)

    def test_bad_P(self):
        with pytest.raises(InputError, match="positive entries whose rows sum to 1"):
            low_rank_bottleneck(2, 2, P=[[1, 0], [Rational(1, 2), Rational(1, 2)]])


class TestSweep:
    GRID = [(4, 4, 2), (8, 8, 4), (4, 8, 8)]

    def test_process_pool_and_any_executor(self):
        with ProcessPoolExecutor(max_workers=2) as pool:
            via_executor = rank_sweep(self.GRID, executor=pool)
        local = rank_sweep(self.GRID, workers=1)
        assert [(r.n, r.d_model, r.h) for r in via_executor] == self.GRID
        assert [r.tight for r in via_executor] == [r.tight for r in local] == [True, True, True]

    def test_progress_is_reported(self):
        seen = []
        rank_sweep(self.GRID[:2], workers=1, progress=lambda done, total: seen.append((done, total)))
        assert seen == [(1, 2), (2, 2)]


def test_cli_ranks(capsys):
    assert main(["ranks", "--n", "4", "--d-model", "4", "--heads", "2"]) == 0
    out = capsys.readouterr().out
    assert "Q_1 K_1^T  2" in out and "false: certified counterexample" in out
    assert main(["ranks", "--n", "4", "--d-model", "4", "--heads", "2", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert [r["verdict"] for r in data["rows"]] == ["tight"] * 7 and len(data["claims"]) == 4
    assert main(["ranks", "--n", "4"]) == 2
    assert "needs concrete --n, --d-model and --heads" in capsys.readouterr().err


def test_text_progress_draws_a_bar():
    import io

    from mha_symbolic.rank.sweep import text_progress

    out = io.StringIO()
    text_progress(57, 114, out)
    text_progress(114, 114, out)
    text_progress(0, 0, out)
    assert out.getvalue() == ("\r[" + "#" * 15 + "." * 15 + "]   57/114" + "\r[" + "#" * 30 + "]  114/114\n"
                              + "\r[" + "." * 30 + "]    0/0\n")
