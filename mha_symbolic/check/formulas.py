r"""Formula statements of a document: two matrix expressions, compared through the model.

Each side is expanded to the model's inputs (every step symbol replaced by the model's own
expression for it) and the two are compared as SymPy expressions
(:func:`mha_symbolic.parse.equivalent`).  A side naming something the model does not have
(``Q = K = V = X``, a new name) makes the chain a definition: ``given``.  A definition that
differs from the model's (no ``\sqrt{d_k}``, ``/d_k``, ``K^T Q``) is ``wrong``, with the model's form
as ``expected``.
"""

from __future__ import annotations

import re
from typing import Any

from sympy import MatrixSymbol, Symbol

from ..errors import MHASymbolicError
from ..latex import latex
from ..parse import equivalent
from .model import DocumentModel, as_int, dim_name

__all__ = ["judge_formula"]

_GENERIC = {"Q", "K", "V"}


def _expanded(doc: DocumentModel, e: Any) -> Any:
    from .ranks import _in_model

    return _in_model(_model_of(doc, e), e)


def _model_of(doc: DocumentModel, e: Any) -> Any:
    from .model import generic_model

    M = doc.model()
    names = {str(a) for a in e.atoms(MatrixSymbol)}
    if any(n.endswith("_i") or n.endswith("^i") for n in names):
        return generic_model(*doc.variant())
    return M


def _sized(doc: DocumentModel, e: Any) -> Any:
    r"""``e`` with the document's known sizes in place of their symbols (``\sqrt{d_k}`` -> ``2``)."""
    from ..concat import ConcatHeads
    from .judge import _dims_subs

    if not hasattr(e, "xreplace"):
        return e
    e = e.xreplace(_dims_subs(doc, e))
    wide = {c: c.doit() for c in e.atoms(ConcatHeads) if c.h.is_Integer}  # Concat(head_1, ..., head_h) at h = 2
    e = e.xreplace(wide) if wide else e
    M = doc.model()
    concrete = {str(w): w for k in ("W_Q", "W_K", "W_V") for w in M.inputs[k]} | {"X": M.X, "W_O": M.W_O} | \
        {k: M.inputs[k] for k in ("Y", "m", "M") if k in M.inputs}
    same_name = {a: concrete[str(a)] for a in e.atoms(MatrixSymbol) if str(a) in concrete and a != concrete[str(a)]}
    return e.xreplace(same_name) if same_name else e


def _head_beyond(doc: DocumentModel, name: str) -> bool:
    """Is ``name`` a per-head matrix (``K_3``, ``Q_{9}``, ``head_5``) of a head past the last the document's model
    has: past its ``g`` key/value heads for keys and values, past its ``h`` heads for the rest?"""
    m = re.fullmatch(r"(Q|K|V|S'?|A|head)_\{?(\d+)\}?", name)
    M = doc.model()
    count = M.kv_heads if m and m.group(1) in ("K", "V") and M.kv_heads is not None else M.dims.h
    return m is not None and as_int(count) is not None and int(m.group(2)) > (as_int(count) or 0)


