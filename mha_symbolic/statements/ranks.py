r"""Rank statements: proven from the model's own expressions, or refuted by a certified witness.

Explanation
===========

``RankStatement("head_i", "le", bound)`` reads ``rank(head_i) <= bound``.  The engine

1. bounds the rank of the model's expression (:func:`~mha_symbolic.rank.rank_bound`, with its
   trace); if that bound implies the statement for every size, the verdict is ``true`` (proof);
2. otherwise looks for a counterexample: small concrete sizes where the proven bound exceeds
   the statement's, a generic exact instance evaluated by the model, and a minor whose
   determinant ball excludes 0 (:func:`~mha_symbolic.rank.certify_rank_at_least`); found, the
   verdict is ``false`` (certified counterexample);
3. otherwise says ``undecided`` and why.

The right-hand side may be a dimension expression or :class:`RankOf` another step
(``rank(A_i V_i) <= rank(A_i)``, by the product rule).

Examples
========

>>> from mha_symbolic import MultiHeadAttention
>>> from mha_symbolic.statements import RankStatement
>>> M = MultiHeadAttention()
>>> RankStatement("head_i", "le", lambda D: D.d_k).decide(M).verdict
'true'
>>> v = RankStatement("A_i", "le", lambda D: D.d_k).decide(M)
>>> v.verdict, v.basis, v.scope
('false', 'proof', 'fails whenever n > d_k')
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from itertools import product
from typing import Any

from sympy import ImmutableMatrix, MatMul, Sum

from .._convert import as_sympy
from ..attention import MultiHeadAttention
from ..dims import Dims
from ..errors import DimensionError, InputError, SizeLimitError
from ..evaluation import estimate_terms
from ..rank import certify_rank_at_least, provably_le, rank_bound, rank_report
from ..rank.attention_weights import certified_weights_rank, weights_rank
from ._base import Statement, generic_instance, step_name
from .verdict import Verdict

__all__ = ["RankStatement", "RankOf", "RankComparison"]

OPS = {"le": "<=", "lt": "<", "eq": "="}
#: Sizes tried for a counterexample when the model's are symbolic (small first).
#: the weights' rank is also certified by ball arithmetic on a generic instance up to this size
CERTIFY_WEIGHTS_UP_TO = 128
SEARCH = {"n": (2, 3, 4, 5), "d_model": (1, 2, 3, 4, 6), "h": (1, 2, 3), "d_k": (1, 2, 3), "d_v": (1, 2, 3)}
MAX_SEARCH_TERMS = 20_000


@dataclass(frozen=True)
class RankOf:
    """The rank of another step, as the right-hand side of a rank statement."""

    step: str


def _expr(model: MultiHeadAttention, subject: Any) -> Any:
    return subject(model) if callable(subject) else model.steps[step_name(model, subject)].expr


def _label(subject: Any) -> str:
    return getattr(subject, "__name__", "expression") if callable(subject) else str(subject)


def _factors(e: Any) -> list[Any]:
    """The matrix factors of a product, nested products flattened (the product is associative)."""
    if not isinstance(e, MatMul):
        return [e]
    return [f for m in e.as_coeff_matrices()[1] for f in _factors(m)]


def _is_end_factor(whole: Any, part: Any) -> bool:
    """``part`` is a run of consecutive factors of ``whole`` (``whole = L part R``): rank(whole) <= rank(part),
    by the product rule applied on each side."""
    w, p = _factors(whole), _factors(part)
    return any(w[k:k + len(p)] == p for k in range(len(w) - len(p) + 1))


def _concrete_models(model: MultiHeadAttention) -> list[MultiHeadAttention]:
    """The model itself if concrete, else bindings of its symbolic sizes on a small grid."""
    D = model.dims
    if D.is_concrete:
        return [model]
    tied = {r.lhs for r in D.relations}
    free = [k for k, v in D.as_dict().items() if not v.is_Integer and v not in tied]
    out = []
    for values in product(*(SEARCH[k] for k in free)):
        try:
            m = model.bind(**dict(zip(free, values, strict=True)))
        except (DimensionError, InputError):
            continue
        if m.dims.is_concrete and estimate_terms(m.dims) <= MAX_SEARCH_TERMS:
            out.append(m)
    return sorted(out, key=lambda m: estimate_terms(m.dims))


@dataclass(frozen=True)
class RankStatement(Statement):
    """``rank(subject) op bound``; ``subject`` is a step name or ``model -> matrix expression``,
    ``bound`` is ``Dims -> expression`` or :class:`RankOf`; ``op`` is ``le``, ``lt`` or ``eq``."""

    subject: Any
    op: str
    bound: Callable[[Dims], Any] | RankOf

    def __post_init__(self) -> None:
        if self.op not in OPS:
            raise InputError(f"op must be one of {sorted(OPS)}, got {self.op!r}")

    def _claimed(self, model: MultiHeadAttention) -> Any:
        """The claimed upper bound at ``model``: a dimension expression, or a proven bound of a step's rank."""
        if isinstance(self.bound, RankOf):
            return rank_bound(_expr(model, self.bound.step), model.dims).bound
        return model.dims.simplify(as_sympy(self.bound(model.dims)))

    def decide(self, model: MultiHeadAttention) -> Verdict:
        D = model.dims
        E = _expr(model, self.subject)
        proven = rank_bound(E, D)
        trace = "; ".join(f"{a.rule}: rank <= {a.bound}" for a in proven.trace[-3:])
        text = f"rank({_label(self.subject)}) {OPS[self.op]} {self._rhs_text(model)}"
        if isinstance(self.bound, RankOf):
            part = _expr(model, self.bound.step)
            if self.op == "le" and _is_end_factor(E, part):
                return Verdict("true", f"{text}: product rule, rank(A B) <= min(rank A, rank B), and "
                               f"{self.bound.step} is a run of factors of {_label(self.subject)}", "proof")
        else:
            R = self._claimed(model)
            strict = self.op == "lt"
            if self.op == "eq" and provably_le(proven.bound, R, D) and provably_le(R, proven.bound, D):
                return self._attained(model, text, proven.bound, R)
            if self.op == "le" and provably_le(proven.bound, R, D) or strict and provably_le(
                    proven.bound + 1, R, D):
                return Verdict("true", f"{text}: proven rank <= {proven.bound} ({trace})", "proof")
        return self._refute(model, text, proven.bound)

    def _rhs_text(self, model: MultiHeadAttention) -> str:
        return f"rank({self.bound.step})" if isinstance(self.bound, RankOf) else str(self._claimed(model))

    def _attained(self, model: MultiHeadAttention, text: str, bound: Any, R: Any) -> Verdict:
        for m in _concrete_models(model)[:6]:
            target = int(self._claimed(m))
            if _certify(m, self.subject, target):
                return Verdict("true", f"{text}: the proven bound {bound} is the claimed value and a generic exact "
                               f"instance at {_sizes(m)} attains {target} (certified)", "proof",
                               scope="the maximum over weights (zero weights give less)")
        return Verdict("undecided", f"{text}: rank <= {bound} is proven, but no instance attaining {R} was "
                       "certified", "none")

    def _refute(self, model: MultiHeadAttention, text: str, bound: Any) -> Verdict:
        weights = self._weights_refuted(model, text, bound)
        if weights is not None:
            return weights
        for m in _concrete_models(model):
            claimed = int(self._claimed(m))
            need = claimed if self.op == "lt" else claimed + 1
            top = int(rank_bound(_expr(m, self.subject), m.dims).bound)
            if self.op == "eq" and top < claimed:
                return Verdict("false", f"{text} fails at {_sizes(m)}: rank <= {top} < {claimed} is proven",
                               "proof")
            if need > top:
                continue
            cert = _certify(m, self.subject, need)
            if cert is not None:
                return Verdict("false", f"{text} fails at {_sizes(m)}: an exact instance has rank >= {need} "
                               f"(minor rows {cert.rows}, columns {cert.cols}, det in {cert.det})",
                               "certified counterexample", expected=f"rank({_label(self.subject)}) <= {bound}")
        return Verdict("undecided", f"{text}: the proven bound is rank <= {bound}, which does not imply the "
                       "statement, and no certified counterexample was found at small sizes", "none")


    def _weights_refuted(self, model: MultiHeadAttention, text: str, bound: Any) -> Verdict | None:
        """A claim bounding a head's attention weights below their proven rank ``min(n, n_kv)``
        (:mod:`mha_symbolic.rank.attention_weights`), refuted at the model's own sizes: nothing is evaluated, so
        any size will do. Symbolic sizes are set where the claim can fail (``n`` one above the claimed bound)."""
        if callable(self.subject) or isinstance(self.bound, RankOf) or self.op == "eq":
            return None
        name = step_name(model, self.subject)
        if not name.startswith("A_") or model.mask is not None:
            return None
        for m in _sizes_where_it_can_fail(model, self._claimed):
            claimed = int(self._claimed(m))
            head = int(name[2:]) if name[2:].isdigit() else 1
            proven = weights_rank(m, head)
            if proven is None:
                return None
            need = claimed if self.op == "lt" else claimed + 1
            if int(proven.rank) < need:
                continue
            where = "for every input" if proven.every_input else "on this instance"
            general = weights_rank(model, head)
            check = ""
            if proven.certificate is not None and proven.certificate.excludes_zero:
                check = (f" The instance evaluated exactly has a {proven.certificate.size} x "
                         f"{proven.certificate.size} minor of {name} whose determinant lies in "
                         f"{proven.certificate.det} (certified).")
            elif need <= CERTIFY_WEIGHTS_UP_TO:  # a second witness, computed: a minor of a generic instance
                cert = certified_weights_rank(m, need, head)
                if cert.excludes_zero:
                    check = (f" Independently, a generic instance at these sizes has a {need} x {need} minor of "
                             f"{name} whose determinant lies in {cert.det} (certified).")
            return Verdict("false", f"{text} fails at {_sizes(m)}: rank {name} = {proven.rank} {where}: "
                           + " ".join(proven.reasoning) + check
                           + (f" In general rank {name} = {general.rank}." if general is not None else ""),
                           "proof", scope=f"fails whenever {'min(n, n_kv)' if model.cross else 'n'} > "
                                          f"{self._rhs_text(model)}"
                           + (", for every input" if proven.every_input else ""),
                           expected=f"rank({name}) = {general.rank if general is not None else proven.rank}")
        return None


