r"""LaTeX in the notation tutorials use: presets, printer settings, one entry point.

Explanation
===========

Every object of the package prints through a ``_latex(self, printer)`` hook, so
``sympy.latex(obj)`` works.  :func:`latex` uses :class:`MHALatexPrinter`, SymPy's
:class:`~sympy.printing.latex.LatexPrinter` with three settings added:

``notation``   how per-head weights are written (:data:`NOTATIONS`):
               ``vaswani`` ``W_i^{Q}``, ``W^{O}`` (seed 002); ``per-head`` ``W_Q^{i}``,
               ``W_O`` (seed 004); ``numbered`` ``W_{Q1}``, ``W_O`` (seed 001)
``transpose``  ``"top"`` (``K^{\top}``) or ``"T"`` (``K^{T}``)
``decimals``   ``None`` (exact entries) or ``k`` (explicit matrices rounded to k places)

Dimensions print as written in the tutorials (``d_k``, ``d_{model}``) and explicit
matrices as ``bmatrix``.

Examples
========

>>> from sympy import MatrixSymbol
>>> from mha_symbolic.latex import latex
>>> from mha_symbolic.heads import HeadMatrix
>>> W = HeadMatrix("W_Q", 4, 2, 1)
>>> latex(W), latex(W, notation="per-head"), latex(W, notation="numbered")
('W_1^{Q}', 'W_Q^{1}', 'W_{Q1}')
>>> K = MatrixSymbol("K", 3, 2)
>>> latex(K.T), latex(K.T, transpose="T")
('K^{\\top}', 'K^{T}')
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from sympy import Symbol
from sympy.printing.latex import LatexPrinter

from .errors import InputError, require

__all__ = ["Notation", "NOTATIONS", "DEFAULT_NOTATION", "MHALatexPrinter", "latex", "notation_of", "sub",
           "repr_latex", "TRANSPOSES", "LatexReprMixin", "terminating_decimal", "escape_text", "prose_latex",
           "prose_markdown", "statement_markdown"]

TRANSPOSES = {"top": r"\top", "T": "T"}
DEFAULT_NOTATION = "vaswani"
_DIMENSION_LATEX = {"d_k": "d_k", "d_v": "d_v", "d_model": "d_{model}", "n": "n", "h": "h", "i": "i"}


_SPECIALS = {"\\": r"\textbackslash{}", "^": r"\textasciicircum{}", "~": r"\textasciitilde{}", "_": r"\_",
             "&": r"\&", "%": r"\%", "#": r"\#", "$": r"\$", "{": r"\{", "}": r"\}"}


def escape_text(s: str) -> str:
    r"""Plain text for LaTeX: every special character escaped.

    >>> print(escape_text("W_Q^i = 50% & more"))
    W\_Q\textasciicircum{}i = 50\% \& more
    """
    require(s, str, "escape_text's s", "a str")
    return "".join(_SPECIALS.get(c, c) for c in s)


_MATH_WORD = re.compile(r"[^\s]*[_^][^\s]*")  # a word holding a subscript or a power: q_j, d_model, W_O^(i)
_TEXT_UNSAFE = re.compile(r"[\\{}$&%#~]")  # shown literally inside \text by MathJax, special to LaTeX


def _math_word(word: str) -> str:
    """An ASCII formula word as math: ``d_model`` -> ``d_{model}``, ``W_O^(i)`` -> ``W_{O}^{(i)}``,
    ``p^T`` -> ``p^{T}``."""
    def script(m: re.Match[str]) -> str:
        body = m.group(2)
        if body.startswith("(") or body.startswith("{"):
            return m.group(1) + ("{" + body + "}" if body.startswith("(") else body)
        return m.group(1) + "{" + body + "}"

    out = re.sub(r"([_^])(\{[^{}]*\}|\([^()]*\)|[A-Za-z0-9]+)", script, word)
    return re.sub(r"[&%#$]", lambda m: "\\" + m.group(0), out)


def prose_latex(text: str) -> str:
    r"""A sentence with ASCII formulas in it, as LaTeX that both pdflatex and MathJax show as meant: words
    with a subscript or power become math (``d_k``, ``W_O^(i)``), the rest ``\text{...}`` with no character that
    text mode would show literally (MathJax has no text-mode escapes such as ``\_``).

    >>> print(prose_latex("the d_k terms of W_O^(i) add: 50%"))
    \text{the } d_{k} \text{ terms of } W_{O}^{(i)} \text{ add: 50} \%
    """
    require(text, str, "prose_latex's text", "a str")
    pieces = []
    last = 0
    for m in _MATH_WORD.finditer(text):
        pieces.append(_plain(text[last:m.start()]))
        word = m.group(0)
        tail = len(word) - len(word.rstrip(",.;:"))
        pieces.append(_math_word(word[: len(word) - tail]))
        pieces.append(_plain(word[len(word) - tail:]))
        last = m.end()
    pieces.append(_plain(text[last:]))
    return " ".join(p for p in pieces if p)


def prose_markdown(text: str) -> str:
    r"""A sentence with ASCII formulas in it, as Markdown for Jupyter: words with a subscript or power become
    ``$...$`` math (so ``A_1 ... head_1`` is never read as emphasis), the rest stays text and wraps.

    >>> print(prose_markdown("the d_k terms of W_O^(i), from V's width"))
    the $d_{k}$ terms of $W_{O}^{(i)}$, from V's width
    """
    require(text, str, "prose_markdown's text", "a str")
    pieces = []
    last = 0
    for m in _MATH_WORD.finditer(text):
        word = m.group(0)
        core = word.rstrip(",.;:")
        lead = len(core) - len(core.lstrip("(["))
        inner = core[lead:]
        close = len(inner) - len(inner.rstrip(")]")) if inner.count("(") < inner.count(")") else 0
        body = inner[: len(inner) - close] if close else inner
        pieces += [text[last:m.start()], core[:lead], f"${_math_word(body)}$", inner[len(body):], word[len(core):]]
        last = m.end()
    pieces.append(text[last:])
    return "".join(pieces).replace("|", "\\|").replace("*", "\\*")


def statement_markdown(text: str) -> str:
    r"""A statement as written: LaTeX (it holds a command) as ``$...$`` math, else prose with its formula words.

    >>> print(statement_markdown(r"\sqrt{d_k} = 8"), "|", statement_markdown("heads of width d_k"))
    $\sqrt{d_k} = 8$ | heads of width $d_{k}$
    """
    require(text, str, "statement_markdown's text", "a str")
    return f"${text}$" if "\\" in text else prose_markdown(text)


def _plain(text: str) -> str:
    r"""Plain text as ``\text{...}`` runs, with ``$ & % # { } \ ~`` set in math mode between them."""
    out = []
    last = 0
    for m in _TEXT_UNSAFE.finditer(text):
        if text[last:m.start()]:
            out.append(r"\text{%s}" % text[last:m.start()])
        out.append({"\\": r"\backslash", "~": r"\sim"}.get(m.group(0), "\\" + m.group(0)))
        last = m.end()
    if text[last:]:
        out.append(r"\text{%s}" % text[last:])
    return " ".join(out)


