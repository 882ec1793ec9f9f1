r"""Arithmetic written in prose, judged from its own numbers: ``128 KB × 131,072 = 16.7 GB``,
``2 × 8 × 128 × 2 B = 4,096 B = 4 KiB``, ``32 / 8 = 4`` (a local computation: no model).

Explanation
===========

A chain is a run of numbers (a square or cube written ``512²`` or ``512^2``) joined by ``× x * · / + −``
with relations ``= ≈ ~`` between its sides, each number optionally followed by a unit of memory (bytes, KB, KiB,
MB, MiB, GB, GiB, TB, TiB).  A side's units are moved to its end (``128 KB × 131,072`` is ``128 \cdot 131072``
KB), so :func:`.units.judge_amounts` compares the sides in either reading of the decimal units; a chain without
units is exact arithmetic at the precision each side is written with.  Inline code that holds only arithmetic
(```2 · 24 · 1024 · 2``` bytes) is read like the prose around it.  A chain is read only whole: one preceded or
followed by an operator, or by a word inside the product ("80 layers × 64 heads × 128 × 2 B = ..."), is the tail of
something longer and is not read, and a side with two different units is not read.

>>> [c[0] for c in prose_chains("At 128K tokens: 128 KB × 131,072 = 16.7 GB just for the KV cache.")]
[['128 \\cdot 131072 \\text{KB}', '16.7 \\text{GB}']]
>>> prose_chains("2(K,V)*80 layers*64 heads*128*2 B = 2,621,440 B = 2.62 MB"), prose_chains("327 680 · 4 = 1 310 720")
([], [])
>>> [c[0] for c in prose_chains("that is 786,432 = 3·512², i.e. 64/2048 = 3.125 % and $6 \\cdot 7 / 2 = 21$")]
[['786432', '3 \\cdot 512^{2}']]
>>> prose_chains("2 x 80 x 8 x 128 x 2 = 327,680 = 0.33MB / token x 131072 = 42.95GB")
[]
>>> [c[0] for c in prose_chains("An 80 GB card holds 80 × 10^9 / 2^30 ≈ 74.5 GiB")]  # powers that convert units
[['80 \\cdot 10^{9} / 2^{30}', '74.5 \\text{GiB}']]
>>> [c[0] for c in prose_chains("In decimal units: 17,179,869,184 / 10⁹ ≈ 17.18 GB.")]
[['17179869184 / 10^{9}', '17.18 \\text{GB}']]
>>> [c[0] for c in prose_chains("Per token: m = 2 · 28 · 4 · 128 · 2 = 57,344 bytes = 56 KiB.")]
[['2 \\cdot 28 \\cdot 4 \\cdot 128 \\cdot 2', '57344 \\text{bytes}', '56 \\text{KiB}']]
>>> [c[0] for c in prose_chains("so `2 · 24 · 1024 · 2` bytes = 98,304 bytes; `n_layers * 2` is code")]
[['2 \\cdot 24 \\cdot 1024 \\cdot 2 \\text{bytes}', '98304 \\text{bytes}']]
>>> [c[0] for c in prose_chains("Cost `n²·d_k = 1024² · 64 = 67,108,864` multiply-adds")]
[['1024^{2} \\cdot 64', '67108864']]
>>> [c[0] for c in prose_chains("Per token: 2 (K and V) × 8 × 128 × 2 bytes = 4,096 bytes.")]
[['2 \\cdot 8 \\cdot 128 \\cdot 2 \\text{bytes}', '4096 \\text{bytes}']]
"""

from __future__ import annotations

import re

from sympy import Rational

from ..statements._base import agrees
from .arithmetic import arithmetic_value
from .units import _BINARY, _DECIMAL, _FLOPS, judge_amounts

__all__ = ["prose_chains", "judge_prose_amounts"]

