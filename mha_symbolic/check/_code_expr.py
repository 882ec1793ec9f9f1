r"""Python code of a document (NumPy, PyTorch, SciPy) read as SymPy matrix expressions, through ``ast`` only.

Explanation
===========

:func:`code_expression` reads the source of one expression (the right-hand side of an
assignment) and builds the SymPy object it computes.  Names go through a ``resolve(name, index)``
callback supplied by the document model (``W_q[0]`` asks for ``("W_q", 0)``).  The reading is exact:
``x / np.sqrt(d)`` and ``x * d ** -0.5`` become :class:`~mha_symbolic.scaling.ScaledScores` (the
model's scaled scores), a row-wise softmax becomes :class:`~mha_symbolic.softmax.Softmax`, a
column-wise one (``axis=0``, ``dim=-2``) ``Softmax(x.T).T`` so the judge can tell them apart, and
concatenation a :class:`~sympy.matrices.expressions.BlockMatrix`.  A construct outside this list
raises :class:`~mha_symbolic.errors.ParseError` naming it; two matrices that cannot be multiplied
raise :class:`~mha_symbolic.errors.ShapeError`.  Nothing is ``eval``'d or ``sympify``'d.

Examples
========

>>> from sympy import MatrixSymbol, Symbol
>>> from mha_symbolic.check._code_expr import code_expression
>>> names = {"Q": MatrixSymbol("Q", 3, 2), "K": MatrixSymbol("K", 3, 2), "dk": Symbol("d_k")}
>>> code_expression("softmax(Q @ K.T / np.sqrt(dk), axis=-1)", lambda name, index: names.get(name))
softmax(Q*K.T / sqrt(d_k))
>>> code_expression("torch.softmax(Q @ K.T, dim=0)", lambda name, index: names.get(name))
softmax(K*Q.T).T
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from typing import Any

from sympy import Basic, BlockMatrix, ImmutableMatrix, Integer, MatAdd, MatMul, Rational, floor, sqrt
from sympy.matrices import MatrixBase

from ..errors import ParseError, ShapeError
from ..scaling import ScaledScores
from ..softmax import Softmax

__all__ = ["code_expression"]

_MODULES = {"np", "numpy", "torch", "F", "nn", "functional", "math", "scipy", "special", "sp", "jnp", "jax", "tf"}
_MATMUL = {"matmul", "dot", "mm", "bmm"}
_CONCAT = {"concatenate", "concat", "cat", "hstack", "vstack"}
_ARRAY = {"array", "asarray", "tensor", "as_tensor", "Tensor", "FloatTensor"}
_TRANSPOSE_AXES = {(), (0, 1), (1, 0), (-2, -1), (-1, -2), (1, 2), (2, 1)}
#: softmax functions whose axis defaults to the last one; the others need it written
_LAST_AXIS_DEFAULT = {"softmax", "jax.nn.softmax", "tf.nn.softmax", "tf.math.softmax", "nn.softmax"}
_IGNORED_KEYWORDS = {"dtype", "requires_grad", "device", "keepdims"}


def code_expression(source: str, resolve: Callable[[str, int | None], Any]) -> Any:
    """The SymPy value of the Python expression ``source``; names through ``resolve(name, index)``.

    Supported: ``@``, ``np.matmul``/``np.dot``/``torch.matmul``/``.dot``; ``.T``,
    ``.transpose(-2, -1)``, ``np.transpose``; ``*`` and ``/`` by scalars, ``+``/``-`` of equal shapes,
    ``//`` and ``**`` of scalars; ``np.sqrt``/``math.sqrt``/``torch.sqrt``; ``softmax`` in its
    NumPy/SciPy/PyTorch spellings; ``np.concatenate``/``np.hstack``/``np.vstack``/``torch.cat``;
    slices ``X[:, 0:2]``; array literals (``np.array([[1, 2]])``: an ``ImmutableMatrix`` with exact
    entries; a 3-D literal gives a tuple of matrices).  A tuple ``a, b`` gives a tuple.

    >>> from sympy import MatrixSymbol
    >>> X, W = MatrixSymbol("X", 2, 4), MatrixSymbol("W_q", 4, 2)
    >>> code_expression("X @ W_q[0]", lambda name, i: {"X": X, ("W_q", 0): W}.get(name if i is None else (name, i)))
    X*W_q
    >>> code_expression("np.linalg.inv(X)", lambda name, i: X)
    Traceback (most recent call last):
    ...
    mha_symbolic.errors.ParseError: cannot read 'np.linalg.inv(X)': the function np.linalg.inv is not supported
    """
    if not isinstance(source, str):
        raise ParseError(f"code_expression needs source text, got {type(source).__name__}")
    try:
        tree = ast.parse(source.strip(), mode="eval")
    except SyntaxError as e:
        raise ParseError(f"cannot read {source.strip()!r}: not a Python expression ({e.msg})") from None
    return _Reader(source.strip(), resolve).visit(tree.body)


def _is_matrix(x: Any) -> bool:
    return bool(getattr(x, "is_Matrix", False))


def _dotted(node: ast.AST) -> str | None:
    """``np.linalg.inv`` for an attribute chain on a name, else None."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        return ".".join([node.id, *reversed(parts)])
    return None


