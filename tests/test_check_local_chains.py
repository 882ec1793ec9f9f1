"""Local computations, judged from what they write: every link of a relation chain is a statement, and a product of
shapes written in tuples inside a plain sentence is a shape computation.

Every link of a relation chain is a statement.  A rank chain ``rank(E) <= min(n, d_k) = 100`` states the rank
bound and also that min(n, d_k) is 100: the second link is judged at the document's sizes by itself, so a wrong
evaluation of the bound is flagged even where the rank bound (against the link next to the rank) is proven.  A
link holding a size the document has not fixed is never used to bind it."""

from __future__ import annotations

import pytest

from mha_symbolic import check_text

SETTING = "Let $n = {n}$, $d_{{model}} = 256$ and $h = 8$, so $d_k = 32$.\n\n"


def verdicts(text: str, line: int) -> list[str]:
    return [f.status for f in check_text(text, isolate=False).findings if f.line == line]


@pytest.mark.parametrize("n, chain, status", [
    (100, r"\min(n, d_k) = 100", "wrong"),      # min(100, 32) = 32
    (100, r"\min(n, d_k) = 32", "correct"),
    (20, r"\min(20, 32) = 32", "wrong"),        # min(20, 32) = 20
    (20, r"\min(20, 32) = 20 < 32", "correct"),
    (20, r"\min(n, d_k) = 20 < 16", "wrong"),   # the last link: 20 < 16 fails
    (20, r"d_k = 32", "correct"),
])
def test_every_link_of_a_rank_chain_is_judged(n, chain, status):
    doc = SETTING.format(n=n) + rf"Then $\mathrm{{rank}}(Q_i K_i^\top) \le {chain}$." + "\n"
    assert verdicts(doc, 3) == [status]


def test_a_link_with_an_unfixed_size_binds_nothing():
    doc = "Let $h = 8$.\n\n" + r"Then $\mathrm{rank}(Q_i K_i^\top) \le d_k = 64$." + "\n\n$d_k = 32$\n"
    assert "wrong" not in verdicts(doc, 3)
    assert verdicts(doc, 5) == ["given"]  # d_k was not bound to 64 by the rank chain


@pytest.mark.parametrize("sentence, status", [
    ("the score matrix Q_i K_i^T is (10, 64)(64, 10) = (10, 64)", "wrong"),
    ("the score matrix Q_i K_i^T is (10, 64)(64, 10) = (10, 10)", "correct"),
    ("so (10, 64) x (64, 10) = (10, 64) for each head", "wrong"),
    ("so (10, 64) @ (64, 10) = (10, 10) for each head", "correct"),
    # inner sizes differ: undefined in the row convention, which this document does not state (said, not flagged)
    ("then (10, 64)(46, 10) = (10, 10) for each head", "unchecked"),
])
def test_a_product_of_shape_tuples_in_a_sentence_is_judged(sentence, status):
    doc = "the setting is d_model = 512 and h = 8 heads and n = 10 tokens\n\n" + sentence + "\n"
    assert verdicts(doc, 3) == [status]


@pytest.mark.parametrize("sentence", [
    "the weights (0.5, 0.5)(2, 2) = (1, 1) are averaged",  # values, not sizes
    "the point (1, 2) moves to (3, 4) = the next one",
])
def test_tuples_of_values_are_no_shapes(sentence):
    doc = "the setting is d_model = 512 and h = 8 heads and n = 10 tokens\n\n" + sentence + "\n"
    assert not {"wrong", "inconsistent"} & set(verdicts(doc, 3))


@pytest.mark.parametrize("weights, status", [
    (r"(0.629,\ 0.231,\ 0.140)", "correct"),
    (r"(0.659,\ 0.224,\ 0.117)", "wrong"),   # the softmax of (2, 1, 0.1), not of (2, 1, 0.5)
])
def test_softmax_of_a_vector_the_document_named(weights, status):
    doc = r"Take the scores $z = (2,\ 1,\ 0.5)$." + "\n\n" + rf"Then $\mathrm{{softmax}}(z) \approx {weights}$." + "\n"
    assert verdicts(doc, 3) == [status]


