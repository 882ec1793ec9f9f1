"""A document's model lives in its scopes, and what it gives is read in the notation it is written in: a section in
the other convention is another model; a question's sizes are its answer's; a name given anew in a later section is
another example's; a matrix drawn under its name, arithmetic in inline code and a mask filled with ``float('-inf')``
are read; ``assumed`` is said only of an input the document never names."""

from __future__ import annotations

from pathlib import Path

import pytest

from mha_symbolic import check_text


def verdicts(text: str, line: int, cell: int | None = None, output: bool = False) -> list[str]:
    return [f.status for f in check_text(text, isolate=False).findings
            if f.line == line and f.cell == cell and f.output == output]


# ----- a section in the other convention ----------------------------------------------------------------------
ROWS_THEN_COLUMNS = """notes
=====

rows
----
  X ∈ ℝ^{n×d}
  Q = X W_Q

tiny example
------------
  Q = [1 0; 0 1; 1 1]     K = [1 1; 0 1; 1 0]

columns
-------
  X ∈ ℝ^{d×n}
  Q = W_Q X
  S = Qᵀ K / √dₖ ∈ ℝ^{n×n}
  tiny again: Q = [1 0 1; 0 1 1], K = [1 0 1; 1 1 0]
  QᵀK = PRODUCT
"""


def test_a_section_in_the_other_convention_is_its_own_model():
    doc = ROWS_THEN_COLUMNS.replace("PRODUCT", "[1 0 1; 1 1 0; 2 1 1]")
    assert verdicts(doc, 15) == ["correct"]  # X is d x n there: no contradiction with the first section
    scores = [f for f in check_text(doc, isolate=False).findings if f.line == 17]
    assert [f.status for f in scores] == ["given"]  # a definition of S, whose shape holds: n x n with the
    assert "n x n by the model's shape rules" in scores[0].message  # section's Q (d_k x n), not the row example's Q
    assert verdicts(doc, 19) == ["correct"]  # computed from the matrices this section's sentence gives


def test_a_product_of_matrices_a_sentence_gives_is_computed_from_them():
    doc = ROWS_THEN_COLUMNS.replace("PRODUCT", "[1 0 1; 1 1 0; 2 1 2]")
    found = [f for f in check_text(doc, isolate=False).findings if f.line == 19]
    assert [f.status for f in found] == ["wrong"]
    assert "(3 x 3) computed exactly; entry (3, 3) differs" in found[0].message


# ----- a question's sizes are its answer's ------------------------------------------------------------------------
def qa(width: str) -> str:
    return ("# Interview questions\n\n**1. Parameters for `d_model = 512`, `h = 8`?**\n\n"
            "Four matrices: `4 · 512² = 1,048,576` weights.\n\n"
            "**2. The same for `d_model = 768`, `h = 12`.**\n\n"
            f"`4 · 768² = 2,359,296` weights. Per head `d_k = {width}`.\n")


@pytest.mark.parametrize("width, status", [
    ("768 / 12 = 64", "correct"),
    ("768 / 16 = 48", "inconsistent"),  # its own arithmetic holds, on a head count the question does not state
    ("768 / 12 = 48", "wrong"),  # its arithmetic fails
])
def test_sizes_a_question_states_bind_its_answer(width, status):
    assert verdicts(qa(width), 9)[-1] == status


# ----- a name given anew in a later section ---------------------------------------------------------------------
def test_a_chain_that_gives_a_name_anew_in_another_section_is_judged_after_the_name():
    doc = ("first\n-----\n\n  v₁ = (1, 0)     v₂ = (0, 2)\n\n  z₁ = 0.5·v₁ + 0.5·v₂ = (0.5, 1)\n\n"
           "masked\n------\n\n  outputs: z₁ = v₁ = (1, 0)\n\n  again: z₁ = v₁ = (1, 1)\n")
    assert verdicts(doc, 11) == ["correct"]
    assert verdicts(doc, 13) == ["wrong"]  # v₁ is (1, 0): the chain after the name is still judged


