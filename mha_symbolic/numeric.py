"""Numeric evaluation: the symbolic model compiled to NumPy at the matrix level.

Explanation
===========

:func:`lambdify_model` compiles a concrete model (``d_model``, ``h``, ``d_k``, ``d_v``; the
number of tokens ``n`` and any leading batch axes stay free) to two functions, both derived
from the model:

* **fused** (the default, ``steps=False``): Python source generated from the model's
  inputs, steps and options (:func:`_fused_source`; ``f.source`` shows it) that computes
  the output as fast hand-written NumPy does:

  - every head's projection in one product, ``X [W_Q^1 ... W_Q^h]`` (the weights copied side
    by side once per call; the split convention: one batched product over the heads'
    blocks of ``X``), the scale on the scores folded into the queries' weights (and bias);
  - per-head views of the queries, keys and values (reshapes, no copies); query head ``i``
    reads key/value head ``j`` as the steps ``S_i = Q_i K_j^T`` and ``head_i = A_i V_j``
    say (grouped-query attention: ``j = ceil(i g / h)``);
  - one scores buffer ``(..., n_q, n_kv)`` reused by every head, the softmax in place
    (``exp``, the row sums as a matrix-vector product, each row divided by its sum after the
    product with ``V``: one multiplication by the reciprocals for all heads at once); each
    row is shifted by its maximum unless a Cauchy-Schwarz bound (largest query
    norm times largest key norm, plus the additive term) proves that ``exp`` cannot leave
    a safe range (``|score| <= ln(largest float) / 4``), so scores of 1e4 still give finite
    weights;
  - each head's output written over its queries (``d_k = d_v``), the output over the keys:
    no copy the math does not need; a large batch is processed in chunks of about
    :data:`CHUNK_ROWS` query rows, so that only one chunk's queries, keys, values and one
    head's scores are alive at once;
  - two single places: the source of the keys and values (``KV = X``) and the additive term
    on the scores before the softmax (``T``: the causal mask, 0 or ``-inf``).

* **step-wise** (``steps=True``): the model's own step definitions handed to
  :func:`sympy.lambdify` with a small printer (products as ``numpy.matmul``, transposes as
  ``numpy.swapaxes``, :class:`~mha_symbolic.softmax.Softmax` as :func:`stable_softmax`);
  every step is computed once and every step's value is returned.

Both keep float32 as float32 (scalars print as Python floats) and give the same numbers up
to rounding.

Examples
========

>>> import numpy as np
>>> from mha_symbolic import MultiHeadAttention
>>> f = MultiHeadAttention(d_model=4, h=2).lambdify()
>>> X = np.array([[1.0, 0, 1, 0], [0, 1, 0, 1]])
>>> I = np.eye(4)[:, :2], np.eye(4)[:, 2:]
>>> out = f(X, W_Q=list(I), W_K=list(I), W_V=list(I), W_O=np.eye(4))
>>> out.round(4)
array([[0.6698, 0.3302, 0.6698, 0.3302],
       [0.3302, 0.6698, 0.3302, 0.6698]])
>>> out, steps = f(np.stack([X, X]), W_Q=np.stack(I), W_K=np.stack(I), W_V=np.stack(I), W_O=np.eye(4),
...                steps=True)
>>> out.shape, steps["A_1"].shape
((2, 2, 4), (2, 2, 2))
>>> print("\\n".join(line for line in f.source.splitlines() if "_project(" in line and "W)" in line))
        Q = _project(X, W)  # (..., n, 2 x 2): one product over the batch too
        K = _project(KV, W)  # (..., n, 2 x 2): one product over the batch too
        V = _project(KV, W)  # (..., n, 2 x 2): one product over the batch too
"""

from __future__ import annotations

import functools
import inspect
import itertools
import keyword
import linecache
import math
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
from sympy import MatAdd, MatMul, MatrixSymbol, OneMatrix, lambdify
from sympy.printing.numpy import NumPyPrinter

from ._text import shape_text
from .concat import Concat
from .errors import DimensionError, InputError, MaskError, MHASymbolicError, ShapeError
from .heads import HeadMatrix
from .softmax import Softmax

if TYPE_CHECKING:
    from .attention import MultiHeadAttention

__all__ = ["stable_softmax", "lambdify_model", "NumericMHA"]


def stable_softmax(x: np.ndarray, causal: bool = False, overwrite: bool = False, keep: Any = None) -> np.ndarray:
    """Row-wise softmax over the last axis, computed as ``exp(x - max) / sum``; dtype kept.

    ``overwrite=True`` reuses ``x``'s buffer.  The step-wise code calls it on each head's
    scaled scores; the fused code computes the same softmax in place itself.  ``keep`` is a key-padding mask
    broadcast against ``x`` (0/False: masked).  Entries ``-inf`` (an additive mask) get weight 0; a row with no
    key left raises :class:`~mha_symbolic.errors.MaskError` instead of returning ``nan``.

    >>> stable_softmax(np.array([[1e4, 0.0]])).tolist()
    [[1.0, 0.0]]
    >>> stable_softmax(np.zeros((2, 2)), causal=True).tolist()
    [[1.0, 0.0], [0.5, 0.5]]
    >>> x = np.zeros((1, 2)); y = stable_softmax(x, overwrite=True); y is x
    True
    >>> stable_softmax(np.zeros((1, 3)), keep=np.array([[1, 0, 1]])).tolist()
    [[0.5, 0.0, 0.5]]
    """
    if not isinstance(x, np.ndarray) or x.ndim == 0:
        x = _array("stable_softmax's x", x, finite=False)
        if x.ndim == 0:
            raise InputError("stable_softmax's x must have at least one axis (the softmax runs over the last)")
        overwrite = True  # a new array: nothing of the caller's to keep
    if x.shape[-1] == 0:
        raise InputError(f"stable_softmax's x has no entries along its last axis (shape {x.shape}): a softmax "
                         "needs at least one")
    masks = []
    if causal:
        rows, cols = x.shape[-2:]
        masks.append(np.triu(np.ones((rows, cols), dtype=bool), k=1))
    if keep is not None:
        masks.append(np.asarray(keep) == 0)
    for mask in masks:
        if overwrite:
            np.copyto(x, -np.inf, where=mask)
        else:
            x = np.where(mask, -np.inf, x)
            overwrite = True
    top = x.max(axis=-1, keepdims=True)
    if np.isneginf(top).any():
        _no_empty_rows(x)
    if overwrite:
        z = x
        z -= top
    else:
        z = x - top
    np.exp(z, out=z)
    z /= z.sum(axis=-1, keepdims=True)
    return z


