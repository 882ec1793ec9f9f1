"""Powers of e read at the precision their exponent is written with, and the transpose of one head's K in a
single-head example (blind set 13)."""

from __future__ import annotations

from mha_symbolic.document import check_text


def _found(text: str) -> list[str]:
    return [f.status for f in check_text(text, isolate=False).findings if f.status != "given"]


def test_a_power_of_e_is_read_at_the_precision_of_its_exponent():
    """e^{2.8284} ≈ 16.9188 (e^{√8} to four places) was wrong: the exponent is itself rounded."""
    assert _found("We have $e^{2.8284} \\approx 16.9188$, $e^{1.4142} \\approx 4.1133$ and "
                  "$e^{1.4142} \\approx 4.1233$.\n") == ["correct", "correct", "wrong"]


def test_the_transpose_of_one_heads_k():
    """`K^T in R^{2 x 3}` with n = 3, d_k = 2 and one head was read as the layer's K (n x d_model): wrong."""
    one_head = "One head: $n = 3$ tokens, $d_{model} = 4$ and $d_k = 2$.\n\n"
    assert _found(one_head + "So $K^\\top \\in \\mathbb{R}^{2 \\times 3}$.\n") == ["correct"]
    assert _found(one_head + "So $K^\\top \\in \\mathbb{R}^{3 \\times 2}$.\n") == ["wrong"]  # neither reading fits