# ----- what the plain text writes beside and under its formulas ---------------------------------------------------
def test_a_shape_note_after_a_wide_gap_is_no_factor():
    doc = ("tiny\n----\n\n  Q = [1 0; 0 1; 1 1]     K = [1 1; 0 1; 1 0]\n\n"
           "  Q Kᵀ = [1 0 1; 1 1 0; 2 1 1]        (3×2)(2×3) → 3×3\n")
    assert verdicts(doc, 6) == ["correct"]


@pytest.mark.parametrize("mark", ["✓ as before", "← as before"])
def test_a_mark_beside_a_formula_ends_it(mark):
    doc = f"tiny\n----\n\n  Q = [1 0; 0 1]     K = [1 1; 0 1]\n\n  so Q Kᵀ = [1 0; 1 1]  {mark}\n"
    assert verdicts(doc, 6) == ["correct"]


def grid(middle: str) -> str:
    return ("tiny\n----\n\n  Q = [1 0; 0 1; 1 1]     K = [1 1; 0 1; 1 0]\n\n  S = Q Kᵀ =\n"
            "      +---+---+---+\n      | 1 | 0 | 1 |\n" + middle + "      | 2 | 1 | 1 |\n      +---+---+---+\n"
            "  (rows are queries)\n")


def test_a_matrix_drawn_under_its_name_is_read_row_by_row():
    right = grid("      | 1 | 1 | 0 |\n")
    assert [verdicts(right, k) for k in (6, 8, 9, 10)] == [["correct"]] * 4
    wrong = grid("      | 1 | 1 | 5 |\n")
    assert verdicts(wrong, 9) == ["wrong"]  # the row that differs
    assert verdicts(wrong, 8) == verdicts(wrong, 10) == []
    ragged = grid("      | 1 | 1 |\n")  # rows of unequal length draw no matrix
    assert [verdicts(ragged, k) for k in (8, 9, 10)] == [[]] * 3


@pytest.mark.parametrize("result, status", [("67,108,864", "correct"), ("33,554,432", "wrong")])
def test_arithmetic_in_inline_code_under_a_name_is_computed(result, status):
    doc = f"# FLOPs\n\nCost `n²·d_k = 1024² · 64 = {result}` multiply-adds.\n"
    assert verdicts(doc, 3) == [status]


# ----- a causal mask filled in code -----------------------------------------------------------------------------
def test_a_mask_filled_with_float_minus_infinity_is_traced():
    code = ("import torch\ns = torch.zeros(3, 3)\nmask = torch.triu(torch.ones(3, 3, dtype=torch.bool), diagonal=1)\n"
            "w = torch.softmax(s.masked_fill(mask, float('-inf')), dim=-1)\nprint(w)\n")
    out = "tensor([[1.0000, 0.0000, 0.0000],\n        [{row}, 0.0000],\n        [0.3333, 0.3333, 0.3333]])\n"
    doc = "# Mask\n\n```python\n" + code + "```\n\n```\n" + out + "```\n"
    assert verdicts(doc.format(row="0.5000, 0.5000"), 13) == ["correct"]
    assert verdicts(doc.format(row="0.6000, 0.4000"), 13) == ["wrong"]


# ----- assumed only of an input the document never names ----------------------------------------------------------
def test_an_input_the_document_names_without_a_value_read_is_unchecked_not_assumed():
    doc = ("# Example\n\nWe take $n = 2$, $d_{model} = 2$, $h = 1$, and $W_Q = W_K = W_V = I$ (the identity).\n\n"
           "$$X = \\begin{bmatrix} 1 & 0 \\\\ 0 & 1 \\end{bmatrix}$$\n\n"
           "$$QK^\\top = \\begin{bmatrix} 1 & 0 \\\\ 0 & 1 \\end{bmatrix}$$\n")
    found = [f for f in check_text(doc, isolate=False).findings if f.line == 7]
    assert [f.status for f in found] == ["unchecked"]
    assert "(line 3), which the document names there" in found[0].message


