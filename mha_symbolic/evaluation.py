"""Explicit, exact evaluation of every step of a :class:`MultiHeadAttention`.

Explanation
===========

``evaluate(model, X=..., W_Q=[...], ...)`` walks the model's steps in order and
computes each one from the explicit matrices of the earlier steps, with the same
strict shape rules as the symbolic model: a product whose inner dimensions differ
raises :class:`~mha_symbolic.errors.ShapeError` naming the step and both shapes, and
every result is checked against the shape the model declares.

* Integers and decimals become exact rationals; ``sqrt`` and ``exp`` stay exact.
* Missing inputs become matrices of symbols (``X[0, 1]``, ``W_Q^1[0, 0]``), so small
  models can be written out entry by entry.
* Dimensions left symbolic in the model are read off the inputs (``X`` gives ``n``
  and ``d_model``, the weight lists give ``h``).
* Exact evaluation builds expressions whose size grows like ``n^3 h d_v d_model``;
  above ``max_terms`` (default :data:`DEFAULT_MAX_TERMS`) it is refused at once with
  :class:`~mha_symbolic.errors.SizeLimitError` instead of hanging.

Examples
========

>>> from mha_symbolic import MultiHeadAttention
>>> M = MultiHeadAttention(convention="split")
>>> I = [[1, 0], [0, 1]]
>>> E = M.evaluate(X=[[1, 0, 1, 0], [0, 1, 0, 1]], W_Q=[I, I], W_K=[I, I], W_V=[I, I],
...                W_O=[[1, 0, 0, 0], [0, 1, 0, 0], [0, 0, 1, 0], [0, 0, 0, 1]])
>>> E["S'_1"]
Matrix([
[sqrt(2)/2,         0],
[        0, sqrt(2)/2]])
>>> E["A_1"][0, 0]
exp(sqrt(2)/2)/(1 + exp(sqrt(2)/2))
>>> E.numeric("A_1").round(4).tolist()
[[0.6698, 0.3302], [0.3302, 0.6698]]
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
from sympy import Identity, ImmutableMatrix, MatAdd, MatMul, Matrix, OneMatrix, Transpose, ZeroMatrix
from sympy.matrices.expressions.slice import MatrixSlice

from ._mapping import StepMapping
from ._shape import check_matmul, check_result
from ._text import shape_text
from .concat import Concat
from .dims import Dims
from .errors import (
    DimensionError,
    InputError,
    MaskError,
    MHASymbolicError,
    ShapeError,
    SizeLimitError,
    require,
    require_int,
)
from .scaling import ScaledScores
from .softmax import Softmax, explicit_softmax
from .values import to_head_list, to_head_vectors, to_mask, to_matrix

if TYPE_CHECKING:
    from .attention import MultiHeadAttention

__all__ = ["Evaluation", "evaluate", "estimate_terms", "DEFAULT_MAX_TERMS"]

#: Largest estimated expression size (see :func:`estimate_terms`) evaluated exactly by default.
DEFAULT_MAX_TERMS = 2_000_000


class Evaluation(StepMapping):
    """Explicit matrices of every step (``name -> ImmutableMatrix``), plus the model and inputs."""

    def __init__(self, model: MultiHeadAttention, inputs: dict[str, Any], values: dict[str, ImmutableMatrix]):
        super().__init__(values)
        self.model = model
        self.inputs = inputs
        self._values = values

    @property
    def output(self) -> ImmutableMatrix:
        """The explicit ``Output`` matrix."""
        return self._values["Output"]

    def numeric(self, name: str = "Output", digits: int = 30) -> np.ndarray:
        """The step's matrix as float64, evaluated at ``digits`` significant digits first."""
        require(name, str, "Evaluation.numeric's name", "a step name")
        require_int(digits, "Evaluation.numeric's digits", 1, 10_000)
        if name not in self._values:
            raise InputError(f"Evaluation.numeric: no step {name!r}; steps are {list(self._values)}")
        M = self[name]
        if M.free_symbols:
            raise InputError(f"step {name} has symbolic entries {sorted(map(str, M.free_symbols))[:3]}...; "
                             "give numbers for every input to get floats")
        return np.array(M.evalf(digits).tolist(), dtype=float)

    def __repr__(self) -> str:
        return f"Evaluation({self.model}, steps={list(self._values)})"

    def _repr_latex_(self) -> str:
        from .latex import latex

        lines = []
        for step in self.model.steps.values():
            M = self._values[step.name]
            exact = latex(M)
            if len(exact) <= 400 or M.free_symbols:
                lines.append(f"{latex(step.symbol)} &= {exact}")
            else:  # rounded to 4 places: written with \approx, never =
                lines.append(f"{latex(step.symbol)} &\\approx {latex(M, decimals=4)}")
        return r"$\displaystyle \begin{aligned}%s\end{aligned}$" % r" \\ ".join(lines)


