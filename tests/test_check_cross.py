"""The document checker and the claims registry on cross-attention and masks: every verdict comes from a
MultiHeadAttention with n_kv keys/values (and the mask), so changing the model changes it."""

from __future__ import annotations

import pytest

from mha_symbolic import MultiHeadAttention, check_text
from mha_symbolic.check.cross import document_variant, judge_flops
from mha_symbolic.check.masks import judge_mask_sentence
from mha_symbolic.check.model import DocumentModel
from mha_symbolic.claims import claim

CROSS = "In encoder-decoder attention the queries come from the decoder.\n\n"


def _doc(cross: bool = True, **sizes: int) -> DocumentModel:
    doc = DocumentModel()
    doc.cross = cross
    for name, value in sizes.items():
        doc.bind_dim(name, value)
    return doc


def _status(text: str) -> dict[int, str]:
    order = ("wrong", "inconsistent", "assumed", "correct", "given", "unchecked")
    out: dict[int, str] = {}
    for f in check_text(text).findings:
        if f.line not in out or order.index(f.status) < order.index(out[f.line]):
            out[f.line] = f.status
    return out


def test_the_documents_model_is_cross_attention_with_its_sizes():
    M = _doc(n=3, n_kv=5, d_model=8, h=2).model()
    assert M.cross and M.n_kv == 5 and M.steps["S_1"].shape == (3, 5) and M.steps["K_1"].shape == (5, 4)
    assert not _doc(cross=False, n=3, d_model=8, h=2).model().cross
    # n_kv in a document that is not about cross-attention keeps its grouped-query reading (key/value heads)
    assert _doc(cross=False, n_kv=2, d_model=8, h=4).model().kv_heads == 2
    assert document_variant(CROSS) == (True, None)
    assert document_variant("We use n_kv_heads = 2 key/value heads (GQA).") == (False, None)


@pytest.mark.parametrize("n_kv, verdict", [(5, "correct"), (4, "wrong")])
def test_changing_n_kv_changes_the_shape_of_the_scores(n_kv, verdict):
    text = CROSS + f"$$n_q = 3$$\n\n$$n_{{kv}} = {n_kv}$$\n\n$$d_{{model}} = 8$$\n\n$$h = 2$$\n\n" \
        "$$Q_1 K_1^\\top \\in \\mathbb{R}^{3 \\times 5}$$\n"
    assert _status(text)[11] == verdict


def test_non_square_documents_keys_come_from_Y_and_queries_from_X():
    text = CROSS + "$$n_q = 2$$\n\n$$n_{kv} = 3$$\n\n$$d_{model} = 4$$\n\n$$h = 2$$\n\n$$K_i = Y W_i^K$$\n\n" \
        "$$K_i = X W_i^K$$\n\n$$Q_i = Y W_i^Q$$\n\n$$\\mathrm{MultiHead}(X, Y) \\in \\mathbb{R}^{2 \\times 4}$$\n\n" \
        "$$V_1 \\in \\mathbb{R}^{2 \\times 2}$$\n"
    s = _status(text)
    assert (s[11], s[13], s[15], s[17], s[19]) == ("correct", "wrong", "wrong", "correct", "wrong")
    # the same statements in a self-attention document (no cross-attention words): K_i = X W_i^K is right
    plain = "Self-attention.\n\n$$n = 2$$\n\n$$d_{model} = 4$$\n\n$$h = 2$$\n\n$$K_i = X W_i^K$$\n"
    assert _status(plain)[9] == "correct"


def test_rank_of_scores_uses_n_kv_and_is_refuted_with_a_certified_witness():
    text = CROSS + "$$n_q = 4$$\n\n$$n_{kv} = 2$$\n\n$$d_{model} = 8$$\n\n$$h = 2$$\n\n" \
        "$$\\mathrm{rank}(Q_1 K_1^\\top) \\le \\min(n_q, n_{kv}, d_k) = 2$$\n\n" \
        "$$\\mathrm{rank}(Q_1 K_1^\\top) \\le 1$$\n"
    s = _status(text)
    assert s[11] == "correct" and s[13] == "wrong"
    text5 = text.replace("n_{kv} = 2$$", "n_{kv} = 5$$").replace("d_k) = 2$$", "d_k) = 4$$")
    assert _status(text5)[11] == "correct"


@pytest.mark.parametrize("n_kv, flops", [(5, 120), (2, 48)])
def test_flops_of_the_scores_follow_n_kv(n_kv, flops):
    doc = _doc(n=3, n_kv=n_kv, d_model=8, h=2)
    assert judge_flops(doc, f"The scores of one head take {flops} FLOPs.")[0] == "correct"
    got = judge_flops(doc, f"The scores of one head take {flops + 8} FLOPs.")
    assert got[0] == "wrong" and got[2] == str(flops)


def test_mask_sentences_are_decided_by_the_masked_softmax():
    doc = _doc(n=2, n_kv=3, d_model=4, h=2)
    doc.mask = "key_padding"
    assert judge_mask_sentence(doc, "The padded keys get weight 0.")[0] == "correct"
    assert judge_mask_sentence(doc, "The padded keys get weight 0.25.")[:3][0::2] == ("wrong", "0")
    assert judge_mask_sentence(doc, "Each row of the masked weights sums to 1.")[0] == "correct"
    assert judge_mask_sentence(doc, "Each row of the masked weights sums to 2.")[0] == "wrong"
    assert judge_mask_sentence(doc, "A fully masked row gives NaN.")[0] == "correct"
    assert judge_mask_sentence(doc, "A fully masked row gives uniform weights.")[0] == "unchecked"  # a convention
    assert judge_mask_sentence(doc, "Masks are useful.") is None