@pytest.mark.parametrize("shape, status", [("dₖ×n", "correct"), ("n×dₖ", "wrong")])
def test_a_shape_drawn_from_another_after_an_arrow_is_its_own_statement(shape, status):
    # "W_Q ∈ ℝ^{dₖ×d} → Q ∈ ℝ^{...}": two statements, the second the shape the first gives, in the scope's model
    doc = (f"columns\n-------\n\n  X ∈ ℝ^{{d×n}}, one token per column\n\n"
           f"  Q = W_Q X  with W_Q ∈ ℝ^{{dₖ×d}}  → Q ∈ ℝ^{{{shape}}}\n")
    found = [f for f in check_text(doc, isolate=False).findings if f.line == 6 and f.kind == "shape"]
    assert [f.status for f in found if f.latex.startswith("Q")] == [status]


@pytest.mark.parametrize("level, status", [("###", "correct"), ("##", "inconsistent")])
def test_a_sub_section_keeps_its_sections_convention(level, status):
    # a sub-section that declares nothing is in its section's model; a section of its own is in the document's
    doc = ("# Notes\n\n## Rows\n\n$X \\in \\mathbb{R}^{n \\times d}$ and $Q = X W_Q$.\n\n"
           "$X \\in \\mathbb{R}^{n \\times d}$ again, with $n = 3$, $d = 4$.\n\n"
           "## Columns\n\n$X \\in \\mathbb{R}^{d \\times n}$ and $Q = W_Q X$.\n\n"
           f"{level} Example\n\nWith $n = 3$, $d = 4$: $X \\in \\mathbb{{R}}^{{4 \\times 3}}$.\n")
    assert [s for s in verdicts(doc, 15) if s != "given"] == [status]


@pytest.mark.parametrize("claim, status", [("has full rank", "correct"), ("is singular and has rank 1", "wrong")])
def test_a_matrix_a_sentence_names_through_a_chain_is_the_subject_of_later_claims(claim, status):
    doc = (f"Scores\n------\n\nTwo tokens, n = 2, and d_k = 2.\n\nso S = QKᵀ = [1 3; 1 4], the raw scores.\n"
           f"Its determinant is 1·4 − 3·1 = 1, so S {claim}.\n")
    assert [f.status for f in check_text(doc, isolate=False).findings if f.line == 7 and f.kind == "rank"] == [status]


@pytest.mark.parametrize("value, status", [("1 \\cdot 3 = 7", "correct"), ("1 \\cdot 1 = 5", "wrong")])
def test_an_indexed_lower_case_vector_is_a_row_of_the_matrix_of_its_letter(value, status):
    # the arithmetic of both holds; the second multiplies entries that are not those of row 2 of Q and row 1 of K
    doc = ("# Scores\n\n$$Q = \\begin{bmatrix} 1 & 0 & 2 \\\\ 2 & 1 & 1 \\end{bmatrix}, \\quad "
           "K = \\begin{bmatrix} 1 & 2 & 3 \\\\ 0 & 1 & 1 \\end{bmatrix}$$\n\n"
           f"For example $q_2 \\cdot k_1 = 2 \\cdot 1 + 1 \\cdot 2 + {value}$.\n")
    assert [f.status for f in check_text(doc, isolate=False).findings if f.line == 5] == [status]


@pytest.mark.parametrize("product, status", [("64 × 0.25 = 16", "correct"), ("64 × 0.5 = 32", "wrong")])
def test_a_moment_in_plain_text_is_judged_in_the_sizes_its_sentence_states(product, status):
    doc = ("Q3. Other variances\n\nWith d_k = 64 throughout.\n\n"
           f"Example: σ² = 0.5 and d_k = 64 gives Var(q·k) = {product}.\n"
           "Same σ² with d_k = 128 gives Var(q·k) = 32.\n")
    found = [f for f in check_text(doc, isolate=False).findings if f.kind == "statistic"]
    assert [(f.line, f.status) for f in found] == [(5, status), (6, "correct")]


