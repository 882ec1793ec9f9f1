r"""Why ``1/sqrt(d_k)``: the variance of a dot product of independent components.

Explanation
===========

Vaswani et al. (2017), footnote 4: if ``q, k`` in ``R^{d_k}`` have independent components
with mean 0 and variance ``sigma^2``, then ``E[q.k] = 0``, ``Var(q.k) = d_k sigma^4`` and
``Var(q.k / sqrt(d_k)) = sigma^4`` (1 for ``sigma = 1``).  The per-term moments are computed
with ``sympy.stats`` (for a normal and, to show they depend only on the moments, a uniform
distribution with the same variance); the sum over a symbolic ``d_k`` uses the independence
lemma (variances of independent terms add); a full ``sympy.stats`` computation checks
``d_k = 1..6``; a Monte Carlo estimate is reported as evidence only.

Examples
========

>>> from mha_symbolic.proofs import sqrt_dk_scaling
>>> p = sqrt_dk_scaling(full_check_up_to=2, monte_carlo_samples=0)
>>> p.verified, p.result["variance"], p.result["scaled_variance"]
(True, d_k*sigma**4, sigma**4)
"""

from __future__ import annotations

from typing import Any

import numpy as np
from sympy import Eq, Rational, Symbol, expand, simplify, sqrt
from sympy.stats import E as expectation
from sympy.stats import Expectation, Normal, Uniform
from sympy.stats import variance as stats_variance

from ..dims import dimension_symbol
from ..errors import require_int
from ..latex import latex
from ._proof import Proof, ProofStep

__all__ = ["sqrt_dk_scaling", "monte_carlo_variance"]


def monte_carlo_variance(d_k: int, samples: int = 200_000, seed: int = 0) -> tuple[float, float]:
    """Sample variances of ``q.k`` and ``q.k / sqrt(d_k)`` for standard normal components (evidence)."""
    require_int(d_k, "monte_carlo_variance's d_k", 1, 1 << 16)
    require_int(samples, "monte_carlo_variance's samples", 1, 10**7)
    require_int(seed, "monte_carlo_variance's seed", 0)
    rng = np.random.default_rng(seed)
    q = rng.standard_normal((samples, d_k))
    k = rng.standard_normal((samples, d_k))
    dots = (q * k).sum(axis=1)
    return float(dots.var()), float((dots / np.sqrt(d_k)).var())


def sqrt_dk_scaling(full_check_up_to: int = 6, monte_carlo_samples: int = 200_000) -> Proof:
    """The scaling argument as a :class:`Proof` (``result`` holds the closed forms)."""
    require_int(full_check_up_to, "sqrt_dk_scaling's full_check_up_to", 1, 12)
    require_int(monte_carlo_samples, "sqrt_dk_scaling's monte_carlo_samples", 0, 10**7)
    sigma = Symbol("sigma", positive=True)
    d_k = dimension_symbol("d_k")
    q, k = Normal("q_j", 0, sigma), Normal("k_j", 0, sigma)
    mean_term = simplify(expectation(q * k))
    var_term = simplify(stats_variance(q * k))
    a = Symbol("a", positive=True)  # uniform on (-a, a): variance a^2 / 3
    u, w = Uniform("u_j", -a, a), Uniform("w_j", -a, a)
    uniform_ok = simplify(stats_variance(u * w) - stats_variance(u) ** 2) == 0 and expectation(u * w) == 0

    variance = d_k * var_term
    scaled = simplify(variance / sqrt(d_k) ** 2)
    checks: list[tuple[str, bool]] = [
        ("per term (normal): E[q_j k_j] = 0 and Var(q_j k_j) = sigma^4, by sympy.stats",
         mean_term == 0 and var_term == sigma**4),
        ("per term (uniform, same variance): Var(u_j w_j) = Var(u_j)^2, by sympy.stats", bool(uniform_ok)),
    ]
    for d in range(1, full_check_up_to + 1):
        qs = [Normal(f"q{j}", 0, sigma) for j in range(d)]
        ks = [Normal(f"k{j}", 0, sigma) for j in range(d)]
        dot = sum((x * y for x, y in zip(qs, ks, strict=True)), Rational(0))
        full = simplify(Expectation(expand(dot**2)).doit() - Expectation(dot).doit() ** 2)
        checks.append((f"full sympy.stats computation, d_k = {d}: Var(q.k) = {d} sigma^4", full == d * sigma**4))
    evidence: dict[str, Any] = {}
    if monte_carlo_samples:
        for d in (1, 16, 64):
            raw, sc = monte_carlo_variance(d, monte_carlo_samples)
            evidence[f"d_k={d}"] = {"Var(q.k)": raw, "Var(q.k/sqrt(d_k))": sc,
                                    "label": "Monte Carlo evidence, not a proof"}

    steps = (
        ProofStep("Each term q_j k_j is a product of independent variables with mean 0 and variance sigma^2:"),
        ProofStep("E[q_j k_j] = E[q_j] E[k_j] = 0 (computed with sympy.stats)", Eq(Expectation(q * k), mean_term),
                  r"\operatorname{E}[q_j k_j] = %s" % latex(mean_term)),
        ProofStep("Var(q_j k_j) = E[q_j^2] E[k_j^2] = sigma^4 (computed with sympy.stats)", var_term,
                  r"\operatorname{Var}(q_j k_j) = %s" % latex(var_term)),
        ProofStep("Independence lemma: the d_k terms are independent, so their variances add", None,
                  r"\operatorname{Var}\Big(\sum_j T_j\Big) = \sum_j \operatorname{Var}(T_j)"),
        ProofStep("Var(q.k) = sum over j of Var(q_j k_j)", variance,
                  r"\operatorname{Var}(q \cdot k) = %s" % latex(variance)),
        ProofStep("Var(c X) = c^2 Var(X) with c = 1/sqrt(d_k)", scaled,
                  r"\operatorname{Var}\left(\frac{q \cdot k}{\sqrt{d_k}}\right) = %s" % latex(scaled)),
        ProofStep("For sigma = 1 the scaled scores have unit variance, whatever d_k", scaled.subs(sigma, 1),
                  r"\operatorname{Var}\left(\frac{q \cdot k}{\sqrt{d_k}}\right) = 1"),
    )
    return Proof(
        statement="E[q.k] = 0, Var(q.k) = d_k sigma^4, Var(q.k/sqrt(d_k)) = sigma^4 (Vaswani et al. 2017, fn. 4)",
        steps=steps,
        verified=all(ok for _, ok in checks) and scaled == sigma**4,
        checks=tuple(checks),
        result={"mean": Rational(0) if mean_term == 0 else mean_term, "variance": variance,
                "scaled_variance": scaled, "evidence": evidence},
    )