def estimate_terms(dims: Any, symbolic_entries: bool = False, n_kv: Any = None) -> int:
    """Estimated size of the exact ``Output`` expression: ``n n_kv^2 h d_v (d_model + 1)`` (``n_kv = n`` in
    self-attention).

    Each softmax entry carries a denominator of ``n_kv`` exponentials, each head entry
    sums ``n_kv`` of them, and each output entry sums ``h d_v`` head entries.  Symbolic
    entries multiply this by ``d_model d_k`` (the size of one score polynomial).

    >>> from mha_symbolic.dims import Dims
    >>> estimate_terms(Dims(8, 4, 2))
    10240
    """
    require(dims, Dims, "estimate_terms's dims", "a Dims (model.dims)")
    n, dm, h, dk, dv = (int(x) for x in dims.args[:5])
    keys = n if n_kv is None else int(n_kv)
    terms = n * keys**2 * h * dv * (dm + 1)
    return terms * dm * dk if symbolic_entries else terms


def _announced(value: Any) -> tuple[int, ...] | None:
    """The shape an input announces without converting it (an array's ``shape``, a list's lengths)."""
    shape = getattr(value, "shape", None)
    if isinstance(shape, tuple) and all(isinstance(s, (int, np.integer)) for s in shape):
        return tuple(int(s) for s in shape)
    if isinstance(value, (list, tuple)) and value:
        inner = _announced(value[0]) if isinstance(value[0], (list, tuple)) or hasattr(value[0], "shape") else ()
        return (len(value), *inner) if inner is not None else None
    return None


def _too_many_terms(n: Any, d_model: Any, h: Any, size: int, limit: int) -> SizeLimitError:
    return SizeLimitError(
        f"exact evaluation of n={n}, d_model={d_model}, h={h} would build about {size:,} terms "
        f"(limit {limit:,}); use numeric evaluation instead, or pass max_terms={size} to insist")


