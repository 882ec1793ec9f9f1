"""Dimensions of multi-head attention: n, d_model, h, d_k, d_v.

Explanation
===========

Each dimension is either a concrete positive integer or a SymPy symbol declared
``integer=True, positive=True``.  Unless given, ``d_k = d_v = d_model / h``: for
concrete sizes the quotient is computed (and ``h`` must divide ``d_model``); for
symbolic sizes ``d_k`` and ``d_v`` stay named symbols and the definitions are kept
as *relations*, used to simplify shapes (``h d_v -> d_model``) and to prove that
two dimensions agree.

Examples
========

>>> from mha_symbolic.dims import Dims
>>> D = Dims()
>>> D
Dims(n=n, d_model=d_model, h=h, d_k=d_k, d_v=d_v; d_k = d_model/h, d_v = d_model/h)
>>> D.simplify(D.h * D.d_v)
d_model
>>> Dims(n=8, d_model=4, h=2).d_k
2
>>> Dims(n=2, d_model=4, h=3)
Traceback (most recent call last):
...
mha_symbolic.errors.DimensionError: h=3 does not divide d_model=4
"""

from __future__ import annotations

import numbers
from typing import Any

from sympy import Basic, Eq, Expr, Integer, Symbol, Tuple, expand, simplify

from ._convert import as_sympy
from .errors import DimensionError, InputError, require
from .latex import LatexReprMixin

__all__ = ["Dims", "dimension_symbol", "DIMENSION_NAMES"]

DIMENSION_NAMES = ("n", "d_model", "h", "d_k", "d_v")
#: Concrete head counts above this are refused (each head has its own steps); symbolic h has no limit.
MAX_HEADS = 1024


def dimension_symbol(name: str) -> Symbol:
    """The canonical symbol for a dimension: ``Symbol(name, integer=True, positive=True)``.

    >>> dimension_symbol("d_k").is_positive
    True
    """
    require(name, str, "dimension_symbol's name", "a str")
    return Symbol(name, integer=True, positive=True)


def _as_dimension(name: str, value: Any) -> Expr:
    """Validate one dimension value; ``None`` means the canonical symbol."""
    if value is None:
        return dimension_symbol(name)
    if isinstance(value, bool):
        raise DimensionError(f"{name} must be a positive integer or a symbol, got the bool {value!r}")
    if isinstance(value, str):
        if not value.isidentifier():
            raise DimensionError(f"{name} must be a positive integer or a symbol name, got {value!r}")
        return dimension_symbol(value)
    if isinstance(value, numbers.Integral) and not isinstance(value, Basic):
        value = Integer(int(value))
    if isinstance(value, float) or (isinstance(value, numbers.Number) and not isinstance(value, Basic)):
        raise DimensionError(f"{name} must be a positive integer, got {value!r} ({type(value).__name__})")
    if not isinstance(value, Expr):
        raise DimensionError(f"{name} must be a positive integer or a symbol, got {value!r} ({type(value).__name__})")
    if value.is_number:
        if not value.is_Integer:
            raise DimensionError(f"{name} must be a positive integer, got {value}")
        if value <= 0:
            raise DimensionError(f"{name} must be a positive integer, got {name}={value}")
        return value
    if value.is_positive is False or value.is_integer is False:
        raise DimensionError(
            f"{name}={value} is declared non-positive or non-integer; "
            "use Symbol(..., integer=True, positive=True)"
        )
    return value


