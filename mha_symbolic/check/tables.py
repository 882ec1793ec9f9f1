r"""Markdown tables of numbers: which matrix a table holds, bound or compared row by row.

Explanation
===========

A table is read in one of three layouts:

* **columns of named matrices** -- headers ``W_Q^1[:,1]``, ``W_Q^1[:,2]``, ``W_K^1[:,1]`` ...: column ``j`` of
  each named matrix, one table row per matrix row;
* **a head column** -- a first header ``head`` and a second label (the query token): the rows of head
  ``k``'s matrix, in table order; the matrix is named by the caption (attention weights ``A``, scores
  ``S``, head outputs ``head``);
* **one matrix** -- every row a row of the matrix named by the caption (its first formula, ``$X$``,
  ``$W^O$``, ``$[\mathrm{head}_1, \mathrm{head}_2]$``, or a word: output, embeddings, attention weights,
  scores), or by headers ``head_1[1]`` ... (the concatenation).

An input the document has not given yet is bound (``given``, on each row); anything else is computed by
the engine with the document's givens and each row compared at the precision its numbers are written with.
"""

from __future__ import annotations

import re
from fractions import Fraction
from typing import Any

from sympy import ImmutableMatrix, Rational
from sympy import latex as sympy_latex

from ..errors import MHASymbolicError
from ..statements._base import agrees, shown
from .judge import _places, _value, judge
from .model import DocumentModel, never_given
from .numbers import _worst, numbers_only
from .read import top_level_split
from .softmax_tables import judge_softmax_table

__all__ = ["judge_table", "table_groups"]

_WORDS = [(r"attention weights?|weights|attention matrix|softmax", "A_{%s}"),
          (r"scaled scores?|scaled logits?", "S'_{%s}"), (r"scores?|logits?", "S_{%s}"),
          (r"head outputs?", r"\mathrm{head}_{%s}"), (r"concat", r"\mathrm{Concat}"),
          (r"\boutput\b|multi-?head", r"\mathrm{Output}"), (r"embedding|input|rows of \$?x", "X")]
_COLUMN = re.compile(r"\s*\$?(.*?(?:\S|\s(?=\$)))\$?\s*(?:\[\s*:\s*,\s*(\d+)\s*\]"
                     r"|(?:\(\s*)?(?:col(?:umn)?|colonne|columna|spalte)\.?\s*(\d+)\)?)\s*",
                     re.I)  # W_Q^1[:,1], $W_{Q,1}$ col 1


def table_groups(pieces: list[Any]) -> dict[int, list[Any]]:
    """Rows of one table, keyed by the index (in ``pieces``) of the table's last row."""
    groups: dict[int, list[Any]] = {}
    current: list[tuple[int, Any]] = []
    for k, p in enumerate(pieces):
        if p.kind != "table":
            continue
        if current and (p.columns != current[-1][1].columns or p.sentence != current[-1][1].sentence
                        or p.cell != current[-1][1].cell or p.line != current[-1][1].line + 1):
            groups[current[-1][0]] = [q for _, q in current]
            current = []
        current.append((k, p))
    if current:
        groups[current[-1][0]] = [q for _, q in current]
    return groups


def _numbers(p: Any) -> list[Any] | None:
    v = p.value
    if not isinstance(v, list) or not v or not all(isinstance(x, (int, float)) for x in v):
        return None
    return [Rational(str(x)) if isinstance(x, float) else x for x in v]


def _subject(caption: str, head: str | None) -> str | None:
    """The LaTeX name of the matrix a caption speaks of (``%s`` in it stands for the head)."""
    for m in re.finditer(r"\$([^$]+)\$", caption):
        name = m.group(1).strip()
        if re.fullmatch(r"[a-z]", name):  # an index or a size (i, n), not a matrix
            continue
        if re.fullmatch(r"[A-Za-z]+(?:\^\{?\w+(?!\w)\}?|_\{?\w+(?!\w)\}?)*|\[.*\]|\\mathrm\{\w+\}(?:_\{?\w+\}?)?",
                        name):  # (?!\w): \w+ gives nothing back (\w holds "_": A_1_1_1... was exponential)
            return name
    for pattern, name in _WORDS:
        if re.search(pattern, caption, re.I):
            return name
    return None


#: the label of a row that sums the rows above it, in the languages of the documents read
_TOTAL = re.compile(r"\b(?i:(sub|zwischen)?(?:total|summe)|sum|gesamt|insgesamt|somme|suma|soma|totale)\b")


def _cell_number(cell: str) -> int | None:
    """A cell that is one whole number as written (``**2,359,296**``, ``1 050 624``), else None."""
    bare = re.sub(r"[*_`$]", "", cell).strip()
    if not re.fullmatch(r"\d{1,3}(?:[,\u202f\u00a0 ]\d{3})+|\d+", bare):
        return None
    return int(re.sub(r"\D", "", bare))


def _totals(rows: list[Any], emit: Any) -> None:
    """A row labelled total (or subtotal) holds, in each column of whole numbers, the sum of the rows above it:
    since the last subtotal for a subtotal, since the last total (subtotals left out) for a total.  A column is
    summed only where every row above has a number in it, and a stated total smaller than one of its parts or
    more than twice their sum is no sum of them (another quantity in a table of sizes): it is left alone."""
    cells = [[c.strip() for c in p.text.split(" | ")] for p in rows]
    rounded = any((read := _amount(c)) is not None and read[1] > 0 for row in cells for c in row)  # decimals written
    parts: list[int] = []  # rows since the last total
    block: list[int] = []  # rows since the last subtotal or total
    for k, row in enumerate(cells):
        label = re.sub(r"[*_`$]", "", row[0]) if row else ""
        total = _TOTAL.search(label)
        if not total:
            parts.append(k)
            block.append(k)
            continue
        above = block if total.group(1) else parts
        verdicts = []
        for j in range(1, len(row)):
            stated = _cell_number(row[j])
            values = [_cell_number(cells[r][j]) if j < len(cells[r]) else None for r in above]
            if stated is None or len(values) < 2 or any(v is None for v in values):
                continue
            got = sum(v for v in values if v is not None)
            if stated < max(v for v in values if v is not None) or stated > 2 * got:
                continue
            if got != stated and rounded and 2 * abs(got - stated) <= len(values):
                continue  # 412 + 137 + 137 + 137 = 823 against 825 in a table of rounded figures: parts rounded
            verdicts.append((got == stated, got, stated))
        if verdicts:
            bad = next((v for v in verdicts if not v[0]), None)
            if bad:
                emit(rows[k], "wrong", f"the {len(above)} rows above it sum to {bad[1]:,}, not {bad[2]:,}",
                     f"{bad[1]:,}", "number", "computed")
            else:
                emit(rows[k], "correct", f"the sum of the {len(above)} rows above it", None, "number", "computed")
        block = []
        if not total.group(1):
            parts = []


