"""Cases for the numeric forward against torch: inputs built here, outputs computed by torch.

``python tests/torch_cases.py`` (with torch importable) writes ``tests/data/torch_cases.npz``: the stored outputs
that tests/test_torch_agreement.py compares with when torch is not installed (and alongside the live run when it
is).  Every case has non-square shapes (n_q != n_kv, E != h), weights and biases that differ per head, and masks
that leave every row some key.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

STORE = Path(__file__).parent / "data" / "torch_cases.npz"
E, H = 8, 2


def weights(dtype):
    rng = np.random.default_rng(20)
    return {"in_proj_weight": rng.normal(size=(3 * E, E)).astype(dtype) / 2,
            "in_proj_bias": rng.normal(size=3 * E).astype(dtype),
            "out_proj.weight": rng.normal(size=(E, E)).astype(dtype) / 2,
            "out_proj.bias": rng.normal(size=E).astype(dtype)}


def inputs(dtype):
    rng = np.random.default_rng(21)
    kpm = np.zeros((2, 7), dtype=bool)
    kpm[0, 5:] = True  # batch 0: the last two keys are padding
    kpm[1, 0] = True
    attn = np.triu(np.ones((5, 7), dtype=bool), k=3)  # query i may not see keys beyond i + 2
    additive = rng.normal(size=(5, 7)).astype(dtype)
    return {"query": rng.normal(size=(2, 5, E)).astype(dtype), "kv": rng.normal(size=(2, 7, E)).astype(dtype),
            "key_padding_mask": kpm, "attn_mask": attn, "additive": additive}


def gqa_case(dtype):
    """LLaMA-style projections with 4 query heads and 2 key/value heads, no biases."""
    rng = np.random.default_rng(22)
    return {"q_proj": rng.normal(size=(8, E)).astype(dtype) / 2, "k_proj": rng.normal(size=(4, E)).astype(dtype) / 2,
            "v_proj": rng.normal(size=(4, E)).astype(dtype), "o_proj": rng.normal(size=(E, 8)).astype(dtype),
            "x": rng.normal(size=(2, 6, E)).astype(dtype)}


def torch_outputs() -> dict[str, np.ndarray]:
    import torch
    import torch.nn.functional as F

    out = {}
    for dt, tdt in (("float32", torch.float32), ("float64", torch.float64)):
        m = torch.nn.MultiheadAttention(E, H, batch_first=True, dtype=tdt)
        m.load_state_dict({k: torch.from_numpy(v) for k, v in weights(np.dtype(dt)).items()})
        m.eval()
        x = {k: torch.from_numpy(v) for k, v in inputs(np.dtype(dt)).items()}
        with torch.no_grad():
            o, w = m(x["query"], x["kv"], x["kv"], key_padding_mask=x["key_padding_mask"], attn_mask=x["attn_mask"],
                     need_weights=True, average_attn_weights=False)
            out[f"{dt}/masked"], out[f"{dt}/masked_weights"] = o.numpy(), w.numpy()
            o, w = m(x["query"], x["kv"], x["kv"], attn_mask=x["additive"], need_weights=True)
            out[f"{dt}/additive"], out[f"{dt}/additive_weights"] = o.numpy(), w.numpy()
            o, _ = m(x["query"], x["query"], x["query"], need_weights=False)
            out[f"{dt}/self"] = o.numpy()
            causal = torch.triu(torch.ones(5, 5, dtype=torch.bool), 1)
            o, _ = m(x["query"], x["query"], x["query"], attn_mask=causal, need_weights=False)
            out[f"{dt}/causal"] = o.numpy()
            seq_first = torch.nn.MultiheadAttention(E, H, dtype=tdt)  # batch_first=False: (n, batch, E)
            seq_first.load_state_dict(m.state_dict())
            o, _ = seq_first(x["query"].transpose(0, 1), x["kv"].transpose(0, 1), x["kv"].transpose(0, 1))
            out[f"{dt}/seq_first"] = o.detach().numpy()
            g = {k: torch.from_numpy(v) for k, v in gqa_case(np.dtype(dt)).items()}
            b, n = g["x"].shape[:2]
            q = (g["x"] @ g["q_proj"].T).view(b, n, 4, 2).transpose(1, 2)
            k = (g["x"] @ g["k_proj"].T).view(b, n, 2, 2).transpose(1, 2)
            v = (g["x"] @ g["v_proj"].T).view(b, n, 2, 2).transpose(1, 2)
            a = F.scaled_dot_product_attention(q, k, v, enable_gqa=True)
            out[f"{dt}/gqa"] = (a.transpose(1, 2).reshape(b, n, 8) @ g["o_proj"].T).numpy()
    return out


if __name__ == "__main__":
    STORE.parent.mkdir(exist_ok=True)
    np.savez_compressed(STORE, **torch_outputs())
    print(f"wrote {STORE}")