class Dims(LatexReprMixin, Basic):
    """The five dimensions of multi-head attention, with the relations in force.

    Parameters
    ==========

    n, d_model, h : int, str, Symbol or None
        Tokens, model width, number of heads.  ``None`` means the canonical symbol.
    d_k, d_v : int, str, Symbol or None
        Per-head query/key and value widths.  ``None`` means ``d_model / h``
        (``d_v`` defaults to ``d_k`` when only ``d_k`` is given).
    relations : Tuple of Eq, optional
        The definitions in force; computed from the above when omitted.  It is an
        argument only so that ``D.func(*D.args) == D``.

    Examples
    ========

    >>> from mha_symbolic.dims import Dims
    >>> D = Dims(n=8, d_model=512, h=8)
    >>> D.d_k, D.d_v, D.relations
    (64, 64, ())
    >>> D.func(*D.args) == D
    True
    """

    def __new__(cls, n: Any = None, d_model: Any = None, h: Any = None, d_k: Any = None,
                d_v: Any = None, relations: Any = None) -> Dims:
        n_ = _as_dimension("n", n)
        dm = _as_dimension("d_model", d_model)
        h_ = _as_dimension("h", h)
        if h_.is_Integer and h_ > MAX_HEADS:
            raise DimensionError(f"h={h_}: at most {MAX_HEADS} heads are built step by step; for more, keep h "
                                 "symbolic (the steps are then written for a general head i)")
        rels: list[Eq] = []
        if d_k is None:
            if dm.is_Integer and h_.is_Integer:
                if dm % h_ != 0:
                    raise DimensionError(f"h={h_} does not divide d_model={dm}")
                dk: Expr = dm // h_
            else:
                dk = dimension_symbol("d_k")
                rels.append(Eq(dk, dm / h_, evaluate=False))
        else:
            dk = _as_dimension("d_k", d_k)
        if d_v is None:
            if d_k is not None or dk.is_Integer:
                dv: Expr = dk
            else:
                dv = dimension_symbol("d_v")
                rels.append(Eq(dv, dm / h_, evaluate=False))
        else:
            dv = _as_dimension("d_v", d_v)
        if relations is not None:
            require(relations, (list, tuple, Tuple), "Dims relations", "a list or tuple of equations")
            rels = [as_sympy(r, "Dims relations") for r in relations]
        return Basic.__new__(cls, n_, dm, h_, dk, dv, Tuple(*rels))

    n = property(lambda self: self.args[0], doc="number of tokens")
    d_model = property(lambda self: self.args[1], doc="model width")
    h = property(lambda self: self.args[2], doc="number of heads")
    d_k = property(lambda self: self.args[3], doc="query/key width per head")
    d_v = property(lambda self: self.args[4], doc="value width per head")
    relations = property(lambda self: tuple(self.args[5]), doc="definitions in force, e.g. Eq(d_k, d_model/h)")

    @property
    def is_concrete(self) -> bool:
        """True when every dimension is an integer."""
        return all(d.is_Integer for d in self.args[:5])

    def as_dict(self) -> dict[str, Expr]:
        """``{"n": ..., "d_model": ..., "h": ..., "d_k": ..., "d_v": ...}``."""
        return dict(zip(DIMENSION_NAMES, self.args[:5], strict=True))

    @property
    def definitions(self) -> dict[Expr, Expr]:
        """The relations as a substitution ``{d_k: d_model/h, ...}``."""
        return {r.lhs: r.rhs for r in self.relations}

    def simplify(self, expr: Any) -> Expr:
        """Simplify a dimension expression using the relations, keeping ``d_k``/``d_v`` named.

        ``h*d_v`` becomes ``d_model``; slice widths ``i*d_k - (i-1)*d_k`` become ``d_k``.

        >>> from mha_symbolic.dims import Dims
        >>> D = Dims(h=2)
        >>> D.simplify(D.d_v + D.d_v)
        d_model
        """
        e = as_sympy(expr, "Dims.simplify's expression")
        if not isinstance(e, Expr):
            raise InputError(f"Dims.simplify's expression must be a scalar expression, got {type(expr).__name__}")
        e = expand(e)
        for sym, rhs in self.definitions.items():
            num, den = rhs.as_numer_denom()
            e = expand(e.subs(den * sym, num))
        return e

    def shape(self, shape: tuple[Any, Any]) -> tuple[Expr, Expr]:
        """Simplify both entries of a shape."""
        if not isinstance(shape, (tuple, list)) or len(shape) != 2:
            raise InputError(f"Dims.shape's shape must be a pair (rows, columns), got {shape!r}")
        return (self.simplify(shape[0]), self.simplify(shape[1]))

    def equal(self, a: Any, b: Any) -> bool | Eq:
        """Decide ``a == b`` for dimension expressions under the relations.

        Returns ``True`` (proven), ``False`` (refuted: the difference is a nonzero
        number or provably nonzero) or the unevaluated condition ``Eq(a, b)``.

        >>> from mha_symbolic.dims import Dims
        >>> D = Dims()
        >>> D.equal(D.h * D.d_k, D.d_model), D.equal(3, 4), D.equal(D.n, D.d_k)
        (True, False, Eq(n, d_k))
        """
        diff = simplify((as_sympy(a, "Dims.equal") - as_sympy(b, "Dims.equal")).subs(self.definitions))
        if diff == 0:
            return True
        if diff.is_zero is False:
            return False
        return Eq(as_sympy(a), as_sympy(b), evaluate=False)

    def bind(self, **values: Any) -> Dims:
        """A new :class:`Dims` with some symbolic dimensions given concrete values.

        The relations are re-applied, so binding ``d_model=4, h=3`` raises
        :class:`~mha_symbolic.errors.DimensionError`.

        >>> from mha_symbolic.dims import Dims
        >>> Dims().bind(n=2, d_model=4, h=2)
        Dims(n=2, d_model=4, h=2, d_k=2, d_v=2)
        """
        unknown = set(values) - set(DIMENSION_NAMES)
        if unknown:
            raise DimensionError(f"unknown dimension(s) {sorted(unknown)}; expected {DIMENSION_NAMES}")
        current = self.as_dict()
        for name, value in values.items():
            old = current[name]
            if old.is_Integer and value is not None and _as_dimension(name, value) != old:
                raise DimensionError(f"{name} is {old} in the model but {value} in the input")
        tied = {r.lhs for r in self.relations}
        kwargs: dict[str, Any] = {k: (None if v in tied else v) for k, v in current.items()}
        if current["d_v"] == current["d_k"] and "d_v" not in values:
            kwargs["d_v"] = None  # d_v follows d_k
        kwargs.update(values)
        return Dims(**kwargs)

    def _sympystr(self, printer: Any) -> str:
        body = ", ".join(f"{k}={printer._print(v)}" for k, v in self.as_dict().items())
        if self.relations:
            body += "; " + ", ".join(f"{printer._print(r.lhs)} = {printer._print(r.rhs)}" for r in self.relations)
        return f"Dims({body})"

    def _latex(self, printer: Any) -> str:
        parts = [f"{printer._print(Symbol(k))} = {printer._print(v)}" for k, v in self.as_dict().items()
                 if Symbol(k) != v]
        parts += [f"{printer._print(r.lhs)} = {printer._print(r.rhs)}" for r in self.relations]
        return ",\\; ".join(parts) if parts else r"n,\; d_{model},\; h,\; d_k,\; d_v"
