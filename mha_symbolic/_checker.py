"""The rules of the document checker (see :mod:`mha_symbolic.document`): a symbol table and
what each kind of fragment means.  Private: the public entry points are in ``document``."""

from __future__ import annotations

import json
import re
from functools import lru_cache
from typing import Any

from sympy import ImmutableMatrix, Integer, Matrix, MatrixBase, Symbol, sqrt

from .document import Finding, agrees, decimals_of, precision_text, show
from .errors import ParseError
from .parse import SymbolTable
from .parse.latex import _atom_at, _canonical, _normalise, _tokens
from .parse.markdown import Fragment
from .softmax import explicit_softmax
from .values import to_exact

_DIMS = {"d_model": "d_model", "d_{model}": "d_model", "dmodel": "d_model", "d_k": "d_k", "d_{k}": "d_k",
         "h": "h", "n": "n"}


def plain(tex: str) -> str:
    """``X_{\\text{head1}}`` -> ``X_head1``: the name without LaTeX wrappers, braces or spaces."""
    t = re.sub(r"\\(?:text|mathrm|operatorname|mathit|mathbf|textrm)\s*\{([^{}]*)\}", r"\1", tex)
    return re.sub(r"[{}\s\\]", "", t)


def canon(name: str, head: int | None) -> str:
    """One name for each quantity, whatever the notation (``W_{Q1}``, ``WQ1``, ``W_1^Q`` -> ``W_Q1``)."""
    p = plain(name)
    for pattern, fmt in ((r"W_?([QKV])_?(\d+|[a-z])", "W_{0}{1}"), (r"W_(\d+|[a-z])\^([QKV])", "W_{1}{0}"),
                         (r"W_([QKV])\^(\d+|[a-z])", "W_{0}{1}")):
        m = re.fullmatch(pattern, p)
        if m:
            return fmt.format(*m.groups())
    if re.fullmatch(r"W_?\^?O", p):
        return "W_O"
    for pattern, fmt in ((r"head_?(\d+)(?:_output)?", "head_{0}"), (r"(?:Z|Output)_(\d+)", "head_{0}"),
                         (r"(?:A|Attention)_(\d+)", "A_{0}"), (r"(?:S|Scores)_(\d+)", "S_{0}"),
                         (r"S'_?(\d+)", "S'_{0}"), (r"([QKV])_?(\d+)", "{0}_{1}"),
                         (r"X_?(?:head)?_?(\d+)", "X_head{0}")):
        m = re.fullmatch(pattern, p)
        if m:
            return fmt.format(*m.groups())
    if head is not None and p in ("Q", "K", "V", "S", "S'", "A"):
        return f"{p}_{head}"
    if p.lower() in ("concat", "multihead"):
        return "Concat"
    if p.replace("_", "").lower() in ("mhaoutput", "finaloutput", "output"):
        return "Output"
    return p


def _vectors(tex: str) -> str:
    """Numeric lists and tuples (``[0.67, 0.33]``, ``(0.67,\\;0.33)``) as one-row bmatrix;
    ``1e-3`` (not LaTeX, but written in tutorials) as ``1 \\times 10^{-3}``."""
    tex = re.sub(r"(?<![\w\\])(\d+(?:\.\d+)?)e([+-]?\d+)\b", r"\1 \\times 10^{\2}", tex)
    def row(m: re.Match[str]) -> str:
        items = [x.strip() for x in re.split(r",", re.sub(r"\\[;,:!]", "", m.group(2)))]
        return m.group(1) + r"\begin{bmatrix}" + " & ".join(items) + r"\end{bmatrix}"
    number = r"\s*-?\d+(?:\.\d+)?\s*"
    tex = re.sub(r"(^|[^A-Za-z}])\[((?:" + number + r"(?:,|,\\;|,\\,)\s*)+" + number + r")\]", row, tex)
    tex = re.sub(r"(\\mathrm\{softmax\}\s*|^|[=\s]|\\approx\s*)\(((?:" + number + r"(?:,|,\\;|,\\,)\s*)+"
                 + number + r")\)", lambda m: (m.group(1) + "(" + row(m)[len(m.group(1)):] + ")")
                 if "softmax" in m.group(1) else row(m), tex)
    return tex


