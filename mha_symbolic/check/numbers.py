r"""Numbers in a document: exact values the engine computes from the document's givens, compared with the
stated ones at the precision they are written with; sizes compared the same way.
"""

from __future__ import annotations

import re
from typing import Any

from sympy import (
    Dummy,
    Expr,
    ImmutableMatrix,
    MatrixBase,
    MatrixExpr,
    MatrixSymbol,
    Number,
    Rational,
    S,
    Symbol,
    Transpose,
    Tuple,
    log,
    simplify,
)

from .._convert import as_sympy
from ..errors import MHASymbolicError, ParseError, ShapeError
from ..statements._base import agrees, shown
from .model import DocumentModel, as_int, dim_name, never_given, numeric_matrix, spelled, written_transposed

_OPS = {"eq": "=", "approx": "≈", "lt": "<", "le": "≤", "gt": ">", "ge": "≥", "ne": "≠", "def": ":="}
Verdict3 = tuple[str, str, str | None, str]  # status, message, expected, basis


def _places(tex: str) -> int | None:
    """Decimal places of the most precise number written in ``tex``; a number in scientific notation counts its
    significant digits: ``1.07 \\times 10^{9}`` (or ``\\cdot 10^{9}``) is written to 10^7 (places -7),
    ``3 \\times 10^{-3}`` to 3 places.

    >>> _places("0.25"), _places(r"1.07 \\times 10^{9}"), _places("2.5e-3"), _places(r"1 \\times 10^{-3}"), _places("7")
    (2, -7, 4, 3, None)
    >>> _places(r"1.34 \\cdot 10^9")
    -7
    """
    found, sci = [], []
    for m in re.finditer(r"(\d+)(?:\.(\d+))?\s*(?:[eE]|\\(?:times|cdot)\s*10\^\{?)\s*([-+]?\d+)", tex):
        found.append(len(m.group(2) or "") - int(m.group(3)))
        sci.append(m.span())
    found += [len(m.group(1)) for m in re.finditer(r"\d\.(\d+)", tex)
              if not any(a <= m.start() < b for a, b in sci)]
    return max(found) if found else None


def _literal(e: Any) -> ImmutableMatrix | None:
    """Numbers as an exact matrix (decimals as written), or None."""
    if isinstance(e, MatrixBase):
        if all(as_sympy(x).is_number for x in e):
            return ImmutableMatrix(e.rows, e.cols, [_exact(x, masked=True) for x in e])
        return None
    e = as_sympy(e)
    if isinstance(e, Expr) and e.is_number and not isinstance(e, MatrixExpr):
        return ImmutableMatrix([[_exact(e)]])
    return None


def _exact(x: Any, masked: bool = False) -> Any:
    """A stated number exactly as written (the package's own conversion, which refuses non-finite values); with
    ``masked``, an entry of a matrix that is -oo is kept (a masked score: the weight it gets is exactly 0)."""
    from ..values import to_exact

    x = as_sympy(x)
    return x if masked and x == S.NegativeInfinity else to_exact(x, "a stated number")


def _dims_subs(doc: DocumentModel, e: Any) -> dict[Any, Any]:
    d = doc.known_dims()
    D = doc.model().dims
    for name in ("d_k", "d_v"):
        size = as_int(getattr(D, name))
        # the model's d_k (d_model / h, its definition); its d_v only when the document states it: d_v = d_model / h
        # or d_v = d_k is the model's default, and a statement of d_v ("d_v = 2", "rank 2 = d_v") is not judged by it
        if name not in d and size is not None and name == "d_k":
            d[name] = size
    out = {}
    symbols = set(getattr(e, "free_symbols", set())) | (e.atoms(Symbol) if hasattr(e, "atoms") else set())
    for s in symbols:  # the sizes in a matrix's shape too (W_Q^i of d_model x d_k, with d_k = 64)
        if isinstance(s, Symbol):
            spelled = dim_name(s.name)
            if spelled is not None and spelled in d:
                out[s] = d[spelled]
    return out


def _scalar_free(e: Any) -> bool:
    """No matrices in ``e``: a number or an expression in sizes."""
    if isinstance(e, (MatrixBase, MatrixExpr)):
        return False
    return not (hasattr(e, "atoms") and (e.atoms(MatrixSymbol) or e.atoms(MatrixBase)))


#: a letter, with a subscript or not, that a document may give a number of its own (``d_h``, ``n_{layers}``, ``m``,
#: ``b``, ``\tau``): not ``i`` or ``j`` (an index: "for $i = 1$" picks a head or a row), not ``e`` (Euler's number),
#: not ``\sigma`` (the entries' standard deviation, read as such) nor ``\pi``
_OWN_LETTER = re.compile(r"(?:(?![ije](?:$|_))[A-Za-z]|alpha|beta|gamma|delta|epsilon|lambda|mu|nu|rho|tau|"
                         r"theta|kappa|omega)(?:_\{?\w+\}?)?")
#: a size by its name (``d_h``, ``n_{layers}``): in force in the document until another example gives it anew
_SIZE_NAME = re.compile(r"[dDnN]_\{?\w+\}?")


# ----- sizes ------------------------------------------------------------------------------------------
def _setting(doc: DocumentModel, sides: list[Any], tex: list[str], ops: list[str]) -> Verdict3:
    values = [simplify(s.subs(_dims_subs(doc, s))) if hasattr(s, "subs") else as_sympy(s) for s in sides]
    unknown = [i for i, v in enumerate(values) if not v.is_number]
    numeric = [i for i, v in enumerate(values) if v.is_number]
    bound = []
    if unknown and numeric and all(op == "eq" for op in ops):
        for i in unknown:
            name = dim_name(str(sides[i])) if isinstance(sides[i], Symbol) else None
            value = values[numeric[-1]]
            if name is not None and value.is_Integer:
                doc.bind_dim(name, int(value))
                bound.append(name)
                values[i] = value
            elif numeric == [len(sides) - 1] and all(isinstance(x, Symbol) and _OWN_LETTER.fullmatch(str(x)) and
                                                      str(x) not in doc.definitions for x in sides[:-1]):
                for x in sides[:-1]:  # $d_h = 4$, $m = 512$, $\mu_q = \mu_k = 0.5$: names the document gives a number
                    doc.definitions[str(x)] = value
                    doc.bound_in[str(x)], doc.bound_line[str(x)] = doc.paragraph, doc.line
                    if not _SIZE_NAME.fullmatch(str(x)) and (literal_value(tex[-1]) or any(re.search(
                            rf"(?<![A-Za-z]){re.escape(y)}(?![A-Za-z])", tex[-1]) for y in doc.letters)):
                        doc.letters.add(str(x))  # a bare letter given a number (m, z, b), or a formula of such letters
                        # (p = 1/(1 + e^{-z})), takes cases; one given a formula of sizes (\tau = \sqrt{d_k}) is that
                        # formula's value, which a later value is compared with
                names = " = ".join(t.strip() for t in tex[:-1])
                return "given", f"{names} = {tex[-1].strip()}: a name the document gives a value", None, ""
    if len(sides) == 2 and values[1].is_number and re.fullmatch(r"\s*\\sigma\s*(?:\^\s*\{?\s*2\s*\}?)?\s*", tex[0]):
        # sigma^2 = 0.5: the variance of the entries this paragraph speaks of (unit variance is only the default)
        given = _exact(values[1])
        square = given if "^" in tex[0] else given ** 2
        doc.memory["variance"] = (square, doc.paragraph, doc.line)
        return "given", f"the entries' variance sigma^2 = {square} (in this paragraph)", None, ""
    renamed = _named_again(doc, sides, tex, values)
    if renamed is not None:
        return renamed
    keys = [_letter_key(t) for t in tex[:-1]]
    if len(sides) > 2 and all(op == "eq" for op in ops) and literal_value(tex[-1]) and \
            all(k in doc.letters for k in keys):
        for k in keys:  # "With $\mu_q = \mu_k = 0$": letters that take cases, given another one together
            doc.definitions[k] = values[-1]
            doc.bound_in[k], doc.bound_line[k] = doc.paragraph, doc.line
        return "given", f"{' = '.join(t.strip() for t in tex)}: another case of letters given values before", None, ""
    if len(sides) > 2 and tex[0].strip() in doc.letters and ops[0] == "eq" and all(v.is_number for v in values[1:]):
        # "$p = 1/(1 + e^{-1}) \approx 0.7311$" after p took another case: the chain gives the letter its value here
        doc.definitions[tex[0].strip()] = values[1]
        doc.bound_in[tex[0].strip()], doc.bound_line[tex[0].strip()] = doc.paragraph, doc.line
        return _compare_chain(values[1:], ops[1:], tex[1:], "computed", raw=sides[1:], doc=doc)
    if len(values) > 2 and not values[0].is_number and all(v.is_number for v in values[1:]) and \
            isinstance(sides[0], Symbol) and dim_name(str(sides[0])) is None and ops[0] in ("eq", "def"):
        # P_{bias} = 4d^2 + 4d = 2{,}362{,}368: a name for what follows, whose arithmetic is judged; the name is not
        # kept (Z = e^1 + e^0 for one row, Z = e^2 + e^1 for the next)
        return _compare_chain(values[1:], ops[1:], tex[1:], "computed", raw=sides[1:], doc=doc)
    if any(not v.is_number for v in values):
        if not all(op == "eq" for op in ops):
            doc.constrained |= {dim_name(str(s)) or "" for v in values for s in v.free_symbols}
            return "given", "a constraint on sizes the document has not fixed", None, ""
        general = _by_definition(doc, values)
        if general is not None:
            return _compare_chain(general, ops, tex, "proven")  # d_k = d_model / h: the model's definition
        start = next((i for i in range(len(values)) if all(v.is_number for v in values[i:])), len(values))
        if len(values) - start >= 2 and start > 0:  # d_k = d_x / h = 4/1 = 2: its arithmetic is judged alone
            tail = _compare_chain(values[start:], ops[start:], tex[start:], "computed", raw=sides[start:],
                                  doc=doc)
            if tail[0] == "wrong":
                return _unbind(doc, bound, tail)
        free = sorted({str(s) for v in values for s in v.free_symbols})
        if len(values) - start >= 2 and start > 0 and tail[0] == "correct":  # q_1 . k_1 = 1*1 + 0*1 = 1
            return ("correct", f"its arithmetic holds ({tail[1]}); {', '.join(free)} the document does not fix",
                    None, "computed")
        return "unchecked", f"depends on {', '.join(free)}, which the document does not fix", None, ""
    threshold = _threshold(sides, ops, tex, values, doc)
    if threshold is not None:
        return threshold
    got = _compare_chain(values, ops, tex, "computed", given_if=bound and len(sides) == 2, raw=sides,
                         doc=doc)
    if got[0] == "wrong" and len(sides) > 2 and isinstance(sides[0], Symbol) and dim_name(str(sides[0])) and \
            not bound and all(getattr(s, "is_number", False) for s in sides[1:]) and \
            _compare_chain(values[1:], ops[1:], tex[1:], "computed", raw=sides[1:], doc=doc)[0] == "correct":
        # d_k = 768 / 16 = 48 where this scope's sizes make d_k 64: its own arithmetic holds, on other sizes
        return ("inconsistent", f"{tex[0].strip()} = {values[0]} with this scope's sizes ({doc.evidence()}); the "
                f"statement's own arithmetic ({' = '.join(t.strip() for t in tex[1:])}) holds, on other sizes",
                str(values[0]), "computed")
    return _unbind(doc, bound, got) if got[0] == "wrong" else got  # a wrong d_k = 4/1 = 2 binds nothing


