r"""Code of a document traced through its statements, never run: shapes, and values where the inputs are literals.

Explanation
===========

A tutorial's code says what it computes twice: once in the statements, and again in what the author wrote
beside them -- shape comments (``# (B, h, n, d_k) = (2, 16, 10, 128)``), printed values in comments
(``# tensor([[1., 2., 5.]])``) and, in a notebook, the printed output of the cell.  :class:`Tracer` reads
the statements with :mod:`ast` and follows, for every name, what it holds:

* a size (a SymPy integer, or a symbol named after the size when the code never gives it: ``B``, ``d_model``);
* a :class:`Tensor` -- its shape, one size per axis, and its values as a NumPy array when every input was a
  literal (``np.array([[1, 0], [0, 1]])``) and the array is small;
* a :class:`Linear` layer (``nn.Linear(d_in, d_out)``), or a function the document defined (its body is
  traced again for each call).

The operations followed are the ones attention code is written with: creation (``torch.randn(B, n, d)``,
``np.zeros((n, d))``, ``np.eye``, a random generator's ``standard_normal``), ``@`` and ``matmul``,
broadcasting arithmetic, ``view``/``reshape`` (with ``-1``), ``transpose``/``permute``/``.T``/``.mT``,
``softmax``/``exp``/``sqrt``/``sum``/``max``/``mean`` along an axis, ``cat``/``stack``, ``unsqueeze``,
``repeat_interleave``, ``masked_fill``, ``triu``/``tril``, indexing, ``.shape``/``.size()`` and a
``Linear`` applied to a tensor.  Anything else makes the name unknown: it is never guessed.  A statement whose
shapes cannot work (an inner size mismatch in ``@``, a ``view`` to another number of elements, a
``Linear(768, 64)`` applied along an axis of 10) is a finding of its own.

What the author wrote beside the code is then a claim about the traced value:

* a shape comment on a statement's line is the shape of what it assigns (a chain ``(B, n, d) = (2, 10, 64)``
  states it twice; after ``->`` the last shape is the result; ``weight (1024, 4096)`` is a layer's weight; a
  ``name: (...)`` names another variable).  A shape that the code does not determine (a function's argument)
  is taken from its comment as given;
* a printed value in a comment, and a notebook cell's printed output, are the values the code prints: the
  trace renders what each ``print`` and the cell's last expression would show and compares the numbers at the
  precision they are printed with (``0.0900`` stands for [0.08995, 0.09005]; float32 arithmetic is allowed
  for).

A claim is ``correct`` when it agrees with the trace, ``wrong`` when a size or value differs (``inconsistent``
when the trace itself rests on a shape taken from another comment), and nothing at all when either side is
unknown.  A printout is compared only while the words printed around the numbers match the rendering, so a
printout the trace cannot follow is left alone.  Nothing of the document is evaluated: literals are read with
:func:`ast.literal_eval`, and NumPy is applied to those numbers only.

Examples
========

>>> t = Tracer()
>>> code = ("import torch\nB, n, d, h = 2, 10, 64, 4\nx = torch.randn(B, n, d)\n"
...         "q = x.view(B, n, h, d // h)  # (2, 10, 4, 16)\nk = q.transpose(1, 2)  # (B, h, n, d_k) = (2, 4, 10, 15)")
>>> for f in t.run(code):
...     print(f.line, f.status, f.message)
4 correct the code gives q the shape (2, 10, 4, 16)
5 wrong the code gives k the shape (2, 4, 10, 16), not (2, 4, 10, 15)
>>> [f.status for f in Tracer().run("import numpy as np\nA = np.array([[1., 2.], [3., 4.]])\nprint(A.sum(axis=1))",
...                                  printed="[3. 7.]\n")]
['correct']
"""

from __future__ import annotations

import ast
import io
import math
import re
import tokenize
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from sympy import Expr, Float, Integer, S, Symbol, floor, nsimplify, simplify

__all__ = ["Finding", "Linear", "Tensor", "Tracer"]

#: arrays larger than this keep their shape only (their values are not computed)
MAX_VALUES = 100_000
#: how deep calls of the document's own functions are followed
MAX_DEPTH = 6
_CREATE = {"randn", "rand", "zeros", "ones", "empty", "standard_normal", "random", "normal", "uniform",
           "random_sample", "full"}
_ELEMENTWISE = {"exp", "sqrt", "tanh", "abs", "log", "relu", "sigmoid", "gelu", "contiguous", "float", "double",
                "detach", "clone", "numpy", "cpu", "cuda", "to", "copy", "astype", "type_as", "dropout", "half",
                "bfloat16", "requires_grad_", "tolist"}
_REDUCE = {"sum", "mean", "max", "min", "amax", "amin", "std", "var", "prod", "argmax", "argmin"}


class _TorchSize(tuple):  # type: ignore[type-arg]
    """The shape of a torch tensor (printed ``torch.Size([2, 3])``)."""


#: the constants of the numeric modules a document's code may use as values
_CONSTANTS = {"inf": S.Infinity, "pi": S.Pi, "e": S.Exp1}


class Unknown(Exception):
    """What a statement computes is not followed (an operation outside the list, an unknown input)."""


class CodeError(Exception):
    """A statement whose shapes cannot work."""


@dataclass(frozen=True)
class Tensor:
    """A traced array: one size per axis, its values when they follow from literals, and where it came from."""

    shape: tuple[Any, ...]
    values: Any = field(default=None, compare=False)
    claimed: bool = False  # rests on a shape taken from a comment
    torch: bool = False

    def known(self) -> bool:
        return all(isinstance(s, Integer) for s in self.shape)


@dataclass(frozen=True)
class Linear:
    """``nn.Linear(fan_in, fan_out)``: applied along the last axis; its weight is ``fan_out x fan_in``."""

    fan_in: Any
    fan_out: Any
    bias: bool = True


@dataclass(frozen=True)
class Function:
    node: ast.FunctionDef


@dataclass(frozen=True)
class Finding:
    """A verdict on one line of the code (``output``: a line of the cell's printed output)."""

    line: int
    text: str
    status: str
    message: str
    kind: str
    expected: str | None = None
    output: bool = False


def _shape_text(shape: tuple[Any, ...]) -> str:
    return "(" + ", ".join(str(s) for s in shape) + ("," if len(shape) == 1 else "") + ")"


def _size(value: Any) -> Expr:
    if isinstance(value, Expr):
        return value
    raise Unknown("not a size")


def _int(value: Any) -> int:
    if isinstance(value, Integer):
        return int(value)
    if isinstance(value, Expr) and value.is_Integer:
        return int(value)
    raise Unknown("not a whole number")


def _same(a: Any, b: Any) -> bool | None:
    """Equal sizes (True), different (False), or not decidable (None)."""
    d = simplify(a - b)
    if d == 0:
        return True
    if d.is_number:
        return False
    return None


def _broadcast(a: tuple[Any, ...], b: tuple[Any, ...]) -> tuple[Any, ...]:
    out = []
    for x, y in zip(reversed((Integer(1),) * (len(b) - len(a)) + a), reversed((Integer(1),) * (len(a) - len(b)) + b),
                    strict=True):
        if x == 1:
            out.append(y)
        elif y == 1 or _same(x, y):
            out.append(x)
        elif _same(x, y) is False:
            raise CodeError(f"shapes {_shape_text(a)} and {_shape_text(b)} do not broadcast")
        else:
            raise Unknown("broadcast of unknown sizes")
    return tuple(reversed(out))


def _axis(axis: Any, ndim: int) -> int:
    k = _int(axis)
    if not -ndim <= k < ndim:
        raise CodeError(f"axis {k} of a tensor with {ndim} axes")
    return k % ndim


def _np(value: Any) -> Any:
    """The NumPy value of a traced tensor or scalar (None when unknown)."""
    if isinstance(value, Tensor):
        return value.values
    if isinstance(value, Expr) and value.is_number:
        return float(value) if not value.is_Integer else int(value)
    return None


