"""Sentences about the causal mask's weights, decided on the exact weights of the causal model."""

from __future__ import annotations

import pytest

from mha_symbolic import MultiHeadAttention, check_text
from mha_symbolic.check import masks
from mha_symbolic.check.masks import judge_causal_sentence
from mha_symbolic.check.model import DocumentModel

DOC = """# Causal attention, three tokens

We use n = 3 tokens, d_model = 4 and h = 2 heads.

With the causal mask, the attention weights above the diagonal are 0.

With the causal mask, every weight below the diagonal is 0.

With causal masking, the first token attends only to itself, with weight 0.5.

In the causal model, 3 of the 9 attention weights are masked to zero.

In the causal model, 4 of the 9 attention weights are masked to zero.

The causal mask sets the scores above the diagonal to -inf.

With a causal mask, the weights above the diagonal are masked for all 512 positions.

torch.triu(torch.ones(n, n), diagonal=1) gives the causal mask: 1 above the diagonal.
"""


def test_a_document_on_the_causal_mask():
    found = {f.line: (f.status, f.expected) for f in check_text(DOC, "causal.md").findings if f.line >= 5}
    assert found == {5: ("correct", None), 7: ("wrong", "positive"), 9: ("wrong", "1"), 11: ("correct", None),
                     13: ("wrong", "3")}  # lines 15-19: the scores, a count of positions, the mask itself: no verdict


@pytest.mark.parametrize("sentence, verdict", [
    ("With a causal mask, the attention weights above the diagonal are zero.", "correct"),
    ("Under a causal mask the lower triangular part of the weights is 0.", "wrong"),
    ("A decoder uses a triangular mask: the attention weights above the main diagonal are 0.", "correct"),
    ("With the causal mask the weights below the diagonal are 0.5.", None),  # depends on the inputs: not refuted
    ("The causal mask prevents attending to future tokens.", None),
])
def test_sentences(sentence, verdict):
    got = judge_causal_sentence(DocumentModel(), sentence)
    assert (got and got[0]) == verdict


def test_the_count_is_the_documents_n():
    four = check_text("n = 4 tokens, d_model = 2, h = 1.\n\nWith a causal mask, 6 of the 16 attention weights are "
                      "masked.\n", "four.md").findings
    assert [(f.status, f.expected) for f in four if f.line == 3] == [("correct", None)]


def test_the_verdict_is_the_engines(monkeypatch):
    """Without the mask in the model, the weights above the diagonal are positive: the same sentence is wrong."""
    def unmasked(*args, causal=False, **kw):
        return MultiHeadAttention(*args, **kw)

    sentence = "With the causal mask, the attention weights above the diagonal are 0."
    assert judge_causal_sentence(DocumentModel(), sentence)[0] == "correct"
    monkeypatch.setattr(masks, "MultiHeadAttention", unmasked)
    assert judge_causal_sentence(DocumentModel(), sentence)[:3] == (
        "wrong", "the causal weights above the diagonal are positive, not all 0 (A_1 computed exactly, n = 3)",
        "positive")


# ----- a stated weight matrix against what its step is whatever the inputs ---------------------------------
BASE = "We use n = 3 tokens, d_model = 6 and h = 3 heads.\n\n"


