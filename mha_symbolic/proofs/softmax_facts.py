r"""Facts about the softmax: shift invariance, its Jacobian, and saturation without scaling.

Examples
========

>>> from mha_symbolic.proofs import softmax_shift_invariance, softmax_jacobian, softmax_saturation
>>> softmax_shift_invariance().verified, softmax_jacobian().verified, softmax_saturation().verified
(True, True, True)
"""

from __future__ import annotations

from sympy import Eq, IndexedBase, Matrix, Rational, Sum, Symbol, diag, exp, expand, limit, oo, simplify, symbols, zeros

from ..dims import dimension_symbol
from ..errors import require, require_int
from ..latex import latex
from ._proof import Proof, ProofStep

__all__ = ["softmax_shift_invariance", "softmax_jacobian", "softmax_saturation"]


def _softmax(s: list) -> list:
    total = sum(exp(x) for x in s)
    return [exp(x) / total for x in s]


def softmax_shift_invariance(max_n: int = 6) -> Proof:
    """``softmax(s + c 1) = softmax(s)``: for symbolic ``n`` by SymPy, and for ``n = 1..max_n`` explicitly."""
    require_int(max_n, "softmax_shift_invariance's max_n", 1, 12)
    n = dimension_symbol("n")
    c = Symbol("c", real=True)
    s = IndexedBase("s", real=True)
    i, k = symbols("i k", integer=True)
    shifted = exp(s[i] + c) / Sum(exp(s[k] + c), (k, 0, n - 1))
    plain = exp(s[i]) / Sum(exp(s[k]), (k, 0, n - 1))
    split = expand(shifted, power_exp=True)
    symbolic_ok = simplify(split) == plain
    explicit_ok = True
    for m in range(1, max_n + 1):
        xs = symbols(f"x0:{m}", real=True)
        explicit_ok &= all(simplify(a - b) == 0 for a, b in zip(_softmax([x + c for x in xs]), _softmax(list(xs)),
                                                               strict=True))
    steps = (
        ProofStep("Entry i of softmax(s + c 1)", Eq(Symbol("p_i"), shifted)),
        ProofStep("exp(s_k + c) = exp(c) exp(s_k): the common factor exp(c) leaves the sum", None,
                  latex(split)),
        ProofStep("It cancels: the same as softmax(s)", Eq(Symbol("p_i"), plain)),
    )
    checks = (("SymPy simplifies the shifted entry to the unshifted one, symbolic n", bool(symbolic_ok)),
              (f"explicit vectors, n = 1..{max_n}: every entry equal", bool(explicit_ok)))
    return Proof("softmax(s + c 1) = softmax(s) for every real c", steps, all(ok for _, ok in checks),
                 checks=checks)


def softmax_jacobian(sizes: tuple[int, ...] = (2, 3, 4)) -> Proof:
    """``d softmax(s) / d s = diag(p) - p p^T``, by differentiating the explicit softmax."""
    require(sizes, (tuple, list), "softmax_jacobian's sizes", "a tuple of vector lengths")
    for size in sizes:
        require_int(size, "softmax_jacobian's sizes", 1, 12)
    checks = []
    for m in sizes:
        xs = symbols(f"s0:{m}", real=True)
        p = Matrix(_softmax(list(xs)))
        J = p.jacobian(Matrix(xs))
        target = diag(*p) - p * p.T
        checks.append((f"n = {m}: jacobian(p, s) - (diag(p) - p p^T) simplifies to 0",
                       (J - target).applyfunc(simplify) == zeros(m, m)))
    steps = (ProofStep("Differentiate p_i = exp(s_i) / sum_k exp(s_k) with respect to s_j", None,
                       r"\frac{\partial p_i}{\partial s_j} = p_i(\delta_{ij} - p_j)"),
             ProofStep("In matrix form", None, r"J = \operatorname{diag}(p) - p p^{\top}"))
    return Proof("The Jacobian of softmax is diag(p) - p p^T", steps, all(ok for _, ok in checks),
                 checks=tuple(checks))


def softmax_saturation() -> Proof:
    """Scores ``t s`` with a unique maximum: as ``t -> oo``, ``p -> one-hot`` and the Jacobian ``-> 0``.

    Without the ``1/sqrt(d_k)`` factor the scores' standard deviation grows like
    ``sqrt(d_k)`` (see :func:`~mha_symbolic.proofs.sqrt_dk_scaling`), i.e. ``t`` grows with
    the width: the softmax saturates and its gradient vanishes.  Limits computed by SymPy.
    """
    t = Symbol("t", positive=True)
    a = Symbol("a", positive=True)
    scores = [a, Rational(0), -a]  # a unique maximum; the gap a > 0 is symbolic
    p = Matrix(_softmax([t * x for x in scores]))
    J = diag(*p) - p * p.T
    p_limit = p.applyfunc(lambda e: limit(e, t, oo))
    J_limit = J.applyfunc(lambda e: limit(e, t, oo))
    concrete = Matrix(_softmax([t * x for x in (2, 1, 0)])).applyfunc(lambda e: limit(e, t, oo))
    checks = (("symbolic gap a > 0: lim p = (1, 0, 0)", p_limit == Matrix([1, 0, 0])),
              ("lim J = 0 (every entry)", J_limit == zeros(3, 3)),
              ("scores (2, 1, 0): lim p = (1, 0, 0)", concrete == Matrix([1, 0, 0])))
    steps = (ProofStep("Scores t (a, 0, -a) with a > 0", None, r"p = %s" % latex(p)),
             ProofStep("As t grows, the softmax tends to the one-hot vector of the maximum", None,
                       r"\lim_{t \to \infty} p = %s" % latex(p_limit)),
             ProofStep("and its Jacobian diag(p) - p p^T to the zero matrix: no gradient flows", None,
                       r"\lim_{t \to \infty} J = %s" % latex(J_limit)),
             ProofStep("Unscaled scores have standard deviation sqrt(d_k) sigma^2: t grows with d_k; "
                       "dividing by sqrt(d_k) keeps t of order 1"))
    return Proof("Without scaling, large d_k saturates the softmax (one-hot, zero Jacobian)", steps,
                 all(ok for _, ok in checks), checks=checks, result={"limit_p": p_limit, "limit_J": J_limit})
