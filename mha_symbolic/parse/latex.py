r"""The LaTeX reader: tutorial formulas into SymPy objects of this package.

Explanation
===========

Built on ``latex2sympy2_extended`` (the maintained fork of latex2sympy2; this module is
its only importer), which alone gets attention formulas wrong: it treats every product
as commutative unless names are declared matrices, drops a side of ``\approx`` silently,
fails on ``^{\top}`` and reads ``\mathrm{softmax}(Q K^T)`` as a product.  So this
reader does itself what the library cannot:

* splits relation chains (``=``, ``\approx``, ``\le``, ``\leq``, ``\ge``, ``\ne``, ...)
  at the top level, so no side is lost;
* normalises ``^{\top}``, ``\left(``, ``\dfrac``, ``\operatorname``, ``\text`` and
  spacing commands;
* recognises the model's symbols through a :class:`SymbolTable` (``W_i^{Q}``,
  ``\mathrm{head}_i``, ``d_{model}`` ...), in the spelling of any notation preset, and
  hands them to the library as declared matrices, so products keep their order;
* reads named functions (``\mathrm{softmax}``, ``\mathrm{Attention}``,
  ``\mathrm{Concat}`` with ``\dots``, ``\mathrm{MultiHead}``) and their arguments itself;
* refuses text it did not understand completely (a :class:`ParseError` naming it),
  never returning a partial reading.  Nothing is ever ``eval``'d or ``sympify``'d.

Examples
========

>>> from mha_symbolic import MultiHeadAttention
>>> from mha_symbolic.formulas import standard_formulas
>>> from mha_symbolic.latex import latex
>>> from mha_symbolic.parse import SymbolTable, read_formula, equivalent
>>> formulas = standard_formulas(MultiHeadAttention())
>>> table = SymbolTable.from_objects(formulas)
>>> r = read_formula(r"\mathrm{softmax}\left(\frac{QK^{\top}}{\sqrt{d_k}}\right)V \approx 1", table)[0]
>>> r.op, r.lhs
('approx', softmax(Q*K.T / sqrt(d_k))*V)
>>> all(equivalent(read_formula(latex(f), table)[0].rhs, f.rhs) for f in formulas)
True
"""

from __future__ import annotations

import functools
import re
import warnings
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from sympy import (
    Basic,
    Expr,
    ImmutableMatrix,
    MatAdd,
    MatMul,
    MatrixSymbol,
    OneMatrix,
    Rational,
    Symbol,
    nsimplify,
    simplify,
)
from sympy.matrices import MatrixBase
from sympy.matrices.expressions.slice import MatrixSlice

from .._convert import as_sympy
from ..concat import Concat, ConcatHeads
from ..errors import ParseError, SizeLimitError, require
from ..formulas import Attention, Equation, MultiHead
from ..heads import HeadMatrix
from ..latex import NOTATIONS, latex
from ..scaling import ScaledScores
from ..softmax import Softmax

__all__ = ["Relation", "SymbolTable", "read_formula", "read_expression", "equivalent", "malformed"]

_RELATIONS = [(r"\approx", "approx"), (r"\leq", "le"), (r"\le", "le"), (r"\geq", "ge"), (r"\ge", "ge"),
              (r"\neq", "ne"), (r"\ne", "ne"), ("=", "eq"), ("<", "lt"), (">", "gt")]
_TOKEN = re.compile(r"\\[A-Za-z]+|\\.|\d+(?:\.\d+)?|\s+|.", re.S)
_FUNCTIONS = ("softmax", "Attention", "Concat", "MultiHead")
#: the subscripts that name an axis: a softmax's (causal, rows, columns) and a Concat's (blocks side by side, or
#: stacked as rows: ``[a, b]`` and ``[a; b]``, see :func:`mha_symbolic.check.model.canonical_tex`)
_AXES = {"softmax": {"causal": "causal", **dict.fromkeys(("row", "rows", "rowwise", "row-wise"), "row"),
                     **dict.fromkeys(("col", "cols", "column", "columns", "colwise", "column-wise"), "column")},
         "Concat": {"hstack": "h", "vstack": "v"}}
_N_ONES = Symbol("n_ones", integer=True, positive=True)  # rows of \mathbf{1} until its sum tells


@dataclass(frozen=True)
class Relation:
    """One relation of a formula: ``lhs op rhs`` with ``op`` in eq, approx, le, ge, ne, lt, gt."""

    lhs: Any
    op: str
    rhs: Any
    text: str


