from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mha_symbolic import InputError, MultiHeadAttention, ShapeError, example, stable_softmax


def reference(X, WQ, WK, WV, WO, causal=False, bQ=None, bK=None, bV=None, bO=None):
    """Plain NumPy MHA over leading batch axes, written independently of the package."""
    h = len(WQ)
    outs, steps = [], {}
    for i in range(h):
        Q = X @ WQ[i] + (0 if bQ is None else bQ[i])
        K = X @ WK[i] + (0 if bK is None else bK[i])
        V = X @ WV[i] + (0 if bV is None else bV[i])
        S = Q @ np.swapaxes(K, -1, -2) / np.sqrt(Q.shape[-1])
        if causal:
            n = S.shape[-1]
            S = np.where(np.arange(n)[None, :] > np.arange(n)[:, None], -np.inf, S)
        E = np.exp(S - S.max(-1, keepdims=True))
        A = E / E.sum(-1, keepdims=True)
        steps[f"A_{i + 1}"] = A
        outs.append(A @ V)
    return np.concatenate(outs, -1) @ WO + (0 if bO is None else bO), steps


CONFIGS = [(1, 1), (2, 1), (2, 2), (4, 1), (4, 2), (4, 4), (6, 2), (6, 3), (8, 2), (8, 4)]


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(n=st.integers(1, 6), dims=st.sampled_from(CONFIGS), causal=st.booleans(),
       batch=st.sampled_from([(), (1,), (3,), (2, 2)]), seed=st.integers(0, 2**32 - 1))
def test_agrees_with_independent_numpy(n, dims, causal, batch, seed):
    d_model, h = dims
    dk = d_model // h
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(*batch, n, d_model))
    W = {k: rng.normal(size=(h, d_model, dk)) for k in ("W_Q", "W_K", "W_V")}
    WO = rng.normal(size=(d_model, d_model))
    f = MultiHeadAttention(d_model=d_model, h=h, causal=causal).lambdify()
    got = f(X, **W, W_O=WO)
    want, _ = reference(X, W["W_Q"], W["W_K"], W["W_V"], WO, causal=causal)
    assert got.shape == (*batch, n, d_model)
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("name", ["seed000", "seed001", "seed003"])
def test_agrees_with_exact_evaluation_on_seeds(name):
    ex = example(name)
    exact = ex.evaluate()
    f = ex.model.lambdify()
    arrays = {k: np.asarray(v, dtype=float) for k, v in ex.inputs.items()}  # per-head lists stack to 3-D
    out, steps = f(**arrays, steps=True)
    np.testing.assert_allclose(out, exact.numeric(), rtol=1e-12, atol=1e-12)
    for step in exact:
        np.testing.assert_allclose(steps[step], exact.numeric(step), rtol=1e-12, atol=1e-12, err_msg=step)


def test_large_scores_stay_finite():
    S = np.array([[1e4, 0.0, -1e4], [5e3, 5e3, 0.0]])
    A = stable_softmax(S)
    assert np.isfinite(A).all()
    np.testing.assert_allclose(A, [[1.0, 0.0, 0.0], [0.5, 0.5, 0.0]], atol=1e-300)
    # through the whole model: scores of order 1e4
    f = MultiHeadAttention(d_model=2, h=1).lambdify()
    X = np.array([[100.0, 0.0], [0.0, 100.0]])
    out = f(X, W_Q=[np.eye(2)], W_K=[np.eye(2)], W_V=[np.eye(2)], W_O=np.eye(2))
    assert np.isfinite(out).all()
    np.testing.assert_allclose(out, X, atol=1e-12)  # each token attends to itself only


def test_causal_mask_exact_zeros():
    f = MultiHeadAttention(d_model=4, h=2, causal=True).lambdify()
    rng = np.random.default_rng(1)
    _, steps = f(rng.normal(size=(5, 4)), W_Q=rng.normal(size=(2, 4, 2)), W_K=rng.normal(size=(2, 4, 2)),
                 W_V=rng.normal(size=(2, 4, 2)), W_O=rng.normal(size=(4, 4)), steps=True)
    A = steps["A_1"]
    assert (A[np.triu_indices(5, 1)] == 0.0).all()
    np.testing.assert_allclose(A.sum(-1), 1.0, rtol=1e-15)
    assert A[0, 0] == 1.0


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_dtype_kept(dtype):
    rng = np.random.default_rng(2)
    f = MultiHeadAttention(d_model=4, h=2).lambdify()
    args = dict(X=rng.normal(size=(2, 3, 4)).astype(dtype), W_Q=rng.normal(size=(2, 4, 2)).astype(dtype),
                W_K=rng.normal(size=(2, 4, 2)).astype(dtype), W_V=rng.normal(size=(2, 4, 2)).astype(dtype),
                W_O=rng.normal(size=(4, 4)).astype(dtype))
    out, steps = f(**args, steps=True)
    assert out.dtype == dtype and all(v.dtype == dtype for v in steps.values())
    want, _ = reference(*(args[k].astype(np.float64) for k in ("X", "W_Q", "W_K", "W_V", "W_O")))
    np.testing.assert_allclose(out, want, rtol=1e-4 if dtype == np.float32 else 1e-12, atol=1e-5)


