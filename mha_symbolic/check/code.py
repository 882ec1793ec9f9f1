r"""Code in a document: assignments of numbers (bound or compared like ``NAME = [...]``), stacked per-head
tensors, right sides read through ``ast`` (never run) and compared with the model's step, and the code
names of the model's quantities (``WQ1``, ``W_q[0]``, ``weights2``, ``dk``).
"""

from __future__ import annotations

import re
from typing import Any

from sympy import ImmutableMatrix

from ..errors import MHASymbolicError
from .judge import judge
from .model import DocumentModel, dim_name

__all__ = ["code_statement", "resolver"]

_CODE_NAMES = {"x": "X", "wq": "W_Q^{}", "w_q": "W_Q^{}", "wk": "W_K^{}", "w_k": "W_K^{}", "wv": "W_V^{}",
               "w_v": "W_V^{}", "wo": "W_O", "w_o": "W_O", "q": "Q_{}", "k": "K_{}", "v": "V_{}",
               "scores": "S_{}", "s": "S_{}", "scaled": "S'_{}", "weights": "A_{}", "attn": "A_{}", "a": "A_{}",
               "head": "head_{}", "head_output": "head_{}", "heads": "head_{}", "concat": "Concat", "out": "Output",
               "attention": "A_{}", "attn_weights": "A_{}", "probs": "A_{}", "logits": "S_{}",
               "scaled_scores": "S'_{}",
               "output": "Output"}


def _code_key(name: str, zero_based: bool, one_head: bool = False) -> str | None:
    """``WQ1`` -> ``W_Q^1``, ``weights2`` -> ``A_2``, ``W_q[0]`` -> ``W_Q^1``, ``X`` -> ``X``; with ``one_head`` (the
    document's model has h = 1) a per-head name without its number is head 1's: ``W_Q`` -> ``W_Q^1``."""
    m = re.fullmatch(r"([A-Za-z_]+?)_?(\d*)(?:_output)?(?:\[(\d+)\])?", name.strip())
    if not m:
        return None
    base, digits, sub = m.group(1).lower(), m.group(2), m.group(3)
    fmt = _CODE_NAMES.get(base.rstrip("_"))
    if fmt is None:
        return None
    if "{}" not in fmt:  # a name of the whole layer; numbered (out2, concat_1) it is some head's, not known here
        return None if digits or sub is not None else fmt
    index = sub if sub is not None else digits
    if not index:
        return fmt.format(1) if one_head else None
    i = int(index) + (1 if (sub is not None or zero_based) else 0)
    return fmt.format(i)


def _matrix(value: Any) -> ImmutableMatrix | None:
    if isinstance(value, (int, float)):
        return ImmutableMatrix([[value]])
    if isinstance(value, list) and value and all(isinstance(x, (int, float)) for x in value):
        return ImmutableMatrix([value])
    if isinstance(value, list) and value and all(isinstance(r, list) and all(isinstance(x, (int, float)) for x in r)
                                                 for r in value):  # numbers only: a nested list is no matrix
        try:
            return ImmutableMatrix(value)
        except (ValueError, TypeError):
            return None
    return None


