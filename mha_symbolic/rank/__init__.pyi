"""Type stub: the names of this package, for type checkers and for lazy_loader.attach_stub."""

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
    "RankBound", "RuleApplication", "provably_le", "rank_bound", "simplify_min", "MinorCertificate", "NumericalRank",
    "certified_rank", "certify_rank_at_least", "exact_dyadic", "exact_rank", "numerical_rank", "RankClaim",
    "bottleneck_theorem", "low_rank_bottleneck", "multihead_rank_comparison", "softmax_rank_counterexample",
    "DEFAULT_GRID", "SweepResult", "rank_sweep", "variant_rank_bounds", "W_OV", "W_QK", "RankRow", "rank_report",
    "witness_inputs",
]