class _Reader:
    def __init__(self, source: str, resolve: Callable[[str, int | None], Any]):
        self.source = source
        self.resolve = resolve

    def fail(self, what: str) -> ParseError:
        return ParseError(f"cannot read {self.source!r}: {what}")

    # ----- dispatch -------------------------------------------------------------------------------------
    def visit(self, node: ast.AST) -> Any:
        method = getattr(self, f"visit_{type(node).__name__}", None)
        if method is None:
            raise self.fail(f"{_describe(node)} is not supported")
        return method(node)

    def visit_Constant(self, node: ast.Constant) -> Any:
        v = node.value
        if isinstance(v, bool) or not isinstance(v, (int, float)):
            raise self.fail(f"the constant {v!r} is not a number")
        return Integer(v) if isinstance(v, int) else Rational(repr(v))

    def visit_Name(self, node: ast.Name) -> Any:
        if node.id in _MODULES:
            raise self.fail(f"the module {node.id} used as a value")
        return self.lookup(node.id, None)

    def lookup(self, name: str, index: int | None) -> Any:
        value = self.resolve(name, index)
        if value is None:
            raise self.fail(f"unknown name {name}" + (f"[{index}]" if index is not None else ""))
        return _sympy(value, self)

    def visit_Tuple(self, node: ast.Tuple) -> Any:
        return tuple(self.visit(e) for e in node.elts)

    def visit_List(self, node: ast.List) -> Any:
        return self.literal(node)

    def visit_UnaryOp(self, node: ast.UnaryOp) -> Any:
        value = self.visit(node.operand)
        if isinstance(node.op, ast.USub):
            return _shallow_product(-1, value) if _is_matrix(value) else -value
        if isinstance(node.op, ast.UAdd):
            return value
        raise self.fail(f"the operator {type(node.op).__name__} is not supported")

    def visit_BinOp(self, node: ast.BinOp) -> Any:
        a, b = self.visit(node.left), self.visit(node.right)
        op = type(node.op).__name__
        if op == "MatMult":
            return self.matmul(a, b)
        if op == "Mult":
            return self.times(a, b)
        if op == "Div":
            if _is_matrix(b):
                raise self.fail("elementwise division by a matrix is not supported")
            if _is_matrix(a) and b.is_Pow and b.exp == Rational(1, 2):
                return ScaledScores(a, b.base)
            return self.times(a, 1 / b)
        if op in ("Add", "Sub"):
            if _is_matrix(a) != _is_matrix(b):
                raise self.fail("adding a scalar to a matrix (broadcasting) is not supported")
            sizes = (*getattr(a, "shape", ()), *getattr(b, "shape", ()))
            if _is_matrix(a) and a.shape != b.shape and all(isinstance(x, (int, Integer)) for x in sizes):
                raise ShapeError(f"{self.source}: cannot add {a.shape} and {b.shape}")
            if not _is_matrix(a):
                return a + b if op == "Add" else a - b
            return MatAdd(a, b if op == "Add" else _shallow_product(-1, b)).doit(deep=False)
        if op in ("Pow", "FloorDiv"):
            if _is_matrix(a) or _is_matrix(b):
                raise self.fail(f"elementwise {'power' if op == 'Pow' else 'floor division'} of a matrix "
                                "is not supported")
            return a**b if op == "Pow" else floor(a / b)
        raise self.fail(f"the operator {op} is not supported")

    def visit_Attribute(self, node: ast.Attribute) -> Any:
        if node.attr in ("T", "mT"):
            value = self.visit(node.value)
            if not _is_matrix(value):
                raise self.fail(f".{node.attr} of a scalar")
            return value.T
        raise self.fail(f"the attribute .{node.attr} is not supported")

    def visit_Subscript(self, node: ast.Subscript) -> Any:
        index = node.slice
        number = _int_literal(index)
        if isinstance(node.value, ast.Name) and number is not None:
            value = self.resolve(node.value.id, number)
            if value is not None:
                return _sympy(value, self)
            whole = self.resolve(node.value.id, None)
            if whole is None or not _is_matrix(_sympy(whole, self)):
                raise self.fail(f"unknown name {node.value.id}[{number}]")
            return _sympy(whole, self)[number:number + 1 if number != -1 else None, :]
        value = self.visit(node.value)
        if not _is_matrix(value):
            raise self.fail("indexing a value that is not a matrix")
        parts = index.elts if isinstance(index, ast.Tuple) else [index]
        if len(parts) > 2 or not any(isinstance(p, ast.Slice) for p in parts):
            raise self.fail(f"the index [{ast.unparse(index)}] is not supported (only slices of a matrix)")
        keys = [self.slice(p) for p in parts]
        if len(keys) == 1:
            keys.append(slice(None))
        return value[keys[0], keys[1]]

    def slice(self, node: ast.AST) -> slice:
        if isinstance(node, ast.Constant) and node.value is Ellipsis:
            raise self.fail("an Ellipsis (...) index is not supported")
        if isinstance(node, ast.Slice):
            bounds = [None if b is None else self.visit(b) for b in (node.lower, node.upper, node.step)]
            for b in bounds:
                if b is not None and (_is_matrix(b) or not getattr(b, "is_integer", False)):
                    raise self.fail(f"the slice bound {b} is not an integer")
            return slice(*bounds)
        k = self.visit(node)
        if _is_matrix(k) or not getattr(k, "is_integer", False):
            raise self.fail(f"the index {ast.unparse(node)} is not an integer")
        return slice(k, k + 1)

    # ----- calls -------------------------------------------------------------------------------------
    def visit_Call(self, node: ast.Call) -> Any:
        if any(isinstance(a, ast.Starred) for a in node.args) or any(k.arg is None for k in node.keywords):
            raise self.fail("*args / **kwargs in a call are not supported")
        path = _dotted(node.func)
        root = path.split(".")[0] if path else None
        if path is not None and (root in _MODULES or "." not in path):
            return self.function(path, node)
        if isinstance(node.func, ast.Attribute):
            return self.method(node.func.attr, self.visit(node.func.value), node)
        raise self.fail(f"calling {ast.unparse(node.func)} is not supported")

    def keywords(self, node: ast.Call, allowed: set[str]) -> dict[str, ast.AST]:
        out: dict[str, ast.AST] = {}
        for k in node.keywords:
            if k.arg in _IGNORED_KEYWORDS:
                continue
            if k.arg not in allowed:
                raise self.fail(f"the keyword {k.arg}= is not supported")
            out[str(k.arg)] = k.value
        return out

    def function(self, path: str, node: ast.Call) -> Any:
        last = path.split(".")[-1]
        args = node.args
        if last == "softmax":
            kw = self.keywords(node, {"axis", "dim"})
            axis_node = kw.get("axis", kw.get("dim", args[1] if len(args) > 1 else None))
            if len(args) < 1 or len(args) > 2:
                raise self.fail(f"{path} takes the matrix and an axis")
            default = -1 if path in _LAST_AXIS_DEFAULT else None
            return self.softmax(self.visit(args[0]), axis_node, default, path)
        kw = self.keywords(node, {"axis", "dim", "axes"})
        if last in _MATMUL and len(args) == 2 and not kw:
            return self.matmul(self.visit(args[0]), self.visit(args[1]))
        if last == "sqrt" and len(args) == 1 and not kw:
            value = self.visit(args[0])
            if _is_matrix(value):
                raise self.fail(f"{path} of a matrix (elementwise) is not supported")
            return sqrt(value)
        if last in ("transpose", "swapaxes", "t") and args:
            axes = tuple(_int_literal(a) for a in args[1:])
            if "axes" in kw:
                axes = tuple(_int_literal(a) for a in getattr(kw["axes"], "elts", []))
            if None in axes or axes not in _TRANSPOSE_AXES or (last == "swapaxes" and not axes):
                raise self.fail(f"{path} with axes {ast.unparse(node)} is not a matrix transpose")
            return self.transpose(self.visit(args[0]))
        if last in _CONCAT and len(args) in (1, 2):
            if not isinstance(args[0], (ast.List, ast.Tuple)):
                raise self.fail(f"{path} of {_describe(args[0])} (write the blocks as a list)")
            axis_node = kw.get("axis", kw.get("dim", args[1] if len(args) > 1 else None))
            default = {"hstack": 1, "vstack": 0}.get(last, 0)
            axis = default if axis_node is None else _int_literal(axis_node)
            if last in ("hstack", "vstack") and axis_node is not None or axis not in (-2, -1, 0, 1):
                raise self.fail(f"{path} along axis {axis_node and ast.unparse(axis_node)} is not supported")
            return self.concat([self.visit(e) for e in args[0].elts], horizontal=axis in (1, -1))
        if last in _ARRAY and len(args) == 1 and not kw:
            return self.literal(args[0])
        raise self.fail(f"the function {path} is not supported")

    def method(self, name: str, value: Any, node: ast.Call) -> Any:
        args = node.args
        if name == "softmax":
            kw = self.keywords(node, {"dim", "axis"})
            axis_node = kw.get("dim", kw.get("axis", args[0] if args else None))
            return self.softmax(value, axis_node, None, f".{name}()")
        self.keywords(node, set())
        if name in ("transpose", "permute", "t", "swapaxes"):
            axes = tuple(_int_literal(a) for a in args)
            ok = axes in _TRANSPOSE_AXES or name == "permute" and axes in {(0, 2, 1), (1, 0)}
            if None in axes or not ok or (name in ("permute", "swapaxes") and not axes):
                raise self.fail(f".{name}({', '.join(ast.unparse(a) for a in args)}) is not a matrix transpose")
            return self.transpose(value)
        if name in _MATMUL and len(args) == 1:
            return self.matmul(value, self.visit(args[0]))
        if name == "sqrt" and not args and not _is_matrix(value):
            return sqrt(value)
        raise self.fail(f"the method .{name}() is not supported")

    # ----- operations --------------------------------------------------------------------------------
    def matmul(self, a: Any, b: Any) -> Any:
        if not (_is_matrix(a) and _is_matrix(b)):
            raise self.fail("a matrix product with a scalar (use * for scalars)")
        inner = a.shape[1] - b.shape[0]
        if inner != 0 and getattr(inner, "is_number", isinstance(inner, int)):
            raise ShapeError(f"{self.source}: {tuple(a.shape)} @ {tuple(b.shape)} — inner dimensions "
                             f"{a.shape[1]} and {b.shape[0]} differ")
        return _shallow_product(a, b)

    def times(self, a: Any, b: Any) -> Any:
        if _is_matrix(a) and _is_matrix(b):
            raise self.fail("the elementwise product * of two matrices is not supported (use @)")
        matrix, scalar = (a, b) if _is_matrix(a) else (b, a)
        if _is_matrix(matrix):
            d = _root_divisor(scalar)
            if d is not None:
                return ScaledScores(matrix, d)
            return _shallow_product(scalar, matrix)
        return a * b

    def transpose(self, value: Any) -> Any:
        if not _is_matrix(value):
            raise self.fail("transposing a scalar")
        return value.T

    def softmax(self, value: Any, axis_node: ast.AST | None, default: int | None, name: str) -> Any:
        if not _is_matrix(value):
            raise self.fail(f"{name} of a scalar")
        if axis_node is None:
            if default is None:
                raise self.fail(f"{name} without an axis (it does not normalise each row)")
            axis: int | None = default
        else:
            axis = _int_literal(axis_node)
        if axis in (-1, 1):
            return Softmax(value)
        if axis in (-2, 0):
            return Softmax(value.T).T
        raise self.fail(f"{name} along axis {ast.unparse(axis_node) if axis_node else axis} of a matrix")

    def concat(self, blocks: list[Any], horizontal: bool) -> Any:
        if not blocks or not all(_is_matrix(b) for b in blocks):
            raise self.fail("concatenating values that are not matrices")
        try:
            return BlockMatrix([blocks] if horizontal else [[b] for b in blocks])
        except ValueError:
            shapes = ", ".join(str(tuple(b.shape)) for b in blocks)
            raise ShapeError(f"{self.source}: blocks {shapes} cannot be placed "
                             f"{'side by side' if horizontal else 'one above the other'}") from None

    def literal(self, node: ast.AST) -> Any:
        """A nested list of numbers: 1-D a one-row matrix, 2-D a matrix, 3-D a tuple of matrices."""
        def rows(n: ast.AST) -> Any:
            if isinstance(n, (ast.List, ast.Tuple)):
                return [rows(e) for e in n.elts]
            value = self.visit(n)
            if _is_matrix(value) or not getattr(value, "is_number", False):
                raise self.fail(f"the array entry {ast.unparse(n)} is not a number")
            return value

        data = rows(node)
        if not isinstance(data, list) or not data:
            raise self.fail("an empty or scalar array")
        depth = 1 + (isinstance(data[0], list)) + (isinstance(data[0], list) and bool(data[0])
                                                    and isinstance(data[0][0], list))
        try:
            if depth == 1:
                return ImmutableMatrix([data])
            if depth == 2:
                return ImmutableMatrix(data)
            return tuple(ImmutableMatrix(m) for m in data)
        except (ValueError, TypeError):
            raise self.fail("a ragged array (rows of different lengths)") from None


