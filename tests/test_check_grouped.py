"""The document checker on grouped-query (GQA) and multi-query (MQA) attention: every verdict comes from a
MultiHeadAttention with kv_heads = g, so changing g changes it."""

from __future__ import annotations

import numpy as np
import pytest

from mha_symbolic import check_text
from mha_symbolic.check.arithmetic import arithmetic_value
from mha_symbolic.check.grouped import judge_sentence, kv_heads_problem
from mha_symbolic.check.model import DocumentModel


def _doc(**sizes: int) -> DocumentModel:
    doc = DocumentModel()
    for name, value in sizes.items():
        doc.bind_dim(name, value)
    return doc


def _status(text: str) -> dict[int, str]:
    """The worst status per line of a checked text."""
    order = ("wrong", "inconsistent", "assumed", "correct", "given", "unchecked")
    out: dict[int, str] = {}
    for f in check_text(text).findings:
        if f.line not in out or order.index(f.status) < order.index(out[f.line]):
            out[f.line] = f.status
    return out


# ----- the model follows g ----------------------------------------------------------------------------
def test_the_documents_model_has_its_key_value_heads():
    M = _doc(d_model=512, h=8, g=2).model()
    assert M.kv_heads == 2 and [M.kv_index(i) for i in M.head_indices] == [1, 1, 1, 1, 2, 2, 2, 2]
    assert _doc(d_model=512, h=8).model().kv_heads is None
    assert _doc(d_model=512, h=8, g=8).model().kv_heads is None  # g = h is multi-head attention


@pytest.mark.parametrize("g, verdict", [(2, "wrong"), (4, "correct")])
def test_changing_g_changes_which_head_is_read(g, verdict):
    # query head 4 of 8 reads ceil(4 g / 8): 1 with g = 2, 2 with g = 4
    assert judge_sentence(_doc(d_model=512, h=8, g=g), "Query head 4 reads key/value head 2.")[0][0] == verdict


@pytest.mark.parametrize("g, group, cache", [(1, 8, 128), (2, 4, 256), (4, 2, 512)])
def test_changing_g_changes_group_size_and_cache(g, group, cache):
    doc = _doc(d_model=512, h=8, g=g)
    assert judge_sentence(doc, f"Each key/value head is shared by {group} query heads.")[0][0] == "correct"
    assert judge_sentence(doc, f"Each key/value head is shared by {group + 1} query heads.")[0][0] == "wrong"
    assert judge_sentence(doc, f"The KV cache per token per layer holds {cache} values.")[0][0] == "correct"
    got = judge_sentence(doc, f"The KV cache per token per layer holds {2 * cache} values.")[0]
    assert got[0] == "wrong" and got[2] == f"{cache} values"


def test_cache_in_bytes_layers_tokens_and_units():
    doc = _doc(d_model=4096, h=32, g=8)  # 2 g d_k = 2048 values per token and layer
    assert judge_sentence(doc, "In fp16 the KV cache is 4096 bytes per token per layer.")[0][0] == "correct"
    assert judge_sentence(doc, "In fp32 the KV cache is 4096 bytes per token per layer.")[0][0] == "wrong"
    assert judge_sentence(doc, "For 32 layers and 4096 tokens the KV cache in fp16 takes 512 MiB.")[0][0] == "correct"
    assert judge_sentence(doc, "For 32 layers and 4096 tokens the KV cache in fp16 takes 537 MB.")[0][0] == "correct"
    assert judge_sentence(doc, "For 32 layers and 4096 tokens the KV cache in fp16 takes 256 MiB.")[0][0] == "wrong"
    # bytes without the bytes per value: no verdict, and the reason
    got = judge_sentence(_doc(d_model=4096, h=32, g=8), "The KV cache is 4096 bytes per token per layer.")[0]
    assert got[0] == "unchecked" and "bytes per value" in got[1]
    # a layer count stated earlier in the document: one layer and all layers are both readings
    doc.memory["layers"] = 32
    assert judge_sentence(doc, "For a 4096-token context the KV cache in fp16 takes 512 MiB.")[0][0] == "correct"
    # one layer's total in a model of 32 layers fits a reading the sentence does not choose: not "correct" (issue 25)
    got = judge_sentence(doc, "For a 4096-token context the KV cache in fp16 takes 16 MiB.")[0]
    assert got[0] == "unchecked" and "1 layer(s)" in got[1]
    assert judge_sentence(doc, "For a 4096-token context the KV cache in fp16 takes 24 MiB.")[0][0] == "wrong"


