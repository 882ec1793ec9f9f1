from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sympy import ImmutableMatrix, Rational, exp, simplify, sqrt

from mha_symbolic import DimensionError, InputError, MultiHeadAttention, ShapeError, SizeLimitError
from mha_symbolic.evaluation import DEFAULT_MAX_TERMS, estimate_terms


def reference_mha(X, WQ, WK, WV, WO, causal=False, split=False):
    """Plain NumPy multi-head attention, written independently of the package."""
    X = np.asarray(X, dtype=float)
    heads = []
    h = len(WQ)
    width = X.shape[1] // h
    for i in range(h):
        Xi = X[:, i * width:(i + 1) * width] if split else X
        Q, K, V = Xi @ np.asarray(WQ[i], float), Xi @ np.asarray(WK[i], float), Xi @ np.asarray(WV[i], float)
        S = Q @ K.T / np.sqrt(Q.shape[1])
        if causal:
            S = np.where(np.triu(np.ones_like(S), k=1) > 0, -np.inf, S)
        S = S - S.max(axis=1, keepdims=True)
        A = np.exp(S) / np.exp(S).sum(axis=1, keepdims=True)
        heads.append(A @ V)
    return np.concatenate(heads, axis=1) @ np.asarray(WO, float)


def random_inputs(rng, n, d_model, h, split=False):
    dk = d_model // h
    rows = dk if split else d_model
    X = rng.integers(-3, 4, size=(n, d_model))
    W = {k: [rng.integers(-2, 3, size=(rows, dk)) for _ in range(h)] for k in ("W_Q", "W_K", "W_V")}
    return dict(X=X, **W, W_O=rng.integers(-2, 3, size=(d_model, d_model)))


@pytest.mark.parametrize("convention", ["projection", "split"])
@pytest.mark.parametrize("causal", [False, True], ids=["full", "causal"])
@pytest.mark.parametrize("n, d_model, h", [(3, 4, 2), (4, 6, 3), (2, 4, 1), (5, 4, 4)])
def test_matches_independent_numpy(n, d_model, h, convention, causal):
    rng = np.random.default_rng(n * 100 + d_model * 10 + h)
    inputs = random_inputs(rng, n, d_model, h, split=convention == "split")
    E = MultiHeadAttention(n=n, d_model=d_model, h=h, convention=convention, causal=causal).evaluate(**inputs)
    ref = reference_mha(inputs["X"], inputs["W_Q"], inputs["W_K"], inputs["W_V"], inputs["W_O"],
                        causal=causal, split=convention == "split")
    np.testing.assert_allclose(E.numeric(), ref, rtol=1e-12, atol=1e-12)


@settings(max_examples=25, deadline=None)
@given(st.integers(1, 4), st.sampled_from([(2, 1), (2, 2), (4, 2), (6, 3)]), st.booleans(), st.integers(0, 10**6))
def test_matches_numpy_property(n, dims, causal, seed):
    d_model, h = dims
    inputs = random_inputs(np.random.default_rng(seed), n, d_model, h)
    E = MultiHeadAttention(n=n, d_model=d_model, h=h, causal=causal).evaluate(**inputs)
    ref = reference_mha(inputs["X"], inputs["W_Q"], inputs["W_K"], inputs["W_V"], inputs["W_O"], causal=causal)
    np.testing.assert_allclose(E.numeric(), ref, rtol=1e-12, atol=1e-12)


def test_decimals_become_exact_rationals():
    E = MultiHeadAttention(n=1, d_model=2, h=1, d_k=1).evaluate(X=[[0.1, 0.2]], W_Q=[[[1], [1]]], W_K=[[[1], [0]]],
                                             W_V=[[[1], [1]]], W_O=[[1, 0]])
    assert E["Q_1"] == ImmutableMatrix([[Rational(3, 10)]])
    assert E["S'_1"] == ImmutableMatrix([[Rational(3, 100)]])  # d_k = 1
    assert E["A_1"] == ImmutableMatrix([[1]])


def test_causal_upper_triangle_zero_rows_sum_to_one():
    rng = np.random.default_rng(7)
    E = MultiHeadAttention(n=4, d_model=4, h=2, causal=True).evaluate(**random_inputs(rng, 4, 4, 2))
    for name in ("A_1", "A_2"):
        A = E[name]
        assert all(A[i, j] == 0 for i in range(4) for j in range(4) if j > i)
        assert all(simplify(sum(A.row(i)) - 1) == 0 for i in range(4))


def test_dimensions_inferred_from_inputs():
    I2 = [[1, 0], [0, 1]]
    E = MultiHeadAttention(convention="split").evaluate(X=[[1, 0, 1, 0], [0, 1, 0, 1]], W_Q=[I2, I2],
                                                        W_K=[I2, I2], W_V=[I2, I2], W_O=np.eye(4, dtype=int))
    assert E.model == MultiHeadAttention(n=2, d_model=4, h=2, convention="split")
    e = exp(sqrt(2) / 2)
    assert E["A_2"][1, 1] == e / (1 + e)


