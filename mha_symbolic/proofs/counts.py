r"""Parameter and FLOP counts, read off the model's own steps, and what depends on ``h``.

Explanation
===========

:func:`step_flops` walks each step's definition: a product of an ``m x k`` and a ``k x p``
matrix costs ``2 m k p`` (a multiply-add is 2), a scalar times a matrix one multiplication
per entry, a sum of ``t`` matrices ``(t - 1)`` additions per entry, the softmax one
exponential and one division per (unmasked) entry and ``c - 1`` additions per row of ``c``
(unmasked) entries; slices, transposes, concatenation and the broadcast ``1 b`` cost
nothing.  A model with a symbolic ``h`` has one set of steps for a general head ``i``:
those are counted ``h`` times.  :func:`parameter_count` adds up the entries of the model's
weights (and biases).  Nothing here is typed beside the model: change a step and the counts
change.

:func:`parameter_and_flop_counts` turns the counts into a :class:`Proof`: with
``d_k = d_v = d_model / h``, parameters ``4 d_model^2`` and matrix-product FLOPs
``8 n d_model^2 + 4 n^2 d_model`` do not depend on ``h`` (each head does ``1/h`` of them),
but the element-wise work (scaling and softmax) grows with ``h``.

Examples
========

>>> from mha_symbolic import MultiHeadAttention
>>> from mha_symbolic.proofs import parameter_and_flop_counts
>>> from mha_symbolic.proofs.counts import step_flops
>>> c = parameter_and_flop_counts()
>>> c.result["parameters"], c.result["matmul_flops"]
(4*d_model**2, 8*d_model**2*n + 4*d_model*n**2)
>>> c.result["elementwise_flops"]
4*h*n**2 - h*n
>>> step_flops(MultiHeadAttention(n=3, d_model=4, h=2))["S_1"]
36
"""

from __future__ import annotations

from typing import Any

from sympy import Add, Eq, Integer, MatAdd, MatMul, Symbol, expand, simplify
from sympy.matrices.expressions import MatrixSymbol, Transpose
from sympy.matrices.expressions.slice import MatrixSlice
from sympy.matrices.expressions.special import OneMatrix

from ..attention import MultiHeadAttention
from ..concat import Concat, ConcatHeads
from ..errors import InputError, require
from ..heads import HeadMatrix
from ..latex import latex, prose_latex
from ..scaling import ScaledScores
from ..softmax import Softmax
from ._proof import Proof, ProofStep

__all__ = ["parameter_and_flop_counts", "step_flops", "parameter_count", "expression_flops"]

MATMUL, ELEMENTWISE = "matmul", "elementwise"


def _entries(shape: tuple[Any, Any]) -> Any:
    return shape[0] * shape[1]


def expression_flops(e: Any) -> dict[str, Any]:
    """FLOPs of evaluating ``e`` from its matrix symbols: ``{"matmul": ..., "elementwise": ...}``."""
    cost = {MATMUL: Integer(0), ELEMENTWISE: Integer(0)}

    def add(kind: str, amount: Any) -> None:
        cost[kind] += amount

    def walk(x: Any) -> None:
        if isinstance(x, (MatrixSymbol, OneMatrix)):
            return
        if isinstance(x, (Transpose, MatrixSlice)):
            walk(x.args[0])
            return
        if isinstance(x, MatMul):
            coeff, factors = x.as_coeff_matrices()
            for f in factors:
                walk(f)
            if len(factors) == 2 and isinstance(factors[0], OneMatrix):
                pass  # 1 b: the row b broadcast over the tokens, no arithmetic
            else:
                rows, inner = factors[0].shape
                for f in factors[1:]:
                    add(MATMUL, 2 * rows * inner * f.shape[1])
                    inner = f.shape[1]
            if coeff != 1:
                add(ELEMENTWISE, _entries(x.shape))
            return
        if isinstance(x, ScaledScores):
            walk(x.scores)
            add(ELEMENTWISE, _entries(x.shape))
            return
        if isinstance(x, Softmax):
            walk(x.arg)
            rows, cols = x.shape
            kept = rows * (rows + 1) / 2 if x.causal else rows * cols  # causal: row i keeps i + 1 entries
            add(ELEMENTWISE, 2 * kept + (kept - rows))  # exp and divide per entry, (c - 1) additions per row
            return
        if isinstance(x, MatAdd):
            for t in x.args:
                walk(t)
            add(ELEMENTWISE, (len(x.args) - 1) * _entries(x.shape))
            return
        if isinstance(x, (Concat, ConcatHeads)):
            for b in x.args:
                if getattr(b, "is_Matrix", False):
                    walk(b)
            return
        raise InputError(f"cannot count the FLOPs of {type(x).__name__} {x}")

    walk(e)
    return {k: expand(v) for k, v in cost.items()}