@pytest.mark.parametrize("matrix, status, expected", [
    # row 2 sums to 1.10: the softmax's rows sum to exactly 1 whatever the inputs
    (r"A_1 = \begin{bmatrix} 1.00 & 0 & 0 \\ 0.35 & 0.55 & 0.20 \\ 0.22 & 0.30 & 0.48 \end{bmatrix}", "wrong", "1"),
    # 0.99 and 1.01 are within the rounding of three entries to 2 decimals; with X and the weights never given,
    # nothing computes A_1: the document starts from it (given), as from Q_1 below
    (r"A_1 \approx \begin{bmatrix} 0.33 & 0.33 & 0.33 \\ 0.35 & 0.35 & 0.31 \\ 0.2 & 0.3 & 0.5 \end{bmatrix}",
     "given", None),
    # a query matrix's rows sum to anything: nothing is contradicted; with X and the weights never given, the
    # document starts from it (given)
    (r"Q_1 = \begin{bmatrix} 1 & 0 \\ 0 & 1 \\ 1 & 3 \end{bmatrix}", "given", None),
    # rows written with fewer decimals than others round more: 0.33 x 3 = 0.99, 0.3 x 3 = 0.9 (review)
    (r"A_1 = \begin{bmatrix} 0.5 & 0.25 & 0.25 \\ 0.33 & 0.33 & 0.33 \\ 0.167 & 0.333 & 0.5 \end{bmatrix}",
     "given", None),
    (r"A_1 = \begin{bmatrix} 0.3 & 0.3 & 0.3 \\ 0.25 & 0.5 & 0.25 \\ 0.1 & 0.2 & 0.7 \end{bmatrix}",
     "given", None),
    # exact fractions are not rounded: a row of three halves sums to 3/2
    (r"A_1 = \begin{bmatrix} 1/2 & 1/4 & 1/4 \\ 1/3 & 1/3 & 1/3 \\ 1/2 & 1/2 & 1/2 \end{bmatrix}", "wrong", "1"),
    # "is not": a true statement, nothing to contradict; percentages are not summed
    (r"A_1 \neq \begin{bmatrix} 0.5 & 0.5 & 0.5 \\ 0.5 & 0.5 & 0.5 \\ 0.5 & 0.5 & 0.5 \end{bmatrix}", "assumed", None),
    (r"A_1 = \begin{bmatrix} 50\% & 30\% & 20\% \\ 20\% & 50\% & 30\% \\ 10\% & 20\% & 70\% \end{bmatrix}",
     "given", None),
])
def test_stated_weights_against_input_free_facts(matrix, status, expected):
    finding = [f for f in check_text(BASE + "$$" + matrix + "$$\n", "m.md").findings if f.line == 3]
    assert [(f.status, f.expected) for f in finding] == [(status, expected)]


def test_input_free_facts_come_from_the_steps():
    """The weights' rows sum to 1 and a causal softmax's masked entries are 0, whatever the scores."""
    from sympy import ImmutableMatrix, MatrixSymbol

    from mha_symbolic.check.numbers import _input_free_contradiction
    from mha_symbolic.softmax import explicit_softmax

    S = MatrixSymbol("S", 3, 3).as_explicit()  # the scores, whatever the inputs
    A = explicit_softmax(S, True)
    stated = ImmutableMatrix([[1, 0, 0], ["0.5", "0.4", "0.1"], ["0.2", "0.3", "0.5"]])
    got = _input_free_contradiction(A, stated, "A_1", 1)
    assert got is not None and got[0] == "wrong" and got[1].startswith("entry (2, 3) of A_1 is 0 whatever the inputs")
    fine = ImmutableMatrix([[1, 0, 0], ["0.6", "0.4", 0], ["0.2", "0.3", "0.5"]])
    assert _input_free_contradiction(A, fine, "A_1", 1) is None
    unmasked = explicit_softmax(S)
    assert _input_free_contradiction(unmasked, stated, "A_1", 1) is None  # no mask: (2, 3) may be 0.1


# ----- a worked example of masked self-attention -------------------------------------------------------------
def _worked(setup: str, A: str) -> str:
    return (f"We use n = 3 tokens, d_model = 2 and h = 1 head, {setup}.\n\n"
            "$$X = \\begin{bmatrix} 1 & 0 \\\\ 0 & 1 \\\\ 1 & 1 \\end{bmatrix}$$\n\n"
            "$$W_1^Q = \\begin{bmatrix} 1 & 0 \\\\ 0 & 1 \\end{bmatrix}$$\n\n"
            "$$W_1^K = \\begin{bmatrix} 0 & 1 \\\\ 1 & 0 \\end{bmatrix}$$\n\n"
            "$$W_1^V = \\begin{bmatrix} 1 & 0 \\\\ 0 & 1 \\end{bmatrix}$$\n\n"
            f"$$A_1 = \\begin{{bmatrix}} {A} \\end{{bmatrix}}$$\n\n"
            "$$\\text{head}_1 = \\begin{bmatrix} 1 & 0 \\\\ 0.6698 & 0.3302 \\\\ 0.7517 & 0.7517 \\end{bmatrix}$$\n")


