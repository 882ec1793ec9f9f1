"""Tests written against surviving mutants of the non-finite checks of commit 2f672dd (numeric.py:
``_max_row_norms`` as the fused code's check of Q and K, and ``NumericMHA.__call__``'s ``_NotFinite`` branch).

They pin: an infinite (not NaN) query or key is found (``np.isfinite``, not ``np.isnan``); one non-finite head
among finite ones is found (every head's maximum, ``.all()``); a key that overflows to +inf is the overflow error
even where the softmax would give it weight 0 and the output stays finite; the overflow error replaces the
internal ``_NotFinite`` without chaining it (``from None``).
"""

from __future__ import annotations

import numpy as np
import pytest

from mha_symbolic import InputError, MultiHeadAttention
from mha_symbolic.numeric import _max_row_norms, _NotFinite

_OVERFLOW32 = ("the output is not finite: the scores overflowed the float32 range; rescale X or the weights, "
               "or use float64")


# ----- _max_row_norms: the check of the queries and keys ----------------------------------------------------
@pytest.mark.parametrize("bad", [np.inf, -np.inf])
def test_an_infinite_query_without_nan_is_not_finite(bad):
    with pytest.raises(_NotFinite) as e:
        _max_row_norms(np.array([[[bad, 0.0]]], np.float32))
    assert str(e.value) == "the queries or keys contain NaN or inf"
    assert e.value.dtype == np.float32


@pytest.mark.parametrize("bad", [np.nan, np.inf])
def test_one_non_finite_head_among_finite_heads_is_not_finite(bad):
    # (rows 2, heads 2, width 2): head 1 finite, head 2 holds the bad entry in its second row
    A = np.array([[[3.0, 4.0], [1.0, 0.0]], [[0.0, 1.0], [bad, 2.0]]])
    with pytest.raises(_NotFinite, match="^the queries or keys contain NaN or inf$"):
        _max_row_norms(A)
    A[1, 1, 0] = 0.0
    assert _max_row_norms(A) == [5.0, 2.0]


# ----- NumericMHA: a key that overflows to +inf although the output would be finite --------------------------
def _key_overflow_args(h: int) -> dict[str, np.ndarray]:
    """Finite float32 inputs (d_k = 1) whose first key of head 1 is 3e38 + 3e38 = +inf while every query of
    head 1 is negative: that score is -inf, its softmax weight 0, the values finite -- so the output would be finite;
    only the check of K finds the overflow.  Head 2 (if any) is harmless."""
    f32 = np.float32
    W_Q = np.array([[[-1e-30], [-1e-30]], [[1.0], [0.0]]], f32)[:h]
    W_K = np.array([[[3e38], [3e38]], [[0.0], [1.0]]], f32)[:h]
    W_V = np.array([[[1.0], [0.0]], [[0.0], [1.0]]], f32)[:h]
    return {"X": np.array([[1.0, 1.0], [0.0, 1.0]], f32), "W_Q": W_Q, "W_K": W_K, "W_V": W_V,
            "W_O": np.eye(h, 2, dtype=f32)}


@pytest.mark.parametrize("h", [1, 2])
def test_a_key_overflowing_to_inf_is_the_overflow_error_even_when_the_output_would_be_finite(h):
    f = MultiHeadAttention(n=None, d_model=2, h=h, d_k=1, d_v=1).lambdify()
    args = _key_overflow_args(h)
    with pytest.raises(InputError) as e:
        f(**args)
    assert str(e.value) == _OVERFLOW32
    # the same numbers in float64: no overflow, a finite result
    out = f(**{k: v.astype(np.float64) for k, v in args.items()})
    assert out.shape == (2, 2) and np.isfinite(out).all()


# ----- NumericMHA.__call__: the overflow error replaces _NotFinite ------------------------------------------
def test_the_overflow_error_from_the_fused_check_does_not_chain_the_internal_error():
    big = np.finfo(np.float32).max
    one = np.ones((1, 1, 1), np.float32)
    f = MultiHeadAttention(n=None, d_model=1, h=1).lambdify()
    with pytest.raises(InputError) as e:
        f(np.ones((2, 1), np.float32), big * one, one, one, np.ones((1, 1), np.float32))
    assert str(e.value) == ("the output is not finite: the scores overflowed the float32 range; rescale X or the "
                            "weights, or use float64")
    assert type(e.value) is InputError
    assert e.value.__cause__ is None and e.value.__suppress_context__ is True
