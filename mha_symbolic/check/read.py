r"""The second room of the document checker: a formula's relation chains, prose settings, local scopes.

Explanation
===========

:func:`chains` cuts one formula into its relation chains (``a = b \approx c`` is one chain with
two operators); :func:`normalise` first turns Unicode math (``≈ ≤ × √ ᵀ − ₁``) into LaTeX and
drops layout-only commands.  The structure (environments, groups, macro arguments) comes from
pylatexenc's ``LatexWalker``; text it cannot parse (an unmatched brace) goes through a plain token
splitter instead, so :func:`chains` never raises.  Operators are whole tokens at the top level:
``\left(`` or ``\leftarrow`` is never ``\le``, and nothing inside ``{...}``, brackets,
``\left..\right`` or a matrix is split.

:func:`settings` and :func:`constraints` read the dimensions a sentence of prose states
("d_model is 6", "two heads", ``$h = 2$``) or bounds ("at most 10 heads", ``1 \le N \le 10^4``);
:func:`scope` reads a condition that binds a value only inside its sentence ("with h = 1",
"for head 2", "the first token").  The Python-code reader :func:`code_expression` lives in
:mod:`mha_symbolic.check._code_expr`.  Nothing is ever ``eval``'d or ``sympify``'d.

Examples
========

>>> from mha_symbolic.check.read import chains, settings, constraints, scope, normalise
>>> [(c.sides, c.ops) for c in chains(r"d_k = d_v = d_{model}/h = 2, \quad h \ge 2")]
[(('d_k', 'd_v', 'd_{model}/h', '2'), ('eq', 'eq', 'eq')), (('h', '2'), ('ge',))]
>>> normalise("QKᵀ/√d_k ≈ 0.5")
'QK^T/\\sqrt{d_k} \\approx 0.5'
>>> settings("We use $h = 2$ heads, numbered $0 \\le i \\le h - 1$.")
[Setting(name='h', value=2, text='h = 2 heads')]
>>> [(c.name, c.op, c.value) for c in constraints("We use $h = 2$ heads, numbered $0 \\le i \\le h - 1$.")]
[('i', 'ge', 0), ('i', 'le', 'h - 1')]
>>> scope("With $h = 1$ we would instead have $d_k = 4$."), scope("for the second head")
({'h': 1}, {'head': 2})
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from ._code_expr import code_expression
from .normalise import normalise
from .prose import Constraint, Setting, constraints, hypothetical, scope, settings
from .tokens import (
    _BARE_KEYWORDS,
    _BINARY,
    _KEYWORDS,
    _QUANTIFIERS,
    _depths,
    _significant,
    _split_kind,
    _Tok,
    _tokenize,
)

__all__ = ["OPS", "Chain", "Setting", "Constraint", "normalise", "chains", "components", "settings", "constraints",
           "scope", "hypothetical", "code_expression", "top_level_split"]

OPS = ("eq", "approx", "lt", "le", "gt", "ge", "ne", "in", "colon", "to", "def")


@dataclass(frozen=True)
class Chain:
    """One relation chain ``sides[0] ops[0] sides[1] ...`` of a formula.

    ``row`` is the 0-based line of the chain inside the formula text (its own row of an
    ``aligned`` block or a ``cases`` row); ``side_rows`` the line of each side.  ``condition`` marks
    a chain that follows ``\text{where}``, ``\text{with}``, ``\text{for}``, ``\text{if}`` ... or
    is the condition column of a ``cases`` row.  A chain that continues the previous formula
    (text starting with ``=``) has an empty first side.
    """

    sides: tuple[str, ...]
    ops: tuple[str, ...]
    text: str
    row: int = 0
    condition: bool = False
    side_rows: tuple[int, ...] = field(default=(), compare=False)



def top_level_split(tex: str) -> list[str]:
    r"""``tex`` split at the commas outside every bracket and brace (``Q_i, K_i`` into two; ``W_{Q,i}`` whole; TeX's
    thin space ``\,`` is no comma).

    >>> top_level_split(r"(B, h), W_{Q,i}, \mathrm{Concat}\, W^O")
    ['(B, h)', ' W_{Q,i}', ' \\mathrm{Concat}\\, W^O']
    """
    parts, depth, start = [], 0, 0
    for k, ch in enumerate(tex):
        depth += (ch in "({[") - (ch in ")}]")
        if ch == "," and depth == 0 and not tex[k - 1:k] == "\\":
            parts.append(tex[start:k])
            start = k + 1
    return [*parts, tex[start:]]


_TUPLE = re.compile(r"\s*(?:\\left\s*)?\((.*)(?:\\right\s*)?\)\s*", re.S)
_NUMBER_ENTRY = re.compile(r"\s*\d+(?:(?:\\,|\{,\}|,(?=\d{3}))\d{3})*\s*")


_SIGN = {"lt": "<", "le": "\\le", "gt": ">", "ge": "\\ge"}


def components(c: Chain) -> list[Chain]:
    r"""A chain of tuples written side by side, ``(B, h, n, d_k) = (2, 3, 5, 4)``, as the chains of its components
    (``B = 2``, ``h = 3``, ...: each a statement of its own, read like one written alone); a chain of equalities and
    order relations, ``n = 50 < d_k = 64``, as its runs of equalities and then its other relations; any other chain
    as it is.  Every side of a tuple chain must be a parenthesised tuple of one length (two or more), the last one of
    whole numbers.

    >>> [x.sides for x in components(chains("(B, n, d_k) = (2, 5, 4)")[0])]
    [('B', '2'), ('n', '5'), ('d_k', '4')]
    >>> [(x.sides, x.ops) for x in components(chains("n = 50 < d_k = 64")[0])]
    [(('n', '50'), ('eq',)), (('d_k', '64'), ('eq',)), (('50', 'd_k'), ('lt',))]
    """
    from .model import dim_name

    if c.ops[:1] == ("eq",) and dim_name(c.sides[0]) is not None and {"lt", "le", "gt", "ge"} & set(c.ops) and \
            set(c.ops) <= {"eq", "lt", "le", "gt", "ge"}:
        # n = 50 < d_k = 64, opening with a size set: the runs joined by '=' (n = 50, d_k = 64), then each other
        # relation (50 < d_k); a chain that opens with anything else ("rank(S) <= d_k = 64") is one statement
        runs, relations, start = [], [], 0
        for k, op in enumerate(c.ops + ("lt",)):
            if op != "eq":
                if k > start:
                    runs.append(Chain(c.sides[start:k + 1], c.ops[start:k], " = ".join(c.sides[start:k + 1]), c.row,
                                      c.condition))
                if k < len(c.ops):
                    relations.append(Chain(c.sides[k:k + 2], (op,), f"{c.sides[k]} {_SIGN[op]} {c.sides[k + 1]}",
                                           c.row, c.condition))
                start = k + 1
        return runs + relations
    if not c.ops or any(op != "eq" for op in c.ops):
        return [c]
    tuples = []
    for side in c.sides:
        m = _TUPLE.fullmatch(side)
        tuples.append([x.strip() for x in top_level_split(m.group(1))] if m else [])
    width = len(tuples[0])
    if width < 2 or any(len(t) != width for t in tuples) or not all(_NUMBER_ENTRY.fullmatch(x) for x in tuples[-1]) \
            or all(_NUMBER_ENTRY.fullmatch(x) for x in tuples[0]):
        return [c]
    return [Chain(tuple(t[j] for t in tuples), c.ops, " = ".join(t[j] for t in tuples), c.row, c.condition,
                  c.side_rows) for j in range(width)]


# ----- chains -----------------------------------------------------------------------------------------------
@dataclass
class _Draft:
    sides: list[list[_Tok]]
    ops: list[_Tok]
    cond: bool
    anchor: int  # position of the chain's own first token
    pieces: list[list[_Tok]] = field(default_factory=list)


def _has_op(toks: list[_Tok], depths: list[int]) -> bool:
    return any(t.kind == "op" and d == 0 for t, d in zip(toks, depths, strict=True))


def _text(toks: list[_Tok]) -> str:
    return " ".join("".join(t.text for t in toks if t.kind not in ("amp", "row")).split())


#: a product of shapes that implies the shape after it: ``(512 \times 64)(64 \times 128) \Rightarrow
#: \mathbb{R}^{512 \times 128}`` (or ``\Rightarrow K' \in \mathbb{R}^{...}``)
_IMPLIED_SHAPE = re.compile(r"((?:\(\s*[^()$]{1,40}?\\times[^()$]{1,40}?\)\s*){2,4})\\Rightarrow\s*"
                            r"((?:[A-Za-z][\w'^{}\\]{0,20}\s*\\in\s*)?)\\mathbb\{R\}\s*\^\s*\{([^{}]{1,40})\}")


def _implied_shape(m: re.Match[str]) -> str:
    """The implication written as an equation of shapes, then the statement after it (a separate chain)."""
    equation = f"{m.group(1)} = {m.group(3)}"
    return f"{equation} \\Rightarrow {m.group(2)}\\mathbb{{R}}^{{{m.group(3)}}}" if m.group(2) else equation


def chains(tex: str) -> list[Chain]:
    r"""Every relation chain of one formula (see the module docstring); never raises.

    Rows of ``aligned``/``align``/``gather``/``split``/``cases`` and ``\\`` breaks are cut (``&``
    dropped; a row starting with a relation continues the previous chain, one starting with ``+``
    continues its last side); ``\quad``, ``;``, ``\text{and}``, ``\text{where}`` ... and top-level
    commas between two relations separate chains.  A formula without a relation is one chain with
    one side; blank text gives no chain.

    >>> [(c.sides, c.ops, c.row) for c in chains("A &= B \\\\\n &\\le C")]
    [(('A', 'B', 'C'), ('eq', 'le'), 0)]
    >>> cases = r"|x| = \begin{cases} x & \text{if } x \ge 0 \\ -x & x < 0 \end{cases}"
    >>> [(c.sides, c.condition) for c in chains(cases)]
    [(('|x|', 'x'), False), (('x', '0'), True), (('|x|', '-x'), False), (('x', '0'), True)]
    """
    text = normalise(tex)
    if not text.strip():
        return []
    if "Rightarrow" in text:
        text = _IMPLIED_SHAPE.sub(_implied_shape, text)
    newlines = [k for k, ch in enumerate(text) if ch == "\n"]

    def row_of(pos: int) -> int:
        lo, hi = 0, len(newlines)
        while lo < hi:
            mid = (lo + hi) // 2
            if newlines[mid] < pos:
                lo = mid + 1
            else:
                hi = mid
        return lo

    drafts: list[_Draft] = []
    prev: _Draft | None = None
    for hard in _split_kind(_tokenize(text), "row"):
        hard = _alignment(hard)
        depths = _depths(hard)
        for line, line_depths in _soft_rows(hard, depths):
            prev = _row(line, line_depths, drafts, prev)
    return [_listed(_finish(d, row_of)) for d in drafts]


def _listed(c: Chain) -> Chain:
    r"""A chain whose last side goes on as a list of names (``Q_i = XW_i^Q,\;K_i,\;V_i``: "Q_i, K_i and V_i", the
    first of them defined) ends at the list's first item."""
    parts = top_level_split(c.sides[-1]) if len(c.sides) > 1 and "," in c.sides[-1] else []
    if len(parts) < 2 or not all(re.fullmatch(r"\s*[A-Za-z][\w{}^\\']{0,20}\s*", x) for x in parts[1:]) or \
            not any(ch.isalpha() for ch in parts[0]):  # (j = 1, \ldots, d_k: an enumeration, not names)
        return c
    from dataclasses import replace

    return replace(c, sides=(*c.sides[:-1], parts[0].strip()))


