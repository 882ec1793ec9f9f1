"""Classes of reading found on development documents (a blind set scored first, then opened): each with a
correct form judged or left alone and a wrong form flagged.  Documents written here, small, one point each."""

from __future__ import annotations

import pytest

from mha_symbolic import check_text
from mha_symbolic.check.pipeline import check_document

COLUMNS = ("# Column convention\n\nTokens are columns: $X \\in \\mathbb{R}^{d \\times n}$ and $Q = W_Q X$, "
           "$K = W_K X$, $S = K^\\top Q$, and the softmax normalises each column.\n\n")


def statuses(text: str, line: int) -> list[str]:
    return [f.status for f in check_text(text, isolate=False).findings if f.line == line]


@pytest.mark.parametrize("weights, status", [("(0.8808, 0.1192)", "correct"), ("(0.8808, 0.1292)", "wrong")])
def test_the_softmax_of_a_written_vector_runs_over_its_entries_in_the_column_convention(weights, status):
    doc = COLUMNS + f"Column 1 is $\\operatorname{{softmax}}(1, -1) = {weights}$.\n"
    assert statuses(doc, 5) == [status]


@pytest.mark.parametrize("weights, status", [("(0.221, 0.109, 0.221, 0.449)", "correct"),
                                             ("(0.250, 0.109, 0.250, 0.391)", "wrong")])
def test_a_written_vector_divided_inside_a_softmax(weights, status):
    doc = f"Then $\\operatorname{{softmax}}\\big((1, 0, 1, 2)/\\sqrt{{2}}\\big) \\approx {weights}$.\n"
    assert statuses(doc, 1) == [status]


@pytest.mark.parametrize("weights, status", [("(0{,}665;\\ 0{,}245;\\ 0{,}090)", "correct"),
                                             ("(0{,}665;\\ 0{,}255;\\ 0{,}080)", "wrong")])
def test_where_the_comma_is_the_decimal_mark_a_tuple_is_separated_by_semicolons(weights, status):
    doc = f"O custo é 1,5 GiB, e $\\mathrm{{softmax}}(2;\\ 1;\\ 0) \\approx {weights}$.\n"
    assert statuses(doc, 1) == [status]


def test_another_value_in_a_conditional_clause_is_its_condition():
    doc = ("Sea $d = 768$ y $h = 12$.\n\nCon $n = 512$ las proyecciones mandan.\n"
           "Si duplicamos la secuencia a $n = 1024$, cuesta cuatro veces más.\n"
           "Then the scores are $n \\times n = 512 \\times 512$.\n")
    assert statuses(doc, 4) == ["given"]  # the condition of its clause, not a contradiction of n = 512
    assert statuses(doc, 5) == ["correct"]  # the document's n is still 512


@pytest.mark.parametrize("chain, status", [("n > 2d = 1536", "given"), ("n > 2d = 1530", "wrong"),
                                           ("n < d_k", "wrong")])
def test_a_size_compared_with_a_number_is_a_threshold(chain, status):
    doc = f"Let $d = 768$, $h = 12$ and $n = 512$.\n\nThe quadratic part wins: ${chain}$.\n"
    assert statuses(doc, 3) == [status]


@pytest.mark.parametrize("amount, status", [("33\\,554\\,432", "correct"), ("402\\,653\\,184", "unchecked"),
                                            ("16\\,777\\,216", "unchecked"), ("402\\,653\\,185", "wrong")])
def test_a_flop_count_of_all_heads_is_not_called_wrong_for_one_head(amount, status):
    doc = f"Let $d = 768$, $h = 12$ and $n = 512$.\n\n- $AV$: another ${amount}$ FLOPs\n"
    assert statuses(doc, 3) == [status]


def test_a_statement_quoted_as_a_mistake_is_not_claimed():
    doc = COLUMNS + "The most common mistake was writing $Q \\in \\mathbb{R}^{n \\times d_k}$.\n\n" \
        "So $Q \\in \\mathbb{R}^{n \\times d_k}$ here.\n"
    assert statuses(doc, 5) == ["unchecked"]
    assert "wrong" in statuses(doc, 7)


