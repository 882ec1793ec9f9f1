r"""Amounts of memory in a formula chain: ``98{,}304 \cdot 1024 = 100{,}663{,}296 \text{ bytes} = 96 \text{ MiB}``;
amounts of work in FLOPs the same way (``2 \cdot 1024^2 \cdot 768 \approx 1.61 \text{ GFLOP}``, powers of 1000).

A side is arithmetic (:func:`.arithmetic.arithmetic_value`: numbers, the document's sizes, ``\cdot``, ``\frac``)
followed by at most one unit of memory (``\text{ bytes}``, ``\,\mathrm{MiB}``, ``\text{GB}``).  A side without a unit
counts bytes or the unit of its neighbour (``2 \cdot 48 = 96 \text{ MiB}`` counts MiB, ``6{,}144 \cdot 1024 =
6 \text{ MiB}`` bytes): the pair holds if either reading does.
Each pair of neighbouring sides is compared in the unit of either side at the precision that side is written with
(``25{,}165{,}824 \text{ bytes} \approx 25.2 \text{ MB}``), and ``\approx`` without decimals rounds to the last
nonzero digit (``\approx 540 \text{ MB}`` is within 5 MB).
KB, MB, GB and TB are read both as powers of 1000 and of 1024 (many authors write MB for 2^20 bytes): a pair
holds if either reading does.  A chain with any other side is not an amount of memory here (None).

>>> judge_amounts({}, [r"24{,}576 \cdot 1024", r"25{,}165{,}824 \text{ bytes}", r"24 \text{ MiB}"], ["eq", "eq"])[0]
'correct'
>>> judge_amounts({}, [r"24{,}576 \cdot 1024", r"25{,}165{,}284 \text{ bytes}"], ["eq"])[:3]
('wrong', '24{,}576 \\cdot 1024 is 25165824 bytes, not 25{,}165{,}284 \\text{ bytes}', '25165824 bytes')
>>> judge_amounts({}, ["2 \\cdot 3", "6"], ["eq"]) is None  # no unit: plain arithmetic, judged elsewhere
True
>>> judge_amounts({}, [r"131072 \text{bytes}", "131072 / 1024", r"128 \text{KiB}"], ["eq", "eq"])[0]  # a conversion
'correct'
"""

from __future__ import annotations

import re
from fractions import Fraction
from typing import Any

from sympy import Rational

from ..statements._base import agrees
from .arithmetic import arithmetic_value

__all__ = ["judge_amounts", "to_last_digit"]

#: bytes in one unit; decimal units also have their binary reading (see the module docstring)
_BINARY = {"bytes": 1, "byte": 1, "B": 1, "KiB": 2 ** 10, "MiB": 2 ** 20, "GiB": 2 ** 30, "TiB": 2 ** 40}
_DECIMAL = {"KB": 1, "kB": 1, "MB": 2, "GB": 3, "TB": 4}  # the power of 1000 (or of 1024)
#: floating-point operations: powers of 1000 only ("1.61 GFLOP" is 1.61 x 10^9 FLOPs)
_FLOPS = {f"{prefix}FLOP{plural}": power for prefix, power in (("", 0), ("k", 1), ("K", 1), ("M", 2), ("G", 3),
                                                                ("T", 4), ("P", 5)) for plural in ("", "s")}
_UNIT = re.compile(r"^(?P<amount>.*?)(?:\\[,;:! ]|\\quad|~|\s)*\\(?:text|mathrm|textrm|mbox|mathit)\{\s*"
                   r"(?P<unit>" + "|".join(sorted([*_BINARY, *_DECIMAL, *_FLOPS], key=len, reverse=True)) +
                   r")\s*\}\s*$",
                   re.S)
_SEPARATORS = re.compile(r"(?<=\d)(?:\{,\}|\\,|,)(?=\d{3}(?!\d))")


def _factors(unit: str) -> tuple[int, ...]:
    if unit in _BINARY:
        return (_BINARY[unit],)
    if unit in _FLOPS:
        return (1000 ** _FLOPS[unit],)
    return (1000 ** _DECIMAL[unit], 1024 ** _DECIMAL[unit])


def _places(tex: str) -> int | None:
    """The decimals a side is written to; in scientific notation its significant digits (``1.72 \times 10^{10}``
    is written to 10^8: places -8)."""
    sci = re.search(r"\d(?:\.(\d+))?\s*(?:\\times|\\cdot|×|x)\s*10\s*\^\s*\{?\s*(-?\d+)\s*\}?", tex)
    if sci:
        return len(sci.group(1) or "") - int(sci.group(2))
    found = [len(m.group(1)) for m in re.finditer(r"\d\.(\d+)", tex)]
    return max(found) if found else None