def test_arithmetic_in_the_sentence_is_checked_against_the_engine():
    doc = _doc(d_model=4096, h=32, g=8)
    assert judge_sentence(doc, "KV cache per token per layer: 2 × 8 × 128 = 2048 values.")[0][0] == "correct"
    got = judge_sentence(doc, "KV cache per token per layer: 2 × 32 × 128 = 2048 values.")[0]
    assert got[0] == "wrong" and "2 * 32 * 128 = 8192" in got[1]


def test_saving_against_multi_head_attention_is_a_ratio_of_two_models():
    doc = _doc(d_model=512, h=8, g=2)
    assert judge_sentence(doc, "The KV cache is 4 times smaller than with multi-head attention.")[0][0] == "correct"
    got = judge_sentence(doc, "The KV cache is 8 times smaller than with multi-head attention.")[0]
    assert got[0] == "wrong" and got[2] == "4"
    assert judge_sentence(_doc(d_model=512, h=8, g=1), "MQA makes the KV cache 8 times smaller than MHA.")[0][0] \
        == "correct"


def test_parameter_counts_follow_g():
    doc = _doc(d_model=512, h=8, g=2)  # W_Q 8*512*64, W_K + W_V 2*2*512*64, W_O 512*512
    assert judge_sentence(doc, "The query projection has 262144 parameters.")[0][0] == "correct"
    assert judge_sentence(doc, "The key and value projections have 131072 parameters.")[0][0] == "correct"
    assert judge_sentence(doc, "The attention layer has 655360 parameters in total.")[0][0] == "correct"
    assert judge_sentence(doc, "With biases the attention layer has 656640 parameters in total.")[0][0] == "correct"
    assert judge_sentence(doc, "Multi-head attention of the same width would have 1048576 parameters.")[0][0] \
        == "correct"
    got = judge_sentence(doc, "The key and value projections have 262144 parameters.")[0]
    assert got[0] == "wrong" and got[2] == "131072"
    assert judge_sentence(_doc(d_model=512, h=8, g=4), "The key and value projections have 262144 parameters.")[0][0] \
        == "correct"


# ----- bad input: g that does not divide h -----------------------------------------------------------
def test_g_that_does_not_divide_h_is_reported_on_its_line():
    assert "g must divide h" in (kv_heads_problem(_doc(h=8, g=3)) or "")
    text = "# GQA\n\n$$h = 8$$\n$$g = 3$$\n$$d_{model} = 512$$\n\nEach key/value head is shared by 4 query heads.\n"
    findings = check_text(text).findings
    bad = [f for f in findings if f.status == "inconsistent"]
    assert [f.line for f in bad] == [4, 7], findings
    assert all("g = 3 does not divide h = 8" in f.message and "g must divide h" in f.message for f in bad)
    code = "```python\nn_heads = 16\nn_kv_heads = 3\nn_rep = n_heads // n_kv_heads\n```\n"
    statuses = _status(code)
    assert statuses[3] == "inconsistent" and statuses[4] == "inconsistent"


# ----- formulas ----------------------------------------------------------------------------------------
SIZES = "$$d_{model} = 512$$\n$$h = 8$$\n$$g = 2$$\n\n"


@pytest.mark.parametrize("index, verdict", [
    (r"\lceil i g / h \rceil", "correct"),
    (r"\left\lfloor \frac{(i - 1) g}{h} \right\rfloor + 1", "correct"),
    (r"\lceil i / g \rceil", "wrong"),  # reads K_3, K_4: the wrong grouping
    (r"\lceil i h / g \rceil", "wrong"),
])
def test_an_index_formula_is_judged_for_every_query_head(index, verdict):
    formula = (r"$$\mathrm{head}_i = \mathrm{softmax}\left(\frac{Q_i K_{%s}^\top}{\sqrt{d_k}}\right) V_{%s}$$"
               % (index, index))
    got = _status(SIZES + formula + "\n")[5]
    assert got == verdict


def test_a_concrete_head_reads_its_groups_keys():
    text = SIZES + (r"$$S_7 = Q_7 K_2^\top$$" "\n" r"$$S_2 = Q_2 K_2^\top$$" "\n")
    statuses = _status(text)
    assert statuses[5] == "correct" and statuses[6] == "wrong"


