"""Math fragments for the document checker: relations, shapes, ranks, pipelines (private)."""

from __future__ import annotations

import re
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from sympy import Basic, ImmutableMatrix, MatrixBase, MatrixSymbol, Min, Symbol, sympify

from .document import agrees, decimals_of, precision_text, show
from .errors import ParseError
from .parse import equivalent, read_formula
from .parse.markdown import Fragment

if TYPE_CHECKING:
    from ._checker import Checker

_SHAPE = re.compile(r"\(\s*(\d+)\s*,\s*(\d+)\s*\)")
_PIPELINE = [("scores", r"Q\s*(\\cdot|\\times)?\s*K\^\{?T\}?|QK"), ("scale", r"scale"), ("softmax", r"softmax"),
             ("weighted", r"weighted")]


def check_math(c: Checker, frag: Fragment) -> None:
    from ._checker import _vectors, canon, plain

    text = frag.text.strip()
    body = re.sub(r"\\(?:,|;|:|!|quad)", " ", text)
    if not re.search(r"=|\\approx|\\le|\\ne|\\neq|<|>|\\rightarrow|\d", _without_indices(body)):
        return  # symbols named in prose (W_Q^1, W_K^1, ...): nothing to check
    if r"\rightarrow" in body:
        _arrow(c, frag, body)
        return
    m = re.fullmatch(r"\s*\(\s*(\d+)\s*\\times\s*(\d+)\s*\)\s*", body)
    if m:  # "(2 \times 4)": the shape of the matrix just shown
        c._shape_statement(frag, (int(m.group(1)), int(m.group(2))))
        return
    if _SHAPE.search(body) and not re.search(r"\d\.\d", body):
        _shapes(c, frag, body, None)
        return
    if re.fullmatch(r"\s*\[[^\]]*\]\s*", body) and re.search(r"\d\.\d", body):
        _concat_row(c, frag, body)
        return
    if re.search(r"\\(?:mathrm|text|operatorname)\{rank\}", body):
        _rank(c, frag, body)
        return
    bracket = re.search(r"(W_\{?O\}?)?\s*\[([^\]]*(?:\\dots|,)[^\]]*)\]\s*(W_\{?O\}?)?", body)
    if bracket and not re.search(r"\d", _without_indices(bracket.group(2))):
        _bracket_concat(c, frag, body, bracket)
        return
    m = re.fullmatch(r"\s*(d_\{?(?:model|\\text\{model\})\}?|h|n)\s*=\s*(\d+)\s*", body)
    if m:
        name = {"h": "h", "n": "n"}.get(m.group(1), "d_model")
        c._setting(frag, name, int(m.group(2)))
        return
    m = re.fullmatch(r"\s*\\text\{sequence length\}\s*=\s*(\d+)\s*", body)
    if m:
        c._setting(frag, "n", int(m.group(1)))
        return
    _relations(c, frag, _vectors(body), canon, plain)


def _without_indices(text: str) -> str:
    """The text with subscripts and superscripts removed (``W_Q^1`` -> ``W``): digits left are numbers."""
    return re.sub(r"[_^](\{[^{}]*\}|\\?\w)", "", text)


def _split_top(text: str, sep: str) -> list[str]:
    parts, depth, cur = [], 0, ""
    i = 0
    while i < len(text):
        if text.startswith(sep, i) and depth == 0:
            parts.append(cur)
            cur = ""
            i += len(sep)
            continue
        ch = text[i]
        depth += ch in "([{" and 1 or 0
        depth -= ch in ")]}" and 1 or 0
        cur += ch
        i += 1
    parts.append(cur)
    return parts


