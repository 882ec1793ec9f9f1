r"""The rank of one head's attention weights ``A_i``, proven at any size.

Explanation
===========

The logits ``Q_i K_i^T`` have rank at most ``d_k``, but the softmax is applied entry by entry, so that bound
does not pass to ``A_i``. Two arguments give the rank of ``A_i`` at every size, without evaluating anything:

* **Causal mask, every input.** ``A_i`` is lower triangular (key ``b > a`` gets weight exactly 0) and its diagonal
  entries ``e^{s_aa} / sum_{b <= a} e^{s_ab}`` are positive, so its leading ``min(n, n_kv)`` square block has a
  positive determinant: ``rank A_i = min(n, n_kv)`` (``n`` in self-attention) for every input.
* **No mask, one instance.** Put token ``a``'s first coordinate at ``a`` (``a = 0 .. n-1``; for cross-attention
  key ``b`` of ``Y`` at ``b``), and ``W_Q^i = W_K^{j(i)} = E_{11}`` (every other weight 0). Then
  ``S'_ab = s a b`` with the model's positive scale ``s``, and ``A_ab = y_a^b / r_a`` with ``y_a = e^{s a}``:
  a Vandermonde matrix with distinct nodes ``y_a``, times the positive diagonal ``diag(1/r_a)``. So
  ``rank A_i = min(n, n_kv)``, the largest any ``n x n_kv`` matrix can have.

:func:`certified_weights_rank` is a second, computational witness at the model's own sizes: a generic
instance with entries in ``{-1, 0, 1}`` (weights divided by 32), its weights computed in ball arithmetic from the
exact integer scores, and a minor whose determinant ball excludes 0.

So ``rank(A_i) <= d_k`` is false at every size with ``n > d_k`` (``min(n, n_kv) > d_k`` for cross-attention), and
for the causal model it is false for every input there. At small sizes the instance is also evaluated exactly
and its rank certified by a minor (an independent check of the argument).

Examples
========

>>> from mha_symbolic import MultiHeadAttention
>>> from mha_symbolic.rank.attention_weights import weights_rank
>>> w = weights_rank(MultiHeadAttention(n=70, d_model=768, h=12))
>>> w.rank, w.every_input
(70, False)
>>> weights_rank(MultiHeadAttention(n=4, d_model=4, h=2)).certificate.excludes_zero   # checked exactly too
True
>>> certified_weights_rank(MultiHeadAttention(n=70, d_model=768, h=12), rank=65).excludes_zero
True
>>> causal = weights_rank(MultiHeadAttention(d_model=768, h=12, causal=True))
>>> causal.rank, causal.every_input
(n, True)
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import flint
import numpy as np
from sympy import Min

from ..attention import MultiHeadAttention
from ..errors import InputError
from .certify import MinorCertificate, certify_rank_at_least, to_arb

__all__ = ["WeightsRank", "weights_rank", "vandermonde_instance", "certified_weights_rank"]

#: the instance is also evaluated exactly and certified when min(n, n_kv) is at most this
CERTIFY_UP_TO = 6


@dataclass(frozen=True)
class WeightsRank:
    """The proven rank of one head's attention weights at a model's sizes.

    ``rank`` is ``min(n, n_kv)`` (an expression when the sizes are symbols); ``every_input`` says whether every
    input has it (the causal mask) or one instance attains it (``instance``); ``certificate`` is the exact
    check of that instance at small sizes.
    """

    rank: Any
    every_input: bool
    reasoning: tuple[str, ...]
    instance: dict[str, Any]
    certificate: MinorCertificate | None = None


def vandermonde_instance(model: MultiHeadAttention, head: int = 1) -> dict[str, Any]:
    """Inputs (nested lists of integers) for :meth:`MultiHeadAttention.evaluate` whose head ``head`` has
    attention weights ``A_ab = e^{s a b} / r_a``: the first coordinate of token ``a`` is ``a``, and
    ``W_Q^head = W_K^{j(head)} = E_11``; every other entry is 0."""
    D = model.dims
    n, d_model, h, d_k = (int(x) for x in (D.n, D.d_model, D.h, D.d_k))
    split = model.convention == "split"
    column = (head - 1) * d_k if split else 0  # the split convention: head i reads its own block of X
    rows = d_k if split else d_model

    def tokens(count: int) -> list[list[int]]:
        return [[a if c == column else 0 for c in range(d_model)] for a in range(count)]

    def unit() -> list[list[int]]:
        return [[1 if (r, c) == (0, 0) else 0 for c in range(d_k)] for r in range(rows)]

    def zero(cols: int) -> list[list[int]]:
        return [[0] * cols for _ in range(rows)]

    kv = int(model.kv_index(head))
    kv_count = model.kv_heads or h
    out: dict[str, Any] = {
        "X": tokens(n),
        "W_Q": [unit() if i == head else zero(d_k) for i in range(1, h + 1)],
        "W_K": [unit() if j == kv else zero(d_k) for j in range(1, kv_count + 1)],
        "W_V": [zero(int(D.d_v)) for _ in range(kv_count)],
        "W_O": [[0] * d_model for _ in range(h * int(D.d_v))],
    }
    if model.cross:
        out["Y"] = tokens(int(model.n_kv))
    return out


def _check_head(model: Any, head: Any, caller: str) -> None:
    """A clear error for a model that is not one, or a head it does not have."""
    if not isinstance(model, MultiHeadAttention):
        raise InputError(f"{caller} takes a MultiHeadAttention, got {type(model).__name__}")
    h = model.dims.h
    if isinstance(head, bool) or not isinstance(head, int) or head < 1 or (h.is_Integer and head > int(h)):
        raise InputError(f"{caller}: head must be one of 1..{h} (heads are numbered from 1), got {head!r}")


def weights_rank(model: MultiHeadAttention, head: int = 1) -> WeightsRank | None:
    """The rank of head ``head``'s attention weights, proven (module docstring); ``None`` for a key-padding or
    additive mask, whose rank depends on the mask."""
    _check_head(model, head, "weights_rank")
    if model.mask is not None:
        return None
    n, n_kv = model.dims.n, model.n_kv
    full = Min(n, n_kv) if model.cross else n
    if model.causal:
        return WeightsRank(full, True, (
            "with the causal mask, A_i is lower triangular: the weight of key b > a is exactly 0;",
            "its diagonal entries e^{s_aa} / sum_{b <= a} e^{s_ab} are positive, so the leading "
            f"{full} x {full} block has a positive determinant;",
            f"so rank A_i = {full} for every input (the logits' rank <= d_k does not pass through the "
            "entry-wise softmax).",
        ), {})
    reasoning = (
        "take token a's first coordinate a (a = 0..n-1)" + (", key b of Y at b" if model.cross else "")
        + f", and W_Q^{head} = W_K^{model.kv_index(head)} = E_11, every other weight 0;",
        "then S'_ab = s a b with the model's scale s > 0, and A_ab = y_a^b / r_a with y_a = e^{s a}:",
        "a Vandermonde matrix with distinct nodes y_a times the positive diagonal diag(1/r_a),",
        f"so rank A_{head} = {full}, the largest any {n} x {n_kv} matrix can have.",
    )
    instance: dict[str, Any] = {}
    certificate = None
    if model.dims.is_concrete and (not model.cross or getattr(n_kv, "is_Integer", False)):
        instance = vandermonde_instance(model, head)
        if int(full) <= CERTIFY_UP_TO:
            A = model.evaluate(**instance)[f"A_{head}"]
            certificate = certify_rank_at_least(A, int(full))
    return WeightsRank(full, False, reasoning, instance, certificate)


def certified_weights_rank(model: MultiHeadAttention, rank: int, head: int = 1, seed: int = 0) -> MinorCertificate:
    """A certificate that head ``head``'s attention weights have rank >= ``rank`` on a generic instance of the
    model's own (concrete) sizes: ``X`` and ``Y`` with entries in {-1, 0, 1}, ``W_Q^head`` and ``W_K^{j(head)}``
    with entries in {-1, 0, 1} / 32; the scores are exact integers over 32^2, scaled by the model's scale and
    exponentiated in ball arithmetic (the causal mask gives exact zeros), and an ``rank x rank`` minor's
    determinant ball must exclude 0. Nothing is rounded without its error bound."""
    _check_head(model, head, "certified_weights_rank")
    D = model.dims
    if not D.is_concrete or model.mask is not None or (model.cross and not getattr(model.n_kv, "is_Integer", False)):
        raise InputError("certified_weights_rank needs concrete sizes and no key-padding or additive mask, got "
                         f"{model}")
    n, d_model, d_k = int(D.n), int(D.d_model), int(D.d_k)
    n_kv = int(model.n_kv)
    rng = np.random.default_rng(seed)
    split = model.convention == "split"
    rows = d_k if split else d_model
    X = rng.integers(-1, 2, size=(n, d_model))
    Y = rng.integers(-1, 2, size=(n_kv, d_model)) if model.cross else X
    W_Q, W_K = (rng.integers(-1, 2, size=(rows, d_k)) for _ in range(2))
    if split:  # head i reads its own column block
        X = X[:, (head - 1) * d_k: head * d_k]
        Y = Y[:, (head - 1) * d_k: head * d_k]
    scores = [[int(v) for v in row] for row in (X @ W_Q) @ (Y @ W_K).T]  # exact integers, times 1/32^2
    scale = model.scale  # a number at concrete sizes (1/sqrt(d_k) by default)

    def weights(prec: int) -> flint.arb_mat:
        s = to_arb(scale) / 1024
        out = flint.arb_mat(n, n_kv)
        for a in range(n):
            keys = range(min(a + 1, n_kv)) if model.causal else range(n_kv)
            e = {b: (s * scores[a][b]).exp() for b in keys}
            total = sum(e.values(), flint.arb(0))
            for b, value in e.items():
                out[a, b] = value / total
        return out

    return certify_rank_at_least(weights, rank)

