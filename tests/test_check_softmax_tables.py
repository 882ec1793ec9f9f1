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


# ----- arithmetic written in prose ----------------------------------------------------------------------------------
@pytest.mark.parametrize("line, status", [
    ("Per token: 2 × 32 × 8 × 128 × 2 B = 131,072 B = 128 KiB.", "correct"),
    ("Per token: 2 × 32 × 8 × 128 × 2 B = 131,072 B = 256 KiB.", "wrong"),
    ("At 128K tokens: 128 KB × 131,072 = 16.7 GB just for the cache.", "wrong"),
    ("At 128K tokens: 128 KB × 131,072 = 16.8 GB just for the cache.", "correct"),
    ("So 512 KiB × 4096 = 2,097,152 KiB = 2 GiB for one sequence.", "correct"),
    ("each KV head serves 32 / 8 = 4 query heads", "correct"),
    ("each KV head serves 32 / 8 = 5 query heads", "wrong"),
])
def test_arithmetic_in_prose_is_judged_from_its_own_numbers(line, status):
    assert found(f"Memory.\n\n{line}\n") == [(3, status)]


@pytest.mark.parametrize("line", [
    "2(K,V)*80 layers*64 heads*128*2 B = 2,621,440 B = 2.62 MB",  # the tail of a product with words in it
    "2 x 80 x 8 x 128 x 2 = 327,680 = 0.33MB / token x 131072 = 42.95GB",  # units per token: not one amount
    "over 8 heads that is 786,432 = 3·512², three full matrices",  # a power after the last number
    "i.e. at most 64/2048 = 3.125 % of full rank",  # a percentage
    "Total: 327 680 · 4096 · 4 = 5 368 709 120 B",  # digits grouped by spaces in an English text
    "the trace is $1 - 3/8 = 5/8$, and $6 \\cdot 7 / 2 = 21$ weights",  # math: read by the math reader only
])
def test_prose_that_is_not_a_whole_chain_of_amounts_is_not_read_as_one(line):
    assert [s for _, s in found(f"Memory.\n\n{line}\n") if s == "wrong"] == []


# ----- found by a mutation run of the two readers: each test fails under its mutant -----------------------------------
def test_a_weight_half_a_unit_off_is_wrong_and_a_short_row_is_not_read():
    assert found(TABLE.replace("0.455", "0.456"))[0] == (5, "wrong")  # 0.45505 is not 0.456 at 3 decimals
    assert found(TABLE.replace("| 0.167 |", "| |")) == []  # a row without its weight: not a table of weights


def test_weights_that_sum_to_far_from_one_are_not_one_distribution():
    assert found(TABLE.replace("0.455", "0.755")) == []  # they sum to 1.3


def test_a_score_of_three_decimals_is_an_interval_of_half_a_unit():
    # sigmoid(0.705) = 0.66931..., sigmoid(0.7055) = 0.66942...: 0.6694 holds only inside the interval of 0.705
    doc = "| key | score | weight |\n|---|---|---|\n| a | 0.705 | 0.6694 |\n| b | 0.000 | 0.3306 |\n"
    assert [s for _, s in found(doc)] == ["correct", "correct"]
    assert [s for _, s in found(doc.replace("0.6694", "0.6696").replace("0.3306", "0.3304"))] == ["wrong", "wrong"]


@pytest.mark.parametrize("line, status", [
    ("so 32 / 3 ≈ 11 heads", "correct"),  # "≈ 11": to its last digit
    ("so 32 / 3 = 11 heads", "wrong"),  # "= 11": exact
    ("so 2 × 3 = 6 = 7 in all", "wrong"),  # the last pair of a chain
    ("so 2 × 3 = 6 = 6 in all", "correct"),
])
def test_relations_and_every_pair_of_a_prose_chain(line, status):
    assert found(f"Memory.\n\n{line}\n") == [(3, status)]


def test_numbers_joined_by_relations_without_an_operation_are_not_a_computation():
    assert found("Memory.\n\nOption 1 = 2 and item 3 = 4 in the list.\n") == []


def test_weights_of_exactly_zero_and_one_are_weights():
    doc = "| key | score | weight |\n|---|---|---|\n| a | 20 | 1.000 |\n| b | 0 | 0.000 |\n"
    assert [s for _, s in found(doc)] == ["correct", "correct"]


@pytest.mark.parametrize("line, status", [
    ("Per layer: `2 · 24 · 1024 · 2` bytes = 98,304 bytes.", "correct"),
    ("Per layer: `2 · 24 · 1024 · 2` bytes = 98,034 bytes.", "wrong"),
    ("Per layer: `2 * 24 * 1024 * 2 = 98304` bytes.", "correct"),
])
def test_inline_code_that_holds_only_arithmetic_is_read_like_prose(line, status):
    got = found(f"Memory.\n\n{line}\n")
    assert got and set(got) == {(3, status)}


def test_inline_code_with_names_stays_code():
    assert found("Memory.\n\nSo `n_layers * 2` = 48 here.\n") == []
