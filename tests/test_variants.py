"""Attention variants in the symbolic model (issue 15): grouped-query attention with symbolic h and g,
cross-attention (n queries from X, n_kv keys/values from Y), key-padding and additive masks -- shapes, counts,
exact and numeric evaluation, agreement with torch, and rank bounds attained by certified witnesses."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from sympy import Matrix, Min, Rational, ceiling, exp, latex, oo, sqrt, symbols

from mha_symbolic import DimensionError, InputError, MaskError, MultiHeadAttention, ShapeError
from mha_symbolic.dims import dimension_symbol
from mha_symbolic.proofs import parameter_and_flop_counts
from mha_symbolic.rank import rank_bound
from mha_symbolic.rank.variants import variant_rank_bounds

n, n_kv, d_model, h, d_k, d_v, g = (dimension_symbol(s) for s in ("n", "n_kv", "d_model", "h", "d_k", "d_v", "g"))
i, j = symbols("i j", integer=True, positive=True)
DATA = Path(__file__).parent / "data" / "sdpa_variants.npz"


# ----- shapes for symbolic sizes ---------------------------------------------------------------------------------
def test_cross_attention_shapes_are_derived_for_symbolic_sizes():
    M = MultiHeadAttention(cross=True)
    shapes = {name: s.shape for name, s in M.steps.items()}
    assert shapes == {"Q_i": (n, d_k), "K_i": (n_kv, d_k), "V_i": (n_kv, d_v), "S_i": (n, n_kv),
                      "S'_i": (n, n_kv), "A_i": (n, n_kv), "head_i": (n, d_v), "Concat": (n, d_model),
                      "Output": (n, d_model)}
    assert M.steps["K_i"].text == "K_i = Y W_K^i" and M.steps["Q_i"].text == "Q_i = X W_Q^i"
    assert list(M.inputs) == ["X", "Y", "W_Q", "W_K", "W_V", "W_O"] and M.inputs["Y"].shape == (n_kv, d_model)
    # self-attention is the case Y = X: the same steps with Y replaced by X and n_kv by n
    self_attention = MultiHeadAttention()
    assert M.output.xreplace({M.Y: M.X}).subs(n_kv, n) == self_attention.output
    assert M.func(*M.args) == M and M.n_kv == n_kv and self_attention.n_kv == n and not self_attention.cross
    concrete = MultiHeadAttention(n=3, d_model=8, h=2, n_kv=5)
    assert concrete.steps["S_2"].shape == (3, 5) and concrete.steps["V_1"].shape == (5, 4)
    assert concrete.bind() == concrete and MultiHeadAttention(cross=True).bind(n_kv=5, n=3).n_kv == 5
    assert "n_kv=5" in str(concrete)


def test_split_convention_cross_attention_slices_both_inputs():
    M = MultiHeadAttention(n=2, d_model=4, h=2, n_kv=3, convention="split")
    assert M.steps["Y_head2"].text == "Y_head2 = Y[:, 2:4]" and M.steps["K_2"].text == "K_2 = Y_head2 W_K^2"
    assert M.steps["S_2"].shape == (2, 3)


def test_grouped_query_attention_with_symbolic_h_and_g():
    M = MultiHeadAttention(kv_heads="g")
    assert M.kv_heads == g and M.kv_indices == [j] and M.kv_index(i) == ceiling(g * i / h)
    assert [name for name in M.steps] == ["Q_i", "K_j", "V_j", "S_i", "S'_i", "A_i", "head_i", "Concat", "Output"]
    mha = MultiHeadAttention()
    reads = {mha.W(kind, i): M.W(kind, ceiling(g * i / h)) for kind in "KV"}
    assert M.steps["S_i"].expr == mha.steps["S_i"].expr.xreplace(reads)
    assert M.steps["head_i"].expr == mha.steps["head_i"].expr.xreplace(reads) != mha.steps["head_i"].expr
    assert M.steps["K_j"].shape == (n, d_k) and M.steps["head_i"].shape == (n, d_v)
    assert [str(w) for w in M.inputs["W_K"]] == ["W_K^j"] and M.assumptions == ("g divides h = h",)
    # binding h and g gives the concrete grouped model, step for step
    bound = M.bind(n=3, d_model=8, h=4, kv_heads=2)
    assert bound == MultiHeadAttention(n=3, d_model=8, h=4, kv_heads=2)
    # multi-query attention with symbolic h: every head reads K_1
    mqa = MultiHeadAttention(kv_heads=1)
    assert mqa.steps["S_i"].text == "S_i = Q_i K_1^T" and [str(w) for w in mqa.inputs["W_V"]] == ["W_V^1"]


def test_gqa_equals_repeated_kv_for_a_general_head():
    from mha_symbolic.proofs import gqa_equals_repeated_kv

    for model in (MultiHeadAttention(kv_heads="g"), MultiHeadAttention(cross=True, kv_heads=2, mask="additive"),
                  MultiHeadAttention(kv_heads=1, bias=True)):
        p = gqa_equals_repeated_kv(model)
        assert p.verified and [ok for _, ok in p.checks] == [True, True, True]
    assert gqa_equals_repeated_kv(MultiHeadAttention(kv_heads="g")).result["assignment"] == ceiling(g * i / h)
    # the control has teeth: a model whose head i reads K_i (no grouping) is not the repeated one
    with pytest.raises(InputError, match="nothing to prove"):
        gqa_equals_repeated_kv(MultiHeadAttention())


def test_counts_follow_g_and_n_kv_symbolically():
    def result(M):
        return parameter_and_flop_counts(M).result

    gqa = result(MultiHeadAttention(kv_heads="g"))
    assert gqa["kv_cache_per_token"] == 2 * g * d_model / h  # 2 g d_k
    assert gqa["parameters"] == 2 * d_model**2 + 2 * g * d_model**2 / h
    mqa = result(MultiHeadAttention(kv_heads=1))
    assert mqa["kv_cache_per_token"] == 2 * d_model / h
    assert gqa["parameters"].subs(g, h) == result(MultiHeadAttention())["parameters"] == 4 * d_model**2
    cross = result(MultiHeadAttention(cross=True))
    assert cross["parameters"] == 4 * d_model**2  # Y is data, not a parameter
    assert cross["matmul_flops"] == 4 * d_model**2 * n + 4 * d_model**2 * n_kv + 4 * d_model * n * n_kv
    masked = result(MultiHeadAttention(cross=True, mask="additive"))
    assert masked["elementwise_flops"] - cross["elementwise_flops"] == h * n * n_kv  # adding M to each head


# ----- masks: exact evaluation, LaTeX, errors ---------------------------------------------------------------------
I4_2 = [[1, 0], [0, 1], [0, 0], [0, 0]]
W_O4 = np.eye(4, dtype=int)


def test_key_padding_mask_is_evaluated_exactly():
    M = MultiHeadAttention(n=2, d_model=4, h=2, n_kv=3, mask="key_padding")
    X, Y = [[2, 0, 0, 0], [0, 2, 0, 0]], [[2, 0, 0, 0], [0, 2, 0, 0], [2, 2, 0, 0]]
    E = M.evaluate(X=X, Y=Y, W_Q=[I4_2, I4_2], W_K=[I4_2, I4_2], W_V=[I4_2, I4_2], W_O=W_O4, mask=[1, 0, 1])
    # S'_1 = X W_Q (Y W_K)^T / sqrt(2): row 1 is (2 sqrt 2, 0, 2 sqrt 2), row 2 (0, 2 sqrt 2, 2 sqrt 2); key 2 masked
    r = 2 * sqrt(2)
    assert E["S'_1"] == Matrix([[r, 0, r], [0, r, r]])
    assert E["A_1"] == Matrix([[Rational(1, 2), 0, Rational(1, 2)], [1 / (1 + exp(r)), 0, exp(r) / (1 + exp(r))]])
    assert E["head_1"].row(0) == Matrix([[2, 1]])  # the average of Y W_V's rows 1 and 3: (2, 0) and (2, 2)
    with pytest.raises(MaskError, match=r"step A_1 = .*fully masked row: row 1"):
        M.evaluate(X=X, Y=Y, W_Q=[I4_2] * 2, W_K=[I4_2] * 2, W_V=[I4_2] * 2, W_O=W_O4, mask=[0, 0, 0])
    with pytest.raises(InputError, match=r"m entry \(0, 1\) is 2"):
        M.evaluate(X=X, Y=Y, W_Q=[I4_2] * 2, W_K=[I4_2] * 2, W_V=[I4_2] * 2, W_O=W_O4, mask=[1, 2, 0])
    with pytest.raises(ShapeError, match=r"the mask m has shape \(1, 2\); the model expects \(1, 3\)"):
        M.evaluate(X=X, Y=Y, W_Q=[I4_2] * 2, W_K=[I4_2] * 2, W_V=[I4_2] * 2, W_O=W_O4, mask=[1, 1])
    with pytest.raises(InputError, match="the mask m is missing"):
        M.evaluate(X=X, Y=Y, W_Q=[I4_2] * 2, W_K=[I4_2] * 2, W_V=[I4_2] * 2, W_O=W_O4)


def test_additive_mask_with_minus_infinity_and_causal_rows():
    M = MultiHeadAttention(n=3, d_model=4, h=2, mask="additive", causal=True)
    X = [[1, 0, 0, 0], [0, 1, 0, 0], [0, 0, 1, 1]]
    Mask = [[0, 0, 0], [-oo, 0, 0], [0, -1, float("-inf")]]
    E = M.evaluate(X=X, W_Q=[I4_2] * 2, W_K=[I4_2] * 2, W_V=[I4_2] * 2, W_O=W_O4, mask=Mask)
    assert M.steps["A_1"].text == "A_1 = causal_softmax(S'_1 + M)"
    assert E["A_1"].row(0) == Matrix([[1, 0, 0]])  # causal: the first query sees only the first key
    assert E["A_1"].row(1) == Matrix([[0, 1, 0]])  # -oo on key 1, the mask leaves key 2
    assert E["A_1"][2, 2] == 0 and E["A_1"][2, 0] == 1 / (1 + exp(-1))  # S'_1 row 3 is 0; M gives (0, -1, -oo)
    with pytest.raises(MaskError, match=r"row 1 has no key left"):
        M.evaluate(X=X, W_Q=[I4_2] * 2, W_K=[I4_2] * 2, W_V=[I4_2] * 2, W_O=W_O4,
                   mask=[[-oo, 0, 0], [0, 0, 0], [0, 0, 0]])
    with pytest.raises(InputError, match="every entry must be finite"):
        M.evaluate(X=X, W_Q=[I4_2] * 2, W_K=[I4_2] * 2, W_V=[I4_2] * 2, W_O=W_O4, mask=[[oo, 0, 0]] * 3)


def test_mask_latex_and_wrong_options():
    kp = MultiHeadAttention(cross=True, mask="key_padding", causal=True)
    assert latex(kp.steps["A_i"].definition) == r"\mathrm{softmax}_{\mathrm{causal},\,m}\left(S'_i\right)"
    add = MultiHeadAttention(mask="additive")
    assert latex(add.steps["A_i"].definition) == r"\mathrm{softmax}\left(S'_i + M\right)"
    assert add.inputs["M"].shape == (n, n) and kp.inputs["m"].shape == (1, n_kv)
    with pytest.raises(InputError, match=r"kv_heads=g must be declared Symbol\(\.\.\., integer=True, positive=True\)"):
        MultiHeadAttention(kv_heads=symbols("g"))
    with pytest.raises(InputError, match="kv_heads must be a positive integer or a symbol name, got '2g'"):
        MultiHeadAttention(kv_heads="2g")
    with pytest.raises(InputError, match="mask must be None, 'key_padding'"):
        MultiHeadAttention(mask="padding")
    with pytest.raises(InputError, match="Y given, but the model is self-attention"):
        MultiHeadAttention(n=2, d_model=4, h=2).evaluate(X=[[1, 0, 0, 0]] * 2, Y=[[1, 0, 0, 0]])
    with pytest.raises(DimensionError, match="n_kv is bound only in cross-attention"):
        MultiHeadAttention().bind(n_kv=3)
    with pytest.raises(DimensionError, match="n_kv must be a positive integer"):
        MultiHeadAttention(n_kv=0)


# ----- numeric path ---------------------------------------------------------------------------------------------
def _case(seed=3, batch=2, nq=3, nk=5, dm=8, heads=4, groups=2):
    rng = np.random.default_rng(seed)
    dk = dm // heads
    return {"X": rng.normal(size=(batch, nq, dm)), "Y": rng.normal(size=(batch, nk, dm)),
            "W_Q": rng.normal(size=(heads, dm, dk)), "W_K": rng.normal(size=(groups, dm, dk)),
            "W_V": rng.normal(size=(groups, dm, dk)), "W_O": rng.normal(size=(dm, dm)),
            "keep": np.array([[1, 1, 0, 1, 0], [1, 0, 1, 1, 1]]), "additive": rng.normal(size=(batch, nq, nk))}


def _reference(c, causal=False, keep=None, additive=None):
    """Per-head loops, written independently of the model: query head i reads key/value head i // (h/g)."""
    heads, groups = len(c["W_Q"]), len(c["W_K"])
    out = []
    for b in range(len(c["X"])):
        blocks = []
        for i in range(heads):
            jj = i // (heads // groups)
            Q, K, V = c["X"][b] @ c["W_Q"][i], c["Y"][b] @ c["W_K"][jj], c["Y"][b] @ c["W_V"][jj]
            S = Q @ K.T / np.sqrt(Q.shape[1])
            if additive is not None:
                S = S + additive[b]
            if keep is not None:
                S = np.where(keep[b][None, :] == 1, S, -np.inf)
            if causal:
                S = np.where(np.triu(np.ones(S.shape, bool), 1), -np.inf, S)
            A = np.exp(S - S.max(axis=1, keepdims=True))
            blocks.append(A / A.sum(axis=1, keepdims=True) @ V)
        out.append(np.concatenate(blocks, axis=1) @ c["W_O"])
    return np.stack(out)