def test_masked_softmax_rows_with_minus_infinity():
    s = _status("$$\\mathrm{softmax}(2, 0, -\\infty) \\approx (0.881, 0.119, 0)$$\n\n"
                "$$\\mathrm{softmax}(2, 0, -\\infty) \\approx (0.788, 0.107, 0.105)$$\n")
    assert s[1] == "correct" and s[3] == "wrong"


def test_values_of_Y_and_the_padding_mask_are_the_models_inputs():
    # n_q = 2 queries, n_kv = 3 keys, d_model = 2, h = 2 (d_k = 1); the third key is padded
    text = (CROSS + "The key padding mask marks padded keys.\n\n"
            "$$X = \\begin{bmatrix} 1 & 0 \\\\ 0 & 1 \\end{bmatrix}$$\n\n"
            "$$Y = \\begin{bmatrix} 1 & 1 \\\\ 2 & 0 \\\\ 0 & 3 \\end{bmatrix}$$\n\n"
            "$$W_1^Q = \\begin{bmatrix} 1 \\\\ 0 \\end{bmatrix}$$\n\n"
            "$$W_1^K = \\begin{bmatrix} 0 \\\\ 1 \\end{bmatrix}$$\n\n"
            "$$m = \\begin{bmatrix} 1 & 1 & 0 \\end{bmatrix}$$\n\n"
            "$$Q_1 K_1^\\top = \\begin{bmatrix} 1 & 0 & 3 \\\\ 0 & 0 & 0 \\end{bmatrix}$$\n\n"
            "$$A_1 \\approx \\begin{bmatrix} 0.731 & 0.269 & 0 \\\\ 0.5 & 0.5 & 0 \\end{bmatrix}$$\n\n"
            "$$A_1 \\approx \\begin{bmatrix} 0.422 & 0.155 & 0.422 \\\\ 0.333 & 0.333 & 0.333 \\end{bmatrix}$$\n")
    s = _status(text)
    assert s[15] == "correct" and s[17] == "correct" and s[19] == "wrong"


def test_a_zero_in_a_matrix_literal_is_not_zero_based_head_numbering():
    # "[[1], [0]]" holds the entry 0; only an index such as W_q[0] numbers heads from 0
    text = "Two heads, d_model = 2, n = 2.\n\nWQ₁ = [[1], [0]]\n\nWK₁ = [[0], [1]]\n"
    report = check_text(text, "literal.txt")
    messages = [f.message for f in report.findings]
    assert "W_Q^1 given (2 x 1)" in messages and "W_K^1 given (2 x 1)" in messages
    assert not any("W_Q^2" in m for m in messages)
    indexed = check_text("Two heads, d_model = 2, n = 2.\n\n```python\nW_q[0] = np.array([[1], [0]])\n```\n",
                         "indexed.md")
    assert "W_Q^1 given (2 x 1)" in [f.message for f in indexed.findings]  # head 0 of the code is head 1


# ----- the claims registry: each claim decided on its own model, and on another one --------------------
def test_cross_and_mask_claims_follow_the_model():
    assert claim("cross-scores-shape").decide().verdict == "true"
    assert claim("cross-scores-shape").decide(MultiHeadAttention(n=3, d_model=8, h=2, n_kv=4)).verdict == "false"
    rank = claim("cross-concat-rank")
    got = rank.decide()
    assert got.verdict == "true" and "certified witness" in got.detail
    # min(n, h d_v) = 4 < 1 + 2*2
    assert rank.decide(MultiHeadAttention(n=4, d_model=4, h=2, n_kv=3)).verdict == "false"
    padded = claim("mask-padded-zero")
    assert padded.decide().verdict == "true"
    # no mask: every weight > 0
    assert padded.decide(MultiHeadAttention(n=2, d_model=4, h=2, n_kv=3)).verdict == "false"
    sums = claim("mask-row-sums")
    assert sums.decide().verdict == "true"
    # no key left
    assert sums.decide(MultiHeadAttention(n=2, d_model=4, h=2, n_kv=1, mask="key_padding")).verdict == "false"


def test_a_flop_count_of_its_own_arithmetic_counts_what_the_sentence_says():
    doc = _doc(cross=False, n=8, d_model=64, h=4)
    own = judge_flops(doc, "Per new token, QK^T costs 2 * 4 * 8 * 16 = 1024 FLOPs.")  # one query, all heads
    assert own[0] == "unchecked" and "2048" in own[1]  # not wrong by the model's count of one head's scores
    assert judge_flops(doc, "Per new token, QK^T costs 2 * 4 * 8 * 16 = 1000 FLOPs.")[0] == "wrong"
    assert judge_flops(doc, "The scores of one head take 2048 FLOPs.")[0] == "correct"


def test_query_and_key_lengths_named_the_other_way_round_are_the_documents_own_naming():
    doc = ("# Cross-attention\n\nThe decoder states ($m = 3$ target positions) produce the queries; the encoder output "
           "($n = 5$ source positions)\nproduces the keys and values, with $d_{\\text{model}} = 4$ and $h = 2$ heads, "
           "so $d_k = 2$.\n\n$$Y \\in \\mathbb{R}^{3 \\times 4}, \\quad H \\in \\mathbb{R}^{5 \\times 4}$$\n\n"
           "- $S_i = Q_i K_i^\\top/\\sqrt{2} \\in \\mathbb{R}^{3\\times 5}$ (decoder $\\times$ encoder);\n")
    found = [f for f in check_text(doc, isolate=False).findings if f.line == 8]
    assert [f.status for f in found] == ["unchecked"] and "other way round" in found[0].message
    wrong = [f.status for f in check_text(doc.replace("{3\\times 5}", "{3\\times 4}"), isolate=False).findings
             if f.line == 8]
    assert wrong == ["wrong"]  # a shape that holds in neither naming