@pytest.mark.parametrize("subject", ["S^{(i)}", "S_i"])
def test_a_rank_in_words_of_the_generic_head(subject):
    doc = f"Let $d_{{model}} = 768$, $h = 12$, $n = 512$.\n\nSo generically ${subject}$ has full rank.\n\n" \
          f"And ${subject}$ has rank at most 64.\n"
    assert statuses(doc, 3) == ["wrong"]
    assert statuses(doc, 5) == ["correct"]


def test_moments_of_the_score_in_words():
    doc = ("Let $d_{model} = 512$ and $h = 8$, so $d_k = 64$.\n\n"
           "For $d_k = 64$ the unscaled score has variance 4096 and standard deviation 8.\n\n"
           "The unscaled logits have standard deviation 8 and variance 64.\n\n"
           "For $d_k = 16$ the raw dot product has a standard deviation of 4.\n\n"
           "After scaling, the score has variance 1.\n\n"
           "The score has standard deviation 1.\n")
    assert statuses(doc, 3) == ["wrong", "correct", "given"]
    assert statuses(doc, 5) == ["correct", "correct"]
    assert statuses(doc, 7) == ["correct", "given"]
    assert statuses(doc, 9) == ["correct"]
    assert statuses(doc, 11) == ["unchecked"]  # the scaled score's value, the sentence not saying which


@pytest.mark.parametrize("row, status", [("[0.  1.5 1.5 0.5]", "correct"), ("[0.  1.5 1.  0.5]", "wrong")])
def test_a_numpy_printout_shows_every_entry_at_the_array_precision(row, status):
    doc = ("```python\nimport numpy as np\nQ = 0.5 * np.array([[2., 0., 0., 0.], [0., 3., 3., 1.]])\nprint(Q)\n"
           f"```\n\nOutput:\n\n```text\n[[1.  0.  0.  0. ]\n {row}]\n```\n")
    got = [(f.line, f.status) for f in check_document(doc, "doc.md").findings if f.basis == "traced"]
    assert got == [(10, "correct"), (11, status)]


@pytest.mark.parametrize("mib, status", [("256", "correct"), ("512", "wrong")])
def test_a_chain_of_amounts_written_partly_in_math(mib, status):
    doc = (f"*Solution.* $H T^2 \\cdot 4$ bytes $= 16 \\cdot 4{{,}}194{{,}}304 \\cdot 4 = 268{{,}}435{{,}}456$ "
           f"bytes $= {mib}$ MiB.\n\nFor 2048 tokens: 98,304 × 2048 = 201,326,592 bytes = "
           f"**{int(mib) * 3 // 4} MiB**.\n")
    assert status in statuses(doc, 1)
    assert status in statuses(doc, 3)


@pytest.mark.parametrize("value, status", [("4,198,400", "correct"), ("4,718,592", "wrong")])
def test_a_column_of_formulas_on_numbers_and_their_values(value, status):
    doc = ("| Model | formula | parameters |\n|---|---|---|\n"
           "| A | $4 \\cdot 768^2 + 4 \\cdot 768$ | 2,362,368 |\n"
           f"| B | $4 \\cdot 1024^2 + 4 \\cdot 1024$ | {value} |\n"
           "| C | $4 \\cdot 1280^2 + 4 \\cdot 1280$ | 6,558,720 |\n")
    assert statuses(doc, 3) == ["correct"]
    assert statuses(doc, 4) == [status]


@pytest.mark.parametrize("cell, status", [("5,120 B = 5 KiB", "correct"), ("5,120 B = 6 KiB", "wrong")])
def test_a_chain_of_amounts_in_a_table_cell(cell, status):
    doc = f"| Model | $L$ | per layer |\n|---|---|---|\n| small | 12 | 3,072 B = 3 KiB |\n| large | 36 | {cell} |\n"
    assert statuses(doc, 3) == ["correct"]
    assert statuses(doc, 4) == [status]


@pytest.mark.parametrize("rank, status", [("2", "correct"), ("1", "wrong")])
def test_a_rank_in_words_after_a_qualifier(rank, status):
    doc = ("$$S = \\begin{bmatrix} 1 & 3 \\\\ 1 & 4 \\end{bmatrix}$$\n\n"
           f"Its determinant is $1$, so $S$ therefore has rank {rank}.\n")
    assert status in statuses(doc, 3)


