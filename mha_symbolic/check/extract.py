r"""The first room of the document checker: every checkable piece of a document, with its location.

Explanation
===========

:func:`extract` reads a Markdown or plain-text tutorial, or a Jupyter notebook, and returns
:class:`Piece` objects in document order.  Structure comes from parsers, not from patterns:
markdown-it-py (CommonMark with tables) with the mdit-py-plugins ``dollarmath`` (``$...$``,
``$$...$$``) and ``amsmath`` (bare ``\begin{align*}...\end{align*}``) rules, and linear-time rules for
``\(...\)``, ``\[...\]`` and bare environments (:mod:`mha_symbolic.check._markdown_rules`);
:mod:`nbformat` for notebooks; :mod:`ast` for code (see :mod:`mha_symbolic.check._statements`);
printed outputs are read by :mod:`mha_symbolic.check._outputs`.

The kinds of piece:

* ``math`` -- the LaTeX inside its delimiters, stripped; ``display`` for ``$$``, ``\[ \]`` and
  environments.  A bare environment is one piece holding the whole ``\begin...\end`` text; for a
  multi-row ``align``/``aligned``/``gather``/``eqnarray`` (bare or inside delimiters), ``rows``
  also gives ``(line, text)`` of each row, split at its top-level ``\\``.
* ``code`` -- one top-level statement of a fenced or indented code block or a notebook code cell
  (``name`` the target as written, ``value`` the numbers of a literal right side), or a labelled
  row such as ``token 1: [0.2, 0.5]``.
* ``output`` -- one printed value of a notebook cell (``output=True``; ``line`` counts within the
  cell's printed text), or of a ``text``/``output`` listing in a Markdown file.
* ``table`` -- one body row of a Markdown table: the cells joined by ``" | "``; ``name`` the
  leading label cells, ``value`` the numbers after them, ``columns`` the header cells and
  ``sentence`` the paragraph or heading just before the table (its caption).
* ``prose`` -- one line of a paragraph that has content beyond its math (inline math kept).
* ``heading`` -- a heading's text.
* ``unclosed`` -- a ``$$`` that opens no complete formula.
* ``program`` (only when asked for) -- a whole block of code or code cell, ``value`` what it printed:
  ``(text, line)`` of an output listing right after it in Markdown, ``(text, None)`` of a cell's output.
* ``transcript`` (only when asked for) -- a block holding an Octave/MATLAB session (``>>`` commands).

``line`` is 1-based, where the piece's own text starts (for a ``$$`` on its own line, the line
after it); CRLF and lone CR count as one line break and a byte-order mark is ignored.  In a
notebook, ``cell`` is the 0-based cell index and ``line`` counts within the cell's source.
``sentence`` is the paragraph (or list item) a math or prose piece sits in, and ``clause`` the
sentence of it that holds the piece -- the scope of a condition such as "with $h = 1$".

Only a ``.ipynb`` file that is not valid JSON raises (:class:`~mha_symbolic.errors.ParseError`).

Examples
========

>>> doc = "# Setup\nWe use $h = 2$ heads.\n\n$$\nd_k = \\frac{4}{2}\n$$\n```python\nX = [[1, 0],\n     [0, 1]]\n```"
>>> for p in extract(doc)[:4]:
...     print(p.kind, p.line, p.text)
heading 1 Setup
prose 2 We use $h = 2$ heads.
math 2 h = 2
math 5 d_k = \frac{4}{2}
>>> code = extract(doc)[-1]
>>> code.kind, code.line, code.name, code.value
('code', 8, 'X', [[1, 0], [0, 1]])
"""

from __future__ import annotations

import json
import re
import warnings
from bisect import bisect_left, bisect_right
from dataclasses import dataclass, field, replace
from typing import Any

from markdown_it.token import Token
from pylatexenc.latexwalker import LatexEnvironmentNode, LatexMacroNode, LatexWalker

from ..errors import ParseError
from ._markdown_rules import markdown_parser
from ._outputs import printed_values, read_printed
from ._statements import printing_names, statements
from .grids import grids, is_python
from .numerals import scaled
from .octave import is_transcript
from .sessions import commands, is_session, sessions

__all__ = ["Piece", "extract"]


