"""Numeric evaluation: the symbolic steps compiled to NumPy at the matrix level.

Explanation
===========

:func:`lambdify_model` hands the model's own step definitions to
:func:`sympy.lambdify` with a small printer (a :class:`~sympy.printing.numpy.NumPyPrinter`
subclass) so that

* products print as ``numpy.matmul`` (batched over leading axes, unlike ``.dot``),
  transposes as ``numpy.swapaxes(x, -1, -2)``, ``Concat`` as ``numpy.concatenate``;
* :class:`~mha_symbolic.softmax.Softmax` prints as a numerically stable softmax
  (subtract the row maximum; the causal mask sets ``j > i`` to ``-inf`` first, so
  masked weights are exactly 0);
* scalar factors print as Python floats, so float32 inputs stay float32;
* each step is computed once (the steps are passed as lambdify's ``cse``), and
  intermediates are deleted after their last use unless ``steps=True`` is asked for.

Only ``d_model``, ``h``, ``d_k`` and ``d_v`` are compiled in; the number of tokens ``n``
and any leading batch axes are free.

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
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
from sympy import MatAdd, MatMul, MatrixSymbol, OneMatrix, lambdify
from sympy.printing.numpy import NumPyPrinter

from ._text import shape_text
from .concat import Concat
from .errors import DimensionError, InputError, MaskError, ShapeError
from .heads import HeadMatrix
from .softmax import Softmax

if TYPE_CHECKING:
    from .attention import MultiHeadAttention

__all__ = ["stable_softmax", "lambdify_model", "NumericMHA"]


def stable_softmax(x: np.ndarray, causal: bool = False, overwrite: bool = False, keep: Any = None) -> np.ndarray:
    """Row-wise softmax over the last axis, computed as ``exp(x - max) / sum``; dtype kept.

    ``overwrite=True`` reuses ``x``'s buffer (the generated code does so for scores it
    no longer needs).  ``keep`` is a key-padding mask broadcast against ``x`` (0/False: masked).  Entries
    ``-inf`` (an additive mask) get weight 0; a row with no key left raises
    :class:`~mha_symbolic.errors.MaskError` instead of returning ``nan``.

    >>> stable_softmax(np.array([[1e4, 0.0]])).tolist()
    [[1.0, 0.0]]
    >>> stable_softmax(np.zeros((2, 2)), causal=True).tolist()
    [[1.0, 0.0], [0.5, 0.5]]
    >>> x = np.zeros((1, 2)); y = stable_softmax(x, overwrite=True); y is x
    True
    >>> stable_softmax(np.zeros((1, 3)), keep=np.array([[1, 0, 1]])).tolist()
    [[0.5, 0.0, 0.5]]
    """
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
        where = tuple(int(i) for i in np.argwhere(np.isneginf(top[..., 0]))[0])
        raise MaskError(f"softmax of a fully masked row: row {where[-1] + 1}"
                        f"{f' of batch entry {where[:-1]}' if len(where) > 1 else ''} has no key left to attend to")
    if overwrite:
        z = x
        z -= top
    else:
        z = x - top
    np.exp(z, out=z)
    z /= z.sum(axis=-1, keepdims=True)
    return z


class _MatrixNumPyPrinter(NumPyPrinter):
    """NumPy printer for whole-matrix (batched) code.

    ``consumable`` names step results used exactly once and not returned: a scaling or
    softmax of such a matrix may overwrite its buffer (saves an allocation per step).
    """

    def __init__(self, settings: dict[str, Any] | None = None, consumable: frozenset[Any] = frozenset()):
        super().__init__(settings)
        self.consumable = consumable

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
        x, factor = self._print(expr.scores), float(expr.factor)
        if expr.scores in self.consumable:
            return f"{self._np('multiply')}({x}, {factor!r}, out={x})"
        return f"{factor!r} * {x}"

    def _print_Softmax(self, expr: Softmax) -> str:
        overwrite = ", overwrite=True" if expr.arg in self.consumable else ""
        keep = f", keep={self._print(expr.keep)}" if expr.keep is not None else ""
        return f"_stable_softmax({self._print(expr.arg)}, {expr.causal}{overwrite}{keep})"

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


def _compile(model: MultiHeadAttention, keep_steps: bool) -> _Compiled:
    steps = list(model.steps.values())
    inputs = model.inputs
    leaves: list[Any] = []
    arg_names: list[str] = []
    for key, value in inputs.items():
        for k, sym in enumerate(value if isinstance(value, list) else [value], start=1):
            leaves.append(sym)
            arg_names.append(f"{key}[{k}]" if isinstance(value, list) else key)
    rename = {s: (s.as_symbol() if isinstance(s, HeadMatrix) else s) for s in leaves}
    for step in steps:
        rename[step.symbol] = MatrixSymbol(_identifier(step.name), *step.symbol.shape)
    definitions = [(rename[s.symbol], s.definition.xreplace(rename)) for s in steps]

    last_use: dict[Any, int] = {}
    uses: dict[Any, int] = {}
    for k, (_, rhs) in enumerate(definitions):
        for sym in rhs.atoms(MatrixSymbol):
            last_use[sym] = k
            uses[sym] = uses.get(sym, 0) + rhs.count(sym)
    results = {lhs for lhs, _ in definitions}
    consumable = frozenset() if keep_steps else frozenset(s for s, c in uses.items() if c == 1 and s in results)
    cses: list[tuple[Any, Any]] = []
    for k, (lhs, rhs) in enumerate(definitions):
        cses.append((lhs, rhs))
        if not keep_steps:
            cses += [(s, None) for s, at in last_use.items() if at == k and s in dict(definitions)]
    result = [lhs for lhs, _ in definitions] if keep_steps else definitions[-1][0]
    fn = lambdify([rename[s] for s in leaves], result, modules=[{"_stable_softmax": stable_softmax}, "numpy"],
                  printer=_MatrixNumPyPrinter({"fully_qualified_modules": False, "inline": True,
                                               "allow_unknown_functions": False}, consumable),
                  cse=lambda expr: (cses, result), docstring_limit=0)
    return _Compiled(fn, tuple(arg_names), tuple(s.name for s in steps))


class NumericMHA:
    """A compiled NumPy function of a :class:`MultiHeadAttention`; see the module docstring.

    Call it as ``f(X, W_Q, W_K, W_V, W_O, *, b_Q=None, b_K=None, b_V=None, b_O=None,
    steps=False)``.  ``X`` has shape ``(..., n, d_model)``; per-head weights are lists of
    ``h`` matrices or stacked arrays ``(h, rows, cols)`` (the TransformerLens layout);
    biases are ``(h, width)`` or lists of vectors, ``b_O`` a vector.  Inputs are validated
    first: shapes, head count, dtype (real numbers), NaN and inf.
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
                if k != "n" and not getattr(D, k).is_Integer and getattr(D, k) not in tied}
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
        arrays = _validate(self.model, X=X, W_Q=W_Q, W_K=W_K, W_V=W_V, W_O=W_O, b_Q=b_Q, b_K=b_K, b_V=b_V,
                           b_O=b_O, Y=Y, mask=mask)
        found = {"d_model": arrays["X"].shape[-1], "h": len(arrays["W_Q"]),
                 "d_k": arrays["W_Q"][0].shape[1], "d_v": arrays["W_V"][0].shape[1]}
        model, compiled = self._compiled(found, keep_steps=steps)
        _check_shapes(model, arrays)
        args = []
        for key, value in model.inputs.items():
            args += list(arrays[key]) if isinstance(value, list) else [arrays[key]]
        with np.errstate(over="ignore", invalid="ignore"):
            result = compiled.function(*args)
        out = result[-1] if steps else result
        if not np.isfinite(out).all():
            dtype = np.asarray(out).dtype
            hint = ", or use float64" if dtype != np.float64 else ""
            raise InputError(f"the output is not finite: the scores overflowed the {dtype} range; rescale X or the "
                             f"weights{hint}")
        if steps:
            return result[-1], dict(zip(compiled.step_names, result, strict=True))
        return result


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
        args = []
        for key, value in self.model.inputs.items():
            args += list(arrays[key]) if isinstance(value, list) else [arrays[key]]
        # a per-head bias is validated as a vector; its symbol is a 1 x width row
        args = [np.reshape(a, tuple(int(x) for x in leaf.shape)) if np.ndim(a) == 1 else a
                for a, leaf in zip(args, self._leaves, strict=True)]
        return np.asarray(self.function(*args), dtype=float)


