"""Classes of false alarm and of miss found by a blind set of documents (set35 a), each fixed where it arises and each
with its wrong case: an accented letter (``\\tilde S``, ``\\hat A``) is a name of its own; a matrix of scores the
document masks with ``-\\infty`` is given as written; a row of a table of sizes whose label names a variant ("KV heads
(GQA)") is that variant's; a list's marker is no minus sign, and a list whose items each state another configuration
is a list of cases (the document goes on in its own example after it); a head width stated in plain words is judged
like the same line in math; a hypothetical clause that names another head width does not set the example's."""

from __future__ import annotations

from mha_symbolic import check_text


def verdicts(text: str, line: int) -> list[str]:
    return [f.status for f in check_text(text, isolate=False).findings if f.line == line]


# ----- accented names and masked scores -----------------------------------------------------------------------
ACCENTS = r"""# Masked scores

Let $n = 2$ tokens and $d_k = 2$.

$$\tilde S = \begin{pmatrix} 1 & 0 \\ 0 & 1 \end{pmatrix}$$

$$\hat A = \mathrm{softmax}(\tilde S) \approx \begin{pmatrix} 0.7311 & 0.2689 \\ 0.2689 & LAST \end{pmatrix}$$
"""


def test_an_accented_letter_names_a_matrix_of_its_own():
    assert verdicts(ACCENTS.replace("LAST", "0.7311"), 7) == ["correct"]  # was unchecked: \hat A not read
    assert verdicts(ACCENTS.replace("LAST", "0.5"), 7) == ["wrong"]
    widened = ACCENTS.replace(r"\tilde S", r"\widetilde{M}").replace(r"\hat A", r"\bar{P}_1")
    assert verdicts(widened.replace("LAST", "0.5"), 7) == ["wrong"]


MASKED = r"""# Causal mask

$$Q = \begin{pmatrix} 1 & 0 \\ 0 & 1 \end{pmatrix}, \quad V = \begin{pmatrix} 1 & 0 \\ 0 & 1 \end{pmatrix}$$

$$\tilde S = \begin{pmatrix} 0 & -\infty \\ 0 & 0 \end{pmatrix}$$

$$A = \mathrm{softmax}(\tilde S)$$

$$A V = \begin{pmatrix} 1 & 0 \\ 0.5 & SECOND \end{pmatrix}$$
"""


def test_a_matrix_masked_with_minus_infinity_is_given_as_written():
    assert verdicts(MASKED.replace("SECOND", "0.5"), 5) == ["given"]  # was unchecked: "-oo must be finite"
    assert verdicts(MASKED.replace("SECOND", "0.5"), 9) == ["correct"]
    assert verdicts(MASKED.replace("SECOND", "0.25"), 9) == ["wrong"]


# ----- a table of sizes by variant -----------------------------------------------------------------------------
VARIANTS = """# Three variants

| Setting | Symbol | Value |
|---|---|---|
| Query heads | `h` | 24 |
| Head dimension | `d_head` | 128 |
| KV heads (MHA) | `h_kv` | 24 |
| KV heads (GQA) | `h_kv` | 8 |
| KV heads (MQA) | `h_kv` | MQA_HEADS |
"""


def test_a_table_row_labelled_by_a_variant_gives_that_variants_key_value_heads():
    table = VARIANTS.replace("MQA_HEADS", "1")
    assert verdicts(table, 7) == ["correct"]  # MHA: g = h
    assert verdicts(table, 8) == ["given"]  # (plain GQA: the document's own g)
    assert verdicts(table, 9) == ["correct"]  # was wrong
    assert verdicts(VARIANTS.replace("MQA_HEADS", "2"), 9) == ["wrong"]  # MQA shares one key/value head


# ----- lists of cases in plain text ---------------------------------------------------------------------------
CASES = """# Thinner heads

Take one layer with sequence length n = 128, model width d_model = 64 and number of heads h = 4, so
each head is dₖ = d_model / h = 16 wide.

With d_model fixed at 64, adding heads shrinks each head:

- h = 4:  dₖ = 16, each score matrix has rank at most 16
- h = 8:  dₖ = EIGHT,  rank at most 8
- h = 16: dₖ = 4,  rank at most 4

Back to h = 4: each head output Hᵢ = Aᵢ Vᵢ ∈ ℝ^{128×16}.
"""


def test_a_list_of_configurations_leaves_the_documents_example_in_force():
    text = CASES.replace("EIGHT", "8")
    assert "wrong" not in verdicts(text, 10) and "inconsistent" not in verdicts(text, 10)
    assert verdicts(text, 12)[-1] == "correct"  # was wrong: "A_i V_i is n x 4" (the last item's d_k)


def test_an_item_whose_head_width_contradicts_the_kept_model_width_is_wrong():
    assert "wrong" in verdicts(CASES.replace("EIGHT", "4"), 9)  # h = 8 with d_model = 64: d_k = 8
    assert "wrong" not in verdicts(CASES.replace("EIGHT", "4"), 10)  # (the next item is its own case)


def test_a_toy_head_width_in_plain_words_outside_a_list_of_cases_is_not_judged():
    # a document may shrink to a toy head in prose ("Shrink to a toy head with dₖ = 4"): only an item of a list of
    # cases that keeps d_model judges its d_k by d_model / h
    plain = "Take d_model = 64 and h = 8 heads.\n\nShrink to a toy head with dₖ = 4 so the arithmetic fits.\n"
    assert verdicts(plain, 3) == ["given"]


