r"""Rank bounds of the attention variants (grouped-query, cross-attention, masks), with certified tightness.

Explanation
===========

:func:`variant_rank_bounds` proves, from the model's own expressions (:func:`~mha_symbolic.rank.rank_bound`),
the bounds each variant really has:

* the logits of a head, ``rank(Q_i K_j^T) <= min(n, n_kv, d_k)``;
* the cached keys and values, ``rank([K_1 ... K_g]) <= min(n_kv, g d_k)`` and
  ``rank([V_1 ... V_g]) <= min(n_kv, g d_v)``: with ``g`` key/value heads the value part is ``g d_v`` wide, not
  ``h d_v``;
* ``rank(Concat) <= min(n, h d_v, 1 + h (n_kv - 1))``: the key/value side of a group is shared, but every query
  head has its own attention matrix, so ``g`` does not bound ``Concat``; the softmax rows sum to 1 (``A_i 1 = 1``
  whatever the mask), so every head's columns lie in ``span(1)`` plus ``n_kv - 1`` directions of its own, which
  binds in cross-attention with few keys (``n_kv = 1``: every head is ``1 V_j``, rank 1);
* the same for ``Output = Concat W_O``.

For concrete sizes a witness is built through the model's own exact evaluation (integer ``X``, ``Y`` and
weights, ``W_Q`` divided by an integer so the scores are of order 1, masks that keep every key) and each bound
is compared with the witness's certified rank: exact (FLINT) for the rational quantities, a determinant ball
that excludes 0 for those after the softmax.  ``tight`` only when they are equal; a certified rank above a
bound is reported as ``CONTRADICTION`` and makes the proof fail.

Examples
========

>>> from mha_symbolic import MultiHeadAttention
>>> from mha_symbolic.rank.variants import variant_rank_bounds
>>> p = variant_rank_bounds(MultiHeadAttention(n=7, d_model=8, h=4, kv_heads=2, n_kv=2))
>>> [(r.quantity, r.bound, r.attained, r.verdict) for r in p.result["rows"]]
[('S_1', 2, 2, 'tight'), ('[K_1 ... K_g]', 2, 2, 'tight'), ('[V_1 ... V_g]', 2, 2, 'tight'),
 ('Concat', 5, 5, 'tight'), ('Output', 5, 5, 'tight')]
>>> p.verified
True
>>> variant_rank_bounds(MultiHeadAttention(cross=True, kv_heads="g")).result["bounds"]["Concat"]
Min(d_model, n, h*n_kv - h + 1)
"""

from __future__ import annotations

from typing import Any

import numpy as np
from sympy import ImmutableMatrix, Matrix

from ..attention import HEAD_INDEX, KV_INDEX, MultiHeadAttention
from ..concat import Concat, ConcatHeads
from ..errors import InputError, MHASymbolicError, SizeLimitError
from ..latex import latex
from ..proofs._proof import Proof, ProofStep
from .bounds import RankBound, rank_bound
from .certify import certified_rank, exact_rank
from .witness import RankRow, _verdict

__all__ = ["variant_rank_bounds", "MAX_VARIANT_WITNESS"]

#: Largest ``n``, ``n_kv`` and ``h d_v`` certified through exact evaluation (the softmax entries are exact
#: expressions, turned into balls).
MAX_VARIANT_WITNESS = 64


def _kv_part(model: MultiHeadAttention, kind: str) -> Any:
    """``[K_1 ... K_g]`` (or ``V``) as one expression of the inputs."""
    steps = model.steps
    if model.dims.h.is_Integer or model.kv_heads == 1:
        return Concat(*[steps[f"{kind}_{j}"].expr for j in model.kv_indices])
    index = KV_INDEX if model.kv_heads is not None else HEAD_INDEX
    count = model.kv_heads if model.kv_heads is not None else model.dims.h
    return ConcatHeads(steps[f"{kind}_{index}"].expr, index, count)


def _quantities(model: MultiHeadAttention) -> list[tuple[str, Any]]:
    first = model.head_indices[0]
    return [("S_1" if first == 1 else f"S_{first}", model.steps[f"S_{first}"].expr),
            ("[K_1 ... K_g]", _kv_part(model, "K")), ("[V_1 ... V_g]", _kv_part(model, "V")),
            ("Concat", model.steps["Concat"].expr), ("Output", model.steps["Output"].expr)]


def _witness_inputs(model: MultiHeadAttention, seed: int) -> dict[str, Any]:
    """Integer inputs (entries in -2..2, rows of X and Y distinct), ``W_Q`` divided by an integer ``q`` so that
    the scores are of order 1, and masks that keep every key."""
    D = model.dims
    rng = np.random.default_rng(seed)
    n, n_kv, dm, h = int(D.n), int(model.n_kv), int(D.d_model), int(D.h)
    g = model.kv_heads or h
    rows = dm if model.convention == "projection" else dm // h

    def distinct(count: int) -> np.ndarray:
        reach = 2
        while True:
            A = rng.integers(-reach, reach + 1, size=(count, dm))
            if len({tuple(r) for r in A.tolist()}) == count:
                return A
            reach += 1

    X = distinct(n)
    Y = distinct(n_kv) if model.cross else X
    W = {"W_Q": rng.integers(-2, 3, size=(h, rows, int(D.d_k))),
         "W_K": rng.integers(-2, 3, size=(g, rows, int(D.d_k))),
         "W_V": rng.integers(-2, 3, size=(g, rows, int(D.d_v)))}
    S = X[:, :rows] @ W["W_Q"][0] @ W["W_K"][0].T @ Y[:, :rows].T / np.sqrt(int(D.d_k))
    q = max(1, int(round(float(S.std()))))
    inputs: dict[str, Any] = {"X": X, "W_Q": [Matrix(w) / q for w in W["W_Q"]], "W_K": W["W_K"], "W_V": W["W_V"],
                              "W_O": rng.integers(-2, 3, size=(h * int(D.d_v), dm))}
    if model.cross:
        inputs["Y"] = Y
    if model.bias:
        inputs.update({k: rng.integers(-2, 3, size=(count, width)) for k, count, width in
                       (("b_Q", h, int(D.d_k)), ("b_K", g, int(D.d_k)), ("b_V", g, int(D.d_v)))})
        inputs["b_O"] = rng.integers(-2, 3, size=dm)
    if model.mask == "key_padding":
        inputs["mask"] = [1] * n_kv
    elif model.mask == "additive":
        inputs["mask"] = [[0] * n_kv for _ in range(n)]
    return inputs