class _MatrixNumPyPrinter(NumPyPrinter):
    """NumPy printer for whole-matrix (batched) code: the step-wise function (``steps=True``)."""

    def _np(self, name: str) -> str:
        return self._module_format(f"numpy.{name}")

    def _print_MatMul(self, expr: MatMul) -> str:
        coeff, factors = expr.as_coeff_matrices()
        factors = list(factors)
        # 1 b (a column of ones times a row) is b broadcast over the rows
        if len(factors) == 2 and isinstance(factors[0], OneMatrix) and factors[0].shape[1] == 1:
            code = self._print(factors[1])
        else:
            code = self._print(factors[0])
            for f in factors[1:]:
                code = f"{self._np('matmul')}({code}, {self._print(f)})"
        if coeff != 1:
            code = f"{float(coeff)!r} * {code}"
        return code

    def _print_MatAdd(self, expr: MatAdd) -> str:
        return "(" + " + ".join(self._print(a) for a in expr.args) + ")"

    def _print_Transpose(self, expr: Any) -> str:
        return f"{self._np('swapaxes')}({self._print(expr.arg)}, -1, -2)"

    def _print_ScaledScores(self, expr: Any) -> str:
        return f"{float(expr.factor)!r} * {self._print(expr.scores)}"

    def _print_Softmax(self, expr: Softmax) -> str:
        keep = f", keep={self._print(expr.keep)}" if expr.keep is not None else ""
        return f"_stable_softmax({self._print(expr.arg)}, {expr.causal}{keep})"

    def _print_Concat(self, expr: Concat) -> str:
        return f"{self._np('concatenate')}([{', '.join(self._print(b) for b in expr.blocks)}], axis=-1)"

    def _print_MatrixSlice(self, expr: Any) -> str:
        (r0, r1, rs), (c0, c1, cs) = expr.rowslice, expr.colslice
        if (r0, r1, rs) != (0, expr.parent.rows, 1):
            raise InputError("numeric code slices columns only")
        return f"{self._print(expr.parent)}[..., {int(c0)}:{int(c1)}:{int(cs)}]"


def _identifier(name: str) -> str:
    return re.sub(r"\W", "", name.replace("'", "_scaled").replace("^", "_"))


@dataclass(frozen=True)
class _Compiled:
    function: Callable[..., Any]
    arg_names: tuple[str, ...]
    step_names: tuple[str, ...]


def _leaves(model: MultiHeadAttention) -> tuple[list[Any], list[str]]:
    """The model's input symbols in call order, with their labels (``W_Q[2]``)."""
    leaves: list[Any] = []
    labels: list[str] = []
    for key, value in model.inputs.items():
        for k, sym in enumerate(value if isinstance(value, list) else [value], start=1):
            leaves.append(sym)
            labels.append(f"{key}[{k}]" if isinstance(value, list) else key)
    return leaves, labels


def _compile(model: MultiHeadAttention, keep_steps: bool) -> _Compiled:
    """The step-wise function (``keep_steps``: every step's value returned) or the fused one (the output)."""
    return _compile_steps(model) if keep_steps else _compile_fused(model)


def _compile_steps(model: MultiHeadAttention) -> _Compiled:
    """The model's step definitions lambdified one by one; the function returns every step's value."""
    steps = list(model.steps.values())
    leaves, labels = _leaves(model)
    rename = {s: (s.as_symbol() if isinstance(s, HeadMatrix) else s) for s in leaves}
    for step in steps:
        rename[step.symbol] = MatrixSymbol(_identifier(step.name), *step.symbol.shape)
    definitions = [(rename[s.symbol], s.definition.xreplace(rename)) for s in steps]
    result = [lhs for lhs, _ in definitions]
    fn = lambdify([rename[s] for s in leaves], result, modules=[{"_stable_softmax": stable_softmax}, "numpy"],
                  printer=_MatrixNumPyPrinter({"fully_qualified_modules": False, "inline": True,
                                               "allow_unknown_functions": False}),
                  cse=lambda expr: (definitions, result), docstring_limit=0)
    return _Compiled(fn, tuple(labels), tuple(s.name for s in steps))


# ----- the fused code -----------------------------------------------------------------------------
#: Query rows per chunk of the batch: the fused code projects and attends one chunk of the leading (batch)
#: axes at a time, so that only one chunk's queries, keys, values and scores are alive at once.
CHUNK_ROWS = 1024
#: ``log2(e) = 1 / ln 2``: the fused code folds it into the scale of the queries (and into the additive term on the
#: scores) and takes ``exp2``, twice as fast as ``exp`` in float32: ``e^s = 2^(s log2 e)``.
LOG2E = 1.4426950408889634