_UNITS = "(?:" + "|".join(sorted([*_BINARY, *_DECIMAL, *_FLOPS], key=len, reverse=True)) + ")"  # units.py's units
_NUM = r"\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?(?:e\d{1,2}(?![\w.]))?"  # 54e9: 54 x 10^9
#: a power that converts units: 10^9, 10⁹, 2^30, 1024³ (its exponent no amount of its own)
_POWER = r"(?:10|2|1000|1024)(?:\^\{?\d{1,2}\}?|[⁰¹²³⁴⁵⁶⁷⁸⁹]{1,2})(?![\d.,])"
_TERM = rf"(?:{_POWER}|(?:{_NUM})(?:\^[23](?![\d.])|[²³])?)(?:\s*{_UNITS}(?![\w]))?"  # 1024², 1024^2: a square
_OP = r"\s*(?:×|\*|·|⋅|/|\+|−|-|\bx\b)\s*"
_REL = r"\s*(?:=(?:\s*(?:about|approximately|roughly)\b)?|≈|~|≃)\s*"  # "= about 329,589": approximately
_SIDE = rf"{_TERM}(?:{_OP}{_TERM})*"
#: a whole chain: not the tail of a longer one (an operator, a relation or a digit group before it) nor its head
_CHAIN = re.compile(rf"(?<![\w.,×*·⋅/+−=≈~^√-])(?<![=≈~×*·⋅/+−-]\s)(?<!\d\s)(?<!\sx\s)({_SIDE}(?:{_REL}{_SIDE})+)"
                    rf"(?![\w.]*\s*(?:×|\*|·|⋅|/|\^|=|%))(?!\s\d)(?![,.]\d)(?![²³¹⁰-⁹^\w])")
#: (a number under a root, "1/√64 = 1/8", starts no chain of amounts: the formula readers read the root)
#: what the chain after it evaluates, written in names ("m = ", "n * n * d_k = ", "4 · d² = "): not a side of it
_OPERAND = r"(?:\d+|[A-Za-z][\w²³]*)"
_NAMED = rf"(?:\d+\s*[×*·⋅/+−]\s*)*[A-Za-z][\w²³]*(?:\s*[×*·⋅/+−]\s*{_OPERAND})*"  # (its first name: one way)
_DEFINED = re.compile(rf"(?<![\w.,×*·⋅/+−=≈~^-])(?<![=≈~×*·⋅/+−-]\s)"
                      rf"{_NAMED}\s*=\s*(?=\d[\d,.]*(?:[²³]|\^[23])?\s*(?:×|\*|·|⋅|/|\+|−|\bx\b))")
#: math and code spans: read by their own readers, never as prose arithmetic
_SPANS = re.compile(r"\$\$.*?\$\$|\$[^$]*\$|`[^`]*`|\\\(.*?\\\)", re.S)


_SUPERSCRIPTS = str.maketrans("⁰¹²³⁴⁵⁶⁷⁸⁹", "0123456789")


def _side_tex(side: str) -> str | None:
    """``128 KB × 131,072`` as ``128 \\cdot 131072 \\text{KB}``; None for a side with two different units."""
    units = {u for u in re.findall(rf"(?<=[\d\s])({_UNITS})(?![\w])", side)}
    units = {"B" if u in ("byte", "bytes") else u for u in units}
    if len(units) > 1:
        return None
    bare = re.sub(rf"\s*{_UNITS}(?![\w])", "", side)
    bare = re.sub(r"(?<=\d),(?=\d{3})", "", bare)
    bare = re.sub(r"(\d)e(\d{1,2})\b", r"\1 \\cdot 10^{\2}", bare)  # 54e9
    bare = re.sub(r"[⁰¹²³⁴⁵⁶⁷⁸⁹]+", lambda m: "^{%s}" % m.group(0).translate(_SUPERSCRIPTS), bare)  # 10⁹
    bare = re.sub(r"\^(\d+)", r"^{\1}", bare)
    bare = re.sub(r"\s*(?:×|\*|·|⋅|\bx\b)\s*", r" \\cdot ", bare).replace("−", "-")
    return bare.strip() + (f" \\text{{{'bytes' if units == {'B'} else next(iter(units))}}}" if units else "")