def sub(index: str) -> str:
    """A subscript: ``_i`` for one character, ``_{12}`` otherwise."""
    require(index, str, "sub's index", "a str")
    return f"_{index}" if len(index) == 1 else f"_{{{index}}}"


@dataclass(frozen=True)
class Notation:
    """How a tutorial writes per-head weights and the output projection.

    ``weight`` and ``output`` are format strings with ``{base}`` (``W`` or ``b``),
    ``{kind}`` (``Q``, ``K``, ``V``) and ``{sub_index}``/``{index}``.
    """

    name: str
    weight: str
    output: str
    source: str

    def head(self, base: str, kind: str, index: str) -> str:
        """``W_i^{Q}`` (vaswani), ``W_Q^{i}`` (per-head), ``W_{Qi}`` (numbered)."""
        return self.weight.format(base=base, kind=kind, index=index, sub_index=sub(index))

    def out(self, base: str) -> str:
        """``W^{O}`` (vaswani) or ``W_O``."""
        return self.output.format(base=base)


NOTATIONS: dict[str, Notation] = {
    "vaswani": Notation("vaswani", "{base}{sub_index}^{{{kind}}}", "{base}^{{O}}", "Vaswani et al. 2017; seed 002"),
    "per-head": Notation("per-head", "{base}_{kind}^{{{index}}}", "{base}_O", "seed 004"),
    "numbered": Notation("numbered", "{base}_{{{kind}{index}}}", "{base}_O", "seed 001"),
}


def notation_of(printer: Any) -> Notation:
    """The notation a printer was configured with (the default for SymPy's own printer)."""
    return NOTATIONS[getattr(printer, "_settings", {}).get("notation", DEFAULT_NOTATION)]


