r"""Rank statements of a document, decided by the engine.

``\mathrm{rank}(E) \le R`` (also ``<``, ``=``, ``\ge``, ``>``):

* when the document gives every input ``E`` needs, the rank of that instance is computed: exactly
  (FLINT) for rational entries, else a certified lower bound (ball-arithmetic minor) and the model's
  proven upper bound; the claim is compared with it;
* otherwise the claim is about every input of the document's sizes:
  :class:`~mha_symbolic.statements.RankStatement` proves it from the model's expression or refutes
  it with a certified counterexample.
"""

from __future__ import annotations

import re
from typing import Any

from sympy import ImmutableMatrix, MatrixBase, MatrixSymbol, Symbol

from .._convert import as_sympy
from ..errors import MHASymbolicError
from ..rank import certify_rank_at_least, exact_rank, rank_bound
from ..statements import RankStatement
from .model import DocumentModel, dim_name

__all__ = ["judge_rank", "rank_argument"]

_STATUS = {"true": "correct", "false": "wrong", "undecided": "unchecked", "assumed": "assumed",
           "inconsistent": "inconsistent", "informal": "unchecked"}


def rank_argument(tex: str) -> str | None:
    r"""The text inside ``\mathrm{rank}(...)`` (balanced; ``\left( \right)`` too), or the one name of
    ``\mathrm{rank} S_1``, if the side is a rank.

    >>> rank_argument(r"\operatorname{rank}\left(W_1^Q\right)"), rank_argument(r"\operatorname{rank} S_1 ")
    ('W_1^Q', 'S_1')
    >>> rank_argument(r"\mathrm{rank}\,Q")
    'Q'
    >>> rank_argument(r"\mathrm{rank} S_1 + 1") is None
    True
    """
    m = re.match(r"\s*\\(?:mathrm|operatorname|text)\{rank\}\s*(\\left)?\s*\(", tex) or re.match(
        r"\s*\\rank\s*(\\left)?\s*\(", tex)
    if not m:  # \operatorname{rank} S_1: a function applied to one name needs no parentheses
        bare = re.fullmatch(r"\s*\\(?:(?:mathrm|operatorname|text)\{rank\}|rank(?![A-Za-z]))(?:\s|\\[,;:! ]|~)*"
                            r"([A-Za-z]'?(?:\s*[_^]\s*(?:\{[^{}]*\}|\w))*)\s*", tex)
        return bare.group(1) if bare else None
    depth, start = 0, m.end() - 1
    for j in range(start, len(tex)):
        depth += (tex[j] == "(") - (tex[j] == ")")
        if depth == 0:
            inner = tex[start + 1:j]
            rest = tex[j + 1:].strip()
            return re.sub(r"\\right\s*$", "", inner).strip() if rest in ("", "\\right") or not rest else None
    return None


def _model_expr(doc: DocumentModel, e: Any) -> Any:
    """``e`` with the model's steps expanded to its inputs."""
    M = doc.model()
    repl = {a: M.steps[str(a)].expr for a in e.atoms(MatrixSymbol) if str(a) in M.steps}
    return e.xreplace(repl)


def _in_model(M: Any, e: Any) -> Any:
    """``e`` (read in the document's model) rebuilt in model ``M`` and expanded to ``M``'s inputs."""
    from ..concat import ConcatHeads
    from ..statements._base import step_name

    heads = {c: M.steps[step_name(M, "Concat")].expr for c in e.atoms(ConcatHeads)
             if str(c.template) in ("head_i", "Z_i")}  # Concat(head_1, ..., head_h): the model's concatenation
    e = e.xreplace(heads) if heads else e
    repl: dict[Any, Any] = {}
    for a in e.atoms(MatrixSymbol):
        name = str(a)
        if name in ("X", "W_O"):
            repl[a] = getattr(M, name)
        elif name in ("Y", "m", "M") and name in M.inputs:  # cross-attention's keys and values, a mask
            repl[a] = M.inputs[name]
        elif "^" in name and name.split("^")[0] in M.inputs:
            heads_of = {str(w): w for w in M.inputs[name.split("^")[0]]}
            repl[a] = heads_of.get(name, M.inputs[name.split("^")[0]][0])  # W_Q^2 itself; W_Q^i: head 1
        elif name in ("Q", "K", "V"):  # the attention's inputs: one head's queries, keys and values
            repl[a] = M.steps[step_name(M, f"{name}_i")].expr
        else:
            repl[a] = M.steps[step_name(M, name)].expr
    for s in e.free_symbols:
        if isinstance(s, Symbol) and dim_name(s.name) is not None:
            repl[s] = getattr(M.dims, dim_name(s.name) or "")
    return _named_maps(M, e.xreplace(repl))


