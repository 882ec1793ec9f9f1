"""Statements about attention in structured form, each decided by the engine on the model it is given.

The claims registry (:mod:`mha_symbolic.claims`) is a list of such statements; changing the
model's mathematics (its scale, convention, head widths...) changes what the engine answers.
"""

from __future__ import annotations

from ._base import Statement, generic_instance
from .counts import CountStatement
from .formulas import FormulaStatement, ReadingsAgree
from .masks import MaskedWeights, VariantRankStatement
from .proofs import CostStatement, Informal, ProofStatement
from .ranks import RankComparison, RankOf, RankStatement
from .statistics import ScoreStatistic, score_moments
from .values import DimensionStatement, HeadsDiffer, ReadsWholeInput, ShapeStatement, StatedShapes, ValueStatement
from .verdict import BASES, VERDICTS, Verdict

__all__ = ["Verdict", "VERDICTS", "BASES", "Statement", "generic_instance", "DimensionStatement",
           "ShapeStatement", "ValueStatement", "StatedShapes", "ReadsWholeInput", "HeadsDiffer", "RankStatement",
           "RankOf", "RankComparison", "FormulaStatement", "ReadingsAgree",
           "ScoreStatistic", "score_moments", "ProofStatement", "CostStatement", "CountStatement", "Informal",
           "MaskedWeights", "VariantRankStatement"]