def _alignment(row: list[_Tok]) -> list[_Tok]:
    """``&`` removed: odd ones align, even ones (``a &= 1 & b &= 2``) separate two equations."""
    out, count = [], 0
    for t in row:
        if t.kind == "amp":
            count += 1
            out.append(_Tok("sep", "", t.pos) if count % 2 == 0 else _Tok("space", " ", t.pos))
        else:
            out.append(t)
    return out


def _soft_rows(toks: list[_Tok], depths: list[int]) -> list[tuple[list[_Tok], list[int]]]:
    """A newline at the top level starts a new statement when both lines hold a relation and neither
    the first ends nor the second starts mid-expression."""
    lines: list[tuple[list[_Tok], list[int]]] = [([], [])]
    for t, d in zip(toks, depths, strict=True):
        if t.kind == "space" and "\n" in t.text and d == 0:
            lines.append(([], []))
        lines[-1][0].append(t)
        lines[-1][1].append(d)
    merged = [lines[0]]
    for toks2, d2 in lines[1:]:
        cur, cur_d = merged[-1]
        last = _significant(cur)[-1:] if _significant(cur) else []
        first = _significant(toks2)[:1]
        new = (_has_op(cur, cur_d) and _has_op(toks2, d2) and last and first
               and last[0].kind not in ("op", "open", "comma", "sep", "kw") and last[0].text.strip() not in _BINARY
               and first[0].kind not in ("op", "close") and first[0].text.strip() not in _BINARY)
        if new:
            merged.append((toks2, d2))
        else:
            merged[-1] = (cur + toks2, cur_d + d2)
    return merged