def _named_maps(M: Any, e: Any) -> Any:
    """``Attention(Q, K, V)`` and ``MultiHead(X, X, X)`` inside ``e`` replaced by the model's own forms."""
    from ..formulas import Attention, MultiHead, attention_rhs

    repl: dict[Any, Any] = {}
    for a in e.atoms(Attention):
        repl[a] = attention_rhs(M, *(_named_maps(M, x) for x in a.args[:3]))
    for m in e.atoms(MultiHead):
        if all(str(x) == "X" for x in m.args) and not M.cross or \
                M.cross and [str(x) for x in m.args] == ["X", "Y", "Y"]:  # cross-attention: MultiHead(X, Y)
            repl[m] = M.steps["Output"].expr
    return e.xreplace(repl) if repl else e


def _bound(doc: DocumentModel, R: Any) -> Any:
    D = doc.model().dims
    names = {"n": D.n, "d_model": D.d_model, "h": D.h, "d_k": D.d_k, "d_v": D.d_v}
    known = doc.known_dims()
    repl = {s: as_sympy(known.get(dim_name(s.name) or "", names.get(dim_name(s.name) or "", s)))
            for s in as_sympy(R).free_symbols if isinstance(s, Symbol)}
    return as_sympy(R).xreplace(repl)


def judge_rank(doc: DocumentModel, tex: list[str], ops: list[str]) -> tuple[str, str, str | None, str]:
    if len(ops) < 1:
        return "unchecked", "no relation", None, ""
    k = next((i for i, t in enumerate(tex) if rank_argument(t) is not None), None)
    if k is None:
        return "unchecked", "the rank's argument is not a single rank(...)", None, ""
    op = ops[k] if k < len(ops) else ops[k - 1]
    other = tex[k + 1] if k < len(ops) else tex[k - 1]
    if k == len(ops):  # R op rank(E): flip
        op = {"le": "ge", "lt": "gt", "ge": "le", "gt": "lt"}.get(op, op)
    try:
        E = doc.read(rank_argument(tex[k]) or "")
        if rank_argument(other) is not None:
            return _two_ranks(E, doc.read(rank_argument(other) or ""), op)
        R = _bound(doc, doc.read(other))
    except (MHASymbolicError, ValueError, TypeError) as e:
        return "unchecked", f"not read: {str(e).splitlines()[0][:160]}", None, ""
    instance = _instance(doc, E)
    if instance is not None and R.is_number:
        return _decide_instance(doc, E, instance, op, R)
    if op in ("ge", "gt"):
        return "unchecked", "a lower bound on the rank for every input is not decided", None, ""
    if op not in ("le", "lt", "eq"):
        return "unchecked", f"operator {op} on a rank", None, ""
    D0 = doc.model().dims
    sizes = {D0.n: "n", D0.d_model: "d_model", D0.h: "h", D0.d_k: "d_k", D0.d_v: "d_v"}
    free = sorted(name for s, name in sizes.items() if isinstance(s, Symbol))
    if op == "eq" and free and as_sympy(R).is_number:  # "rank(Q K^T) = 2" of a worked example the model could not read
        ceiling = _numeric_ceiling(doc, E)
        if ceiling is not None and R > ceiling:
            return ("wrong", f"rank({rank_argument(tex[k])}) <= {ceiling} for every size the document leaves open "
                    f"(the proven bound), so not {R}", str(ceiling), "proof")
        return ("unchecked", f"an exact rank of a matrix whose sizes the document does not fix ({', '.join(free)}): "
                "not decided for every size, and no values to compute it on", None, "")

    def bound(D: Any) -> Any:
        return R.xreplace({s: getattr(D, name) for s, name in sizes.items() if isinstance(s, Symbol)})

    def subject(M: Any) -> Any:
        return _in_model(M, E)

    subject.__name__ = rank_argument(tex[k]) or "E"
    try:
        verdict = RankStatement(subject, op, bound).decide(doc.model())
    except (MHASymbolicError, ValueError, TypeError) as e:
        return "unchecked", f"not decided: {str(e).splitlines()[0][:160]}", None, ""
    return _STATUS[verdict.verdict], verdict.detail[:300], verdict.expected, verdict.basis


