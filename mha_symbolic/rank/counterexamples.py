r"""Certified counterexamples and the low-rank bottleneck (Bhojanapalli et al. 2020, Thm 1).

Explanation
===========

* :func:`softmax_rank_counterexample` -- "rank(softmax(Q K^T / sqrt(d_k))) <= d_k" is
  false: with ``d_k = 1``, ``n = 3`` the attention matrix is invertible (certified by its
  determinant ball).  The true bound is on the head *output*: ``rank(A V) <= rank(V) <= d_v``.
* :func:`multihead_rank_comparison` -- seed 002 says multi-head has a "higher rank
  representation" than one head at equal total width (one head of 64 vs four of 16).  Both
  concatenated outputs have the same proven bound ``min(n, 64)``, and the per-head logits
  of the 4-head model have rank <= 16, *lower* than the single head's <= 64; both shown
  with proven bounds and exact ranks of witnesses.
* :func:`low_rank_bottleneck` -- in our row convention: if ``d_k >= n`` and ``X`` has full
  row rank, every positive row-stochastic ``P`` is ``softmax(X W_Q W_K^T X^T / sqrt(d_k))``
  for weights built exactly from ``log P``; if ``d_k <= n - 2`` a ``P`` with
  ``rank(log P) = n`` (certified by a determinant ball) is attained by no weights, since
  ``rank(log P + c 1^T) >= n - 1 > d_k`` for every row shift ``c``.

Examples
========

>>> from mha_symbolic.rank.counterexamples import softmax_rank_counterexample
>>> c = softmax_rank_counterexample()
>>> c.verdict, c.certificate.size, c.certificate.excludes_zero
('false: certified counterexample', 3, True)
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
from sympy import ImmutableMatrix, Matrix, Rational, eye, log, sqrt, zeros

from ..attention import MultiHeadAttention
from ..errors import InputError
from ..softmax import explicit_softmax
from .bounds import rank_bound
from .certify import MinorCertificate, certify_rank_at_least
from .witness import exact_product, witness_inputs

__all__ = ["RankClaim", "softmax_rank_counterexample", "multihead_rank_comparison", "low_rank_bottleneck"]


@dataclass(frozen=True)
class RankClaim:
    """A rank claim and how it was settled: ``verdict``, the instance, the certificate, the reasoning."""

    statement: str
    verdict: str
    reasoning: tuple[str, ...]
    instance: dict[str, Any] = field(default_factory=dict)
    certificate: MinorCertificate | None = None
    kind: str = "certified counterexample"

    def __bool__(self) -> bool:  # a claim object is truthy when the claim holds
        return self.verdict.startswith("true")

    def _repr_markdown_(self) -> str:
        lines = [f"**{self.verdict}** ({self.kind}): {self.statement}", ""]
        return "\n".join(lines + [f"- {r}" for r in self.reasoning])


def softmax_rank_counterexample() -> RankClaim:
    """``d_k = d_model = 1``, ``n = 3``, ``X = [0, 1, 2]^T``, ``W_Q = W_K = [1]``: ``A`` is invertible."""
    X = ImmutableMatrix([[0], [1], [2]])
    S = X * X.T  # W_Q = W_K = [1], d_k = 1: the scaled scores are X X^T / sqrt(1)
    A = explicit_softmax(S)
    cert = certify_rank_at_least(A, 3)
    return RankClaim(
        statement=r"\operatorname{rank}\left(\mathrm{softmax}\left(\frac{Q K^{\top}}{\sqrt{d_k}}\right)\right) \le d_k",
        verdict="false: certified counterexample" if cert.excludes_zero else "undecided",
        reasoning=("d_k = 1, n = 3, X = [0, 1, 2]^T, W_Q = W_K = [1]: the logits X X^T have rank 1,",
                   "but the softmax is applied entry-wise (not a linear map), and A is invertible:",
                   f"det A lies in the ball {cert.det}, which excludes 0, so rank A = 3 > d_k = 1.",
                   "What is true: rank(head) = rank(A V) <= rank(V) <= d_v, from V's width."),
        instance={"X": X, "W_Q": ImmutableMatrix([[1]]), "W_K": ImmutableMatrix([[1]]), "A": A},
        certificate=cert,
    )


def multihead_rank_comparison(n: int = 64, d_model: int = 64, heads: tuple[int, int] = (1, 4)) -> RankClaim:
    """Seed 002's "higher rank representation" claim at equal total width, bounded and witnessed."""
    bounds: dict[str, Any] = {}
    exact: dict[str, int] = {}
    for h in heads:
        sym = MultiHeadAttention(None, d_model, h)
        idx = sym.head_indices[0]
        bounds[f"h={h} logits"] = rank_bound(sym.steps[f"S_{idx}"].expr, sym.dims).bound
        bounds[f"h={h} concat"] = rank_bound(sym.steps["Concat"].expr, sym.dims).bound
        w = witness_inputs(n, d_model, h)
        exact[f"h={h} logits"] = int(exact_product(w["X"], w["W_Q"][0], w["W_K"][0].T, w["X"].T).rank())
    lo, hi = heads
    reasoning = (
        f"Equal total width d_model = {d_model}: one head of d_k = {d_model // lo}, {hi} heads of "
        f"d_k = {d_model // hi}.",
        f"Concatenated output: proven bound {bounds[f'h={lo} concat']} for h={lo} and "
        f"{bounds[f'h={hi} concat']} for h={hi} -- the same.",
        f"Per-head logits: proven bound {bounds[f'h={lo} logits']} (h={lo}) vs {bounds[f'h={hi} logits']} "
        f"(h={hi}); witnesses at n = {n} attain {exact[f'h={lo} logits']} and {exact[f'h={hi} logits']} "
        "(exact, FLINT): the multi-head logits have *lower* rank.",
        "True statements: rank(Z) <= d_k per head and rank(Concat) <= h d_k, because head_i = A_i V_i and "
        "V_i has d_v = d_k columns -- not because of the attention matrix, which can have rank n.",
    )
    same_concat = bounds[f"h={lo} concat"] == bounds[f"h={hi} concat"]
    lower_logits = exact[f"h={hi} logits"] < exact[f"h={lo} logits"]
    return RankClaim(
        statement="multi-head attention has a higher rank representation than single-head (seed 002)",
        verdict="false: proven bounds and exact witnesses" if same_concat and lower_logits else "undecided",
        reasoning=reasoning,
        instance={"bounds": bounds, "exact_ranks": exact, "n": n},
        kind="proof (bounds) and exact computation (witnesses)",
    )


