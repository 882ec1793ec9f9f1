r"""Statements about softmax itself: its entry formula and identities of vectors.

Explanation
===========

* ``\mathrm{softmax}(S)_{ij} = \frac{\exp(S_{ij})}{\sum_l \exp(S_{il})}`` -- which index the sum runs over
  (within a row, or within a column) is read from the formula and compared with the engine's
  :class:`~mha_symbolic.softmax.Softmax`, whose entry ``(0, 1)`` on a symbolic 2 x 2 matrix shows the axis it
  normalises; a softmax over the other axis is ``wrong``.
* ``\mathrm{softmax}(s + c\mathbf{1}) = \mathrm{softmax}(s)``, ``\mathrm{softmax}(2s) = \mathrm{softmax}(s)`` -- a
  lower-case vector name becomes a row of symbolic entries (lengths 2 and 3) and ``\mathbf{1}`` a row of ones;
  both sides are evaluated by the engine and simplified: equal is ``correct``, said to be checked at those
  lengths (every value of the entries), not proven for every length; otherwise an exact rational instance
  where they differ is the counterexample.
"""

from __future__ import annotations

import re
from typing import Any

from sympy import ImmutableMatrix, MatrixSymbol, Rational, simplify

from ..errors import MHASymbolicError
from .model import DocumentModel

__all__ = ["judge_softmax_form", "engine_axis"]

_ENTRY = re.compile(r"^\s*\\mathrm\{softmax\}\s*(?:\\left)?\(\s*([A-Za-z])\s*(?:\\right)?\)"
                    r"\s*_\{?\s*([a-z])\s*,?\s*([a-z])\s*\}?\s*$")
_RATIO = re.compile(r"\\frac\{\s*\\exp\s*\(\s*([A-Za-z])_\{?([a-z])\s*,?\s*([a-z])\}?\s*\)\s*\}\{\s*\\sum_\{?\s*([a-z])"
                    r"[^}^]*\}?(?:\^\{?[^}]*\}?)?\s*\\exp\s*\(\s*([A-Za-z])_\{?([a-z])\s*,?\s*([a-z])\}?\s*\)\s*\}")


def engine_axis() -> str:
    """``"row"`` when the engine's softmax normalises each row (sums over a row's entries), else ``"column"``."""
    from sympy.matrices.expressions.matexpr import MatrixElement

    from ..softmax import Softmax

    entry = Softmax(MatrixSymbol("S", 2, 2)).as_explicit()[0, 1].doit()
    seen = {(int(e.i), int(e.j)) for e in entry.atoms(MatrixElement)}
    return "row" if (0, 0) in seen and (1, 1) not in seen else "column"


def judge_softmax_form(doc: DocumentModel, tex: list[str], ops: list[str]) -> tuple[str, str, str | None, str] | None:
    """The verdict on a softmax entry formula or vector identity, or None when the chain is neither."""
    if len(tex) != 2 or ops[0] not in ("eq", "def", "ne"):
        return None
    entry = _ENTRY.match(tex[0])
    ratio = _RATIO.search(tex[1])
    if entry and ratio:
        name, i, j = entry.groups()
        _, ni, nj, v, dname, di, dj = ratio.groups()
        if (ni, nj) != (i, j) or dname != name:
            return "unchecked", "the numerator is not the same entry", None, ""
        stated = "row" if (di, dj) == (i, v) else "column" if (di, dj) == (v, j) else None
        if stated is None:
            return "unchecked", "the sum does not run over one index of the entry", None, ""
        axis = engine_axis()
        if stated == axis:
            return "correct", f"the engine's softmax normalises each {axis} (sum over {v} within the {axis})", None, \
                "proven"
        return ("wrong", f"this normalises each {stated}; the model's softmax normalises each {axis} "
                f"(scores of one query over all keys)", f"sum over the {axis}", "proven")
    if not any("softmax" in t for t in tex) or any(re.search(r"(?<![\\a-z])[A-Z]", re.sub(r"\\[A-Za-z]+", "", t))
                                                   for t in tex):
        return None  # identities of vectors only: a matrix name (Q, S, X) is the model's business
    names = sorted({m for t in tex for m in re.findall(r"(?<![\\A-Za-z_{])([a-z])(?![A-Za-z_(])", t)} - {"c", "e"})
    if not names:
        return None
    if any(t.strip() in names for t in tex):  # p = softmax(z): names p, it is no identity in p and z
        name = next(t.strip() for t in tex if t.strip() in names)
        # the document's own definition: a value it later writes for p is computed from the z it then gives
        doc.memory.setdefault("vector_formulas", {})[name] = next(t for t in tex if t.strip() != name)
        return "given", f"defines {name}", None, ""
    return _identity(doc, tex, ops[0], names)