@pytest.mark.parametrize("mask", [None, "key_padding", "additive"])
@pytest.mark.parametrize("causal", [False, True])
def test_lambdify_cross_gqa_and_masks_against_a_reference_and_exact_evaluation(mask, causal):
    c = _case()
    M = MultiHeadAttention(n=None, d_model=8, h=4, kv_heads=2, cross=True, mask=mask, causal=causal)
    f = M.lambdify()
    given = {"key_padding": c["keep"], "additive": c["additive"], None: None}[mask]
    out = f(c["X"], c["W_Q"], c["W_K"], c["W_V"], c["W_O"], Y=c["Y"], mask=given)
    want = _reference(c, causal, c["keep"] if mask == "key_padding" else None,
                      c["additive"] if mask == "additive" else None)
    assert out.shape == (2, 3, 8) and np.abs(out - want).max() < 1e-12
    # the exact evaluation of the same model agrees with the compiled one
    E = M.evaluate(X=c["X"][1], Y=c["Y"][1], W_Q=c["W_Q"], W_K=c["W_K"], W_V=c["W_V"], W_O=c["W_O"],
                   mask=None if given is None else given[1])
    assert np.abs(E.numeric() - out[1]).max() < 1e-12
    f32 = f(*(c[k].astype(np.float32) for k in ("X", "W_Q", "W_K", "W_V", "W_O")), Y=c["Y"].astype(np.float32),
            mask=given if mask != "additive" else given.astype(np.float32))
    assert f32.dtype == np.float32 and np.abs(f32 - want).max() < 1e-4