CAUSAL_A = "1 & 0 & 0 \\\\ 0.6698 & 0.3302 & 0 \\\\ 0.2483 & 0.2483 & 0.5035"  # the causal model's A_1


@pytest.mark.parametrize("setup, A, statuses", [
    # a document on the causal mask whose example is masked: its weights and head are the causal model's
    ("with a causal mask so that token i only attends to tokens j <= i", CAUSAL_A, ["correct", "correct"]),
    # the same with one weight mistyped: wrong, against the causal model (expected row 2 = 0.6698, 0.3302)
    ("with a causal mask so that token i only attends to tokens j <= i", CAUSAL_A.replace("0.3302", "0.3320"),
     ["wrong", "correct"]),
    # a document that never speaks of a causal mask: its masked-looking example is wrong
    ("without any mask", CAUSAL_A, ["wrong", "wrong"]),
])
def test_a_worked_causal_example_is_computed_with_the_mask(setup, A, statuses):
    findings = [f for f in check_text(_worked(setup, A), "worked.md").findings if f.line in (11, 13)]
    assert [f.status for f in findings] == statuses
    if "causal" in setup:
        assert all("with the causal mask the document describes" in f.message for f in findings)
        assert findings[0].expected in (None, "[1, 0, 0, 0.669762, ...] (3 x 3)")


# ----- correct sentences a review found reported wrong: none may be -----------------------------------------
H = "We use n = 4 tokens, d_model = 4 and h = 2 heads in a causal (decoder) self-attention layer.\n\n"
REVIEWED = [
 ("c", "In the additive causal mask the lower triangle (including the diagonal) is 0 and the upper "
       "triangle is -inf, so the attention weights for future tokens become 0."),
 ("c", "The mask is 0 on and below the diagonal and -inf above it, so after the softmax the "
       "attention weights above the diagonal are 0."),
 ("c", "In a causal mask the entries on and below the diagonal are 1 and the attention weights above it are 0."),
 ("c", "After the softmax the attention matrix is lower triangular: the weights above the diagonal are exactly 0."),
 ("c", "With a causal mask, 10 of the 16 attention weights are non-zero."),
 ("c", "With a causal mask, 10 of the 16 attention weights are not masked."),
 ("c", "With a causal mask, 10 out of 16 entries are kept and 6 are masked."),
 ("c", "Because of the causal mask, the first token attends only to itself, so its own weight is 100%."),
 ("c", "Because of the causal mask, the first token attends only to itself, so its attention weight "
       "on every later token is 0."),
 ("c", "Under the causal mask, the first token gives weight 1 to itself and weight 0 to the 2 later tokens."),
 ("c", "Row 2 of the lower-triangular causal mask sums to 2, one for each visible token."),
 ("c", "In the causal 0/1 mask, row 3 sums to 3 because the third token sees three positions."),
 ("c", "With causal masking each row of the attention weights still sums to 100%."),
 ("c", "With the causal mask, the attention weights below the diagonal are 0 in this layout."),
 ("c", "In the transposed (key x query) view of the causal attention weights, the weights below the diagonal are 0."),
 ("c", "Before the softmax, the masked weights above the diagonal are set to -1e9, so they become 0 afterwards."),
 ("e", "In the encoder, 0 of the 9 attention weights are masked."),
 ("e", "Here the first token attends to itself with weight 0.5 and to the others with 0.25 each."),
 ("t", "In our example the first token attends to itself with weight 0.5 and to the other two with 0.25 each."),
 ("b", "Without any mask, 0 of the 16 weights are zero."),
]
HEADS = {"c": H, "e": "We use n = 3 tokens, d_model = 4, h = 2. Unlike the decoder, which uses a "
         "causal mask, the encoder attends everywhere.\n\n",
         "t": "We use n = 3 tokens, d_model = 4, h = 2. By the triangle inequality the norms are bounded.\n\n",
         "b": "We use n = 4 tokens, d_model = 4, h = 2. BERT is not autoregressive.\n\n"}