class Tracer:
    """Follows the code of one document, block after block (a notebook's cells share their names)."""

    def __init__(self) -> None:
        self.env: dict[str, Any] = {}
        self.precision: int | None = None  # np.set_printoptions(precision=...)
        self.suppress = False
        self.depth = 0
        self.record = True
        self.comments: dict[int, str] = {}
        self.findings: list[Finding] = []
        self.printed: list[Any] | None = None  # what the block prints, in order (None: not followed)
        self.source_lines: list[str] = []
        self.members: dict[str, Any] = {}
        self.user_prints = False  # a function or class of the document prints: its calls print unknown lines
        self.doubted = False  # a printout contradicted the code as a whole: values are no longer compared
        self.confirmed: set[int] = set()  # lines of the printed output whose whole printed value the trace confirmed
        # every value each top-level name was given, in order (k before and after k = k.repeat_interleave(...)): what
        # prose or a table says of a name may be of any of them
        self.history: dict[str, list[Any]] = {}

    # ----- entry point --------------------------------------------------------------------------------------
    def run(self, source: str, printed: str | None = None) -> list[Finding]:
        """Trace ``source`` (one code block or cell) and judge its comments and its ``printed`` output."""
        self.findings, self.printed, self.confirmed = [], [], set()
        self.source_lines = source.split("\n")
        try:
            tree = ast.parse(_blank_magics(source))
        except (SyntaxError, ValueError, RecursionError):
            return []
        self.comments = _comments(source)
        last_value: Any = None
        body = tree.body
        done = 0  # comments up to this line have been read for their arithmetic
        for k, node in enumerate(body):
            done = self.arithmetic_before(node.lineno - 1, done)
            value = self.statement(node, self.env)
            if k == len(body) - 1 and isinstance(node, ast.Expr) and not _is_print(node.value):
                last_value = value
            done = self.arithmetic_before(node.end_lineno or node.lineno, done)
        self.arithmetic_before(len(self.source_lines), done)
        if printed is not None and self.printed is not None:
            shown = list(self.printed)
            if body and isinstance(body[-1], ast.Expr) and not _is_print(body[-1].value):
                shown.append(None if last_value is None else ("repr", last_value))
            self.compare_printed(shown, printed)
        return self.findings

    # ----- statements ---------------------------------------------------------------------------------------
    def statement(self, node: ast.stmt, env: dict[str, Any]) -> Any:
        """Follow one statement; returns the value of an expression statement (None if unknown)."""
        try:
            return self._statement(node, env)
        except Unknown:
            for name in _targets(node):
                env.pop(name, None)
            if isinstance(node, ast.Expr) and _is_print(node.value) and self.printed is not None:
                self.printed.append(None)  # printed something not followed
            self.adopt(node, env)
            return None
        except CodeError as error:
            for name in _targets(node):
                env.pop(name, None)
            if self.record and not getattr(error, "claimed", False):
                self.add(node.lineno, "wrong", f"this line cannot run: {error}", "shape")
            return None
        except (ArithmeticError, ValueError, TypeError, IndexError, KeyError, AttributeError, RecursionError,
                MemoryError):
            for name in _targets(node):
                env.pop(name, None)
            if isinstance(node, ast.Expr) and _is_print(node.value) and self.printed is not None:
                self.printed.append(None)
            return None

    def _statement(self, node: ast.stmt, env: dict[str, Any]) -> Any:
        if isinstance(node, (ast.Import, ast.ImportFrom, ast.Pass)):
            return None
        if isinstance(node, ast.Assign):
            value = self.expr(node.value, env)
            for target in node.targets:
                self.bind(target, value, env)
            self.check_comment(node, value, env)
            return None
        if isinstance(node, ast.AnnAssign) and node.value is not None:
            value = self.expr(node.value, env)
            self.bind(node.target, value, env)
            self.check_comment(node, value, env)
            return None
        if isinstance(node, ast.Expr):
            if _is_print(node.value):
                assert isinstance(node.value, ast.Call)
                self.print_call(node.value, env)
                if len(node.value.args) == 1:  # print(x.shape)  # torch.Size([2, 3]): the comment says what it shows
                    self.check_comment(node, self.expr(node.value.args[0], env), env)
                return None
            call = node.value
            if isinstance(call, ast.Call) and _dotted(call.func) in ("np.set_printoptions", "numpy.set_printoptions"):
                for k in call.keywords:
                    if k.arg == "precision":
                        self.precision = _int(self.expr(k.value, env))
                    if k.arg == "suppress":
                        self.suppress = bool(isinstance(k.value, ast.Constant) and k.value.value)
                return None
            value = self.expr(node.value, env)
            self.check_comment(node, value, env)
            return value
        if isinstance(node, ast.Return) and node.value is not None:  # return T.transpose(0, 2, 1, 3)  # (2, 8, 10, 64)
            self.check_comment(node, self.expr(node.value, env), env)
            return None
        if isinstance(node, ast.FunctionDef):
            env[node.name] = Function(node)
            self.user_prints = self.user_prints or _prints(node)
            self.symbolic_body(node, env)
            return None
        if isinstance(node, ast.ClassDef):
            self.class_body(node, env)
            return None
        if isinstance(node, (ast.For, ast.While, ast.If, ast.With, ast.Try)):
            self.compound(node, env)
            return None
        for name in _targets(node):
            env.pop(name, None)
        raise Unknown(type(node).__name__)

    def compound(self, node: ast.stmt, env: dict[str, Any]) -> None:
        """A loop or branch: its body is traced once for the shapes its comments claim, without values; the
        names it assigns are unknown afterwards (which iteration or branch ran is not followed)."""
        printed, self.printed = self.printed, None
        inner = {k: _without_values(v) for k, v in env.items()}
        if isinstance(node, ast.For):
            for name in _names(node.target):
                inner.pop(name, None)
        for block in ("body", "orelse", "finalbody"):
            for child in getattr(node, block, []):
                self.statement(child, inner)
        for child in ast.walk(node):
            for name in _targets(child) if isinstance(child, ast.stmt) else []:
                env.pop(name, None)
        if printed is not None and _prints(node):
            printed.append(None)  # printed a number of times the trace does not follow
        self.printed = printed

    def symbolic_body(self, node: ast.FunctionDef, env: dict[str, Any], extra: dict[str, Any] | None = None) -> None:
        """A function's body, traced once with its arguments unknown (a comment may give their shapes)."""
        inner = {k: _without_values(v) for k, v in env.items()}
        inner.update(extra or {})
        for a in node.args.args:
            inner.pop(a.arg, None)
        self.declare(node.lineno, inner)
        printed, self.printed = self.printed, None
        for child in node.body:
            self.statement(child, inner)
        self.printed = printed

    def class_body(self, node: ast.ClassDef, env: dict[str, Any]) -> None:
        """A class: its methods in order, what ``__init__`` sets on ``self`` known to the methods after it."""
        self.user_prints = self.user_prints or _prints(node)
        members: dict[str, Any] = {}
        for child in node.body:
            if isinstance(child, ast.FunctionDef):
                self.members = {}
                self.symbolic_body(child, env, members)
                members.update(self.members)
        self.members = {}

    def bind(self, target: ast.expr, value: Any, env: dict[str, Any]) -> None:
        if isinstance(target, ast.Name):
            env[target.id] = value
            if env is self.env:
                self.history.setdefault(target.id, []).append(value)
        elif isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name) and target.value.id == "self":
            env["self." + target.attr] = value
            self.members["self." + target.attr] = _without_values(value)
        elif isinstance(target, (ast.Tuple, ast.List)):
            parts = value if isinstance(value, tuple) else None
            if parts is None and isinstance(value, Tensor) and value.values is None:
                parts = None
            if parts is None or len(parts) != len(target.elts):
                for t in target.elts:
                    for name in _names(t):
                        env.pop(name, None)
                raise Unknown("unpacking")
            for t, v in zip(target.elts, parts, strict=True):
                self.bind(t, v, env)
        else:
            raise Unknown("assignment target")

    # ----- expressions --------------------------------------------------------------------------------------
    def expr(self, node: ast.expr, env: dict[str, Any]) -> Any:
        if isinstance(node, ast.Constant):
            if isinstance(node.value, bool) or node.value is None:
                return node.value
            if isinstance(node.value, int):
                return Integer(node.value)
            if isinstance(node.value, float):
                return Float(node.value)
            if isinstance(node.value, str):
                return node.value
            raise Unknown("constant")
        if isinstance(node, ast.Name):
            if node.id in env:
                return env[node.id]
            raise Unknown(node.id)
        if isinstance(node, ast.Attribute):
            return self.attribute(node, env)
        if isinstance(node, ast.Tuple):
            return tuple(self.expr(e, env) for e in node.elts)
        if isinstance(node, ast.List):
            values = _literal(node)
            if values is not None:
                return values
            return [self.expr(e, env) for e in node.elts]
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
            v = self.expr(node.operand, env)
            if isinstance(v, Tensor):
                return _elementwise(v, None if v.values is None else -v.values)
            return -_size(v)
        if isinstance(node, ast.BinOp):
            return self.binop(node, env)
        if isinstance(node, ast.Call):
            return self.call(node, env)
        if isinstance(node, ast.Subscript):
            return self.subscript(node, env)
        if isinstance(node, ast.JoinedStr):
            return self.fstring(node, env)
        raise Unknown(type(node).__name__)

    def size(self, node: ast.expr, env: dict[str, Any]) -> Any:
        """A size argument: a name the code never gives is the size of that name (a symbol)."""
        if isinstance(node, ast.Name) and node.id not in env:
            return Symbol(node.id, integer=True, positive=True)
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "self" and \
                "self." + node.attr not in env:
            return Symbol(node.attr, integer=True, positive=True)
        if isinstance(node, ast.BinOp):
            a, b = self.size(node.left, env), self.size(node.right, env)
            return _arith(node.op, _size(a), _size(b))
        return self.expr(node, env)

    def sizes(self, args: list[ast.expr], env: dict[str, Any]) -> tuple[Any, ...]:
        if len(args) == 1 and isinstance(args[0], (ast.Tuple, ast.List)):
            args = list(args[0].elts)
        if len(args) == 1:
            value = self.size(args[0], env)
            if isinstance(value, tuple):
                return tuple(_size(v) for v in value)
        return tuple(_size(self.size(a, env)) for a in args)

    def attribute(self, node: ast.Attribute, env: dict[str, Any]) -> Any:
        if isinstance(node.value, ast.Name) and node.value.id == "self":
            key = "self." + node.attr
            if key in env:
                return env[key]
            raise Unknown(key)
        if isinstance(node.value, ast.Name) and node.value.id in ("np", "numpy", "math", "torch") and \
                node.value.id not in env and node.attr in _CONSTANTS:
            return _CONSTANTS[node.attr]  # np.inf, math.pi, torch.inf
        base = self.expr(node.value, env)
        if isinstance(base, Tensor):
            if node.attr == "shape":
                return _TorchSize(base.shape) if base.torch else base.shape
            if node.attr == "T":
                return _permute(base, tuple(reversed(range(len(base.shape)))))
            if node.attr == "mT":
                return _swap(base, -2, -1)
            if node.attr == "ndim":
                return Integer(len(base.shape))
            if node.attr in ("real", "data"):
                return base
        if isinstance(base, Linear):
            if node.attr == "weight":
                return Tensor((base.fan_out, base.fan_in), torch=True)
            if node.attr == "bias" and base.bias:
                return Tensor((base.fan_out,), torch=True)
        raise Unknown(f".{node.attr}")

    def binop(self, node: ast.BinOp, env: dict[str, Any]) -> Any:
        a, b = self.expr(node.left, env), self.expr(node.right, env)
        if isinstance(node.op, ast.MatMult):
            return _matmul(a, b)
        if isinstance(a, Tensor) or isinstance(b, Tensor):
            return _arith_tensor(node.op, a, b)
        if isinstance(a, Expr) and isinstance(b, Expr):
            return _arith(node.op, a, b)
        raise Unknown("arithmetic")

    def subscript(self, node: ast.Subscript, env: dict[str, Any]) -> Any:
        base = self.expr(node.value, env)
        index = self.index(node.slice, env)
        if isinstance(base, tuple):
            if isinstance(index, int):
                return base[index]
            if isinstance(index, slice):
                return base[index]
            raise Unknown("index of a tuple")
        if isinstance(base, Tensor):
            if base.values is not None:
                got = base.values[index]
                return Tensor(tuple(Integer(s) for s in np.shape(got)), np.asarray(got), base.claimed, base.torch)
            if base.known():
                dummy = np.broadcast_to(np.empty((), dtype=bool), tuple(int(s) for s in base.shape))
                got = dummy[index]
                return Tensor(tuple(Integer(s) for s in got.shape), None, base.claimed, base.torch)
        raise Unknown("subscript")

    def index(self, node: ast.expr, env: dict[str, Any]) -> Any:
        if isinstance(node, ast.Tuple):
            return tuple(self.index(e, env) for e in node.elts)
        if isinstance(node, ast.Slice):
            parts = [None if p is None else _int(self.expr(p, env)) for p in (node.lower, node.upper, node.step)]
            return slice(*parts)
        if isinstance(node, ast.Constant) and node.value is Ellipsis:
            return Ellipsis
        if isinstance(node, ast.Constant) and node.value is None:
            return None
        return _int(self.expr(node, env))

    def fstring(self, node: ast.JoinedStr, env: dict[str, Any]) -> str:
        out = []
        for part in node.values:
            if isinstance(part, ast.Constant) and isinstance(part.value, str):
                out.append(part.value)
            elif isinstance(part, ast.FormattedValue):
                value = self.expr(part.value, env)
                spec = self.fstring(part.format_spec, env) if isinstance(part.format_spec, ast.JoinedStr) else ""
                out.append(self.render(value, spec=spec, conversion=part.conversion))
            else:
                raise Unknown("f-string")
        return "".join(out)

    # ----- calls ----------------------------------------------------------------------------------------------
    def call(self, node: ast.Call, env: dict[str, Any]) -> Any:
        if any(isinstance(a, ast.Starred) for a in node.args) or any(k.arg is None for k in node.keywords):
            raise Unknown("*args")
        func = node.func
        path = _dotted(func)
        kw = {k.arg: k.value for k in node.keywords if k.arg}
        if isinstance(func, ast.Name) and func.id in env:
            target = env[func.id]
            if isinstance(target, Function):
                if _prints(target.node) and self.printed is not None:
                    self.printed.append(None)
                return self.call_function(target, node, env)
            if isinstance(target, Linear):
                return _apply_linear(target, self.expr(node.args[0], env))
            raise Unknown("call")
        if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id == "self":
            target = env.get("self." + func.attr)
            if isinstance(target, Linear) and node.args:
                return _apply_linear(target, self.expr(node.args[0], env))
            raise Unknown("method of self")
        last = path.split(".")[-1] if path else None
        root = path.split(".")[0] if path else None
        module = root in ("np", "numpy", "torch", "F", "nn", "math", "scipy", "special", "functional") or \
            (root in env and env[root] == "rng")
        if path and module:
            return self.library(path, last or "", node, kw, env)
        if path in ("rearrange", "einops.rearrange") and len(node.args) == 2:
            return self.index_notation(node.args, kw, env, False)
        if isinstance(func, ast.Attribute):
            if isinstance(func.value, (ast.Name, ast.Attribute, ast.Call, ast.Subscript, ast.BinOp)):
                try:
                    base = self.expr(func.value, env)
                except Unknown:
                    if func.attr in ("view", "reshape") and node.args and not kw:  # T.reshape(batch, n, h, d_k)
                        sizes = tuple(_size(s) for s in self.sizes(list(node.args), env))  # of an unknown T: the
                        if all(isinstance(s, Integer) and s > 0 for s in sizes):  # shape it asks for, all given
                            return Tensor(sizes)
                    raise
                return self.method(func.attr, base, node, kw, env)
        if path == "len" and node.args:
            v = self.expr(node.args[0], env)
            if isinstance(v, Tensor) and v.shape:
                return v.shape[0]
            if isinstance(v, (tuple, list)):
                return Integer(len(v))
        if path == "float" and len(node.args) == 1 and isinstance(node.args[0], ast.Constant) and \
                isinstance(node.args[0].value, str) and node.args[0].value.strip().lower().lstrip("+-") in (
                    "inf", "infinity"):  # float('-inf'): the fill of a mask
            return S.NegativeInfinity if node.args[0].value.strip().startswith("-") else S.Infinity
        if path in ("int", "float") and node.args:
            v = self.expr(node.args[0], env)
            if isinstance(v, Expr) and v.is_number:
                return Integer(int(v)) if path == "int" else Float(float(v))
        if self.user_prints and self.printed is not None:
            self.printed.append(None)  # a call of the document's own code may print
        raise Unknown(f"call {path}")

    def index_notation(self, args: list[ast.expr], kw: dict[str, ast.expr], env: dict[str, Any], torch: bool
                       ) -> Tensor:
        """``einsum("bhqd,bhkd->bhqk", q, k)`` (``args`` the string and the operands) or ``rearrange(x, "b n (h d) ->
        b h n d", h=8)`` (``args`` the tensor and the pattern, ``kw`` the sizes): the tensor the notation gives."""
        from .index_notation import NotRead, einsum, einsum_values, rearrange, rearrange_values

        einsum_call = isinstance(args[0], ast.Constant)
        spec = args[0] if einsum_call else args[1]
        if not (isinstance(spec, ast.Constant) and isinstance(spec.value, str)):
            raise Unknown("index notation not written as a string")
        operands = [self.expr(a, env) for a in (args[1:] if einsum_call else args[:1])]
        if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
            operands = list(operands[0])  # torch.einsum(spec, [a, b])
        if not operands or not all(isinstance(x, Tensor) for x in operands):
            raise Unknown("index notation of what is not an array")
        claimed, values = any(x.claimed for x in operands), [x.values for x in operands]
        try:
            if einsum_call:
                shape = einsum(spec.value, [x.shape for x in operands])
                found = None if any(v is None for v in values) else einsum_values(spec.value, values)
            else:
                sizes = {k: self.size(v, env) for k, v in kw.items()}
                shape = rearrange(spec.value, operands[0].shape, sizes)
                found = None if values[0] is None else rearrange_values(spec.value, values[0], sizes)
        except (NotRead, ValueError) as e:
            raise Unknown(f"index notation: {e}") from None
        return Tensor(shape, found, claimed, torch or any(x.torch for x in operands))

    def call_function(self, function: Function, node: ast.Call, env: dict[str, Any]) -> Any:
        if self.depth >= MAX_DEPTH:
            raise Unknown("too deep")
        params = function.node.args
        names = [a.arg for a in params.args]
        defaults = params.defaults
        inner = dict(self.env)
        for name, default in zip(names[len(names) - len(defaults):], defaults, strict=True):
            inner[name] = self.expr(default, env)
        for name, arg in zip(names, node.args, strict=False):
            inner[name] = self.expr(arg, env)
        for k in node.keywords:
            if k.arg not in names:
                raise Unknown("keyword")
            inner[str(k.arg)] = self.expr(k.value, env)
        if any(n not in inner for n in names):
            raise Unknown("missing argument")
        record, printed = self.record, self.printed
        self.record, self.printed, self.depth = False, None, self.depth + 1
        try:
            for child in function.node.body:
                if isinstance(child, ast.Return):
                    if child.value is None:
                        raise Unknown("return")
                    return self.expr(child.value, inner)
                if isinstance(child, ast.Expr) and isinstance(child.value, ast.Constant):
                    continue  # a docstring
                if not isinstance(child, (ast.Assign, ast.AnnAssign)):
                    raise Unknown("a function with branches")
                self._statement(child, inner)
            raise Unknown("no return")
        finally:
            self.record, self.printed, self.depth = record, printed, self.depth - 1

    def library(self, path: str, last: str, node: ast.Call, kw: dict[str, ast.expr], env: dict[str, Any]) -> Any:
        args = node.args
        torch = path.startswith(("torch", "F.", "nn."))
        if path in ("np.random.default_rng", "numpy.random.default_rng"):
            return "rng"
        if last in ("array", "asarray", "tensor", "as_tensor", "Tensor", "FloatTensor") and args:
            values = self.expr(args[0], env)
            if isinstance(values, Tensor):
                return Tensor(values.shape, values.values, values.claimed, torch)
            array = _array(values)
            return Tensor(tuple(Integer(s) for s in array.shape), array, torch=torch)
        if last == "Linear" and len(args) >= 2:
            bias = kw.get("bias")
            has_bias = not (isinstance(bias, ast.Constant) and bias.value is False)
            return Linear(_size(self.size(args[0], env)), _size(self.size(args[1], env)), has_bias)
        if last in _CREATE:
            size_node = kw.get("size", args[-1] if last == "normal" and args else None)
            if last in ("normal", "uniform") and size_node is None:
                raise Unknown("normal without size")
            if last == "full":
                shape = self.sizes([args[0]], env)
                fill = _np(self.expr(args[1], env))
                return _created(shape, None if fill is None else (lambda s: np.full(s, fill)), torch)
            shape = self.sizes([size_node] if size_node is not None else list(args), env)
            fill = {"zeros": np.zeros, "ones": np.ones}.get(last)
            return _created(shape, fill, torch)
        if last in ("eye", "identity") and args:
            n = _size(self.size(args[0], env))
            return _created((n, n), np.eye, torch)
        if last == "arange" and len(args) == 1:
            n = _size(self.size(args[0], env))
            return _created((n,), lambda s: np.arange(s[0], dtype=float), torch)
        if last in ("triu", "tril") and args:
            x = self.expr(args[0], env)
            k = _int(self.expr(kw.get("diagonal", kw.get("k", args[1] if len(args) > 1 else ast.Constant(0))), env))
            if not isinstance(x, Tensor) or len(x.shape) < 2:
                raise Unknown("triu")
            f = np.triu if last == "triu" else np.tril
            return _elementwise(x, None if x.values is None else f(x.values, k))
        if last == "where" and len(args) == 3:
            c, a, b = (self.expr(a, env) for a in args)
            shapes = [v.shape for v in (c, a, b) if isinstance(v, Tensor)]
            if not shapes:
                raise Unknown("where")
            shape = shapes[0]
            for s in shapes[1:]:
                shape = _broadcast(shape, s)
            vals = [_np(v) for v in (c, a, b)]
            return Tensor(shape, None if any(v is None for v in vals) else np.where(*vals), torch=torch)
        if last in ("sqrt", "exp", "log", "tanh", "abs") and len(args) == 1:
            x = self.expr(args[0], env)
            if isinstance(x, Tensor):
                f = getattr(np, last)
                return _elementwise(x, None if x.values is None else f(x.values))
            if isinstance(x, Expr) and x.is_number:
                return Float(getattr(math, last if last != "abs" else "fabs")(float(x)))
            if isinstance(x, Expr) and last == "sqrt":
                from sympy import sqrt
                return sqrt(x)
            raise Unknown(last)
        if last == "softmax" and args:
            x = self.expr(args[0], env)
            axis_node = kw.get("dim", kw.get("axis", args[1] if len(args) > 1 else None))
            if not isinstance(x, Tensor):
                raise Unknown("softmax")
            if axis_node is None:
                if path.startswith(("torch", "F.")):
                    raise Unknown("softmax without dim")
                axis_node = ast.Constant(-1)
            return _softmax(x, self.expr(axis_node, env))
        if last in ("matmul", "dot", "mm", "bmm") and len(args) == 2:
            return _matmul(self.expr(args[0], env), self.expr(args[1], env))
        if last == "einsum" and len(args) >= 2:
            return self.index_notation(args, {}, env, torch)
        if last in ("cat", "concatenate", "concat", "hstack", "vstack", "stack") and args:
            parts = self.expr(args[0], env)
            axis_node = kw.get("dim", kw.get("axis", args[1] if len(args) > 1 else None))
            if isinstance(parts, Tensor) and len(parts.shape) >= 2 and getattr(parts.shape[0], "is_Integer", False) \
                    and int(parts.shape[0]) <= 64:  # np.hstack(A) of a (2, 4, 4) array: its 2 blocks, along axis 0
                parts = [Tensor(parts.shape[1:], None if parts.values is None else parts.values[k], parts.claimed,
                                parts.torch) for k in range(int(parts.shape[0]))]
            parts = list(parts) if isinstance(parts, (list, tuple)) else []
            flat = bool(parts) and isinstance(parts[0], Tensor) and len(parts[0].shape) == 1  # hstack of vectors
            default = Integer(1 if last == "hstack" and not flat else 0)  # np.hstack: columns; of vectors, axis 0
            axis = default if axis_node is None else self.expr(axis_node, env)
            return _concat(parts, axis, last == "stack", torch)
        if last in ("transpose", "swapaxes") and args:
            x = self.expr(args[0], env)
            if isinstance(x, Tensor) and len(args) == 3:
                return _swap(x, _int(self.expr(args[1], env)), _int(self.expr(args[2], env)))
            if isinstance(x, Tensor) and len(args) == 1 and "axes" not in kw:
                return _permute(x, tuple(reversed(range(len(x.shape)))))
            raise Unknown("transpose")
        if last in _REDUCE and args:
            x = self.expr(args[0], env)
            axis = kw.get("axis", kw.get("dim", args[1] if len(args) > 1 else None))
            keep = kw.get("keepdims", kw.get("keepdim"))
            return self.reduce(last, x, axis, keep, env, torch)
        if last == "round" and args:
            x = self.expr(args[0], env)
            decimals = _int(self.expr(kw.get("decimals", args[1] if len(args) > 1 else ast.Constant(0)), env))
            if isinstance(x, Tensor):
                return _elementwise(x, None if x.values is None else np.round(x.values, decimals))
            raise Unknown("round")
        if last == "matrix_rank" and len(args) == 1:
            return _exact_rank(self.expr(args[0], env))
        if last == "allclose" or last == "isclose":
            raise Unknown(last)
        raise Unknown(path)

    def method(self, name: str, base: Any, node: ast.Call, kw: dict[str, ast.expr], env: dict[str, Any]) -> Any:
        args = node.args
        if base == "rng":
            if name in _CREATE or name == "integers":
                return self.library("rng." + name, name, node, kw, env)
            raise Unknown("rng")
        if isinstance(base, Linear):
            raise Unknown("layer method")
        if not isinstance(base, Tensor):
            raise Unknown(f".{name}()")
        x = base
        if name in ("view", "reshape"):
            return _reshape(x, self.sizes(list(args), env) if args else self.sizes([kw["shape"]], env))
        if name in ("transpose", "swapaxes") and len(args) == 2:
            return _swap(x, _int(self.expr(args[0], env)), _int(self.expr(args[1], env)))
        if name in ("transpose", "permute"):
            axes = self.sizes(list(args), env) if args else tuple(Integer(k) for k in reversed(range(len(x.shape))))
            return _permute(x, tuple(_int(a) for a in axes))
        if name == "t" and not args:
            return _permute(x, tuple(reversed(range(len(x.shape)))))
        if name in _ELEMENTWISE:
            if name in ("exp", "sqrt", "tanh", "abs", "log"):
                return _elementwise(x, None if x.values is None else getattr(np, name)(x.values))
            if name in ("relu", "sigmoid", "gelu", "dropout"):
                return _elementwise(x, None)
            return x
        if name == "softmax":
            axis_node = kw.get("dim", kw.get("axis", args[0] if args else None))
            if axis_node is None:
                raise Unknown("softmax without dim")
            return _softmax(x, self.expr(axis_node, env))
        if name in _REDUCE:
            axis = kw.get("axis", kw.get("dim", args[0] if args else None))
            return self.reduce(name, x, axis, kw.get("keepdims", kw.get("keepdim")), env, x.torch)
        if name == "size":
            if not args and not kw:
                return x.shape
            return x.shape[_axis(self.expr(args[0] if args else kw["dim"], env), len(x.shape))]
        if name == "unsqueeze" and args:
            k = _int(self.expr(args[0], env))
            k = k % (len(x.shape) + 1)
            shape = x.shape[:k] + (Integer(1),) + x.shape[k:]
            return Tensor(shape, None if x.values is None else np.expand_dims(x.values, k), x.claimed, x.torch)
        if name == "squeeze" and args:
            k = _axis(self.expr(args[0], env), len(x.shape))
            if x.shape[k] != 1:
                return x
            shape = x.shape[:k] + x.shape[k + 1:]
            return Tensor(shape, None if x.values is None else np.squeeze(x.values, k), x.claimed, x.torch)
        if name == "repeat_interleave" and args:
            times = _size(self.expr(args[0], env))
            k = _axis(self.expr(kw.get("dim", args[1] if len(args) > 1 else ast.Constant(0)), env), len(x.shape))
            shape = x.shape[:k] + (x.shape[k] * times,) + x.shape[k + 1:]
            values = None if x.values is None else np.repeat(x.values, int(times), axis=k)
            return Tensor(shape, values, x.claimed, x.torch)
        if name in ("masked_fill", "masked_fill_") and len(args) == 2:
            mask, fill = self.expr(args[0], env), self.expr(args[1], env)
            if isinstance(mask, Tensor):
                _broadcast(x.shape, mask.shape)
            fv = _np(fill)
            if isinstance(mask, Tensor) and x.values is not None and mask.values is not None and fv is not None:
                return _elementwise(x, np.where(np.broadcast_to(mask.values.astype(bool), x.values.shape), fv,
                                                x.values))
            return _elementwise(x, None)
        if name in ("triu", "tril"):
            k = _int(self.expr(kw.get("diagonal", args[0] if args else ast.Constant(0)), env))
            f = np.triu if name == "triu" else np.tril
            return _elementwise(x, None if x.values is None else f(x.values, k))
        if name in ("bool", "int", "long"):
            return _elementwise(x, None if x.values is None else x.values.astype(bool if name == "bool" else int))
        if name in ("item",) and x.values is not None and x.values.size == 1:
            return Float(float(x.values.reshape(-1)[0]))
        if name in ("matmul", "dot", "mm", "bmm") and len(args) == 1:
            return _matmul(x, self.expr(args[0], env))
        if name == "flatten" and not args:
            return _reshape(x, (Integer(-1),))
        if name == "round":
            decimals = _int(self.expr(kw.get("decimals", args[0] if args else ast.Constant(0)), env))
            return _elementwise(x, None if x.values is None else np.round(x.values, decimals))
        raise Unknown(f".{name}()")

    def reduce(self, name: str, x: Any, axis_node: ast.expr | None, keep_node: ast.expr | None,
               env: dict[str, Any], torch: bool) -> Any:
        if not isinstance(x, Tensor):
            raise Unknown(name)
        keep = isinstance(keep_node, ast.Constant) and bool(keep_node.value)
        if axis_node is None:
            if torch and name in ("max", "min"):
                pass
            value = None if x.values is None else getattr(np, name)(x.values)
            return Tensor((), None if value is None else np.asarray(value), x.claimed, x.torch)
        if torch and name in ("max", "min"):
            raise Unknown("torch max along a dim returns (values, indices)")
        axes = self.expr(axis_node, env)
        ks = tuple(_axis(a, len(x.shape)) for a in (axes if isinstance(axes, tuple) else (axes,)))
        shape = tuple(Integer(1) if k in ks else s for k, s in enumerate(x.shape)) if keep else \
            tuple(s for k, s in enumerate(x.shape) if k not in ks)
        values = None if x.values is None else getattr(np, name)(x.values, axis=ks, keepdims=keep)
        return Tensor(shape, values, x.claimed, x.torch)

    # ----- comments: arithmetic written beside the code ----------------------------------------------------------
    def arithmetic_before(self, last: int, done: int) -> int:
        """Judge the arithmetic of the comments on lines ``done + 1 .. last`` (with the sizes bound so far)."""
        for line in range(done + 1, last + 1):
            if line in self.comments:
                self.judge_arithmetic(line, self.comments[line])
        return max(done, last)

    def judge_arithmetic(self, line: int, comment: str) -> None:
        """``# 2 * 8 * 128 * 2 bytes = 4096 bytes = 4 KiB``: each side that is arithmetic (sizes the code bound may
        stand in it) is compared with the next; a side that is not arithmetic is left out."""
        flow = _matmul_flow(comment)
        if flow is not None:  # "# (2, 8, 10, 64) @ (2, 8, 64, 10) -> (2, 8, 10, 10)": the comment's own arithmetic
            status, message, expected = _flow_verdict(flow)
            self.add(line, status, message, "shape", expected)
            return
        sides = _arithmetic_sides(comment)
        if sides is None:
            return
        values: list[tuple[str, Any, str | None, str]] = []  # (text, value, the number as written, op before)
        for text, op in sides:
            try:
                values.append((text, self.arithmetic_value(text), _written_number(text), op))
            except (Unknown, SyntaxError, ValueError, TypeError, ZeroDivisionError, OverflowError):
                values.append((text, None, None, op))
        compared = False
        for (ta, a, _, _), (tb, b, written, op) in zip(values, values[1:], strict=False):
            if a is None or b is None:
                continue
            ok = _agrees(written, float(a)) if written is not None and "." in written else \
                (op == "approx" and abs(float(a) - float(b)) <= 0.5) or simplify(a - b) == 0
            compared = True
            if not ok:
                self.add(line, "wrong", f"{ta.strip()} = {_plain_number(a)}, not {tb.strip()}", "number",
                         _plain_number(a))
                return
        if compared:
            self.add(line, "correct", "the arithmetic of the comment (with the sizes the code sets)", "number")

    def arithmetic_value(self, text: str) -> Any:
        expression, factor = _with_unit(text)
        tree = ast.parse(expression.strip(), mode="eval").body
        return _size(self.arith_node(tree)) * factor

    def arith_node(self, node: ast.expr) -> Any:
        if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)) and not isinstance(node.value,
                                                                                                       bool):
            return Integer(node.value) if isinstance(node.value, int) else nsimplify(str(node.value))
        if isinstance(node, ast.Name):
            value = self.env.get(node.id)
            if isinstance(value, Expr) and value.is_number:
                return value
            raise Unknown(node.id)
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
            return -self.arith_node(node.operand)
        if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Sub, ast.Mult, ast.Div, ast.FloorDiv,
                                                                ast.Pow)):
            a, b = self.arith_node(node.left), self.arith_node(node.right)
            if isinstance(node.op, ast.Pow) and (not b.is_Integer or abs(b) > 64):
                raise Unknown("power")
            if isinstance(node.op, ast.Div):
                return a / b
            return _arith(node.op, a, b)
        raise Unknown("not arithmetic")

    # ----- comments: the shapes written beside the code ---------------------------------------------------------
    def declare(self, line: int, env: dict[str, Any]) -> None:
        """``def forward(self, x):  # x: (B, n, d_model)``: a comment gives an argument's shape."""
        comment = self.comments.get(line, "")
        for name, shape_src in _named_shapes(comment):
            if name not in env:
                env[name] = Tensor(tuple(self.claim_size(s, env) for s in shape_src), claimed=True)

    def adopt(self, node: ast.stmt, env: dict[str, Any]) -> None:
        """What the code does not determine is taken from the shape its comment gives (a claim, not a fact)."""
        if not isinstance(node, ast.Assign) or len(node.targets) != 1:
            return
        target = node.targets[0]
        name = _target_name(target)
        comment = self.comments.get(node.end_lineno or node.lineno, "")
        shapes = _result_shapes(comment)
        if name is None or not shapes:
            return
        flow = _matmul_flow(comment)
        if flow is not None and flow[3] is not None:  # the product of the shapes the comment multiplies, not the
            shapes = [[str(x) for x in flow[3]]]  # result it writes (that is judged as the comment's arithmetic)
        try:
            sizes = tuple(self.claim_size(s, env) for s in shapes[0])
        except Unknown:
            return
        env[name] = Tensor(sizes, claimed=True)

    def claim_size(self, source: str, env: dict[str, Any]) -> Any:
        tree = ast.parse(source.strip(), mode="eval").body
        return _size(self.size(tree, env))

    def check_comment(self, node: ast.stmt, value: Any, env: dict[str, Any]) -> None:
        if not self.record:
            return
        line = node.end_lineno or node.lineno
        comment = self.comments.get(line, "")
        if not comment:
            return
        if isinstance(value, Linear) and re.search(r"\bweight\b", comment):
            layer = _target_name(node.targets[0]) if isinstance(node, ast.Assign) else None
            self.judge_shape(line, layer or "the layer", Tensor((value.fan_out, value.fan_in)),
                             _shapes_after(comment, "weight"), env, what="weight")
            return
        maps = _MAPS.fullmatch(comment)
        if isinstance(value, Linear) and maps:  # nn.Linear(d_model, h_kv * d_k)  # 512 -> 128: its sizes in and out
            layer = _target_name(node.targets[0]) if isinstance(node, ast.Assign) else None
            self.judge_shape(line, layer or "the layer", Tensor((value.fan_in, value.fan_out)),
                             [[maps.group(1), maps.group(2)]], env, what="sizes in and out")
            return
        if isinstance(value, Expr) and value.is_number and isinstance(node, (ast.Assign, ast.AnnAssign)):
            if isinstance(node.value, (ast.Constant, ast.Tuple)):  # x = 3  # 3: a setting restated, nothing computed
                return
            self.judge_number(line, ast.unparse(node.targets[0] if isinstance(node, ast.Assign) else node.target),
                              value, comment)
            return
        if isinstance(value, tuple) and value and all(isinstance(v, Expr) for v in value):  # a shape itself
            shapes = _result_shapes(comment)
            if shapes:
                shown: ast.AST = node
                if isinstance(node, (ast.Expr, ast.Assign)):
                    shown = node.value.args[0] if isinstance(node.value, ast.Call) and node.value.args and \
                        _is_print(node.value) else node.value
                self.judge_shape(line, ast.unparse(shown).removesuffix(".shape"), Tensor(tuple(value)), shapes, env)
            return
        if isinstance(value, Tensor):
            name = _target_name(node.targets[0]) if isinstance(node, ast.Assign) and len(node.targets) == 1 \
                else ast.unparse(node.value) if isinstance(node, ast.Expr) else None
            shapes = _result_shapes(comment)
            if shapes and value.shape != ():  # a number (a rank, a sum): a shape in its comment is of another value
                self.judge_shape(line, name or "it", value, shapes, env)
            printed = _printed_comment(comment, self.comments, line, self.source_lines)
            if printed is not None and value.values is not None:
                self.judge_values(line, value, printed)

    def judge_number(self, line: int, name: str, value: Expr, comment: str) -> None:
        """``w = d_model * d_model  # = 589824``: a comment that is only the number assigned (after ``=``, ``->`` or
        ``≈``, or alone, with at most a unit word) states the value the code computes; a comment with other words
        ("# 2 for K and V") is about something else and is left alone."""
        stated = _VALUE_COMMENT.fullmatch(comment.strip())
        if stated is None:
            return
        text = stated.group(1).replace(",", "").replace("_", "")
        ok = _agrees(text, float(value)) if re.search(r"[.eE]", text) else simplify(value - Integer(text)) == 0
        shown = _plain_number(value)
        if ok:
            self.add(line, "correct", f"the code gives {name} = {shown}", "number")
        else:
            self.add(line, "wrong", f"the code gives {name} = {shown}, not {stated.group(1)}", "number", shown)

    def judge_shape(self, line: int, name: str, value: Tensor, shapes: list[list[str]], env: dict[str, Any],
                    what: str = "shape") -> None:
        verdicts = []
        for shape_src in shapes:
            try:
                claim = tuple(self.claim_size(s, env) for s in shape_src)
            except (Unknown, SyntaxError, TypeError, ValueError):
                return
            if len(claim) != len(value.shape):
                if value.known() and all(isinstance(c, Integer) for c in claim):
                    verdicts.append((False, claim))
                continue
            same = [_same(a, b) for a, b in zip(claim, value.shape, strict=True)]
            if False in same:
                verdicts.append((False, claim))
            elif all(same):
                verdicts.append((True, claim))  # a shape with a size the code leaves open says nothing
        if not verdicts:
            return
        got = _shape_text(value.shape) if what != "sizes in and out" else " -> ".join(map(str, value.shape))
        bad = [c for ok, c in verdicts if not ok]
        title = f"the code gives {name} the {what}" if what == "shape" else f"the weight of {name} is" \
            if what == "weight" else f"{name} maps"
        if bad:
            status = "inconsistent" if value.claimed else "wrong"
            self.add(line, status, f"{title} {got}, not "
                     + (_shape_text(bad[0]) if what != "sizes in and out" else " -> ".join(map(str, bad[0])))
                     + (" (traced from a shape another comment gives)" if value.claimed else ""), "shape", got)
        else:
            self.add(line, "correct", f"{title} {got}", "shape")

    def disagree(self, line: int, text: str) -> None:
        """Every printed number differs from the trace: the code or its output was changed, and which one cannot be
        told; nothing is judged, and no later value is compared (they rest on the same computation)."""
        self.doubted = True
        self.add(line, "unchecked", "the printed values all differ from what the code above computes: the code or "
                 "its output was changed after it ran; not judged, and later printed values are not compared",
                 "number", output=True, text=text)

    def judge_values(self, line: int, value: Tensor, printed: list[tuple[int, str]]) -> None:
        rendered = self.render(value, torch_style=value.torch)
        ours = _numbers(rendered)
        theirs = [(k, t) for k, text in printed for t in _number_tokens(text)]
        if len(ours) != len(theirs) or not ours or self.doubted:
            return
        agree = [_agrees(t, v[1]) for (_, t), v in zip(theirs, ours, strict=True)]
        if len(agree) > 1 and not any(agree):
            self.doubted = True
            return
        for (k, token), v in zip(theirs, ours, strict=True):
            if not _agrees(token, v[1]):
                self.add(k, "wrong", f"the code computes {v[0]} here, not {token}", "number", v[0])
                return
        for k in sorted({k for k, _ in theirs}):
            self.add(k, "correct", "the value the code computes, at the precision printed", "number")

    # ----- printed output -----------------------------------------------------------------------------------
    def print_call(self, call: ast.Call, env: dict[str, Any]) -> None:
        sep = " "
        for k in call.keywords:
            if k.arg == "sep" and isinstance(k.value, ast.Constant) and isinstance(k.value.value, str):
                sep = k.value.value
            elif k.arg in ("end", "file", "flush", "sep"):
                if k.arg == "end" and not (isinstance(k.value, ast.Constant) and k.value.value == "\n"):
                    raise Unknown("print(end=)")
                if k.arg == "file":
                    raise Unknown("print(file=)")
        if isinstance(call.func, ast.Name) and call.func.id == "display":
            for a in call.args:
                value = self.expr(a, env)
                if self.printed is not None:
                    self.printed.append(("repr", value))
            return
        try:
            parts = [self.render(self.expr(a, env)) for a in call.args]
        except Unknown:
            if self.printed is not None:
                self.printed.append(None)
            return
        if self.printed is not None:
            self.printed.append(("str", sep.join(parts)))

    def render(self, value: Any, spec: str = "", conversion: int = -1, torch_style: bool = False) -> str:
        """What ``print`` shows of a traced value (NumPy's own formatting, under the document's print options)."""
        if isinstance(value, str):
            return value
        if isinstance(value, bool):
            return str(value)
        if isinstance(value, _TorchSize) and all(isinstance(v, Integer) for v in value):
            return f"torch.Size({[int(v) for v in value]})"
        if isinstance(value, tuple) and all(isinstance(v, Integer) for v in value):
            return str(tuple(int(v) for v in value))
        if isinstance(value, Expr) and value.is_number:
            number = int(value) if value.is_Integer else float(value)
            return format(number, spec) if spec else (repr(number) if conversion == ord("r") else str(number))
        if isinstance(value, Tensor) and value.values is not None:
            array = np.asarray(value.values)
            if spec:
                if array.size == 1:
                    return format(float(array.reshape(-1)[0]), spec)
                raise Unknown("format of an array")
            if value.torch or torch_style:
                with np.printoptions(precision=4, floatmode="fixed", suppress=True):
                    return "tensor(" + np.array2string(array, separator=", ", prefix="tensor(") + ")"
            options: dict[str, Any] = {"suppress": self.suppress}
            if self.precision is not None:
                options["precision"] = self.precision
            with np.printoptions(**options):
                return str(array) if array.ndim else repr(array.item())
        raise Unknown("render")

    def compare_printed(self, shown: list[Any], printed: str) -> None:
        """Line up what the trace prints with the cell's output; compare while the words between numbers agree."""
        lines = printed.split("\n")
        if lines and lines[-1] == "":
            lines.pop()
        expected: list[list[str] | None] = []
        for item in shown:
            if item is None:
                expected.append(None)
                continue
            kind, value = item
            try:
                text = value if kind == "str" else self.render(value)
            except Unknown:
                expected.append(None)
                continue
            if kind == "repr" and isinstance(value, Tensor) and not value.torch and value.values is not None:
                options: dict[str, Any] = {"suppress": self.suppress}
                if self.precision is not None:
                    options["precision"] = self.precision
                with np.printoptions(**options):
                    text = repr(np.asarray(value.values))
            expected.append(text.split("\n"))
        # forwards until the first print not followed, then backwards from the end
        k, i = 0, 0
        while i < len(expected) and expected[i] is not None:
            block = expected[i]
            assert block is not None
            if not self.compare_block(block, lines, k):
                return
            k, i = k + len(block), i + 1
        end, j = len(lines), len(expected) - 1
        while j > i:
            block = expected[j]
            if block is None:
                return
            start = end - len(block)
            if start < k or not self.compare_block(block, lines, start):
                return
            end, j = start, j - 1

    def compare_block(self, block: list[str], lines: list[str], start: int) -> bool:
        if start + len(block) > len(lines):
            return False
        pairs = list(zip(block, lines[start:start + len(block)], strict=True))
        if any(_words(a) != _words(b) for a, b in pairs):
            return False
        verdicts = []
        shared = _array_places([x for _, x in pairs])
        for k, (ours, theirs) in enumerate(pairs):
            a, b = _numbers(ours), _number_tokens(theirs)
            if len(a) != len(b):
                return False
            wrong = next(((v, t) for v, t in zip(a, b, strict=True) if not _agrees(t, v[1], shared)), None)
            verdicts.append((start + k + 1, theirs, wrong, bool(a)))
        if self.doubted:
            return True
        if not _localised([(w is None, n) for _, _, w, n in verdicts], [_numbers(x) for x in block],
                          [_number_tokens(x) for _, x in pairs]):
            self.disagree(start + 1, lines[start])
            return True
        if all(w is None for _, _, w, _ in verdicts):
            self.confirmed.update(range(start + 1, start + len(block) + 1))
        for line, text, wrong, has_numbers in verdicts:
            if wrong is not None:
                self.add(line, "wrong", f"the code prints {wrong[0][0]} here, not {wrong[1]}", "number",
                         wrong[0][0], output=True, text=text)
            elif has_numbers:
                self.add(line, "correct", "what the code above prints (traced, at the precision printed)",
                         "number", output=True, text=text)
        return True

    def add(self, line: int, status: str, message: str, kind: str, expected: str | None = None,
            output: bool = False, text: str | None = None) -> None:
        if not self.record:
            return
        if text is None:
            text = self.source_lines[line - 1].strip() if 0 < line <= len(self.source_lines) else ""
        self.findings.append(Finding(line, text, status, message, kind, expected, output))