def test_a_masked_entry_is_a_value_of_a_matrix_only():
    text = "A mask sets $M_{ij} = -\\infty$ for $j > i$ and $M_{ij} = 0$ otherwise.\n"
    assert "wrong" not in verdicts(text, 1)


def test_a_hypothetical_head_width_in_plain_words_sets_nothing():
    text = ("Take n = 128 tokens, d_model = 64 and h = 4 heads.\n\n"
            "A single head with dₖ = 64 would still give rank at most 64.\n\n"
            "Each head output Hᵢ = Aᵢ Vᵢ ∈ ℝ^{128×16}.\n")
    assert verdicts(text, 5) == ["correct"]  # was wrong: the hypothetical d_k = 64 had become the example's


# ----- rank bounds said of the score matrices in words ----------------------------------------------------------
def test_a_rank_bound_on_the_score_matrices_named_in_words_is_proved():
    text = ("Take n = 128 tokens, d_model = 64 and h = 4 heads, so each head is dₖ = d_model / h = 16 wide.\n\n"
            "Each score matrix has rank at most BOUND.\n")
    assert verdicts(text.replace("BOUND", "16"), 3) == ["correct"]  # was not read: a subject in words
    assert verdicts(text.replace("BOUND", "64"), 3) == ["correct"]
    assert verdicts(text.replace("BOUND", "8"), 3) == ["unchecked"]  # not implied by the proof; no witness found


# ----- the shape of a product whose middle factors have no known shape ------------------------------------------
PRODUCT = """# Scores in full

Take n = 128 tokens, d_model = 64 and h = 4 heads. The input is X ∈ ℝ^{128×64}.

    QKᵀ = PRODUCT ∈ ℝ^{n×n}.
"""


def test_a_product_has_its_outer_factors_rows_and_columns_whatever_the_middle():
    assert "wrong" in verdicts(PRODUCT.replace("PRODUCT", "Xᵀ W_Q W_Kᵀ X"), 5)  # was unchecked: W_Q has no head
    assert "wrong" not in verdicts(PRODUCT.replace("PRODUCT", "X W_Q W_Kᵀ Xᵀ"), 5)  # index, its shape unknown
    assert "wrong" not in verdicts(PRODUCT.replace("PRODUCT", "X W_Q"), 5)  # an outer factor unknown: not judged



# ----- a table's row totals and the factor its header writes ------------------------------------------------------
PARAMS = """# Parameters

| Variant | `W_Q` | `W_K` | `W_V` | `W_O` | Attention params / layer | × 28 layers |
|---|---|---|---|---|---|---|
| MHA | 9,437,184 | 9,437,184 | 9,437,184 | 9,437,184 | 37,748,736 | 1,056,964,608 |
| GQA | 9,437,184 | 3,145,728 | 3,145,728 | 9,437,184 | TOTAL | LAYERS |
| MQA | 9,437,184 | 393,216 | 393,216 | 9,437,184 | 19,660,800 | 550,502,400 |
"""


def test_a_column_that_sums_the_amounts_left_of_it_is_a_row_total():
    table = PARAMS.replace("TOTAL", "25,165,824").replace("LAYERS", "704,643,072")
    assert verdicts(table, 6) == ["correct"]  # was not read: a sum of four columns
    assert verdicts(PARAMS.replace("TOTAL", "25,165,000").replace("LAYERS", "704,643,072"), 6) == ["wrong"]


def test_a_column_whose_header_writes_a_factor_is_that_multiple():
    assert verdicts(PARAMS.replace("TOTAL", "25,165,824").replace("LAYERS", "704,643,000"), 6) == ["wrong"]


RATIOS = """# Parameters by variant

| variant | KV heads | $W_Q$ | $W_K + W_V$ | $W_O$ | total | ratio to MHA |
|---|---|---|---|---|---|---|
| MHA | 16 | 1,048,576 | 2,097,152 | 1,048,576 | 4,194,304 | 1.000 |
| GQA | 4 | 1,048,576 | 524,288 | 1,048,576 | 2,621,440 | 0.625 |
| MQA | 1 | 1,048,576 | 131,072 | 1,048,576 | 2,228,224 | RATIO |
"""


def test_a_column_of_ratios_to_the_row_its_header_names():
    assert verdicts(RATIOS.replace("RATIO", "0.531"), 7) == ["correct"]
    assert verdicts(RATIOS.replace("RATIO", "0.563"), 7) == ["wrong"]  # was correct: only the total was read


def test_only_one_product_with_known_outer_factors_has_its_shape_from_them():
    from mha_symbolic.check.model import DocumentModel
    from mha_symbolic.check.shapes import _outer_factors_known

    doc, loose = DocumentModel(), ["W_K", "W_Q"]
    assert _outer_factors_known(doc, "X W_Q W_K^T X^T", loose)
    assert not _outer_factors_known(doc, "X W_Q + X W_K X^T", loose)  # a sum
    assert not _outer_factors_known(doc, r"\mathrm{softmax}(X W_Q W_K^T X^T) X", loose)  # a function of them
    assert not _outer_factors_known(doc, r"\frac{X W_Q W_K^T X^T}{8}", loose)
    assert not _outer_factors_known(doc, "X W_Q W_K^{T}", loose)  # the last factor is one of them, transposed
    assert not _outer_factors_known(doc, "X W_Q", loose)  # fewer than three factors