def test_numeric_mask_errors_name_the_row_and_the_input():
    c = _case()
    f = MultiHeadAttention(n=None, d_model=8, h=4, kv_heads=2, cross=True, mask="key_padding").lambdify()
    args = (c["X"], c["W_Q"], c["W_K"], c["W_V"], c["W_O"])
    padding = np.array([[1, 0, 0, 0, 0], [0, 0, 0, 0, 0]])
    with pytest.raises(MaskError, match=r"every row of batch entry \(1,\) has no key left to attend to \(every head\)"):
        f(*args, Y=c["Y"], mask=padding)
    with pytest.raises(MaskError, match=r"row 1 of batch entry \(1,\) has no key left"):  # the step-wise code
        f(*args, Y=c["Y"], mask=padding, steps=True)
    additive = np.zeros((2, 3, 5))
    additive[0, 2] = -np.inf
    with pytest.raises(MaskError, match=r"row 3 of batch entry \(0,\) has no key left"):
        MultiHeadAttention(n=None, d_model=8, h=4, kv_heads=2, cross=True, mask="additive").lambdify()(
            *args, Y=c["Y"], mask=additive)
    with pytest.raises(ShapeError, match=r"the mask m has shape \(2, 4\); expected \(\.\.\., 5\)"):
        f(*args, Y=c["Y"], mask=np.ones((2, 4)))
    with pytest.raises(InputError, match="Y is missing"):
        f(*args, mask=c["keep"])
    with pytest.raises(ShapeError, match=r"Y has shape \(2, 5, 6\)"):
        f(*args, Y=c["Y"][..., :6], mask=c["keep"])
    with pytest.raises(InputError, match="must hold 0/False"):
        f(*args, Y=c["Y"], mask=c["keep"] * 2)