# ----- helpers ---------------------------------------------------------------------------------------------------
def _blank_magics(source: str) -> str:
    return "\n".join("" if line.lstrip().startswith(("%", "!")) else line for line in source.split("\n"))


def _comments(source: str) -> dict[int, str]:
    out: dict[int, str] = {}
    try:
        for tok in tokenize.generate_tokens(io.StringIO(_blank_magics(source)).readline):
            if tok.type == tokenize.COMMENT:
                out[tok.start[0]] = tok.string.lstrip("#").strip()
    except (tokenize.TokenError, SyntaxError, IndentationError):
        pass
    return out


def _dotted(node: ast.AST) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        base = _dotted(node.value)
        return None if base is None else base + "." + node.attr
    return None


def _is_print(node: ast.expr) -> bool:
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("print", "display")


def _prints(node: ast.AST) -> bool:
    return any(isinstance(n, ast.Call) and _is_print(n) for n in ast.walk(node))


def _names(target: ast.AST) -> list[str]:
    if isinstance(target, ast.Name):
        return [target.id]
    if isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name) and target.value.id == "self":
        return ["self." + target.attr]
    if isinstance(target, (ast.Tuple, ast.List)):
        return [n for t in target.elts for n in _names(t)]
    return []


def _targets(node: ast.stmt) -> list[str]:
    if isinstance(node, ast.Assign):
        return [n for t in node.targets for n in _names(t)]
    if isinstance(node, (ast.AnnAssign, ast.AugAssign)):
        return _names(node.target)
    if isinstance(node, (ast.For,)):
        return _names(node.target)
    if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
        return [node.name]
    return []


