r"""Shape statements of a document (``E \in \mathbb{R}^{a \times b}``), decided by the model's shapes.

The left side is read by the document model; its shape is the one the model derives (a product whose
inner sizes differ is ``inconsistent``, naming the shapes).  A stated size that names a size the document
has not fixed binds it (``given``); otherwise both are compared as expressions in the sizes.
"""

from __future__ import annotations

import re
from typing import Any

from sympy import MatrixBase, Symbol, simplify

from .._convert import as_sympy
from ..errors import MHASymbolicError, ShapeError
from .model import DocumentModel, dim_name
from .numbers import Verdict3

__all__ = ["judge_shape", "judge_shape_product", "shape_product", "stated_shape"]


def stated_shape(tex: str) -> tuple[str, str] | None:
    r"""``\mathbb{R}^{a \times b}`` (or ℝ^{a×b}) as the texts ``a`` and ``b``."""
    m = re.search(r"(?:\\mathbb\{R\}|ℝ)\s*\^\s*\{(.*)\}\s*$", tex.strip()) or re.search(
        r"(?:\\mathbb\{R\}|ℝ)\s*\^\s*(\w)\s*$", tex.strip())
    if not m:
        return None
    parts = re.split(r"\\times|×|\\cdot\s*(?=\d)|(?<=\d)\s*x\s*(?=\d)", m.group(1))
    if len(parts) != 2:
        return None
    return parts[0].strip(), parts[1].strip()


def _size(doc: DocumentModel, e: Any) -> Any:
    """A size expression with the document's spellings replaced by the model's sizes and known values."""
    D = doc.model().dims
    by_name = {"n": D.n, "d_model": D.d_model, "h": D.h, "d_k": D.d_k, "d_v": D.d_v,
               "g": doc.model().kv_heads or Symbol("g", integer=True, positive=True), "n_kv": doc.model().n_kv}
    known = doc.known_dims()
    repl = {}
    for s in as_sympy(e).free_symbols:
        if isinstance(s, Symbol):
            name = dim_name(s.name)
            if name is not None:
                repl[s] = as_sympy(known.get(name, by_name[name]))
    return simplify(as_sympy(e).xreplace(repl).subs(D.definitions))


def _in_letters(doc: DocumentModel, subject: str, shape_tex: tuple[str, str]) -> Verdict3 | None:
    """A shape written in the letters of sizes only (``QK^T`` is ``n \times n``) is a statement for every size:
    where the sizes in force and the matrices in force disagree (a size restated for another configuration after a
    small example's matrices), it holds if the model of symbolic sizes gives the subject that shape (``correct``,
    proven); None when a size is written in digits or the general model does not give it."""
    if any(re.search(r"\d", t) for t in shape_tex):
        return None
    from ..parse import read_expression
    from .model import _generic_table, canonical_tex, generic_model

    G = generic_model(*doc.variant())
    sizes = {"n": G.dims.n, "d_model": G.dims.d_model, "h": G.dims.h, "d_k": G.dims.d_k, "d_v": G.dims.d_v}
    try:
        general = read_expression(canonical_tex(subject, doc.zero_based), _generic_table(*doc.variant()), strict=False)
        stated = [as_sympy(read_expression(canonical_tex(t, doc.zero_based), _generic_table(*doc.variant()),
                                           strict=False)) for t in shape_tex]
    except (MHASymbolicError, ValueError, TypeError):
        return None
    if not hasattr(general, "shape") or any(dim_name(str(x)) not in sizes for e in stated for x in e.free_symbols):
        return None
    stated = [simplify(e.xreplace({x: sizes[dim_name(str(x)) or ""] for x in e.free_symbols}).subs(G.dims.definitions))
              for e in stated]
    shape = [simplify(as_sympy(x).subs(G.dims.definitions)) for x in general.shape]
    if any(simplify(a - b) != 0 for a, b in zip(shape, stated, strict=True)):
        return None
    return ("correct", f"{subject.strip()} is {shape_tex[0]} x {shape_tex[1]} for every size, by the model's shape "
            "rules (the sizes in force here are not those of the matrices in force)", None, "proven")


def _contradiction(subject: Any, message: str, got: str) -> tuple[str, str, str | None, str]:
    """A stated shape the model does not give: ``wrong`` for a computed matrix; ``inconsistent`` for an
    input (X or a weight), whose shape the document's own sizes and givens already fix."""
    name = re.sub(r"\^.*", "", str(subject))
    if name in ("X", "W_O", "W_Q", "W_K", "W_V"):
        return "inconsistent", message + " (the document's sizes fix it)", got, "proven"
    return "wrong", message, got, "proven"