def test_lambdify_agrees_with_stored_torch_cases():
    """Outputs of torch's scaled_dot_product_attention (enable_gqa, attn_mask), stored by the test below."""
    stored = np.load(DATA)
    c = {k: stored[k] for k in ("X", "Y", "W_Q", "W_K", "W_V", "W_O", "keep", "additive")}
    for mask, causal in (("key_padding", False), ("additive", False), (None, True)):
        M = MultiHeadAttention(n=None, d_model=8, h=4, kv_heads=2, cross=True, mask=mask, causal=causal)
        given = {"key_padding": c["keep"], "additive": c["additive"], None: None}[mask]
        out = M.lambdify()(c["X"], c["W_Q"], c["W_K"], c["W_V"], c["W_O"], Y=c["Y"], mask=given)
        assert np.abs(out - stored[f"torch_{mask}_{causal}"]).max() < 1e-12


def _torch_sdpa(c, mask, causal):
    torch = pytest.importorskip("torch")
    import torch.nn.functional as F

    t = {k: torch.from_numpy(np.asarray(v, dtype=np.float64)) for k, v in c.items()}
    q = torch.einsum("bnd,hde->bhne", t["X"], t["W_Q"])
    k = torch.einsum("bnd,hde->bhne", t["Y"], t["W_K"])
    v = torch.einsum("bnd,hde->bhne", t["Y"], t["W_V"])
    attn_mask = None
    if mask == "key_padding":
        attn_mask = (t["keep"] == 1)[:, None, None, :]
    elif mask == "additive":
        attn_mask = t["additive"][:, None]
    heads = F.scaled_dot_product_attention(q, k, v, attn_mask=attn_mask, is_causal=causal, enable_gqa=True)
    b, hh, nq, dv = heads.shape
    return (heads.transpose(1, 2).reshape(b, nq, hh * dv) @ t["W_O"]).numpy()


