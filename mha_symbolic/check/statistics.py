r"""Statements about the statistics of attention scores: ``\mathbb{E}[q \cdot k] = 0``,
``\mathrm{Var}(q \cdot k) = d_k``, ``\mathrm{Var}(q \cdot k / \sqrt{d_k}) = 1``, ``\mathrm{sd}(q \cdot k) = 8``.

Explanation
===========

The moment is the engine's (:func:`mha_symbolic.statements.statistics.score_moments`): the entry of
``S = Q K^T`` (for ``q \cdot k``) or of ``S' = c S`` (for ``q \cdot k`` divided by what the document
writes, ``\sqrt{d_k}``, ``d_k`` or anything else -- a model with that scale ``c`` is built), with query
and key entries independent, mean 0 and variance ``sigma^2``.  A stated value without ``sigma`` is
compared at ``sigma = 1`` (unit-variance entries, the usual assumption) and the message says so.
Statements about one entry (``\mathbb{E}[q_j] = 0``, ``\mathrm{Var}(k_j) = 1``) are the assumption itself:
``given``.  One term ``q_j k_j`` has mean 0 and variance ``sigma^4``.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any

from sympy import Integer, simplify, sqrt

from .._convert import as_sympy
from ..dims import dimension_symbol
from ..errors import MHASymbolicError
from .model import DocumentModel, dim_name

__all__ = ["judge_moment_claim", "judge_statistic", "statistic"]

_MOMENT = (r"^\s*(\\mathbb\{E\}|\\mathrm\{E\}|\\operatorname\{E\}|E|\\mathrm\{Var\}|\\operatorname\{Var\}|"
           r"\\text\{Var\}|"
           r"Var|\\mathrm\{sd\}|\\operatorname\{sd\}|\\mathrm\{std\}|sd|std)\s*(?:\\left)?\s*[\[(](.*)[\])]\s*$")
_DOT = r"(?:q\s*(?:\\cdot|\\cdotp|·|\.)\s*k|q\s*\^\s*\{?(?:T|\\top)\}?\s*k|\\langle\s*q\s*,\s*k\s*\\rangle)"


def statistic(tex: str) -> tuple[str, str] | None:
    """``(moment, argument)`` for ``E[...]``, ``Var(...)``, ``sd(...)`` sides, else None."""
    t = re.sub(r"\\(?:left|right)(?![a-z])", "", tex)
    m = re.match(_MOMENT, t)
    if not m:
        return None
    head = re.sub(r"\\(?:mathbb|mathrm|operatorname|text)\{(\w+)\}", r"\1", m.group(1))
    moment = {"E": "E", "Var": "Var", "sd": "sd", "std": "sd"}[head]
    if moment == "E" and "[" not in t[m.start(2) - 1: m.start(2)] and "(" not in t[m.start(2) - 1: m.start(2)]:
        return None
    return moment, m.group(2).strip()


@lru_cache(maxsize=8)
def _moments(which: str, scale: Any = None) -> tuple[Any, Any]:
    from ..attention import MultiHeadAttention
    from ..statements.statistics import score_moments

    if scale is not None:
        scale = scale.xreplace({s: dimension_symbol("d_k") for s in scale.free_symbols})
    M = MultiHeadAttention() if scale is None else MultiHeadAttention(scale=scale)
    m = score_moments(M, which, full_check_up_to=1)  # the lemma for symbolic d_k, checked in full at d_k = 1
    return m["mean"], m["variance"]


def _value(doc: DocumentModel, moment: str, arg: str) -> tuple[Any, str] | None:
    """The engine's value of the moment of ``arg`` (in d_k and sigma), with what it is, or None."""
    from ..statements.statistics import SIGMA

    a = " ".join(arg.split())
    square = re.fullmatch(r"\((.*)\)\s*\^\s*\{?2\}?", a)
    if square and moment == "E":
        inner = _value(doc, "E", square.group(1))
        var = _value(doc, "Var", square.group(1))
        if inner is None or var is None:
            return None
        return simplify(var[0] + inner[0] ** 2), f"E[({square.group(1)})^2] = Var + E^2"
    if re.fullmatch(r"[qk]_\{?[j\d]\}?", a):
        return (Integer(0) if moment == "E" else SIGMA**2 if moment == "Var" else SIGMA), "one entry (the assumption)"
    if re.fullmatch(r"q_\{?j\}?\s*k_\{?j\}?", a):
        return (Integer(0) if moment == "E" else SIGMA**4 if moment == "Var" else SIGMA**2), "one term q_j k_j"
    if re.fullmatch(_DOT, a):
        mean, var = _moments("S")
        what = "an entry of S = Q K^T"
    else:
        frac = re.fullmatch(r"\\frac\{\s*(" + _DOT + r")\s*\}\{(.*)\}", a) or re.fullmatch(
            r"\(?\s*(" + _DOT + r")\s*\)?\s*/\s*(.*)", a)
        if not frac:
            return None
        denominator = doc.read(frac.group(2))
        if any(dim_name(str(s)) != "d_k" for s in getattr(denominator, "free_symbols", ())):
            return None
        mean, var = _moments("S'", 1 / as_sympy(denominator))
        what = f"an entry of S' = S / {frac.group(2)}"
    value = {"E": mean, "Var": var, "sd": sqrt(var)}[moment]
    return simplify(value), what


