"""Numbers as the document writes them: its decimal mark and digit grouping, each entry of a vector at its own
places, links of written numbers computed alone, and amounts whose subject is more than one step."""

from __future__ import annotations

import pytest

from mha_symbolic import check_text
from mha_symbolic.check.numerals import as_points, decimal_comma


def verdicts(text: str, line: int) -> list[str]:
    return [f.status for f in check_text(text, isolate=False).findings if f.line == line]


PT = ("# Contagem\n\n"
      "Com dₖ = 64 e σ² = 0,5 temos σ⁴ = 0,25.\n\n"
      "Cada cabeça tem W_Q^{{(i)}} ∈ ℝ^{{768×64}}, ou seja, 768 · 64 = {per_head} parâmetros.\n\n"
      "Total: $4 \\cdot 768^2 = 2.359.296$ parâmetros.\n")


@pytest.mark.parametrize("per_head, status", [("49.152", "correct"), ("49.512", "wrong")])
def test_points_group_thousands_where_the_comma_is_the_decimal_mark(per_head, status):
    doc = PT.format(per_head=per_head)  # (the shape W_Q^{(i)} \in R^{768 x 64} beside it: unchecked, no d_model)
    assert [v for v in verdicts(doc, 5) if v != "unchecked"] == [status]
    assert verdicts(doc, 7) == ["correct"]


def test_points_stay_decimals_elsewhere():
    # no comma decimal, or a point grouping that never occurs twice, or code: a point is a decimal point
    assert as_points("d = 1.536 and 49.152") == "d = 1.536 and 49.152"
    text = "σ² = 0,5 e 2.359.296\n```\nx = 1.536\n```\n`y = 2.304` e 2.304\n"
    assert decimal_comma(text)
    assert as_points(text) == "σ² = 0.5 e 2359296  \n```\nx = 1.536\n```\n`y = 2.304` e 2304 \n"
    assert as_points('{"cells": [], "x": "σ² = 0,5 e 2.359.296"}') == '{"cells": [], "x": "σ² = 0.5 e 2.359.296"}'


def test_a_decimal_comma_before_punctuation_and_in_semicolon_tuples():
    assert as_points("σ² = 0,25, desvio √0,25 = 0,5.") == "σ² = 0.25, desvio √0.25 = 0.5."
    assert as_points("α ≈ (0,6652; 0,2447; 0,0900), soma 1,5 GiB") == "α ≈ (0.6652, 0.2447, 0.0900), soma 1.5 GiB"
    assert as_points("x = (0,1) e [1,0] e 1,2,3; 0,5 GiB") == "x = (0,1) e [1,0] e 1,2,3; 0.5 GiB"


@pytest.mark.parametrize("written, status", [
    ("qKᵀ = (1+0+2+1, 0+0+2+0, 1+0+0−1) = (4, 2, 0)", "correct"),
    ("qKᵀ = (1+0+2+1, 0+0+2+0) = (4, 3)", "wrong"),
    ("Raw scores: qKᵀ = (1+0+2+1, 0+0+2+0, 1+0+0−1) = (4, 2, 1).", "wrong"),
])
def test_links_of_written_numbers_are_judged_without_the_model(written, status):
    # the model cannot evaluate qK^T here (no sizes): the link of written numbers is a local computation
    assert verdicts(f"# Scores\n\n{written}\n", 3) == [status]


def test_an_argument_of_a_function_is_no_size_binding():
    from mha_symbolic.check.read import constraints, settings

    assert settings("the maximum min(d_v, n) = 2 allowed") == []
    assert constraints("min(d_v, n) <= 5") == []
    assert [s.name for s in settings("the sizes (d_k = 64) and (n = 5)")] == ["d_k", "n"]
    doc = "# Example\n\n$n = 4$ tokens and $d_v = 2$.\n\nrank(H1) = 2, the maximum min(d_v, n) = 2.\n"
    assert "inconsistent" not in verdicts(doc, 5)


def test_a_sentence_opening_at_a_configuration_binds_its_sizes():
    from mha_symbolic.check.prose import scope

    assert scope("At GPT-2-small scale (n = 1024, d_model = 768, h = 12, d_k = 64), QK^T costs") == \
        {"n": 1024, "d_model": 768, "h": 12, "d_k": 64}
    assert scope("At n = 1024 the cost is 5.") == {"n": 1024}
    assert scope("At most 8 heads share one key.") == {} and scope("Look at n = 5 here.") == {}


