r"""One verdict per relation chain, from the engine: values, sizes, shapes, ranks, formulas.

Explanation
===========

:func:`judge` reads every side of a chain (:class:`mha_symbolic.check.read.Chain`) through the document
model and decides by kind:

* **setting** -- every side is a size (``d_k = d_{model}/h = 6/3 = 2``): the first equality naming an
  unknown size binds it (``given``); every other side is computed from the known sizes and compared,
  whatever the operator (``=``, ``\ne``, ``\le`` ...); a range on an unknown size is a constraint (``given``).
* **number** -- a side is numbers (a matrix or a scalar): an input (``X``, ``W_Q^1``) it binds (``given``) or,
  when already known, compares; any other expression is evaluated exactly by the model
  (:meth:`MultiHeadAttention.evaluate` with the document's givens) and compared at the stated
  precision; an expression whose inputs the document never gives is ``assumed``.
* **shape** -- ``E \in \mathbb{R}^{a \times b}``: the shape the model derives for ``E`` against the stated one.
* **rank** -- ``\mathrm{rank}(E) \le R`` and the other operators:
  :class:`mha_symbolic.statements.RankStatement` (proof or certified counterexample).
* **formula** -- two matrix expressions: both expanded to the model's inputs and compared as SymPy
  expressions; a definition that differs from the model's is ``wrong`` with the model's form.
"""

from __future__ import annotations

import re
from typing import Any

from sympy import (
    MatrixBase,
    simplify,
)

from .._convert import as_sympy
from ..errors import MHASymbolicError, ParseError, ShapeError
from ..parse import too_large
from .model import DocumentModel, dim_name
from .numbers import (  # noqa: F401  (shared with the other rooms through this module)
    _OPS,
    Verdict3,
    _compare_chain,
    _dims_subs,
    _exact,
    _holds,
    _input_key,
    _literal,
    _number,
    _places,
    _scalar_free,
    _setting,
    _value,
    _worst,
)
from .read import top_level_split

#: a rank written in any of the documents' spellings (other languages' are made \mathrm{rank} first)
_RANK = re.compile(r"\\(?:mathrm|operatorname|text)\{rank\}|\\rank\b")


def judge(doc: DocumentModel, sides_tex: list[str], ops: list[str], text: str, read: list[Any] | None = None
          ) -> tuple[str, Verdict3] | None:
    """(kind, verdict) for one chain, or None when it states nothing checkable (a lone name).  ``read``: the
    sides already read (code read through ``ast``), ``sides_tex`` then only names them in messages.

    A chain the model cannot evaluate (``qK^T = (1+0+2, 0+2) = (3, 2)`` where the sizes are not fixed) is still
    judged on its links of written numbers alone: they are a local computation, and need no model."""
    try:
        return _judge(doc, sides_tex, ops, text, read)
    except MHASymbolicError:
        if read is not None or len(sides_tex) < 3:
            raise
        run = numbers_run(sides_tex, ops)
        if run is None:
            raise
        a, b = run
        got = _judge(doc, sides_tex[a:b], ops[a:b - 1], text, None)
        if got is None or got[1][0] == "unchecked":
            raise
        kind, (status, message, expected, basis) = got
        return kind, (status, f"{message} (its links of written numbers, computed alone)", expected, basis)


#: a name given a vector of numbers in a sentence (``s = (2, 1, 0)``): a lower-case letter, perhaps with a subscript
VECTOR_NAME = re.compile(r"\s*[a-z](?:_\{?\w+\}?)?\s*")
#: what a side of written numbers may hold besides digits: arithmetic, roots, fractions, brackets, matrices
_ARITHMETIC = re.compile(r"\\(?:cdot|times|frac|dfrac|tfrac|sqrt|left|right|begin\{[pbv]?matrix\}|end\{[pbv]?matrix\})")


def numbers_run(sides_tex: list[str], ops: list[str]) -> tuple[int, int] | None:
    """The longest run of two or more neighbouring sides of written numbers only, joined by = or ≈."""
    numeric = [bool(re.search(r"\d", t)) and not re.search(r"[A-Za-z]", _ARITHMETIC.sub(" ", t))
               and not re.match(r"\s*0\d", t) for t in sides_tex]  # (096: the tail of 4,096 cut at its comma)
    best: tuple[int, int] | None = None
    start = None
    for k in range(len(sides_tex) + 1):
        joined = k < len(sides_tex) and numeric[k] and (start is None or ops[k - 1] in ("eq", "approx"))
        if joined and start is None:
            start = k
        elif not joined and start is not None:
            if k - start >= 2 and (best is None or k - start > best[1] - best[0]):
                best = (start, k)
            start = k if k < len(sides_tex) and numeric[k] else None
    return best


