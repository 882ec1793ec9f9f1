r"""Inline code that holds a formula (``\`q·k_2 = 1*0 + 2*2 = 4\```, ``\`softmax([2, 1]) ≈ [0.7311, 0.2689]\```),
written as the LaTeX the math reader reads: one reader of the code notation, so that a formula in backticks is
judged like the same formula between dollars.

Each side of the span's relation chain (``=``, ``≈``, ``<=``, ...) is read by :mod:`ast` (never run): numbers,
names that are one letter (``q``, ``k_1``, ``K1``) or a size of the model (``d_k``, ``d_model``, ``n_heads``),
``+ - * / // ** ^ @``, ``.T``, lists (vectors and matrices) and the calls ``sqrt``, ``exp``, ``log``, ``softmax``,
``max``, ``min`` (with or without a module: ``np.sqrt``).  Anything else -- a program's names (``scores1``), a
method call, a tuple (a shape, read elsewhere) -- leaves the span code.  A side that only sketches
(``[1/(1 + e^-1), ...]``) is dropped and its neighbours compared with the weaker relation.

>>> code_formula("q·k_2 = 1*0 + 2*2 = 4")
'q \\cdot k_{2} = 1 \\cdot 0 + 2 \\cdot 2 = 4'
>>> print(code_formula("softmax([2, 1]) = [1/(1 + e^-1), ...] ≈ [0.7311, 0.2689]"))
\mathrm{softmax}\left(\begin{bmatrix}2 & 1\end{bmatrix}\right) \approx \begin{bmatrix}0.7311 & 0.2689\end{bmatrix}
>>> code_formula("d_model = 512"), code_formula("scores = Q @ K.T"), code_formula("x.sum()")
('d_{model} = 512', None, None)
>>> print(code_formula("dk = d_model // h = 3"))
d_k = \lfloor d_{model} / h \rfloor = 3
"""

from __future__ import annotations

import ast
import re

from .model import dim_name

__all__ = ["code_formula"]

#: the relations a chain of sides is cut at, as LaTeX (longest first)
_RELATIONS = {"==": "=", "<=": r"\le", ">=": r"\ge", "!=": r"\ne", "≈": r"\approx", "≤": r"\le", "≥": r"\ge",
              "≠": r"\ne", "=": "=", "<": "<", ">": ">", "~": r"\approx"}
_CUT = re.compile("(" + "|".join(re.escape(r) for r in _RELATIONS) + ")")
_FUNCTIONS = {"sqrt": r"\sqrt", "exp": r"\exp", "log": r"\log", "softmax": r"\mathrm{softmax}", "max": r"\max",
              "min": r"\min"}
_MODULES = {"np", "numpy", "math", "torch", "F", "jnp", "sp", "scipy", "special"}
#: the longest span read as a formula (the parse is linear, but a span longer than any formula is code)
_LONGEST = 400
_PRECEDENCE = {ast.Add: 1, ast.Sub: 1, ast.Mult: 2, ast.MatMult: 2, ast.Div: 2, ast.FloorDiv: 2, ast.Pow: 4}


class _NotAFormula(Exception):
    """The span is code, not a formula written in code."""


def code_formula(source: str) -> str | None:
    """The span ``source`` as LaTeX when it is a relation chain of formulas written in code, else None."""
    if len(source) > _LONGEST:
        return None  # a page of code in backticks is code: read only what a formula's length can be
    text = source.strip().replace("·", "*").replace("⋅", "*").replace("×", "*").replace("−", "-").replace("√", "sqrt")
    text = re.sub(r"(?<=\d),(?=\d{3}(?!\d))", "", text) if not re.search(r"[\[(]", text) else text  # 1,600 * 4
    if "\n" in text or "`" in text:
        return None
    parts = _CUT.split(text)
    sides, rels = [p.strip() for p in parts[0::2]], [_RELATIONS[r] for r in parts[1::2]]
    if not rels or any(not s for s in sides):
        return None
    out: list[str] = []
    pending: str | None = None
    for k, side in enumerate(sides):
        if "..." in side or "…" in side:
            if k == 0 or k == len(sides) - 1:
                return None
            pending = rels[k] if rels[k] != "=" else (pending or rels[k - 1])  # the weaker of the two relations
            continue
        try:
            side = side.replace("^", "**")
            tex = _Writer(side).write(ast.parse(side, mode="eval").body)
        except (SyntaxError, ValueError, _NotAFormula, RecursionError):
            return None
        if out:
            rel = rels[k - 1] if pending is None else (pending if rels[k - 1] == "=" else rels[k - 1])
            out.append(rel)
        out.append(tex)
        pending = None
    return " ".join(out)


