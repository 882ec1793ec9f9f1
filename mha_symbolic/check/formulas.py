r"""Formula statements of a document: two matrix expressions, compared through the model.

Each side is expanded to the model's inputs (every step symbol replaced by the model's own
expression for it) and the two are compared as SymPy expressions
(:func:`mha_symbolic.parse.equivalent`).  A side naming something the model does not have
(``Q = K = V = X``, a new name) makes the chain a definition: ``given``.  A definition that
differs from the model's (no ``\sqrt{d_k}``, ``/d_k``, ``K^T Q``) is ``wrong``, with the model's form
as ``expected``.
"""

from __future__ import annotations

from typing import Any

from sympy import MatrixSymbol

from ..errors import MHASymbolicError
from ..latex import latex
from ..parse import equivalent
from .model import DocumentModel

__all__ = ["judge_formula"]

_GENERIC = {"Q", "K", "V"}


def _expanded(doc: DocumentModel, e: Any) -> Any:
    from .ranks import _in_model

    return _in_model(_model_of(doc, e), e)


def _model_of(doc: DocumentModel, e: Any) -> Any:
    from .model import _generic_table  # noqa: F401  (the generic model reads formulas in head i)

    M = doc.model()
    names = {str(a) for a in e.atoms(MatrixSymbol)}
    if any(n.endswith("_i") or n.endswith("^i") for n in names):
        from ..attention import MultiHeadAttention

        return MultiHeadAttention()
    return M


def judge_formula(doc: DocumentModel, sides: list[Any], tex: list[str], ops: list[str]
                  ) -> tuple[str, str, str | None, str]:
    from ..formulas import Attention, attention_rhs

    if any(isinstance(s, Attention) for s in sides) and len(sides) == 2:
        from ..attention import MultiHeadAttention

        M = MultiHeadAttention(scale=doc.model().scale) if not doc.model().default_scale else MultiHeadAttention()
        att = next(s for s in sides if isinstance(s, Attention))
        other = next(s for s in sides if s is not att)
        d_k = att.args[3]
        model_form = attention_rhs(M, *att.args[:3])
        if getattr(M.dims.d_k, "free_symbols", None):
            model_form = model_form.xreplace({M.dims.d_k: d_k})
        try:
            same = equivalent(model_form, other)
        except (MHASymbolicError, ValueError, TypeError) as e:
            return "unchecked", f"not compared: {str(e).splitlines()[0][:160]}", None, ""
        if same:
            return "correct", "the model's attention", None, "proven"
        return "wrong", "the model's attention is " + _show(model_form), _show(model_form), "proven"
    known = set()
    for s in sides:
        for a in getattr(s, "atoms", lambda *x: set())(MatrixSymbol):
            known.add(str(a))
    M = doc.model()
    model_names = {"X", "W_O", *M.steps} | {str(w) for k in ("W_Q", "W_K", "W_V") for w in M.inputs[k]}
    generic_steps = {"X", "W_O", "Q_i", "K_i", "V_i", "S_i", "S'_i", "A_i", "head_i", "W_Q^i", "W_K^i", "W_V^i",
                     "Concat", "Output"}
    foreign = {n for n in known if n not in model_names and n not in generic_steps}
    if foreign & _GENERIC or foreign:
        return "given", f"a definition of {', '.join(sorted(foreign))}", None, ""
    if any(not hasattr(s, "atoms") for s in sides):
        return "unchecked", "not an expression", None, ""
    try:
        expanded = [_expanded(doc, s) for s in sides]
    except (MHASymbolicError, KeyError, ValueError, TypeError) as e:
        return "unchecked", f"not expanded: {str(e).splitlines()[0][:160]}", None, ""
    for k, op in enumerate(ops):
        if op not in ("eq", "def", "approx"):
            return "unchecked", f"operator {op} between matrix expressions", None, ""
        a, b = expanded[k], expanded[k + 1]
        try:
            same = equivalent(a, b)
        except (MHASymbolicError, ValueError, TypeError) as e:
            return "unchecked", f"not compared: {str(e).splitlines()[0][:160]}", None, ""
        if not same:
            return ("wrong", f"{tex[k]} is {latex(a)} in the model, not {tex[k + 1]}", _show(a), "proven")
    return "correct", "the same expression in the model's inputs", None, "proven"


def _show(e: Any) -> str:
    try:
        return latex(e)
    except Exception:  # noqa: BLE001 - a display only
        return str(e)