def defined_value(doc: DocumentModel, name: str) -> Any:
    r"""The value of a vector the document defined by a formula of vectors (``p = \mathrm{softmax}(z)``), computed
    from the values it has since given the formula's names (``z = (2, 1, -0.5)``); None when it defined none or a
    name in the formula has no value."""
    formula = doc.memory.get("vector_formulas", {}).get(name)
    if formula is None:
        return None
    inputs = set(re.findall(r"(?<![\\A-Za-z_{])([a-z])(?![A-Za-z_(])", formula)) - {"c", "e"}
    values = {n: doc.definitions.get(n) for n in inputs}
    if not inputs or not all(isinstance(v, ImmutableMatrix) and 1 in v.shape for v in values.values()):
        return None
    for n, v in values.items():
        row = r"\begin{bmatrix}" + " & ".join(str(x) for x in v or ()) + r"\end{bmatrix}"
        formula = re.sub(rf"(?<![\\A-Za-z_{{])({n})(?![A-Za-z_(])", row.replace("\\", "\\\\"), formula)
    try:
        return _explicit(doc.read(formula))
    except (MHASymbolicError, ValueError, TypeError):
        return None


def _identity(doc: DocumentModel, tex: list[str], op: str, names: list[str]) -> tuple[str, str, str | None, str]:
    def fill(t: str, entries: dict[str, list[Any]], length: int) -> str:
        for name in names:
            row = r"\begin{bmatrix}" + " & ".join(str(x) for x in entries[name]) + r"\end{bmatrix}"
            t = re.sub(rf"(?<![\\A-Za-z_{{])({name})(?![A-Za-z_(])", row.replace("\\", "\\\\"), t)
        ones = r"\begin{bmatrix}" + " & ".join(["1"] * length) + r"\end{bmatrix}"
        return re.sub(r"\\(?:mathbf|mathbb|boldsymbol)\{1\}", lambda _: ones, t)

    for length in (2, 3):
        symbolic = {n: [f"{n}_{{{k}}}" for k in range(1, length + 1)] for n in names}
        try:
            a, b = (_explicit(doc.read(fill(t, symbolic, length))) for t in tex)
        except (MHASymbolicError, ValueError, TypeError) as e:
            return "unchecked", f"not read: {str(e).splitlines()[0][:160]}", None, ""
        if a is None or b is None or a.shape != b.shape:
            return "unchecked", "not a pair of vectors of the same length", None, ""
        same = all(simplify(x - y) == 0 for x, y in zip(a, b, strict=True))
        if not same:
            instance = {n: [Rational(k * k + idx) for k in range(length)] for idx, n in enumerate(names)}
            values = {s: Rational(2) for s in (a.free_symbols | b.free_symbols) if s.name == "c"}
            values |= {s: instance[s.name.split("_")[0]][int(s.name.split("_")[1].strip("{}")) - 1]
                       for s in (a.free_symbols | b.free_symbols) if "_" in s.name}
            A, B = a.xreplace(values), b.xreplace(values)
            differ = any(simplify(x - y) != 0 for x, y in zip(A, B, strict=True))
            if op == "ne":
                return ("correct", "they differ, e.g. at " + _show(instance, values), None, "computed") if differ \
                    else ("unchecked", "not proven different", None, "")
            if differ:
                return ("wrong", f"not an identity: at {_show(instance, values)} the two sides differ", None,
                        "certified counterexample")
            return "unchecked", "not proven equal and no instance tells them apart", None, ""
    if op == "ne":
        return "wrong", "the two sides are equal for every value (vectors of length 2 and 3)", None, "proven"
    return ("correct", "equal for every value of the entries at vector lengths 2 and 3 (symbolic); checked at those "
            "lengths, not proven for every length", None, "checked at lengths 2, 3")


def _explicit(e: Any) -> ImmutableMatrix | None:
    e = e.doit() if hasattr(e, "doit") else e
    if hasattr(e, "as_explicit"):
        e = e.as_explicit()
    return ImmutableMatrix(e) if hasattr(e, "shape") else None


def _show(instance: dict[str, list[Any]], values: dict[Any, Any]) -> str:
    parts = [f"{n} = ({', '.join(str(x) for x in v)})" for n, v in instance.items()]
    if any(s.name == "c" for s in values):
        parts.append("c = 2")
    return ", ".join(parts)