def _side(tex: str, names: dict[str, Any], layers: tuple[str, int] | None = None
          ) -> tuple[Fraction, str | None] | None:
    """``(amount, unit)`` of one side, the unit None when not written; None when the side is not arithmetic.
    ``layers``: the document's letter for its layers and their number (``L`` counts layers, not tokens, there)."""
    m = _UNIT.match(tex.strip())
    amount, unit = (m.group("amount"), m.group("unit")) if m else (tex, None)
    amount = _SEPARATORS.sub("", amount).strip()
    if layers is not None:
        amount = re.sub(rf"(?<![\\A-Za-z_^]){re.escape(layers[0])}(?![A-Za-z_^])", f" ({layers[1]}) ", amount)
    elif re.search(r"(?<![\\A-Za-z_^])[LN](?![A-Za-z_^])", amount) and "n" not in names:
        return None  # L or N with no tokens stated: the layers, or the length? not read
    if not amount and unit in _FLOPS:
        return None  # "\text{FLOPs} = 8 n d^2": the name of what is counted, not one FLOP
    if not amount:
        amount = "1"  # "\text{MiB}" alone: one MiB
    try:
        return Fraction(arithmetic_value(amount, names)), unit
    except (ValueError, ZeroDivisionError, TypeError, RecursionError):  # too deep: the reader's limits name it
        return None


def to_last_digit(value: Any, stated: int) -> bool:
    """Does ``value`` round to the whole number ``stated`` at its last nonzero digit ("≈ 540" is within 5,
    "≈ 59874" within 1/2)?

    >>> to_last_digit(536.87, 540), to_last_digit(59874.14, 59875), to_last_digit(0.3, 0)
    (True, False, True)
    """
    digits = str(abs(int(stated)))
    zeros = len(digits) - len(digits.rstrip("0")) if stated else 0
    return bool(abs(value - stated) <= Rational(10 ** zeros, 2))


def _agree(value: Fraction, stated: Fraction, places: int | None, op: str) -> bool:
    if places is None and op == "approx" and stated.denominator == 1:  # "≈ 540 MB": to its last nonzero digit
        return to_last_digit(Rational(value.numerator, value.denominator), stated.numerator)
    return agrees(Rational(value.numerator, value.denominator), Rational(stated.numerator, stated.denominator),
                  places)


def _show(x: Fraction) -> str:
    return str(x.numerator) if x.denominator == 1 else f"{float(x):.4g}"


def judge_amounts(names: dict[str, Any], sides: list[str], ops: list[str], layers: tuple[str, int] | None = None
                  ) -> tuple[str, str, str | None, str] | None:
    """The verdict of a chain of amounts of memory (see the module docstring), or None when it is not one.
    ``layers``: the letter the document counts its layers with and their number (``$L = 32$ layers``)."""
    if not ops or any(op not in ("eq", "approx") for op in ops):
        return None
    if not any(_UNIT.match(t.strip()) for t in sides):
        return None
    label = _UNIT.match(sides[0].strip())
    if label and not label.group("amount").strip() and re.search(r"(?<!\\)\b[A-Za-z]", sides[1]):
        # "\text{bytes} = 2 \cdot L \cdot h_{kv} \cdots": the name of what a formula of sizes counts, not one byte
        sides, ops = sides[1:], ops[1:]
        if len(sides) < 2:
            return None
    read = [_side(t, names, layers) for t in sides]
    start = next((k for k, r in enumerate(read) if r is not None), len(read))
    if 0 < start <= len(read) - 2 and all(r is not None for r in read[start:]):
        # 2 B h n^2 d_k = 2 * 8 * 12 * 1024^2 * 64 = ... GFLOPs with B not fixed: the arithmetic is judged alone
        sides, ops, read = sides[start:], ops[start:], read[start:]
    if any(r is None for r in read) or not any(r[1] for r in read if r is not None):
        return None
    parsed: list[tuple[Fraction, str | None]] = [r for r in read if r is not None]
    units: list[str] = []  # the unit each side is shown in: its own, else its neighbour's
    for k, (_, unit) in enumerate(parsed):
        after = [u for _, u in parsed[k:] if u]
        units.append(unit or (after[0] if after else next(u for _, u in reversed(parsed[:k]) if u)))

    def readings(k: int, other: int) -> tuple[int, ...]:
        """Bytes per unit of side ``k``: its unit's, or for a side without one, bytes or its neighbour's unit."""
        unit = parsed[k][1]  # (a side between two units may be in either: "524,288 bytes = 524,288 / 1024 = 512 KiB")
        return _factors(unit) if unit else (1, *_factors(units[other]), *_factors(units[k]))

    for k, op in enumerate(ops):
        (a, _), (b, _) = parsed[k], parsed[k + 1]
        pa, pb = _places(sides[k]), _places(sides[k + 1])
        pairs = [(fa, fb) for fa in readings(k, k + 1) for fb in readings(k + 1, k)
                 if fa == fb or 1 in (fa, fb) or units[k] != units[k + 1]]  # one unit, one reading on both sides
        if any(_agree(a * fa / fb, b, pb, op) or _agree(b * fb / fa, a, pa, op) for fa, fb in pairs):
            continue
        fa, fb = min(pairs, key=lambda f: abs(a * f[0] / f[1] - b) / (abs(b) + 1))  # the closest reading
        expected = f"{_show(a * fa / fb)} {units[k + 1]}"
        return "wrong", f"{sides[k].strip()} is {expected}, not {sides[k + 1].strip()}", expected, "computed"
    shown = [f"{_show(a)} {u}" if own else _show(a) for (a, own), u in zip(parsed, units, strict=True)]  # as written
    return "correct", shown[0] + "".join(f" {'≈' if op == 'approx' else '='} {s}" for op, s in zip(ops, shown[1:],
                                                                                                   strict=True)), \
        None, "computed"