def _target_name(target: ast.expr) -> str | None:
    names = _names(target)
    return names[0] if len(names) == 1 and isinstance(target, (ast.Name, ast.Attribute)) else None


def _without_values(value: Any) -> Any:
    return Tensor(value.shape, None, value.claimed, value.torch) if isinstance(value, Tensor) else value


def _literal(node: ast.expr) -> Any:
    try:
        value = ast.literal_eval(node)
    except (ValueError, SyntaxError, TypeError, RecursionError, MemoryError):
        return None
    return value if isinstance(value, list) else None


def _array(values: Any) -> Any:
    if isinstance(values, Expr):
        values = float(values) if not values.is_Integer else int(values)
    try:
        array = np.array(values, dtype=float)
    except (ValueError, TypeError):
        raise Unknown("not an array of numbers") from None
    if array.dtype == object or array.size > MAX_VALUES:
        raise Unknown("array")
    return array


def _created(shape: tuple[Any, ...], fill: Any, torch: bool) -> Tensor:
    known = all(isinstance(s, Integer) for s in shape)
    if known and any(int(s) < 0 for s in shape):
        raise CodeError(f"a negative size in {_shape_text(shape)}")
    values = None
    if known and fill is not None and math.prod(int(s) for s in shape) <= MAX_VALUES:
        values = np.asarray(fill(tuple(int(s) for s in shape)), dtype=float)
    return Tensor(shape, values, torch=torch)


