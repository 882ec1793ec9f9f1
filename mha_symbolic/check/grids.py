r"""Matrices drawn as ASCII grids in plain text: one bracketed row per line, the name on the first.

A plain-text derivation draws a matrix as rows under one another, and often two side by side::

    head₁ = [ 1  0 ]        head₂ = [ 0  3 ]
            [ 2 -1 ]                [ 1  1 ]

:func:`grids` reads such a block (one that is not Python: a block of code is the tracer's) as LaTeX statements,
one per drawn matrix, at the line of its first row (``\mathrm{head}_{1} = \begin{bmatrix} 1 & 0 \\ 2 & -1
\end{bmatrix}``).
The other lines of the block are plain formulas (``q₁ = (1, 0), q₂ = (2, −1);   k₁ = (1, 1)``), cut at semicolons
and wide gaps and read as :func:`.plain.formula_line` reads a line of plain text.
Side-by-side drawings are first cut into columns where every line has a gap of three spaces or more and the part
on the right opens with a name and ``=``.  The left side is read as a plain formula is (Unicode normalised, the
words of the mathematics as commands); rows of unequal length, or a block with no named grid, give nothing.

>>> drawn = grids("head₁ = [ 1  0 ]        head₂ = [ 0  3 ]\n        [ 2 -1 ]                [ 1  1 ]\n")
>>> drawn[0]
(0, '\\mathrm{head}_{1} = \\begin{bmatrix} 1 & 0 \\\\ 2 & -1 \\end{bmatrix}', True, (0, 1))
>>> drawn[1]
(0, '\\mathrm{head}_{2} = \\begin{bmatrix} 0 & 3 \\\\ 1 & 1 \\end{bmatrix}', True, (0, 1))
>>> grids("X = np.array([[1, 0], [0, 1]])\n")
[]
"""

from __future__ import annotations

import re

__all__ = ["drawn_below", "grids", "is_python", "plain_formulas"]

#: a named grid's first line: ``name = [ 1  0 ]`` (the name may be a product: ``head₁ · W_O¹``)
_FIRST = re.compile(r"^\s*(?P<lhs>[^\W\d][^=\[\]]{0,60}?)\s*(?P<op>=|≈)\s*\[(?P<row>[^\[\];]*)\]\s*$")
#: the start of a named grid, whatever follows it on the line (another drawing beside it)
_OPENS = re.compile(r"[^\W\d][^=\[\]\s]{0,30}(?:\s*[·*]\s*[^\W\d][^=\[\]\s]{0,30})?\s*(?:=|≈)\s*\[")
#: a continuation row: ``[ 2 -1 ]``
_NEXT = re.compile(r"^\s*\[(?P<row>[^\[\];]*)\]\s*$")
_NUMBER = re.compile(r"^[-−+]?(?:\d+(?:\.\d*)?|\.\d+)$")


#: a border line of a grid drawn as a box: ``+--------+--------+``
_BORDER = re.compile(r"\s*\+[-=+]+\+\s*")
#: a row of a grid drawn under its name: ``| 0.7071 | 0 |``, ``[ 1  0 ]`` or bare numbers
_DRAWN_ROW = re.compile(r"\s*[|\[]?(?P<row>[^|\[\]]*(?:\|[^|\[\]]*)*?)[|\]]?\s*")


#: a line of column labels over a drawn grid: short names with a letter, no number alone ("  k1  k2  k3")
_LABELS = re.compile(r"\s*(?:[A-Za-z][\w₀-₉]{0,4}\s+){1,15}[A-Za-z][\w₀-₉]{0,4}\s*")
#: a row's label before the grid's left border ("q1 |", "t₂ |")
_ROW_LABEL = re.compile(r"^\s*[A-Za-z][\w₀-₉]{0,4}\s*(?=\|)")


