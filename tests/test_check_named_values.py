"""Values a document names and then computes with, in every notation: a vector of numbers bound in code or in a
block of plain formulas is a name in its scope, a function of it is a local computation, and each number it is
compared with is read at its own written precision."""

from __future__ import annotations

import pytest

from mha_symbolic import check_text

SOFTMAX = "0.6439, 0.2369, 0.0871, 0.0321"  # softmax(2, 1, 0, -1) to four places


def verdicts(text: str, line: int) -> list[str]:
    return [f.status for f in check_text(text, isolate=False).findings if f.line == line]


@pytest.mark.parametrize("weights, status", [
    (SOFTMAX, "correct"),
    ("0.6439, 0.2369, 0.0321, 0.0871", "wrong"),  # the last two swapped
])
def test_a_one_row_formula_in_a_plain_block_is_read(weights, status):
    # a line `name ≈ [numbers]` of a block that is not Python is a formula (no grid of rows follows it)
    doc = f"# Scores\n\nThe scores are $z = (2, 1, 0, -1)$.\n\n    softmax(z) ≈ [{weights}]\n"
    assert verdicts(doc, 5) == [status]


@pytest.mark.parametrize("fence", ["    ", "```\n"])
def test_a_vector_named_in_code_is_a_value_of_its_scope(fence):
    block = "z = [2, 1, 0, -1]\nsoftmax(z) ≈ [0.6439, 0.2369, 0.0321, 0.0871]\n"
    if fence == "    ":
        body = "".join("    " + x + "\n" for x in block.splitlines())
    else:
        body = "```\n" + block + "```\n"
    doc = "# Scores\n\nFour keys:\n\n" + body
    assert verdicts(doc, 5 if fence == "    " else 6) == ["given"]
    assert verdicts(doc, 6 if fence == "    " else 7) == ["wrong"]


def test_a_name_the_model_has_is_not_rebound_by_code():
    # X is the model's input, an upper-case name is a matrix of the model's: only lower-case free names bind
    doc = "# Scores\n\n```\nM = [[1, 2], [3, 4]]\n```\n\nThen $\\mathrm{rank}(M) = 1$.\n"
    assert "wrong" not in verdicts(doc, 7)


def test_a_printed_vector_binds_nothing():
    # what a notebook prints is rounded (1.33 for 4/3): the code's value, not a binding of the name to the print
    import nbformat

    nb = nbformat.v4.new_notebook()
    printed = nbformat.v4.new_output("execute_result", data={"text/plain": "array([ 1.33,  0.67,  0.  , -0.67])"},
                                     execution_count=1)
    nb.cells = [nbformat.v4.new_markdown_cell("# Scores"),
                nbformat.v4.new_code_cell("z = np.array([2.0, 1.0, 0.0, -1.0]) / 1.5\nz", outputs=[printed]),
                nbformat.v4.new_markdown_cell("Then $\\mathrm{softmax}(z) \\approx (0.5229, 0.2685, 0.1378, 0.0708)$.")]
    found = check_text(nbformat.writes(nb), name="scores.ipynb", isolate=False).findings
    assert "wrong" not in [f.status for f in found if f.cell == 2]  # softmax of the exact 4/3, ...: not refuted


@pytest.mark.parametrize("stated, status", [
    ("e^{s} \\approx (2.718, 1, 0.3679)", "correct"),
    ("\\exp(s) = (2.718, 1, 0.368)", "correct"),
    ("\\exp(s) \\approx (2.718, 1, 0.5)", "wrong"),      # e^{-1} = 0.3679
    ("e^{s} \\approx (2.718, 2.718, 0.3679)", "wrong"),  # e^0 = 1
])
def test_exp_of_a_named_row_is_entrywise(stated, status):
    doc = f"Let $s = (1, 0, -1)$.\n\nThen ${stated}$.\n"
    assert verdicts(doc, 3) == [status]


def test_exp_of_a_square_matrix_is_not_read_entrywise():
    doc = "Let $m = \\begin{bmatrix} 1 & 0 \\\\ 0 & 1 \\end{bmatrix}$.\n\nThen $e^{m} \\approx (2.718, 1, 1, 2.718)$.\n"
    assert "wrong" not in verdicts(doc, 3) and "correct" not in verdicts(doc, 3)