def _elementwise(x: Tensor, values: Any) -> Tensor:
    return Tensor(x.shape, values, x.claimed, x.torch)


def _arith(op: ast.operator, a: Expr, b: Expr) -> Expr:
    if isinstance(op, ast.Add):
        return a + b
    if isinstance(op, ast.Sub):
        return a - b
    if isinstance(op, ast.Mult):
        return a * b
    if isinstance(op, ast.Div):
        if b == 0:
            raise Unknown("division by zero")
        q = a / b
        return Float(float(q)) if q.is_number and not (a.is_Integer and b.is_Integer and q.is_Integer) else q
    if isinstance(op, ast.FloorDiv):
        if b == 0:
            raise Unknown("division by zero")
        return floor(a / b)
    if isinstance(op, ast.Pow):
        if a.is_number and b.is_number:
            if not (b.is_Integer and abs(b) <= 64 and abs(a) < 10 ** 6):  # 2 ** 10 ** 9 is not worked out
                try:
                    return Float(math.pow(float(a), float(b)))
                except (OverflowError, ValueError):
                    raise Unknown("a power too large to follow") from None
            return a ** b
        if not (b.is_number and abs(b) <= 64):
            raise Unknown("a symbolic power")
        return a ** b
    if isinstance(op, ast.Mod):
        return a % b
    raise Unknown("operator")


