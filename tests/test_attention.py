from __future__ import annotations

import pytest
from sympy import MatrixSymbol, Symbol, latex, sqrt

from mha_symbolic import (
    Concat,
    ConcatHeads,
    DimensionError,
    Dims,
    HeadMatrix,
    InputError,
    MultiHeadAttention,
    Softmax,
    Step,
)
from mha_symbolic.dims import dimension_symbol

n, d_model, h, d_k, d_v = (dimension_symbol(s) for s in ("n", "d_model", "h", "d_k", "d_v"))

SYMBOLIC_SHAPES = {
    "Q_i": (n, d_k), "K_i": (n, d_k), "V_i": (n, d_v), "S_i": (n, n), "S'_i": (n, n), "A_i": (n, n),
    "head_i": (n, d_v), "Concat": (n, d_model), "Output": (n, d_model),
}


@pytest.mark.parametrize("convention", ["projection", "split"])
def test_symbolic_shapes(convention):
    M = MultiHeadAttention(convention=convention)
    shapes = {name: s.shape for name, s in M.steps.items()}
    if convention == "split":
        assert shapes.pop("X_head_i") == (n, d_k)
    assert shapes == SYMBOLIC_SHAPES
    assert all(s.conditions == () for s in M.steps.values())


def test_concat_shape_simplifies_only_through_the_relation():
    M = MultiHeadAttention()
    assert M.steps["Concat"].expr.shape == (n, h * d_v)  # raw
    assert M.steps["Concat"].shape == (n, d_model)  # derived with d_v = d_model/h
    M2 = MultiHeadAttention(d_k=Symbol("k", integer=True, positive=True))  # no relation: stays h*k
    k = Symbol("k", integer=True, positive=True)
    assert M2.steps["Concat"].shape == (n, h * k)


@pytest.mark.parametrize("convention, weight_rows", [("projection", 4), ("split", 2)])
def test_concrete_shapes_8_4_2(convention, weight_rows):
    M = MultiHeadAttention(n=8, d_model=4, h=2, convention=convention)
    expected = {"Q": (8, 2), "K": (8, 2), "V": (8, 2), "S": (8, 8), "S'": (8, 8), "A": (8, 8), "head": (8, 2)}
    for i in (1, 2):
        for base, shape in expected.items():
            assert M.steps[f"{base}_{i}"].shape == shape
        assert M.W("Q", i).shape == (weight_rows, 2)
    assert M.steps["Concat"].shape == (8, 4)
    assert M.steps["Output"].shape == (8, 4)
    assert M.W_O.shape == (4, 4)
    if convention == "split":
        assert M.steps["X_head2"].shape == (8, 2)
        assert M.steps["X_head2"].text == "X_head2 = X[:, 2:4]"


def test_step_definitions_and_expressions():
    M = MultiHeadAttention()
    X = M.X
    i = M.head_indices[0]
    WQ, WK, WV = (HeadMatrix(f"W_{c}", d_model, d_k if c != "V" else d_v, i) for c in "QKV")
    assert M.steps["Q_i"].expr == X * WQ
    assert M.steps["S_i"].definition == HeadMatrix("Q", n, d_k, i, "sub") * HeadMatrix("K", n, d_k, i, "sub").T
    assert M.steps["S'_i"].expr.doit() == (X * WQ * WK.T * X.T / sqrt(d_k)).doit()
    A = M.steps["A_i"].expr
    assert isinstance(A, Softmax) and not A.causal
    assert M.steps["head_i"].expr.doit() == (A * X * WV).doit()
    assert isinstance(M.steps["Concat"].definition, ConcatHeads)
    assert M.steps["Output"].expr == M.steps["Concat"].expr * M.W_O
    assert str(M.steps["Concat"]) == "Concat = Concat(head_1, ..., head_h)"


def test_concrete_concat_lists_every_head():
    M = MultiHeadAttention(h=3)
    concat = M.steps["Concat"].definition
    assert isinstance(concat, Concat) and len(concat.blocks) == 3
    assert M.steps["Concat"].shape == (n, d_model)


def test_causal_flag_reaches_softmax():
    M = MultiHeadAttention(causal=True)
    assert M.steps["A_i"].definition.causal
    assert latex(M.steps["A_i"]) == r"A_i = \mathrm{softmax}_{\mathrm{causal}}\left(S'_i\right)"