def _shallow_product(*factors: Any) -> Any:
    """The product flattened but not evaluated inside (SymPy's ``@`` would ``doit`` every factor and
    dissolve ``ScaledScores``); explicit factors are still multiplied out."""
    return MatMul(*factors).doit(deep=False)


def _root_divisor(scalar: Any) -> Any:
    """``d`` when ``scalar`` is ``1/sqrt(d)`` (``d**(-1/2)``, or ``sqrt(3)/3`` for ``d = 3``), else None."""
    if not isinstance(scalar, Basic) or _is_matrix(scalar):
        return None
    if scalar.is_Pow and scalar.exp == Rational(-1, 2):
        return scalar.base
    if scalar.is_number and scalar.is_positive and not scalar.is_Rational:
        d = 1 / scalar**2
        if d.is_Integer and d > 1:
            return d
    return None


def _int_literal(node: ast.AST | None) -> int | None:
    if isinstance(node, ast.Constant) and isinstance(node.value, int) and not isinstance(node.value, bool):
        return node.value
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        inner = _int_literal(node.operand)
        return -inner if inner is not None else None
    return None


def _sympy(value: Any, reader: _Reader) -> Any:
    """What ``resolve`` returned, as a SymPy object (never from text)."""
    if isinstance(value, (bool, str)):
        raise reader.fail(f"the resolver gave {type(value).__name__} {value!r}, not a SymPy object")
    if isinstance(value, int):
        return Integer(value)
    if isinstance(value, float):
        return Rational(repr(value))
    if isinstance(value, (Basic, MatrixBase, tuple)):
        return value
    if hasattr(value, "tolist"):  # a NumPy array
        return ImmutableMatrix(value.tolist())
    raise reader.fail(f"the resolver gave {type(value).__name__}, not a SymPy object")


def _describe(node: ast.AST) -> str:
    names = {"ListComp": "a list comprehension", "GeneratorExp": "a generator expression", "Lambda": "a lambda",
             "Compare": "a comparison", "BoolOp": "a boolean operation", "IfExp": "a conditional expression",
             "Dict": "a dict", "Set": "a set", "JoinedStr": "an f-string", "Starred": "a starred expression",
             "NamedExpr": "an assignment expression", "Await": "await", "DictComp": "a dict comprehension",
             "SetComp": "a set comprehension"}
    return names.get(type(node).__name__, f"the construct {type(node).__name__} ({ast.unparse(node)})")