def _judge(doc: DocumentModel, sides_tex: list[str], ops: list[str], text: str, read: list[Any] | None = None
           ) -> tuple[str, Verdict3] | None:
    if read is not None:
        return _judge_read(doc, read, sides_tex, ops)
    sides_tex = [re.sub(r"\\(?:mathrm|operatorname|text)\{(?:rg|Rang|rango|posto)\}", r"\\mathrm{rank}", t)
                 for t in sides_tex]  # rank in other languages (rg, Rang, rango, posto)
    ops = list(ops)
    if sides_tex and re.fullmatch(r"\s*\\(?:mathrm|text|operatorname)\{head\}_\{?h\}?\s*", sides_tex[0]):
        # head_h = Attention(Q W_Q^h, ...): h names a general head here, as i does elsewhere
        sides_tex = [re.sub(r"([_^])\{?h\}?(?![A-Za-z])", r"\1i", t) for t in sides_tex]
    while ops and ops[-1] in ("colon", "to") and not sides_tex[-1].strip():  # "Q = X W_Q:", "n = 8 ->"
        sides_tex, ops = sides_tex[:-1], ops[:-1]
    while ops and not sides_tex[0].strip():  # "= (8, 2) x (2, 8) = (8, 8)" continues the line above
        sides_tex, ops = sides_tex[1:], ops[1:]
    sides_tex = [_dim_spelling(t, doc.cross) for t in sides_tex]
    if "to" in ops:  # Q_1 = X_1 W_Q^1 -> (8, 2) x (2, 2) = (8, 2): each part on its own
        at = ops.index("to")
        parts = [judge(doc, sides_tex[:at + 1], ops[:at], text), judge(doc, sides_tex[at + 1:], ops[at + 1:], text)]
        got = [v for v in parts if v is not None]
        if not got:
            return None
        return got[0][0], _worst([v[1] for v in got])
    if not ops or all(op in ("to", "colon") for op in ops):
        return None
    if all(op in ("eq", "approx") for op in ops):
        from .shapes import judge_shape_product, shape_product
        from .tracing import shape_products

        batched = shape_products(" = ".join(sides_tex)) if len(sides_tex) == 2 else []
        if batched:  # (2, 12, 128, 64) \times (2, 12, 64, 128) = (2, 12, 128, 128): batch sizes broadcast
            return "shape", _worst([(status, message, expected, "proven") for status, message, expected in batched])
        products = [shape_product(s) for s in sides_tex]
        if all(p is not None for p in products) and any(len(p or []) > 1 for p in products):
            return "shape", judge_shape_product(doc, products, sides_tex, ops)  # type: ignore[arg-type]
        if len(sides_tex) == 2 and re.fullmatch(r"\s*[ijk]\s*", sides_tex[0]) and "," in sides_tex[1] and \
                not re.match(r"\s*(?:\\left\s*)?[(\[]|\s*\\begin", sides_tex[1]):
            return None  # an index range (i = 1, 2, 3); k = (3, 1) is a key vector
    if "in" in ops and ops.index("in") > 0:  # W_O = [...] \in R^{6 x 6}: the equality binds, then the shape
        at = ops.index("in")
        first = judge(doc, sides_tex[:at + 1], ops[:at], text)
        second = judge(doc, sides_tex[at:], ops[at:], text)
        both = [v for v in (first, second) if v is not None]
        if first is not None and second is not None and first[1][0] == "given" and second[1][0] == "correct":
            return first[0], (first[1][0], f"{first[1][1]}; {second[1][1]}", None, "")
        return (both[0][0], _worst([v[1] for v in both])) if both else None
    if "in" in ops and "," in sides_tex[ops.index("in")]:
        subjects = [p for p in top_level_split(sides_tex[ops.index("in")]) if p.strip()]
        if len(subjects) > 1:  # W_Q, W_K, W_V \in R^{a x b}: each of them
            verdicts = [judge(doc, [*sides_tex[:ops.index("in")], p.strip(), *sides_tex[ops.index("in") + 1:]],
                              ops, text) for p in subjects]
            each = [v[1] for v in verdicts if v is not None]
            return ("shape", _worst(each)) if each else None
    shapes = re.sub(r"(?:\\mathbb\{R\}|ℝ)\s*\^\s*\{[^{}]*\}", "", " ".join(sides_tex))  # R^{4096 x 4096}: a shape
    huge = too_large(shapes)
    if huge:
        return "number", ("unchecked", f"not evaluated: {huge}", None, "")
    from .entries import judge_entry
    from .statistics import judge_statistic
    from .units import judge_amounts

    # 98{,}304 \cdot 1024 = ... \text{ bytes} = 96 MiB; L counts layers once "$L = 32$ layers" said so
    layer_name, layer_count = doc.memory.get("layer_name"), doc.memory.get("layers")
    amounts = judge_amounts(doc.known_dims() | doc.own_numbers(), sides_tex, ops,
                            (layer_name, layer_count) if layer_name and layer_count else None)
    if amounts is not None:
        return "number", amounts
    entry = judge_entry(doc, sides_tex, ops)
    if entry is not None:
        return "number", entry

    stat = judge_statistic(doc, sides_tex, ops)
    if stat is not None:
        return "statistic", stat
    from .softmax_forms import judge_softmax_form

    form = judge_softmax_form(doc, sides_tex, ops)
    if form is not None:
        return "formula", form
    if any(_RANK.search(s) for s in sides_tex):
        return "rank", _rank(doc, sides_tex, ops, text)
    if any(re.search(r"\\mathbb\{R\}|ℝ", s) for s in sides_tex):
        return "shape", _shape(doc, sides_tex, ops)
    if len(sides_tex) > 2:  # (O_1)_{31} = 0.0454 \cdot 2 + ... = 1.8133: the entry's value, then link by link
        from .entries import entry_value_tex

        sides_tex = [entry_value_tex(doc, s) or s for s in sides_tex]
    nouns = {re.sub(r"\W", "", m.group(0)) for s in sides_tex if (m := _COUNT_NOUN.search(s))}
    if len(nouns) == 1:  # 2 \text{ bytes}, 32 \text{ layers}: the number (128 values = 256 bytes: no one count)
        sides_tex = [_COUNT_NOUN.sub("", s) for s in sides_tex]
    try:
        sides = [doc.read(s) for s in sides_tex]
    except ShapeError as e:
        return "formula", ("inconsistent", f"{str(e).splitlines()[0][:200]}", None, "proven")
    except (ParseError, MHASymbolicError, ValueError, TypeError) as e:
        if "onesvector" in str(e):
            return "formula", ("unchecked", "the all-ones vector (\\mathbf{1}) is not read: the statement does not fix "
                               "its length", None, "")
        return "formula", ("unchecked", f"not read: {str(e).splitlines()[0][:160]}", None, "")
    return _judge_read(doc, sides, sides_tex, ops)