def _threshold(sides: list[Any], ops: list[str], tex: list[str], values: list[Any], doc: DocumentModel | None = None
               ) -> Verdict3 | None:
    """``n > 2d = 1536`` where the document's n is 512: a size compared with a number written out is a threshold
    (the sizes for which something holds), not a claim that the document's own size passes it.  Its arithmetic is
    judged (``2d = 1536``); the comparison with the size is not, when the size does not pass it.  None when the
    chain is no threshold, or when the document's size passes it (then it is compared as usual)."""
    inequality = ("lt", "le", "gt", "ge")
    at = 0 if ops and ops[0] in inequality else len(sides) - 1 if ops and ops[-1] in inequality else None
    if at is None or not isinstance(sides[at], Symbol) or dim_name(str(sides[at])) is None or \
            not _LITERAL.fullmatch(tex[-1 if at == 0 else 0]) or \
            any(op in inequality for k, op in enumerate(ops) if k != (0 if at == 0 else len(ops) - 1)):
        return None
    rest = slice(1, None) if at == 0 else slice(0, -1)
    pair = (0, 1) if at == 0 else (len(values) - 2, len(values) - 1)
    op = ops[pair[0]]
    if _holds(values[pair[0]], values[pair[1]], op, _stated_places(tex[pair[0]], tex[pair[1]], op)) is not False:
        return None
    if len(values[rest]) >= 2:
        tail = _compare_chain(values[rest], ops[rest] if at == 0 else ops[:-1], tex[rest], "computed", raw=sides[rest],
                              doc=doc)
        if tail[0] == "wrong":
            return tail
    written = tex[0].strip() + "".join(f" {_OPS.get(op, op)} {t.strip()}" for op, t in zip(ops, tex[1:], strict=True))
    return ("given", f"a threshold on {tex[at].strip()} ({written}): the sizes for which the sentence holds; "
            f"the document's {tex[at].strip()} = {values[at]} is not among them, so it is no claim about it", None, "")


def _unbind(doc: DocumentModel, bound: list[str], got: Any) -> Any:
    """Undo the sizes a chain bound when the chain fails (``d_k = 4/1 = 2``): later lines are not judged with its
    value (one error, one finding); returns ``got``."""
    for name in bound:
        doc.dims.pop(name, None)
        doc.bound_in.pop(name, None)
        doc.bound_line.pop(name, None)
    if bound:
        doc._model = doc._table = None
    return got


def _letter_key(tex: str) -> str:
    r"""The name a letter as written is kept under (``\mu_{q}`` -> ``mu_q``)."""
    return re.sub(r"[{}\s]", "", tex).lstrip("\\")


def _named_again(doc: DocumentModel, sides: list[Any], tex: list[str], values: list[Any]) -> Verdict3 | None:
    """``$d_m = 768$`` (or ``$s = (1, 1, 3)$``) where an earlier paragraph gave the name another value: the name's
    value lives in its scope like a size's, so another scope gives it anew (another example); the same scope
    restating it with another value contradicts itself, naming the line.  Only a literal right side (a number, a
    tuple or matrix of numbers) gives a name anew; a computed one is a claim about the name's value."""
    name = tex[0].strip()
    name = name if name in doc.definitions else _letter_key(name)  # \mu_q is kept as mu_q
    if len(sides) == 2 and name in doc.letters and literal_value(tex[1]) and values[0] == values[1]:
        return "given", f"restates {tex[0].strip()} = {tex[1].strip()} (line {doc.bound_line.get(name, '?')})", None, ""
    if len(sides) != 2 or name not in doc.definitions or not (literal_value(tex[1]) or name in doc.letters) or \
            not all(_numeric(v) for v in values) or values[0] == values[1] or \
            name not in doc.letters and _OWN_LETTER.fullmatch(name) and not _SIZE_NAME.fullmatch(name):
        return None  # (a letter given a formula, tau = sqrt(d_k): a value stated later is compared with it)
    was, scope, line = doc.definitions[name], doc.bound_in.get(name), doc.bound_line.get(name)
    if scope is None or not _numeric(as_sympy(was)):
        return None
    if name in doc.letters:  # "For $z = 8$ ... For $z = 1$": a letter of the document's own takes cases
        doc.definitions[name] = values[1]
        doc.bound_in[name], doc.bound_line[name] = doc.paragraph, doc.line
        shown = f"{float(was):g}" if getattr(was, "is_Float", False) else was
        return "given", f"{tex[0].strip()} = {tex[1].strip()}: another case of a letter given {shown} on line {line}", \
            None, ""
    if scope[0] == doc.paragraph[0] and scope[1] in (0, doc.paragraph[1]):
        return ("inconsistent", f"{name} is {was} earlier in this paragraph (line {line})", str(was), "computed")
    doc.restart()  # another example: the sizes and values of the earlier one no longer apply
    doc.definitions[name] = values[1]
    doc.bound_in[name], doc.bound_line[name] = doc.paragraph, doc.line
    return ("given", f"{name} = {values[1]}: another value of a name given {was} in another paragraph (line {line}): "
            "another example", None, "")


