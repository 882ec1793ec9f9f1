r"""An Octave/MATLAB session in a document (``>> Q = X*W_q`` and the grid Octave prints) traced, never run.

Explanation
===========

A worked example in MATLAB notation is a transcript: commands after ``>>`` and, after each command that does not
end in ``;``, the value Octave displays (``Q =`` and one line per row).  Each command of the subset attention
examples use is written as Python (:func:`python`) and followed by the same :class:`~.tracing.Tracer` that reads
Python code: matrix literals ``[1 0; 0 1]``, ``*`` (the matrix product), ``'``, ``.*``, ``./``, ``.^``, ``exp``,
``sqrt``, ``sum(A, 2)``, ``max(A, [], 2)``, ``size``, ``triu``/``tril``, ``ones``/``zeros``/``eye``, ``Inf``.
A command outside the subset makes its name unknown.  The grid displayed after a command is then compared with
the traced value, row by row, at the precision printed (``0.2483`` stands for [0.24825, 0.24835]); a grid whose
lines do not hold the value's rows is not compared, and a grid whose every number differs from the trace (the
command or its display was changed after it ran) is not judged.

Examples
========

>>> session = ">> X = [1 0; 0 2];\n>> Y = X*X'\nY =\n   1   0\n   0   4\n>> size(Y)\nans =\n   2   3"
>>> [(f.line, f.status) for f in transcript(Tracer(), session)]
[(4, 'correct'), (5, 'correct'), (8, 'wrong')]
"""

from __future__ import annotations

import ast
import re
from typing import Any

import numpy as np

from .read import top_level_split
from .tracing import Finding, Tensor, Tracer, Unknown, _agrees, _localised

__all__ = ["is_transcript", "python", "transcript"]

_PROMPT = re.compile(r"^\s*(?:>>|octave:\d+>)\s?(.*)$")
_LABEL = re.compile(r"^\s*([A-Za-z]\w*)\s*=\s*(.*?)\s*$")
_NUMBER = r"-?(?:\d+(?:\.\d*)?|\.\d+)(?:e[-+]?\d+)?|-?Inf|NaN"
_FUNCTIONS = {"exp": "np.exp", "sqrt": "np.sqrt", "triu": "np.triu", "tril": "np.tril", "abs": "np.abs",
              "log": "np.log", "eye": "np.eye", "rank": "np.linalg.matrix_rank"}


def is_transcript(source: str) -> bool:
    """Does a block hold an Octave/MATLAB session (two or more ``>>`` commands)?"""
    return sum(1 for line in source.split("\n") if _PROMPT.match(line)) >= 2


def _literal(body: str) -> str:
    """The inside of ``[...]`` as Python: numbers as an array, names side by side or stacked as blocks."""
    rows = [r for r in (x.strip() for x in body.split(";")) if r]
    cells = [[c for c in re.split(r"[\s,]+", r) if c] for r in rows]
    if not cells:
        raise Unknown("an empty matrix")
    if all(re.fullmatch(_NUMBER, c) for row in cells for c in row):
        return "np.array([" + ", ".join("[" + ", ".join(_number(c) for c in row) + "]" for row in cells) + "])"
    if all(re.fullmatch(r"[A-Za-z]\w*", c) for row in cells for c in row):
        blocks = ["np.hstack([" + ", ".join(row) + "])" if len(row) > 1 else row[0] for row in cells]
        return "np.vstack([" + ", ".join(blocks) + "])" if len(blocks) > 1 else blocks[0]
    raise Unknown("a matrix of expressions")


