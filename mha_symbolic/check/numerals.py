r"""Numbers as written: the decimal mark and digit grouping of a document.

A document that writes decimals with a comma (``1,5 GiB``, ``0,75``, in LaTeX ``0{,}125``) groups thousands
with spaces (``196 608``, ``5 368 709 120``), as SI and most of Europe do.  :func:`decimal_comma` decides it
from unambiguous evidence -- a comma decimal with a leading zero, one with one or two places before a unit of
memory, or LaTeX's ``{,}`` before other than three digits -- and :func:`as_points` rewrites that document's
numbers with a point and no grouping, keeping every line in place.  Elsewhere nothing changes: ``1,536`` stays
a thousands separator and a MATLAB row ``[100 200 300]`` three numbers.

>>> decimal_comma("Total: 1 610 612 736 B = 1,5 GiB."), decimal_comma("d = 1,536, x = (1,2), [0,1] or 0,1 ]")
(True, False)
>>> as_points("24 GiB / 128 KiB = 196 608 tokens; 0,75 GiB; 0,125; $e \\approx 2{,}718$")
'24 GiB / 128 KiB = 196608  tokens; 0.75 GiB; 0.125; $e \\approx 2.718  $'

A number may carry a scale: a word after it ("2.36 million", "7 Milliarden", "২.৩৬ মিলিয়ন") or a suffix glued to it
("2.4M", "32k"), in math (``2.36\,\text{M}``) or right after the math that ends with it (``$\approx 2.36$ million``).
:func:`scaled` writes such a number in scientific notation, so that it is compared at the significant digits it is
written with (``2{,}359{,}296 \approx 2.36 \times 10^{6}`` holds; ``\approx 3.36`` million does not).

>>> scaled(r"4 \cdot 768^2 \approx 2.36\,\text{M}"), scaled(r"x \approx 2.36", "million parameters")
('4 \\cdot 768^2 \\approx 2.36 \\times 10^{6}', 'x \\approx 2.36 \\times 10^{6}')
>>> scaled(r"n = 4", " K and V"), scaled(r"n = 32", "k tokens")
('n = 4', 'n = 32 \\times 10^{3}')
"""

from __future__ import annotations

import re
from typing import Any

__all__ = ["decimal_comma", "as_points", "scaled"]

#: the powers of ten a scale word names, in the languages of the documents read (a lexicon, like number words);
#: words may stand one space after the number, the one-letter suffixes only glued to it ("2.4M", not "4 K and V")
_SCALE_WORDS = {
    "thousand": 3, "thousands": 3, "Tausend": 3, "mille": 3, "миллион": 6,
    "million": 6, "millions": 6, "Million": 6, "Millionen": 6, "Mio": 6, "millones": 6, "millón": 6, "milioni": 6,
    "milhões": 6, "milhão": 6, "мільйонів": 6, "মিলিয়ন": 6, "百万": 6, "万": 4, "亿": 8,
    "billion": 9, "billions": 9, "bn": 9, "Mrd": 9, "Milliarden": 9, "milliards": 9, "miliardi": 9, "bilhões": 9,
    "বিলিয়ন": 9, "trillion": 12, "trillions": 12,
}
_SCALE_SUFFIXES = {"k": 3, "K": 3, "M": 6}
_WORD_AFTER = re.compile(r"(?:\\,|\\;|\\ |~|[ \u00a0\u2009\u202f])?(" + "|".join(
    sorted(map(re.escape, _SCALE_WORDS), key=len, reverse=True)) + r")(?![^\W\d_])|(" + "|".join(_SCALE_SUFFIXES)
    + r")(?![^\W\d_])")
_LAST_NUMBER = re.compile(r"(?:^|(?<=[=\s{]))(\d+(?:\.\d+)?)\s*$")
_TEXT_SCALE = re.compile(r"(\d)\s*(?:\\[,;! ]|~|\s)*\\(?:text|mathrm|textrm|mbox)\{\s*(" + "|".join(
    sorted(map(re.escape, [*_SCALE_WORDS, *_SCALE_SUFFIXES]), key=len, reverse=True)) + r")\.?\s*\}")

#: a comma decimal nobody reads as a thousands separator: 0,75 or 1,5 GiB (one or two places before a unit)
_EVIDENCE = re.compile(r"(?<![\d.,\[({])(?:0,\d+|\d+,\d{1,2})\s*(?:[KMGTP]i?B|[KMGTP]?FLOPs?|%)(?![\w\])}])"
                       r"|(?<![\d.,\[({])0,\d+(?=\s+[^\W\d_])"
                       r"|(?<![\d.,])0\{,\}\d|\d\{,\}(?:\d{1,2}|\d{4,})(?!\d)")  # LaTeX's 0{,}125 or 7{,}5
#: digits grouped by spaces (ordinary, no-break, thin or narrow no-break): 196 608, 5 368 709 120
_GROUPED = re.compile(r"(?<![\d.,])\d{1,3}(?:[ \u00a0\u2009\u202f]\d{3})+(?![\d,])")
#: in such a document every 1,5, 0,125 or 7{,}389 (LaTeX's decimal comma) is a decimal, its thousands being
#: grouped by spaces; never (0,1) or [1,0] (a pair, a vector) nor 1,2,3 (a list).  A comma and a space after it is
#: the sentence's (``σ² = 0,25, so``); a tuple separated by semicolons holds decimals (``(0,66; 0,24)``)
_COMMA_DECIMAL = re.compile(r"(?<![\d.,\[({])(\d+)(,)(\d+)(?![\d\])}]|,\d)|(?<=\()(\d+)(,)(\d+)(?=\s*;)"
                            r"|(?:(?<=;)|(?<=;\s))(\d+)(,)(\d+)(?=\s*\))|(?<![\d.,])(\d+)(\{,\})(\d+)(?![\d,])")