def _local_cells(rows: list[Any], emit: Any) -> None:
    r"""The local computations a table writes, judged from its own cells (no model): a cell that is a chain of
    amounts (``5,120 B = 5 KiB``, ``2 \cdot 64 = 128``), and a column of formulas on numbers (``$4 \cdot 1024^2 + 4
    \cdot 1024$``) next to a column of numbers that every other row shows to be their values -- the row where
    it is not is ``wrong`` (learned from the table like :func:`_relations`: in two rows at least, all but one)."""
    from .prose_amounts import judge_prose_amounts

    cells = [[c.strip() for c in p.text.split(" | ")] for p in rows]
    for p, row in zip(rows, cells, strict=True):
        for cell in row:
            for status, message, expected, basis in judge_prose_amounts(cell):
                emit(p, status, f"{cell}: {message}", expected, "number", basis)
    width = len(cells[0]) if cells else 0
    if len(rows) < 3 or any(len(r) != width for r in cells):
        return
    formulas = {j: [_formula_value(r[j]) for r in cells] for j in range(width)}
    formulas = {j: v for j, v in formulas.items() if all(x is not None for x in v)}
    for a, values in formulas.items():
        for c in range(a + 1, width):
            stated = [_amount(re.sub(r"\s*\([^()]*\)\s*$", "", r[c])) for r in cells]
            if any(x is None for x in stated):
                continue
            fits = [x is not None and y is not None and (x == y[0] if not y[1] else abs(x - y[0]) <= Fraction(
                1, 2 * 10 ** y[1])) for x, y in zip(values, stated, strict=True)]
            if fits.count(False) > 1 or fits.count(True) < 2:
                continue
            for p, ok, x, row in zip(rows, fits, values, cells, strict=True):
                if ok:
                    emit(p, "correct", f"{row[a]} = {row[c]}, as in every row of the table", None, "number", "computed")
                else:
                    emit(p, "wrong", f"{row[a]} = {_shown_number(x or Fraction(0))}, not {row[c]} (every other row "
                         f"of the table gives the value of column {a + 1} in column {c + 1})",
                         _shown_number(x or Fraction(0)), "number", "computed")
            return


#: an operation or a function in a cell: a formula, whose value a cell after it may state (a bare number may not be
#: continued: | 512 | ≈ 22.6 | is a column of values, the second the standard deviation of the first)
_OPERATION = re.compile(r"\\(?:cdot|times|sqrt|frac|log|ln|exp)\b|[·×√+*/^]|(?<=\d)\s*-\s*(?=\d)")


def _continued_cells(doc: DocumentModel, rows: list[Any], emit: Any) -> None:
    r"""A cell that begins with a relation (``$\approx 0.693$``, ``= 8192``) continues the cell before it, as an
    ``align`` row continues the one above: the two are one chain, judged when it is arithmetic on written numbers
    (``\log 2 \approx 0.693``, ``2 \cdot 32 \cdot 128 = 8192``; no name, so no model)."""
    from . import scopes
    from .plain import holds_if_rounded
    from .read import chains

    for p in rows:
        cells = [c.strip().strip("`").strip() for c in p.text.split(" | ")]
        for before, cell in zip(cells, cells[1:], strict=False):
            tex = f"{before.strip('$ ')} {cell.strip('$ ')}"
            if not re.match(r"\$?\s*(?:=|≈|\\approx|\\simeq)", cell) or not _OPERATION.search(before) or \
                    not numbers_only(tex):
                continue
            for c in chains(tex):
                try:
                    got = judge(scopes.with_sizes(doc, {}), list(c.sides), list(c.ops), c.text)
                except (MHASymbolicError, ValueError, TypeError, ArithmeticError, RecursionError):
                    continue
                if got is not None and got[1][0] == "wrong" and holds_if_rounded(doc, list(c.sides), list(c.ops)):
                    continue  # e^{3.18} | ≈ 24.1: it holds if 3.18 was rounded (the prose says so: plain)
                if got is not None and got[1][0] in ("correct", "wrong"):
                    emit(p, got[1][0], f"{c.text}: {got[1][1]}", got[1][2], "number", got[1][3])


def _formula_value(cell: str) -> Fraction | None:
    r"""The exact value of a cell that is arithmetic on numbers with an operation in it (``$4 \cdot 768^2 + 4 \cdot
    768$``, ``2·24·64``), else None."""
    from .arithmetic import arithmetic_value

    bare = re.sub(r"(?<=\d)(?:\{,\}|,)(?=\d{3})", "", cell.strip().strip("`$*").strip())
    if not any(op in bare for op in ("\\cdot", "\\times", "·", "×", "*", "+", "^")):
        return None  # a number, not a formula (a name in it is refused by the reader: no size is given to it)
    try:
        return Fraction(arithmetic_value(bare, {}))
    except (ValueError, ZeroDivisionError, TypeError, RecursionError):
        return None