def _copies(model: MultiHeadAttention, symbol: Any) -> Any:
    """How many heads a step or weight stands for: ``h`` for a general query head ``i``, ``g`` for a general
    key/value head ``j``, else 1."""
    return model.multiplicity(symbol.index) if isinstance(symbol, HeadMatrix) else 1


def step_flops(model: MultiHeadAttention, kind: str | None = None) -> dict[str, Any]:
    """FLOPs of every step from its definition; a general head ``i``'s steps count ``h`` times (a general
    key/value head ``j``'s, ``g`` times).

    ``kind`` keeps only ``"matmul"`` or ``"elementwise"`` work (both by default).
    """
    if kind not in (None, MATMUL, ELEMENTWISE):
        raise InputError(f"kind must be 'matmul', 'elementwise' or None, got {kind!r}")
    out: dict[str, Any] = {}
    for name, step in model.steps.items():
        cost = expression_flops(step.definition)
        value = Add(*cost.values()) if kind is None else cost[kind]
        out[name] = expand(_copies(model, step.symbol) * value)
    return out


def parameter_count(model: MultiHeadAttention) -> Any:
    """The number of weights (and biases) in ``model.inputs`` (a general head ``i`` counts ``h`` times)."""
    total = Integer(0)
    for key, value in model.inputs.items():
        if key in ("X", "Y", "m", "M"):  # the inputs and the mask are data, not parameters
            continue
        for sym in value if isinstance(value, list) else [value]:
            size = _entries(sym.shape)
            total += _copies(model, sym) * size
    return expand(total)


def kv_cache_per_token(model: MultiHeadAttention) -> Any:
    """Numbers a decoder caches per token and layer: one row of every key and value step ``K_j``, ``V_j`` (a
    general head counts ``h`` times) -- ``2 h d_k`` for multi-head, ``2 g d_k`` with ``g`` key/value heads."""
    total = Integer(0)
    for name, step in model.steps.items():
        if name.split("_")[0] in ("K", "V"):
            total += _copies(model, step.symbol) * step.shape[1]
    return expand(total)


def parameter_and_flop_counts(model: MultiHeadAttention | None = None) -> Proof:
    """Counts of ``model`` (default: symbolic sizes) and what depends on ``h`` (see the module docstring)."""
    from ..attention import MultiHeadAttention

    require(model, (MultiHeadAttention, type(None)), "parameter_and_flop_counts's model",
            "a MultiHeadAttention or None")
    model = MultiHeadAttention() if model is None else model
    D = model.dims
    tie = D.definitions

    def closed(x: Any) -> Any:
        return expand(simplify(x.subs(tie)))

    weights = closed(parameter_count(model.replace_options(bias=False)))
    biases = closed(parameter_count(model) - parameter_count(model.replace_options(bias=False)))
    matmul = closed(Add(*step_flops(model, MATMUL).values()))
    elementwise = closed(Add(*step_flops(model, ELEMENTWISE).values()))
    h = D.h
    per_step = {name: closed(v) for name, v in step_flops(model).items()}
    total = closed(Add(*per_step.values()))
    checks = (("the steps' FLOPs add up to the matrix-product plus element-wise totals",
               simplify(total - matmul - elementwise) == 0),)
    depends = {"parameters": h in weights.free_symbols, "matmul_flops": h in matmul.free_symbols,
               "elementwise_flops": h in elementwise.free_symbols}
    steps = tuple([ProofStep("FLOPs of each step, read off its definition (a general head i counts h times), "
                             "then d_k = d_v = d_model / h:")] +
                  [ProofStep(name, Eq(Symbol("FLOPs"), value), r"%s: %s" % (prose_latex(name), latex(value)))
                   for name, value in per_step.items()] +
                  [ProofStep("Weights: the entries of the model's weight matrices", weights,
                             r"\#\text{weights} = %s" % latex(weights)),
                   ProofStep("Biases", biases, r"\#\text{biases} = %s" % latex(biases))])
    return Proof("Parameters and FLOPs of every step, counted from the model's definitions", steps,
                 all(ok for _, ok in checks), kind="exact computation", checks=checks,
                 result={"parameters": weights, "biases": biases, "stages": per_step, "matmul_flops": matmul,
                         "elementwise_flops": elementwise, "total_flops": total,
                         "kv_cache_per_token": closed(kv_cache_per_token(model)), "depends_on_h": depends})
