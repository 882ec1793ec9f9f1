"""Amounts of memory with units in a formula chain, and a text label before a colon: each with correct forms
judged correct (no false alarm) and a wrong form flagged at its line.  Documents written here, in the notations
of KV-cache notes (bytes, KiB/MiB/GiB, KB/MB/GB read both ways)."""

from __future__ import annotations

import pytest

from mha_symbolic import check_text
from mha_symbolic.check.read import chains
from mha_symbolic.check.units import judge_amounts

HEAD = "We use $L = 24$ layers, $h = 16$ heads and $d_k = 64$.\n\n"


def verdict(formula: str) -> tuple[str, str]:
    found = [f for f in check_text(HEAD + f"$${formula}$$\n", isolate=False).findings if f.line == 3]
    assert len(found) == 1, found
    return found[0].status, found[0].message


@pytest.mark.parametrize("formula", [
    r"98{,}304 \cdot 1024 = 100{,}663{,}296 \text{ bytes} = 96 \text{ MiB}",
    r"\text{MHA}: 98{,}304 \cdot 1024 = 100{,}663{,}296 \text{ bytes} = 96 \text{ MiB}",  # a label, not MHA(...)
    r"2 \cdot 48 = 96 \text{ MiB}",  # the unitless side counts the unit of the next one
    r"25{,}165{,}824 \text{ bytes} \approx 25.2 \text{ MB}",  # compared at the precision written
    r"100{,}000{,}000 \text{ bytes} \approx 95 \text{ MiB}",  # approx without decimals: a whole unit
    r"16 \text{ MB} = 16{,}777{,}216 \text{ bytes}",  # MB for 2^20 bytes, as many authors write it
    r"16 \text{ MB} = 16{,}000{,}000 \text{ bytes}",  # and for 10^6
    r"1.5 \,\mathrm{GiB} = 1536 \,\mathrm{MiB} \approx 1.6 \,\mathrm{GB}",
    r"2 \cdot d_k \cdot 16 \text{ bytes} = 2 \text{ KiB}",  # the document's d_k = 64
    r"6\,144 \cdot 1024 = 6 \text{ MiB}",
])
def test_correct_amounts_are_correct(formula):
    assert verdict(formula)[0] == "correct"


@pytest.mark.parametrize("formula, message", [
    (r"24{,}576 \cdot 1024 = 25{,}165{,}284 \text{ bytes} = 24 \text{ MiB}",
     r"24{,}576 \cdot 1024 is 25165824 bytes, not 25{,}165{,}284 \text{ bytes}"),
    (r"\text{GQA}: 24{,}576 \cdot 1024 = 25{,}165{,}824 \text{ bytes} = 25 \text{ MiB}",
     r"25{,}165{,}824 \text{ bytes} is 24 MiB, not 25 \text{ MiB}"),
    (r"2 \cdot 48 = 86 \text{ MiB}", r"2 \cdot 48 is 96 MiB, not 86 \text{ MiB}"),
    (r"25{,}165{,}824 \text{ bytes} \approx 25.4 \text{ MB}", r"25{,}165{,}824 \text{ bytes} is 25.17 MB, "
     r"not 25.4 \text{ MB}"),
    (r"2 \cdot d_k \cdot 16 \text{ bytes} = 4 \text{ KiB}",
     r"2 \cdot d_k \cdot 16 \text{ bytes} is 2 KiB, not 4 \text{ KiB}"),
    (r"6{,}144 \cdot 1024 = 7 \text{ MiB}", r"6{,}144 \cdot 1024 is 6 MiB, not 7 \text{ MiB}"),
])
def test_wrong_amounts_are_wrong(formula, message):
    status, why = verdict(formula)
    assert status == "wrong"
    assert why == message


def test_the_expected_amount_is_in_the_unit_of_the_stated_side():
    assert judge_amounts({}, [r"2 \cdot 48", r"86 \text{ MiB}"], ["eq"]) == (
        "wrong", r"2 \cdot 48 is 96 MiB, not 86 \text{ MiB}", "96 MiB", "computed")
    assert judge_amounts({}, ["3 \\cdot 1024", r"3 \text{ KiB}"], ["approx"]) == (
        "correct", "3072 ≈ 3 KiB", None, "computed")  # 3072 bytes: a side without a unit is shown without one
    assert judge_amounts({}, ["6144 \\cdot 1024", r"7 \text{ MiB}"], ["eq"])[2] == "6 MiB"  # the closest reading
    assert judge_amounts({"d_k": 64}, [r"2 d_k", r"128 \text{ bytes}"], ["eq"])[0] == "correct"


