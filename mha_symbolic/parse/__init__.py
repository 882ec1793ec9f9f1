"""Reading documents: LaTeX formulas (the only place latex2sympy2_extended is imported)."""

from __future__ import annotations

from .latex import Relation, SymbolTable, equivalent, read_expression, read_formula, too_large

__all__ = ["Relation", "SymbolTable", "read_formula", "read_expression", "equivalent", "too_large"]
