"""Issue 25's mechanisms of precision: scopes, another configuration, numbers as written, the document's own model.

Each rule has a case where it keeps a correct statement from being flagged and a case where an error is still
flagged."""

from __future__ import annotations

import pytest

from mha_symbolic import check_text
from mha_symbolic.check.scopes import paragraph_sizes, paragraphs

SIZES = "We use $n = 3$, $d_{model} = 4$, $h = 2$.\n"


def statuses(text: str, line: int) -> list[str]:
    return [f.status for f in check_text(text, isolate=False).findings if f.line == line]


def flags(text: str) -> list[tuple[int, str]]:
    return [(f.line, f.status) for f in check_text(text, isolate=False).findings
            if f.status in ("wrong", "inconsistent")]


# ----- scopes: a paragraph binds; another paragraph with another value is another example --------------------------
def test_paragraphs_and_list_items_are_scopes():
    assert paragraphs("a\nb\n\nc\n- d\n  e\n2. f\n**g**") == {1: (1, 0), 2: (1, 0), 4: (2, 0), 5: (2, 1),
                                                                 6: (2, 1), 7: (2, 2), 8: (2, 2)}


def test_a_list_item_is_nested_in_the_paragraph_that_opens_it():
    doc = "Settings: $n = 3$ tokens, $h = 2$.\n- each head sees all the tokens\n- so $n = 4$ rows per head\n"
    assert flags(doc) in ([(3, "inconsistent")], [(3, "wrong")])  # the opening line bound n = 3 for its items
    assert flags(doc.replace("Settings: $n = 3$ tokens, $h = 2$.\n", "Settings.\n")) == []


def test_a_size_restated_in_another_paragraph_is_another_example():
    doc = SIZES + "\nFor the large model, $d_{model} = 512$ and $h = 8$, so $d_k = 512/8 = 64$.\n"
    assert flags(doc) == []
    assert flags(doc.replace("512/8 = 64", "512/8 = 32")) == [(3, "wrong")]  # its own arithmetic still judged


def test_a_paragraph_that_binds_a_size_twice_is_inconsistent_naming_the_line():
    report = check_text("We use $h = 8$ heads.\nThe model uses 6 heads.\n", isolate=False)
    [f] = [f for f in report.findings if f.status == "inconsistent"]
    assert f.line == 2 and "line 1" in f.message


def test_a_list_item_speaks_of_its_own_configuration():
    doc = "- At $n = 1024$ the scores hold $1024^2$ entries.\n- At $n = 512$ they hold $512^2 = 262144$.\n"
    assert flags(doc) == []
    assert flags(doc.replace("262144", "262145")) == [(2, "wrong")]


def test_a_chain_rebinding_a_derived_size_is_another_example():
    doc = ("For $d_{model} = 512$ and $h = 8$: $d_k = 512/8 = 64$.\n\n"
           "For $d_{model} = 1024$ and $h = 16$: $d_k = 1024/16 = 64$.\n\nThen $d_k = 4096/32 = 128$ here.\n")
    assert flags(doc) == []
    assert flags(doc.replace("4096/32 = 128", "4096/32 = 256")) == [(5, "wrong")]


def test_a_value_of_an_earlier_example_refers_to_it():
    doc = ("## Example 1\n\nWe use $d_k = 4$.\n\n## Example 2\n\nNow $d_k = 2$.\n"
           "Unlike example 1, where $d_k = 4$, the bound binds here.\n")
    assert flags(doc) == []
    assert flags(doc.replace("where $d_k = 4$", "where $d_k = 5$")) == [(8, "wrong")]  # never bound: an error


def test_a_sentence_comparing_two_values_binds_neither():
    doc = "The window shrank from 4096 tokens in one model to 1024 tokens in the next.\n"
    assert flags(doc) == [] and statuses(doc, 1) == ["given"]
    assert flags("We use 8 heads.\nThe model uses 6 heads.\n") == [(2, "inconsistent")]


def test_a_sentence_giving_one_size_two_values_in_math_binds_neither():
    """The same class as the sentence in words above, written in math: "going from $n = 512$ to $n = 8192$" after
    the paragraph computed n = 2048 (it was judged wrong twice against that value)."""
    doc = ("With $d_{model} = 1024$ they break even at $n = 2 d_{model} = 2048$. Going from $n = 512$ to $n = 8192$ "
           "makes the scores $16^2 = 256$ times larger.\n")
    assert flags(doc) == []
    assert [f.status for f in check_text(doc, isolate=False).findings if f.latex in ("n = 512", "n = 8192")] == \
        ["given", "given"]
    assert flags(doc.replace("16^2 = 256", "16^2 = 265")) == [(1, "wrong")]  # its arithmetic is still judged
    assert flags(SIZES + "So $n = 5$ here.\n") != []  # one size bound twice in one scope is still flagged


def test_a_shape_stated_as_a_product_of_shapes_is_read_as_one():
    """"$A_1 V_1$ is $(n \\times n)(n \\times d_v)$" states the factors' shapes: the product is n x d_v (it was read
    as the claim that A_1 V_1 is n x n, and called wrong)."""
    text = SIZES + ("Tokens are rows, $X \\in \\mathbb{R}^{n \\times d_{model}}$; "
                    "$A_1 V_1$ is $(n \\times n)(n \\times d_v)$.\n")
    def product(text: str) -> list[str]:
        return [f.status for f in check_text(text, isolate=False).findings if "X is" not in f.message and f.line == 2]

    assert product(text) == ["correct"]
    assert product(text.replace("(n \\times d_v)$", "(d_v \\times n)$")) == ["inconsistent"]  # inner sizes
    assert product(text.replace("$(n \\times n)(n \\times d_v)$", "$(n \\times d_v)(d_v \\times n)$")) == ["wrong"]


def test_a_shape_stated_of_an_equation_is_the_shape_of_its_matrix():
    """"$O_1 = A_1 V_1$ is ..." and "$W_O \\in \\mathbb{R}^{..}$ is ...": the shape is of the matrix, not of the
    equation (which was "not a matrix" or "not read", unchecked)."""
    text = SIZES + ("Tokens are rows, $X \\in \\mathbb{R}^{n \\times d_{model}}$. "
                    "Here $O_1 = A_1 V_1$ is $3 \\times 2$.\n")
    mine = [f.status for f in check_text(text, isolate=False).findings if "X is" not in f.message and f.line == 2
            and f.kind == "shape"]
    assert mine == ["correct"]
    assert "wrong" in [f.status for f in check_text(text.replace("is $3 \\times 2$", "is $2 \\times 3$"),
                                                     isolate=False).findings if f.line == 2]
    weights = SIZES + "The output weights $W_O \\in \\mathbb{R}^{d_{model} \\times d_{model}}$ are $4 \\times 4$.\n"
    assert statuses(weights, 2).count("unchecked") == 0 and "correct" in statuses(weights, 2)


