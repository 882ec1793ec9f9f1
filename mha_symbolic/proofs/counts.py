r"""Parameter and FLOP counts, as sums over heads, and what depends on ``h``.

Explanation
===========

Each count is written as ``Sum(per-head count, (i, 1, h))`` and evaluated by SymPy, then
simplified with ``d_k = d_v = d_model / h``.  FLOPs count a multiply-add as 2 (a product of
an ``m x k`` and a ``k x p`` matrix costs ``2 m k p``); the softmax costs ``3 n^2`` per head
(exponentials, row sums, divisions) and the scaling ``n^2`` per head.

Results: parameters ``4 d_model^2`` (``+ 4 d_model`` biases) and all matrix-product FLOPs
(``8 n d_model^2 + 4 n^2 d_model``) do not depend on ``h``, and each head does ``1/h`` of
them -- seed 001's "computational cost distributed across heads" is exact for these.  The
element-wise work (scaling and softmax, ``4 h n^2``) grows with ``h``: that part is not
distributed.

Examples
========

>>> from mha_symbolic.proofs import parameter_and_flop_counts
>>> c = parameter_and_flop_counts()
>>> c.result["parameters"], c.result["matmul_flops"]
(4*d_model**2, 8*d_model**2*n + 4*d_model*n**2)
"""

from __future__ import annotations

from sympy import Eq, Sum, Symbol, expand, simplify

from ..dims import Dims
from ..latex import latex
from ._proof import Proof, ProofStep

__all__ = ["parameter_and_flop_counts"]


def parameter_and_flop_counts() -> Proof:
    D = Dims()
    n, dm, h, dk, dv = D.args[:5]
    i = Symbol("i", integer=True, positive=True)
    tie = {dk: dm / h, dv: dm / h}

    def total(per_head: object) -> object:
        return simplify(Sum(per_head, (i, 1, h)).doit().subs(tie))

    weights = total(dm * dk + dm * dk + dm * dv) + simplify((h * dv * dm).subs(tie))
    biases = total(dk + dk + dv) + dm
    stages = {
        "Q, K, V projections": total(3 * 2 * n * dm * dk),
        "scores Q_i K_i^T": total(2 * n * n * dk),
        "scaling by 1/sqrt(d_k)": total(n * n),
        "softmax (exp, sum, divide)": total(3 * n * n),
        "A_i V_i": total(2 * n * n * dv),
        "output projection Concat W_O": simplify((2 * n * h * dv * dm).subs(tie)),
    }
    matmul = expand(sum(v for k, v in stages.items() if k not in ("scaling by 1/sqrt(d_k)",
                                                                 "softmax (exp, sum, divide)")))
    elementwise = expand(stages["scaling by 1/sqrt(d_k)"] + stages["softmax (exp, sum, divide)"])
    per_head = {"Q, K, V projections": 3 * 2 * n * dm * dk, "scores Q_i K_i^T": 2 * n * n * dk,
                "A_i V_i": 2 * n * n * dv}
    shares_ok = all(simplify(expr.subs(tie) - stages[name] / h) == 0 for name, expr in per_head.items())
    checks = (
        ("parameters = 4 d_model^2, independent of h", simplify(weights - 4 * dm**2) == 0),
        ("biases = 4 d_model", simplify(biases - 4 * dm) == 0),
        ("matrix-product FLOPs do not contain h", h not in matmul.free_symbols),
        ("element-wise FLOPs grow with h (4 h n^2)", simplify(elementwise - 4 * h * n**2) == 0),
        ("each head does 1/h of the projection, score and A V products", shares_ok),
    )
    steps = tuple([ProofStep("Per head, summed over i = 1..h, then d_k = d_v = d_model / h:")] +
                  [ProofStep(name, Eq(Symbol("FLOPs"), value), r"\text{%s} = %s" % (name, latex(value)))
                   for name, value in stages.items()] +
                  [ProofStep("Weights W_Q^i, W_K^i, W_V^i (d_model x d_k each) and W_O (h d_v x d_model)", weights,
                             r"\#\text{weights} = %s" % latex(weights)),
                   ProofStep("Biases", biases, r"\#\text{biases} = %s" % latex(biases))])
    return Proof("Parameters 4 d_model^2 (+ 4 d_model); matrix-product FLOPs independent of h; "
                 "element-wise FLOPs 4 h n^2", steps, all(ok for _, ok in checks), kind="exact computation",
                 checks=checks, result={"parameters": weights, "biases": biases, "stages": stages,
                                        "matmul_flops": matmul, "elementwise_flops": elementwise})