def test_steps_returned_and_match_reference():
    rng = np.random.default_rng(4)
    W = {k: list(rng.normal(size=(2, 4, 2))) for k in ("W_Q", "W_K", "W_V")}
    X, WO = rng.normal(size=(3, 4)), rng.normal(size=(4, 4))
    out, steps = MultiHeadAttention(d_model=4, h=2).lambdify()(X, **W, W_O=WO, steps=True)
    assert list(steps) == ["Q_1", "K_1", "V_1", "S_1", "S'_1", "A_1", "head_1", "Q_2", "K_2", "V_2", "S_2",
                           "S'_2", "A_2", "head_2", "Concat", "Output"]
    want, ref_steps = reference(X, W["W_Q"], W["W_K"], W["W_V"], WO)
    np.testing.assert_allclose(steps["A_2"], ref_steps["A_2"], rtol=1e-12)
    np.testing.assert_allclose(steps["S'_1"], steps["S_1"] / np.sqrt(2), rtol=1e-15)
    assert out is steps["Output"]


def test_split_convention_and_symbolic_heads():
    rng = np.random.default_rng(6)
    X = rng.normal(size=(2, 5, 6))
    W = {k: rng.normal(size=(3, 2, 2)) for k in ("W_Q", "W_K", "W_V")}
    WO = rng.normal(size=(6, 6))
    f = MultiHeadAttention(convention="split").lambdify()  # everything symbolic: bound at call time
    got = f(X, **W, W_O=WO)
    blocks = [X[..., 2 * i:2 * i + 2] for i in range(3)]
    heads = []
    for i in range(3):
        Q, K, V = (blocks[i] @ W[k][i] for k in ("W_Q", "W_K", "W_V"))
        S = Q @ np.swapaxes(K, -1, -2) / np.sqrt(2)
        E = np.exp(S - S.max(-1, keepdims=True))
        heads.append(E / E.sum(-1, keepdims=True) @ V)
    np.testing.assert_allclose(got, np.concatenate(heads, -1) @ WO, rtol=1e-12)


def test_entrywise_path_agrees_with_matrix_path():
    M = MultiHeadAttention(n=3, d_model=4, h=2, causal=True)
    rng = np.random.default_rng(8)
    args = dict(X=rng.normal(size=(3, 4)), W_Q=rng.normal(size=(2, 4, 2)), W_K=rng.normal(size=(2, 4, 2)),
                W_V=rng.normal(size=(2, 4, 2)), W_O=rng.normal(size=(4, 4)))
    entrywise = M.lambdify(entrywise=True)
    assert entrywise.expr.shape == (3, 4) and entrywise.expr.free_symbols
    np.testing.assert_allclose(entrywise(**args), M.lambdify()(**args), rtol=1e-12)


def test_generated_code_is_matrix_level():
    src = MultiHeadAttention(d_model=512, h=8).lambdify().source
    assert "W = concatenate([W_Q_1, W_Q_2, W_Q_3, W_Q_4, W_Q_5, W_Q_6, W_Q_7, W_Q_8], axis=-1, dtype=dtype)" in src
    # the scale 1/sqrt(64) times log2(e), folded into the queries: the softmax takes exp2
    assert "W *= 0.18033688011112042" in src and "Q = _project(X, W)" in src and "exp2(S, out=S)" in src
    assert "[0, 0]" not in src and src.count("\n") < 80


@pytest.mark.parametrize(
    "change, error, message",
    [
        pytest.param({"X": np.ones((2, 5))}, ShapeError,
                     r"X has shape \(2, 5\); expected \(\.\.\., n, 4\) = \(\.\.\., n, d_model\)", id="X-width"),
        pytest.param({"W_Q": np.ones((3, 4, 2))}, InputError, "W_Q: expected h=2 per-head matrices, got 3",
                     id="head-count"),
        pytest.param({"W_K": np.ones((2, 4, 3))}, ShapeError, r"W_K\[1\] has shape \(4, 3\); expected \(4, 2\)",
                     id="W_K-shape"),
        pytest.param({"W_O": np.ones((4, 3))}, ShapeError, r"W_O has shape \(4, 3\); expected \(4, 4\)",
                     id="W_O-shape"),
        pytest.param({"X": np.array([[1.0, np.nan, 0, 0]])}, InputError, r"X contains NaN or inf \(first at "
                     r"index \(0, 1\)\)", id="nan"),
        pytest.param({"W_V": np.full((2, 4, 2), np.inf)}, InputError, "W_V contains NaN or inf", id="inf"),
        pytest.param({"X": np.array([["a", "b", "c", "d"]])}, InputError, "X has dtype <U1; expected real",
                     id="dtype"),
        pytest.param({"X": np.ones((2, 4), dtype=complex)}, InputError, "X has dtype complex128", id="complex"),
        pytest.param({"W_Q": np.ones((4, 2))}, InputError, r"one array of shape \(h, rows, cols\); got shape "
                     r"\(4, 2\)", id="unstacked"),
        pytest.param({"b_O": np.zeros(4)}, InputError, "b_O given, but the model has no biases", id="bias"),
    ],
)
def test_bad_inputs(change, error, message):
    args = dict(X=np.ones((3, 4)), W_Q=np.ones((2, 4, 2)), W_K=np.ones((2, 4, 2)), W_V=np.ones((2, 4, 2)),
                W_O=np.ones((4, 4)))
    args.update(change)
    with pytest.raises(error, match=message):
        MultiHeadAttention(d_model=4, h=2).lambdify()(**args)


