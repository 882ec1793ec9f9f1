r"""Two heads are not one wide head: a rigorous witness (seed 002's "not equivalent").

Explanation
===========

Take ``d_model = 2``, two heads of width ``d_k = 1``, ``W_OV^1 = e_1 e_1^T``,
``W_OV^2 = e_2 e_2^T`` (head 1 writes output coordinate 1, head 2 coordinate 2) and attention
``W_QK^1 = e_1 e_1^T``, ``W_QK^2 = e_2 e_2^T``.  Suppose one head -- of *any* width -- computed
the same map ``f`` for every two-token input:

1. For ``X = [v; v]`` (equal tokens) every row-stochastic ``A`` gives ``A X = X``, so the
   single head outputs ``v^T M`` (``M = W_V W_O``) and the two heads ``v^T (W_OV^1 + W_OV^2)``.
   Equality for all ``v`` forces ``M = W_OV^1 + W_OV^2 = I``.
2. At ``X = I`` the single head outputs ``A(I) M = A(I)``, whose rows sum to 1.  The two
   heads output ``[A_1 e_1, A_2 e_2]`` with first row ``(e/(1+e), 1/2)``, summing to
   ``e/(1+e) + 1/2 != 1`` (exactly: it would need ``e = 1``).

So no single head realises ``f``.  The numbers are exact; the inequality is decided exactly.

Examples
========

>>> from mha_symbolic.proofs import two_heads_not_one
>>> p = two_heads_not_one()
>>> p.verified, p.kind
(True, 'proof')
"""

from __future__ import annotations

from sympy import Matrix, simplify

from ..attention import MultiHeadAttention
from ..errors import InputError, require
from ._proof import Proof, ProofStep

__all__ = ["two_heads_not_one"]


def two_heads_not_one(model: MultiHeadAttention | None = None) -> Proof:
    """The argument above, with the numbers computed by ``model`` (``d_model = 2``, ``h = 2``, projection)."""
    from ..attention import MultiHeadAttention

    require(model, (MultiHeadAttention, type(None)), "two_heads_not_one's model", "a MultiHeadAttention or None")
    model = MultiHeadAttention(n=2, d_model=2, h=2) if model is None else model.bind(
        **{k: v for k, v in (("n", 2), ("d_model", 2), ("h", 2)) if not model.dims.as_dict()[k].is_Integer})
    D = model.dims
    if (int(D.n), int(D.d_model), int(D.h), int(D.d_v)) != (2, 2, 2, 1) or model.convention != "projection":
        raise InputError(f"the witness needs n = 2, d_model = 2, h = 2 heads of width 1 (projection convention); "
                         f"got {model}")
    e1, e2 = [[1], [0]], [[0], [1]]
    weights = {"W_Q": [e1, e2], "W_K": [e1, e2], "W_V": [e1, e2], "W_O": [[1, 0], [0, 1]]}
    at_identity = model.evaluate(X=[[1, 0], [0, 1]], **weights)
    row_sum = simplify(sum(at_identity.output.row(0)))
    equal_tokens_ok = True
    for v in ([1, 0], [0, 1], [2, -3]):
        out = model.evaluate(X=[v, v], **weights).output
        equal_tokens_ok &= out == Matrix([v, v])  # v^T (W_OV^1 + W_OV^2) = v^T
    checks = (
        ("equal tokens: the two-head output is v^T (W_OV^1 + W_OV^2) = v^T, forcing M = I for one head",
         bool(equal_tokens_ok)),
        (f"at X = I the first output row sums to {row_sum}, exactly", True),
        (f"{row_sum} != 1, decided exactly", simplify(row_sum - 1).is_zero is False),
    )
    steps = (
        ProofStep("Two heads of width 1 on d_model = 2: W_QK^1 = W_OV^1 = e_1 e_1^T, W_QK^2 = W_OV^2 = e_2 e_2^T"),
        ProofStep("Any single head (any width) on X = [v; v]: A X = X, so its output is v^T W_V W_O; matching "
                  "the two heads for all v forces W_V W_O = I"),
        ProofStep("Then at X = I a single head outputs A(I), a row-stochastic matrix: its rows sum to 1"),
        ProofStep("The two heads output rows summing to e/(1+e) + 1/2 != 1 (computed exactly): contradiction",
                  None, r"\frac{e}{1 + e} + \frac{1}{2} \ne 1"),
        ProofStep("So this 2-head map is realised by no single head of width 2 d_k (nor of any width)"),
    )
    return Proof("Some 2-head map is not realised by any single head of width 2 d_k, for all inputs", steps,
                 all(ok for _, ok in checks), checks=checks,
                 result={"first_row": list(at_identity.output.row(0)), "row_sum": row_sum})
