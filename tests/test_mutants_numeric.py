"""Tests written against surviving mutants of mha_symbolic/numeric.py (issue 11).

They pin: the row-wise maximum of the stable softmax and its non-causal default, the finiteness
check on the whole output (with and without ``steps``) and its dtype hint, the silenced
floating-point warnings, ``lambdify_model``'s defaults, the entry-wise path (size limit, float64
output, batched X refused, biases validated, docstring redacted), and the exact messages naming
the offending argument and head.
"""

from __future__ import annotations

import inspect
import warnings

import numpy as np
import pytest
from sympy import MatrixSymbol

from mha_symbolic import InputError, MultiHeadAttention, ShapeError
from mha_symbolic.errors import SizeLimitError
from mha_symbolic.numeric import EntrywiseMHA, NumericMHA, _MatrixNumPyPrinter, lambdify_model, stable_softmax

# two tokens, d_model 3, one head; weights non-symmetric
_X = np.array([[1.0, 0.0, 2.0], [0.0, 1.0, 1.0]])
_W = np.array([[1.0, 0.0, 1.0], [0.0, 1.0, 0.0], [1.0, 1.0, 0.0]])
_WO = np.array([[1.0, 0.0, 0.0], [0.0, 2.0, 0.0], [1.0, 0.0, 1.0]])


# ----- stable_softmax --------------------------------------------------------------------------
def test_softmax_is_not_causal_by_default():
    got = stable_softmax(np.zeros((2, 4)))
    assert got.tolist() == [[0.25, 0.25, 0.25, 0.25], [0.25, 0.25, 0.25, 0.25]]


@pytest.mark.parametrize("overwrite", [False, True])
def test_softmax_subtracts_each_rows_own_maximum(overwrite):
    # the second row's entries are 1000 below the first row's maximum: a shared maximum would give 0/0
    x = np.array([[1000.0, 1000.0], [0.0, 0.0], [-1000.0, -1000.0]])
    got = stable_softmax(x, overwrite=overwrite)
    assert got.tolist() == [[0.5, 0.5], [0.5, 0.5], [0.5, 0.5]]


# ----- NumericMHA.__call__: the finiteness check -------------------------------------------------
def _one_head(**options):
    return MultiHeadAttention(n=None, d_model=3, h=1, **options).lambdify()


def test_nan_in_the_first_output_row_only_is_refused():
    # token 1's score overflows float32 (row 1 is NaN); token 2's row stays finite
    X = np.array([[1e20, 0.0, 0.0], [0.0, 1.0, 0.0]], dtype=np.float32)
    W = [np.eye(3, dtype=np.float32)]
    with np.errstate(all="ignore"):
        raw = _one_head()._compiled({}, False)[1].function(X, W[0], W[0], W[0], np.eye(3, dtype=np.float32))
    assert np.isnan(raw[0]).all() and np.isfinite(raw[1]).all()
    with pytest.raises(InputError) as e:
        _one_head()(X, W, W, W, np.eye(3, dtype=np.float32))
    assert str(e.value) == ("the output is not finite: the scores overflowed the float32 range; rescale X or the "
                            "weights, or use float64")


def test_steps_true_checks_the_output_not_another_step():
    # Concat and K_1 are finite; only Output = Concat W_O overflows float32
    X = _X.astype(np.float32)
    W = [_W.astype(np.float32)]
    WO = np.full((3, 3), 3e38, dtype=np.float32)
    with pytest.raises(InputError) as e:
        _one_head()(X, W, W, W, WO, steps=True)
    assert str(e.value) == ("the output is not finite: the scores overflowed the float32 range; rescale X or the "
                            "weights, or use float64")
    out, steps = _one_head()(X, W, W, W, np.eye(3, dtype=np.float32), steps=True)
    assert list(steps) == ["Q_1", "K_1", "V_1", "S_1", "S'_1", "A_1", "head_1", "Concat", "Output"]
    assert steps["Output"] is out and out.shape == (2, 3)


def test_float64_overflow_message_has_no_dtype_hint():
    X = np.array([[1e200, 0.0, 0.0], [0.0, 1.0, 0.0]])
    W = [np.eye(3)]
    with pytest.raises(InputError) as e:
        _one_head()(X, W, W, W, np.eye(3))
    assert str(e.value) == "the output is not finite: the scores overflowed the float64 range; rescale X or the weights"


