r"""Upper bounds on rank, proven from the structure of a matrix expression.

Explanation
===========

:func:`rank_bound` walks an expression and applies only sound rules, recording each
application in a trace:

====================  ============================================================
rule                  statement
====================  ============================================================
``shape``             rank(M) <= min(rows, cols)
``product``           rank(AB) <= min(rank A, rank B)
``transpose``         rank(A^T) = rank A
``scalar``            rank(cA) = rank A for c != 0 (including S / sqrt(d_k))
``concat``            rank([A B]) <= rank A + rank B
``sum``               rank(A + B) <= rank A + rank B
``slice``             rank of a submatrix <= rank of the matrix
``elementwise``       softmax (and any element-wise nonlinear map) gives only the
                      shape bound: the factors' ranks are not propagated through it
``exact``             an explicit rational matrix: its rank, computed exactly (FLINT)
``row-stochastic``    blocks ``A_i V_i`` with ``A_i`` a softmax (rows summing to 1, so
                      ``A_i 1 = 1``): every column space lies in ``span(1) + W_i`` with
                      ``dim W_i <= c_i - 1`` (``c_i`` keys), so ``rank([A_1 V_1 ...])
                      <= 1 + sum (c_i - 1)``, also with a bias row ``1 b`` added; it binds
                      in cross-attention with few keys
====================  ============================================================

The bound is a SymPy expression with ``Min``, simplified with the model's dimension
relations (``h d_v = d_model``) and by dropping arguments that are provably larger than
another (``h d_k >= d_k``).

Examples
========

>>> from mha_symbolic import MultiHeadAttention
>>> from mha_symbolic.rank import rank_bound
>>> M = MultiHeadAttention()
>>> rank_bound(M.steps["S_i"].expr, M.dims).bound
Min(d_k, n)
>>> rank_bound(M.steps["A_i"].expr, M.dims).bound
n
>>> rank_bound(M.steps["Output"].expr, M.dims).bound
Min(d_model, n)
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from sympy import Add, Basic, Integer, MatAdd, MatMul, Min, OneMatrix, Transpose, factor
from sympy.matrices import MatrixBase
from sympy.matrices.expressions import MatrixExpr, MatrixSymbol
from sympy.matrices.expressions.slice import MatrixSlice

from .._convert import as_sympy
from ..concat import Concat, ConcatHeads
from ..dims import Dims
from ..errors import InputError
from ..formulas import Attention
from ..latex import latex
from ..scaling import ScaledScores
from ..softmax import Softmax

__all__ = ["RankBound", "RuleApplication", "rank_bound", "simplify_min", "provably_le"]


@dataclass(frozen=True)
class RuleApplication:
    """One step of a proof trace: which rule, on which expression, giving which bound."""

    rule: str
    expr: Any
    bound: Any

    def latex(self) -> str:
        return r"\operatorname{rank}\left(%s\right) \le %s \quad \text{(%s)}" % (latex(self.expr), latex(self.bound),
                                                                                 self.rule)


@dataclass(frozen=True)
class RankBound:
    """A proven upper bound with its trace (the rule applications, innermost first)."""

    expr: Any
    bound: Any
    trace: tuple[RuleApplication, ...] = field(default=())

    def at(self, **values: int) -> int:
        """The bound at concrete dimensions (by name: ``n=8, d_model=4, h=2``)."""
        subs = {s: values[s.name] for s in as_sympy(self.bound).free_symbols if s.name in values}
        value = as_sympy(self.bound).subs(subs)
        if not value.is_Integer:
            raise InputError(f"the bound {self.bound} needs values for {sorted(map(str, value.free_symbols))}")
        return int(value)

    def latex(self) -> str:
        """The trace as an ``aligned`` block."""
        return r"\begin{aligned}%s\end{aligned}" % r" \\ ".join(a.latex() for a in self.trace)

    def _repr_latex_(self) -> str:
        return f"$\\displaystyle {self.latex()}$"


def simplify_min(bound: Any, dims: Dims | None = None) -> Any:
    """Simplify a bound: distribute positive factors over ``Min`` (``h Min(a, b) = Min(h a, h b)``),
    drop arguments provably >= another, and write ``h d_v`` as ``d_model`` where defined.

    >>> from mha_symbolic.dims import Dims
    >>> D = Dims()
    >>> simplify_min(Min(D.d_model, D.n, D.h * Min(D.d_v, D.n)), D)
    Min(d_model, n)
    """
    bound = _distribute(as_sympy(bound))
    if isinstance(bound, Min):
        args = list(dict.fromkeys(bound.args))
        keep = []
        for k, a in enumerate(args):
            dominated = any(_geq(a, b, dims) and (not _geq(b, a, dims) or j < k)
                            for j, b in enumerate(args) if j != k)
            if not dominated:
                keep.append(a)
        bound = Min(*keep) if len(keep) > 1 else keep[0]
    if dims is None:
        return bound
    return Min(*[dims.simplify(a) for a in bound.args]) if isinstance(bound, Min) else dims.simplify(bound)


def _distribute(e: Any) -> Any:
    """``c * Min(a, b) -> Min(c a, c b)`` for a positive factor ``c``, recursively."""
    if isinstance(e, Min):
        return Min(*[_distribute(a) for a in e.args])
    if e.is_Mul:
        mins = [a for a in e.args if isinstance(a, Min)]
        if len(mins) == 1:
            rest = e / mins[0]
            if rest.is_positive:
                return Min(*[_distribute(rest * a) for a in mins[0].args])
    return e


def _geq(a: Any, b: Any, dims: Dims | None) -> bool:
    """Is ``a >= b`` provable (also after writing d_model = h d_k)?"""
    diff = as_sympy(a) - as_sympy(b)
    forms = [diff]
    if dims is not None:
        forms.append(diff.subs(dims.definitions))
        for r in dims.relations:
            if not dims.d_model.is_Integer:
                forms.append(diff.subs(dims.d_model, dims.h * r.lhs))
    return any(f == 0 or factor(f).is_nonnegative for f in forms)


def provably_le(a: Any, b: Any, dims: Dims | None = None) -> bool:
    """Is ``a <= b`` proven for every value of the dimensions (``Min`` on either side allowed)?

    ``Min(x, y) <= b`` when one argument is; ``a <= Min(x, y)`` when ``a`` is below every argument.

    >>> from mha_symbolic.dims import Dims
    >>> D = Dims()
    >>> provably_le(Min(D.d_v, D.n), D.d_k, D), provably_le(D.n, D.d_k, D)
    (True, False)
    >>> provably_le(Min(64, D.d_model) + 1, 512, D), provably_le(Min(64, D.d_model) + 1, 64, D)
    (True, False)
    """
    a, b = as_sympy(a), as_sympy(b)
    shifted = [t for t in a.args if isinstance(t, Min)] if a.is_Add else []
    if shifted:  # Min(x, y) + c <= b: some x + c <= b (a strict bound is the proven bound plus one)
        return any(provably_le(x + a - shifted[0], b, dims) for x in shifted[0].args)
    if isinstance(b, Min):
        return all(provably_le(a, x, dims) for x in b.args)
    if isinstance(a, Min):
        return any(provably_le(x, b, dims) for x in a.args)
    return _geq(b, a, dims)


def rank_bound(expr: Any, dims: Dims | None = None) -> RankBound:
    """A proven upper bound on ``rank(expr)`` with its proof trace; see the module docstring."""
    if dims is not None and not isinstance(dims, Dims):
        raise InputError(f"dims must be a Dims (e.g. model.dims), got {type(dims).__name__}")
    trace: list[RuleApplication] = []
    bound = _bound(as_sympy(expr, "rank_bound's expression"), trace, dims)
    return RankBound(expr, simplify_min(bound, dims), tuple(trace))


def _shape(e: Any) -> Any:
    return Min(*e.shape)


def _record(trace: list[RuleApplication], rule: str, e: Any, bound: Any, dims: Dims | None) -> Any:
    bound = simplify_min(Min(bound, _shape(e)), dims)
    trace.append(RuleApplication(rule, e, bound))
    return bound


def _ones_bound(e: Any) -> Any:
    """A bound ``B`` with ``rank([e, 1]) <= B`` when ``e``'s columns provably lie in ``span(1)`` plus ``B - 1``
    other directions (``None`` when not known): a softmax ``A`` (``A 1 = 1``) of ``c`` keys gives ``c``; a
    product, its first factor's (``col(A V)`` lies in ``col(A)``); the broadcast ``1 b``, 1; a concatenation
    or a sum, ``1 + sum (B_t - 1)``."""
    if isinstance(e, Softmax):
        return e.shape[1]
    if isinstance(e, MatMul):
        factors = e.as_coeff_matrices()[1]
        if factors and isinstance(factors[0], OneMatrix) and factors[0].shape[1] == 1:
            return Integer(1)
        return _ones_bound(factors[0]) if factors else None
    if isinstance(e, (Concat, MatAdd)):
        parts = [_ones_bound(b) for b in (e.blocks if isinstance(e, Concat) else e.args)]
        return None if any(p is None for p in parts) else 1 + Add(*[p - 1 for p in parts])
    if isinstance(e, ConcatHeads):
        part = _ones_bound(e.template)
        return None if part is None else 1 + e.h * (part - 1)
    return None


def _stochastic(e: Any, bound: Any, trace: list[RuleApplication], dims: Dims | None) -> Any:
    """The ``row-stochastic`` rule on top of ``bound`` where it applies (see :func:`_ones_bound`)."""
    ones = _ones_bound(e)
    if ones is None or isinstance(e, (Softmax, MatMul)):
        return bound
    if simplify_min(Min(bound, ones, _shape(e)), dims) == bound:
        return bound  # recorded only where it lowers the bound (never in self-attention: 1 + h(n-1) >= n)
    return _record(trace, "row-stochastic", e, Min(bound, ones), dims)


def _bound(e: Any, trace: list[RuleApplication], dims: Dims | None) -> Any:
    if isinstance(e, MatrixBase):
        from .certify import exact_rank

        if all(x.is_Rational for x in e):
            return _record(trace, "exact", e, Integer(exact_rank(e)), dims)
        return _record(trace, "shape", e, _shape(e), dims)
    if isinstance(e, OneMatrix):
        return _record(trace, "shape", e, Integer(1), dims)
    if isinstance(e, MatrixSymbol):
        return _record(trace, "shape", e, _shape(e), dims)
    if isinstance(e, Transpose):
        return _record(trace, "transpose", e, _bound(e.arg, trace, dims), dims)
    if isinstance(e, ScaledScores):
        return _record(trace, "scalar", e, _bound(e.scores, trace, dims), dims)
    if isinstance(e, MatMul):
        coeff, factors = e.as_coeff_matrices()
        if coeff == 0:
            return _record(trace, "scalar", e, Integer(0), dims)
        bounds = [_bound(f, trace, dims) for f in factors]
        return _record(trace, "product" if len(factors) > 1 else "scalar", e, Min(*bounds), dims)
    if isinstance(e, (Softmax, Attention)) or (isinstance(e, MatrixExpr) and e.func.__name__ in ("HadamardPower",)):
        return _record(trace, "elementwise", e, _shape(e), dims)
    if isinstance(e, Concat):
        bound = _record(trace, "concat", e, Add(*[_bound(b, trace, dims) for b in e.blocks]), dims)
        return _stochastic(e, bound, trace, dims)
    if isinstance(e, ConcatHeads):
        bound = _record(trace, "concat", e, e.h * _bound(e.template, trace, dims), dims)
        return _stochastic(e, bound, trace, dims)
    if isinstance(e, MatAdd):
        bound = _record(trace, "sum", e, Add(*[_bound(t, trace, dims) for t in e.args]), dims)
        return _stochastic(e, bound, trace, dims)
    if isinstance(e, MatrixSlice):
        return _record(trace, "slice", e, _bound(e.parent, trace, dims), dims)
    if isinstance(e, Basic) and getattr(e, "is_Matrix", False):
        return _record(trace, "shape", e, _shape(e), dims)
    raise InputError(f"rank_bound needs a matrix expression, got {e!r}")