class _Writer:
    """LaTeX of one side, read by :mod:`ast`."""

    def __init__(self, source: str):
        self.source = source

    def write(self, node: ast.AST, parent: int = 0) -> str:
        if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)) and not isinstance(node.value, bool):
            return str(node.value) if isinstance(node.value, int) else self.decimal(node)
        if isinstance(node, ast.Name):
            return _name(node.id)
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
            return ("-" if isinstance(node.op, ast.USub) else "") + self.write(node.operand, 3)
        if isinstance(node, ast.BinOp) and type(node.op) in _PRECEDENCE:
            return self.binary(node, parent)
        if isinstance(node, ast.Attribute) and node.attr == "T":
            return self.write(node.value, 5) + "^T"
        if isinstance(node, ast.List):
            return self.matrix(node)
        if isinstance(node, ast.Call) and not node.keywords and len(node.args) == 1:
            return self.call(node)
        raise _NotAFormula(type(node).__name__)

    def decimal(self, node: ast.Constant) -> str:
        """A decimal as written (``1.4142``, ``0.50``): its written digits are its precision."""
        text = ast.get_source_segment(self.source, node) or ""
        if not re.fullmatch(r"\d*\.\d*", text):
            raise _NotAFormula(f"the number {text!r}")
        return text

    def binary(self, node: ast.BinOp, parent: int) -> str:
        mine = _PRECEDENCE[type(node.op)]
        if isinstance(node.op, ast.Pow):
            base = self.write(node.left, 5)
            return f"{base}^{{{self.write(node.right)}}}"
        if isinstance(node.op, ast.FloorDiv):  # d_model // h
            return f"\\lfloor {self.write(node.left, mine)} / {self.write(node.right, mine + 1)} \\rfloor"
        left, right = self.write(node.left, mine), self.write(node.right, mine + 1)
        op = {ast.Add: " + ", ast.Sub: " - ", ast.Mult: r" \cdot ", ast.MatMult: " ", ast.Div: " / "}[type(node.op)]
        tex = left + op + right
        return f"\\left({tex}\\right)" if mine < parent else tex

    def matrix(self, node: ast.List) -> str:
        rows = node.elts
        if rows and all(isinstance(r, ast.List) for r in rows):
            cells = [[self.write(x) for x in r.elts] for r in rows]  # type: ignore[attr-defined]
        else:
            cells = [[self.write(x) for x in rows]]
        if not cells or not cells[0] or len({len(r) for r in cells}) != 1:
            raise _NotAFormula("ragged list")
        return r"\begin{bmatrix}" + r" \\ ".join(" & ".join(r) for r in cells) + r"\end{bmatrix}"

    def call(self, node: ast.Call) -> str:
        func = node.func
        if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id in _MODULES:
            name = func.attr
        elif isinstance(func, ast.Name):
            name = func.id
        else:
            raise _NotAFormula("method call")
        if name not in _FUNCTIONS:
            raise _NotAFormula(name)
        arg = self.write(node.args[0])
        if name == "sqrt":
            return f"\\sqrt{{{arg}}}"
        return f"{_FUNCTIONS[name]}\\left({arg}\\right)"


def _name(name: str) -> str:
    """``q``, ``k_1``, ``K1``, ``e`` as themselves; a size of the model (``d_model``, ``n_heads``) by its name;
    a program's word (``scores``) is no formula."""
    size = dim_name(name)
    if size is not None:
        return {"d_model": "d_{model}"}.get(size, size)
    m = re.fullmatch(r"([A-Za-z])_?([0-9]+|[a-z])?", name)
    if m is None:
        raise _NotAFormula(name)
    return m.group(1) + (f"_{{{m.group(2)}}}" if m.group(2) else "")
