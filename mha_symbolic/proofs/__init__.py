"""Proofs about multi-head attention; each returns a :class:`Proof` with its checks."""

from __future__ import annotations

from ._proof import Proof, ProofStep
from .conventions import embed_split_weight, split_equals_projection
from .counts import parameter_and_flop_counts
from .decomposition import head_decomposition
from .expressiveness import two_heads_not_one
from .grouped import gqa_equals_repeated_kv
from .scaling import monte_carlo_variance, sqrt_dk_scaling
from .softmax_facts import softmax_jacobian, softmax_saturation, softmax_shift_invariance
from .symmetry import causal_breaks_equivariance, head_permutation_invariance, permutation_equivariance

__all__ = [
    "Proof", "ProofStep", "split_equals_projection", "embed_split_weight", "sqrt_dk_scaling", "monte_carlo_variance",
    "softmax_shift_invariance", "softmax_jacobian", "softmax_saturation", "head_decomposition",
    "head_permutation_invariance", "permutation_equivariance", "causal_breaks_equivariance",
    "parameter_and_flop_counts", "two_heads_not_one", "gqa_equals_repeated_kv",
]
