r"""Witnesses: concrete instances whose certified ranks attain the proven bounds.

Explanation
===========

For concrete sizes, :func:`rank_report` builds a small integer instance (``X`` and the
weights drawn deterministically from ``{-3, ..., 3}``) and, for each quantity, compares
the proven bound (:func:`~mha_symbolic.rank.bounds.rank_bound` on the model's own
expression) with the rank of the instance, certified:

* rational quantities (the logits ``Q_1 K_1^T``, ``W_QK``, ``W_OV``) exactly with FLINT;
* quantities after the softmax (``A_1``, ``head_1``, ``Concat``, ``Output``) by a minor
  whose determinant ball excludes 0 (the upper bound is the proof, the minor the witness).

A verdict is ``tight`` only when the certified rank equals the bound; otherwise the
report says how far the certificate reached.  The certificates also try one size above
the bound (:func:`~mha_symbolic.rank.certify.certified_rank`), so an unsound bound is
reported as ``CONTRADICTION``, never as ``tight``.  No float SVD decides anything here.

Examples
========

>>> from mha_symbolic.rank.witness import rank_report
>>> [(r.quantity, r.bound, r.attained, r.verdict) for r in rank_report(4, 4, 2)][:3]
[('Q_1 K_1^T', 2, 2, 'tight'), ('A_1', 4, 4, 'tight'), ('head_1', 2, 2, 'tight')]
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

import flint
import numpy as np
from sympy import MatMul

from ..attention import MultiHeadAttention
from ..errors import InputError, SizeLimitError
from ..heads import HeadMatrix
from ..latex import prose_latex
from .bounds import rank_bound
from .certify import MinorCertificate, certified_rank
from .circuits import FactoredMatrix

#: Largest sizes :func:`rank_report` certifies (a few seconds each at the limit): ``n`` and ``n h`` bound the
#: ball-arithmetic determinants (their cost grows with n^3), ``d_model`` the ball product ``Concat W_O``
#: (``n d_model^2``); the exact ranks of ``W_QK`` and ``W_OV`` come from their ``d_k x d_k`` Gram products.
MAX_WITNESS_N = 128
MAX_WITNESS_D_MODEL = 1024

__all__ = ["RankRow", "RankReport", "rank_report", "MAX_WITNESS_N", "MAX_WITNESS_D_MODEL", "witness_inputs",
           "W_QK", "W_OV", "exact_product"]


def W_QK(model: MultiHeadAttention, i: Any) -> Any:
    """``W_QK^i = W_Q^i (W_K^i)^T`` (``d_model x d_model``): the bilinear form of the logits."""
    return MatMul(model.W("Q", i), model.W("K", i).T)


def W_OV(model: MultiHeadAttention, i: Any) -> Any:
    """``W_OV^i = W_V^i W_O^i`` with ``W_O^i`` the i-th row block of ``W_O`` (``d_v x d_model``)."""
    D = model.dims
    return MatMul(model.W("V", i), HeadMatrix("W_O", D.d_v, D.d_model, i))


@dataclass(frozen=True)
class RankRow:
    """One line of a rank report."""

    quantity: str
    bound_expr: str
    bound: int
    attained: int
    certificate: str
    verdict: str
    detail: MinorCertificate | None = None
    seed: int = 0

    def as_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["detail"] = asdict(self.detail) if self.detail is not None else None
        return d


def witness_inputs(n: int, d_model: int, h: int, seed: int = 0) -> dict[str, Any]:
    """A deterministic instance in the projection layout: integer ``X``, ``W_K``, ``W_V``,
    ``W_O`` (entries in -2..2) and ``W_Q = W_Q_int / q`` with the integer ``q`` chosen so the
    scaled scores are of order 1 (a saturated softmax would be numerically one-hot, and a
    minor hard to certify).  ``q`` is returned as ``"q"``; ranks of integer products are
    unchanged by it."""
    rng = np.random.default_rng(seed)
    dk = d_model // h
    W = {k: rng.integers(-2, 3, size=(h, d_model, dk)) for k in ("W_Q", "W_K", "W_V")}
    reach = 2
    X = rng.integers(-reach, reach + 1, size=(n, d_model))
    while len({tuple(r) for r in X.tolist()}) < n:  # equal rows of X make equal rows of A: rank < n
        reach += 1
        X = rng.integers(-reach, reach + 1, size=(n, d_model))
    if dk <= 2:  # narrow heads: spread the first query/key column so X's rows get distinct projections
        if d_model <= 8:
            column = (2 * reach + 1) ** np.arange(d_model)  # x . column is x's number in base 2*reach+1
        else:
            column = rng.integers(-50, 51, size=d_model)
        for key in ("W_Q", "W_K"):
            W[key][:, :, 0] = column
    Xf = X.astype(float)
    S = Xf @ W["W_Q"][0] @ W["W_K"][0].T @ Xf.T / np.sqrt(dk)
    q = max(1, int(round(float(S.std()))))
    return {"X": X, **W, "W_O": rng.integers(-2, 3, size=(d_model, d_model)), "q": q}


def _fmpz(A: Any) -> flint.fmpz_mat:
    if isinstance(A, flint.fmpz_mat):
        return A
    return flint.fmpz_mat([[int(x) for x in row] for row in np.asarray(A).tolist()])


def exact_product(*factors: Any) -> flint.fmpz_mat:
    """Exact integer product (NumPy's int64 would overflow silently)."""
    out = _fmpz(factors[0])
    for f in factors[1:]:
        out = out * _fmpz(f)
    return out


def _arb(A: Any) -> flint.arb_mat:
    A = _fmpz(A)
    return flint.arb_mat(A)


def _softmax_rows(S: flint.arb_mat, scale: flint.arb) -> flint.arb_mat:
    n, m = S.nrows(), S.ncols()
    out = flint.arb_mat(n, m)
    for i in range(n):
        row = [(S[i, j] * scale).exp() for j in range(m)]
        total = sum(row[1:], row[0])
        for j in range(m):
            out[i, j] = row[j] / total
    return out


def _verdict(bound: int, attained: int, kind: str) -> str:
    if attained == bound:
        return "tight"
    if attained > bound:  # impossible for a sound bound: report it loudly, never hide it
        return f"CONTRADICTION: {kind} {attained} exceeds the proven bound {bound}"
    return f"bound holds; {kind} reached {attained} < {bound}"


class RankReport(list):  # type: ignore[type-arg]
    """A list of :class:`RankRow` that renders as a Markdown table in Jupyter."""

    def _repr_markdown_(self) -> str:
        rows = ["| quantity | proven bound | attained | certificate | verdict |", "|---|---|---|---|---|"]
        rows += [f"| ${prose_latex(r.quantity)}$ | ${prose_latex(r.bound_expr)}$ | {r.attained} | {r.certificate} "
                 f"| {r.verdict} |" for r in self]
        return "\n".join(rows)


def rank_report(n: int, d_model: int, h: int, seed: int = 0, tries: int = 8) -> RankReport:
    """Proven bounds vs certified ranks of witness instances, for concrete sizes.

    A random instance can be degenerate (two equal rows of ``X``, a zero weight); up to
    ``tries`` seeds are tried, and the report of the first instance attaining every bound
    (or else the one attaining most) is returned.  Its seed is in each row's ``seed``.
    """
    for label, v in (("n", n), ("d_model", d_model), ("h", h), ("tries", tries)):
        if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < 1:
            raise InputError(f"rank_report needs positive integers for the sizes and tries; {label} = {v!r}")
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise InputError(f"rank_report: seed must be a non-negative integer, got {seed!r}")
    over = []
    if n > MAX_WITNESS_N:
        over.append(f"n = {n} > {MAX_WITNESS_N} (ball-arithmetic determinants grow with n^3)")
    if n * h > MAX_WITNESS_N * 8:
        over.append(f"n h = {n * h} > {MAX_WITNESS_N * 8} (every head's softmax in ball arithmetic)")
    if d_model > MAX_WITNESS_D_MODEL:
        over.append(f"d_model = {d_model} > {MAX_WITNESS_D_MODEL} (the ball product Concat W_O grows with "
                    "n d_model^2)")
    if over:
        raise SizeLimitError(f"rank witnesses are not certified at these sizes: {'; '.join(over)}. The proven "
                             "bounds hold for every size: use rank_bound; for trained weights, "
                             "mha_symbolic.rank.circuits")
    MultiHeadAttention(n=n, d_model=d_model, h=h)  # DimensionError for bad sizes, before any work
    best = RankReport()
    for s in range(seed, seed + tries):
        rows = _report(n, d_model, h, s)
        if sum(r.verdict == "tight" for r in rows) > sum(r.verdict == "tight" for r in best):
            best = RankReport(rows)
        if all(r.verdict == "tight" for r in rows):
            break
    return best


def _report(n: int, d_model: int, h: int, seed: int) -> list[RankRow]:
    model = MultiHeadAttention(n=n, d_model=d_model, h=h)
    D = model.dims
    inputs = witness_inputs(n, d_model, h, seed)
    X, WQ, WK, WV, WO, q = (inputs[k] for k in ("X", "W_Q", "W_K", "W_V", "W_O", "q"))
    dk = int(D.d_k)
    rows: list[RankRow] = []

    def bound_of(expr: Any) -> tuple[str, int]:
        b = rank_bound(expr, D).bound
        return str(b), int(b)

    def exact_row(name: str, expr: Any, value: Any) -> None:
        text, bound = bound_of(expr)
        r = int(_fmpz(value).rank())
        rows.append(RankRow(name, text, bound, r, "exact (FLINT fmpz_mat)", _verdict(bound, r, "exact rank"),
                            None, seed))

    def factored_row(name: str, expr: Any, value: FactoredMatrix) -> None:
        text, bound = bound_of(expr)
        r = value.rank().rank
        rows.append(RankRow(name, text, bound, r, "exact (FLINT, rank(L^T L R R^T) of the factors)",
                            _verdict(bound, r, "exact rank"), None, seed))

    def ball_row(name: str, expr: Any, build: Any) -> None:
        text, bound = bound_of(expr)
        r, cert = certified_rank(build, bound)
        kind = f"arb minor {r}x{r}, det {cert.det}" if cert else "no minor certified"
        rows.append(RankRow(name, text, bound, r, kind, _verdict(bound, r, "certificate"), cert, seed))

    logits = [exact_product(X, WQ[i], WK[i].T, X.T) for i in range(h)]  # times 1/q: W_Q = W_Q_int / q
    exact_row("Q_1 K_1^T", model.steps["S_1"].expr, logits[0])

    def attention(i: int) -> flint.arb_mat:
        return _softmax_rows(_arb(logits[i]), 1 / (flint.arb(dk).sqrt() * q))

    def head(i: int) -> flint.arb_mat:
        return attention(i) * _arb(exact_product(X, WV[i]))

    def concat() -> flint.arb_mat:
        heads = [head(i) for i in range(h)]
        out = flint.arb_mat(n, h * dk)
        for k, H in enumerate(heads):
            for a in range(n):
                for b in range(dk):
                    out[a, k * dk + b] = H[a, b]
        return out

    ball_row("A_1", model.steps["A_1"].expr, lambda prec: attention(0))
    ball_row("head_1", model.steps["head_1"].expr, lambda prec: head(0))
    ball_row("Concat", model.steps["Concat"].expr, lambda prec: concat())
    ball_row("Output", model.steps["Output"].expr, lambda prec: concat() * _arb(WO))
    factored_row("W_QK^1", W_QK(model, 1), FactoredMatrix(WQ[0], WK[0].T))
    factored_row("W_OV^1", W_OV(model, 1), FactoredMatrix(WV[0], WO[:dk, :]))
    return rows