# ----- validation ---------------------------------------------------------------------------------
def _array(name: str, value: Any) -> np.ndarray:
    try:
        arr = np.asarray(value)
    except ValueError:
        raise InputError(f"{name} is ragged: its rows have different lengths") from None
    if arr.dtype.kind not in "iuf":
        raise InputError(f"{name} has dtype {arr.dtype}; expected real numbers (float32, float64 or integers)")
    if arr.dtype.kind in "iu":
        arr = arr.astype(np.float64)
    if not np.isfinite(arr).all():
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
    arr = np.asarray(value) if not isinstance(value, np.ndarray) else value
    if arr.dtype.kind not in "iuf":
        raise InputError(f"M (the additive mask) has dtype {arr.dtype}; expected real numbers or -inf")
    if np.isnan(arr).any() or np.isposinf(arr).any():
        raise InputError("M (the additive mask) contains NaN or +inf; masked entries are -inf")
    return arr if arr.ndim >= 2 else arr[None, :]


def _heads(name: str, value: Any, vectors: bool = False) -> list[np.ndarray]:
    if isinstance(value, (list, tuple)):
        items = [_array(f"{name}[{k}]", v) for k, v in enumerate(value, start=1)]
    else:
        arr = _array(name, value)
        want = 2 if vectors else 3
        if arr.ndim != want:
            layout = "(h, width)" if vectors else "(h, rows, cols)"
            raise InputError(f"{name} must be a list of per-head arrays or one array of shape {layout}; "
                             f"got shape {arr.shape}")
        items = list(arr)
    for k, a in enumerate(items, start=1):
        if a.ndim != (1 if vectors else 2):
            raise InputError(f"{name}[{k}] must be {'a vector' if vectors else 'a matrix'}, got shape {a.shape}")
    return items


