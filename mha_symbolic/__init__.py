"""mha_symbolic: a symbolic math and proof explorer for Transformer multi-head attention.

The public API is ``__all__`` below. Each name is imported when first used (PEP 562): the model's objects
import SymPy, the document checker, numeric code, derivations, ranks and checkpoints only themselves, so
``from mha_symbolic import MultiHeadAttention`` costs little more than ``import sympy``, and the command line
answers ``--help`` without importing SymPy at all.

``__all__`` shares no name with SymPy's, so ``from sympy import *`` and ``from mha_symbolic import *`` can be
used together. Three names that SymPy also defines are reached through their modules or by an explicit import:
``mha_symbolic.latex.latex``, ``mha_symbolic.evaluation.evaluate`` and ``mha_symbolic.errors.ShapeError``
(``from mha_symbolic import ShapeError`` also works). ``mha_symbolic.latex`` and ``mha_symbolic.softmax`` are
the modules, never a function of the same name.

Heads are numbered from 1 everywhere (``head_1 .. head_h`` in the steps, in circuits, in the CLI's tables and
in JSON), as in the papers; layers of a checkpoint are numbered from 0, as in its tensor names.

The number of (query) heads is ``h`` everywhere the package names it itself: ``MultiHeadAttention(h=...)``,
``Dims``, derivations and every JSON key; on the command line it is ``--heads`` (``-h`` is help; ``ranks``
also accepts ``--num-heads``, the same option). Only the loaders of torch and Hugging Face weights
(``from_pytorch``, ``from_state_dict``, ``circuit_ranks``) take ``num_heads=``, the name those libraries use
(``nn.MultiheadAttention(embed_dim, num_heads)``), so code written for them reads the same.
"""

from __future__ import annotations

import importlib
import importlib.util
from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

from .errors import DimensionError, InputError, MaskError, MHASymbolicError, ParseError, SizeLimitError
from .errors import ShapeError as ShapeError  # importable by name; not in __all__ (SymPy has a ShapeError)

# name -> the module that defines it, imported on first use (PEP 562): `import mha_symbolic` alone imports no
# SymPy, so the command line answers `--help` at once; the first model built imports it
_LAZY = {
    "MultiHeadAttention": "attention", "Step": "attention",
    "Concat": "concat", "ConcatHeads": "concat",
    "Dims": "dims",
    "HeadMatrix": "heads",
    "Softmax": "softmax",
    "Budget": "budget", "BudgetExceeded": "budget",
    "Derivation": "derivation",
    "check_file": "document", "check_text": "document",
    "Evaluation": "evaluation", "evaluate": "evaluation",
    "EXAMPLES": "examples", "example": "examples",
    "NumericMHA": "numeric", "stable_softmax": "numeric",
    "PyTorchMHA": "pytorch", "from_pytorch": "pytorch",
    "rank_bound": "rank",
}

__all__ = [
    "MultiHeadAttention", "Step", "Dims", "Softmax", "Concat", "ConcatHeads", "HeadMatrix",
    "Evaluation", "EXAMPLES", "example", "NumericMHA", "stable_softmax", "from_pytorch", "PyTorchMHA",
    "Derivation", "check_file", "check_text", "rank_bound",
    "MHASymbolicError", "DimensionError", "InputError", "ParseError", "SizeLimitError", "MaskError",
    "Budget", "BudgetExceeded",
]

if TYPE_CHECKING:  # the lazy names, for type checkers
    from .attention import MultiHeadAttention, Step
    from .budget import Budget, BudgetExceeded
    from .concat import Concat, ConcatHeads
    from .derivation import Derivation
    from .dims import Dims
    from .document import check_file, check_text
    from .evaluation import Evaluation
    from .evaluation import evaluate as evaluate
    from .examples import EXAMPLES, example
    from .heads import HeadMatrix
    from .numeric import NumericMHA, stable_softmax
    from .pytorch import PyTorchMHA, from_pytorch
    from .rank import rank_bound
    from .softmax import Softmax


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is not None:
        value = getattr(importlib.import_module(f".{module}", __name__), name)
        globals()[name] = value
        return value
    if importlib.util.find_spec(f".{name}", __name__) is not None:  # a submodule: mha_symbolic.rank, ...
        return importlib.import_module(f".{name}", __name__)
    raise AttributeError(f"module 'mha_symbolic' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))