class SymbolTable:
    """Spellings (canonical LaTeX atoms) -> the package's symbols, plus the head index and d_k.

    Build it with :meth:`from_objects` from the expressions whose symbols may appear;
    every notation preset's spelling of a symbol is registered.
    """

    def __init__(self, entries: dict[str, Basic] | None = None, d_k: Any = None, head_index: Any = None,
                 unknown: Any = None):
        require(entries, (dict, type(None)), "SymbolTable's entries", "a dict of spellings to symbols, or None")
        self.entries: dict[str, Basic] = dict(entries or {})
        self.d_k = d_k
        self.head_index = head_index
        #: optional ``key -> object or None`` for atoms not in the table (the document checker names
        #: new matrices this way); only consulted when reading with ``strict=False``
        self.unknown = unknown
        #: the query axis of a document whose tokens are columns (``"column"`` when its scores are ``K^T Q``,
        #: ``"row"`` for ``Q^T K``, ``"unknown"``), or None for the row convention: its unmarked softmax normalises
        #: that axis, and Concat, Attention and MultiHead stack and return tokens as columns
        self.columns: str | None = None

    @classmethod
    def from_objects(cls, objects: Iterable[Any]) -> SymbolTable:
        from ..attention import HEAD_INDEX

        table = cls(head_index=HEAD_INDEX)
        for obj in objects:
            obj = as_sympy(obj)
            for atom in _atoms(obj):
                table.add(atom)
            if isinstance(obj, Basic) and not isinstance(obj, MatrixBase):
                for a in obj.atoms(Attention):
                    table.d_k = a.d
        return table

    @classmethod
    def for_model(cls, model: Any, *extra: Any) -> SymbolTable:
        """Every symbol of ``model``: inputs, steps, the standard formulas, its dimensions."""
        from ..formulas import standard_formulas

        steps = list(model.steps.values())
        table = cls.from_objects([*standard_formulas(model), *(s.symbol for s in steps),
                                  *(s.definition for s in steps), *extra])
        table.d_k = model.dims.d_k
        return table

    def add(self, atom: Basic) -> None:
        """Register ``atom`` under its spelling in every notation preset."""
        for notation in NOTATIONS:
            text = latex(atom, notation=notation)
            key = _canonical_atom(text)
            if key is not None:
                self.entries.setdefault(key, atom)
        if isinstance(atom, Symbol) and atom.name == "d_k":
            self.d_k = atom

    def lookup(self, key: str) -> Basic | None:
        return self.entries.get(key)

    def lookup_atom(self, base: str, primes: str, sub: str, sup: str) -> Basic | None:
        """Look an atom up; a per-head symbol may use another letter for the head index
        (seed 004 writes ``W_Q^h`` for head ``h``): it is read as the table's index ``i``."""
        found = self.lookup(_canonical(base, primes, sub, sup))
        if found is not None or self.head_index is None:
            return found
        i = str(self.head_index)
        for s2, p2 in ((sub, sup), (sup, sub)):
            if len(s2) == 1 and s2.isalpha() and s2 != i:
                alt = (i, p2) if s2 is sub else (p2, i)
                found = self.lookup(_canonical(base, primes, *alt))
                if found is not None:
                    return found
        return None

    def symbols(self) -> set[Basic]:
        """Every scalar symbol the entries use (dimensions included)."""
        found: set[Basic] = set()
        for e in self.entries.values():
            found |= {s for s in _free(e) if isinstance(s, Symbol)} | ({e} if isinstance(e, Symbol) else set())
            found |= {x for x in getattr(e, "shape", ()) if isinstance(x, Symbol)}
        return found


def _atoms(expr: Any) -> set[Basic]:
    found: set[Basic] = set()
    if isinstance(expr, MatrixBase):
        return set().union(*(_atoms(x) for x in expr)) if expr else set()
    if not isinstance(expr, Basic):
        return found
    found |= set(expr.atoms(MatrixSymbol)) | set(expr.atoms(Symbol))
    for c in expr.atoms(ConcatHeads):
        found |= {c.head(1), c.head(c.h)}
    for e in expr.atoms(Basic):
        if hasattr(e, "shape") and not isinstance(e, MatrixBase):
            found |= {x for x in e.shape if isinstance(x, Symbol)}
    return found


# ----- tokens ---------------------------------------------------------------------------------------
_SCALED_TUPLE = re.compile(r"(?<![\w.}^_])(\d+(?:\.\d+)?)\s*\(\s*(-?\d+(?:\.\d+)?(?:\s*,\s*-?\d+(?:\.\d+)?){1,15})"
                           r"\s*\)")