def _sizes_where_it_can_fail(model: MultiHeadAttention, claimed: Callable[[MultiHeadAttention], Any]
                             ) -> list[MultiHeadAttention]:
    """The model itself when its sizes are numbers; else sizes where the weights' rank could exceed the
    claimed bound: the free sizes other than the token counts from the small grid, then ``n`` (and ``n_kv``)
    one above the bound there."""
    if model.dims.is_concrete and (not model.cross or getattr(model.n_kv, "is_Integer", False)):
        return [model]
    D = model.dims
    tied = {r.lhs for r in D.relations}
    free = [k for k, v in D.as_dict().items() if not v.is_Integer and v not in tied and k != "n"]
    out: list[MultiHeadAttention] = []
    for values in product(*(SEARCH[k] for k in free)):
        try:
            m = model.bind(**dict(zip(free, values, strict=True))) if free else model
            top = claimed(m)
            counts = [int(top) + 1] if getattr(top, "is_Integer", False) else list(SEARCH["n"])
            for count in counts:
                c = m if m.dims.n.is_Integer else m.bind(n=count)
                if c.cross and not getattr(c.n_kv, "is_Integer", False):
                    c = c.bind(n_kv=count)
                if c.dims.is_concrete:
                    out.append(c)
        except (DimensionError, InputError):
            continue
        if len(out) >= 6:
            break
    return out


