r"""Statements about masked attention weights and about the rank bounds of attention variants.

:class:`MaskedWeights` evaluates the model's ``A_1`` exactly on generic integer inputs with the last key masked
(the model's key padding row ``m`` or additive ``M``; a model without a mask has no masked key, and its
weights are all positive) and compares the masked key's weight or the row sums with the stated number.
:class:`VariantRankStatement` reads a quantity's proven bound and its certified witness from
:func:`mha_symbolic.rank.variant_rank_bounds` of the model (cross-attention's ``1 + h (n_kv - 1)``).

>>> from mha_symbolic import MultiHeadAttention
>>> s = MaskedWeights("masked", 0)
>>> s.decide(MultiHeadAttention(n=2, d_model=2, h=1, n_kv=3, mask="key_padding")).verdict
'true'
>>> s.decide(MultiHeadAttention(n=2, d_model=2, h=1, n_kv=3)).verdict
'false'
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from sympy import ImmutableMatrix, oo, simplify

from .._convert import as_sympy
from ..attention import MultiHeadAttention
from ..errors import InputError, MaskError
from ._base import Statement, generic_instance
from .verdict import Verdict

__all__ = ["MaskedWeights", "VariantRankStatement"]


def _weights(model: MultiHeadAttention) -> ImmutableMatrix:
    inputs = generic_instance(model)
    n_kv = int(model.n_kv)
    if model.mask == "key_padding":
        inputs["mask"] = [[0 if b == n_kv - 1 else 1 for b in range(n_kv)]]
    elif model.mask == "additive":
        inputs["mask"] = [[-oo if b == n_kv - 1 else 0 for b in range(n_kv)] for _ in range(int(model.dims.n))]
    return ImmutableMatrix(model.evaluate(**inputs)["A_1"])


@dataclass(frozen=True)
class MaskedWeights(Statement):
    """``part`` is ``"masked"`` (the weight of a masked key, in every row) or ``"row sums"`` (of the masked
    weights), and equals ``stated``."""

    part: str
    stated: Any

    def decide(self, model: MultiHeadAttention) -> Verdict:
        if self.part not in ("masked", "row sums"):
            raise InputError(f"part must be 'masked' or 'row sums', got {self.part!r}")
        if not model.dims.is_concrete or getattr(as_sympy(model.n_kv), "free_symbols", None):
            raise InputError("masked weights are evaluated on a model of concrete sizes (n, d_model, h, n_kv)")
        try:
            A = _weights(model)
        except MaskError as e:
            return Verdict("false", f"the last key was every key of a row: {e}", "exact computation",
                           expected="undefined")
        mask = {"key_padding": "key padding m = (1, ..., 1, 0)", "additive": "additive M with -oo in the last "
                "column"}.get(model.mask or "", "no mask: the model masks no key")
        values = ({simplify(x) for x in A.col(A.cols - 1)} if self.part == "masked"
                  else {simplify(sum(A.row(r))) for r in range(A.rows)})
        what = "the last key's weight" if self.part == "masked" else "the row sums"
        if len(values) != 1:
            return Verdict("false", f"{what} differ between rows ({mask}): {sorted(map(str, values))}",
                           "exact computation")
        value = values.pop()
        same = simplify(value - as_sympy(self.stated)) == 0
        return Verdict("true" if same else "false", f"{what} = {value} in every row of A_1, computed exactly ({mask})",
                       "exact computation", expected="" if same else str(value))


@dataclass(frozen=True)
class VariantRankStatement(Statement):
    """``rank(quantity) <= stated(dims, n_kv)`` (``op="le"``), or ``=`` with a certified witness of the model's
    sizes (``op="eq"``): read from :func:`mha_symbolic.rank.variant_rank_bounds`."""

    quantity: str
    op: str
    stated: Callable[[Any, Any], Any]

    def decide(self, model: MultiHeadAttention) -> Verdict:
        from ..rank import provably_le, variant_rank_bounds

        if self.op not in ("le", "eq"):
            raise InputError(f"op must be 'le' or 'eq', got {self.op!r}")
        result = variant_rank_bounds(model).result
        if self.quantity not in result["bounds"]:
            raise InputError(f"no bound for {self.quantity!r}; quantities are {list(result['bounds'])}")
        D = model.dims
        bound = as_sympy(result["bounds"][self.quantity])
        stated = D.simplify(as_sympy(self.stated(D, model.n_kv)))
        row = next((r for r in result.get("rows", []) if r.quantity == self.quantity), None)
        text = f"rank({self.quantity}) {'<=' if self.op == 'le' else '='} {stated}: the proven bound is {bound}"
        if self.op == "le":
            if provably_le(bound, stated, D):
                return Verdict("true", f"{text} (row-stochastic rule and shapes)", "proof")
            if row is not None and row.attained > int(stated):
                return Verdict("false", f"{text}, and a certified witness attains {row.attained} ({row.certificate})",
                               "certified counterexample", expected=str(bound))
            return Verdict("undecided", f"{text}, which does not imply the statement", "none")
        if row is None:
            return Verdict("undecided", f"{text}; no witness at symbolic sizes", "none")
        if simplify(bound - stated) == 0 and row.attained == int(stated):
            return Verdict("true", f"{text}, attained by a certified witness ({row.certificate})", "proof")
        return Verdict("false", f"{text}; the witness attains {row.attained}", "proof", expected=str(bound))
