"""The checker's judge (mha_symbolic.check): each kind of statement, true and false, decided by the engine.

Fixtures have asymmetric scores (Q K^T is not symmetric), so a softmax over the wrong axis or a swapped
transpose changes the verdict.
"""

from __future__ import annotations

import pytest

from mha_symbolic.check.judge import judge
from mha_symbolic.check.model import DocumentModel, canonical_tex


def _doc() -> DocumentModel:
    """n = 2, d_model = 2, h = 1 with asymmetric scores: Q K^T = [[0, 1], [2, 3]] (X = I, W_Q = [[0, 1], [2, 3]])."""
    d = DocumentModel()
    for name, value in (("n", 2), ("d_model", 2), ("h", 1)):
        d.bind_dim(name, value)
    for tex, m in ((r"X", r"\begin{bmatrix} 1 & 0 \\ 0 & 1 \end{bmatrix}"),
                   (r"W_Q^{1}", r"\begin{bmatrix} 0 & 1 \\ 2 & 3 \end{bmatrix}"),
                   (r"W_K^{1}", r"\begin{bmatrix} 1 & 0 \\ 0 & 1 \end{bmatrix}"),
                   (r"W_V^{1}", r"\begin{bmatrix} 1 & 2 \\ 0 & 1 \end{bmatrix}")):
        assert judge(d, [tex, m], ["eq"], "")[1][0] == "given"
    return d


def status(d: DocumentModel, sides: list[str], ops: list[str]) -> tuple[str, str]:
    got = judge(d, sides, ops, "")
    assert got is not None
    return got[0], got[1][0]


def test_scores_are_asymmetric_and_compared_exactly():
    d = _doc()
    assert status(d, ["Q_1 K_1^T", r"\begin{bmatrix} 0 & 1 \\ 2 & 3 \end{bmatrix}"], ["eq"]) == ("number", "correct")
    # the transpose K_1 Q_1^T is the other matrix
    assert status(d, ["K_1 Q_1^T", r"\begin{bmatrix} 0 & 2 \\ 1 & 3 \end{bmatrix}"], ["eq"])[1] == "correct"
    assert status(d, ["Q_1 K_1^T", r"\begin{bmatrix} 0 & 2 \\ 1 & 3 \end{bmatrix}"], ["eq"]) == ("number", "wrong")


def test_softmax_rows_at_the_stated_precision():
    d = _doc()
    # S' = [[0, 1], [2, 3]] / sqrt(2); each row: softmax(a, a + 0.7071) = (0.3302, 0.6698); over columns
    # the first column would be softmax(0, 1.4142) = (0.1956, 0.8044)
    good = r"\begin{bmatrix} 0.3302 & 0.6698 \\ 0.3302 & 0.6698 \end{bmatrix}"
    assert status(d, ["A_1", good], ["approx"]) == ("number", "correct")
    assert status(d, ["A_1", r"\begin{bmatrix} 0.1956 & 0.1956 \\ 0.8044 & 0.8044 \end{bmatrix}"],
                  ["approx"])[1] == "wrong"
    # a planted error in one entry is caught
    bad = r"\begin{bmatrix} 0.3302 & 0.6698 \\ 0.3402 & 0.6598 \end{bmatrix}"
    assert status(d, ["A_1", bad], ["approx"]) == ("number", "wrong")
    # decimals beyond the stated precision: 0.33 agrees with 0.3302 at two places
    assert status(d, ["A_1", r"\begin{bmatrix} 0.33 & 0.67 \\ 0.33 & 0.67 \end{bmatrix}"], ["approx"])[1] == "correct"


def test_missing_inputs_make_a_value_assumed():
    """A value the model computes from inputs some of which the document gives and others not is assumed; where
    nothing it is computed from is given (no X, no weights), the document starts from it: given."""
    d = DocumentModel()
    for name, value in (("n", 1), ("d_model", 2), ("h", 1)):
        d.bind_dim(name, value)
    assert status(d, [r"\mathrm{head}_1", r"\begin{bmatrix} 1 & 2 \end{bmatrix}"], ["eq"]) == ("number", "given")
    d = DocumentModel()
    for name, value in (("n", 1), ("d_model", 2), ("h", 1)):
        d.bind_dim(name, value)
    assert status(d, ["X", r"\begin{bmatrix} 1 & 0 \end{bmatrix}"], ["eq"]) == ("number", "given")
    assert status(d, [r"\mathrm{head}_1", r"\begin{bmatrix} 1 & 2 \end{bmatrix}"], ["eq"]) == ("number", "assumed")


def test_sizes_bind_once_then_compare_and_ne_is_decided():
    d = DocumentModel()
    assert status(d, ["d_{model}", "6"], ["eq"]) == ("setting", "given")
    assert status(d, ["h", "3"], ["eq"]) == ("setting", "given")
    assert status(d, ["d_k", r"d_{\text{model}}/h", "6/3", "2"], ["eq", "eq", "eq"]) == ("setting", "correct")
    assert status(d, ["d_k", "3"], ["eq"]) == ("setting", "wrong")
    assert status(d, [r"h\, d_k", r"d_{\text{model}}"], ["ne"]) == ("setting", "wrong")
    assert status(d, [r"h", r"d_{\text{model}}"], ["ne"]) == ("setting", "correct")
    # a range on a size the document never fixes is a constraint, not a setting
    assert status(d, ["1", "N", "10^4"], ["le", "le"]) == ("setting", "given")
    assert "n" not in d.known_dims()


