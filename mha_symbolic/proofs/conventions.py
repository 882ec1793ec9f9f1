r"""The "split" and "projection" conventions of multi-head attention agree.

Explanation
===========

In the split convention head ``i`` reads the column block
``X_i = X[:, (i-1) d_k : i d_k]`` and multiplies it by a ``d_k x d_k`` weight ``W``.
In the projection convention it multiplies all of ``X`` by a ``d_model x d_k``
weight.  With the block-sparse weight ``P_i = [0; W; 0]`` (``W`` placed in rows
``(i-1) d_k .. i d_k``, zeros elsewhere)::

    X_i W = X P_i

so ``Q_i``, ``K_i``, ``V_i`` -- and hence every later step -- coincide.

Examples
========

>>> from mha_symbolic.proofs import split_equals_projection
>>> proof = split_equals_projection()
>>> proof.verified
True
>>> embed_split_weight([[1, 2], [3, 4]], 2, 2)
Matrix([
[0, 0],
[0, 0],
[1, 2],
[3, 4]])
"""

from __future__ import annotations

from typing import Any

from sympy import BlockMatrix, Eq, ImmutableMatrix, MatrixSymbol, ZeroMatrix, block_collapse, symbols, zeros

from ..dims import dimension_symbol
from ..errors import InputError, require_int
from ..values import to_matrix
from ._proof import Proof, ProofStep

__all__ = ["split_equals_projection", "embed_split_weight"]


def embed_split_weight(W: Any, index: int, h: int) -> ImmutableMatrix:
    """The projection-convention weight of head ``index`` (1-based): ``W`` in row block ``index``."""
    Wm = to_matrix(W, "W")
    if not 1 <= index <= h:
        raise InputError(f"head index {index} is outside 1..{h}")
    d = Wm.rows
    P = zeros(h * d, Wm.cols)
    P[(index - 1) * d: index * d, :] = Wm
    return ImmutableMatrix(P)


def split_equals_projection(max_h: int = 4) -> Proof:
    """Prove ``X[:, (i-1) d_k : i d_k] W = X P_i`` (block-sparse ``P_i``), for every head.

    Two independent verifications:

    1. Symbolic ``n``, ``d_k``, ``h`` and head index ``i``: write
       ``X = [X_<i | X_i | X_>i]`` with blocks of widths ``(i-1) d_k``, ``d_k``,
       ``(h-i) d_k`` and ``P_i = [0; W; 0]``; SymPy's ``block_collapse`` reduces
       ``X P_i`` to ``X_i W``.
    2. Every ``h`` in ``1..max_h`` and every head, with explicit symbolic entries
       (``n = 2``, ``d_k = 2``): ``X[:, block] W - X P_i`` expands to the zero matrix.
    3. The whole engine: the split model and the projection model with weights
       ``P_i`` give the same matrix at every step (symbolic entries, n=2, d_model=4, h=2).
    """
    require_int(max_h, "split_equals_projection's max_h", 1, 8)
    n, dk, h, i = (dimension_symbol(s) for s in ("n", "d_k", "h", "i"))
    X_lo = MatrixSymbol("X_{<i}", n, (i - 1) * dk)
    X_i = MatrixSymbol("X_i", n, dk)
    X_hi = MatrixSymbol("X_{>i}", n, (h - i) * dk)
    W = MatrixSymbol("W", dk, dk)
    X = BlockMatrix([[X_lo, X_i, X_hi]])
    P = BlockMatrix([[ZeroMatrix((i - 1) * dk, dk)], [W], [ZeroMatrix((h - i) * dk, dk)]])
    collapsed = block_collapse(X * P)
    symbolic_ok = collapsed == X_i * W

    explicit_ok = True
    for hh in range(1, max_h + 1):
        d = 2
        Xe = ImmutableMatrix(2, hh * d, symbols(f"x0:{2 * hh * d}"))
        We = ImmutableMatrix(d, d, symbols("w0:4"))
        for k in range(1, hh + 1):
            diff = Xe[:, (k - 1) * d: k * d] * We - Xe * embed_split_weight(We, k, hh)
            explicit_ok &= diff.expand() == zeros(2, d)

    model_ok = _whole_model_agrees()

    steps = (
        ProofStep("Write X by column blocks of widths (i-1)d_k, d_k, (h-i)d_k",
                  Eq(MatrixSymbol("X", n, h * dk), X, evaluate=False)),
        ProofStep("Place W in row block i of a (h d_k) x d_k zero matrix",
                  Eq(MatrixSymbol("P_i", h * dk, dk), P, evaluate=False)),
        ProofStep("Block multiplication: the zero blocks vanish", Eq(X * P, collapsed, evaluate=False)),
        ProofStep("So Q_i, K_i, V_i agree in both conventions, and every later step is a function of them"),
    )
    checks = (
        ("block_collapse(X P_i) == X_i W for symbolic n, d_k, h, i", bool(symbolic_ok)),
        (f"explicit entries, h = 1..{max_h}, every head: X_i W - X P_i expands to 0", bool(explicit_ok)),
        ("whole model, n = 2, d_model = 4, h = 2, symbolic entries: every step of the split model equals "
         "the projection model with P_i", model_ok),
    )
    return Proof(
        statement="X[:, (i-1)d_k : i d_k] W^i = X P_i with P_i = [0; W^i; 0] (split == projection)",
        steps=steps,
        verified=all(ok for _, ok in checks),
        checks=checks,
    )


def _whole_model_agrees() -> bool:
    from ..attention import MultiHeadAttention

    split = MultiHeadAttention(n=2, d_model=4, h=2, convention="split")
    proj = MultiHeadAttention(n=2, d_model=4, h=2, convention="projection")
    inputs = split.inputs
    X = inputs["X"].as_explicit()
    W = {k: [m.as_explicit() for m in inputs[k]] for k in ("W_Q", "W_K", "W_V")}
    W_O = inputs["W_O"].as_explicit()
    P = {k: [embed_split_weight(m, i, 2) for i, m in enumerate(v, 1)] for k, v in W.items()}
    a = split.evaluate(X=X, W_Q=W["W_Q"], W_K=W["W_K"], W_V=W["W_V"], W_O=W_O)
    b = proj.evaluate(X=X, W_Q=P["W_Q"], W_K=P["W_K"], W_V=P["W_V"], W_O=W_O)
    names = [s for s in b if s in a]
    return len(names) == len(b) and all((a[s] - b[s]).expand() == zeros(*a[s].shape) for s in names)
