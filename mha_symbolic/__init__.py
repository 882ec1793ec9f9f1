"""mha_symbolic: a symbolic math and proof explorer for Transformer multi-head attention."""

from __future__ import annotations

__version__ = "0.1.0"

from .attention import MultiHeadAttention, Step
from .budget import Budget, BudgetExceeded
from .concat import Concat, ConcatHeads
from .derivation import Derivation
from .dims import Dims
from .document import check_file, check_text
from .errors import DimensionError, InputError, MaskError, MHASymbolicError, ParseError, ShapeError, SizeLimitError
from .evaluation import Evaluation, evaluate
from .examples import EXAMPLES, example
from .heads import HeadMatrix
from .latex import latex
from .numeric import NumericMHA, stable_softmax
from .pytorch import PyTorchMHA, from_pytorch
from .rank import rank_bound
from .softmax import Softmax, softmax

__all__ = [
    "MultiHeadAttention", "Step", "Dims", "Softmax", "softmax", "Concat", "ConcatHeads", "HeadMatrix",
    "Evaluation", "evaluate", "EXAMPLES", "example", "NumericMHA", "stable_softmax", "from_pytorch", "PyTorchMHA",
    "Derivation", "check_file", "check_text", "latex", "rank_bound",
    "MHASymbolicError", "DimensionError", "ShapeError", "InputError", "ParseError", "SizeLimitError", "MaskError",
    "Budget", "BudgetExceeded",
]