def _arith_tensor(op: ast.operator, a: Any, b: Any) -> Tensor:
    fn = {ast.Add: np.add, ast.Sub: np.subtract, ast.Mult: np.multiply, ast.Div: np.divide,
          ast.Pow: np.power}.get(type(op))
    if fn is None:
        raise Unknown("operator")
    shapes = [v.shape for v in (a, b) if isinstance(v, Tensor)]
    for v in (a, b):
        if not isinstance(v, (Tensor, Expr)):
            raise Unknown("operand")
    shape = shapes[0] if len(shapes) == 1 else _broadcast(shapes[0], shapes[1])
    va, vb = _np(a), _np(b)
    values = None if va is None or vb is None else fn(np.asarray(va, dtype=float), vb)
    claimed = any(v.claimed for v in (a, b) if isinstance(v, Tensor))
    torch = any(v.torch for v in (a, b) if isinstance(v, Tensor))
    return Tensor(shape, values, claimed, torch)


def _matmul(a: Any, b: Any) -> Tensor:
    if not (isinstance(a, Tensor) and isinstance(b, Tensor)):
        raise Unknown("@ of unknown operands")
    if not a.shape or not b.shape:
        raise CodeError("@ with a scalar")
    sa = (Integer(1),) + a.shape if len(a.shape) == 1 else a.shape
    sb = b.shape + (Integer(1),) if len(b.shape) == 1 else b.shape
    inner = _same(sa[-1], sb[-2])
    claimed = a.claimed or b.claimed
    if inner is False:
        error = CodeError(f"{_shape_text(a.shape)} @ {_shape_text(b.shape)}: the inner sizes {sa[-1]} and "
                          f"{sb[-2]} differ")
        error.claimed = claimed  # type: ignore[attr-defined]
        raise error
    if inner is None:
        raise Unknown("inner sizes")
    batch = _broadcast(sa[:-2], sb[:-2])
    shape = batch + ((sa[-2],) if len(a.shape) > 1 else ()) + ((sb[-1],) if len(b.shape) > 1 else ())
    values = None
    if a.values is not None and b.values is not None:
        values = np.matmul(a.values, b.values)
    return Tensor(shape, values, claimed, a.torch or b.torch)