def _unwrapped(m: re.Match[str]) -> str:
    r"""A math or code span as a wall (`` § ``), except a span that holds only arithmetic, read as the prose around
    it: inline code (```2 · 24 · 1024 · 2``` bytes) and inline math of numbers (``$= 16 \cdot 4{,}194{,}304 \cdot
    4 = 268{,}435{,}456$ bytes $= 512$ MiB``: one chain, written partly in math)."""
    span = m.group(0)
    if span.startswith("`") and re.fullmatch(rf"`\s*(?:{_NAMED}\s*=\s*)?{_SIDE}(?:{_REL}{_SIDE})*\s*`", span):
        return " " + span[1:-1] + " "  # (```n²·d_k = 1024² · 64 = 67,108,864```: what the numbers compute, named)
    if span.startswith("$") and not span.startswith("$$"):
        inner = re.sub(r"\\(?:cdot|times)", " · ", span.strip("$"))
        inner = re.sub(r"(?<=\d)(?:\{,\}|\\,)(?=\d{3})", ",", inner)
        inner = re.sub(rf"\\(?:text|mathrm)\{{\s*({_UNITS})\s*\}}", r" \1", inner)
        if re.fullmatch(rf"(?:{_REL})?\s*{_SIDE}(?:{_REL}{_SIDE})*\s*(?:{_REL})?", inner.strip()):
            return " " + inner.strip() + " "
    return " § "


#: words in brackets between a number and the operator after it: what the factor counts ("2 (K and V) × 8")
_LABEL = re.compile(r"(?<=\d)\s*\((?:[^\W\d_]|[ /,&+'-]){1,30}\)(?=\s*(?:×|\*|·|⋅|\bx\b))")


def prose_chains(text: str) -> list[tuple[list[str], list[str]]]:
    """The chains of a line of prose as (sides as LaTeX, relations ``eq``/``approx``)."""
    text = re.sub(r"\*\*([^*`]+)\*\*|__([^_`]+)__", r"\1\2", text)  # **384 MiB**: emphasis is no part of a number
    text = _LABEL.sub("", text) if "(" in text else text  # "2 (K and V) × 8 × 128": a factor's label in brackets
    # a chain that one math span holds whole is the math reader's: read here only a chain that goes on outside it
    alone = {tuple(sides) for m in re.finditer(r"(?<!\$)\$[^$]+\$(?!\$)", text)
             for sides, _ in _chains(_unwrapped(m).strip())} if "$" in text else set()
    text = _SPANS.sub(_unwrapped, text)  # a chain never runs into or out of math or code
    text = re.sub(rf"§\s*(?:{_UNITS}(?![\w]))?\s*=\s*(?=\d)", " ", text)  # "$H T^2 \cdot 4$ bytes = 16 · ...": what
    # the chain after it evaluates, written in math: not a side of it
    unitless = {tuple(_unitless(x) for x in sides) for sides in alone}  # "$2 \cdot 1024 = 2048$ bytes": the math
    return [c for c in _chains(text) if tuple(c[0]) not in alone and tuple(_unitless(x) for x in c[0]) not in unitless]


def _unitless(side: str) -> str:
    """A side without the unit written after it (``2048 \text{bytes}``: 2048)."""
    return re.sub(r"\s*\\text\{[^{}]*\}\s*$", "", side).strip()


def _chains(text: str) -> list[tuple[list[str], list[str]]]:
    """The whole chains of a text whose math and code are already unwrapped or walled off."""
    out = []
    text = _DEFINED.sub(" ", text)  # "m = 2 · 28 · 4 · 128 · 2 = 57,344 bytes": the chain that defines m, read whole
    for m in _CHAIN.finditer(text):
        parts = re.split(rf"({_REL})", m.group(1))
        sides, rels = parts[0::2], [r.strip() for r in parts[1::2]]
        if len(sides) < 2:
            continue
        tex = [_side_tex(s) for s in sides]
        if any(t is None for t in tex):
            continue
        out.append(([t for t in tex if t is not None], ["eq" if r.strip() == "=" else "approx" for r in rels]))
    return out