@dataclass(frozen=True)
class Piece:
    """A checkable piece of a document and where it is (see the module docstring)."""

    kind: str
    text: str
    line: int
    cell: int | None = None
    output: bool = False
    display: bool = False
    name: str | None = None
    value: Any = field(default=None, hash=False)
    sentence: str = ""
    clause: str = ""
    columns: tuple[str, ...] = ()
    rows: tuple[tuple[int, str], ...] = ()
    matrix_lines: tuple[int, ...] = ()  # the line of each row of the one matrix the piece draws over several lines
    level: int = 0  # a heading's level (1 for ``#``)


def matrix_lines(text: str, first: int) -> tuple[int, ...]:
    """The lines of the rows of the one matrix ``text`` (whose first line is ``first``) draws over several lines:
    each line that holds a number, when the text holds one matrix (``[[`` or ``\\begin{..matrix}``) and breaks."""
    if "\n" not in text.strip() or text.count("[[") + len(re.findall(r"\\begin\{[bpvBV]?matrix\}", text)) != 1:
        return ()
    return tuple(first + k for k, line in enumerate(text.split("\n")) if any(ch.isdigit() for ch in line))


_ROW_ENVIRONMENTS = {"align", "aligned", "alignat", "alignedat", "gather", "gathered", "eqnarray", "flalign"}
_DELIMITERS = {"$": ("$", "$"), "$$": ("$$", "$$"), "\\(": ("\\(", "\\)"), "\\[": ("\\[", "\\]")}
_MATH_BLOCKS = {"math_block", "math_block_label", "math_block_bracket", "amsmath"}
_MATH_FENCES = {"math", "latex", "tex", "katex"}
_LISTING_FENCES = {"", "text", "txt", "output", "out", "console", "plaintext", "none"}
#: a unit of memory or of work written in prose right after inline math ("$2^{30}$ bytes", "$\approx 1.61$ GFLOP")
_UNIT_AFTER = re.compile(r"[ \u00a0]?(bytes|[KMGT]iB|[kKMGT]B|[kKMGTP]?FLOPs?)(?![\w-])")
#: the most of a sentence that goes with a piece as its clause (half before it, half after, whole lines): a
#: "sentence" with no end for pages is not read whole around every piece of it
_LONGEST_CLAUSE = 2000
_SENTENCE_END = re.compile(r"(?<![.!?\u0964])[.!?\u0964]+[\"')\]]*(?=\s|$)")  # a run's first mark only: linear


#: a title between two rules of dashes or equals signs on one line ("--- Head 1 ---", "=== Part 2 ===")
_RULED_HEADING = re.compile(r"(?m)^(-{3,}|={3,})[ \t]+([^\s=-][^\n]{0,80}?)[ \t]+\1[ \t]*$")


def _normalize(text: str) -> str:
    r"""One line end, no byte-order mark, a title between rules a heading ("--- Head 1 ---" is "## Head 1"), and a
    blackboard letter's argument braced (``\mathbb R`` is ``\mathbb{R}``, as LaTeX reads it)."""
    text = text.removeprefix("\ufeff").replace("\r\n", "\n").replace("\r", "\n")
    if "---" in text or "===" in text:  # "--- Head 1 ---": a heading of plain text, as Markdown writes "## Head 1"
        text = _RULED_HEADING.sub(lambda m: f"## {m.group(2)}".ljust(len(m.group(0))), text)
    return re.sub(r"\\mathbb\s+([A-Za-z])", r"\\mathbb{\1}", text) if "\\mathbb " in text else text


def _rows(raw: str) -> list[tuple[int, str]]:
    """``(offset, text)`` of each row of a multi-row alignment environment in ``raw`` (else ``[]``)."""
    if "\\begin" not in raw or "\\\\" not in raw:
        return []
    try:
        nodes = LatexWalker(raw, tolerant_parsing=True).get_latex_nodes()[0]
    except Exception:  # pylatexenc's own errors, or recursion on pathological nesting
        return []
    envs = [n for n in nodes if isinstance(n, LatexEnvironmentNode) and n.environmentname.rstrip("*")
            in _ROW_ENVIRONMENTS and n.nodelist]
    if not envs:
        return []
    body = envs[0].nodelist
    cuts = [n for n in body if isinstance(n, LatexMacroNode) and n.macroname == "\\"]
    starts = [body[0].pos] + [n.pos + n.len for n in cuts]
    ends = [n.pos for n in cuts] + [body[-1].pos + body[-1].len]
    rows = []
    for a, b in zip(starts, ends, strict=True):
        text = raw[a:b]
        if text.strip():
            rows.append((a + len(text) - len(text.lstrip()), text.strip()))
    return rows if len(rows) > 1 else []


