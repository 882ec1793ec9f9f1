"""Shared pieces of the statements: the base class, step names, generic instances (private)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from sympy import Abs, ImmutableMatrix, N, Rational

from ..errors import InputError, require
from ..values import to_exact

if TYPE_CHECKING:
    from ..attention import MultiHeadAttention
    from .verdict import Verdict


@dataclass(frozen=True)
class Statement:
    """A mathematical statement in structured form; :meth:`decide` asks the engine about it."""

    def decide(self, model: MultiHeadAttention) -> Verdict:  # pragma: no cover - abstract
        raise NotImplementedError

    @property
    def informal(self) -> bool:
        return False


def step_name(model: MultiHeadAttention, name: str) -> str:
    """``head_i`` means head 1 in a model with a concrete ``h`` (and ``head_1`` means ``head_i``
    in a model with a symbolic one); other names must be steps of the model."""
    if name in model.steps:
        return name
    for general, first in (("_i", "_1"), ("_1", "_i"), ("i", "1")):
        if name.endswith(general) and name[: -len(general)] + first in model.steps:
            return name[: -len(general)] + first
    raise InputError(f"the model has no step {name!r}; steps are {list(model.steps)}")


def generic_instance(model: MultiHeadAttention, seed: int = 0) -> dict[str, Any]:
    """Deterministic integer inputs of the model's (concrete) shapes: entries in -2..2, every head
    different, ``X`` with distinct rows (equal tokens would force equal attention rows); ``Y`` of
    cross-attention, and a mask (``mask``: a 0/1 key-padding row attending to its first key, or an
    additive matrix) as :meth:`MultiHeadAttention.evaluate` takes them."""
    from ..attention import MultiHeadAttention

    require(model, MultiHeadAttention, "generic_instance's model", "a MultiHeadAttention")
    D = model.dims
    if not D.is_concrete:
        raise InputError(f"a generic instance needs concrete sizes, got {D}")
    import numpy as np

    rng = np.random.default_rng(seed)
    out: dict[str, Any] = {}
    for key, value in model.inputs.items():
        syms = value if isinstance(value, list) else [value]
        mats = [rng.integers(-2, 3, size=tuple(int(x) for x in s.shape)) for s in syms]
        if key == "X":
            reach = 2
            while len({tuple(r) for r in mats[0].tolist()}) < mats[0].shape[0]:
                reach += 1
                mats[0] = rng.integers(-reach, reach + 1, size=mats[0].shape)
        if key == "m":  # a key-padding row: 0/1, the first key always attended (no row left without a key)
            mats[0] = rng.integers(0, 2, size=mats[0].shape)
            mats[0][0, 0] = 1
        out[key] = [m.tolist() for m in mats] if isinstance(value, list) else mats[0].tolist()
    for key in ("m", "M"):  # evaluate() takes the mask as ``mask``
        if key in out:
            out["mask"] = out.pop(key)
    return out


def exact_numbers(stated: Any, name: str) -> ImmutableMatrix:
    """A stated number or matrix as exact rationals (decimals as written: ``0.707`` is 707/1000)."""
    rows = stated if isinstance(stated, (list, tuple)) else [[stated]]
    if rows and not isinstance(rows[0], (list, tuple)):
        rows = [rows]
    return ImmutableMatrix([[to_exact(Rational(str(x)) if isinstance(x, float) else x, name) for x in r]
                            for r in rows])


def agrees(value: Any, stated: Any, places: int | None) -> bool:
    """``value`` equals ``stated`` exactly, or rounds to it at ``places`` decimals (half a unit; ``places`` may be
    negative: 1.07e9 is written to 10^7, places -7)."""
    if places is None:
        return bool((value - stated) == 0) or bool(Abs(N(value - stated, 40)) < Rational(1, 10**30))
    return bool(Abs(N(value - stated, 40)) <= Rational(10) ** (-places) / 2 + Rational(1, 10**30))


def shown(M: Any, places: int | None = None) -> str:
    """A matrix or number in messages: exact when short, else to ``places + 2`` decimals."""
    digits = 4 if places is None else max(places + 2, 0)
    if not isinstance(M, ImmutableMatrix):
        return str(M) if len(str(M)) <= 12 else f"{float(N(M, 30)):.{digits}f}"
    if M.rows * M.cols > 8:  # long: the first entries and the shape
        first = ", ".join(str(x) if len(str(x)) <= 12 else f"{float(N(x, 30)):.{digits}f}" for x in list(M)[:4])
        return f"[{first}, ...] ({M.rows} x {M.cols})"
    cells = [[str(x) if len(str(x)) <= 12 else f"{float(N(x, 30)):.{digits}f}" for x in M.row(i)]
             for i in range(M.rows)]
    rows = ["[" + ", ".join(r) + "]" for r in cells]
    return rows[0] if len(rows) == 1 else "[" + ", ".join(rows) + "]"


def written(stated: Any) -> str:
    """The stated numbers as the source wrote them (``[0.5, 1.2]``)."""
    rows = stated if isinstance(stated, (list, tuple)) else [[stated]]
    if rows and not isinstance(rows[0], (list, tuple)):
        rows = [rows]
    text = ["[" + ", ".join(str(x) for x in r) + "]" for r in rows]
    return text[0] if len(text) == 1 else "[" + ", ".join(text) + "]"


def certainly_nonzero(x: Any) -> bool:
    """``x`` (an exact expression) is nonzero, proved by a ball that excludes 0 (or exactly)."""
    from ..rank.certify import to_arb, working_precision

    if x == 0:
        return False
    try:
        with working_precision(256):
            return not to_arb(x).contains(0)
    except InputError:
        return bool(x.is_zero is False)
