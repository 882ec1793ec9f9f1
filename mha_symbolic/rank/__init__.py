"""Rank explorer: proven upper bounds, certified ranks, witnesses and counterexamples."""

from __future__ import annotations

from .bounds import RankBound, RuleApplication, provably_le, rank_bound, simplify_min
from .certify import (
                      MinorCertificate,
                      NumericalRank,
                      certified_rank,
                      certify_rank_at_least,
                      exact_dyadic,
                      exact_rank,
                      numerical_rank,
)
from .counterexamples import (
    RankClaim,
    bottleneck_theorem,
    low_rank_bottleneck,
    multihead_rank_comparison,
    softmax_rank_counterexample,
)
from .sweep import DEFAULT_GRID, SweepResult, rank_sweep
from .variants import variant_rank_bounds
from .witness import W_OV, W_QK, RankRow, rank_report, witness_inputs

__all__ = [
    "RankBound", "RuleApplication", "rank_bound", "simplify_min", "provably_le",
    "MinorCertificate", "NumericalRank", "certified_rank", "certify_rank_at_least", "exact_dyadic", "exact_rank",
    "numerical_rank",
    "RankClaim", "bottleneck_theorem", "low_rank_bottleneck", "multihead_rank_comparison",
    "softmax_rank_counterexample",
    "DEFAULT_GRID", "SweepResult", "rank_sweep",
    "W_OV", "W_QK", "RankRow", "rank_report", "witness_inputs", "variant_rank_bounds",
]
