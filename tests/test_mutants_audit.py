"""Tests for the survivors a mutation audit named in issue 25: each fails if its mutant is applied."""

from __future__ import annotations

import numpy as np
import pytest

from mha_symbolic import check_text
from mha_symbolic.rank.circuits import dyadic_integers

_SIZES = "We use $n = 3$, $d_{model} = 4$, $h = 2$.\n\n"


@pytest.mark.parametrize("claim, status", [
    (r"2 \ge \mathrm{rank}(Q_1 K_1^T)", "correct"),   # R >= rank(E) is rank(E) <= R, not flipped
    (r"\mathrm{rank}(Q_1 K_1^T) \le 2", "correct"),
    (r"1 \ge \mathrm{rank}(Q_1 K_1^T)", "wrong"),     # refuted by an exact instance at these sizes
    (r"\mathrm{rank}(Q_1 K_1^T) \le 1", "wrong"),
], ids=["R-ge-rank", "rank-le-R", "1-ge-rank", "rank-le-1"])
def test_a_rank_claim_written_either_way_round(claim, status):
    found = [f.status for f in check_text(_SIZES + f"$${claim}$$\n", isolate=False).findings if f.line == 3]
    assert found == [status]


def test_float64_factors_keep_their_53_bits():
    # 1 + 2^-40 is exact in float64 and rounds to 1 in float32: with 24 mantissa bits this matrix would have rank 1
    A = np.array([[1.0, 1.0], [1.0, 1.0 + 2.0**-40]], dtype=np.float64)
    M, e = dyadic_integers(A)
    assert M.rank() == 2
    assert [[int(x) * 2.0**e for x in row] for row in M.tolist()] == A.tolist()
    M32, _ = dyadic_integers(A.astype(np.float32))
    assert M32.rank() == 1  # the float32 copy really is rank 1
