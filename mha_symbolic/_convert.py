"""The package's one conversion of Python values to SymPy: numbers and SymPy objects only, never text.

``sympy.sympify`` parses a string with ``eval`` (``sympify("__import__('os').system(...)")`` runs the command),
so the package never calls it: :func:`as_sympy` is SymPy's strict conversion, which refuses strings, and it
turns that refusal into an :class:`~mha_symbolic.errors.InputError` that names the argument.  Text is read
only by the package's own LaTeX reader (:mod:`mha_symbolic.parse`) and :mod:`mha_symbolic.values`.

Examples
========

>>> as_sympy(3), as_sympy(0.5)
(3, 0.500000000000000)
>>> as_sympy("__import__('os').getcwd()", "rank_bound's expression")
Traceback (most recent call last):
...
mha_symbolic.errors.InputError: rank_bound's expression: got the string "__import__('os').getcwd()"; strings are \
never evaluated -- build it from SymPy objects, or read LaTeX with mha_symbolic.parse.read_expression
"""

from __future__ import annotations

from typing import Any

from sympy import Basic
from sympy.core.sympify import SympifyError, _sympify

from .errors import InputError

__all__ = ["as_sympy"]


def as_sympy(value: Any, what: str = "value") -> Any:
    """``value`` as a SymPy object (Python and NumPy numbers, booleans and SymPy objects); anything else,
    strings first of all, raises :class:`~mha_symbolic.errors.InputError` naming ``what``."""
    if isinstance(value, Basic):
        return value
    if isinstance(value, (str, bytes)):
        shown = repr(value if len(value) <= 60 else value[:57])
        raise InputError(f"{what}: got the string {shown.lstrip('b')}; strings are never evaluated -- build it "
                         "from SymPy objects, or read LaTeX with mha_symbolic.parse.read_expression")
    try:
        return _sympify(value)
    except SympifyError:
        raise InputError(f"{what}: cannot use a {type(value).__name__} as a SymPy expression") from None
