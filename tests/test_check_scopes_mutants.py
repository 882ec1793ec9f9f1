"""Tests written from a hand mutation run of mha_symbolic/check/{balls,scopes}.py and the scope helpers of
pipeline.py and model.py: each kills a mutant that survived tests/test_check_scopes.py,
tests/test_check_notations.py, tests/test_corpus_clean.py and the doctests.  Each has a correct case and a
wrong case, asserting exact statuses."""

from __future__ import annotations

from mha_symbolic import check_text


def statuses(text: str) -> list[tuple[int, str]]:
    return [(f.line, f.status) for f in check_text(text, isolate=False).findings]


# ----- balls.py ----------------------------------------------------------------------------------------------------
def test_two_place_decimals_are_exact():  # kills MIN_PLACES = 2
    assert statuses("$0.12 + 0.13 = 0.25$\n") == [(1, "correct")]
    assert statuses("$0.12 + 0.13 = 0.26$\n") == [(1, "wrong")]  # 0.12 and 0.13 are values chosen, not rounded


def test_three_place_decimals_are_intervals():  # kills MIN_PLACES = 4
    assert statuses("$1.414^2 = 2$\n") == [(1, "correct")]  # 1.414 stands for [1.4135, 1.4145]
    assert statuses("$0.333 + 0.333 + 0.333 = 1$\n") == [(1, "correct")]
    assert statuses("$1.414^2 = 2.01$\n") == [(1, "wrong")]


def test_the_mantissa_of_scientific_notation_is_exact():  # kills dropping the scientific-notation lookahead
    assert statuses("$1.234 \\times 10^{3} = 1234$\n") == [(1, "correct")]
    assert statuses("$1.234 \\times 10^{3} = 1234.4$\n") == [(1, "wrong")]
    assert statuses("$1.234e3 = 1234.4$\n") == [(1, "wrong")]


# ----- scopes.py ---------------------------------------------------------------------------------------------------
def test_items_numbered_with_a_parenthesis_are_scopes():  # kills _numbered without "3) "
    from mha_symbolic.check.scopes import paragraphs

    assert paragraphs("1) a\n2) b\n") == {1: (1, 1), 2: (1, 2)}
    doc = "1) At $n = 1024$ the scores hold $1024^2$ entries.\n2) At $n = 512$ they hold $512^2 = 262144$.\n"
    assert statuses(doc) == [(1, "given"), (2, "given"), (2, "correct")]
    assert statuses(doc.replace("262144", "262145")) == [(1, "given"), (2, "given"), (2, "wrong")]


EXERCISE = ("**Exercise.** For $d_{model} = 512$ and $h = 8$ give $d_k$.\n\n"
            "$d_k = 512/8 = 64$. What if $d_{model}$ were 1024 and $h$ were 16? "
            "Then $W_Q^{(i)} \\in \\mathbb{R}^{1024 \\times 64}$.\n")


def test_a_claim_that_holds_only_with_all_the_stated_sizes_together_is_not_judged():
    # kills other_configurations without the all-together configuration, and with a budget of one size
    assert statuses(EXERCISE) == [(1, "given"), (1, "given"), (3, "correct"), (3, "unchecked")]
    assert statuses(EXERCISE.replace("1024 \\times 64", "1024 \\times 48")) == \
        [(1, "given"), (1, "given"), (3, "correct"), (3, "inconsistent")]


STATED_DK = "We use $d_k = 64$, $d_{model} = 512$ and $h = 8$.\n\n"
SETS = [(1, "given"), (1, "given"), (1, "given")]


def test_another_head_count_re_derives_a_stated_head_width():  # kills with_sizes keeping d_k
    doc = STATED_DK + "What if $h$ were 16? Then $W_Q^{(i)} \\in \\mathbb{R}^{512 \\times 32}$.\n"
    assert statuses(doc) == SETS + [(3, "unchecked")]
    assert statuses(doc.replace("512 \\times 32", "512 \\times 48")) == SETS + [(3, "inconsistent")]


def test_another_model_width_re_derives_a_stated_head_width():  # kills with_sizes re-deriving d_k for h only
    doc = STATED_DK + "What if $d_{model}$ were 1024? Then $W_Q^{(i)} \\in \\mathbb{R}^{1024 \\times 128}$.\n"
    assert statuses(doc) == SETS + [(3, "unchecked")]
    assert statuses(doc.replace("1024 \\times 128", "1024 \\times 96")) == SETS + [(3, "inconsistent")]