#: a number, or a tuple or list of numbers, as written: ``768``, ``-0.5``, ``(1, 1, 3)``, ``[2, 4]``
_LITERAL = re.compile(r"\s*(?:[-+]?\d+(?:\.\d+)?|[(\[]\s*[-+]?\d+(?:\.\d+)?(?:\s*,\s*[-+]?\d+(?:\.\d+)?)*\s*[)\]])\s*")


def _another_scope(doc: DocumentModel, name: str, reshaped: bool) -> bool:
    """Is a name given a literal value again outside the scope (paragraph, list item) that gave it the first (or
    given another shape anywhere)?  Then it starts another example."""
    scope = doc.bound_in.get(name)
    return reshaped or scope is None or not (scope[0] == doc.paragraph[0] and scope[1] in (0, doc.paragraph[1]))


def literal_value(tex: str) -> bool:
    return bool(_LITERAL.fullmatch(tex)) or numeric_matrix(tex) is not None


def _numeric(v: Any) -> bool:
    """A number, or a matrix of numbers."""
    if isinstance(v, MatrixBase):
        return all(getattr(x, "is_number", False) for x in v)
    return bool(getattr(v, "is_number", False))


def _by_definition(doc: DocumentModel, values: list[Any]) -> list[Any] | None:
    """The sides in the model's independent sizes (d_k and d_v written as d_model / h), when they all are
    equal that way -- a statement true for every size; None otherwise (it depends on the sizes)."""
    D = doc.model().dims
    names = {"n": D.n, "d_model": D.d_model, "h": D.h, "d_k": D.d_k, "d_v": D.d_v}
    out = []
    for v in values:
        e = v.xreplace({s: names[dim_name(str(s)) or ""] for s in v.free_symbols if dim_name(str(s)) in names})
        out.append(simplify(e.subs(D.definitions)))
    return out if all(simplify(a - out[0]) == 0 for a in out) else None


def _compare_chain(values: list[Any], ops: list[str], tex: list[str], basis: str, given_if: Any = False,
                   raw: list[Any] | None = None, doc: DocumentModel | None = None) -> Verdict3:
    for k, op in enumerate(ops):
        a, b = values[k], values[k + 1]
        places = _stated_places(tex[k], tex[k + 1], op)
        holds = _holds(a, b, op, _entry_places(tex[k + 1], b, places))
        if holds is False and raw is not None and op in ("eq", "approx") and \
                (_balls_meet(raw[k], tex[k], raw[k + 1], tex[k + 1]) or _corners_meet(tex[k], b, tex[k + 1]) or
                 doc is not None and _corners_meet(written_out(doc, tex[k]), b, tex[k + 1])):
            holds = True  # 0.2119 + 0.5761 + 0.2119 = 1: rounded terms, whose exact sum may well be 1 (and
            # 0.2689·v_1 + 0.7311·v_2 with the rows the document named written out)
        if holds is False:
            base = _other_log_base(a, b, op, places, tex[k] + tex[k + 1])
            if base is not None:
                return ("unchecked", f"{tex[k]} {_OPS.get(op, op)} {tex[k + 1]} holds if \\log is base {base}, "
                        f"not with the natural logarithm ({shown(a, places)} and {shown(b, places)}); the document "
                        "does not say which it means", None, "")
            return ("wrong", f"{tex[k]} = {shown(a, places)} and {tex[k + 1]} = {shown(b, places)}: "
                    f"'{_OPS.get(op, op)}' does not hold", shown(a, places), basis)
    if given_if:
        return "given", "sets " + " = ".join(tex), None, ""
    return "correct", " ".join(f"{t} = {shown(v)};" for t, v in zip(tex, values, strict=True))[:200], None, basis


#: a logarithm written without its base (read as natural, the convention of the field)
_BARE_LOG = re.compile(r"\\(?:log|mathrm\{log\}|operatorname\{log\})(?![A-Za-z])(?!\s*_)")


def _other_log_base(a: Any, b: Any, op: str, places: int | None, tex: str) -> int | None:
    """The base (2 or 10) in which a relation written with a bare ``\\log`` holds when it fails with the natural
    logarithm (``\\log 8 = 3`` in bits): the notation has several readings, and a statement true in one of them
    is not called wrong."""
    if not _BARE_LOG.search(tex):
        return None
    for base in (2, 10):
        def rebased(e: Any, base: int = base) -> Any:
            return e.replace(log, lambda x, *rest: log(x, *rest) if rest else log(x) / log(base)) \
                if hasattr(e, "replace") else e
        try:
            if _holds(rebased(a), rebased(b), op, places):
                return base
        except (TypeError, ValueError, MHASymbolicError):
            continue
    return None


def _balls_meet(a: Any, a_tex: str, b: Any, b_tex: str) -> bool:
    """Can the two sides be equal once every decimal written in them stands for the interval it rounds
    (:mod:`.balls`)?  False when either side cannot be evaluated as balls or their shapes differ."""
    from .balls import ball_entries, written_radii

    A = ball_entries(a, written_radii(a_tex))
    B = ball_entries(b, written_radii(b_tex))
    if A is None or B is None or len(A) != len(B):
        return False
    return all(x.overlaps(y) for x, y in zip(A, B, strict=True))


def numbers_only(tex: str, functions: bool = True) -> bool:
    r"""No name in ``tex``: numbers, operators, LaTeX commands and matrix environments, and (with ``functions``)
    the exponential's e (``e^{3.18}``) and scientific notation (``4.31e15``) -- a computation from what it writes."""
    names = r"\\(?:begin|end)\{\w+\}|\\[A-Za-z]+"
    if functions:
        names += r"|(?<![A-Za-z\\])e(?=\s*\^)|(?<=\d)[eE](?=[-+]?\d)"
    return not re.search(r"[A-Za-z]", re.sub(names, "", tex))


def _corners_meet(side: str, stated: Any, stated_tex: str, min_places: int | None = None,
                  functions: bool = False) -> bool:
    """Numbers only (``0.6698 \\cdot (2, 0) + 0.3302 \\cdot (0, 4) \\approx (1.3395, 1.3210)``), whose reading
    multiplies out before its decimals can be widened as balls: the side is read again at every corner of its rounded
    decimals (three places or more, at most four of them: :func:`.balls.corners`), and each stated entry must lie
    within the range of its corners, widened by half a unit of its own last place.  With ``functions`` (a result
    through exp, a root or a log, :func:`.plain.holds_if_rounded`) decimals of ``min_places`` places or more are
    widened and the side need not hold an operator."""
    from .balls import MIN_PLACES, corners, half_unit

    target = _literal(stated)
    texts = corners(side, MIN_PLACES if min_places is None else min_places, most=4)
    if texts is None or target is None or not numbers_only(side, functions) or \
            not functions and not re.search(r"[-+*/]|\\cdot|\\times", side):  # (a bare decimal: _balls_meet)
        return False
    values: list[Any] = []
    for text in texts:
        try:
            got = _literal(DocumentModel().read(text))
        except (MHASymbolicError, ValueError, TypeError, AttributeError, RecursionError):
            return False
        if got is None or got.shape != target.shape:
            return False
        values.append(got)
    slack = half_unit(_places(stated_tex))
    return all(min(v[i] for v in values) - slack <= target[i] <= max(v[i] for v in values) + slack
               for i in range(len(target)))


def written_out(doc: DocumentModel, tex: str) -> str:
    """``tex`` with each lower-case name of a row of numbers the document gave written out as that row (``v_{1}`` as
    ``(1, 0, 2)``), so that a combination of them is arithmetic on written numbers."""
    rows = dict(doc.definitions)
    for m in re.finditer(r"(?<![\\A-Za-z])([a-z])_\{?(\d+)\}?", tex):  # q_2: a row of the document's Q
        name = f"{m.group(1)}_{m.group(2)}"
        if name not in rows and (row := doc._row_of(name)) is not None:
            rows[name] = row
    for name, value in rows.items():
        if name[:1].islower() and isinstance(value, MatrixBase) and value.rows == 1 and all(x.is_number for x in value):
            row = "(" + ", ".join(str(x) for x in value) + ")"
            tex = re.sub(rf"(?<![\\A-Za-z]){spelled(name)}(?![\w{{])", row.replace("\\", "\\\\"), tex)
    return tex


def _stated_places(left: str, right: str, op: str) -> int | None:
    """The precision a relation is read at: an approximate value written as a bare number (``0.6728 / 0.1636
    \approx 4.11``) at its own places; otherwise the most precise number on either side."""
    if op == "approx":
        for side in (right, left):
            if re.fullmatch(r"\s*-?\d+\.\d+\s*", side):
                return _places(side)
        if re.search(r"\d\.\d", right) and not re.search(r"\\[a-z]*frac|[/*+]|\\cdot|\d\s*-", right):
            return _places(right)  # ≈ (0.1636, 0.1636, 0.6728)^T: the approximation, at the places it is written
    return _places(left + " " + right)


