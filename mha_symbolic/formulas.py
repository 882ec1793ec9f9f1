r"""The tutorials' formulas as objects: ``Attention``, ``MultiHead`` and equations.

Explanation
===========

``Attention(Q, K, V, d_k)`` prints as ``\mathrm{Attention}(Q, K, V)`` and its
``doit()`` is the scaled dot-product ``softmax(Q K^T / sqrt(d_k)) V``.
``MultiHead(Q, K, V)`` is the name of the whole map.  :func:`standard_formulas`
returns the four formulas a tutorial writes, built from a model, so ``d_k`` stays a
named dimension whose definition is shown once.

Examples
========

>>> from mha_symbolic import MultiHeadAttention
>>> from mha_symbolic.formulas import standard_formulas
>>> from mha_symbolic.latex import latex
>>> for f in standard_formulas(MultiHeadAttention()):
...     print(latex(f))
d_k = \frac{d_{model}}{h}
\mathrm{Attention}(Q, K, V) = \mathrm{softmax}\left(\frac{Q K^{\top}}{\sqrt{d_k}}\right) V
\mathrm{head}_i = \mathrm{Attention}(Q W_i^{Q}, K W_i^{K}, V W_i^{V})
\mathrm{MultiHead}(Q, K, V) = \mathrm{Concat}(\mathrm{head}_1, \dots, \mathrm{head}_h) W^{O}
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from sympy import Basic, MatMul, MatrixSymbol
from sympy.matrices.expressions import MatrixExpr

from ._convert import as_sympy
from .concat import Concat, ConcatHeads
from .heads import HeadMatrix
from .latex import LatexReprMixin
from .scaling import ScaledScores
from .softmax import Softmax

if TYPE_CHECKING:
    from .attention import MultiHeadAttention

__all__ = ["Attention", "MultiHead", "Equation", "standard_formulas", "attention_rhs"]


class Equation(LatexReprMixin, Basic):
    """``lhs = rhs`` for any two expressions (SymPy's ``Eq`` would try to decide matrix equality)."""

    def __new__(cls, lhs: Any, rhs: Any) -> Equation:
        return Basic.__new__(cls, as_sympy(lhs), as_sympy(rhs))

    lhs = property(lambda self: self.args[0])
    rhs = property(lambda self: self.args[1])

    def _latex(self, printer: Any) -> str:
        return f"{printer._print(self.lhs)} = {printer._print(self.rhs)}"

    def _sympystr(self, printer: Any) -> str:
        return f"{printer._print(self.lhs)} = {printer._print(self.rhs)}"


class Attention(LatexReprMixin, MatrixExpr):
    """Scaled dot-product attention ``softmax(Q K^T / sqrt(d)) V``, unevaluated."""

    def __new__(cls, Q: Any, K: Any, V: Any, d: Any) -> Attention:
        return Basic.__new__(cls, as_sympy(Q), as_sympy(K), as_sympy(V), as_sympy(d))

    Q = property(lambda self: self.args[0])
    K = property(lambda self: self.args[1])
    V = property(lambda self: self.args[2])
    d = property(lambda self: self.args[3])

    @property
    def shape(self) -> tuple[Any, Any]:
        return (self.Q.shape[0], self.V.shape[1])

    def doit(self, **hints: Any) -> Any:
        return MatMul(Softmax(ScaledScores(MatMul(self.Q, self.K.T), self.d)), self.V).doit(**hints)

    def _latex(self, printer: Any) -> str:
        return r"\mathrm{Attention}(%s)" % ", ".join(printer._print(a) for a in self.args[:3])

    def _sympystr(self, printer: Any) -> str:
        return "Attention(%s)" % ", ".join(printer._print(a) for a in self.args[:3])


class MultiHead(LatexReprMixin, MatrixExpr):
    """The name ``MultiHead(Q, K, V)`` of the whole multi-head map (shape of ``Q``)."""

    def __new__(cls, Q: Any, K: Any, V: Any) -> MultiHead:
        return Basic.__new__(cls, as_sympy(Q), as_sympy(K), as_sympy(V))

    @property
    def shape(self) -> tuple[Any, Any]:
        return self.args[0].shape

    def _latex(self, printer: Any) -> str:
        return r"\mathrm{MultiHead}(%s)" % ", ".join(printer._print(a) for a in self.args)

    def _sympystr(self, printer: Any) -> str:
        return "MultiHead(%s)" % ", ".join(printer._print(a) for a in self.args)


def attention_rhs(model: MultiHeadAttention, Q: Any, K: Any, V: Any) -> Any:
    """The model's own head, from its steps ``head = A V``, ``A = softmax(S')``, ``S' = scale S``,
    ``S = Q K^T``, written with the given ``Q``, ``K``, ``V`` in place of the head's ``Q_i, K_i, V_i``.

    >>> from sympy import MatrixSymbol
    >>> from mha_symbolic import MultiHeadAttention
    >>> Q, K, V = (MatrixSymbol(c, 3, 4) for c in "QKV")
    >>> attention_rhs(MultiHeadAttention(n=3, d_model=4, h=2), Q, K, V)
    softmax(Q*K.T / sqrt(2))*V
    >>> attention_rhs(MultiHeadAttention(n=3, d_model=4, h=2, scale=1), Q, K, V)
    softmax(Q*K.T)*V
    """
    index = model.head_indices[0]
    steps = {s.name: s for s in model.steps.values()}
    name = (lambda base: f"{base}_{index}") if model.dims.h.is_Integer else (lambda base: f"{base}_i")
    inner = {steps[name(b)].symbol: steps[name(b)].definition for b in ("S", "S'", "A")}
    rhs = steps[name("head")].definition
    for _ in range(len(inner)):
        rhs = rhs.xreplace(inner)
    # the head's own Q_i and the K_j, V_j it reads (j = i, or its key/value head with grouping)
    qkv = {steps[name("Q")].symbol: Q}
    qkv.update({a: {"K": K, "V": V}[a.base] for a in rhs.atoms(HeadMatrix) if a.base in ("K", "V")})
    return rhs.xreplace(qkv)


def standard_formulas(model: MultiHeadAttention) -> list[Equation]:
    """The formulas a tutorial writes, for ``model``'s dimensions and head index.

    ``Q``, ``K``, ``V`` are the attention inputs (all equal to ``X`` in self-attention,
    ``n x d_model``); per head ``head_i = Attention(Q W_i^Q, K W_i^K, V W_i^V)``, or in the
    split convention ``head_i = Attention(X_i W_i^Q, X_i W_i^K, X_i W_i^V)``.
    """
    D = model.dims
    Q = MatrixSymbol("Q", D.n, D.d_model)
    K, V = (MatrixSymbol(s, model.n_kv, D.d_model) for s in "KV")  # n_kv rows in cross-attention
    from .attention import HEAD_INDEX

    index = model.head_indices[0]  # i, or 1 for an integer h
    kv = model.kv_index(index)  # the key/value head it reads (grouped-query attention)
    formulas = [Equation(r.lhs, r.rhs) for r in D.relations if r.lhs == D.d_k]
    formulas.append(Equation(Attention(Q, K, V, D.d_k), attention_rhs(model, Q, K, V)))
    head = HeadMatrix("head", D.n, D.d_v, HEAD_INDEX, "sub")
    if model.convention == "split":  # head i reads its own column block X_i of X, for Q, K and V alike
        Qi = Ki = Vi = model.steps[f"X_head{index}" if D.h.is_Integer else "X_head_i"].symbol
    else:
        Qi, Ki, Vi = Q, K, V
    formulas.append(Equation(head.subs(HEAD_INDEX, index),
                             Attention(MatMul(Qi, model.W("Q", index)), MatMul(Ki, model.W("K", kv)),
                                       MatMul(Vi, model.W("V", kv)), D.d_k)))
    concat: Any = ConcatHeads(head, HEAD_INDEX, D.h)
    if D.h.is_Integer and D.h <= 3:  # written out in full, as it prints
        concat = Concat(*(concat.head(k) for k in range(1, int(D.h) + 1)))
    formulas.append(Equation(MultiHead(Q, K, V), MatMul(concat, model.W_O)))
    return formulas