def test_fixed_n_is_checked():
    with pytest.raises(ShapeError, match=r"X has shape \(3, 4\); expected \(\.\.\., 2, 4\)"):
        MultiHeadAttention(n=2, d_model=4, h=2).lambdify()(np.ones((3, 4)), np.ones((2, 4, 2)), np.ones((2, 4, 2)),
                                               np.ones((2, 4, 2)), np.ones((4, 4)))


def test_backend_other_than_numpy_refused():
    with pytest.raises(InputError, match="backend must be 'numpy'"):
        MultiHeadAttention().lambdify("jax")


def test_symbolic_model_keeps_d_k_tied_to_d_model_over_h():
    from mha_symbolic import DimensionError

    with pytest.raises(DimensionError, match="h=3 does not divide d_model=4"):
        MultiHeadAttention().lambdify()(np.ones((2, 4)), np.ones((3, 4, 1)), np.ones((3, 4, 1)), np.ones((3, 4, 1)),
                                        np.ones((3, 4)))


def test_overflow_is_an_error_not_nan():
    f = MultiHeadAttention(d_model=4, h=2).lambdify()
    with pytest.raises(InputError, match="the output is not finite"):
        f(np.ones((2, 4)) * 1e200, np.ones((2, 4, 2)), np.ones((2, 4, 2)), np.ones((2, 4, 2)), np.ones((4, 4)))


def test_text_flags_are_refused():
    with pytest.raises(InputError, match="causal must be True or False, got 'False'"):
        MultiHeadAttention(causal="False")


def test_finiteness_check_is_exact_where_the_sum_of_squares_overflows():
    from mha_symbolic.numeric import _all_finite

    big = np.full((4, 4), 3e19, np.float32)  # finite, but its squares overflow float32
    assert _all_finite(big) and _all_finite(big.T) and _all_finite(big.astype(np.float64))
    for bad in (np.inf, -np.inf, np.nan):
        a = np.ones((64, 64), np.float32)
        a[63, 5] = bad
        assert not _all_finite(a) and not _all_finite(a.T) and not _all_finite(a[1::2, ::-1][31:])
    assert _all_finite(np.zeros((0, 3)))
    with pytest.raises(InputError, match=r"X contains NaN or inf \(first at index \(1, 0\)\)"):
        MultiHeadAttention(n=None, d_model=2, h=1).lambdify()(np.array([[3e19, 0.0], [np.inf, 1.0]], np.float32),
                                                   W_Q=[np.eye(2)], W_K=[np.eye(2)], W_V=[np.eye(2)], W_O=np.eye(2))


# ----- messages a mutation sample found unchecked (each names what was wrong and where) ----------------------
_I = np.eye(2)


@pytest.mark.parametrize("model, kwargs, entrywise, error, message", [
    (MultiHeadAttention(n=2, d_model=2, h=1, n_kv=2), {"Y": _I}, True, InputError,
     r"^the entry-wise function covers self-attention without masks; use lambdify\(\)$"),
    (MultiHeadAttention(n=2, d_model=2, h=1, mask="additive"), {"mask": [[0.0, 0.0], [0.0]]}, False, InputError,
     r"^M \(the additive mask\) is ragged: its rows have different lengths$"),
    (MultiHeadAttention(n=2, d_model=2, h=1), {"Y": _I}, False, InputError,
     r"^Y given, but the model is self-attention \(keys and values from X\)"),
])
def test_input_messages(model, kwargs, entrywise, error, message):
    f = model.lambdify(entrywise=entrywise)
    with pytest.raises(error, match=message):
        f(_I, [_I], [_I], [_I], _I, **kwargs)


def test_batch_shapes_that_do_not_broadcast_name_X_and_Y():
    f = MultiHeadAttention(n=2, d_model=2, h=1, n_kv=2).lambdify()
    with pytest.raises(ShapeError, match=r"X \(3,\), Y \(4,\)"):
        f(np.zeros((3, 2, 2)), [_I], [_I], [_I], _I, Y=np.zeros((4, 2, 2)))
