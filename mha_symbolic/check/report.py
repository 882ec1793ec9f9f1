r"""What the checker reports: one :class:`Finding` per statement, gathered in a :class:`Report`.

Explanation
===========

A finding's ``status`` is a verdict of the engine or says that there was none:

``correct``       a comparison or proof happened and agrees (``basis`` says which);
``wrong``         it disagrees (``expected`` holds the engine's value or form);
``assumed``       the value depends on inputs the document never gives (the engine found them missing);
``inconsistent``  the statement contradicts the document's own declarations;
``given``         an input, a definition or a constraint: not a verdict;
``unchecked``     not understood or not decidable -- always with the reason.

``kind`` is what the statement is about (number, shape, rank, statistic, formula, setting); ``basis``
how the verdict was reached (computed, proven, certified counterexample, ...); ``evidence``, for a wrong or
inconsistent finding, the sizes and given values it was judged with and the lines that bound them
(:meth:`Report.explain`).  For a notebook,
``cell`` is the 0-based cell index, ``line`` counts within that cell and ``output`` marks a cell output.

Examples
========

>>> r = Report("doc.md", False, None, [Finding(3, "d_k = 2", "correct", None, "d_model/h = 2", "setting",
...                                            "computed")])
>>> r.exit_code, r.counts()["correct"], r.checked
(0, 1, 1)
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from typing import Any

__all__ = ["Finding", "Report", "STATUSES", "KINDS", "VERDICT_STATUS"]

STATUSES = ("correct", "wrong", "assumed", "inconsistent", "given", "unchecked")
KINDS = ("number", "shape", "rank", "statistic", "formula", "setting")
#: an engine verdict (:class:`mha_symbolic.statements.Verdict`) as a checker status
VERDICT_STATUS = {"true": "correct", "false": "wrong", "assumed": "assumed", "inconsistent": "inconsistent",
                  "undecided": "unchecked", "informal": "unchecked"}


@dataclass(frozen=True)
class Finding:
    """One statement's verdict: the 1-based ``line``, the source ``latex``, ``status``, ``expected``, why."""

    line: int
    latex: str
    status: str
    expected: str | None
    message: str
    kind: str = ""
    basis: str = ""
    cell: int | None = None
    output: bool = False
    evidence: tuple[str, ...] = ()  # for wrong/inconsistent: the bindings in force, each with its line


@dataclass
class Report:
    """All findings of one document."""

    file: str
    encoding_repaired: bool
    encoding_method: str | None
    findings: list[Finding] = field(default_factory=list)
    math_fragments: int = 0
    #: why the document was not checked to its end ("" when it was): its time budget ran out, or its worker was
    #: stopped; the pieces not reached are ``unchecked`` with that reason
    stopped: str = ""

    @property
    def exit_code(self) -> int:
        """1 when something is wrong or inconsistent; else 3 when the document was not checked to its end (a
        planted error in the part not reached must not pass as a clean document); else 0."""
        if any(f.status in ("wrong", "inconsistent") for f in self.findings):
            return 1
        return 3 if self.stopped else 0

    @property
    def checked(self) -> int:
        """How many statements were actually compared or proved (correct, wrong, inconsistent)."""
        return sum(f.status in ("correct", "wrong", "inconsistent") for f in self.findings)

    def counts(self) -> dict[str, int]:
        return {s: sum(f.status == s for f in self.findings) for s in STATUSES}

    def as_dict(self) -> dict[str, Any]:
        return {"file": self.file, "encoding_repaired": self.encoding_repaired,
                "encoding_method": self.encoding_method, "checked": self.checked, "stopped": self.stopped,
                "findings": [asdict(f) for f in self.findings]}

    def to_json(self) -> str:
        return json.dumps(self.as_dict(), indent=1, ensure_ascii=False)

    def _where(self, f: Finding) -> str:
        if f.cell is None:
            return str(f.line)
        return f"{f.cell}:{'out:' if f.output else ''}{f.line}"

    def summary(self) -> str:
        counts = ", ".join(f"{k}: {v}" for k, v in self.counts().items() if v)
        return (f"{self.checked} of {len(self.findings)} statements checked (compared or proved)"
                + (f"; {counts}" if counts else "") + (f"\nNOT CHECKED TO THE END: {self.stopped}" if self.stopped
                                                       else ""))

    def _stopped_line(self) -> list[str]:
        return [f"NOT CHECKED TO THE END: {self.stopped}"] if self.stopped else []

    def to_table(self) -> str:
        head = f"{self.file}" + (f"  (encoding repaired: {self.encoding_method})" if self.encoding_repaired else "")
        rows = [("line", "status", "kind", "formula", "expected", "why")]
        for f in self.findings:
            rows.append((self._where(f), f.status, f.kind, _short(f.latex, 40), _short(f.expected or "", 28),
                         f.message + (f" [{f.basis}]" if f.basis else "")))
        widths = [max(len(r[c]) for r in rows) for c in range(5)]
        lines = [head, *self._stopped_line()] + ["  ".join([*(r[c].ljust(widths[c]) for c in range(5)), r[5]]).rstrip()
                                                 for r in rows]
        return "\n".join([*lines, self.summary()])

    def explain(self) -> str:
        """Every wrong or inconsistent finding with the computation's message and the bindings it was judged
        with (each size and given value in force, with the line that bound it)."""
        out = []
        for f in self.findings:
            if f.status not in ("wrong", "inconsistent"):
                continue
            out.append(f"line {self._where(f)}: {f.status}: {f.message}")
            out += [f"    judged with {e}" for e in f.evidence] or ["    judged with nothing the document bound"]
        return "\n".join(out) if out else "nothing wrong or inconsistent"

    def to_markdown(self) -> str:
        out = [f"### {self.file}", ""]
        if self.encoding_repaired:
            out += [f"Encoding repaired ({self.encoding_method}).", ""]
        out += [f"**{line}**" for line in self._stopped_line()] + ([""] if self.stopped else [])
        out += ["| line | status | kind | formula | expected | why |", "|---|---|---|---|---|---|"]
        for f in self.findings:
            cells = [self._where(f), f.status, f.kind, f"`{f.latex}`", f"`{f.expected}`" if f.expected else "",
                     f.message]
            out.append("| " + " | ".join(c.replace("|", "\\|").replace("\n", " ") for c in cells) + " |")
        return "\n".join([*out, "", self.summary()]) + "\n"

    def _repr_markdown_(self) -> str:
        return self.to_markdown()


def _short(text: str, width: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= width else text[: width - 3] + "..."