class MHALatexPrinter(LatexPrinter):
    """SymPy's LaTeX printer with the ``notation``, ``transpose`` and ``decimals`` settings."""

    printmethod = "_latex"
    _default_settings = {**LatexPrinter._default_settings, "notation": DEFAULT_NOTATION, "transpose": "top",
                         "decimals": None, "mat_str": "bmatrix", "mat_delim": ""}

    def __init__(self, settings: dict[str, Any] | None = None):
        require(settings, (dict, type(None)), "MHALatexPrinter's settings", "a dict or None")
        settings = dict(settings or {})
        if settings.get("notation", DEFAULT_NOTATION) not in NOTATIONS:
            raise InputError(f"notation must be one of {sorted(NOTATIONS)}, got {settings['notation']!r}")
        if settings.get("transpose", "top") not in TRANSPOSES:
            raise InputError(f"transpose must be 'top' or 'T', got {settings['transpose']!r}")
        decimals = settings.get("decimals")
        if decimals is not None and (isinstance(decimals, bool) or not isinstance(decimals, int)
                                     or not 0 <= decimals <= 30):
            raise InputError(f"decimals must be None or an integer from 0 to 30, got {decimals!r}")
        super().__init__(settings)

    def _print_Symbol(self, expr: Any, style: str = "plain") -> str:
        if expr.name in _DIMENSION_LATEX and not getattr(expr, "is_Matrix", False):
            return _DIMENSION_LATEX[expr.name]
        return super()._print_Symbol(expr, style=style)

    def _print_Transpose(self, expr: Any) -> str:
        t = TRANSPOSES[self._settings["transpose"]]
        return super()._print_Transpose(expr).replace("^{T}", "^{%s}" % t)

    def _print_Rational(self, expr: Any) -> str:
        text = terminating_decimal(expr)
        return text if text is not None else super()._print_Rational(expr)

    def _print_OneMatrix(self, expr: Any) -> str:
        return r"\mathbf{1}"  # the all-ones column that broadcasts a bias row over the tokens

    def _print_MatrixBase(self, expr: Any) -> str:
        k = self._settings["decimals"]
        if k is None or expr.free_symbols:
            return super()._print_MatrixBase(expr)
        rows = [" & ".join(_decimal(x, k) for x in expr.row(i)) for i in range(expr.rows)]
        return r"\begin{bmatrix}%s\end{bmatrix}" % r" \\ ".join(rows)

    _print_ImmutableMatrix = _print_ImmutableDenseMatrix = _print_Matrix = _print_MatrixBase
    _print_MutableDenseMatrix = _print_MatrixBase


def terminating_decimal(x: Any, max_digits: int = 6) -> str | None:
    """``"0.25"`` for 1/4: the exact decimal of a rational whose denominator is ``2^a 5^b``
    (at most ``max_digits`` places), else None.  Inputs typed as decimals print as typed.

    >>> from sympy import Rational
    >>> terminating_decimal(Rational(1, 5)), terminating_decimal(Rational(-7, 8)), terminating_decimal(Rational(1, 3))
    ('0.2', '-0.875', None)
    """
    if not getattr(x, "is_Rational", False) or x.is_Integer:
        return None
    q = int(x.q)
    twos = fives = 0
    while q % 2 == 0:
        q, twos = q // 2, twos + 1
    while q % 5 == 0:
        q, fives = q // 5, fives + 1
    places = max(twos, fives)
    if q != 1 or places > max_digits:
        return None
    scaled = abs(int(x.p)) * 10**places // int(x.q)
    sign = "-" if x < 0 else ""
    return f"{sign}{scaled // 10**places}.{scaled % 10**places:0{places}d}"


def _decimal(x: Any, k: int) -> str:
    value = float(x.evalf(max(20, k + 5)))
    text = f"{value:.{k}f}"
    return "0" + text[2:] if text.startswith("-0") and float(text) == 0 else text


class LatexReprMixin:
    """Gives a class ``_repr_latex_`` through :func:`latex` (Jupyter renders it)."""

    def _repr_latex_(self) -> str:
        return repr_latex(self)


def latex(expr: Any, notation: str = DEFAULT_NOTATION, transpose: str = "top", decimals: int | None = None,
          **settings: Any) -> str:
    """LaTeX of ``expr`` in a notation preset; see the module docstring."""
    printer = MHALatexPrinter({"notation": notation, "transpose": transpose, "decimals": decimals, **settings})
    return printer.doprint(expr)


def repr_latex(expr: Any) -> str:
    """``$\\displaystyle ...$`` for Jupyter's ``_repr_latex_``."""
    return r"$\displaystyle %s$" % latex(expr)


def dimension_latex(name: str) -> str:
    """``d_{model}`` for ``d_model`` (the spelling of a dimension)."""
    return _DIMENSION_LATEX.get(name, latex(Symbol(name)))