def test_multi_query_formula_with_the_one_shared_head():
    text = "$$d_{model} = 64$$\n$$h = 4$$\n$$g = 1$$\n\n" + \
        r"$$\mathrm{head}_i = \mathrm{softmax}\left(\frac{Q_i K_1^\top}{\sqrt{d_k}}\right) V_1$$" + "\n"
    assert _status(text)[5] == "correct"


def test_multi_head_document_keeps_its_general_head_formula():
    """Without g the general head i reads its own K_i, V_i (no grouping is assumed)."""
    text = "$$d_{model} = 512$$\n$$h = 8$$\n\n" + \
        r"$$\mathrm{head}_i = \mathrm{softmax}\left(\frac{Q_i K_i^\top}{\sqrt{d_k}}\right) V_i$$" + "\n"
    assert _status(text)[4] == "correct"


def test_stacked_weights():
    text = SIZES + "\n".join([r"$$W_K \in \mathbb{R}^{512 \times 128}$$", r"$$W_V \in \mathbb{R}^{512 \times 512}$$",
                              r"$$W_Q \in \mathbb{R}^{512 \times 512}$$", r"$$W_K \in \mathbb{R}^{512 \times 64}$$",
                              r"$$W_K^2 \in \mathbb{R}^{512 \times 64}$$"]) + "\n"
    statuses = _status(text)
    assert [statuses[k] for k in range(5, 10)] == ["correct", "wrong", "correct", "correct", "correct"]


def test_exact_values_with_a_shared_key_head():
    """MQA with numbers: head 2 reads K_1, V_1; the stated values are computed exactly (here checked against
    a NumPy forward written out)."""
    X = np.array([[1.0, 0.0], [0.0, 2.0]])
    q2, k, v = X @ [0.0, 1.0], X @ [1.0, 1.0], X @ [2.0, -1.0]
    s = np.outer(q2, k)  # d_k = 1: no scaling
    a = np.exp(s) / np.exp(s).sum(axis=1, keepdims=True)
    head2 = a @ v
    text = "\n".join([
        "$$n = 2$$", "$$d_{model} = 2$$", "$$h = 2$$", "$$g = 1$$",
        r"$$X = \begin{bmatrix} 1 & 0 \\ 0 & 2 \end{bmatrix}$$",
        r"$$W_Q^1 = \begin{bmatrix} 1 \\ 0 \end{bmatrix}$$", r"$$W_Q^2 = \begin{bmatrix} 0 \\ 1 \end{bmatrix}$$",
        r"$$W_K^1 = \begin{bmatrix} 1 \\ 1 \end{bmatrix}$$", r"$$W_V^1 = \begin{bmatrix} 2 \\ -1 \end{bmatrix}$$",
        r"$$S_2 = Q_2 K_1^T = \begin{bmatrix} 0 & 0 \\ 2 & 4 \end{bmatrix}$$",
        r"$$\mathrm{head}_2 \approx \begin{bmatrix} %.3f \\ %.3f \end{bmatrix}$$" % tuple(head2),
        r"$$\mathrm{head}_2 \approx \begin{bmatrix} %.3f \\ %.3f \end{bmatrix}$$" % (head2[0], head2[1] + 0.01),
    ]) + "\n"
    statuses = _status(text)
    assert [statuses[k] for k in (10, 11, 12)] == ["correct", "correct", "wrong"]


# ----- code ------------------------------------------------------------------------------------------
def test_code_right_sides_against_the_engine():
    code = "\n".join(["```python", "d_model = 1024", "n_heads = 16", "n_kv_heads = 4", "head_dim = d_model // n_heads",
                      "n_rep = n_heads // n_kv_heads", "n_rep = n_kv_heads // 2",
                      "kv_cache_per_token = 2 * n_kv_heads * head_dim", "kv_cache_per_token = 2 * n_heads * head_dim",
                      "```"]) + "\n"
    statuses = _status(code)
    assert [statuses.get(k) for k in (6, 7, 8, 9)] == ["correct", "wrong", "correct", "wrong"]


# ----- no false alarm ----------------------------------------------------------------------------------
def test_documents_without_g_are_left_alone():
    text = ("$$d_{model} = 512$$\n$$h = 8$$\n\nThe heads come in groups of 4 heads, each shared by 2 users.\n"
            "The cache holds 99 values.\nThe attention layer has 17 parameters.\n")
    assert set(_status(text).values()) <= {"given", "unchecked", "correct"}
    got = judge_sentence(_doc(d_model=512, h=8), "The KV cache of GQA is 256 values per token.")
    assert got and got[0][0] == "unchecked" and "never states g" in got[0][1]