def test_shapes_proven_or_refuted():
    d = DocumentModel()
    assert status(d, [r"W_i^Q (W_i^K)^T", r"\mathbb{R}^{d_{model} \times d_{model}}"], ["in"]) == ("shape", "correct")
    assert status(d, [r"Q_i K_i^T", r"\mathbb{R}^{n \times d_k}"], ["in"]) == ("shape", "wrong")


@pytest.mark.parametrize("claim, verdict", [
    (r"\mathrm{rank}(Q_iK_i^T)", "correct"),
    (r"\mathrm{rank}(\mathrm{head}_i)", "correct"),
    (r"\mathrm{rank}\left(\mathrm{softmax}\left(\frac{Q_iK_i^T}{\sqrt{d_k}}\right)\right)", "wrong"),
    (r"\mathrm{rank}(A_i)", "wrong"),
])
def test_rank_bounds_by_proof_or_certified_counterexample(claim, verdict):
    assert status(DocumentModel(), [claim, "d_k"], ["le"]) == ("rank", verdict)


def test_rank_of_the_document_instance():
    d = _doc()
    assert status(d, [r"\mathrm{rank}(Q_1K_1^T)", "2"], ["eq"]) == ("rank", "correct")
    assert status(d, [r"\mathrm{rank}(Q_1K_1^T)", "1"], ["le"]) == ("rank", "wrong")
    assert status(d, [r"\mathrm{rank}(A_1)", "1"], ["ge"]) == ("rank", "correct")
    # A_1 has two equal rows (rank 1), but its entries are exponentials: a ball proves "nonzero", never
    # "zero", so rank(A_1) = 1 is left unchecked rather than guessed
    assert status(d, [r"\mathrm{rank}(A_1)", "1"], ["eq"]) == ("rank", "unchecked")


@pytest.mark.parametrize("rhs, verdict", [
    (r"\mathrm{softmax}\left(\frac{QK^T}{\sqrt{d_k}}\right)V", "correct"),
    (r"\mathrm{softmax}\left(\frac{QK^T}{\sqrt{d_{model}}}\right)V", "wrong"),
    (r"\mathrm{softmax}\left(\frac{QK^T}{d_k}\right)V", "wrong"),
    (r"\mathrm{softmax}\left(\frac{K^TQ}{\sqrt{d_k}}\right)V", "wrong"),
])
def test_attention_formula_against_the_model(rhs, verdict):
    assert status(DocumentModel(), [r"\mathrm{Attention}(Q, K, V)", rhs], ["eq"]) == ("formula", verdict)


def test_head_definition_against_the_model():
    d = DocumentModel()
    assert status(d, [r"\mathrm{head}_i", r"\mathrm{softmax}\left(\frac{Q_iK_i^T}{\sqrt{d_k}}\right)V_i"],
                  ["eq"]) == ("formula", "correct")
    # K_i^T Q_i is d_k x d_k: times V_i (n x d_v) the product is undefined -- inconsistent, naming the sizes
    got = judge(d, [r"\mathrm{head}_i", r"\mathrm{softmax}\left(\frac{K_i^TQ_i}{\sqrt{d_k}}\right)V_i"], ["eq"], "")
    assert got is not None and got[0] == "shape" and got[1][0] == "inconsistent"
    assert "inner sizes d_k and n differ" in got[1][1] or "inner sizes d_model/h and n differ" in got[1][1]
    # with n = d_k the product exists, and then it is the wrong formula
    square = DocumentModel()
    square.bind_dim("n", 2), square.bind_dim("d_model", 4), square.bind_dim("h", 2)
    assert status(square, [r"\mathrm{head}_i", r"\mathrm{softmax}\left(\frac{K_i^TQ_i}{\sqrt{d_k}}\right)V_i"],
                  ["eq"]) == ("formula", "wrong")
    assert status(d, ["Q", "X"], ["eq"])[1] == "given"


def test_notation_rewrites():
    assert canonical_tex(r"Q^{(2)} K^{(2)\top}") == "Q_{2} K_{2}^{T}"
    assert canonical_tex(r"\mathbf{W}_o") == "W_{O}"
    assert canonical_tex(r"H_0 W^Q_0", zero_based=True) == r"\mathrm{head}_{1} W_{Q}^{1}"


def test_per_head_names_are_read_whatever_the_order_of_their_scripts():
    """One reader of a name's sub- and superscripts: a transposition written inside the superscript after the head
    (it used to turn ``W_K^{(i)\top}`` into ``W_K_{i}^{T}``, a double subscript, and the product of a rank claim
    was misread), a head above with an entry below, and every head of a 0-based document counted up (inside a
    fraction too: ``Q_1`` of ``\frac{Q_1K_1^T}{...}`` was left as head 1)."""
    assert canonical_tex(r"W_Q^{(i)} W_K^{(i)\top}") == r"W_{Q}^{i} (W_{K}^{i})^{T}"
    assert canonical_tex(r"W_i^{(k)}") == r"W_{K}^{i}"
    assert canonical_tex(r"S^{(1)}_{31}") == r"(S_{1})_{31}"
    assert canonical_tex(r"\frac{Q_1K_1^T}{2}", zero_based=True) == r"\frac{Q_{2}K_{2}^T}{2}"
    # not per-head names of the model (W^O_1 is a block of the output projection, a name of its own: W_{O1})
    assert canonical_tex(r"W^O_1 + H_{kv} + W_1", zero_based=True) == r"W_{O1} + H_{kv} + W_1"
    d = DocumentModel()
    d.bind_dim("n", 3), d.bind_dim("d_model", 4), d.bind_dim("h", 2)
    assert status(d, [r"Q_1 K_1^\top", r"X \big(W_Q^{(1)} W_K^{(1)\top}\big) X^\top"], ["eq"]) == ("formula", "correct")