def test_a_named_vector_elsewhere_stays_a_name():
    doc = (r"Take $q = (1, 2)$ and $k = (3, 1)$." + "\n\n" + r"Then $q \cdot k = 5$ and $q^\top k = 5$." + "\n\n"
           r"Shift: $\mathrm{softmax}(q + 5) = \mathrm{softmax}(q)$." + "\n")
    assert verdicts(doc, 3) == ["correct", "correct"]
    assert "wrong" not in verdicts(doc, 5)


@pytest.mark.parametrize("value, status", [("5", "correct"), ("6", "wrong")])
def test_a_key_vector_named_k_is_a_vector_not_an_index_range(value, status):
    doc = f"Take $k = (3, 1)$ and $q = (1, 2)$.\n\nThen $q \\cdot k = {value}$.\n\nFor $i = 1, 2, 3$ the rows.\n"
    assert verdicts(doc, 3) == [status]
    assert not {"wrong", "inconsistent", "correct"} & set(verdicts(doc, 5))  # i = 1, 2, 3: an index range


@pytest.mark.parametrize("sentence, status", [
    ("the raw scores spread with a standard deviation of sqrt(128) ≈ 11.31, too much", "correct"),
    ("the raw scores spread with a standard deviation of sqrt(128) ≈ 12.81, too much", "wrong"),
    ("the ratio of the two weights is e^3.18 ≈ 24.0 after scaling", "correct"),
    ("the ratio of the two weights is e^3.18 ≈ 12.1 after scaling", "wrong"),
    ("before scaling it is e^20 ≈ 485 million", "correct"),   # the scale word belongs to the number
    ("a uniform row over two keys has entropy ln(2) ≈ 0.6931 nats", "correct"),
    ("and exp(-3) ≈ 0.05 is small", "correct"),
])
def test_arithmetic_of_written_numbers_through_a_function(sentence, status):
    doc = "# Scaling\n\n" + sentence + ".\n"
    assert [s for s in verdicts(doc, 3) if s != "unchecked"] == [status]  # (a moment whose d_k is never fixed)


def test_a_logarithm_of_unstated_base_is_not_refuted():
    doc = "# Entropy\n\nThe entropy of a fair coin is log 2 ≈ 0.301 in these units.\n"
    assert "wrong" not in verdicts(doc, 3)  # log base 10 of 2: the base is the document's to say


CODE = """# Sizes

```python
d_model, h = 768, 12
d_k = d_model // h                 # = 64
w_numel = d_model * d_model        # {value}
kv = 2 * 32 * d_model * 2          # 2 for K and V
x = 3                              # 3
```
"""


@pytest.mark.parametrize("value, status", [
    ("= 589824", "correct"), ("= 524288", "wrong"), ("-> 589,824 weights", "correct"), ("589824", "correct"),
    ("≈ 5.9e5", "correct"), ("= 4 d^2 / 4", None),  # a formula in the comment, not a number: not this reader's
])
def test_a_comment_stating_the_value_its_line_assigns(value, status):
    doc = CODE.format(value=value)
    assert verdicts(doc, 5) == ["correct"]
    assert verdicts(doc, 6) == ([status] if status else [])
    assert verdicts(doc, 7) == []  # "2 for K and V": a comment about a factor, not the value
    assert verdicts(doc, 8) == []  # a literal restated: nothing computed


@pytest.mark.parametrize("value, status", [(r"$\approx 0.6931$", "correct"), (r"$\approx 0.7$", "correct"),
                                           (r"$\approx 0.593$", "wrong"), ("= 0.6931", "correct")])
def test_a_cell_that_begins_with_a_relation_continues_the_cell_before_it(value, status):
    doc = f"# Constants\n\n| expression | value |\n|---|---|\n| $\\ln 2$ | {value} |\n| $n$ | $\\approx 3$ |\n"
    assert verdicts(doc, 5) == [status]
    assert verdicts(doc, 6) == []  # a name: not arithmetic on written numbers