#: a size, and a shape written with \times between sizes (``100 \times 64``, ``n \times d_k``)
_SIZE = r"(?:\d+|[A-Za-z](?:_\{?[\w\\{}]+?\}?)?)"
_SHAPE = rf"{_SIZE}\s*\\times\s*{_SIZE}"
#: a row's annotation column stating its shape: ``&&: 100 \times 64`` or ``&&: (100 \times 512)(512 \times 64) \to
#: 100 \times 64`` (a product of shapes and what it gives); nothing else in the column
_SHAPE_NOTE = re.compile(rf"&\s*&\s*:?\s*((?:\(\s*{_SHAPE}\s*\)\s*){{2,}})?(?:\\to|\\rightarrow|=)?\s*({_SHAPE})"
                         r"\s*[,.;]?\s*$")


def _shape_notes(text: str) -> str:
    r"""An ``align`` whose rows note their shapes in a column of their own, read as relations: ``S_i &= Q_i K_i^\top
    &&: (100 \times 64)(64 \times 100) \to 100 \times 100`` states ``S_i \in \mathbb{R}^{100 \times 100}`` and the
    product of shapes ``(100 \times 64)(64 \times 100) = 100 \times 100`` (rows stay rows).

    >>> print(_shape_notes(r"S &= Q K^\top &&: (4 \times 2)(2 \times 4) \to 4 \times 4, \\ A &= x"))
    S &= Q K^\top & & S \in \mathbb{R}^{4 \times 4} & & (4 \times 2)(2 \times 4) = 4 \times 4 \\ A &= x
    """
    if "&&" not in text.replace(" ", "") or "\\times" not in text:
        return text
    rows = re.split(r"(\\\\)", text)
    for k in range(0, len(rows), 2):
        row = re.sub(r"\\end\{\w+\*?\}\s*$", "", rows[k])
        end = rows[k][len(row):]
        note = _SHAPE_NOTE.search(row)
        subject = re.match(r"\s*(?:\\begin\{\w+\*?\}\s*)?([^&=]+?)\s*&?=", row)
        if note is None or subject is None or not subject.group(1).strip():
            continue
        said = f" & & {subject.group(1).strip()} \\in \\mathbb{{R}}^{{{note.group(2)}}}"
        if note.group(1):
            said += f" & & {note.group(1).strip()} = {note.group(2)}"
        rows[k] = row[:note.start()].rstrip() + said + row[len(row.rstrip()):] + end  # (its newlines kept)
    return "".join(rows)


def _math(raw: str, first: int, display: bool, sentence: str, cell: int | None, clause: str | None = None
          ) -> list[Piece]:
    """The math piece for ``raw`` (whose first character is on line ``first``), with its rows."""
    text = _shape_notes(scaled(raw.strip()))  # "2.36\,\text{M}": a number with a scale, in scientific notation
    if not text:
        return []
    line = first + raw[: len(raw) - len(raw.lstrip())].count("\n")
    rows = tuple((first + raw[:offset].count("\n"), row) for offset, row in (_rows(raw) if display else []))
    return [Piece("math", text, line, cell, display=display, sentence=sentence,
                  clause=text if clause is None else clause, rows=rows,
                  matrix_lines=() if rows else matrix_lines(raw.strip(), line))]


