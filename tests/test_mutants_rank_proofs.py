"""Tests that kill surviving mutants of rank/, proofs/ and statements/ (issue 11's sampled mutation run).

Each test pins a mathematical fact the code must compute, found because a mutant that changed it survived:
the ball softmax's row sums, the witness generator's ranges, the model a theorem is handed, the exact
instance of the softmax counterexample, the explicit check of split == projection, FLOPs of a chain, and
statements on inputs and on inconsistent givens.
"""

from __future__ import annotations

import flint
import numpy as np
import pytest
from sympy import E, ImmutableMatrix, MatMul, MatrixSymbol, exp

from mha_symbolic import MultiHeadAttention
from mha_symbolic.proofs import split_equals_projection
from mha_symbolic.proofs.counts import expression_flops
from mha_symbolic.rank.counterexamples import bottleneck_theorem, low_rank_bottleneck, softmax_rank_counterexample
from mha_symbolic.rank.witness import _softmax_rows, witness_inputs
from mha_symbolic.statements.statistics import ScoreStatistic
from mha_symbolic.statements.values import ValueStatement


def test_ball_softmax_rows_sum_to_one_and_match_the_exact_values():
    S = flint.arb_mat([[0, 1, 2], [3, 1, 0]])
    A = _softmax_rows(S, flint.arb(1))
    for i in range(2):
        assert (A[i, 0] + A[i, 1] + A[i, 2]).contains(1)
    e = flint.arb(1).exp()
    assert A[0, 0].overlaps(1 / (1 + e + e * e)) and A[1, 0].overlaps(e**3 / (e**3 + e + 1))
    assert not A[0, 0].overlaps(flint.arb(1) / 3)


def test_witness_inputs_ranges_and_spread_columns():
    seen = set()
    for seed in range(6):
        w = witness_inputs(4, 4, 2, seed)
        X = np.asarray(w["X"])
        assert X.min() >= -2 and X.max() <= 2  # reach 2 unless rows repeat (they do not at these sizes)
        seen |= set(X.ravel().tolist())
        assert (w["W_Q"][:, :, 0] == 5 ** np.arange(4)).all()  # d_k = 2 <= 2: base 2 * reach + 1 = 5
        assert (w["W_K"][:, :, 0] == 5 ** np.arange(4)).all()
    assert {-2, 2} <= seen


def test_bottleneck_theorem_reads_the_model_it_is_given():
    unscaled = bottleneck_theorem(MultiHeadAttention(scale=1))
    assert unscaled.reasoning[0] == "The model's scaled scores S'_i = S_i have proven rank <= Min(d_k, n) <= d_k."
    assert bottleneck_theorem().reasoning[0] == ("The model's scaled scores S'_i = S_i / sqrt(d_k) have proven "
                                                 "rank <= Min(d_k, n) <= d_k.")


def test_bottleneck_theorem_of_cross_attention_is_about_min_n_n_kv():
    """Keys from a second sequence: the unattainable P is n x n_kv and the theorem needs d_k <= min(n, n_kv) - 2
    (with n_kv = 1 every row of P is [1] and nothing is excluded); the self-attention statement would be wrong."""
    from sympy import Min

    claim = bottleneck_theorem(MultiHeadAttention(n=4, d_model=8, h=2, n_kv=3))
    general = MultiHeadAttention(n=4, d_model=8, h=2, n_kv=3).generalised()
    n, n_kv, d_k = general.dims.n, general.n_kv, general.dims.d_k
    assert claim.verdict == "true: proof for symbolic sizes"
    assert claim.instance == {"bound": Min(d_k, n, n_kv), "m": Min(n, n_kv)}
    assert claim.statement.startswith("d_k <= min(n, n_kv) - 2")
    assert claim.scope == "d_k <= min(n, n_kv) - 2 (proof for every n, n_kv); undecided at d_k = min(n, n_kv) - 1"
    assert "a = log(n_kv - 1 + E)" in claim.reasoning[2] and "n_kv = m and m + 1: all hold" in claim.reasoning[2]
    # the variant's other options do not change the statement of self-attention
    multi_query = MultiHeadAttention(n=4, d_model=8, h=2, kv_heads=1)
    assert bottleneck_theorem(multi_query).statement == bottleneck_theorem().statement