def judge_prose_amounts(text: str) -> list[tuple[str, str, str | None, str]]:
    """Verdicts on the chains of one line of prose (see the module docstring)."""
    verdicts = []
    for sides, ops in prose_chains(text):
        if not any(re.search(r"\\cdot|/|\+|-|\^", s) for s in sides) and not any("text" in s for s in sides):
            continue  # "item 3 = 4": no operation and no unit, a list or a label, not a computation (768² is one)
        got = judge_amounts({}, sides, ops)
        if got is None:
            got = _plain(sides, ops)
        if got is not None and got[0] == "wrong" and re.search(r"\d\s*B(?![\w/])", text) and _billions(sides):
            got = ("unchecked", "holds if B is a billion (as in '1.04 B parameters'), not bytes", None, "")
        if got is not None:
            verdicts.append(got)
    return verdicts


def _billions(sides: list[str]) -> bool:
    """Two sides, a count and ``1.04 B``: does the count round to the number of billions written?"""
    stated = [re.fullmatch(r"(\d+(?:\.(\d+))?)\s*\\text\{bytes\}", x.strip()) for x in sides]
    if len(sides) != 2 or sum(m is not None for m in stated) != 1:
        return False
    m = next(m for m in stated if m is not None)
    try:
        count = Rational(str(arithmetic_value(sides[1 - stated.index(m)], {})))
    except (ValueError, ZeroDivisionError, TypeError, RecursionError):
        return False
    return abs(count / 10**9 - Rational(m.group(1))) <= Rational(1, 2 * 10 ** len(m.group(2) or ""))


def _plain(sides: list[str], ops: list[str]) -> tuple[str, str, str | None, str] | None:
    """A chain of plain numbers: each neighbour pair equal at the decimals the later one is written with."""
    try:
        values = [arithmetic_value(s, {}) for s in sides]
    except (ValueError, ZeroDivisionError, TypeError, RecursionError):
        return None
    for k in range(len(ops)):
        right = sides[k + 1]
        places = len(right.split(".")[1]) if re.fullmatch(r"\d+\.\d+", right) else None
        a, b = Rational(str(values[k])), Rational(str(values[k + 1]))
        if places is None and ops[k] == "approx" and (right.isascii() and right.isdigit()):
            from .units import to_last_digit

            ok = to_last_digit(a, int(right)) or abs(a - int(right)) < 1  # "about 329,589" of 329,589.8: cut off
        else:
            ok = agrees(a, b, places) or _rounded_meet(sides[k], b, places)
        if not ok:
            shown = str(a) if a.is_Integer else f"{float(a):.8g}"
            return "wrong", f"{sides[k]} = {shown}, not {right}", shown, "computed"
    return "correct", " = ".join(sides) + " (arithmetic written in the text)", None, "computed"




def _rounded_meet(side: str, stated: Rational, places: int | None) -> bool:
    """Does arithmetic of decimals, each standing for the interval it rounds from, reach the stated value at its
    written precision ("0.33024 · 4 = 1.32095": the weight was rounded after the product was computed; "5 / 1.4142
    ≈ 3.5355": the divisor is a rounded root)?  Evaluated at every corner of its decimals (:func:`.balls.corners`)."""
    from .balls import corners

    texts = corners(side) if re.fullmatch(r"[\d.\s+\-/()]*(?:\\cdot[\d.\s+\-/()]*)*", side) else None
    if texts is None:
        return False
    try:
        values = [Rational(str(arithmetic_value(text, {}))) for text in texts]
    except (ValueError, ZeroDivisionError, TypeError, RecursionError):
        return False
    slack = Rational(1, 2 * 10 ** places) if places else Rational(0)
    return bool(min(values) - slack <= stated <= max(values) + slack)