def test_symbolic_entries_for_small_models():
    M = MultiHeadAttention(n=2, d_model=2, h=1)
    E = M.evaluate()
    X = M.inputs["X"]
    assert E["Q_1"][0, 0] == X[0, 0] * M.inputs["W_Q"][0][0, 0] + X[0, 1] * M.inputs["W_Q"][0][1, 0]
    # substituting numbers into the symbolic result equals evaluating with the numbers
    rng = np.random.default_rng(3)
    inputs = random_inputs(rng, 2, 2, 1)
    numeric = M.evaluate(**inputs).numeric()
    subs = {X[i, j]: int(inputs["X"][i, j]) for i in range(2) for j in range(2)}
    for key in ("W_Q", "W_K", "W_V"):
        W = M.inputs[key][0]
        subs.update({W[i, j]: int(inputs[key][0][i, j]) for i in range(2) for j in range(2)})
    subs.update({M.W_O[i, j]: int(inputs["W_O"][i, j]) for i in range(2) for j in range(2)})
    via_symbols = np.array(E.output.xreplace(subs).evalf(30).tolist(), dtype=float)
    np.testing.assert_allclose(via_symbols, numeric, rtol=1e-13)


def test_size_limit_fails_fast_with_advice():
    M = MultiHeadAttention(n=64, d_model=64, h=4)
    assert estimate_terms(M.dims) > DEFAULT_MAX_TERMS
    with pytest.raises(SizeLimitError, match="n=64, d_model=64, h=4 would build about .* use numeric evaluation"):
        M.evaluate(X=np.ones((64, 64)), W_Q=np.ones((4, 64, 16)), W_K=np.ones((4, 64, 16)),
                   W_V=np.ones((4, 64, 16)), W_O=np.ones((64, 64)))
    with pytest.raises(SizeLimitError, match="limit 10"):
        MultiHeadAttention(n=2, d_model=2, h=1).evaluate(max_terms=10)


@pytest.mark.parametrize(
    "change, error, message",
    [
        pytest.param({"W_Q": [np.eye(4)[:, :2]] * 3}, InputError, "W_Q: expected h=2 per-head matrices, got 3",
                     id="weight-count"),
        pytest.param({"W_O": np.eye(3)}, ShapeError,
                     r"step Output = Concat W_O: \(2, 4\) x \(3, 3\) — inner dimensions 4 and 3 differ",
                     id="W_O-inner"),
        pytest.param({"W_O": np.ones((4, 5))}, ShapeError,
                     r"step Output = Concat W_O: the result has shape \(2, 5\), but the model expects \(2, 4\)",
                     id="W_O-outer"),
        pytest.param({"W_V": [np.ones((4, 3))] * 2}, ShapeError,
                     r"step V_1 = X W_V\^1: the result has shape \(2, 3\), but the model expects \(2, 2\)",
                     id="W_V-width"),
        pytest.param({"X": np.ones((3, 4))}, ShapeError,
                     r"X has shape \(3, 4\); the model expects \(n, d_model\) = \(2, 4\)", id="X-shape"),
        pytest.param({"X": [[1, 2, 3, float("inf")], [0, 0, 0, 0]]}, InputError, r"X entry \(0, 3\) is inf",
                     id="X-inf"),
        pytest.param({"W_K": "identity"}, InputError, "W_K must be a list of per-head matrices, got str",
                     id="W_K-type"),
    ],
)
def test_bad_inputs(change, error, message):
    inputs = {"X": np.ones((2, 4)), "W_Q": [np.eye(4)[:, :2]] * 2, "W_K": [np.eye(4)[:, :2]] * 2,
              "W_V": [np.eye(4)[:, :2]] * 2, "W_O": np.eye(4)}
    inputs.update(change)
    with pytest.raises(error, match=message):
        MultiHeadAttention(n=2, d_model=4, h=2).evaluate(**inputs)


def test_symbolic_dimensions_without_inputs_refused():
    with pytest.raises(DimensionError, match=r"cannot evaluate with symbolic dimensions \['n', 'd_model'"):
        MultiHeadAttention().evaluate()


def test_numeric_refuses_symbolic_entries():
    with pytest.raises(InputError, match="has symbolic entries"):
        MultiHeadAttention(n=1, d_model=1, h=1).evaluate().numeric()


def test_biases_broadcast_over_tokens():
    rng = np.random.default_rng(5)
    inputs = random_inputs(rng, 3, 4, 2)
    b = {k: rng.integers(-2, 3, (2, 2)) for k in ("b_Q", "b_K", "b_V")}
    b_O = rng.integers(-2, 3, 4)
    E = MultiHeadAttention(n=3, d_model=4, h=2, bias=True).evaluate(**inputs, **b, b_O=b_O)
    X = inputs["X"].astype(float)
    heads = []
    for i in range(2):
        Q = X @ inputs["W_Q"][i] + b["b_Q"][i]
        K = X @ inputs["W_K"][i] + b["b_K"][i]
        V = X @ inputs["W_V"][i] + b["b_V"][i]
        S = Q @ K.T / np.sqrt(2)
        A = np.exp(S - S.max(1, keepdims=True))
        heads.append(A / A.sum(1, keepdims=True) @ V)
    ref = np.concatenate(heads, 1) @ inputs["W_O"] + b_O
    np.testing.assert_allclose(E.numeric(), ref, rtol=1e-12)
    assert E["Q_1"] == ImmutableMatrix(X.astype(int) @ inputs["W_Q"][0] + b["b_Q"][0])