def _arrow(c: Checker, frag: Fragment, body: str) -> None:
    parts = [p.strip() for p in _split_top(body, r"\rightarrow")]
    names = [re.sub(r"\\text\{([^}]*)\}", r"\1", p) for p in parts]
    if len(parts) >= 3 or (len(parts) == 2 and not parts[1] and not _SHAPE.search(parts[0])
                            and "=" not in parts[0]):
        order = [s for s, _ in _PIPELINE]
        found = [next((s for s, pat in _PIPELINE if re.search(pat, p, re.I)), None) for p in names]
        stages = [s for s in found if s is not None]
        if len(stages) == len(found) and stages == sorted(stages, key=order.index):
            c.emit(frag, "correct", "the pipeline order matches the model: " + " -> ".join(s for s in stages if s))
            return
        if stages and len(stages) == len(found):
            c.emit(frag, "wrong", "the stages are out of order; the model computes scores, scales them, "
                                  "applies the softmax, then weights V")
            return
    left, right = parts[0], parts[1] if len(parts) > 1 else ""
    if not left and not right:
        return
    if re.fullmatch(r"\\text\{sequence length\}\s*=\s*(\d+)\s*", left):
        c._setting(frag, "n", int(re.findall(r"\d+", left)[0]))
        return
    if right and _SHAPE.search(right):
        if "=" in left:
            _relations_symbolic_or_value(c, frag, left)
        _shapes(c, frag, right, left)
        return
    if "=" in left:
        _relations_symbolic_or_value(c, frag, left)
        return
    c.emit(frag, "unchecked", f"an arrow from {left!r} to {right!r} that is neither a shape nor a pipeline")


def _relations_symbolic_or_value(c: Checker, frag: Fragment, text: str) -> None:
    from ._checker import _vectors, canon, plain

    _relations(c, frag, _vectors(text), canon, plain)


# ----- shapes ------------------------------------------------------------------------------------------
def _shape_value(expr: str) -> tuple[int, int] | None:
    """Evaluate ``(8, 2) \\times (2, 8) / \\sqrt{2}`` or ``\\text{Concat}[(8, 2), (8, 2)]``."""
    expr = re.sub(r"/\s*\\sqrt\{[^}]*\}", "", expr).strip()
    m = re.fullmatch(r"\\(?:text|mathrm)\{Concat\}\s*[\[(](.*)[\])]", expr)
    if m:
        shapes = [(int(a), int(b)) for a, b in _SHAPE.findall(m.group(1))]
        if not shapes or len({r for r, _ in shapes}) != 1:
            raise ParseError("Concat of shapes with different row counts")
        return (shapes[0][0], sum(cc for _, cc in shapes))
    factors = [f.strip() for f in re.split(r"\\times|×", expr)]
    shapes = []
    for f in factors:
        m = _SHAPE.fullmatch(f)
        if not m:
            return None
        shapes.append((int(m.group(1)), int(m.group(2))))
    result = shapes[0]
    for s in shapes[1:]:
        if result[1] != s[0]:
            raise ValueError(f"{result} x {s}: inner dimensions {result[1]} and {s[0]} differ")
        result = (result[0], s[1])
    return result


def _shapes(c: Checker, frag: Fragment, text: str, left: str | None) -> None:
    from ._checker import canon

    sides = [s.strip() for s in text.split("=")]
    sides = [s for s in sides if s]
    try:
        values = [_shape_value(s) for s in sides]
    except ValueError as e:
        c.emit(frag, "wrong", f"shape arithmetic: {e}")
        return
    known = [v for v in values if v is not None]
    if not known:
        c.emit(frag, "unchecked", "shapes written in a form the checker does not read")
        return
    if len(known) > 1 and len(set(known)) > 1:
        c.emit(frag, "wrong", f"shape arithmetic gives {known[0]}, not {known[-1]}", f"{known[0]}")
    else:
        c.emit(frag, "correct", f"shape arithmetic: {' = '.join(sides)} holds")
    result = known[0]
    target = None
    if left is not None and "=" in left:
        target = canon(left.split("=")[0], c.head)
        operands = [canon(f, c.head) for f in re.split(r"\\times|\\cdot", left.split("=", 1)[1])]
        first = sides[0]
        factors = [f.strip() for f in re.split(r"\\times", first)] if r"\times" in first else [first]
        for name, shape_text in zip(operands, factors, strict=False):
            m = _SHAPE.fullmatch(shape_text.strip())
            if not m:
                continue
            used = (int(m.group(1)), int(m.group(2)))
            _operand_consistency(c, frag, name, used)
    elif c.last_defined is not None and not text.lstrip().startswith(("(", "\\text{Concat}")):
        target = c.last_defined
    if target is None and frag.text.lstrip().startswith("="):
        target = c.last_defined
    if target is not None:
        c.shapes[target] = result
        c.last = (target, result)


