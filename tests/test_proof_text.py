"""Every proof's text, as a reader sees it, pinned: statement, steps with their formulas, checks, LaTeX.

A proof's prose is part of its result (the steps are the argument; the checks say what was computed). A change
to any of them -- a formula, a check's name, the statement -- fails here and shows the difference; after a
deliberate change, regenerate with ``MHA_UPDATE_SNAPSHOTS=1 pytest tests/test_proof_text.py`` and review the
diff of ``tests/snapshots/proofs.txt``.  (Mutation testing found that no test read the text of any proof.)
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from mha_symbolic import proofs

SNAPSHOT = Path(__file__).parent / "snapshots" / "proofs.txt"
PROOFS = ["split_equals_projection", "parameter_and_flop_counts", "head_decomposition", "two_heads_not_one",
          "sqrt_dk_scaling", "softmax_jacobian", "softmax_saturation", "softmax_shift_invariance",
          "causal_breaks_equivariance", "head_permutation_invariance", "permutation_equivariance"]


def render(name: str) -> str:
    p = getattr(proofs, name)()
    return f"=== {name}\n{p}\n--- latex\n{p.latex()}\n"


def stored() -> dict[str, str]:
    text = SNAPSHOT.read_text(encoding="utf-8")
    return {block.split("\n", 1)[0]: "=== " + block for block in text.split("=== ")[1:]}


@pytest.mark.parametrize("name", PROOFS)
def test_proof_text_is_unchanged(name):
    now = render(name)
    if os.environ.get("MHA_UPDATE_SNAPSHOTS") == "1":
        blocks = stored() if SNAPSHOT.is_file() else {}
        blocks[name] = now
        SNAPSHOT.write_text("".join(blocks[k] for k in PROOFS if k in blocks), encoding="utf-8")
    assert stored()[name] == now


def test_snapshot_holds_every_proof_verified():
    text = SNAPSHOT.read_text(encoding="utf-8")
    assert text.count("=== ") == len(PROOFS)
    assert "NOT verified" not in text and "-> FAILS" not in text
