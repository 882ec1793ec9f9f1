r"""Entries and rows of a matrix a document names: ``(A_0)_{12} \approx 0.005``,
``\mathrm{out}_{3,1} \approx 1.758``, ``\mathrm{MultiHead}(X)_{1,:} \approx (\ldots)``.

The matrix is computed by the engine (:func:`.judge._value`) with the document's givens; indices count
from 1 unless one of them is 0.  A plain name (``out``, ``concat``, ``weights``) is the code name of a step.
"""

from __future__ import annotations

import re

from sympy import ImmutableMatrix

from ..errors import MHASymbolicError
from ..statements._base import agrees, shown
from .model import DocumentModel, never_given

__all__ = ["entry_side", "entry_value_tex", "judge_entry"]

#: an entry (i, j) or a row: "_{12}", "_{1,2}", "_{2,:}", and a row in matrix notation, "_{2\cdot}", "_{2*}"
_INDEX = r"_\{\s*(\d+|:)\s*,?\s*(\d+|:|\\cdot|\\bullet|\*|·)\s*\}"
_FORMS = [re.compile(r"^\s*\\left\(\s*(.+?)\s*\\right\)\s*" + _INDEX + r"\s*$"),
          re.compile(r"^\s*\(\s*(.+?)\s*\)\s*" + _INDEX + r"\s*$"),
          re.compile(r"^\s*(\\mathrm\{MultiHead\}\s*\(.*?\)|\\mathrm\{\w+\}|[A-Za-z]{2,})\s*" + _INDEX + r"\s*$"),
          re.compile(r"^\s*([A-Za-z](?:_\{?\w+\}?)?(?:\^\{?\(?\w+\)?\}?)?)\s*_\{\s*(\d+|:)\s*,\s*(\d+|:)\s*\}\s*$"),
          # the row of a one-letter matrix in matrix notation: A_{2\cdot} (never A_{12}, which may be head 12's A)
          re.compile(r"^\s*([A-Za-z](?:\^\{?\w+\}?)?)\s*_\{\s*(\d+)\s*(\\cdot|\\bullet|\*|·)\s*\}\s*$"),
          # MATLAB's indexing, P(2,:) and P(1,2): only of a matrix the document gave (judge_entry), not a call f(1, 2)
          re.compile(r"^\s*([A-Za-z]\w*)\s*\(\s*(\d+)\s*,\s*(\d+|:)\s*\)\s*$")]


def entry_side(tex: str) -> tuple[str, str, str] | None:
    """``(matrix, row, column)`` texts of an entry or row access, or None."""
    for form in _FORMS:
        m = form.match(tex)
        if m:
            return m.group(1), m.group(2), ":" if m.group(3) in ("\\cdot", "\\bullet", "*", "·") else m.group(3)
    return None


def _base_tex(doc: DocumentModel, base: str) -> str:
    word = re.fullmatch(r"\\mathrm\{(\w+)\}|([A-Za-z]{2,})", base)
    if word and (word.group(1) or word.group(2)) not in ("MultiHead", "Concat", "Output", "head"):
        from .code import _code_key

        key = _code_key(word.group(1) or word.group(2), doc.zero_based_code)
        if key in ("Output", "Concat"):
            return r"\mathrm{%s}" % key
    return base


def entry_value_tex(doc: DocumentModel, tex: str) -> str | None:
    r"""The value of an entry, row or column side (``(O_1)_{31}``, ``A^{(1)}_{:,1}``) as LaTeX numbers, computed
    from the document's givens, so that a chain through it (``= 0.0454 \cdot 2 + \dots = 1.8133``, ``=
    \operatorname{softmax}(\dots) \approx (\dots)^T``) is judged link by link like any chain of numbers; None when
    ``tex`` is no such side or its matrix has no value of numbers."""
    from sympy import latex

    from .judge import _value

    side = entry_side(tex)
    if side is None or side[1] == side[2] == ":":
        return None
    base, r, c = side
    try:
        M = _value(doc, doc.read(_base_tex(doc, base)))
    except (MHASymbolicError, ValueError, TypeError):
        return None
    if any(not x.is_number for x in M):
        return None
    got = _selected(M, r, c)
    if got is None:
        return None
    if got.shape == (1, 1) and ":" not in (r, c):
        return latex(got[0, 0])
    joiner = " & " if got.rows == 1 else r" \\ "
    return r"\begin{bmatrix} " + joiner.join(latex(x) for x in got) + r" \end{bmatrix}"


