r"""Multi-head attention, built symbolically step by step, in two conventions.

Explanation
===========

``MultiHeadAttention(n=n, d_model=d_model, h=h)`` holds the dimensions (symbols or integers),
the convention and the causal flag in ``args``.  ``.steps`` is an ordered mapping
from step name to :class:`Step`; per head ``i``::

    Q_i = X W_Q^i,  K_i = X W_K^i,  V_i = X W_V^i          ("projection", Vaswani)
    Q_i = X_head_i W_Q^i, ...,  X_head_i = X[:, (i-1) d_k : i d_k]   ("split")
    S_i = Q_i K_i^T,  S'_i = S_i / sqrt(d_k),  A_i = softmax(S'_i),  head_i = A_i V_i

then ``Concat = Concat(head_1, ..., head_h)`` and ``Output = Concat W_O``.  For an
integer ``h`` every head has its own steps; for a symbolic ``h`` the index ``i`` is a
symbol and ``Concat`` prints with dots.  Every product is shape-checked by our own
strict rules (SymPy 1.14 accepts ``X*X`` for ``X`` of shape ``n x d``).

Examples
========

>>> from mha_symbolic import MultiHeadAttention
>>> M = MultiHeadAttention()
>>> [name for name in M.steps]
['Q_i', 'K_i', 'V_i', 'S_i', "S'_i", 'A_i', 'head_i', 'Concat', 'Output']
>>> M.steps["S_i"].shape, M.steps["Concat"].shape
((n, n), (n, d_model))
>>> print(M.steps["A_i"])
A_i = softmax(S'_i)
>>> M.steps["A_i"].expr
softmax((X*W_Q^i)*(X*W_K^i).T / sqrt(d_k))
>>> M2 = MultiHeadAttention(n=8, d_model=4, h=2, convention="split")
>>> M2.steps["Q_1"].shape, M2.steps["Output"].shape
((8, 2), (8, 4))
>>> M2.func(*M2.args) == M2
True
"""

from __future__ import annotations

import numbers
from functools import cached_property
from typing import Any

from sympy import (
    Basic,
    Eq,
    Expr,
    Integer,
    MatAdd,
    MatMul,
    MatrixSymbol,
    OneMatrix,
    Rational,
    Symbol,
    Tuple,
    ceiling,
    sqrt,
)
from sympy.core.symbol import Str
from sympy.logic.boolalg import BooleanAtom, false, true

from ._convert import as_sympy
from ._mapping import StepMapping
from ._shape import check_same_rows, check_same_shape, checked_matmul
from ._text import text
from .concat import Concat, ConcatHeads
from .dims import DIMENSION_NAMES, Dims, _as_dimension, dimension_symbol
from .errors import DimensionError, InputError
from .heads import HeadMatrix, ModelMatrix
from .latex import LatexReprMixin
from .names import CONVENTIONS, MASKS
from .scaling import ScaledScores
from .softmax import Softmax

__all__ = ["MultiHeadAttention", "Step", "CONVENTIONS", "MASKS"]

HEAD_INDEX = Symbol("i", integer=True, positive=True)
#: A general key/value head of grouped-query attention with symbolic ``h``.
KV_INDEX = Symbol("j", integer=True, positive=True)


#: The standard factor on the scores, written in the dimension symbols.
DEFAULT_SCALE = 1 / sqrt(dimension_symbol("d_k"))


def _scale(value: Any) -> Expr:
    """The model's ``scale``: ``None`` is ``1/sqrt(d_k)``; numbers and SymPy expressions in the
    dimension symbols are allowed, strings are refused (they are never ``sympify``'d)."""
    if value is None:
        return DEFAULT_SCALE
    if isinstance(value, (bool, str)) or not isinstance(value, (int, float, Rational, Expr)):
        raise InputError(f"scale must be a positive number or a SymPy expression of the dimensions, got {value!r}")
    expr = Rational(value) if isinstance(value, (int, float)) else value
    names = {dimension_symbol(k) for k in DIMENSION_NAMES}
    if not expr.free_symbols <= names:
        raise InputError(f"scale {expr} may use only the dimension symbols {sorted(DIMENSION_NAMES)}")
    if expr.is_positive is False or expr.is_zero:
        raise InputError(f"scale must be positive, got {expr}")
    return expr