def test_a_new_example_keeps_the_sizes_its_own_paragraph_set_before_it():
    """"$d_{model} = 768$, $h = 12$, so $d_k = d_v = 768/12 = 64$" after an example with d_k = 4: a chain of several
    sizes starts the new example (it was judged against d_k = 4 and d_v = 2), and the sizes set before it in its
    paragraph belong to the new example (they were forgotten with the old one)."""
    doc = ("We take $n = 3$, $d_k = 4$ and $d_v = 2$.\n\n## Cost\n\n"
           "Now $d_{model} = 768$, $h = 12$ and so $d_k = d_v = 768/12 = 64$. One head has $3 \\cdot 768 \\cdot 64 = "
           "147456$ weights, and $h d_k = 768$.\n")
    assert flags(doc) == []
    assert statuses(doc, 5)[:3] == ["given", "given", "correct"]
    assert flags(doc.replace("768/12 = 64", "768/12 = 48")) != []
    assert "correct" in [f.status for f in check_text(doc, isolate=False).findings if f.latex == "h d_k = 768"]


def test_a_relation_of_sizes_with_no_number_is_not_judged_against_the_example():
    """"A partir de $n > 2 d_{model}$, ..." (from n > 2 d_model on): a regime, not a claim that this example's n
    exceeds 2 d_model; the same relation with numbers is judged."""
    doc = ("Sea $n = 2048$ y $d_{\\text{model}} = 1024$.\n"
           "A partir de $n > 2 d_{\\text{model}}$, domina el término cuadrático.\n")
    assert flags(doc) == [] and statuses(doc, 2) == ["given"]
    assert flags(doc.replace("$n > 2 d_{\\text{model}}$", "$n = 2048 > 2 d_{\\text{model}}$")) == [(2, "wrong")]


def test_a_flop_count_in_the_documents_own_formula_is_its_own_count():
    """"The product $QK^T$ of all the heads costs $2 n^2 d_{model} = ...$ FLOPs": the document's formula, right in its
    sizes, says which count it is (all heads); the checker's reading of the words (one head's scores) does not make
    it wrong. A number its own formula does not give is still wrong."""
    doc = ("Let $n = 1024$, $d_{model} = 768$ and $h = 12$.\n"
           "The product $QK^\\top$ of all the heads costs $2 n^2 d_{model} = 1{,}610{,}612{,}736$ FLOPs.\n")
    assert flags(doc) == [] and statuses(doc, 2)[0] == "correct"
    assert (2, "wrong") in flags(doc.replace("1{,}610{,}612{,}736", "1{,}610{,}612{,}763"))


def test_numbers_given_for_a_name_whose_formula_has_no_given_inputs_are_its_own():
    """"Q = X·W_Q" in general, then "Q = [[1, 0], ...]" in a small example with no X or W_Q: the numbers are the
    example's own Q (it was "a weight without a head index", unchecked), and Q K^T is computed from them."""
    doc = ("One head has W_Q, W_K ∈ ℝ^{d_model×dₖ}.\n\n  Q = X·W_Q ∈ ℝ^{n×dₖ}\n  K = X·W_K ∈ ℝ^{n×dₖ}\n\n"
           "With d_model = 64 and dₖ = 16 the product W_Q·W_Kᵀ is 64×64.\n\nA small example (n = 3, dₖ = 2):\n\n"
           "  Q = [[1, 0], [0, 1], [1, 1]]\n  K = [[1, 2], [0, 1], [2, 1]]\n\nThe scores are\n\n"
           "  QKᵀ = [[1, 0, 2], [2, 1, 1], [3, 1, 3]]\n")
    got = [(f.line, f.status) for f in check_text(doc, name="note.txt", isolate=False).findings if f.line >= 10]
    assert got == [(10, "given"), (11, "given"), (15, "correct")]
    wrong = doc.replace("[3, 1, 3]]", "[3, 1, 2]]")
    assert (15, "wrong") in [(f.line, f.status) for f in check_text(wrong, name="note.txt", isolate=False).findings]


def test_the_letter_h_of_heads_does_not_make_a_capital_h_the_head_count():
    """"$h = 12$ heads" made every standalone H an h (the pattern ignored case): an encoder output H became h."""
    from mha_symbolic.check.pipeline import _head_count_letter

    assert _head_count_letter("with $h = 12$ heads and $K = H W_K$") == "with $h = 12$ heads and $K = H W_K$"
    assert _head_count_letter("with $H = 12$ heads and $d_k = d / H$") == "with $h = 12$ heads and $d_k = d / h$"


def test_a_cross_attention_section_names_its_inputs_in_its_own_letters():
    """Queries from Y and keys from H in one section, while another section uses X: the section's letters are read
    as the model's roles there (the whole document's X made the renaming refuse, and Y's shape was wrong)."""
    doc = ("## Self-attention\n\nWith $X \\in \\mathbb{R}^{n \\times 768}$ the scores are $X W X^\\top$.\n\n"
           "## Cross-attention\n\nTake $n_q = 12$, $n_{kv} = 30$, $d_{model} = 384$ and $h = 6$. With decoder states "
           "$Y \\in \\mathbb{R}^{12 \\times 384}$ and encoder output $H \\in \\mathbb{R}^{30 \\times 384}$:\n\n"
           "- $Q_i = Y W_Q^{(i)} \\in \\mathbb{R}^{12 \\times 64}$,\n"
           "- $K_i = H W_K^{(i)} \\in \\mathbb{R}^{30 \\times 64}$,\n"
           "- $S_i = Q_i K_i^\\top / \\sqrt{64} = Q_i K_i^\\top / 8 \\in \\mathbb{R}^{12 \\times 30}$,\n"
           "- $A_i = \\mathrm{softmax}(S_i) \\in \\mathbb{R}^{12 \\times 30}$.\n")
    assert flags(doc) == []
    shape = "K_i = H W_K^{(i)} \\in \\mathbb{R}^{"
    assert (10, "wrong") in flags(doc.replace(shape + "30", shape + "12"))


def test_a_rank_of_a_matrix_written_rounded_is_the_rank_of_what_it_stands_for():
    """A Jacobian written to four places is singular up to rounding: its exact rank 3 is the rounding's, and
    "rank(J) = 2" is not decided by it (it was wrong); a rank below what every matrix it stands for has is wrong."""
    doc = ("$$J = \\begin{pmatrix} 0.2140 & -0.1750 & -0.0390 \\\\ -0.1750 & 0.1893 & -0.0144 \\\\ "
           "-0.0390 & -0.0144 & 0.0534 \\end{pmatrix}$$\n\nIts rows sum to zero up to rounding, and "
           "$\\mathrm{rank}(J) = 2$.\n")
    assert flags(doc) == [] and statuses(doc, 3) == ["unchecked"]
    assert flags(doc.replace("\\mathrm{rank}(J) = 2", "\\mathrm{rank}(J) = 1")) == [(3, "wrong")]