def statements(line: str) -> list[tuple[str, bool]]:
    """The statements of one command line, each with whether Octave displays its value: they are separated by
    ``;`` (not displayed) and ``,`` (displayed) outside brackets, parentheses and strings; ``%`` starts a comment.

    >>> statements("Q1 = X*Wq1, K1 = X*Wk1   % size(Q1) is 3x2")
    [('Q1 = X*Wq1', True), ('K1 = X*Wk1', True)]
    >>> statements("Wq = [1 0; 0 1];  m = max(S,[],2)")
    [('Wq = [1 0; 0 1]', False), ('m = max(S,[],2)', True)]
    """
    out: list[tuple[str, bool]] = []
    depth, quote, start = 0, False, 0
    for k, ch in enumerate(line):
        if quote:
            quote = ch != "'"
            continue
        if ch == "'" and (k == 0 or not (line[k - 1].isalnum() or line[k - 1] in ")]_.'")):
            quote = True  # a string ('abc'), not a transpose (K')
            continue
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth = max(0, depth - 1)
        elif depth == 0 and ch in ";,%":
            if line[start:k].strip():
                out.append((line[start:k].strip(), ch != ";"))
            start = k + 1
            if ch == "%":
                return out
    if line[start:].strip():
        out.append((line[start:].strip(), True))
    return out


def _number(token: str) -> str:
    return {"Inf": "Inf", "-Inf": "-Inf", "NaN": "NaN"}.get(token, token)


def python(command: str) -> str:
    """One Octave command (without its prompt and final ``;``) as Python for the tracer.

    >>> python("A = exp(S) ./ sum(exp(S), 2)")
    'A = np.exp(S) / np.sum(np.exp(S), axis=1, keepdims=True)'
    >>> python("K = X*W_k'")
    'K = X @ W_k.T'
    >>> python("Q1 = Q(:,1:2)"), python("r = A(2,:)")
    ('Q1 = Q[:, 0:2]', 'r = A[1:2, :]')
    """
    text = command.split("%")[0].strip()
    anonymous = re.fullmatch(r"([A-Za-z]\w*)\s*=\s*@\(\s*([\w\s,]*)\)\s*(.+)", text)
    if anonymous:  # f = @(S) expr: a function of the document's own, traced per call
        return f"def {anonymous.group(1)}({anonymous.group(2)}):\n    return {python(anonymous.group(3))}"
    text = re.sub(r"\[([^\[\]]*)\]", lambda m: _literal(m.group(1)) if m.group(1).strip() else "[]", text)
    text = re.sub(r"(?<![\w.])([A-Za-z]\w*)\(\s*(" + _INDEX + r")\s*,\s*(" + _INDEX + r")\s*\)", _indexed, text)
    text = re.sub(r"(?<=[\w)\]])'", ".T", text)
    text = text.replace(".*", "*").replace("./", "/").replace(".^", "**").replace("^", "**")
    text = re.sub(r"(?<![*])\*(?![*])", " @ ", text)
    text = re.sub(r"-Inf\((\w+)\)", r"np.full((\1, \1), -Inf)", text)
    text = _reductions(text)
    text = re.sub(r"\bsize\(\s*(\w+)\s*\)", r"np.array(\1.shape)", text)
    text = re.sub(r"\b(ones|zeros)\(\s*(\w+)\s*\)", r"np.\1((\2, \2))", text)
    text = re.sub(r"\b(ones|zeros)\(\s*(\w+)\s*,\s*(\w+)\s*\)", r"np.\1((\2, \3))", text)
    text = re.sub(r"(?<![\w.])(" + "|".join(_FUNCTIONS) + r")\(", lambda m: _FUNCTIONS[m.group(1)] + "(", text)
    return " ".join(text.split())


#: a 1-based index of one axis: ``:``, ``k``, ``a:b``
_INDEX = r":|\d+(?:\s*:\s*\d+)?"


def _indexed(m: re.Match[str]) -> str:
    """``Q(:,1:2)``, ``A(2,:)``: Octave's 1-based indexing of rows and columns as Python's slices (a single index
    keeps its axis, as Octave's does: ``Q(:,1)`` is a column); a function's call is left as it is."""
    if m.group(1) in _FUNCTIONS or m.group(1) in ("sum", "max", "min", "mean", "size", "ones", "zeros"):
        return m.group(0)

    def axis(index: str) -> str:
        if index == ":":
            return ":"
        first, _, last = (x.strip() for x in index.partition(":"))
        return f"{int(first) - 1}:{last or first}"
    return f"{m.group(1)}[{axis(m.group(2))}, {axis(m.group(3))}]"