def _reshape(x: Tensor, sizes: tuple[Any, ...]) -> Tensor:
    sizes = tuple(_size(s) for s in sizes)
    free = [k for k, s in enumerate(sizes) if s == -1]
    total = math.prod(x.shape) if x.shape else Integer(1)
    if len(free) > 1:
        raise CodeError("two -1 in a view")
    if free:
        rest = math.prod(s for k, s in enumerate(sizes) if k not in free)
        sizes = tuple(simplify(total / rest) if k in free else s for k, s in enumerate(sizes))
    verdict = _same(math.prod(sizes) if sizes else Integer(1), total)
    if verdict is False:
        error = CodeError(f"a tensor of shape {_shape_text(x.shape)} ({total} elements) cannot be viewed as "
                          f"{_shape_text(sizes)} ({math.prod(sizes)} elements)")
        error.claimed = x.claimed  # type: ignore[attr-defined]
        raise error
    values = None if x.values is None or not all(isinstance(s, Integer) for s in sizes) else \
        x.values.reshape(tuple(int(s) for s in sizes))
    return Tensor(tuple(sizes), values, x.claimed, x.torch)


def _swap(x: Tensor, a: int, b: int) -> Tensor:
    n = len(x.shape)
    a, b = _axis(Integer(a), n), _axis(Integer(b), n)
    axes = list(range(n))
    axes[a], axes[b] = axes[b], axes[a]
    return _permute(x, tuple(axes))


def _permute(x: Tensor, axes: tuple[int, ...]) -> Tensor:
    n = len(x.shape)
    axes = tuple(_axis(Integer(k), n) for k in axes)
    if sorted(axes) != list(range(n)):
        raise CodeError(f"axes {axes} are not a permutation of {n} axes")
    values = None if x.values is None else np.transpose(x.values, axes)
    return Tensor(tuple(x.shape[k] for k in axes), values, x.claimed, x.torch)


def _softmax(x: Tensor, axis: Any) -> Tensor:
    k = _axis(axis, len(x.shape))
    values = None
    if x.values is not None:
        shifted = x.values - np.max(x.values, axis=k, keepdims=True)
        e = np.exp(shifted)
        values = e / e.sum(axis=k, keepdims=True)
    return Tensor(x.shape, values, x.claimed, x.torch)


def _exact_rank(x: Any) -> Tensor:
    """``np.linalg.matrix_rank`` of a matrix of whole numbers, exactly (python-flint): a floating-point rank with a
    tolerance is not a fact, so any other matrix is left unknown."""
    import flint

    if not isinstance(x, Tensor) or x.values is None or np.ndim(x.values) != 2 or not np.size(x.values):
        raise Unknown("matrix_rank of a matrix whose values are not known")
    values = np.asarray(x.values, dtype=float)
    if not np.all(np.isfinite(values)) or np.any(values != np.round(values)) or np.max(np.abs(values)) >= 2.0 ** 52:
        raise Unknown("matrix_rank of a matrix that is not of whole numbers")
    rank = flint.fmpz_mat([[int(v) for v in row] for row in values.tolist()]).rank()
    return Tensor((), np.asarray(float(rank)))


def _concat(parts: list[Any], axis: Any, stack: bool, torch: bool) -> Tensor:
    if not parts or not all(isinstance(p, Tensor) for p in parts):
        raise Unknown("concatenation of unknown parts")
    first = parts[0]
    n = len(first.shape) + (1 if stack else 0)
    k = _axis(axis, n)
    if stack:
        for p in parts[1:]:
            if len(p.shape) != len(first.shape) or False in [_same(a, b) for a, b in zip(p.shape, first.shape,
                                                                                         strict=True)]:
                raise CodeError("stacked tensors of different shapes")
        shape = first.shape[:k] + (Integer(len(parts)),) + first.shape[k:]
    else:
        for p in parts[1:]:
            if len(p.shape) != len(first.shape):
                raise CodeError("concatenated tensors with different numbers of axes")
            for j, (a, b) in enumerate(zip(p.shape, first.shape, strict=True)):
                if j != k and _same(a, b) is False:
                    raise CodeError(f"concatenated along axis {k}: sizes {a} and {b} of axis {j} differ")
        shape = first.shape[:k] + (sum((p.shape[k] for p in parts), Integer(0)),) + first.shape[k + 1:]
    values = None
    if all(p.values is not None for p in parts):
        values = (np.stack if stack else np.concatenate)([p.values for p in parts], axis=k)
    return Tensor(shape, values, any(p.claimed for p in parts), torch or any(p.torch for p in parts))


def _apply_linear(layer: Linear, x: Any) -> Tensor:
    if not isinstance(x, Tensor) or not x.shape:
        raise Unknown("the input of a layer")
    same = _same(x.shape[-1], layer.fan_in)
    if same is False:
        error = CodeError(f"Linear({layer.fan_in}, {layer.fan_out}) applied to a tensor of shape "
                          f"{_shape_text(x.shape)}: its last axis has {x.shape[-1]} entries, not {layer.fan_in}")
        error.claimed = x.claimed  # type: ignore[attr-defined]
        raise error
    return Tensor(x.shape[:-1] + (layer.fan_out,), None, x.claimed, True)


# ----- what a comment says ---------------------------------------------------------------------------------------
_TUPLE = re.compile(r"(?:torch\.Size\(\[([^\[\]()]*)\]\))|\(([^()]*)\)")
_SIZE_ENTRY = re.compile(r"\s*(?:\d+|[A-Za-z_][\w.]*)(?:\s*(?:\*|//|/|\+|-)\s*(?:\d+|[A-Za-z_][\w.]*))*\s*")


def _tuple_entries(inner: str) -> list[str] | None:
    parts = inner.split(",")
    if parts and not parts[-1].strip() and len(parts) == 2:
        parts = parts[:1]  # (n,)
    elif len(parts) < 2:
        return None
    if not all(_SIZE_ENTRY.fullmatch(p) for p in parts):
        return None
    return [p.strip() for p in parts]


def _shapes_in(text: str) -> list[list[str]]:
    out = []
    for m in _TUPLE.finditer(text):
        inner = m.group(1) if m.group(1) is not None else m.group(2)
        entries = _tuple_entries(inner)
        if entries is not None:
            out.append(entries)
    return out


def _matmul_flow(comment: str) -> tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...], tuple[int, ...] | None
                                        ] | None:
    """``(2, 8, 10, 64) @ (2, 8, 64, 10) -> (2, 8, 10, 10)``: the two shapes a comment multiplies, the result it
    writes and the product's shape (batch sizes broadcast as NumPy does; None when the inner sizes differ); None
    when the comment holds no such product of numeric shapes.

    >>> _matmul_flow("(2, 10, 64) @ (64, 512) -> (2, 10, 512)")[3], _matmul_flow("(4, 3) @ (2, 4) -> (4, 4)")[3]
    ((2, 10, 512), None)
    """
    parts = re.split(r"->|→|=>|(?<![=<>!])=(?!=)", comment)
    if len(parts) < 2 or "@" not in parts[-2]:
        return None
    product = parts[-2].split(":")[-1]  # "S = Q @ K^T : (2, 12, 128, 64) @ (...)": the names, then their shapes
    factors = [_shapes_in(x) for x in product.split("@")]
    result = _shapes_in(parts[-1])
    if len(factors) != 2 or any(len(f) != 1 for f in factors) or len(result) != 1:
        return None
    try:
        a, b, stated = (tuple(int(x) for x in shape) for shape in (factors[0][0], factors[1][0], result[0]))
    except ValueError:
        return None  # sizes by name: the tracer's to judge
    if len(a) < 2 or len(b) < 2:
        return None
    try:
        batch = tuple(int(x) for x in np.broadcast_shapes(a[:-2], b[:-2]))
    except ValueError:
        return a, b, stated, None
    return a, b, stated, (batch + (a[-2], b[-1]) if a[-1] == b[-2] else None)


#: a product of two shapes of numbers and its result, written anywhere ("(2, 8, 10, 64) @ (2, 8, 64, 10) -> ...")
_PRODUCT = re.compile(r"\((?:\s*\d+\s*,)+\s*\d+\s*\)\s*(?:@|×|\\times)\s*\((?:\s*\d+\s*,)+\s*\d+\s*\)"
                      r"\s*(?:->|→|=>|=)\s*\((?:\s*\d+\s*,)+\s*\d+\s*\)")


def shape_products(text: str) -> list[tuple[str, str, str | None]]:
    """The batched products of shapes written in a sentence (three sizes or more in a factor; a product of two
    matrices' shapes is the shape reader's, :func:`.shapes.shape_product`): (status, message, expected) each, the
    product computed as NumPy's ``@`` broadcasts (:func:`_matmul_flow`).

    >>> shape_products("so (2, 8, 10, 64) @ (2, 8, 64, 10) = (2, 8, 10, 64) per batch")[0][0]
    'wrong'
    """
    flows = [_matmul_flow(m.group(0).replace("×", "@").replace("\\times", "@")) for m in _PRODUCT.finditer(text)]
    return [_flow_verdict(f) for f in flows if f is not None and max(len(f[0]), len(f[1])) >= 3]


