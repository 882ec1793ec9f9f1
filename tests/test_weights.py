"""Checkpoint loaders (mha_symbolic.weights): every layout reads back the per-head weights it was written from.

Each layout's state_dict is written here from one set of per-head weights (non-square heads, values that differ
per head, biases that differ per head), by the layout's own convention; loading it must give those weights back
exactly.  A head swapped, a transpose forgotten or a bias misplaced changes an exact comparison.
"""

from __future__ import annotations

import numpy as np
import pytest

from mha_symbolic import InputError, from_pytorch
from mha_symbolic.weights import LAYOUTS, detect_layout, from_state_dict, layer_numbers, load_weights

E, H, DK = 6, 3, 2
RNG = np.random.default_rng(7)
# per-head weights in the package's layout (X W): every head and every layer different
LAYERS = [{k: RNG.normal(size=(H, E, DK)) for k in ("W_Q", "W_K", "W_V")} | {
    "W_O": RNG.normal(size=(H * DK, E)), "b_Q": RNG.normal(size=(H, DK)), "b_K": RNG.normal(size=(H, DK)),
    "b_V": RNG.normal(size=(H, DK)), "b_O": RNG.normal(size=E)} for _ in range(2)]


def full(W):  # (h, E, d) -> (E, h d): the x W projection of all heads
    return np.concatenate(list(W), axis=1)


def state_dict(layout, prefix=""):
    sd = {}
    for L, w in enumerate(LAYERS):
        if layout == "torch":
            p = f"{prefix}layers.{L}.self_attn."
            sd[p + "in_proj_weight"] = np.concatenate([full(w[k]).T for k in ("W_Q", "W_K", "W_V")])
            sd[p + "in_proj_bias"] = np.concatenate([w[k].ravel() for k in ("b_Q", "b_K", "b_V")])
            sd[p + "out_proj.weight"] = w["W_O"].T
            sd[p + "out_proj.bias"] = w["b_O"]
        elif layout == "bert":
            p = f"{prefix}encoder.layer.{L}.attention."
            for name, k in (("query", "Q"), ("key", "K"), ("value", "V")):
                sd[f"{p}self.{name}.weight"] = full(w[f"W_{k}"]).T
                sd[f"{p}self.{name}.bias"] = w[f"b_{k}"].ravel()
            sd[p + "output.dense.weight"] = w["W_O"].T
            sd[p + "output.dense.bias"] = w["b_O"]
            sd[p + "output.LayerNorm.weight"] = np.ones(E)
        elif layout == "gpt2":
            p = f"{prefix}h.{L}.attn."
            sd[p + "c_attn.weight"] = np.concatenate([full(w[k]) for k in ("W_Q", "W_K", "W_V")], axis=1)
            sd[p + "c_attn.bias"] = np.concatenate([w[k].ravel() for k in ("b_Q", "b_K", "b_V")])
            sd[p + "c_proj.weight"] = w["W_O"]
            sd[p + "c_proj.bias"] = w["b_O"]
        elif layout == "llama":
            p = f"{prefix}model.layers.{L}.self_attn."
            for name, k in (("q", "Q"), ("k", "K"), ("v", "V")):
                sd[f"{p}{name}_proj.weight"] = full(w[f"W_{k}"]).T
                sd[f"{p}{name}_proj.bias"] = w[f"b_{k}"].ravel()
            sd[p + "o_proj.weight"] = w["W_O"].T
            sd[p + "o_proj.bias"] = w["b_O"]
        elif layout == "transformerlens":
            p = f"{prefix}blocks.{L}.attn."
            for k in "QKV":
                sd[p + f"W_{k}"] = w[f"W_{k}"]
                sd[p + f"b_{k}"] = w[f"b_{k}"]
            sd[p + "W_O"] = w["W_O"].reshape(H, DK, E)
            sd[p + "b_O"] = w["b_O"]
    return sd


@pytest.mark.parametrize("layout", LAYOUTS)
def test_every_layout_reads_back_the_weights_it_was_written_from(layout):
    sd = state_dict(layout, prefix="model." if layout == "gpt2" else "")
    assert detect_layout(sd) == layout
    layers = from_state_dict(sd, num_heads=H)
    assert [w.layer for w in layers] == [0, 1] and [w.layout for w in layers] == [layout] * 2
    for w, want in zip(layers, LAYERS, strict=True):
        assert (w.heads, w.kv_heads, w.d_model, w.d_k, w.d_v) == (H, H, E, DK, DK)
        for k, v in want.items():
            np.testing.assert_array_equal(getattr(w, k), v, err_msg=f"{layout} {k}")


