r"""Derivation documents: the model's steps, shapes and values as LaTeX, Markdown or notebook.

Explanation
===========

A :class:`Derivation` is an ordered list of :class:`DerivationStep` (title, formula,
shape, value) built from the engine -- never from typed numbers: formulas are the
model's own step definitions, shapes are derived by :mod:`mha_symbolic.dims`, values
come from :func:`~mha_symbolic.evaluation.evaluate`.  It renders as

* ``to_latex()``: a standalone ``article`` with ``amsmath`` (wide matrices are shown
  rounded, and split into column blocks of at most :data:`MAX_COLUMNS`, so nothing
  overflows the page);
* ``to_markdown()``: Markdown with ``$$`` blocks;
* ``_repr_markdown_`` / ``to_ipynb()`` for Jupyter.

Examples
========

>>> from mha_symbolic import MultiHeadAttention
>>> from mha_symbolic.derivation import Derivation
>>> d = Derivation.general(MultiHeadAttention())
>>> [s.title for s in d.steps][:3]
['Queries of head $i$', 'Keys of head $i$', 'Values of head $i$']
>>> print(d.steps[0].latex_lines()[0])
Q_i = X W_i^{Q}
>>> "\\begin{document}" in d.to_latex()
True
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from sympy import ImmutableMatrix, sqrt

from ._convert import as_sympy
from .dims import dimension_symbol
from .errors import InputError, require
from .formulas import standard_formulas
from .heads import HeadMatrix
from .latex import NOTATIONS, dimension_latex, escape_text, latex, terminating_decimal

if TYPE_CHECKING:
    from .attention import MultiHeadAttention, Step
    from .examples import Example

__all__ = ["Derivation", "DerivationStep", "MAX_COLUMNS", "EXACT_WIDTH", "standard_documents", "write_documents",
           "compile_pdf", "CompileResult", "add_plots"]

#: Matrices wider than this are split into column blocks.
MAX_COLUMNS = 8
#: Exact entries are shown when a matrix's rows are at most this many visible characters.
EXACT_WIDTH = 60
DECIMALS = 4

_TITLES = {"X_head": "Input block of head {i}", "Y_head": "Key/value input block of head {i}",
           "Q": "Queries of head {i}", "K": "Keys of head {i}",
           "V": "Values of head {i}", "S": "Scores of head {i}", "S'": "Scaled scores of head {i}",
           "A": "Attention weights of head {i} (row-wise softmax)", "head": "Output of head {i}",
           "Concat": "Concatenation of the heads", "Output": "Output projection"}


def _title(step: Step, grouped: bool = False) -> str:
    sym = step.symbol
    base = getattr(sym, "base", step.name)
    index = getattr(sym, "index", "")
    title = _TITLES.get(base, step.name).format(i=f"${latex(index)}$" if getattr(index, "is_Symbol", False) else index)
    if grouped and base in ("K", "V"):  # K_j, V_j of grouped-query attention are read by h/g query heads
        title = title.replace(" of head ", " of key/value head ")
    return title


def _shape_at(shape: tuple[Any, Any], values: dict[Any, Any]) -> tuple[Any, Any]:
    """A general step's shape at the model's own sizes (``d_k`` and ``d_v`` from ``d_model / h`` too)."""
    def at(x: Any) -> Any:
        e = as_sympy(x)
        for _ in range(3):  # d_k = d_model / h: substitute until nothing changes
            e = e.xreplace(values)
        return e

    return (at(shape[0]), at(shape[1]))


def _visible(text: str) -> int:
    """Rough printed width of a LaTeX snippet, in characters."""
    return len(re.sub(r"\\[A-Za-z]+|[{}^_\\ ]", "", text))


_text = escape_text  # plain text in the document


@dataclass(frozen=True)
class DerivationStep:
    """One step: a title, its formula (a step or an equation), its shape, its value (or None)."""

    title: str
    formula: Any
    shape: tuple[Any, Any] | None = None
    value: ImmutableMatrix | None = None
    notation: str = "vaswani"
    transpose: str = "top"
    decimals: int | None = None

    def _latex(self, expr: Any, decimals: int | None = None) -> str:
        return latex(expr, notation=self.notation, transpose=self.transpose, decimals=decimals)

    def shape_latex(self) -> str | None:
        if self.shape is None:
            return None
        rows, cols = (self._latex(x) for x in self.shape)
        return rf"{rows} \times {cols}"

    def matrix_blocks(self, M: ImmutableMatrix, decimals: int | None) -> list[str]:
        """The matrix as bmatrix blocks of at most MAX_COLUMNS columns."""
        if M.cols <= MAX_COLUMNS:
            return [self._latex(M, decimals)]
        blocks = []
        for start in range(0, M.cols, MAX_COLUMNS):
            stop = min(start + MAX_COLUMNS, M.cols)
            blocks.append(rf"\text{{columns {start + 1}--{stop}: }}" + self._latex(M[:, start:stop], decimals))
        return blocks

    def latex_lines(self) -> list[str]:
        """The lines of this step in an ``align*`` block (first line: the formula)."""
        lines = [self._latex(self.formula)]
        if self.value is None:
            return lines
        M = self.value
        exact_ok = self.decimals is None and max(_visible(self._latex(M[i, :])) for i in range(M.rows)) <= EXACT_WIDTH
        if exact_ok:
            lines += ["= " + b for b in self.matrix_blocks(M, None)]
        if not M.free_symbols and not all(x.is_Integer or terminating_decimal(x) for x in M):
            places = DECIMALS if self.decimals is None else self.decimals
            lines += [r"\approx " + b for b in self.matrix_blocks(M, places)]
        elif not exact_ok:
            lines += ["= " + b for b in self.matrix_blocks(M, None)]
        return lines


@dataclass
class Derivation:
    """An ordered derivation; see the module docstring."""

    title: str
    model: MultiHeadAttention
    steps: list[DerivationStep]
    preamble: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    notation: str = "vaswani"
    transpose: str = "top"
    figures: list[tuple[str, str]] = field(default_factory=list)  # (file name beside the document, caption)

    # ----- construction ---------------------------------------------------------------------
    @classmethod
    def general(cls, model: MultiHeadAttention, notation: str = "vaswani", transpose: str = "top",
                title: str | None = None, *, every_head: bool = False) -> Derivation:
        """The symbolic derivation: dimensions, the formulas, each step with its derived shape.

        The heads are one general head ``i`` (and key/value head ``j``) whatever ``h`` is, so a derivation at
        real sizes stays a few pages; ``every_head=True`` writes each head (a worked example's values)."""
        _check(notation, transpose)
        from .attention import MultiHeadAttention

        require(model, MultiHeadAttention, "Derivation.general's model", "a MultiHeadAttention")
        D = model.dims
        # every head is written once, as a general head i (and key/value head j = j(i)), whatever h is: the steps
        # come from the model with symbolic sizes, their shapes from this model's sizes
        from .attention import KV_INDEX

        general = model.generalised() if D.h.is_Integer and not every_head else model
        if general is not model and model.kv_heads not in (None, 1):  # j = ceil(i g / h), with g and h given below
            general = general.replace_options(kv_heads=dimension_symbol("g"))
        values = {dimension_symbol(k): v for k, v in D.as_dict().items() if as_sympy(v).is_Integer}
        if model.cross and getattr(model.n_kv, "is_Integer", False):
            values[dimension_symbol("n_kv")] = model.n_kv
        sizes = dict(D.as_dict())
        if model.cross:
            sizes["n_kv"] = model.n_kv
        if model.kv_heads is not None:
            sizes["g"] = model.kv_heads
        dims = ", ".join(f"{dimension_latex(k)} = {latex(v)}" if v.is_Integer else dimension_latex(k)
                         for k, v in ((k, as_sympy(v)) for k, v in sizes.items())
                         if not (k in ("d_k", "d_v") and not v.is_Integer))
        concrete = all(as_sympy(v).is_Integer for v in sizes.values())
        preamble = [f"Dimensions: ${dims}$" + (", each a positive integer." if not concrete else ".")]
        d_k = as_sympy(D.d_k)
        if d_k.is_Integer and general is not model:
            root = sqrt(d_k)
            shown = latex(root) if root.is_Integer else rf"{latex(root)} \approx {float(root):.4f}"
            preamble.append(rf"The scores are scaled by $\frac{{1}}{{\sqrt{{d_k}}}}$, with $\sqrt{{d_k}} = {shown}$.")
        if general is not model:
            preamble.append(rf"Each of the $h = {latex(D.h)}$ heads is computed as the general head $i$ below "
                            rf"($i = 1, \dots, {latex(D.h)}$).")
        if model.cross:
            preamble.append(r"Cross-attention: the queries come from $X$ ($n \times d_{model}$), the keys and values "
                            r"from $Y$ ($n_{kv} \times d_{model}$); self-attention is the case $Y = X$, $n_{kv} = n$.")
        if model.kv_heads is not None:
            g = latex(as_sympy(model.kv_heads))
            share = latex(D.h / as_sympy(model.kv_heads))
            W_K = latex(HeadMatrix("W_K", D.d_model, D.d_k, KV_INDEX), notation=notation, transpose=transpose)
            preamble.append(rf"Grouped-query attention: ${g}$ key/value heads $K_j = {'Y' if model.cross else 'X'} "
                            rf"{W_K}$, $V_j$, each shared by $h/g = {share}$ query heads; query head $i$ reads "
                            r"key/value head $j = \lceil i g / h \rceil$" +
                            (" (here $g$ is taken to divide $h$)." if model.assumptions else "."))
            if general is not model and getattr(as_sympy(model.kv_heads), "is_Integer", False):
                per = int(D.h) // int(model.kv_heads)
                runs = [f"${j * per + 1}$--${(j + 1) * per}$ read $K_{{{j + 1}}}, V_{{{j + 1}}}$"
                        for j in range(int(model.kv_heads))]
                preamble.append("Query heads " + ", ".join(runs) + ".")
        for f in standard_formulas(general):
            preamble.append("$$" + latex(f, notation=notation, transpose=transpose) + "$$")
        if model.convention == "split":
            preamble.append("Split convention: head $i$ reads the column block $X_i$ of $X$, and its weights "
                            r"are $d_k \times d_k$.")
        if model.causal:
            preamble.append(r"Causal mask: the entries $(a, b)$ with $b > a$ of every $A_i$ are $0$; row $a$ is "
                            r"normalised over the keys $b \le a$.")
        if model.mask == "key_padding":
            preamble.append(r"Key-padding mask: a row $m \in \{0, 1\}^{1 \times n_{kv}}$ (1: attend), "
                            r"$\mathrm{softmax}_m(S)_{ab} = \frac{m_b e^{s_{ab}}}{\sum_c m_c e^{s_{ac}}}$; a row "
                            "with no key left is an error, not a number.")
        if model.mask == "additive":
            preamble.append(r"Additive mask: $M$ ($n \times n_{kv}$, entries real or $-\infty$) is added to the "
                            r"scaled scores; $e^{-\infty} = 0$, and a row with every entry $-\infty$ is an error.")
        grouped = model.kv_heads is not None
        steps = [DerivationStep(_title(s, grouped), s, _shape_at(s.shape, values), None, notation, transpose)
                 for s in general.steps.values()]
        notes = []
        if D.relations:
            notes.append(r"Shapes use $h\,d_v = d_{model}$, from $d_v = \frac{d_{model}}{h}$: the concatenation "
                         r"and the output are $n \times d_{model}$.")
        name = "split" if model.convention == "split" else "projection"
        kind = ("Grouped-query " if grouped else "Multi-head ") + ("cross-attention" if model.cross else "attention")
        if grouped and model.kv_heads == 1:
            kind = "Multi-query " + ("cross-attention" if model.cross else "attention")
        return cls(title or f"{kind}, {name} convention", model, steps, preamble, notes, notation, transpose)

    @classmethod
    def from_example(cls, example: Example, notation: str = "vaswani", transpose: str = "top",
                     decimals: int | None = None) -> Derivation:
        """Every step of a worked example with its exact (or rounded) matrix."""
        _check(notation, transpose)
        from .examples import Example

        require(example, Example, "Derivation.from_example's example", "an Example (mha_symbolic.example(name))")
        E = example.evaluate()
        model = E.model
        d = cls.general(model, notation, transpose, title=example.title, every_head=True)
        d.preamble.insert(0, _title_text(f"Source: {example.source}."))
        for note in reversed(example.chosen):
            d.preamble.insert(1, _title_text(f"Chosen here (not in the source): {note}."))
        inputs = []
        for key, value in E.inputs.items():
            for k, sym in enumerate(model.inputs[key] if isinstance(value, list) else [model.inputs[key]]):
                matrix = value[k] if isinstance(value, list) else value
                inputs.append(DerivationStep(f"Input ${latex(sym, notation=notation)}$", sym,
                                             model.dims.shape(sym.shape), matrix, notation, transpose, decimals))
        d.steps = inputs + [DerivationStep(_title(s, model.kv_heads is not None), s, s.shape, E[s.name], notation,
                                           transpose, decimals)
                            for s in model.steps.values()]
        return d

    # ----- rendering ------------------------------------------------------------------------
    def to_latex(self) -> str:
        """A standalone LaTeX document (``article``, ``amsmath``)."""
        out = [r"\documentclass[11pt]{article}", r"\usepackage{amsmath,amssymb}" +
               (r"\usepackage{graphicx}" if self.figures else ""),
               r"\setlength{\textwidth}{16.5cm}", r"\setlength{\oddsidemargin}{-0.2cm}",
               r"\setlength{\evensidemargin}{-0.2cm}", r"\setcounter{MaxMatrixCols}{20}",
               r"\allowdisplaybreaks", rf"\title{{{_title_text(self.title)}}}", r"\date{}", r"\begin{document}",
               r"\maketitle", ""]
        out += [_paragraph(p) for p in self.preamble]
        for step in self.steps:
            out.append(rf"\subsection*{{{_title_text(step.title)}}}")
            shape = step.shape_latex()
            if shape:
                out.append(rf"Shape ${shape}$.")
            out.append(r"\begin{align*}")
            out.append(" \\\\\n".join(_aligned(step.latex_lines())))
            out.append(r"\end{align*}")
        out += [_paragraph(n) for n in self.notes]
        for name, caption in self.figures:
            out += [r"\begin{figure}[htbp]\centering", rf"\includegraphics[width=\linewidth]{{{name}}}",
                    rf"\caption{{{_title_text(caption)}}}", r"\end{figure}"]
        out += [r"\end{document}", ""]
        return "\n".join(out)

    def to_markdown(self) -> str:
        """Markdown with ``$$`` blocks (GitHub, Jupyter, MkDocs render it)."""
        out = [f"# {self.title}", ""]
        for p in self.preamble:
            out += [p.replace(r"\_", "_"), ""]
        for step in self.steps:
            out += [f"## {step.title}", ""]
            shape = step.shape_latex()
            if shape:
                out += [f"Shape ${shape}$.", ""]
            raw = step.latex_lines()
            lines = _aligned(raw)
            body = raw[0] if len(raw) == 1 else "\\begin{aligned}\n" + " \\\\\n".join(lines) + "\n\\end{aligned}"
            out += ["$$", body, "$$", ""]
        for n in self.notes:
            out += [n, ""]
        for name, caption in self.figures:
            out += [f"![{caption}]({name})", ""]
        return "\n".join(out)

    def _repr_markdown_(self) -> str:
        return self.to_markdown()

    def to_ipynb(self) -> str:
        """A Jupyter notebook (nbformat 4 JSON) with one Markdown cell per step."""
        blocks = self.to_markdown().split("\n## ")
        blocks = blocks[:1] + ["## " + b for b in blocks[1:]]
        cells = [{"cell_type": "markdown", "metadata": {}, "source": block} for block in blocks]
        nb = {"cells": cells, "metadata": {"language_info": {"name": "python"}}, "nbformat": 4,
              "nbformat_minor": 5}
        return json.dumps(nb, indent=1, ensure_ascii=False) + "\n"

    def formulas(self) -> list[str]:
        """Every exported formula and matrix (for round-trip checks)."""
        return [line for s in self.steps for line in s.latex_lines()]


def _aligned(lines: list[str]) -> list[str]:
    """``a = b`` / ``= M`` / ``\\approx M`` lines aligned at their relation."""
    first, rest = lines[0], lines[1:]
    if " = " not in first and rest:  # an input: "X" then "= M" become one line "X &= M"
        first, rest = f"{first} {rest[0]}", rest[1:]
    out = [first.replace(" = ", " &= ", 1) if " = " in first else first]
    return out + ["&" + line for line in rest]


def _paragraph(p: str) -> str:
    return p.replace("$$", r"\[", 1).replace("$$", r"\]", 1) if p.startswith("$$") else p + "\n"


def _title_text(title: str) -> str:
    """Escape the text parts of a title, keep its ``$...$`` math."""
    parts = title.split("$")
    return "$".join(p if k % 2 else _text(p) for k, p in enumerate(parts))


def _check(notation: str, transpose: str) -> None:
    if notation not in NOTATIONS:
        raise InputError(f"notation must be one of {sorted(NOTATIONS)}, got {notation!r}")
    if transpose not in ("top", "T"):
        raise InputError(f"transpose must be 'top' or 'T', got {transpose!r}")


# ----- the committed documents and compiling them -------------------------------------------------
def standard_documents() -> dict[str, Derivation]:
    """The documents committed under ``derivations/``: the general derivation (both conventions)
    and every worked example with all its intermediate matrices."""
    from .attention import MultiHeadAttention
    from .examples import EXAMPLES

    docs = {"general": Derivation.general(MultiHeadAttention()),
            "general-split": Derivation.general(MultiHeadAttention(convention="split")),
            "general-causal-bias": Derivation.general(MultiHeadAttention(causal=True, bias=True)),
            "general-gqa": Derivation.general(MultiHeadAttention(n=None, d_model=None, h=8, kv_heads=2)),
            "general-cross": Derivation.general(MultiHeadAttention(cross=True, mask="key_padding"))}
    for name, ex in EXAMPLES.items():
        docs[name] = Derivation.from_example(ex)
    return docs


def add_plots(doc: Derivation, out_dir: Any, stem: str, example: Example | None = None) -> list[Any]:
    """Draw the pictures of ``doc`` as PNGs in ``out_dir`` and list them in ``doc.figures``."""
    from pathlib import Path

    from . import plots

    out = Path(out_dir)
    written = []
    if example is not None:
        E = example.evaluate()
        for suffix, draw, caption in (
                ("attention", plots.attention_heatmaps, "Attention weights of each head"),
                ("spectra", plots.singular_value_spectra,
                 "Singular values (numerical) with the proven rank bound (dashed)")):
            path = out / f"{stem}-{suffix}.png"
            draw(E, path=path)
            doc.figures.append((path.name, caption))
            written.append(path)
    else:
        path = out / f"{stem}-scaling.png"
        plots.scaling_variance_plot(path=path)
        doc.figures.append((path.name, "Variance of the scores with and without the 1/sqrt(d_k) scaling"))
        written.append(path)
    return written


def write_documents(out_dir: Any, documents: dict[str, Derivation] | None = None,
                    formats: tuple[str, ...] = ("tex", "md")) -> list[Any]:
    """Write ``NAME.tex`` / ``NAME.md`` for each document; returns the paths."""
    from pathlib import Path

    require(out_dir, (str, os.PathLike), "write_documents' out_dir", "a path")
    require(documents, (dict, type(None)), "write_documents' documents", "a dict of names to Derivation, or None")
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    paths = []
    for name, doc in (documents or standard_documents()).items():
        for fmt in formats:
            path = out / f"{name}.{fmt}"
            path.write_text(doc.to_latex() if fmt == "tex" else doc.to_markdown(), encoding="utf-8")
            paths.append(path)
    return paths


@dataclass(frozen=True)
class CompileResult:
    """What pdflatex said: the PDF, errors (lines starting with ``!``) and overfull boxes."""

    pdf: Any
    errors: tuple[str, ...]
    overfull: tuple[str, ...]

    @property
    def ok(self) -> bool:
        return not self.errors and not self.overfull


def compile_pdf(tex_path: Any, timeout: float = 120) -> CompileResult:
    """Run ``pdflatex`` on a file (twice is not needed: no references); raise if it is absent."""
    import shutil
    import subprocess
    from pathlib import Path

    require(tex_path, (str, os.PathLike), "compile_pdf's tex_path", "a path")
    exe = shutil.which("pdflatex")
    if exe is None:
        raise InputError("pdflatex not found: install TeX Live (e.g. apt-get install --no-install-recommends "
                         "texlive-latex-base) or use --format tex")
    tex = Path(tex_path).resolve()
    try:
        subprocess.run([exe, "-interaction=nonstopmode", "-halt-on-error", tex.name], cwd=tex.parent,
                       capture_output=True, timeout=timeout, check=False)
    except subprocess.TimeoutExpired:
        raise InputError(f"pdflatex did not finish {tex.name} within {timeout:.0f} s") from None
    log = tex.with_suffix(".log").read_text(encoding="latin-1")
    errors = tuple(line for line in log.splitlines() if line.startswith("!"))
    overfull = tuple(line for line in log.splitlines() if line.startswith("Overfull"))
    pdf = tex.with_suffix(".pdf")
    return CompileResult(pdf if pdf.exists() else None, errors, overfull)