def code_statement(doc: DocumentModel, p: Any, emit: Any) -> None:
    """One code statement (or printed output) with a name: a size, a matrix, or an expression."""
    from .model import dim_name

    size = dim_name(p.name)
    if size is not None and isinstance(p.value, int):
        known = doc.known_dims().get(size)
        if known is None:
            doc.bind_dim(size, p.value)
            emit(p.line, p.text, "given", f"sets {size} = {p.value}", kind="setting")
        elif p.kind != "output" and known != p.value:  # an assignment runs in program order: it binds, not claims
            doc.bind_dim(size, p.value)
            emit(p.line, p.text, "given", f"the code sets {size} = {p.value} again (it was {known}): later "
                 "statements use the new value", kind="setting")
        else:
            emit(p.line, p.text, "correct" if known == p.value else "wrong", f"{size} = {known}",
                 None if known == p.value else str(known), "setting", "computed")
        return
    rounded = re.fullmatch(r"\s*(?:np\.|numpy\.|torch\.)?round\(\s*(.+?)\s*(?:,\s*(?:decimals\s*=\s*)?\d+)?\)\s*|"
                           r"\s*(.+?)\.round\(\s*(?:decimals\s*=\s*)?\d*\s*\)\s*", p.name or "")
    if rounded:  # np.round(head2, 3) printed: the value of head2, at the printed precision
        p = _renamed(p, rounded.group(1) or rounded.group(2))
    if p.kind == "output" and _printed_expression(doc, p, emit):
        return
    if p.kind == "output" and (p.name or "").strip() in doc.opaque:
        return  # the print of a name the code gave a value of its own: not the model's quantity of that name
    if p.kind != "output" and p.name:
        doc.opaque.discard(p.name.strip())  # assigned again: its name is read afresh
    code_zero = bool(re.search(r"\b(?:[A-Za-z]+_?0|\w+\[0\])\b", p.name or "")) or doc.zero_based_code
    key = _code_key(p.name, code_zero, doc.known_dims().get("h") == 1)
    stacked = _stacked(p.value)
    if key is None and stacked is not None:  # W_q = tensor of shape (h, d_model, d_k): one matrix per head
        for k, M in enumerate(stacked):
            _code_matrix(doc, p, emit, _code_key(f"{p.name}[{k}]", True), M)
        return
    if isinstance(p.value, (int, float)):  # a number given to a matrix's name (x0 = 3, a1 = 0.5): another variable,
        if key is not None and p.kind != "output" and not _is_input(key):  # not the model's matrix
            doc.opaque.add(p.name.strip())
        return
    M = _matrix(p.value)
    if key is None and M is not None and len(M) > 1 and p.kind != "output" and \
            (name := re.fullmatch(r"\s*([a-z])_?(\d*)\s*", p.name or "")):
        _code_value(doc, p, emit, name.group(1) + (f"_{{{name.group(2)}}}" if name.group(2) else ""), M)
        return
    _code_matrix(doc, p, emit, key, M)


def _code_value(doc: DocumentModel, p: Any, emit: Any, name: str, M: ImmutableMatrix) -> None:
    """``z = [2, 1, 0, -1]``: a vector or matrix of numbers the code gives a lower-case name that is none of the
    model's.  It binds the name as ``$z = (2, 1, 0, -1)$`` does in the text, in the same scope, so that later
    lines computing with it (``softmax(z) ≈ [...]``) are local computations."""
    from sympy import latex as sympy_latex

    got = judge(doc, [name, sympy_latex(M)], ["eq"], p.text)
    if got is not None:
        kind, (status, message, expected, basis) = got
        emit(p.line, p.text, status, message, expected, kind, basis)


def _is_input(key: str) -> bool:
    """A model key of an input (X, the per-head weights, W_O), not of a step the model computes."""
    return key in ("X", "W_O") or key.startswith(("W_Q^", "W_K^", "W_V^"))


def _renamed(p: Any, name: str) -> Any:
    from dataclasses import replace

    return replace(p, name=name)


def _printed_expression(doc: DocumentModel, p: Any, emit: Any) -> bool:
    """A printed value whose name is an expression or a ``.shape`` (``head1.shape``, ``A1 @ V1``): the shape
    or value the engine gives it.  True when handled."""
    from ._code_expr import code_expression
    from .plain import _shape

    shape = re.fullmatch(r"\s*(.+)\.shape\s*", p.name or "")
    simple = _code_key(p.name, doc.zero_based_code) is not None
    if not shape and (simple or re.fullmatch(r"\w+", p.name or "")):
        return False
    try:
        expr = code_expression(shape.group(1) if shape else p.name, resolver(doc))
        if shape:
            value = p.value if isinstance(p.value, (list, tuple)) and len(p.value) == 2 else None
            if value is None:
                return False
            kind, verdict = _shape(doc, expr, value[0], value[1], shape.group(1))
        else:
            M = _matrix(p.value)
            if M is None:
                return False
            from sympy import latex as sympy_latex

            got = judge(doc, [p.name, sympy_latex(M)], ["eq"], p.text, read=[expr, doc.read(sympy_latex(M))])
            if got is None:
                return True
            kind, verdict = got
    except (MHASymbolicError, ValueError, TypeError):
        return False
    emit(p.line, p.text, verdict[0], verdict[1], verdict[2], kind, verdict[3])
    return True