def test_overflow_raises_the_package_error_without_numpy_warnings():
    # scale 4: the multiply overflows (numpy 'over') and inf - inf in the softmax is 'invalid'
    X = np.array([[1e19, 0.0, 0.0], [0.0, 1.0, 0.0]], dtype=np.float32)
    W = [np.eye(3, dtype=np.float32)]
    f = _one_head(scale=4)
    with warnings.catch_warnings(), np.errstate(all="warn"):
        warnings.simplefilter("error")
        with pytest.raises(InputError, match="overflowed the float32 range"):
            f(X, W, W, W, np.eye(3, dtype=np.float32))


# ----- lambdify_model and the entry-wise path ----------------------------------------------------
def test_lambdify_model_defaults_to_numpy_matrix_level():
    M = MultiHeadAttention(n=2, d_model=3, h=1)
    f = lambdify_model(M)
    assert type(f) is NumericMHA and f.model == M
    np.testing.assert_allclose(f(_X, [_W], [_W], [_W], _WO), M.lambdify(entrywise=True)(_X, [_W], [_W], [_W], _WO),
                               rtol=1e-13)


def test_entrywise_honours_max_terms():
    M = MultiHeadAttention(n=2, d_model=2, h=2)  # symbolic entries: 2^3 * 2 * 1 * 3 * 2 * 1 = 96 terms
    assert EntrywiseMHA(M, max_terms=96).expr.shape == (2, 2)
    with pytest.raises(SizeLimitError) as e:
        EntrywiseMHA(M, max_terms=95)
    assert str(e.value) == ("exact evaluation of n=2, d_model=2, h=2 would build about 96 terms (limit 95); "
                            "use numeric evaluation instead, or pass max_terms=96 to insist")


def test_entrywise_returns_float64_for_float32_inputs():
    # d_k = 1: the scale is 1, so nothing in the expression promotes float32 by itself
    M = MultiHeadAttention(n=2, d_model=2, h=2)
    X = np.array([[1.0, 0.5], [0.25, 1.0]], dtype=np.float32)
    W = [np.array([[1.0], [2.0]], dtype=np.float32), np.array([[3.0], [1.0]], dtype=np.float32)]
    WO = np.array([[1.0, 2.0], [0.0, 1.0]], dtype=np.float32)
    got = M.lambdify(entrywise=True)(X, W, W, W, WO)
    assert got.dtype == np.float64
    want = M.evaluate(X=X.tolist(), W_Q=[w.tolist() for w in W], W_K=[w.tolist() for w in W],
                      W_V=[w.tolist() for w in W], W_O=WO.tolist()).numeric()
    np.testing.assert_allclose(got, want, rtol=1e-6)


def test_entrywise_refuses_a_batch():
    e = MultiHeadAttention(n=2, d_model=3, h=1).lambdify(entrywise=True)
    with pytest.raises(InputError) as err:
        e(np.stack([_X, _X]), [_W], [_W], [_W], _WO)
    assert str(err.value) == "the entry-wise function takes one X of shape (n, d_model); use lambdify() to batch"


def test_entrywise_validates_the_biases_it_is_given():
    e = MultiHeadAttention(n=2, d_model=3, h=1, bias=True).lambdify(entrywise=True)
    with pytest.raises(ShapeError) as err:
        e(_X, [_W], [_W], [_W], _WO, b_Q=[[1.0, 2.0]], b_K=[[0.0, 1.0, 0.0]], b_V=[[0.0, 0.0, 1.0]],
          b_O=[1.0, 2.0, 3.0])
    assert str(err.value) == "b_Q[1] has shape (2,); expected (3,)"


def test_entrywise_docstring_is_redacted():
    e = EntrywiseMHA(MultiHeadAttention(n=1, d_model=1, h=1))  # a small expression: lambdify would print it by default
    assert "func(X, W_Q_1, W_K_1, W_V_1, W_O)" in e.function.__doc__
    assert "EXPRESSION REDACTED DUE TO LENGTH" in e.function.__doc__


# ----- the printer ------------------------------------------------------------------------------
def test_printer_refuses_row_slices():
    X = MatrixSymbol("X", 3, 4)
    assert _MatrixNumPyPrinter().doprint(X[:, 1:3]) == "X[..., 1:3:1]"
    with pytest.raises(InputError) as e:
        _MatrixNumPyPrinter().doprint(X[0:2, :])
    assert str(e.value) == "numeric code slices columns only"


# ----- validation messages ----------------------------------------------------------------------
_M2 = MultiHeadAttention(n=None, d_model=4, h=2, d_k=2, d_v=1, bias=True)
_F2 = _M2.lambdify()
_WQ2 = [np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0], [0.0, 2.0]]),
        np.array([[0.0, 1.0], [1.0, 0.0], [2.0, 0.0], [1.0, 1.0]])]
