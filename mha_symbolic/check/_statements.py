r"""Reading code for :mod:`.extract`: one item per top-level statement, the values of literals.

Explanation
===========

:func:`statements` parses a code block or a notebook code cell with :func:`ast.parse` and
returns ``(line, text, name, value)`` per top-level assignment or expression: ``line`` is the
statement's first line (1-based, within ``source``), ``text`` its source (a multi-line literal is
one statement), ``name`` the assignment target as written, ``value`` the numbers of the right
side when it is a literal -- read with :func:`ast.literal_eval` on list, tuple, number and
unary-minus nodes only, after unwrapping ``np.array(...)``, ``torch.tensor(...)`` and the like.
Nothing is evaluated.  IPython magics (``%...``, ``!...``) are blanked first.  Code that still
does not parse falls back to a line-by-line reading: ``NAME = literal`` (continued over lines
while brackets are open; a literal may also be NumPy's printed form, read lexically by
:func:`~mha_symbolic.check._outputs.read_printed`) and labelled rows such as ``token 1: [0.2, 0.5]``.

:func:`printing_names` lists what a notebook cell prints: the argument of each top-level
``print(...)``/``display(...)`` call, and the last expression (shown as the cell's result).

Examples
========

>>> statements("X = np.array([[1, 0],\n              [0, -2]], dtype=float)\nQ = X @ W")[0]
(1, 'X = np.array([[1, 0],\n              [0, -2]], dtype=float)', 'X', [[1, 0], [0, -2]])
>>> statements("X = np.array([[1, 0],\n              [0, -2]], dtype=float)\nQ = X @ W")[1]
(3, 'Q = X @ W', 'Q', None)
>>> statements("token 1: [0.2, 0.5]\nWQ1 = [[1,0],\n       [0,1]]")
[(1, 'token 1: [0.2, 0.5]', 'token 1', [0.2, 0.5]), (2, 'WQ1 = [[1,0],\n       [0,1]]', 'WQ1', [[1, 0], [0, 1]])]
>>> printing_names('print("A1 =", A1)\ndisplay(A2)\nA1.shape')
(['A1', 'A2'], 'A1.shape')
"""

from __future__ import annotations

import ast
import re
import warnings
from functools import lru_cache
from typing import Any

from ._outputs import read_printed

__all__ = ["literal", "printing_names", "statements"]

#: Callables that wrap a literal array: ``np.array([...])``, ``torch.tensor([...])``, ``tf.constant([...])``.
_WRAPPERS = {"array", "asarray", "tensor", "as_tensor", "Tensor", "FloatTensor", "DoubleTensor", "LongTensor",
             "matrix", "asmatrix", "constant", "convert_to_tensor", "Matrix"}
_ROW = re.compile(r"\s*([^\W\d][\w .]{0,40}?)\s*:\s*(\[.*\])\s*$")
_ASSIGN = re.compile(r"\s*([^\W\d][\w.]*(?:\[[^\]=]*\])*(?:\s*,\s*[^\W\d][\w.]*)*)\s*(?::[^=]*)?=(?!=)\s*(.*)$")
_ERRORS = (SyntaxError, ValueError, TypeError, RecursionError, MemoryError, OverflowError)

Item = tuple[int, str, "str | None", Any]


def _numeric(node: ast.AST) -> bool:
    if isinstance(node, ast.Constant):
        return isinstance(node.value, (int, float)) and not isinstance(node.value, bool)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        return _numeric(node.operand)
    if isinstance(node, (ast.List, ast.Tuple)):
        return all(_numeric(e) for e in node.elts)
    return False


def _lists(value: Any) -> Any:
    return [_lists(v) for v in value] if isinstance(value, (list, tuple)) else value


def literal(node: ast.AST | None) -> Any:
    """The numbers of a literal node (nested lists of int/float, or a number); ``None`` otherwise."""
    if isinstance(node, ast.Call) and node.args:
        func = node.func
        callee = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
        if callee in _WRAPPERS:
            return literal(node.args[0])
    try:
        if node is None or not _numeric(node):
            return None
        return _lists(ast.literal_eval(node))
    except _ERRORS:
        return None


def _parse(source: str, mode: str = "exec") -> ast.AST | None:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return ast.parse(source, mode=mode)
    except _ERRORS:
        return None


def _literal_text(text: str) -> Any:
    tree = _parse(text.strip().replace("\u2212", "-"), "eval")
    return literal(tree.body) if isinstance(tree, ast.Expression) else None


