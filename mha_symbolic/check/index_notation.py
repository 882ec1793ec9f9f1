r"""Index notation in code: ``einsum`` subscripts and einops ``rearrange`` patterns, read for the shape (and the
values) they give.  Nothing is executed: the shape follows from the string and the operands' shapes.

>>> from sympy import Integer as I
>>> einsum("bhqd,bhkd->bhqk", [(I(4), I(8), I(128), I(64)), (I(4), I(8), I(128), I(64))])
(4, 8, 128, 128)
>>> rearrange("b n (h d) -> b h n d", (I(4), I(128), I(512)), {"h": I(8)})
(4, 8, 128, 64)
>>> rearrange("b h n d -> b n (h d)", (I(4), I(8), I(128), I(64)), {})
(4, 128, 512)
"""

from __future__ import annotations

from typing import Any

import numpy as np
from sympy import Expr, Integer

__all__ = ["einsum", "einsum_values", "rearrange", "rearrange_values", "NotRead"]


class NotRead(ValueError):
    """The string is not index notation this module reads (an ellipsis, a repeated output letter, ...), or the
    operands do not fit it."""


def _subscripts(spec: str, operands: int) -> tuple[list[str], str]:
    spec = spec.replace(" ", "")
    if "." in spec or not spec:
        raise NotRead("an ellipsis")
    inputs, _, output = spec.partition("->")
    parts = inputs.split(",")
    if len(parts) != operands or not all(p.isalpha() for p in parts) or not (output.isalpha() or output == ""):
        raise NotRead(spec)
    if "->" not in spec:  # implicit output: the letters that occur once, in alphabetical order
        letters = "".join(parts)
        output = "".join(sorted(c for c in set(letters) if letters.count(c) == 1))
    if len(set(output)) != len(output) or any(c not in inputs for c in output):
        raise NotRead(spec)
    return parts, output


def einsum(spec: str, shapes: list[tuple[Any, ...]]) -> tuple[Any, ...]:
    """The shape ``np.einsum(spec, ...)`` / ``torch.einsum(spec, ...)`` gives operands of these shapes."""
    parts, output = _subscripts(spec, len(shapes))
    size: dict[str, Any] = {}
    for letters, shape in zip(parts, shapes, strict=True):
        if len(letters) != len(shape):
            raise NotRead(f"{letters} for {len(shape)} axes")
        for c, s in zip(letters, shape, strict=True):
            if c in size and isinstance(size[c], Integer) and isinstance(s, Integer) and size[c] != s and 1 not in (
                    size[c], s):
                raise NotRead(f"axis {c}: {size[c]} and {s}")
            if c not in size or size[c] == 1:
                size[c] = s
    return tuple(size[c] for c in output)


def einsum_values(spec: str, values: list[Any]) -> Any:
    return np.einsum(spec, *values)


def _axes(side: str) -> list[list[str]]:
    """``"b n (h d)"`` -> ``[["b"], ["n"], ["h", "d"]]`` (a group in parentheses is one axis)."""
    out: list[list[str]] = []
    group: list[str] | None = None
    for token in side.replace("(", " ( ").replace(")", " ) ").split():
        if token == "(":
            if group is not None:
                raise NotRead("nested group")
            group = []
        elif token == ")":
            if group is None:
                raise NotRead("unbalanced group")
            out.append(group)
            group = None
        elif token.isidentifier() or token == "1":
            if group is not None:
                group.append(token)
            else:
                out.append([token])
        else:
            raise NotRead(f"axis {token}")
    if group is not None:
        raise NotRead("unbalanced group")
    return out


def _pattern(pattern: str) -> tuple[list[list[str]], list[list[str]]]:
    left, arrow, right = pattern.partition("->")
    if not arrow or "..." in pattern:
        raise NotRead(pattern)
    return _axes(left), _axes(right)


def _elementary(left: list[list[str]], shape: tuple[Any, ...], sizes: dict[str, Any]) -> dict[str, Any]:
    if len(left) != len(shape):
        raise NotRead(f"{len(left)} axes for a tensor of {len(shape)}")
    size = dict(sizes)
    for group, total in zip(left, shape, strict=True):
        unknown = [a for a in group if a not in size and a != "1"]
        if len(unknown) > 1:
            raise NotRead(f"the sizes of {' '.join(unknown)} are not given")
        known: Expr = Integer(1)
        for a in group:
            if a in size:
                known = known * size[a]
        if unknown:
            size[unknown[0]] = total / known
            if size[unknown[0]].is_number and not size[unknown[0]].is_Integer:
                raise NotRead(f"({' '.join(group)}): {total} is not divisible by {known}")
        elif isinstance(total, Integer) and isinstance(known, Integer) and known != total:
            raise NotRead(f"({' '.join(group)}) is {known}, not {total}")
    return size


def rearrange(pattern: str, shape: tuple[Any, ...], sizes: dict[str, Any]) -> tuple[Any, ...]:
    """The shape ``einops.rearrange(x, pattern, **sizes)`` gives a tensor of this shape."""
    left, right = _pattern(pattern)
    size = _elementary(left, shape, sizes)
    if sorted(a for g in left for a in g if a != "1") != sorted(a for g in right for a in g if a != "1"):
        raise NotRead(pattern)
    out = []
    for group in right:
        total: Expr = Integer(1)
        for a in group:
            total = total * (size[a] if a != "1" else 1)
        out.append(total)
    return tuple(out)


def rearrange_values(pattern: str, values: Any, sizes: dict[str, Any]) -> Any:
    left, right = _pattern(pattern)
    size = _elementary(left, tuple(Integer(s) for s in values.shape), sizes)
    flat_left = [a for g in left for a in g if a != "1"]
    flat_right = [a for g in right for a in g if a != "1"]
    x = values.reshape([int(size[a]) for a in flat_left])
    x = x.transpose([flat_left.index(a) for a in flat_right])
    return x.reshape([int(np.prod([int(size[a]) for a in g if a != "1"])) for g in right])