@pytest.mark.parametrize("vector, status", [("(1, -1, -1, 0)", "correct"), ("(1, 1, 0, 1)", "wrong")])
def test_a_matrix_times_a_written_vector_equal_to_zero(vector, status):
    doc = ("$$M = \\begin{bmatrix} 1 & 0 & 1 & -1 \\\\ 0 & 1 & -1 & 1 \\\\ 1 & 1 & 0 & 0 \\\\ 0 & 0 & 0 & 0"
           f"\\end{{bmatrix}}$$\n\nFor instance $M {vector}^\\top = 0$.\n")
    assert statuses(doc, 3) == [status]


@pytest.mark.parametrize("total, status", [("180 KiB", "correct"), ("360 KiB", "wrong")])
def test_a_column_computed_from_amounts_in_binary_units(total, status):
    doc = ("| Model | $L$ | per layer | per token |\n|---|---|---|---|\n"
           "| a | 12 | 3,072 B = 3 KiB | 36 KiB |\n| b | 24 | 4 KiB | 96 KiB |\n"
           f"| c | 36 | 5 KiB | {total} |\n| d | 80 | 4 KiB | 320 KiB |\n")
    assert statuses(doc, 5) == [status]


def test_a_conditional_question_with_sizes_of_its_own_opens_another_example():
    """"If we doubled h ... at fixed $d = 1024$" after a paragraph with d = 4096: the answer lines below speak of
    d = 1024 (another example), not of a condition that ends with its sentence."""
    doc = ("Take $d = 4096$ and $h = 32$.\n\n**Q: if we doubled $h$ at fixed $d = 1024$, what changes?**\n\n"
           "- The parameter count is still $4d^2 = 4{,}194{,}304$.\n")
    assert statuses(doc, 5) == ["correct"]


@pytest.mark.parametrize("product, status", [("1.32095", "correct"), ("1.32195", "wrong")])
def test_a_product_of_a_rounded_decimal_at_its_written_precision(product, status):
    doc = f"(The 1.321 comes from the unrounded weight 0.33024, since 0.33024·4 = {product}.)\n"
    assert statuses(doc, 1) == [status]


def test_two_rows_that_agree_by_chance_teach_no_relation():
    doc = ("| model | width | heads | head size | blocks |\n|---|---:|---:|---:|---:|\n| S | 768 | 12 | 64 | 12 |\n"
           "| M | 1024 | 16 | 64 | 24 |\n| L | 4096 | 32 | 128 | 32 |\n")
    assert statuses(doc, 4) == ["correct"]  # head size = width / heads; blocks = width / head size twice, by chance
    four = doc + "| XL | 2048 | 16 | 128 | 16 |\n"  # three rows where blocks = width / head size: the odd one is
    assert "wrong" in statuses(four, 4)  # flagged


@pytest.mark.parametrize("total, status", [("825", None), ("900", "wrong")])
def test_a_total_of_rounded_parts(total, status):
    doc = ("| step | n = 512 | n = 4096 |\n|---|---:|---:|\n| projections | 14.5 | 412 |\n| scores | 25.8 | 137 |\n"
           f"| weights | 25.8 | 137 |\n| output | 4.83 | 137 |\n| **total** | 70.9 | {total} |\n")
    assert ("wrong" in statuses(doc, 7)) == (status == "wrong")


def test_kv_heads_of_one_example_and_query_heads_of_another_contradict_nothing():
    doc = ("Toy model: $h = 4$ query heads and $g = 2$ key/value heads, $n = 3$.\n\n"
           "A 70B-style model has $L = 80$ layers and $g = 8$ key/value heads.\n\n"
           "Back to the toy: $h = 4$ heads, and in the 70B-style model the group size is $64/8 = 8$.\n")
    flagged = [f for f in check_text(doc, isolate=False).findings if f.status in ("wrong", "inconsistent")]
    assert flagged == []
    same = "We use $h = 4$ query heads and $g = 8$ key/value heads.\n"  # one paragraph: a contradiction
    assert "inconsistent" in statuses(same, 1)


def test_a_written_vector_divided_by_zero_has_no_value():
    doc = "Then $(1, 2)/0 = (1, 2)$ and $\\mathrm{softmax}((1, 2)/0) = (0.5, 0.5)$.\n"
    found = [f for f in check_text(doc, isolate=False).findings if f.line == 1]
    assert [f.status for f in found] == ["unchecked", "unchecked"]
    assert all("divides by zero" in f.message for f in found)
