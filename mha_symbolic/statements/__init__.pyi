"""Type stub: the names of this package, for type checkers and for lazy_loader.attach_stub."""

from ._base import Statement, generic_instance
from .counts import CountStatement
from .formulas import FormulaStatement, ReadingsAgree
from .masks import MaskedWeights, VariantRankStatement
from .proofs import CostStatement, Informal, ProofStatement
from .ranks import RankComparison, RankOf, RankStatement
from .statistics import ScoreStatistic, score_moments
from .values import DimensionStatement, HeadsDiffer, ReadsWholeInput, ShapeStatement, StatedShapes, ValueStatement
from .verdict import BASES, VERDICTS, Verdict

__all__ = [
    "Statement", "generic_instance", "CountStatement", "FormulaStatement", "ReadingsAgree", "MaskedWeights",
    "VariantRankStatement", "CostStatement", "Informal", "ProofStatement", "RankComparison", "RankOf",
    "RankStatement", "ScoreStatistic", "score_moments", "DimensionStatement", "HeadsDiffer", "ReadsWholeInput",
    "ShapeStatement", "StatedShapes", "ValueStatement", "BASES", "VERDICTS", "Verdict",
]
