"""What the engine says about a statement: the verdict, why, and on what basis.

Examples
========

>>> from mha_symbolic.statements.verdict import Verdict
>>> v = Verdict("false", "head_1 = [4, 11], not [0.5, 1.2]", "exact computation", expected="[4, 11]")
>>> v.holds, v.reached, v.as_dict()["basis"]
(False, True, 'exact computation')
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

__all__ = ["Verdict", "VERDICTS", "BASES"]

#: ``true``/``false``: decided; ``assumed``: it depends on an input the givens do not state;
#: ``inconsistent``: the statements it joins contradict each other; ``informal``: not a mathematical
#: statement; ``undecided``: the engine could neither prove nor refute it (the detail says why).
VERDICTS = ("true", "false", "assumed", "inconsistent", "informal", "undecided")
#: How a verdict was reached.
BASES = ("proof", "exact computation", "certified counterexample", "certified witness", "evidence", "informal",
         "none")


@dataclass(frozen=True)
class Verdict:
    """The engine's answer on one statement.

    ``scope`` says where a ``true`` holds when that is less than every size (e.g. ``d_k <= n - 2``);
    ``expected`` is the engine's own value or form when it differs from the statement's.
    """

    verdict: str
    detail: str
    basis: str = "exact computation"
    scope: str = ""
    expected: str = ""

    def _repr_markdown_(self) -> str:
        from ..latex import prose_markdown

        scope = f"; {prose_markdown(self.scope)}" if self.scope else ""
        expected = f"  \nexpected: {prose_markdown(self.expected)}" if self.expected else ""
        return f"**{self.verdict}** ({self.basis}{scope}): {prose_markdown(self.detail)}{expected}"

    def __post_init__(self) -> None:
        if self.verdict not in VERDICTS:
            raise ValueError(f"verdict must be one of {VERDICTS}, got {self.verdict!r}")
        if self.basis not in BASES:
            raise ValueError(f"basis must be one of {BASES}, got {self.basis!r}")

    @classmethod
    def refused(cls, error: Exception) -> Verdict:
        """The engine refused the statement (a package error): no verdict, and the error says why."""
        return cls("undecided", f"the engine refused the statement: {error}", "none")

    @property
    def holds(self) -> bool:
        return self.verdict == "true"

    @property
    def reached(self) -> bool:
        return self.verdict != "undecided"

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)