def _entries(unit: bool, here: bool, stated: Any) -> str:
    """How the entries' variance was taken, for the message."""
    if not unit:
        return ""
    return f", entries of variance sigma^2 = {stated[0]} (line {stated[2]})" if here else ", unit-variance entries"


def judge_statistic(doc: DocumentModel, tex: list[str], ops: list[str]) -> tuple[str, str, str | None, str] | None:
    """The verdict on a chain with a moment side, or None when no side is a moment."""
    from ..statements._base import shown
    from ..statements.statistics import SIGMA
    from .judge import _dims_subs

    stats = [statistic(t) for t in tex]
    if not any(stats):
        return None
    if all(op not in ("eq", "approx") for op in ops):
        return "unchecked", "a relation other than = between moments", None, ""
    values: list[Any] = []
    notes: list[str] = []
    for t, st in zip(tex, stats, strict=True):
        if st is not None:
            got = _value(doc, *st)
            if got is None:
                values.append(None)
                continue
            values.append(got[0])
            notes.append(got[1])
            if got[1] == "one entry (the assumption)":
                return "given", f"{t}: the distribution of the entries (assumed)", None, ""
        else:
            try:
                e = doc.read(t)
            except (MHASymbolicError, ValueError, TypeError):
                values.append(None)
                continue
            free: set[Any] = set(getattr(e, "free_symbols", set()))
            if any(dim_name(str(s)) is None and str(s) != "sigma" for s in free):
                values.append(None)
                continue
            values.append(as_sympy(e).xreplace({s: dimension_symbol("d_k") for s in free if dim_name(str(s)) == "d_k"}
                                              ).xreplace({s: SIGMA for s in free if str(s) == "sigma"}))
    unit = not any(v is not None and SIGMA in getattr(v, "free_symbols", set()) for v, st in zip(values, stats,
                                                                                             strict=True) if not st)
    stated = doc.memory.get("variance")  # sigma^2 = 0.5 stated: in its paragraph the entries have that variance
    here = unit and stated is not None and stated[1][0] == doc.paragraph[0]
    compared = 0
    last: tuple[int, Any] | None = None
    for k in range(len(values)):
        if k and ops[k - 1] not in ("eq", "approx"):
            last = None
        if values[k] is None:
            continue
        if last is not None:
            j, a = last
            sigma = sqrt(stated[0]) if here and stated is not None else 1
            a2, b2 = (as_sympy(x).subs(SIGMA, sigma) if unit else as_sympy(x) for x in (a, values[k]))
            a2, b2 = (x.subs(_dims_subs(doc, x)) for x in (a2, b2))
            compared += 1
            gap = simplify(a2 - b2)
            width = _width_where_it_holds(gap)
            if width is not None:  # Var(q·k) = d_k against 64 where d_k is not fixed: it holds at d_k = 64
                return ("unchecked", f"{tex[j]} = {shown(a2)}: {tex[k]} holds at d_k = {width}, which is not fixed "
                        "here", None, "")
            if gap != 0:
                if unit and not here and stated is not None:  # unit variance, but the document gave another
                    return ("unchecked", f"{tex[j]} = {shown(a2)} with unit-variance entries; the document states "
                            f"sigma^2 = {stated[0]} on line {stated[2]}, so which variance is meant is not said",
                            None, "")
                return ("wrong", f"{tex[j]} = {shown(a2)} and {tex[k]} = {shown(b2)} "
                        f"({'; '.join(notes)}{_entries(unit, here, stated)})", shown(a2), "proven")
        last = (k, values[k])
    if not compared:
        return "unchecked", "no side with a value to compare", None, ""
    return "correct", f"{'; '.join(notes)}{_entries(unit, here, stated)}: proven", None, "proven"