def test_bottleneck_theorem_with_an_additive_mask_is_refuted_by_the_mask():
    """M is an input: M = log P attains every P (review).  The witness is computed by exact evaluation."""
    claim = bottleneck_theorem(MultiHeadAttention(n=3, d_model=4, h=2, mask="additive"))
    assert claim.verdict == "false: counterexample" and claim.kind == "exact counterexample"
    assert claim.reasoning[1].endswith("(computed exactly: equal).")
    # a key-padding mask of ones is the unmasked softmax: the theorem stands
    assert bottleneck_theorem(MultiHeadAttention(n=3, d_model=4, h=2, mask="key_padding")).verdict == \
        "true: proof for symbolic sizes"


def test_low_rank_bottleneck_certificates():
    below = low_rank_bottleneck(4, 2)  # d_k <= n - 2: log P has certified full rank
    assert below.certificate is not None and below.certificate.excludes_zero and below.certificate.size == 4
    edge = low_rank_bottleneck(3, 2)  # d_k = n - 1
    assert edge.statement == "d_k = 2 = n - 1: the rank argument cannot exhibit an unattainable P"
    assert edge.certificate is not None and edge.certificate.excludes_zero and edge.kind == "no certificate"
    assert edge.verdict == "undecided: the rank certificate needs d_k <= n - 2"


def test_softmax_counterexample_instance():
    c = softmax_rank_counterexample()
    assert c.instance["X"] == ImmutableMatrix([[0], [1], [2]])
    A = c.instance["A"]
    assert A[0, 0] == ImmutableMatrix([[1]])[0, 0] / 3  # row 0 of X X^T is 0
    assert (A[1, 2] - exp(2) / (1 + E + exp(2))).simplify() == 0
    assert c.certificate.size == 3 and c.certificate.excludes_zero


def test_split_equals_projection_explicit_check_can_fail(monkeypatch):
    import mha_symbolic.proofs.conventions as conventions

    assert split_equals_projection(max_h=2).verified
    real = conventions.embed_split_weight
    monkeypatch.setattr(conventions, "embed_split_weight", lambda W, k, h: real(W.T, k, h))  # a wrong embedding
    proof = conventions.split_equals_projection(max_h=2)
    assert not proof.verified
    assert [ok for _, ok in proof.checks] == [True, False, False]  # symbolic blocks hold; explicit and model fail


def test_flops_of_a_chain_follow_each_product():
    A, B, C = MatrixSymbol("A", 2, 3), MatrixSymbol("B", 3, 4), MatrixSymbol("C", 4, 5)
    flops = expression_flops(MatMul(A, B, C))
    assert sum(flops.values()) == 2 * 2 * 3 * 4 + 2 * 2 * 4 * 5  # (A B) is 2 x 4, then (A B) C


def test_score_mean_statement():
    M = MultiHeadAttention()
    v = ScoreStatistic("E", stated=lambda d, s: 0).decide(M)
    assert (v.verdict, v.expected) == ("true", "0")
    assert ScoreStatistic("E", stated=lambda d, s: d).decide(M).verdict == "false"


def test_value_statement_on_the_input_and_on_inconsistent_givens():
    M = MultiHeadAttention(n=1, d_model=4, h=2)
    v = ValueStatement("X", [[1, 2, 3, 4]], givens={"X": [[1, 2, 3, 4]]}).decide(M)
    assert v.verdict == "true" and v.detail.startswith("X = [1, 2, 3, 4] computed exactly")
    assert ValueStatement("X", [[1, 2, 3, 5]], givens={"X": [[1, 2, 3, 4]]}).decide(M).verdict == "false"
    bad = ValueStatement("head_1", [[1, 2]], givens={"X": [[1, 2, 3]]}).decide(M)
    assert bad.verdict == "inconsistent" and bad.detail == ("the givens do not fit the model: X has shape (1, 3); "
                                                            "the model expects (n, d_model) = (1, 4)")


@pytest.mark.parametrize("n, d_k", [(4, 2), (5, 3)])
def test_bottleneck_instances_are_certified(n, d_k):
    claim = low_rank_bottleneck(n, d_k)
    assert claim.verdict == "true: certified" and claim.instance["P"].shape == (n, n)
