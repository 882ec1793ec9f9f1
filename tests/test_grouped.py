"""Grouped-query and multi-query attention in the symbolic model (issue 15, first part: kv_heads with concrete h)."""

from __future__ import annotations

import numpy as np
import pytest
from sympy import ImmutableMatrix

from mha_symbolic import DimensionError, InputError, MultiHeadAttention
from mha_symbolic.proofs import gqa_equals_repeated_kv, parameter_and_flop_counts
from mha_symbolic.proofs.grouped import _repeated

RNG = np.random.default_rng(15)


def test_steps_show_which_key_value_head_each_query_head_reads():
    M = MultiHeadAttention(n=3, d_model=8, h=4, kv_heads=2)
    assert [s for s in M.steps if s[0] in "KV"] == ["K_1", "V_1", "K_2", "V_2"]
    assert [M.steps[f"S_{i}"].text for i in (1, 2, 3, 4)] == ["S_1 = Q_1 K_1^T", "S_2 = Q_2 K_1^T",
                                                               "S_3 = Q_3 K_2^T", "S_4 = Q_4 K_2^T"]
    assert M.steps["head_3"].text == "head_3 = A_3 V_2" and M.steps["K_2"].shape == (3, 2)
    assert [str(w) for w in M.inputs["W_V"]] == ["W_V^1", "W_V^2"] and len(M.inputs["W_Q"]) == 4
    assert str(M) == "MultiHeadAttention(n=3, d_model=8, h=4, d_k=2, d_v=2, convention='projection', kv_heads=2)"
    assert M.func(*M.args) == M and M.bind().kv_heads == 2 and M.replace_options(causal=True).kv_heads == 2
    # g = h is multi-head
    assert MultiHeadAttention(n=3, d_model=8, h=4, kv_heads=4) == MultiHeadAttention(n=3, d_model=8, h=4)
    mqa = MultiHeadAttention(n=None, d_model=8, h=4, kv_heads=1)
    assert [M for M in mqa.steps if M.startswith("K")] == ["K_1"] and mqa.steps["S_4"].text == "S_4 = Q_4 K_1^T"


def test_group_sizes_are_checked():
    with pytest.raises(DimensionError, match="kv_heads g=3 must divide h=4"):
        MultiHeadAttention(n=3, d_model=8, h=4, kv_heads=3)
    with pytest.raises(InputError, match="is symbolic but h=4 is concrete"):
        MultiHeadAttention(n=3, d_model=8, h=4, kv_heads="g")
    assert MultiHeadAttention(kv_heads=2).assumptions == ("g = 2 divides h = h",)
    with pytest.raises(InputError, match="kv_heads must be a positive integer"):
        MultiHeadAttention(n=3, d_model=8, h=4, kv_heads=0)
    with pytest.raises(InputError, match="defined in the projection convention"):
        MultiHeadAttention(n=3, d_model=8, h=4, kv_heads=2, convention="split")


def test_counts_follow_the_number_of_key_value_heads():
    def counts(g):
        r = parameter_and_flop_counts(MultiHeadAttention(n=None, d_model=512, h=8, kv_heads=g)).result
        return r["parameters"], r["kv_cache_per_token"]

    # W_Q and W_O 512 x 512 each; W_K and W_V g heads of 512 x 64; the cache holds one row of each K_j and V_j
    assert counts(8) == (4 * 512**2, 2 * 8 * 64)
    assert counts(2) == (2 * 512**2 + 2 * 2 * 512 * 64, 2 * 2 * 64)
    assert counts(1) == (2 * 512**2 + 2 * 512 * 64, 2 * 64)
    symbolic = parameter_and_flop_counts(MultiHeadAttention()).result["kv_cache_per_token"]
    assert str(symbolic) == "2*d_model"  # 2 h d_k


def test_grouped_attention_is_multi_head_attention_with_repeated_key_value_heads():
    M = MultiHeadAttention(n=2, d_model=8, h=4, kv_heads=2, bias=True)
    p = gqa_equals_repeated_kv(M)
    assert p.verified and p.result == {"assignment": [1, 1, 2, 2]}
    mha = M.replace_options(kv_heads=None)
    assert mha.output.xreplace(_repeated(mha, [1, 2, 1, 2], M)) != M.output  # another grouping is another map
    with pytest.raises(InputError, match="nothing to prove"):
        gqa_equals_repeated_kv(mha)


def _instance(h=4, g=2, n=3, d=8):
    dk = d // h
    return {"X": RNG.integers(-2, 3, (n, d)), "W_Q": RNG.integers(-2, 3, (h, d, dk)),
            "W_K": RNG.integers(-2, 3, (g, d, dk)), "W_V": RNG.integers(-2, 3, (g, d, dk)),
            "W_O": RNG.integers(-2, 3, (d, d))}


def test_exact_and_numeric_evaluation_agree_with_repeated_heads():
    M = MultiHeadAttention(n=3, d_model=8, h=4, kv_heads=2)
    w = _instance()
    E = M.evaluate(**w)
    rep = {**w, "W_K": np.repeat(w["W_K"], 2, axis=0), "W_V": np.repeat(w["W_V"], 2, axis=0)}
    assert E.output == MultiHeadAttention(n=3, d_model=8, h=4).evaluate(**rep).output
    assert E["A_1"] != E["A_2"] and E["K_2"] == ImmutableMatrix(w["X"] @ w["W_K"][1])
    f = MultiHeadAttention(n=None, d_model=8, h=4, kv_heads=2).lambdify()
    out = f(*(w["X"].astype(float),), **{k: v.astype(float) for k, v in w.items() if k != "X"})
    np.testing.assert_allclose(out, np.array(E.output.evalf(30), dtype=float), rtol=1e-12, atol=1e-12)
    with pytest.raises(InputError, match="W_K: expected g=2 key/value head matrices, got 4"):
        f(w["X"].astype(float), **{**{k: v.astype(float) for k, v in w.items() if k != "X"},
                                   "W_K": rep["W_K"].astype(float)})


def test_lambdified_grouped_attention_agrees_with_torch():
    torch = pytest.importorskip("torch")
    import torch.nn.functional as F

    h, g, n, d = 8, 2, 5, 16
    w = {k: v.astype(np.float64) / 2 for k, v in _instance(h, g, n, d).items()}
    f = MultiHeadAttention(n=None, d_model=d, h=h, kv_heads=g).lambdify()
    out = f(w["X"], W_Q=w["W_Q"], W_K=w["W_K"], W_V=w["W_V"], W_O=w["W_O"])
    X = torch.from_numpy(w["X"])
    q, k, v = (torch.einsum("nd,hde->hne", X, torch.from_numpy(w[f"W_{c}"])) for c in "QKV")
    heads = F.scaled_dot_product_attention(q, k, v, enable_gqa=True)  # (h, n, d_k)
    want = (heads.transpose(0, 1).reshape(n, d) @ torch.from_numpy(w["W_O"])).numpy()
    np.testing.assert_allclose(out, want, rtol=1e-12, atol=1e-12)


def test_cli_kv_heads(capsys):
    from mha_symbolic.cli import main

    assert main(["shapes", "--heads", "4", "--kv-heads", "2"]) == 0
    out = capsys.readouterr().out
    assert "kv_heads=2" in out and "S_3 = Q_3 K_2^T" in out
    assert main(["shapes", "--heads", "4", "--kv-heads", "3"]) == 2
    assert "kv_heads g=3 must divide h=4" in capsys.readouterr().err