def _row(toks: list[_Tok], depths: list[int], drafts: list[_Draft], prev: _Draft | None) -> _Draft | None:
    """Chains of one row, appended to ``drafts``; returns the row's last chain (for continuation)."""
    cases = next((k for k, (t, d) in enumerate(zip(toks, depths, strict=True)) if t.kind == "cases" and d == 0), None)
    if cases is not None:
        prefix, suffix, rows = toks[:cases], toks[cases + 1:], toks[cases].rows
        last = None
        for value, cond in rows:
            whole = prefix + value + suffix
            for d in _pieces(whole, _depths(whole), False):
                d.anchor = (_significant(value) or _significant(whole) or [toks[cases]])[0].pos
                drafts.append(d)
                last = d
            cond_toks = cond
            if cond_toks and _significant(cond_toks)[0].kind == "kw":
                k = cond_toks.index(_significant(cond_toks)[0])
                cond_toks = cond_toks[k + 1:]
            for d in _pieces(cond_toks, _depths(cond_toks), True):
                drafts.append(d)
        return last
    lead = 0
    while lead < len(toks) and toks[lead].kind in ("space", "sep"):  # "&\quad + C": indentation only
        lead += 1
    toks, depths = toks[lead:], depths[lead:]
    sig = _significant(toks)
    if not sig:
        return prev
    first = sig[0]
    binary = first.kind == "atom" and first.text.strip() in _BINARY
    continues = prev is not None and (first.kind == "op" or binary or not _text(prev.sides[-1]))
    new = _pieces(toks, depths, prev.cond if continues and prev is not None else False)
    if not new:
        return prev
    if continues and prev is not None:
        head = new.pop(0)
        if first.kind == "op":  # "&= C": the chain goes on with another relation
            prev.sides += head.sides[1:]
        else:  # "+ C", or "A = \\ B": the last side goes on
            prev.sides[-1] = prev.sides[-1] + [_Tok("space", " ", first.pos)] + head.sides[0]
            prev.sides += head.sides[1:]
        prev.ops += head.ops
        prev.pieces += head.pieces
        if not new:
            return prev
    drafts.extend(new)
    return new[-1]