def _flow_verdict(flow: tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...], tuple[int, ...] | None]
                  ) -> tuple[str, str, str | None]:
    """(status, message, expected) of a product of shapes and the result written for it (:func:`_matmul_flow`)."""
    a, b, stated, got = flow
    product = f"{_shape_text(a)} @ {_shape_text(b)}"
    if got is None:
        return "wrong", f"{product} cannot be multiplied ({a[-1]} columns against {b[-2]} rows)", None
    if got != stated:
        return "wrong", f"{product} is {_shape_text(got)}, not {_shape_text(stated)}", _shape_text(got)
    return "correct", f"{product} is {_shape_text(got)}", None


#: a layer's comment naming the size it takes and the size it gives: ``512 -> 128``, ``d_model → d_k``
_MAPS = re.compile(r"\s*(\w+)\s*(?:->|→|=>)\s*(\w+)\s*")


def _result_shapes(comment: str) -> list[list[str]]:
    """The shapes a comment gives for what its line computes: after the last arrow, every shape of a chain."""
    if re.match(r"\s*[A-Za-z_]\w*\s*:\s*\(", comment) or re.search(r"\bweight\b", comment):
        return []  # "x: (B, n, d)" names another variable; "weight (...)" a layer's
    tail = re.split(r"->|→|=>", comment)[-1]
    out = []
    for segment in re.split(r"(?<![=<>!])=(?!=)", tail):  # "(4, 2) @ (2, 4) = (4, 4)": operands, then the result
        shapes = _shapes_in(segment)
        if len(shapes) == 1:
            out += shapes
    return out


def _shapes_after(comment: str, word: str) -> list[list[str]]:
    at = re.search(rf"\b{word}\b", comment)
    return _shapes_in(comment[at.end():])[:1] if at else []


def _named_shapes(comment: str) -> list[tuple[str, list[str]]]:
    out = []
    for m in re.finditer(r"\b([A-Za-z_]\w*)\s*:\s*(?=\()", comment):
        shapes = _shapes_in(comment[m.end():])
        if shapes:
            out.append((m.group(1), shapes[0]))
    return out


def _printed_comment(comment: str, comments: dict[int, str], line: int, lines: list[str]
                     ) -> list[tuple[int, str]] | None:
    """A printed value written as a comment (``# tensor([[1., 2.]])``), continued on comment-only lines."""
    m = re.search(r"(?:tensor|array)\(\[|^\[", comment)
    if not m:
        return None
    text = comment[m.start():]
    out = [(line, text)]
    depth = text.count("[") - text.count("]")
    k = line + 1
    while depth > 0 and k in comments and k - 1 < len(lines) and lines[k - 1].lstrip().startswith("#"):
        more = comments[k]
        out.append((k, more))
        depth += more.count("[") - more.count("]")
        k += 1
    if depth != 0:
        return None
    last = out[-1][1]
    close = last.rfind("]")
    out[-1] = (out[-1][0], last[:close + 1] + (")" if "(" in out[0][1][:7] else ""))
    return out


#: units an amount in a comment may carry: bytes (binary multiples) and plain counts
_UNITS = {"b": 1, "byte": 1, "bytes": 1, "kib": 2 ** 10, "mib": 2 ** 20, "gib": 2 ** 30, "tib": 2 ** 40,
          "params": 1, "parameters": 1, "flops": 1, "flop": 1, "elements": 1, "values": 1, "entries": 1,
          "scores": 1, "weights": 1, "multiply-adds": 1, "macs": 1}
_TERM = r"(?:\d+(?:\.\d+)?|[A-Za-z_]\w*)"
_EXPR = rf"\(?\s*{_TERM}(?:\s*(?:\*\*|//|[*/+\-])\s*\(?\s*{_TERM}\s*\)?)*\s*\)?"
_UNIT = r"(?:\s+(?i:[KMGT]iB|B|bytes?|params|parameters|FLOPs?|elements|values|entries|scores|weights|MACs))?"


def _arithmetic_sides(comment: str) -> list[tuple[str, str]] | None:
    """The sides of the arithmetic a comment writes, each with the relation before it (``eq``/``approx``): the
    first side is the arithmetic that ends it ("all 32 layers: 32 * 4096"), the last the amount that starts it
    ("128 KiB per token").  None when the comment writes no such chain."""
    text = comment.replace("×", "*").replace("·", "*").replace("−", "-").replace("^", "**")
    text = re.sub(r"(?<=\d),(?=\d{3}(?!\d))", "", text)
    parts = re.split(r"(?<![=<>!])(=|≈|~=)(?![=>])", text)
    if len(parts) < 3 or not re.search(r"\d", text):
        return None
    sides, ops = parts[0::2], ["eq"] + ["approx" if op != "=" else "eq" for op in parts[1::2]]
    first = re.search(rf"({_EXPR}{_UNIT})\s*$", sides[0])
    last = re.match(rf"\s*[~≈]?\s*({_EXPR}{_UNIT})(?![\w.])", sides[-1])
    middle = [re.fullmatch(rf"\s*[~≈]?\s*({_EXPR}{_UNIT})\s*", x) for x in sides[1:-1]]
    found = [first] + middle + [last]
    out = [(m.group(1), op) if m else ("", op) for m, op in zip(found, ops, strict=True)]
    if not any(re.search(r"\*\*|//|[*/+]", t) for t, _ in out):
        return None  # a chain without arithmetic ("d_k = 64") sets or restates; it is not worked out here
    target = out[0][0].strip()
    if re.fullmatch(r"[A-Za-z_]\w*", target) and re.search(rf"\b{target}\b", sides[1]):
        return None  # "# x = x + 1": code in a comment, an assignment and not a claim
    return out


def _with_unit(text: str) -> tuple[str, int]:
    m = re.fullmatch(rf"({_EXPR})\s*([A-Za-z-]+)?\s*", text)
    if not m or not text.strip():
        raise Unknown("not an amount")
    unit = (m.group(2) or "").lower()
    if unit and unit not in _UNITS:
        raise Unknown(unit)
    return m.group(1), _UNITS.get(unit, 1)


#: a comment that is the value of its line's assignment: "= 64", "-> 4718592 bytes", "≈ 0.125", "2,359,296"
_VALUE_COMMENT = re.compile(r"(?:=|==|->|→|≈|~)?\s*(-?(?:\d{1,3}(?:,\d{3})+|\d+(?:_\d{3})*)(?:\.\d+)?(?:[eE][-+]?\d+)?)"
                            r"\s*(?:bytes?|B|params|parameters|weights|elements|entries|values|numbers|FLOPs?|MACs)?\.?")


def _written_number(text: str) -> str | None:
    m = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*[A-Za-z-]*\s*", text)
    return m.group(1) if m else None


def _plain_number(value: Any) -> str:
    return str(int(value)) if getattr(value, "is_Integer", False) else f"{float(value):.6g}"


def _localised(lines: list[tuple[bool, bool]], ours: list[list[tuple[str, float]]], theirs: list[list[str]]) -> bool:
    """Does a disagreement between a printout and the trace sit in some of its numbers (an edited printout), rather
    than in all of them (the code changed after it ran, or a different computation)?  A single printed number
    is its own place."""
    numeric = [ok for ok, has in lines if has]
    if all(numeric):
        return True
    if any(numeric):
        return True
    pairs = [(t, v[1]) for a, b in zip(ours, theirs, strict=True) for v, t in zip(a, b, strict=True)]
    if len(pairs) == 1:
        return True
    shown = sorted(pairs, key=lambda p: float(p[0]))
    computed = sorted(v for _, v in pairs)
    if all(_agrees(t, v) for (t, _), v in zip(shown, computed, strict=True)):
        return True  # the same numbers in another order ((2, 3) for (3, 2)): the display was edited
    return any(_agrees(t, v) and v != 0 for t, v in pairs)


_NUMBER_TOKEN = re.compile(r"(?<![\w.])[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?(?![\w])|\bnan\b|-?\binf\b")


def _number_tokens(text: str) -> list[str]:
    return _NUMBER_TOKEN.findall(text)


def _numbers(text: str) -> list[tuple[str, float]]:
    return [(t, float(t)) for t in _number_tokens(text)]


def _words(text: str) -> list[str]:
    return re.findall(r"[A-Za-z_]{2,}", _NUMBER_TOKEN.sub(" ", text))


def _array_places(lines: list[str]) -> int | None:
    """The decimals a NumPy array printout shows every entry at: NumPy prints the entries of one array at one
    precision and drops trailing zeros (``[0.  1.5 1.  0.5]``: ``1.`` is 1.0 at the precision ``1.5`` shows, not
    any number from 0.5 to 1.5).  The most decimals any entry shows (a lower bound of that precision), for lines
    printed the NumPy way (bracket rows, entries without commas); None for other printouts."""
    rows = [x for x in lines if re.match(r"\s*(?:array\()?\[", x) and "," not in x]
    if not rows or len(rows) != len([x for x in lines if x.strip()]):
        return None
    places = [len(t.split(".")[1]) for x in rows for t in _number_tokens(x) if "." in t and "e" not in t.lower()]
    return max(places) if places else None


def _agrees(token: str, value: float, shared: int | None = None) -> bool:
    """Does a printed number stand for ``value`` (every value that rounds to it, float32 arithmetic allowed)?
    ``shared``: the decimals of the array printout it is an entry of (:func:`_array_places`)."""
    try:
        shown = float(token)
    except ValueError:
        return False
    if math.isnan(shown) or math.isnan(value):
        return math.isnan(shown) and math.isnan(value)
    if math.isinf(shown) or math.isinf(value):
        return shown == value
    mantissa = token.lower().split("e")[0]
    places = len(mantissa.split(".")[1]) if "." in mantissa else 0
    exponent = int(token.lower().split("e")[1]) if "e" in token.lower() else 0
    if shared is not None and "." in mantissa and not exponent:
        places = max(places, shared)
    radius = 0.5 * 10.0 ** (exponent - places)
    return abs(shown - value) <= radius * (1 + 1e-9) + 1e-6 * max(abs(value), 1e-300)