def _normalise(text: str) -> str:
    t = text
    for a, b in ((r"\left(", "("), (r"\right)", ")"), (r"\left[", "["), (r"\right]", "]"), (r"\left.", ""),
                 (r"\right.", ""), (r"\dfrac", r"\frac"), (r"\tfrac", r"\frac"), (r"\intercal", "T"),
                 (r"\top", "T"), (r"\ldots", r"\dots"), (r"\cdots", r"\dots")):
        t = t.replace(a, b)
    t = re.sub(r"\\(?:operatorname|text|textrm|mathrm|rm)\s*\{", r"\\mathrm{", t)
    t = re.sub(r"\\[Bb]igg?[lrm]?(?![A-Za-z])\s*", "", t)  # \big( ... \Bigr): a delimiter's size, nothing else
    t = re.sub(r"\\mathrm\{([^{}]*)\}", lambda m: "\\mathrm{" + m.group(1).replace(" ", "") + "}", t)
    t = re.sub(r"\\(?:,|;|:|!|quad|qquad)|~", " ", t)
    # TeX takes one character as a macro's argument without braces (\sqrt2, \frac12, \frac{a}2); a whole number
    # under a root (\sqrt 64) and a letter with its subscript (\sqrt d_k, which can only mean the root of d_k) are
    # braced whole
    t = re.sub(r"\\sqrt\s*(\d+(?:\.\d+)?|[A-Za-z](?:_\{?\w+\}?)?(?![A-Za-z]))", r"\\sqrt{\1}", t)
    t = re.sub(r"\\frac\s*(\{(?:[^{}]|\{[^{}]*\})*\}|[0-9A-Za-z])\s*(\{(?:[^{}]|\{[^{}]*\})*\}|[0-9A-Za-z])",
               lambda m: "\\frac" + "".join(a if a.startswith("{") else "{" + a + "}" for a in m.groups()), t)
    # a number written before a tuple of numbers multiplies it ("0.8044 (2, 1) + 0.1956 (1, 3)": weights times rows of
    # V), as with \cdot
    t = _SCALED_TUPLE.sub(lambda m: m.group(1) + r" \cdot \begin{pmatrix} " + " & ".join(
        x.strip() for x in m.group(2).split(",")) + r" \end{pmatrix}", t) if "(" in t else t
    # \log without a base is the natural logarithm, as everywhere in machine learning (latex2sympy reads base 10);
    # a base is written as one: \log_2, \log_{10}
    t = re.sub(r"\\(?:log|mathrm\{log\}|mathrm\{ln\})(?![A-Za-z])(?!\s*_)", r"\\ln", t)
    t = re.sub(r"\\log\s*_\s*([0-9A-Za-z])", r"\\log_{\1}", t)  # \log_2 8: the base braced, as the grammar needs
    # a lone d is a size (d = d_model), not latex2sympy's differential: "3 \cdot d \cdot p" is not 3 * dcdot * p
    return re.sub(r"(?<![\\A-Za-z{_^])d(?![A-Za-z_{}0-9])", "{d}", t)


def _tokens(text: str) -> list[str]:
    return [m.group(0) for m in _TOKEN.finditer(text)]


def _group(tokens: list[str], i: int) -> tuple[str, int]:
    """The argument at ``tokens[i]``: a braced group's inside, or one token; returns (text, next index)."""
    while i < len(tokens) and tokens[i].isspace():
        i += 1
    if i >= len(tokens):
        raise ParseError("a subscript, superscript or argument is missing")
    if tokens[i] != "{":
        return tokens[i], i + 1
    depth, j = 0, i
    while j < len(tokens):
        depth += {"{": 1, "}": -1}.get(tokens[j], 0)
        if depth == 0:
            return "".join(tokens[i + 1:j]), j + 1
        j += 1
    raise ParseError("unbalanced braces")


#: accents that make a letter another name (\widetilde is \tilde's spelling, \overline \bar's)
_ACCENTS = {r"\tilde": r"\tilde", r"\widetilde": r"\tilde", r"\hat": r"\hat", r"\widehat": r"\hat",
            r"\bar": r"\bar", r"\overline": r"\bar", r"\check": r"\check", r"\breve": r"\breve"}


def _atom_at(tokens: list[str], i: int) -> tuple[str, str, str, str, int] | None:
    """A symbol atom at ``i``: (base, primes, sub, sup, next index), or None."""
    t = tokens[i]
    if t == r"\mathrm" or t == r"\mathbf":
        body, j = _group(tokens, i + 1)
        if not re.fullmatch(r"[A-Za-z0-9]+", body):
            return None
        base = f"{t}{{{body}}}"
    elif t in _ACCENTS:  # \tilde S, \hat{A}, \bar P_1: an accented letter is a name of its own
        body, j = _group(tokens, i + 1)
        if not re.fullmatch(r"\s*[A-Za-z]\s*", body):
            return None
        base = f"{_ACCENTS[t]}{{{body.strip()}}}"
    elif re.fullmatch(r"[A-Za-z]", t):
        base, j = t, i + 1
    else:
        return None
    primes = ""
    while j < len(tokens) and tokens[j] == "'":
        primes += "'"
        j += 1
    sub_text = sup_text = ""
    for _ in range(2):
        if j < len(tokens) and tokens[j] == "_" and not sub_text:
            sub_text, j = _group(tokens, j + 1)
        elif j < len(tokens) and tokens[j] == "^" and not sup_text:
            k = j
            sup_text, j = _group(tokens, j + 1)
            if sup_text.strip() == "T":  # a transpose, not part of the name
                sup_text, j = "", k
                break
    return base, primes, re.sub(r"\s+", "", sub_text), re.sub(r"\s+", "", sup_text), j