def test_one_layer_and_layer_numbers():
    sd = state_dict("bert")
    assert layer_numbers(sd) == [0, 1]
    [w] = from_state_dict(sd, layer=1, num_heads=H)
    np.testing.assert_array_equal(w.W_V, LAYERS[1]["W_V"])
    with pytest.raises(InputError, match=r"no layer \[5\] in the checkpoint; its layers are \[0, 1\]"):
        from_state_dict(sd, layer=5, num_heads=H)


def test_grouped_query_llama_layout():
    # 4 query heads share 2 key/value heads: query head i reads key/value head i // 2
    rng = np.random.default_rng(3)
    Wq, Wk, Wv, Wo = rng.normal(size=(8, 6)), rng.normal(size=(4, 6)), rng.normal(size=(4, 6)), rng.normal(size=(6, 8))
    sd = {"model.layers.0.self_attn.q_proj.weight": Wq, "model.layers.0.self_attn.k_proj.weight": Wk,
          "model.layers.0.self_attn.v_proj.weight": Wv, "model.layers.0.self_attn.o_proj.weight": Wo}
    [w] = from_state_dict(sd, num_heads=4)
    assert (w.heads, w.kv_heads, w.d_k) == (4, 2, 2)
    assert [w.kv_head(i) for i in range(4)] == [0, 0, 1, 1]
    np.testing.assert_array_equal(w.W_K[1], Wk[2:4].T)
    np.testing.assert_array_equal(w.W_O_head(3), Wo[:, 6:8].T)
    with pytest.raises(InputError, match="3 key/value heads do not divide 4 query heads"):
        from_state_dict(sd, num_heads=4, kv_heads=3)


def test_grouped_query_forward_repeats_the_shared_heads():
    rng = np.random.default_rng(4)
    sd = {"layers.0.self_attn.q_proj.weight": rng.normal(size=(8, 8)),
          "layers.0.self_attn.k_proj.weight": rng.normal(size=(2, 8)),
          "layers.0.self_attn.v_proj.weight": rng.normal(size=(2, 8)),
          "layers.0.self_attn.o_proj.weight": rng.normal(size=(8, 8))}
    from mha_symbolic.pytorch import from_layer

    [w] = from_state_dict(sd, num_heads=4)
    assert w.kv_heads == 1  # multi-query attention
    X = rng.normal(size=(5, 8))
    # reference written out: every head uses the one key/value head
    K, V = X @ sd["layers.0.self_attn.k_proj.weight"].T, X @ sd["layers.0.self_attn.v_proj.weight"].T
    Q = X @ sd["layers.0.self_attn.q_proj.weight"].T
    heads = []
    for i in range(4):
        S = Q[:, 2 * i:2 * i + 2] @ K.T / np.sqrt(2)
        A = np.exp(S - S.max(axis=1, keepdims=True))
        heads.append(A / A.sum(axis=1, keepdims=True) @ V)
    want = np.concatenate(heads, axis=1) @ sd["layers.0.self_attn.o_proj.weight"].T
    np.testing.assert_allclose(from_layer(w)(X), want, rtol=1e-12, atol=1e-12)


def test_from_pytorch_takes_a_state_dict_or_a_module():
    sd = {k.removeprefix("layers.0.self_attn."): v for k, v in state_dict("torch").items() if "layers.0." in k}
    by_arrays = from_pytorch(sd["in_proj_weight"], sd["in_proj_bias"], sd["out_proj.weight"], sd["out_proj.bias"], H)
    by_dict = from_pytorch(sd, num_heads=H)

    class Module:  # duck-typed like nn.MultiheadAttention: torch is never imported by the package
        num_heads = H
        batch_first = True

        def state_dict(self):
            return sd

    X = RNG.normal(size=(4, E))
    np.testing.assert_array_equal(by_dict(X), by_arrays(X))
    np.testing.assert_array_equal(from_pytorch(Module())(X), by_arrays(X))
    Module.batch_first = False  # torch's default: 3-D inputs are (n, batch, E)
    seq_first = from_pytorch(Module())
    X3 = RNG.normal(size=(2, 4, E))  # batch 2 of 4 tokens
    np.testing.assert_allclose(seq_first(X3.swapaxes(0, 1)).swapaxes(0, 1), by_arrays(X3), rtol=1e-13, atol=1e-13)
    with pytest.raises(InputError, match=r"X has shape \(4, 2, 5\); expected \(n, batch, E\) with E = 6"):
        seq_first(np.zeros((4, 2, 5)))
    with pytest.raises(InputError, match="needs num_heads="):
        from_pytorch(sd)


