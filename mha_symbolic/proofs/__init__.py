"""Proofs about multi-head attention; each returns a :class:`Proof` with its checks."""

from __future__ import annotations

from ._proof import Proof, ProofStep
from .conventions import embed_split_weight, split_equals_projection

__all__ = ["Proof", "ProofStep", "split_equals_projection", "embed_split_weight"]