def judge_formula(doc: DocumentModel, sides: list[Any], tex: list[str], ops: list[str]
                  ) -> tuple[str, str, str | None, str]:
    from ..formulas import Attention

    if any(not hasattr(s, "atoms") for s in sides):
        return "unchecked", "not an expression", None, ""
    sides, note = _self_attention(sides)
    if any(isinstance(s, Attention) for s in sides) and len(sides) == 2:
        status, message, expected, basis = _attention(doc, sides)
        return status, message + note, expected, basis
    known = {str(a) for s in sides for a in s.atoms(MatrixSymbol)}
    M = doc.model()
    model_names = {"X", "W_O", *M.steps} | {str(w) for k in ("W_Q", "W_K", "W_V") for w in M.inputs[k]} | \
        {k for k in ("Y", "m", "M") if k in M.inputs}  # cross-attention's Y, a mask
    from .model import generic_model

    G = generic_model(*doc.variant())
    generic_steps = {"X", "W_O", *G.steps} | {str(w) for k in ("W_Q", "W_K", "W_V") for w in G.inputs[k]}
    foreign = {n for n in known if n not in model_names and n not in generic_steps}
    name = str(sides[0]) if len(sides) == 2 and ops[0] in ("eq", "def") and getattr(sides[0], "is_symbol", False) \
        else None
    if name is not None and (name in foreign or (not isinstance(sides[0], MatrixSymbol) and dim_name(name) is None
                                                 and name not in model_names | generic_steps)):
        doc.definitions[name] = sides[1]  # Z = softmax(Q K^T / sqrt(d_k)) V: later rank(Z) reads this
        doc.formulas[name] = (tex[1], sides[1])  # ... in the model in force there (sizes set after the definition)
        inputs = sorted(foreign - {name})
        return "given", f"a definition of {name}" + (f" in {', '.join(inputs)}" if inputs else ""), None, ""
    if foreign:
        return "given", f"a definition of {', '.join(sorted(foreign))}", None, ""
    loose = doc.undefined(*sides)
    beyond = [x for x in loose if _head_beyond(doc, x)]
    if beyond:  # K_3 of a model with g = 1 key/value head: a head the document's own model does not have
        return ("wrong", f"{', '.join(beyond)}: the document's model has no such head (h = {doc.model().dims.h}"
                f"{'' if doc.model().kv_heads is None else f', g = {doc.model().kv_heads} key/value heads'})",
                None, "proven")
    if loose and known:  # W_Q with no head index, or M_i defined later in the sentence, read as a number beside
        # matrices: it would commute (X W_K W_Q^T = X W_Q W_K^T), and what it stands for is not known here
        return ("unchecked", f"{', '.join(loose)}: neither a matrix of the model nor a name the document has defined "
                "(its shape and value are unknown), so the formula is not compared", None, "")
    try:
        expanded = [_sized(doc, _expanded(doc, s)) for s in sides]
    except (MHASymbolicError, KeyError, ValueError, TypeError) as e:
        return "unchecked", f"not expanded: {str(e).splitlines()[0][:160]}", None, ""
    for k, op in enumerate(ops):
        if op not in ("eq", "def", "approx", "ne"):
            return "unchecked", f"operator {op} between matrix expressions", None, ""
        a, b = expanded[k], expanded[k + 1]
        try:
            same = equivalent(a, b)
        except (MHASymbolicError, ValueError, TypeError) as e:
            return "unchecked", f"not compared: {str(e).splitlines()[0][:160]}", None, ""
        if op == "ne":
            if same:
                return ("wrong", f"{tex[k]} and {tex[k + 1]} are the same expression in the model's inputs "
                        f"({latex(a)})", None, "proven")
            on_values = _on_values(doc, sides[k], sides[k + 1])
            if on_values is False:
                continue
            return ("unchecked" if on_values is None else "wrong",
                    "not proven equal, and no values of the document tell them apart" if on_values is None else
                    f"{tex[k]} and {tex[k + 1]} are equal on the document's values", None,
                    "" if on_values is None else "computed")
        if not same:
            on_values = _on_values(doc, sides[k], sides[k + 1])
            if on_values is True:
                continue
            renamed = _scaled_scores_named(doc, tex, b) if k == 0 else None
            if renamed is not None and len(sides) == 2:
                return "correct", renamed, None, "proven"
            if renamed is not None:  # S_i = Q_i K_i^T / \sqrt{64} = Q_i K_i^T / 8: the rest of the chain is compared
                note += f" ({renamed})"
                continue
            unknown = sorted({str(x) for x in _scalars(a) | _scalars(b)} & set(loose)) + _undefined_functions(a, b)
            if unknown:  # alpha_1 v_1 + ... = (0.42, 0.85) with the alphas not read: an equation in them
                return ("unchecked", f"{tex[k]} is {latex(a)} in the model, with {', '.join(unknown)} not defined "
                        "(as read): not compared", None, "")
            return ("wrong", f"{tex[k]} is {latex(a)} in the model, not {tex[k + 1]}"
                    + (" (and differs on the document's values)" if on_values is False else ""), _show(a), "proven")
    if re.fullmatch(_S_NAME, tex[0]) and "S" not in doc.renames:
        doc.unscaled_s = True  # S_1 = Q_1 K_1^T held: S names the unscaled scores in this document
    return "correct", "the same expression in the model's inputs" + note, None, "proven"


def _scalars(e: Any) -> set[Any]:
    """The scalar symbols in an expression or the entries of a matrix."""
    return {x for x in getattr(e, "free_symbols", set()) if isinstance(x, Symbol)}


#: the document's S, S_i or S^{(i)}: the scores, scaled or not as the document defines them
_S_NAME = r"\s*S(_\{?\s*[\w,]+\s*\}?|\^\{?\(?\w+\)?\}?)?\s*"


def _scaled_scores_named(doc: DocumentModel, tex: list[str], right: Any) -> str | None:
    """``S_i = Q_i K_i^T / \\sqrt{d_k}``: the document's ``S`` is the model's scaled scores ``S'``.  When the right
    side is the model's ``S'`` of that head, ``S`` is read as ``S'`` from here on (as "P_i for the attention
    weights" renames P); the message says so.  None otherwise."""
    m = re.fullmatch(_S_NAME, tex[0])
    if m is None or "S" in doc.renames or doc.unscaled_s:
        return None  # S already stood for the unscaled scores: S = Q K^T / sqrt(d_k) is then a contradiction
    try:
        model_scaled = _sized(doc, _expanded(doc, doc.read("S'" + re.sub(r"^\^\{?\(?(\w+)\)?\}?$", r"_{\1}",
                                                                          m.group(1) or ""))))
        if not equivalent(model_scaled, right):
            return None
    except (MHASymbolicError, KeyError, ValueError, TypeError):
        return None
    doc.renames["S"] = "S'"
    return (f"the model's scaled scores S'{m.group(1) or ''} (the document's {tex[0].strip()}): the same expression "
            f"in the model's inputs; {tex[0].strip()} is read as S'{m.group(1) or ''} from here on")