def _relations(rows: list[Any], emit: Any) -> bool:
    """Columns a table computes from two others (``total = weights + biases``, ``ratio = core / projections``,
    ``params = d_model x 4``), learned from the table itself: a relation ``c = a op b`` (op one of + - x /; the
    column ``c`` right of ``a`` and ``b``, as a table writes what it computes after what it computes it from) that holds
    in every row, at the precision its cells are written, makes each row ``correct``; one that holds in every row but
    one, and in two rows at least (three for a column of small whole numbers), while no other relation holds for
    that column in every row, makes that row ``wrong``.  Only cells of one number (or of one amount in a binary
    unit) are read (``524,288 (512 KiB)`` as its first), rows labelled total are left to :func:`_totals`, a column
    of ones or with a zero takes part in nothing, and a relation of small numbers only (all below 100: the entries
    of a matrix, where a sum may hold by chance) is none.  True when a relation was found."""
    cells = [[c.strip() for c in p.text.split(" | ")] for p in rows]
    width = len(cells[0]) if cells else 0
    if len(rows) < 3 or any(len(r) != width for r in cells):
        return False
    labelled = [bool(_TOTAL.search(re.sub(r"[*_`$]", "", r[0]))) for r in cells]
    read = [[_span(re.sub(r"\s*\([^()]*\)\s*$", "", c)) for c in r] for r in cells]
    spans: dict[int, list[tuple[Fraction, Fraction]]] = {}
    for j in range(width):
        column = [read[k][j] for k in range(len(rows)) if not labelled[k]]
        if all(v is not None and v[0] != 0 for v in column) and {v[0] for v in column if v} != {1}:
            spans[j] = [(v[1], v[2]) for v in column if v is not None]
    kept = [k for k in range(len(rows)) if not labelled[k]]
    # a column of small whole numbers (layers, heads) agrees with a ratio of sizes in two rows by chance easily
    # (768/64 = 12, 4096/128 = 32): a row is judged against it only when three others agree
    counts = {j: all(lo == hi and lo.denominator == 1 and lo < 100 for lo, hi in spans[j]) for j in spans}
    verdicts: dict[int, tuple[str, str]] = {}
    for c in spans:
        holding: list[str] = []
        failing: list[tuple[str, int, Fraction, Fraction]] = []
        for a in spans:
            for b in spans:
                if len({a, b, c}) < 3 or c < max(a, b) or max(hi for j in (a, b, c) for _, hi in spans[j]) < 100:
                    continue  # a computed column stands right of what it is computed from
                for op in "+-*/":
                    if op in "+*" and a > b:
                        continue
                    got = [_apply(op, spans[a][k], spans[b][k]) for k in range(len(kept))]
                    name = f"{_header(rows, c)} = {_header(rows, a)} {op.replace('*', 'x')} {_header(rows, b)}"
                    _fit(name, got, spans[c], 3 if counts[c] else 2, holding, failing)
                    if op == "*" and not counts[c]:  # bytes = L x d_model x 4: a product and a unit's factor
                        for factor in _UNIT_FACTORS:
                            scaled = [(lo * factor, hi * factor) for lo, hi in got]
                            _fit(f"{name} x {factor}", scaled, spans[c], 3, holding, failing)
        parts = [a for a in spans if a < c and not counts[a]]  # a row's total: every amount to its left summed
        if len(parts) >= 3 and not counts[c] and max(hi for j in (*parts, c) for _, hi in spans[j]) >= 100:
            zero = Fraction(0)
            got = [(sum((spans[a][k][0] for a in parts), zero), sum((spans[a][k][1] for a in parts), zero))
                   for k in range(len(kept))]
            _fit(f"{_header(rows, c)} = {' + '.join(_header(rows, a) for a in parts)}", got, spans[c], 2, holding,
                 failing)
        labels = [re.escape(re.sub(r"[*_`$]", "", cells[kept[k]][0]).strip() or "@") for k in range(len(kept))]
        named = [k for k in range(len(kept)) if spans[c][k][0] <= 1 <= spans[c][k][1] and re.search(
            rf"(?<![\w-]){labels[k]}(?![\w-])", _header(rows, c))]
        for r in named[:1]:  # "ratio to MHA": each row's amount over the MHA row's, the row the header names (1 there)
            for a in (a for a in spans if a < c and not counts[a] and spans[a][r][0] > 0):
                got = [_apply("/", spans[a][k], spans[a][r]) for k in range(len(kept))]
                _fit(f"{_header(rows, c)} = {_header(rows, a)} / {_header(rows, a)} of {cells[kept[r]][0]}", got,
                     spans[c], 2, holding, failing)
        for factor in {int(x) for x in re.findall(r"(?<![\d.,])\d+(?![\d.,])", _header(rows, c))} - {0, 1}:
            for a in (a for a in spans if a < c and not counts[a]):  # "x 28 layers": the factor its header writes
                got = [_apply("*", spans[a][k], (Fraction(factor), Fraction(factor))) for k in range(len(kept))]
                _fit(f"{_header(rows, c)} = {_header(rows, a)} x {factor}", got, spans[c], 2, holding, failing)
        for a in spans:  # KiB = bytes / 1024, fp32 = fp16 x 2: one column and a unit's factor, three rows agreeing
            if a >= c or counts[a] or counts[c] or max(hi for j in (a, c) for _, hi in spans[j]) < 100:
                continue
            for factor in _UNIT_FACTORS:
                for op in "*/":
                    got = [_apply(op, spans[a][k], (Fraction(factor), Fraction(factor))) for k in range(len(kept))]
                    _fit(f"{_header(rows, c)} = {_header(rows, a)} {op.replace('*', 'x')} {factor}", got, spans[c], 3,
                         holding, failing)
        for k in range(len(kept)):
            if holding:
                verdicts.setdefault(kept[k], ("correct", f"{holding[0]}, as in every row of the table"))
        if not holding:
            for name, k, lo, hi in failing:
                value = lo if lo == hi else (lo + hi) / 2
                verdicts[kept[k]] = ("wrong", f"{name} in every other row of the table; here it gives "
                                              f"{_shown_number(value)}, not {cells[kept[k]][c]}")
    for k, (status, message) in sorted(verdicts.items()):
        emit(rows[k], status, message, None, "number", "computed")
    return bool(verdicts)


#: the factors a table converts amounts by: bytes per element (2, 4, 8), binary and decimal units
_UNIT_FACTORS = (2, 4, 8, 1000, 1024, 1000**2, 1024**2, 1000**3, 1024**3)


def _fit(name: str, got: list[tuple[Fraction, Fraction]], column: list[tuple[Fraction, Fraction]], agreeing: int,
         holding: list[str], failing: list[tuple[str, int, Fraction, Fraction]]) -> None:
    """Record the relation ``name`` (its value in each row, ``got``) as holding in every row of ``column``, or as
    failing in one row while at least ``agreeing`` others agree."""
    fits = [lo <= column[k][1] and column[k][0] <= hi for k, (lo, hi) in enumerate(got)]
    if all(fits):
        holding.append(name)
    elif fits.count(False) == 1 and fits.count(True) >= agreeing:
        k = fits.index(False)
        failing.append((name, k, *got[k]))


def _span(cell: str) -> tuple[Fraction, Fraction, Fraction] | None:
    """A cell of one number as written, or of one amount of memory in a binary unit (``3 KiB``, ``5,120 B = 5 KiB``:
    its first), as (value, lowest, highest) of what it stands for, in bytes for an amount; else None."""
    from .units import _BINARY

    read = _written(cell)
    if read is None:
        return None
    value, places, unit = read
    factor = _BINARY.get(unit or "B", 1)
    half = Fraction(1, 2 * 10 ** places) if places else Fraction(0)
    return value * factor, (value - half) * factor, (value + half) * factor


def _written(cell: str) -> tuple[Fraction, int, str | None] | None:
    """A cell of one number as written (``2,048``, ``2.5``, ``**512**``), optionally followed by a binary unit of
    memory and what it equals (``5,120 B = 5 KiB``): its value, its decimals and its unit; else None."""
    bare = re.sub(r"[*_`$]", "", cell).strip()
    m = re.fullmatch(r"(\d{1,3}(?:,\d{3})+|\d+)(?:\.(\d+))?(?:\s*(bytes?|B|KiB|MiB|GiB|TiB)(?:\s*=.*)?)?", bare)
    if not m:
        return None
    return Fraction(m.group(1).replace(",", "") + "." + (m.group(2) or "0")), len(m.group(2) or ""), m.group(3)


def _apply(op: str, x: tuple[Fraction, Fraction], y: tuple[Fraction, Fraction]) -> tuple[Fraction, Fraction]:
    """``x op y`` for two intervals of positive numbers."""
    if op == "+":
        return x[0] + y[0], x[1] + y[1]
    if op == "-":
        return x[0] - y[1], x[1] - y[0]
    if op == "*":
        return x[0] * y[0], x[1] * y[1]
    return x[0] / y[1], x[1] / y[0]


def _header(rows: list[Any], j: int) -> str:
    cols = rows[0].columns
    return re.sub(r"[*`$\\{}]", "", cols[j]).strip() if j < len(cols) and cols[j].strip() else f"column {j + 1}"


def _shown_number(x: Fraction) -> str:
    return f"{int(x):,}" if x.denominator == 1 else f"{float(x):.6g}"