def _validate(model: MultiHeadAttention, **inputs: Any) -> dict[str, Any]:
    out: dict[str, Any] = {}
    X = _array("X", inputs["X"])
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
        out["Y"] = _array("Y", Y)
        if out["Y"].ndim == 1:
            out["Y"] = out["Y"][None, :]
    if mask is not None and model.mask is None:
        raise InputError("mask given, but the model has none; build it with mask='key_padding' or 'additive'")
    if model.mask is not None:
        if mask is None:
            raise InputError(f"the mask is missing: the model was built with mask={model.mask!r}; pass mask=...")
        out[model.mask_matrix.name] = _mask_array(model.mask, mask)
    for key in ("W_Q", "W_K", "W_V"):
        out[key] = _heads(key, inputs[key])
    out["W_O"] = _array("W_O", inputs["W_O"])
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
    for key, count in counts.items():
        if model.kv_heads is not None and key != "W_Q":
            if count != model.kv_heads:
                raise InputError(f"{key}: expected g={model.kv_heads} key/value head matrices, got {count}")
        elif count != expected:
            raise InputError(f"{key}: expected h={expected} per-head matrices, got {count}")
    return out


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
    if model.mask is not None:
        name, given_mask = model.mask_matrix.name, arrays[model.mask_matrix.name]
        mask_shape = (1, keys) if name == "m" else (X.shape[-2], keys)
        if given_mask.shape[-2:] != mask_shape:
            shown = (f"(..., {keys}) = (..., n_kv)" if name == "m" else
                     f"(..., {mask_shape[0]}, {keys}) = (..., n, n_kv)")
            got = given_mask.shape[:-2] + given_mask.shape[-1:] if name == "m" else given_mask.shape
            raise ShapeError(f"the mask {name} has shape {got}; expected {shown}")
    for key, value in model.inputs.items():
        if key in ("X", "Y", "m", "M"):
            continue
        syms = value if isinstance(value, list) else [value]
        given = arrays[key]
        if given is None:
            raise InputError(f"{key} is missing: the model has biases (bias=True)")
        given = given if isinstance(value, list) else [given]
        if len(given) != len(syms):
            raise InputError(f"{key}: expected h={len(syms)} per-head arrays, got {len(given)}")
        for k, (sym, arr) in enumerate(zip(syms, given, strict=True), start=1):
            want = tuple(int(x) for x in sym.shape)
            got = arr.shape if arr.ndim == 2 else (1, arr.shape[0]) if arr.ndim == 1 else arr.shape
            if got != want:
                label = f"{key}[{k}]" if isinstance(value, list) else key
                shown = f"({want[1]},)" if want[0] == 1 and key.startswith("b_") else shape_text((want[0], want[1]))
                raise ShapeError(f"{label} has shape {arr.shape}; expected {shown}")