def _width_where_it_holds(gap: Any) -> int | None:
    """The head width (a whole number of 2 or more) at which a moment and a number agree, when the gap between them
    depends on d_k alone: the sentence may be about that width (``d_k = 64:   Var(q·k) = 64``).  None otherwise (a
    gap of d_k - 1 holds only for a head of one dimension: ``Var(q·k) = 1`` is wrong)."""
    free: set[Any] = set(getattr(gap, "free_symbols", set()))
    if gap == 0 or len(free) != 1:
        return None
    from sympy import solve

    try:
        roots = solve(gap, next(iter(free)))
    except (NotImplementedError, ValueError, TypeError):
        return None
    whole = [int(r) for r in roots if getattr(r, "is_Integer", False) and r >= 2]
    return whole[0] if len(whole) == 1 else None


def judge_moment_claim(doc: DocumentModel, moment: str, scaled: bool | None, value: str, d_k: int | None,
                       ) -> tuple[str, str, str | None, str]:
    """A moment of a score stated in words ("the unscaled score has variance 4096"): the engine's moment of an
    entry of ``S = Q K^T`` (``scaled`` False, or not said) or of ``S / sqrt(d_k)`` (True), at the head width
    ``d_k`` of the sentence or the document, with unit-variance entries, against the written ``value`` at its
    written precision.  A value that is the other score's (the scaled one's, where the sentence did not say
    which) is ``unchecked``.

    >>> from mha_symbolic.check.model import DocumentModel
    >>> judge_moment_claim(DocumentModel(), "sd", False, "8", 64)[:2]
    ('correct', 'sd of an entry of S = Q K^T at d_k = 64, unit-variance entries: 8')
    >>> judge_moment_claim(DocumentModel(), "Var", False, "4096", 64)[0]
    'wrong'
    """
    from fractions import Fraction

    from ..statements.statistics import SIGMA

    if d_k is None:
        return "unchecked", f"the {moment} of the score depends on d_k, which the document does not fix", None, ""
    stated = doc.memory.get("variance")
    if stated is not None:
        return "unchecked", f"the document states sigma^2 = {stated[0]} (line {stated[2]}): which entries are meant " \
            "is not said", None, ""
    unscaled, scaled_name = "S = Q K^T", "S' = S / sqrt(d_k)"
    readings = {}
    for name, arg in ((unscaled, r"q \cdot k"), (scaled_name, r"\frac{q \cdot k}{\sqrt{d_k}}")):
        got = _value(doc, moment, arg)
        if got is None:
            return "unchecked", "the engine has no moment for this score", None, ""
        readings[name] = simplify(got[0].subs(SIGMA, 1).subs(dimension_symbol("d_k"), d_k))
    written = Fraction(value)
    places = len(value.split(".")[1]) if "." in value else 0
    half = Fraction(1, 2 * 10 ** places) if places else Fraction(0)

    def fits(x: Any) -> bool:  # at the written precision (a whole number stands for an exact one where x is)
        if not places and x.is_Integer:
            return bool(x == int(written))
        return abs(Fraction(float(x)) - written) <= (half or Fraction(1, 2)) + Fraction(1, 10 ** 12)

    mine, other = (scaled_name, unscaled) if scaled else (unscaled, scaled_name)
    truth = readings[mine]
    what = f"{moment} of an entry of {mine} at d_k = {d_k}, unit-variance entries: {truth}"
    if fits(truth):
        return "correct", what, None, "proven"
    if scaled is None and fits(readings[other]):
        return ("unchecked", f"{value} is the {moment} of an entry of {other} (d_k = {d_k}); the sentence does not say "
                "which score it means", None, "")
    return "wrong", f"{what}, not {value}", str(truth), "proven"
