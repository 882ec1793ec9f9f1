r"""QK and OV circuits of trained heads, kept factored, with exactly certified ranks.

Explanation
===========

For head ``i`` the logits are ``X W_QK^i X^T`` with ``W_QK^i = W_Q^i (W_K^i)^T`` and the head writes
``A_i X W_OV^i`` with ``W_OV^i = W_V^i W_O^i`` (both ``d_model x d_model``, rank <= ``d_k``).  As in
TransformerLens' ``FactoredMatrix``, a :class:`FactoredMatrix` keeps the two factors ``L`` (``m x k``) and
``R`` (``k x p``) instead of the product.

:meth:`FactoredMatrix.rank` is *certified*: a float stored in a checkpoint is an exact dyadic rational, so
each factor is an exact integer matrix times a power of two, and

.. math:: \operatorname{rank}(L R) = \operatorname{rank}(L^T L \, R R^T)

over the reals (``L^T L M x = 0`` implies ``|L M x|^2 = 0``; the same on the right), a ``k x k`` product of
integer Gram matrices whose rank FLINT computes exactly -- milliseconds per head, instead of the rank of the
``d_model x d_model`` product (which nothing else would form exactly: the rounded float product of the
factors has full rank).  :meth:`FactoredMatrix.numerical_rank` is the float evidence, computed from the exact
factors in float64 (``max(m, p) * eps(float64) * s_max``); the SVD of a float32 product formed in float32 counts
its own rounding as rank (for an array, :func:`~mha_symbolic.rank.certify.numerical_rank` then uses float32's
tolerance, as NumPy's ``matrix_rank`` does).

Examples
========

>>> import numpy as np
>>> from mha_symbolic.rank.circuits import FactoredMatrix
>>> rng = np.random.default_rng(0)
>>> L = rng.normal(size=(16, 3)).astype(np.float32)
>>> R = rng.normal(size=(3, 16)).astype(np.float32)
>>> F = FactoredMatrix(L, R)
>>> F.shape, F.rank().rank, F.rank().attains_bound
((16, 16), 3, True)
>>> from mha_symbolic.rank.certify import numerical_rank
>>> P = (L @ R).astype(np.float64)                         # the rounded float32 product
>>> F.numerical_rank().rank, numerical_rank(P).rank         # float32's tolerance vs float64's
(3, 16)
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import asdict, dataclass
from typing import Any

import flint
import numpy as np

from ..errors import InputError, require
from ..weights import LayerWeights, TensorSource, checked_layers, layer_numbers, load_weights, resolve
from .certify import NumericalRank

__all__ = ["FactoredMatrix", "CircuitRank", "HeadCircuits", "circuits", "dyadic_integers", "circuit_ranks",
           "HeadRanks", "LayerRanks", "layer_ranks"]

_MANTISSA_BITS = {np.dtype(np.float16): 11, np.dtype(np.float32): 24, np.dtype(np.float64): 53}


def dyadic_integers(A: Any) -> tuple[flint.fmpz_mat, int]:
    """A float matrix as ``(M, e)`` with ``M`` an exact integer matrix and ``A == M * 2**e`` entry for entry.

    >>> M, e = dyadic_integers(np.array([[0.5, 0.75], [-3.0, 0.0]]))
    >>> M.tolist(), e
    ([[2, 3], [-12, 0]], -2)
    """
    A = np.asarray(A)
    if A.ndim != 2:
        raise InputError(f"dyadic_integers needs a 2-D array, got shape {A.shape}")
    if not A.dtype.isnative:  # a big-endian array from a file: the same numbers in native byte order
        A = A.astype(A.dtype.newbyteorder("="))
    if A.dtype.kind in "iu":
        return flint.fmpz_mat(A.shape[0], A.shape[1], [int(x) for x in A.ravel().tolist()]), 0
    if A.dtype.kind != "f" or A.dtype not in _MANTISSA_BITS:
        raise InputError(f"dyadic_integers needs float16/32/64 or integer entries, got dtype {A.dtype}")
    if not np.isfinite(A).all():
        raise InputError("dyadic_integers: the matrix contains NaN or inf")
    bits = _MANTISSA_BITS[A.dtype]
    mantissa, exponent = np.frexp(A.astype(np.float64))
    ints = np.ldexp(mantissa, bits).astype(np.int64)  # exact: |mantissa| < 1 has at most `bits` bits
    exps = exponent.astype(np.int64) - bits
    nonzero = ints != 0
    if not nonzero.any():
        return flint.fmpz_mat(A.shape[0], A.shape[1]), 0
    low = int(exps[nonzero].min())
    shifts = np.where(nonzero, exps - low, 0).ravel().tolist()
    entries = [m << s for m, s in zip(ints.ravel().tolist(), shifts, strict=True)]
    common = min((m & -m).bit_length() - 1 for m in entries if m)  # powers of two every entry shares
    if common:
        entries = [m >> common for m in entries]
        low += common
    return flint.fmpz_mat(A.shape[0], A.shape[1], entries), low


@dataclass(frozen=True)
class CircuitRank:
    """A certified rank: ``rank`` exactly, the proven ``bound`` (the inner width ``k``, and the sides), whether the
    bound is attained, and how it was computed."""

    rank: int
    bound: int
    method: str = "exact: rank(L^T L R R^T) of the dyadic factors (FLINT fmpz_mat)"

    @property
    def attains_bound(self) -> bool:
        return self.rank == self.bound


class FactoredMatrix:
    """``L @ R`` kept as its two factors (``L``: ``m x k``, ``R``: ``k x p``), e.g. ``W_Q^i (W_K^i)^T``."""

    def __init__(self, L: Any, R: Any):
        L, R = np.asarray(L), np.asarray(R)
        if L.ndim != 2 or R.ndim != 2 or L.shape[1] != R.shape[0]:
            raise InputError(f"a factored matrix needs L (m x k) and R (k x p); got {L.shape} and {R.shape}")
        self.L, self.R = L, R

    @property
    def shape(self) -> tuple[int, int]:
        return int(self.L.shape[0]), int(self.R.shape[1])

    @property
    def inner(self) -> int:
        return int(self.L.shape[1])

    @property
    def AB(self) -> np.ndarray:
        """The product in float64 (rounded: its float rank is not the rank of the exact product)."""
        return self.L.astype(np.float64) @ self.R.astype(np.float64)

    def rank(self) -> CircuitRank:
        """The exact rank of the exact product of the stored factors (see the module's explanation)."""
        L, _ = dyadic_integers(self.L)
        R, _ = dyadic_integers(self.R)
        gram = (L.transpose() * L) * (R * R.transpose())
        return CircuitRank(int(gram.rank()), min(self.inner, *self.shape))

    def numerical_rank(self, tol: float | None = None) -> NumericalRank:
        """Singular values of ``L R`` from ``R_L R_R^T`` (QR of both factors, in float64); by default ``tol`` is
        ``max(m, p) * eps(float64)``: the stored factors are exact, so the only rounding is that of this
        float64 computation -- not the rounding a product formed in the factors' own dtype would carry."""
        if tol is None:
            tol = max(self.shape) * float(np.finfo(np.float64).eps)
        _, rl = np.linalg.qr(self.L.astype(np.float64))
        _, rr = np.linalg.qr(self.R.T.astype(np.float64))
        s = np.linalg.svd(rl @ rr.T, compute_uv=False)
        cutoff = tol * (s[0] if s.size else 0.0)
        return NumericalRank(int((s > cutoff).sum()), float(tol), tuple(float(x) for x in s))

    def __repr__(self) -> str:
        return f"FactoredMatrix({self.shape[0]} x {self.inner} @ {self.inner} x {self.shape[1]}, {self.L.dtype})"


@dataclass(frozen=True)
class HeadCircuits:
    """The QK and OV circuits of query head ``head`` of layer ``layer``, which reads key/value head ``kv_head``.

    Heads are numbered from 1 (``head_1 .. head_h``, as in the model's steps); layers from 0, as in the
    checkpoint's tensor names."""

    layer: int
    head: int
    kv_head: int
    QK: FactoredMatrix
    OV: FactoredMatrix

    def _repr_markdown_(self) -> str:
        i, j, (rows, cols) = self.head, self.kv_head, self.QK.shape
        return (f"**layer {self.layer}, head {i}** (reads key/value head {j}): "
                f"$W_{{QK}} = W_Q^{{{i}}} (W_K^{{{j}}})^\\top$ and $W_{{OV}} = W_V^{{{j}}} W_O^{{{i}}}$, each "
                f"${rows} \\times {cols}$ through an inner width of {self.QK.inner}")


def circuits(weights: LayerWeights | Iterable[LayerWeights]) -> list[HeadCircuits]:
    """Per head ``W_QK = W_Q^i (W_K^j)^T`` and ``W_OV = W_V^j W_O^i`` (``j`` the key/value head ``i`` reads).

    >>> from mha_symbolic.weights import LayerWeights
    >>> rng = np.random.default_rng(1)
    >>> w = LayerWeights("torch", 0, *(rng.normal(size=(2, 6, 3)) for _ in range(3)), rng.normal(size=(6, 6)))
    >>> [(c.head, c.kv_head, c.QK.rank().rank, c.OV.rank().rank) for c in circuits(w)]
    [(1, 1, 3, 3), (2, 2, 3, 3)]
    """
    if not isinstance(weights, LayerWeights):
        require(weights, Iterable, "circuits' weights", "a LayerWeights or an iterable of them")
    layers = [weights] if isinstance(weights, LayerWeights) else list(weights)
    for k, w in enumerate(layers):
        require(w, LayerWeights, f"circuits' weights[{k}]", "a LayerWeights")
    out = []
    for w in layers:
        for i in range(w.heads):
            j = w.kv_head(i)
            out.append(HeadCircuits(w.layer, i + 1, j + 1, FactoredMatrix(w.W_Q[i], w.W_K[j].T),
                                    FactoredMatrix(w.W_V[j], w.W_O_head(i))))
    return out


@dataclass(frozen=True)
class HeadRanks:
    """One row of :func:`circuit_ranks`: certified ranks of a head's circuits and, on an input, of its logits.
    ``head`` and ``kv_head`` (the key/value head it reads) are numbered from 1, ``layer`` from 0."""

    layer: int
    head: int
    kv_head: int
    d_k: int
    qk_rank: int
    ov_rank: int
    qk_numerical: int
    ov_numerical: int
    logits_rank: int | None = None
    logits_bound: int | None = None

    @property
    def attains_d_k(self) -> bool:
        """Both circuits have rank ``d_k``: the bound ``rank <= d_k`` is attained."""
        return self.qk_rank == self.d_k and self.ov_rank == self.d_k

    def as_dict(self) -> dict[str, Any]:
        return asdict(self) | {"attains_d_k": self.attains_d_k}


@dataclass(frozen=True)
class LayerRanks:
    """The certified ranks of one layer: every head's, and (on an input) the concatenation's."""

    layer: int
    heads: tuple[HeadRanks, ...]
    n: int | None = None
    concat_rank: int | None = None
    concat_bound: int | None = None
    concat_certificate: str | None = None
    name: str = ""  # the attention block's key prefix in the checkpoint

    def as_dict(self) -> dict[str, Any]:
        return {"layer": self.layer, "name": self.name, "n": self.n, "concat_rank": self.concat_rank,
                "concat_bound": self.concat_bound,
                "concat_certificate": self.concat_certificate, "heads": [r.as_dict() for r in self.heads]}


def _projection(X: np.ndarray, W: np.ndarray, b: np.ndarray | None) -> tuple[flint.fmpz_mat, int]:
    """``X W + 1 b^T`` exactly, as an integer matrix and a power of two: ``[X 1] [W; b]``."""
    Xt = np.hstack([X, np.ones((X.shape[0], 1), dtype=X.dtype)])
    Wt = np.vstack([W, (np.zeros(W.shape[1], W.dtype) if b is None else b)[None, :]])
    (A, ea), (B, eb) = dyadic_integers(Xt), dyadic_integers(Wt)
    return A * B, ea + eb


def _logits(w: LayerWeights, i: int, X: np.ndarray) -> tuple[flint.fmpz_mat, flint.fmpz_mat, int]:
    j = w.kv_head(i)
    Fq, eq = _projection(X, w.W_Q[i], None if w.b_Q is None else w.b_Q[i])
    Fk, ek = _projection(X, w.W_K[j], None if w.b_K is None else w.b_K[j])
    return Fq, Fk, eq + ek


def _logits_rank(w: LayerWeights, i: int, X: np.ndarray) -> tuple[int, int]:
    """Exact rank of head ``i``'s logits ``(X W_Q^i + b_Q^i)(X W_K^j + b_K^j)^T`` on ``X`` (scale dropped: a
    positive factor), from the ``n x d_k`` factors; bound ``min(n, d_k)``."""
    Fq, Fk, _ = _logits(w, i, X)
    gram = (Fq.transpose() * Fq) * (Fk.transpose() * Fk)
    return int(gram.rank()), min(X.shape[0], w.d_k)


def _concat_rank(w: LayerWeights, X: np.ndarray) -> tuple[int, int, str]:
    """Certified rank of ``Concat(head_1, ..., head_h)`` on ``X`` (softmax in ball arithmetic, a minor whose
    determinant ball excludes 0), against the proven bound ``min(n, h d_v)``."""
    from .certify import certified_rank
    from .witness import _softmax_rows

    n = X.shape[0]
    parts = []
    for i in range(w.heads):
        Fq, Fk, e = _logits(w, i, X)
        j = w.kv_head(i)
        V, ev = _projection(X, w.W_V[j], None if w.b_V is None else w.b_V[j])
        parts.append((Fq * Fk.transpose(), e, V, ev))

    def build(prec: int) -> flint.arb_mat:
        out = flint.arb_mat(n, w.heads * w.d_v)
        for k, (S, e, V, ev) in enumerate(parts):
            A = _softmax_rows(flint.arb_mat(S), flint.arb(2) ** e / flint.arb(w.d_k).sqrt())
            H = A * flint.arb_mat(V) * flint.arb(2) ** ev
            for a in range(n):
                for b in range(w.d_v):
                    out[a, k * w.d_v + b] = H[a, b]
        return out

    bound = min(n, w.heads * w.d_v)
    r, cert = certified_rank(build, bound)
    text = f"arb minor {r}x{r}, det {cert.det}" if cert else "no minor certified"
    return r, bound, text


def circuit_ranks(weights: Any, layout: str | None = None, layers: Iterable[int] | None = None,
                  num_heads: int | None = None, X: Any = None, n: int | None = None, seed: int = 0,
                  progress: Callable[[int, int], None] | None = None, executor: Any = None,
                  kv_heads: int | None = None) -> Iterator[LayerRanks]:
    """Certified ranks of every head's ``W_QK`` and ``W_OV`` (and of its logits and the concatenation on ``X``,
    or on a generated ``n x d_model`` input when ``n`` is given), layer by layer, read lazily from ``weights``
    (see :func:`~mha_symbolic.weights.load_weights`).  ``progress(done, total)`` is called after each layer.

    ``executor``: anything with ``submit(fn, *args)`` returning futures (a ``concurrent.futures`` executor, a
    ``dask.distributed.Client``): each layer is then one job, which reads only that layer's tensors (a
    ``.safetensors`` source travels as its path), so a worker holds one layer at a time.  Layers come back in order.
    """
    source, layout, num_heads, kv_heads = resolve(weights, layout, num_heads, kv_heads)
    if layers is not None:
        layers = list(layers) if not isinstance(layers, (str, bytes)) and isinstance(layers, Iterable) else layers
        checked_layers(layers)  # each checked: 0.5 or "abc" is an error, never layer 0
    wanted = [int(x) for x in layers] if layers is not None else layer_numbers(source, layout)
    if executor is None:
        for done, w in enumerate(load_weights(source, layout, wanted, num_heads, kv_heads), 1):
            yield layer_ranks(w, _input(X, n, w.d_model, seed))
            if progress is not None:
                progress(done, len(wanted))
        return
    if not callable(getattr(executor, "submit", None)):
        raise InputError(f"executor must have a submit(fn, *args) method (concurrent.futures, dask.distributed."
                         f"Client); got {type(executor).__name__}")
    missing = set(wanted) - set(layer_numbers(source, layout))
    if missing:
        raise InputError(f"no layer {sorted(missing)} in the checkpoint; its layers are "
                         f"{layer_numbers(source, layout)}")
    futures = [executor.submit(_layer_job, source, layout, L, num_heads, kv_heads, X, n, seed) for L in wanted]
    for done, future in enumerate(futures, 1):
        yield future.result()
        if progress is not None:
            progress(done, len(wanted))


def _layer_job(source: TensorSource, layout: str, layer: int, num_heads: int | None, kv_heads: int | None,
               X: Any, n: int | None, seed: int) -> LayerRanks:
    """One layer's ranks, reading only that layer (runs on a worker)."""
    [w] = load_weights(source, layout, [layer], num_heads, kv_heads)
    return layer_ranks(w, _input(X, n, w.d_model, seed))


def layer_ranks(w: LayerWeights, X: np.ndarray | None = None) -> LayerRanks:
    """Certified ranks of one layer's circuits (and, with an input ``X``, of each head's logits and of the
    concatenation)."""
    from ..weights import LayerWeights

    require(w, LayerWeights, "layer_ranks's w", "a LayerWeights (from mha_symbolic.weights.load_weights)")
    from threadpoolctl import threadpool_limits

    rows = []
    # the factorisations here are small (d_k x d_k Gram matrices, one head at a time): on one BLAS thread they
    # cost a third of the CPU time of two threads, and less wall time too (benchmarks/bench_adversarial.py)
    with threadpool_limits(limits=1, user_api="blas"):
        for c in circuits(w):
            logits = _logits_rank(w, c.head - 1, X) if X is not None else (None, None)
            rows.append(HeadRanks(w.layer, c.head, c.kv_head, w.d_k, c.QK.rank().rank, c.OV.rank().rank,
                                  c.QK.numerical_rank().rank, c.OV.numerical_rank().rank, *logits))
        if X is None:
            return LayerRanks(w.layer, tuple(rows), name=w.name)
        return LayerRanks(w.layer, tuple(rows), int(X.shape[0]), *_concat_rank(w, X), name=w.name)


def _input(X: Any, n: int | None, d_model: int, seed: int) -> np.ndarray | None:
    if X is not None:
        Xa = np.asarray(X)
        if Xa.ndim != 2 or Xa.shape[1] != d_model:
            raise InputError(f"the input X must be n x d_model = n x {d_model}; got shape {Xa.shape}")
        if Xa.dtype.kind not in "iuf" or not np.isfinite(Xa).all():
            raise InputError("the input X must hold finite real numbers")
        return Xa
    if n is None:
        return None
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 1:
        raise InputError(f"n (the generated input's length) must be a positive integer, got {n!r}")
    return np.random.default_rng(seed).normal(size=(n, d_model))
