r"""Grouped-query attention is multi-head attention with each key/value head repeated.

Explanation
===========

With ``g`` key/value heads, query head ``i`` reads ``K_j = X W_K^j`` and ``V_j = X W_V^j`` for
``j = ceil(i g / h)``.  Multi-head attention whose ``i``-th key/value weights are ``W_K^{j(i)}``, ``W_V^{j(i)}``
(each of the ``g`` heads repeated ``h/g`` times, PyTorch's ``enable_gqa``) has, step for step, the same
expressions: the proof substitutes the repeated weights into the multi-head model's output expression and
compares it with the grouped model's, symbolically (every weight a matrix symbol).  As a control, one head
assigned to the wrong group must make the expressions differ.

Examples
========

>>> from mha_symbolic import MultiHeadAttention
>>> from mha_symbolic.proofs.grouped import gqa_equals_repeated_kv
>>> p = gqa_equals_repeated_kv(MultiHeadAttention(n=4, d_model=8, h=4, kv_heads=2))
>>> p.verified, [ok for _, ok in p.checks]
(True, [True, True, True])
"""

from __future__ import annotations

from typing import Any

from sympy import Eq

from ..attention import MultiHeadAttention
from ..errors import InputError, require
from ._proof import Proof, ProofStep

__all__ = ["gqa_equals_repeated_kv"]


def _repeated(mha: MultiHeadAttention, assign: list[int], grouped: MultiHeadAttention) -> dict[Any, Any]:
    """``W_K^i -> W_K^{assign[i]}`` (and ``W_V``, biases) from the multi-head model to the grouped one."""
    subs: dict[Any, Any] = {}
    for kind in ("K", "V"):
        for i, j in zip(mha.head_indices, assign, strict=True):
            subs[mha.W(kind, i)] = grouped.W(kind, j)
            if mha.bias:
                subs[mha.b(kind, i)] = grouped.b(kind, j)
    return subs


def gqa_equals_repeated_kv(model: MultiHeadAttention) -> Proof:
    """Proof that ``model`` (with ``kv_heads = g``) equals multi-head attention with repeated key/value heads."""
    from ..attention import MultiHeadAttention

    require(model, MultiHeadAttention, "gqa_equals_repeated_kv's model", "a MultiHeadAttention")
    g = model.kv_heads
    if g is None:
        raise InputError("the model has one key/value head per query head (kv_heads not set): nothing to prove")
    if not model.dims.h.is_Integer:
        return _general(model)
    h = int(model.dims.h)
    mha = model.replace_options(kv_heads=None)
    assign = [int(model.kv_index(i)) for i in mha.head_indices]
    target = model.output
    repeated = mha.output.xreplace(_repeated(mha, assign, model))
    same = repeated == target
    steps_same = all(mha.steps[f"head_{i}"].expr.xreplace(_repeated(mha, assign, model))
                     == model.steps[f"head_{i}"].expr for i in mha.head_indices)
    wrong = list(assign)
    wrong[0] = assign[0] % g + 1 if g > 1 else assign[0]
    control = g == 1 or mha.output.xreplace(_repeated(mha, wrong, model)) != target
    checks = (
        (f"Output of the grouped model == Output of multi-head attention with W_K^i, W_V^i := W_K^j(i), "
         f"W_V^j(i), j(i) = {assign} (symbolic weights)", bool(same)),
        ("every head_i agrees as well", bool(steps_same)),
        ("control: head 1 assigned to another group gives a different expression", bool(control)),
    )
    statement = (f"grouped-query attention with g = {g} key/value heads for h = {h} query heads equals multi-head "
                 f"attention with each key/value head repeated h/g = {h // g} times")
    proof_steps = (
        ProofStep(f"Query head i reads key/value head j(i) = ceil(i g / h): {assign}"),
        ProofStep("Substitute W_K^i := W_K^{j(i)}, W_V^i := W_V^{j(i)} into the multi-head output", None,
                  r"\mathrm{head}_i = \mathrm{softmax}\left(\frac{Q_i K_{j(i)}^{\top}}{\sqrt{d_k}}\right) V_{j(i)}"),
        ProofStep("The two outputs are the same expression", Eq(target, target, evaluate=False) if same else None),
    )
    return Proof(statement, proof_steps, all(ok for _, ok in checks), checks=checks,
                 result={"assignment": assign})


def _general(model: MultiHeadAttention) -> Proof:
    """The identity for a symbolic ``h`` (and ``g``): the general head ``i`` of the grouped model against the general
    head ``i`` of multi-head attention with ``W_K^i, W_V^i := W_K^{j(i)}, W_V^{j(i)}``, ``j(i) = ceil(i g / h)``."""
    from ..attention import HEAD_INDEX

    i, g = HEAD_INDEX, model.kv_heads
    mha = model.replace_options(kv_heads=None)
    j = model.kv_index(i)
    subs = {mha.W(kind, i): model.W(kind, j) for kind in ("K", "V")}
    if mha.bias:
        subs.update({mha.b(kind, i): model.b(kind, j) for kind in ("K", "V")})
    grouped_head = model.steps["head_i"].expr
    same = mha.steps["head_i"].expr.xreplace(subs) == grouped_head
    concat_same = mha.steps["Concat"].expr.xreplace(subs) == model.steps["Concat"].expr
    control = mha.steps["head_i"].expr != grouped_head  # without the substitution the heads differ
    checks = (("head_i of the grouped model == head_i of multi-head attention with W_K^i, W_V^i := W_K^j(i), "
               f"W_V^j(i), j(i) = {j}, for a general head i (symbolic weights)", bool(same)),
              ("Concat(head_1, ..., head_h) agrees as well", bool(concat_same)),
              ("control: without the substitution the heads differ", bool(control)))
    statement = (f"grouped-query attention with g = {g} key/value heads for h query heads equals multi-head attention "
                 "with each key/value head repeated h/g times" +
                 (f" (taking {model.assumptions[0]})" if model.assumptions else ""))
    steps = (ProofStep(f"Query head i reads key/value head j(i) = {j}"),
             ProofStep("Substitute W_K^i := W_K^{j(i)}, W_V^i := W_V^{j(i)} into the general multi-head head_i", None,
                       r"\mathrm{head}_i = \mathrm{softmax}\left(\frac{Q_i K_{j(i)}^{\top}}{\sqrt{d_k}}\right) "
                       r"V_{j(i)}"),
             ProofStep("The two general heads are the same expression, for every i"))
    return Proof(statement, steps, all(ok for _, ok in checks), checks=checks, result={"assignment": j})