@pytest.mark.parametrize("sd, status", [("8", "correct"), ("64", "wrong")])
def test_a_moment_in_the_hypothetical_mood_is_judged_when_its_sentence_names_what_it_depends_on(sd, status):
    doc = f"# Scaling\n\nWith $d_k = 64$ an unscaled score would have standard deviation ${sd}$, enough to saturate.\n"
    assert [f.status for f in check_text(doc, isolate=False).findings if f.kind == "statistic"] == [status]


@pytest.mark.parametrize("second, status", [
    ("A larger model with d_model = 1024 and 16 heads has d_k = 64.", "given"),  # a configuration of its own
    ("So the model of 12 heads has d_k = 48.", "inconsistent"),  # the same heads, another d_k: a contradiction
])
def test_a_sentence_that_states_a_whole_configuration_of_its_own_is_another_example(second, status):
    doc = f"# Sizes\n\nThe base model splits d_model = 768 over 12 heads, so d_k = 64.\n{second}\n"
    got = [f.status for f in check_text(doc, isolate=False).findings if f.kind == "setting"]
    assert ("inconsistent" in got) == (status == "inconsistent")


def test_a_hypothetical_model_in_words_is_a_condition_of_its_sentence():
    doc = ("# Sizes\n\nHere d_k = 64 and the raw scores have standard deviation 8. For a small,\npurely "
           "hypothetical model with d_k = 16 the figure is sqrt(16) = 4.\n")
    assert "inconsistent" not in [f.status for f in check_text(doc, isolate=False).findings]


@pytest.mark.parametrize("result, status", [("34.31", "unchecked"), ("12.31", "wrong")])
def test_a_function_of_a_rounded_decimal_in_math_is_judged_at_its_rounding(result, status):
    # 3.536 is 5/√2 rounded, and e^3.5355 = 34.31: not wrong; 12.31 is wrong whatever the rounding
    doc = f"# Exponentials\n\nThe exponential is $e^{{3.536}} \\approx {result}$.\n"
    assert [f.status for f in check_text(doc, isolate=False).findings if f.line == 3] == [status]


@pytest.mark.parametrize("weights, status", [("0{,}140\\;;\\;0{,}576\\;;\\;0{,}284", "correct"),
                                             ("0{,}155\\;;\\;0{,}536\\;;\\;0{,}309", "wrong")])
def test_a_softmax_of_scaled_scores_in_a_decimal_comma_document(weights, status):
    doc = ("# Softmax\n\nOn divise par $\\sqrt{2} \\approx 1{,}414$ :\n\n"
           f"$$a_1=\\operatorname{{softmax}}\\!\\left(\\tfrac{{3}}{{\\sqrt2}},\\tfrac{{5}}{{\\sqrt2}},"
           f"\\tfrac{{4}}{{\\sqrt2}}\\right)\\approx({weights}).$$\n")
    assert [f.status for f in check_text(doc, isolate=False).findings if f.line == 5] == [status]


@pytest.mark.parametrize("shape, status", [("3\\times 4", "correct"), ("4\\times 3", "inconsistent")])
def test_a_blackboard_letter_with_its_argument_unbraced_is_the_reals(shape, status):
    doc = ("# Une tête\n\nNous prenons $n=3$ et $d_{\\text{model}}=4$, avec "
           f"$X\\in\\mathbb R^{{{shape}}}$, un token par ligne.\n")
    assert [f.status for f in check_text(doc, isolate=False).findings if f.kind == "shape"] == [status]


@pytest.mark.parametrize("product, status", [("1 & 1 \\\\ 0 & 1", "correct"), ("1 & 1 \\\\ 1 & 1", "wrong")])
def test_q_beside_k_in_a_one_head_model_is_the_heads(product, status):
    doc = ("# One head\n\nWe take $n = 2$, $d_{model} = 2$, $h = 1$ and $d_k = 2$.\n\n"
           "$$X = \\begin{bmatrix} 1 & 0 \\\\ 0 & 1 \\end{bmatrix}, \\quad W_Q = \\begin{bmatrix} 1 & 1 \\\\ 0 & 1 "
           "\\end{bmatrix}, \\quad W_K = \\begin{bmatrix} 1 & 0 \\\\ 0 & 1 \\end{bmatrix}$$\n\n"
           f"$$QK^\\top = \\begin{{bmatrix}} {product} \\end{{bmatrix}}$$\n")
    assert [f.status for f in check_text(doc, isolate=False).findings if f.line == 7] == [status]