def _witness_rows(model: MultiHeadAttention, bounds: dict[str, RankBound], seed: int) -> list[RankRow]:
    E = model.evaluate(**_witness_inputs(model, seed))
    values = {"[K_1 ... K_g]": Matrix.hstack(*[E[f"K_{j}"] for j in model.kv_indices]),
              "[V_1 ... V_g]": Matrix.hstack(*[E[f"V_{j}"] for j in model.kv_indices]),
              "S_1": E["S_1"], "Concat": E["Concat"], "Output": E["Output"]}
    rows = []
    for name, rb in bounds.items():
        bound = int(rb.bound)
        M = ImmutableMatrix(values[name])
        if all(x.is_Rational for x in M):
            r = exact_rank(M)
            rows.append(RankRow(name, str(rb.bound), bound, r, "exact (FLINT)", _verdict(bound, r, "exact rank"),
                                None, seed))
        else:
            r, cert = certified_rank(M, bound)
            kind = f"arb minor {r}x{r}, det {cert.det}" if cert else "no minor certified"
            rows.append(RankRow(name, str(rb.bound), bound, r, kind, _verdict(bound, r, "certificate"), cert, seed))
    return rows


def _describe(model: MultiHeadAttention) -> str:
    parts = []
    if model.kv_heads is not None:
        parts.append(f"grouped-query attention with g = {model.kv_heads} key/value heads")
    parts.append(f"cross-attention with n_kv = {model.n_kv} keys" if model.cross else "self-attention")
    if model.causal:
        parts.append("a causal mask")
    if model.mask is not None:
        parts.append(f"a {model.mask.replace('_', '-')} mask")
    return ", ".join(parts)


def variant_rank_bounds(model: MultiHeadAttention, certify: bool = True, seed: int = 0, tries: int = 6) -> Proof:
    """Proven rank bounds of ``model``'s logits, cached keys and values, ``Concat`` and ``Output`` (traces in
    ``result["traces"]``), and, for concrete sizes up to :data:`MAX_VARIANT_WITNESS`, a witness whose certified
    ranks attain them (``result["rows"]``); see the module docstring."""
    if not isinstance(model, MultiHeadAttention):
        raise InputError(f"variant_rank_bounds needs a MultiHeadAttention, got {type(model).__name__}")
    D = model.dims
    traces = {name: rank_bound(expr, D) for name, expr in _quantities(model)}
    bounds = {name: rb.bound for name, rb in traces.items()}
    steps = [ProofStep(f"rank({name}) <= {rb.bound}, by the rules "
                       f"{' -> '.join(dict.fromkeys(a.rule for a in rb.trace))}", None,
                       r"\operatorname{rank}(%s) \le %s" % (name.replace("...", r"\dots"), latex(rb.bound)))
             for name, rb in traces.items()]
    statement = f"rank bounds of {_describe(model)}"
    concrete = D.is_concrete and model.n_kv.is_Integer
    small = concrete and max(int(D.n), int(model.n_kv), int(D.h * D.d_v)) <= MAX_VARIANT_WITNESS
    if not (certify and small):
        why = ("not asked" if not certify else "symbolic sizes" if not concrete else
               f"sizes above {MAX_VARIANT_WITNESS} (n, n_kv, h d_v)")
        steps.append(ProofStep(f"Tightness not certified ({why}); the bounds are proven for every size."))
        return Proof(statement, tuple(steps), True, result={"bounds": bounds, "traces": traces, "rows": []})
    best: list[RankRow] = []
    failures: list[str] = []
    for s in range(seed, seed + tries):
        try:
            rows = _witness_rows(model, traces, s)
        except MHASymbolicError as error:  # e.g. a size limit of the exact evaluation: said in the proof
            failures.append(f"seed {s}: {error}")
            if isinstance(error, SizeLimitError):
                break  # every seed has the same sizes
            continue
        if sum(r.verdict == "tight" for r in rows) > sum(r.verdict == "tight" for r in best):
            best = rows
        if all(r.verdict == "tight" for r in rows) or any(r.verdict.startswith("CONTRADICTION") for r in rows):
            best = rows
            break
    checks = tuple((f"witness (seed {r.seed}): rank({r.quantity}) = {r.attained}, certified {r.certificate}; "
                    f"bound {r.bound}: {r.verdict}", r.verdict == "tight") for r in best)
    steps += [ProofStep(what) for what, _ in checks]
    if not best:
        steps.append(ProofStep(f"No witness could be built ({failures[-1]}); tightness is not certified."))
    return Proof(statement, tuple(steps), bool(best) and all(ok for _, ok in checks),
                 kind="proof with certified witness", checks=checks,
                 result={"bounds": bounds, "traces": traces, "rows": best, "tight": {r.quantity: r.verdict == "tight"
                                                                                     for r in best}})