def drawn_below(lines: list[str], k: int) -> tuple[str, tuple[int, ...]] | None:
    r"""The matrix drawn on the lines after line ``k`` (0-based) of a formula that ends in ``=`` (``S = QKᵀ/√2 =``):
    rows of numbers, bare, in brackets or in a box of ``|`` and ``+---+`` borders, up to the first other line; as
    LaTeX with the (0-based) lines of its rows, or None when no rows of equal length follow.

    >>> drawn_below(["S =", "  +---+---+", "  | 1 | 0.5 |", "  | 0 | 2 |", "  +---+---+", "next"], 0)
    ('\\begin{bmatrix} 1 & 0.5 \\\\ 0 & 2 \\end{bmatrix}', (2, 3))
    >>> drawn_below(["S + M =", "  | 0.7  -inf |"], 0) is None
    True
    >>> drawn_below(["S =", "", "      k1  k2", "q1 |   1   0 |", "q2 |   0   4 |"], 0)
    ('\\begin{bmatrix} 1 & 0 \\\\ 0 & 4 \\end{bmatrix}', (3, 4))
    """
    rows: list[list[str]] = []
    at: list[int] = []
    skipped = 0  # a blank line right after the formula, a line of column labels ("k1  k2  k3") before the rows
    for j, line in enumerate(lines[k + 1:k + 1 + 64], start=k + 1):
        if _BORDER.fullmatch(line):
            continue
        if not rows and skipped < 2 and (not line.strip() and j == k + 1 or _LABELS.fullmatch(line)):
            skipped += 1
            continue
        m = _DRAWN_ROW.fullmatch(_ROW_LABEL.sub("", line, count=1))  # "q1 |  1  0  1 |": the row's label is no entry
        row = _row(m.group("row").replace("|", " ")) if m and line.strip() else None
        if row is None:
            break
        rows.append(row)
        at.append(j)
    if not rows or len({len(r) for r in rows}) != 1:
        return None
    return "\\begin{bmatrix} " + " \\\\ ".join(" & ".join(r) for r in rows) + " \\end{bmatrix}", tuple(at)


def is_python(source: str) -> bool:
    """Does ``source`` parse as Python (never run)?  (the code reader's own parse)"""
    from ._statements import _parse

    return _parse(source) is not None


def _cuts(lines: list[str]) -> list[int]:
    """The columns where a side-by-side drawing is cut: after a gap of 3 spaces or more in every line, before a
    part that opens with ``name =`` on some line."""
    width = max((len(x) for x in lines), default=0)
    blank = [all(j >= len(x) or x[j] == " " for x in lines) for j in range(width)]
    cuts = []
    for j in range(3, width):
        if blank[j - 1] and blank[j - 2] and blank[j - 3] and not blank[j] and \
                any(_OPENS.match(x[j:]) for x in lines if len(x) > j and x[:j].strip()):
            cuts.append(j)
    return cuts


def _row(text: str) -> list[str] | None:
    cells = [c for c in re.split(r"[\s,]+", text.strip()) if c]
    return [c.replace("−", "-") for c in cells] if cells and all(_NUMBER.match(c) for c in cells) else None


#: where a line of plain formulas is cut into formulas: a semicolon, a gap of three spaces, a comma and two spaces
_BETWEEN = re.compile(r";|\s{3,}|,\s{2,}")


def _uncommented(line: str) -> tuple[str, str | None]:
    """The line and its MATLAB comment (from a ``%`` after a space: ``% (3 x 3) * (3 x 2) = 3 x 2``), or None."""
    parts = re.split(r"(?<=\s)%", line, maxsplit=1)
    return parts[0], parts[1] if len(parts) > 1 else None


def _cut(line: str) -> list[str]:
    """The line cut where :data:`_BETWEEN` matches outside brackets (``[1 0; 0 1]`` is one MATLAB matrix)."""
    parts, depth, start = [], 0, 0
    for m in re.finditer(r"[\[\]]|" + _BETWEEN.pattern, line):
        token = m.group(0)
        if token == "[" or token == "]":
            depth = max(0, depth + (1 if token == "[" else -1))
        elif depth == 0:
            parts.append(line[start:m.start()])
            start = m.end()
    return parts + [line[start:]]


