"""Local computations of issue 25: a table of scores and weights, and a softmax call written in plain text, are
judged from their own numbers (no model), at the decimals written."""

from __future__ import annotations

import pytest

from mha_symbolic import check_text

TABLE = ("The query gets these scores against the four keys; the weights are their softmax.\n\n"
         "| key | score | weight |\n|-----|-------|--------|\n| the | 2.0 | 0.455 |\n| cat | 1.0 | 0.167 |\n"
         "| sat | 0.5 | 0.102 |\n| on  | 1.5 | 0.276 |\n")


def found(text: str) -> list[tuple[int, str]]:
    return [(f.line, f.status) for f in check_text(text, isolate=False).findings]


def test_a_table_of_scores_and_weights_is_judged_row_by_row():
    assert found(TABLE) == [(5, "correct"), (6, "correct"), (7, "correct"), (8, "correct")]
    assert found(TABLE.replace("0.167", "0.174")) == [(5, "correct"), (6, "wrong"), (7, "correct"), (8, "correct")]


def test_headers_in_another_language_and_a_scaled_column():
    doc = ("| Token | Punktzahl | skalierte Punktzahl | Gewicht |\n|---|---|---|---|\n| a | 4 | 2.0 | 0.665 |\n"
           "| b | 2 | 1.0 | 0.245 |\n| c | 0 | 0.0 | 0.090 |\n")
    assert [s for _, s in found(doc)] == ["correct"] * 3  # the weights are the softmax of the scaled column
    assert "wrong" in [s for _, s in found(doc.replace("0.245", "0.265"))]


def test_scores_written_to_three_places_are_intervals():
    doc = "| key | score | weight |\n|---|---|---|\n| a | 0.707 | 0.6698 |\n| b | 0.000 | 0.3302 |\n"
    assert [s for _, s in found(doc)] == ["correct", "correct"]  # exp(0.7071...) and exp(0.7065) both round so


def test_a_table_that_is_not_one_querys_distribution_is_not_judged():
    doc = "| query | score | weight |\n|---|---|---|\n| a | 2.0 | 0.9 |\n| b | 1.0 | 0.8 |\n"
    assert found(doc) == []  # the weights sum to 1.7: two queries, not one distribution


def test_a_transposed_table_is_judged_on_its_weight_row():
    doc = "| | the | cat | sat |\n|---|---|---|---|\n| score | 1.0 | 2.0 | 0.0 |\n| weight | 0.245 | 0.665 | 0.090 |\n"
    assert found(doc) == [(4, "correct")]
    assert found(doc.replace("0.665", "0.655")) == [(4, "wrong")]


@pytest.mark.parametrize("line, status", [
    ("softmax([2.0, 1.0, 1.0]) → [0.576, 0.212, 0.212]", "correct"),
    ("softmax([2.0, 1.0, 1.0]) → [0.50, 0.25, 0.25] ← spread out", "wrong"),
    ("softmax([20, 10, 10]) -> [0.99, 0.005, 0.005]", "wrong"),
    ("softmax([200, 100, 100]) = [1.00, 0.00, 0.00]", "correct"),
    ("softmax((1, 0)) ≈ (0.731, 0.269)", "correct"),
    ("softmax([1, 0]) = [0.731, 0.269, 0.0]", "wrong"),
])
def test_a_softmax_call_in_plain_text_is_judged_from_its_numbers(line, status):
    assert found(f"When the scores grow:\n\n{line}\n") == [(3, status)]
