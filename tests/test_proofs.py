"""Each derivation's final result as exact SymPy equality; symmetries; counts; two heads vs one."""

from __future__ import annotations

import numpy as np
import pytest
from sympy import E, Matrix, Rational, Symbol, simplify

from mha_symbolic import MultiHeadAttention
from mha_symbolic.dims import dimension_symbol
from mha_symbolic.proofs import (
    causal_breaks_equivariance,
    head_decomposition,
    head_permutation_invariance,
    monte_carlo_variance,
    parameter_and_flop_counts,
    permutation_equivariance,
    softmax_jacobian,
    softmax_saturation,
    softmax_shift_invariance,
    sqrt_dk_scaling,
    two_heads_not_one,
)

n, d_model, h, d_k = (dimension_symbol(s) for s in ("n", "d_model", "h", "d_k"))
sigma = Symbol("sigma", positive=True)


@pytest.fixture(scope="module")
def scaling():
    return sqrt_dk_scaling(full_check_up_to=6, monte_carlo_samples=20_000)


def test_scaling_results_exact(scaling):
    assert scaling.verified and scaling.kind == "proof"
    assert scaling.result["mean"] == 0
    assert scaling.result["variance"] == d_k * sigma**4
    assert scaling.result["scaled_variance"] == sigma**4
    assert len([c for c in scaling.checks if c[0].startswith("full sympy.stats")]) == 6
    assert any("Independence lemma" in s.text for s in scaling.steps)
    assert r"\operatorname{Var}(q \cdot k) = d_k \sigma^{4}" in scaling.latex()


def test_scaling_monte_carlo_is_labelled_evidence(scaling):
    ev = scaling.result["evidence"]["d_k=64"]
    assert ev["label"] == "Monte Carlo evidence, not a proof"
    assert abs(ev["Var(q.k/sqrt(d_k))"] - 1) < 0.05 and abs(ev["Var(q.k)"] - 64) < 4
    raw, scaled = monte_carlo_variance(4, samples=50_000, seed=1)
    assert abs(raw - 4) < 0.2 and abs(scaled - 1) < 0.05


def test_softmax_facts():
    assert softmax_shift_invariance(max_n=4).verified
    assert softmax_jacobian((2, 3)).verified
    sat = softmax_saturation()
    assert sat.verified
    assert sat.result["limit_p"] == Matrix([1, 0, 0]) and sat.result["limit_J"] == Matrix.zeros(3, 3)


def test_head_decomposition():
    p = head_decomposition(max_h=8, engine_up_to=3)
    assert p.verified and sum("block_collapse" in what for what, _ in p.checks) == 8


def test_symmetries():
    assert head_permutation_invariance(h=3).verified
    assert len(head_permutation_invariance(h=3).checks) == 6  # all 3! permutations
    eq = permutation_equivariance(n=3, d_model=2, h=1)
    assert eq.verified and len(eq.checks) == 6
    assert permutation_equivariance(n=2, d_model=2, h=2).verified


def test_causal_counterexample_is_exact():
    p = causal_breaks_equivariance()
    assert p.verified and p.kind == "certified counterexample"
    assert list(p.result["MHA(PX)"]) == [0, E / (1 + E)]
    assert list(p.result["P MHA(X)"]) == [Rational(1, 2), 1]


def test_counts():
    c = parameter_and_flop_counts(MultiHeadAttention(bias=True))
    assert c.verified
    assert c.result["parameters"] == 4 * d_model**2 and c.result["biases"] == 4 * d_model
    assert h not in c.result["matmul_flops"].free_symbols
    assert c.result["matmul_flops"] == 8 * n * d_model**2 + 4 * n**2 * d_model
    # per head: scaling n^2, softmax 3 n^2 - n (exp and divide per entry, n - 1 additions per row);
    # bias additions: n d_k for each of Q, K, V per head, and n d_model for the output
    assert simplify(c.result["elementwise_flops"] - (4 * h * n**2 - h * n + 4 * n * d_model)) == 0
    assert c.result["stages"]["S_i"] == 2 * d_model * n**2
    assert c.result["depends_on_h"] == {"parameters": False, "matmul_flops": False, "elementwise_flops": True}


def test_counts_follow_the_steps():
    """Counted from the model's definitions, so other mathematics gives other counts."""
    from mha_symbolic.proofs.counts import parameter_count, step_flops

    M = MultiHeadAttention(n=4, d_model=6, h=2)  # d_k = 3
    flops = step_flops(M)
    assert flops["Q_1"] == 2 * 4 * 6 * 3 and flops["S_1"] == 2 * 4 * 4 * 3 and flops["head_2"] == 2 * 4 * 4 * 3
    assert flops["S'_1"] == 16 and flops["A_1"] == 2 * 16 + (16 - 4) and flops["Concat"] == 0
    assert flops["Output"] == 2 * 4 * 6 * 6
    assert step_flops(M.replace_options(scale=1))["S'_1"] == 0  # no scaling, no work
    causal = step_flops(M.replace_options(causal=True))["A_1"]
    assert causal == 2 * 10 + (10 - 4)  # row i keeps i + 1 of the 4 entries: 10 in all
    # W_Q,K,V; W_O
    assert parameter_count(MultiHeadAttention(n=4, d_model=6, h=2, d_k=5)) == 3 * 2 * (6 * 5) + (2 * 5) * 6
    wide = parameter_and_flop_counts(MultiHeadAttention(d_k=d_model))  # heads as wide as the model
    assert wide.result["depends_on_h"]["parameters"] and wide.result["depends_on_h"]["matmul_flops"]


def test_two_heads_not_one():
    p = two_heads_not_one()
    assert p.verified and p.kind == "proof"
    assert p.result["first_row"] == [E / (1 + E), Rational(1, 2)]
    assert simplify(p.result["row_sum"] - 1) != 0
    # independent check of the key step: a single head's output rows sum to 1 at X = I when W_V W_O = I
    rng = np.random.default_rng(0)
    WQ, WK = rng.integers(-2, 3, (1, 2, 3)), rng.integers(-2, 3, (1, 2, 3))
    out = MultiHeadAttention(n=2, d_model=2, h=1, d_k=3, d_v=2).evaluate(
        X=[[1, 0], [0, 1]], W_Q=WQ, W_K=WK, W_V=[np.eye(2, dtype=int)], W_O=np.eye(2, dtype=int)).output
    assert all(simplify(sum(out.row(i)) - 1) == 0 for i in range(2))


def test_proof_prints_its_steps_and_checks():
    from mha_symbolic.proofs._proof import Proof, ProofStep

    p = Proof("rank(AB) <= rank(A)", (ProofStep("columns of AB lie in the column space of A"),
                                      ProofStep("so", Symbol("r"))), False, checks=(("h = 2", True), ("h = 3", False)))
    assert str(p) == ("Claim: rank(AB) <= rank(A)  [proof: NOT verified]\n"
                      "  1. columns of AB lie in the column space of A\n"
                      "  2. so  r\n"
                      "  check: h = 2 -> holds\n"
                      "  check: h = 3 -> FAILS")
    assert str(Proof("x", (), True, kind="evidence")) == "Claim: x  [evidence: verified]"