def _kv_heads(value: Any, dims: Dims) -> Expr | None:
    """``g`` checked: a positive integer (or, with a symbolic ``h``, a symbol) dividing ``h``; ``None``, ``0`` (the
    canonical "one per query head") or ``g = h`` is plain MHA."""
    if value is None:
        return None
    if isinstance(value, str):
        if not value.isidentifier():
            raise InputError(f"kv_heads must be a positive integer or a symbol name, got {value!r}")
        value = dimension_symbol(value)
    if isinstance(value, Symbol):
        if value.is_integer is not True or value.is_positive is not True:
            raise InputError(f"kv_heads={value} must be declared Symbol(..., integer=True, positive=True)")
        if dims.h.is_Integer:
            raise InputError(f"kv_heads={value} is symbolic but h={dims.h} is concrete: give g as one of the "
                             f"divisors of {dims.h}")
        return None if value == dims.h else value
    if isinstance(value, Integer):
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < 1:
        raise InputError(f"kv_heads must be a positive integer (the number of key/value heads), got {value!r}")
    if dims.h.is_Integer:
        h = int(dims.h)
        if h % int(value):
            raise DimensionError(f"kv_heads g={value} must divide h={h}: each key/value head serves h/g query heads")
        if int(value) == h:
            return None
    return Integer(int(value))


def _kv_length(n_kv: Any, cross: Any) -> Expr | None:
    """The key/value sequence length of cross-attention (``None``: self-attention)."""
    if n_kv is None or n_kv is false or n_kv is False:
        if _flag(cross, "cross"):
            return dimension_symbol("n_kv")
        return None
    return _as_dimension("n_kv", n_kv)


def _mask(value: Any) -> str | None:
    name = value.name if isinstance(value, Str) else value
    if name in (None, "none"):
        return None
    if name not in MASKS:
        raise InputError(f"mask must be None, 'key_padding' (a 0/1 row m per key, 1 = attend) or 'additive' (a "
                         f"matrix M added to the scores, entries real or -oo), got {value!r}")
    return str(name)


def _flag(value: Any, name: str = "flag") -> BooleanAtom:
    """True/False (also 0/1 and SymPy's true/false); text such as "False" is refused, not truthy."""
    if isinstance(value, BooleanAtom):
        return value
    if isinstance(value, (bool, numbers.Integral)) or _numpy_bool(value):
        if value in (0, 1):
            return true if value else false
    raise InputError(f"{name} must be True or False, got {value!r}")


def _numpy_bool(value: Any) -> bool:
    """A NumPy boolean scalar (named ``bool`` in NumPy 2), recognised without importing NumPy."""
    return type(value).__module__ == "numpy" and type(value).__name__ in ("bool", "bool_")