@pytest.mark.parametrize("weights, status", [
    ("0.64, 0.2369, 0.0871, 0.0321", "correct"),   # 0.64 at two places, the others at four
    ("0.64, 0.2369, 0.0871, 0.032", "correct"),
    ("0.65, 0.2369, 0.0871, 0.0321", "wrong"),     # 0.6439 is 0.64 at two places
    ("0.64, 0.2368, 0.0871, 0.0321", "wrong"),     # 0.23688 is 0.2369 at four
])
def test_each_entry_is_compared_at_its_own_written_places(weights, status):
    doc = f"Let $z = (2, 1, 0, -1)$.\n\nThen $\\mathrm{{softmax}}(z) \\approx ({weights})$.\n"
    assert verdicts(doc, 3) == [status]


@pytest.mark.parametrize("weights, status", [
    ("0.6652, 0.2447, 0.0900", "correct"),
    ("0.6225, 0.2447, 0.1328", "wrong"),
])
def test_a_sentence_names_a_vector_in_its_scope(weights, status):
    # "... are s = (2, 1, 0)" binds s as $s = (2, 1, 0)$ would, in a sentence of any language
    for said in ("so the scaled scores are s = (2, 1, 0).", "logo os escores escalados são s = (2, 1, 0)."):
        doc = f"# Softmax\n\nScale factor: √4 = 2, {said}\n\nWeights: α = softmax(s) ≈ ({weights}), which sum to 1.\n"
        assert verdicts(doc, 3)[-1] == "given"
        assert verdicts(doc, 5) == [status]


def test_a_name_numbered_like_code_is_the_heads_matrix():
    # W_Q1, Q1, S1 in a plain formula are W_Q^1, Q_1, S_1 (never Q times 1); the heading fixes the sizes
    from mha_symbolic.check.plain import math_words

    assert math_words("S1 = Q1^T K1") == "S_{1} = Q_{1}^T K_{1}"
    assert math_words("W_Q1 X") == "W_Q^{1} X" and math_words("W_{K2} X") == "W_K^{2} X"
    assert math_words("FP16 = 2") == "FP16 = 2" and math_words("x = 0.5") == "x = 0.5"
    doc = ("# Lecture\n\nTokens are columns: Q_i = W_Q^i X with X ∈ R^{d×n}.\n\n"
           "## Worked example: d = 3, n = 4, h = 2, d_k = d_v = 2\n\n"
           "    X = [1 0 1 2; 0 1 1 1; 1 1 0 1]\n\n"
           "    W_Q1 = [1 0 2; 0 1 1]    W_K1 = [1 1 0; 0 1 2]\n"
           "    Q1 = W_Q1 X = [3 2 1 4; 1 2 1 2]\n"
           "    K1 = W_K1 X = [1 1 2 3; 2 3 1 3]\n"
           "    S1 = Q1^T K1 = [5 6 7 12; 6 8 6 12; 3 4 3 6; 8 10 10 18]\n"
           "    S1 = Q1^T K1 = [5 6 7 12; 6 8 6 12; 3 4 3 6; 8 10 10 19]\n")
    assert set(verdicts(doc, 5)) == {"given"}  # the heading's configuration
    assert verdicts(doc, 10) == ["correct"] and verdicts(doc, 11) == ["correct"]
    assert verdicts(doc, 12) == ["correct"] and verdicts(doc, 13) == ["wrong"]


def test_a_heading_binds_only_a_configuration_nobody_fixed():
    doc = ("# Notes\n\nWe take $n = 5$ tokens.\n\n## Example: n = 4, h = 2\n\nThen $n = 5$ again.\n")
    assert "given" not in verdicts(doc, 5)  # n was fixed before: the heading's sizes are its section's own example


@pytest.mark.parametrize("name", ["W_Q^{(i)}", "W_Q^i"])
def test_a_head_index_in_parentheses_names_the_heads_weight_in_prose(name):
    doc = ("# Count\n\nConsider d_model = 768 and h = 12 heads, with dₖ = d_v = d_model/h.\n\n"
           f"Each head i has {name} ∈ ℝ^{{768×96}}, that is, 768 · 96 = 73728 parameters.\n")
    assert sorted(verdicts(doc, 5)) == ["correct", "inconsistent"]  # the arithmetic holds; the shape is 768 x 64


@pytest.mark.parametrize("variance, status", [("16", "correct"), ("32", "wrong")])
def test_a_parameter_named_by_a_greek_letter_in_a_sentence_binds_like_math(variance, status):
    # σ² = 0.5 written in plain text is the entries' variance, as $\sigma^2 = 0.5$ is: Var(q·k) = d_k σ⁴ = 16
    doc = ("# Variance\n\nEntries of q and k are independent with mean 0 and variance σ²; $d_k = 64$.\n\n"
           "Here the entries have σ² = 0.5, so σ⁴ = 0.25.\n"
           f"So $\\mathrm{{Var}}(q \\cdot k) = {variance}$.\n")
    assert "given" in verdicts(doc, 5)
    assert verdicts(doc, 6) == [status]