def _numeric_ceiling(doc: DocumentModel, E: Any) -> int | None:
    """The smallest number in the proven rank bound of ``E`` with the document's sizes (``Min(2, n)``: 2): a rank
    no choice of the open sizes exceeds; None when the bound has no number."""
    from sympy import Integer, Min

    try:
        b = rank_bound(_model_expr(doc, E)).bound.subs(doc.model().dims.definitions)
    except (MHASymbolicError, ValueError, TypeError, AttributeError):
        return None
    numbers = [int(x) for x in (b.args if isinstance(b, Min) else (b,)) if isinstance(x, Integer)]
    return min(numbers) if numbers else None


def _two_ranks(E: Any, F: Any, op: str) -> tuple[str, str, str | None, str]:
    """rank(E) against rank(F): decided when one is the other's transpose (rank(M^T) = rank(M))."""
    from sympy import Transpose

    transposed = Transpose(E).doit() == F or Transpose(F).doit() == E or E == F
    if not transposed:
        return "unchecked", "a rank compared with another rank (only transposes are decided)", None, ""
    holds = {"eq": True, "le": True, "ge": True, "ne": False, "lt": False, "gt": False}.get(op)
    if holds is None:
        return "unchecked", f"operator {op} between ranks", None, ""
    return ("correct" if holds else "wrong", "rank(M^T) = rank(M): the two ranks are equal", None, "proven")


def _instance(doc: DocumentModel, E: Any) -> ImmutableMatrix | None:
    from .judge import _value

    if isinstance(E, MatrixBase) and all(as_sympy(x).is_number for x in E):
        return ImmutableMatrix(E)  # a matrix of the document's own numbers: computed from them alone
    if not doc.values and not doc.definitions:
        return None
    try:
        V = _value(doc, E)
    except (MHASymbolicError, ValueError, TypeError):
        return None
    if any(not x.is_number for x in V):
        return None
    return V


def _rank_of_balls(V: ImmutableMatrix) -> int:
    """The largest rank certified for every matrix whose entries round to ``V``'s (each written decimal widened by
    half a unit of its last place)."""
    import flint

    from .numbers import _rounding

    def balls(prec: int) -> Any:
        return flint.arb_mat(V.rows, V.cols, [flint.arb(int(x.p)) / int(x.q) + flint.arb(0, 1) *
                                              (flint.arb(int(_rounding(x).p)) / int(_rounding(x).q)) for x in V])
    for r in range(min(V.shape), 0, -1):
        if certify_rank_at_least(balls, r).excludes_zero:
            return r
    return 0


def _decide_instance(doc: DocumentModel, E: Any, V: ImmutableMatrix, op: str, R: Any
                     ) -> tuple[str, str, str | None, str]:
    from .numbers import _rounding

    rounded = all(x.is_Rational for x in V) and any(_rounding(x) for x in V)
    if rounded:  # a matrix written to 4 places stands for every matrix that rounds to it: its rank is only as
        lo, hi = _rank_of_balls(V), min(V.shape)  # low as what holds for them all (generically it is full)
        basis = "certified"
    elif all(x.is_Rational for x in V):
        lo = hi = exact_rank(V)
        basis = "computed"
    else:
        hi = min(V.shape)
        try:
            hi = min(hi, int(rank_bound(_model_expr(doc, E)).bound.subs(doc.model().dims.definitions)))
        except (MHASymbolicError, ValueError, TypeError, AttributeError):
            pass
        lo = 0
        for r in range(hi, 0, -1):
            if certify_rank_at_least(V, r).excludes_zero:
                lo = r
                break
        basis = "certified"
    R = as_sympy(R).doit()  # \min(3, 2) read unevaluated
    if not R.is_number:
        return "unchecked", f"a bound {R} that is not a number", None, ""
    R = int(R) if R.is_Integer else R
    holds = {"le": (hi <= R, lo > R), "lt": (hi < R, lo >= R), "eq": (lo == hi == R, lo > R or hi < R),
             "ge": (lo >= R, hi < R), "gt": (lo > R, hi <= R), "ne": (lo > R or hi < R, lo == hi == R)}.get(op)
    if holds is None:
        return "unchecked", f"operator {op} on a rank", None, ""
    rank = str(lo) if lo == hi else f"between {lo} and {hi}"
    if holds[0]:
        return "correct", f"rank = {rank} on the document's values", None, basis
    if holds[1]:
        return "wrong", f"rank = {rank} on the document's values", rank, basis
    return "unchecked", f"rank {rank}: not decided against {R}", None, ""