def _canonical(base: str, primes: str, sub: str, sup: str) -> str:
    return base + primes + (f"_{{{sub}}}" if sub else "") + (f"^{{{sup}}}" if sup else "")


def _canonical_atom(text: str) -> str | None:
    tokens = [t for t in _tokens(_normalise(text))]
    if not tokens:
        return None
    atom = _atom_at(tokens, 0)
    if atom is None or any(not t.isspace() for t in tokens[atom[4]:]):
        return None
    return _canonical(*atom[:4])


def _join(pieces: list[str], placeholders: set[str]) -> str:
    """Re-assemble tokens: spaces only where needed (after commands, around placeholders)."""
    out = ""
    for p in pieces:
        if p.startswith("(") and any(out.rstrip().endswith(h) for h in placeholders):
            out += r" \cdot "  # a held matrix followed by "(" is a product, never a function call
        if out and (p in placeholders or re.search(r"\\[A-Za-z]+$", out) and p[0].isalnum()
                    or any(out.endswith(h) for h in placeholders)):
            out += " "
        out += p
    return out


def _matching(tokens: list[str], i: int, open_: str, close: str) -> int:
    depth = 0
    for j in range(i, len(tokens)):
        depth += (tokens[j] == open_) - (tokens[j] == close)
        if depth == 0:
            return j
    raise ParseError(f"unbalanced {open_}{close}")


def _split_top(tokens: list[str], seps: set[str]) -> list[list[str]]:
    parts: list[list[str]] = [[]]
    depth = 0
    for t in tokens:
        if t in "([{":
            depth += 1
        elif t in ")]}":
            depth -= 1
        if depth == 0 and t in seps:
            parts.append([])
        else:
            parts[-1].append(t)
    return parts