@pytest.mark.parametrize("mask,causal", [("key_padding", False), ("additive", False), (None, True)])
def test_lambdify_agrees_with_torch_sdpa_live(mask, causal):
    c = _case()
    stored = np.load(DATA)
    want = _torch_sdpa(c, mask, causal)
    assert np.abs(want - stored[f"torch_{mask}_{causal}"]).max() < 1e-12  # the stored case is today's torch
    M = MultiHeadAttention(n=None, d_model=8, h=4, kv_heads=2, cross=True, mask=mask, causal=causal)
    given = {"key_padding": c["keep"], "additive": c["additive"], None: None}[mask]
    out = M.lambdify()(c["X"], c["W_Q"], c["W_K"], c["W_V"], c["W_O"], Y=c["Y"], mask=given)
    assert np.abs(out - want).max() < 1e-12


# ----- rank bounds of the variants ---------------------------------------------------------------------------------
def test_rank_bounds_of_the_variants_symbolically():
    cross = variant_rank_bounds(MultiHeadAttention(cross=True, kv_heads="g")).result["bounds"]
    assert cross["S_i"] == rank_bound(MultiHeadAttention(cross=True).steps["S_i"].expr).bound.func(d_k, n, n_kv)
    assert cross["[V_1 ... V_g]"] == Min(g * d_v, n_kv) and cross["[K_1 ... K_g]"] == Min(g * d_k, n_kv)
    assert cross["Concat"] == Min(d_model, n, 1 + h * n_kv - h)
    # self-attention keeps min(n, d_model): the row-stochastic rule never binds there (1 + h(n - 1) >= n)
    plain = variant_rank_bounds(MultiHeadAttention()).result["bounds"]
    assert plain["Concat"] == Min(d_model, n) == plain["[V_1 ... V_g]"]