def _sizes(m: MultiHeadAttention) -> str:
    extra = f", n_kv = {m.n_kv}" if m.cross else ""  # cross-attention's keys and values
    return ", ".join(f"{k} = {v}" for k, v in m.dims.as_dict().items()) + extra


def _certify(m: MultiHeadAttention, subject: Any, r: int) -> Any:
    """A certificate that the subject has rank >= r on a generic exact instance of ``m``, or None."""
    if r <= 0:
        return None
    for seed in range(3):
        try:
            E = m.evaluate(**generic_instance(m, seed))
        except SizeLimitError:
            return None
        value = _instance_value(m, E, subject(m)) if callable(subject) else ImmutableMatrix(E[step_name(m, subject)])
        if r > min(value.shape):
            return None
        cert = certify_rank_at_least(value, r)
        if cert.excludes_zero:
            return cert
    return None


def _instance_value(m: MultiHeadAttention, E: Any, expr: Any) -> ImmutableMatrix:
    """``expr`` (in the model's inputs and steps) on the instance evaluated in ``E``, exactly."""
    repl: dict[Any, Any] = {m.X: ImmutableMatrix(E.inputs["X"]), m.W_O: ImmutableMatrix(E.inputs["W_O"])}
    for key in ("Y", "m", "M"):  # cross-attention's keys and values, a mask
        if key in m.inputs and E.inputs.get(key) is not None:
            repl[m.inputs[key]] = ImmutableMatrix(E.inputs[key])
    for key in ("W_Q", "W_K", "W_V"):
        for sym, val in zip(m.inputs[key], E.inputs[key], strict=True):
            repl[sym] = ImmutableMatrix(val)
    for name, step in m.steps.items():
        repl[step.symbol] = E[name]
    value = ImmutableMatrix(expr.xreplace(repl).doit())
    if any(x.has(Sum) for x in value):  # softmax of a product written out: its entries' sums still unevaluated
        value = value.applyfunc(lambda x: x.doit())
    return value


