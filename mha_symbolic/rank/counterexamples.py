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
from ..errors import InputError, require, require_int
from ..latex import prose_markdown, statement_markdown
from ..softmax import explicit_softmax
from ..values import to_matrix
from .bounds import rank_bound
from .certify import MinorCertificate, certify_rank_at_least
from .witness import exact_product, witness_inputs

__all__ = ["RankClaim", "softmax_rank_counterexample", "multihead_rank_comparison", "low_rank_bottleneck",
           "bottleneck_theorem"]


@dataclass(frozen=True)
class RankClaim:
    """A rank claim and how it was settled: ``verdict``, the instance, the certificate, the reasoning."""

    statement: str
    verdict: str
    reasoning: tuple[str, ...]
    instance: dict[str, Any] = field(default_factory=dict)
    certificate: MinorCertificate | None = None
    kind: str = "certified counterexample"
    scope: str = ""

    def __bool__(self) -> bool:  # a claim object is truthy when the claim holds
        return self.verdict.startswith("true")

    def _repr_markdown_(self) -> str:
        lines = [f"**{self.verdict}** ({self.kind}): {statement_markdown(self.statement)}", ""]
        return "\n".join(lines + [f"- {prose_markdown(r)}" for r in self.reasoning])


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
    require_int(n, "multihead_rank_comparison's n", 1, 1024)
    require_int(d_model, "multihead_rank_comparison's d_model", 1, 1024)
    if not isinstance(heads, (tuple, list)) or len(heads) != 2:
        raise InputError(f"multihead_rank_comparison's heads must be a pair of head counts, got {heads!r}")
    for h in heads:
        require_int(h, "multihead_rank_comparison's heads", 1, d_model)
    bounds: dict[str, Any] = {}
    exact: dict[str, int] = {}
    for h in heads:
        sym = MultiHeadAttention(n=None, d_model=d_model, h=h)
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
    P = _row_stochastic(n, seed) if P is None else to_matrix(P, "P")
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


