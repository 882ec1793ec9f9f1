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
    c = parameter_and_flop_counts()
    assert c.verified
    assert c.result["parameters"] == 4 * d_model**2 and c.result["biases"] == 4 * d_model
    assert h not in c.result["matmul_flops"].free_symbols
    assert simplify(c.result["elementwise_flops"] - 4 * h * n**2) == 0
    assert c.result["stages"]["scores Q_i K_i^T"] == 2 * d_model * n**2


def test_counts_match_a_concrete_model():
    """Parameters of an actual model: count the entries of its weights."""
    M = MultiHeadAttention(4, 8, 2)
    entries = sum(int(w.shape[0] * w.shape[1]) for key in ("W_Q", "W_K", "W_V") for w in M.inputs[key])
    entries += int(M.W_O.shape[0] * M.W_O.shape[1])
    assert entries == 4 * 8**2


def test_two_heads_not_one():
    p = two_heads_not_one()
    assert p.verified and p.kind == "proof"
    assert p.result["first_row"] == [E / (1 + E), Rational(1, 2)]
    assert simplify(p.result["row_sum"] - 1) != 0
    # independent check of the key step: a single head's output rows sum to 1 at X = I when W_V W_O = I
    rng = np.random.default_rng(0)
    WQ, WK = rng.integers(-2, 3, (1, 2, 3)), rng.integers(-2, 3, (1, 2, 3))
    out = MultiHeadAttention(2, 2, 1, d_k=3, d_v=2).evaluate(
        X=[[1, 0], [0, 1]], W_Q=WQ, W_K=WK, W_V=[np.eye(2, dtype=int)], W_O=np.eye(2, dtype=int)).output
    assert all(simplify(sum(out.row(i)) - 1) == 0 for i in range(2))