def judge_table(doc: DocumentModel, rows: list[Any], emit: Any) -> None:
    """Bind or compare the matrices a table holds; one finding per row."""
    cols = [c.strip() for c in rows[0].columns]
    if judge_softmax_table(rows, emit):  # scores and their weights: judged from the table's own cells
        return
    _local_cells(rows, emit)  # "5,120 B = 5 KiB" in a cell, and a column of formulas on numbers: no model needed
    _continued_cells(doc, rows, emit)  # | $\log 2$ | $\approx 0.693$ |: a relation split over two cells
    if _by_own_formula(doc, rows, emit):
        return
    _totals(rows, emit)  # a total row: the sum of the rows above it, column by column
    if _amounts_table(doc, rows, emit) or _variant_columns(doc, rows, emit) or _variant_rows(doc, rows, emit):
        return
    if _configurations(doc, rows, emit):
        return
    if _sizes_table(doc, rows, emit):
        return
    if _shapes_table(doc, rows, emit):
        return
    if _relations(rows, emit):  # a column computed from two others, as the other rows compute it
        return
    numbers = [_numbers(p) for p in rows]
    if any(n is None for n in numbers) or len({len(n or []) for n in numbers}) != 1:
        return
    width = len(numbers[0] or [])
    refs = [_COLUMN.fullmatch(c) for c in cols[-width:]] if len(cols) >= width else []
    if refs and all(refs):
        by_name: dict[str, dict[int, list[Any]]] = {}
        for k, m in enumerate(refs):
            assert m is not None
            by_name.setdefault(m.group(1), {})[int(m.group(2) or m.group(3))] = [n[k] for n in numbers if n is not None]
        for named, columns in by_name.items():
            order = sorted(columns)
            M = ImmutableMatrix([[columns[j][r] for j in order] for r in range(len(rows))])
            _matrix(doc, named, M, rows, emit)
        return
    if cols and cols[0].lower() in ("head", "kopf", "cabeza") and all("|" in (p.name or "") for p in rows):
        heads: dict[str, list[int]] = {}
        for r, p in enumerate(rows):
            heads.setdefault((p.name or "").split("|")[0].strip(), []).append(r)
        for head, where in heads.items():
            per_head = _subject(rows[0].sentence or "", head)
            if per_head is None or "%s" not in per_head or not head.isdigit():
                continue
            M = ImmutableMatrix([numbers[r] for r in where])
            _matrix(doc, per_head % head, M, [rows[r] for r in where], emit)
        return
    name: str | None = None
    if all(re.fullmatch(r"\$?\\?(?:mathrm\{)?head\}?_\{?\d+\}?\$?\[\d+\]", c) for c in cols[-width:]):
        name = r"\mathrm{Concat}"
    name = name or _subject(rows[0].sentence or "", None)
    if name is None or "%s" in name:
        return
    _matrix(doc, name, ImmutableMatrix([n for n in numbers if n is not None]), rows, emit)


def _matrix(doc: DocumentModel, name: str, M: ImmutableMatrix, rows: list[Any], emit: Any) -> None:
    """Bind ``name = M`` (an input) or compare ``M`` with the engine's value, row by row."""
    try:
        subject = doc.read(name)
    except (MHASymbolicError, ValueError, TypeError):
        return
    key = str(subject) if hasattr(subject, "name") else None
    is_input = key is not None and (key in ("X", "W_O") or "^" in key)
    if is_input and key not in doc.values:
        got = judge(doc, [name, sympy_latex(M)], ["eq"], rows[0].text)
        if got is not None:
            for p in rows:
                emit(p, got[1][0], f"row of {name}: " + got[1][1], None, got[0], got[1][3])
        return
    try:
        V = _value(doc, subject)
    except MHASymbolicError as e:  # the engine could not compute it: no verdict on the table
        for p in rows:
            emit(p, "unchecked", f"{name} is not computed: {str(e).splitlines()[0][:160]}", None, "number", "")
        return
    if any(not x.is_number for x in V):
        for p in rows:
            emit(p, "assumed", never_given(name, V), None, "number", "computed")
        return
    if V.shape != M.shape:
        for p in rows:
            emit(p, "wrong", f"{name} is {V.rows} x {V.cols}; the table has {M.rows} x {M.cols}",
                 f"{V.rows} x {V.cols}", "number", "computed")
        return
    for r, p in enumerate(rows):
        places = _places(p.text)
        got_row, said = list(V.row(r)), list(M.row(r))
        at = "" if places is None else f" at {places} decimals"
        if all(agrees(x, y, places) for x, y in zip(got_row, said, strict=True)):
            emit(p, "correct", f"row {r + 1} of {name} = {shown(ImmutableMatrix([got_row]), places)} computed "
                 f"exactly; agrees{at}", None, "number", "computed")
        else:
            emit(p, "wrong", f"row {r + 1} of {name} = {shown(ImmutableMatrix([got_row]), places)} computed exactly;"
                 f" the table says [{', '.join(str(x) for x in p.value)}]{at}",
                 shown(ImmutableMatrix([got_row]), places), "number", "computed")


#: what a sizes table's label says a row counts, which outranks its letter (``$L$ | decoder layers``, ``$D$ | head
#: dimension``); "layers" and the like are no size of the model
_MEANINGS = [(r"\bper\s+(?:kv|key|k/v|query|token|layer|group)|\bratio\b|\bgroup\s+size\b", "skip"),
             (r"\blayers?\b", "layers"), (r"\bbatch\b|\bmax(?:imum)?\b|\bbytes?\b|\bdtype\b|\bvocab", "skip"),
             (r"\b(?:key[-/ ]?value|kv|k/v)\s+heads?\b|\bkv[-_ ]heads\b", "g"),
             (r"\bheads?\s+(?:dim(?:ension)?|size|width)\b|\bper[- ]head\b|\bhead_dim\b", "d_k"),
             (r"\b(?:query\s+)?heads\b|\bnumber\s+of\s+heads\b", "h"),
             (r"\bmodel\s+(?:width|dim(?:ension)?|size)\b|\bhidden\s+(?:size|dim(?:ension)?)\b|\bembedding\s+"
              r"(?:size|dim(?:ension)?|width)\b|\bd_?model\b", "d_model"),
             (r"\b(?:sequence|context)\s+length\b|\btokens\b|^\s*context\s*$", "n")]


def _column_size(header: str) -> str | None:
    """The size a column header names: its words first (``g (KV heads)``, ``layers L``), else its letter
    (``$d_{model}$``, ``h``); None for another column (a label, bytes, a ratio)."""
    from .model import dim_name

    words = re.sub(r"\$[^$]*\$", " ", header).lower()
    meaning = next((size for pattern, size in _MEANINGS if re.search(pattern, words)), None)
    if meaning is not None:
        return None if meaning == "skip" else meaning
    sizes = {dim_name(t) for t in re.findall(r"[A-Za-z][\w{}\\]*", header.replace("$", " "))} - {None}
    return sizes.pop() if len(sizes) == 1 else None