# ----- reading ----------------------------------------------------------------------------------------
class _Reader:
    def __init__(self, table: SymbolTable, strict: bool):
        self.table = table
        self.strict = strict
        self.placeholders: dict[str, Basic] = {}

    def hold(self, obj: Basic) -> str:
        key = f"{'M' if getattr(obj, 'is_Matrix', False) else 'Z'}_{{{10 + len(self.placeholders)}}}"
        self.placeholders[key] = obj
        return key

    def expression(self, text: str) -> Any:
        tokens = _tokens(_normalise(text))
        if not "".join(tokens).strip():
            raise ParseError("empty expression")
        pieces = self.rewrite(tokens)
        return self.convert(_join(pieces, set(self.placeholders)), text)

    def rewrite(self, tokens: list[str]) -> list[str]:
        out: list[str] = []
        i = 0
        while i < len(tokens):
            t = tokens[i]
            if t.isspace():
                i += 1
                continue
            if t in (r"\begin", r"\end"):  # environment names are not symbols
                env, j = _group(tokens, i + 1)
                out.append(f"{t}{{{env}}}")
                i = j
                continue
            if t == r"\mathrm":
                name, j = _group(tokens, i + 1)
                axis = None  # softmax_{causal}, softmax_{row}, softmax_{col}; Concat_{hstack}, Concat_{vstack}
                if name in ("softmax", "Concat") and j < len(tokens) and tokens[j] == "_":
                    subscript, after = _group(tokens, j + 1)
                    axis = _AXES[name].get(re.sub(r"\s+|\\mathrm|[{}]", "", subscript).lower())
                    if name == "softmax" and (axis is None or axis == "column" and not self.table.columns):
                        # softmax_{dim=0}, or softmax_{col} of a document whose tokens are rows: an axis this
                        # reader does not take on trust
                        raise ParseError(f"a softmax with the subscript {subscript.strip()!r} (which axis it "
                                         "normalises is not read from a subscript)")
                    j = after if axis is not None else j
                k = j
                while k < len(tokens) and tokens[k].isspace():
                    k += 1
                if name in _FUNCTIONS and k < len(tokens) and tokens[k] == "(":
                    end = _matching(tokens, k, "(", ")")
                    out.append(self.hold(self.function(name, tokens[k + 1:end], axis)))
                    i = end + 1
                    continue
            if t == r"\mathbf":
                body, j = _group(tokens, i + 1)
                if body.strip() == "1":
                    out.append(self.hold(OneMatrix(_N_ONES, 1)))
                    i = j
                    continue
            atom = _atom_at(tokens, i)
            if atom is not None:
                obj = self.table.lookup_atom(*atom[:4])
                if obj is None and not self.strict and self.table.unknown is not None:
                    obj = self.table.unknown(_canonical(*atom[:4]))
                if obj is None and atom[1]:  # x': latex2sympy would drop the prime and read x
                    obj = Symbol(_canonical(*atom[:4]))  # (refused as unknown in strict reading)
                if obj is not None:
                    i = atom[4]
                    if getattr(obj, "is_Matrix", False) and i < len(tokens) and tokens[i] == "[":
                        end = _matching(tokens, i, "[", "]")
                        obj = self.slice(obj, tokens[i + 1:end])
                        i = end + 1
                    out.append(self.hold(obj))
                    continue
                # an unknown name keeps its sub- and superscripts as written: the Q of W_{Q} is not the matrix Q
                out.extend(tokens[i:atom[4]])
                i = atom[4]
                continue
            if t == "^":
                sup, j = _group(tokens, i + 1)
                if sup.strip() == "T":
                    out.append("^T")
                    i = j
                    continue
            out.append(t)
            i += 1
        return out

    def function(self, name: str, arg_tokens: list[str], axis: str | None = None) -> Basic:
        r"""``name(args)``, with the axis a subscript names: ``"causal"``, ``"row"`` or ``"column"`` for a softmax,
        ``"h"`` or ``"v"`` for a Concat written as a row ``[a, b]`` or a column ``[a; b]`` of blocks
        (``\mathrm{Concat}_{hstack}``, ``\mathrm{Concat}_{vstack}``).  In a document
        whose tokens are columns (:attr:`SymbolTable.columns`) the model's row-convention function is applied to
        the transposed arguments and its result transposed: Concat stacks heads vertically, Attention and
        MultiHead return tokens as columns, and a softmax normalises the document's query axis."""
        columns = self.table.columns
        parts = ["".join(p).strip() for p in _split_top(arg_tokens, {","})]
        vertical = axis == "v" if axis in ("h", "v") else bool(columns)  # Concat: blocks stacked as rows
        if name == "Concat" and r"\dots" in parts:
            if len(parts) != 3 or parts[1] != r"\dots":
                raise ParseError(r"\mathrm{Concat} with \dots must read Concat(first, \dots, last)")
            first, last = (self.sub_expression(p) for p in (parts[0], parts[2]))
            if vertical:  # the heads stacked as rows: the transposes of the model's heads side by side
                first, last = (x.T if getattr(x, "is_Matrix", False) else x for x in (first, last))
            if not (isinstance(first, HeadMatrix) and first.index == 1 and isinstance(last, HeadMatrix)):
                raise ParseError(r"\mathrm{Concat}(a, \dots, b) needs per-head matrices a = X_1 ... b = X_h")
            i = self.table.head_index
            template = first.func(first.args[0], first.args[1], first.args[2], i, first.args[4])
            return ConcatHeads(template, i, last.index).T if vertical else ConcatHeads(template, i, last.index)
        args = [self.sub_expression(p) for p in parts]
        if name == "softmax":
            if len(args) != 1:
                raise ParseError(r"\mathrm{softmax} takes one matrix argument")
            along = axis if axis in ("row", "column") else columns or "row"
            if along == "unknown":
                raise ParseError(r"\mathrm{softmax} in a document whose tokens are columns and whose scores are "
                                 "neither K^T Q nor Q^T K: which axis it normalises is not known")
            causal = axis == "causal"
            if axis is None and isinstance(args[0], MatrixBase) and 1 in args[0].shape and args[0].shape != (1, 1):
                # a vector written out, (1, -1) or (1, -1)^T: its softmax runs over its entries in either convention
                along = "row" if args[0].rows == 1 else "column"
            if along == "column" and getattr(args[0], "is_Matrix", False):
                return Softmax(args[0].T, causal).T
            return Softmax(args[0], causal)  # (a softmax of a number is refused by Softmax itself)
        flip = vertical if name == "Concat" else bool(columns)
        if flip:
            if not all(getattr(a, "is_Matrix", False) for a in args):
                raise ParseError(rf"\mathrm{{{name}}} takes matrices")
            args = [a.T for a in args]
        if name == "Concat":
            got: Basic = Concat(*args)
        elif len(args) != 3:
            raise ParseError(rf"\mathrm{{{name}}} takes three arguments (Q, K, V), got {len(args)}")
        elif name == "Attention":
            if self.table.d_k is None:
                raise ParseError(r"\mathrm{Attention} needs d_k in the symbol table")
            got = Attention(args[0], args[1], args[2], self.table.d_k)
        else:
            got = MultiHead(args[0], args[1], args[2])
        return got.T if flip else got

    def sub_expression(self, text: str) -> Any:
        inner = _Reader(self.table, self.strict)
        inner.placeholders = self.placeholders  # share numbering
        return inner.expression(text)

    def slice(self, obj: Any, tokens: list[str]) -> Any:
        parts = _split_top(tokens, {","})
        if len(parts) != 2:
            raise ParseError("a matrix slice must read [rows, columns]")
        bounds = []
        for part in parts:
            ends = _split_top(part, {":"})
            if len(ends) != 2:
                raise ParseError("each slice part must read start:stop (or :)")
            bounds.append(tuple(self.sub_expression("".join(e)) if "".join(e).strip() else None for e in ends))
        (r0, r1), (c0, c1) = bounds
        rows = (r0 or 0, r1 if r1 is not None else obj.shape[0])
        cols = (c0 or 0, c1 if c1 is not None else obj.shape[1])
        return MatrixSlice(obj, rows, cols)

    def convert(self, text: str, original: str) -> Any:
        shapes = tuple(sorted((k, tuple(v.shape) if getattr(v, "is_Matrix", False) else None)
                              for k, v in self.placeholders.items() if k in text))
        try:
            result = (_latex2sympy_memo if len(text) <= _MEMO_CHARS else _latex2sympy)(text, shapes)
        except ParseError as e:
            raise ParseError(f"cannot read {original!r}: {e}") from None
        if isinstance(result, MatrixBase):
            result = result.copy()  # the memo's copy stays as it was read
        if isinstance(result, (tuple, list)) or not isinstance(result, (Basic, MatrixBase)):
            raise ParseError(f"cannot read {original!r} as one expression")
        mapping = {s: self.placeholders[str(s.name)] for s in _free(result) if str(s.name) in self.placeholders}
        result = result.xreplace(mapping) if mapping else result
        if self.strict:
            allowed = self.table.symbols() | {_N_ONES}
            unknown = sorted(str(s) for s in _free(result) if isinstance(s, Symbol) and s not in allowed)
            if unknown:
                raise ParseError(f"cannot read {original!r}: unknown symbol(s) {', '.join(unknown)}")
        return _canonical_sums(_scaled(_fix_ones(result)))


