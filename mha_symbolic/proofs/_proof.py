"""The result object of a proof: statement, steps, how it was verified."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from sympy import latex


@dataclass(frozen=True)
class ProofStep:
    """One step: a sentence and, optionally, the formula it establishes."""

    text: str
    formula: Any = None

    def _latex_line(self) -> str:
        body = r"\text{%s}" % self.text.replace("_", r"\_")
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

    def __bool__(self) -> bool:
        return self.verified

    def __str__(self) -> str:
        lines = [f"Claim: {self.statement}  [{self.kind}: {'verified' if self.verified else 'NOT verified'}]"]
        lines += [f"  {k}. {s.text}" + (f"  {s.formula}" if s.formula is not None else "")
                  for k, s in enumerate(self.steps, start=1)]
        lines += [f"  check: {what} -> {'holds' if ok else 'FAILS'}" for what, ok in self.checks]
        return "\n".join(lines)

    def _repr_latex_(self) -> str:
        rows = r" \\ ".join(s._latex_line() for s in self.steps)
        return r"$\begin{array}{l} %s \end{array}$" % rows