@pytest.mark.parametrize("kind, sentence", REVIEWED)
def test_no_false_alarm_on_reviewed_sentences(kind, sentence):
    findings = [f for f in check_text(HEADS[kind] + sentence + "\n", "review.md").findings if f.line == 3]
    assert all(f.status in ("correct", "given", "unchecked", "assumed") for f in findings), findings


# ----- what a mutation sample of check/masks.py found unchecked (each verdict exact) ----------------------------
W3 = "(A_1 computed exactly, n = 3)"


@pytest.mark.parametrize("sentence, want", [
    ("With the causal mask, the weights over the diagonal are 0.",
     ("correct", f"the causal weights above the diagonal are all exactly 0 {W3}", None, "computed")),
    ("With the causal mask every weight above the diagonal is 0.",
     ("correct", f"the causal weights above the diagonal are all exactly 0 {W3}", None, "computed")),
    ("With the causal mask, the weights below the diagonal are 0%.",
     ("wrong", f"the causal weights below the diagonal are positive, not all 0.00 {W3}", "positive", "computed")),
    ("With the causal mask, the last token only attends to itself.",
     ("wrong", f"the last query attends to 3 keys {W3}", "3 keys", "computed")),
    ("With the causal mask, each row of the attention weights sums to 1.",
     ("correct", f"every row of the causal weights sums to exactly 1 {W3}", None, "computed")),
    ("With the causal mask, row 2 of the attention weights sums to 1.",
     ("correct", f"every row of the causal weights sums to exactly 1 {W3}", None, "computed")),
])
def test_causal_sentence_verdicts_are_exact(sentence, want):
    assert judge_causal_sentence(DocumentModel(), sentence) == want


def test_causal_and_mask_sentences_name_a_bad_size():
    bad = DocumentModel(dims={"n": 0})
    assert judge_causal_sentence(bad, "With the causal mask every weight above the diagonal is 0.")[1] == \
        "not decided: n must be a positive integer, got n=0"
    assert masks.judge_mask_sentence(bad, "The padded keys receive a weight of exactly 0.") == (
        "unchecked", "not decided: n must be a positive integer, got n=0", None, "")


def test_mask_sentence_verdicts_are_exact():
    judge = masks.judge_mask_sentence
    padding = ("correct", "a key with m_b = 0 gets weight 0 in every row: softmax_m(S)_ab = m_b e^{s_ab} / "
               "sum_c m_c e^{s_ac}, computed exactly", None, "computed")
    assert judge(DocumentModel(), "The padded keys receive a weight of exactly 0.") == padding
    additive = judge(DocumentModel(), "With an Additive mask, the padded keys receive a weight of 0.")
    assert additive[1].startswith("a key with M_ab = -oo gets weight 0")  # the kind read case-insensitively
    empty = judge(DocumentModel(), "A fully masked row gets uniform weights.")
    assert empty[0] == "unchecked" and "convention" in empty[1] and "NaN" in empty[1]  # a kernel's choice, not wrong
    assert masks._number("100%") == "1.00" and masks._number("0%") == "0.00"


def test_mask_sentence_finding_has_its_basis():
    doc = ("We use n = 3 tokens, d_model = 4 and h = 2 heads with a causal mask.\n\n"
           "With the causal mask every weight above the diagonal is 0.\n")
    found = [(f.status, f.kind, f.basis) for f in check_text(doc, "c.md", isolate=False).findings if f.line == 3]
    assert found == [("correct", "number", "computed")]