def _configurations(doc: DocumentModel, rows: list[Any], emit: Any) -> bool:
    """A table of configurations: a label, then only columns headed by sizes (``| Config | L | d_model | h | g |
    d_k |``), one configuration per row.  A row is a scope of its own: its sizes bind nothing outside it, and are
    judged against each other by what holds in every configuration -- ``d_k = d_model / h`` where the document says
    so, ``g`` dividing ``h`` -- so a row of another model is never compared with the document's example.  True when
    the table is one (at least three columns of distinct sizes, two of them the model's)."""
    cols = [c.strip() for c in rows[0].columns]
    sizes = [_column_size(c) for c in cols]
    named = [s for s in sizes if s is not None]
    if len(named) < 3 or len(set(named)) != len(named) or len(set(named) - {"layers"}) < 2:
        return False
    if any(size is None for size in sizes[1:]):
        return False  # other columns than the label and the sizes (bytes, totals): the table's other readers judge it
    for p in rows:
        cells = [c.strip() for c in p.text.split(" | ")]
        if len(cells) != len(cols):
            continue
        row = {s: _cell_number(cells[j]) for j, s in enumerate(sizes) if s is not None}
        if any(v is None for v in row.values()):
            emit(p, "unchecked", "a configuration whose sizes are not all whole numbers", None, "number", "")
            continue
        checks: list[str] = []
        bad: tuple[str, str | None] | None = None
        dm, h, dk, g = (row.get(k) for k in ("d_model", "h", "d_k", "g"))
        if dm is not None and h and dk is not None and not doc.own_width:
            checks.append(f"d_k = d_model / h = {dm}/{h}")
            if dk * h != dm:
                bad = (f"d_k is d_model / h = {dm}/{h} = {Rational(dm, h)} in this row, not {dk}", str(Rational(dm, h)))
        if h and g is not None and bad is None:
            checks.append(f"g = {g} divides h = {h}")
            if g < 1 or h % g:
                bad = (f"g = {g} key/value heads cannot be shared evenly by h = {h} query heads", None)
        if bad is not None:
            emit(p, "wrong", bad[0], bad[1], "number", "computed")
        elif checks:
            emit(p, "correct", "a configuration of its own (binds nothing outside its row): " + "; ".join(checks),
                 None, "number", "computed")
        else:
            emit(p, "given", "a configuration of its own: its sizes bind nothing outside its row", None, "setting",
                 "")
    return True


def _sizes_table(doc: DocumentModel, rows: list[Any], emit: Any) -> bool:
    """A table of sizes (``| heads | $h$ | 3 |``, ``| $D$ | model width | 4,096 |``): each row with one number
    and a label naming a size is an equation ``size = number`` (bound the first time, compared after); what the
    label's words say a row counts outranks its letter (``$L$ | decoder layers`` counts layers, not tokens), and
    rows of other things (a dtype, a batch) are passed over.  True when at least two rows are sizes and every row
    is a size or passed over."""
    from .model import dim_name

    found = []
    for p in rows:
        labels = (p.name or "").split("|")
        values = p.value if isinstance(p.value, list) else None
        if values is None and p.text:
            m = re.fullmatch(r"\s*\**\s*(\d{1,3}(?:,\d{3})+|\d+)\s*\**\s*(?:\(.*\))?\s*",
                             p.text.split("|")[-1])  # "128 ($= D/h$)" a size; "2 GiB" an amount
            values = [int(m.group(1).replace(",", ""))] if m else None
        words = re.sub(r"\$[^$]*\$", " ", " ".join(x for x in labels if not re.match(r"\s*\d", x))).lower()
        meaning = next((size for pattern, size in _MEANINGS if re.search(pattern, words)), None)
        if re.search(r"\bbatch\b", words) and re.fullmatch(r"\s*\$?([A-Za-z])\$?\s*", labels[0]):
            doc.memory["batch_name"] = re.sub(r"\W", "", labels[0])  # the batch's letter: its sizes are batches
        if meaning in ("skip", "layers") or not values or len(values) != 1 or not isinstance(values[0], int):
            if meaning == "layers" and values and isinstance(values[0], int):
                found.append((p, "layers", values[0]))
            elif meaning is None and values and re.search(r"\$", p.name or ""):
                return False  # a named row of another kind: not a sizes table
            continue
        names = [re.sub(r"^\$|\$$", "", x.strip()) for x in labels]
        spelled = next((x for x in reversed(names) if x and dim_name(x.split("=")[0].strip())), None)
        if spelled is None and meaning is None:
            return False
        same = spelled is not None and (meaning is None or dim_name(spelled.split("=")[0].strip()) == meaning)
        found.append((p, spelled if same and spelled is not None else str(meaning), values[0]))
    if sum(1 for _, what, _ in found if what != "layers") < 2:
        return False
    for p, spelled, value in found:
        if spelled == "layers":
            letter = re.sub(r"^\$|\$$", "", (p.name or "").split("|")[0].strip())
            doc.memory["layers"] = value
            if re.fullmatch(r"[A-Za-z]", letter):
                doc.memory["layer_name"] = letter
            emit(p, "given", f"the number of layers ({value})", None, "setting", "")
            continue
        sides = [x.strip() for x in spelled.split("=")] + [str(value)]
        said = _row_variants(p) if dim_name(sides[0]) == "g" else []
        if len({v.kind for v in said}) == 1 and (said[-1].kind != "gqa" or said[-1].kv_heads is not None):
            # "| KV heads (MQA) | h_kv | 1 |": the key/value heads of a variant that fixes them (MHA: h, MQA: 1,
            # GQA-8: 8); a row of plain GQA gives the document's own g
            from types import SimpleNamespace

            from .pipeline import _judge_variant

            verdict = _judge_variant(doc, said[-1], SimpleNamespace(sides=sides))
            if verdict is not None:
                emit(p, verdict[0], verdict[1], None, "setting", "")
                continue
        got = judge(doc, sides, ["eq"] * (len(sides) - 1), p.text)
        if got is not None:
            emit(p, got[1][0], got[1][1], got[1][2], got[0], got[1][3])
    return True


def _row_variants(p: Any) -> list[Any]:
    """The variants of attention a row's label cells name (the grammar's ``variant``): the row is said of them."""
    from .prose import variants

    return [v for _, v in variants(re.sub(r"[`$*|]", " ", p.name or ""))]


#: a column header that names the shape of the row's object (in the languages the corpora use)
_SHAPE_HEADER = re.compile(r"\b(?:shapes?|dimensions?|dims?|forme|forma|form|gr[öo](?:ß|ss)e|tama[ñn]o|dimensi[óo]n)\b",
                           re.I)
#: a shape cell: ``$2 \times 3$``, ``(n, d_k)``, ``n x d_model``; two sizes, no more
_SHAPE_CELL = re.compile(r"\(?\s*([^,()×$`]+?)\s*(?:\\times|×|\bx\b|,)\s*([^,()×$`]+?)\s*\)?")


