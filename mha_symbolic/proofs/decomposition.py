r"""The head decomposition (Elhage et al. 2021): multi-head attention is a sum over heads.

Explanation
===========

Split ``W_O`` into row blocks ``W_O^(i)`` (``d_v x d_model``).  Then

* ``Concat(head_1, ..., head_h) W_O = sum_i head_i W_O^(i)`` (block multiplication);
* ``S_i = Q_i K_i^T = X W_QK^i X^T`` with ``W_QK^i = W_Q^i (W_K^i)^T``;
* ``Output = sum_i A_i X W_OV^i`` with ``W_OV^i = W_V^i W_O^(i)``.

SymPy has no block matrices with a symbolic number of blocks, so the first identity is
verified by ``block_collapse`` for every ``h = 1..max_h`` with symbolic ``n``, ``d_v``,
``d_model``; the other two by SymPy's transpose-of-product and associativity rules for
symbolic shapes, and the whole chain against the engine's exact evaluation.

Examples
========

>>> from mha_symbolic.proofs import head_decomposition
>>> head_decomposition(max_h=3).verified
True
"""

from __future__ import annotations

from sympy import BlockMatrix, Eq, MatAdd, MatMul, MatrixSymbol, block_collapse, zeros

from ..attention import MultiHeadAttention
from ..dims import dimension_symbol
from ..errors import require, require_int
from ._proof import Proof, ProofStep, integer_instance

__all__ = ["head_decomposition"]


def _concat_identity(h: int) -> bool:
    n, dv, dm = (dimension_symbol(s) for s in ("n", "d_v", "d_model"))
    heads = [MatrixSymbol(f"head_{i}", n, dv) for i in range(1, h + 1)]
    blocks = [MatrixSymbol(f"W_O^({i})", dv, dm) for i in range(1, h + 1)]
    lhs = block_collapse(BlockMatrix([heads]) * BlockMatrix([[b] for b in blocks]))
    rhs = MatAdd(*[MatMul(a, b) for a, b in zip(heads, blocks, strict=True)]).doit()
    return lhs == rhs


def _engine_check(model: MultiHeadAttention, h: int, seed: int = 0) -> bool:
    """Exact evaluation of ``model``'s mathematics at ``n = 3``, ``d_k = 2``, ``h`` heads: Output equals
    sum_i head_i W_O^(i) and, in the projection convention, sum_i A_i X W_V^i W_O^(i), entry by entry."""
    n, dk = 3, 2
    dm = h * dk
    M = MultiHeadAttention(n=n, d_model=dm, h=h).replace_options(convention=model.convention, causal=model.causal,
                                                     scale=model.args[4])
    E = M.evaluate(**integer_instance(n, h, dk, seed, split=model.convention == "split"))
    by_heads, by_circuits = zeros(n, dm), zeros(n, dm)
    for i in range(h):
        W_O_i = E.inputs["W_O"][i * dk:(i + 1) * dk, :]
        by_heads += E[f"head_{i + 1}"] * W_O_i
        if model.convention == "projection":
            by_circuits += E[f"A_{i + 1}"] * E.inputs["X"] * E.inputs["W_V"][i] * W_O_i
    ok = (E.output - by_heads).expand() == zeros(n, dm)
    return ok and (model.convention == "split" or (E.output - by_circuits).expand() == zeros(n, dm))


def head_decomposition(model: MultiHeadAttention | None = None, max_h: int = 8, engine_up_to: int = 3) -> Proof:
    """The three identities above, verified for ``h = 1..max_h`` (block algebra) and by the engine
    evaluating ``model``'s mathematics (its convention, scale and mask) for ``h = 1..engine_up_to``."""
    from ..attention import MultiHeadAttention
    require(model, (MultiHeadAttention, type(None)), "head_decomposition's model", "a MultiHeadAttention or None")
    require_int(max_h, "head_decomposition's max_h", 1, 64)
    require_int(engine_up_to, "head_decomposition's engine_up_to", 0, 8)
    model = MultiHeadAttention() if model is None else model
    n, dm, dk, dv = (dimension_symbol(s) for s in ("n", "d_model", "d_k", "d_v"))
    X = MatrixSymbol("X", n, dm)
    WQ, WK = MatrixSymbol("W_Q^i", dm, dk), MatrixSymbol("W_K^i", dm, dk)
    WV, WOi = MatrixSymbol("W_V^i", dm, dv), MatrixSymbol("W_O^(i)", dv, dm)
    A = MatrixSymbol("A_i", n, n)
    logits = MatMul(MatMul(X, WQ), MatMul(X, WK).T).doit()
    circuit_ok = logits == MatMul(X, MatMul(WQ, WK.T), X.T).doit()
    ov_ok = MatMul(MatMul(A, MatMul(X, WV)), WOi).doit() == MatMul(A, X, MatMul(WV, WOi)).doit()
    checks = [(f"h = {h}: block_collapse(Concat W_O) == sum_i head_i W_O^(i) (symbolic n, d_v, d_model)",
               _concat_identity(h)) for h in range(1, max_h + 1)]
    checks.append(("S_i = (X W_Q^i)(X W_K^i)^T == X (W_Q^i W_K^i^T) X^T, symbolic shapes", bool(circuit_ok)))
    checks.append(("head_i W_O^(i) = A_i (X W_V^i) W_O^(i) == A_i X (W_V^i W_O^(i)), symbolic shapes", bool(ov_ok)))
    checks += [(f"engine, h = {h}: Output == sum_i head_i W_O^(i) (== sum_i A_i X W_OV^i) exactly",
                _engine_check(model, h))
               for h in range(1, engine_up_to + 1)]
    steps = (
        ProofStep("Split W_O into h row blocks W_O^(i) of d_v rows", None,
                  r"W_O = \begin{bmatrix} W_O^{(1)} \\ \vdots \\ W_O^{(h)} \end{bmatrix}"),
        ProofStep("Block multiplication of one block row by one block column", None,
                  r"\mathrm{Concat}(\mathrm{head}_1, \dots, \mathrm{head}_h) W_O = "
                  r"\sum_{i=1}^{h} \mathrm{head}_i W_O^{(i)}"),
        ProofStep("Transpose of a product reverses it", Eq(MatMul(MatMul(X, WQ), MatMul(X, WK).T), logits,
                                                            evaluate=False)),
        ProofStep("So the logits are a bilinear form in X", None, r"S_i = X W_{QK}^{i} X^{\top},\; "
                  r"W_{QK}^{i} = W_Q^{i} {W_K^{i}}^{\top}"),
        ProofStep("Associativity with head_i = A_i X W_V^i", None,
                  r"\mathrm{Output} = \sum_{i=1}^{h} A_i X W_{OV}^{i},\; W_{OV}^{i} = W_V^{i} W_O^{(i)}"),
    )
    return Proof("Concat(head_1..head_h) W_O = sum_i head_i W_O^(i); S_i = X W_QK^i X^T; "
                 "Output = sum_i A_i X W_OV^i", steps, all(ok for _, ok in checks), checks=tuple(checks))