# ----- an example whose own sentence gives its head width -------------------------------------------------------
WIDTH_OF_ITS_OWN = r"""# Exercises

## Exercise 1

A layer has $d_{{\text{{model}}}} = 512$ and $h = 8$ heads, with $d_k = d_{{\text{{model}}}}/h$, so $d_k = 64$.

## Exercise 2

Let $n = 2$, $d_{{\text{{model}}}} = 3$, one head with $d_k = 2$, and
$$X = \begin{{bmatrix}} 1 & 0 & 1 \\ 0 & 1 & 1 \end{{bmatrix}},\quad
W^Q = \begin{{bmatrix}} 1 & 0 \\ 0 & 1 \\ 1 & 1 \end{{bmatrix}},\quad
W^K = \begin{{bmatrix}} 1 & 1 \\ 0 & 1 \\ 1 & 0 \end{{bmatrix}}.$$

Then $Q = XW^Q = \begin{{bmatrix}} {q} \end{{bmatrix}}$ and $\sqrt{{d_k}} = \sqrt{{2}}$.

Output row 1: $0.8044\,(2, 1) + 0.1956\,(1, 3) = ({out})$.
"""


@pytest.mark.parametrize("q, out, status", [("2 & 1 \\\\ 1 & 2", "1.8044,\\ 1.3911", "correct"),
                                            ("2 & 1 \\\\ 1 & 3", "1.8044,\\ 1.3961", "wrong")])
def test_an_example_that_gives_its_head_width_with_its_d_model_keeps_it(q, out, status):
    # the relation d_k = d_model / h written in exercise 1 does not make exercise 2's stated d_k = 2 wrong: the
    # sentence that gives d_model = 3 gives d_k too (the example's own width), and its products are computed with it
    doc = WIDTH_OF_ITS_OWN.format(q=q, out=out)
    assert "wrong" not in verdicts(doc, 5)
    assert "given" in verdicts(doc, 9) and "wrong" not in verdicts(doc, 9)
    assert sorted(verdicts(doc, 14)) == sorted([status, "correct"])  # Q, and sqrt(d_k) = sqrt(2) in its own width
    assert verdicts(doc, 16) == [status]  # weights times rows of V, at the precision the weights are written with


# ----- a list item's configuration ends with its list ---------------------------------------------------------------
LISTED = r"""# Cross-attention by hand

- Decoder: $n = 2$ tokens with states $Y \in \mathbb{{R}}^{{2 \times 2}}$.
- Encoder: memory $M \in \mathbb{{R}}^{{3 \times 2}}$, one head with $d_k = 2$.

$$Y = \begin{{bmatrix}} 1 & 2 \\ 1 & 0 \end{{bmatrix}}, M = \begin{{bmatrix}} 1 & 1 \\ 2 & 0 \\ 1 & 3 \end{{bmatrix}},
W^Q = \begin{{bmatrix}} 1 & 1 \\ 0 & 1 \end{{bmatrix}}, \quad W^K = \begin{{bmatrix}} 1 & 0 \\ 0 & 1 \end{{bmatrix}}$$

Then $Q = Y W^Q = \begin{{bmatrix}} 1 & 3 \\ 1 & 1 \end{{bmatrix}}$ and $K = M W^K$.

## Shapes in general

- Example: $h = 8$, $n = 128$, $d_{{\text{{model}}}} = 512$, so the scores of one head are $128 \times 128$.
- Projections: $Q$ costs $n\,d_{{\text{{model}}}}^2 = {cost}$ multiply-adds.

## Back to the example

The scores $QK^\top$ are ${rows} \times 3$.
"""