def _formulas(line: str, alone: bool = False) -> list[str]:
    """The plain formulas of one line of the block (``q₁ = (1, 0), q₂ = (2, −1);   k₁ = (1, 1)``, ``q₁·k₁ = 1·1 +
    0·1 = 1           q₁·k₂ = 0.5``), each as LaTeX (:func:`.plain.formula_line`); a part with words is none.
    A part that opens a drawing (``p ≈ [0.6, 0.4]``) is one only ``alone`` (no row of a grid follows it)."""
    from .plain import formula_line

    out = []
    code, comment = _uncommented(line)
    code = re.sub(r"(?<=[\w)\]])'", "^T", code) if comment is not None or "'" in code else code
    for part in _cut(code) + ([comment] if comment else []):
        pieces = [part]
        if part.count("=") > 1 and re.search(r"\),\s*[^\W\d]", part):  # q₁ = (1, 0), q₂ = (2, −1): two bindings
            pieces = re.split(r"(?<=\)),\s*(?=[^\W\d])", part)
        out += [tex for x in pieces if x.strip() and (alone or not _FIRST.match(x))  # (a row of a drawing: no formula)
                and (tex := formula_line(x.strip())) is not None]
    return out


def plain_formulas(line: str) -> list[str]:
    """The formulas of one line of plain text written side by side (``W_Q = [1 0; 0 1]    W_K = [0 1; 1 0]``), cut
    at semicolons and wide gaps outside brackets, each as LaTeX."""
    return _formulas(line, alone=True)


def _lhs(text: str) -> str:
    """The left side as LaTeX: Unicode normalised, the words of the mathematics (head, softmax) as commands."""
    from .normalise import normalise
    from .plain import math_words

    return math_words(normalise(text.strip()))


def grids(source: str) -> list[tuple[int, str, bool, tuple[int, ...]]]:
    """``(line, tex, grid, rows)`` per named grid drawn in ``source`` (0-based line of its first row, the lines of its
    rows) and per plain formula of its other lines (no rows); [] for Python code."""
    lines = source.split("\n")
    if not any("=" in x or "≈" in x for x in lines) or is_python(source):
        return []
    found: list[tuple[int, int, str, bool, tuple[int, ...]]] = []
    groups: list[list[int]] = [[]]
    for k, line in enumerate(lines):  # runs of non-blank lines: each is cut on its own
        if line.strip():
            groups[-1].append(k)
        elif groups[-1]:
            groups.append([])
    for group in (g for g in groups if g):
        block = [lines[k] for k in group]
        edges = [0, *_cuts(block), max(len(x) for x in block)]
        for a, b in zip(edges, edges[1:], strict=False):
            column = [x[a:b] for x in block]
            i = 0
            while i < len(column):
                first = _FIRST.match(column[i])
                row = _row(first.group("row")) if first else None
                if first is None or row is None:
                    found += [(group[i], a, tex, False, ()) for tex in _formulas(column[i])]
                    i += 1
                    continue
                rows, j = [row], i + 1
                while j < len(column) and (nxt := _NEXT.match(column[j])) and (more := _row(nxt.group("row"))):
                    rows.append(more)
                    j += 1
                if len(rows) == 1:  # one row, no drawing: a plain formula (what the code reader read is its own)
                    found += [(group[i], a, tex, False, ()) for tex in _formulas(column[i], alone=True)]
                elif all(len(r) == len(rows[0]) for r in rows):
                    body = r" \\ ".join(" & ".join(r) for r in rows)
                    found.append((group[i], a, f"{_lhs(first.group('lhs'))} {first.group('op')} "
                                  rf"\begin{{bmatrix}} {body} \end{{bmatrix}}", True,
                                  tuple(group[k] for k in range(i, j))))
                i = j
    return [(line, tex, grid, rows) for line, _, tex, grid, rows in sorted(found)]