#: a word in text after a number that ends a side (``2 \text{ bytes}``, ``512\,\text{tokens}``): what the number
#: counts, no factor of it (amounts of memory and work in their units are judged before, by .units)
_COUNT_NOUN = re.compile(r"(?<=[\d}])(?:\\[,;:! ]|\\quad|~|\s)*\\(?:text|mathrm|textrm|mbox)\{\s*"
                         r"(?!(?i:[kmgtb]|ki|mi|gi|ti|percent|per\s*cent|thousands?|millions?|billions?|trillions?|mil|"
                         r"mille|millionen|milliarden|mrd|mio)(?![^\W\d_]))"  # a scale or a percent is no count
                         r"[^\W\d_]+(?:[\s-][^\W\d_]+)?\s*\}\s*$")


def _judge_read(doc: DocumentModel, sides: list[Any], sides_tex: list[str], ops: list[str]) -> tuple[str, Verdict3]:
    clash = _declared_clash(doc, sides, sides_tex) or _misaligned(doc, sides)
    if clash is not None:
        from ..formulas import Attention

        if any(isinstance(s, Attention) for s in sides):  # a definition of attention: its form is the verdict
            status, message, expected, basis = _formula(doc, sides, sides_tex, ops)
            if status == "wrong":
                return "formula", (status, f"{message}; and {clash[1]}", expected, basis)
        return "shape", clash
    if all(_scalar_free(s) and not isinstance(s, MatrixBase) for s in sides):
        return "setting", _setting(doc, sides, sides_tex, ops)
    if any(_literal(s) is not None for s in sides):
        return "number", _number(doc, sides, sides_tex, ops)
    return "formula", _formula(doc, sides, sides_tex, ops)


def _declared_clash(doc: DocumentModel, sides: list[Any], tex: list[str]) -> Verdict3 | None:
    """A weight used here whose declared shape (``Shape: (4, 2)``) the product it sits in cannot take."""
    from sympy import MatMul

    if not doc.shapes:
        return None
    for side in sides:
        for product in getattr(side, "atoms", lambda *a: set())(MatMul):
            factors = [f for f in product.args if hasattr(f, "shape")]
            for left, right in zip(factors, factors[1:], strict=False):
                name = re.sub(r"\^\d+$", "", str(right))
                declared = doc.shapes.get(name) or doc.shapes.get(name.replace("W_", "W_{") + "}")
                if declared is None:
                    continue
                (rows, cols), line = declared
                have = left.shape[1]
                if str(have) != rows:
                    return ("inconsistent", f"{name} declared {rows} x {cols} at line {line}, but here {left} {right} "
                            f"is "
                            f"{tuple(left.shape)} x ({rows}, {cols}) — inner dimensions {have} and {rows} differ",
                            None, "proven")
    return None


