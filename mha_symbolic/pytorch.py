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

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import numpy as np

from .attention import MultiHeadAttention
from .errors import InputError, require
from .numeric import NumericMHA, _overflow, stable_softmax

if TYPE_CHECKING:
    from .weights import LayerWeights

__all__ = ["from_pytorch", "PyTorchMHA", "from_layer"]


#: the most scores the masked forward pass holds at once (queries are taken in chunks of rows): its peak memory
#: stays near the plain path's whatever the batch and sequence length
CHUNK_ENTRIES = 1 << 21

class PyTorchMHA:
    """A model with weights imported from PyTorch; call it as ``mha(X, causal=False)``.

    Attributes
    ==========

    model : the (non-causal) :class:`MultiHeadAttention`, with biases
    weights : dict of NumPy arrays in our layout: ``W_Q``, ``W_K``, ``W_V`` (``h x E x d_k``),
        ``W_O`` (``E x E``), ``b_Q``, ``b_K``, ``b_V`` (``h x d_k``), ``b_O`` (``E``)
    """

    def __init__(self, model: MultiHeadAttention, weights: dict[str, np.ndarray], batch_first: bool = True):
        self.model = model
        self.weights = weights
        self.batch_first = batch_first
        self._functions: dict[bool, NumericMHA] = {}

    def __call__(self, X: Any, key: Any = None, value: Any = None, *, causal: bool = False,
                 key_padding_mask: Any = None, attn_mask: Any = None, need_weights: bool = False,
                 average_attn_weights: bool = True, batch_first: bool | None = None) -> Any:
        """Attention of ``X`` (queries) over ``key``/``value`` (default ``X``: self-attention), as torch computes it.

        Shapes: ``(n, E)`` unbatched, or batched ``(batch, n, E)`` when ``batch_first`` (the default of weights
        imported as arrays; a module's own ``batch_first`` otherwise) and ``(n, batch, E)`` when not -- torch's
        default layout.  ``key_padding_mask``: ``(batch, n_kv)`` (or ``(n_kv,)`` unbatched), boolean (True = ignore
        that key) or additive floats; ``attn_mask``: ``(n_q, n_kv)`` or ``(batch h, n_q, n_kv)``, boolean (True =
        not allowed) or additive.  A query row with every key masked is an error (torch returns NaN).
        ``need_weights=True`` returns ``(output, weights)``, the weights averaged over heads unless
        ``average_attn_weights=False`` (then ``(batch, h, n_q, n_kv)``).  Without keys, masks or weights, the
        model's lambdified steps compute the output (:class:`~mha_symbolic.numeric.NumericMHA`).
        """
        for label, flag in (("causal", causal), ("need_weights", need_weights),
                            ("average_attn_weights", average_attn_weights)):
            if not isinstance(flag, (bool, np.bool_)):
                raise InputError(f"{label} must be True or False, got {flag!r}")
        if batch_first is None:
            batch_first = self.batch_first
        elif not isinstance(batch_first, (bool, np.bool_)):
            raise InputError(f"batch_first must be True or False, got {batch_first!r}")
        E = int(self.model.dims.d_model)
        q = _numpy(X, "X")
        k = q if key is None else _numpy(key, "key")
        v = k if value is None else _numpy(value, "value")
        unbatched = q.ndim == 2
        for name, a in (("X", q), ("key", k), ("value", v)):
            if a.ndim != q.ndim or a.ndim not in (2, 3) or a.shape[-1] != E:
                layout = "(n, E)" if unbatched else ("(batch, n, E)" if batch_first else "(n, batch, E)")
                raise InputError(f"{name} has shape {a.shape}; expected {layout} with E = {E} "
                                 f"(batch_first={bool(batch_first)})")
        if not unbatched and not batch_first:  # torch's (n, batch, E): to (batch, n, E)
            q, k, v = (np.swapaxes(a, 0, 1) for a in (q, k, v))
        if k.shape[:-1] != v.shape[:-1]:
            raise InputError(f"key and value must have the same tokens; got shapes {k.shape} and {v.shape}")
        if not unbatched and k.shape[0] != q.shape[0]:
            raise InputError(f"the batch sizes differ: queries {q.shape[0]}, keys {k.shape[0]}")
        plain = key is None and value is None and key_padding_mask is None and attn_mask is None and not need_weights
        if plain:
            out = self._lambdified(q, bool(causal))
        else:
            out, weights = self._fused(q if not unbatched else q[None], k if not unbatched else k[None],
                                       v if not unbatched else v[None], bool(causal), key_padding_mask, attn_mask,
                                       unbatched, bool(need_weights))
            if unbatched:
                out, weights = out[0], (None if weights is None else weights[0])
        if not unbatched and not batch_first:
            out = np.swapaxes(out, 0, 1)
        if not need_weights or weights is None:
            return out
        return out, (weights.mean(axis=-3) if average_attn_weights else weights)

    def _lambdified(self, X: np.ndarray, causal: bool) -> np.ndarray:
        if causal not in self._functions:
            model = self.model.func(self.model.dims, self.model.convention, causal, True)
            self._functions[causal] = NumericMHA(model)
        w = self.weights
        return self._functions[causal](X, w["W_Q"], w["W_K"], w["W_V"], w["W_O"], b_Q=w["b_Q"], b_K=w["b_K"],
                                       b_V=w["b_V"], b_O=w["b_O"])

    def _fused(self, q: np.ndarray, k: np.ndarray, v: np.ndarray, causal: bool, key_padding_mask: Any,
               attn_mask: Any, unbatched: bool, need_weights: bool) -> tuple[np.ndarray, np.ndarray | None]:
        """The heads of one batch element at a time, and its queries in chunks of at most
        :data:`CHUNK_ENTRIES` scores, with torch's masks; returns the output and (``need_weights``) the per-head
        weights.  Non-finite inputs and masks are errors, as on the plain path, and so is an overflow."""
        w = self.weights
        h, dk, dv = w["W_Q"].shape[0], w["W_Q"].shape[2], w["W_V"].shape[2]
        dtype = np.result_type(q.dtype, w["W_Q"].dtype)
        batch, n_q, n_kv, E = q.shape[0], q.shape[1], k.shape[1], w["W_O"].shape[1]
        for name, a in (("X", q), ("key", k), ("value", v)):
            if not np.isfinite(a).all():
                bad = tuple(int(i) for i in np.argwhere(~np.isfinite(a))[0])
                raise InputError(f"{name} contains NaN or inf (first at index {bad})")
        masks: list[Any] = []
        if attn_mask is not None:
            m = _additive(attn_mask, "attn_mask", [(n_q, n_kv), (batch * h, n_q, n_kv)], dtype)
            masks.append(m.reshape((-1, h, n_q, n_kv) if m.ndim == 3 else (1, 1, n_q, n_kv)))
        if key_padding_mask is not None:
            shapes: list[tuple[int, ...]] = [(n_kv,)] if unbatched else [(batch, n_kv)]
            masks.append(_additive(key_padding_mask, "key_padding_mask", shapes, dtype).reshape(-1, 1, 1, n_kv))
        above = np.triu(np.ones((n_q, n_kv), dtype=bool), k=1) if causal else None
        out = np.empty((batch, n_q, E), dtype)
        weights = np.empty((batch, h, n_q, n_kv), dtype) if need_weights else None
        rows = max(1, CHUNK_ENTRIES // max(1, h * n_kv))
        scale = np.sqrt(dtype.type(dk))
        for b in range(batch):
            with np.errstate(over="ignore", invalid="ignore"):  # an overflow is found in the scores or output
                K = np.einsum("ne,hed->hnd", k[b], w["W_K"]) + w["b_K"][:, None, :]
                V = np.einsum("ne,hed->hnd", v[b], w["W_V"]) + w["b_V"][:, None, :]
            for r0 in range(0, n_q, rows):
                r1 = min(n_q, r0 + rows)
                with np.errstate(over="ignore", invalid="ignore"):
                    Q = np.einsum("ne,hed->hnd", q[b, r0:r1], w["W_Q"]) + w["b_Q"][:, None, :]
                    S = (Q @ np.swapaxes(K, -1, -2)) / scale  # (h, rows, n_kv)
                if not np.isfinite(S).all():  # finite inputs whose products overflow (before any mask's -inf)
                    raise _overflow(dtype)
                for m in masks:  # (batch or 1, h or 1, n_q or 1, n_kv)
                    S += m[b if m.shape[0] > 1 else 0, :, slice(r0, r1) if m.shape[2] > 1 else slice(0, 1)]
                if above is not None:
                    S[:, above[r0:r1]] = -np.inf
                dead = np.isneginf(S).all(axis=-1)
                if dead.any():
                    head, row = (int(x) for x in np.argwhere(dead)[0])
                    raise InputError(f"every key is masked for query {r0 + row} (batch {b}, head {head + 1}): its "
                                     "softmax is undefined (torch returns NaN)")
                A = stable_softmax(S, overwrite=True)
                with np.errstate(over="ignore", invalid="ignore"):
                    out[b, r0:r1] = np.swapaxes(A @ V, 0, 1).reshape(r1 - r0, h * dv) @ w["W_O"] + w["b_O"]
                if weights is not None:
                    weights[b, :, r0:r1] = A
        if not np.isfinite(out).all():
            raise _overflow(dtype)
        return out, weights

    def __repr__(self) -> str:
        return f"PyTorchMHA({self.model})"


def _numpy(value: Any, name: str = "the array") -> np.ndarray:
    """A NumPy array from an array or a torch tensor (see :func:`mha_symbolic.weights.as_array`)."""
    from .weights import as_array

    return as_array(value, name)


def _additive(mask: Any, name: str, shapes: list[tuple[int, ...]], dtype: np.dtype) -> np.ndarray:
    """A torch-style mask as an additive float array: boolean True (or nonzero integers) -> -inf, floats kept."""
    m = _numpy(mask, name)
    if m.shape not in shapes:
        raise InputError(f"{name} has shape {m.shape}; expected {' or '.join(str(s) for s in shapes)}")
    if m.dtype == bool:
        return np.where(m, -np.inf, 0.0).astype(dtype)
    if m.dtype.kind not in "f":
        raise InputError(f"{name} must be boolean (True = masked) or additive floats, got dtype {m.dtype}")
    if np.isnan(m).any():
        raise InputError(f"{name} contains NaN")
    if np.isposinf(m).any():
        raise InputError(f"{name} contains +inf: an additive mask adds -inf (masked) or finite numbers")
    return m.astype(dtype)


def _matrix(name: str, value: Any, shape: tuple[int, ...]) -> np.ndarray:
    arr = _numpy(value, name)
    if arr.dtype.kind not in "iuf":
        raise InputError(f"{name} has dtype {arr.dtype}; expected real numbers")
    if arr.shape != shape:
        raise InputError(f"{name} has shape {arr.shape}; expected {shape}")
    if not np.isfinite(arr).all():
        raise InputError(f"{name} contains NaN or inf")
    return arr if arr.dtype.kind == "f" else arr.astype(np.float64)


def from_pytorch(in_proj_weight: Any, in_proj_bias: Any = None, out_proj_weight: Any = None,
                 out_proj_bias: Any = None, num_heads: int | None = None, batch_first: bool | None = None
                 ) -> PyTorchMHA:
    """Import ``nn.MultiheadAttention(embed_dim, num_heads, batch_first=True)`` weights.

    Instead of the four arrays, the module itself may be passed (``from_pytorch(mha)``: its ``state_dict()``,
    ``num_heads`` and ``batch_first`` are read, torch is not imported) or its state_dict
    (``from_pytorch(sd, num_heads=h)``). A missing bias is imported as zeros, so the model always has biases.

    Parameters
    ==========

    in_proj_weight : array ``(3E, E)``
    in_proj_bias : array ``(3E,)`` or None
    out_proj_weight : array ``(E, E)``
    out_proj_bias : array ``(E,)`` or None
    num_heads : h, which must divide ``E``
    batch_first : the layout of 3-D inputs; by default a module's own, else True (``(batch, n, E)``)

    >>> import numpy as np
    >>> sd = {"in_proj_weight": np.eye(6, 2).repeat(1, 0)[:6], "out_proj.weight": np.eye(2)}
    >>> from_pytorch(sd, num_heads=2).weights["W_Q"].shape
    (2, 2, 1)
    """
    if isinstance(in_proj_weight, Mapping) or callable(getattr(in_proj_weight, "state_dict", None)):
        from .weights import from_state_dict

        module = in_proj_weight
        if num_heads is None:
            num_heads = getattr(module, "num_heads", None)
        if num_heads is None:
            raise InputError("from_pytorch(state_dict) needs num_heads= (a state_dict does not store it)")
        if getattr(module, "add_zero_attn", False) is True:
            raise InputError("this module was built with add_zero_attn=True (a zero key and value appended to "
                             "every sequence), which the model does not include")
        batch_first = getattr(module, "batch_first", True) if batch_first is None else batch_first
        [layer] = from_state_dict(module, layout="torch", num_heads=num_heads)
        return from_layer(layer, batch_first=bool(batch_first))
    if num_heads is None or out_proj_weight is None:
        raise InputError("from_pytorch needs in_proj_weight, in_proj_bias, out_proj_weight, out_proj_bias and "
                         "num_heads (or a module or state_dict as its first argument)")
    W_in = _numpy(in_proj_weight, "in_proj_weight")
    if W_in.ndim != 2 or W_in.shape[0] != 3 * W_in.shape[1]:
        raise InputError(f"in_proj_weight must have shape (3E, E); got {W_in.shape}")
    E = W_in.shape[1]
    if isinstance(num_heads, bool) or not isinstance(num_heads, (int, np.integer)) or num_heads <= 0:
        raise InputError(f"num_heads must be a positive integer, got {num_heads!r}")
    model = MultiHeadAttention(n=None, d_model=E, h=int(num_heads), bias=True)  # DimensionError if h does not divide E
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
    return PyTorchMHA(model, weights, batch_first=True if batch_first is None else bool(batch_first))


def from_layer(layer: LayerWeights, batch_first: bool = True) -> PyTorchMHA:
    """A callable model from one checkpoint layer (:mod:`mha_symbolic.weights`); key/value heads shared by
    several query heads (grouped-query attention) are repeated, which computes the same function."""

    from .weights import LayerWeights

    require(layer, LayerWeights, "from_layer's layer", "a LayerWeights (from mha_symbolic.weights.load_weights)")
    h, E, dk, dv = layer.heads, layer.d_model, layer.d_k, layer.d_v
    if dk != dv:
        raise InputError(f"layer {layer.layer} has d_k = {dk} and d_v = {dv}; the numeric model needs d_k = d_v")
    if h * dk != E:
        raise InputError(f"layer {layer.layer} has {h} heads of width {dk} in a model of width {E}; the numeric "
                         "model needs h d_k = d_model")
    model = MultiHeadAttention(n=None, d_model=E, h=h, bias=True)
    rep = [layer.kv_head(i) for i in range(h)]
    dtype = layer.dtype

    def bias(b: np.ndarray | None, rows: list[int] | None, width: int) -> np.ndarray:
        if b is None:
            return np.zeros((h, width) if rows is not None else width, dtype)
        return np.ascontiguousarray(b[rows] if rows is not None else b)

    weights = {"W_Q": layer.W_Q, "W_K": np.ascontiguousarray(layer.W_K[rep]),
               "W_V": np.ascontiguousarray(layer.W_V[rep]), "W_O": layer.W_O,
               "b_Q": bias(layer.b_Q, list(range(h)), dk), "b_K": bias(layer.b_K, rep, dk),
               "b_V": bias(layer.b_V, rep, dv), "b_O": bias(layer.b_O, None, E)}
    return PyTorchMHA(model, weights, batch_first)