_WV2 = [np.array([[1.0], [0.0], [2.0], [1.0]]), np.array([[0.0], [3.0], [1.0], [1.0]])]
_X2 = np.array([[1.0, 0.0, 2.0, 1.0], [0.0, 1.0, 1.0, 3.0], [2.0, 1.0, 0.0, 0.0]])
_WO2 = np.array([[1.0, 0.0, 2.0, 0.0], [0.0, 1.0, 0.0, 3.0]])
_B = {"b_Q": [np.array([1.0, 0.0]), np.array([0.0, 2.0])], "b_K": [np.array([0.0, 1.0]), np.array([3.0, 0.0])],
      "b_V": [np.array([1.0]), np.array([2.0])], "b_O": np.array([1.0, 0.0, 0.0, 2.0])}


def _call(**changes):
    args = {"X": _X2, "W_Q": _WQ2, "W_K": _WQ2, "W_V": _WV2, "W_O": _WO2, **_B, **changes}
    return _F2(**args)


def test_valid_call_with_biases_matches_exact_evaluation():
    out = _call()
    lists = {k: [a.tolist() for a in v] if isinstance(v, list) else v.tolist() for k, v in _B.items()}
    exact = _M2.evaluate(X=_X2.tolist(), W_Q=[w.tolist() for w in _WQ2], W_K=[w.tolist() for w in _WQ2],
                         W_V=[w.tolist() for w in _WV2], W_O=_WO2.tolist(), **lists)
    assert out.shape == (3, 4)
    np.testing.assert_allclose(out, exact.numeric(), rtol=1e-12)


@pytest.mark.parametrize("changes, error, message", [
    ({"W_K": [_WQ2[0], np.array([[1.0, np.nan], [0.0, 1.0], [1.0, 1.0], [0.0, 2.0]])]}, InputError,
     "W_K[2] contains NaN or inf (first at index (0, 1))"),
    ({"W_Q": [_WQ2[0], [[1.0, 0.0], [1.0]]]}, InputError, "W_Q[2] is ragged: its rows have different lengths"),
    ({"W_K": [_WQ2[0], np.array([1.0, 2.0, 3.0])]}, InputError, "W_K[2] must be a matrix, got shape (3,)"),
    ({"b_V": [np.array([1.0]), np.array([[2.0]])]}, InputError, "b_V[2] must be a vector, got shape (1, 1)"),
    ({"b_Q": np.zeros((2, 2, 1))}, InputError,
     "b_Q must be a list of per-head arrays or one array of shape (h, width); got shape (2, 2, 1)"),
    ({"b_O": None}, InputError, "b_O is missing: the model has biases (bias=True)"),
    ({"b_K": [np.array([0.0, 1.0]), np.array([3.0, 0.0]), np.array([1.0, 1.0])]}, InputError,
     "b_K: expected h=2 per-head arrays, got 3"),
    ({"b_K": [np.array([0.0, 1.0]), np.array([3.0, 0.0, 1.0])]}, ShapeError, "b_K[2] has shape (3,); expected (2,)"),
    ({"b_O": np.zeros((4, 1, 1))}, ShapeError, "b_O has shape (4, 1, 1); expected (4,)"),
    ({"W_O": np.array(2.0)}, ShapeError, "W_O has shape (); expected (2, 4)"),
    ({"W_O": np.zeros((2, 3))}, ShapeError, "W_O has shape (2, 3); expected (2, 4)"),
])
def test_validation_messages_name_argument_and_head(changes, error, message):
    with pytest.raises(error) as e:
        _call(**changes)
    assert type(e.value) is error
    assert str(e.value) == message


def test_one_row_weight_is_shown_as_a_matrix_shape():
    # d_model = 1: W_Q^1 is 1 x 2, a matrix of one row, not a bias vector
    f = MultiHeadAttention(n=None, d_model=1, h=1, d_k=2, d_v=3).lambdify()
    X = np.array([[1.0], [2.0]])
    good = np.array([[1.0, 2.0]])
    with pytest.raises(ShapeError) as e:
        f(X, [good], [np.array([[1.0, 2.0], [0.0, 1.0]])], [np.array([[1.0, 0.0, 2.0]])], np.ones((3, 1)))
    assert str(e.value) == "W_K[1] has shape (2, 2); expected (1, 2)"


# ----- the generated code -----------------------------------------------------------------------
def _code(source):
    """The source's statements: comments, docstring and blank lines dropped."""
    lines = [line.split("  #")[0].rstrip() for line in source.splitlines()]
    return [line for line in lines if line.strip() and not line.strip().startswith(("#", '"', "'"))]