class Step(LatexReprMixin, Basic):
    """One named step ``symbol = definition`` of the model.

    ``definition`` is written with the symbols of earlier steps (``S_1 = Q_1 K_1^T``);
    ``expr`` is the same matrix written with the model's inputs only
    (``X W_Q^1 (X W_K^1)^T``); ``shape`` is derived from ``expr`` and simplified with
    the dimension relations; ``conditions`` lists shape conditions not yet proven
    (empty for every step the model builds).

    Examples
    ========

    >>> from mha_symbolic import MultiHeadAttention
    >>> s = MultiHeadAttention(n=2, d_model=4, h=2).steps["S_1"]
    >>> s.name, s.symbol.shape, s.definition, s.expr
    ('S_1', (2, 2), Q_1*K_1.T, (X*W_Q^1)*(X*W_K^1).T)
    >>> s.func(*s.args) == s
    True
    """

    def __new__(cls, name: Any, symbol: Any, definition: Any, expr: Any, dims: Dims,
                conditions: Any = ()) -> Step:
        name = Str(name) if isinstance(name, str) else name
        return Basic.__new__(cls, name, symbol, definition, expr, dims, Tuple(*conditions))

    name = property(lambda self: self.args[0].name, doc="step name, e.g. ``S'_1``")
    symbol = property(lambda self: self.args[1], doc="the matrix symbol on the left-hand side")
    definition = property(lambda self: self.args[2], doc="right-hand side in terms of earlier steps")
    expr = property(lambda self: self.args[3], doc="right-hand side in terms of the inputs")
    dims = property(lambda self: self.args[4], doc="the model's dimensions")
    conditions = property(lambda self: tuple(self.args[5]), doc="unproven shape conditions")

    @property
    def shape(self) -> tuple[Any, Any]:
        """Shape of ``expr``, simplified (``h d_v -> d_model``)."""
        return self.dims.shape(self.expr.shape)

    @property
    def text(self) -> str:
        """``Q_1 = X_head1 W_Q^1``: the step as named in messages."""
        return f"{text(self.symbol)} = {text(self.definition)}"

    def _sympystr(self, printer: Any) -> str:
        return f"{printer._print(self.symbol)} = {printer._print(self.definition)}"

    def _latex(self, printer: Any) -> str:
        return f"{printer._print(self.symbol)} = {printer._print(self.definition)}"


class Steps(StepMapping):
    """Read-only ordered mapping ``name -> Step``."""

    def __init__(self, steps: list[Step]):
        super().__init__({s.name: s for s in steps})

    def __repr__(self) -> str:
        return "Steps(%s)" % ", ".join(self)


def _positional_sizes(args: tuple[Any, ...]) -> str:
    """The error for sizes given by position: torch's order (embed_dim, num_heads) and ours (n, d_model, h) differ."""
    shown = ", ".join(repr(a) for a in args)
    if len(args) == 2:
        hint = (f"for torch's nn.MultiheadAttention({shown}) (embed_dim, num_heads) write "
                f"MultiHeadAttention(d_model={args[0]!r}, h={args[1]!r})")
    elif len(args) == 3:
        hint = f"write MultiHeadAttention(n={args[0]!r}, d_model={args[1]!r}, h={args[2]!r})"
    else:
        hint = "e.g. MultiHeadAttention(n=8, d_model=512, h=8)"
    return (f"MultiHeadAttention takes its sizes by keyword (n tokens, model width d_model, h heads), "
            f"not by position ({shown}): {hint}")