def _misaligned(doc: DocumentModel, sides: list[Any]) -> Verdict3 | None:
    """A product whose inner sizes are different sizes of the model (``W_O \\mathrm{Concat}(...)``: d_model
    and n) -- undefined unless they happen to be equal.  Says when the column convention (every matrix
    transposed) would make it fit."""
    from sympy import MatMul

    for side in sides:
        for product in getattr(side, "atoms", lambda *a: set())(MatMul):
            factors = [f for f in product.args if hasattr(f, "shape")]
            for a, b in zip(factors, factors[1:], strict=False):
                inner = simplify(as_sympy(a.shape[1]) - as_sympy(b.shape[0]))
                inner = inner.subs(_dims_subs(doc, inner)) if inner.free_symbols else inner
                if inner == 0 or not inner.free_symbols and inner.is_zero is not False:
                    continue
                sizes = (as_sympy(a.shape[1]), as_sympy(b.shape[0]))
                if any(x.is_number for x in sizes) and inner.free_symbols:
                    continue  # 3 against an n the document has not fixed: they may well be equal
                columns = simplify(as_sympy(a.shape[0]) - as_sympy(b.shape[1])) == 0
                why = (f"; read in the column convention (each matrix transposed, {b}^T {a}^T ... as columns) it "
                       "fits, so the document mixes the two conventions") if columns else ""
                return ("inconsistent", f"{a} ({a.shape[0]} x {a.shape[1]}) times {b} ({b.shape[0]} x {b.shape[1]}): "
                        f"inner sizes {a.shape[1]} and {b.shape[0]} differ{why}", None, "proven")
    return None


def _dim_spelling(tex: str, cross: bool = False) -> str:
    """A side that is a size in words or another spelling (``\\text{sequence length}``) as the size's name;
    ``n_kv`` is the keys' count of cross-attention, and the key/value heads ``g`` in any other document."""
    name = dim_name(tex.strip())
    spelled = {"d_model": "d_{model}", "n_kv": "n_{kv}" if cross else "g"}
    return spelled.get(name, name) if name is not None and not re.fullmatch(r"\s*\w\s*", tex) else tex




# ----- shapes, ranks, formulas -------------------------------------------------------------------------
def _shape(doc: DocumentModel, tex: list[str], ops: list[str]) -> Verdict3:
    from .shapes import judge_shape

    return judge_shape(doc, tex, ops)


def _rank(doc: DocumentModel, tex: list[str], ops: list[str], text: str) -> Verdict3:
    from .ranks import judge_rank

    verdict = judge_rank(doc, tex, ops)
    links = _size_links(doc, tex, ops)
    return verdict if links is None or links[0] != "wrong" else _worst([verdict, links])


def _size_links(doc: DocumentModel, tex: list[str], ops: list[str]) -> Verdict3 | None:
    r"""The links of a chain that hold no rank, each side a number or an expression in sizes the document has
    fixed (``\mathrm{rank}(E) \le \min(n, d_k) = 100`` with n = 100, d_k = 32: min(100, 32) = 32, not 100), judged
    by themselves: every link of a chain is a statement.  None when no such link exists or a side is not read
    (an unknown size is never bound here)."""
    verdicts = []
    run: list[int] = []
    for i in [*range(len(tex)), len(tex)]:
        if i < len(tex) and not _RANK.search(tex[i]):
            run.append(i)
            continue
        if len(run) >= 2:
            try:
                sides = [doc.read(tex[j]) for j in run]
            except (MHASymbolicError, ValueError, TypeError):
                return None
            if not all(_scalar_free(s) for s in sides):
                return None
            sizes = {dim_name(str(x)) for s in sides for x in getattr(as_sympy(s), "free_symbols", ())}
            if any(dim_name(tex[j].strip()) for j in run) or any(
                    name is None or doc.scope_of(name)[0] < doc.section_paragraph for name in sizes):
                run = []  # "rank <= d_k = 2" restates a size (a setting's to judge); a size bound in another
                continue  # section may be another example's (its own sentence may set this one's: "for n = 200")
            values = [simplify(as_sympy(s).subs(_dims_subs(doc, s))) for s in sides]
            if not all(v.is_number for v in values):
                return None
            verdicts.append(_compare_chain(values, ops[run[0]:run[-1]], [tex[j] for j in run], "computed",
                                           raw=sides, doc=doc))
        run = []
    return _worst(verdicts) if verdicts else None


def _formula(doc: DocumentModel, sides: list[Any], tex: list[str], ops: list[str]) -> Verdict3:
    from .formulas import judge_formula

    return judge_formula(doc, sides, tex, ops)