def test_flops_of_both_products_together_are_not_one_steps():
    doc = ("# Cost\n\nWith $n = 5$, $d_{model} = 16$ and $h = 4$ heads.\n\n"
           "The core (QK^T + AV) costs 1600 FLOPs per layer.\n")  # 2 x 4 heads x 200
    assert "wrong" not in verdicts(doc, 5)
    one = "# Cost\n\nWith $n = 5$, $d_{model} = 16$ and $h = 4$ heads.\n\nThe scores QK^T of one head cost 999 FLOPs.\n"
    assert verdicts(one, 5) == ["wrong"]  # one step named: judged


@pytest.mark.parametrize("written, status", [
    ("2·1024²·64 = 134,217,728 FLOPs per head.", "correct"),
    ("2·1024²·64 = 67,108,864 FLOPs per head.", "wrong"),
    ("2·1024^2·64 = 67,108,864 FLOPs per head.", "wrong"),
])
def test_a_power_in_prose_arithmetic_is_read(written, status):
    from mha_symbolic.check.prose_amounts import judge_prose_amounts

    assert [v[0] for v in judge_prose_amounts(written)] == [status]


def test_a_number_followed_by_a_letter_binds_no_size():
    from mha_symbolic.check.prose import scope

    assert scope("at $n = 2d = 1536$ tokens, and beyond") == {} and scope("with n = 2d the parts") == {}
    doc = ("# FLOPs\n\n$n = 128$ and $d = 768$.\n\n"
           "The quadratic part catches up when $4 n^2 d = 8 n d^2$, i.e. at $n = 2d = 1536$ tokens.\n")
    assert "wrong" not in verdicts(doc, 5)


def test_thousands_separators_in_a_sentences_formula():
    doc = "# GQA\n\nSo K and V are each a quarter as wide as Q: 1,024 / 4,096 = 1/4.\n"
    assert set(verdicts(doc, 3)) == {"correct"}
    assert "wrong" in verdicts("# GQA\n\nSo K and V are narrower than Q: 1,024 / 4,096 = 1/2.\n", 3)


def test_a_power_of_two_that_names_a_unit_is_that_power_not_an_amount_and_its_exponent():
    from mha_symbolic.check.prose_amounts import judge_prose_amounts

    got = judge_prose_amounts("Units: 1 KiB = 1024 bytes, 1 MiB = 2^20 bytes, 1 GiB = 2^30 bytes.")
    assert [v[0] for v in got] == ["correct"] * 3  # 2^20 and 2^30 are the units' own powers, read whole
    got = judge_prose_amounts("Units: 1 KiB = 1024 bytes, 1 MiB = 2^20 bytes, 1 GiB = 2^31 bytes.")
    assert [v[0] for v in got] == ["correct", "correct", "wrong"]


def test_the_input_space_written_in_plain_text_declares_the_convention():
    # "X ∈ R^{d × n}" (a plain R, tokens as columns) is read, and it says the document's convention
    doc = ("# Notes\n\nThe input is X ∈ R^{d × n}: d features (rows) by n tokens (columns).\n\n"
           "Scores. S = Kᵀ Q / √d_k ∈ R^{n × n}.\n")
    assert verdicts(doc, 3) == ["correct"] and verdicts(doc, 5) == ["correct"]


def test_a_model_named_with_digits_opens_a_condition():
    from mha_symbolic.check.prose import scope

    assert scope("For LLaMA-7B at n = 2048: 274 + 68 = 342") == {"n": 2048}
    doc = ("# FLOPs\n\nFor BERT-base at its maximum n = 512: 8 × 512 × 768² = 2,415,919,104.\n"
           "For LLaMA-7B at n = 2048: 8 × 2048 × 4096² = 274,877,906,944 FLOPs per layer.\n")
    assert "inconsistent" not in verdicts(doc, 4)


@pytest.mark.parametrize("second, status", [("1.4621", "correct"), ("1.5621", "wrong")])
def test_a_combination_of_named_rows_with_rounded_weights(second, status):
    # 0.2689·v₁ + 0.7311·v₂ with the exact weights e/(e+e²)...: 1.4621, where the rounded weights give 1.4622
    doc = ("# Outputs\n\nTake v₁ = (1, 0, 2, 0) and v₂ = (0, 2, 0, 1).\n\n"
           f"    o₁ = 0.2689·v₁ + 0.7311·v₂ = (0.2689, {second}, 0.5379, 0.7311)\n")
    assert verdicts(doc, 5) == [status]


