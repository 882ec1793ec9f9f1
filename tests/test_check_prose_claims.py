"""Claims in words (mha_symbolic/check/prose_claims.py): the softmax axis and ranks, judged on the document's
model; each case beside the case that must not be flagged."""

from __future__ import annotations

import pytest

from mha_symbolic import check_text

ROWS = "Let $X \\in \\mathbb{R}^{n \\times d_{model}}$ with $n = 3$, $d_{model} = 4$, $h = 2$.\n\n"
COLUMNS = "Let $X \\in \\mathbb{R}^{d_{model} \\times n}$ with $n = 3$, $d_{model} = 4$, $h = 2$.\n\n"
SIZES = "Let $n = 3$, $d_{model} = 4$, $h = 2$.\n\n"


def verdicts(doc: str, kind: str = "formula") -> list[tuple[int, str]]:
    kinds = ("formula", "axis") if kind == "formula" else (kind,)  # an axis claim is read in the document's layout
    return [(f.line, f.status) for f in check_text(doc, isolate=False).findings if f.kind in kinds]


def test_the_axis_follows_where_the_tokens_are_or_what_the_document_says():
    assert verdicts(ROWS + "Each row of the attention weights sums to one.\n") == [(3, "correct")]
    assert verdicts(ROWS + "Each column of the attention weights sums to one.\n") == [(3, "wrong")]
    # tokens in columns: the axis follows the document's scores (K^T Q: a query per column), else it is unchecked
    assert verdicts(COLUMNS + "Each row of the attention weights sums to one.\n") == [(3, "unchecked")]
    keys_first = COLUMNS + "The scores are $S = K^\\top Q$ (not $Q^\\top K$): we always write $K^\\top Q$.\n\n"
    assert verdicts(keys_first + "Each row of the attention weights sums to one.\n")[-1] == (5, "wrong")
    assert verdicts(keys_first + "Each column of the attention weights sums to one.\n")[-1] == (5, "correct")
    queries_first = COLUMNS + "The scores are $S = Q^\\top K$.\n\n"
    assert verdicts(queries_first + "Each row of the attention weights sums to one.\n")[-1] == (5, "correct")
    # ... and a document that says the columns sum to one, three times against once, means it
    cols = SIZES + ("Each column of $A$ sums to one.\n\nThe columns of $A$ add up to 1.\n\n"
                    "Each row of $A$ sums to one.\n")
    assert verdicts(cols) == [(3, "correct"), (5, "correct"), (7, "inconsistent")]


def test_code_that_normalises_the_last_axis_puts_queries_in_rows():
    code = "```python\nA = torch.softmax(S, dim=-1)\n```\n\n"
    assert verdicts(SIZES + code + "So every column of $A$ is a probability distribution.\n") == [(7, "wrong")]
    assert verdicts(SIZES + code + "So every row of $A$ is a probability distribution.\n") == [(7, "correct")]


def test_without_a_convention_the_documents_own_claims_decide_or_nothing_is_said():
    both = SIZES + "Each row of $A$ sums to one.\n\nEach column of $A$ sums to one.\n"
    assert verdicts(both) == [(3, "unchecked"), (5, "unchecked")]  # one against one: which is meant is unknown
    assert verdicts(SIZES + "Each row of $A$ sums to one.\n") == [(3, "correct")]  # the usual convention
    assert verdicts(SIZES + "Each column of $A$ sums to one.\n") == [(3, "unchecked")]  # never wrong by convention
    three = SIZES + ("Each row of $A$ sums to one.\n\nThe rows of $A$ add up to 1.\n\n"
                     "Each column of $A$ sums to one.\n")
    assert verdicts(three) == [(3, "correct"), (5, "correct"), (7, "inconsistent")]


def test_negations_conditions_and_other_matrices_are_not_claims():
    assert verdicts(ROWS + "The columns of $A$ do not sum to one.\n") == []
    assert verdicts(ROWS + "Each column of $V$ sums to one.\n") == []
    assert verdicts(ROWS + "If $n = 1$, each column of the attention weights sums to one.\n") == []
    assert verdicts(ROWS + "For instance, each column of the attention weights would sum to one.\n") == []


def test_a_sentence_over_two_lines_is_judged_once_on_its_first_line():
    doc = ROWS + ("The softmax runs along the keys, so every column of $A_1$ is a probability\n"
                  "distribution.\n")
    assert verdicts(doc) == [(3, "wrong")]


def test_the_documents_own_weights_are_summed():
    doc = SIZES + ("$$A = \\begin{bmatrix} 0.5 & 0.5 & 0 \\\\ 0.25 & 0.5 & 0.25 \\\\ 0 & 0.2 & 0.8 "
                   "\\end{bmatrix}$$\n\n")
    assert verdicts(doc + "Each row of $A$ sums to one.\n") == [(5, "correct")]
    assert verdicts(doc + "Each column of $A$ sums to one.\n") == [(5, "wrong")]  # 0.75, 1.2, 1.05