def decimal_comma(text: str) -> bool:
    """Does the document write decimals with a comma?"""
    return bool(_EVIDENCE.search(text))


#: digits grouped by points, where the comma is the decimal mark (2.359.296, 49.152); no group starts with 0
_DOTTED = re.compile(r"(?<![\d.,])[1-9]\d{0,2}(?:\.\d{3})+(?![\d,]|\.\d)")
#: a fence line of a Markdown code block, and an inline code span
_FENCE = re.compile(r"^\s{0,3}(?:`{3,}|~{3,})")
_CODE_SPAN = re.compile(r"(`+)[^`]*?\1")


def _outside_code(text: str, change: Any) -> str:
    """``text`` with ``change`` applied to its prose and math only: fenced blocks and inline code stay as written
    (code writes its decimals with a point whatever the language of the prose)."""
    out, fenced = [], False
    for line in text.split("\n"):
        if _FENCE.match(line):
            fenced = not fenced
        elif not fenced:
            cuts = [0, *[x for m in _CODE_SPAN.finditer(line) for x in m.span()], len(line)]
            spans = zip(cuts, cuts[1:], strict=False)
            line = "".join(line[a:b] if k % 2 else change(line[a:b]) for k, (a, b) in enumerate(spans))
        out.append(line)
    return "\n".join(out)


def _grouped_twice(text: str) -> bool:
    """Do the prose and math write some number with two groups of points (``2.359.296``)?"""
    found = False

    def look(part: str) -> str:
        nonlocal found
        found = found or any(m.group(0).count(".") > 1 for m in _DOTTED.finditer(part))
        return part

    _outside_code(text, look)
    return found


def _ungrouped(m: re.Match[str]) -> str:
    digits = m.group(0).replace(".", "")
    return digits + " " * (len(m.group(0)) - len(digits))


def as_points(text: str) -> str:
    """The document's numbers with a decimal point and no grouping, each line the same length.  Thousands grouped
    by points (``2.359.296``) are read as such where the prose and math group some number twice that way (a
    notebook, whose text is JSON, keeps its points)."""
    if not text.lstrip().startswith("{") and _grouped_twice(text):
        text = _outside_code(text, lambda part: _DOTTED.sub(_ungrouped, part))
    text = _GROUPED.sub(lambda m: re.sub(r"\D", "", m.group(0)) + " " * (len(m.group(0)) -
                                                                         len(re.sub(r"\D", "", m.group(0)))), text)
    def point(m: re.Match[str]) -> str:
        at = next(k for k in (1, 4, 7, 10) if m.group(k))
        whole, mark, fraction = m.group(at, at + 1, at + 2)
        return f"{whole}.{fraction}" + " " * (len(mark) - 1)

    # [0{,}7311;\ 0{,}2689;\ 0]: a bracket whose entries are written with the decimal comma is no MATLAB column
    # (MATLAB writes a point), its semicolons separate the entries of a list (spans kept: every rewrite keeps length)
    def listed(m: re.Match[str]) -> str:
        if not _COMMA_ENTRY.search(m.group(0)):
            return m.group(0)
        entries = re.sub(r"(\d+)(,|\{,\})(\d+)", lambda d: f"{d.group(1)}.{d.group(3)}" + " " * (len(d.group(2)) - 1),
                         m.group(0))
        return re.sub(r"(?<!\\);", ",", entries)

    text = _COMMA_DECIMAL.sub(point, _SEMICOLON_BRACKET.sub(listed, text))
    # (0.665; 0.255; 0.080): where the comma is the decimal mark, a tuple's entries are separated by semicolons
    return _SEMICOLON_TUPLE.sub(lambda m: re.sub(r"(?<!\\);", ",", m.group(0)), text)


#: a tuple of numbers in parentheses separated by semicolons (``(2;\ 1;\ 0)``, ``(0,1\;;\;0,9)``; MATLAB rows are in
#: brackets)
_GAP = r"(?:\s|\\[ ,;:!])*"  # spaces, also LaTeX's: (0,140\;;\;0,576)
_SEMICOLON_TUPLE = re.compile(rf"\({_GAP}-?\d+(?:\.\d+)?(?:{_GAP};{_GAP}-?\d+(?:\.\d+)?)+{_GAP}\)")
_COMMA_NUMBER = r"-?\d+(?:(?:,|\{,\})\d+)?"
_SEMICOLON_BRACKET = re.compile(rf"\[{_GAP}{_COMMA_NUMBER}(?:{_GAP};{_GAP}{_COMMA_NUMBER})+{_GAP}\]")
_COMMA_ENTRY = re.compile(r"\d(?:,|\{,\})\d")


def _power(word: str) -> int:
    return _SCALE_WORDS.get(word, _SCALE_SUFFIXES.get(word, 0))


def scaled(tex: str, after: str = "") -> str:
    """``tex`` with a number that carries a scale written in scientific notation: a scale in ``\\text{}`` after a
    number inside it, or a scale word that begins ``after`` (the prose right after the math) when ``tex`` ends with
    a number (see the module docstring)."""
    tex = _TEXT_SCALE.sub(lambda m: f"{m.group(1)} \\times 10^{{{_power(m.group(2))}}}", tex)
    m = _WORD_AFTER.match(after)
    if m and _LAST_NUMBER.search(tex):
        tex = tex.rstrip() + f" \\times 10^{{{_power(m.group(1) or m.group(2))}}}"
    return tex