@pytest.mark.parametrize("mutate, message", [
    (lambda sd: sd.pop("encoder.layer.1.attention.self.key.weight"),
     r"missing tensor 'encoder.layer.1.attention.self.key.weight' \(layout bert, layer 1\)"),
    (lambda sd: sd.update({"encoder.layer.0.attention.self.value.bias": np.zeros(5)}),
     r"the value bias has shape \(5,\); expected \(6,\) \(layout bert, layer 0\)"),
    (lambda sd: sd.update({"encoder.layer.0.attention.output.dense.weight": np.zeros((6, 5))}),
     r"the output projection has shape \(5, 6\).*\(layout bert, layer 0\)"),
    (lambda sd: sd.update({"encoder.layer.0.attention.self.query.weight": np.zeros(6)}),
     r"tensor 'encoder.layer.0.attention.self.query.weight' has shape \(6,\); expected 2 dimensions"),
    (lambda sd: sd.update({"encoder.layer.0.attention.self.key.weight": np.zeros((6, 6), dtype=np.int64)}),
     r"has dtype int64; expected floating point"),
])
def test_a_missing_or_misshaped_tensor_is_named(mutate, message):
    sd = state_dict("bert")
    mutate(sd)
    with pytest.raises(InputError, match=message):
        from_state_dict(sd, num_heads=H)


def test_layout_and_head_count_errors():
    with pytest.raises(InputError, match="cannot tell the layout: the keys match none of"):
        from_state_dict({"embeddings.weight": np.zeros((2, 2))}, num_heads=2)
    both = state_dict("bert") | state_dict("gpt2")
    with pytest.raises(InputError, match=r"several \(bert, gpt2\)"):
        from_state_dict(both, num_heads=H)
    with pytest.raises(InputError, match="does not store the number of heads: pass num_heads"):
        from_state_dict(state_dict("bert"))
    with pytest.raises(InputError, match="not divisible by num_heads = 4"):
        from_state_dict(state_dict("bert"), num_heads=4)
    with pytest.raises(InputError, match="unknown layout 'vit'"):
        from_state_dict(state_dict("bert"), layout="vit", num_heads=H)
    with pytest.raises(InputError, match="weights must be a state_dict"):
        from_state_dict(42, num_heads=H)
    with pytest.raises(InputError, match="must be a .safetensors file"):
        from_state_dict("model.bin", num_heads=H)


def test_safetensors_file_is_read_lazily_with_its_config(tmp_path):
    safetensors = pytest.importorskip("safetensors.numpy")
    path = tmp_path / "model.safetensors"
    safetensors.save_file({k: v.astype(np.float32, order="C") for k, v in state_dict("bert").items()}, str(path))
    (tmp_path / "config.json").write_text('{"num_attention_heads": 3}')
    layers = list(load_weights(path))  # head count from config.json
    assert [w.dtype for w in layers] == [np.float32, np.float32]
    np.testing.assert_array_equal(layers[1].W_Q, LAYERS[1]["W_Q"].astype(np.float32))
    with pytest.raises(InputError, match=r"the weights file .*absent\.safetensors: no such file"):
        list(load_weights(tmp_path / "absent.safetensors"))
    (tmp_path / "bad.safetensors").write_bytes(b"not a safetensors file")
    with pytest.raises(InputError, match=r"is not a (readable )?\.safetensors file"):
        list(load_weights(tmp_path / "bad.safetensors", num_heads=3))


@pytest.mark.parametrize("layout", LAYOUTS)
def test_every_layout_computes_what_torch_computes(layout):
    torch = pytest.importorskip("torch")
    from mha_symbolic.pytorch import from_layer

    [w] = from_state_dict(state_dict(layout), layer=1, num_heads=H)
    X = RNG.normal(size=(2, 5, E))
    ours = from_layer(w)(X)
    # torch's module with the same weights, written in its own layout
    sd = {k.removeprefix("layers.1.self_attn."): torch.from_numpy(v) for k, v in state_dict("torch").items()
          if k.startswith("layers.1.")}
    m = torch.nn.MultiheadAttention(E, H, batch_first=True, dtype=torch.float64)
    m.load_state_dict(sd)
    with torch.no_grad():
        theirs = m(*(torch.from_numpy(X),) * 3, need_weights=False)[0].numpy()
    np.testing.assert_allclose(ours, theirs, rtol=1e-12, atol=1e-12)