def test_arithmetic_reader():
    assert arithmetic_value(r"\lceil i g / h \rceil", {"i": 5, "g": 2, "h": 8}) == 2
    assert arithmetic_value(r"\frac{i - 1}{h / g} + 1", {"i": 5, "g": 2, "h": 8}) == 2
    assert arithmetic_value("(i - 1) // (n_heads // n_kv_heads) + 1", {"i": 8, "g": 2, "h": 8}) == 2
    assert arithmetic_value("2 * n_kv_heads * head_dim", {"g": 8, "d_k": 128}) == 2048
    for bad in ("2 * layers", "1 / (h - h)", "2 +", "import os"):
        with pytest.raises(ValueError):
            arithmetic_value(bad, {"h": 8})


def test_a_count_compared_with_multi_head_attention_speaks_of_its_own_model():
    """A false alarm found on a text written after the checker (fixed): "K and V hold N parameters, against M
    in multi-head attention" is about the grouped model's K and V, not the layer's total."""
    doc = _doc(d_model=768, h=12, g=4)
    got = judge_sentence(doc, "Together K and V hold 393216 parameters, against 1179648 in multi-head attention.")
    assert got[0][0] == "correct"
    assert judge_sentence(doc, "Multi-head attention needs 1179648 parameters for K and V.")[0][0] == "correct"
    assert judge_sentence(doc, "The V projection has 196608 parameters.")[0][0] == "correct"
    assert judge_sentence(doc, "The cache holds 512 values per token and layer, against 1536 in MHA.")[0][0] \
        == "correct"


@pytest.mark.parametrize("stated, status", [("4,194,304", "correct"), ("4,194,404", "wrong")])
def test_a_parameter_count_for_a_variant_named_after_it(stated, status):
    # the document's own model is MQA (g = 1); the count is said to be for GQA-8
    doc = ("We use $d_{model} = 4096$, $h = 32$ heads of $d_k = 128$ and $g = 1$ key/value head (MQA).\n\n"
           f"The key projection $W^K$ is $4096 \\times 1024$ ({stated} parameters) for GQA-8.\n")
    assert {f.status for f in check_text(doc, isolate=False).findings if f.line == 3 and f.kind == "number"} \
        == {status}  # (the count of the shape's entries too)


FAQ = ("| Setting | Value |\n|---|---|\n| Query heads $h$ | 32 |\n| Head dimension $d_{head}$ | 128 |\n"
       "| KV heads $h_{kv}$ | 8 |\n\n"
       "In multi-head attention (MHA) every query head has its own key and value head, so there are 32 KV heads.\n\n"
       "GQA needs a quarter of the MHA cache.\n\nMQA needs 1/32 of the MHA cache.\n")


def test_key_value_heads_of_a_variant_the_sentence_names_are_that_variants():
    findings = check_text(FAQ, isolate=False).findings
    assert [(f.line, f.status) for f in findings if f.status in ("wrong", "inconsistent")] == []
    assert [f.status for f in findings if f.line == 9] == ["correct"]  # judged with g = 8, not MHA's 32
    flagged = check_text(FAQ.replace("a quarter", "a half"), isolate=False).findings
    assert [(f.line, f.status) for f in flagged if f.status == "wrong"] == [(9, "wrong")]


def test_a_ratio_to_mha_is_the_ratio_of_the_variant_the_sentence_speaks_of():
    assert [f.status for f in check_text(FAQ, isolate=False).findings if f.line == 11] == ["correct"]
    flagged = check_text(FAQ.replace("1/32", "1/16"), isolate=False).findings
    assert [(f.line, f.status, f.expected) for f in flagged if f.status == "wrong"] == [(11, "wrong", "32")]


CONFIG_D = ("Config D is a 32-layer decoder, $L = 32$, $h = 32$ query heads of size $d_{head} = 128$, in fp16, i.e. 2 "
            "bytes per value.\n\n"
            "| Variant | $h_{kv}$ | bytes / token / layer | bytes / token (32 layers) |\n|---|---|---|---|\n"
            "| MHA   | 32 | 16,384 | 524,288 (512 KiB) |\n"
            "| GQA-8 | 8  | 4,096  | 131,072 (128 KiB) |\n"
            "| MQA   | 1  | 512    | 16,384 (16 KiB)   |\n\n"
            "GQA-8 needs a quarter of the MHA cache.\n")


