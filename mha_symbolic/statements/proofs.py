r"""Statements settled by a proof that is built from the model, by counts, or not mathematical at all.

Examples
========

>>> from mha_symbolic import MultiHeadAttention
>>> from mha_symbolic.statements import CostStatement, Informal
>>> CostStatement("matmul_flops").decide(MultiHeadAttention()).verdict
'true'
>>> v = CostStatement("total_flops").decide(MultiHeadAttention())
>>> v.verdict, v.expected
('false', '8*d_model**2*n + 4*d_model*n**2 + 4*h*n**2 - h*n')
>>> Informal("a statement about training").decide(MultiHeadAttention()).verdict
'informal'
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ..attention import MultiHeadAttention
from ..errors import InputError
from ._base import Statement
from .verdict import Verdict

__all__ = ["ProofStatement", "CostStatement", "Informal"]


@dataclass(frozen=True)
class ProofStatement(Statement):
    """Settled by ``prove(model)``: a :class:`~mha_symbolic.proofs.Proof` (``verified``) or a
    :class:`~mha_symbolic.rank.RankClaim` (its ``verdict`` starts with true/false/undecided)."""

    prove: Callable[[MultiHeadAttention], Any]

    def decide(self, model: MultiHeadAttention) -> Verdict:
        result = self.prove(model)
        if hasattr(result, "verified"):
            checks = "; ".join(f"{what}: {'holds' if ok else 'FAILS'}" for what, ok in result.checks[:4])
            detail = f"{result.statement} ({checks})" if checks else result.statement
            basis = "proof" if result.kind == "proof" else "exact computation"
            return Verdict("true" if result.verified else "undecided", detail, basis if result.verified else "none")
        word = result.verdict.split(":")[0].strip()
        verdict = word if word in ("true", "false") else "undecided"
        basis = ("certified counterexample" if verdict == "false" and result.certificate is not None else
                 "proof" if verdict != "undecided" else "none")
        return Verdict(verdict, f"{result.statement}: {' '.join(result.reasoning)}", basis,
                       scope=getattr(result, "scope", ""))


@dataclass(frozen=True)
class CostStatement(Statement):
    """"The cost is shared by the heads": the count ``part`` (``parameters``, ``matmul_flops``,
    ``elementwise_flops``, ``total_flops``) of the model's steps does not depend on ``h`` at fixed
    ``d_model``, so each of the ``h`` heads does ``1/h`` of it."""

    part: str = "total_flops"

    def decide(self, model: MultiHeadAttention) -> Verdict:
        from ..proofs import parameter_and_flop_counts

        if model.dims.h.is_Integer:  # the same variant (grouping, cross-attention, mask) at symbolic sizes
            model = model.generalised()
        counts = parameter_and_flop_counts(model).result
        if self.part not in counts:
            raise InputError(f"part must be one of parameters, matmul_flops, elementwise_flops, total_flops; "
                             f"got {self.part!r}")
        value = counts[self.part]
        grows = model.dims.h in value.free_symbols
        split = ", ".join(f"{k} = {counts[k]}" for k in ("matmul_flops", "elementwise_flops"))
        if grows:
            return Verdict("false", f"{self.part} = {value} depends on h ({split}), counted from the model's steps",
                           "exact computation", expected=str(value))
        return Verdict("true", f"{self.part} = {value} does not depend on h: each head does 1/h of it",
                       "exact computation")


@dataclass(frozen=True)
class Informal(Statement):
    """Not a mathematical statement (about training, hardware, what heads learn): nothing to decide."""

    why: str

    @property
    def informal(self) -> bool:
        return True

    def decide(self, model: MultiHeadAttention) -> Verdict:
        return Verdict("informal", self.why, "informal")