#: one entry of a written vector or matrix: a decimal, possibly in scientific notation
_ENTRY_TEXT = re.compile(r"\s*[-+]?\d+(?:\.\d+)?(?:[eE][-+]?\d+|\s*\\(?:times|cdot)\s*10\^\{?[-+]?\d+\}?)?\s*")


def _entry_places(tex: str, value: Any, places: int | None) -> int | None | list[int | None]:
    """Each entry of a written vector or matrix at its own precision (``(2.718, 1, 0.3679)``: 3 places, then 4), an
    integer entry at ``places``; ``places`` itself when ``tex`` is no literal of ``value``'s entries."""
    B = _literal(value)
    if B is None or len(B) < 2:
        return places
    body = re.sub(r"\\(?:begin|end)\{[pbvBV]?matrix\}|\^\s*\{?(?:T|\\top)\}?|\\left|\\right", "", tex)
    cells = re.split(r"[,&;]|\\\\", body.strip().strip("()[]").strip())
    if len(cells) != len(B) or not all(_ENTRY_TEXT.fullmatch(c) for c in cells):
        return places
    return [places if (own := _places(c)) is None or places is None else min(own, places) for c in cells]


def _nth(places: int | None | list[int | None], j: int) -> int | None:
    return places[j] if isinstance(places, list) else places


def _agree(V: Any, stated: Any, places: int | None | list[int | None]) -> bool:
    """Every entry of ``V`` rounds to the stated one at its places (one for all, or each entry's own)."""
    return all(agrees(x, y, _nth(places, j)) for j, (x, y) in enumerate(zip(V, stated, strict=True)))


def _holds(a: Any, b: Any, op: str, places: int | None | list[int | None]) -> bool | None:
    if op in ("eq", "approx", "def"):
        A, B = _literal(a), _literal(b)
        if A is None or B is None:
            return bool(simplify(a - b) == 0)
        if op == "approx" and places is None and A.shape == B.shape == (1, 1) and B[0].is_Integer and \
                not A[0].is_Integer:  # e^{11} ~ 59874: to the last nonzero digit written (540 to within 5)
            from .units import to_last_digit

            return to_last_digit(A[0].evalf(30), int(B[0]))
        return A.shape == B.shape and _agree(A, B, places)
    if op == "ne":
        return not _holds(a, b, "eq", places)
    cmp = {"lt": lambda x, y: x < y, "le": lambda x, y: x <= y, "gt": lambda x, y: x > y,
           "ge": lambda x, y: x >= y}.get(op)
    if cmp is None:
        return None
    return bool(cmp(as_sympy(a), as_sympy(b)))


# ----- values -----------------------------------------------------------------------------------------
def _given_balls_meet(doc: DocumentModel, e: Any, stated: ImmutableMatrix, places: int | None) -> bool:
    """Can ``e`` equal ``stated`` once every decimal the document gave its inputs and steps with (``A`` to four
    places) stands for the interval it rounds?  What is computed from rounded givens is carried as a ball
    (:mod:`.balls`): each such entry ``x`` becomes ``x + r eps`` with its own ``eps`` in [-1, 1]."""
    import flint

    from ..rank.certify import to_arb, working_precision
    from .balls import _PREC, MAX_OPERATIONS, _size, half_unit

    env: dict[Any, Any] = {}

    def widened(M: Any) -> Any:
        if not isinstance(M, MatrixBase):
            return [widened(x) for x in M] if isinstance(M, list) else M
        entries = []
        for x in M:
            r = _rounding(x)
            if r:
                eps = Dummy("eps")
                env[eps] = flint.arb(0, 1)
                x = x + r * eps
            entries.append(x)
        return ImmutableMatrix(M.rows, M.cols, entries)

    try:
        from sympy import preorder_traversal

        written = {x for x in preorder_traversal(e) if isinstance(x, MatrixBase)}  # a name the document defined
        V = _value(doc, e.xreplace({x: widened(x) for x in written}) if written else e, widened)  # by its numbers
        if not env or V.shape != stated.shape or sum(_size(x) for x in V) > MAX_OPERATIONS or \
                any(not (x.free_symbols <= set(env)) for x in V):
            return False
        with working_precision(_PREC):
            half = flint.arb(0, float(half_unit(places))) if places else flint.arb(0)
            return all((to_arb(x, env) + half).overlaps(flint.arb(str(Rational(y).p)) / Rational(y).q)
                       for x, y in zip(V, stated, strict=True))
    except (MHASymbolicError, ValueError, TypeError, ZeroDivisionError, AttributeError, RecursionError):
        return False


def _rounding(x: Any) -> Rational:
    """Half a unit in the last place of a number given as a decimal of three or more places (``0.3333``), else 0."""
    from .balls import MIN_PLACES, half_unit

    if not isinstance(x, Rational) or x.is_Integer:
        return Rational(0)
    for k in range(1, 19):
        if 10 ** k % x.q == 0:
            return half_unit(k) if k >= MIN_PLACES else Rational(0)
    return Rational(0)


def _value(doc: DocumentModel, e: Any, widen: Any = None) -> ImmutableMatrix:
    """The exact value of a matrix expression from the document's givens (symbols left where missing); ``widen``,
    if given, maps each given (inputs and steps) before the model evaluates them (:func:`_given_balls_meet`)."""
    from ..formulas import MultiHead

    if not e.atoms(MatrixSymbol) and not e.atoms(MultiHead):  # numbers only (softmax of a given row): no model
        value = e.doit()
        value = value.as_explicit() if isinstance(value, MatrixExpr) else value
        value = value.subs(_dims_subs(doc, value)) if hasattr(value, "subs") else value  # Q K^T / sqrt(d_k)
        if hasattr(value, "has") and value.has(S.ComplexInfinity, S.NaN):  # (1, 2)/0: no value to compare
            raise MHASymbolicError(f"{e} divides by zero: it has no value")
        if isinstance(value, MatrixBase):
            return ImmutableMatrix(value)
        if not isinstance(value, Expr):  # a truth value or a relation (x < 2), not a number
            raise MHASymbolicError(f"{e} is not a value (it reads as {type(value).__name__})")
        return ImmutableMatrix([[value]])
    M = doc.model()
    if e.atoms(MultiHead):
        e = e.xreplace({m: M.steps["Output"].symbol for m in e.atoms(MultiHead)})
    from ..concat import Concat, ConcatHeads

    for c in e.atoms(ConcatHeads):  # Concat(head_1, ..., head_h) with the document's h: its heads, by name
        h = as_sympy(c.h).subs(_dims_subs(doc, as_sympy(c.h)))
        if getattr(h, "is_Integer", False) and 0 < int(h) <= 256:  # (more heads than any model: left unexpanded)
            e = e.xreplace({c: Concat(*(c.head(k) for k in range(1, int(h) + 1)))})
    givens, steps = doc.inputs_and_steps()
    if widen is not None:
        givens, steps = {k: widen(v) for k, v in givens.items()}, {k: widen(v) for k, v in steps.items()}
    if not {str(a) for a in e.atoms(MatrixSymbol)} & {"W_O", "Output"}:
        givens.pop("W_O", None)  # a W_O that cannot multiply the heads does not spoil a head's values
        steps.pop("Output", None)
    E = M.evaluate(**givens, given_steps=steps or None)
    repl: dict[Any, Any] = {}
    for a in e.atoms(MatrixSymbol):
        key = str(a)
        if key in ("X", "Y", "m", "M") and E.inputs.get(key) is not None:
            repl[a] = ImmutableMatrix(E.inputs[key])
        elif key == "W_O":
            repl[a] = ImmutableMatrix(E.inputs["W_O"])
        elif key in M.steps:
            repl[a] = E[key]
        elif "^" in key and key.split("^")[0] in E.inputs:
            heads = E.inputs[key.split("^")[0]]
            repl[a] = ImmutableMatrix(heads[int(key.split("^")[1]) - 1])
    value = e.xreplace(repl)
    value = value.subs(_dims_subs(doc, value)) if hasattr(value, "subs") else value
    value = value.doit() if hasattr(value, "doit") else value
    if isinstance(value, MatrixExpr) and not value.free_symbols - set(value.atoms(Symbol)):
        value = value.as_explicit()
    if not isinstance(value, (MatrixBase, Expr)):  # [V1; V2] read as a tuple of matrices: no matrix, no number
        raise ParseError(f"{type(value).__name__} is neither a matrix nor a number")
    return ImmutableMatrix(value) if isinstance(value, MatrixBase) else ImmutableMatrix([[value]])


