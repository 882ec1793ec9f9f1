"""Formulas written in Unicode inside prose (`Kᵀ ∈ ℝ^{2×3}`, `q₁·k₂ = 2·2 + 0·0 = 4`), read like inline math, and
powers of e at the precision their exponent is written with (blind set 13: a Unicode tutorial was read only for
its sizes)."""

from __future__ import annotations

from mha_symbolic.check.normalise import unicode_formulas
from mha_symbolic.document import check_text

ONE_HEAD = "Una sola cabeza: n = 3 tokens, d_model = 4 y dₖ = 2.\n\n"


def _found(text: str) -> list[tuple[int, str, str]]:
    return [(f.line, f.latex, f.status) for f in check_text(text, isolate=False).findings
            if f.status not in ("given",)]


def test_unicode_formulas_are_found_in_prose_and_words_are_left_alone():
    text = "So Kᵀ ∈ ℝ^{2×3} y la matriz QKᵀ ∈ ℝ^{3×3}. Por ejemplo, q₁·k₂ = 2·2 + 0·0 = 4 y n = 3 tokens."
    assert [text[a:b] for a, b in unicode_formulas(text)] == ["Kᵀ ∈ ℝ^{2×3}", "QKᵀ ∈ ℝ^{3×3}", "q₁·k₂ = 2·2 + 0·0 = 4"]
    variance = "    Var(q·k / √dₖ) = dₖ / dₖ = 1."
    assert [variance[a:b] for a, b in unicode_formulas(variance)] == ["Var(q·k / √dₖ) = dₖ / dₖ = 1"]
    for prose in ("We take n = 3 tokens and dₖ = 2.", "the softmax (see the appendix) is a row and x = 3",
                  "a (b) c", "La suma es 22."):
        assert unicode_formulas(prose) == []  # sizes are the grammar's; words are no formula


def test_unicode_shapes_and_arithmetic_in_prose_are_judged():
    got = _found(ONE_HEAD + "Así Kᵀ ∈ ℝ^{2×3} y QKᵀ ∈ ℝ^{3×3}; q₁·k₂ = 2·2 + 0·0 = 4.\n")
    assert [s for _, _, s in got] == ["correct", "correct", "correct"]
    bad = _found(ONE_HEAD + "Así Kᵀ ∈ ℝ^{3×2} y QKᵀ ∈ ℝ^{3×3}; q₁·k₂ = 2·2 + 0·0 = 5.\n")
    assert [s for _, _, s in bad] == ["wrong", "correct", "wrong"]


def test_a_power_of_e_is_read_at_the_precision_of_its_exponent():
    """e^{2.8284} ≈ 16.9188 (e^{√8} to four places) was wrong: the exponent is itself rounded."""
    got = _found("We have $e^{2.8284} \\approx 16.9188$, $e^{1.4142} \\approx 4.1133$ and "
                 "$e^{1.4142} \\approx 4.1233$.\n")
    assert [s for _, _, s in got] == ["correct", "correct", "wrong"]


def test_a_unicode_formula_is_put_between_dollars_outside_code_and_math():
    from mha_symbolic.check.extract import _delimit_unicode

    src = ("Así Kᵀ ∈ ℝ^{2×3}, con $d_k = 2$ y `x·y = 3`.\n\n```\nq₁·k₂ = 4\n```\n\nPrice: $5 and q₁·k₂ = 4.\n"
           "\n| a | Kᵀ ∈ ℝ^{2×3} |\n|---|---|\n")
    assert _delimit_unicode(src).split("\n") == [
        "Así $Kᵀ ∈ ℝ^{2×3}$, con $d_k = 2$ y `x·y = 3`.", "", "```", "q₁·k₂ = 4", "```", "",
        "Price: $5 and q₁·k₂ = 4.", "", "| a | $Kᵀ ∈ ℝ^{2×3}$ |", "|---|---|", ""]