@pytest.mark.parametrize("output, status", [("(2.6, 0.4)", "correct"), ("(2.6, 0.5)", "wrong")])
def test_a_weighted_sum_of_value_tuples(output, status):
    doc = f"# Output\n\nSo $o = 0.2 \\cdot (1, 2) + 0.8 \\times (3, 0) = {output}$, and $\\min(1, 2) = 1$.\n"
    assert sorted(verdicts(doc, 3)) == sorted([status, "correct"])  # min's arguments stay arguments


@pytest.mark.parametrize("row, status", [("[0.2689 0.7311]", "correct"), ("[0.2689 0.7000]", "wrong")])
def test_matlab_indexing_of_a_matrix_the_document_gave(row, status):
    doc = ("# Octave\n\n```\nP = [0.7311 0.2689; 0.2689 0.7311];\n```\n\n"
           f"So P(2,:) = {row} and P(1,2) = 0.2689, while f(1, 2) = 3 is a call.\n")
    got = verdicts(doc, 7)
    assert sorted(got) == sorted([status, "correct"])  # the row, and the entry (1, 2); f(1, 2) is not an entry


# ----- guards: what these readers must not flag (each was a false alarm on development data once read) -----------
def test_a_restated_size_in_a_rank_chain_is_not_a_computation():
    doc = ("Let $d_{model} = 8$ and $h = 2$.\n\n"
           r"For a toy head of its own, $\mathrm{rank}(Q K^\top) \le d_k = 2$." + "\n")
    assert "wrong" not in verdicts(doc, 3)  # d_k = 2 restates a size (the model's d_k is 4): the setting's to judge


def test_a_size_of_another_section_does_not_judge_a_link():
    doc = ("# Toy\n\nLet $n = 4$, $d_{model} = 768$ and $h = 12$.\n\n# Long inputs\n\n"
           r"For long inputs, $\mathrm{rank}(S) \le \min(n, d_k) = 64$." + "\n")
    assert "wrong" not in verdicts(doc, 7)  # n = 4 is the toy section's: this section may speak of another example


def test_an_equation_in_functions_nobody_defined_is_not_refuted():
    doc = (r"Take $s = (1, 2, 3)$ and $a = \mathrm{softmax}(s) \approx (0.090, 0.245, 0.665)$." + "\n\n"
           r"The perplexity is $\mathrm{PP}(a) = e^{H(a)}$." + "\n")
    assert "correct" in verdicts(doc, 1)  # the softmax of the named s, computed
    assert "wrong" not in verdicts(doc, 3)


@pytest.mark.parametrize("stated, flagged", [("24.1", False), ("12.1", True)])
def test_a_rounded_operand_computed_on_with_more_places(stated, flagged):
    doc = f"# Gap\n\nSo 36/sqrt(128) ≈ 3.18, e^3.18 ≈ {stated} here.\n"
    assert ("wrong" in verdicts(doc, 3)) is flagged


@pytest.mark.parametrize("text, status", [
    ("The scores are (2, 8, 10, 64) @ (2, 8, 64, 10) -> (2, 8, 10, 10) per batch.", "correct"),
    ("The scores are (2, 8, 10, 64) @ (2, 8, 64, 10) = (2, 8, 10, 64) per batch.", "wrong"),
    (r"$(2, 12, 128, 64) \times (2, 12, 64, 128) = (2, 12, 128, 128)$", "correct"),
    ("Broadcast: (2, 10, 64) × (64, 512) → (2, 10, 512).", "correct"),
    ("Then (2, 8, 10, 64) @ (2, 8, 46, 10) -> (2, 8, 10, 10) fails.", "wrong"),  # inner sizes differ
])
def test_a_batched_product_of_shapes_written_anywhere(text, status):
    assert verdicts("# Shapes\n\n" + text + "\n", 3) == [status]