def _input_key(doc: DocumentModel, tex: str) -> str | None:
    """``X``, ``W_O`` or ``W_Q^2`` when a side names an input in any of the document's spellings, else None
    (a per-head weight is an input whatever the sizes known so far)."""
    from .model import canonical_tex

    t = canonical_tex(tex, doc.zero_based).replace(" ", "")
    if t in ("X", "W_O", "W^O", "W^{O}", "W_{O}"):
        return "X" if t == "X" else "W_O"
    if t == "Y" and doc.cross or t in ("m", "M") and doc.mask is not None:
        return t  # the keys' and values' input of cross-attention; the key-padding row m or the additive mask M
    m = re.fullmatch(r"W_\{?([QKV])\}?\^\{?(\d+)\}?|W\^\{?([QKV])\}?_\{?(\d+)\}?|W_\{?(\d+)\}?\^\{?([QKV])\}?", t)
    if not m:
        return None
    letter = m.group(1) or m.group(3) or m.group(6)
    index = int(m.group(2) or m.group(4) or m.group(5))  # canonical_tex has counted 0-based heads up
    return f"W_{letter}^{index}"


#: a projection weight without a head index: W^Q, W_{K}, W^{(V)}, \mathbf{W}^Q, W_q
_FULL_WEIGHT = re.compile(r"\s*(?:\\mathbf\{W\}|\\boldsymbol\{W\}|W)\s*(?:\^|_)\s*\{?\(?\s*(?:\\mathrm\{|\\text\{)?"
                          r"([QKVqkv])\}?\s*\)?\}?\s*")