def test_another_configuration_does_not_leak_into_the_documents_model():  # kills with_sizes sharing dims
    doc = ("**Exercise.** For $d_{model} = 512$ and $h = 8$ give $d_k$.\n\n"
           "$d_k = 512/8 = 64$. What if $h$ were 16? Then $W_Q^{(i)} \\in \\mathbb{R}^{512 \\times 32}$.\n\n"
           "We take $n = 4$ tokens. Then $W_Q^{(i)} \\in \\mathbb{R}^{512 \\times 64}$.\n")
    head = [(1, "given"), (1, "given"), (3, "correct"), (3, "unchecked"), (5, "given")]
    assert statuses(doc) == head + [(5, "correct")]
    assert statuses(doc.replace("512 \\times 64", "512 \\times 32")) == head + [(5, "inconsistent")]


# ----- pipeline._rows_given ----------------------------------------------------------------------------------------
X34 = "$X = \\begin{pmatrix} 1 & 0 & 0 & 0 \\\\ 0 & 1 & 0 & 0 \\\\ 0 & 0 & 1 & 0 \\end{pmatrix}$"
KQ = "K1^T Q1 = [2 4 2; 4 8 10; 4 8 8]."


def test_x_given_with_n_rows_says_tokens_are_rows():  # kills _rows_given always False
    doc = f"We use n = 3, d_model = 4, h = 2.\n\n{X34}\n\n{KQ}\n"
    assert statuses(doc) == [(1, "given")] * 3 + [(3, "given"), (5, "inconsistent")]
    # without X the same product is not judged (the existing test's case)
    assert statuses(f"We use n = 3, d_model = 4, h = 2.\n\n{KQ}\n") == [(1, "given")] * 3 + [(3, "unchecked")]


def test_x_given_without_n_stated_does_not_say_tokens_are_rows():  # kills _rows_given without 'n in dims'
    doc = f"We use d_model = 4, h = 2.\n\n{X34}\n\n{KQ}\n"
    assert statuses(doc) == [(1, "given")] * 2 + [(3, "given"), (5, "unchecked")]
    assert statuses(doc.replace("d_model = 4,", "n = 3, d_model = 4,")) == \
        [(1, "given")] * 3 + [(3, "given"), (5, "inconsistent")]


# ----- pipeline._equal_steps ---------------------------------------------------------------------------------------
WEIGHTS = ("We use $n = 3$, $d_{model} = 4$, $h = 2$.\n\n"
           "$W_Q^{(1)} = \\begin{pmatrix} 1 & 0 \\\\ 0 & 1 \\\\ 1 & 1 \\\\ 0 & 0 \\end{pmatrix}$ and "
           "$W_K^{(1)} = \\begin{pmatrix} 1 & 2 \\\\ 0 & 1 \\\\ 1 & 1 \\\\ 0 & 0 \\end{pmatrix}$.\n\nSo $Q_1 = K_1$.\n")


def test_steps_said_equal_are_judged_when_the_weights_are_given():  # kills _equal_steps without its guard
    head = [(1, "given")] * 3 + [(3, "given"), (3, "given")]
    assert statuses(WEIGHTS) == head + [(5, "wrong")]  # the given weights differ: Q_1 = K_1 is wrong
    without = "We use $n = 3$, $d_{model} = 4$, $h = 2$.\n\nSo $Q_1 = K_1$.\n"
    assert statuses(without) == [(1, "given")] * 3 + [(3, "given")]  # weights never given: the document's choice


# ----- model.scope_of, model.restart -------------------------------------------------------------------------------
def test_a_head_width_belongs_to_the_paragraph_that_binds_n():  # kills scope_of without n and X as sources
    doc = "We use $d_{model} = 512$ and $h = 8$.\n\nWith $n = 4$ tokens, $d_k = 512/8 = 64$.\n"
    head = [(1, "given"), (1, "given"), (3, "given")]
    assert statuses(doc) == head + [(3, "correct")]
    assert statuses(doc.replace("512/8 = 64", "256/8 = 32")) == head + [(3, "inconsistent")]  # not another
    # example: its own arithmetic holds, on a width the first paragraph does not state


def test_another_example_forgets_the_given_matrices():  # kills restart keeping values
    x = "$X = \\begin{pmatrix} 1 & 0 & 0 & 0 \\\\ 0 & 1 & 0 & 0 \\\\ 0 & 0 & 1 & 0 \\end{pmatrix}$"
    doc = (f"We use $n = 3$, $d_{{model}} = 4$, $h = 2$ and {x}.\n\n"
           "Now take $n = 5$ tokens: $X \\in \\mathbb{R}^{5 \\times 4}$.\n")
    head = [(1, "given")] * 4 + [(3, "given")]
    assert statuses(doc) == head + [(3, "given")]  # X of the new example is declared here, not the old 3 x 4
