r"""Formula statements: a tutorial's formula read by the LaTeX reader and compared with the model's.

Examples
========

>>> from mha_symbolic import MultiHeadAttention
>>> from mha_symbolic.statements import FormulaStatement
>>> tex = r"Z = \mathrm{softmax}\left(\frac{QK^{\top}}{\sqrt{d_k}}\right)V"
>>> FormulaStatement(tex, "Attention").decide(MultiHeadAttention()).verdict
'true'
>>> v = FormulaStatement(tex, "Attention").decide(MultiHeadAttention(scale=1))
>>> v.verdict, v.expected
('false', '\\mathrm{Attention}(Q, K, V) = \\mathrm{softmax}\\left(Q K^{\\top}\\right) V')
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
from sympy import ImmutableMatrix, MatrixSymbol, Transpose

from .._shape import checked_matmul
from ..attention import MultiHeadAttention
from ..errors import InputError, ParseError, ShapeError
from ..formulas import Attention, MultiHead, standard_formulas
from ..latex import latex
from ..parse import SymbolTable, equivalent, read_formula
from ._base import Statement, shown
from .verdict import Verdict

__all__ = ["FormulaStatement", "ReadingsAgree", "product"]


def product(text: str, *factors: Any) -> Any:
    """``factors[0] factors[1] ...`` with the package's strict shape check (a :class:`ShapeError`
    naming ``text`` and both shapes), for building a statement's reading."""
    return checked_matmul(text, factors)[0]

#: Which standard formula a statement is compared with, by the object on its left-hand side.
_KINDS = {"Attention": Attention, "MultiHead": MultiHead}


def _against(model: MultiHeadAttention, kind: str) -> Any:
    for f in standard_formulas(model):
        lhs = f.lhs
        if kind == "head" and getattr(lhs, "base", None) == "head" or kind in _KINDS and isinstance(lhs, _KINDS[kind]):
            return f
    raise InputError(f"no standard formula of kind {kind!r}; kinds are 'Attention', 'head', 'MultiHead'")


@dataclass(frozen=True)
class FormulaStatement(Statement):
    """``tex`` (``lhs = rhs``) defines the model's ``kind`` of formula: ``Attention``, ``head``,
    ``MultiHead``.  Its right-hand side must equal the model's (in self-attention ``Q = K = V = X``
    is allowed); a different one is ``false`` with the model's formula as ``expected``."""

    tex: str
    kind: str

    def decide(self, model: MultiHeadAttention) -> Verdict:
        formula = _against(model, self.kind)
        table = SymbolTable.for_model(model)
        try:
            rel = read_formula(self.tex, table, strict=False)[0]
        except ParseError as e:
            return Verdict("undecided", f"the formula could not be read: {e}", "none")
        self_attention = {MatrixSymbol(c, *model.X.shape): model.X for c in "QKV"}
        if equivalent(rel.rhs, formula.rhs) or equivalent(rel.rhs, formula.rhs.xreplace(self_attention)):
            return Verdict("true", f"the right-hand side reads as that of the model's {latex(formula)}", "proof")
        return Verdict("false", f"read as {rel.rhs}; the model has {formula.rhs}", "proof", expected=latex(formula))


@dataclass(frozen=True)
class ReadingsAgree(Statement):
    """A formula written in another convention (``reading(model)``, built with the model's objects)
    agrees with the model's step ``step``: equal to it, or to its transpose for ``transpose=True``
    (column vectors instead of rows).  Shapes that cannot multiply, or an exact instance on which
    the two differ, make the statement ``inconsistent`` with the model."""

    text: str
    reading: Callable[[MultiHeadAttention], Any]
    step: str = "Output"
    transpose: bool = True

    def decide(self, model: MultiHeadAttention) -> Verdict:
        step = model.steps[self.step]
        try:
            other = self.reading(model)
        except ShapeError as e:
            return Verdict("inconsistent", f"{self.text} cannot be formed: {e}")
        target = Transpose(step.definition) if self.transpose else step.definition
        if target.doit() == other.doit():
            return Verdict("true", f"{self.text} equals {'the transpose of ' if self.transpose else ''}{step.text} "
                           "(transpose of a product reverses it)", "proof")
        D = model.dims.bind(n=1) if not model.dims.n.is_Integer else model.dims
        symbols = (target.atoms(MatrixSymbol) | other.atoms(MatrixSymbol))
        subs: dict[Any, ImmutableMatrix] = {}
        rng = np.random.default_rng(0)
        for s in sorted(symbols, key=str):
            shape = tuple(int(x.subs({model.dims.n: D.n})) for x in model.dims.shape(s.shape))
            subs[s] = ImmutableMatrix(rng.integers(-2, 3, size=shape).tolist())
        a = target.xreplace(subs).doit()
        b = other.xreplace(subs).doit()
        if a != b:
            return Verdict("inconsistent", f"{self.text} and {step.text} disagree: on an exact instance "
                           f"({', '.join(f'{k} = {shown(v)}' for k, v in subs.items())}) "
                           f"they give {shown(b)} and {shown(a)}", "certified counterexample",
                           expected=latex(target))
        return Verdict("undecided", f"{self.text} and {step.text} agree on an instance, but no proof was found",
                       "evidence")
