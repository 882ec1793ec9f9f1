"""One exception tree for the whole package.

Every error the package raises on purpose is an :class:`MHASymbolicError`; the
command-line interface catches exactly this type and prints its message on one
line.  The subclasses also derive from the built-in type a caller would expect
(``ValueError`` for bad values), so ``except ValueError`` keeps working.

Examples
========

>>> from mha_symbolic.errors import DimensionError, MHASymbolicError
>>> issubclass(DimensionError, MHASymbolicError), issubclass(DimensionError, ValueError)
(True, True)
"""

from __future__ import annotations

__all__ = [
    "MHASymbolicError",
    "DimensionError",
    "ShapeError",
    "InputError",
    "ParseError",
    "SizeLimitError",
    "MaskError",
    "require",
    "require_int",
]


class MHASymbolicError(Exception):
    """Root of every error raised on purpose by mha_symbolic."""


class DimensionError(MHASymbolicError, ValueError):
    """A dimension (n, d_model, h, d_k, d_v) is invalid or inconsistent, e.g. h=3 with d_model=4."""


class ShapeError(MHASymbolicError, ValueError):
    """Two shapes do not fit; the message names the step and both shapes."""


class InputError(MHASymbolicError, ValueError):
    """A user-supplied value (a matrix, a weight list, an option) is malformed; the message names it."""


class ParseError(MHASymbolicError, ValueError):
    """Text (LaTeX, Markdown, a number) could not be read; the message says where."""


class SizeLimitError(MHASymbolicError):
    """An exact computation would exceed the documented size limit; it was refused before starting."""


class MaskError(InputError):
    """A mask leaves a row of the attention weights with no key to attend to (softmax of an empty row)."""


def require(value: object, kind: type | tuple[type, ...], where: str, wanted: str | None = None) -> None:
    """Raise an :class:`InputError` naming the parameter (``where``) unless ``value`` is of ``kind``: the
    package's error for a wrong type at a public call, instead of an ``AttributeError`` deep inside it.

    >>> require(None, str, "example's name", "the name of an example")
    Traceback (most recent call last):
    ...
    mha_symbolic.errors.InputError: example's name must be the name of an example, got NoneType
    """
    if not isinstance(value, kind) or isinstance(value, bool) and bool not in (kind if isinstance(kind, tuple)
                                                                                else (kind,)):
        names = wanted or " or ".join(k.__name__ for k in (kind if isinstance(kind, tuple) else (kind,)))
        raise InputError(f"{where} must be {names}, got {type(value).__name__}")


def require_int(value: object, where: str, low: int = 1, high: int | None = None) -> None:
    """Raise an :class:`InputError` naming the parameter unless ``value`` is a whole number in ``low..high`` (a
    bool is not one): the package's error for a count or size, instead of Python's from deep inside.

    >>> require_int(3, "h"); require_int("x", "h")
    Traceback (most recent call last):
    ...
    mha_symbolic.errors.InputError: h must be a whole number from 1, got 'x'
    """
    import numbers

    span = f"from {low}" + ("" if high is None else f" to {high}")
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or int(value) < low or \
            (high is not None and int(value) > high):
        raise InputError(f"{where} must be a whole number {span}, got {value!r}")