def _full_weights(doc: DocumentModel, tex: str, stated: ImmutableMatrix) -> Verdict3 | None:
    """``W^Q`` given as a ``d_model x h d_k`` matrix: the per-head weights ``W_Q^i`` are its column blocks (head
    ``i`` reads columns ``(i - 1) d_k + 1 .. i d_k`` of ``X W^Q``), bound as inputs the first time.  None when
    ``tex`` is not such a weight or the sizes do not fit (then it is judged as before)."""
    m = _FULL_WEIGHT.fullmatch(tex)
    known = doc.known_dims()
    h, d_model = known.get("h"), known.get("d_model")
    if m is None or h is None or d_model is None or doc.convention == "split":
        return None
    if doc.columns:  # d_k x d_model blocks stacked as rows (W^Q X): the model's weight is its transpose
        stated = stated.T
    letter = m.group(1).upper()
    width = known.get("d_v" if letter == "V" else "d_k") or (d_model // h if d_model % h == 0 else None)
    if width is None or stated.shape != (d_model, h * width):
        return None
    keys = [f"W_{letter}^{i}" for i in range(1, h + 1)]
    blocks = head_blocks(stated, h)
    if all(key in doc.values for key in keys):
        same = all(doc.values[key] == block for key, block in zip(keys, blocks, strict=True))
        return ("correct", f"{tex.strip()} is W_{letter}^1 ... W_{letter}^{h} side by side", None, "computed") if same \
            else ("wrong", f"{tex.strip()} differs from the W_{letter}^i given earlier side by side", None, "computed")
    for key, block in zip(keys, blocks, strict=True):
        doc.values[key] = ImmutableMatrix(block)
    doc.memory.setdefault("full_weights", {})[letter] = ImmutableMatrix(stated)  # re-split for another h
    doc._model = doc._table = None
    return ("given", f"W_{letter}^1 ... W_{letter}^{h} given ({d_model} x {width} each): the column blocks of "
            f"{tex.strip()}", None, "")


def head_blocks(W: ImmutableMatrix, h: int) -> list[ImmutableMatrix]:
    """The ``h`` column blocks of a projection given side by side (``W^Q = [W_Q^1 ... W_Q^h]``), in head order.

    >>> [b.tolist() for b in head_blocks(ImmutableMatrix([[1, 2, 3, 4]]), 2)]
    [[[1, 2]], [[3, 4]]]
    """
    width = W.cols // h
    return [ImmutableMatrix(W[:, (i - 1) * width:i * width]) for i in range(1, h + 1)]


def _assume_head_blocks(doc: DocumentModel, tex: str, stated: ImmutableMatrix) -> None:
    """A stated ``Q`` (``K``, ``V``) of width h d_k whose weights the document never gives: each head's block
    of columns is that head's ``Q_i``, taken as the document states it, so that ``Q_1 K_1^T`` is computed from
    the stated values (a local computation) instead of being assumed."""
    name = tex.strip().replace("\\mathbf{", "").rstrip("}").strip()
    dims = doc.known_dims()
    h, d_k = dims.get("h"), as_int(doc.model().dims.d_k)
    if name not in ("Q", "K", "V") or not h or not d_k or stated.cols != h * d_k or doc.model().kv_heads:
        return
    steps = doc.model().steps
    for i, block in enumerate(head_blocks(stated, h), start=1):
        if f"{name}_{i}" in steps and f"{name}_{i}" not in doc.values:
            doc.assumed[f"{name}_{i}"] = block


def _written_matrix(e: Any) -> bool:
    """Does ``e`` hold a matrix of numbers written out (``(1, 0, 1) W_Q``)?"""
    from sympy import preorder_traversal

    return any(isinstance(a, MatrixBase) for a in preorder_traversal(e)) if hasattr(e, "args") else False


def _loose_weight(e: Any) -> bool:
    """Does ``e`` hold a projection weight without a head index, read as a number (``W**Q`` or ``W_Q``)?"""
    from sympy import Pow

    if not hasattr(e, "atoms"):
        return False
    return any(isinstance(p.base, Symbol) and p.base.name == "W" for p in e.atoms(Pow)) or any(
        re.fullmatch(r"W_\{?[QKVqkv]\}?", x.name) for x in e.atoms(Symbol))


def _full_product(doc: DocumentModel, tex: str, stated: ImmutableMatrix | None = None) -> Any:
    """``X W^Q`` with ``W^Q`` given side by side: every head's ``X W_Q^i`` side by side, exact; so is a bare ``Q``
    stated as a matrix of that width (every head's queries; with one head, its own).  Where tokens are columns,
    ``W^Q X`` and every head's ``W_Q^i X`` stacked.  None otherwise."""
    h = doc.known_dims().get("h")
    tex = re.sub(r"\\(?:mathbf|boldsymbol|bm)\s*\{([A-Za-z])\}", r"\1", tex)  # \mathbf{X}\mathbf{W}^{Q}
    if stated is not None:
        bare = re.fullmatch(r"\s*([QKV])\s*", tex)
        width = stated.rows if doc.columns else stated.cols  # tokens as columns: the heads' rows stacked
        if bare is None or h is None or width != h * doc.values.get(f"W_{bare.group(1)}^1", ImmutableMatrix([[]])).cols:
            return None
        tex = f"W^{bare.group(1)} X" if doc.columns else f"X W^{bare.group(1)}"
    m = re.fullmatch(r"\s*(.+?)\s*(?:\\cdot\s*)?X\s*", tex) if doc.columns else \
        re.fullmatch(r"\s*X\s*(?:\\cdot\s*)?(.+)", tex)
    weight = _FULL_WEIGHT.fullmatch(m.group(1)) if m else None
    if weight is None or h is None or "X" not in doc.values:
        return None
    letter = weight.group(1).upper()
    keys = [f"W_{letter}^{i}" for i in range(1, h + 1)]
    if not all(key in doc.values for key in keys):
        return None
    X = doc.values["X"]
    blocks = [X * doc.values[key] for key in keys]
    if not all(b.rows == X.rows for b in blocks):
        return None
    return ImmutableMatrix.hstack(*blocks).T if doc.columns else ImmutableMatrix.hstack(*blocks)


def _causal_value(doc: DocumentModel, s: Any, stated: ImmutableMatrix, plain: ImmutableMatrix) -> Any:
    """The value of ``s`` under the causal mask when ``stated`` has its pattern of exact zeros (a masked weight is
    0, an attended one is not) and the mask shows in it (a zero the unmasked value ``plain`` does not have: a
    zero score of the unmasked model is no evidence); the document's model is causal from then on (its worked
    example is a masked one).  ``None``, and the model unchanged, otherwise."""
    doc.use_causal(True)
    try:
        V = _value(doc, s)
        if V.shape == stated.shape and all(as_sympy(x).is_number for x in V) and any(x == 0 for x in V) and \
                all((as_sympy(x) == 0) == (as_sympy(y) == 0) for x, y in zip(V, stated, strict=True)) and \
                (plain.shape != V.shape or any(x == 0 and y != 0 for x, y in zip(V, plain, strict=True))):
            return V
    except MHASymbolicError:
        pass
    doc.use_causal(False)
    return None


def _row_slack(tex: str, rows: int, cols: int, places: int | None) -> list[Any]:
    """How far each stated row's sum may be from the exact one by rounding alone: half a unit in the last written
    place of each entry (read from the matrix's text, percentages in hundredths), or -- when the text's numbers do
    not line up with the entries -- half a unit in the first decimal of each (lenient: a false alarm is worse)."""
    from sympy import Rational

    numbers = re.findall(r"(?<![\w.])-?\d+(?:\.(\d+))?(\s*\\?%)?", tex)
    if places is None and not any(d for d, _ in numbers):
        return [Rational(0)] * rows  # exact numbers (1, 0, 1/2): no rounding
    if len(numbers) != rows * cols:
        return [Rational(cols, 20)] * rows
    half = [Rational(1, 2) / 10 ** len(d) / (100 if pct else 1) for d, pct in numbers]
    return [sum(half[r * cols:(r + 1) * cols], Rational(0)) for r in range(rows)]


def _input_free_contradiction(V: ImmutableMatrix, stated: ImmutableMatrix, name: str,
                              places: int | None, stated_tex: str = "") -> Verdict3 | None:
    """A stated matrix against what its step is whatever the inputs the document leaves open: an entry the
    model's steps make a constant (0 above the diagonal under a causal mask), and a row sum that is a constant
    (1 for attention weights, whose entries are ``e^s_ab / sum_c e^s_ac``), computed from the step's own
    expression, within the rounding of the stated entries.  ``None`` when nothing contradicts (or the matrix is
    too large to sum symbolically, or a stated entry is not a plain number)."""
    from sympy import Add, cancel, fraction, together

    if V.shape != stated.shape or V.rows * V.cols > 64:
        return None
    try:
        given = [float(as_sympy(y).evalf()) for y in stated]
    except (TypeError, ValueError):
        return None
    for idx, (x, y) in enumerate(zip(V, stated, strict=True)):
        x = as_sympy(x)
        if x.is_number and not agrees(x, y, places):
            r, c = divmod(idx, V.cols)
            said = f"{given[idx]:.{places}f}" if places is not None else str(y)
            return ("wrong", f"entry ({r + 1}, {c + 1}) of {name} is {x} whatever the inputs (computed from the "
                    f"model's steps); the document states {said}", str(x), "computed")
    if V.cols < 2:
        return None
    slack = _row_slack(stated_tex, V.rows, V.cols, places)
    for r in range(V.rows):
        entries = [as_sympy(x) for x in V.row(r) if as_sympy(x) != 0]  # a masked weight is 0: no denominator
        if not entries or not all(x.is_Mul or x.is_Pow or x.is_number for x in entries):
            return None  # sums of products (a head's values): costly to put over one denominator, and they vary
        parts = [fraction(x) for x in entries]
        if len({den for _, den in parts}) != 1:
            return None  # only a row over one denominator (softmax weights) is summed: others are costly and vary
        total = cancel(together(Add(*(num for num, _ in parts)) / parts[0][1]))
        if not total.is_number:
            return None
        row_sum = sum(given[r * V.cols:(r + 1) * V.cols])
        if abs(row_sum - float(total)) > float(slack[r]) + 1e-12:
            said = f"{row_sum:.{places}f}" if places is not None else f"{row_sum:g}"
            return ("wrong", f"every row of {name} sums to exactly {total} whatever the inputs (computed from the "
                    f"model's steps); row {r + 1} of the stated matrix sums to {said}", str(total), "computed")
    return None


def _number(doc: DocumentModel, sides: list[Any], tex: list[str], ops: list[str]) -> Verdict3:
    stated_at = [i for i, s in enumerate(sides) if _literal(s) is not None]
    k = stated_at[-1]
    stated = _literal(sides[k])
    assert stated is not None
    places = _places(tex[k])
    if isinstance(sides[k], Number) or stated.shape == (1, 1):
        stated_shape = None
    else:
        stated_shape = stated.shape
    verdicts: list[Verdict3] = []
    name = tex[0].strip() if len(sides) == 2 else ""
    before = _literal(sides[0])
    if name in doc.definitions and stated_at == [0, 1] and stated_shape is not None and before is not None and \
            before != stated and (ops[0] in ("eq", "def") or before.shape != stated.shape or ops[0] == "approx"
                                  and not doc.drawn and _another_scope(doc, name, False)):
        # S = [3 x 3 numbers] earlier, now S = [4 x 4 numbers]; s = (1, 2, 3) in one paragraph, s = (1, 1, 3) in a
        # later one: another example, not a claim (the name's value lives in its scope, as a size's does). In the
        # same scope, two literal values of one name are an alternative or a slip: said, not judged. "=" gives a
        # name a value; "p ≈ (0, 1)" claims one, and is compared in the scope that gave the value (in another scope
        # it is another example's value, as a size restated there is)
        was, line = doc.definitions[name], doc.bound_line.get(name)
        if not _another_scope(doc, name, was.shape != stated.shape):
            return ("unchecked", f"{name} was given other values on line {line} of this paragraph: another example "
                    "or a slip, not judged", None, "")
        doc.definitions[name] = stated
        doc.bound_in[name], doc.bound_line[name] = doc.paragraph, doc.line
        return ("given", f"another example: {name} given again ({stated.rows} x {stated.cols}; it was {was.rows} x "
                f"{was.cols}{f', line {line}' if line else ''}), the earlier values no longer apply", None, "")
    regiven = next((key for key in doc.definitions if re.fullmatch(spelled(key), tex[0].strip())), "")
    if len(sides) > 2 and ops[0] in ("eq", "def") and regiven in doc.definitions and 0 in stated_at and \
            stated_shape is not None and before is not None and before.shape == stated.shape and before != stated \
            and _another_scope(doc, regiven, False) and \
            not any(tex[i].strip() in doc.definitions for i in range(1, k) if _literal(sides[i]) is None):
        # z_1 = v_1 = (1, 0) in a later section, where an earlier one gave z_1 other values: the chain gives the
        # name anew (another example's), and what follows it is judged on its own
        was, line = doc.definitions[regiven], doc.bound_line.get(regiven)
        got = _number(doc, sides[1:], tex[1:], ops[1:])
        doc.definitions[regiven] = stated
        doc.bound_in[regiven], doc.bound_line[regiven] = doc.paragraph, doc.line
        return got if got[0] != "correct" else (got[0], f"{regiven} given anew (it was {shown(was)}" + (
            f", line {line}" if line else "") + f", in another scope); {got[1]}", *got[2:])
    if len(stated_at) == len(sides):  # 0.67[1, 0] + 0.33[0, 1] = [0.67, 0.33]: arithmetic on numbers
        return _compare_chain([_literal(s) for s in sides], ops, tex, "computed", raw=sides)
    owners: list[int] = []  # the side each verdict is about
    for i, s in enumerate(sides):
        before = len(verdicts)
        try:
            if i == k or _literal(s) is not None:
                continue
            if isinstance(s, Tuple) and len(s) > 1 and all(getattr(as_sympy(x), "is_number", False) for x in s):
                row = ImmutableMatrix([list(s)])  # softmax(1, 0, -inf) = [e/(e+1), ...]: a list of numbers is a vector
                s = row.T if stated.shape == (len(s), 1) else row  # without an orientation of its own
            op = ops[min(i, k) if abs(i - k) == 1 else (k - 1 if k > 0 else 0)]  # the relation to the stated side
            full = _full_weights(doc, tex[i], stated)
            if full is not None:  # W^Q = [4 x 4 numbers]: every head's W_Q^i side by side
                verdicts.append(full)
                continue
            whole = _full_product(doc, tex[i], stated) if re.fullmatch(r"\s*(?:\\mathbf\{[QKV]\}|[QKV])\s*", tex[i]) \
                else None
            if whole is not None:  # Q of width h d_k: every head's queries side by side
                s = whole
            elif _loose_weight(s):  # X W^Q with W^Q no matrix of the model: read as a number, it would commute
                product = _full_product(doc, tex[i])
                bare = "".join(tex[i].replace("{", "").replace("}", "").split())
                if product is None and i == 0 and len(sides) == 2 and re.fullmatch(r"[QKV](?:_\w+)?", bare):
                    # Q = [numbers] where the document's formula for Q (X W_Q) has inputs it never gives: its own
                    doc.definitions[bare], doc.bound_in[bare], doc.bound_line[bare] = stated, doc.paragraph, doc.line
                    doc.formulas.pop(bare, None)  # value of Q in this example, which later lines compute with
                    verdicts.append(("given", f"{tex[i]} given ({stated.rows} x {stated.cols}): the document's own "
                                     "value (the weights of its formula are never given)", None, ""))
                    continue
                if product is None:
                    _assume_head_blocks(doc, tex[i], stated)
                    verdicts.append(("unchecked", f"{tex[i]}: a weight without a head index that the document has not "
                                     "given as every head's columns side by side", None, ""))
                    continue
                s = product
            key = _input_key(doc, tex[i]) or (str(s) if isinstance(s, MatrixSymbol) else None)
            is_input = key is not None and (key in ("X", "W_O") or "^" in key or key == "Y" and doc.cross
                                            or key in ("m", "M") and doc.mask is not None)
            if key is not None and is_input and key not in doc.values:
                known = doc.known_dims()
                value = stated.T if doc.columns and written_transposed(key, doc.memory.get("query_axis")) else stated
                if (key.startswith("W_") and "^" in key and known.get("d_k") == value.rows != known.get("d_model")
                        and known.get("d_model") is not None):
                    doc.use_convention("split")  # a d_k x d_k projection reads a column block of X
                doc.values[key] = value  # the model's (row-convention) value of what the document wrote
                doc._model = doc._table = None
                verdicts.append(("given", f"{key} given ({stated.rows} x {stated.cols})", None, ""))
                continue
            if isinstance(s, Symbol) and dim_name(s.name) is None and s.name not in doc.definitions:
                from .softmax_forms import defined_value

                defined = defined_value(doc, s.name)  # p = (0.69, ...) after "p = softmax(z)" and z = (2, 1, -0.5)
                if defined is not None and defined.shape == stated.shape:
                    ok = all(agrees(x, y, places) for x, y in zip(defined, stated, strict=True))
                    at = "" if places is None else f" at {places} decimals"
                    why = f"{tex[i]} = {shown(defined, places)} by the document's own definition of {s.name}, " \
                        "computed exactly"
                    verdicts.append(("correct", f"{why}; agrees{at}", None, "computed") if ok else
                                    ("wrong", f"{why}; not {tex[k].strip()}{at}", shown(defined, places), "computed"))
                    continue
                doc.definitions[s.name] = stated  # x = (0, 1, 2)^T: a name the document gives a value
                doc.bound_in[s.name], doc.bound_line[s.name] = doc.paragraph, doc.line  # in this scope
                verdicts.append(("given", f"{tex[i]} given ({stated.rows} x {stated.cols})", None, ""))
                continue
            both = sorted(str(x) for x in getattr(s, "free_symbols", ()) if str(x) in doc.declared and dim_name(str(x)))
            if both:  # W_O h where the document declared h a matrix (h in R^{4 x 3}): not the number of heads here
                verdicts.append(("unchecked", f"{tex[i]}: {', '.join(both)} is a size's letter the document also "
                                 "declares a matrix, so which it means here is not known", None, ""))
                continue
            if _scalar_free(s):
                value = simplify(s.subs(_dims_subs(doc, s)))
                if not value.is_number:
                    verdicts.append(("unchecked", f"{tex[i]} depends on sizes the document does not fix", None, ""))
                    continue
                V = ImmutableMatrix([[value]])
            else:
                try:
                    V = _value(doc, s)
                except ShapeError as e:
                    if is_input:  # W_1^Q given again with another shape: this statement contradicts the first
                        verdicts.append(("inconsistent", f"{tex[i]}: {e}", None, "computed"))
                        continue
                    # otherwise the inputs the document gave (as read) do not fit the model the checker built:
                    # a fault of that model or of the reading, said where the input is given, not on every later line
                    verdicts.append(("unchecked", f"{tex[i]}: not computed, the document's inputs do not fit the model "
                                     f"the checker built from its sizes ({str(e).splitlines()[0][:160]})", None, ""))
                    continue
                except MHASymbolicError as e:
                    if not _own_value(doc, sides, i, stated):
                        raise
                    verdicts.append(("given", f"{tex[i]} given ({stated.rows} x {stated.cols}): the document's own "
                                     f"value (the model cannot compute it: {str(e).splitlines()[0][:120]})", None, ""))
                    continue
                missing = sorted({str(m) for m in V.free_symbols if isinstance(m, MatrixSymbol)})
                unknown = doc.undefined(*(as_sympy(x) for x in V))
                if unknown and not missing:  # W^O H with H read as a number, or H(p) an entropy: a name (of a matrix
                    # or a function) the document has not defined, so nothing to compute with
                    verdicts.append(("unchecked", f"{tex[i]} depends on {', '.join(unknown)}, which is neither a "
                                     "matrix of the model nor a name the document has defined (as read)", None, ""))
                    continue
                if missing or any(not as_sympy(x).is_number for x in V):
                    contradiction = (_input_free_contradiction(V, stated, tex[i], places, tex[k])
                                     if op in ("eq", "approx") else None)
                    if contradiction is not None:
                        verdicts.append(contradiction)
                        continue
                    bare = "".join(tex[i].replace("{", "").replace("}", "").split())
                    named = re.fullmatch(r"(?:\\mathrm)?[A-Za-z]+(?:_\w+)?(?:\^\w)?", bare)  # Q, H_1, \mathrm{head}_1
                    # (one superscript character: K_1^TQ_1 is a product, not a name)
                    if not named and stated_shape is not None and V.shape != stated.shape and missing and \
                            not _loose_weight(s) and not _written_matrix(s):  # (only the model's matrices in it)
                        verdicts.append(("inconsistent", f"{tex[i]} is {V.rows} x {V.cols} by the model's shapes; the "
                                         f"document states {stated.rows} x {stated.cols}", None, "proven"))
                        continue  # K_1^T Q_1 = [3 x 3 numbers] where K_1^T Q_1 is 2 x 2: whatever the inputs
                    if i == 0 and len(sides) == 2 and missing and named and "X" in missing \
                            and not any(m in doc.values for m in missing) and op in ("eq", "approx"):
                        # Q = [numbers], H_1 = [numbers], where neither X nor the weights are given: where the
                        # document starts (any step of the model: nothing it is computed from is given)
                        if key is not None and key in doc.model().steps:
                            doc.assumed[key] = stated
                        _assume_head_blocks(doc, tex[i], stated)
                        verdicts.append(("given", f"{tex[i]} given ({stated.rows} x {stated.cols}): the document's own "
                                         f"value (it starts from it; {', '.join(missing)} never given)", None, ""))
                        continue
                    if key is not None and key in doc.model().steps:
                        doc.assumed[key] = stated
                    elif _own_value(doc, sides, i, stated) and missing == [str(s)]:
                        _assume_head_blocks(doc, tex[i], stated)  # Q of width h d_k: each head's block, too
                        verdicts.append(("given", f"{tex[i]} given ({stated.rows} x {stated.cols}): the document's "
                                         "own value (no step of the model computes it)", None, ""))
                        continue
                    if missing and set(missing) <= set(doc.declared):  # Q = X W_Q with W_Q only declared a shape
                        name = "".join(tex[i].replace("{", "").replace("}", "").split())
                        if re.fullmatch(r"[A-Za-z](?:_\w+)?", name):  # later lines compute with this value of Q
                            doc.definitions[name], doc.bound_in[name], doc.bound_line[name] = stated, doc.paragraph, \
                                doc.line
                            doc.formulas.pop(name, None)
                        _assume_head_blocks(doc, tex[i], stated)  # Q of width h d_k: each head's block, too
                        verdicts.append(("given", f"{tex[i]} given ({stated.rows} x {stated.cols}): the document's own "
                                         f"value ({', '.join(missing)} declared, never given)", None, ""))
                        continue
                    if i == 0 and named and missing == [bare] and op in ("eq", "approx"):
                        # Q = W_Q X = [numbers] where what the model lacks is Q itself (no head index, X never read):
                        # the document's own value of Q (kept for the model's step above)
                        verdicts.append(("given", f"{tex[i]} given ({stated.rows} x {stated.cols}): the document's "
                                         "own value (the model does not compute it from what the document gives)",
                                         None, ""))
                        continue
                    _assume_head_blocks(doc, tex[i], stated)
                    loose = [m for m in missing if re.fullmatch(r"W_[QKV]", m)]
                    if loose and doc.known_dims().get("h") != 1:  # W_K X of a model with heads: which head's weight
                        verdicts.append(("unchecked", f"{tex[i]}: {', '.join(loose)} without a head index, in a model "
                                         "of several heads: which head's weight it is, is not said", None, ""))
                        continue
                    verdicts.append(("assumed", never_given(tex[i], V), None, "computed"))
                    continue
            if V.shape != stated.shape and stated_shape is not None:
                verdicts.append(("wrong", f"{tex[i]} is {V.rows} x {V.cols}; the document states {stated.rows} x "
                                 f"{stated.cols}", shown(V, places), "computed"))
                continue
            if V.shape != stated.shape and stated.shape == (1, 1) and stated[0, 0] == 0:
                stated = ImmutableMatrix.zeros(*V.shape)  # M v = 0: the zero vector (or matrix) of its shape
            if V.shape != stated.shape:
                verdicts.append(("wrong", f"{tex[i]} is a {V.rows} x {V.cols} matrix, not a number", shown(V, places),
                                 "computed"))
                continue
            each = _entry_places(tex[k], stated, places)
            ok = _agree(V, stated, each)
            masked = ""
            if not ok and not s.atoms(MatrixSymbol) and _balls_meet(s, tex[i], sides[k], tex[k]):
                # softmax(3.5355, 1.4142) of scores rounded to 4 places: every rounding is carried (arb balls)
                ok, masked = True, " (its decimals read as the intervals they round, as balls)"
            if not ok and _given_balls_meet(doc, s, stated, places):
                # A V with A given to 4 places: the roundings of the givens carried (arb balls)
                ok, masked = True, " (from givens rounded as written, carried as balls)"
            if not ok and op != "ne" and doc.causal_text and not doc.causal:
                causal = _causal_value(doc, s, stated, V)  # the document speaks of the causal mask: is its example one?
                if causal is not None:
                    V, masked = causal, " with the causal mask the document describes"
                    ok = _agree(V, stated, each)
            elif doc.causal:
                masked = " with the causal mask the document describes"
            scaled = re.fullmatch(r"\s*S(_\{?\s*\w+\s*\}?)\s*", tex[i]) if not ok and op != "ne" else None
            if scaled and "S" not in doc.renames and not doc.unscaled_s:
                try:  # S_1 = [the scaled scores]: the document names the scaled scores S (as S_1 = Q_1 K_1^T / sqrt 2)
                    V2 = _value(doc, doc.read("S'" + scaled.group(1).replace(" ", "")))
                    if V2.shape == stated.shape and _agree(V2, stated, each):
                        V, ok = V2, True
                        masked = (f" as the model's scaled scores S'{scaled.group(1)} (the document's "
                                  f"{tex[i].strip()}; S is read as S' from here on)")
                        doc.renames["S"] = "S'"
                except (MHASymbolicError, ValueError, TypeError):
                    pass
            if op == "ne":
                ok = not ok
            at = "" if places is None else f" at {places} decimals"
            if ok:
                if key is not None:
                    doc.confirmed.add(key)  # the document uses this name as the model does
                verdicts.append(("correct", f"{tex[i]} = {shown(V, places)} computed exactly{masked}; agrees{at}",
                                 None, "computed"))
            elif op == "ne":  # det S = 0 written as det S != 0: the value is the stated one
                verdicts.append(("wrong", f"{tex[i]} = {shown(V, places)} computed exactly{masked}: it equals the "
                                 f"stated value{at}, so the inequality does not hold", shown(V, places), "computed"))
            else:
                bad = next(j for j in range(len(V)) if not _agree(V[j:j + 1], stated[j:j + 1], _nth(each, j)))
                r, c = divmod(bad, V.cols)
                verdicts.append(("wrong", f"{tex[i]} = {shown(V, places)} computed exactly{masked}; entry ({r + 1}, "
                                 f"{c + 1}) differs{at}", shown(V, places), "computed"))
        finally:
            owners += [i] * (len(verdicts) - before)
    run = [i for i in stated_at if i - 1 in stated_at or i + 1 in stated_at]  # a_1 ≈ (4.1/25.1, ...) ≈ (0.16, ...)
    if len(run) >= 2 and run == list(range(run[0], run[-1] + 1)):  # the numbers written on either side of each other
        verdicts.append(_compare_chain([_literal(sides[i]) for i in run], ops[run[0]:run[-1]], tex[run[0]:run[-1] + 1],
                                       "computed", raw=[sides[i] for i in run], doc=doc))
        owners.append(run[0])
    first = _input_key(doc, tex[0]) or (str(sides[0]) if isinstance(sides[0], MatrixSymbol) else None)
    if first not in doc.confirmed:  # a name the document used as the model does cannot be redefined here
        renamed = _named_definitions(verdicts, owners, tex)
        if renamed != verdicts and isinstance(sides[0], MatrixSymbol):
            # later lines read the name as the document defined it (A_1 = softmax(S_1) of its scaled S_1)
            defined = next(o for v, o in zip(verdicts, owners, strict=True) if o > 0 and v[0] == "correct")
            try:
                doc.definitions[str(sides[0])] = _value(doc, sides[defined])
            except (MHASymbolicError, ValueError, TypeError):
                pass
        verdicts = renamed
    return _worst(verdicts)


def _own_value(doc: DocumentModel, sides: list[Any], i: int, stated: ImmutableMatrix) -> bool:
    """``Q = [numbers]`` where the model cannot compute ``Q`` from what the document gives: the stated matrix is
    the document's own value of that name, and later statements about ``Q`` (its shape, ``Q K^T``) are local
    computations from it.  True when ``sides[i]`` is such a bare name (recorded), else False."""
    s = sides[i]
    if doc.columns and isinstance(s, Transpose) and isinstance(s.arg, MatrixSymbol):
        s, stated = s.arg, stated.T  # Q_1 of a document whose tokens are columns: the model's Q_1 transposed
    if i != 0 or len(sides) != 2 or not isinstance(s, MatrixSymbol) or stated.shape == (1, 1):
        return False
    doc.definitions[str(s)] = stated
    doc.bound_in[str(s)], doc.bound_line[str(s)] = doc.paragraph, doc.line
    n = doc.known_dims().get("n")
    if doc.cross and re.fullmatch(r"Q(?:_\d+)?", str(s)) and n is not None and n != stated.rows:
        # cross-attention: the document's own queries have stated.rows rows, so the length it bound as n counts
        # its keys (an encoder of n tokens, m decoder queries): the example's query count is the queries' rows
        doc.dims.setdefault("n_kv", n)
        doc.bind_dim("n", stated.rows)
    return True


def _named_definitions(verdicts: list[Verdict3], owners: list[int], tex: list[str]) -> list[Verdict3]:
    """``S_1 = \\frac{Q_1 K_1^T}{\\sqrt{2}} = [numbers]``: when the value agrees with the expression the chain gives
    and not with what the checker's model calls the first name, the chain is the document's definition of that
    name (its S_1 is the scaled scores), not an error: the name's verdict becomes ``given`` -- unless the
    document used that name as the model does before (then ``K_1 = X W_K`` after ``K_1 = Y W_K`` is wrong)."""
    if len(tex) < 3 or not any(o == 0 and v[0] == "wrong" for v, o in zip(verdicts, owners, strict=True)):
        return verdicts
    defined = [o for v, o in zip(verdicts, owners, strict=True) if o > 0 and v[0] == "correct"]
    if not defined:
        return verdicts
    return [("given", f"{tex[0].strip()} names {tex[defined[0]].strip()} in this document (its own definition)",
             None, "") if o == 0 and v[0] == "wrong" else v for v, o in zip(verdicts, owners, strict=True)]


def _worst(verdicts: list[Verdict3]) -> Verdict3:
    order = ("wrong", "inconsistent", "assumed", "unchecked", "correct", "given")
    if not verdicts:
        return "unchecked", "nothing to compare", None, ""
    return min(verdicts, key=lambda v: order.index(v[0]))


value_of = _value