def _shapes_table(doc: DocumentModel, rows: list[Any], emit: Any) -> bool:
    r"""A table of shapes: a column headed "shape" (or "dimensions", "forme", ...) and, to its left, a column whose
    cells are formulas naming the row's objects (``$Q_i, K_i, V_i$``, ``$S_i = K_i^\top Q_i$``, ``$W^O [H_1;
    H_2]$``).  Each row states that its objects (the left side of an equation, or each of a list) have the shape in
    its shape cell, judged like ``Q_i \in \mathbb{R}^{2 \times 3}`` written in the text; a shape of more than two
    sizes (a batch) is passed over.  True when the table is one."""
    cols = [c.strip() for c in rows[0].columns]
    at = next((j for j, c in enumerate(cols) if _SHAPE_HEADER.search(re.sub(r"\$[^$]*\$", " ", c))), None)
    if at is None or at == 0:
        return False
    for p in rows:
        cells = [c.strip() for c in p.text.split(" | ")]
        if len(cells) != len(cols):
            continue
        traced = _traced_cell(doc, cells[at - 1], cells[at])
        if traced is not None:  # | scores | `q @ k.transpose(-2, -1)` | `(2, 8, 16, 16)` |: the code's own trace
            emit(p, *traced, "shape", "traced")
            continue
        shape = _SHAPE_CELL.fullmatch(cells[at].strip("$` "))
        named = next((re.findall(r"\$([^$]+)\$", cells[j]) for j in range(at - 1, -1, -1) if "$" in cells[j]), [])
        if not named and _plain_cell(cells[at - 1]) is not None:  # | scores | Q_i K_iᵀ / √64 | 16 × 16 |
            named = [_plain_cell(cells[at - 1]) or ""]
        if shape is None or not named:
            continue
        objects = [x.strip() for x in top_level_split(named[0].split("=")[0]) if x.strip()]
        space = r"\mathbb{R}^{%s \times %s}" % (shape.group(1).strip(), shape.group(2).strip())
        verdicts = [judge(doc, [x, space], ["in"], p.text) for x in objects]
        got = [v for v in verdicts if v is not None]
        if got:
            status, message, expected, basis = _worst([v[1] for v in got])
            emit(p, status, message, expected, "shape", basis)
    return True


#: a shape cell written as a tuple of sizes (``(2, 8, 16, 64)``, ``torch.Size([2, 8, 16, 64])``)
_TUPLE_CELL = re.compile(r"[`$\s]*(?:torch\.Size\(\[|\(|\[)\s*(\d+(?:\s*,\s*\d+)*)\s*,?\s*(?:\]\)|\)|\])[`$\s]*")


def _traced_cell(doc: DocumentModel, code: str, shape: str) -> tuple[str, str, str | None] | None:
    """The verdict on a row whose cell of code (``q @ k.transpose(-2, -1)``, ```W_k(x)`, `W_v(x)```) is said to
    give the shape in its shape cell: each expression is traced (never run) in what the document's code defined
    before the table; None when the cell is no code or a name it uses is not traced."""
    import ast

    from .tracing import CodeError, Tensor, Unknown

    tracer, stated = doc.memory.get("tracer"), _TUPLE_CELL.fullmatch(shape)
    expressions = re.findall(r"`([^`]+)`", code)
    if tracer is None or stated is None or not expressions:
        return None
    said = tuple(int(x) for x in re.findall(r"\d+", stated.group(1)))
    got = []
    for text in expressions:
        try:
            tree = ast.parse(text.strip(), mode="eval").body
        except (SyntaxError, ValueError):
            return None
        # a name the code gave several values (k, then k = k.repeat_interleave(...)) may be any of them here: the
        # expression is traced with each (four readings at most), and judged against the shapes it can have
        names = sorted({n.id for n in ast.walk(tree)
                        if isinstance(n, ast.Name) and len(tracer.history.get(n.id, ())) > 1})
        readings = [dict(tracer.env)]
        for name in names:
            readings = [r | {name: v} for r in readings for v in tracer.history[name]]
        if len(readings) > 4:
            return None
        shapes = set()
        for env in readings:
            try:
                value = tracer.expr(tree, env)
            except (Unknown, CodeError, ValueError, TypeError, KeyError, AttributeError, IndexError, RecursionError):
                continue  # (k of before the repeat against q of after: a reading whose shapes cannot work)
            if isinstance(value, Tensor) and value.known():
                shapes.add(tuple(int(x) for x in value.shape))
        if not shapes:
            return None
        got.append((text, shapes))
    bad = [(text, shapes) for text, shapes in got if said not in shapes]
    if bad:
        shown = " or ".join(map(str, sorted(bad[0][1])))
        return "wrong", f"the code gives {bad[0][0]} the shape {shown}, not {said}", shown
    return "correct", f"the code gives {', '.join(text for text, _ in got)} the shape {said}", None


def _plain_cell(cell: str) -> str | None:
    """A cell that is a formula in plain text or Unicode (``Q_i K_iᵀ / √64``, ``A_i = softmax(scores), rows sum to
    1``: up to the first comma followed by words) as LaTeX, or None when it holds other words."""
    from .plain import _VOCABULARY, math_words
    from .read import normalise

    text = re.split(r",\s+(?=[A-Za-z]{3,})", cell.strip("`* "), maxsplit=1)[0]
    tex = normalise(text)
    words = re.findall(r"[A-Za-z]{3,}", re.sub(r"\\[A-Za-z]+|d_\{model\}", " ", tex))
    if not tex or any(w.lower() not in _VOCABULARY for w in words):
        return None
    return math_words(tex)




#: a column of amounts of memory, per token or per sequence: ``bytes / token``, ``MiB per sequence``, ``GiB/seq``
_AMOUNT_COLUMN = re.compile(r"^\s*(?P<unit>bytes?|B|[KMGT]i?B|kB)\s*(?:/|per)\s*(?:(?P<count>\d[\d,]*)[- ]tokens?\s+)?"
                            r"(?P<per>token|seq(?:uence)?|request)s?\b", re.I)


def _amount(cell: str) -> tuple[Fraction, int] | None:
    """A cell that is one number as written (``2,048``, ``2.5``, ``**512**``) and its decimals, else None."""
    read = _written(cell)
    return (read[0], read[1]) if read is not None and read[2] is None else None