class MultiHeadAttention(LatexReprMixin, Basic):
    """Multi-head attention with symbolic or concrete dimensions.

    Parameters
    ==========

    n, d_model, h : int, str, Symbol or None, keyword-only
        Tokens, model width, heads; ``None`` means a symbol.  They are keyword-only because torch's
        ``nn.MultiheadAttention(768, 12)`` means ``d_model=768, h=12``: sizes given by position are an
        :class:`~mha_symbolic.errors.InputError` that says how to write them.  A :class:`Dims` may be
        passed as the one positional argument instead.
    d_k, d_v : optional
        Per-head widths; default ``d_model / h``.
    convention : ``"projection"`` or ``"split"``
        ``"projection"`` (Vaswani): every head sees all of ``X`` and ``W_Q^i`` is
        ``d_model x d_k``.  ``"split"``: head ``i`` sees the column block
        ``X[:, (i-1) d_k : i d_k]`` and ``W_Q^i`` is ``d_k x d_k``.
    causal : bool
        Masked softmax: weight exactly 0 for ``j > i``.
    bias : bool
        Add row-vector biases, broadcast over tokens with the all-ones column ``1``:
        ``Q_i = X W_Q^i + 1 b_Q^i`` (likewise ``K``, ``V``) and ``Output = Concat W_O + 1 b_O``.
    kv_heads : int, optional
        Grouped-query attention: ``g`` key/value heads, each shared by ``h/g`` consecutive query heads (query
        head ``i`` reads key/value head ``ceil(i g / h)``); ``g = 1`` is multi-query attention, ``None`` (or
        ``g = h``) multi-head attention.  ``g`` must divide ``h``; ``h`` must be concrete.
    scale : scalar expression, optional
        The factor applied to the scores, ``S'_i = scale * S_i`` (PyTorch's ``scale`` of
        ``scaled_dot_product_attention``).  ``None`` (default) is ``1/sqrt(d_k)`` and keeps
        the step as :class:`~mha_symbolic.scaling.ScaledScores`; ``1`` is unscaled
        dot-product attention; any positive expression in numbers and the dimension symbols
        (``1/d_k``) is allowed.  Strings are refused (never ``sympify``'d).

    See Also
    ========

    mha_symbolic.proofs.split_equals_projection : the two conventions agree.
    """

    def __new__(cls, *args: Any, n: Any = None, d_model: Any = None, h: Any = None, d_k: Any = None,
                d_v: Any = None, convention: Any = "projection", causal: Any = False,
                bias: Any = False, scale: Any = None, kv_heads: Any = None, n_kv: Any = None, cross: Any = False,
                mask: Any = None) -> MultiHeadAttention:
        if not args and isinstance(n, Dims):
            args, n = (n,), None
        if args and isinstance(args[0], Dims):
            # canonical, obj.func(*obj.args): MultiHeadAttention(dims, convention, causal, bias, scale[, g, n_kv, mask])
            dims = args[0]
            if len(args) > 1:
                convention = args[1]
            if len(args) > 2:
                causal = args[2]
            options = dict(zip(("bias", "scale", "kv_heads", "n_kv", "mask"), args[3:], strict=False))
            bias = options.get("bias", bias)
            scale = options.get("scale", scale)
            kv_heads = options.get("kv_heads", kv_heads)
            kv_heads = None if kv_heads == Integer(0) else kv_heads  # the canonical filler for "no grouping"
            n_kv = options.get("n_kv", n_kv)
            mask = options.get("mask", mask)
        else:
            if args:
                raise InputError(_positional_sizes(args))
            dims = Dims(n, d_model, h, d_k, d_v)
        conv = convention.name if isinstance(convention, Str) else convention
        if conv not in CONVENTIONS:
            raise InputError(f"convention must be one of {CONVENTIONS}, got {conv!r}")
        if conv == "split" and dims.d_model.is_Integer and dims.h.is_Integer and dims.d_model % dims.h:
            raise InputError(f"split convention: h={dims.h} does not divide d_model={dims.d_model}")
        kv = _kv_heads(kv_heads, dims)
        if kv is not None and conv == "split":
            raise InputError("grouped-query attention (kv_heads) is defined in the projection convention: in the "
                             "split convention each head reads its own block of X, which a shared key/value head "
                             "cannot")
        length = _kv_length(n_kv, cross)
        masked = _mask(mask)
        options_args = [kv if kv is not None else Integer(0), length if length is not None else false,
                        Str(masked or "none")]
        while options_args and options_args[-1] in (Integer(0), false, Str("none")):
            options_args.pop()  # defaults are left out: multi-head self-attention keeps its five arguments
        return Basic.__new__(cls, dims, Str(conv), _flag(causal, "causal"), _flag(bias, "bias"), _scale(scale),
                             *options_args)

    dims = property(lambda self: self.args[0], doc="the :class:`Dims`")
    convention = property(lambda self: self.args[1].name, doc='``"projection"`` or ``"split"``')
    causal = property(lambda self: bool(self.args[2]), doc="masked softmax?")
    bias = property(lambda self: bool(self.args[3]), doc="biases b_Q^i, b_K^i, b_V^i, b_O (PyTorch's x W^T + b)?")

    @property
    def kv_heads(self) -> Any:
        """``g``, the number of key/value heads of grouped-query attention (``None``: one per query head); an
        ``int``, or a symbol when ``h`` is symbolic."""
        if len(self.args) <= 5 or self.args[5] == 0:
            return None
        g = self.args[5]
        return int(g) if g.is_Integer else g

    @property
    def cross(self) -> bool:
        """Cross-attention: keys and values from a second input ``Y`` (``n_kv x d_model``)?"""
        return len(self.args) > 6 and self.args[6] is not false

    @property
    def n_kv(self) -> Any:
        """The number of keys/values: ``n_kv`` for cross-attention, ``n`` (the queries) for self-attention."""
        return self.args[6] if self.cross else self.dims.n

    @property
    def mask(self) -> str | None:
        """``"key_padding"``, ``"additive"`` or ``None`` (the causal mask is :attr:`causal`)."""
        return self.args[7].name if len(self.args) > 7 and self.args[7].name != "none" else None

    def kv_index(self, i: Any) -> Any:
        """The key/value head query head ``i`` reads: ``ceil(i g / h)``, or ``i`` without grouping."""
        g = self.kv_heads
        if g is None:
            return i
        if g == 1:
            return 1
        if self.dims.h.is_Integer and getattr(i, "is_Integer", True):
            return (int(i) - 1) // (int(self.dims.h) // g) + 1
        return ceiling(i * g / self.dims.h)

    @property
    def kv_indices(self) -> list[Any]:
        """The key/value heads: ``[1, ..., g]`` with grouping (a general ``j`` for symbolic ``h`` and ``g > 1``),
        else :attr:`head_indices`."""
        g = self.kv_heads
        if g is None:
            return self.head_indices
        if g == 1 or self.dims.h.is_Integer:
            return list(range(1, int(g) + 1))
        return [KV_INDEX]

    def multiplicity(self, index: Any) -> Any:
        """How many heads a step or weight with this head index stands for: ``h`` for a general query head
        ``i``, ``g`` for a general key/value head ``j``, else 1."""
        if index == HEAD_INDEX:
            return self.dims.h
        if index == KV_INDEX:
            return self.kv_heads
        return Integer(1)

    @property
    def assumptions(self) -> tuple[str, ...]:
        """Conditions the model takes as given because its sizes are symbolic (``g`` divides ``h``)."""
        g = self.kv_heads
        if g is not None and g != 1 and not self.dims.h.is_Integer:
            return (f"{'g' if g == dimension_symbol('g') else f'g = {g}'} divides h = {self.dims.h}",)
        return ()

    @property
    def scale(self) -> Any:
        """The factor on the scores, in this model's dimensions (``1/sqrt(d_k)`` by default)."""
        subs = {dimension_symbol(k): v for k, v in self.dims.as_dict().items()}
        return self.args[4].xreplace(subs)

    @property
    def default_scale(self) -> bool:
        """Is the scale the standard ``1/sqrt(d_k)``?"""
        return self.args[4] == DEFAULT_SCALE

    def bind(self, **values: Any) -> MultiHeadAttention:
        """The same model with some dimensions made concrete (see :meth:`Dims.bind`)."""
        kv = {k: values.pop(k) for k in ("kv_heads", "n_kv") if k in values}
        dims = self.dims.bind(**values)
        subs = {dimension_symbol(k): v for k, v in dims.as_dict().items()}
        g = kv.get("kv_heads", self.kv_heads)
        g = g.xreplace(subs) if isinstance(g, Expr) else g
        if "n_kv" in kv and not self.cross:
            raise DimensionError("n_kv is bound only in cross-attention; in self-attention the keys are the n queries")
        n_kv = kv.get("n_kv", self.args[6] if self.cross else None)
        return type(self)(dims, self.convention, self.causal, self.bias, self.args[4], g, n_kv, self.mask)

    def replace_options(self, **options: Any) -> MultiHeadAttention:
        """The same dimensions with other options (``convention``, ``causal``, ``bias``, ``scale``).

        >>> MultiHeadAttention(n=2, d_model=4, h=2).replace_options(scale=1).steps["S'_1"].definition
        S_1
        """
        current = {"convention": self.convention, "causal": self.causal, "bias": self.bias, "scale": self.args[4],
                   "kv_heads": self.kv_heads, "n_kv": self.args[6] if self.cross else None, "mask": self.mask}
        unknown = set(options) - set(current)
        if unknown:
            raise InputError(f"unknown model option(s) {sorted(unknown)}; options are {sorted(current)}")
        current.update(options)
        return type(self)(self.dims, current["convention"], current["causal"], current["bias"], current["scale"],
                          current["kv_heads"], current["n_kv"], current["mask"])

    def generalised(self) -> MultiHeadAttention:
        """The same variant -- convention, causal mask, bias, scale, key/value heads, cross-attention, mask -- with
        symbolic sizes ``n``, ``d_model``, ``h`` (and ``n_kv`` in cross-attention): what a statement about "every
        size" of this model is proven on.  A fixed number of key/value heads stays fixed.

        >>> M = MultiHeadAttention(n=4, d_model=8, h=2, kv_heads=1, n_kv=3, mask="key_padding").generalised()
        >>> M.dims.h, M.kv_heads, M.n_kv, M.mask
        (h, 1, n_kv, 'key_padding')
        """
        return type(self)(convention=self.convention, causal=self.causal, bias=self.bias,
                          scale=self.args[4], kv_heads=self.kv_heads, cross=self.cross, mask=self.mask)

    @property
    def head_indices(self) -> list[Any]:
        """``[1, ..., h]`` for an integer ``h``, ``[i]`` for a symbolic one."""
        h = self.dims.h
        return list(range(1, int(h) + 1)) if h.is_Integer else [HEAD_INDEX]

    # ----- the inputs -------------------------------------------------------------------
    @cached_property
    def X(self) -> MatrixSymbol:
        """The input ``X`` (``n x d_model``)."""
        return ModelMatrix("X", self.dims.n, self.dims.d_model)

    @cached_property
    def Y(self) -> MatrixSymbol:
        """The key/value input ``Y`` of cross-attention (``n_kv x d_model``); ``X`` itself in self-attention."""
        return ModelMatrix("Y", self.n_kv, self.dims.d_model) if self.cross else self.X

    @cached_property
    def mask_matrix(self) -> Any:
        """The mask input: the key-padding row ``m`` (``1 x n_kv``, entries 0/1, 1 = attend) or the additive
        ``M`` (``n x n_kv``, entries real or ``-oo``); ``None`` without such a mask."""
        if self.mask == "key_padding":
            return ModelMatrix("m", 1, self.n_kv)
        if self.mask == "additive":
            return ModelMatrix("M", self.dims.n, self.n_kv)
        return None

    @cached_property
    def W_O(self) -> MatrixSymbol:
        """The output projection ``W_O`` (``h d_v x d_model``)."""
        return ModelMatrix("W_O", self.dims.h * self.dims.d_v, self.dims.d_model)

    def _head_width(self) -> Any:
        D = self.dims
        return D.d_k if D.equal(D.h * D.d_k, D.d_model) is True else D.d_model / D.h

    @cached_property
    def b_O(self) -> MatrixSymbol:
        """The output bias ``b_O`` (a ``1 x d_model`` row)."""
        return ModelMatrix("b_O", 1, self.dims.d_model)

    def b(self, kind: str, i: Any) -> HeadMatrix:
        """The bias row ``b_kind^i`` (``1 x d_k``, or ``1 x d_v`` for ``V``) of head ``i``."""
        return HeadMatrix(f"b_{kind}", 1, self.dims.d_v if kind == "V" else self.dims.d_k, i)

    def W(self, kind: str, i: Any) -> HeadMatrix:
        """The weight ``W_kind^i`` (``kind`` in ``"Q"``, ``"K"``, ``"V"``) of head ``i``."""
        D = self.dims
        rows = D.d_model if self.convention == "projection" else self._head_width()
        cols = D.d_v if kind == "V" else D.d_k
        return HeadMatrix(f"W_{kind}", rows, cols, i)

    @property
    def inputs(self) -> dict[str, Any]:
        """``{"X": X, "W_Q": [W_Q^1, ...], "W_K": [...], "W_V": [...], "W_O": W_O}``, with ``"Y"`` after ``"X"``
        for cross-attention, the biases, and ``"m"`` or ``"M"`` last for a key-padding or additive mask."""
        idx = {"Q": self.head_indices, "K": self.kv_indices, "V": self.kv_indices}
        inputs: dict[str, Any] = {"X": self.X}
        if self.cross:
            inputs["Y"] = self.Y
        inputs.update({f"W_{k}": [self.W(k, i) for i in idx[k]] for k in "QKV"})
        inputs["W_O"] = self.W_O
        if self.bias:
            inputs.update({f"b_{k}": [self.b(k, i) for i in idx[k]] for k in "QKV"})
            inputs["b_O"] = self.b_O
        if self.mask_matrix is not None:
            inputs[self.mask_matrix.name] = self.mask_matrix
        return inputs

    # ----- the steps --------------------------------------------------------------------
    @cached_property
    def steps(self) -> Steps:
        """The ordered steps (see the module docstring)."""
        D = self.dims
        built: list[Step] = []
        full: dict[Any, Any] = {}

        def add(symbol: Any, definition: Any, conditions: list[Eq] | None = None) -> Any:
            expr = definition.xreplace(full)
            full[symbol] = expr
            built.append(Step(symbol.name, symbol, definition, expr, D, conditions or []))
            return symbol

        def product(symbol: Any, *factors: Any, bias: Any = None) -> Any:
            step = f"{text(symbol)} = {text(as_sympy(factors[0]) * factors[1])}"
            rhs, conds = checked_matmul(step, factors, D)
            if bias is not None:  # 1 b: the bias row repeated for every token (just b for one token)
                rows = rhs.shape[0]  # n tokens (queries) or n_kv (keys/values of cross-attention)
                ones_b, more = checked_matmul(step, [bias] if rows == 1 else [OneMatrix(rows, 1), bias], D)
                conds += more + check_same_shape(step, rhs.shape, ones_b.shape, D)
                rhs = MatAdd(rhs, ones_b, evaluate=True)  # canonical order, as printed and read back
            return add(symbol, rhs, conds)

        def b(kind: str, i: Any) -> Any:
            return self.b(kind, i) if self.bias else None

        heads = []
        shared: dict[Any, tuple[Any, Any]] = {}  # key/value head j -> its K_j, V_j steps
        n_kv = self.n_kv
        for i in self.head_indices:
            def sym(base: str, rows: Any, cols: Any, style: str = "sub", i: Any = i) -> HeadMatrix:
                return HeadMatrix(base, rows, cols, i, style)

            if self.convention == "split":
                w = self._head_width()
                x_i = sym("X_head", D.n, w, "plain")
                add(x_i, self.X[:, (i - 1) * w: i * w])
                if self.cross:
                    y_i = sym("Y_head", n_kv, w, "plain")
                    add(y_i, self.Y[:, (i - 1) * w: i * w])
                else:
                    y_i = x_i
            else:
                x_i, y_i = self.X, self.Y
            q = product(sym("Q", D.n, D.d_k), x_i, self.W("Q", i), bias=b("Q", i))
            j = self.kv_index(i)
            general = not getattr(j, "is_Integer", True) and j != i  # ceil(i g / h): a general key/value head
            key = KV_INDEX if general else j
            if key not in shared:
                shared[key] = (product(sym("K", n_kv, D.d_k, i=key), y_i, self.W("K", key), bias=b("K", key)),
                               product(sym("V", n_kv, D.d_v, i=key), y_i, self.W("V", key), bias=b("V", key)))
            k, v = shared[key]
            if general:  # K_{ceil(i g/h)}: the general K_j read by query head i
                k, v = (self._read(step, {KV_INDEX: j}, full) for step in (k, v))
            s = product(sym("S", D.n, n_kv), q, k.T)
            if self.default_scale:
                scaled: Any = ScaledScores(s, D.d_k)
            else:
                scaled = MatMul(self.scale, s) if self.scale != 1 else s
            s_scaled = add(sym("S'", D.n, n_kv), scaled)
            if self.mask == "additive":
                masked = MatAdd(s_scaled, self.mask_matrix)
                conds = check_same_shape(f"A_{i} = softmax(S'_{i} + M)", s_scaled.shape, self.mask_matrix.shape, D)
                a = add(sym("A", D.n, n_kv), Softmax(masked, self.causal), conds)
            else:
                a = add(sym("A", D.n, n_kv), Softmax(s_scaled, self.causal, self.mask_matrix))
            heads.append(product(sym("head", D.n, D.d_v), a, v))

        concat = ModelMatrix("Concat", D.n, D.h * D.d_v)
        if D.h.is_Integer:
            conds = check_same_rows("Concat", heads, D)
            add(concat, Concat(*heads), conds)
        else:
            add(concat, ConcatHeads(heads[0], HEAD_INDEX, D.h))
        product(ModelMatrix("Output", D.n, D.d_model), concat, self.W_O, bias=self.b_O if self.bias else None)
        return Steps(built)

    @staticmethod
    def _read(symbol: Any, index: dict[Any, Any], full: dict[Any, Any]) -> Any:
        """``K_j`` with ``j := ceil(i g / h)``: the symbol as query head ``i`` reads it, its full expression too."""
        read = symbol.xreplace(index)
        full[read] = full[symbol].xreplace(index)
        return read

    @property
    def output(self) -> Any:
        """The full expression of the output in terms of ``X`` and the weights."""
        return self.steps["Output"].expr

    def evaluate(self, X: Any = None, W_Q: Any = None, W_K: Any = None, W_V: Any = None,
                 W_O: Any = None, **options: Any) -> Any:
        """Every step's explicit matrix; see :func:`mha_symbolic.evaluation.evaluate`.

        Keyword options: ``Y`` (cross-attention), ``mask``, biases (``b_Q``, ``b_K``, ``b_V`` per head, ``b_O``),
        ``exact``, ``max_terms``.
        """
        from .evaluation import evaluate

        return evaluate(self, X=X, W_Q=W_Q, W_K=W_K, W_V=W_V, W_O=W_O, **options)

    def lambdify(self, backend: str = "numpy", *, entrywise: bool = False) -> Any:
        """Compile to a NumPy function ``f(X, W_Q, W_K, W_V, W_O, ..., steps=False)``.

        See :mod:`mha_symbolic.numeric`: matrix-level (batched, stable softmax) by default;
        ``entrywise=True`` lambdifies the exact explicit output of a small concrete model.
        """
        from .numeric import lambdify_model

        return lambdify_model(self, backend, entrywise=entrywise)

    def _sympystr(self, printer: Any) -> str:
        D = self.dims
        extra = (", causal=True" if self.causal else "") + (", bias=True" if self.bias else "")
        if self.kv_heads is not None:
            extra += f", kv_heads={self.kv_heads}"
        if self.cross:
            extra += f", n_kv={printer._print(self.n_kv)}"
        if self.mask is not None:
            extra += f", mask={self.mask!r}"
        if not self.default_scale:
            extra += f", scale={printer._print(self.args[4])}"
        return (f"MultiHeadAttention(n={printer._print(D.n)}, d_model={printer._print(D.d_model)}, "
                f"h={printer._print(D.h)}, d_k={printer._print(D.d_k)}, d_v={printer._print(D.d_v)}, "
                f"convention={self.convention!r}{extra})")

    def _latex(self, printer: Any) -> str:
        inputs = "X, Y" if self.cross else "X"
        return (r"\mathrm{MultiHead}(%s) = %s" % (inputs, printer._print(self.steps["Output"].expr)))
