from __future__ import annotations

import numpy as np
import pytest
from sympy import Eq, Integer, Symbol

from mha_symbolic import DimensionError, Dims
from mha_symbolic.dims import dimension_symbol


def test_symbolic_defaults_and_relations():
    D = Dims()
    n, dm, h, dk, dv = (dimension_symbol(s) for s in ("n", "d_model", "h", "d_k", "d_v"))
    assert D.args[:5] == (n, dm, h, dk, dv)
    assert D.relations == (Eq(dk, dm / h), Eq(dv, dm / h))
    assert all(x.is_integer and x.is_positive for x in D.args[:5])


def test_concrete_quotient():
    D = Dims(8, 512, 8)
    assert (D.d_k, D.d_v) == (64, 64)
    assert D.relations == ()
    assert D.is_concrete


def test_explicit_d_k_sets_d_v():
    D = Dims(4, 8, 2, d_k=3)
    assert (D.d_k, D.d_v) == (3, 3)
    assert Dims(4, 8, 2, d_k=3, d_v=5).d_v == 5


def test_simplify_uses_relations():
    D = Dims()
    assert D.simplify(D.h * D.d_v) == D.d_model
    assert D.simplify(D.h * D.d_k) == D.d_model
    i = Symbol("i", integer=True)
    assert D.simplify(i * D.d_k - (i - 1) * D.d_k) == D.d_k
    D2 = Dims(h=2)
    assert D2.simplify(2 * D2.d_v) == D2.d_model


def test_equal_proves_refutes_or_returns_condition():
    D = Dims()
    assert D.equal(D.h * D.d_k, D.d_model) is True
    assert D.equal(3, 4) is False
    assert D.equal(D.n, D.d_k) == Eq(D.n, D.d_k)


@pytest.mark.parametrize(
    "kwargs, message",
    [
        pytest.param(dict(d_model=4, h=3), "h=3 does not divide d_model=4", id="h-not-dividing"),
        pytest.param(dict(d_model=0, h=1), "d_model must be a positive integer, got d_model=0", id="zero"),
        pytest.param(dict(n=-1), "n must be a positive integer, got n=-1", id="negative"),
        pytest.param(dict(n=2.5), "n must be a positive integer, got 2.5 (float)", id="float"),
        pytest.param(dict(n=True), "n must be a positive integer or a symbol, got the bool True", id="bool"),
        pytest.param(dict(h="2x"), "h must be a positive integer or a symbol name, got '2x'", id="bad-name"),
        pytest.param(dict(n=Symbol("m", negative=True)), "declared non-positive", id="negative-symbol"),
        pytest.param(dict(d_k=0), "d_k must be a positive integer, got d_k=0", id="zero-d_k"),
    ],
)
def test_bad_dimensions(kwargs, message):
    with pytest.raises(DimensionError, match=message.replace("(", r"\(").replace(")", r"\)")):
        Dims(**kwargs)


def test_numpy_integers_accepted():
    D = Dims(np.int64(2), np.int32(4), Integer(2))
    assert D.args[:3] == (2, 4, 2)


def test_bind_reapplies_relations():
    D = Dims().bind(n=2, d_model=4, h=2)
    assert D.args[:5] == (2, 4, 2, 2, 2)
    with pytest.raises(DimensionError, match="h=3 does not divide d_model=4"):
        Dims().bind(d_model=4, h=3)
    with pytest.raises(DimensionError, match="n is 3 in the model but 5 in the input"):
        Dims(n=3).bind(n=5)


def test_func_args_roundtrip():
    for D in (Dims(), Dims(2, 4, 2), Dims(h=2), Dims(d_k=3)):
        assert D.func(*D.args) == D