def _reductions(text: str) -> str:
    """``sum(A, 2)``, ``max(A, [], 2)``, ``mean(A)`` (nested to any depth) as NumPy reductions along the axis Octave
    uses (the first by default), keeping dimensions as Octave does; ``max(A, B)`` is elementwise."""
    out, k = [], 0
    for m in re.finditer(r"(?<![\w.])(sum|max|min|mean)\(", text):
        if m.start() < k:
            continue  # inside a call already rewritten
        depth, end = 0, None
        for j in range(m.end() - 1, len(text)):
            depth += {"(": 1, ")": -1}.get(text[j], 0)
            if depth == 0:
                end = j
                break
        if end is None:
            raise Unknown("an unclosed parenthesis")
        args = [a.strip() for a in top_level_split(text[m.end():end])]
        name, inner = m.group(1), [_reductions(a) for a in args]
        if len(inner) == 2 and name in ("max", "min") and inner[1] != "[]":
            call = f"np.{name}imum({inner[0]}, {inner[1]})"
        else:
            dims = [a for a in inner[1:] if a != "[]"]
            if len(dims) > 1 or dims and dims[0] not in ("1", "2"):
                raise Unknown(f"{name} along {dims}")
            axis = int(dims[0]) - 1 if dims else 0
            call = f"np.{name}({inner[0]}, axis={axis}, keepdims=True)"
        out.append(text[k:m.start()] + call)
        k = end + 1
    return "".join(out) + text[k:]




def _shown(line: str) -> list[str] | None:
    """The numbers of one displayed row (None when the line holds anything else)."""
    tokens = line.split()
    return tokens if tokens and all(re.fullmatch(_NUMBER, t) for t in tokens) else None


def transcript(tracer: Tracer, source: str) -> list[Finding]:
    """Trace an Octave session and judge each grid it displays (lines count from 1 within ``source``)."""
    tracer.findings, tracer.printed, tracer.confirmed = [], None, set()
    tracer.env.setdefault("Inf", Tensor((), np.asarray(np.inf)))
    tracer.env.setdefault("NaN", Tensor((), np.asarray(np.nan)))
    lines = source.split("\n")
    tracer.source_lines = lines
    commands = [k for k, line in enumerate(lines) if _PROMPT.match(line)]
    script = not commands  # a script: every line a command, nothing displayed in the block
    if script:
        commands = [k for k, line in enumerate(lines) if line.strip() and not line.lstrip().startswith("%")]
    for at, k in enumerate(commands):
        m = _PROMPT.match(lines[k])
        command = m.group(1).strip() if m else lines[k].strip()
        end = commands[at + 1] if at + 1 < len(commands) else len(lines)
        parts = statements(command)
        displays = _displays(lines, k + 1, end, sum(1 for _, shown in parts if shown))
        comment = command.split("%", 1)[1] if "%" in command and not script else ""
        for statement, shown in parts:
            value = _run(tracer, statement)
            if script or not shown:
                continue
            start, stop = displays.pop(0) if displays else (end, end)
            if isinstance(value, Tensor) and value.values is not None:
                _compare(tracer, value.values, lines, start, stop)
        _sizes_said(tracer, comment, k + 1)
    return tracer.findings


#: a size a comment states: "size(Q1) is 3x2", "K1' is 2x3", "size(Y) is 3x4"
_SIZE_SAID = re.compile(r"(?:\bsize\(\s*([A-Za-z]\w*)\s*('?)\s*\)|(?<![\w(])([A-Za-z]\w*)(')?)"
                        r"\s+is\s+(\d+)\s*[x×]\s*(\d+)(?![\w.])")


def _sizes_said(tracer: Tracer, comment: str, line: int) -> None:
    """Judge each size a command's comment states of a traced name (after the command ran)."""
    for m in _SIZE_SAID.finditer(comment):
        name, transposed = (m.group(1), m.group(2)) if m.group(1) else (m.group(3), m.group(4) or "")
        value = tracer.env.get(name)
        if not isinstance(value, Tensor) or len(value.shape) != 2 or \
                not all(getattr(s, "is_Integer", False) or isinstance(s, (int, np.integer)) for s in value.shape):
            continue  # a size the trace does not know as a number
        shape = tuple(int(s) for s in (reversed(value.shape) if transposed else value.shape))
        said = (int(m.group(5)), int(m.group(6)))
        written = f"{name}{transposed}"
        record, tracer.record = tracer.record, True
        if shape == said:
            tracer.add(line, "correct", f"{written} is {shape[0]}x{shape[1]} (traced)", "shape")
        else:
            tracer.add(line, "wrong", f"{written} is {shape[0]}x{shape[1]} by the commands above, not "
                       f"{said[0]}x{said[1]}", "shape", f"{shape[0]}x{shape[1]}")
        tracer.record = record