def test_every_public_object_rebuilds_from_args():
    objects = [Dims(), MultiHeadAttention(), MultiHeadAttention(n=8, d_model=4, h=2, convention="split", causal=True),
               MultiHeadAttention(d_k=3)]
    for M in list(objects[1:]):
        objects += list(M.steps.values())
        objects += [s.expr for s in M.steps.values()]
    objects.append(Concat(MatrixSymbol("a", 2, 2), MatrixSymbol("b", 2, 1)))
    from mha_symbolic.formulas import standard_formulas
    from mha_symbolic.heads import ModelMatrix
    from mha_symbolic.scaling import ScaledScores

    for f in standard_formulas(MultiHeadAttention()):
        objects += [o for o in (f, f.lhs, f.rhs, *f.rhs.args) if o.args]
    objects += [ScaledScores(MatrixSymbol("S", 3, 3), 2), ModelMatrix("W_O", 4, 4), HeadMatrix("W_Q", 4, 2, 1)]
    for obj in objects:
        assert obj.func(*obj.args) == obj, obj
    assert sum(isinstance(o, Step) for o in objects) == sum(len(M.steps) for M in objects[1:4])


@pytest.mark.parametrize(
    "kwargs, error, message",
    [
        pytest.param(dict(d_model=4, h=3), DimensionError, "h=3 does not divide d_model=4", id="h-not-dividing"),
        pytest.param(dict(d_model=0), DimensionError, "d_model must be a positive integer, got d_model=0", id="zero"),
        pytest.param(dict(n=-1), DimensionError, "n must be a positive integer, got n=-1", id="negative-n"),
        pytest.param(dict(convention="columns"), InputError, "convention must be one of", id="convention"),
        pytest.param(dict(d_model=6, h=4, d_k=2, convention="split"), InputError,
                     "split convention: h=4 does not divide d_model=6", id="split-needs-division"),
    ],
)
def test_bad_models(kwargs, error, message):
    with pytest.raises(error, match=message):
        MultiHeadAttention(**kwargs)


def test_bind_and_inputs():
    M = MultiHeadAttention().bind(n=2, d_model=4, h=2)
    assert M == MultiHeadAttention(n=2, d_model=4, h=2)
    inputs = M.inputs
    assert inputs["X"].shape == (2, 4) and [w.shape for w in inputs["W_V"]] == [(4, 2), (4, 2)]


def test_bias_steps_symbolic():
    M = MultiHeadAttention(bias=True)
    assert M.steps["Q_i"].text == "Q_i = X W_Q^i + 1 b_Q^i"
    assert M.steps["Output"].text == "Output = Concat W_O + 1 b_O"
    assert M.steps["V_i"].shape == (n, d_v) and M.steps["Output"].shape == (n, d_model)
    assert set(M.inputs) == {"X", "W_Q", "W_K", "W_V", "W_O", "b_Q", "b_K", "b_V", "b_O"}
    assert M.b("V", 1).shape == (1, d_v)
    assert M.func(*M.args) == M and M != MultiHeadAttention()


def test_scaled_scores_doit_deep_and_shallow():
    from sympy import MatMul, Rational, Transpose

    from mha_symbolic.scaling import ScaledScores

    Q, K = MatrixSymbol("Q", 3, 2), MatrixSymbol("K", 2, 3)
    scores = Transpose(MatMul(Q, K))
    # deep (the default) evaluates the scores too: (QK)^T = K^T Q^T; shallow keeps them as written
    assert ScaledScores(scores, 4).doit() == MatMul(Rational(1, 2), K.T, Q.T)
    assert ScaledScores(scores, 4).doit(deep=False) == MatMul(Rational(1, 2), scores)


def test_sizes_by_position_are_an_error_that_says_how_to_write_them():
    """torch's nn.MultiheadAttention(768, 12) means embed_dim=768, num_heads=12; ours would have meant n=768,
    d_model=12. Sizes are keyword-only, and the error shows the torch user's intent in our names."""
    with pytest.raises(InputError, match=r"for torch's nn.MultiheadAttention\(768, 12\) .* "
                                         r"MultiHeadAttention\(d_model=768, h=12\)"):
        MultiHeadAttention(768, 12)
    with pytest.raises(InputError, match=r"write MultiHeadAttention\(n=8, d_model=512, h=8\)"):
        MultiHeadAttention(8, 512, 8)
    M = MultiHeadAttention(d_model=768, h=12)
    assert (M.dims.n.is_Symbol, M.dims.d_model, M.dims.h, M.dims.d_k) == (True, 768, 12, 64)
    assert M.func(*M.args) == M and MultiHeadAttention(M.dims) == M