def test_a_column_per_layer_counts_one_layer_and_a_count_before_a_letter_names_it():
    findings = check_text(CONFIG_D, isolate=False).findings
    assert [(f.line, f.status) for f in findings if f.status in ("wrong", "inconsistent")] == []
    assert any(f.line == 1 and "layers (32)" in f.message for f in findings)  # L = 32 counts layers, not tokens
    assert [f.status for f in findings if f.line in (6, 9)] == ["correct", "correct"]
    bad = check_text(CONFIG_D.replace("| 4,096  |", "| 8,192  |"), isolate=False).findings
    assert [(f.line, f.status) for f in bad if f.status == "wrong"] == [(6, "wrong")]


def test_a_ratio_of_a_variant_named_with_its_heads_and_of_a_sentences_own_sizes():
    bad = check_text(CONFIG_D.replace("a quarter", "an eighth"), isolate=False).findings
    assert [(f.line, f.status, f.expected) for f in bad if f.status == "wrong"] == [(9, "wrong", "4")]
    own = "We use $h = 32$ heads.\n\nHere h = 12, so GQA with g = 4 stores a third of the MHA cache.\n"
    assert [f.status for f in check_text(own, isolate=False).findings if f.line == 3] == ["correct"]
    wrong = check_text(own.replace("a third", "a quarter"), isolate=False).findings
    assert [(f.line, f.status, f.expected) for f in wrong if f.status == "wrong"] == [(3, "wrong", "3")]


def test_query_heads_counted_in_another_paragraph_start_another_example():
    doc = "We use $d_{model} = 1024$ and $h = 16$ heads.\n\n" + CONFIG_D
    findings = check_text(doc, isolate=False).findings
    assert [(f.line, f.status) for f in findings if f.status in ("wrong", "inconsistent")] == []
    assert [f.status for f in findings if f.line == 11] == ["correct"]  # a quarter: h = 32, not 16


def test_a_group_size_written_as_arithmetic_is_its_result():
    import re

    from mha_symbolic.check.grouped import _GROUP

    assert re.search(_GROUP[-1], "Ships with GQA, n_kv = 8 (group size 64 / 8 = 8)", re.I) is None
    assert re.search(_GROUP[-1], "GQA, n_kv = 8 (group size 16)", re.I).group(1) == "16"


def test_a_ratio_to_the_model_itself_and_one_under_a_heading_on_the_cache():
    doc = ("## KV cache\n\nWe use h = 32 query heads of d_k = 128, 32 layers, fp16, and g = 1 key/value head.\n\n"
           "The cache is 8× smaller than the GQA cache.\n\n"
           "Plain MHA (32 KV heads) would need {factor}× more, i.e. 2 GiB per sequence.\n")
    assert [f.status for f in check_text(doc.replace("{factor}", "32"), isolate=False).findings if f.line == 5] == \
        ["unchecked"]  # GQA without a count is the model itself here: which configuration is not said
    for factor, status in (("32", "correct"), ("8", "wrong")):  # no "cache" in the sentence: its heading says it
        assert [f.status for f in check_text(doc.replace("{factor}", factor), isolate=False).findings
                if f.line == 7] == [status]


BATCH = """# Serving

The model has 32 layers, $h = 32$ heads of width $d_k = 128$, $g = 8$ key/value heads, and the cache is stored in fp16.

SENTENCE
"""


@pytest.mark.parametrize("sentence, status", [
    ("A batch of 32 sequences of 4,096 tokens needs 16 GiB for the cache alone, more than the 13 GiB of a 7B model.",
     "correct"),
    ("A batch of 32 sequences of 4,096 tokens needs 12 GiB for the cache alone.", "wrong"),
    ("A batch of 32 sequences of 4,096 tokens needs 12 GiB for the cache alone, more than the 13 GiB of a 7B model.",
     "unchecked"),  # two amounts, neither the cache: which one is claimed is not read
    ("A batch of sequences of 4,096 tokens needs 12 GiB for the cache alone.", "unchecked")])
def test_a_batch_multiplies_the_cache_of_one_sequence(sentence, status):
    found = {f.status for f in check_text(BATCH.replace("SENTENCE", sentence), isolate=False).findings if f.line == 5}
    assert found & {"wrong", "correct"} == ({status} if status != "unchecked" else set())