def test_bias_errors():
    with pytest.raises(InputError, match="b_O given, but the model has no biases"):
        MultiHeadAttention(n=2, d_model=4, h=2).evaluate(b_O=[1, 2, 3, 4])
    with pytest.raises(InputError, match="b_Q: expected h=2 per-head vectors, got 3"):
        MultiHeadAttention(n=2, d_model=4, h=2, bias=True).evaluate(b_Q=np.zeros((3, 2)))
    with pytest.raises(ShapeError, match=r"step Q_1 = X W_Q\^1 \+ 1 b_Q\^1: cannot add \(2, 2\) and \(2, 3\)"):
        MultiHeadAttention(n=2, d_model=4, h=2, bias=True).evaluate(X=np.ones((2, 4)), b_Q=np.zeros((2, 3)))


# ----- asymmetric, non-square, per-head-different weights: softmax direction and head order matter -------
ASYM_X = [[1, 0, 2, -1], [0, 1, -1, 1], [2, -1, 0, 1]]
ASYM_WQ = [[[1, 0], [0, 1], [1, -1], [0, 2]], [[0, 1], [2, 0], [0, -1], [1, 1]]]
ASYM_WK = [[[0, 1], [1, 1], [-1, 0], [2, 0]], [[1, -1], [0, 0], [1, 1], [0, 1]]]
ASYM_WV = [[[1, 2], [0, 1], [-1, 0], [1, 1]], [[0, 1], [1, 0], [2, -1], [0, 0]]]
ASYM_WO = [[1, 0, 0, 2], [0, -1, 1, 0], [1, 1, 0, 0], [0, 0, -1, 1]]


def independent_steps(causal):
    """Every step of 2-head attention with NumPy, written here: rows of A are softmaxes over keys."""
    X = np.array(ASYM_X, dtype=float)
    steps, heads = {}, []
    for i in range(2):
        Q, K, V = (X @ np.array(W[i], dtype=float) for W in (ASYM_WQ, ASYM_WK, ASYM_WV))
        S = Q @ K.T
        scaled = S / np.sqrt(2.0)
        weights = np.exp(scaled)
        if causal:
            weights = np.tril(weights)  # token t sees keys 0..t
        A = weights / weights.sum(axis=1, keepdims=True)
        head = A @ V
        heads.append(head)
        steps.update({f"Q_{i + 1}": Q, f"K_{i + 1}": K, f"V_{i + 1}": V, f"S_{i + 1}": S, f"S'_{i + 1}": scaled,
                      f"A_{i + 1}": A, f"head_{i + 1}": head})
    steps["Concat"] = np.concatenate(heads, axis=1)
    steps["Output"] = steps["Concat"] @ np.array(ASYM_WO, dtype=float)
    return steps


@pytest.mark.parametrize("causal", [False, True], ids=["full", "causal"])
def test_every_step_on_asymmetric_scores(causal):
    ref = independent_steps(causal)
    for i in (1, 2):  # the fixture is what it claims: scores and attention are not symmetric
        assert not np.allclose(ref[f"S_{i}"], ref[f"S_{i}"].T)
    assert not np.allclose(ref["A_1"], ref["A_2"]) and not np.allclose(ref["head_1"], ref["head_2"])
    E = MultiHeadAttention(n=3, d_model=4, h=2, causal=causal).evaluate(X=ASYM_X, W_Q=ASYM_WQ, W_K=ASYM_WK, W_V=ASYM_WV,
                                                            W_O=ASYM_WO)
    assert set(E.keys()) == set(ref)
    for name, want in ref.items():
        got = np.array(E[name].evalf(30).tolist(), dtype=float)
        assert got.shape == want.shape, name
        np.testing.assert_allclose(got, want, rtol=0, atol=1e-12, err_msg=name)
    for name in ("A_1", "A_2"):
        A = E[name]
        assert all(simplify(sum(A.row(r)) - 1) == 0 for r in range(3))  # rows, exactly
        if causal:
            assert all(A[r, c] == 0 for r in range(3) for c in range(3) if c > r)
    assert E["S_1"] == ImmutableMatrix(np.array(ASYM_X) @ np.array(ASYM_WQ[0]) @ np.array(ASYM_WK[0]).T @
                                       np.array(ASYM_X).T)  # exact integers
    np.testing.assert_allclose(E.numeric(), ref["Output"], rtol=0, atol=1e-12)