@lru_cache(maxsize=1)
def _base_table() -> SymbolTable:
    """The symbols of the symbolic model in every notation (built once: printing them is slow)."""
    from .attention import MultiHeadAttention

    return SymbolTable.for_model(MultiHeadAttention())


class Checker:
    """Walks the fragments of one document in order, keeping its symbol table."""

    def __init__(self) -> None:
        self.dims: dict[str, int] = {}
        self.dim_lines: dict[str, int] = {}
        self.values: dict[str, ImmutableMatrix] = {}
        self.declared: dict[str, tuple[tuple[int, int], int, int]] = {}  # name -> (shape, line, finding index)
        self.shapes: dict[str, tuple[int, int]] = {}
        self.assumed: set[str] = set()
        self.head: int | None = None
        self.subject: str | None = None
        self.last: tuple[str, tuple[int, int]] | None = None
        self.last_defined: str | None = None
        self.rows: list[tuple[int, list[Any]]] = []
        self.emitted: list[Finding] = []
        self.weights_heading: int | None = None
        self.concat_rows_seen = 0

    # ----- bookkeeping -------------------------------------------------------------------
    def emit(self, frag: Fragment, status: str, message: str, expected: str | None = None,
             text: str | None = None) -> Finding:
        f = Finding(frag.line, text if text is not None else frag.text, status, expected, message)
        self.emitted.append(f)
        return f

    def set_value(self, name: str, value: Any) -> None:
        M = value if isinstance(value, MatrixBase) else ImmutableMatrix([[value]])
        self.values[name] = ImmutableMatrix(M)
        self.shapes[name] = M.shape
        self.last = (name, M.shape)
        self.last_defined = name
        if name == self.subject:
            self.subject = None

    def check(self, frag: Fragment) -> list[Finding]:
        start = len(self.emitted)
        if frag.kind != "code" or not frag.text.lower().startswith("token"):
            self._flush_rows()
        handler = {"heading": self._heading, "prose": self._prose, "code": self._code, "math": self._math,
                   "unclosed": self._unclosed}[frag.kind]
        handler(frag)
        return self.emitted[start:]

    def finish(self) -> list[Finding]:
        self._flush_rows()
        weights = [k for k in self.declared if k.startswith("W_") and not any(v.startswith(k) for v in self.values)]
        if weights and self.weights_heading is not None:
            frag = Fragment("heading", self.weights_heading, "")
            return [Finding(frag.line, "Weight Matrices", "assumed", None,
                            f"{', '.join(sorted(weights))} are given only by shape, never by value: no output of "
                            "the example can be computed from the document; only shapes were checked")]
        return []

    def _unclosed(self, frag: Fragment) -> None:
        self.emit(frag, "unchecked", "a $$ that is never closed: the math after it was not read")

    # ----- headings and prose --------------------------------------------------------------
    def _heading(self, frag: Fragment) -> None:
        t = frag.text
        m = re.search(r"\bhead\s*(\d+)", t, re.I)
        if m:
            self.head = int(m.group(1))
        if re.search(r"weight matri", t, re.I):
            self.weights_heading = frag.line
        m = re.search(r"\$([^$=]+)\$", t)
        if m and "=" not in t:
            self.subject = canon(m.group(1), None)
        elif re.search(r"input matrix\s+X\b", t, re.I):
            self.subject = "X"

    def _prose(self, frag: Fragment) -> None:
        t = frag.text
        low = t.lower()
        m = re.search(r"number of heads\s*[:=]\s*(\d+)", low)
        if m:
            self._setting(frag, "h", int(m.group(1)))
            return
        m = re.search(r"sequence length\s*[:=]\s*(\d+)", low)
        if m:
            self._setting(frag, "n", int(m.group(1)))
            return
        if re.search(r"\bone\s*\**\s+token\b", low):
            self._setting(frag, "n", 1)
            return
        m = re.search(r"model dimension\s*[:=]\s*(\d+)", low)
        if m:
            self._setting(frag, "d_model", int(m.group(1)))
            return
        m = re.search(r"head dimension\s*[:=]\s*(\d+)", low)
        if m:
            self._setting(frag, "d_k", int(m.group(1)))
            return
        m = re.search(r"shape\s*:?\s*\(\s*(\d+)\s*,\s*(\d+)\s*\)", t, re.I)
        if m:
            self._shape_statement(frag, (int(m.group(1)), int(m.group(2))))

    def _setting(self, frag: Fragment, dim: str, value: int) -> None:
        self.dims[dim] = value
        self.dim_lines[dim] = frag.line
        if dim in ("d_model", "h"):
            self.dims.pop("d_k", None)  # a new setting starts a new example: d_k follows d_model / h
            if "d_model" in self.dims and "h" in self.dims:
                same_setup = abs(self.dim_lines.get("d_model", 0) - self.dim_lines.get("h", 0)) <= 3
                if self.dims["d_model"] % self.dims["h"] and same_setup:
                    self.emit(frag, "inconsistent", f"h={self.dims['h']} does not divide "
                                                    f"d_model={self.dims['d_model']}: no head width d_k fits")
                    return
                if self.dims["d_model"] % self.dims["h"] == 0:
                    self.dims["d_k"] = self.dims["d_model"] // self.dims["h"]
        self.emit(frag, "correct", f"setting: {dim} = {value}")

    def _shape_statement(self, frag: Fragment, shape: tuple[int, int]) -> None:
        math_here = re.search(r"\$([^$]+)\$", frag.context)
        subject = None
        if math_here and "=" in math_here.group(1):
            subject = canon(math_here.group(1).split("=")[0], self.head)
        subject = subject or (self.subject if self.subject and self.subject not in self.shapes else None)
        if subject is None and self.last is not None:
            subject = self.last[0]
        if subject is None:
            self.emit(frag, "unchecked", "a shape with no matrix it could belong to")
            return
        known = self.shapes.get(subject)
        if known is None and subject == "X" and {"n", "d_model"} <= set(self.dims):
            known = (self.dims["n"], self.dims["d_model"])
        if known is None:
            self.declared[subject] = (shape, frag.line, len(self.emitted))
            self.shapes.setdefault(subject, shape)
            expect = self._expected_weight_shape(subject)
            msg = f"declared: {subject} is {shape[0]} x {shape[1]}"
            if expect is not None and expect != shape:
                self.emit(frag, "inconsistent", msg + f", but d_model x d_k = {expect[0]} x {expect[1]}",
                          f"({expect[0]}, {expect[1]})")
            else:
                self.emit(frag, "correct", msg + (" (= d_model x d_k)" if expect else ""))
            return
        if tuple(known) == shape:
            self.emit(frag, "correct", f"{subject} is {shape[0]} x {shape[1]}")
        else:
            self.emit(frag, "wrong", f"{subject} is {known[0]} x {known[1]}, not {shape[0]} x {shape[1]}",
                      f"({known[0]}, {known[1]})")

    def _expected_weight_shape(self, name: str) -> tuple[int, int] | None:
        if re.fullmatch(r"W_[QKV]\d*", name) and {"d_model", "d_k"} <= set(self.dims):
            return (self.dims["d_model"], self.dims["d_k"])
        return None

    # ----- code blocks -------------------------------------------------------------------------
    def _flush_rows(self) -> None:
        if not self.rows:
            return
        line, first = self.rows[0]
        M = ImmutableMatrix([r for _, r in self.rows])
        self.rows = []
        name = self.subject or "X"
        frag = Fragment("code", line, f"{name} (token rows)")
        self.set_value(name, M)
        self._check_input_shape(frag, name, M)

    def _check_input_shape(self, frag: Fragment, name: str, M: ImmutableMatrix) -> None:
        if name == "X":
            want = (self.dims.get("n", M.rows), self.dims.get("d_model", M.cols))
            if M.shape == want:
                self.emit(frag, "correct", f"given: X is {M.rows} x {M.cols} (n x d_model)")
            else:
                self.emit(frag, "inconsistent", f"X is {M.rows} x {M.cols} but the settings say n x d_model = "
                                                f"{want[0]} x {want[1]}", f"({want[0]}, {want[1]})")
            return
        expect = self._expected_weight_shape(name)
        if expect is not None and expect != M.shape:
            self.emit(frag, "inconsistent", f"{name} is {M.rows} x {M.cols}, not d_model x d_k = {expect}")
        else:
            self.emit(frag, "correct", f"given: {name} ({M.rows} x {M.cols})")

    def _literal(self, text: str) -> ImmutableMatrix:
        try:
            data = json.loads(text.replace("\u2212", "-"))
        except json.JSONDecodeError:
            raise ParseError(f"cannot read {text!r} as a list of numbers") from None
        rows = data if data and isinstance(data[0], list) else [data]
        return ImmutableMatrix([[to_exact(x, "entry") for x in r] for r in rows])

    def _code(self, frag: Fragment) -> None:
        m = re.match(r"token\s*(\d+)\s*:\s*(\[.*\])", frag.text, re.I)
        if m:
            self.rows.append((frag.line, list(self._literal(m.group(2)))))
            return
        name_text, rhs = (s.strip() for s in frag.text.split("=", 1))
        name = canon(name_text, self.head)
        if rhs.startswith("["):
            stated = self._literal(rhs)
            self._stated_value(frag, name, stated, decimals_of(rhs), text=frag.text)
            return
        factors = [canon(f, self.head) for f in re.split(r"@|\*", rhs)]
        missing = [f for f in factors if f not in self.values]
        if missing:
            self.emit(frag, "correct", f"definition: {name} = {' @ '.join(factors)} ({', '.join(missing)} never "
                                       "given, so there is no value to check)")
            return
        value = self.values[factors[0]]
        for f in factors[1:]:
            if value.cols != self.values[f].rows:
                self.emit(frag, "wrong", f"{' @ '.join(factors)}: {value.shape} x {self.values[f].shape} -- inner "
                                         "dimensions differ")
                return
            value = value * self.values[f]
        self.set_value(name, value)
        self.emit(frag, "correct", f"computed: {name} = {show(value)}")

    # ----- values stated by the document --------------------------------------------------
    def _expected(self, name: str) -> tuple[Any, str] | None:
        """What the engine says ``name`` must be, from what is known (None if underivable)."""
        v = self.values
        m = re.fullmatch(r"X_head(\d+)", name)
        if m and "X" in v and "d_k" in self.dims:
            j, w = int(m.group(1)), self.dims["d_k"]
            return ImmutableMatrix(v["X"][:, (j - 1) * w:j * w]), f"X[:, {(j - 1) * w}:{j * w}]"
        m = re.fullmatch(r"([QKV])_(\d+)", name)
        if m:
            kind, k = m.groups()
            x = v.get(f"X_head{k}", v.get("X"))
            if x is not None and f"W_{kind}{k}" in v and x.cols == v[f"W_{kind}{k}"].rows:
                return x * v[f"W_{kind}{k}"], f"X W_{kind}^{k}"
        m = re.fullmatch(r"S_(\d+)", name)
        if m and f"Q_{m.group(1)}" in v and f"K_{m.group(1)}" in v:
            k = m.group(1)
            return v[f"Q_{k}"] * v[f"K_{k}"].T, f"Q_{k} K_{k}^T"
        m = re.fullmatch(r"S'_(\d+)", name)
        if m and f"S_{m.group(1)}" in v:
            S = v[f"S_{m.group(1)}"]
            d = self.dims.get("d_k", v.get(f"Q_{m.group(1)}", S).shape[1])
            return S.applyfunc(lambda x: x / sqrt(d)), f"S_{m.group(1)} / sqrt({d})"
        m = re.fullmatch(r"A_(\d+)", name)
        if m:
            k = m.group(1)
            if f"S'_{k}" in v:
                return explicit_softmax(v[f"S'_{k}"]), f"softmax(S'_{k})"
            if f"Q_{k}" in v and f"K_{k}" in v:
                S = v[f"Q_{k}"] * v[f"K_{k}"].T
                width = v[f"Q_{k}"].cols
                return (explicit_softmax(S.applyfunc(lambda x: x / sqrt(width))),
                        f"softmax(Q_{k} K_{k}^T / sqrt(d_k))")
        m = re.fullmatch(r"head_(\d+)", name)
        if m:
            k = m.group(1)
            a = self._expected(f"A_{k}")
            if a is not None and f"V_{k}" in v:
                return a[0] * v[f"V_{k}"], f"A_{k} V_{k}"
        if name == "Concat":
            heads = sorted((int(k[5:]), k) for k in v if re.fullmatch(r"head_\d+", k))
            if heads and [h for h, _ in heads] == list(range(1, len(heads) + 1)):
                blocks = []
                for _, key in heads:
                    found = self._expected(key)
                    blocks.append(found[0] if found is not None else v[key])
                return ImmutableMatrix(Matrix.hstack(*blocks)), "Concat(head_1, ..., head_h)"
        return None

    def _stated_value(self, frag: Fragment, name: str, stated: Any, places: int | None, text: str) -> None:
        expected = self._expected(name)
        if expected is not None:
            value, how = expected
            if isinstance(value, MatrixBase) and isinstance(stated, MatrixBase) and value.shape != stated.shape:
                self.emit(frag, "wrong", f"{name} = {how} is {value.shape[0]} x {value.shape[1]}, not "
                                         f"{stated.shape[0]} x {stated.shape[1]}", show(value, places), text)
            elif agrees(value, stated, places):
                where = precision_text(places)
                given = " (given the assumed " + ", ".join(sorted(self.assumed)) + ")" if self.assumed and \
                    name == "Concat" else ""
                self.emit(frag, "correct", f"{name} = {how} agrees{where}{given}", show(value, places), text)
            else:
                self.emit(frag, "wrong", f"{name} = {how} = {show(value, places)}, not what is stated",
                          show(value, places), text)
            self.set_value(name, value)
            return
        derived = re.fullmatch(r"(head|A|S'?)_\d+|Concat|Output", name)
        if derived:
            self.assumed.add(name)
            self.set_value(name, stated)
            self.emit(frag, "assumed", f"{name} is stated without the inputs needed to derive it", None, text)
            return
        self.set_value(name, stated)
        if name == "X" or re.fullmatch(r"W_[QKVO]\d*", name):
            self._check_input_shape(frag, name, ImmutableMatrix(stated))
        else:
            self.emit(frag, "correct", f"given: {name} = {show(stated)}", None, text)

    # ----- math --------------------------------------------------------------------------------
    def _math(self, frag: Fragment) -> None:
        from ._checker_math import check_math

        check_math(self, frag)

    def _unknown(self, key: str) -> Any:
        """A name the document has not given a value: a matrix if capitalised (``S``, ``Z_2``,
        ``\\mathrm{Scores}_1``), else a scalar; its shape is left symbolic."""
        from sympy import MatrixSymbol

        name = plain(key)
        if not name or not name[0].isalpha() or re.fullmatch(r"[a-z]\^.*", name):
            return None  # e^{x}, x^2: powers of a letter, not new names (e is Euler's number)
        if name[0].isupper() or name.lower().startswith(("head", "concat", "multihead")):
            return MatrixSymbol(name, Symbol(f"r_{name}", positive=True, integer=True),
                                Symbol(f"c_{name}", positive=True, integer=True))
        return Symbol(name) if len(name) > 1 else None

    def table(self, text: str) -> SymbolTable:
        """A reader table for ``text``: each atom the document already knows, by value."""
        base = _base_table()
        table = SymbolTable(dict(base.entries), base.d_k, base.head_index, self._unknown)
        tokens = _tokens(_normalise(text))
        for i in range(len(tokens)):
            atom = _atom_at(tokens, i)
            if atom is None:
                continue
            key = _canonical(*atom[:4])
            p = plain(key)
            if p in _DIMS and _DIMS[p] in self.dims:
                table.entries[key] = Integer(self.dims[_DIMS[p]])
                if _DIMS[p] == "d_k":
                    table.d_k = Integer(self.dims["d_k"])
                continue
            name = canon(key, self.head)
            if name in self.values:
                table.entries[key] = self.values[name]
        return table