def test_scores_given_as_numbers_after_the_scaling_name_the_scaled_scores():
    """"S_1 = [numbers]" where the numbers are Q_1 K_1^T / sqrt(2): the document's S is the scaled scores (it was
    wrong against the model's unscaled S_1); numbers that are neither are still wrong."""
    doc = ("Tokens are rows; $n = 3$, $d_{model} = 2$, $h = 1$.\n\n"
           "$$Q_1 = \\begin{bmatrix} 2 & 0 \\\\ 0 & 2 \\\\ 1 & 1 \\end{bmatrix},\\quad "
           "K_1 = \\begin{bmatrix} 1 & 1 \\\\ 0 & 1 \\\\ 1 & 0 \\end{bmatrix}$$\n\n"
           "$$S_1 = \\begin{bmatrix} 1.4142 & 0 & 1.4142 \\\\ 1.4142 & 1.4142 & 0 \\\\ 1.4142 & 0.7071 & 0.7071 "
           "\\end{bmatrix}$$\n")
    assert flags(doc) == [] and statuses(doc, 5) == ["correct"]
    assert flags(doc.replace("0.7071 & 0.7071", "0.7071 & 0.7171")) == [(5, "wrong")]


def test_thousands_separators_are_one_number():
    assert paragraph_sizes("A 32,768-token context, or 4{,}096 tokens.") == {("n", 32768), ("n", 4096)}


# ----- another configuration stated in the paragraph ---------------------------------------------------------------
def test_a_claim_that_holds_in_a_configuration_its_paragraph_states_is_not_judged():
    doc = ("**Exercise.** For $d_{model} = 512$ and $h = 8$ give $d_k$.\n\n"
           "$d_k = 512/8 = 64$. What if $h$ were 16? Then $W_Q^{(i)} \\in \\mathbb{R}^{512 \\times 32}$.\n")
    found = check_text(doc, isolate=False).findings
    assert not [f for f in found if f.status in ("wrong", "inconsistent")]
    assert any(f.status == "unchecked" and "h = 16" in f.message for f in found)
    # a shape that holds in no configuration the paragraph states is still wrong
    assert flags(doc.replace("512 \\times 32", "512 \\times 48")) == [(3, "inconsistent")]


# ----- numbers as written ------------------------------------------------------------------------------------------
@pytest.mark.parametrize("statement, status", [
    (r"$\mathrm{softmax}(3.5355, 1.4142, 2.1213) = (0.7337, 0.0879, 0.1784)$", "correct"),  # of rounded scores
    (r"$\mathrm{softmax}(3.5355, 1.4142, 2.1213) = (0.7337, 0.0899, 0.1784)$", "wrong"),
    (r"$0.2119 + 0.5761 + 0.2119 = 1$", "correct"),  # rounded weights of one row
    (r"$0.2119 + 0.5761 + 0.2119 = 1.01$", "wrong"),
    (r"$0.2 + 0.1 = 0.4$", "wrong"),  # one or two places: values chosen as written, exact
    (r"$0.25 + 0.25 = 0.5$", "correct"),
    (r"$0.125 = 0.126$", "wrong"),  # two written values whose intervals only touch are different numbers
    (r"$2.5e-3 = 0.0026$", "wrong"),
], ids=["softmax-rounded", "softmax-wrong", "sum-rounded", "sum-wrong", "one-place", "two-places", "touching",
          "scientific"])
def test_decimals_stand_for_the_interval_they_round(statement, status):
    assert statuses(statement + "\n", 1) == [status]


@pytest.mark.parametrize("statement, status", [
    (r"$4 \times 768^2 = 2{,}359{,}296 \approx 2.36$ million weights", "correct"),
    (r"$4 \times 768^2 = 2{,}359{,}296 \approx 3.36$ million weights", "wrong"),
    (r"$4 \times 768^2 \approx 2.4$M weights", "correct"),  # two significant digits: within 50,000
    (r"$4 \times 768^2 \approx 2.36\,\text{M}$", "correct"),
    (r"$4 \times 768^2 \approx 2.36\,\text{M}$".replace("2.36", "2.46"), "wrong"),
    (r"$4 \times 768^2 \approx 2.36$ মিলিয়ন প্যারামিটার", "correct"),
    (r"$3 \times 2^{30} \approx 3.22$ Milliarden Bytes", "correct"),
    (r"$2 \times 16 = 32$ K and V vectors", "correct"),  # a letter after a space is no scale
], ids=["million", "million-wrong", "M-glued", "text-M", "text-M-wrong", "bengali", "german", "not-a-suffix"])
def test_a_number_with_a_scale_word_is_compared_at_its_significant_digits(statement, status):
    assert statuses(statement + "\n", 1) == [status]


# ----- the document's own model --------------------------------------------------------------------------------------
def test_steps_said_equal_without_weights_are_the_documents_choice():
    doc = SIZES + "\nHere $Q_1 = K_1 = V_1 \\in \\mathbb{R}^{3 \\times 2}$.\n"
    assert statuses(doc, 3) == ["given", "correct"]
    assert statuses(doc.replace("3 \\times 2", "3 \\times 4"), 3)[1] in ("wrong", "inconsistent")


def test_a_definition_by_softmax_names_a_vector():
    assert statuses("For $p = \\mathrm{softmax}(z)$ the entries sum to one.\n", 1) == ["given"]
    found = check_text("$$\\mathrm{softmax}(s + c\\mathbf{1}) = \\mathrm{softmax}(s)$$\n", isolate=False).findings
    assert [f.status for f in found] == ["correct"] and "not proven for every length" in found[0].message
    assert statuses("$$\\mathrm{softmax}(2s) = \\mathrm{softmax}(s)$$\n", 1) == ["wrong"]


def test_a_product_that_does_not_fit_the_row_convention_is_unchecked_unless_rows_are_stated():
    plain = "We use n = 3, d_model = 4, h = 2.\n\nK1^T Q1 = [2 4 2; 4 8 10; 4 8 8].\n"
    found = [f for f in check_text(plain, isolate=False).findings if f.line == 3]
    assert [f.status for f in found] == ["unchecked"] and "does not say that tokens are rows" in found[0].message
    rows = "Tokens are rows, $X \\in \\mathbb{R}^{n \\times d_{model}}$. " + plain
    assert statuses(rows, 3) == ["inconsistent"]


# ----- evidence and honest verdicts ----------------------------------------------------------------------------------
def test_a_wrong_verdict_carries_the_bindings_it_was_judged_with():
    doc = SIZES + "$$X = \\begin{bmatrix} 1 & 0 & 0 & 1 \\\\ 0 & 1 & 1 & 0 \\\\ 1 & 1 & 0 & 0 \\end{bmatrix}$$\n" \
        "and $Q_1 \\in \\mathbb{R}^{3 \\times 4}$.\n"
    report = check_text(doc, isolate=False)
    [f] = [f for f in report.findings if f.status in ("wrong", "inconsistent")]
    assert f.line == 3 and "h = 2 (line 1)" in f.evidence and "X given on line 2" in f.evidence
    assert "judged with h = 2 (line 1)" in report.explain()
    assert check_text(SIZES, isolate=False).explain() == "nothing wrong or inconsistent"


def test_a_restated_setting_is_given_not_correct():
    assert statuses(SIZES + "Again $h = 2$.\n", 2) == ["given"]
    assert statuses(SIZES + "Here $d_k = 4/2 = 2$.\n", 2) == ["correct"]  # a computation: compared
    assert statuses(SIZES + "Again $h = 3$.\n", 2) in (["wrong"], ["inconsistent"])


