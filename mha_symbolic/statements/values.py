r"""Statements about sizes, shapes and values, decided by the model and its exact evaluation.

Examples
========

>>> from mha_symbolic import MultiHeadAttention
>>> from mha_symbolic.statements import DimensionStatement, ValueStatement
>>> DimensionStatement("d_k", lambda D: D.d_k, 2).decide(MultiHeadAttention(n=None, d_model=4, h=2)).verdict
'true'
>>> s = ValueStatement("head_1", [[0.5, 1.2]], places=1,
...                    givens={"X": [[1, 2]], "W_Q": [[[1, 0], [0, 1]]], "W_K": [[[0, 1], [1, 0]]],
...                            "W_V": [[[1, 0], [0, 2]]]})
>>> v = s.decide(MultiHeadAttention(n=1, d_model=2, h=1))
>>> v.verdict, v.expected
('false', '[1, 4]')
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from sympy import ImmutableMatrix, MatrixSymbol, simplify

from .._convert import as_sympy
from ..attention import MultiHeadAttention
from ..dims import Dims
from ..errors import InputError, ShapeError
from ._base import Statement, agrees, certainly_nonzero, exact_numbers, generic_instance, shown, step_name, written
from .verdict import Verdict

__all__ = ["DimensionStatement", "ShapeStatement", "ValueStatement", "StatedShapes", "ReadsWholeInput",
           "HeadsDiffer"]


@dataclass(frozen=True)
class DimensionStatement(Statement):
    """``quantity = stated`` for a quantity of the dimensions (``d_k``, ``sqrt(d_k)``, ``h d_k``)."""

    text: str
    quantity: Callable[[Dims], Any]
    stated: Any
    places: int | None = None

    def decide(self, model: MultiHeadAttention) -> Verdict:
        D = model.dims
        value = simplify(as_sympy(self.quantity(D)).subs(D.definitions))
        stated = exact_numbers(self.stated, self.text)[0, 0]
        if value.free_symbols:
            same = D.equal(value, stated)
            if same is True or same is False:
                return Verdict("true" if same else "false", f"{self.text} = {value}", "proof", expected=str(value))
            return Verdict("undecided", f"{self.text} = {value} depends on {sorted(map(str, value.free_symbols))}, "
                           "which the model leaves symbolic", "none")
        ok = agrees(value, stated, self.places)
        at = "" if self.places is None else f" at {self.places} decimal places"
        return Verdict("true" if ok else "false", f"{self.text} = {shown(value, self.places)}; the statement's "
                       f"{written(self.stated)} {'agrees' if ok else 'differs'}{at}",
                       expected=shown(value, self.places))


@dataclass(frozen=True)
class ShapeStatement(Statement):
    """A step (or the input ``X``, ``W_O``) has the stated shape."""

    step: str
    shape: tuple[Any, Any] | Callable[[Dims], tuple[Any, Any]]

    def decide(self, model: MultiHeadAttention) -> Verdict:
        D = model.dims
        claimed = self.shape(D) if callable(self.shape) else self.shape
        try:
            if self.step in ("X", "W_O"):
                what, shape = self.step, D.shape(getattr(model, self.step).shape)
            else:
                step = model.steps[step_name(model, self.step)]
                what, shape = step.text, step.shape
        except ShapeError as e:
            return Verdict("inconsistent", str(e))
        same = [D.equal(a, b) for a, b in zip(shape, claimed, strict=True)]
        got = f"({shape[0]}, {shape[1]})"
        if all(s is True for s in same):
            return Verdict("true", f"{what}: shape {got}", "proof")
        if any(s is False for s in same):
            return Verdict("false", f"{what}: shape {got}, not {tuple(claimed)}", "proof", expected=got)
        return Verdict("undecided", f"{what}: shape {got}; equal to {tuple(claimed)} only if "
                       f"{[str(s) for s in same if s is not True]}", "none")


@dataclass(frozen=True)
class ValueStatement(Statement):
    """The value of a step, computed exactly from the givens, equals the stated numbers.

    ``givens`` are the inputs the source states (``None`` for a head's matrix it does not give);
    ``assume`` are step values the source takes as given instead of deriving (``{"head_2": ...}``).
    A value that depends on an input the givens leave out is ``assumed``, naming that input.
    """

    step: str
    stated: Any
    places: int | None = None
    givens: dict[str, Any] = field(default_factory=dict)
    assume: dict[str, Any] = field(default_factory=dict)

    def decide(self, model: MultiHeadAttention) -> Verdict:
        name = step_name(model, self.step) if self.step != "X" else "X"
        try:
            E = model.evaluate(**self.givens, given_steps=self.assume or None)
        except ShapeError as e:
            return Verdict("inconsistent", f"the givens do not fit the model: {e}")
        value = ImmutableMatrix(E.inputs["X"]) if name == "X" else E[name]
        missing = sorted(str(s) for s in value.free_symbols if isinstance(s, MatrixSymbol))
        if missing:
            return Verdict("assumed", f"{name} depends on {', '.join(missing)}, which the givens do not state; "
                           "the stated value is an assumption, not a result")
        stated = exact_numbers(self.stated, name)
        assumed = f" (taking {', '.join(self.assume)} as given)" if self.assume else ""
        if stated.shape != value.shape:
            return Verdict("false", f"{name} has shape {value.shape}{assumed}; the statement has {stated.shape}",
                           expected=shown(value, self.places))
        ok = all(agrees(v, s, self.places) for v, s in zip(value, stated, strict=True))
        at = "" if self.places is None else f" at {self.places} decimal place{'s' if self.places != 1 else ''}"
        return Verdict("true" if ok else "false",
                       f"{name} = {shown(value, self.places)} computed exactly{assumed}; the statement's "
                       f"{written(self.stated)} {'agrees' if ok else 'differs'}{at}",
                       expected=shown(value, self.places))


@dataclass(frozen=True)
class StatedShapes(Statement):
    """Inputs of the stated shapes fit the model's steps (``{"W_Q": (4, 2)}``): consistent or not."""

    shapes: dict[str, tuple[int, int]]

    def decide(self, model: MultiHeadAttention) -> Verdict:
        inputs = generic_instance(model)
        for key, shape in self.shapes.items():
            if key not in inputs:
                raise InputError(f"the model has no input {key!r}; inputs are {list(inputs)}")
            block = [[1] * shape[1] for _ in range(shape[0])]
            inputs[key] = [block] * len(inputs[key]) if isinstance(model.inputs[key], list) else block
        stated = ", ".join(f"{k} of shape {v}" for k, v in self.shapes.items())
        try:
            model.evaluate(**inputs)
        except ShapeError as e:
            return Verdict("inconsistent", f"{stated} cannot be used by the model: {e}")
        return Verdict("true", f"{stated} fits every step of the model")


@dataclass(frozen=True)
class ReadsWholeInput(Statement):
    """Step ``step`` (default the queries) reads all of ``X``, not a block of its columns."""

    step: str = "Q_i"

    def decide(self, model: MultiHeadAttention) -> Verdict:
        step = model.steps[step_name(model, self.step)]
        reads = model.X in step.expr.atoms(MatrixSymbol) and not any(
            getattr(a, "parent", None) == model.X for a in step.expr.atoms(type(model.X[:, :1])))
        return Verdict("true" if reads else "false", f"{step.text}, i.e. {step.expr}", "proof")


@dataclass(frozen=True)
class HeadsDiffer(Statement):
    """Two heads' ``step`` (e.g. ``A``) differ: exhibited on an instance (``givens``, or a generic one)."""

    step: str = "A"
    heads: tuple[int, int] = (1, 2)
    givens: dict[str, Any] | None = None

    def decide(self, model: MultiHeadAttention) -> Verdict:
        inputs = self.givens if self.givens is not None else generic_instance(model)
        E = model.evaluate(**inputs)
        a, b = (E[f"{self.step}_{k}"] for k in self.heads)
        differ = any(certainly_nonzero(x - y) for x, y in zip(a, b, strict=True))
        names = f"{self.step}_{self.heads[0]} and {self.step}_{self.heads[1]}"
        if differ:
            return Verdict("true", f"{names} differ on an exact instance ({shown(a)} vs {shown(b)}); "
                           "with equal weights in both heads they coincide", "certified witness",
                           scope="for some weights (not for all)")
        return Verdict("false", f"{names} are equal on this instance: {shown(a)}")
