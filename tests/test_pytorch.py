from __future__ import annotations

import numpy as np
import pytest

from mha_symbolic import DimensionError, InputError, MultiHeadAttention, from_pytorch

E, H = 4, 2
# Fixed weights in PyTorch's layout: small exact binary fractions from index formulas.
IN_W = np.array([[((3 * r + 5 * c) % 7 - 3) / 4 for c in range(E)] for r in range(3 * E)])
IN_B = np.array([((2 * r) % 5 - 2) / 8 for r in range(3 * E)])
OUT_W = np.array([[((r + 2 * c) % 5 - 2) / 2 for c in range(E)] for r in range(E)])
OUT_B = np.array([0.5, -0.25, 0.0, 1.0])
X = np.array([[[1.0, 0.5, -1.0, 2.0], [0.0, 1.0, 0.5, -0.5], [-1.5, 0.25, 1.0, 0.0]]])

# Expected outputs, produced once with torch 2.13.0 (CPU, float64):
#   m = torch.nn.MultiheadAttention(4, 2, batch_first=True), weights copied from IN_W, IN_B, OUT_W, OUT_B,
#   m(x, x, x, need_weights=False) and, for the causal case, attn_mask=torch.triu(ones(3, 3, bool), 1).
# The first causal row only attends to itself, so it is exact: X_0 W_V^T + b_V through W_out.
EXPECTED = np.array([[[-1.699293835554081, 0.48615605541878426, 0.8506656016991909, 3.4263223861429304],
                      [-1.3348781735422441, 1.0914483861321942, 1.4291926429827284, 3.0801246089071643],
                      [1.3534108472081527, -0.07796651107750774, -0.6501777458441766, 0.05559380376616363]]])
EXPECTED_CAUSAL = np.array([[[-1.5, 1.3125, 1.6875, 3.4375],
                             [-1.3747011579902364, 1.3230143266518797, 1.7070356477118362, 3.045800340238681],
                             [1.3534108472081527, -0.07796651107750774, -0.6501777458441766, 0.05559380376616363]]])


def test_regression_against_stored_torch_output():
    mha = from_pytorch(IN_W, IN_B, OUT_W, OUT_B, H)
    np.testing.assert_allclose(mha(X), EXPECTED, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(mha(X, causal=True), EXPECTED_CAUSAL, rtol=1e-12, atol=1e-12)


def test_first_causal_row_is_exact_value_projection():
    V0 = X[0, 0] @ IN_W[2 * E:].T + IN_B[2 * E:]
    assert (V0 @ OUT_W.T + OUT_B).tolist() == EXPECTED_CAUSAL[0, 0].tolist()


def test_layout():
    mha = from_pytorch(IN_W, IN_B, OUT_W, OUT_B, H)
    assert mha.model == MultiHeadAttention(n=None, d_model=4, h=2, bias=True)
    W = mha.weights
    assert W["W_Q"].shape == (2, 4, 2) and W["b_V"].shape == (2, 2)
    np.testing.assert_array_equal(W["W_K"][1], IN_W[E + 2:E + 4].T)
    np.testing.assert_array_equal(W["W_O"], OUT_W.T)
    np.testing.assert_array_equal(W["b_Q"].ravel(), IN_B[:E])


def test_missing_biases_are_zero():
    a = from_pytorch(IN_W, None, OUT_W, None, H)(X)
    b = from_pytorch(IN_W, np.zeros(3 * E), OUT_W, np.zeros(E), H)(X)
    np.testing.assert_array_equal(a, b)


def test_symbolic_model_carries_biases():
    steps = from_pytorch(IN_W, IN_B, OUT_W, OUT_B, H).model.steps
    assert steps["Q_1"].text == "Q_1 = X W_Q^1 + 1 b_Q^1"
    assert steps["Output"].text == "Output = Concat W_O + 1 b_O"


@pytest.mark.parametrize(
    "args, error, message",
    [
        pytest.param((np.ones((12, 5)), None, np.ones((4, 4)), None, 2), InputError,
                     r"in_proj_weight must have shape \(3E, E\); got \(12, 5\)", id="in-shape"),
        pytest.param((IN_W, None, OUT_W, None, 3), DimensionError, "h=3 does not divide d_model=4", id="heads"),
        pytest.param((IN_W, np.ones(5), OUT_W, None, 2), InputError, r"in_proj_bias has shape \(5,\)", id="bias"),
        pytest.param((IN_W, None, OUT_W, None, 0), InputError, "num_heads must be a positive integer", id="zero"),
        pytest.param((IN_W, None, np.full((4, 4), np.nan), None, 2), InputError, "out_proj_weight contains NaN",
                     id="nan"),
    ],
)
def test_bad_weights(args, error, message):
    with pytest.raises(error, match=message):
        from_pytorch(*args)


def test_bad_input_to_call():
    with pytest.raises(Exception, match=r"X has shape \(1, 3, 5\)"):
        from_pytorch(IN_W, IN_B, OUT_W, OUT_B, H)(np.ones((1, 3, 5)))


@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("E_, h_", [(8, 2), (12, 3), (16, 4)])
def test_agrees_with_live_torch(E_, h_, causal):
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(E_ + h_)
    m = torch.nn.MultiheadAttention(E_, h_, batch_first=True, dtype=torch.float64)
    with torch.no_grad():
        for p in m.parameters():
            p.copy_(torch.tensor(rng.normal(size=tuple(p.shape))))
        x = torch.tensor(rng.normal(size=(3, 5, E_)))
        mask = torch.triu(torch.ones(5, 5, dtype=torch.bool), 1) if causal else None
        want, _ = m(x, x, x, need_weights=False, attn_mask=mask)
    mha = from_pytorch(m.in_proj_weight.detach().numpy(), m.in_proj_bias.detach().numpy(),
                       m.out_proj.weight.detach().numpy(), m.out_proj.bias.detach().numpy(), h_)
    np.testing.assert_allclose(mha(x.numpy(), causal=causal), want.numpy(), rtol=1e-10, atol=1e-12)