def _pieces(toks: list[_Tok], depths: list[int], cond: bool) -> list[_Draft]:
    """Separators, keywords and commas between relations cut ``toks`` into chains."""
    segments: list[tuple[list[_Tok], list[int], bool]] = []
    cur: list[_Tok] = []
    cur_d: list[int] = []
    skip_quantifier = False
    for k, (t, d) in enumerate(zip(toks, depths, strict=True)):
        if skip_quantifier and t.kind == "atom" and t.value.lower() in _QUANTIFIERS:
            skip_quantifier = False
            continue
        if t.kind != "space":
            skip_quantifier = False
        keyword = t.kind == "kw" or (t.kind == "atom" and t.value in _BARE_KEYWORDS and _bare(toks, k))
        if d == 0 and (t.kind == "sep" or keyword):
            segments.append((cur, cur_d, cond))
            cur, cur_d = [], []
            if t.kind == "sep":
                cond = False
            else:
                cond = cond or _KEYWORDS.get(t.value, False)  # "and" keeps the state it continues
                skip_quantifier = t.value == "for"
            continue
        cur.append(t)
        cur_d.append(d)
    segments.append((cur, cur_d, cond))
    out: list[_Draft] = []
    for k, (seg, seg_d, seg_cond) in enumerate(segments):
        inner = _parenthesised(seg, seg_d) if k > 0 else None
        if inner is not None:  # "\quad (i = 1, 2, 3)": a remark in parentheses, read as a condition
            seg, seg_d, seg_cond = inner, _depths(inner), True
        for piece, piece_d in _comma_split(seg, seg_d):
            draft = _draft(piece, piece_d, seg_cond)
            if draft is not None:
                out.append(draft)
    return out