@pytest.mark.parametrize("model,expected", [
    # Concat: 1 + h (n_kv - 1) = 5 < 7
    (MultiHeadAttention(n=7, d_model=8, h=4, kv_heads=2, n_kv=2), [2, 2, 2, 5, 5]),
    (MultiHeadAttention(n=6, d_model=8, h=4, kv_heads=1, n_kv=1), [1, 1, 1, 1, 1]),      # one key: every head is 1 V_1
    # value part g d_v = 4 < h d_v = 8
    (MultiHeadAttention(n=4, d_model=8, h=4, kv_heads=2), [2, 4, 4, 4, 4]),
    # bias stays in span(1)
    (MultiHeadAttention(n=5, d_model=4, h=2, n_kv=2, mask="additive", bias=True), [2, 2, 2, 3, 3]),
    (MultiHeadAttention(n=6, d_model=8, h=2, n_kv=3, causal=True, mask="key_padding"), [3, 3, 3, 5, 5]),
])
def test_rank_bounds_are_attained_by_certified_witnesses(model, expected):
    p = variant_rank_bounds(model)
    rows = p.result["rows"]
    assert [r.quantity for r in rows] == ["S_1", "[K_1 ... K_g]", "[V_1 ... V_g]", "Concat", "Output"]
    assert [r.bound for r in rows] == expected and [r.attained for r in rows] == expected
    assert p.verified and all(r.verdict == "tight" for r in rows)
    assert rows[0].certificate == "exact (FLINT)"
    assert rows[3].certificate.startswith("arb minor") or model.n_kv == 1  # one key: A = 1, exact
    last = p.result["traces"]["Concat"].trace[-1].rule
    assert (last == "row-stochastic") == (expected[3] < min(model.dims.n, model.dims.h * model.dims.d_v))


def test_row_stochastic_rule_needs_a_softmax():
    """Without the softmax (a plain product A V with A a free matrix) no 1 + h(c - 1) bound may be claimed."""
    from sympy import MatrixSymbol

    from mha_symbolic.concat import Concat
    A1, A2, V = MatrixSymbol("A1", 6, 2), MatrixSymbol("A2", 6, 2), MatrixSymbol("V", 2, 2)
    assert rank_bound(Concat(A1 * V, A2 * V)).bound == 4
    M = MultiHeadAttention(n=6, d_model=8, h=4, kv_heads=1, n_kv=1)
    assert rank_bound(M.steps["Concat"].expr, M.dims).bound == 1
    assert "row-stochastic" in {a.rule for a in rank_bound(M.steps["Concat"].expr, M.dims).trace}