def test_decoder_blocks_share_a_layer_number_and_are_numbered_in_key_order():
    torch = pytest.importorskip("torch")
    dec = torch.nn.TransformerDecoder(torch.nn.TransformerDecoderLayer(8, 2, 16, batch_first=True), 2)
    layers = from_state_dict(dec.state_dict(), layout="torch", num_heads=2)
    assert [(w.layer, w.name) for w in layers] == [(0, "layers.0.multihead_attn."), (1, "layers.0.self_attn."),
                                                   (2, "layers.1.multihead_attn."), (3, "layers.1.self_attn.")]
    np.testing.assert_array_equal(layers[3].W_O, dec.layers[1].self_attn.out_proj.weight.detach().numpy().T)
    assert [w.layer for w in from_state_dict({"stages.0.1." + k.split(".", 3)[3]: v for k, v in
                                              state_dict("torch").items() if k.startswith("layers.1.")},
                                             num_heads=H)] == [1]  # the innermost number


def test_options_the_model_does_not_include_are_refused():
    torch = pytest.importorskip("torch")
    with pytest.raises(InputError, match="add_bias_kv=True"):
        from_pytorch(torch.nn.MultiheadAttention(8, 2, add_bias_kv=True, batch_first=True))
    with pytest.raises(InputError, match="add_zero_attn=True"):
        from_pytorch(torch.nn.MultiheadAttention(8, 2, add_zero_attn=True, batch_first=True))


def test_bfloat16_and_nan_in_a_safetensors_file(tmp_path):
    torch = pytest.importorskip("torch")
    from safetensors.torch import save_file

    sd = {f"model.layers.0.self_attn.{n}_proj.weight": torch.randn(8, 8).to(torch.bfloat16) for n in "qkvo"}
    save_file(sd, str(tmp_path / "m.safetensors"))
    [w] = from_state_dict(tmp_path / "m.safetensors", num_heads=2)
    assert w.dtype == np.float32  # bfloat16 widened exactly
    np.testing.assert_array_equal(w.W_Q[1], sd["model.layers.0.self_attn.q_proj.weight"].float().numpy()[4:].T)
    bad = {k: v.float() for k, v in sd.items()}
    bad["model.layers.0.self_attn.k_proj.weight"][0, 0] = float("nan")
    save_file(bad, str(tmp_path / "nan.safetensors"))
    with pytest.raises(InputError, match="k_proj.weight contains NaN or inf"):
        from_state_dict(tmp_path / "nan.safetensors", num_heads=2)


def test_a_head_count_that_contradicts_config_json_is_an_error_naming_both(tmp_path, capsys):
    """`ranks --weights FILE --num-heads 3` on a 2-head checkpoint certified "6 of 6 heads attain d_k"."""
    import json

    from safetensors.numpy import save_file

    from mha_symbolic.cli import main
    from mha_symbolic.weights import resolve

    rng = np.random.default_rng(0)
    path = tmp_path / "model.safetensors"
    save_file({f"encoder.layer.0.attention.{m}.weight": rng.normal(size=(12, 12)).astype(np.float32)
               for m in ("self.query", "self.key", "self.value", "output.dense")}, str(path))
    (tmp_path / "config.json").write_text(json.dumps({"num_attention_heads": 2}))
    with pytest.raises(InputError, match=r"num_heads=3 contradicts .*config.json, which says 2"):
        resolve(str(path), num_heads=3)
    assert resolve(str(path), num_heads=2)[2] == 2 and resolve(str(path))[2] == 2
    assert main(["ranks", "--weights", str(path), "--num-heads", "3"]) == 2  # --num-heads: another name of --heads
    assert main(["ranks", "--weights", str(path), "--heads", "3"]) == 2
    assert "num_heads=3 contradicts" in capsys.readouterr().err
    assert main(["ranks", "--weights", str(path), "--heads", "2", "--json"]) == 0
    assert main(["ranks", "--weights", str(path), "--num-heads", "2", "--json"]) == 0
    first, second = capsys.readouterr().out.split("\n{", 1)
    assert json.loads(first) == json.loads("{" + second) and len(json.loads(first)["layers"][0]["heads"]) == 2
    (tmp_path / "config.json").write_text("[]")
    with pytest.raises(InputError, match="not a model configuration"):
        resolve(str(path))


def test_each_query_head_names_its_key_value_head_numbered_from_one(capsys):
    from mha_symbolic.cli import _kv_map
    from mha_symbolic.rank.circuits import HeadRanks

    def heads(pairs):
        return [HeadRanks(0, h, kv, 2, 2, 2, 2, 2) for h, kv in pairs]

    assert _kv_map(heads([(1, 1), (2, 1), (3, 2), (4, 2)])) == "1-2:1 3-4:2"
    assert _kv_map(heads([(1, 1), (2, 2)])) == "own"
    assert HeadRanks(0, 3, 2, 2, 2, 2, 2, 2).as_dict()["kv_head"] == 2