def _operand_consistency(c: Checker, frag: Fragment, name: str, used: tuple[int, int]) -> None:
    known = c.shapes.get(name)
    generic = re.sub(r"\d+$", "", name)
    declared = c.declared.get(name) or c.declared.get(generic)
    if declared is not None and declared[0] != used:
        shape, line, index = declared
        kind = generic[2:] if generic.startswith("W_") else ""
        message = (f"{name} is used as {used[0]} x {used[1]} here but declared {shape[0]} x {shape[1]} at line "
                   f"{line}")
        if kind:
            message += (f"; with the declared shape the step fails: step {kind}_{name[-1]} = X_head{name[-1]} "
                        f"W_{kind}^{name[-1]}: ({c.dims.get('n', 'n')}, {used[0]}) x ({shape[0]}, {shape[1]}) — "
                        f"inner dimensions {used[0]} and {shape[0]} differ")
        c.emit(frag, "inconsistent", message, f"({used[0]}, {used[1]})")
        return
    if known is not None and tuple(known) != used and name not in c.declared:
        c.emit(frag, "inconsistent", f"{name} is {known[0]} x {known[1]} (from earlier), but used as {used}")


# ----- concatenation rows, brackets, ranks ---------------------------------------------------------
def _concat_row(c: Checker, frag: Fragment, body: str) -> None:
    stated = c._literal(re.sub(r"\\[;,:!]", "", body))
    expected = c._expected("Concat")
    places = decimals_of(body)
    if expected is None:
        c.emit(frag, "unchecked", "a row of numbers whose matrix is not known")
        return
    rows = [expected[0].row(i) for i in range(expected[0].rows)]
    index = min(c.concat_rows_seen, len(rows) - 1)
    c.concat_rows_seen += 1
    match = next((i for i, r in enumerate(rows) if agrees(r, stated, places)), None)
    given = f" (given the assumed {', '.join(sorted(c.assumed))})" if c.assumed else ""
    if match is not None:
        c.emit(frag, "correct", f"row {match + 1} of Concat(head_1, ..., head_h){given}")
    else:
        c.emit(frag, "wrong", f"row {index + 1} of Concat(head_1, ..., head_h) is {show(rows[index], places)}",
               show(rows[index], places))
    c.last = ("Concat", expected[0].shape)


def _bracket_concat(c: Checker, frag: Fragment, body: str, m: re.Match[str]) -> None:
    before, after = m.group(1), m.group(3)
    if before and not after:
        c.emit(frag, "inconsistent", "W_O multiplies the concatenated heads from the left, but the head outputs are "
                                     "rows concatenated side by side (Concat(head_1, ..., head_h) W_O): with rows, "
                                     "(h d_v x d_model)(1 x h d_v) does not fit; the formula mixes the column "
                                     "convention with the row convention used elsewhere",
               r"\mathrm{Concat}(f_1(x), \dots, f_h(x)) W_O")
    elif after:
        c.emit(frag, "correct", "the heads concatenated side by side, then W_O: Concat(...) W_O")
    else:
        c.emit(frag, "correct", "a concatenation of the head outputs, side by side")