def _latex2sympy(text: str, shapes: tuple[tuple[str, tuple[Any, ...] | None], ...]) -> Any:
    """latex2sympy's reading of ``text`` with the placeholders of ``shapes`` (a matrix's shape, or None for a
    scalar).  The library's own error (a bare ``Exception``) becomes a :class:`ParseError` with its first line."""
    from latex2sympy2_extended import latex2sympy
    from latex2sympy2_extended.latex2sympy2 import ConversionConfig
    from latex2sympy2_extended.math_normalization import NormalizationConfig

    from ..budget import PieceTimeout, fired
    from .prediction_cache import warm

    warm()
    timers = fired()
    variables = {k: MatrixSymbol(k, *shape) if shape is not None else Symbol(k) for k, shape in shapes}
    config = ConversionConfig(lowercase_symbols=False, interpret_as_mixed_fractions=False)
    normal = NormalizationConfig(basic_latex=False, units=False, malformed_operators=False, nits=False,
                                 boxed="none", equations=False)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return latex2sympy(text, variable_values=variables, conversion_config=config,
                               normalization_config=normal)
    except Exception as e:  # the library raises bare Exceptions
        if fired() != timers:  # the piece's timer fired inside the library, which turned it into its own error
            raise PieceTimeout() from None
        raise ParseError(str(e).splitlines()[0] if str(e) else type(e).__name__) from None


#: The reading is a function of the text and the placeholders' shapes alone (the maintained fork keeps no state
#: between calls), and a document repeats its sides (``A_{1}``, ``d_k``) far more often than it adds new ones:
#: short texts are read once per process.  Long ones are not kept (4,096 formulas of 50,000 characters).
_MEMO_CHARS = 1_000
_latex2sympy_memo = functools.lru_cache(maxsize=4096)(_latex2sympy)


def _free(expr: Any) -> set[Any]:
    if isinstance(expr, MatrixBase):
        return set().union(*(_free(x) for x in expr)) if expr else set()
    found = set(expr.atoms(MatrixSymbol)) | set(expr.atoms(Symbol))
    for m in expr.atoms(MatrixSymbol):  # MatrixSymbol shapes are not in atoms(Symbol) of all SymPy versions
        found |= {x for x in m.shape if isinstance(x, Symbol)}
    return found


def _fix_ones(expr: Any) -> Any:
    """Give the all-ones column ``\\mathbf{1}`` the row count of the sum it is a term of."""
    ones = OneMatrix(_N_ONES, 1)
    if not isinstance(expr, Basic) or isinstance(expr, MatrixBase) or not expr.has(ones):
        return expr
    rules = {}
    for add in expr.atoms(MatAdd):
        rows = {a.shape[0] for a in add.args if not a.has(ones)}
        if len(rows) == 1:
            rules[add] = add.xreplace({ones: OneMatrix(rows.pop(), 1)})
    fixed = expr.xreplace(rules)
    if fixed.has(ones):
        raise ParseError(r"cannot tell how many rows \mathbf{1} has: use it in a sum such as X W + \mathbf{1} b")
    return fixed


def _scaled(expr: Any) -> Any:
    """``\frac{M}{\\sqrt{d}}`` (read as ``M * d**(-1/2)``) back into :class:`ScaledScores`."""
    if not isinstance(expr, Basic) or isinstance(expr, MatrixBase):
        return expr
    rules = {}
    for m in expr.atoms(MatMul):
        coeff, mats = m.as_coeff_matrices()
        if not mats or coeff == 1:
            continue
        if coeff.is_Pow and coeff.exp == Rational(-1, 2):
            d = coeff.base
        elif (coeff**2).is_Rational and (1 / coeff**2).is_Integer and (1 / coeff**2) > 1 and not coeff.is_Rational:
            d = 1 / coeff**2  # 1/sqrt(2) arrives as sqrt(2)/2
        else:
            continue
        rules[m] = ScaledScores(mats[0] if len(mats) == 1 else MatMul(*mats), d)
    return expr.xreplace(rules) if rules else expr