def test_blocks_stacked_in_a_sentence_are_no_matrix_of_matrices():
    # "[V1; V2] = [...]" after V1 and V2 were given: a block matrix the reader does not assemble; never a SymPy
    # matrix of matrices (a deprecation warning, and a verdict on nonsense)
    doc = ("# Heads\n\n## Example: d = 3, n = 4, h = 2, d_k = d_v = 2\n\n"
           "    X = [1 0 1 2; 0 1 1 1; 1 1 0 1]\n"
           "    W_V1 = [1 0 0; 0 0 1]    W_V2 = [0 1 1; 1 1 0]\n"
           "    V1 = W_V1 X = [1 0 1 2; 1 1 0 1]\n"
           "    V2 = W_V2 X = [1 2 1 2; 1 1 2 3]\n\n"
           "The stacked values [V1; V2] = [1 0 1 2; 1 1 0 1; 1 2 1 2; 1 1 2 3] have rank 3.\n")
    import warnings

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert "wrong" not in verdicts(doc, 10)
    assert not [w for w in caught if "non-Expr" in str(w.message)]


@pytest.mark.parametrize("stated, status", [("\\max(s) = 2.4", "correct"), ("\\max(s) = 1.2", "wrong"),
                                            ("\\min(s) = -0.6", "correct")])
def test_max_of_a_named_row_is_its_largest_entry(stated, status):
    doc = f"Let $s = (2.4, 1.2, 0.6, -0.6)$.\n\nThen ${stated}$.\n"
    assert verdicts(doc, 3) == [status]


def test_a_function_word_before_a_name_is_the_sentences_noun():
    # "For softmax p = softmax(s), ...": p = softmax(s) defines p; "softmax p" is no application
    doc = ("# Gradient\n\nThe scores are s = (2, 1, 0).\n\n"
           "For softmax p = softmax(s), ∂p_i/∂s_i = p_i(1 − p_i), at most 0.25.\n")
    assert "wrong" not in verdicts(doc, 5)


def test_a_width_derived_from_its_own_paragraphs_sizes_starts_another_example():
    # d_k = 96 in one section; another binds d_model = 768 and h = 12 and derives d_k = d_model/h = 64
    doc = ("# Appendix\n\n## Scaling\n\nTake $d_k = 96$ as in our base model.\n\n## Rank\n\n"
           "Fix a layer with $d_{\\text{model}} = 768$, $h = 12$ heads and therefore "
           "$d_k = d_{\\text{model}}/h = 64$; then $W_Q^{(i)} \\in \\mathbb{R}^{768 \\times 64}$.\n")
    assert sorted(verdicts(doc, 9)) == ["correct", "correct", "given", "given"]


def test_a_weight_without_a_head_index_in_a_model_of_heads_is_no_missing_input():
    # W_K X with several heads: which head's W_K is not said; that is no input the document "never gives"
    doc = ("# Example\n\nTokens are columns: $X \\in \\mathbb{R}^{d_{model} \\times n}$, $K_i = W_K^i X$.\n\n"
           "$d_{model} = 4$, $n = 3$, $h = 2$.\n\n"
           "$$K = W_K X = \\begin{bmatrix} 0 & 1 & 1 \\\\ 1 & 2 & 3 \\end{bmatrix}$$\n")
    assert verdicts(doc, 7) == ["unchecked"]


def test_a_shape_claim_on_a_product_whose_first_factor_is_not_read_is_no_claim_on_the_last():
    doc = ("# Rank\n\nWith $d_{model} = 512$ and $h = 8$, $W_Q^{(i)} \\in \\mathbb{R}^{512 \\times 64}$.\n\n"
           "The matrix $W_K^{(i)\\top} W_Q^{(i)}$ is $d \\times d$, but it factors through $\\mathbb{R}^{d_k}$.\n")
    assert "inconsistent" not in verdicts(doc, 5) and "wrong" not in verdicts(doc, 5)


@pytest.mark.parametrize("weights, status", [(SOFTMAX, "correct"), ("0.6439, 0.2369, 0.0321, 0.0871", "wrong")])
def test_a_named_row_is_one_name_with_or_without_braces(weights, status):
    doc = f"Let $z_1 = (2, 1, 0, -1)$.\n\nThen $\\mathrm{{softmax}}(z_{{1}}) \\approx ({weights})$.\n"
    assert verdicts(doc, 3) == [status]
