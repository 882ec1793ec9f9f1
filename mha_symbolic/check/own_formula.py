r"""The document's own formula for its KV cache, applied to the amounts it states.

Explanation
===========

A KV-cache calculator states its formula in its own names (``KV cache bytes = 2 × L × H × d × T × 2``,
``KV Cache (GB) = 2 × num_layers × num_heads × head_dim × ctx_len × bytes_per_element / (1024³)``) and then lists
amounts for token counts (``| 4K tokens | 5 GB |``, ``- 8K context: ~16 GB``).  Each such line is a local
computation: the formula, evaluated with

* the values the line itself, or the nearest line above that binds each, gives the formula's own names
  (``Llama-3-70B (L=80, H=8 KV heads, d=128)``, the caption of a table);
* for a name of more than one letter that no line binds, what the document's model holds under that name
  (``num_heads``: its ``h``; ``head_dim``: its ``d_k``; a name of layers: the layers it states; of bytes per
  element: the bytes of its dtype);
* the token count the line states (``4K`` read as 4,000 or 4,096) for the one name left that counts tokens.

The result is compared with the stated amount at the precision it is written (GB read as 10^9 or 2^30 bytes when
the formula counts bytes; in the formula's own unit when it names one).  A line that leaves a name unbound is not
judged; nothing is compared with the package's model.

>>> formula = own_formula(["KV cache bytes = 2 × L × H × d × T × 2"])
>>> formula.names
('L', 'H', 'd', 'T')
>>> judge_line(formula, "| 4K tokens | 5 GB |", ["Llama-3-70B (L=80, H=8 KV heads, d=128)"], {})[0]
'wrong'
>>> judge_line(formula, "| 4K tokens | 1.3 GB |", ["Llama-3-70B (L=80, H=8 KV heads, d=128)"], {})[0]
'correct'
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from sympy import Rational

from ..statements._base import agrees
from .arithmetic import arithmetic_value
from .units import _BINARY, _DECIMAL, to_last_digit

__all__ = ["OwnFormula", "own_formula", "judge_line", "model_values"]

#: a formula's line: its left side and its body ("KV Cache (GB) = 2 × ...", "kv_bytes = 2 * ...", "M = 2 · L ...")
_FORMULA = re.compile(r"^\s*(?:[-*]\s+)?(?P<left>[^=\n]{1,40}?)\s*=\s*(?P<body>[^=\n]*)$")
#: a left side that names the KV cache: in words, or a name of the cache or of its bytes (kv_bytes, cache_size)
_CACHE_WORDS = re.compile(r"\bKV[- ]?cache\b|^\s*(?:kv|cache)_?\w*\s*$|^\s*\w*_(?:kv|cache)\w*\s*$", re.I)
#: a legend line that says what a name stands for: "- M: total KV-cache memory in bytes", "M — the KV cache"
_LEGEND = re.compile(r"^\s*(?:[-*]\s+)?([A-Za-z]\w*)\s*(?::|—|–|-|=\s*the)\s+(.*)$")
_NAME = re.compile(r"[A-Za-z][A-Za-z0-9]*(?:_[A-Za-z0-9]+)*")
_TOKENS = re.compile(r"(?<![\w.])(\d+(?:\.\d+)?)\s*([KkM])?[- ]?(?:tokens?|context)\b")
_AMOUNT = re.compile(r"(~|≈|about\s+)?(?<![\w.])(\d{1,3}(?:,\d{3})+|\d+)(?:\.(\d+))?\s*(" +
                     "|".join(sorted([*_BINARY, *_DECIMAL], key=len, reverse=True)) + r")\b")
_BINDING = re.compile(r"(?<![\w.])([A-Za-z][A-Za-z0-9_]*)\s*=\s*(\d+)\b")
#: what a name of the formula counts, by the words in it (a name of one letter has no words: it is bound only
#: by the lines that use it)
_LAYERS, _BYTES, _COUNTS_TOKENS = r"layer", r"byte|element|dtype|precision", r"ctx|context|seq|token"


@dataclass(frozen=True)
class OwnFormula:
    """The document's formula: its body (plain arithmetic in its own names), the names, and the unit it yields
    (``"bytes"``, or the unit its left side names, as ``"GB"``)."""

    body: str
    names: tuple[str, ...]
    unit: str
    line: int = 0


def own_formula(lines: list[str]) -> OwnFormula | None:
    """The one KV-cache formula the document states (its body may run on to the next lines while they continue
    it), or None when it states none or more than one.  Its left side names the cache in words, by a name of the
    cache (``kv_bytes``), or by a letter a legend line says is the KV cache (``- M: total KV-cache memory in
    bytes``)."""
    legend = {m.group(1): m.group(2) for m in map(_LEGEND.match, lines) if m and _CACHE_WORDS.search(m.group(2))}
    found: list[OwnFormula] = []
    for k, line in enumerate(lines):
        m = _FORMULA.match(line)
        if not m:
            continue
        left = m.group("left").strip()
        if not (_CACHE_WORDS.search(left) or left in legend):
            continue
        body = m.group("body")
        for nxt in lines[k + 1:k + 3]:  # "KV Cache (GB) =" / "2 × num_layers × ..." / "/ (1024³)For ..."
            if body.strip() and not re.search(r"[×*·/]\s*$", body.strip()) and not re.match(r"\s*[×*·/]", nxt):
                break
            body += " " + nxt  # (the formula ends where its arithmetic does: "(1024³)For concrete ...")
        tex = _arithmetic(body)
        names = tuple(dict.fromkeys(_NAME.findall(tex)))
        if not names or not re.fullmatch(r"[\d\s()*/^A-Za-z_.]+", tex):
            continue
        named = re.search(r"\(\s*([KMGT]i?B)\s*\)", left + " " + legend.get(left, ""))  # "KV Cache (GB) =": its unit
        unit = named.group(1) if named else "bytes"
        found.append(OwnFormula(tex, names, unit, k + 1))
    return found[0] if len({f.body for f in found}) == 1 else None


#: a token of a formula's arithmetic: a number, a name, an operator, a parenthesis, a power
_ARITH_TOKEN = re.compile(r"\s*(\d+(?:\.\d+)?|[A-Za-z][A-Za-z0-9_]*|[×*·⋅/+()²³^-])")


def _arithmetic(body: str) -> str:
    """The longest start of ``body`` that is arithmetic (operands joined by operators, brackets balanced), in the
    reader's arithmetic: ``×`` and ``·`` as ``*``, ``1024³`` as ``1024^3``.  What follows is the prose around the
    formula (``..., with L layers``, ``(1024³)For concrete examples``).

    >>> _arithmetic("2 × L × H × T, with L layers"), _arithmetic("2 · n / (1024³)For concrete examples")
    ('2 * L * H * T', '2 * n / (1024^3)')
    """
    out: list[str] = []
    end, depth, need_operand, at = 0, 0, True, 0
    while m := _ARITH_TOKEN.match(body, at):
        tok = m.group(1)
        if need_operand and tok == "(":
            depth += 1
        elif need_operand and tok[0].isalnum():
            need_operand = False
        elif not need_operand and tok == ")" and depth:
            depth -= 1
        elif not need_operand and tok in "²³":
            tok = "^" + {"²": "2", "³": "3"}[tok]
        elif not need_operand and tok in "×*·⋅/+-^":
            need_operand = True
        else:
            break  # "(1024³)For": an operand where an operator belongs, the prose after the formula
        out.append("*" if tok in "×·⋅" else tok)
        at = m.end()
        if not need_operand and depth == 0:
            end = len(out)
    return re.sub(r"\(\s|\s(?=[)^])", lambda m: m.group(0).strip(), " ".join(out[:end]))


def model_values(doc: Any) -> dict[str, Any]:
    """What the document's model holds for the formula's descriptive names: its sizes, layers and bytes per value."""
    return {**doc.known_dims(), "layers": doc.memory.get("layers"), "bytes": doc.memory.get("bytes")}


def judge_line(formula: OwnFormula, line: str, above: list[str], model: dict[str, Any]
               ) -> tuple[str, str, str | None, str] | None:
    """The verdict on a row or an item that states one token count and one amount and little else (``| 4K
    tokens | 5 GB |``, ``- 8K context: ~16 GB``; None for any other line): ``above`` holds the document's lines
    before it; ``model`` what the document's model holds (``h``, ``d_k``, ``layers``, ``bytes``, ...)."""
    tokens, amounts = _TOKENS.findall(line), list(_AMOUNT.finditer(line))
    if len(tokens) != 1 or len(amounts) != 1:
        return None
    rest = _AMOUNT.sub(" ", _TOKENS.sub(" ", line))
    if len(re.findall(r"[A-Za-z]{2,}|\d", rest)) > 1:  # more than a label: "fits on a single 80 GB A100"
        return None
    counting = [n for n in formula.names if len(n) == 1 and n in "TtNn" or re.search(_COUNTS_TOKENS, n, re.I)]
    bound = {k: v for k, v in _bindings(formula, line, above, model).items() if k not in counting}
    open_names = [n for n in formula.names if n not in bound]
    if len(counting) != 1 or open_names != counting:
        missing = ", ".join(n for n in open_names if n not in counting) or "which name counts the tokens"
        return ("unchecked", f"the document's formula ({formula.body}) with {missing} not stated for this line",
                None, "")
    count, scale = tokens[0]
    readings = [Fraction(count) * f for f in ({"k": (1000, 1024), "m": (10 ** 6, 2 ** 20)}.get(scale.lower(), (1,)))]
    m = amounts[0]
    stated = Fraction(m.group(2).replace(",", "") + "." + (m.group(3) or "0"))
    unit = m.group(4)
    values = []
    for t in readings:
        try:
            values.append(arithmetic_value(formula.body, {**bound, open_names[0]: t}))
        except (ValueError, ZeroDivisionError):
            return None
    if formula.unit == "bytes":
        factors = [_BINARY[unit]] if unit in _BINARY else [1000 ** _DECIMAL[unit], 1024 ** _DECIMAL[unit]]
    elif formula.unit.lower() == unit.lower():
        factors = [1]  # the formula's own unit ("KV Cache (GB) = ... / 1024³"): its numbers, as it defines them
    else:
        return None
    shown = ", ".join(f"{k} = {v}" for k, v in bound.items())
    for v in values:
        for f in factors:
            x = Rational(v.numerator, v.denominator) / f
            if m.group(1) and not m.group(3) and to_last_digit(x, int(stated)) or \
                    agrees(x, Rational(stated.numerator, stated.denominator), len(m.group(3) or "")):
                return ("correct", f"the document's formula {formula.body} with {shown} and {open_names[0]} = "
                        f"{int(readings[values.index(v)])} gives {float(x):.4g} {unit}", None, "computed")
    v, f = min(((v, f) for v in values for f in factors), key=lambda p: abs(p[0] / p[1] - stated))  # the closest
    best = f"{float(v / f):.4g} {unit}"
    return ("wrong", f"the document's formula {formula.body} (line {formula.line}) with {shown} and {open_names[0]} = "
            f"{int(readings[values.index(v)])} gives {best}, not {m.group(0).strip()}", best, "computed")


def _bindings(formula: OwnFormula, line: str, above: list[str], model: dict[str, Any]) -> dict[str, Fraction]:
    """The values of the formula's names for ``line``: each bound by the line itself or the nearest line above
    that binds it (``L=80``, ``num_layers = 40``), else (a name of more than one letter) from the document's
    model."""
    bound: dict[str, Fraction] = {}
    for text in [line, *reversed(above)]:
        for name, value in _BINDING.findall(text):
            if name in formula.names and name not in bound:
                bound[name] = Fraction(int(value))
        if len(bound) == len(formula.names):
            break
    from .model import dim_name

    for n in formula.names:
        if n in bound or len(n) == 1:
            continue
        if re.search(_LAYERS, n, re.I) and model.get("layers"):
            bound[n] = Fraction(model["layers"])
        elif re.search(_BYTES, n, re.I) and model.get("bytes"):
            bound[n] = Fraction(model["bytes"])
        elif dim_name(n) in model and dim_name(n) != "n" and not re.search(_COUNTS_TOKENS, n, re.I):
            bound[n] = Fraction(model[dim_name(n) or ""])
    return bound