def _canonical_sums(expr: Any) -> Any:
    """Sums in SymPy's canonical term order (the order a model builds them in)."""
    if not isinstance(expr, Basic) or isinstance(expr, MatrixBase) or not expr.has(MatAdd):
        return expr
    return expr.xreplace({a: MatAdd(*a.args, evaluate=True) for a in expr.atoms(MatAdd)})


#: formulas longer or deeper than this are refused before reading: the reader recurses per nesting level, and
#: latex2sympy's parser takes time exponential in the depth of redundant groups ({{{x}}} 16 deep: 18 s)
MAX_CHARS = 50_000
MAX_DEPTH = 12


def too_large(tex: str) -> str | None:
    """Why a formula's numbers are too large to evaluate exactly, read off the text before anything is built
    (``10^{10^{10}}``, ``(10^{9})!``, ``2^{100000}``, 200-digit numbers), or None.

    >>> too_large("10^{10^{10}} = 5"), too_large("2^{10} = 1024")
    ('a tower of exponents', None)
    """
    require(tex, str, "too_large's tex", "a str")
    if re.search(r"\^\s*\{[^{}]*\^", tex):
        return "a tower of exponents"
    m = re.search(r"\^\s*\{?\s*(\d{4,})", tex)
    if m and int(m.group(1)) > 1000:
        return f"an exponent of {m.group(1)} (more than 1000)"
    if re.search(r"(?:\d{3,}|\})\s*\)?\s*!", tex):
        return "the factorial of a large number"
    if re.search(r"\d{200,}", tex):
        return "a number of more than 200 digits"
    return None


def malformed(tex: str) -> str | None:
    r"""Why ``tex`` is not well-formed LaTeX -- a brace group never closed or never opened, ``\left`` without its
    ``\right``, ``\begin{env}`` without its ``\end{env}`` -- or None.  Escaped braces ``\{ \}`` are text, and a
    ``%`` comment runs to the end of its line.  Linear in the length of ``tex``.

    >>> malformed(r"\frac{Q{K^T"), malformed(r"a}"), malformed(r"\{1, 2\} = \frac{a}{b}")
    ('2 braces { never closed', 'a brace } with no { before it', None)
    >>> malformed(r"\left( x"), malformed(r"\begin{bmatrix} 1 \end{pmatrix}"), malformed("d_k = 4 % {per head")
    ('\\left( without its \\right', '\\begin{bmatrix} closed by \\end{pmatrix}', None)
    """
    depth, envs, lefts = 0, [], []
    tokens = _tokens(tex)
    k = 0
    while k < len(tokens):
        t = tokens[k]
        if t == "%":  # a comment: up to the end of the line
            while k < len(tokens) and "\n" not in tokens[k]:
                k += 1
            continue
        if t in ("{", "}"):
            depth += 1 if t == "{" else -1
            if depth < 0:
                return "a brace } with no { before it"
        elif t in (r"\left", r"\right"):
            j = k + 1
            while j < len(tokens) and tokens[j].isspace():
                j += 1
            delimiter = tokens[j] if j < len(tokens) else ""
            if t == r"\left":
                lefts.append(delimiter)
            elif not lefts:
                return rf"\right{delimiter} with no \left before it"
            else:
                lefts.pop()
        elif t in (r"\begin", r"\end"):
            env, j = "?", k + 1
            while j < len(tokens) and tokens[j].isspace():
                j += 1
            if j < len(tokens) and tokens[j] == "{":  # the name: up to its closing brace
                close = next((c for c in range(j + 1, len(tokens)) if tokens[c] in ("{", "}")), None)
                if close is not None and tokens[close] == "}":
                    env = "".join(tokens[j + 1:close]).strip()
            if t == r"\begin":
                envs.append(env)
            elif not envs:
                return rf"\end{{{env}}} with no \begin{{{env}}}"
            elif envs[-1] != env:
                return rf"\begin{{{envs[-1]}}} closed by \end{{{env}}}"
            else:
                envs.pop()
        k += 1
    if depth > 0:
        return f"{depth} brace{'s' if depth > 1 else ''} {{ never closed"
    if lefts:
        return rf"\left{lefts[-1]} without its \right"
    if envs:
        return rf"\begin{{{envs[-1]}}} without its \end{{{envs[-1]}}}"
    return None


