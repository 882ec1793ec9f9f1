r"""Statements about counts of one attention layer -- its parameters and its KV cache -- read off the model.

The count comes from :func:`mha_symbolic.proofs.parameter_and_flop_counts` of the model the statement is
decided on (parameters: the entries of its weights; ``kv_cache_per_token``: one row of every ``K_j``,
``V_j`` step), never from a formula typed beside it.  The stated count is a function of the dimensions and
of ``g``, the model's number of key/value heads (``h`` without grouping), so a claim "2 g d_k" is true of
grouped-query attention and false of a model whose steps cache more.

Examples
========

>>> from mha_symbolic import MultiHeadAttention
>>> from mha_symbolic.statements.counts import CountStatement
>>> s = CountStatement("kv_cache_per_token", lambda D, g: 2 * g * D.d_k)
>>> s.decide(MultiHeadAttention(n=None, d_model=4096, h=32, kv_heads=8)).verdict
'true'
>>> v = CountStatement("kv_cache_per_token", lambda D, g: 2 * D.d_k).decide(MultiHeadAttention(n=None, d_model=4096,
...                                                                                            h=32,
...                                                                                          kv_heads=8))
>>> v.verdict, v.expected
('false', '2048')
>>> CountStatement("kv_cache_per_token", lambda D, g: D.h / g, versus_mha=True).decide(
...     MultiHeadAttention(n=None, d_model=4096, h=32, kv_heads=8)).verdict
'true'
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from sympy import simplify

from .._convert import as_sympy
from ..attention import MultiHeadAttention
from ..errors import InputError
from ._base import Statement
from .verdict import Verdict

__all__ = ["CountStatement"]

_PARTS = ("parameters", "kv_cache_per_token")


@dataclass(frozen=True)
class CountStatement(Statement):
    """``part`` (``parameters`` or ``kv_cache_per_token``) of the model equals ``stated(dims, g)``; with
    ``versus_mha`` the count of the same model without grouping divided by the model's own (the saving)."""

    part: str
    stated: Callable[[Any, Any], Any]
    versus_mha: bool = False

    def decide(self, model: MultiHeadAttention) -> Verdict:
        from ..proofs import parameter_and_flop_counts

        if self.part not in _PARTS:
            raise InputError(f"part must be one of {', '.join(_PARTS)}; got {self.part!r}")
        D = model.dims
        g = model.kv_heads if model.kv_heads is not None else D.h
        value = parameter_and_flop_counts(model).result[self.part]
        what = f"{self.part} = {value}"
        if self.versus_mha:
            plain = parameter_and_flop_counts(model.replace_options(kv_heads=None)).result[self.part]
            value = simplify(plain / value)
            what = f"{self.part} of multi-head attention / of this model = {plain} / {what.split(' = ')[1]} = {value}"
        stated = simplify(as_sympy(self.stated(D, g)).subs(D.definitions))
        value = simplify(as_sympy(value).subs(D.definitions))
        same = simplify(value - stated)
        where = f"g = {g} key/value heads, counted from the model's steps"
        if same == 0:
            return Verdict("true", f"{what} ({where})", "exact computation")
        if same.is_number:
            return Verdict("false", f"{what}, not {stated} ({where})", "exact computation", expected=str(value))
        return Verdict("undecided", f"{what}; equal to {stated} only if {same} = 0 ({where})", "none")
