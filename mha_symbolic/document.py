r"""The document checker: every formula and number of a tutorial, recomputed and adjudicated.

Explanation
===========

:func:`check_text` reads a tutorial (Markdown or plain text), repairs its encoding if it
is mojibake, extracts its fragments (:mod:`mha_symbolic.parse.markdown`) and walks them in
order, building a symbol table as the document goes -- dimensions (``n``, ``d_model``,
``h``, ``d_k``), given matrices (``X``, per-head weights in any notation: ``W_i^Q``,
``W_Q^i``, ``W_{Q1}``, ``WQ1``), aliases (``Q = K = V = X_1``), declared shapes -- and
recomputes every derived quantity with the engine, exactly, comparing at the precision
the document uses (``0.67`` is compared at 2 decimals).

Each :class:`Finding` has a ``status``:

``correct``       the engine computes what the document states (or the formula is the model's);
``wrong``         the engine computes something else (``expected`` says what);
``assumed``       a value is stated without the inputs needed to derive it;
``inconsistent``  the document contradicts itself (e.g. a shape declared one way, used another);
``unchecked``     not understood -- always with the reason; never a guessed verdict.

A fragment that only names a symbol (``$W_O$``) has nothing to check and gives no finding.

Examples
========

>>> text = "Sequence length = 1 token\n```\nX = [1, 2]\nWV1 = [[1, 0], [0, 1]]\nV1 = X @ WV1\n```\n"
>>> [(f.line, f.status) for f in check_text(text).findings]
[(1, 'correct'), (3, 'correct'), (4, 'correct'), (5, 'correct')]
"""

from __future__ import annotations

import json
import re
import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from typing import Any

from sympy import Float, ImmutableMatrix, Matrix, N, Rational, simplify, sympify

from .errors import MHASymbolicError, ParseError
from .latex import latex
from .parse.encoding import repair_encoding
from .parse.markdown import extract

__all__ = ["Finding", "Report", "check_text", "check_file", "STATUSES"]

STATUSES = ("correct", "wrong", "assumed", "inconsistent", "unchecked")
FRAGMENT_SECONDS = 5.0


@dataclass(frozen=True)
class Finding:
    """One verdict: the 1-based ``line``, the source ``latex``, ``status``, ``expected`` (LaTeX) and why."""

    line: int
    latex: str
    status: str
    expected: str | None
    message: str


@dataclass
class Report:
    """All findings of one document."""

    file: str
    encoding_repaired: bool
    encoding_method: str | None
    findings: list[Finding] = field(default_factory=list)
    math_fragments: int = 0

    @property
    def exit_code(self) -> int:
        """1 when something is wrong or inconsistent, else 0."""
        return 1 if any(f.status in ("wrong", "inconsistent") for f in self.findings) else 0

    def counts(self) -> dict[str, int]:
        return {s: sum(f.status == s for f in self.findings) for s in STATUSES}

    def as_dict(self) -> dict[str, Any]:
        return {"file": self.file, "encoding_repaired": self.encoding_repaired,
                "encoding_method": self.encoding_method, "findings": [asdict(f) for f in self.findings]}

    def to_json(self) -> str:
        return json.dumps(self.as_dict(), indent=1, ensure_ascii=False)

    def to_table(self) -> str:
        head = f"{self.file}" + (f"  (encoding repaired: {self.encoding_method})" if self.encoding_repaired else "")
        rows = [("line", "status", "formula", "expected", "why")]
        for f in self.findings:
            rows.append((str(f.line), f.status, _short(f.latex, 40), _short(f.expected or "", 28), f.message))
        widths = [max(len(r[c]) for r in rows) for c in range(4)]
        lines = [head] + ["  ".join([*(r[c].ljust(widths[c]) for c in range(4)), r[4]]).rstrip() for r in rows]
        counts = ", ".join(f"{k}: {v}" for k, v in self.counts().items() if v)
        return "\n".join(lines + [counts])

    def to_markdown(self) -> str:
        out = [f"### {self.file}", ""]
        if self.encoding_repaired:
            out += [f"Encoding repaired ({self.encoding_method}).", ""]
        out += ["| line | status | formula | expected | why |", "|---|---|---|---|---|"]
        for f in self.findings:
            cells = [str(f.line), f.status, f"`{f.latex}`", f"`{f.expected}`" if f.expected else "", f.message]
            out.append("| " + " | ".join(c.replace("|", "\\|").replace("\n", " ") for c in cells) + " |")
        return "\n".join(out) + "\n"

    def _repr_markdown_(self) -> str:
        return self.to_markdown()