def _displays(lines: list[str], start: int, end: int, count: int) -> list[tuple[int, int]]:
    """The display of each of ``count`` displayed statements in lines ``start .. end - 1``: one region when one
    is displayed, else one per label (``Q1 =``, ``ans = 2``), in order."""
    if count <= 1:
        return [(start, end)]
    labels = [k for k in range(start, end) if _LABEL.match(lines[k]) and not _PROMPT.match(lines[k])]
    if len(labels) != count:
        return []  # a display this reader cannot share out: nothing compared
    return [(a, b) for a, b in zip(labels, labels[1:] + [end], strict=True)]


def _run(tracer: Tracer, command: str) -> Any:
    if not command or command.startswith(("format", "disp", "clc", "clear", "%")):
        return None
    try:
        code = python(command)
        tree = ast.parse(code)
    except (Unknown, SyntaxError, ValueError):
        target = _LABEL.match(command)
        if target:
            tracer.env.pop(target.group(1), None)
        return None
    if len(tree.body) != 1:
        return None
    node = tree.body[0]
    if isinstance(node, ast.FunctionDef):
        tracer.statement(node, tracer.env)
        return None
    record, tracer.record = tracer.record, False
    try:
        if isinstance(node, ast.Assign) and len(node.targets) == 1:
            tracer.statement(node, tracer.env)
            name = node.targets[0]
            return tracer.env.get(name.id) if isinstance(name, ast.Name) else None
        if isinstance(node, ast.Expr):
            return tracer.statement(node, tracer.env)
        return None
    finally:
        tracer.record = record


def _compare(tracer: Tracer, values: Any, lines: list[str], start: int, end: int) -> None:
    """Compare the grid displayed on lines ``start .. end - 1`` (0-based) with ``values``."""
    array = np.atleast_2d(np.asarray(values, dtype=float))
    rows: list[tuple[int, list[str]]] = []
    for k in range(start, end):
        text = lines[k]
        if not text.strip() or re.fullmatch(r"\s*\w+\s*=\s*", text) or text.strip().startswith("```"):
            continue
        inline = re.fullmatch(r"\s*\w+\s*=\s*(.+)", text)
        numbers = _shown(inline.group(1) if inline else text)
        if numbers is None:
            return  # "Columns 1 through 8", a scale factor, words: not a grid this reader follows
        rows.append((k + 1, numbers))
    if len(rows) != array.shape[0] or any(len(r) != array.shape[1] for _, r in rows):
        return
    verdicts = []
    for (line, tokens), row in zip(rows, array, strict=True):
        wrong = next(((t, v) for t, v in zip(tokens, row, strict=True)
                      if not _agrees(t.replace("Inf", "inf").replace("NaN", "nan"), float(v))), None)
        verdicts.append((line, wrong))
    lines_ok = [(w is None, True) for _, w in verdicts]
    ours = [[(f"{v:g}", float(v)) for v in row] for row in array]
    theirs = [[t.replace("Inf", "inf").replace("NaN", "nan") for t in r] for _, r in rows]
    if not _localised(lines_ok, ours, theirs):
        tracer.record = True
        tracer.add(rows[0][0], "unchecked", "every number displayed differs from what the commands above compute: "
                   "the commands or the display were changed; not judged", "number")
        return
    tracer.record = True
    for line, wrong in verdicts:
        if wrong is None:
            tracer.add(line, "correct", "what the commands above display (traced, at the precision printed)",
                       "number")
        else:
            tracer.add(line, "wrong", f"the commands above give {wrong[1]:.6g} here, not {wrong[0]}", "number",
                       f"{wrong[1]:.6g}")