@pytest.mark.parametrize("sides, ops", [
    (["2 \\cdot 3", "6"], ["eq"]),  # no unit: plain arithmetic, judged elsewhere
    ([r"2 \cdot 64", r"128 \text{ values}", r"256 \text{ bytes}"], ["eq", "eq"]),  # values and bytes: not one unit
    ([r"2 d_k", r"128 \text{ bytes}"], ["eq"]),  # d_k not fixed (no names)
    ([r"96 \text{ MiB}", r"100 \text{ MiB}"], ["lt"]),  # not an equality
])
def test_chains_that_are_not_amounts_are_left_to_the_other_judges(sides, ops):
    assert judge_amounts({}, sides, ops) is None


def test_mixed_units_of_values_and_bytes_are_no_false_alarm():
    assert verdict(r"2 \cdot 64 = 128 \text{ values} = 256 \text{ bytes}")[0] not in ("wrong", "inconsistent")


@pytest.mark.parametrize("tex, sides, ops", [
    (r"\text{GQA}: 2 \cdot 3 = 6", ("2 \\cdot 3", "6"), ("eq",)),
    (r"\textbf{Step 2}: 2 a = b", ("2 a", "b"), ("eq",)),
    (r"f: X \to Y", ("f", "X", "Y"), ("colon", "to")),  # a map, not a label
    (r"\text{GQA}: n", ("\\text{GQA}", "n"), ("colon",)),  # nothing after the label is a relation: kept
    (r"\text{MQA}: g = 1", ("\\text{MQA}", "g", "1"), ("colon", "eq")),  # a size of that variant: kept
    (r"\text{MHA} : \text{GQA} = 4 : 1", ("\\text{MHA}", "\\text{GQA}", "4", "1"), ("colon", "eq", "colon")),
])
def test_a_text_label_before_a_colon_is_not_a_side(tex, sides, ops):
    (c,) = chains(tex)
    assert (c.sides, c.ops) == (sides, ops)


def test_a_labelled_arithmetic_error_is_flagged():
    assert verdict(r"\text{cost}: 2 \cdot 3 = 7")[0] == "wrong"
    assert verdict(r"\text{cost}: 2 \cdot 3 = 6")[0] == "correct"


def test_deep_nesting_with_a_unit_is_left_to_the_reader_limits():
    deep = "(" * 3000 + "2" + ")" * 3000
    assert judge_amounts({}, [deep, r"2 \text{ bytes}"], ["eq"]) is None


@pytest.mark.parametrize("sides, ops, status", [
    ([r"100{,}000{,}000 \text{ bytes}", r"95 \text{ MiB}"], ["eq"], "wrong"),  # '=' is exact; only '≈' rounds
    ([r"100{,}000{,}000 \text{ bytes}", r"95 \text{ MiB}"], ["approx"], "correct"),
    ([r"1024 \text{ KiB}", r"\text{MiB}"], ["eq"], "correct"),  # a unit alone is one of it
    ([r"25.2 \text{ MB}", r"25{,}165{,}824 \text{ bytes}"], ["approx"], "correct"),  # the rounded side on the left
    ([r"25.4 \text{ MB}", r"25{,}165{,}824 \text{ bytes}"], ["approx"], "wrong"),
    (["6,144 \\cdot 1024", r"6 \text{ MiB}"], ["eq"], "correct"),  # a plain comma between groups of three
    # a side without a unit, then GB: one reading of GB on both sides (decimal or binary), not one on each
    (["17179869184 / 10^{9}", r"17.18 \text{ GB}"], ["approx"], "correct"),
    (["17179869184 / 10^{9}", r"16.00 \text{ GB}"], ["approx"], "wrong"),
    (["17179869184 / 1024^{3}", r"16 \text{ GB}"], ["eq"], "correct"),
])
def test_rounding_units_and_separators(sides, ops, status):
    assert judge_amounts({}, sides, ops)[0] == status


def test_a_side_without_unit_is_shown_without_one_and_compared_in_its_neighbours():
    got = judge_amounts({}, [r"2 \cdot 48", r"96 \text{ MiB}", r"100{,}663{,}296 \text{ bytes}"], ["eq", "eq"])
    assert got == ("correct", "96 = 96 MiB = 100663296 bytes", None, "computed")
    assert judge_amounts({}, [r"2 \cdot 48", r"86 \text{ MiB}", r"100{,}663{,}296 \text{ bytes}"], ["eq", "eq"])[2] \
        == "96 MiB"  # the expected amount in the stated side's unit


def test_a_flop_count_named_by_its_unit_is_a_label_not_one_flop():
    doc = ("Let $n = 128$, $d = 768$.\n\n"
           "$$\\text{FLOPs} = 8 n d^2 + 4 n^2 d = 8 \\cdot 128 \\cdot 768^2 + 4 \\cdot 128^2 \\cdot 768 = %s$$\n")
    [right] = [f.status for f in check_text(doc % "654{,}311{,}424", isolate=False).findings if f.line == 3]
    [off] = [f.status for f in check_text(doc % "654{,}311{,}425", isolate=False).findings if f.line == 3]
    assert (right, off) == ("correct", "wrong")
    assert judge_amounts({}, ["\\text{FLOPs}", "2 \\cdot 3"], ["eq"]) is None