def _rank(c: Checker, frag: Fragment, body: str) -> None:
    from .attention import MultiHeadAttention
    from .rank import rank_bound

    m = re.search(r"\\(?:le|leq)\s*(.+)$", body)
    if not m:
        c.emit(frag, "unchecked", "a rank statement that is not an upper bound")
        return
    claimed_text = m.group(1)
    M = MultiHeadAttention()
    D = M.dims
    multi = "h" in re.sub(r"\\[a-z]+", "", claimed_text)
    step = "Concat" if multi else "head_i"
    proven = rank_bound(M.steps[step].expr, D).bound
    claimed = (D.h * D.d_k) if multi else D.d_k
    holds = isinstance(proven, Min) and any(sympify(a).subs(D.definitions) == sympify(claimed).subs(D.definitions)
                                            for a in proven.args)
    what = "the concatenated heads" if multi else "one head's output Z = A V"
    if holds:
        c.emit(frag, "correct", f"proven: rank of {what} <= {proven}, and {proven} <= {claimed}; the reason is "
                                "the width of V (d_v = d_k), not the attention matrix, which can have rank n",
               show(proven))
    else:
        c.emit(frag, "unchecked", f"proven bound {proven} does not settle <= {claimed}")


# ----- relations -----------------------------------------------------------------------------------
def _explicit(value: Any) -> Any:
    if isinstance(value, MatrixBase):
        return ImmutableMatrix(value)
    if isinstance(value, Basic) and getattr(value, "is_Matrix", False):
        if value.atoms(MatrixSymbol):
            return None
        done = value.doit()
        if not isinstance(done, MatrixBase):
            try:
                done = done.as_explicit()
            except (AttributeError, ValueError, TypeError):
                return None
        return ImmutableMatrix(done)
    if isinstance(value, Basic) and value.is_number:
        return value
    return None


def _relations(c: Checker, frag: Fragment, text: str, canon: Any, plain: Any) -> None:
    rels = read_formula(text.lstrip("=").strip() if text.lstrip().startswith("=") else text, c.table(text),
                        strict=False)
    sides_text = re.split(r"=|\\approx|\\le|\\leq|\\ne|\\neq", text)
    if rels[0].op == "expr":
        _expression(c, frag, rels[0].lhs)
        return
    values = [_explicit(rels[0].lhs)] + [_explicit(r.rhs) for r in rels]
    exprs = [rels[0].lhs] + [r.rhs for r in rels]
    names = [canon(sides_text[k].strip(), c.head) if k < len(sides_text) else "" for k in range(len(exprs))]
    known = [k for k, v in enumerate(values) if v is not None]
    if known:
        if len(exprs) == 2 and values[0] is None and _is_name(exprs[0]) and values[1] is not None:
            name, stated_value = names[0], values[1]
            if not re.search(r"\d", sides_text[1] if len(sides_text) > 1 else ""):
                expected = c._expected(name)
                if expected is not None and not agrees(expected[0], stated_value, None):
                    c.emit(frag, "wrong", f"{name} = {expected[1]} = {show(expected[0])}", show(expected[0]))
                else:
                    c.emit(frag, "correct", f"{name} = {show(stated_value)}: computed from what the document gives")
                c.set_value(name, stated_value)
                return
            c._stated_value(frag, name, stated_value, decimals_of(text), frag.text)
            return
        anchor = values[known[0]]
        originally_known = [v is not None for v in values]
        recorded = []
        for k, (expr, value) in enumerate(zip(exprs, values, strict=True)):
            if value is None and _is_name(expr):
                name = names[k]
                if name in ("d_k", "d_model", "h", "n") and isinstance(anchor, Basic) and anchor.is_Integer:
                    c.dims[name] = int(anchor)
                else:
                    c.set_value(name, anchor)
                values[k] = anchor
                recorded.append(name)
        if recorded:
            c.emit(frag, "correct", f"{', '.join(recorded)} set to {show(anchor)}", None,
                   " = ".join(s.strip() for s in sides_text))
        for k, r in enumerate(rels):
            a, b = values[k], values[k + 1]
            if recorded and not (originally_known[k] and originally_known[k + 1]):
                continue  # a name just set from the chain: nothing more to compare
            if a is None or b is None:
                if _is_name(exprs[k]) or _is_name(exprs[k + 1]):
                    name = names[k] if _is_name(exprs[k]) else names[k + 1]
                    expected = c._expected(name)
                    other = a if a is not None else b
                    if expected is not None and other is not None:
                        places = decimals_of(text)
                        ok = agrees(expected[0], other, places)
                        c.emit(frag, "correct" if ok else "wrong", f"{name} = {expected[1]}"
                               + (" agrees" if ok else f" = {show(expected[0], places)}"),
                               show(expected[0], places), r.text)
                        continue
                    c.emit(frag, "correct", f"{name} is recorded as {show(other) if other is not None else '?'}",
                           None, r.text)
                    continue
                c.emit(frag, "unchecked", "one side could not be computed from what the document gives", None,
                       r.text)
                continue
            places = decimals_of(sides_text[k + 1] if k + 1 < len(sides_text) else text)
            if places is None and r.op == "approx":
                places = decimals_of(text)
            ok = agrees(a, b, places)
            at = precision_text(places)
            c.emit(frag, "correct" if ok else "wrong", ("holds" if ok else "does not hold") + at,
                   show(a, places), r.text)
            if isinstance(b, MatrixBase):
                c.last = (c.last[0] if c.last else "?", b.shape)
        return
    _symbolic(c, frag, rels, names)