def _short(text: str, width: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= width else text[: width - 3] + "..."


class _Timeout(Exception):
    pass


@contextmanager
def _time_limit(seconds: float) -> Iterator[None]:
    """Interrupt a fragment that takes too long (main thread only; elsewhere no limit)."""
    if threading.current_thread() is not threading.main_thread() or not hasattr(signal, "setitimer"):
        yield
        return

    def handler(signum: int, frame: Any) -> None:
        raise _Timeout()

    old = signal.signal(signal.SIGALRM, handler)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)


def check_file(path: str, seconds_per_fragment: float = FRAGMENT_SECONDS) -> Report:
    """Check a file (UTF-8; mojibake repaired).  Unreadable files raise :class:`ParseError`."""
    try:
        with open(path, "rb") as fh:
            raw = fh.read()
    except OSError as e:
        raise ParseError(f"cannot read {path}: {e.strerror}") from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as e:
        raise ParseError(f"{path} is not UTF-8 (byte {e.start}): save it as UTF-8 first") from None
    return check_text(text, name=path, seconds_per_fragment=seconds_per_fragment)


def check_text(text: str, name: str = "<text>", seconds_per_fragment: float = FRAGMENT_SECONDS) -> Report:
    """Check a document given as text; see the module docstring."""
    from ._checker import Checker

    if not isinstance(text, str):
        raise ParseError(f"check_text needs the document as str, got {type(text).__name__}")
    repair = repair_encoding(text)
    fragments = extract(repair.text)
    report = Report(name, repair.repaired, repair.method, math_fragments=sum(f.kind == "math" for f in fragments))
    checker = Checker()
    for frag in fragments:
        try:
            with _time_limit(seconds_per_fragment):
                found = checker.check(frag)
        except _Timeout:
            found = [Finding(frag.line, frag.text, "unchecked", None,
                             f"gave up after {seconds_per_fragment:g} s (too large to check exactly)")]
        except (MHASymbolicError, RecursionError, ValueError, TypeError, ZeroDivisionError, AttributeError,
                IndexError, KeyError, NotImplementedError) as e:
            found = [Finding(frag.line, frag.text, "unchecked", None, f"not understood: {_reason(e)}")]
        report.findings.extend(found)
    report.findings.extend(checker.finish())
    report.findings.sort(key=lambda f: f.line)
    return report


def _reason(e: BaseException) -> str:
    text = str(e).splitlines()[0] if str(e) else type(e).__name__
    return _short(text, 160)


# helpers shared with the checker -------------------------------------------------------------------
def decimals_of(text: str) -> int | None:
    """The most decimal places of any number written in ``text`` (None if it has no decimals)."""
    places = [len(m.group(1)) for m in re.finditer(r"\d\.(\d+)", text)]
    return max(places) if places else None


#: Decimals beyond this are not compared: stated numbers are read as 53-bit floats (15-16 digits).
MAX_PLACES = 12


def precision_text(places: int | None) -> str:
    """`` at 3 decimals``, `` exactly`` or the capped precision, for messages."""
    if places is None:
        return " exactly"
    if places > MAX_PLACES:
        return f" at {MAX_PLACES} decimals (the {places} written are beyond the 15-16 digits numbers are read with)"
    return f" at {places} decimals"


def agrees(computed: Any, stated: Any, places: int | None) -> bool:
    """Exact equality, or equality after rounding ``computed`` to ``places`` decimals."""
    a = computed if isinstance(computed, (Matrix, ImmutableMatrix)) else ImmutableMatrix([[computed]])
    b = stated if isinstance(stated, (Matrix, ImmutableMatrix)) else ImmutableMatrix([[stated]])
    if a.shape != b.shape:
        return False
    for x, y in zip(a, b, strict=True):
        x, y = sympify(x), sympify(y)
        if places is None and not y.has(Float):
            if simplify(x - y) != 0:
                return False
            continue
        k = min(places if places is not None else MAX_PLACES, MAX_PLACES)
        if abs(N(x - y, k + 10)) > Rational(1, 2) * Rational(10) ** (-k) + Rational(10) ** (-k - 3):
            return False
    return True


def show(value: Any, places: int | None = None) -> str:
    """LaTeX of a computed value, rounded like the document when it uses decimals."""
    if places is not None:
        places = min(places, MAX_PLACES)
    if isinstance(value, (Matrix, ImmutableMatrix)):
        exact = latex(ImmutableMatrix(value))
        if all(sympify(x).is_Integer for x in value):
            return exact
        return latex(ImmutableMatrix(value), decimals=places) if places is not None or len(exact) > 120 else exact
    value = sympify(value)
    if places is not None and value.is_number and not value.is_Integer:
        return f"{float(N(value, 30)):.{places}f}"
    return latex(value)