@pytest.mark.parametrize("cost, rows, status", [("33\\,554\\,432", "2", "correct"), ("67\\,108\\,864", "3", "wrong")])
def test_a_configuration_stated_in_a_list_item_ends_with_its_list(cost, rows, status):
    # the item's sizes hold for it and the items after it; after the list the document is back in its own example,
    # whose memory M (the keys' input, K = M W^K) has 3 rows
    doc = LISTED.format(cost=cost, rows=rows)
    assert verdicts(doc, 14) == [status]
    assert verdicts(doc, 18) == [status]


def test_the_concatenation_named_without_its_arguments_and_a_factor_before_the_subject():
    doc = ("n = 3 tokens, d_model = 4, h = 2 heads.\n\n"
           "Take W^O = [1 0 0 0; 0 1 0 0; 1 0 1 0; 0 1 0 1] (det = 1, so full rank 4).\n\n"
           "so the output MultiHead(X) = Concat · W^O ∈ ℝ^{3×4} is\n")
    assert verdicts(doc, 3) == ["given"]  # the matrix, without the remark in brackets after it
    assert "inconsistent" not in verdicts(doc, 5) and "wrong" not in verdicts(doc, 5)  # not a shape of W^O


# ----- plain text: an identity given in a sentence, ruled headings, rows listed one per line -----------------------
FORUM = """Setup: n = 3 tokens, d_model = 4, h = 2 heads, so each head has dₖ = d_model / h = 2.

X = [1 0 1 0; 0 2 0 1; 1 1 1 1]

I take W^Q = W^K = W^V = I₄ (the 4×4 identity). Then Q = K = V = X.

Q₁ = K₁ = V₁ = [1 0; 0 2; 1 1]   (shape 3×2)
Q₂ = K₂ = V₂ = [1 0; 0 1; 1 1]   (shape 3×2)

--- Head 1 ---
Softmax of S₁ / √dₖ along each row (4 decimals):
row 1: [0.4011 0.1978 0.4011]
row 2: [{row2}]
row 3: [0.1978 0.4011 0.4011]

--- Head 2 ---
head₂ = A₂V₂ (3×3 times 3×2 = 3×2)
"""


@pytest.mark.parametrize("row2, status", [("0.0454 0.7679 0.1867", "correct"), ("0.0454 0.7367 0.2179", "wrong")])
def test_plain_text_gives_an_identity_and_names_its_head_in_a_ruled_heading(row2, status):
    doc = FORUM.format(row2=row2)
    assert verdicts(doc, 5) == ["given"]  # W^Q = W^K = W^V = I₄: the weights, given in a sentence
    assert verdicts(doc, 7) == verdicts(doc, 8) == ["correct"]  # so the heads' Q are computed
    assert verdicts(doc, 12) == verdicts(doc, 14) == ["correct"]  # each row by its own number, in head 1's section
    assert verdicts(doc, 13) == [status]
    assert "correct" in verdicts(doc, 17)  # the formula before the bracket


BATCHED = r"""## Shapes through the layer

Let $B = 4$, $n = 128$, $d_{\text{model}} = 512$, $h = 8$.

- Input: $X$ has shape $(4, 128, 512)$.
- Scores $QK^\top/\sqrt{64}$: $(4, 8, 128, 128)$; the softmax keeps this shape.
- Weighted values $AV$: $(4, 8, 128, {width})$.
- Output $\operatorname{Concat}(\text{head}_1, \dots, \text{head}_8) W^O$: $(4, 128, 512)$.
- A query $q$: $(1, 0)$ and heads $(4, 2, 128, 128)$.
"""


@pytest.mark.parametrize("width, status", [("64", "correct"), ("128", "wrong")])
def test_a_batched_shape_is_the_shape_of_its_matrix_per_head(width, status):
    # (B, n, d) of a matrix, (B, h, r, c) of one head's: the last two sizes, the head axis the model's h
    doc = BATCHED.replace("{width}", width)
    assert verdicts(doc, 5) == verdicts(doc, 6) == verdicts(doc, 8) == ["correct"]
    assert verdicts(doc, 7) == [status]
    assert verdicts(doc, 9) == []  # a vector, and a head axis that is not the model's h: not read as shapes