def test_numbers_as_points_keep_every_line_in_place():
    # a tilde fence is code too; every rewritten line keeps its length (columns stay where they were)
    text = "σ² = 0,5 e 2.359.296\n~~~\nx = 1.536\n~~~\n$e \\approx 2{,}718$ e 1,5 GiB\n"
    out = as_points(text)
    assert out.split("\n")[2] == "x = 1.536"
    assert [len(x) for x in out.split("\n")] == [len(x) for x in text.split("\n")]
    assert "2.718" in out and "2359296" in out


RESTATED = ("# Memory\n\n"
            "The scores of one layer take $196{{,}}608 \\cdot 4 = 786{{,}}432$ bytes, i.e. {ie}, for fp32.\n\n"
            "Per token the cache holds 2 · 40 · 128 · 2 = 20,480 bytes ({paren}).\n\n"
            "Die Summe ist 6 MiB, d.h. {dh}.\n\n"
            "It needs 2 GiB or 4 GiB depending on the dtype, and 160 MiB (320 MiB with fp32).\n")


@pytest.mark.parametrize("ie, paren, dh, status", [
    ("768 KiB", "20 KiB", "6291456 Bytes", "correct"),
    ("0.75 MiB", "≈ 20 KiB", "6,291,456 bytes", "correct"),
    ("768 MiB", "40 KiB", "6291456 KiB", "wrong"),
])
def test_an_amount_restated_in_another_unit_is_compared_at_its_written_precision(ie, paren, dh, status):
    # an apposition ("i.e.", a bracket, "d.h.") restates the amount before it: judged from the two amounts alone
    doc = RESTATED.format(ie=ie, paren=paren, dh=dh)
    assert status in verdicts(doc, 3)
    assert status in verdicts(doc, 5)
    assert verdicts(doc, 7) == [status]
    assert not verdicts(doc, 9)  # alternatives in one unit, an amount for another dtype: nothing restated


@pytest.mark.parametrize("combination, status", [
    ("$0.8044\\,(2, 1) + 0.1956\\,(1, 3) = (1.8044,\\ 1.3911)$", "correct"),  # 1.3912 from the rounded weights
    ("0.8044·(2, 1) + 0.1956·(1, 3) = (1.8044, 1.3911)", "correct"),
    ("$0.8044 \\cdot (2, 1) + 0.1956 \\cdot (1, 3) = (1.8044, 1.3961)$", "wrong"),
])
def test_weights_times_rows_written_as_tuples(combination, status):
    # a number times a tuple of numbers is that multiple of the row, judged at the precision the weights are written
    assert verdicts(f"# Output\n\nOutput row 1: {combination}.\n", 3) == [status]


ROWS = """Softmax row by row:

- Row 2: $e^{1/\\sqrt{2}} \\approx 2.0281$, $e^{5/\\sqrt{2}} \\approx 34.3133$, sum $36.3414$, weights $(WEIGHTS,\\ 0)$.
"""


@pytest.mark.parametrize("weights, status", [("0.0558,\\ 0.9442", "correct"), ("0.0588,\\ 0.9412", "wrong"),
                                             ("0.9442,\\ 0.0558", "wrong")])
def test_weights_written_after_their_exponentials_are_each_over_the_sum(weights, status):
    """A local computation: the exponentials as written (each the interval it rounds), a masked key a bare 0."""
    found = check_text(ROWS.replace("WEIGHTS", weights), isolate=False).findings
    assert [f.status for f in found if f.line == 3 and f.kind == "number"] == [status]


ENTRY = """# Output

$$O_1 = \\begin{pmatrix} 2.0000 & 1.0000 \\\\ 1.8133 & 1.5812 \\end{pmatrix}$$

For example $(O_1)_{21} = 0.0454 \\cdot 2 + 0.7679 \\cdot 2 + 0.1867 \\cdot 1 = VALUE$.
"""


@pytest.mark.parametrize("value, status", [("1.8133", "correct"), ("1.8313", "wrong")])
def test_an_entry_written_as_arithmetic_on_numbers_is_the_last_number_and_its_arithmetic_a_link(value, status):
    found = [f.status for f in check_text(ENTRY.replace("VALUE", value), isolate=False).findings if f.line == 5]
    assert found == [status]


def test_an_entry_whose_arithmetic_is_wrong_is_wrong_even_where_its_value_agrees():
    text = ENTRY.replace("0.1867 \\cdot 1", "0.1867 \\cdot 2").replace("VALUE", "1.8133")
    assert [f.status for f in check_text(text, isolate=False).findings if f.line == 5] == ["wrong"]