def _refuse_early(model: MultiHeadAttention, X: Any, W_Q: Any, symbolic: bool, limit: int, Y: Any = None) -> None:
    """The size guard before any input is converted, from the sizes the model fixes and the shapes the inputs
    announce: a 1000 x 512 X is refused at once, not after converting its 512,000 entries (the same estimate
    and message as the guard after conversion)."""
    D = model.dims
    sizes = {k: int(v) for k, v in D.as_dict().items() if v.is_Integer}
    x_shape, w_shape = _announced(X), _announced(W_Q)
    if x_shape is None or len(x_shape) != 2:  # nothing large to convert: the guard after conversion decides
        return
    sizes.setdefault("n", x_shape[0])
    sizes.setdefault("d_model", x_shape[1])
    if w_shape is not None and len(w_shape) == 3:
        sizes.setdefault("h", w_shape[0])
    if not {"n", "d_model", "h"} <= sizes.keys() or sizes["h"] < 1 or sizes["d_model"] % sizes["h"]:
        return
    dk = sizes.get("d_k", sizes["d_model"] // sizes["h"])
    try:
        dims = Dims(sizes["n"], sizes["d_model"], sizes["h"], d_k=dk, d_v=sizes.get("d_v", dk))
    except MHASymbolicError:
        return  # the inputs contradict the model: the checks after conversion say how
    keys = model.n_kv if model.n_kv.is_Integer else (_announced(Y) or (None,))[0] if model.cross else None
    size = estimate_terms(dims, symbolic_entries=symbolic, n_kv=keys)
    if size > limit:
        raise _too_many_terms(dims.n, dims.d_model, dims.h, size, limit)


def _infer(model: MultiHeadAttention, X: Any, heads: dict[str, list[ImmutableMatrix] | None],
           Y: Any = None) -> dict[str, int]:
    """Values for the model's symbolic dimensions, read off the inputs."""
    D = model.dims
    tied = {r.lhs for r in D.relations}
    found: dict[str, int] = {}
    if Y is not None and not model.n_kv.is_Integer:
        found["n_kv"] = Y.rows
    if X is not None:
        if not D.n.is_Integer:
            found["n"] = X.rows
        if not D.d_model.is_Integer:
            found["d_model"] = X.cols
    lists = [v for v in heads.values() if v is not None]
    if lists and not D.h.is_Integer:
        found["h"] = len(lists[0])
    for name, key in (("d_k", "W_Q"), ("d_k", "W_K"), ("d_v", "W_V")):
        mats = [m for m in heads[key] or [] if m is not None]
        if mats and not getattr(D, name).is_Integer and getattr(D, name) not in tied and name not in found:
            found[name] = mats[0].cols
    return found


def evaluate(model: MultiHeadAttention, X: Any = None, W_Q: Any = None, W_K: Any = None, W_V: Any = None,
             W_O: Any = None, *, Y: Any = None, mask: Any = None, b_Q: Any = None, b_K: Any = None,
             b_V: Any = None, b_O: Any = None, exact: bool = True, max_terms: int | None = None,
             given_steps: dict[str, Any] | None = None) -> Evaluation:
    """Evaluate every step of ``model`` exactly; see the module docstring.

    Parameters
    ==========

    X : matrix (``n x d_model``; a single vector is one token)
    W_Q, W_K, W_V : list of ``h`` per-head matrices, or an array of shape ``(h, rows, cols)``
    W_O : matrix (``h d_v x d_model``)
    Y : the key/value input of cross-attention (``n_kv x d_model``)
    mask : the key-padding row ``m`` (0/1 or bools, 1 = attend) or the additive matrix ``M`` (numbers or
        ``-inf``) of a model built with ``mask=``; a row left with no key is a
        :class:`~mha_symbolic.errors.MaskError` naming the step
    b_Q, b_K, b_V, b_O : biases of a model built with ``bias=True`` (per-head vectors; one vector)
    exact : convert floats to the rationals they denote (default) or keep ``Float``
    max_terms : size limit (see :func:`estimate_terms`); ``None`` means the default
    given_steps : ``{step name: matrix}`` -- values taken as given (e.g. a document's assumed
        head output) instead of computed; later steps are computed from them
    """
    from .attention import MultiHeadAttention

    require(model, MultiHeadAttention, "evaluate's model", "a MultiHeadAttention")
    if max_terms is not None and (isinstance(max_terms, bool) or not isinstance(max_terms, (int, np.integer))
                                  or max_terms < 1):
        raise InputError(f"max_terms must be a positive integer or None, got {max_terms!r}")
    limit = DEFAULT_MAX_TERMS if max_terms is None else int(max_terms)
    unstated = (any(v is None for v in (X, W_Q, W_K, W_V, W_O))
                or (model.bias and any(b is None for b in (b_Q, b_K, b_V, b_O)))
                or any(isinstance(v, (list, tuple)) and any(m is None for m in v) for v in (W_Q, W_K, W_V)))
    _refuse_early(model, X, W_Q, unstated, limit, Y)
    h = int(model.dims.h) if model.dims.h.is_Integer else None
    Xm = to_matrix(X, "X", exact=exact, vector_as_row=True) if X is not None else None
    if Y is not None and not model.cross:
        raise InputError("Y given, but the model is self-attention (keys and values from X); build it with "
                         "MultiHeadAttention(..., cross=True) or n_kv=...")
    if mask is not None and model.mask is None:
        raise InputError("mask given, but the model has none; build it with mask='key_padding' or 'additive'")
    Ym = to_matrix(Y, "Y", exact=exact, vector_as_row=True) if Y is not None else None
    mask_name = model.mask_matrix.name if model.mask_matrix is not None else ""
    Mm = to_mask(mask, mask_name, str(model.mask), exact=exact) if mask is not None else None
    heads: dict[str, list[ImmutableMatrix] | None] = {}
    g = model.kv_heads  # grouped-query attention: g key/value heads (a symbolic g is read off W_K)
    kv_given = W_K if W_K is not None else W_V
    g = g if g is None or isinstance(g, int) else (len(kv_given) if isinstance(kv_given, (list, tuple)) or
                                                   getattr(kv_given, "ndim", 0) == 3 else None)
    for key, value in (("W_Q", W_Q), ("W_K", W_K), ("W_V", W_V)):
        count = g if g is not None and key != "W_Q" else h
        heads[key] = to_head_list(value, key, count, exact=exact) if value is not None else None
        if heads[key] is not None and h is None:
            h = len(heads[key] or [])
    Wo = to_matrix(W_O, "W_O", exact=exact) if W_O is not None else None
    given_biases = {k: v for k, v in (("b_Q", b_Q), ("b_K", b_K), ("b_V", b_V), ("b_O", b_O)) if v is not None}
    if given_biases and not model.bias:
        raise InputError(f"{', '.join(given_biases)} given, but the model has no biases; "
                         "build it with MultiHeadAttention(..., bias=True)")
    biases: dict[str, Any] = {k: to_head_vectors(v, k, g if g is not None and k != "b_Q" else h, exact=exact)
                              for k, v in given_biases.items() if k != "b_O"}
    if b_O is not None:
        biases["b_O"] = to_matrix(b_O, "b_O", exact=exact, vector_as_row=True)

    found = _infer(model, Xm, heads, Ym)
    if model.kv_heads is not None and not isinstance(model.kv_heads, int) and g is not None:
        found["kv_heads"] = g
    concrete = model.bind(**found) if found else model
    D = concrete.dims
    if not D.is_concrete or not concrete.n_kv.is_Integer:
        missing = [k for k, v in D.as_dict().items() if not v.is_Integer] + \
            (["n_kv"] if concrete.cross and not concrete.n_kv.is_Integer else [])
        raise DimensionError(
            f"cannot evaluate with symbolic dimensions {missing}: build the model with concrete sizes "
            "or pass X and the per-head weights"
        )
    if Xm is not None and Xm.shape != (D.n, D.d_model):
        raise ShapeError(f"X has shape {shape_text(Xm.shape)}; the model expects (n, d_model) = "
                         f"{shape_text((D.n, D.d_model))}")
    if Ym is not None and Ym.shape != (concrete.n_kv, D.d_model):
        raise ShapeError(f"Y has shape {shape_text(Ym.shape)}; the model expects (n_kv, d_model) = "
                         f"{shape_text((concrete.n_kv, D.d_model))}")
    if Mm is not None and Mm.shape != concrete.mask_matrix.shape:
        raise ShapeError(f"the mask {mask_name} has shape {shape_text(Mm.shape)}; the model expects "
                         f"{shape_text(concrete.mask_matrix.shape)}" + (" = (1, n_kv)" if mask_name == "m" else
                                                                        " = (n, n_kv)"))

    inputs = concrete.inputs
    symbolic = (any(v is None for v in (Xm, Wo, *heads.values())) or (model.bias and len(biases) < 4)
                or any(m is None for v in heads.values() if v for m in v) or (model.cross and Ym is None))
    size = estimate_terms(D, symbolic_entries=symbolic, n_kv=int(concrete.n_kv))
    if size > limit:
        raise _too_many_terms(D.n, D.d_model, D.h, size, limit)

    values: dict[Any, ImmutableMatrix] = {inputs["X"]: Xm if Xm is not None else inputs["X"].as_explicit(),
                                          inputs["W_O"]: Wo if Wo is not None else inputs["W_O"].as_explicit()}
    for key in ("W_Q", "W_K", "W_V"):
        given = heads[key]
        for k, sym in enumerate(inputs[key]):
            values[sym] = given[k] if given is not None and given[k] is not None else sym.as_explicit()
    if model.bias:
        for key in ("b_Q", "b_K", "b_V"):
            for k, sym in enumerate(inputs[key]):
                values[sym] = biases[key][k] if key in biases else sym.as_explicit()
        values[inputs["b_O"]] = biases.get("b_O", inputs["b_O"].as_explicit())
    if model.cross:
        values[inputs["Y"]] = Ym if Ym is not None else inputs["Y"].as_explicit()
    if concrete.mask_matrix is not None:
        if Mm is None:
            raise InputError(f"the mask {mask_name} is missing: the model was built with mask={model.mask!r}; pass "
                             f"mask=...")
        values[concrete.mask_matrix] = Mm

    overrides = {name: to_matrix(v, name, exact=exact) for name, v in (given_steps or {}).items()}
    unknown = set(overrides) - set(concrete.steps)
    if unknown:
        raise InputError(f"given_steps names no step of the model: {sorted(unknown)}; steps are "
                         f"{list(concrete.steps)}")
    results: dict[str, ImmutableMatrix] = {}
    for step in concrete.steps.values():
        if step.name in overrides:
            value = overrides[step.name]
        else:
            value = _explicit(step.definition, values, step.text)
        check_result(step.text, value.shape, step.shape)
        values[step.symbol] = results[step.name] = value
    used = {key: [values[s] for s in sym] if isinstance(sym, list) else values[sym] for key, sym in inputs.items()}
    return Evaluation(concrete, used, results)


def _explicit(e: Any, values: dict[Any, ImmutableMatrix], step: str) -> ImmutableMatrix:
    """Explicit matrix of ``e`` given explicit ``values`` for its matrix symbols."""
    if e in values:
        return values[e]
    if isinstance(e, MatMul):
        coeff, factors = e.as_coeff_matrices()
        acc: Any = None
        for f in factors:
            v = _explicit(f, values, step)
            if acc is not None:
                check_matmul(step, acc.shape, v.shape)
                v = acc * v
            acc = v
        return ImmutableMatrix(acc if coeff == 1 else acc.applyfunc(lambda x: coeff * x))
    if isinstance(e, (OneMatrix, ZeroMatrix, Identity)):
        return ImmutableMatrix(e.as_explicit())
    if isinstance(e, Transpose):
        return _explicit(e.arg, values, step).T
    if isinstance(e, ScaledScores):
        factor = e.factor
        return ImmutableMatrix(_explicit(e.scores, values, step).applyfunc(lambda x: factor * x))
    if isinstance(e, Softmax):
        keep = _explicit(e.keep, values, step) if e.keep is not None else None
        try:
            return explicit_softmax(_explicit(e.arg, values, step), e.causal, keep)
        except MaskError as error:
            raise MaskError(f"step {step}: {error}") from None
    if isinstance(e, Concat):
        blocks = [_explicit(b, values, step) for b in e.blocks]
        for k, b in enumerate(blocks[1:], start=2):
            if b.rows != blocks[0].rows:
                raise ShapeError(f"step {step}: block 1 has shape {shape_text(blocks[0].shape)} but block {k} "
                                 f"has {shape_text(b.shape)} — row counts differ")
        return ImmutableMatrix(Matrix.hstack(*blocks))
    if isinstance(e, MatrixSlice):
        parent = _explicit(e.parent, values, step)
        (r0, r1, rs), (c0, c1, cs) = ((int(a) for a in t) for t in (e.rowslice, e.colslice))
        if r1 > parent.rows or c1 > parent.cols:
            raise ShapeError(f"step {step}: slice rows {r0}:{r1}, columns {c0}:{c1} of a "
                             f"{shape_text(parent.shape)} matrix")
        return ImmutableMatrix(parent[r0:r1:rs, c0:c1:cs])
    if isinstance(e, MatAdd):
        terms = [_explicit(t, values, step) for t in e.args]
        for t in terms[1:]:
            if t.shape != terms[0].shape:
                raise ShapeError(f"step {step}: cannot add {shape_text(terms[0].shape)} and {shape_text(t.shape)}")
        return ImmutableMatrix(sum(terms[1:], terms[0]))
    raise InputError(f"step {step}: cannot evaluate {type(e).__name__} {e}")