def _row_stochastic(n: int, seed: int) -> ImmutableMatrix:
    rng = np.random.default_rng(seed)
    W = rng.integers(1, 10, size=(n, n))
    return ImmutableMatrix(n, n, [Rational(int(W[i, j]), int(W[i].sum())) for i in range(n) for j in range(n)])


def low_rank_bottleneck(n: int, d_k: int, P: Any = None, seed: int = 0) -> RankClaim:
    """Theorem 1 of Bhojanapalli et al. (2020) at concrete ``n``, ``d_k`` (``d_model = max(n, d_k)``)."""
    if n < 1 or d_k < 1:
        raise InputError("n and d_k must be positive")
    P = _row_stochastic(n, seed) if P is None else ImmutableMatrix(P)
    if P.shape != (n, n) or any(not (x.is_positive) for x in P) or any(sum(P.row(i)) != 1 for i in range(n)):
        raise InputError("P must be an n x n matrix of positive entries whose rows sum to 1")
    L = P.applyfunc(log)
    if d_k >= n:
        d_model = n
        X = eye(n)  # full row rank; its right inverse is X^T (X X^T)^{-1} = I
        X_pinv = X.T * (X * X.T).inv()
        pad = zeros(n, d_k - n)
        W_Q = X_pinv * Matrix.hstack(sqrt(d_k) * L, pad)
        W_K = X_pinv * Matrix.hstack(eye(n), pad)
        scaled = (X * W_Q * W_K.T * X.T) / sqrt(d_k)
        A = explicit_softmax(scaled.applyfunc(lambda x: x.expand()))
        attained = (A - P).applyfunc(lambda x: x.simplify()) == zeros(n, n)
        return RankClaim(
            statement=f"d_k = {d_k} >= n = {n}: every positive row-stochastic P is attained",
            verdict="true: exact construction" if attained else "undecided",
            reasoning=("X = I (full row rank, d_model = n); W_Q = X^+ [sqrt(d_k) log P, 0], W_K = X^+ [I, 0];",
                       "then X W_Q W_K^T X^T / sqrt(d_k) = log P, and softmax(log P) = P exactly (rows sum to 1)."),
            instance={"P": P, "X": X, "W_Q": ImmutableMatrix(W_Q), "W_K": ImmutableMatrix(W_K), "d_model": d_model},
            kind="proof by exact construction",
        )
    cert = certify_rank_at_least(L, n)
    if d_k <= n - 2:
        holds = cert.excludes_zero
        return RankClaim(
            statement=f"d_k = {d_k} < n = {n}: some positive row-stochastic P is attained by no weights",
            verdict="true: certified" if holds else "undecided",
            reasoning=("softmax(S') = P iff S' = log P + c 1^T for a row shift c (softmax is shift-invariant per row);",
                       f"rank(log P) = {n}: det(log P) lies in {cert.det}, which excludes 0;",
                       f"so rank(log P + c 1^T) >= {n} - 1 = {n - 1} > d_k = {d_k} for every c,",
                       "while every attainable S' = X W_Q W_K^T X^T / sqrt(d_k) has rank <= d_k."),
            instance={"P": P, "log P": L}, certificate=cert,
        )
    return RankClaim(
        statement=f"d_k = {d_k} = n - 1: the rank argument cannot exhibit an unattainable P",
        verdict="undecided: the rank certificate needs d_k <= n - 2",
        reasoning=("det(log P + c 1^T) = det(log P) (1 + 1^T (log P)^{-1} c) is affine in c, so some row shift",
                   "makes it singular: rank n - 1 = d_k is reachable, and the rank argument refutes nothing here."),
        instance={"P": P, "log P": L}, certificate=cert, kind="no certificate",
    )
