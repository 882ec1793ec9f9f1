"""The numeric forward agrees with torch: masks, cross-attention, returned weights, sequence-first input, GQA.

Compared with torch live when it is importable, and always with the outputs torch gave once
(tests/data/torch_cases.npz, written by tests/torch_cases.py), in float32 and float64.
"""

from __future__ import annotations

import importlib.util

import numpy as np
import pytest
import torch_cases as cases

from mha_symbolic import InputError, from_pytorch
from mha_symbolic.pytorch import from_layer
from mha_symbolic.weights import from_state_dict

STORED = dict(np.load(cases.STORE))
LIVE = importlib.util.find_spec("torch") is not None
TOL = {"float32": 2e-6, "float64": 1e-13}


def ours(dt: str) -> dict[str, np.ndarray]:
    mha = from_pytorch(cases.weights(np.dtype(dt)), num_heads=cases.H)
    x = cases.inputs(np.dtype(dt))
    out = {}
    out["masked"], out["masked_weights"] = mha(x["query"], x["kv"], x["kv"], key_padding_mask=x["key_padding_mask"],
                                               attn_mask=x["attn_mask"], need_weights=True,
                                               average_attn_weights=False)
    out["additive"], out["additive_weights"] = mha(x["query"], x["kv"], x["kv"], attn_mask=x["additive"],
                                                   need_weights=True)
    out["self"] = mha(x["query"])
    out["causal"] = mha(x["query"], causal=True)
    out["seq_first"] = mha(x["query"].swapaxes(0, 1), x["kv"].swapaxes(0, 1), batch_first=False)
    g = cases.gqa_case(np.dtype(dt))
    sd = {f"layers.0.self_attn.{k}.weight": v for k, v in g.items() if k != "x"}
    [layer] = from_state_dict(sd, num_heads=4)
    out["gqa"] = from_layer(layer)(g["x"])
    return out


@pytest.fixture(scope="module")
def live():
    if not LIVE:
        return None
    return cases.torch_outputs()


@pytest.mark.parametrize("dt", ["float32", "float64"])
@pytest.mark.parametrize("case", ["masked", "masked_weights", "additive", "additive_weights", "self", "causal",
                                  "seq_first", "gqa"])
def test_agrees_with_torch(dt, case, live):
    mine = ours(dt)[case]
    assert mine.dtype == np.dtype(dt)
    np.testing.assert_allclose(mine, STORED[f"{dt}/{case}"], rtol=TOL[dt], atol=TOL[dt])
    if live is not None:
        np.testing.assert_allclose(mine, live[f"{dt}/{case}"], rtol=TOL[dt], atol=TOL[dt])


def test_masked_keys_get_zero_weight_and_the_fused_path_matches_the_lambdified_one():
    mha = from_pytorch(cases.weights(np.float64), num_heads=cases.H)
    x = cases.inputs(np.float64)
    _, w = mha(x["query"], x["kv"], x["kv"], key_padding_mask=x["key_padding_mask"], need_weights=True,
               average_attn_weights=False)
    assert w.shape == (2, 2, 5, 7)
    assert (w[0, :, :, 5:] == 0).all() and (w[1, :, :, 0] == 0).all() and (w[0, :, :, :5] > 0).all()
    np.testing.assert_allclose(w.sum(axis=-1), 1, rtol=1e-14)
    # need_weights forces the fused path; without it the lambdified model computes the same output
    fused, _ = mha(x["query"], need_weights=True)
    np.testing.assert_allclose(fused, mha(x["query"]), rtol=1e-13, atol=1e-13)


def test_a_fully_masked_row_is_an_error_not_nan():
    mha = from_pytorch(cases.weights(np.float64), num_heads=cases.H)
    x = cases.inputs(np.float64)
    kpm = np.ones((2, 7), dtype=bool)
    with pytest.raises(InputError, match=r"every key is masked for query 0 \(batch 0, head 1\)"):
        mha(x["query"], x["kv"], x["kv"], key_padding_mask=kpm)
    with pytest.raises(InputError, match=r"key_padding_mask has shape \(7,\); expected \(2, 7\)"):
        mha(x["query"], x["kv"], x["kv"], key_padding_mask=np.zeros(7, dtype=bool))
    with pytest.raises(InputError, match="the batch sizes differ: queries 2, keys 1"):
        mha(x["query"], x["kv"][:1], x["kv"][:1])


def test_unbatched_cross_attention():
    mha = from_pytorch(cases.weights(np.float64), num_heads=cases.H)
    x = cases.inputs(np.float64)
    one = mha(x["query"][1], x["kv"][1], x["kv"][1], key_padding_mask=x["key_padding_mask"][1])
    both = mha(x["query"], x["kv"], x["kv"], key_padding_mask=x["key_padding_mask"])
    assert one.shape == (5, 8)
    np.testing.assert_allclose(one, both[1], rtol=1e-13, atol=1e-13)