def test_cli_ranks_of_a_variant(capsys):
    from mha_symbolic.cli import main

    assert main(["ranks", "--n", "7", "--d-model", "8", "--heads", "4", "--kv-heads", "2", "--n-kv", "2"]) == 0
    out = capsys.readouterr().out.splitlines()
    concat = next(line for line in out if line.startswith("Concat"))
    assert concat.split()[:4] == ["Concat", "5", "row-stochastic", "5"] and concat.endswith("tight")
    assert main(["ranks", "--n", "7", "--d-model", "8", "--heads", "4", "--kv-heads", "3"]) == 2
    assert "kv_heads g=3 must divide h=4" in capsys.readouterr().err
    assert main(["ranks", "--kv-heads", "2", "--n", "4"]) == 2
    assert "needs --n, --d-model and --heads together" in capsys.readouterr().err


def test_cost_statement_keeps_the_variant():
    """'The cost is shared by the heads' is true for multi-head attention and false with g fixed key/value heads:
    the parameters 2 d_model^2 + 2 g d_model^2 / h then depend on h (the statement is generalised to symbolic
    sizes with the variant kept)."""
    from mha_symbolic.statements.proofs import CostStatement

    assert CostStatement("parameters").decide(MultiHeadAttention(n=4, d_model=8, h=4)).verdict == "true"
    v = CostStatement("parameters").decide(MultiHeadAttention(n=4, d_model=8, h=4, kv_heads=2))
    assert v.verdict == "false" and v.expected == str(2 * d_model**2 + 4 * d_model**2 / h)
    cross = CostStatement("matmul_flops").decide(MultiHeadAttention(n=4, d_model=8, h=4, n_kv=3))
    assert cross.verdict == "true" and "n_kv" in str(parameter_and_flop_counts(MultiHeadAttention(
        cross=True)).result["matmul_flops"])


def test_softmax_doit_applies_the_key_padding_row():
    """(mutation testing: a ``doit`` that dropped ``keep`` survived)"""
    from mha_symbolic.softmax import Softmax

    A = Softmax(Matrix([[0, 0, 0]]), False, Matrix([[1, 0, 1]])).doit()
    assert A == Matrix([[Rational(1, 2), 0, Rational(1, 2)]])
    assert Softmax(Matrix([[0, 0], [0, 0]]), True, Matrix([[1, 1]])).doit() == Matrix([[1, 0], [Rational(1, 2),
                                                                                              Rational(1, 2)]])


def test_evaluation_errors_name_the_input():
    """(mutation testing: the names passed to the conversions were read by no test)"""
    M = MultiHeadAttention(n=2, d_model=4, h=2, bias=True)
    ok = {"X": [[1, 0, 0, 0], [0, 1, 0, 0]], "W_Q": [I4_2] * 2, "W_K": [I4_2] * 2, "W_V": [I4_2] * 2,
          "b_Q": [[0, 0]] * 2, "b_K": [[0, 0]] * 2, "b_V": [[0, 0]] * 2}
    with pytest.raises(InputError, match=r"^W_O entry \(0, 0\) is nan"):
        M.evaluate(**ok, W_O=[[float("nan")] * 4] * 4, b_O=[0] * 4)
    with pytest.raises(InputError, match=r"^b_O entry \(0, 1\) is inf"):
        M.evaluate(**ok, W_O=W_O4, b_O=[0, float("inf"), 0, 0])
    with pytest.raises(InputError, match=r"^S_1 entry \(0, 0\) is nan"):
        M.evaluate(**ok, W_O=W_O4, b_O=[0] * 4, given_steps={"S_1": [[float("nan"), 0], [0, 0]]})


