from __future__ import annotations

import numpy as np
import pytest
from sympy import ImmutableMatrix, Matrix, MatrixSymbol, zeros

from mha_symbolic import InputError, MultiHeadAttention
from mha_symbolic.proofs import embed_split_weight, split_equals_projection


def test_proof_verified_with_every_check():
    proof = split_equals_projection(max_h=3)
    assert proof.verified and bool(proof)
    assert len(proof.checks) == 3 and all(ok for _, ok in proof.checks)
    assert "block_collapse" in proof.checks[0][0]
    assert proof.kind == "proof"


def test_embed_places_block():
    P = embed_split_weight([[1, 2], [3, 4]], 2, 3)
    assert P.shape == (6, 2)
    assert P[2:4, :] == ImmutableMatrix([[1, 2], [3, 4]])
    assert P[:2, :] == zeros(2, 2) and P[4:, :] == zeros(2, 2)
    with pytest.raises(InputError, match="head index 4 is outside 1..3"):
        embed_split_weight([[1]], 4, 3)


def test_slice_times_W_equals_X_times_embedded_symbolically():
    X = MatrixSymbol("X", 3, 6).as_explicit()
    W = MatrixSymbol("W", 2, 2).as_explicit()
    for i in (1, 2, 3):
        assert (X[:, 2 * (i - 1): 2 * i] * W - X * embed_split_weight(W, i, 3)).expand() == zeros(3, 2)


def test_models_agree_on_numbers():
    rng = np.random.default_rng(11)
    X = rng.integers(-3, 4, (3, 6))
    W = {k: [rng.integers(-2, 3, (2, 2)) for _ in range(3)] for k in ("W_Q", "W_K", "W_V")}
    W_O = rng.integers(-2, 3, (6, 6))
    a = MultiHeadAttention(n=3, d_model=6, h=3, convention="split").evaluate(X=X, W_O=W_O, **W)
    P = {k: [embed_split_weight(Matrix(m), i, 3) for i, m in enumerate(v, 1)] for k, v in W.items()}
    b = MultiHeadAttention(n=3, d_model=6, h=3, convention="projection").evaluate(X=X, W_O=W_O, **P)
    assert a.output == b.output
    assert all(a[f"A_{i}"] == b[f"A_{i}"] for i in (1, 2, 3))


def test_a_wrong_embedding_is_detected():
    """The check can fail: putting W in the wrong row block gives a different product."""
    X = MatrixSymbol("X", 2, 4).as_explicit()
    W = MatrixSymbol("W", 2, 2).as_explicit()
    assert (X[:, 0:2] * W - X * embed_split_weight(W, 2, 2)).expand() != zeros(2, 2)
