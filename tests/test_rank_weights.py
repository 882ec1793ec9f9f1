"""Rank claims about attention weights decided at the sizes asked: a proof at any size (the Vandermonde
instance, the causal triangle) and a certified minor of a generic instance at the model's own sizes."""

from __future__ import annotations

import pytest

from mha_symbolic import InputError, MultiHeadAttention
from mha_symbolic.rank.attention_weights import certified_weights_rank, vandermonde_instance, weights_rank
from mha_symbolic.rank.certify import certify_rank_at_least, exact_rank
from mha_symbolic.statements._base import generic_instance
from mha_symbolic.statements.ranks import RankStatement

AT_MOST_D_K = RankStatement("A_1", "le", lambda D: D.d_k)


def test_a_false_claim_at_a_realistic_size_is_refuted_there():
    """rank(A_1) <= d_k at n = 70, d_model = 768, h = 12 (d_k = 64) came back `undecided` ("no certified
    counterexample was found at small sizes"); n > d_k is fixed, so it is false at exactly these sizes."""
    v = AT_MOST_D_K.decide(MultiHeadAttention(n=70, d_model=768, h=12))
    assert (v.verdict, v.basis, v.expected) == ("false", "proof", "rank(A_1) = 70")
    assert "fails at n = 70, d_model = 768, h = 12, d_k = 64" in v.detail
    assert "Vandermonde" in v.detail and "a 65 x 65 minor of A_1" in v.detail and "(certified)" in v.detail
    assert v.scope == "fails whenever n > 64"


def test_the_causal_case_is_false_for_every_input_once_n_exceeds_d_k():
    v = AT_MOST_D_K.decide(MultiHeadAttention(d_model=768, h=12, causal=True))
    assert v.verdict == "false" and "fails at n = 65" in v.detail and "for every input" in v.detail
    assert v.scope == "fails whenever n > 64, for every input"
    general = AT_MOST_D_K.decide(MultiHeadAttention(causal=True))
    assert general.verdict == "false" and general.scope == "fails whenever n > d_k, for every input"


def test_the_claim_holds_where_n_does_not_exceed_d_k():
    assert AT_MOST_D_K.decide(MultiHeadAttention(n=64, d_model=768, h=12)).verdict == "true"
    # cross-attention: A is n x n_kv, so rank A <= n_kv = 3 < d_k = 4
    assert AT_MOST_D_K.decide(MultiHeadAttention(n=4, d_model=8, h=2, n_kv=3)).verdict == "true"
    assert RankStatement("A_1", "lt", lambda D: D.d_k).decide(
        MultiHeadAttention(n=5, d_model=8, h=2)).verdict == "false"  # rank 5, not < 4


@pytest.mark.parametrize("model, head", [
    (MultiHeadAttention(n=4, d_model=4, h=2), 2),
    (MultiHeadAttention(n=5, d_model=4, h=2, convention="split"), 2),  # head 2 reads its own block of X
    (MultiHeadAttention(n=5, d_model=8, h=4, kv_heads=2), 3),        # query head 3 reads key/value head 2
    (MultiHeadAttention(n=3, d_model=4, h=2, n_kv=5), 1),            # cross-attention: rank min(n, n_kv) = 3
    (MultiHeadAttention(n=5, d_model=4, h=2, n_kv=3), 2),            # more queries than keys: rank n_kv = 3
    (MultiHeadAttention(n=6, d_model=2, h=2, scale=3), 1),           # any positive scale
])
def test_the_vandermonde_instance_attains_full_rank_exactly(model, head):
    """The argument of the proof, checked by computing: the instance's weights evaluated exactly by the engine
    have full rank, and the logits' rank is 1 (so the softmax is what raises it)."""
    E = model.evaluate(**vandermonde_instance(model, head))
    full = min(int(model.dims.n), int(model.n_kv))
    assert weights_rank(model, head).rank == full
    assert certify_rank_at_least(E[f"A_{head}"], full).excludes_zero
    assert exact_rank(E[f"S_{head}"]) == 1


def test_the_causal_weights_have_rank_n_on_any_input():
    model = MultiHeadAttention(n=4, d_model=4, h=2, causal=True)
    for seed in range(3):
        A = model.evaluate(**generic_instance(model, seed))["A_1"]
        assert all(A[a, b] == 0 for a in range(4) for b in range(a + 1, 4))
        assert certify_rank_at_least(A, 4).excludes_zero
    assert weights_rank(model).every_input and not weights_rank(model.replace_options(causal=False)).every_input


def test_ball_certificates_at_the_models_own_sizes():
    wide = MultiHeadAttention(n=70, d_model=768, h=12)
    assert certified_weights_rank(wide, 70).excludes_zero
    assert certified_weights_rank(wide.replace_options(causal=True), 70).excludes_zero
    with pytest.raises(InputError, match="concrete sizes"):
        certified_weights_rank(MultiHeadAttention(d_model=8, h=2), 3)
    with pytest.raises(InputError, match="no key-padding or additive mask"):
        certified_weights_rank(MultiHeadAttention(n=3, d_model=4, h=2, mask="key_padding"), 3)
    assert weights_rank(MultiHeadAttention(n=3, d_model=4, h=2, mask="additive")) is None


def test_causal_cross_attention_has_rank_min_n_n_kv_for_every_input():
    for n, n_kv in ((5, 3), (3, 5)):
        model = MultiHeadAttention(n=n, d_model=4, h=2, n_kv=n_kv, causal=True)
        w = weights_rank(model)
        assert (w.rank, w.every_input) == (min(n, n_kv), True)
        A = model.evaluate(**generic_instance(model, 0))["A_1"]
        assert all(A[a, b] == 0 for a in range(n) for b in range(n_kv) if b > a)
        assert certify_rank_at_least(A, min(n, n_kv)).excludes_zero


def test_the_ball_certificate_uses_the_causal_mask():
    """Four tokens of width 1 with entries in {-1, 0, 1}: two are equal (pigeonhole), so without the mask two
    rows of A are equal and no 4 x 4 minor exists; with it A is triangular with a positive diagonal."""
    causal = MultiHeadAttention(n=4, d_model=1, h=1, causal=True)
    assert certified_weights_rank(causal, 4).excludes_zero
    assert not certified_weights_rank(causal.replace_options(causal=False), 4).excludes_zero


def test_bad_arguments_are_named():
    model = MultiHeadAttention(n=3, d_model=4, h=2)
    with pytest.raises(InputError, match="weights_rank takes a MultiHeadAttention, got NoneType"):
        weights_rank(None)
    with pytest.raises(InputError, match=r"head must be one of 1..2 \(heads are numbered from 1\), got 5"):
        weights_rank(model, 5)
    with pytest.raises(InputError, match="got 0"):
        certified_weights_rank(model, 3, head=0)
