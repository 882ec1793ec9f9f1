"""The result object of a proof: statement, steps, how it was verified."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from sympy import latex

from ..latex import prose_latex


def integer_instance(n: int, h: int, d_k: int = 2, seed: int = 0, split: bool = False) -> dict[str, Any]:
    """A deterministic small-integer instance (entries in -2..2) for exact checks through the engine
    (per-head weights ``d_k x d_k`` for the split convention, ``d_model x d_k`` otherwise)."""
    import numpy as np

    rng = np.random.default_rng(seed)
    d_model = h * d_k
    rows = d_k if split else d_model
    return {"X": rng.integers(-2, 3, (n, d_model)),
            **{k: rng.integers(-2, 3, (h, rows, d_k)) for k in ("W_Q", "W_K", "W_V")},
            "W_O": rng.integers(-2, 3, (d_model, d_model))}


@dataclass(frozen=True)
class ProofStep:
    """One step: a sentence and, optionally, the formula it establishes."""

    text: str
    formula: Any = None
    tex: str | None = None  # the formula's LaTeX when written by hand (e.g. Var(q . k) = d_k sigma^4)

    def _latex_line(self) -> str:
        body = prose_latex(self.text)
        if self.tex is not None:
            return body + r" \quad " + self.tex
        return body if self.formula is None else body + r" \quad " + latex(self.formula)


@dataclass(frozen=True)
class Proof:
    """A statement, the steps that establish it, and what was checked.

    ``kind`` is ``"proof"`` for a structural argument or exact computation valid for
    every size it covers; ``verified`` is ``True`` only when every check ran and held.
    ``checks`` records each independent verification (what, and the result).
    """

    statement: str
    steps: tuple[ProofStep, ...]
    verified: bool
    kind: str = "proof"
    checks: tuple[tuple[str, bool], ...] = field(default=())
    result: dict[str, Any] = field(default_factory=dict)

    def __bool__(self) -> bool:
        return self.verified

    def __str__(self) -> str:
        lines = [f"Claim: {self.statement}  [{self.kind}: {'verified' if self.verified else 'NOT verified'}]"]
        lines += [f"  {k}. {s.text}" + (f"  {s.formula}" if s.formula is not None else "")
                  for k, s in enumerate(self.steps, start=1)]
        lines += [f"  check: {what} -> {'holds' if ok else 'FAILS'}" for what, ok in self.checks]
        return "\n".join(lines)

    def latex(self) -> str:
        """The steps as an ``array`` of text and formulas."""
        return r"\begin{array}{l} %s \end{array}" % r" \\ ".join(s._latex_line() for s in self.steps)

    def _repr_latex_(self) -> str:
        return f"${self.latex()}$"
