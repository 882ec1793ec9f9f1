r"""Reading printed values: notebook outputs and output listings (a helper of :mod:`.extract`).

Explanation
===========

:func:`printed_values` cuts a printed text into values, one per printed object, each with the
0-based line where it starts, its text, the label printed before it (``A1 = ...``, ``A1:`` on the
line above, ``Q.shape: ...``) and the numbers read by :func:`read_printed`.  A line that holds no
value is kept as a text item (value ``None``).

:func:`read_printed` reads what NumPy, PyTorch and Python print: ``array([[...]])``,
``tensor([[...]], grad_fn=<...>)``, ``torch.Size([3, 4])``, ``tensor(3)``, ``np.float64(0.5)``,
NumPy's bracket rows without commas, tuples, lists, scientific notation, ``nan`` and ``inf``
(kept as floats).  Anything else -- words, ``...`` from a summarised array, complex numbers --
gives ``None``.  Only small lexical patterns are used; nothing is evaluated.

Examples
========

>>> read_printed("array([[ 0,  2, -2],\n       [ 1,  2, -1]])")
[[0, 2, -2], [1, 2, -1]]
>>> read_printed("[[0.1 2.5e-01]\n [nan -inf]]")
[[0.1, 0.25], [nan, -inf]]
>>> [(line, label, value) for line, _, label, value in printed_values("A1 =\n[[1. 0.]\n [0. 1.]]\ndone")]
[(0, 'A1', [[1.0, 0.0], [0.0, 1.0]]), (3, None, None)]
"""

from __future__ import annotations

import re
from typing import Any

__all__ = ["printed_values", "read_printed"]

#: Callables whose printed form wraps a value: ``array(...)``, ``torch.Size(...)``, ``np.float64(...)``.
_WRAPPERS = {"array", "tensor", "Tensor", "Size", "matrix", "Array", "DeviceArray", "Parameter", "float16",
             "float32", "float64", "int8", "int16", "int32", "int64", "uint8", "longdouble", "float_", "int_"}
_WRAPPED = re.compile(r"([A-Za-z_][\w.]*)\((.*)\)", re.S)
_NUMBER = r"[-+]?(?:(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?|nan|inf)"  # one way to split digits: linear
_TOKEN = re.compile(r"\s*(?:([\[\]\(\),])|(" + _NUMBER + r")(?![\w.])|(\S+))")
_LEADING_NUMBER = re.compile(_NUMBER + r"(?![\w.])")
_MAX_LINES = 2000


def _number(token: str) -> int | float:
    if any(ch in token for ch in ".eEn") or "inf" in token:
        return float(token)
    return int(token)


def _balanced_end(text: str, start: int) -> int:
    """Index just past the bracket group opening at ``start`` (``len(text)`` if it never closes)."""
    depth = 0
    for k in range(start, len(text)):
        ch = text[k]
        if ch in "[(":
            depth += 1
        elif ch in ")]":
            depth -= 1
            if depth == 0:
                return k + 1
    return len(text)


def _read_literal(text: str) -> Any:
    """Nested lists of numbers from a bracketed literal (commas optional), or a bare number."""
    stack: list[list[Any]] = [[]]
    pos = 0
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        if m is None:  # only trailing whitespace is left
            break
        pos = m.end()
        bracket, number, other = m.groups()
        if other is not None:
            return None
        if number is not None:
            stack[-1].append(_number(number))
        elif bracket in "[(":
            stack.append([])
        elif bracket in ")]":
            if len(stack) < 2:
                return None
            inner = stack.pop()
            stack[-1].append(inner)
    if len(stack) != 1 or len(stack[0]) != 1:
        return None
    return stack[0][0]


def read_printed(text: str) -> Any:
    """The numbers of one printed value (see the module docstring); ``None`` if it holds none."""
    text = text.strip().replace("\u2212", "-")
    wrapped = False
    while (m := _WRAPPED.fullmatch(text)) and m.group(1).rsplit(".", 1)[-1] in _WRAPPERS:
        text, wrapped = m.group(2).strip(), True
    if wrapped:  # keep the leading literal, drop ``, dtype=...``, ``, grad_fn=<...>``
        if text[:1] in "[(":
            text = text[:_balanced_end(text, 0)]
        elif (n := _LEADING_NUMBER.match(text)) is not None:
            text = n.group(0)
    try:
        return _read_literal(text)
    except (ValueError, OverflowError):
        return None


def _starts_value(text: str) -> bool:
    if not text:
        return False
    if text[0] in "[(" or _LEADING_NUMBER.match(text.replace("\u2212", "-")):
        return True
    m = re.match(r"([A-Za-z_][\w.]*)\(", text)
    return m is not None and m.group(1).rsplit(".", 1)[-1] in _WRAPPERS


def _split_label(line: str) -> tuple[str | None, str]:
    """``("A1", "[[...")`` for ``A1 = [[...``; ``(None, line)`` when the line has no label."""
    depth = 0
    for k, ch in enumerate(line):
        if ch in "[(":
            depth += 1
        elif ch in ")]":
            depth -= 1
        elif ch in "=:" and depth == 0:
            label = line[:k].strip()
            if (line[k:k + 2] == "==" or not label or len(label) > 60 or not (label[0].isalpha() or label[0] == "_")
                    or _starts_value(label)):
                return None, line
            return label, line[k + 1:].strip()
        elif ch in "{'\"<" or depth < 0:
            break
    return None, line


def _depth(text: str) -> int:
    return sum(1 for ch in text if ch in "[(") - sum(1 for ch in text if ch in ")]")


def printed_values(text: str) -> list[tuple[int, str, str | None, Any]]:
    """``(line, text, label, value)`` per printed object of ``text``; ``line`` counts from 0."""
    lines = text.split("\n")
    out: list[tuple[int, str, str | None, Any]] = []
    i = 0
    while i < len(lines):
        stripped = lines[i].strip()
        if not stripped:
            i += 1
            continue
        start = i
        label, body = _split_label(stripped)
        if label is not None and not body and i + 1 < len(lines) and _starts_value(lines[i + 1].strip()):
            i += 1
            body = lines[i].strip()
        if not _starts_value(body):
            out.append((start, stripped, label, None))
            i += 1
            continue
        depth, parts = _depth(body), [body]
        while depth > 0 and i + 1 < len(lines) and i - start < _MAX_LINES:
            i += 1
            parts.append(lines[i].strip())
            depth += _depth(lines[i])
        value = read_printed("\n".join(parts))
        out.append((start, "\n".join(lines[start:i + 1]).strip(), label, value))
        i += 1
    return out