NAMED_GRIDS = """Setup: n = 3 tokens, d_model = 4, h = 2 heads.

X = [1 0 1 0; 0 2 0 1; 1 1 1 1]

I take W^Q = W^K = W^V = I₄ (the 4×4 identity).

--- Head 1 ---
Raw scores S₁ = Q₁K₁ᵀ, a 3×3 matrix:

      k1  k2  k3
q1 |   1   0   1 |
q2 |   0   4   {entry} |
q3 |   1   2   2 |
"""


@pytest.mark.parametrize("entry, status", [("2", "correct"), ("3", "wrong")])
def test_a_grid_drawn_under_a_line_that_names_it(entry, status):
    # "S₁ = Q₁K₁ᵀ, a 3×3 matrix:" names the grid below it (column labels over it, a label before each row): its
    # rows are compared with Q₁K₁ᵀ, and the verdict of a row that differs goes to that row
    doc = NAMED_GRIDS.replace("{entry}", entry)
    assert verdicts(doc, 12) == [status]
    assert verdicts(doc, 11) == verdicts(doc, 13) == (["correct"] if status == "correct" else [])


def test_a_tuple_after_is_is_a_vector_and_a_batch_of_other_tokens_another_configuration():
    doc = BATCHED.replace("{width}", "64") + (
        "\nThe first row of $V_1$ is $(1, 1, 1)$.\n\n- Other tokens: $Q$ has shape $(4, 8, 256, 64)$.\n")
    assert "wrong" not in verdicts(doc, 11) and "inconsistent" not in verdicts(doc, 11)
    assert verdicts(doc, 13) == []  # a batch of 256 tokens where the example has 128: another configuration


def test_the_lines_a_drawn_grid_may_skip_and_where_it_ends():
    from mha_symbolic.check.grids import drawn_below

    grid = ("\\begin{bmatrix} 1 & 2 \\\\ 3 & 4 \\end{bmatrix}", (3, 4))
    assert drawn_below(["S =", "", "  a  b", "| 1 2 |", "| 3 4 |"], 0) == grid  # a blank line, then column labels
    assert drawn_below(["S =", "", "  a  b", "  c  d", "| 1 2 |"], 0) is None  # at most those two
    assert drawn_below(["S =", "", "", "| 1 2 |"], 0) is None  # a second blank line: the grid is not its
    assert drawn_below(["S =", "Then:", "| 1 2 |"], 0) is None  # a line of prose right after it ends it
    assert drawn_below(["S =", "| 1 2 |", "| 3 4 5 |"], 0) is None  # rows of different lengths are no matrix
    assert drawn_below(["S =", "| 1 2 |", "", "| 3 4 |"], 0) == ("\\begin{bmatrix} 1 & 2 \\end{bmatrix}", (1,))


# ----- the document's own letters ------------------------------------------------------------------------------
OWN_LETTERS = """# Cost

For $n = 128$, $m = 512$, $d = 512$: $n\\,m\\,d = SCORES$ multiply-adds for the scores.

With $d_h = 64$ and $L = 32$ layers the cache holds $2 L d_h = VALUES$ values per token.

Take $b = 2 \\text{ bytes}$ per value: $2 L d_h b = BYTES \\text{ bytes}$ per token.
"""


@pytest.mark.parametrize("scores, values, nbytes, status", [
    ("33\\,554\\,432", "4096", "8192", "correct"), ("67\\,108\\,864", "16384", "4096", "wrong")])
def test_a_letter_of_the_documents_own_is_its_number_not_the_size_it_names_elsewhere(scores, values, nbytes, status):
    """``m`` (keys of a cross-attention), ``b`` (bytes per value) take the number the document gives them; ``L`` that
    the document says counts layers is no sequence length (n = 128 here) in the lines after."""
    text = OWN_LETTERS.replace("SCORES", scores).replace("VALUES", values).replace("BYTES", nbytes)
    assert verdicts(text, 3)[-1] == status
    assert verdicts(text, 5)[-1] == status
    assert verdicts(text, 7)[-1] == status


