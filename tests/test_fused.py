"""The fused code of ``lambdify()`` (issue 15): the same numbers as the step-wise code and a plain per-head reference.

Every case has asymmetric sizes (n != d_model, d_k != d_v where the model allows it) and weights that differ per
head; the generated source is checked for one projection product per kind (the fusion itself, not only its value).
"""

from __future__ import annotations

import ast
import re
import tracemalloc

import numpy as np
import pytest
from sympy import Rational, Symbol

from mha_symbolic import InputError, MHASymbolicError, MultiHeadAttention, ShapeError, example, numeric
from mha_symbolic.dims import dimension_symbol
from mha_symbolic.numeric import _head_pairs, _project


def reference(X, W_Q, W_K, W_V, W_O, *, scale, causal=False, split=False, biases=None):
    """Plain NumPy, head by head, written from the formulas (not from the package): query head i reads key/value
    head i // (h / g); split: head i reads its own block of X's columns."""
    h, g = len(W_Q), len(W_K)
    b = biases or {}
    heads = []
    for i in range(h):
        j = i // (h // g)
        if split:
            w = X.shape[-1] // h
            x_q = x_kv = X[..., i * w:(i + 1) * w]
        else:
            x_q = x_kv = X
        Q = x_q @ W_Q[i] + (b["b_Q"][i] if b else 0)
        K = x_kv @ W_K[j] + (b["b_K"][j] if b else 0)
        V = x_kv @ W_V[j] + (b["b_V"][j] if b else 0)
        S = scale * (Q @ np.swapaxes(K, -1, -2))
        if causal:
            n = S.shape[-1]
            S = np.where(np.arange(n)[None, :] > np.arange(n)[:, None], -np.inf, S)
        E = np.exp(S - S.max(axis=-1, keepdims=True))
        heads.append((E / E.sum(axis=-1, keepdims=True)) @ V)
    return np.concatenate(heads, axis=-1) @ W_O + (b["b_O"] if b else 0)


def inputs(model, batch=(), n=5, dtype=np.float64, seed=0, size=1.0):
    """Random inputs of the model's shapes; every head's weights differ."""
    rng = np.random.default_rng(seed)
    args = {"X": (size * rng.normal(size=(*batch, n, int(model.dims.d_model)))).astype(dtype)}
    for key, value in model.inputs.items():
        if key == "X":
            continue
        shapes = [tuple(int(x) for x in s.shape) for s in (value if isinstance(value, list) else [value])]
        arrays = [rng.normal(size=(cols,) if key.startswith("b_") else (rows, cols)).astype(dtype)
                  for rows, cols in shapes]
        args[key] = arrays if isinstance(value, list) else arrays[0]
    return args


def expected(model, args):
    biases = {k: args[k] for k in ("b_Q", "b_K", "b_V", "b_O")} if model.bias else None
    return reference(*(args[k] for k in ("X", "W_Q", "W_K", "W_V", "W_O")), scale=float(model.scale),
                     causal=model.causal, split=model.convention == "split", biases=biases)


CASES = {
    "d_k != d_v": MultiHeadAttention(n=None, d_model=6, h=2, d_k=4, d_v=5),
    "d_model != h d_k": MultiHeadAttention(n=None, d_model=6, h=3, d_k=3, d_v=3),
    "gqa g=2": MultiHeadAttention(n=None, d_model=8, h=4, d_k=3, d_v=5, kv_heads=2),
    "gqa g=1": MultiHeadAttention(n=None, d_model=8, h=4, kv_heads=1),
    "causal": MultiHeadAttention(n=None, d_model=6, h=2, d_k=4, d_v=2, causal=True),
    "bias": MultiHeadAttention(n=None, d_model=6, h=3, d_k=2, d_v=4, bias=True),
    "scale 0.3": MultiHeadAttention(n=None, d_model=6, h=2, d_k=4, d_v=3, scale=0.3),
    "scale 1/d_k": MultiHeadAttention(n=None, d_model=6, h=2, scale=1 / dimension_symbol("d_k")),
    "split": MultiHeadAttention(n=None, d_model=6, h=3, convention="split"),
    "split d_v": MultiHeadAttention(n=None, d_model=6, h=3, d_v=4, convention="split", causal=True, bias=True),
    "everything": MultiHeadAttention(n=None, d_model=8, h=4, d_k=3, d_v=2, kv_heads=2, causal=True, bias=True,
                                     scale=Rational(1, 2)),
}