def test_untightened_proof_says_why():
    assert variant_rank_bounds(MultiHeadAttention(cross=True)).steps[-1].text == (
        "Tightness not certified (symbolic sizes); the bounds are proven for every size.")
    assert variant_rank_bounds(MultiHeadAttention(n=2, d_model=4, h=2), certify=False).steps[-1].text.startswith(
        "Tightness not certified (not asked)")


def test_fused_cross_attention_without_grouping_writes_the_output_in_its_own_buffer():
    """With g = h, K is as wide as the output; in self-attention the fused code writes the output over K, in
    cross-attention K has n_kv rows and must not be reused."""
    rng = np.random.default_rng(7)
    X, Y = rng.normal(size=(3, 8)), rng.normal(size=(5, 8))
    W = {k: rng.normal(size=(4, 8, 2)) for k in ("W_Q", "W_K", "W_V")}
    W_O = rng.normal(size=(8, 8))
    M = MultiHeadAttention(n=None, d_model=8, h=4, n_kv=5)
    out = M.lambdify()(X, W["W_Q"], W["W_K"], W["W_V"], W_O, Y=Y)
    E = M.evaluate(X=X, Y=Y, **W, W_O=W_O)
    assert out.shape == (3, 8) and np.abs(out - E.numeric()).max() < 1e-12


def test_review_findings_symbolic_g_batches_and_ragged_masks():
    """A review of the variant code found these: a symbolic g must be read off W_K (as h is off W_Q), batch axes
    that do not broadcast and a ragged additive mask must be named errors, and a float64 mask must not turn
    float32 inputs into a float64 output."""
    rng = np.random.default_rng(11)
    X, Y = rng.normal(size=(3, 8)), rng.normal(size=(2, 8))
    W = {"W_Q": rng.normal(size=(4, 8, 2)), "W_K": rng.normal(size=(2, 8, 2)), "W_V": rng.normal(size=(2, 8, 2)),
         "W_O": rng.normal(size=(8, 8))}
    symbolic = MultiHeadAttention(kv_heads="g", cross=True, mask="additive")
    concrete = MultiHeadAttention(n=None, d_model=8, h=4, kv_heads=2, cross=True, mask="additive")
    M = np.array([[0, -np.inf], [0, 0], [-1, 0]])
    out = symbolic.lambdify()(X, Y=Y, mask=M, **W)
    assert np.abs(out - concrete.lambdify()(X, Y=Y, mask=M, **W)).max() == 0
    E = symbolic.evaluate(X=X, Y=Y, mask=M, **W)
    assert E.model == concrete.bind(n=3, n_kv=2) and np.abs(E.numeric() - out).max() < 1e-12
    with pytest.raises(DimensionError, match="g=3 key/value heads must divide h=4"):
        symbolic.lambdify()(X, Y=Y, mask=M, W_Q=W["W_Q"], W_K=rng.normal(size=(3, 8, 2)),
                            W_V=rng.normal(size=(3, 8, 2)), W_O=W["W_O"])
    kp = MultiHeadAttention(n=None, d_model=8, h=4, kv_heads=2, mask="key_padding")
    for steps in (False, True):
        with pytest.raises(ShapeError, match=r"leading \(batch\) axes do not broadcast together: X \(2,\), m \(3,\)"):
            kp.lambdify()(rng.normal(size=(2, 3, 8)), mask=np.ones((3, 3)), steps=steps, **W)
    f = MultiHeadAttention(n=None, d_model=8, h=4, kv_heads=2, mask="additive").lambdify()
    with pytest.raises(InputError, match="M .the additive mask. is ragged"):
        f(X, mask=[[0, 0], [0, 0, 0], [0]], **W)
    f32 = {k: v.astype(np.float32) for k, v in W.items()}
    assert concrete.lambdify()(X.astype(np.float32), Y=Y.astype(np.float32), mask=M, **f32).dtype == np.float32