@dataclass(frozen=True)
class RankComparison(Statement):
    """"``h`` heads reach a higher rank of ``step`` than one head of the same total width": decided by
    the proven bounds of both models and a certified single-head witness at ``n``."""

    step: str = "Concat"
    n: int = 8

    def decide(self, model: MultiHeadAttention) -> Verdict:
        D = model.dims
        if not (D.d_model.is_Integer and D.h.is_Integer):
            raise InputError("a rank comparison needs concrete d_model and h")
        multi = model.bind(n=self.n) if not D.n.is_Integer else model
        single = MultiHeadAttention(n=multi.dims.n, d_model=D.d_model, h=1)
        b_multi = int(rank_bound(multi.steps[step_name(multi, self.step)].expr, multi.dims).bound)
        b_single = int(rank_bound(single.steps[step_name(single, self.step)].expr, single.dims).bound)
        rows = {r.quantity: r for r in rank_report(int(multi.dims.n), int(D.d_model), 1)}
        attained = rows[self.step].attained if self.step in rows else 0
        sizes = f"n = {multi.dims.n}, d_model = {D.d_model}"
        if b_multi <= attained:
            return Verdict("false", f"at {sizes}: {D.h} heads reach rank({self.step}) <= {b_multi} (proof), while "
                           f"one head attains {attained} (certified witness): multi-head is not higher",
                           "certified counterexample", expected=f"both at most {b_multi}")
        return Verdict("undecided", f"at {sizes}: proven bounds {b_multi} ({D.h} heads) and {b_single} (one head); "
                       f"one head certified at {attained}", "none")