@pytest.mark.parametrize("batch", [(), (3,), (2, 3)], ids=["unbatched", "batch 3", "batch 2x3"])
@pytest.mark.parametrize("name", list(CASES))
def test_fused_equals_steps_and_reference(name, batch):
    model = CASES[name]
    args = inputs(model, batch=batch, n=7)
    f = model.lambdify()
    fused = f(**args)
    stepwise, steps = f(**args, steps=True)
    assert fused.shape == (*batch, 7, int(model.dims.d_model)) and fused.dtype == np.float64
    np.testing.assert_allclose(fused, stepwise, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(fused, expected(model, args), rtol=1e-12, atol=1e-12)
    assert steps["Output"] is stepwise


@pytest.mark.parametrize("name", ["gqa g=2", "split d_v", "everything"])
def test_float32_stays_float32(name):
    model = CASES[name]
    args = inputs(model, batch=(2,), n=6, dtype=np.float32)
    out = model.lambdify()(**args)
    assert out.dtype == np.float32
    wide = {k: [a.astype(np.float64) for a in v] if isinstance(v, list) else v.astype(np.float64)
            for k, v in args.items()}
    np.testing.assert_allclose(out, expected(model, wide), rtol=2e-5, atol=2e-5)


def test_mixed_dtypes_promote_as_the_step_wise_code_does():
    model = CASES["bias"]
    args = inputs(model, n=4)
    args["X"] = args["X"].astype(np.float32)
    f = model.lambdify()
    out, (stepwise, _) = f(**args), f(**args, steps=True)
    assert out.dtype == stepwise.dtype == np.float64
    np.testing.assert_allclose(out, stepwise, rtol=1e-12)


def test_seeds_agree_with_exact_evaluation():
    for name in ("seed000", "seed001", "seed003"):
        ex = example(name)
        arrays = {k: np.asarray(v, dtype=float) for k, v in ex.inputs.items()}
        np.testing.assert_allclose(ex.model.lambdify()(**arrays), ex.evaluate().numeric(), rtol=1e-12,
                                   atol=1e-12, err_msg=name)


def test_symbolic_sizes_bound_from_the_arrays():
    f = MultiHeadAttention(causal=True).lambdify()  # n, d_model, h symbolic: compiled per size on the first call
    for d_model, h in ((6, 3), (8, 2)):
        model = MultiHeadAttention(n=None, d_model=d_model, h=h, causal=True)
        args = inputs(model, batch=(2,), n=5, seed=h)
        np.testing.assert_allclose(f(**args), expected(model, args), rtol=1e-12)


# ----- the softmax: shifted by the row maximum unless the scores provably stay small -----------------------
@pytest.mark.parametrize("size, dtype, shifted", [(0.2, np.float64, False), (1.5, np.float64, False),
                                                  (40.0, np.float64, True), (0.2, np.float32, False),
                                                  (3.0, np.float32, True)])
def test_both_softmax_branches_agree_with_the_reference(size, dtype, shifted):
    model = MultiHeadAttention(n=None, d_model=8, h=2, causal=True)
    args = inputs(model, n=6, size=size, dtype=dtype)
    # the largest Cauchy-Schwarz bound of the scores decides the branch (each head's is checked separately)
    wide = {k: [a.astype(np.float64) for a in v] if isinstance(v, list) else v.astype(np.float64)
            for k, v in args.items()}
    Q = [wide["X"] @ w * float(model.scale) for w in wide["W_Q"]]
    K = [wide["X"] @ w for w in wide["W_K"]]
    bounds = [np.linalg.norm(q, axis=1).max() * np.linalg.norm(k, axis=1).max() for q, k in zip(Q, K, strict=True)]
    limit = numeric._unshifted_limit(dtype)
    assert (max(bounds) > limit) == shifted and (min(bounds) > limit) == shifted
    want = expected(model, wide)
    got = model.lambdify()(**args)
    assert np.isfinite(got).all()
    tol = 1e-11 if dtype == np.float64 else 1e-4
    np.testing.assert_allclose(got, want, rtol=tol, atol=tol * np.abs(want).max())


def test_scores_of_order_1e4_give_finite_weights():
    f = MultiHeadAttention(n=None, d_model=2, h=1).lambdify()
    X = np.array([[100.0, 0.0], [0.0, 100.0], [70.0, 70.0]])
    out = f(X, W_Q=[np.eye(2)], W_K=[np.eye(2)], W_V=[np.eye(2)], W_O=np.eye(2))
    np.testing.assert_allclose(out, X, atol=1e-12)  # each token attends to itself only


def test_unshifted_limit_keeps_exp_far_from_overflow():
    for dtype in (np.float32, np.float64):
        limit = np.array(numeric._unshifted_limit(dtype), dtype)
        with np.errstate(all="raise"):  # a row of a million keys at the bound, times values of a million
            assert np.isfinite(np.exp(limit) * dtype(2**20) * dtype(1e6) * dtype(1e6))
            assert np.exp(-limit) >= np.finfo(dtype).tiny  # the smallest weight is a normal number
            # the fused code's scores are in units of log2 (exp2 of s log2 e): the same bound there
            base2 = np.array(limit * numeric.LOG2E, dtype)
            assert np.isfinite(np.exp2(base2) * dtype(2**20) * dtype(1e6) * dtype(1e6))
            assert np.exp2(-base2) >= np.finfo(dtype).tiny


# ----- batches in chunks -------------------------------------------------------------------------------------
@pytest.mark.parametrize("chunk_rows, batch", [(4, (5,)), (7, (2, 3)), (1, (3,)), (10_000, (4,))])
def test_chunks_of_the_batch_give_the_same_numbers(monkeypatch, chunk_rows, batch):
    model = CASES["everything"]
    args = inputs(model, batch=batch, n=3)
    want = expected(model, args)
    monkeypatch.setattr(numeric, "CHUNK_ROWS", chunk_rows)
    calls = []
    original = numeric._over_batches

    def counting(attend, *rest):
        def counted(*a):
            calls.append(a[0].shape)
            return attend(*a)
        return original(counted, *rest)

    monkeypatch.setitem(numeric._FUSED_NAMESPACE, "_over_batches", counting)
    np.testing.assert_allclose(model.lambdify()(**args), want, rtol=1e-12)
    count, per = int(np.prod(batch)), max(1, chunk_rows // 3)
    assert len(calls) == (-(-count // per) if count > per else 1)


def test_peak_memory_one_head_of_scores_at_a_time():
    # n = 512, d_model = 128, h = 4, float64: queries, keys and values of all heads (3 n d) and one head's scores
    # (n^2), plus NumPy's ufunc buffers (8192 elements per operand) and row vectors; the scores of every head at
    # once would be 3 n^2 more, a separate Concat n d more
    n, d = 512, 128
    model = MultiHeadAttention(n=None, d_model=d, h=4)
    args = inputs(model, n=n, size=0.1)
    _, compiled = model.lambdify()._compiled({}, keep_steps=False)
    flat = [args["X"], *args["W_Q"], *args["W_K"], *args["W_V"], args["W_O"]]
    tracemalloc.start()
    out = compiled.function(*flat)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert peak <= 8 * (3 * n * d + n * n) + 2**18  # (3.5 MiB + 256 KiB; measured 3.70 MiB)
    np.testing.assert_allclose(out, expected(model, args), rtol=1e-12, atol=1e-12)


# ----- the generated source ----------------------------------------------------------------------------------
def _code(source):
    """The source's statements: the docstring, comments and blank lines dropped."""
    lines = [re.sub(r"\s+#.*$", "", line).rstrip() for line in source.splitlines()]
    return [line for line in lines if line.strip() and not line.strip().startswith(("#", '"', "'"))]


@pytest.mark.parametrize("name", list(CASES))
def test_one_projection_product_per_kind(name):
    model = CASES[name]
    code = "\n".join(_code(model.lambdify().source))
    h, g = int(model.dims.h), model.kv_heads or int(model.dims.h)
    stack = "stack" if model.convention == "split" else "concatenate"
    for kind, count in (("Q", h), ("K", g), ("V", g)):
        names = ", ".join(f"W_{kind}_{i}" for i in range(1, count + 1))
        assert code.count(f"W = {stack}([{names}]") == 1, kind  # every head's weights, once
    source = r"X_blocks" if model.convention == "split" else r"X"
    products = re.findall(r"(?:matmul|_project)\((\w+), W\b", code)
    assert products == [source, "KV" + source[1:], "KV" + source[1:]]  # Q from X, K and V from the K/V source
    assert not re.search(r"(?:matmul|_project)\([^)]*W_[QKV]_\d", code)  # no product with one head's weight
    # the projections, then scores, row sums, weighted values, output
    assert code.count("matmul(") + code.count("_project(") == 3 + 4


def test_generated_source_of_a_split_model():
    code = _code(MultiHeadAttention(n=None, d_model=4, h=2, d_v=3, convention="split").lambdify().source)
    assert code == [
        "def _fused_mha(X, W_Q_1, W_Q_2, W_K_1, W_K_2, W_V_1, W_V_2, W_O):",
        "    dtype = result_type(X, W_Q_1, W_Q_2, W_K_1, W_K_2, W_V_1, W_V_2, W_O)",
        "    KV = X",
        "    T_bound = 0.0",
        "    limit = _unshifted_limit(dtype) * 1.4426950408889634",
        "    def attend(X, KV, out):",
        "        X_blocks = swapaxes(X.reshape(X.shape[:-1] + (2, 2)), -2, -3)",
        "        KV_blocks = swapaxes(KV.reshape(KV.shape[:-1] + (2, 2)), -2, -3)",
        "        W = stack([W_Q_1, W_Q_2], dtype=dtype)",
        "        W *= 1.0201394465967895",  # 1/sqrt(2) log2(e)
        "        Q = empty(X.shape[:-1] + (4,), dtype)",
        "        matmul(X_blocks, W, out=swapaxes(Q.reshape(Q.shape[:-1] + (2, 2)), -2, -3))",
        "        del W",
        "        W = stack([W_K_1, W_K_2], dtype=dtype)",
        "        K = empty(KV.shape[:-1] + (4,), dtype)",
        "        matmul(KV_blocks, W, out=swapaxes(K.reshape(K.shape[:-1] + (2, 2)), -2, -3))",
        "        del W",
        "        W = stack([W_V_1, W_V_2], dtype=dtype)",
        "        V = empty(KV.shape[:-1] + (6,), dtype)",
        "        matmul(KV_blocks, W, out=swapaxes(V.reshape(V.shape[:-1] + (2, 3)), -2, -3))",
        "        del W",
        "        del X_blocks, KV_blocks",
        "        Q_ = Q.reshape(Q.shape[:-1] + (2, 2))",
        "        K_ = K.reshape(K.shape[:-1] + (2, 2))",
        "        V_ = V.reshape(V.shape[:-1] + (2, 3))",
        "        Concat = empty(Q.shape[:-1] + (6,), dtype)",
        "        heads = Concat.reshape(Concat.shape[:-1] + (2, 3))",
        "        S = empty(Q.shape[:-1] + K.shape[-2:-1], dtype)",
        "        r = empty(S.shape[:-1] + (1,), dtype)",
        "        sums = empty(Q.shape[:-1] + (2, 1), dtype)",
        "        ones_kv = ones(K.shape[-2:-1] + (1,), dtype)",
        "        q_norms, k_norms = _max_row_norms(Q_), _max_row_norms(K_)",
        "        for i, j in ((0, 0), (1, 1)):",
        "            matmul(Q_[..., i, :], swapaxes(K_[..., j, :], -1, -2), out=S)",
        "            if not q_norms[i] * k_norms[j] + T_bound <= limit:",
        "                amax(S, axis=-1, keepdims=True, out=r)",
        "                subtract(S, r, out=S)",
        "            exp2(S, out=S)",
        "            matmul(S, ones_kv, out=sums[..., i, :])",
        "            matmul(S, V_[..., j, :], out=heads[..., i, :])",
        "        reciprocal(sums, out=sums)",
        "        multiply(heads, sums, out=heads)",
        "        del S, Q_, K_, V_, V, heads, sums",
        "        Output = _project(Concat, W_O, out=K if out is None else out)",
        "        return Output",
        "    return _over_batches(attend, 4, dtype, X, KV)",
    ]


def test_key_value_source_and_additive_term_are_single_places():
    code = _code(MultiHeadAttention(n=None, d_model=8, h=4, kv_heads=2, causal=True, bias=True).lambdify().source)
    assert [line for line in code if line.startswith("    KV = ")] == ["    KV = X"]
    assert sum("_project(KV, W)" in line for line in code) == 2  # keys and values read KV only
    assert [line.strip() for line in code if re.search(r"\bT\b", line)] == [
        "T = _log2_units(_causal_term(X.shape[-2], KV.shape[-2], dtype))",
        "_no_empty_rows(T, 'every head')",
        "T_bound = _finite_bound(T)",
        "def attend(X, KV, T, out):", "add(S, T, out=S)", "return _over_batches(attend, 8, dtype, X, KV, T)"]
    assert not any(re.search(r"\bT\b", line) for line in _code(CASES["bias"].lambdify().source))
    # cross-attention reads its keys and values from Y, and a mask is one more term of T
    cross = _code(MultiHeadAttention(n=None, d_model=8, h=4, kv_heads=2, causal=True, n_kv=5, mask="additive")
                  .lambdify().source)
    assert [line for line in cross if line.startswith("    KV = ")] == ["    KV = Y"]
    assert "    T = _log2_units(_causal_term(X.shape[-2], KV.shape[-2], dtype) + M.astype(dtype, copy=False))" in cross
    padded = _code(MultiHeadAttention(n=None, d_model=8, h=4, mask="key_padding").lambdify().source)
    assert "    T = _log2_units(_padding_term(m, dtype))" in padded


def test_head_pairs_are_read_off_the_steps():
    assert _head_pairs(MultiHeadAttention(n=None, d_model=16, h=8, kv_heads=2)) == [
        (0, 0), (1, 0), (2, 0), (3, 0), (4, 1), (5, 1), (6, 1), (7, 1)]
    assert _head_pairs(MultiHeadAttention(n=None, d_model=6, h=3)) == [(0, 0), (1, 1), (2, 2)]


def test_inputs_are_not_modified():
    model = CASES["everything"]
    args = inputs(model, batch=(2,), n=4)
    before = {k: [a.copy() for a in v] if isinstance(v, list) else v.copy() for k, v in args.items()}
    model.lambdify()(**args)
    for key, value in args.items():
        for a, b in zip(value if isinstance(value, list) else [value],
                        before[key] if isinstance(value, list) else [before[key]], strict=True):
            assert np.array_equal(a, b), key


def test_a_model_whose_steps_pair_heads_differently_is_refused(monkeypatch):
    model = MultiHeadAttention(n=None, d_model=4, h=2)
    steps = dict(model.steps)
    swapped = steps["head_1"].definition.func(steps["head_1"].definition.args[0], steps["V_2"].symbol)
    monkeypatch.setitem(model.__dict__, "steps", {**steps, "head_1": steps["head_1"].func(
        "head_1", steps["head_1"].symbol, swapped, steps["head_1"].expr, model.dims)})
    with pytest.raises(InputError, match="head 1 reads key head 1 but value head 2"):
        _head_pairs(model)


def test_symbol_names_never_become_code():
    # a dimension symbol's name is text; it reaches the generated source only inside a string literal
    name = 'n"""\nraise SystemExit("injected")\n"""'
    model = MultiHeadAttention(n=Symbol(name, integer=True, positive=True), d_model=4, h=2)
    f = model.lambdify()
    assert name in ast.literal_eval(f.source.splitlines()[1].strip())  # the docstring, read back as a literal
    args = inputs(MultiHeadAttention(n=None, d_model=4, h=2), n=3)
    np.testing.assert_allclose(f(**args), expected(model, args), rtol=1e-12)


def test_projection_is_one_product_over_the_batch_and_never_copies_a_broadcast_operand():
    rng = np.random.default_rng(5)
    A, W = rng.normal(size=(3, 4, 5)), rng.normal(size=(5, 2))
    out = np.empty((3, 4, 2))
    assert _project(A, W, out=out) is not None and np.array_equal(out, A @ W)  # written into out, flattened
    assert np.array_equal(_project(A, W), A @ W)
    # a stride-0 batch axis (Y broadcast over a batch of X) keeps NumPy's per-element product: no copy of A
    B = np.broadcast_to(A[0], (1000, 4, 5))
    tracemalloc.start()
    result = _project(B, W)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert np.allclose(result, B @ W) and peak < 1000 * 4 * 5 * 8  # less than A copied to (4000, 5)
    # a transposed (non-contiguous) operand gives the same numbers
    C = np.swapaxes(rng.normal(size=(3, 5, 4)), -1, -2)
    assert np.allclose(_project(C, W), C @ W)


def test_a_mask_filled_with_the_smallest_float_is_finite_not_minus_infinity():
    """Hugging Face-style masks hold finfo.min: a large finite number, not -inf; in units of log2 it must stay finite
    (a row of them is uniform, as in the step-wise code), and so must a large positive entry."""
    model = MultiHeadAttention(n=None, d_model=4, h=2, mask="additive")
    f = model.lambdify()
    rng = np.random.default_rng(0)
    X = rng.normal(size=(3, 4))
    W = {k: rng.normal(size=(2, 4, 2)) for k in ("W_Q", "W_K", "W_V")}
    for dtype in (np.float64, np.float32):
        lo = np.finfo(dtype).min
        args = {"X": X.astype(dtype), **{k: v.astype(dtype) for k, v in W.items()}, "W_O": np.eye(4, dtype=dtype)}
        for M in (np.array([[0, lo, lo], [lo, lo, lo], [0, 0, 0]], dtype),
                  np.array([[0, 0.8 * np.finfo(dtype).max, 0], [0, 0, 0], [0, 0, 0]], dtype)):
            fused = f(**args, mask=M)
            stepwise, steps = f(**args, mask=M, steps=True)
            np.testing.assert_allclose(fused, stepwise, rtol=1e-5, atol=1e-6)
        assert np.allclose(steps["A_1"][..., 0, :], [0, 1, 0])


def test_an_operand_broadcast_over_the_batch_is_not_copied_per_element(monkeypatch):
    """Two Y for 32 x 2 chunked X: flattening the batch axes (32, 2) of Y's broadcast (stride 0, then not) copies Y
    32 times (8 MiB here, review)."""
    model = MultiHeadAttention(n=None, d_model=64, h=4, n_kv=256)
    f = model.lambdify()
    rng = np.random.default_rng(0)
    X, Y = rng.normal(size=(32, 2, 16, 64)), rng.normal(size=(2, 256, 64))
    W = {k: rng.normal(size=(4, 64, 16)) / 8 for k in ("W_Q", "W_K", "W_V")}
    monkeypatch.setattr(numeric, "CHUNK_ROWS", 32)  # two batch elements per chunk: 32 chunks
    f(X[:1], **W, W_O=np.eye(64), Y=Y)  # compiled
    tracemalloc.start()
    out = f(X, **W, W_O=np.eye(64), Y=Y)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert peak < 32 * 2 * 256 * 64 * 8 / 4  # well under one copy of Y per batch element
    want = np.stack([f(X[i], **W, W_O=np.eye(64), Y=Y) for i in (0, 17, 31)])
    np.testing.assert_allclose(out[[0, 17, 31]], want, rtol=1e-13)


# ----- NaN and inf: checked by the fused code where it reads the data, named by the caller ---------------------
@pytest.mark.parametrize("name, index, message", [
    ("X", (3, 1, 2), r"X contains NaN or inf \(first at index \(3, 1, 2\)\)"),  # in the last chunk only
    ("Y", (0, 4, 0), r"Y contains NaN or inf \(first at index \(0, 4, 0\)\)"),
    ("W_Q", (1, 1, 0), r"W_Q contains NaN or inf \(first at index \(1, 1, 0\)\)"),
    ("W_K", (0, 1, 1), r"W_K contains NaN or inf \(first at index \(0, 1, 1\)\)"),
    ("W_V", (1, 0, 1), r"W_V contains NaN or inf \(first at index \(1, 0, 1\)\)"),
    ("W_O", (2, 3), r"W_O contains NaN or inf \(first at index \(2, 3\)\)"),
])
@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
@pytest.mark.parametrize("convention", ["projection", "split"])
def test_non_finite_inputs_are_named_from_the_fused_code(monkeypatch, name, index, message, bad, convention):
    monkeypatch.setattr(numeric, "CHUNK_ROWS", 3)  # one batch element (3 query rows) per chunk
    rng = np.random.default_rng(5)
    model = MultiHeadAttention(n=3, d_model=4, h=2, n_kv=5, kv_heads=2, convention=convention)
    block = 2 if convention == "split" else 4
    args = {"X": rng.normal(size=(4, 3, 4)), "Y": rng.normal(size=(4, 5, 4)),
            "W_Q": rng.normal(size=(2, block, 2)), "W_K": rng.normal(size=(2, block, 2)),
            "W_V": rng.normal(size=(2, block, 2)), "W_O": rng.normal(size=(4, 4))}
    f = model.lambdify()
    assert np.isfinite(f(**args)).all()
    args[name] = args[name].copy()
    args[name][index] = bad
    with pytest.raises(InputError, match=message):
        f(**args)


def test_a_finite_weight_that_overflows_once_scaled_is_not_called_non_finite():
    """The fused code checks the weights' copy before it folds the scale in: W_Q = max float32 is finite (the
    scores overflow, an error saying so), not 'NaN or inf'."""
    big = np.finfo(np.float32).max
    f = MultiHeadAttention(n=None, d_model=1, h=1).lambdify()  # d_k = 1: the factor is log2(e) > 1
    one = np.ones((1, 1, 1), np.float32)
    with pytest.raises(InputError, match="the output is not finite: the scores overflowed the float32 range"):
        f(np.ones((2, 1), np.float32), big * one, one, one, np.ones((1, 1), np.float32))


@pytest.mark.parametrize("change, other", [
    ({"W_O": np.ones((4, 3))}, "a wrong W_O shape"),
    ({"mask": np.array([[1.0, 0.0, 0.0, 0.0, 0.0]] + [[-np.inf] * 5] * 2)}, "a fully masked row"),
    ({"Y": None}, "Y missing"),
])
def test_non_finite_input_is_named_before_any_other_error(change, other):
    """NaN in X is the error even when the call has another problem that the fused code would meet first."""
    rng = np.random.default_rng(2)
    args = {"X": rng.normal(size=(3, 4)), "Y": rng.normal(size=(5, 4)), "W_Q": rng.normal(size=(2, 4, 2)),
            "W_K": rng.normal(size=(2, 4, 2)), "W_V": rng.normal(size=(2, 4, 2)), "W_O": rng.normal(size=(4, 4)),
            "mask": np.zeros((3, 5))}
    f = MultiHeadAttention(n=3, d_model=4, h=2, n_kv=5, mask="additive").lambdify()
    assert f(**args).shape == (3, 4)
    args.update(change)
    with pytest.raises(MHASymbolicError) as found:
        f(**args)
    assert "NaN" not in str(found.value), other
    args["X"] = args["X"].copy()
    args["X"][2, 3] = np.nan
    with pytest.raises(InputError, match=r"X contains NaN or inf \(first at index \(2, 3\)\)"):
        f(**args)


def test_empty_batch_is_a_shape_error():
    f = MultiHeadAttention(n=None, d_model=8, h=4, mask="key_padding").lambdify()
    W = {k: np.ones((4, 8, 2)) for k in ("W_Q", "W_K", "W_V")}
    with pytest.raises(ShapeError, match=r"the leading \(batch\) axes broadcast to \(0,\), an empty batch: X \(\), "
                                         r"m \(0,\)"):
        f(np.ones((3, 8)), **W, W_O=np.eye(8), mask=np.ones((0, 3), bool))


def test_nan_in_a_broadcast_y_is_named_at_its_own_index():
    """One Y for a batch of 1000 X (a broadcast view, never copied): NaN in it reaches the keys of every chunk."""
    f = MultiHeadAttention(n=None, d_model=4, h=2, cross=True).lambdify()
    W = {k: np.random.default_rng(3).normal(size=(2, 4, 2)) for k in ("W_Q", "W_K", "W_V")}
    Y = np.ones((5, 4))
    Y[4, 0] = np.inf
    with pytest.raises(InputError, match=r"^Y contains NaN or inf \(first at index \(4, 0\)\)$"):
        f(np.ones((1000, 3, 4)), **W, W_O=np.eye(4), Y=Y)


@pytest.mark.parametrize("where", ["Q", "K", "V"])
def test_finite_inputs_whose_projections_overflow_are_an_overflow_not_nan(where):
    """The fused code finds a non-finite Q or K (or output) and does not know why; every input being finite, the
    error is the overflow, not 'NaN or inf'."""
    f = MultiHeadAttention(n=None, d_model=2, h=1).lambdify()
    W = {k: np.ones((1, 2, 2), np.float32) for k in ("W_Q", "W_K", "W_V")}
    W[f"W_{where}"] = np.full((1, 2, 2), 3e38, np.float32)  # finite; a row sum of 2 x 3e38 is inf in float32
    with pytest.raises(InputError, match=r"^the output is not finite: the scores overflowed the float32 range; "
                                         r"rescale X or the weights, or use float64$"):
        f(np.ones((3, 2), np.float32), **W, W_O=np.eye(2, dtype=np.float32))
    W[f"W_{where}"] = W[f"W_{where}"].astype(np.float64)  # the same numbers in float64: finite
    assert np.isfinite(f(np.ones((3, 2)), **W, W_O=np.eye(2))).all()


def test_cross_attention_reads_one_vector_y_as_one_key_and_names_a_bad_y():
    eye = np.eye(2)
    f = MultiHeadAttention(d_model=2, h=1, cross=True).lambdify()
    np.testing.assert_allclose(f(eye, [eye], [eye], [eye], eye, Y=np.array([1.0, 2.0])), [[1.0, 2.0], [1.0, 2.0]])
    with pytest.raises(ShapeError, match=r"= \(\.\.\., n_kv, d_model\), at least one key$"):
        f(eye, [eye], [eye], [eye], eye, Y=np.ones((2, 3)))
