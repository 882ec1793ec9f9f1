r"""Exact arithmetic of a document's counts and indices, read without ``eval``.

:func:`arithmetic_value` reads numbers, the document's sizes (by any spelling :func:`.model.dim_name` knows:
``g``, ``n_kv_heads``, ``head_dim``, ``d_{model}``), ``+ - * / //``, brackets, implicit products
(``i g``), ``\lceil \rceil``, ``\lfloor \rfloor``, ``ceil(...)``, ``floor(...)``, ``\frac{a}{b}`` and whole powers up to
the 64th (``1024^2``, ``2^{10}``) with a small recursive-descent parser, in exact fractions.  Anything else is a
``ValueError``.

>>> arithmetic_value(r"\lceil i g / h \rceil", {"i": 5, "g": 2, "h": 8})
2
>>> arithmetic_value("2 * n_kv_heads * head_dim", {"g": 8, "d_k": 128})
2048
>>> arithmetic_value(r"2 \cdot 1024^2 \cdot 768", {}), arithmetic_value("2^{10}", {})
(1610612736, 1024)
"""

from __future__ import annotations

import re
from fractions import Fraction
from typing import Any

from .model import dim_name

__all__ = ["arithmetic_value"]


_TOKEN = re.compile(r"\s*(\\lceil|\\rceil|\\lfloor|\\rfloor|\\frac|\\cdot|\\times|\\left|\\right|\\[,;!]|//|"
                    r"ceil|floor|\d+(?:\.\d+)?|[A-Za-z][A-Za-z0-9]*(?:_\{?[A-Za-z0-9]+\}?)*|[-+*/(){}⌈⌉⌊⌋·×^])")


def _tokens(text: str) -> list[str]:
    out, at = [], 0
    text = text.strip()
    while at < len(text):
        m = _TOKEN.match(text, at)
        if not m:
            raise ValueError(f"cannot read {text[at:at + 12]!r} in the index {text!r}")
        tok = m.group(1)
        at = m.end()
        if tok in (r"\left", r"\right", r"\,", r"\;", r"\!"):
            continue
        out.append({"⌈": r"\lceil", "⌉": r"\rceil", "⌊": r"\lfloor", "⌋": r"\rfloor", "·": "*", "×": "*",
                    r"\cdot": "*", r"\times": "*"}.get(tok, tok))
    return out


class _Arithmetic:
    """A recursive-descent reader of ``+ - * / //``, brackets, ceil/floor and implicit products, exact."""

    def __init__(self, tokens: list[str], names: dict[str, Any]):
        self.t, self.k, self.names = tokens, 0, names

    def peek(self) -> str | None:
        return self.t[self.k] if self.k < len(self.t) else None

    def take(self, expected: str | None = None) -> str:
        tok = self.peek()
        if tok is None or expected is not None and tok != expected:
            raise ValueError(f"expected {expected or 'more'} in {' '.join(self.t)!r}")
        self.k += 1
        return tok

    def expr(self) -> Fraction:
        value = self.term()
        while self.peek() in ("+", "-"):
            value = value + self.term() if self.take() == "+" else value - self.term()
        return value

    def term(self) -> Fraction:
        value = self.factor()
        while True:
            tok = self.peek()
            if tok in ("*", "/", "//"):
                self.take()
                right = self.factor()
                if tok != "*" and right == 0:
                    raise ValueError("division by zero")
                value = value * right if tok == "*" else value / right if tok == "/" else Fraction(value // right)
            elif tok is not None and tok not in ("+", "-", ")", "}", r"\rceil", r"\rfloor"):
                value = value * self.factor()  # i g: an implicit product
            else:
                return value

    def factor(self) -> Fraction:
        """A primary, raised to a whole power when ``^`` follows (``1024^2``, ``2^{10}``): at most the 64th,
        a budget of work that keeps a hostile exponent from costing time."""
        value = self.primary()
        if self.peek() != "^":
            return value
        self.take()
        if self.peek() == "{":
            self.take()
            power = self.expr()
            self.take("}")
        else:
            tok = self.take()
            if not tok.isdigit():
                raise ValueError(f"an exponent {tok!r} that is not a whole number")
            power = Fraction(int(tok[0]))  # 10^23 in TeX is 10^2 followed by 3: one digit binds
            if len(tok) > 1:
                self.t.insert(self.k, tok[1:])
        if power.denominator != 1 or abs(power) > 64:
            raise ValueError(f"an exponent {power} outside the whole numbers up to 64")
        return value ** int(power)

    def primary(self) -> Fraction:
        tok = self.take()
        if tok == "-":
            return -self.factor()
        if tok in ("(", "{"):
            value = self.expr()
            self.take(")" if tok == "(" else "}")
            return value
        if tok in (r"\lceil", r"\lfloor"):
            value = self.expr()
            self.take(r"\rceil" if tok == r"\lceil" else r"\rfloor")
            return Fraction(-(-value.numerator // value.denominator) if tok == r"\lceil" else value.numerator //
                            value.denominator)
        if tok in ("ceil", "floor"):
            self.take("(")
            value = self.expr()
            self.take(")")
            return Fraction(-(-value.numerator // value.denominator) if tok == "ceil" else value.numerator //
                            value.denominator)
        if tok == r"\frac":
            self.take("{")
            num = self.expr()
            self.take("}")
            self.take("{")
            den = self.expr()
            self.take("}")
            if den == 0:
                raise ValueError("division by zero")
            return num / den
        if re.fullmatch(r"\d+(?:\.\d+)?", tok):
            return Fraction(tok)
        key = tok if tok in self.names else dim_name(tok)
        if key is None or self.names.get(key) is None:
            raise ValueError(f"{tok} is not a size the document fixes")
        return Fraction(self.names[key])


def arithmetic_value(text: str, names: dict[str, Any]) -> Fraction:
    """The exact value of an index or size expression (``\\lceil i g / h \\rceil``, ``2 * 8 * 128``) with the
    sizes ``names``; ValueError when it is not such an expression."""
    reader = _Arithmetic(_tokens(text), names)
    value = reader.expr()
    if reader.peek() is not None:
        raise ValueError(f"cannot read {text!r} as arithmetic")
    return int(value) if value.denominator == 1 else value  # type: ignore[return-value]