def _amounts_table(doc: DocumentModel, rows: list[Any], emit: Any) -> bool:
    r"""A table of KV-cache amounts: a label, columns of sizes (layers ``L``, key/value heads ``g``, ``d_head``, the
    context) and columns of memory per token or per sequence in units (``bytes / token``, ``KiB / token``,
    ``MiB / sequence``).  Each row is a configuration of its own, judged from its own cells: the amounts of one
    kind agree in every unit (at the precision each is written; KB, MB, GB read as powers of 1000 or of 1024), a
    sequence holds the context's tokens, and the bytes per token are ``2 L g d_head`` values (keys and values) at
    the bytes per value the document states (fp16: 2).  True when the table is one (two amount columns at least)."""
    from .units import _BINARY, _DECIMAL

    cols = [c.strip() for c in rows[0].columns]
    amounts = {j: m for j, c in enumerate(cols) if (m := _AMOUNT_COLUMN.match(re.sub(r"[`$*]", "", c)))}
    if len(amounts) < 2:
        return False
    sizes = {j: _column_size(c) for j, c in enumerate(cols) if j not in amounts}
    layers_of = {}  # the layers an amount column counts when its header says: "/ layer" (1), "(32 layers)" (32)
    for j, m in amounts.items():
        rest = re.sub(r"[`$*]", "", cols[j])[m.end():]
        counted = re.search(r"(?:/|\bper)\s*layer\b|\b(\d+)\s+layers\b", rest, re.I)
        if counted:
            layers_of[j] = int(counted.group(1) or 1)
    for p in rows:
        cells = [c.strip() for c in p.text.split(" | ")]
        if len(cells) != len(cols):
            continue
        known_layers = {size: _cell_number(cells[j]) for j, size in sizes.items() if size == "layers"}
        all_layers = known_layers.get("layers") or doc.memory.get("layers") or \
            next((v for v in layers_of.values() if v > 1), None)
        per_token: list[tuple[str, list[tuple[Fraction, Fraction]]]] = []  # (column, readings as byte ranges)
        per_sequence: list[tuple[str, list[tuple[Fraction, Fraction]]]] = []
        L = None  # the layers the row's amounts count (below)
        lengths = {int(m.group("count").replace(",", "")) for m in amounts.values() if m.group("count")}
        for j, m in amounts.items():
            got = _amount(cells[j])
            if got is None:
                continue
            value, places = got
            unit = next((u for u in (*_BINARY, *_DECIMAL) if u.lower() == m.group("unit").lower()), "bytes")
            factors = [_BINARY[unit]] if unit in _BINARY else [1000 ** _DECIMAL[unit], 1024 ** _DECIMAL[unit]]
            half = Fraction(1, 2 * 10 ** places)
            per = layers_of.get(j)  # "bytes / token / layer": one layer's amount, counted here as every layer's
            scale = Fraction(1) if per is None else Fraction(all_layers or 0, per) if all_layers else None
            if scale is None:
                continue  # a per-layer amount where the document never says how many layers there are
            ranges = [((value - half) * f * scale, (value + half) * f * scale) for f in factors]
            (per_token if m.group("per").lower() == "token" else per_sequence).append((cols[j], ranges))
        known = {size: _cell_number(cells[j]) for j, size in sizes.items() if size is not None}
        exact: list[tuple[str, Fraction]] = []  # amounts per token computed from the row's sizes
        whole = doc.known_dims()  # what the table's columns do not say, the document's own model does
        L = all_layers
        g = known.get("g") or known.get("n_kv") or (whole.get("g") if "g" not in sizes.values() else None)
        width, b = known.get("d_k") or whole.get("d_k"), doc.memory.get("bytes")
        if L and g and width and b:
            exact.append((f"2 L g d_head at {b} bytes per value = 2 * {L} * {g} * {width} * {b}",
                          Fraction(2 * L * g * width * b)))
        tokens = known.get("n") or (lengths.pop() if len(lengths) == 1 else None)  # "MiB per 4096-token sequence"
        checks: list[str] = []
        bad: str | None = None

        def fits(ranges: list[tuple[Fraction, Fraction]], x: Fraction) -> bool:
            return any(lo <= x <= hi for lo, hi in ranges)

        def meet(a: list[tuple[Fraction, Fraction]], b: list[tuple[Fraction, Fraction]]) -> bool:
            return any(lo1 <= hi2 and lo2 <= hi1 for lo1, hi1 in a for lo2, hi2 in b)

        for name, x in exact:
            for col, ranges in per_token:
                checks.append(f"{col}: {name}")
                if bad is None and not fits(ranges, x):
                    one = layers_of.get(cols.index(col))  # a column of fewer layers: its share of the amount
                    share = f" for {one} layer{'s' if one > 1 else ''}: {x * one / L}" if one and L and one != L else ""
                    bad = f"{col} is {name} = {x} bytes{share}, not {cells[cols.index(col)]}"
        for group in (per_token, per_sequence):
            for (c1, r1), (c2, r2) in zip(group, group[1:], strict=False):
                checks.append(f"{c1} = {c2}")
                if bad is None and not meet(r1, r2):
                    bad = f"{c1} ({cells[cols.index(c1)]}) and {c2} ({cells[cols.index(c2)]}) are not the same amount"
        if tokens and per_token and per_sequence:
            (c1, r1), (c2, r2) = per_token[0], per_sequence[0]
            checks.append(f"{c2} = {c1} x {tokens} tokens")
            scaled = [(lo * tokens, hi * tokens) for lo, hi in r1]
            if bad is None and not meet(scaled, r2):
                bad = f"{c2} is {tokens} tokens of {cells[cols.index(c1)]} {c1}, not {cells[cols.index(c2)]}"
        if bad is not None:
            emit(p, "wrong", bad, None, "number", "computed")
        elif checks:
            emit(p, "correct", "a configuration of its own (binds nothing outside its row): " + "; ".join(checks),
                 None, "number", "computed")
    return True


#: an amount of memory in a cell: ``1,073,741,824 B``, ``1 GiB``, ``512.00 MiB``
_CELL_AMOUNT = re.compile(r"(?<![\w.,])(\d{1,3}(?:,\d{3})+|\d+(?:\.\d+)?)\s*(bytes|B|KiB|MiB|GiB|TiB|KB|kB|MB|GB|TB)"
                          r"(?![\w/])")
#: the context a row counts: ``2,048 tokens``
_ROW_TOKENS = re.compile(r"^\W*(\d{1,3}(?:,\d{3})+|\d+)\s*tokens?\W*$", re.I)


def _variant_columns(doc: DocumentModel, rows: list[Any], emit: Any) -> bool:
    """A table whose columns are variants of attention (``| Context | MHA | GQA-8 | MQA |``) and whose rows are
    contexts (``2,048 tokens``): each cell is that variant's KV cache for the row's tokens, every layer, at the bytes
    per value the document states -- ``2 g d_k`` values per token and layer (``g = h`` for MHA, 1 for MQA), the
    document's sizes, layers and data type.  Every amount a cell writes (``268,435,456 B = 256 MiB``) is compared at
    its written precision (KB, MB, GB as powers of 1000 or 1024).  One verdict per row; True when the table is one
    and the document fixes all it needs (else nothing is said)."""
    from ..proofs.counts import kv_cache_per_token
    from .counts import _as_variant, _variant_heads
    from .prose import variants

    cols = [c.strip() for c in rows[0].columns]
    named = {j: [v for _, v in variants(re.sub(r"[`$*]", "", c))] for j, c in enumerate(cols)}
    columns = {j: v[0] for j, v in named.items() if len(v) == 1 and
               re.fullmatch(r"\W*" + re.escape(v[0].text) + r"\W*", re.sub(r"[`$*]", "", cols[j]))}
    if len(columns) < 2:
        return False
    from .counts import remember

    for p in rows:  # a table of settings by variant: the layers and the data type every variant shares
        cells = [c.strip() for c in p.text.split(" | ")]
        if len(cells) == len(cols) and len({cells[j] for j in columns}) == 1:
            shared = cells[next(iter(columns))]
            size, number = _column_size(re.sub(r"`", "", cells[0])), _cell_number(shared)
            if size == "layers" and number:
                doc.memory["layers"] = number
            elif size in ("h", "d_k", "d_model") and number and size not in doc.known_dims():
                doc.bind_dim(size, number)  # "query heads | 32 | 32 | 32": a size of every variant
            remember(doc, shared)  # "fp16 (2 bytes)"
    layers, size = doc.memory.get("layers"), doc.memory.get("bytes")
    if not layers or not size or re.search(r"\bbatch", " ".join(cols), re.I):
        return False
    per_token = {}
    for j, v in columns.items():
        heads = _variant_heads(v) or doc.known_dims().get("g")  # an unnumbered GQA: the document's own g
        if heads is None:
            return False  # GQA without a number in a document that never states g: not computed
        count = kv_cache_per_token(_as_variant(doc.model(), heads))
        if getattr(count, "free_symbols", None):
            return False
        per_token[j] = int(count) * layers * size
    verdicts: list[tuple[Any, str, str]] = []
    for p in rows:
        cells = [c.strip() for c in p.text.split(" | ")]
        tokens = _ROW_TOKENS.match(re.sub(r"[`$*]", "", cells[0])) if len(cells) == len(cols) else None
        if tokens is None:
            continue
        n = int(tokens.group(1).replace(",", ""))
        checks, bad = _cache_cells([(cols[j], each, n, cells[j]) for j, each in per_token.items()], layers, size)
        if checks:
            verdicts.append((p, "wrong" if bad else "correct", bad or "each variant's KV cache for the row's tokens: "
                             f"{', '.join(f'{cols[j]} {per_token[j]} bytes per token' for j in per_token)}"))
    return _emit_cache_rows(verdicts, emit)