def _readable(text: Any, who: str) -> str:
    """``text`` if it is LaTeX the reader will take on; else a :class:`ParseError` saying why."""
    if not isinstance(text, str):
        raise ParseError(f"{who} needs LaTeX text (a str), got {type(text).__name__}")
    if len(text) > MAX_CHARS:
        raise ParseError(f"{who}: the formula has {len(text):,} characters (limit {MAX_CHARS:,}); not read")
    depth = deepest = where = 0
    for k, ch in enumerate(text):
        if ch in "([{":
            depth += 1
            if depth > deepest:
                deepest, where = depth, k
        elif ch in ")]}":
            depth -= 1
    if deepest > MAX_DEPTH:
        raise ParseError(f"{who}: brackets nested {deepest} levels deep (limit {MAX_DEPTH}, deepest at character "
                         f"{where + 1}); not read")
    huge = too_large(text)
    if huge:
        raise SizeLimitError(f"{who}: not evaluated: {huge}")
    return text


def read_expression(text: str, table: SymbolTable | None = None, strict: bool = True) -> Any:
    """One expression (no relation) as a SymPy object; :class:`ParseError` if not fully understood.

    >>> read_expression("(" * 100 + "x" + ")" * 100)
    Traceback (most recent call last):
    ...
    mha_symbolic.errors.ParseError: read_expression: brackets nested 100 levels deep (limit 12, deepest at \
character 100); not read
    """
    return _Reader(table or SymbolTable(), strict).expression(_readable(text, "read_expression"))


def read_formula(text: str, table: SymbolTable | None = None, strict: bool = True) -> list[Relation]:
    """A formula with relations: one :class:`Relation` per adjacent pair of sides.

    ``a = b \\approx c`` gives ``a = b`` and ``b \\approx c``.
    """
    _readable(text, "read_formula")
    table = table or SymbolTable()
    tokens = _tokens(_normalise(text))
    sides: list[list[str]] = [[]]
    ops: list[str] = []
    symbols: list[str] = []
    depth = 0
    for t in tokens:
        depth += (t in "([{") - (t in ")]}")
        op = next((name for sym, name in _RELATIONS if t == sym), None)
        if depth == 0 and op is not None:
            ops.append(op)
            symbols.append(t)
            sides.append([])
        else:
            sides[-1].append(t)
    texts = ["".join(s).strip() for s in sides]
    if any(not s for s in texts):
        raise ParseError(f"a side of a relation is empty in {text!r}")
    values = [read_expression(s, table, strict) for s in texts]
    if not ops:
        return [Relation(values[0], "expr", None, text)]
    return [Relation(values[k], ops[k], values[k + 1], f"{texts[k]} {symbols[k]} {texts[k + 1]}")
            for k in range(len(ops))]


def _canonical_form(e: Any) -> Any:
    if isinstance(e, MatrixBase):
        return ImmutableMatrix(e.applyfunc(lambda x: nsimplify(x) if x.is_Float else x))
    if isinstance(e, Equation):
        return Equation(_canonical_form(e.lhs), _canonical_form(e.rhs))
    if isinstance(e, Basic):
        done = e.doit()
        return done.doit() if done != e else done
    return e


def _refuse_huge(e: Any) -> None:
    """A :class:`SizeLimitError` when ``e`` holds a number too large to compute exactly (a power with an
    exponent over 10,000, a factorial over 1,000): ``doit`` would build it (``10^{10^{10}}`` never ends)."""
    from sympy import Pow, factorial

    if not isinstance(e, Basic) or isinstance(e, MatrixBase):
        return
    for p in e.atoms(Pow):
        if p.base.is_number and p.exp.is_number and p.base.evalf(5) not in (0, 1, -1) \
                and bool(abs(p.exp.evalf(5)) > 10_000):
            raise SizeLimitError(f"not evaluated: the power {p.base}^(...) has an exponent over 10,000")
    for f in e.atoms(factorial):
        if f.args[0].is_number and bool(f.args[0].evalf(5) > 1000):
            raise SizeLimitError("not evaluated: the factorial of a number over 1,000")


def equivalent(a: Any, b: Any) -> bool:
    """Do two readings denote the same object (after ``doit``, flattening products, exact numbers)?

    >>> from sympy import Integer, Pow
    >>> equivalent(Pow(Integer(10), Pow(Integer(10), Integer(10), evaluate=False), evaluate=False), Integer(5))
    Traceback (most recent call last):
    ...
    mha_symbolic.errors.SizeLimitError: not evaluated: the power 10^(...) has an exponent over 10,000
    """
    if a == b:
        return True
    _refuse_huge(a)
    _refuse_huge(b)
    ca, cb = _canonical_form(a), _canonical_form(b)
    if ca == cb:
        return True
    if isinstance(ca, MatrixBase) and isinstance(cb, MatrixBase):
        return ca.shape == cb.shape and all(simplify(x - y) == 0 for x, y in zip(ca, cb, strict=True))
    if isinstance(ca, Expr) and isinstance(cb, Expr) and not getattr(ca, "is_Matrix", False):
        return simplify(ca - cb) == 0
    return False