RANKS = (SIZES + "The scores of head 1 are\n"
         "$$S = \\begin{bmatrix} 1 & 2 & 3 \\\\ 2 & 4 & 6 \\\\ 1 & 1 & 1 \\end{bmatrix}$$\n\n")


def test_a_rank_in_words_is_judged_like_a_rank_in_latex():
    assert verdicts(RANKS + "So $S$ has rank 2.\n", "rank") == [(6, "correct")]
    assert verdicts(RANKS + "So $S$ has rank 3.\n", "rank") == [(6, "wrong")]
    assert verdicts(RANKS + "The rank of $S$ is 3.\n", "rank") == [(6, "wrong")]


def test_a_rank_under_a_condition_or_of_no_matrix_is_not_judged():
    assert verdicts(RANKS + "If $n = 1$, $S$ has rank 3.\n", "rank") == []
    assert verdicts(RANKS + "I have rank 2 in the army.\n", "rank") == []


GQA = "A model with $d_{model} = 4096$, $h = 32$ query heads and $g = 8$ key-value heads, $d_k = 128$.\n\n"


def test_a_ratio_to_the_multi_head_cache_in_words():
    claims = {"Its KV cache is 4 times smaller than MHA's.": "correct",
              "Its KV cache is 2 times smaller than MHA's.": "wrong",
              "GQA needs a quarter of the MHA KV cache.": "correct",
              "GQA needs half the size of the MHA KV cache.": "wrong"}
    for claim, status in claims.items():
        assert [f.status for f in check_text(GQA + claim + "\n", isolate=False).findings if f.line == 3] == [status]


def test_a_subject_written_with_its_set_is_the_matrix():
    """`every row of $A \\in \\mathbb{R}^{n \\times n}$ sums to one`: the subject is A (it was not read)."""
    text = ROWS + "So every row of $A \\in \\mathbb{R}^{n \\times n}$ sums to one.\n"
    assert verdicts(text, "axis") == [(3, "correct")]
    assert verdicts(text.replace("row of", "column of"), "axis") == [(3, "wrong")]


WEIGHT_ROWS = ("Sia $n = 2$, $d_{model} = 2$ e $h = 1$, con\n\n"
               "$$X = \\begin{bmatrix} 1 & 0 \\\\ 0 & 1 \\end{bmatrix},\\quad W^Q = \\begin{bmatrix} 1 & 0 \\\\ 0 & 1 "
               "\\end{bmatrix},"
        "\\quad W^K = \\begin{bmatrix} 1 & 0 \\\\ 0 & 1 \\end{bmatrix},\\quad W^V = \\begin{bmatrix} 1 & 0 \\\\ 0 & 1 "
        "\\end{bmatrix}$$\n\n"
        "I pesi $A_1$ (4 decimali) sono:\n\n- riga 1: $(0.6698,\\ 0.3302)$\n- riga 2: $(0.3302,\\ 0.6698)$\n\n"
        "## Maschera causale\n\nCon la maschera causale i pesi diventano:\n\n- riga 1: $(1,\\ 0)$\n"
        "- riga 2: $(0.3302,\\ 0.6698)$\n\n## Di nuovo senza maschera\n\n"
        "Il primo token: riga 1: $(0.6698,\\ 0.3302)$.\n")


def test_a_row_of_the_weights_written_in_prose_is_that_row_of_the_heads_weights():
    findings = check_text(WEIGHT_ROWS, "rows.md").findings
    assert [(f.line, f.status) for f in findings if f.line in (7, 8)] == [(7, "correct"), (8, "correct")]
    flagged = check_text(WEIGHT_ROWS.replace("riga 2: $(0.3302,\\ 0.6698)$", "riga 2: $(0.3502,\\ 0.6498)$", 1),
                         "rows.md").findings
    assert [(f.line, f.status) for f in flagged if f.status == "wrong"] == [(8, "wrong")]


def test_masked_rows_of_a_document_that_speaks_of_the_causal_mask_in_any_language():
    findings = check_text(WEIGHT_ROWS, "rows.md").findings
    assert [(f.line, f.status) for f in findings if f.line in (14, 15)] == [(14, "correct"), (15, "correct")]
    assert "causal mask" in next(f.message for f in findings if f.line == 14)
    # a later section speaking of the unmasked weights again is not judged against the mask
    assert [f.status for f in findings if f.line == 19] == ["unchecked"]
    assert not [f for f in findings if f.status in ("wrong", "inconsistent")]


FULL_RANK = """# Rank

Let $n = 512$ and $d_k = 64$, one head.

- The $512 \\times 512$ matrix $S = QK^\\top$ has rank at most $64$, so it MODAL be full rank.
"""


@pytest.mark.parametrize("modal, status", [("cannot", "correct"), ("can", "wrong")])
def test_whether_a_matrix_can_be_of_full_rank_is_decided_by_its_proven_bound(modal, status):
    """64 < 512: the bound rank <= min(64, d_model) is proven, so "cannot be full rank" holds for every d_model."""
    found = [f for f in check_text(FULL_RANK.replace("MODAL", modal), isolate=False).findings
             if f.line == 5 and f.kind == "rank" and "full rank" in f.message]
    assert [f.status for f in found] == [status]