def _declared_in_sizes(doc: DocumentModel, name: str, stated: tuple[Any, ...]
                       ) -> tuple[str, str, str | None, str] | None:
    """A matrix of the document's own declared earlier in sizes only (``W_O^{(i)} \\in \\mathbb{R}^{d_v \\times d}``),
    now stated with numbers: the earlier shape at the sizes in force, against the stated one (``inconsistent`` when
    they differ); None when it was not so declared, or a size is not fixed."""
    before = doc.declared.get(name)
    if before is None or len(before) != len(stated) or any(
            getattr(as_sympy(x), "free_symbols", None) == set() for x in before):
        return None  # (a declaration with a number in it, n x 512, belongs to its own example)
    now = tuple(as_sympy(_size(doc, x)) for x in before)
    said = tuple(as_sympy(x) for x in stated)
    if not all(x.is_Integer for x in now + said) or now == said:
        return None
    return ("inconsistent", f"{name} was declared {before[0]} x {before[1]} (line {doc.bound_line.get(name, '?')}), "
            f"which is {now[0]} x {now[1]} with the sizes in force, not {said[0]} x {said[1]}",
            f"{now[0]} x {now[1]}", "proven")


#: the real matrices of a shape, ``\mathbb{R}^{h \times n \times n}`` (or ``ℝ^{...}``), its sizes in group 1
SPACE = re.compile(r"\s*(?:\\mathbb\{R\}|ℝ)\s*\^\s*\{([^{}]*(?:\{[^{}]*\}[^{}]*)*)\}\s*")


def _set_sizes(doc: DocumentModel, tex: str) -> tuple[Any, ...] | None:
    r"""``\mathbb{R}^{h \times n \times n}``: its sizes with the document's (None when not such a set, or a size is
    not fixed)."""
    from .arithmetic import arithmetic_value

    m = SPACE.fullmatch(tex)
    if m is None:
        return None
    try:
        return tuple(arithmetic_value(x, doc.known_dims()) for x in re.split(r"\\times|×", m.group(1)))
    except (ValueError, ZeroDivisionError, TypeError, RecursionError):
        return None


def _equal_sets(doc: DocumentModel, tex: list[str], where: int) -> tuple[str, str, str | None, str] | None:
    r"""``S \in \mathbb{R}^{h \times n \times n} = \mathbb{R}^{4 \times 3 \times 3}``: the sets after the membership
    are one set written twice, its sizes by name and by value; compared with the document's sizes (of any number of
    axes).  None when they are not all such sets."""
    sets = [_set_sizes(doc, t) for t in tex[where + 1:]]
    if len(sets) < 2 or any(x is None for x in sets):
        return None
    shown = [" x ".join(str(v) for v in x or ()) for x in sets]
    if len(set(sets)) == 1:
        return "correct", f"{tex[where + 1].strip()} is R^{{{shown[0]}}} with the document's sizes", None, "computed"
    return ("wrong", f"{tex[where + 1].strip()} is R^{{{shown[0]}}} with the document's sizes, not R^{{{shown[1]}}}",
            shown[0], "computed")


def _outer_factors_known(doc: DocumentModel, tex: str, loose: list[str]) -> bool:
    r"""Is ``tex`` one product of matrices whose first and last factors are not among the ``loose`` names (those read
    as numbers: of unknown shape)?  Its shape, where the product is defined, is then the first factor's rows by the last
    factor's columns whatever the shapes of the factors between them.

    >>> from mha_symbolic.check.model import DocumentModel
    >>> doc = DocumentModel()
    >>> _outer_factors_known(doc, "X W_Q W_K^T X^T", ["W_K", "W_Q"]), _outer_factors_known(doc, "X W_Q", ["W_Q"])
    (True, False)
    """
    if re.search(r"[-+()\[\]]|\\(?:frac|sum|left|right|mathrm|operatorname|text)", tex):
        return False  # a sum, a fraction, a bracket or a function: not one product of factors written side by side
    factors = [re.sub(r"\^\{?(?:T|\\top)\}?$|[{}]", "", f)
               for f in re.findall(r"(?<![\\\w])[A-Z](?:_\{[^{}]*\}|_\w)?(?:\^\{[^{}]*\}|\^\\top|\^\w)?", tex)]
    names = {x.replace("{", "").replace("}", "") for x in loose}
    if len(factors) < 3 or factors[0] in names or factors[-1] in names:
        return False
    try:  # the outer factors themselves built from no name of unknown shape (Q = X W_Q with W_Q read as a number)
        return not any(doc.undefined(doc.read(f)) for f in (factors[0], factors[-1]))
    except (MHASymbolicError, ValueError, TypeError):
        return False