def test_step_wise_source_computes_every_step_once_and_returns_them_all():
    f = MultiHeadAttention(n=None, d_model=4, h=2, d_v=3, convention="split").lambdify()
    src = inspect.getsource(f._compiled({}, True)[1].function)
    assert src.strip().splitlines() == [
        "def _lambdifygenerated(X, W_Q_1, W_Q_2, W_K_1, W_K_2, W_V_1, W_V_2, W_O):",
        "    X_head1 = X[..., 0:2:1]",
        "    Q_1 = matmul(X_head1, W_Q_1)",
        "    K_1 = matmul(X_head1, W_K_1)",
        "    V_1 = matmul(X_head1, W_V_1)",
        "    S_1 = matmul(Q_1, swapaxes(K_1, -1, -2))",
        "    S_scaled_1 = 0.7071067811865476 * S_1",
        "    A_1 = _stable_softmax(S_scaled_1, False)",
        "    head_1 = matmul(A_1, V_1)",
        "    X_head2 = X[..., 2:4:1]",
        "    Q_2 = matmul(X_head2, W_Q_2)",
        "    K_2 = matmul(X_head2, W_K_2)",
        "    V_2 = matmul(X_head2, W_V_2)",
        "    S_2 = matmul(Q_2, swapaxes(K_2, -1, -2))",
        "    S_scaled_2 = 0.7071067811865476 * S_2",
        "    A_2 = _stable_softmax(S_scaled_2, False)",
        "    head_2 = matmul(A_2, V_2)",
        "    Concat = concatenate([head_1, head_2], axis=-1)",
        "    Output = matmul(Concat, W_O)",
        "    return [X_head1, Q_1, K_1, V_1, S_1, S_scaled_1, A_1, head_1, X_head2, Q_2, K_2, V_2, S_2, S_scaled_2, "
        "A_2, head_2, Concat, Output]",
    ]


def test_generated_source_with_a_scale_of_two():
    f = MultiHeadAttention(n=None, d_model=3, h=1, causal=True, scale=2).lambdify()
    fused = "\n".join(_code(f.source))
    # the scale 2 times log2(e) (the softmax takes exp2), and the causal term in the same units
    assert "W *= 2.8853900817779268" in fused
    assert "T = _log2_units(_causal_term(X.shape[-2], KV.shape[-2], dtype))" in fused
    assert "add(S, T, out=S)" in fused
    stepwise = inspect.getsource(f._compiled({}, True)[1].function).splitlines()
    assert "    S_scaled_1 = 2.0 * S_1" in stepwise
    assert "    A_1 = _stable_softmax(S_scaled_1, True)" in stepwise


def test_scale_two_values_match_exact_evaluation():
    M = MultiHeadAttention(n=2, d_model=3, h=1, scale=2)
    Wk = np.array([[0.0, 1.0, 0.0], [1.0, 0.0, 1.0], [0.0, 0.0, 1.0]])
    got = M.lambdify()(_X, [_W], [Wk], [_W], _WO)
    exact = M.evaluate(X=_X.tolist(), W_Q=[_W.tolist()], W_K=[Wk.tolist()], W_V=[_W.tolist()], W_O=_WO.tolist())
    np.testing.assert_allclose(got, exact.numeric(), rtol=1e-13)
    # scale 1 for comparison: a different answer
    assert not np.allclose(got, MultiHeadAttention(n=2, d_model=3, h=1, scale=1).lambdify()(_X, [_W], [Wk], [_W], _WO))


def test_compiled_function_docstring_is_redacted():
    f = MultiHeadAttention(n=None, d_model=1, h=1).lambdify()
    doc = f._compiled({}, True)[1].function.__doc__  # the step-wise function is lambdify's
    assert "func(X, W_Q_1, W_K_1, W_V_1, W_O)" in doc and "EXPRESSION REDACTED DUE TO LENGTH" in doc


# ----- X, integer inputs and more validation messages ---------------------------------------------
def test_one_token_as_a_vector():
    f = MultiHeadAttention(n=None, d_model=3, h=1).lambdify()
    one = f(np.array([1.0, 0.0, 2.0]), [_W], [_W], [_W], _WO)
    assert one.shape == (1, 3)
    assert one.tolist() == f(np.array([[1.0, 0.0, 2.0]]), [_W], [_W], [_W], _WO).tolist()
    np.testing.assert_allclose(one, [[4.0, 4.0, 1.0]], rtol=1e-15)  # one token: head = X W_V = [3, 2, 1]