def _cache_cells(cases: list[tuple[str, int, int, str]], layers: int, size: int) -> tuple[int, str | None]:
    """Cells of a table of KV caches, each ``(variant, bytes per token, tokens, cell)``: how many amounts they write,
    and why the first that is not the variant's cache for those tokens is wrong (None when all are)."""
    checks, bad = 0, None
    for name, each, n, cell in cases:
        count, miss = _cache_amounts(cell, each * n)
        checks += count
        if bad is None and miss is not None:
            bad = (f"{name} caches {each} bytes per token ({layers} layers at {size} bytes per value); {n} tokens "
                   f"are {each * n} bytes, not {miss}")
    return checks, bad


def _cache_amounts(cell: str, total: int) -> tuple[int, str | None]:
    """How many amounts of memory a cell writes (``268,435,456 B = 256 MiB``), and the first that is not ``total``
    bytes at its written precision (KB, MB, GB as powers of 1000 or 1024), or None."""
    from .units import _BINARY, _DECIMAL

    count, miss = 0, None
    for m in _CELL_AMOUNT.finditer(cell):
        value, unit = Fraction(m.group(1).replace(",", "")), m.group(2)
        half = Fraction(1, 2 * 10 ** (len(m.group(1).split(".")[1]) if "." in m.group(1) else 0))
        factors = [1] if unit in ("bytes", "B") else [_BINARY[unit]] if unit in _BINARY else \
            [1000 ** _DECIMAL[unit], 1024 ** _DECIMAL[unit]]
        count += 1
        if miss is None and not any(abs(Fraction(total, f) - value) <= half for f in factors):
            miss = m.group(0)
    return count, miss


def _emit_cache_rows(verdicts: list[tuple[Any, str, str]], emit: Any) -> bool:
    """The verdicts on a table of KV caches, when at least one row is the cache of one sequence over every layer
    (else the table counts something its caption says, one layer or a batch, which is not read)."""
    if not any(status == "correct" for _, status, _ in verdicts):
        return False  # no row is the cache of one sequence over every layer: the table counts something else (one
        # layer, a batch) that its caption says, not read
    for p, status, message in verdicts:
        emit(p, status, message, None, "number", "computed")
    return bool(verdicts)


#: a column of a number of tokens: ``Bytes at $n = 4096$``, ``4,096 tokens``
_COLUMN_TOKENS = re.compile(r"\bn\s*=\s*(\d{1,3}(?:,\d{3})+|\d+)\b|(\d{1,3}(?:,\d{3})+|\d+)\s*tokens?\b", re.I)


def _variant_rows(doc: DocumentModel, rows: list[Any], emit: Any) -> bool:
    """The table of :func:`_variant_columns` the other way round: rows named by a variant (``| GQA | 8 | ... |``),
    columns by a number of tokens (``Bytes at $n = 4096$``); each such cell is the variant's KV cache for those
    tokens over every layer.  One verdict per row; True when the table is one and the document fixes all it needs."""
    from ..proofs.counts import kv_cache_per_token
    from .counts import _as_variant, _document_heads
    from .prose import variants

    cols = [c.strip() for c in rows[0].columns]
    tokens = {j: m for j, m in ((j, _COLUMN_TOKENS.search(re.sub(r"[`$*{}]", "", c))) for j, c in enumerate(cols))
              if j and m}
    layers, size = doc.memory.get("layers"), doc.memory.get("bytes")
    if not tokens or not layers or not size or re.search(r"\bbatch|\blayer\b", " ".join(cols), re.I):
        return False
    verdicts: list[tuple[Any, str, str]] = []
    for p in rows:
        cells = [c.strip() for c in p.text.split(" | ")]
        first = re.sub(r"[`$*]", "", cells[0]).strip()
        named = [v for _, v in variants(first)] if len(cells) == len(cols) else []
        if len(named) != 1 or not re.fullmatch(r"\W*" + re.escape(named[0].text) + r"\W*", first):
            continue
        heads = _document_heads(doc, named[0]) or doc.known_dims().get("g")
        count = kv_cache_per_token(_as_variant(doc.model(), heads)) if heads is not None else None
        if count is None or getattr(count, "free_symbols", None):
            continue
        each = int(count) * layers * size
        checks, bad = _cache_cells([(first, each, int((m.group(1) or m.group(2)).replace(",", "")), cells[j])
                                    for j, m in tokens.items()], layers, size)
        if checks:
            verdicts.append((p, "wrong" if bad else "correct", bad or f"{first}'s KV cache: {each} bytes per token "
                             f"({layers} layers at {size} bytes per value), times each column's tokens"))
    return _emit_cache_rows(verdicts, emit)


def _by_own_formula(doc: DocumentModel, rows: list[Any], emit: Any) -> bool:
    """Rows of token counts and amounts (``| 4K tokens | 5 GB |``) under a KV-cache formula the document states:
    each row is that formula's amount for its tokens (:mod:`.own_formula`).  True when a row was judged."""
    from .own_formula import judge_line, model_values

    formula, lines = doc.memory.get("own_formula"), doc.memory.get("lines", [])
    if formula is None or rows[0].cell is not None:
        return False
    model = model_values(doc)
    cols = [c.strip() for c in rows[0].columns]
    # "| Context | KV cache (GiB) |" over "| 4K | 0.5 |": the tokens and the unit are in the headers
    tokens = next((j for j, c in enumerate(cols) if re.search(r"\b(?:context|tokens?|sequence\s+length)\b", c, re.I)),
                  None)
    unit = next(((j, m.group(1)) for j, c in enumerate(cols) if (m := re.search(r"\(\s*([KMGT]i?B|bytes)\s*\)", c))),
                None)
    judged = False
    for p in rows:
        if not 0 < p.line <= len(lines):
            continue
        row = lines[p.line - 1]
        cells = [c.strip() for c in p.text.split(" | ")]
        if tokens is not None and unit is not None and len(cells) == len(cols) and \
                re.fullmatch(r"\d+(?:\.\d+)?[KkM]?", cells[tokens]) and re.fullmatch(r"[\d.,]+", cells[unit[0]]):
            row = f"| {cells[tokens]} tokens | {cells[unit[0]]} {unit[1]} |"
        got = judge_line(formula, row, lines[:p.line - 1], model)
        if got is not None:
            emit(p, got[0], got[1], got[2], "number", got[3])
            judged = True
    return judged