SLIDES = """## Setting

- Sequence length $n = 512$, head width $d_k = 64$

## Tiny example ($n = 4$, $d_k = 2$)

$$Q = \\begin{bmatrix} 1 & 0 \\\\ 0 & 1 \\\\ 1 & 1 \\\\ 2 & 0 \\end{bmatrix}, \\quad
K = \\begin{bmatrix} 1 & 1 \\\\ 0 & 1 \\\\ 1 & 0 \\\\ 0 & 2 \\end{bmatrix}$$

## Take-aways

- $QK^\\top$ is $SHAPE$ but has rank at most $d_k$; for $n = 512, d_k = 64$ it cannot be full rank
"""


@pytest.mark.parametrize("shape, status", [("n \\times n", "correct"), ("n \\times d_k", "wrong")])
def test_a_shape_in_letters_holds_for_every_size_whatever_example_is_in_force(shape, status):
    """The sizes restated for the main configuration (n = 512) after a small example's matrices (4 tokens): "QK^T is
    n x n" is a statement for every size, not one about 512 rows of the 4-token Q."""
    assert verdicts(SLIDES.replace("SHAPE", shape), 12)[0] == status


CASES = """# Temperature

With $d_k = 4$ the temperature is $\\tau = \\sqrt{d_k}$, so $\\tau = TAU$.

For $z = 8$, $p = 1/(1 + e^{-8}) \\approx 0.9997$. For $z = 1$, $p = 1/(1 + e^{-1}) \\approx 0.7311$.

Differentiating $p = (1 + e^{-z})^{-1}$ gives $p(1-p)$, largest at $p = 1/2$, and $\\mu_q = \\mu_k = 0.5$.
"""


@pytest.mark.parametrize("tau, status", [("2", "correct"), ("4", "wrong")])
def test_a_letter_given_a_formula_of_sizes_is_its_value_and_one_given_numbers_takes_cases(tau, status):
    found = check_text(CASES.replace("TAU", tau), isolate=False).findings
    assert [f.status for f in found if f.line == 3 and f.latex.strip() == f"\\tau = {tau}"] == [status]
    assert not {f.status for f in found if f.line > 3} & {"wrong", "inconsistent"}  # z and p take cases
    assert any(f.status == "given" and "\\mu_q = \\mu_k" in f.message for f in found if f.line == 7)


def test_letters_given_a_case_again_together_or_greek_are_cases_not_contradictions():
    text = ("# Means\n\nTake $\\mu_q = \\mu_k = 0.5$ and $b = 2$.\n\n"
            "With $\\mu_q = \\mu_k = 0$ instead, $\\mu_q = 0$ and $b = 4$, the mean vanishes.\n")
    found = [f for f in check_text(text, isolate=False).findings if f.line == 5]
    assert [f.status for f in found] == ["given"] * 3  # no contradiction, and a value restated is no claim
    assert "another case" in found[0].message and found[1].message.startswith("restates \\mu_q = 0") and \
        "another case" in found[2].message


REVIEWED = Path(__file__).parent / "data" / "review40"


@pytest.mark.parametrize("name", ["vtab1", "vtab2", "vtab3", "batch1", "batch2", "batch3", "softrow", "softrow2",
                                  "noun", "noun2", "rank1", "rank2", "expo"])
def test_documents_a_reviewer_wrote_against_the_eleventh_sessions_readers_raise_no_false_alarm(name):
    """Correct documents written to break this session's readers (a table of one layer's or a batch's caches, an
    unnumbered GQA column, "a batch of 4,096 tokens", "the cache of each sequence", a softmax of a scaled row, "4 K",
    "50 percent", "it" after a product, "could have full rank if", a row of scores after exponentials): each raised a
    false alarm before its fix."""
    found = check_text((REVIEWED / f"{name}.md").read_text(encoding="utf-8"), isolate=False).findings
    assert not [f for f in found if f.status in ("wrong", "inconsistent")]