@pytest.mark.parametrize("result, status", [("(2, 12, 128, 128)", "correct"), ("(2, 12, 128, 64)", "wrong")])
def test_a_shape_comment_that_names_its_factors_first(result, status):
    doc = f"# Code\n\n```python\n# S = Q @ K^T : (2, 12, 128, 64) @ (2, 12, 64, 128) -> {result}\n```\n"
    assert verdicts(doc, 4) == [status]


def test_a_cell_after_a_bare_number_is_a_value_of_its_own():
    doc = "# Std\n\n| d_k | Var(q·k) | std(q·k) |\n|---:|---:|---:|\n| 512 | 512 | ≈ 22.6 |\n| 16 | 16 | = 4 |\n"
    assert not {"wrong", "inconsistent"} & set(verdicts(doc, 5) + verdicts(doc, 6))


def test_a_number_under_a_root_starts_no_chain_of_amounts():
    doc = "# Scaling\n\nScaled by 1/√64 = 1/8, the variance is one.\n"
    assert "wrong" not in verdicts(doc, 3)


@pytest.mark.parametrize("stated, status", [("1.04", "unchecked"), ("2.04", "wrong")])
def test_b_after_a_count_may_be_a_billion(stated, status):
    doc = f"# Savings\n\n- over 32 layers: 1,040,187,392 ≈ {stated} B parameters\n"
    assert verdicts(doc, 3) == [status]


@pytest.mark.parametrize("row, status", [(r"(0.3482,\ 0.5741,\ 0.0777)", "correct"),
                                         (r"(0.3182,\ 0.6041,\ 0.0777)", "wrong")])
def test_the_row_of_a_matrix_in_matrix_notation(row, status):
    doc = (r"$$S = \begin{pmatrix} 0.5 & 0.5 & 1 \\ 1 & 1.5 & -0.5 \end{pmatrix}, \quad A = \mathrm{softmax}(S).$$"
           + "\n\n" + rf"$$A_{{2\cdot}} \approx {row}.$$" + "\n")
    assert verdicts(doc, 3) == [status]


def test_a_row_of_a_section_that_gives_no_matrix_of_its_own_is_not_computed():
    doc = ("# Exercise 1\n\n" + r"$$S = \begin{pmatrix} 1 & 0 \\ 0 & 1 \end{pmatrix}, \quad A = \mathrm{softmax}(S).$$"
           + "\n\n# Exercise 2\n\n" + r"$$S = \begin{pmatrix} 5 & \cdot \\ \ln 3 & 0 \end{pmatrix}$$ (masked)." + "\n\n"
           + r"So $A_{1\cdot} = (1, 0)$ and $A_{2\cdot} = (3/4, 1/4)$." + "\n")
    assert "wrong" not in verdicts(doc, 9)  # S of exercise 2 is not read: exercise 1's A is another example's


# ----- the plain-text runs these readers start from (each case kills a mutant mutmut left alive in plain.py) ------
@pytest.mark.parametrize("sentence, runs", [
    ("as the bound (rank(QKᵀ) ≤ min(3, 2) = 2) predicts", [r"\mathrm{rank}(QK^T) \le \min(3, 2) = 2"]),
    ("so ([3, 1, 3] = [1, 0, 2] + [2, 1, 1], as said) holds",
     [r"\begin{bmatrix}3 & 1 & 3\end{bmatrix} = \begin{bmatrix}1 & 0 & 2\end{bmatrix} + "
      r"\begin{bmatrix}2 & 1 & 1\end{bmatrix}"]),
    ("so e^22.3 ≈ 5 billion here", [r"e^{22.3} \approx 5 \times 10^{9}"]),  # a one-digit number keeps its scale
    ("row 2: (e^0.5, e²)/(e^0.5 + e²) = (0.3775, 0.6225)", [r"(e^{0.5}, e^{2})/(e^{0.5} + e^{2}) = (0.3775, 0.6225)"]),
])
def test_the_formula_runs_of_a_sentence(sentence, runs):
    from mha_symbolic.check.plain import formula_runs

    assert [r.strip() for r in formula_runs(sentence)] == runs