def _parenthesised(toks: list[_Tok], depths: list[int]) -> list[_Tok] | None:
    """The inside of ``( ... )`` when the parentheses enclose all of ``toks``, else None."""
    keep = [k for k, t in enumerate(toks) if t.kind != "space"]
    if len(keep) < 2:
        return None
    first, last = keep[0], keep[-1]
    if toks[first].text != "(" or toks[last].text != ")" or depths[first] != 0 or depths[last] != 0:
        return None
    if any(depths[k] == 0 for k in range(first + 1, last)):
        return None
    return toks[first + 1:last]


def _bare(toks: list[_Tok], k: int) -> bool:
    """A bare English keyword (plain-text formulas): spaces or the ends on both sides."""
    before = toks[k - 1] if k > 0 else None
    after = toks[k + 1] if k + 1 < len(toks) else None
    return (before is None or before.kind == "space") and (after is None or after.kind == "space") and \
        (before is not None or after is not None)


def _comma_split(toks: list[_Tok], depths: list[int]) -> list[tuple[list[_Tok], list[int]]]:
    parts: list[tuple[list[_Tok], list[int]]] = [([], [])]
    commas: list[_Tok] = []
    for t, d in zip(toks, depths, strict=True):
        if t.kind == "comma" and d == 0:
            parts.append(([], []))
            commas.append(t)
        else:
            parts[-1][0].append(t)
            parts[-1][1].append(d)
    out = [parts[0]]
    for comma, (p, pd) in zip(commas, parts[1:], strict=True):
        cur, cur_d = out[-1]
        if _has_op(cur, cur_d) and _has_op(p, pd):
            out.append((p, pd))
        else:
            out[-1] = (cur + [comma] + p, cur_d + [0] + pd)
    return out


def _draft(toks: list[_Tok], depths: list[int], cond: bool) -> _Draft | None:
    keep = [k for k, t in enumerate(toks) if t.kind != "space"]
    if not keep:
        return None
    lo, hi = keep[0], keep[-1]
    while lo <= hi and depths[lo] == 0 and (toks[lo].kind in ("comma", "sep") or toks[lo].text in (".",)):
        lo += 1
    while hi >= lo and depths[hi] == 0 and (toks[hi].kind in ("comma", "sep") or toks[hi].text in (".",)):
        hi -= 1
    if lo > hi:
        return None
    toks, depths = toks[lo:hi + 1], depths[lo:hi + 1]
    sides: list[list[_Tok]] = [[]]
    ops: list[_Tok] = []
    for t, d in zip(toks, depths, strict=True):
        if t.kind == "op" and d == 0:
            ops.append(t)
            sides.append([])
        else:
            sides[-1].append(t)
    if len(ops) > 1 and ops[0].value == "colon" and _label(sides[0]) and "colon" not in {o.value for o in ops[1:]} \
            and not re.fullmatch(r"[A-Za-z](?:_\{?\w+\}?)?", _text(sides[1])):
        # "\text{GQA}: 24{,}576 \cdot 1024 = ...": a label, not a side; not before a size ("\text{MQA}: g = 1" is
        # about that variant) nor in a ratio ("\text{MHA} : \text{GQA} = 4 : 1")
        sides, ops = sides[1:], ops[1:]
    return _Draft(sides, ops, cond, toks[0].pos, [toks])


def _label(toks: list[_Tok]) -> bool:
    r"""A side that is only a text label (``\text{GQA}``, ``\textbf{MHA, per token}``): the words before a colon
    that name what the chain after it is about.

    >>> from mha_symbolic.check.tokens import _tokenize
    >>> _label(_tokenize(r"\text{GQA}")), _label(_tokenize(r"\textbf{Step 2}")), _label(_tokenize("f"))
    (True, True, False)
    """
    sig = _significant(toks)
    return len(sig) == 1 and re.fullmatch(r"\\text(?:bf|it|rm|sf)?\{[^{}$]*[A-Za-z][^{}$]*\}", sig[0].text.strip()) \
        is not None


def _finish(d: _Draft, row_of: Any) -> Chain:
    sides = tuple(_text(s) for s in d.sides)
    side_rows = []
    for k, s in enumerate(d.sides):
        sig = _significant(s)
        pos = sig[0].pos if sig else (d.ops[k - 1].pos if k > 0 else d.anchor)
        side_rows.append(row_of(pos))
    text = " ".join(t for t in (_text(p) for p in d.pieces) if t)
    return Chain(sides, tuple(o.value for o in d.ops), text, row_of(d.anchor), d.cond, tuple(side_rows))