@lru_cache(maxsize=8)
def _source_lines(source: str) -> tuple[str, ...]:
    """The lines of ``source`` as ``ast`` numbers them (split at \\r\\n, \\r and \\n only), each with its end."""
    out, start = [], 0
    for m in re.finditer(r"\r\n|\r|\n", source):
        out.append(source[start:m.end()])
        start = m.end()
    if start < len(source):
        out.append(source[start:])
    return tuple(out)


def _segment(source: str, node: Any) -> str:
    """``ast.get_source_segment``, with the source split into lines once: that function splits the whole source
    at every call, so a block of n statements cost n^2 (10^4 code lines: minutes)."""
    try:
        lines = _source_lines(source)
        first, last = node.lineno - 1, node.end_lineno - 1
        col, end = node.col_offset, node.end_col_offset
        if first == last:
            return lines[first].encode()[col:end].decode()
        return "".join([lines[first].encode()[col:].decode(), *lines[first + 1:last],
                        lines[last].encode()[:end].decode()])
    except (*_ERRORS, AttributeError, IndexError, TypeError, UnicodeDecodeError):
        return ""


def _depth(text: str) -> int:
    return sum(text.count(c) for c in "[(") - sum(text.count(c) for c in ")]")


def _per_line(source: str) -> list[Item]:
    lines = source.split("\n")
    out: list[Item] = []
    i = 0
    while i < len(lines):
        line = lines[i]
        row = _ROW.match(line)
        assign = None if row else _ASSIGN.match(line)
        if row:
            out.append((i + 1, line.strip(), row.group(1), _literal_text(row.group(2))))
        elif assign and assign.group(2).strip():
            start, rhs = i, assign.group(2)
            depth = _depth(rhs)
            while depth > 0 and i + 1 < len(lines) and i - start < 500:
                i += 1
                rhs += "\n" + lines[i]
                depth += _depth(lines[i])
            value = _literal_text(rhs)
            value = read_printed(rhs) if value is None else value  # NumPy's printed form: ``[[0.1 0.2] ...]``
            out.append((start + 1, "\n".join(lines[start:i + 1]).strip(), assign.group(1).strip(), value))
        i += 1
    return out


def _blank_magics(source: str) -> str:
    return "\n".join("" if line.lstrip().startswith(("%", "!")) else line for line in source.split("\n"))


def statements(source: str) -> list[Item]:
    """``(line, text, name, value)`` per top-level statement of ``source`` (see the module docstring)."""
    code = _blank_magics(source)
    tree = _parse(code)
    if not isinstance(tree, ast.Module):
        return _per_line(source)
    out: list[Item] = []
    for node in tree.body:
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str):
            continue  # a docstring or a bare string
        if isinstance(node, ast.Assign):
            name, value = _segment(code, node.targets[0]), literal(node.value)
        elif isinstance(node, ast.AnnAssign):
            # ``token1: [0.2, 0.5]`` parses as an annotation without a value: read it as a labelled row
            name, value = _segment(code, node.target), literal(node.annotation if node.value is None else node.value)
        elif isinstance(node, ast.AugAssign):
            name, value = _segment(code, node.target), None  # ``x += 1`` is no value of x
        elif isinstance(node, ast.Expr):
            name, value = None, literal(node.value)
        else:
            continue
        out.append((node.lineno, _segment(code, node) or code.split("\n")[node.lineno - 1].strip(), name, value))
    return out


def _printed_arg(call: ast.Call, source: str) -> str | None:
    args = [a for a in call.args if not (isinstance(a, ast.Constant) and isinstance(a.value, str))]
    return _segment(source, args[-1]) or None if args else None


def _is_printing(node: ast.AST) -> bool:
    return (isinstance(node, ast.Expr) and isinstance(node.value, ast.Call) and isinstance(node.value.func, ast.Name)
            and node.value.func.id in ("print", "display"))


def printing_names(source: str) -> tuple[list[str | None], str | None]:
    """What each top-level ``print``/``display`` call prints, and the cell's last expression (if any)."""
    code = _blank_magics(source)
    tree = _parse(code)
    if not isinstance(tree, ast.Module):
        return [], None
    calls = [_printed_arg(node.value, code) for node in tree.body
             if _is_printing(node) and isinstance(node, ast.Expr) and isinstance(node.value, ast.Call)]
    tail = tree.body[-1] if tree.body else None
    last = _segment(code, tail.value) or None if isinstance(tail, ast.Expr) and not _is_printing(tail) else None
    return calls, last