def bottleneck_theorem(model: MultiHeadAttention | None = None, check_up_to: int = 4) -> RankClaim:
    """Theorem 1 of Bhojanapalli et al. (2020) for every size with ``d_k <= m - 2``, ``m = min(n, n_kv)`` (``m = n``
    in self-attention), from ``model``'s scores.

    1. The model's scaled scores ``S'_i`` have rank <= ``d_k`` (:func:`rank_bound` on its own expression).
    2. ``softmax(S') = P`` iff ``S' = log P + c 1^T`` (shift invariance, per row).
    3. ``P = softmax(E)`` with ``E = I_n`` (self-attention) or the ``n x n_kv`` matrix with ones at ``(j, j)``,
       ``j <= m`` (cross-attention): the leading ``m x m`` block of ``log P`` is ``I - a 1 1^T``,
       ``a = log(e + n_kv - 1) >= 1``; by the matrix determinant lemma its determinant is ``1 - a m <= 1 - m < 0``
       for ``m >= 2``: rank ``m``.
    4. ``rank(log P + c 1^T) >= m - 1 > d_k``: no weights attain ``P``.
    Step 3 is also computed exactly for ``m = 2..check_up_to`` (in cross-attention with ``n_kv = m`` and
    ``m + 1``).  At ``d_k = m - 1`` the argument gives nothing (the determinant is affine in ``c``): undecided
    there.  With ``n_kv = 1`` every row of ``P`` is ``[1]``: ``m = 1``, nothing is excluded.
    """
    from ..attention import MultiHeadAttention

    require(model, (MultiHeadAttention, type(None)), "bottleneck_theorem's model", "a MultiHeadAttention or None")
    require_int(check_up_to, "bottleneck_theorem's check_up_to", 1, 32)
    from sympy import E, Min, simplify, symbols

    from ..proofs import softmax_shift_invariance
    from .bounds import provably_le

    base = MultiHeadAttention() if model is None else model
    general = base.generalised()  # the same variant at symbolic sizes
    if general.mask == "additive":
        return _additive_mask_attains(general)
    step = general.steps["S'_i"]
    scores = step.expr
    bound = rank_bound(scores, general.dims).bound
    low_rank = provably_le(bound, general.dims.d_k, general.dims)
    shift = softmax_shift_invariance(max_n=3).verified
    cross = general.cross
    checks = []
    for m in range(2, check_up_to + 1):
        for keys in ((m, m + 1) if cross else (m,)):
            a = log(E + keys - 1)
            P = explicit_softmax(eye(m).row_join(zeros(m, keys - m)))
            L = P[:, :m].applyfunc(lambda x: simplify(log(x)))
            form = (L - (eye(m) - a * ImmutableMatrix.ones(m, m))).applyfunc(simplify) == zeros(m, m)
            det_ok = simplify(L.det() - (1 - m * a)) == 0
            cert = certify_rank_at_least(L, m)
            checks.append(form and det_ok and cert.excludes_zero)
    n_sym = symbols("n", integer=True, positive=True)
    if cross:
        a_sym = log(E + general.n_kv - 1)
        third = (f"P = softmax(E), E the n x n_kv matrix with ones at (j, j) for j <= m = min(n, n_kv): the leading "
                 f"m x m block of log P is I - a 1 1^T with a = {a_sym} >= 1 (e + n_kv - 1 >= e); matrix "
                 f"determinant lemma: its determinant is 1 - a m <= 1 - m < 0 for m >= 2, so the block has rank m "
                 f"(computed exactly and certified for m = 2..{check_up_to} with n_kv = m and m + 1: "
                 f"{'all hold' if all(checks) else 'FAILED'}).")
        fourth = "rank(log P + c 1^T) >= m - 1 > d_k when d_k <= m - 2: no weights attain P."
        fifth = ("At d_k = m - 1 the rank argument refutes nothing (the determinant is affine in c): undecided "
                 "there.  With n_kv = 1 every row of P is [1]: m = 1 and nothing is excluded.")
        statement = "d_k <= min(n, n_kv) - 2: some positive row-stochastic P (n x n_kv) is attained by no weights"
        scope = "d_k <= min(n, n_kv) - 2 (proof for every n, n_kv); undecided at d_k = min(n, n_kv) - 1"
        instance = {"bound": bound, "m": Min(general.dims.n, general.n_kv)}
    else:
        a_sym = log(E + n_sym - 1)
        third = (f"P = softmax(I_n): log P = I - a 1 1^T with a = {a_sym} >= 1 (e + n - 1 >= e); matrix determinant "
                 f"lemma: det(log P) = 1 - a n <= 1 - n < 0 for n >= 2, so rank(log P) = n"
                 f" (computed exactly and certified for n = 2..{check_up_to}: "
                 f"{'all hold' if all(checks) else 'FAILED'}).")
        fourth = "rank(log P + c 1^T) >= rank(log P) - 1 = n - 1 > d_k when d_k <= n - 2: no weights attain P."
        fifth = "At d_k = n - 1 the rank argument refutes nothing (det(log P + c 1^T) is affine in c): undecided there."
        statement = "d_k <= n - 2: some positive row-stochastic P is attained by no weights"
        scope = "d_k <= n - 2 (proof for every n); undecided at d_k = n - 1"
        instance = {"bound": bound}
    reasoning = (
        f"The model's scaled scores {step.text} have proven rank <= {bound}"
        + (" <= d_k." if low_rank else ", which is not <= d_k: the argument does not apply."),
        "softmax(S') = P iff S' = log P + c 1^T for a row shift c (shift invariance"
        + (", proven)." if shift else ", NOT verified)."),
        third, fourth, fifth,
    )
    holds = low_rank and shift and all(checks)
    return RankClaim(
        statement=statement,
        verdict="true: proof for symbolic sizes" if holds else "undecided",
        reasoning=reasoning, instance=instance, kind="proof", certificate=None, scope=scope if holds else "",
    )


def _additive_mask_attains(general: MultiHeadAttention) -> RankClaim:
    """With an additive mask ``M`` among the inputs, ``softmax(S' + M)`` reaches every positive row-stochastic
    ``P``: ``W_Q = 0`` makes ``S' = 0`` and ``M = log P`` does the rest.  Exhibited exactly at ``n = 3``,
    ``d_k = 1 = n - 2``, ``P = softmax(I_3)`` -- the matrix the theorem without a mask shows unattainable."""
    from sympy import simplify

    model = MultiHeadAttention(n=3, d_model=2, h=1, d_k=1, d_v=1, mask="additive", causal=general.causal)
    P = explicit_softmax(eye(3), general.causal)
    E = model.evaluate(X=[[1, 0], [0, 1], [1, 1]], W_Q=[[[0], [0]]], W_K=[[[1], [1]]], W_V=[[[1], [1]]],
                       W_O=[[1, 0]], mask=eye(3).tolist())
    attained = (ImmutableMatrix(E["A_1"]) - P).applyfunc(simplify) == zeros(3, 3)
    reasoning = (
        "The model adds a mask M to the scores, and M is an input: softmax(S' + M) with S' = 0 (W_Q = 0) and "
        "M = log P is P, for every positive row-stochastic P: the rank of S' limits nothing.",
        "Exhibited exactly: n = 3, d_k = 1 = n - 2, W_Q = 0, M = I_3 gives A_1 = softmax(I_3)"
        + (" (computed exactly: equal)." if attained else " -- NOT reproduced by exact evaluation."),
    )
    return RankClaim(
        statement="d_k <= n - 2: some positive row-stochastic P is attained by no weights (with an additive mask M)",
        verdict="false: counterexample" if attained else "undecided",
        reasoning=reasoning, instance={"P": P, "M": eye(3)}, kind="exact counterexample", certificate=None,
    )