def _over_batches(attend: Callable[..., np.ndarray], width: int, dtype: Any, *operands: np.ndarray) -> np.ndarray:
    """``attend(*chunks, out)`` over the leading (batch) axes of ``operands`` (broadcast together), about
    :data:`CHUNK_ROWS` query rows at a time; one call with ``out=None`` when everything is one chunk."""
    lead = np.broadcast_shapes(*(a.shape[:-2] for a in operands))
    operands = tuple(np.broadcast_to(a, lead + a.shape[-2:]) for a in operands)
    rows = operands[0].shape[-2]
    count = math.prod(lead)
    per = max(1, CHUNK_ROWS // rows)
    if count <= per:
        return attend(*operands, None)
    # an operand broadcast over some batch axes and not others (two Y for a (32, 2) batch of X) is gathered chunk
    # by chunk: flattening its batch axes would copy it once per batch element; one broadcast over all of them
    # (one mask for every X) flattens to a view
    broadcast = [not _flat_view(a, len(lead)) and 0 in a.strides[:-2] for a in operands]
    flat = [a if b else a.reshape((count, *a.shape[-2:])) for a, b in zip(operands, broadcast, strict=True)]
    out = np.empty((count, rows, width), dtype)
    for start in range(0, count, per):
        where = tuple(np.unravel_index(np.arange(start, min(start + per, count)), lead))
        attend(*(a[where] if b else a[start:start + per] for a, b in zip(flat, broadcast, strict=True)),
               out[start:start + per])
    return out.reshape((*lead, rows, width))


def _flat_view(a: np.ndarray, axes: int) -> bool:
    """Can the first ``axes`` axes of ``a`` be merged into one without a copy (equal steps between them)?

    >>> x = np.zeros((2, 3, 4))
    >>> _flat_view(x, 2), _flat_view(np.broadcast_to(x[0], (5, 3, 4)), 1)
    (True, True)
    >>> _flat_view(np.broadcast_to(x, (5, 2, 3, 4)), 2)  # steps 0, then 96 bytes: a copy
    False
    """
    kept = [(st, sh) for st, sh in zip(a.strides[:axes], a.shape[:axes], strict=True) if sh != 1]
    return all(outer == inner * size for (outer, _), (inner, size) in zip(kept, kept[1:], strict=False))


def _causal_term(rows: int, cols: int, dtype: Any) -> np.ndarray:
    """The causal mask as an additive term on the scores: 0 where key ``j <= i``, ``-inf`` where ``j > i``.

    >>> _causal_term(2, 3, np.float32).tolist()
    [[0.0, -inf, -inf], [0.0, 0.0, -inf]]
    """
    return np.triu(np.full((rows, cols), -np.inf, dtype), k=1)


def _padding_term(m: np.ndarray, dtype: Any) -> np.ndarray:
    """A key-padding mask ``(..., 1, n_kv)`` (True: attend) as an additive term: 0 or ``-inf``.

    >>> _padding_term(np.array([[True, False]]), np.float32).tolist()
    [[0.0, -inf]]
    """
    return np.where(m, np.zeros((), dtype), np.array(-np.inf, dtype))


def _no_empty_rows(T: np.ndarray, heads: str = "") -> None:
    """:class:`~mha_symbolic.errors.MaskError` when a row of the additive term masks every key.

    >>> _no_empty_rows(np.array([[0.0, -np.inf], [-np.inf, -np.inf]]))
    Traceback (most recent call last):
    ...
    mha_symbolic.errors.MaskError: softmax of a fully masked row: row 2 has no key left to attend to

    ``heads`` is added to the message (the fused code checks the mask shared by every head).
    """
    empty = np.isneginf(T).all(axis=-1)
    if empty.any():
        where = tuple(int(i) for i in np.argwhere(empty)[0])
        row = f"row {where[-1] + 1}" if T.shape[-2] > 1 else "every row"
        batch = f" of batch entry {where[:-1]}" if len(where) > 1 else ""
        raise MaskError(f"softmax of a fully masked row: {row}{batch} has no key left to attend to"
                        + (f" ({heads})" if heads else ""))


def _project(A: np.ndarray, W: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
    """``A @ W`` for ``A`` of shape ``(..., rows, cols)``: one product of ``(batch x rows, cols)`` by ``W`` when ``A``
    (and ``out``) are contiguous -- one large BLAS call, which threads better than NumPy's one call per batch
    element -- and ``matmul`` otherwise (a broadcast ``Y`` is never copied to flatten it).

    >>> A = np.arange(12.0).reshape(2, 3, 2)
    >>> bool((_project(A, np.eye(2) * 2) == A * 2).all()), _project(A, np.ones((2, 1))).shape
    (True, (2, 3, 1))
    """
    if A.ndim > 2 and A.flags.c_contiguous and (out is None or out.flags.c_contiguous):
        flat = out.reshape(-1, W.shape[-1]) if out is not None else None
        return np.matmul(A.reshape(-1, A.shape[-1]), W, out=flat).reshape(A.shape[:-1] + W.shape[-1:])
    return np.matmul(A, W, out=out)


def _log2_units(T: np.ndarray) -> np.ndarray:
    """The additive term in units of log2 (times :data:`LOG2E`), a new array: ``-inf`` stays ``-inf``, and a finite
    entry stays finite -- one beyond ``max / log2(e)`` (a mask filled with ``finfo.min``) is clipped to the largest
    float instead of overflowing to ``-inf``, which would mask its key (or make a row fully masked).

    >>> big = np.finfo(np.float64).min
    >>> _log2_units(np.array([[0.0, -np.inf, big, 1.0]])).tolist() == [[0.0, -np.inf, big, LOG2E]]
    True
    """
    with np.errstate(over="ignore"):
        out = np.multiply(T, LOG2E)
    overflowed = np.isinf(out) & np.isfinite(T)
    if overflowed.any():
        big = np.finfo(out.dtype).max
        out[overflowed] = np.copysign(big, T[overflowed])
    return out


class _NotFinite(InputError):
    """Raised by the fused code's :func:`_max_row_norms` when the queries or keys are not finite; the caller replaces it
    with the error naming the input (NaN or inf in ``X``, ``Y`` or a weight), or the overflow error if every input is
    finite.  ``dtype``: the data's."""

    def __init__(self, message: str, dtype: Any):
        super().__init__(message)
        self.dtype = np.dtype(dtype)


def _max_row_norms(A: np.ndarray) -> list[float]:
    """Each head's largest row norm: ``A`` is ``(..., rows, heads, width)``; the maximum over rows and batch.

    >>> _max_row_norms(np.array([[[3.0, 4.0], [1.0, 0.0]], [[0.0, 1.0], [0.0, 2.0]]]))
    [5.0, 2.0]

    It is also the fused code's check that the queries and keys are finite (the squares of a NaN or inf entry
    reach the maximum; a square never cancels): NaN or inf in ``X``, ``Y``, ``W_Q`` or ``W_K`` reaches them
    (IEEE: ``0 * inf`` is NaN), and so does an overflow of the products.  A finite entry whose square overflows
    gives an infinite norm (the softmax is then shifted), not an error.

    >>> _max_row_norms(np.array([[[1.0, np.nan]]]))
    Traceback (most recent call last):
    ...
    mha_symbolic.numeric._NotFinite: the queries or keys contain NaN or inf
    >>> _max_row_norms(np.array([[[1e200, 0.0]]]))
    [inf]
    """
    with np.errstate(over="ignore", invalid="ignore"):
        squares = np.einsum("...hd,...hd->...h", A, A).reshape(-1, A.shape[-2]).max(axis=0)
    if not np.isfinite(squares).all() and not np.isfinite(A).all():
        raise _NotFinite("the queries or keys contain NaN or inf", A.dtype)
    return np.sqrt(squares).tolist()


def _finite_bound(T: np.ndarray) -> float:
    """The largest ``|t|`` of the finite entries of an additive term (``-inf`` entries only zero weights).

    >>> _finite_bound(np.array([[0.0, -np.inf], [-2.5, 1.0]]))
    2.5
    """
    finite = T[np.isfinite(T)]
    return float(np.abs(finite).max()) if finite.size else 0.0


def _unshifted_limit(dtype: Any) -> float:
    """The bound ``B`` on ``|scores|`` under which the softmax needs no shift by the row maximum:
    ``ln(largest float) / 4`` (22 for float32), so that ``exp`` of every score is a normal number
    far from overflow, and so are a row's sum and its product with ``V``; 0 (always shift) for other dtypes.

    >>> round(_unshifted_limit(np.float32), 2), round(_unshifted_limit(np.float64), 2), _unshifted_limit(np.float16)
    (22.18, 177.45, 0.0)
    """
    dtype = np.dtype(dtype)
    return float(np.log(np.finfo(dtype).max)) / 4 if dtype in (np.float32, np.float64) else 0.0


_FUSED_NAMESPACE: dict[str, Any] = {"result_type": np.result_type, "concatenate": np.concatenate, "stack": np.stack,
                    "matmul": np.matmul, "swapaxes": np.swapaxes, "empty": np.empty, "ones": np.ones,
                    "amax": np.amax, "subtract": np.subtract, "exp2": np.exp2, "reciprocal": np.reciprocal,
                                    "multiply": np.multiply, "add": np.add,
                    "_over_batches": _over_batches, "_causal_term": _causal_term,
                    "_max_row_norms": _max_row_norms, "_project": _project, "_log2_units": _log2_units,
                    "_finite_bound": _finite_bound,
                    "_unshifted_limit": _unshifted_limit, "_padding_term": _padding_term,
                    "_no_empty_rows": _no_empty_rows}
_fused_count = itertools.count()


def _head_pairs(model: MultiHeadAttention) -> list[tuple[int, int]]:
    """``(i, j)``, 0-based: query head ``i + 1`` reads key/value head ``j + 1``, read off the model's steps
    ``S_i = Q_i K_j^T`` (its key) and ``head_i = A_i V_j`` (its value, the same ``j``)."""
    pairs = []
    for i in model.head_indices:
        key = model.steps[f"S_{i}"].definition.args[-1].arg  # S_i = Q_i K_j^T
        value = model.steps[f"head_{i}"].definition.args[-1]  # head_i = A_i V_j
        if key.index != value.index:
            raise InputError(f"head {i} reads key head {key.index} but value head {value.index}; the fused code "
                             f"pairs them")
        pairs.append((int(i) - 1, int(key.index) - 1))
    return pairs


def _fused_source(model: MultiHeadAttention) -> str:
    """Python source of the fused function of a concrete ``model``: its output, every head at once.

    What it computes is read off the model: the argument list from its inputs, which key/value head each query
    head reads from its steps (:func:`_head_pairs`), and the convention, scale, causal mask and biases from its
    options.  Two places are single on purpose: the source of the keys and values (``KV``, which is ``X`` in
    self-attention) and the additive term on the scores before the softmax (``T``: the causal mask, or nothing).
    """
    D = model.dims
    h, d_k, d_v, d_model = (int(x) for x in (D.h, D.d_k, D.d_v, D.d_model))
    inputs = model.inputs
    g = len(inputs["W_K"])
    split = model.convention == "split"
    block = int(inputs["W_Q"][0].shape[0])  # the rows of W_Q^i: a head's block of X's columns (split)
    scale = float(model.scale)
    names = {key: [(s.as_symbol() if isinstance(s, HeadMatrix) else s).name
                   for s in (value if isinstance(value, list) else [value])] for key, value in inputs.items()}
    for name in (name for group in names.values() for name in group):
        if not name.isidentifier() or keyword.iskeyword(name):
            raise InputError(f"cannot generate code for an input named {name!r}")
    if not math.isfinite(scale):
        raise InputError(f"the scale {model.scale} is too large for floating point")
    params = ", ".join(name for group in names.values() for name in group)
    # the model as text (its symbols' names) appears only inside a string literal, printed by repr
    doc = f"The output of {model}, every head at once; generated by mha_symbolic.numeric from the model."
    # (description, code) of each additive term on the scores
    terms = [("the causal mask, -inf where key j > query i", "_causal_term(X.shape[-2], KV.shape[-2], dtype)")
             ] if model.causal else []
    if model.mask == "additive":
        terms.append(("the additive mask M", f"{names['M'][0]}.astype(dtype, copy=False)"))
    elif model.mask == "key_padding":
        terms.append(("the key-padding mask, -inf where m_j = 0", f"_padding_term({names['m'][0]}, dtype)"))
    source = names["Y"][0] if model.cross else "X"
    # the dtype follows X, Y and the weights; a mask is cast to it (a float64 M keeps float32 inputs float32)
    params_value = ", ".join(name for key, group in names.items() if key not in ("m", "M") for name in group)

    out = [f"def _fused_mha({params}):",
           f"    {doc!r}",
           f"    dtype = result_type({params_value})",
           "    # the source of the keys and values (" +
           ("cross-attention: Y)" if model.cross else "self-attention: X itself)"),
           f"    KV = {source}"]
    if terms:
        out += ["    # the additive term on the scores before the softmax: " + "; ".join(c for c, _ in terms),
                "    T = _log2_units(" + " + ".join(code for _, code in terms) + ")  # in units of log2, as the "
                "scores",
                "    _no_empty_rows(T, 'every head')  # a row with every key masked is an error, not nan",
                "    T_bound = _finite_bound(T)  # the largest |T| of its finite entries"]
    else:
        out += ["    # the additive term on the scores before the softmax: none",
                "    T_bound = 0.0"]
    out += [f"    limit = _unshifted_limit(dtype) * {LOG2E!r}  # scores (in units of log2) within +-limit need no "
            "shift",
            "",
            f"    def attend(X, KV, {'T, ' if terms else ''}out):  # one chunk of the batch"]
    if split:
        out += [f"        # head i reads its own block of {block} columns: X_blocks[..., i, :, :] (views)",
                f"        X_blocks = swapaxes(X.reshape(X.shape[:-1] + ({h}, {block})), -2, -3)",
                f"        KV_blocks = swapaxes(KV.reshape(KV.shape[:-1] + ({h}, {block})), -2, -3)"]
    for kind, source, heads, cols in (("Q", "X", h, d_k), ("K", "KV", g, d_k), ("V", "KV", g, d_v)):
        weights, factor = ", ".join(names[f"W_{kind}"]), (scale * LOG2E if kind == "Q" else 1.0)
        what = {"Q": "head's queries", "K": "key/value head's keys", "V": "key/value head's values"}[kind]
        if split:
            out += [f"        # every {what} in one batched product, into the columns of {kind}",
                    f"        W = stack([{weights}], dtype=dtype)",
                    *([f"        W *= {factor!r}  # the scale on the scores times log2(e), folded into the "
                       "queries: the softmax takes exp2"] if factor != 1 else []),
                    f"        {kind} = empty({source}.shape[:-1] + ({heads * cols},), dtype)",
                    f"        matmul({source}_blocks, W, out=swapaxes({kind}.reshape({kind}.shape[:-1] + "
                    f"({heads}, {cols})), -2, -3))"]
        else:
            out += [f"        # every {what} in one product: {source} [W_{kind}^1 ... W_{kind}^{heads}]",
                    f"        W = concatenate([{weights}], axis=-1, dtype=dtype)",
                    *([f"        W *= {factor!r}  # the scale on the scores times log2(e), folded into the "
                       "queries: the softmax takes exp2"] if factor != 1 else []),
                    f"        {kind} = _project({source}, W)  # (..., n, {heads} x {cols}): one product over the "
                    "batch too"]
        out.append("        del W")
        if model.bias:
            out += [f"        b = concatenate([{', '.join(names[f'b_{kind}'])}], dtype=dtype)",
                    *([f"        b *= {factor!r}"] if factor != 1 else []),
                    f"        {kind} += b"]
    if split:
        out.append("        del X_blocks, KV_blocks")
    out += ["        # per-head views, no copies: Q_[..., i, :] is the query of head i + 1",
            f"        Q_ = Q.reshape(Q.shape[:-1] + ({h}, {d_k}))",
            f"        K_ = K.reshape(K.shape[:-1] + ({g}, {d_k}))",
            f"        V_ = V.reshape(V.shape[:-1] + ({g}, {d_v}))"]
    if d_k == d_v:
        out += ["        # head i is written over Q_i, which is not read again: Concat is Q's buffer",
                "        Concat, heads = Q, Q_"]
    else:
        out += [f"        Concat = empty(Q.shape[:-1] + ({h * d_v},), dtype)",
                f"        heads = Concat.reshape(Concat.shape[:-1] + ({h}, {d_v}))"]
    pairs = ", ".join(f"({i}, {j})" for i, j in _head_pairs(model)) + ("," if h == 1 else "")
    out += ["        S = empty(Q.shape[:-1] + K.shape[-2:-1], dtype)  # one head's scores at a time, (..., n_q, n_kv)",
            "        r = empty(S.shape[:-1] + (1,), dtype)  # a row's maximum",
            f"        sums = empty(Q.shape[:-1] + ({h}, 1), dtype)  # each head's row sums",
            "        ones_kv = ones(K.shape[-2:-1] + (1,), dtype)",
            "        # Cauchy-Schwarz: |scores of head i| <= (largest row norm of Q_i) (largest of K_j) + T_bound;",
            "        # NaN or inf in X, Y, W_Q or W_K reaches Q or K: an error here (the caller names the input)",
            "        q_norms, k_norms = _max_row_norms(Q_), _max_row_norms(K_)",
            f"        for i, j in ({pairs}):  # query head i + 1 reads key/value head j + 1",
            "            matmul(Q_[..., i, :], swapaxes(K_[..., j, :], -1, -2), out=S)  # scaled: the scale is in Q",
            *(["            add(S, T, out=S)"] if terms else []),
            "            # the stable softmax in place: shifted by the row maximum unless exp provably stays in range",
            "            if not q_norms[i] * k_norms[j] + T_bound <= limit:",
            "                amax(S, axis=-1, keepdims=True, out=r)",
            "                subtract(S, r, out=S)",
            "            exp2(S, out=S)  # e^(s ln 2) = 2^s: the scores are in units of log2, exp2 is faster than exp",
            "            matmul(S, ones_kv, out=sums[..., i, :])",
            "            matmul(S, V_[..., j, :], out=heads[..., i, :])",
            "        # every head's rows over their sums at once, after the products with V (n d_v, not n n_kv)",
            "        reciprocal(sums, out=sums)",
            "        multiply(heads, sums, out=heads)",
            "        del S, Q_, K_, V_, V, heads, sums"]
    if g * d_k == d_model and not model.cross:  # K has the output's shape (self-attention: n_kv = n_q)
        out.append("        Output = _project(Concat, W_O, out=K if out is None else out)  # over K, no longer needed")
    else:
        out.append("        Output = _project(Concat, W_O, out=out)")
    if model.bias:
        out.append("        Output += b_O")
    out += ["        return Output",
            "",
            f"    return _over_batches(attend, {d_model}, dtype, X, KV{', T' if terms else ''})",
            ""]
    return "\n".join(out)


def _compile_fused(model: MultiHeadAttention) -> _Compiled:
    """:func:`_fused_source` compiled; the source is kept for ``inspect`` and tracebacks."""
    source = _fused_source(model)
    filename = f"<fused-mha-{next(_fused_count)}>"
    namespace = dict(_FUSED_NAMESPACE)
    exec(compile(source, filename, "exec"), namespace)  # noqa: S102 -- our own generated source
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    _, labels = _leaves(model)
    function: Callable[..., Any] = namespace["_fused_mha"]  # type: ignore[assignment]
    return _Compiled(function, tuple(labels), ())


class NumericMHA:
    """A compiled NumPy function of a :class:`MultiHeadAttention`; see the module docstring.

    Call it as ``f(X, W_Q, W_K, W_V, W_O, *, b_Q=None, b_K=None, b_V=None, b_O=None,
    steps=False)``.  ``X`` has shape ``(..., n, d_model)``; per-head weights are lists of
    ``h`` matrices or stacked arrays ``(h, rows, cols)`` (the TransformerLens layout);
    biases are ``(h, width)`` or lists of vectors, ``b_O`` a vector.  Inputs are validated
    first: shapes, head count, dtype (real numbers), masks, NaN and inf in the biases; NaN and inf in ``X``,
    ``Y`` and the weights reach the queries, keys or output, where the fused code finds them, and are reported by
    the same error (naming the input and the entry), which comes before any other error of the call, as if
    checked first.
    """

    def __init__(self, model: MultiHeadAttention):
        self.model = model
        self._cache: dict[tuple[Any, bool], tuple[MultiHeadAttention, _Compiled]] = {}

    @property
    def source(self) -> str:
        """The generated Python source (for a concrete model)."""
        model, compiled = self._compiled({}, keep_steps=False)
        return inspect.getsource(compiled.function)

    def _compiled(self, found: dict[str, int], keep_steps: bool) -> tuple[MultiHeadAttention, _Compiled]:
        D = self.model.dims
        tied = {r.lhs for r in D.relations}  # d_k = d_model / h: follows, is never read off the arrays
        dims = {k: v for k, v in found.items()
                if k == "kv_heads" or k != "n" and not getattr(D, k).is_Integer and getattr(D, k) not in tied}
        key = (tuple(sorted(dims.items())), keep_steps)
        if key not in self._cache:
            model = self.model.bind(**dims) if dims else self.model
            missing = [k for k in ("d_model", "h", "d_k", "d_v") if not getattr(model.dims, k).is_Integer]
            if missing:
                raise DimensionError(f"cannot compile with symbolic {missing}; pass X and the weights")
            self._cache[key] = (model, _compile(model, keep_steps))
        return self._cache[key]

    def __call__(self, X: Any, W_Q: Any, W_K: Any, W_V: Any, W_O: Any, *, Y: Any = None, mask: Any = None,
                 b_Q: Any = None, b_K: Any = None, b_V: Any = None, b_O: Any = None, steps: bool = False) -> Any:
        inputs = {"X": X, "W_Q": W_Q, "W_K": W_K, "W_V": W_V, "W_O": W_O, "b_Q": b_Q, "b_K": b_K, "b_V": b_V,
                  "b_O": b_O, "Y": Y, "mask": mask}
        # NaN and inf in X, Y and the weights are not looked for here: they reach Q, K (checked by the fused code,
        # with the norms it needs anyway) or the output (checked below). On either, and on any other error of the
        # call, a full validation comes first: an input holding NaN or inf is named, before any other error
        try:
            arrays = _validate(self.model, finite=steps, **inputs)
            found = {"d_model": arrays["X"].shape[-1], "h": len(arrays["W_Q"]),
                     "d_k": arrays["W_Q"][0].shape[1], "d_v": arrays["W_V"][0].shape[1]}
            if self.model.kv_heads is not None and not isinstance(self.model.kv_heads, int):
                found["kv_heads"] = len(arrays["W_K"])  # a symbolic g, read off the key weights
            model, compiled = self._compiled(found, keep_steps=steps)
            _check_shapes(model, arrays)
            args = _arguments(model, arrays)
            with np.errstate(over="ignore", invalid="ignore"):
                result = compiled.function(*args)
        except _NotFinite as error:
            _validate(self.model, finite=True, **inputs)  # the error naming the input and entry, if any
            raise _overflow(error.dtype) from None  # every input finite: the products overflowed
        except MHASymbolicError:
            if not steps:
                _validate(self.model, finite=True, **inputs)
            raise
        out = result[-1] if steps else result
        if not _all_finite(np.asarray(out)):
            if not steps:
                _validate(self.model, finite=True, **inputs)
            raise _overflow(np.asarray(out).dtype)
        if steps:
            return result[-1], dict(zip(compiled.step_names, result, strict=True))
        return result


def _overflow(dtype: Any) -> InputError:
    """The error of a call whose inputs are finite but whose scores (or products) are not."""
    hint = ", or use float64" if dtype != np.float64 else ""
    return InputError(f"the output is not finite: the scores overflowed the {dtype} range; rescale X or the "
                      f"weights{hint}")


def lambdify_model(model: MultiHeadAttention, backend: str = "numpy", entrywise: bool = False) -> Any:
    """Compile ``model`` to NumPy: matrix level (default) or entry by entry (small explicit models)."""
    if backend != "numpy":
        raise InputError(f"backend must be 'numpy', got {backend!r}")
    if entrywise:
        return EntrywiseMHA(model)
    return NumericMHA(model)


class EntrywiseMHA:
    """``lambdify`` of the exact explicit output matrix (symbols for every entry); small models only.

    Same call signature as :class:`NumericMHA` for one unbatched ``X`` of shape ``(n, d_model)``.
    """

    def __init__(self, model: MultiHeadAttention, max_terms: int | None = None):
        E = model.evaluate(max_terms=max_terms)
        self.model = E.model
        leaves: list[Any] = []
        for value in self.model.inputs.values():
            leaves += value if isinstance(value, list) else [value]
        rename = {s: (s.as_symbol() if isinstance(s, HeadMatrix) else s) for s in leaves}
        self.expr = E.output.xreplace(rename)
        self._leaves = leaves
        self.function = lambdify([rename[s] for s in leaves], self.expr, modules="numpy", docstring_limit=0)

    def __call__(self, X: Any, W_Q: Any, W_K: Any, W_V: Any, W_O: Any, **options: Any) -> np.ndarray:
        if self.model.cross or self.model.mask is not None:
            raise InputError("the entry-wise function covers self-attention without masks; use lambdify()")
        arrays = _validate(self.model, X=X, W_Q=W_Q, W_K=W_K, W_V=W_V, W_O=W_O, **options)
        if arrays["X"].ndim != 2:
            raise InputError("the entry-wise function takes one X of shape (n, d_model); use lambdify() to batch")
        _check_shapes(self.model, arrays)
        args = _arguments(self.model, arrays)
        # a per-head bias is validated as a vector; its symbol is a 1 x width row
        args = [np.reshape(a, tuple(int(x) for x in leaf.shape)) if np.ndim(a) == 1 else a
                for a, leaf in zip(args, self._leaves, strict=True)]
        return np.asarray(self.function(*args), dtype=float)


# ----- validation ---------------------------------------------------------------------------------
def _all_finite(arr: np.ndarray) -> bool:
    """Every entry finite?  For a contiguous float array, first the sum of squares (one BLAS dot, faster than
    ``isfinite``): NaN and inf reach it and a square never cancels, so a finite sum proves every entry finite; an
    infinite one (or another layout) is decided entry by entry -- squares of entries above about ``1e19`` in
    float32 overflow although the entries are finite.

    >>> _all_finite(np.array([1.0, -2.0])), _all_finite(np.array([1.0, np.nan])), _all_finite(np.array([3e200, 1.0]))
    (True, False, True)
    """
    if arr.dtype.kind == "f" and arr.flags.c_contiguous and arr.size:
        flat = arr.reshape(-1)
        with np.errstate(over="ignore", invalid="ignore"):
            if np.isfinite(np.dot(flat, flat)):
                return True
    return bool(np.isfinite(arr).all())


def _array(name: str, value: Any, finite: bool = True) -> np.ndarray:
    """``value`` as a float array named ``name`` in errors; ``finite``: NaN and inf are an error here (else the
    caller checks them later, where the data are in cache: the fused code)."""
    try:
        arr = np.asarray(value)
    except ValueError:
        raise InputError(f"{name} is ragged: its rows have different lengths") from None
    if arr.dtype.kind not in "iuf":
        raise InputError(f"{name} has dtype {arr.dtype}; expected real numbers (float32, float64 or integers)")
    if arr.dtype.kind in "iu":
        arr = arr.astype(np.float64)
    if finite and not _all_finite(arr):
        bad = tuple(int(i) for i in np.argwhere(~np.isfinite(arr))[0])
        raise InputError(f"{name} contains NaN or inf (first at index {bad})")
    return arr


def _mask_array(kind: str, value: Any) -> np.ndarray:
    """A key-padding mask ``(..., n_kv)`` of 0/1 or bools (1 = attend), as ``(..., 1, n_kv)``; an additive mask
    ``(..., n, n_kv)`` of finite numbers or ``-inf``."""
    if kind == "key_padding":
        try:
            arr = np.asarray(value)
        except ValueError:
            raise InputError("m (the key-padding mask) is ragged") from None
        if arr.dtype.kind not in "biuf" or arr.ndim < 1 or not np.isin(arr, (0, 1)).all():
            raise InputError("m (the key-padding mask) must hold 0/False (masked) or 1/True (attend) per key, "
                             f"shape (..., n_kv); got dtype {arr.dtype}, shape {arr.shape}")
        return (arr != 0)[..., None, :]
    try:
        arr = np.asarray(value) if not isinstance(value, np.ndarray) else value
    except ValueError:
        raise InputError("M (the additive mask) is ragged: its rows have different lengths") from None
    if arr.dtype.kind not in "iuf":
        raise InputError(f"M (the additive mask) has dtype {arr.dtype}; expected real numbers or -inf")
    if np.isnan(arr).any() or np.isposinf(arr).any():
        raise InputError("M (the additive mask) contains NaN or +inf; masked entries are -inf")
    return arr if arr.ndim >= 2 else arr[None, :]


def _heads(name: str, value: Any, vectors: bool = False, finite: bool = True) -> list[np.ndarray]:
    if isinstance(value, (list, tuple)):
        items = [_array(f"{name}[{k}]", v, finite) for k, v in enumerate(value, start=1)]
    else:
        arr = _array(name, value, finite)
        want = 2 if vectors else 3
        if arr.ndim != want:
            layout = "(h, width)" if vectors else "(h, rows, cols)"
            raise InputError(f"{name} must be a list of per-head arrays or one array of shape {layout}; "
                             f"got shape {arr.shape}")
        items = list(arr)
    if not items:
        raise InputError(f"{name} has no heads: give one {'vector' if vectors else 'matrix'} per head (a list of h "
                         f"arrays, or one array of shape {'(h, width)' if vectors else '(h, rows, cols)'})")
    for k, a in enumerate(items, start=1):
        if a.ndim != (1 if vectors else 2):
            raise InputError(f"{name}[{k}] must be {'a vector' if vectors else 'a matrix'}, got shape {a.shape}")
    return items


def _validate(model: MultiHeadAttention, finite: bool = True, **inputs: Any) -> dict[str, Any]:
    """The inputs as arrays, checked: kinds, head counts, masks, biases and (``finite``) NaN and inf in ``X``, ``Y``
    and the weights.  Without ``finite`` those are left to the queries, keys and output they reach
    (:func:`_max_row_norms`, the output check), and on failure the caller validates again with ``finite`` for the
    error naming the entry."""
    out: dict[str, Any] = {}
    X = _array("X", inputs["X"], finite)
    if X.ndim == 1:
        X = X[None, :]
    if X.ndim < 2:
        raise InputError(f"X must have shape (..., n, d_model), got {X.shape}")
    out["X"] = X
    Y, mask = inputs.get("Y"), inputs.get("mask")
    if Y is not None and not model.cross:
        raise InputError("Y given, but the model is self-attention (keys and values from X); build it with "
                         "MultiHeadAttention(..., cross=True) or n_kv=...")
    if model.cross:
        if Y is None:
            raise InputError("Y is missing: the model is cross-attention (keys and values from Y, shape "
                             "(..., n_kv, d_model))")
        out["Y"] = _array("Y", Y, finite)
        if out["Y"].ndim == 1:
            out["Y"] = out["Y"][None, :]
    if mask is not None and model.mask is None:
        raise InputError("mask given, but the model has none; build it with mask='key_padding' or 'additive'")
    if model.mask is not None:
        if mask is None:
            raise InputError(f"the mask is missing: the model was built with mask={model.mask!r}; pass mask=...")
        out[model.mask_matrix.name] = _mask_array(model.mask, mask)
    for key in ("W_Q", "W_K", "W_V"):
        out[key] = _heads(key, inputs[key], finite=finite)
    out["W_O"] = _array("W_O", inputs["W_O"], finite)
    given = [k for k in ("b_Q", "b_K", "b_V", "b_O") if inputs.get(k) is not None]
    if model.bias:
        for key in ("b_Q", "b_K", "b_V"):
            out[key] = _heads(key, inputs[key], vectors=True) if inputs.get(key) is not None else None
        out["b_O"] = _array("b_O", inputs["b_O"]) if inputs.get("b_O") is not None else None
    elif given:
        raise InputError(f"{', '.join(given)} given, but the model has no biases; build it with bias=True")
    h = model.dims.h
    counts = {key: len(out[key]) for key in ("W_Q", "W_K", "W_V")}
    expected = int(h) if h.is_Integer else counts["W_Q"]
    g = model.kv_heads
    if g is not None and not isinstance(g, int):  # a symbolic g is read off W_K, as a symbolic h off W_Q
        g = counts["W_K"]
        if expected % g:
            raise DimensionError(f"W_K and W_V: g={g} key/value heads must divide h={expected} query heads")
    for key, count in counts.items():
        if g is not None and key != "W_Q":
            if count != g:
                raise InputError(f"{key}: expected g={g} key/value head matrices, got {count}")
        elif count != expected:
            raise InputError(f"{key}: expected h={expected} per-head matrices, got {count}")
    return out


@functools.lru_cache(maxsize=64)
def _input_shapes(model: MultiHeadAttention) -> tuple[tuple[str, bool, tuple[Any, ...]], ...]:
    """``(key, per_head, shapes)`` of each of the model's inputs, in call order, read once per model (building
    ``model.inputs`` costs about as much as a small attention call)."""
    layout = []
    for key, value in model.inputs.items():
        syms = value if isinstance(value, list) else [value]
        data = key in ("X", "Y", "m", "M")  # sizes n, n_kv free: checked against each other, not the model
        shapes = tuple(None if data else tuple(int(x) for x in s.shape) for s in syms)
        layout.append((key, isinstance(value, list), shapes))
    return tuple(layout)


def _arguments(model: MultiHeadAttention, arrays: dict[str, Any]) -> list[Any]:
    """The validated arrays in the compiled function's argument order (per-head lists spread out)."""
    args: list[Any] = []
    for key, per_head, _ in _input_shapes(model):
        args += list(arrays[key]) if per_head else [arrays[key]]
    return args


def _check_shapes(model: MultiHeadAttention, arrays: dict[str, Any]) -> None:
    """Every input against the shapes of the (concrete) model, naming the argument."""
    D = model.dims
    X = arrays["X"]
    if X.ndim < 2 or 0 in X.shape:
        raise ShapeError(f"X has shape {X.shape}: it needs at least one token and one feature, "
                         f"(..., n, d_model) with n >= 1")
    if X.shape[-1] != D.d_model or (D.n.is_Integer and X.shape[-2] != D.n):
        n = int(D.n) if D.n.is_Integer else "n"
        raise ShapeError(f"X has shape {X.shape}; expected (..., {n}, {D.d_model}) = (..., n, d_model)")
    keys = int(model.n_kv) if model.n_kv.is_Integer else None
    if model.cross:
        Y = arrays["Y"]
        if Y.ndim < 2 or 0 in Y.shape or Y.shape[-1] != D.d_model or (keys is not None and Y.shape[-2] != keys):
            raise ShapeError(f"Y has shape {Y.shape}; expected (..., {keys or 'n_kv'}, {D.d_model}) = "
                             "(..., n_kv, d_model), at least one key")
        keys = Y.shape[-2]
    elif keys is None:
        keys = X.shape[-2]
    batched = [("X", X)] + ([("Y", arrays["Y"])] if model.cross else []) + \
        ([(model.mask_matrix.name, arrays[model.mask_matrix.name])] if model.mask is not None else [])
    shown = ", ".join(f"{name} {a.shape[:-2]}" for name, a in batched)
    try:
        lead = np.broadcast_shapes(*(a.shape[:-2] for _, a in batched))
    except ValueError:
        raise ShapeError(f"the leading (batch) axes do not broadcast together: {shown}") from None
    if 0 in lead:
        raise ShapeError(f"the leading (batch) axes broadcast to {lead}, an empty batch: {shown}")
    if model.mask is not None:
        name, given_mask = model.mask_matrix.name, arrays[model.mask_matrix.name]
        mask_shape = (1, keys) if name == "m" else (X.shape[-2], keys)
        if given_mask.shape[-2:] != mask_shape:
            shown = (f"(..., {keys}) = (..., n_kv)" if name == "m" else
                     f"(..., {mask_shape[0]}, {keys}) = (..., n, n_kv)")
            got = given_mask.shape[:-2] + given_mask.shape[-1:] if name == "m" else given_mask.shape
            raise ShapeError(f"the mask {name} has shape {got}; expected {shown}")
    for key, per_head, shapes in _input_shapes(model):
        if key in ("X", "Y", "m", "M"):  # checked above
            continue
        given = arrays[key]
        if given is None:
            raise InputError(f"{key} is missing: the model has biases (bias=True)")
        given = given if per_head else [given]
        if len(given) != len(shapes):
            raise InputError(f"{key}: expected h={len(shapes)} per-head arrays, got {len(given)}")
        for k, (want, arr) in enumerate(zip(shapes, given, strict=True), start=1):
            got = arr.shape if arr.ndim == 2 else (1, arr.shape[0]) if arr.ndim == 1 else arr.shape
            if got != want:
                label = f"{key}[{k}]" if per_head else key
                shown = f"({want[1]},)" if want[0] == 1 and key.startswith("b_") else shape_text((want[0], want[1]))
                raise ShapeError(f"{label} has shape {arr.shape}; expected {shown}")
