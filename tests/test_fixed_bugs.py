"""Bugs found by mutation testing (issue 11), fixed: each test failed before its fix."""

from __future__ import annotations

import numpy as np

from mha_symbolic import MultiHeadAttention
from mha_symbolic.numeric import lambdify_model as lambdify


def test_numpy_booleans_are_flags():
    assert MultiHeadAttention(n=2, d_model=4, h=2, causal=np.True_).causal
    assert not MultiHeadAttention(n=2, d_model=4, h=2, causal=np.False_).causal


def test_entrywise_path_takes_biases_and_agrees_with_the_matrix_path():
    M = MultiHeadAttention(n=2, d_model=4, h=2, bias=True)
    rng = np.random.default_rng(0)
    X = rng.normal(size=(2, 4))
    W = {k: rng.normal(size=(2, 4, 2)) for k in ("W_Q", "W_K", "W_V")}
    W_O = rng.normal(size=(4, 4))
    b = {k: rng.normal(size=(2, 2)) for k in ("b_Q", "b_K", "b_V")}
    b["b_O"] = rng.normal(size=4)
    entrywise = lambdify(M, entrywise=True)(X, W["W_Q"], W["W_K"], W["W_V"], W_O, **b)
    matrix = lambdify(M)(X, W["W_Q"], W["W_K"], W["W_V"], W_O, **b)
    assert entrywise.shape == (2, 4)
    np.testing.assert_allclose(entrywise, matrix, rtol=1e-12, atol=1e-12)
    b2 = dict(b, b_V=b["b_V"] + 1.0)  # the value bias changes the output: it is really used
    assert not np.allclose(lambdify(M, entrywise=True)(X, W["W_Q"], W["W_K"], W["W_V"], W_O, **b2), entrywise)