@pytest.mark.parametrize("line, expected", [
    # the exponentials as written, each the interval it rounds: at one decimal, 0.2703 (1.0 / 3.7) and the exact
    # 0.2689 both hold, 0.2900 does not
    (r"$e^{0} \approx 1.0$, $e^{1} \approx 2.7$, weights $(0.2703, 0.7297)$", "correct"),
    (r"$e^{0} \approx 1.0$, $e^{1} \approx 2.7$, weights $(0.2689, 0.7311)$", "correct"),
    (r"$e^{0} \approx 1.0$, $e^{1} \approx 2.7$, weights $(0.2900, 0.7100)$", "wrong"),
    # at four decimals a weight one unit off its interval is wrong, one within the rounding is not
    (r"$e^{0} \approx 1.0000$, $e^{1} \approx 2.7183$, weights $(0.2690, 0.7310)$", "correct"),
    (r"$e^{0} \approx 1.0000$, $e^{1} \approx 2.7183$, weights $(0.2691, 0.7309)$", "wrong"),
    (r"$e^{0} \approx 1.0000$, $e^{1} \approx 2.7183$, weights $(0.2689, 0, 0.7311)$", "correct"),  # a masked key
])
def test_weights_after_exponentials_at_the_precision_each_is_written(line, expected):
    from mha_symbolic.check.softmax_tables import exponential_weights

    assert [v[0] for v in exponential_weights(line)] == [expected]


@pytest.mark.parametrize("line", [
    r"weights $(0.2689, 0.7311)$ from $e^{0} \approx 1.0000$, $e^{1} \approx 2.7183$",  # the row before them
    r"$e^{0} \approx 1.0000$, $e^{1} \approx 2.7183$: $(0.2689, 0.7311)$ and $(0.5, 0.5)$",  # two rows
    r"$e^{1} \approx 2.7183$ alone, weights $(1.0)$",  # one exponential
    r"$e^{0} \approx 1.0000$, $e^{1} \approx 2.7183$, scores $(1.2, 3.4)$",  # not a distribution
    r"$e^{0} \approx 1.0000$, $e^{1} \approx 2.7183$, weights $(0.2689, 0.7311, 0, 0, 0, 0, 0)$",  # mostly zeros
    r"$e^{0} \approx 1.0000$, $e^{-20} \approx 0.0000$, weights $(1.0000, 0.0000)$",  # an exponential written 0
    r"$e^{0} \approx 1.0000$, $e^{1} \approx 2.7183$, $e^{2} \approx 7.3891$, weights $(0.2689, 0.7311)$",
])
def test_no_row_of_weights_after_exponentials_is_no_verdict(line):
    from mha_symbolic.check.softmax_tables import exponential_weights

    assert exponential_weights(line) == []


def test_the_verdict_on_weights_after_exponentials_names_the_computed_row():
    from mha_symbolic.check.softmax_tables import exponential_weights

    [(status, message, expected)] = exponential_weights(
        r"$e^{0} \approx 1.0000$, $e^{1} \approx 2.7183$, weights $(0.2691, 0.7309)$")
    assert (status, expected) == ("wrong", "(0.2689, 0.7311)")
    assert message == "each weight is its exponential over their sum: (0.2689, 0.7311), not (0.2691, 0.7309)"
    [(status, message, expected)] = exponential_weights(
        r"$e^{0} \approx\quad 1.0000$, $e^{1} \approx 2.7183$, weights $(0.2689, 0, 0, 0.7311, 0, 0)$")
    assert (status, message, expected) == (
        "correct", "each weight is its exponential over their sum (at the decimals written)", None)


@pytest.mark.parametrize("line, expected", [
    (r"$e^{10} \approx 22026.4658$, $e^{-10} \approx 0.0000454$, weights $(1.0000, 0.0000)$", ["correct"]),
    (r"$e^{0} \approx 1.0$, $e^{0} \approx 1.0$, weights $(0.52, 0.50)$", []),  # sums to 1.02: not one row
    (r"$e^{0} \approx 1.0$, $e^{0} \approx 1.0$, weights $(0.50, 0, 0.50, 0)$", ["correct"]),
])
def test_weights_at_the_ends_of_the_unit_interval_and_sums_off_one(line, expected):
    from mha_symbolic.check.softmax_tables import exponential_weights

    assert [v[0] for v in exponential_weights(line)] == expected