def _selected(M: ImmutableMatrix, r: str, c: str) -> ImmutableMatrix | None:
    """Entry ``(r, c)``, row ``r`` (``c`` is ``:``) or column ``c`` (``r`` is ``:``) of ``M``, counted from 1 unless an
    index is 0 (then from 0); None when it is outside ``M`` or both are ``:``."""
    zero = r == "0" or c == "0"
    i, j = (None if r == ":" else int(r) - (0 if zero else 1)), (None if c == ":" else int(c) - (0 if zero else 1))
    if i is None and j is None or i is not None and not 0 <= i < M.rows or j is not None and not 0 <= j < M.cols:
        return None
    if i is not None and j is not None:
        return ImmutableMatrix([[M[i, j]]])
    return ImmutableMatrix([list(M.row(i))]) if i is not None else ImmutableMatrix(M.col(j))


def judge_entry(doc: DocumentModel, tex: list[str], ops: list[str]) -> tuple[str, str, str | None, str] | None:
    """Compare a stated number (or row) with the entry (or row) the engine computes, or None."""
    from .judge import _literal, _places, _value

    at = next((k for k, t in enumerate(tex) if entry_side(t)), None)
    if at is None or any(op not in ("eq", "approx") for op in ops):
        return None
    if len(tex) > 2:  # (S_2)_{21} = (S_2)_{22} = -2: every entry against the stated number
        number = [t for t in tex if not entry_side(t)]
        if len(number) != 1:
            return None
        got = [judge_entry(doc, [t, number[0]], ["eq"]) for t in tex if entry_side(t)]
        verdicts = [g for g in got if g is not None]
        order = ("wrong", "inconsistent", "assumed", "unchecked", "correct")
        return min(verdicts, key=lambda v: order.index(v[0])) if verdicts else None
    base, r, c = entry_side(tex[at])  # type: ignore[misc]
    if re.search(r"\(\s*\d+\s*,\s*(?:\d+|:)\s*\)\s*$", tex[at]) and \
            not getattr(doc.definitions.get(base), "is_Matrix", False):
        return None  # f(1, 2): a function's arguments, unless f is a matrix the document gave
    if re.search(r"(?:\\cdot|\\bullet|\*|·)\s*\}\s*$|\)\s*$", tex[at]) and not any(
            doc.bound_in.get(name, (-1,))[0] >= doc.section_paragraph for name in doc.definitions):
        return ("unchecked", f"{tex[at]}: this section gives no matrix of its own (its numbers may be another "
                "example's), so the row is not computed", None, "")
    other = tex[1 - at]
    try:
        stated = _literal(doc.read(other))
        if stated is None:
            return None
        M = _value(doc, doc.read(_base_tex(doc, base)))
    except (MHASymbolicError, ValueError, TypeError) as e:
        return "unchecked", f"{tex[at]}: {str(e).splitlines()[0][:160]}", None, ""
    if any(not x.is_number for x in M):
        return "assumed", never_given(base, M), None, "computed"
    if r == ":" and c == ":":
        return None
    value = _selected(M, r, c)  # (A_1)_{:,2}: a column, as a document whose tokens are columns writes a query's weights
    if value is None:
        return "wrong", f"{base} is {M.rows} x {M.cols}: it has no " + (f"column {c}" if r == ":" else
                                                                          f"entry ({r}, {c})"), None, "computed"
    value = value.T if r == ":" and stated.shape == value.T.shape else value
    places = _places(other)
    if value.shape != stated.shape:
        return "wrong", f"{tex[at]} has {max(value.shape)} entries; the document states {max(stated.shape)}", None, \
            "computed"
    where = f"row {r}" if c == ":" else f"column {c}" if r == ":" else f"entry ({r}, {c})"
    if all(agrees(x, y, places) for x, y in zip(value, stated, strict=True)):
        return "correct", f"{where} of {base} = {shown(value, places)} computed exactly; agrees", None, "computed"
    return ("wrong", f"{where} of {base} = {shown(value, places)} computed exactly, not {other}", shown(value, places),
            "computed")
