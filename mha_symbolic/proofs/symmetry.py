r"""Symmetries: permuting heads, and permutation equivariance (which the causal mask breaks).

Examples
========

>>> from mha_symbolic.proofs import head_permutation_invariance, causal_breaks_equivariance
>>> head_permutation_invariance().verified, causal_breaks_equivariance().verified
(True, True)
"""

from __future__ import annotations

from itertools import permutations

import numpy as np
from sympy import ImmutableMatrix, Matrix, simplify, zeros

from ..attention import MultiHeadAttention
from ..errors import require_int
from ._proof import Proof, ProofStep, integer_instance

__all__ = ["head_permutation_invariance", "permutation_equivariance", "causal_breaks_equivariance"]


def _permutation_matrix(perm: tuple[int, ...]) -> ImmutableMatrix:
    n = len(perm)
    P = zeros(n, n)
    for row, col in enumerate(perm):
        P[row, col] = 1
    return ImmutableMatrix(P)


def head_permutation_invariance(h: int = 3, seed: int = 0) -> Proof:
    """Permuting the heads together with W_O's row blocks leaves the output unchanged."""
    require_int(h, "head_permutation_invariance's h", 1, 16)
    require_int(seed, "head_permutation_invariance's seed", 0)
    n, dk = 3, 2
    dm = h * dk
    instance = integer_instance(n, h, dk, seed)
    X, W_O = instance.pop("X"), instance.pop("W_O")
    W = instance
    model = MultiHeadAttention(n=n, d_model=dm, h=h)
    base = model.evaluate(X=X, W_O=W_O, **W).output
    checks = []
    for perm in permutations(range(h)):
        W_p = {k: v[list(perm)] for k, v in W.items()}
        W_O_p = np.vstack([W_O[i * dk:(i + 1) * dk] for i in perm])
        out = model.evaluate(X=X, W_O=W_O_p, **W_p).output
        same = (out - base).expand() == zeros(n, dm)
        checks.append((f"heads permuted by {perm}: the exact output is unchanged", same))
    steps = (ProofStep("Output = sum_i head_i W_O^(i) (the head decomposition)"),
             ProofStep("A sum does not depend on the order of its terms; a permutation of the heads that moves "
                       "W_O^(i) with head i only reorders the terms"))
    return Proof("Permuting heads (with W_O's row blocks) leaves the output unchanged", steps,
                 all(ok for _, ok in checks), checks=tuple(checks))


def permutation_equivariance(n: int = 3, d_model: int = 2, h: int = 1) -> Proof:
    """Without a mask, MHA(P X) = P MHA(X) for every permutation P: exact, with symbolic entries."""
    require_int(n, "permutation_equivariance's n", 1, 8)
    require_int(d_model, "permutation_equivariance's d_model", 1, 8)
    require_int(h, "permutation_equivariance's h", 1, 8)
    model = MultiHeadAttention(n=n, d_model=d_model, h=h)
    inputs = model.inputs
    X = inputs["X"].as_explicit()
    weights = {k: [w.as_explicit() for w in inputs[k]] for k in ("W_Q", "W_K", "W_V")}
    W_O = inputs["W_O"].as_explicit()
    out = model.evaluate(X=X, W_O=W_O, **weights).output
    checks = []
    for perm in permutations(range(n)):
        P = _permutation_matrix(perm)
        permuted = model.evaluate(X=P * X, W_O=W_O, **weights).output
        diff = permuted - P * out
        ok = all(d == 0 or simplify(d) == 0 for d in diff)
        checks.append((f"P = {perm}: MHA(P X) - P MHA(X) is exactly 0 (symbolic X and weights)", ok))
    steps = (ProofStep("Rows of P X are the rows of X permuted, so S(P X) = P S(X) P^T"),
             ProofStep("A row-wise softmax commutes with permuting rows and (within a row) columns: "
                       "softmax(P S P^T) = P softmax(S) P^T"),
             ProofStep("Then A(PX) V(PX) = P A P^T P V = P A V, and the output projection acts on the right"))
    return Proof(f"MHA(P X) = P MHA(X) for every permutation P (no mask), n = {n}", steps,
                 all(ok for _, ok in checks), checks=tuple(checks))


def causal_breaks_equivariance() -> Proof:
    """With the causal mask, swapping two tokens does not permute the output: an exact counterexample."""
    model = MultiHeadAttention(n=2, d_model=1, h=1, causal=True)
    X = Matrix([[1], [0]])
    ones = {"W_Q": [[[1]]], "W_K": [[[1]]], "W_V": [[[1]]], "W_O": [[1]]}
    P = _permutation_matrix((1, 0))
    lhs = model.evaluate(X=P * X, **ones).output
    rhs = P * model.evaluate(X=X, **ones).output
    diff = (lhs - rhs).applyfunc(simplify)
    nonzero = [d for d in diff if d != 0]
    ok = bool(nonzero) and all(d.is_zero is False for d in nonzero)
    steps = (ProofStep("n = 2, d_model = d_k = 1, X = [1, 0]^T, all weights 1, causal mask, P swaps the tokens"),
             ProofStep(f"MHA(P X) = {list(lhs)} but P MHA(X) = {list(rhs)}: they differ exactly"),
             ProofStep("The mask fixes which positions a row may see; permuting tokens changes that set"))
    return Proof("With the causal mask, MHA(P X) = P MHA(X) fails (exact counterexample)", steps, ok,
                 kind="certified counterexample", checks=(("the difference is a nonzero exact number", ok),),
                 result={"MHA(PX)": lhs, "P MHA(X)": rhs})