# ----- local computations first ---------------------------------------------------------------------------------------
_WIDE = (SIZES + "\n$$Q = \\begin{pmatrix} 2 & 0 & 0 & 1 \\\\ 0 & 3 & 3 & 1 \\\\ 1 & 2 & 2 & 2 \\end{pmatrix}, \\quad "
         "K = \\begin{pmatrix} 1 & 2 & 1 & 0 \\\\ 2 & 0 & 1 & 3 \\\\ 1 & 1 & 2 & 2 \\end{pmatrix}$$\n\n"
         "$$Q_1 K_1^T = \\begin{pmatrix} 2 & 4 & 2 \\\\ 6 & 0 & 3 \\\\ 5 & 2 & 3 \\end{pmatrix}$$\n\n"
         "$$S_1 = \\frac{Q_1 K_1^T}{\\sqrt{2}} = \\begin{pmatrix} 1.4142 & 2.8284 & 1.4142 \\\\ 4.2426 & 0 & 2.1213 "
         "\\\\ 3.5355 & 1.4142 & 2.1213 \\end{pmatrix}$$\n")


def test_head_blocks_of_a_stated_wide_q_are_used_without_weights():
    assert statuses(_WIDE, 5) == ["correct"]  # from the stated Q and K, head 1's columns
    assert statuses(_WIDE.replace("6 & 0 & 3", "6 & 1 & 3"), 5) == ["wrong"]


def test_a_chain_that_defines_a_name_is_the_documents_definition():
    # the model's S_1 is unscaled; this document's S_1 is the scaled scores, and its values agree with them
    assert statuses(_WIDE, 7) == ["correct"]
    assert statuses(_WIDE.replace("4.2426 & 0", "4.2426 & 1"), 7) == ["wrong"]


def test_a_decimal_right_after_a_latex_command_is_an_interval_too():  # found by the mutation run
    assert statuses("$2\\cdot1.414 = 2.829$\n", 1) == statuses("$2 \\cdot 1.414 = 2.829$\n", 1) == ["correct"]


def test_a_hypothetical_head_width_is_another_configuration():  # found by the mutation run
    doc = ("For $d_{model} = 512$ and $h = 8$.\n\nWhat if $d_k$ were 32? Then "
           "$W_Q^{(i)} \\in \\mathbb{R}^{512 \\times 32}$.\n")
    found = [f for f in check_text(doc, isolate=False).findings if f.line == 3]
    assert [f.status for f in found] == ["unchecked"] and "model has d_k = 64" in found[0].message
    assert flags(doc.replace("512 \\times 32", "512 \\times 48")) == [(3, "inconsistent")]


@pytest.mark.parametrize("statement, status", [
    (r"$2^{30} \approx 1.07 \times 10^{9}$", "correct"),  # three significant digits: to within 5 x 10^6
    (r"$2^{30} \approx 1.2 \times 10^{9}$", "wrong"),
    (r"$e^{20} \approx 4.9 \times 10^{8}$", "correct"),
    (r"$e^{20} \approx 4.8 \times 10^{8}$", "wrong"),
    (r"$1.5e-3 = 0.0015$", "correct"),
], ids=["2^30", "2^30-wrong", "e^20", "e^20-wrong", "e-notation"])
def test_scientific_notation_is_read_to_its_significant_digits(statement, status):
    assert statuses(statement + "\n", 1) == [status]


def test_two_sides_are_read_apart_for_their_precision():
    # "1.234e3" and "1234.4" once ran together into the exponent e31234: any value was "correct"
    assert statuses("$1.234e3 = 1234.4$\n", 1) == ["wrong"] and statuses("$1.234e3 = 1234$\n", 1) == ["correct"]


def test_a_configuration_tried_aside_leaves_the_documents_history_alone():
    from mha_symbolic.check.model import DocumentModel
    from mha_symbolic.check.scopes import with_sizes

    doc = DocumentModel()
    doc.bind_dim("h", 8)
    doc.restart()
    alt = with_sizes(doc, {"h": 16})
    alt.restart()
    assert doc.history == {"h": [(8, 0)]} and alt.history == {"h": [(8, 0), (16, 0)]}


# ----- the document's own values: a matrix it writes for a name the model cannot compute -------------------------
CROSS = r"""# Cross-attention

Width $d_{model} = 8$ with $h = 2$ heads, so $d_k = 8/2 = 4$; the encoder has $n = 3$ tokens.

The decoder's queries come from the decoder and the keys from the encoder output:

$$Q = \begin{bmatrix} 1 & 1 & 0 & 0 \\ 2 & 0 & 2 & 0 \end{bmatrix},\quad
K = \begin{bmatrix} 1 & 0 & 1 & 0 \\ 0 & 1 & 0 & 1 \\ 1 & 1 & 1 & 1 \end{bmatrix}$$

So $Q \in \mathbb{R}^{2 \times 4}$ while $K \in \mathbb{R}^{3 \times 4}$, and $S = QK^\top/\sqrt{d_k}$.

$$QK^\top = \begin{bmatrix} 1 & 1 & 2 \\ 4 & 0 & 4 \end{bmatrix}, \qquad
S = \begin{bmatrix} 1/2 & 1/2 & 1 \\ 2 & 0 & 2 \end{bmatrix}$$

After both heads, $\mathrm{Concat}(\text{head}_1, \text{head}_2) \in \mathbb{R}^{2 \times 8}$.
"""


def test_a_matrix_the_document_writes_is_its_own_value_and_later_lines_compute_from_it():
    got = {(f.line, f.latex.split("=")[0].split(r"\in")[0].strip()): f.status
           for f in check_text(CROSS, isolate=False).findings}
    assert got[(7, "Q")] == got[(8, "K")] == "given"
    assert got[(10, "Q")] == got[(10, "K")] == "correct"  # shapes of its own values
    assert got[(12, "QK^T")] == got[(13, "S")] == "correct"  # computed from them, d_k = 4 substituted
    assert got[(15, r"\mathrm{Concat}(\text{head}_1, \text{head}_2)")] == "correct"  # 2 queries: n = 3 counts keys
    assert flags(CROSS) == []


@pytest.mark.parametrize("old, new, line", [
    (r"Q \in \mathbb{R}^{2 \times 4}", r"Q \in \mathbb{R}^{3 \times 4}", 10),
    (r"4 & 0 & 4 \end{bmatrix}, \qquad", r"4 & 0 & 3 \end{bmatrix}, \qquad", 12),
    (r"1/2 & 1/2 & 1 \\ 2 & 0 & 2", r"1/2 & 1/2 & 1 \\ 2 & 0 & 1", 13),
])
def test_an_error_against_the_documents_own_values_is_flagged(old, new, line):
    assert old in CROSS
    assert flags(CROSS.replace(old, new)) == [(line, "wrong")]


# ----- the subject of a count is named nearest before it, in its whole sentence ------------------------------------
_PARAMS = ("With $d_{model} = 4096$, $h = 32$ query heads and $g = 8$ KV heads of width $d_k = 128$: yes, W_K and\n"
           "W_V shrink. W_K has shape 4096 × 1024,\ni.e. 4,194,304 parameters instead of 16,777,216 for MHA. "
           "W_Q and W_O are unchanged.\n")


