"""Weights in PyTorch's ``nn.MultiheadAttention`` layout, imported without importing torch.

Explanation
===========

PyTorch computes ``q = x W_q^T + b_q`` with ``in_proj_weight = [W_q; W_k; W_v]``
(``3E x E``) and then splits ``q`` into ``h`` heads of width ``d_k = E / h`` along its
columns; the output is ``concat W_out^T + b_out``.  In our layout (``X W``) head ``i``'s
weight is therefore ``W_Q^i = W_q[(i-1) d_k : i d_k, :]^T`` (``E x d_k``), its bias
``b_Q^i = b_q[(i-1) d_k : i d_k]``, and ``W_O = W_out^T``, ``b_O = b_out``.

Examples
========

>>> import numpy as np
>>> from mha_symbolic import from_pytorch
>>> E, h = 4, 2
>>> rng = np.random.default_rng(0)
>>> mha = from_pytorch(rng.normal(size=(3 * E, E)), np.zeros(3 * E), rng.normal(size=(E, E)), None, h)
>>> mha.model
MultiHeadAttention(n=n, d_model=4, h=2, d_k=2, d_v=2, convention='projection', bias=True)
>>> mha.weights["W_Q"].shape, mha.weights["b_O"].tolist()
((2, 4, 2), [0.0, 0.0, 0.0, 0.0])
>>> mha(np.ones((3, 5, E))).shape
(3, 5, 4)
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .attention import MultiHeadAttention
from .errors import InputError
from .numeric import NumericMHA

__all__ = ["from_pytorch", "PyTorchMHA"]


class PyTorchMHA:
    """A model with weights imported from PyTorch; call it as ``mha(X, causal=False)``.

    Attributes
    ==========

    model : the (non-causal) :class:`MultiHeadAttention`, with biases
    weights : dict of NumPy arrays in our layout: ``W_Q``, ``W_K``, ``W_V`` (``h x E x d_k``),
        ``W_O`` (``E x E``), ``b_Q``, ``b_K``, ``b_V`` (``h x d_k``), ``b_O`` (``E``)
    """

    def __init__(self, model: MultiHeadAttention, weights: dict[str, np.ndarray]):
        self.model = model
        self.weights = weights
        self._functions: dict[bool, NumericMHA] = {}

    def __call__(self, X: Any, causal: bool = False) -> np.ndarray:
        if not isinstance(causal, bool):
            raise InputError(f"causal must be True or False, got {causal!r}")
        X = _numpy(X, "X")
        if causal not in self._functions:
            model = self.model.func(self.model.dims, self.model.convention, causal, True)
            self._functions[causal] = NumericMHA(model)
        w = self.weights
        return self._functions[causal](X, w["W_Q"], w["W_K"], w["W_V"], w["W_O"], b_Q=w["b_Q"], b_K=w["b_K"],
                                       b_V=w["b_V"], b_O=w["b_O"])

    def __repr__(self) -> str:
        return f"PyTorchMHA({self.model})"


def _numpy(value: Any, name: str = "the array") -> np.ndarray:
    """A NumPy array from an array or a torch tensor (detached; torch is never imported here)."""
    if hasattr(value, "detach") and hasattr(value, "cpu"):
        value = value.detach().cpu().numpy()
    if isinstance(value, (str, bytes)):
        raise InputError(f"{name} must be an array of numbers, got a {type(value).__name__}")
    try:
        return np.asarray(value)
    except (ValueError, TypeError):
        raise InputError(f"{name} is ragged: its rows have different lengths") from None


def _matrix(name: str, value: Any, shape: tuple[int, ...]) -> np.ndarray:
    arr = _numpy(value, name)
    if arr.dtype.kind not in "iuf":
        raise InputError(f"{name} has dtype {arr.dtype}; expected real numbers")
    if arr.shape != shape:
        raise InputError(f"{name} has shape {arr.shape}; expected {shape}")
    if not np.isfinite(arr).all():
        raise InputError(f"{name} contains NaN or inf")
    return arr if arr.dtype.kind == "f" else arr.astype(np.float64)


def from_pytorch(in_proj_weight: Any, in_proj_bias: Any, out_proj_weight: Any, out_proj_bias: Any,
                 num_heads: int) -> PyTorchMHA:
    """Import ``nn.MultiheadAttention(embed_dim, num_heads, batch_first=True)`` weights.

    Parameters
    ==========

    in_proj_weight : array ``(3E, E)``; in_proj_bias : array ``(3E,)`` or None
    out_proj_weight : array ``(E, E)``; out_proj_bias : array ``(E,)`` or None
    num_heads : h, which must divide ``E``

    A missing bias is imported as zeros, so the model always has biases.
    """
    W_in = _numpy(in_proj_weight, "in_proj_weight")
    if W_in.ndim != 2 or W_in.shape[0] != 3 * W_in.shape[1]:
        raise InputError(f"in_proj_weight must have shape (3E, E); got {W_in.shape}")
    E = W_in.shape[1]
    if isinstance(num_heads, bool) or not isinstance(num_heads, (int, np.integer)) or num_heads <= 0:
        raise InputError(f"num_heads must be a positive integer, got {num_heads!r}")
    model = MultiHeadAttention(None, E, int(num_heads), bias=True)  # DimensionError if h does not divide E
    h, dk = int(num_heads), E // int(num_heads)
    W_in = _matrix("in_proj_weight", W_in, (3 * E, E))
    dtype = W_in.dtype
    b_in = (np.zeros(3 * E, dtype) if in_proj_bias is None else _matrix("in_proj_bias", in_proj_bias, (3 * E,)))
    W_out = _matrix("out_proj_weight", out_proj_weight, (E, E))
    b_out = np.zeros(E, dtype) if out_proj_bias is None else _matrix("out_proj_bias", out_proj_bias, (E,))

    weights: dict[str, np.ndarray] = {}
    for part, kind in enumerate("QKV"):
        W = W_in[part * E:(part + 1) * E]  # (E, E): rows are output features
        b = b_in[part * E:(part + 1) * E]
        weights[f"W_{kind}"] = np.ascontiguousarray(W.reshape(h, dk, E).transpose(0, 2, 1))  # (h, E, d_k)
        weights[f"b_{kind}"] = np.ascontiguousarray(b.reshape(h, dk))
    weights["W_O"] = np.ascontiguousarray(W_out.T)
    weights["b_O"] = b_out
    return PyTorchMHA(model, weights)