def _self_attention(sides: list[Any]) -> tuple[list[Any], str]:
    """``MultiHead(Q, K, V)`` and ``Attention(Q W_i^Q, K W_i^K, V W_i^V)`` read as self-attention: the layer's
    inputs ``Q``, ``K``, ``V`` are all ``X`` (the paper's convention); other sides are left alone."""
    from sympy import MatMul

    from ..formulas import Attention, MultiHead

    def projected(a: Any) -> bool:
        return isinstance(a, MatMul) and str(a.args[0]) in _GENERIC and any(
            str(w).startswith(("W_Q", "W_K", "W_V")) for w in a.atoms(MatrixSymbol))

    hit = any(all(str(x) in _GENERIC for x in m.args) for s in sides for m in s.atoms(MultiHead)) or any(
        all(projected(x) for x in a.args[:3]) for s in sides for a in s.atoms(Attention))
    if not hit:
        return sides, ""
    repl = {a: MatrixSymbol("X", *a.shape) for s in sides for a in s.atoms(MatrixSymbol) if str(a) in _GENERIC}
    return [s.xreplace(repl) for s in sides], " (self-attention: Q = K = V = X)"


def _on_values(doc: DocumentModel, a: Any, b: Any) -> bool | None:
    """Whether two sides agree exactly on the document's given values (None: not all given)."""
    from .judge import _value

    try:
        A, B = _value(doc, a), _value(doc, b)
    except (MHASymbolicError, ValueError, TypeError, KeyError):
        return None
    if any(not x.is_number for x in (*A, *B)):
        return None
    return bool(A.shape == B.shape and all((x - y).equals(0) for x, y in zip(A, B, strict=True)))


def _attention(doc: DocumentModel, sides: list[Any]) -> tuple[str, str, str | None, str]:
    """``Attention(Q, K, V) = ...`` (or ``head_i = Attention(...)``) against the model's attention."""
    from ..attention import MultiHeadAttention
    from ..formulas import Attention, attention_rhs

    M = MultiHeadAttention(scale=doc.model().scale) if not doc.model().default_scale else MultiHeadAttention()
    att = next(s for s in sides if isinstance(s, Attention))
    other = written = next(s for s in sides if s is not att)
    model_form = attention_rhs(M, *att.args[:3])
    if getattr(M.dims.d_k, "free_symbols", None):
        model_form = model_form.xreplace({M.dims.d_k: att.args[3]})
    try:
        inputs = {str(a) for a in att.atoms(MatrixSymbol)} | {"Q", "K", "V", "X"}
        if {str(a) for a in other.atoms(MatrixSymbol)} - inputs:
            other = _expanded(doc, other)
        model_form, other = _sized(doc, model_form), _sized(doc, other)
        same = equivalent(model_form, other)
    except (MHASymbolicError, KeyError, ValueError, TypeError) as e:
        return "unchecked", f"not compared: {str(e).splitlines()[0][:160]}", None, ""
    if same:
        return "correct", "the model's attention", None, "proven"
    if doc.model().default_scale and _symbolic_definition(att, written):  # softmax(Q K^T / sqrt(d_k)) V as written:
        return "correct", "the definition of attention, in the document's d_k", None, "proven"  # whatever d_k is
    return "wrong", "the model's attention is " + _show(model_form), _show(model_form), "proven"


def _symbolic_definition(att: Any, other: Any) -> bool:
    """Is ``other`` the attention of ``att``'s arguments with the scale ``1/sqrt(d_k)`` in the letter it writes
    (``d_k`` a symbol, no size put in)?  Such a formula defines attention for any head width: which width the document's
    model has is a question of its sizes, not of this formula."""
    from sympy import Symbol

    from ..attention import MultiHeadAttention
    from ..formulas import attention_rhs

    scale = next((x for x in other.atoms(Symbol) if dim_name(str(x)) == "d_k"), None)
    if scale is None:
        return False
    M = MultiHeadAttention()
    form = attention_rhs(M, *att.args[:3])
    if getattr(M.dims.d_k, "free_symbols", None):
        form = form.xreplace({M.dims.d_k: scale})
    try:
        return bool(equivalent(form, other))
    except (MHASymbolicError, KeyError, ValueError, TypeError):
        return False


def _show(e: Any) -> str:
    try:
        return latex(e)
    except Exception:  # noqa: BLE001 - a display only
        return str(e)


def _undefined_functions(*exprs: Any) -> list[str]:
    """The functions applied in ``exprs`` that no one defined (``\\mathrm{PP}(a)``, ``H(a)``): an equation in them
    compares nothing the document or the model gives."""
    from sympy.core.function import AppliedUndef

    return sorted({str(f.func) for e in exprs for f in (e.atoms(AppliedUndef) if hasattr(e, "atoms") else ())})