def test_a_count_is_about_the_weight_named_before_it_even_on_the_previous_line():
    assert statuses(_PARAMS, 3) == ["correct"]  # W_K (g = 8), not W_Q named after it
    assert statuses(_PARAMS.replace("4,194,304", "4,194,305"), 3) == ["wrong"]


# ----- a paragraph on multi-query attention speaks of one key/value head --------------------------------------------
_MQA = ("Take 32 layers, d_model = 4096, 32 heads of head_dim 128, fp16. Plain MHA stores a key and a value\n"
        "of full width for every head, so one layer costs 2 × 4096 × 2 B = 16,384 B = 16 KiB per token.\n\n"
        "Keep the same model but let the 32 query heads share 8 KV heads (each KV head serves 32 / 8 = 4\n"
        "query heads). Per layer and token: 2 × 8 × 128 × 2 B = 4,096 B = 4 KiB.\n"
        "Per token over 32 layers: 128 KiB; for 4096 tokens: 512 MiB.\n\n"
        "MQA keeps a single KV head: 2 × 1 × 128 × 2 B = 512 B per layer per token, 16 KiB per token for\n"
        "32 layers and 64 MiB for 4096 tokens, i.e. 32× smaller than the MHA cache.\n")


def test_a_cache_in_a_paragraph_on_mqa_is_not_judged_with_the_documents_g():
    assert statuses(_MQA, 9) == ["correct"]  # judged with g = 1, the variant its item is labelled with (not g = 8)
    assert flags(_MQA.replace("and 64 MiB", "and 65 MiB")) == [(9, "wrong")]  # and holds with no g at all


# ----- a value the document gives a name lives in its scope, like a size ----------------------------------------------
_NAMED = ("**Problem 1.** $d_m = 512$, $h = 8$.\n\n*Solution.* $4 d_m^2 = 1{,}048{,}576$ weights.\n\n"
          "**Problem 2.** $d_m = 768$, $h = 12$.\n\n*Solution.* $4 d_m^2 = 2{,}359{,}296$ weights.\n")


def test_a_named_value_restated_in_another_paragraph_is_another_example():
    assert flags(_NAMED) == []
    assert statuses(_NAMED, 5) == ["given", "given"]
    assert flags(_NAMED.replace("2{,}359{,}296", "2{,}359{,}295")) == [(7, "wrong")]  # judged with the new value
    assert flags(_NAMED.replace("$d_m = 512$, $h = 8$.", "$d_m = 512$, $h = 8$, $d_m = 768$.")) == [(1, "inconsistent")]


def test_with_its_own_d_v_a_document_fixes_d_model_only_where_it_says_so():
    doc = "A block of its own: $h = 4$, $d_k = 32$, $d_v = 64$. $W^O \\in \\mathbb{R}^{256 \\times 256}$.\n"
    assert flags(doc) == []  # W^O is h d_v x d_model; d_model = h d_k = 128 is not this document's
    same = "Here $h = 4$ and $d_k = d_v = 32$. $W^O \\in \\mathbb{R}^{256 \\times 256}$.\n"
    assert flags(same) == [(1, "inconsistent")]  # 128 x 128 with d_model = h d_k


# ----- numbers as written: a decimal comma, digits grouped by spaces ------------------------------------------------
def test_a_document_with_decimal_commas_groups_thousands_with_spaces():
    from mha_symbolic.check.numerals import as_points, decimal_comma

    assert decimal_comma("o cache cairia pela metade: 0,75 GiB") and not decimal_comma("d = 1,536 e (1,2)")
    assert as_points("5 368 709 120 B = 5 GiB (≈ 5,37 GB)") == "5368709120    B = 5 GiB (≈ 5.37 GB)"
    doc = ("Modelo: h = 32, 24 GiB de memória, 128 KiB por token, 1,5 GiB por camada.\n"
           "24 GiB / 128 KiB = 196 608 tokens.\nCom MHA seriam $196 608 / 4 = 49 152$ tokens.\n")
    assert statuses(doc, 2) == []  # one number, and a count a computation yields binds no n (it bound n = 608)
    assert flags(doc) == []
    assert flags(doc.replace("49 152", "49 153")) == [(3, "wrong")]


# ----- a cache total whose sentence does not say how many tokens it counts ------------------------------------------
def test_a_cache_total_without_its_token_count_is_not_judged():
    doc = ("We use $h = 8$ heads, $g = 2$ KV heads, $d_k = 64$, fp16.\n\n"
           "With 1024 tokens the KV cache per layer holds 512 KiB.\n\n"
           "In bf16 the same cache would take 3 MiB.\n")
    assert statuses(doc, 3) == ["correct"]
    assert statuses(doc, 5) == ["unchecked"]  # which tokens, layers and sequences: not said here
    assert flags(doc.replace("512 KiB", "500 KiB")) == [(3, "wrong")]


# ----- a name the document defines its own way is read that way afterwards --------------------------------------------
def test_a_name_defined_by_a_chain_is_read_so_by_later_lines():
    doc = (SIZES + "\n$$X = \\begin{pmatrix} 1 & 0 & 1 & 0 \\\\ 0 & 1 & 0 & 1 \\\\ 1 & 1 & 0 & 0 \\end{pmatrix}, "
           "W^Q = W^K = I_4$$\n\n"
           "$$S_1 = \\frac{Q_1 K_1^T}{\\sqrt{2}} = \\begin{pmatrix} 0.7071 & 0 & 0.7071 \\\\ 0 & 0.7071 & 0.7071 \\\\ "
           "0.7071 & 0.7071 & 1.4142 \\end{pmatrix}$$\n\n"
           "$$A_1 = \\mathrm{softmax}(S_1) = \\begin{pmatrix} 0.4011 & 0.1978 & 0.4011 \\\\ 0.1978 & 0.4011 & 0.4011 "
           "\\\\ 0.2483 & 0.2483 & 0.5035 \\end{pmatrix}$$\n")
    assert flags(doc) == []  # the model's S_1 is unscaled; this document's is scaled, and its A_1 follows it
    assert statuses(doc, 7) == ["correct"]
    assert flags(doc.replace("0.1978 & 0.4011 & 0.4011 ", "0.1978 & 0.4111 & 0.4011 ")) == [(7, "wrong")]


def test_the_all_ones_vector_is_no_number():
    doc = SIZES + "Every row of $A_1$ sums to one, so $A_1\\mathbf{1} = \\mathbf{1}$.\n"
    [found] = [f for f in check_text(doc, isolate=False).findings if f.line == 2 and f.latex != doc.splitlines()[1]]
    assert found.status == "unchecked" and "all-ones vector" in found.message  # not a 3 x 3 matrix against 1


def test_a_flop_count_written_as_a_formula_is_not_its_last_factor():
    doc = ("We take $n = 1024$, $d_{model} = 768$, $h = 6$.\n\n"
           "For this model per head, `Q_i K_i^T` is (n × 128)(128 × n) → 2·n²·128 FLOPs.\n")
    assert statuses(doc, 3) == ["unchecked"]
    assert statuses(doc.replace("is (n × 128)(128 × n) → 2·n²·128 FLOPs", "takes 128 FLOPs"), 3) == ["wrong"]


