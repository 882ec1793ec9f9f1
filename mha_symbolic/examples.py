"""Named worked examples: the seed tutorials' data as presets.

Each :class:`Example` holds a model, its inputs and notes on every value that the
source did not give (and which we therefore chose).  ``example(name).evaluate()``
computes every step exactly.

======== ============================================================================
name     source and content
======== ============================================================================
seed000  Two tokens, d_model = 4, h = 2, split convention, Q = K = V = X_i per head
         (identity weights).  W_O is not given in the source: identity.
seed001  Eight tokens, d_model = 4, h = 2, split convention, X as listed.  The source
         gives only weight *shapes*; weights here are a documented deterministic
         choice (below).  Its stated W_Q shape (4, 2) does not fit its 2-column head
         slice: see ``seed001_as_stated``.
seed003  One token X = [1, 2, 3, 4], d_model = 4, h = 2, projection convention, with the
         source's W_Q^i, W_K^i, W_V^i.  W_O is not given: identity.
======== ============================================================================

Examples
========

>>> from mha_symbolic.examples import example
>>> E = example("seed003").evaluate()
>>> E["head_1"], E["head_2"]
(Matrix([[4, 11]]), Matrix([[6, 9]]))
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from sympy import eye

from .attention import MultiHeadAttention
from .errors import InputError, require
from .evaluation import Evaluation
from .names import DEFAULT_EXAMPLE

__all__ = ["Example", "EXAMPLES", "DEFAULT_EXAMPLE", "example", "seed001_as_stated"]


@dataclass(frozen=True)
class Example:
    """A worked example: model, inputs, where it comes from, and what we had to choose."""

    name: str
    title: str
    source: str
    model: MultiHeadAttention
    inputs: dict[str, Any]
    chosen: tuple[str, ...] = field(default=())

    def _repr_markdown_(self) -> str:
        chosen = "".join(f"\n- chosen here: {c}" for c in self.chosen)
        return f"**{self.name}**: {self.title}  \nsource: {self.source}{chosen}"

    def evaluate(self, **kwargs: Any) -> Evaluation:
        """Every step's exact matrix (keyword arguments go to :func:`~mha_symbolic.evaluation.evaluate`; an
        input given there replaces the example's own).

        >>> example("seed003").evaluate(X=[[0, 1, 0, 0]])["head_1"]
        Matrix([[0, 2]])
        """
        return self.model.evaluate(**(self.inputs | kwargs))


_I2 = [[1, 0], [0, 1]]
_I4 = eye(4).tolist()

_SEED001_X = [
    [0.2, 0.5, 0.1, 0.8],
    [0.3, 0.7, 0.4, 0.2],
    [0.6, 0.1, 0.9, 0.5],
    [0.4, 0.8, 0.3, 0.7],
    [0.7, 0.2, 0.6, 0.4],
    [0.5, 0.6, 0.2, 0.9],
    [0.8, 0.3, 0.5, 0.1],
    [0.1, 0.9, 0.7, 0.6],
]
# seed 001 gives no weight values; this deterministic choice is small, exact and
# makes the two heads differ: W_Q^i = I, W_K^i = swap, W_V^i = shear.
_SEED001_W = {"W_Q": [_I2, _I2], "W_K": [[[0, 1], [1, 0]]] * 2, "W_V": [[[1, 1], [0, 1]]] * 2, "W_O": _I4}

EXAMPLES: dict[str, Example] = {
    "seed000": Example(
        name="seed000",
        title="Two tokens, two heads, $Q = K = V = X_i$ (split convention)",
        source="seeds/000 (Bengali tutorial, worked example)",
        model=MultiHeadAttention(n=2, d_model=4, h=2, convention="split"),
        inputs={"X": [[1, 0, 1, 0], [0, 1, 0, 1]], "W_Q": [_I2, _I2], "W_K": [_I2, _I2], "W_V": [_I2, _I2],
                "W_O": _I4},
        chosen=("$W^O = I_4$ (the source leaves $W^O$ unspecified)",
                "$W_i^Q = W_i^K = W_i^V = I_2$, i.e. $Q = K = V = X_i$ as the source states"),
    ),
    "seed001": Example(
        name="seed001",
        title="Eight tokens, $d_{model} = 4$, two heads (split convention)",
        source="seeds/001 (detailed calculation example)",
        model=MultiHeadAttention(n=8, d_model=4, h=2, convention="split"),
        inputs={"X": _SEED001_X, **_SEED001_W},
        chosen=("weights are not given in the source: $W_i^Q = I_2$, $W_i^K = [[0,1],[1,0]]$, "
                "$W_i^V = [[1,1],[0,1]]$, $W^O = I_4$ (a documented deterministic choice)",),
    ),
    "seed003": Example(
        name="seed003",
        title="One token, two heads, the source's weights (projection convention)",
        source="seeds/003 (mini numerical example)",
        model=MultiHeadAttention(n=1, d_model=4, h=2, convention="projection"),
        inputs={
            "X": [[1, 2, 3, 4]],
            "W_Q": [[[1, 0], [0, 1], [0, 0], [1, 0]], [[0, 1], [1, 0], [1, 0], [0, 1]]],
            "W_K": [[[1, 1], [0, 1], [1, 0], [0, 1]], [[0, 1], [1, 1], [0, 0], [1, 0]]],
            "W_V": [[[1, 0], [0, 2], [1, 1], [0, 1]], [[0, 1], [1, 1], [0, 2], [1, 0]]],
            "W_O": _I4,
        },
        chosen=("$W^O = I_4$ (the source says only 'some matrix')",),
    ),
}

#: The example used when none is named (``mha-symbolic derive``).


def example(name: str = DEFAULT_EXAMPLE) -> Example:
    """The named example; the error lists the names that exist."""
    require(name, str, "example's name", "the name of an example (a str)")
    try:
        return EXAMPLES[name]
    except KeyError:
        raise InputError(f"no example {name!r}; examples are {', '.join(EXAMPLES)}") from None


def seed001_as_stated() -> dict[str, Any]:
    """Seed 001 with W_Q^i of the stated shape (4, 2): the inputs that make its step Q_1 fail."""
    W42 = [[1, 0], [0, 1], [0, 0], [0, 0]]
    return {"X": _SEED001_X, "W_Q": [W42, W42], "W_K": [W42, W42], "W_V": [W42, W42], "W_O": _I4}