def judge_shape(doc: DocumentModel, tex: list[str], ops: list[str]) -> tuple[str, str, str | None, str]:
    where = next((k for k, op in enumerate(ops) if op == "in"), None)
    if where is None:
        return "unchecked", "a set other than R^{a x b}", None, ""
    if len(tex) > where + 2 and all(op == "eq" for op in ops[where + 1:]):
        equal = _equal_sets(doc, tex, where)
        if equal is not None and (equal[0] == "wrong" or stated_shape(tex[where + 1]) is None):
            return equal
    shape_tex = stated_shape(tex[where + 1])
    if shape_tex is None:
        return "unchecked", f"not a matrix shape: {tex[where + 1]}", None, ""
    try:
        subject = doc.read(tex[where])
        stated = tuple(_size(doc, doc.read(t)) for t in shape_tex)
        if re.fullmatch(r"\s*[QKV]\s*", tex[where]):  # K = X W_K in grouped-query attention: g heads' keys
            from .grouped import stacked_shape

            projected = stacked_shape(doc, tex[where], stated)
            if projected is not None:
                return projected
            one = _one_head(doc, tex[where].strip(), stated)
            if one is not None:
                return one
        bare = re.fullmatch(r"\s*([QKV])\s*\^\s*\{?\s*(?:T|\\top)\s*\}?\s*", tex[where])
        if bare:  # K^T of one head (the single-head notation): its transpose is one head's K_i
            one = _one_head(doc, bare.group(1), tuple(reversed(stated)))
            if one is not None:
                return one[0], f"{tex[where].strip()} read as the transpose of one head's {bare.group(1)}_i", *one[2:]
        loose = doc.undefined(subject)
        if loose and hasattr(subject, "shape") and not _outer_factors_known(doc, tex[where], loose):
            # X W_Q with a W_Q of no head index, read as a number: not its shape (X W_Q W_K^T X^T is n x n whatever
            # the shapes of W_Q and W_K: a product has its first factor's rows and its last factor's columns)
            return ("unchecked", f"{tex[where].strip()}: {', '.join(loose)} is neither a matrix of the model nor a "
                    "name the document has defined (its shape is unknown)", None, "")
        if not isinstance(subject, MatrixBase) and hasattr(subject, "shape"):
            one = _one_head_reading(doc, subject, stated, tex[where].strip())
            if one is not None:  # Z = V A with a bare V: one head's V, as a one-head derivation writes it
                return one
        if isinstance(subject, MatrixBase):
            shape = subject.shape
        elif hasattr(subject, "shape"):
            shape = tuple(_size(doc, x) for x in subject.shape)
            name = getattr(subject, "name", None)
            scope = doc.bound_in.get(name or "")
            if name in doc.declared and scope is not None and scope[0] != doc.paragraph[0] and \
                    any(simplify(as_sympy(a) - as_sympy(b)) != 0 for a, b in zip(shape, stated, strict=True)):
                # H declared n x 512 for the base model, 4 x 4 in the toy setting: another example, as for a value
                was = f"{shape[0]} x {shape[1]} (line {doc.bound_line.get(name or '', '?')})"
                doc.declared[name] = tuple(doc.read(t) for t in shape_tex)
                doc.bound_in[name], doc.bound_line[name] = doc.paragraph, doc.line
                return ("given", f"{tex[where].strip()} declared {stated[0]} x {stated[1]} in another example "
                        f"(declared {was} in another paragraph)", None, "")
        else:
            from .grouped import stacked_shape

            stacked = stacked_shape(doc, tex[where], stated)
            if stacked is None and isinstance(subject, Symbol) and subject.name not in doc.definitions:
                earlier = _declared_in_sizes(doc, subject.name, stated)
                if earlier is not None:  # W_O^{(i)} in R^{d_v x d} earlier, 512 x 64 now with d_v = 64, d = 512
                    return earlier
                # W_Q in R^{d x d_k} of one head; C in R^{h d_v x n}; h in R^{4 x 3}, a size's letter made a matrix
                # kept in the sizes as written (n x 512): another example's n gives it another shape
                doc.declared[subject.name] = tuple(doc.read(t) for t in shape_tex)
                doc.bound_in[subject.name], doc.bound_line[subject.name] = doc.paragraph, doc.line
                return ("given", f"{tex[where].strip()} declared {stated[0]} x {stated[1]}: a matrix of the document's "
                        "own" + (" (elsewhere the letter of a size)" if dim_name(subject.name) else ""), None, "")
            return stacked or ("unchecked", f"{tex[where]} is not a matrix", None, "")
    except ShapeError as e:
        return "inconsistent", str(e), None, "proven"
    except (MHASymbolicError, ValueError, TypeError) as e:
        return "unchecked", f"not read: {str(e).splitlines()[0][:160]}", None, ""
    if any(str(x) == "i" for size in shape for x in getattr(as_sympy(size), "free_symbols", ())):
        return "unchecked", f"{tex[where]} not read as one matrix (its shape has the head index i)", None, ""
    got = f"{shape[0]} x {shape[1]}"
    said = f"{stated[0]} x {stated[1]}"
    bound = []
    for a, b in zip(shape, stated, strict=True):
        a, b = as_sympy(a), as_sympy(b)
        if a.is_Symbol and b.is_Integer and dim_name(a.name) is not None:
            doc.bind_dim(dim_name(a.name) or "", int(b))
            bound.append(f"{a} = {b}")
            continue
        if not b.free_symbols and not a.free_symbols:
            if a != b:
                general = _in_letters(doc, tex[where], shape_tex)
                if general is not None:
                    return general
                return _contradiction(subject, f"{tex[where]} is {got}, not {said}", got)
            continue
        given = {x: _scalar(doc.definitions.get(str(x))) for x in b.free_symbols if dim_name(str(x)) is None}
        b = b.subs({x: v for x, v in given.items() if v is not None})  # $d_h = 4$ stated: 2 d_h is 8
        if simplify(a - b) != 0:
            diff = simplify(a - b)
            unknown = sorted(str(x) for x in b.free_symbols if dim_name(str(x)) is None)
            if unknown:  # H p x d_model with p never defined: a size the checker cannot read, not a contradiction
                return ("unchecked", f"{tex[where]} is {got}; the stated {said} uses {', '.join(unknown)}, which the "
                        "document does not define as a size", None, "")
            if b.is_number and a.free_symbols:  # Q_i in R^{16 x 64} where d_model, h are not fixed: d_model/h = 64
                # is a size of the example the document states here, not a contradiction of sizes it never gave
                return ("unchecked", f"{tex[where]} is {got}; {said} holds if {a} = {b}, and the document does not fix "
                        f"{', '.join(sorted(str(x) for x in a.free_symbols))}", None, "")
            why = "" if diff.is_number else f" (they differ unless {a} = {b})"
            return _contradiction(subject, f"{tex[where]} is {got}, not {said}{why}", got)
    if bound:
        return "given", f"{tex[where]} declared {said} (sets {', '.join(bound)})", None, ""
    if isinstance(subject, MatrixBase) and tex[where].strip() in doc.definitions:
        return "correct", f"{tex[where]} is {got}, as the document's own value of it", None, "computed"
    return "correct", f"{tex[where]} is {got} by the model's shape rules", None, "proven"