def test_integer_inputs_are_computed_in_float64():
    M = MultiHeadAttention(n=2, d_model=3, h=1, scale=1)
    X, W, WO = [[1, 0, 2], [0, 1, 1]], [[[1, 0, 1], [0, 1, 0], [1, 1, 0]]], [[1, 0, 0], [0, 2, 0], [1, 0, 1]]
    got = M.lambdify()(X, W, W, W, WO)
    assert got.dtype == np.float64
    np.testing.assert_allclose(got, M.evaluate(X=X, W_Q=W, W_K=W, W_V=W, W_O=WO).numeric(), rtol=1e-13)


@pytest.mark.parametrize("changes, message", [
    ({"X": np.array(3.0)}, "X must have shape (..., n, d_model), got ()"),
    ({"X": np.array([[1.0, 0.0, 2.0, 1.0], [0.0, 1.0, 1.0, np.inf], [2.0, 1.0, 0.0, 0.0]])},
     "X contains NaN or inf (first at index (1, 3))"),
    ({"W_O": np.array([[1.0, 0.0, 2.0, 0.0], [0.0, np.nan, 0.0, 3.0]])},
     "W_O contains NaN or inf (first at index (1, 1))"),
    ({"b_O": np.array([1.0, 0.0, np.nan, 2.0])}, "b_O contains NaN or inf (first at index (2,))"),
    ({"b_V": [np.array([1.0]), np.array([np.inf])]}, "b_V[2] contains NaN or inf (first at index (0,))"),
    ({"b_Q": None}, "b_Q is missing: the model has biases (bias=True)"),
    ({"b_V": None}, "b_V is missing: the model has biases (bias=True)"),
])
def test_more_validation_messages(changes, message):
    with pytest.raises(InputError) as e:
        _call(**changes)
    assert str(e.value) == message


def test_biases_given_to_a_model_without_biases():
    f = MultiHeadAttention(n=None, d_model=4, h=2, d_k=2, d_v=1).lambdify()
    args = {"X": _X2, "W_Q": _WQ2, "W_K": _WQ2, "W_V": _WV2, "W_O": _WO2}
    with pytest.raises(InputError) as e:
        f(**args, **_B)
    assert str(e.value) == "b_Q, b_K, b_V, b_O given, but the model has no biases; build it with bias=True"
    for key in ("b_Q", "b_K", "b_V"):
        with pytest.raises(InputError) as e:
            f(**args, **{key: _B[key]})
        assert str(e.value) == f"{key} given, but the model has no biases; build it with bias=True"


# ----- compiling for the sizes of the arrays -----------------------------------------------------
def test_source_of_a_model_with_symbolic_widths_is_refused():
    from mha_symbolic.errors import DimensionError

    with pytest.raises(DimensionError) as e:
        MultiHeadAttention(n=None, d_model=None, h=2).lambdify().source  # noqa: B018
    assert str(e.value) == "cannot compile with symbolic ['d_model', 'd_k', 'd_v']; pass X and the weights"


def test_one_function_serves_several_sizes_and_step_modes():
    f = MultiHeadAttention().lambdify()  # every size symbolic: compiled per (d_model, h, d_k, d_v, steps)
    small = f(_X, [_W], [_W], [_W], _WO)
    wide = _call_plain(f)
    out, steps = f(_X, [_W], [_W], [_W], _WO, steps=True)
    again = f(_X, [_W], [_W], [_W], _WO)
    M3 = MultiHeadAttention(n=2, d_model=3, h=1)
    exact = M3.evaluate(X=_X.tolist(), W_Q=[_W.tolist()], W_K=[_W.tolist()], W_V=[_W.tolist()], W_O=_WO.tolist())
    np.testing.assert_allclose(small, exact.numeric(), rtol=1e-13)
    assert again.tolist() == small.tolist()
    np.testing.assert_allclose(out, small, rtol=1e-13)  # the step-wise and the fused function
    assert list(steps)[-1] == "Output" and steps["A_1"].shape == (2, 2)
    M4 = MultiHeadAttention(n=3, d_model=4, h=2)
    exact4 = M4.evaluate(X=_X2.tolist(), W_Q=[w.tolist() for w in _WQ2], W_K=[w.tolist() for w in _WQ2],
                         W_V=[w[:, ::-1].tolist() for w in _WQ2], W_O=_WO4.tolist())
    assert wide.shape == (3, 4)
    np.testing.assert_allclose(wide, exact4.numeric(), rtol=1e-13)


_WO4 = np.array([[1.0, 0.0, 2.0, 0.0], [0.0, 1.0, 0.0, 3.0], [2.0, 0.0, 0.0, 1.0], [0.0, 0.0, 1.0, 1.0]])


def _call_plain(f):
    return f(_X2, _WQ2, _WQ2, [w[:, ::-1] for w in _WQ2], _WO4)