def _stacked(value: Any) -> list[ImmutableMatrix] | None:
    if isinstance(value, list) and value and all(isinstance(m, list) and m and all(isinstance(r, list) for r in m)
                                                 for m in value):
        mats = [_matrix(m) for m in value]
        return None if any(m is None for m in mats) else mats  # type: ignore[return-value]
    return None


def _side_tex(doc: DocumentModel, key: str) -> str:
    """The LaTeX of a model key (``W_Q^1``, ``A_2``, ``Concat``) in the document's head numbering."""
    tex = {"W_Q": "W_Q^{%s}", "W_K": "W_K^{%s}", "W_V": "W_V^{%s}"}
    shift = 1 if doc.zero_based else 0  # the side is read in the document's numbering
    if "^" in key:
        base, i = key.split("^")
        return tex[base] % (int(i) - shift)
    if "_" in key and key not in ("W_O",):
        base, i = key.rsplit("_", 1)
        return {"head": r"\mathrm{head}_{%s}"}.get(base, base + "_{%s}") % (int(i) - shift)
    return {"Concat": r"\mathrm{Concat}", "Output": r"\mathrm{Output}"}.get(key, key)


def _code_matrix(doc: DocumentModel, p: Any, emit: Any, key: str | None, M: ImmutableMatrix | None) -> None:
    if key is None:
        return
    from sympy import latex as sympy_latex

    if M is None:
        _code_formula(doc, p, emit, key)
        return
    got = judge(doc, [_side_tex(doc, key), sympy_latex(M)], ["eq"], p.text)
    if got is not None:
        kind, (status, message, expected, basis) = got
        emit(p.line, p.text, status, message, expected, kind, basis)


def resolver(doc: DocumentModel) -> Any:
    """Code names (``X``, ``WQ1``, ``W_q[0]``, ``weights2``, ``dk``) as the model's symbols, for
    :func:`._code_expr.code_expression`; None for a name the model does not have."""
    def resolve(name: str, index: int | None) -> Any:
        if index is None and name in doc.opaque:
            return None  # a value of the code's own (S0 = raw0 / np.sqrt(d_k)): not the model's S_1
        k = _code_key(name if index is None else f"{name}[{index}]", doc.zero_based_code,
                      index is None and doc.known_dims().get("h") == 1)
        if k is not None:
            return doc.read(_side_tex(doc, k))
        size = dim_name(name) if index is None else None
        return doc.read({"d_model": "d_{model}"}.get(size, size)) if size else None

    return resolve


def _code_formula(doc: DocumentModel, p: Any, emit: Any, key: str) -> None:
    """``Q1 = X @ WQ1``: the right side read with :func:`._code_expr.code_expression` (through ``ast``, never
    run) in the model's symbols and compared with the model's step like a formula."""
    from ..latex import latex
    from ._code_expr import code_expression

    source = p.text.split("=", 1)[1] if "=" in p.text else ""
    try:
        expr = code_expression(source, resolver(doc))
    except (MHASymbolicError, ValueError, TypeError) as e:
        if not _is_input(key):  # a step computed the code's own way: its prints are not the model's step
            doc.opaque.add(p.name.strip())  # (an input drawn at random is still the input: its print gives it)
        emit(p.line, p.text, "unchecked", f"the right side is not read (it is never run): "
             f"{str(e).splitlines()[0][:160]}", kind="formula")
        return
    if not getattr(expr, "is_Matrix", False):
        if not _is_input(key):  # a number given to a step's name (a0 = 2 * d_k): another variable
            doc.opaque.add(p.name.strip())
        return
    side = _side_tex(doc, key)
    got = judge(doc, [side, latex(expr)], ["eq"], p.text, read=[doc.read(side), expr])
    if got is not None:
        kind, (status, message, expected, basis) = got
        emit(p.line, p.text, status, message, expected, kind, basis)