# ----- a unit written in prose right after the math; powers in arithmetic ---------------------------------------------
@pytest.mark.parametrize("stated, status", [("1.61", "correct"), ("1.71", "wrong")])
def test_a_unit_after_the_math_scales_its_last_side(stated, status):
    doc = (f"BERT-base at $n = 1024$: $2 \\cdot 1024^2 \\cdot 768 = 1{{,}}610{{,}}612{{,}}736 "
           f"\\approx {stated}$ GFLOP.\n")
    assert statuses(doc, 1) == ["given", status]


# ----- the document's own variance of the entries ---------------------------------------------------------------------
_SIGMA = ("We use $d_k = 64$.\n\nIf the coordinates have variance $\\sigma^2$, then $\\mathrm{Var}(q^\\top k) = d_k "
          "\\sigma^4$;\ne.g. $\\sigma^2 = 0.5$ and $d_k = 64$ give $\\mathrm{Var}(q^\\top k) = 16$.\n\n"
          "With unit variance, $\\mathrm{Var}(q^\\top k) = 64$.\n")


def test_a_variance_the_paragraph_states_is_the_entries_variance_there():
    assert flags(_SIGMA) == []
    assert statuses(_SIGMA, 4)[-1] == statuses(_SIGMA, 6)[-1] == "correct"
    assert flags(_SIGMA.replace("= 16$", "= 32$")) == [(4, "wrong")]
    other = _SIGMA.replace("k) = 64$", "k) = 65$")
    assert flags(other) == [] and statuses(other, 6) == ["unchecked"]  # which variance is meant there: not said


# ----- a claim about rows is about the matrix its sentence names ------------------------------------------------------
def test_rows_of_a_named_matrix_that_is_not_the_weights_are_not_the_weights_rows():
    doc = ("With the causal mask, $n = 3$, $d_{model} = 2$, $h = 1$.\n\n"
           "$J_\\sigma$ is symmetric and $J_\\sigma v = 0$ for constant $v$, so each row sums to zero.\n\n"
           "Each row of the causal weights $A$ sums to zero.\n")
    assert "wrong" not in statuses(doc, 3)
    assert "wrong" in statuses(doc, 5)  # the weights' rows sum to one


# ----- a verdict on an aligned chain sits on the row that broke it ----------------------------------------------------
_ALIGN = ("We use $d_{\\text{model}} = 1024$.\n\\begin{align}\n"
          "P &= 4\\, d_{\\text{model}}^2 + 4\\, d_{\\text{model}} \\\\\n"
          "  &= 4 \\cdot 1{,}048{,}576 + 4 \\cdot 1024 = 4{,}194{,}304 + 4{,}096 \\\\\n  &= 4{,}198{,}400 ,\n"
          "\\end{align}\n")


def test_a_failing_aligned_chain_is_reported_on_the_row_that_breaks_it():
    assert flags(_ALIGN) == []
    assert flags(_ALIGN.replace("&= 4{,}198{,}400", "&= 4{,}196{,}352")) == [(5, "wrong")]  # not line 3


# ----- scientific notation in an amount with a unit; LaTeX's decimal comma --------------------------------------------
@pytest.mark.parametrize("stated, status", [("1.72", "correct"), ("1.62", "wrong")])
def test_an_amount_in_scientific_notation_is_read_to_its_significant_digits(stated, status):
    doc = f"$16 \\cdot 2^{{30}} = 2^{{34}} \\approx {stated} \\times 10^{{10}} \\text{{FLOPs}}$\n"
    assert statuses(doc, 1) == [status]


def test_latex_decimal_commas_make_a_decimal_comma_document():
    doc = "Com $e^{0{,}5} \\approx 1{,}649$ e $e \\approx 2{,}718$, temos $1/\\sqrt{64} = 1/8 = 0{,}125$.\n"
    assert [s for s in statuses(doc, 1)] == ["correct", "correct", "correct"]
    assert "wrong" in statuses(doc.replace("2{,}718", "2{,}818"), 1)


# ----- a chain that fails binds nothing -------------------------------------------------------------------------------
def test_a_failing_chain_does_not_bind_its_wrong_value():
    doc = ("Sea $n = 2$, $d_{\\text{modelo}} = 4$ y $h = 1$, $d_k = d_{\\text{modelo}}/h = 4/1 = 2$.\n\n"
           "$$X = \\begin{pmatrix} 1 & 0 & 1 & 0 \\\\ 1 & 1 & 0 & 0 \\end{pmatrix}, \\quad W_Q = W_K = I_4$$\n\n"
           "$$\\frac{Q_1 K_1^T}{\\sqrt{d_k}} = \\begin{pmatrix} 1 & 0.5 \\\\ 0.5 & 1 \\end{pmatrix}$$\n")
    assert flags(doc) == [(1, "wrong")]  # 4/1 is 4; the scores are then not judged with d_k = 2


# ----- the variant named last before a statement of key/value heads, in any language ----------------------------------
def test_key_value_heads_of_a_variant_named_before_them_in_the_clause():
    doc = ("Usiamo $H_q = 32$ teste; nella GQA scegliamo $H_{kv} = 8$, per cui ogni testa KV serve $32/8 = 4$ teste; "
           "nella multi-query attention (MQA) resta una sola testa KV, $H_{kv} = 1$.\n")
    assert flags(doc) == []
    assert flags(doc.replace("$H_{kv} = 1$", "$H_{kv} = 2$")) == [(1, "wrong")]  # MQA has one


# ----- a size in a condition of its clause, in any of the documents' languages ----------------------------------------
_BEI = ("Ein Modell mit 12 Köpfen braucht bei $n = 8192$ in fp16 schon $12 \\cdot 128 = 1536$ MiB.\n"
        "Mit 12 Schichten sind es bei $n = 2048$ in fp32 bereits $144 \\cdot 16 = 2304$ MiB.\n")


def test_a_size_after_a_condition_word_is_a_condition_of_its_clause_not_a_second_binding():
    assert flags(_BEI) == []
    assert flags(_BEI.replace("bei $n = 2048$", "also $n = 2048$")) == [(2, "wrong")]  # a claim: judged


def test_a_setting_introduced_by_with_still_binds():
    doc = ("### Problem 1\n\nHere $d_k = 256 / 8 = 32$.\n\n### Problem 3\n\nLet $q, k \\in \\mathbb{R}^{d_k}$ with "
           "$d_k = 64$.\n\n(a) $\\mathrm{Var}(q \\cdot k) = 64$.\n")
    assert flags(doc) == []
    assert flags(doc.replace("(a) $\\mathrm{Var}(q \\cdot k) = 64$", "(a) $\\mathrm{Var}(q \\cdot k) = 32$")) == \
        [(9, "wrong")]


def test_layers_counted_in_another_language_are_not_the_sequence_length():
    doc = ("GPT-2 small hat $L = 12$ Schichten, $h = 12$ Köpfe und $d_{model} = 768$.\n"
           "Wir nehmen die volle Kontextlänge $n = 1024$.\n")
    assert flags(doc) == []
    assert statuses(doc, 1)[0] == "given" and "layers" in check_text(doc, isolate=False).findings[0].message


