r"""Statistics of the model's scores: E and Var of an entry of ``S = Q K^T`` or ``S' = scale S``.

Explanation
===========

The entry is read off the model's own steps (``S'_i`` composed down to ``Q_i`` and ``K_i``):
``S'[0, 1] = c * Sum(Q[0, j] K[1, j], (j, 0, d_k - 1))`` with ``c`` the model's scale.  With the
entries of ``Q`` and ``K`` independent, mean 0 and variance ``sigma^2``, the moments follow from
``sympy.stats`` for one term and the independence lemma (variances of independent terms add)
for the sum; a full ``sympy.stats`` computation of the explicit entry checks ``d_k = 1..3``.
So a model without the ``1/sqrt(d_k)`` factor gets ``Var(S') = d_k sigma^4``, and the statement
"the scaled scores have variance independent of d_k" becomes false.

Examples
========

>>> from mha_symbolic import MultiHeadAttention
>>> from mha_symbolic.statements import ScoreStatistic
>>> ScoreStatistic("Var", "S'", independent_of="d_k").decide(MultiHeadAttention()).verdict
'true'
>>> ScoreStatistic("Var", "S'", independent_of="d_k").decide(MultiHeadAttention(scale=1)).verdict
'false'
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from sympy import ImmutableMatrix, Sum, Symbol, expand, simplify
from sympy.matrices.expressions.matexpr import MatrixElement
from sympy.stats import E as expectation
from sympy.stats import Normal
from sympy.stats import variance as stats_variance

from ..attention import MultiHeadAttention
from ..dims import Dims, dimension_symbol
from ..errors import InputError, require
from ._base import Statement, step_name
from .verdict import Verdict

__all__ = ["ScoreStatistic", "score_moments", "SIGMA"]

SIGMA = Symbol("sigma", positive=True)


def _entry_in_qk(model: MultiHeadAttention, which: str) -> tuple[Any, Any, Any]:
    """The step ``S_i`` or ``S'_i`` written with the head's ``Q_i``, ``K_i`` (and those symbols)."""
    steps = model.steps
    s, s_scaled = steps[step_name(model, "S_i")], steps[step_name(model, "S'_i")]
    expr = s.definition if which == "S" else s_scaled.definition.xreplace({s.symbol: s.definition})
    q, k = steps[step_name(model, "Q_i")].symbol, steps[step_name(model, "K_i")].symbol
    return expr, q, k


def score_moments(model: MultiHeadAttention, which: str = "S'", full_check_up_to: int = 3) -> dict[str, Any]:
    """``{"mean": ..., "variance": ..., "checks": [...]}`` of the entry ``(0, 1)`` of ``S`` or ``S'``,
    for a symbolic ``d_k`` (independence lemma) with ``d_k = 1..full_check_up_to`` checked in full by
    ``sympy.stats`` on the explicit entry (0: no full check; the lemma's per-term moments still come from
    ``sympy.stats``)."""
    from ..attention import MultiHeadAttention

    require(model, MultiHeadAttention, "score_moments's model", "a MultiHeadAttention")
    if which not in ("S", "S'"):
        raise InputError(f"which must be 'S' or \"S'\", got {which!r}")
    general = MultiHeadAttention(Dims(), model.convention, model.causal, model.bias, model.args[4])
    expr, q, k = _entry_in_qk(general, which)
    entry = expr[0, 1]
    coeff, rest = entry.as_independent(Sum)
    if not isinstance(rest, Sum):
        raise InputError(f"the score entry {entry} is not a scaled sum of products")
    term, (_j, lo, hi) = rest.function, rest.limits[0]
    count = simplify(hi - lo + 1)
    parents = {x.parent for x in term.atoms(MatrixElement)}
    if parents != {q, k} or len(term.args) != 2:
        raise InputError(f"the score term {term} is not a product of a query and a key entry")
    qj, kj = Normal("q_j", 0, SIGMA), Normal("k_j", 0, SIGMA)  # independent, mean 0, variance sigma^2
    mean = simplify(coeff * count * expectation(qj * kj))
    var = simplify(coeff**2 * count * stats_variance(qj * kj))  # independence lemma: variances add
    d_k = dimension_symbol("d_k")
    checks = []
    for d in range(1, full_check_up_to + 1):
        m = general.bind(n=2, d_model=d, h=1)
        e, qq, kk = _entry_in_qk(m, which)
        Qrv = ImmutableMatrix(2, d, [Normal(f"q{r}{c}", 0, SIGMA) for r in range(2) for c in range(d)])
        Krv = ImmutableMatrix(2, d, [Normal(f"k{r}{c}", 0, SIGMA) for r in range(2) for c in range(d)])
        explicit = e.xreplace({qq: Qrv, kk: Krv}).doit()[0, 1]
        full = simplify(expectation(expand(explicit**2)) - expectation(explicit) ** 2)
        checks.append((f"full sympy.stats computation at d_k = {d}", simplify(full - var.subs(d_k, d)) == 0))
    return {"mean": mean, "variance": var, "entry": entry, "checks": checks}


@dataclass(frozen=True)
class ScoreStatistic(Statement):
    """``moment(which) = stated(d_k, sigma)``, or -- with ``independent_of`` -- "the moment does not
    depend on that dimension"; ``moment`` is ``E`` or ``Var``, ``which`` is ``S`` or ``S'``."""

    moment: str
    which: str = "S'"
    stated: Callable[[Any, Any], Any] | None = None
    independent_of: str | None = None

    def decide(self, model: MultiHeadAttention) -> Verdict:
        if self.moment not in ("E", "Var"):
            raise InputError(f"moment must be 'E' or 'Var', got {self.moment!r}")
        m = score_moments(model, self.which)
        value = m["mean"] if self.moment == "E" else m["variance"]
        failed = [what for what, ok in m["checks"] if not ok]
        if failed:
            return Verdict("undecided", f"{self.moment}({self.which}) = {value}, but {failed} disagree", "none")
        label = f"{self.moment}({self.which}_ij) = {value} (independent entries, mean 0, variance sigma^2)"
        if self.independent_of is not None:
            dim = dimension_symbol(self.independent_of)
            free = dim in value.free_symbols
            return Verdict("false" if free else "true", f"{label}: {'grows with' if free else 'independent of'} "
                           f"{self.independent_of}", "proof", expected=str(value))
        if self.stated is None:
            raise InputError("give stated or independent_of")
        claim = self.stated(dimension_symbol("d_k"), SIGMA)
        ok = simplify(value - claim) == 0
        return Verdict("true" if ok else "false", label, "proof", expected=str(value))