def _txt(rels: list[Any], r: Any) -> str | None:
    """A finding's formula: the fragment itself for one relation, the relation for a chain."""
    return r.text if len(rels) > 1 else None


def _is_name(expr: Any) -> bool:
    return isinstance(expr, (Symbol, MatrixSymbol)) or (isinstance(expr, Basic) and expr.is_Symbol)


def _expression(c: Checker, frag: Fragment, expr: Any) -> None:
    value = _explicit(expr)
    if value is not None:
        c.emit(frag, "correct", f"evaluates to {show(value)}")
        return
    if getattr(expr, "is_Matrix", False):
        c.emit(frag, "correct", f"a well-formed expression of shape {expr.shape}")
        return
    c.emit(frag, "unchecked", "an expression with nothing stated about it")


@lru_cache(maxsize=1)
def _standard_right_sides() -> tuple[Any, ...]:
    """The standard formulas' right-hand sides, also in self-attention form (Q = K = V = X)."""
    from .attention import MultiHeadAttention
    from .formulas import standard_formulas

    M = MultiHeadAttention()
    self_attention = {MatrixSymbol(ch, *M.X.shape): M.X for ch in "QKV"}
    return tuple(side for f in standard_formulas(M) for side in (f.rhs, f.rhs.xreplace(self_attention)))


def _symbolic(c: Checker, frag: Fragment, rels: list[Any], names: list[str]) -> None:
    standard = _standard_right_sides()
    for r in rels:
        if r.op == "ne":
            c.emit(frag, "correct", "true for some weights: an exact instance has A_1 != A_2 (for other weights "
                                    "the two attention matrices may coincide)", None, _txt(rels, r))
            continue
        if r.op != "eq":
            c.emit(frag, "unchecked", f"a symbolic '{r.op}' relation the checker does not decide", None, _txt(rels, r))
            continue
        rhs = r.rhs
        if any(equivalent(rhs, s) for s in standard):
            c.emit(frag, "correct", "the right-hand side is the model's standard formula", None, _txt(rels, r))
            continue
        if _is_name(r.lhs) and getattr(rhs, "is_Matrix", False) or _is_name(r.lhs) and isinstance(rhs, Basic) \
                and rhs.free_symbols:
            c.emit(frag, "correct", f"definition: {r.text}", None, _txt(rels, r))
            continue
        c.emit(frag, "unchecked", "a symbolic relation the checker could not decide", None, _txt(rels, r))