def test_a_chain_with_a_power_that_holds_starts_another_example():
    doc = "At first $d_k = 64$.\n\n**Exercise.** Which $d_k$ gives a standard deviation of 32? ($d_k = 32^2 = 1024$.)\n"
    assert flags(doc) == []


def test_a_head_width_with_a_condition_word_in_a_later_paragraph_is_that_sentences_example():
    doc = ("We use $d_{model} = 2048$ and $h = 16$ heads.\n\n"
           "A single query against three keys with $d_k = 4$, so the scale divides by $\\sqrt{4} = 2$.\n")
    assert statuses(doc, 3)[0] == "given" and flags(doc) == []
    # in the paragraph that binds d_model and h, the same words contradict d_k = d_model / h = 128 -- when the
    # document writes that relation; a document that never does sets a head width of its own (issue 25)
    same = "We use $d_{model} = 2048$ and $h = 16$ heads, $d_k = d_{model}/h$, three keys with $d_k = 4$.\n"
    assert (1, "wrong") in flags(same) or (1, "inconsistent") in flags(same)
    own = "We use $d_{model} = 2048$ and $h = 16$ heads, three keys with $d_k = 4$.\n"
    assert flags(own) == []


def test_the_size_that_solves_a_condition_is_computed_there():
    doc = ("Let $n = 128$ and $d = 768$.\n\n"
           "The quadratic part catches up when $4 n^2 d = 8 n d^2$, that is at $n = 2d = %s$ tokens.\n")
    assert statuses(doc % "1536", 3)[-1] == "correct" and flags(doc % "1536") == []
    assert (3, "wrong") in flags(doc % "1436")  # 2d is 1536 there too
    # without the condition, n = 2d = 1536 restates the document's n = 128 wrongly
    assert (3, "wrong") in flags("Let $n = 128$ and $d = 768$.\n\nSo $n = 2d = 1536$ tokens.\n")


# ----- tuples of sizes, and going back to an earlier example ----------------------------------------------------------
MAIN = ("## Shapes\n\nWe take $B = 2$, $n = 5$, $d_{model} = 12$ and $h = 3$, so $d_k = 12/3 = 4$.\n\n"
        "## A tiny example\n\nHere is one head with $n = 3$ tokens and $d_k = 2$.\n\n")


def test_a_tuple_of_sizes_states_each_size():
    doc = MAIN.split("## A tiny")[0] + "A reshape gives $(B, n, h, d_k) = (2, 5, 3, 4)$, a transpose " \
        "$(B, h, n, d_k) = (2, 3, 5, 4)$.\n"
    assert flags(doc) == []
    assert {line for line, _ in flags(doc.replace("(2, 3, 5, 4)", "(2, 3, 4, 5)"))} == {5}  # n and d_k swapped


def test_a_section_restating_the_main_examples_sizes_goes_back_to_it():
    doc = MAIN + "## Back\n\nThe heads are $(B, h, n, d_k) = (2, 3, 5, 4)$. The output projection $W^O$ is " \
        "$12 \\times 12$.\n"
    assert flags(doc) == []  # not judged with the tiny example's d_k = 2
    assert (11, "inconsistent") in flags(doc.replace("$12 \\times 12$", "$12 \\times 4$"))


def test_a_formula_in_sizes_not_fixed_still_has_its_arithmetic_judged():
    doc = "The FLOPs are $2 \\cdot B \\cdot h \\cdot n^2 \\cdot d_k = 2 \\cdot 8 \\cdot 12 \\cdot 1024^2 \\cdot 64 = " \
        "12\\,884\\,901\\,888 \\approx 12.9$ GFLOPs.\n"
    assert flags(doc) == []
    planted = doc.replace("12\\,884\\,901\\,888 \\approx 12.9", "6\\,442\\,450\\,944 \\approx 6.4")
    assert flags(planted) == [(1, "wrong")]


def test_a_mask_drawn_as_a_matrix_makes_the_example_causal_in_any_language():
    doc = ("Agora $n = 2$, $d_{model} = 2$ e $h = 1$.\n\n"
           "$$Q = \\begin{bmatrix} 1 & 0 \\\\ 0 & 1 \\end{bmatrix},\\quad K = \\begin{bmatrix} 1 & 1 \\\\ 0 & 2 "
           "\\end{bmatrix},\\quad V = \\begin{bmatrix} 1 & 0 \\\\ 0 & 1 \\end{bmatrix}$$\n\n"
           "Somamos a máscara $M = \\begin{bmatrix} 0 & -\\infty \\\\ 0 & 0 \\end{bmatrix}$ antes do softmax.\n\n"
           "$$\\mathrm{head}_1 \\approx \\begin{bmatrix} 1.0000 & 0.0000 \\\\ 0.3302 & 0.6698 \\end{bmatrix}$$\n")
    assert flags(doc) == []
    assert flags(doc.replace("0.3302 & 0.6698", "0.3502 & 0.6498")) == [(7, "wrong")]


def test_a_refuted_tuple_binds_none_of_its_sizes():
    doc = ("We take $n = 3$, $d_{model} = 4$ and $h = 2$.\n\n"
           "The split gives $(h, n) = (2, 3)$, then $(h, n) = (3, 2)$.\n\n$S_1$ is $3 \\times 3$.\n")
    assert flags(doc) == [(3, "wrong")]  # n = 2 of the refuted tuple starts no other example
    assert flags(doc.replace("(3, 2)", "(2, 3)")) == []


def test_an_equation_in_weights_the_document_never_defined_is_not_refuted():
    doc = ("Let $v_1 = (1, 0)$ and $v_2 = (0, 1)$.\n\n"
           "The output is $\\alpha_1 v_1 + \\alpha_2 v_2 = (0.2 + 0.2; 0.6)$.\n")
    assert flags(doc) == []
    assert statuses(doc, 3) == ["unchecked"]


def test_equalities_inside_a_chain_of_order_relations_bind_like_any_other():
    doc = ("The base model has $d_{model} = 512$, $h = 8$, so $d_k = 64$, and a context of $n = 1024$.\n\n"
           "When the sequence is shorter, e.g. $n = 50 < d_k = 64$, the bound is $\\min(n, d_k) = 50 = n$.\n")
    assert flags(doc) == []
    assert (3, "wrong") in flags(doc.replace("= 50 = n$", "= 64 = n$"))


def test_a_shape_the_document_declares_for_its_own_matrix_lives_in_its_example():
    doc = ("In the base model $h d_v = 8 \\cdot 64 = 512$, so $H$ is $n \\times 512$.\n\n"
           "In the toy setting with $h = 2$ heads of size $d_v = 2$ and $n = 4$, $H$ is $4 \\times 4$.\n")
    assert flags(doc) == []
    same = doc.replace(".\n\nIn the toy setting", ".\nIn the toy setting")
    assert flags(same) != []  # one paragraph giving H two shapes contradicts itself