def _scalar(value: Any) -> Any:
    """A number the document gave a name (``$d_h = 4$``, kept as a 1 x 1 matrix), or None."""
    if isinstance(value, MatrixBase) and value.shape == (1, 1):
        value = value[0, 0]
    return value if value is not None and getattr(as_sympy(value), "is_number", False) else None


def _one_head(doc: DocumentModel, name: str, stated: tuple[Any, ...]) -> Verdict3 | None:
    """``Q \\in R^{n x d_k}`` for a bare ``Q``, ``K`` or ``V``: one head's projection (the common single-head
    notation), correct when the stated shape is that of ``Q_i``, ``K_i`` or ``V_i``; None otherwise (the bare name
    is then read as the layer's input, ``n x d_model``)."""
    M = doc.model()
    step = M.steps.get(f"{name}_{M.head_indices[0]}")
    if step is None:
        return None
    shape = tuple(_size(doc, x) for x in step.symbol.shape)
    if doc.columns:  # a document whose tokens are columns writes Q_i transposed: d_k x n
        shape = shape[::-1]
    if all(simplify(as_sympy(a) - as_sympy(b)) == 0 for a, b in zip(shape, stated, strict=True)):
        return ("correct", f"{name} read as one head's {name}_i, {shape[0]} x {shape[1]} by the model's shape rules",
                None, "proven")
    return None