def _inline(token: Token, cell: int | None, *, prose: bool = True, heading: int = 0) -> list[Piece]:
    """Math, prose, heading and unclosed pieces of one paragraph, heading (of level ``heading``) or table cell."""
    content, children = _code_as_math(token.content, token.children or [])
    base = token.map[0] + 1 if token.map else 1
    found: list[tuple[int, int, int, str, bool]] = []  # math span in content, where its text starts, text, display
    spans: list[tuple[int, int]] = []  # math, code spans and inline HTML: no sentence ends there
    unclosed: list[int] = []
    cursor = 0
    for child in children:
        if child.type.startswith("math_"):
            opener, closer = _DELIMITERS.get(child.markup, ("", ""))
            whole = opener + child.content + closer
            at = content.find(whole, cursor)
            at = cursor if at < 0 else at
            unit = _UNIT_AFTER.match(content, at + len(whole)) if child.type == "math_inline" else None
            # "$... \approx 1.61$ GFLOP": a unit written right after the math is the last side's; so is a scale
            # ("$\approx 2.36$ million")
            text = child.content + (f" \\text{{{unit.group(1)}}}" if unit else "") if unit or child.type != \
                "math_inline" else scaled(child.content, content[at + len(whole):at + len(whole) + 40])
            found.append((at, at + len(whole), at + len(opener), text, child.type != "math_inline"))
            spans.append((at, at + len(whole)))
        elif child.type in ("code_inline", "html_inline"):
            mark = child.markup if child.type == "code_inline" else child.content
            at = content.find(mark, cursor)
            if at < 0:
                continue
            close = content.find(mark, at + len(mark)) if child.type == "code_inline" else -1
            spans.append((at, max(at, close) + len(mark)))
        elif child.type == "text" and "$$" in child.content and (at := content.find("$$", cursor)) >= 0:
            unclosed.append(at)
            spans.append((at, at + 2))
        else:
            continue
        cursor = spans[-1][1]
    masked, in_math = list(content), [False] * len(content)
    for a, b in spans:
        masked[a:b] = [ch if ch == "\n" else "x" for ch in content[a:b]]
    for a, b, *_ in found:
        in_math[a:b] = [True] * (b - a)
    ends = [0] + [m.end() for m in _SENTENCE_END.finditer("".join(masked))] + [len(content)]
    ends += [edge for a, b, _, _, display in found if display for edge in (a, b)]  # a display is its own clause
    ends.sort()

    def clause(a: int, b: int) -> str:
        lo, hi = ends[bisect_right(ends, a) - 1], ends[bisect_left(ends, b)]
        if hi - lo > _LONGEST_CLAUSE:  # no sentence end for pages: the lines around the span, so that every
            # reader of a piece's sentence sees a bounded text and a paragraph costs time linear in its length
            lo = max(lo, content.rfind("\n", lo, max(lo, a - _LONGEST_CLAUSE // 2)) + 1)
            cut = content.find("\n", min(hi, b + _LONGEST_CLAUSE // 2), hi)
            hi = hi if cut < 0 else cut
        return content[lo:hi].strip()

    pieces: list[Piece] = []
    if heading:
        pieces.append(Piece("heading", content.strip(), base, cell, sentence=content, level=heading))
    starts = [0] + [k + 1 for k, ch in enumerate(content) if ch == "\n"]
    on_line: dict[int, list[tuple[int, int, int, str, bool]]] = {}
    for item in found:
        on_line.setdefault(bisect_right(starts, item[0]) - 1, []).append(item)
    for k, start in enumerate(starts):
        end = starts[k + 1] - 1 if k + 1 < len(starts) else len(content)
        text = content[start:end]
        beyond = any(ch.isalnum() and not in_math[j] for j, ch in enumerate(text, start))
        if prose and beyond and (not heading or len(starts) > 1):
            lead = start + len(text) - len(text.lstrip())
            pieces.append(Piece("prose", text.strip(), base + k, cell, sentence=content, clause=clause(lead, end)))
        for a, b, at, raw, display in on_line.get(k, []):  # the line of ``at``, by bisection (linear overall)
            pieces += _math(raw, base + bisect_right(starts, at) - 1, display, content, cell, clause(a, b))
    for at in unclosed:
        pieces.append(Piece("unclosed", "$$", base + bisect_right(starts, at) - 1, cell, display=True,
                            sentence=content))
    return pieces


def _code_as_math(content: str, children: list[Token]) -> tuple[str, list[Token]]:
    """Inline code that holds a formula (:func:`.inline_code.code_formula`) as the inline math it stands for:
    the paragraph's text shows it between dollars, so every reader of the sentence sees math."""
    from .inline_code import code_formula

    out, cursor = [], 0
    for child in children:
        tex = code_formula(child.content) if child.type == "code_inline" else None
        whole = f"{child.markup}{child.content}{child.markup}"
        at = content.find(whole, cursor) if tex is not None else -1
        if tex is None or at < 0:
            out.append(child)
            if child.type == "code_inline" and (at := content.find(whole, cursor)) >= 0:
                cursor = at + len(whole)
            continue
        math = Token("math_inline", "math", 0, content=tex, markup="$")
        content = content[:at] + f"${tex}$" + content[at + len(whole):]
        cursor = at + len(tex) + 2
        out.append(math)
    return content, out


def _around(lines: list[str], start: int, end: int) -> str:
    """The lines ``start``..``end`` (0-based) widened to the blank lines around them."""
    start, end = max(0, min(start, len(lines))), max(start + 1, min(end, len(lines)))
    while start > 0 and lines[start - 1].strip():
        start -= 1
    while end < len(lines) and lines[end].strip():
        end += 1
    return "\n".join(lines[start:end]).strip()


def _code(source: str, offset: int, cell: int | None, listing: bool = False,
          printed: tuple[str, int | None] | None = None) -> list[Piece]:
    """Code pieces of ``source`` whose first line is line ``offset + 1``; a listing may hold outputs.

    Code that parses as Python also gives one ``program`` piece: the whole block, traced by
    :mod:`.tracing`, with what it printed (``value``: the printed text and the line where a Markdown listing
    of it starts, or ``None`` for a notebook cell's own output)."""
    pieces = [Piece("code", text, offset + line, cell, name=name, value=value,
                    matrix_lines=matrix_lines(text, offset + line))
              for line, text, name, value in statements(source)]
    if listing and not pieces:
        pieces = [Piece("output", text, offset + line + 1, cell, name=label, value=value)
                  for line, text, label, value in printed_values(source) if value is not None]
    elif pieces or not listing and source.strip() and all(x.lstrip().startswith("#") for x in source.splitlines()
                                                          if x.strip()):  # a block of comments: their arithmetic
        pieces.insert(0, Piece("program", source, offset + 1, cell, value=printed))
    return pieces


def _table_row(cells: list[Token], line: int, columns: tuple[str, ...], caption: str, cell: int | None
               ) -> list[Piece]:
    texts = [c.content.strip() for c in cells]
    numbers = [read_printed(t.strip("$* ")) if t else None for t in texts]
    numeric = [isinstance(v, (int, float)) for v in numbers]
    label = max((k for k, ok in enumerate(numeric) if not ok), default=-1)
    text = " | ".join(texts)
    pieces = [Piece("table", text, line, cell, name=" | ".join(texts[:label + 1]) or None,
                    value=numbers[label + 1:] or None, sentence=caption, columns=columns)]
    for token in cells:
        pieces += _inline(token, cell, prose=False)
    return pieces


def _session(source: str, first: int, cell: int | None) -> list[Piece]:
    """The commands of a ``>>>`` session whose first line is line ``first + 1``: each a block of code traced with
    what it printed (:mod:`.sessions`)."""
    pieces: list[Piece] = []
    for line, code, printed, at in commands(source):
        new = _code(code, first + line, cell)
        shown = (printed, first + at + 1) if printed is not None and at is not None else None
        program = next((q for q in new if q.kind == "program"), None)
        if program is None:
            new.insert(0, Piece("program", code, first + line + 1, cell, value=shown))
        else:
            new[new.index(program)] = replace(program, value=shown)
        pieces += new
    return pieces


def _markdown(src: str, cell: int | None) -> list[Piece]:
    lines = src.split("\n")
    pieces: list[Piece] = []
    for start, end in sessions(src):  # ">>> x" in the text: a Python session, never nested quotes
        pieces += _session("\n".join(lines[start:end]), start, cell)
        lines[start:end] = [""] * (end - start)
    src = "\n".join(lines)
    caption, head, row, row_line = "", False, [], 1  # the current table
    columns: tuple[str, ...] = ()
    last_program: Piece | None = None  # the block of code an output listing just after it shows the output of
    tokens = markdown_parser().parse(src)
    for k, token in enumerate(tokens):
        kind, where = token.type, token.map or [0, 1]
        if kind == "inline":
            parent = tokens[k - 1].type if k else ""
            if parent in ("th_open", "td_open"):
                row.append(token)
                continue
            pieces += _inline(token, cell, heading=int(tokens[k - 1].tag[1:] or 1) if parent == "heading_open" else 0)
            caption = token.content
        elif kind in ("thead_open", "thead_close"):
            head = kind == "thead_open"
        elif kind == "tr_open":
            row, row_line = [], where[0] + 1
        elif kind == "tr_close" and head:
            columns = tuple(c.content.strip() for c in row)
        elif kind == "tr_close":
            pieces += _table_row(row, row_line, columns, caption, cell)
        elif kind in _MATH_BLOCKS:
            pieces += _math(token.content, where[0] + 1, True, _around(lines, where[0], where[1]), cell)
        elif kind in ("fence", "code_block"):
            info = token.info.split()[0].lower() if token.info.split() else ""
            first = where[0] + (1 if kind == "fence" else 0)  # 0-based line before the code's first line
            if info in _MATH_FENCES:
                pieces += _math(token.content, first + 1, True, token.content.strip(), cell)
                continue
            if is_session(token.content):  # a Python session: its commands and what each printed
                pieces += _session(token.content, first, cell)
                continue
            drawn = [] if info in ("matlab", "octave", "m") or is_transcript(token.content) else grids(token.content)
            listing = kind == "fence" and info in _LISTING_FENCES
            if listing and last_program is not None:
                # an output listing right after a block of code (no other code between): what it printed
                pieces[pieces.index(last_program)] = replace(last_program, value=(token.content, first + 1))
            new = _code(token.content, first, cell, listing=listing)
            if drawn:  # not Python: matrices drawn as ASCII grids and plain formulas, read as the formulas they are
                valued = {q.line for q in new if q.kind in ("code", "output") and (q.value is not None or
                                                                                    is_python(q.text))}  # the code's
                gridded = {first + 1 + line for line, _, grid, _ in drawn if grid}
                new = [q for q in new if q.line not in gridded  # a grid's first row alone is not its value,
                       and (q.kind != "code" or q.line in valued)]  # and a line that is no Python is no code
                context = _around(lines, where[0], where[1])
                new += [Piece("math", tex, first + 1 + line, cell, display=True, sentence=context, clause=tex,
                              matrix_lines=tuple(first + 1 + k for k in rows))
                        for line, tex, grid, rows in drawn if grid or first + 1 + line not in valued]
            if is_transcript(token.content) or info in ("matlab", "octave", "m"):
                # an Octave/MATLAB session or script: its commands, and the grids a session displays
                new.insert(0, Piece("transcript", token.content, first + 1, cell))
            pieces += new
            last_program = next((q for q in new if q.kind == "program"), None)
    return sorted(pieces, key=lambda piece: piece.line)  # stable: a line's pieces keep their order


def _text(value: Any) -> str:
    if isinstance(value, list):
        return "".join(v for v in value if isinstance(v, str))
    return value if isinstance(value, str) else ""


def _segments(outputs: Any) -> list[tuple[str, str]]:
    """What a code cell printed: (kind, text) per stream run, result or display, in order."""
    segments: list[tuple[str, str]] = []
    for out in outputs if isinstance(outputs, list) else []:
        kind = out.get("output_type") if isinstance(out, dict) else None
        if kind == "stream" and out.get("name") != "stderr":
            text = _text(out.get("text"))
        elif kind in ("execute_result", "display_data") and isinstance(out.get("data"), dict):
            text = _text(out["data"].get("text/plain"))
        else:
            continue
        if segments and kind == "stream" and segments[-1][0] == "stream":
            segments[-1] = ("stream", segments[-1][1] + _normalize(text))
        else:
            segments.append((kind, _normalize(text)))
    return segments


def _outputs(outputs: Any, source: str, cell: int) -> list[Piece]:
    """One piece per printed value of a code cell; lines count through the cell's printed text."""
    segments = _segments(outputs)
    calls, last = printing_names(source)
    items: list[tuple[int, str, str | None, Any, bool]] = []
    offset = 0
    for kind, text in segments:
        values = printed_values(text)
        for line, t, label, value in values:  # the cell's result is named by its last expression
            result = kind == "execute_result" and (len(values) == 1 or value is not None)
            items.append((offset + line + 1, t, label, value, result))
        offset += text.count("\n") + (0 if text.endswith("\n") or not text else 1)
    printed = [k for k, item in enumerate(items) if not item[4] and item[3] is not None]
    names = dict(zip(printed, calls, strict=True)) if len(printed) == len(calls) else {}
    return [Piece("output", t, line, cell, output=True, value=value,
                  name=label or (last if result else names.get(k)), matrix_lines=matrix_lines(t, line))
            for k, (line, t, label, value, result) in enumerate(items)]  # (a printed matrix: its rows' lines)


def _notebook_data(src: str, name: str, strict: bool) -> dict[str, Any] | None:
    try:
        data = json.loads(src)
    except (ValueError, RecursionError) as error:
        if not strict:
            return None
        where = (f" at line {error.lineno}, column {error.colno}: {error.msg}"
                 if isinstance(error, json.JSONDecodeError) else " (nested too deeply)")
        raise ParseError(f"{name}: not a notebook: invalid JSON{where}") from None
    if not isinstance(data, dict) or not (isinstance(data.get("cells"), list) or "worksheets" in data):
        if not strict:
            return None
        got = (f"an object with keys {', '.join(sorted(map(str, data))[:6]) or 'none'}" if isinstance(data, dict)
               else f"a JSON {type(data).__name__}")
        raise ParseError(f"{name}: not a notebook: valid JSON, but {got} and no list of cells")
    try:
        import nbformat  # only for notebooks: its JSON-schema machinery costs every Markdown check its start-up

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            notebook = nbformat.reads(src, as_version=4, capture_validation_error={})
        return dict(notebook)
    except Exception:  # nbformat rejects a malformed notebook in many ways; read the raw cells then
        return data


def _notebook(data: dict[str, Any]) -> list[Piece]:
    pieces: list[Piece] = []
    cells = data.get("cells")
    for index, cell in enumerate(cells if isinstance(cells, list) else []):
        if not isinstance(cell, dict):
            continue
        source = _normalize(_text(cell.get("source")))
        if cell.get("cell_type") == "markdown":
            pieces += _markdown(source, index)
        elif cell.get("cell_type") == "code":
            printed = "".join(t if t.endswith("\n") or not t else t + "\n" for _, t in _segments(cell.get("outputs")))
            pieces += _code(source, 0, index, printed=(printed, None)) + _outputs(cell.get("outputs"), source, index)
    return pieces  # cell by cell, each in order


def written_lines(text: str, name: str = "<text>") -> list[tuple[int | None, bool, int, str]]:
    """Every line the document writes, read or not, as (cell, output, line, text): a notebook's cells and their
    printed outputs line by line, any other document its lines.

    >>> written_lines("a\\nb")
    [(None, False, 1, 'a'), (None, False, 2, 'b')]
    """
    src = _normalize(text)
    data = _notebook_data(src, name, False) if name.lower().endswith(".ipynb") or src.lstrip().startswith("{") \
        else None
    if data is None:
        return [(None, False, number, line) for number, line in enumerate(src.splitlines(), start=1)]
    out: list[tuple[int | None, bool, int, str]] = []
    cells = data.get("cells")
    for index, cell in enumerate(cells if isinstance(cells, list) else []):
        if isinstance(cell, dict):
            out += [(index, False, n, line) for n, line in enumerate(_text(cell.get("source")).splitlines(), 1)]
            printed = "".join(t for _, t in _segments(cell.get("outputs")))
            out += [(index, True, n, line) for n, line in enumerate(printed.splitlines(), 1)]
    return out


def extract(text: str, name: str = "<text>", programs: bool = False) -> list[Piece]:
    """All pieces of a document in document order (see the module docstring).

    A ``.ipynb`` ``name``, or a text that parses as a notebook's JSON, is read as a notebook;
    everything else as Markdown / plain text.  ``programs`` adds a ``program`` piece before the
    statements of each block of code or code cell: the whole block, with what it printed.
    """
    src = _normalize(text)
    strict = name.lower().endswith(".ipynb")
    pieces = None
    if strict or src.lstrip().startswith("{"):
        data = _notebook_data(src, name, strict)
        if data is not None:
            pieces = _notebook(data)
    if pieces is None:
        pieces = _markdown(src, None)
    return pieces if programs else [p for p in pieces if p.kind not in ("program", "transcript")]