def test_a_shape_said_in_words_of_another_language():
    doc = ("Agora $n = 2$, $d_{model} = 6$ e $h = 3$.\n\n"
           "A saída $\\mathrm{Concat}\\, W^O$ volta a ter forma $2 \\times 6$.\n")
    assert statuses(doc, 3) == ["correct"]
    assert flags(doc.replace("$2 \\times 6$", "$6 \\times 2$")) == [(3, "wrong")]


def test_a_later_section_may_speak_of_the_example_before_a_small_one_of_its_own():
    doc = ("We take $d_{model} = 1024$, $h = 16$, so $d_k = d_v = 1024/16 = 64$, and $n = 512$.\n\n"
           "## A small example\n\nHere $n = 3 > d_k = 2$, so the scores cannot be full rank.\n\n"
           "## Back to the layer\n\nThe head output uses $V_i = X W_i^V \\in \\mathbb{R}^{n \\times 64}$.\n")
    assert flags(doc) == []  # holds in the example before the small one: not judged against the small one
    assert statuses(doc, 9)[-1] == "unchecked"
    assert flags(doc.replace("n \\times 64", "n \\times 32")) == [(9, "wrong")]  # holds in neither


SMALL = ("We take $d_{model} = 1024$, $h = 16$ and $n = 512$.\n\n## Rank\n\n"
         "A small example with $n = 3$ and $d_k = 2$ shows this. Take\n\n"
         "$$\nQ = \\begin{pmatrix} 1 & 0 \\\\ 0 & 1 \\\\ 1 & 1 \\end{pmatrix}, \\qquad\n"
         "K = \\begin{pmatrix} 1 & 2 \\\\ 0 & 1 \\\\ 1 & 0 \\end{pmatrix}, \\qquad\n"
         "S = Q K^\\top = \\begin{pmatrix} 1 & 0 & 1 \\\\ 2 & 1 & 0 \\\\ 3 & 1 & 1 \\end{pmatrix}.\n$$\n\n"
         "Here $n = 3 > d_k = 2$, so $\\det S = 0$ and $\\operatorname{rank}(S) = 2$.\n\n"
         "$$\nA = \\operatorname{softmax}(S) \\approx \\begin{pmatrix} 0.4223 & 0.1554 & 0.4223 \\\\ "
         "0.6652 & 0.2447 & 0.0900 \\\\ 0.7870 & 0.1065 & 0.1065 \\end{pmatrix}\n$$\n")


def test_a_new_example_keeps_the_values_its_section_gave_before_it():
    findings = check_text(SMALL, isolate=False).findings
    assert [(f.line, f.status) for f in findings if f.status in ("wrong", "inconsistent")] == []
    assert [f.status for f in findings if f.line == 13 and f.kind == "rank"] == ["correct"]  # rank(S) on the values
    assert (13, "wrong") in flags(SMALL.replace("\\operatorname{rank}(S) = 2", "\\operatorname{rank}(S) = 1"))


def test_a_matrix_the_document_gave_a_name_is_a_matrix_inside_functions():
    findings = check_text(SMALL, isolate=False).findings
    assert [f.status for f in findings if f.line == 13 and "det" in f.latex] == ["correct"]
    assert [f.status for f in findings if f.line == 16] == ["correct"]  # softmax(S) of the given S
    assert (16, "wrong") in flags(SMALL.replace("0.6652 & 0.2447", "0.6452 & 0.2647"))


# ----- the section's own example ----------------------------------------------------------------------------------
def test_a_count_in_n_holds_for_the_side_of_the_square_matrix_its_section_gives():
    doc = ("# Notes\n\nWe take $n = 3$ tokens and $d_k = 2$.\n\n## Causal mask\n\n"
           "$$\nS = \\begin{bmatrix} 1 & 0 & 0 & 0 \\\\ 0 & 1 & 0 & 0 \\\\ 0 & 0 & 1 & 0 \\\\ 0 & 0 & 0 & 1 "
           "\\end{bmatrix}\n$$\n\n- Allowed entries: $n(n+1)/2 = 10$ of $16$\n")
    found = [f for f in check_text(doc, isolate=False).findings if f.line == 11]
    assert [f.status for f in found] == ["unchecked"] and "n = 4" in found[0].message
    assert flags(doc.replace("= 10$", "= 11$")) == [(11, "wrong")]  # it holds for no side at all


def test_a_step_given_as_numbers_where_nothing_it_is_computed_from_is_given_is_where_the_document_starts():
    doc = ("Running example: $n = 10$, $d_{model} = 512$, $h = 8$.\n\n## Toy check ($n = 3$, $d_k = 2$)\n\n"
           "Take $n = 3 > d_k = 2$.\n\n## Concatenation ($h = 2$, $n = 3$, $d_v = 2$)\n\n"
           "- $H_1 = \\begin{bmatrix} 1 & 0 \\\\ 0 & 1 \\\\ 1 & 1 \\end{bmatrix}$ (rank 2)\n")
    found = [f for f in check_text(doc, isolate=False).findings if f.line == 9]
    assert [f.status for f in found] == ["given"] and "never given" in found[0].message  # not "assumed"


def test_flop_arithmetic_on_numbers_is_judged_whatever_the_model_fixes():
    doc = "- `QK^T`: `2*B*h*n*n*d_k = 2*4*8*128*128*64 = 67,108,864` FLOPs for the scores.\n"
    assert flags(doc) == []
    found = check_text(doc.replace("67,108,864", "33,554,432"), isolate=False).findings
    wrong = [(f.line, f.status, (f.expected or "").split()[0]) for f in found if f.status == "wrong"]
    assert wrong and set(wrong) == {(1, "wrong", "67108864")}  # (the math reader and the FLOP reader agree)


def test_a_value_claimed_with_approx_in_another_paragraph_is_another_example():
    doc = ("$$p \\approx (0.665, 0.245, 0.090)$$\n\n"
           "For the saturated case, $p \\approx (0.99966, 0.00034, 1.1\\times10^{-7})$ instead.\n")
    assert flags(doc) == [] and statuses(doc, 3) == ["given"]
    same = "$$p \\approx (0.665, 0.245, 0.090)$$ and so $p \\approx (0.665, 0.245, 0.091)$.\n"
    assert statuses(same, 1)[-1] in ("wrong", "unchecked")  # the same scope: compared, or said and not judged


def test_the_documents_own_size_named_inside_a_hypothetical_paragraph_is_its_own():
    doc = ("We use $d_k = 64$ throughout.\n\n"
           "Say we had $d_k = 256$ and no scaling. That is roughly 3000 times worse than with $d_k = 64$.\n")
    assert flags(doc) == []
    assert [f.message[:9] for f in check_text(doc, isolate=False).findings if f.line == 3][-1] == "d_k = 64:"


def test_a_chain_that_goes_on_as_a_list_of_names_ends_at_the_first():
    from mha_symbolic.check.read import chains

    assert [(c.sides, c.ops) for c in chains(r"Q_i = XW_i^Q,\;K_i,\;V_i")] == [(("Q_i", "XW_i^Q"), ("eq",))]
    assert [c.sides for c in chains("d = 1, 2, 3")] == [("d", "1, 2, 3")]  # numbers: a tuple, not names