def _one_head_reading(doc: DocumentModel, subject: Any, stated: tuple[Any, ...], written: str) -> Verdict3 | None:
    """An expression with a bare ``Q``, ``K`` or ``V`` (every head's, side by side) whose stated shape is that of
    the same expression of one head's ``Q_i``, ``K_i``, ``V_i`` -- the single-head notation of a derivation, met
    again in a document with several heads: correct, so read; None otherwise (the expression is judged as read)."""
    from sympy import MatrixSymbol

    M = doc.model()
    index = M.head_indices[0]
    bare = {a: M.steps[f"{a.name}_{index}"].symbol for a in subject.atoms(MatrixSymbol)
            if str(a) in ("Q", "K", "V") and f"{a.name}_{index}" in M.steps}
    if not bare:
        return None
    try:
        shape = tuple(_size(doc, x) for x in subject.xreplace(bare).shape)
    except (MHASymbolicError, ValueError, TypeError):
        return None
    if all(simplify(as_sympy(a) - as_sympy(b)) == 0 for a, b in zip(shape, stated, strict=True)):
        return ("correct", f"{written} read with one head's {', '.join(sorted(str(v) for v in bare.values()))}: "
                f"{shape[0]} x {shape[1]} by the model's shape rules", None, "proven")
    return None


_PAIR = r"\(?\s*([^()]+?)\s*(?:\\times|×|,|(?<=\d)\s*x\s*(?=\d))\s*([^()]+?)\s*\)?"


def shape_product(tex: str) -> list[tuple[str, str]] | None:
    r"""``(6 \times 12)(12 \times 4)`` or ``(8, 2) \times (2, 2) / \sqrt{2}`` -> the factors' shapes
    ``[("6", "12"), ("12", "4")]``; ``6 \times 4`` -> ``[("6", "4")]``; ``\text{Concat}[(8, 2), (8, 2)]`` ->
    ``[("8", "2 + 2")]``; None when ``tex`` is not a product of shapes."""
    t = re.sub(r"\\(?:left|right|[,;:!]|quad|qquad)", " ", tex).strip()
    t = re.sub(r"\s*/\s*(?:\\sqrt\{[^{}]*\}|\d+)\s*$", "", t)  # a scalar divisor keeps the shape
    concat = re.fullmatch(r"\\(?:text|mathrm|operatorname)\{Concat\}\s*[\[(]\s*(.*?)\s*[\])]", t)
    if concat:
        blocks = shape_product(concat.group(1).replace("),", ")"))
        if not blocks or len(blocks) < 2:
            return None
        return [(blocks[0][0], " + ".join(f"({b[1]})" for b in blocks)), *[("=" + b[0], "") for b in blocks[1:]]]
    if "(" not in t:
        m = re.fullmatch(_PAIR, t)
        return [(m.group(1), m.group(2))] if m and "," not in t else None
    pairs = re.findall(r"\(([^()]+)\)", t)
    if re.sub(r"\([^()]+\)|\\times|×|\\cdot|\*", "", t).strip() or not pairs:  # (3 x 3) * (3 x 2) too
        return None
    out = []
    for p in pairs:
        m = re.fullmatch(_PAIR, p.strip())
        if not m:
            return None
        out.append((m.group(1), m.group(2)))
    return out


def judge_shape_product(doc: DocumentModel, products: list[list[tuple[str, str]]], tex: list[str], ops: list[str]
                        ) -> tuple[str, str, str | None, str]:
    r"""``(6 \times 12)(12 \times 4) = 6 \times 4``: each side's product of shapes by the rule
    ``(a x b)(b x c) = a x c`` (inner sizes must agree), the sides compared."""
    shapes = []
    for k, factors in enumerate(products):
        rows_equal = [f[0][1:] for f in factors if f[0].startswith("=")]  # Concat blocks: same rows
        factors = [f for f in factors if not f[0].startswith("=")]
        for r in rows_equal:
            if simplify(_size(doc, doc.read(r)) - _size(doc, doc.read(factors[0][0]))) != 0:
                return ("inconsistent", f"{tex[k]}: blocks with {factors[0][0]} and {r} rows cannot be placed side by "
                        "side", None, "proven")
        sized = [tuple(_size(doc, doc.read(x)) for x in f) for f in factors]
        for (_, b), (c, _) in zip(sized, sized[1:], strict=False):
            if simplify(as_sympy(b) - as_sympy(c)) != 0:
                return ("inconsistent", f"{tex[k]}: inner sizes {b} and {c} differ, the product is undefined",
                        None, "proven")
        shapes.append((sized[0][0], sized[-1][1]))
    for k, op in enumerate(ops):
        a, b = shapes[k], shapes[k + 1]
        same = all(simplify(as_sympy(x) - as_sympy(y)) == 0 for x, y in zip(a, b, strict=True))
        if op in ("eq", "approx") and not same:
            return ("wrong", f"{tex[k]} is {a[0]} x {a[1]}, not {b[0]} x {b[1]}", f"{a[0]} x {a[1]}", "proven")
    return "correct", f"{tex[0]} is {shapes[0][0]} x {shapes[0][1]} (rows of the first, columns of the last)", None, \
        "proven"
