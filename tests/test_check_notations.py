"""Notations that raised false alarms on correct documents (tests/corpus_clean/), each with its correct form
judged (or left given) and a wrong form still flagged.  Documents written here, small, one point each."""

from __future__ import annotations

import re

import pytest

from mha_symbolic import check_text


def statuses(text: str, line: int) -> list[str]:
    return [f.status for f in check_text(text, isolate=False).findings if f.line == line]


def flagged(text: str) -> list[int]:
    return [f.line for f in check_text(text, isolate=False).findings if f.status in ("wrong", "inconsistent")]


@pytest.mark.parametrize("value, status", [("2", "correct"), ("3", "wrong")])
def test_capital_h_counts_the_heads(value, status):
    doc = f"We use $H = 4$ heads and $d_{{model}} = 8$.\n\n$$d_k = d_{{model}} / H = {value}$$\n\n" \
          "$$W_O \\in \\mathbb{R}^{8 \\times 8}$$\n"
    assert statuses(doc, 3) == [status]
    assert statuses(doc, 5) == ["correct"]  # H d_k x d_model, with H = 4


def test_capital_h_stays_a_matrix_when_it_is_not_the_head_count():
    doc = "We use $h = 2$ heads, $d_{model} = 4$, $n = 3$.\n\n$$H = A_1 V_1$$\n"
    assert "wrong" not in statuses(doc, 3) and "inconsistent" not in statuses(doc, 3)


@pytest.mark.parametrize("scale, status", [(r"\sqrt{d_k}", "correct"), ("d_k", "wrong")])
def test_s_may_name_the_scaled_scores(scale, status):
    doc = (f"We use $d_{{model}} = 8$, $h = 2$, $n = 3$.\n\n$$S_i = \\frac{{Q_i K_i^T}}{{{scale}}}$$\n\n"
           "$$A_i = \\mathrm{softmax}(S_i)$$\n")
    assert statuses(doc, 3) == [status]
    if status == "correct":
        assert statuses(doc, 5) == ["correct"]


def test_a_condition_of_a_clause_is_its_own():
    doc = ("We use $n = 3$ tokens, $h = 1$, $d_{model} = 2$.\n\n"
           "For $n = 3$ that is $6$ allowed entries; for $n = 4$ it is $10$ allowed.\n")
    assert flagged(doc) == []
    assert statuses(doc, 3)[-1] == "given"


@pytest.mark.parametrize("right, status", [("(1/3, 1/3, 1/3)", "correct"), ("(1/3, 1/3, 1/4)", "wrong"),
                                           (r"\left(\frac{1}{1 + e^{2}}, \frac{e^{2}}{1 + e^{2}}\right)", "correct"),
                                           (r"\left(\frac{1}{1 + e^{3}}, \frac{e^{3}}{1 + e^{3}}\right)", "wrong")])
def test_softmax_values_as_exact_tuples(right, status):
    left = r"\mathrm{softmax}(1, 1, 1)" if "1/3" in right else r"\mathrm{softmax}(1, 3)"
    assert statuses(f"Row: ${left} = {right}$.\n", 1) == [status]


def test_a_matrix_given_again_with_another_shape_is_another_example():
    doc = ("Let $$S = \\begin{pmatrix} 2 & 1 \\\\ 0 & 3 \\end{pmatrix}.$$\n\n"
           "A second example with three tokens:\n\n$$S = \\begin{pmatrix} 1 & 0 & 2 \\\\ 0 & 2 & 1 \\\\ 3 & 1 & 0"
           " \\end{pmatrix}$$\n")
    assert flagged(doc) == []
    assert statuses(doc, 5) == ["given"]


@pytest.mark.parametrize("rows, status", [("7", "correct"), ("5", "wrong")])
def test_cross_attention_inputs_named_otherwise(rows, status):
    doc = ("Cross-attention: decoder states $Y \\in \\mathbb{R}^{5 \\times 8}$ give the queries, the encoder "
           "output $E \\in \\mathbb{R}^{7 \\times 8}$ the keys and values; $h = 2$, $d_{model} = 8$, $n_q = 5$, "
           "$n_{kv} = 7$.\n\n$$Q_i = Y W_{Q,i}, \\quad K_i = E W_{K,i}, \\quad V_i = E W_{V,i}$$\n\n"
           f"$$K_1 \\in \\mathbb{{R}}^{{{rows} \\times 4}}$$\n")
    assert flagged(doc) == ([] if status == "correct" else [5])
    assert statuses(doc, 3) == ["correct"] * 3


def test_tokens_as_columns_judge_shapes_in_their_orientation_and_arithmetic_checked():
    doc = ("Every token is a column vector: $X \\in \\mathbb{R}^{d_{model} \\times n}$ with $d_{model} = 8$, "
           "$h = 2$.\n\n$$Q_i = W_i^Q X \\in \\mathbb{R}^{4 \\times n}$$\n\n$$3 \\cdot 4 \\cdot 8 = 97$$\n")
    assert flagged(doc) == [5]  # the arithmetic
    assert statuses(doc, 3) == ["correct"]  # W_i^Q X is d_k x n where tokens are columns
    assert flagged(doc.replace("{4 \\times n}", "{n \\times 4}")) == [3, 5]  # the shape of the rows' Q_i: wrong here


@pytest.mark.parametrize("label, status", [("MQA ($g = 1$)", "correct"), ("MQA ($g = 2$)", "wrong"),
                                           ("MHA ($g = H$)", "correct")])
def test_a_variant_named_by_its_key_value_heads(label, status):
    doc = (f"We use $H = 8$ query heads, $g = 2$ key/value heads and $d_{{model}} = 64$.\n\n"
           f"GQA sits between {label} and the others.\n")
    assert statuses(doc, 3) == [status]


def test_kv_cache_of_the_same_context_as_the_sentence_before():
    doc = ("We use $h = 8$ heads, $d_{model} = 256$ and $g = 2$ key/value heads, in fp16.\n\n"
           "For a model with 24 layers and a context of 2048 tokens, the GQA cache holds 12 MiB.\n"
           "The MHA cache would need 48 MiB for the same context.\n")
    assert statuses(doc, 3) == ["correct"]
    assert statuses(doc, 4) == ["correct"]
    wrong = doc.replace("48 MiB", "40 MiB")
    assert "wrong" in statuses(wrong, 4)


@pytest.mark.parametrize("second, status", [(r"\begin{bmatrix} 0 & 1 \\ 1 & 0 \end{bmatrix}", "given"),
                                            (r"\begin{bmatrix} 1 & 0 \\ 0 & 1 \end{bmatrix}", "given")])
def test_lowercase_role_subscripts_name_three_matrices(second, status):
    """W_q, W_k, W_v are the query, key and value weights: W_k is not W_q (the reader held the q of W_q)."""
    doc = (f"$$W_q = \\begin{{bmatrix}} 1 & 0 \\\\ 0 & 1 \\end{{bmatrix}}, \\quad W_k = {second}$$\n")
    assert flagged(doc) == []


def test_unknown_name_keeps_its_subscript():
    from mha_symbolic.check.model import DocumentModel

    d = DocumentModel()
    assert [str(d.read(t)) for t in ("W_q", "W_{K}", "W_V")] == ["W_Q", "W_K", "W_V"]


@pytest.mark.parametrize("amount, status", [("16 KiB", "correct"), ("32 KiB", "wrong")])
def test_kv_cache_of_the_variant_a_sentence_names(amount, status):
    doc = ("We use $h = 32$ heads, $d_{model} = 4096$ and $g = 8$ key/value heads, 32 layers, in fp16.\n\n"
           f"With MQA (a single KV head) the KV cache would be {amount} per token.\n")
    assert statuses(doc, 3) == [status]


def test_an_exact_rank_with_unfixed_sizes_is_not_refuted_by_choosing_them():
    doc = "Take $N = 4$ and $d_k = 2$.\n\n$$\\operatorname{rank}(Q K^T) = 2$$\n"
    assert statuses(doc, 3) == ["unchecked"]
    general = SIZES_RANK + "$$\\mathrm{rank}(Q_1 K_1^T) = n$$\n"
    assert statuses(general, 3) == ["wrong"]  # a symbolic right side is a claim for every input: refuted


SIZES_RANK = "We use $h = 2$ heads, $d_{model} = 4$ and $n = 3$ tokens.\n\n"


def test_a_named_value_in_another_case_is_not_compared():
    doc = "Here $p = (1/4, 3/4)$.\n\nFor a saturated $p \\approx (0, 1)$ the gradient vanishes.\n"
    assert statuses(doc, 3) == ["given"]
    assert flagged("Here $p = (1/4, 3/4)$.\n\nSo $p \\approx (0, 1)$.\n") == [3]


def test_sizes_in_code_for_another_configuration():
    doc = ("We use `n_heads = 32`, `n_kv_heads = 8` and `head_dim = 128`.\n\n"
           "For a smaller model with `n_heads = 16`, `n_kv_heads = 2`, `head_dim = 64`, the width is 1024.\n")
    assert flagged(doc) == []
    # sizes in inline code are read as the same sizes in math are (one reader of the code notation): in a paragraph
    # of their own another example; two values of a size in one sentence, whatever the notation, the same verdicts
    same = doc.replace(".\n\nFor a smaller model with", "; our model has")
    math = re.sub(r"`(\w+) = (\d+)`", lambda m: f"${m.group(1)} = {m.group(2)}$", same)
    assert flagged(same) == flagged(math)


def test_a_stated_shape_with_an_undefined_size_is_unchecked():
    doc = "We use $h = 2$ heads and $d_{model} = 8$.\n\n$$W_O \\in \\mathbb{R}^{h p \\times d_{model}}$$\n"
    assert statuses(doc, 3) == ["unchecked"]
    assert statuses(doc.replace("h p", "h d_k"), 3) == ["correct"]


# ----- a review of the rules above: where they had let a planted error through --------------------------------
def test_unindexed_weights_do_not_commute():
    doc = ("We use $h = 1$, $d_{model} = 4$, $n = 3$.\n\n$$Q = X W_Q, \\quad K = X W_K$$\n\n"
           "$$Q K^T = X W_K W_Q^T X^T$$\n")
    assert statuses(doc, 5) == ["unchecked"]  # never "correct": W_Q and W_K are not numbers


def test_a_row_convention_document_that_mentions_columns_is_judged():
    doc = ("Some texts store tokens as columns; here tokens are rows, $X \\in \\mathbb{R}^{3 \\times 4}$, $h = 2$.\n\n"
           "$$Q_1 K_1^T \\in \\mathbb{R}^{3 \\times 2}$$\n")
    assert statuses(doc, 3) == ["wrong"]


@pytest.mark.parametrize("sentence", ["In the same configuration, the model uses 6 heads.",
                                      "The example above uses 6 heads.", "With a causal mask the model uses 6 heads."])
def test_sentences_about_the_documents_own_model_are_judged(sentence):
    # in the paragraph that bound h = 8: one scope binds h twice, shown with the earlier line
    found = check_text(f"We use $h = 8$ heads and $d_{{model}} = 64$.\n{sentence}\n", isolate=False).findings
    assert [f.status for f in found if f.status not in ("given", "correct")] == ["inconsistent"]
    assert "line 1" in next(f.message for f in found if f.status == "inconsistent")
    # in a paragraph of its own: another configuration (issue 25: a new value in another scope is another
    # example, never a contradiction)
    assert statuses(f"We use $h = 8$ heads and $d_{{model}} = 64$.\n\n{sentence}\n", 3) == ["given"]


def test_setting_a_size_to_its_own_value_is_not_another_example():
    doc = "We use $d_{model} = 6$ and $h = 2$.\n\nSetting $h = 2$, we get $d_k = 4$.\n"
    assert "wrong" in statuses(doc, 3)


def test_a_per_token_figure_is_per_token():
    doc = ("We use $h = 8$ heads, $d_{model} = 512$, $g = 2$ key/value heads, 32 layers, in fp16, and a context of "
           "2048 tokens.\n\nThe KV cache takes 256 MiB per token.\n")
    assert statuses(doc, 3) == ["wrong"]


def test_a_claim_that_the_model_is_mqa_is_judged_against_its_g():
    doc = "We use $h = 8$ heads, $g = 2$ key/value heads and $d_{model} = 64$.\nOur layer uses MQA ($g = 1$).\n"
    assert statuses(doc, 2) in (["wrong"], ["inconsistent"])  # one paragraph binds g twice
    # in a paragraph of its own it is another configuration (issue 25's scopes), never a contradiction
    assert statuses(doc.replace("\nOur", "\n\nOur"), 3) == ["given"]


def test_a_second_definition_of_s_is_a_contradiction_not_a_rename():
    doc = ("We use $d_{model} = 8$, $h = 2$, $n = 3$.\n\n$$S_1 = Q_1 K_1^T$$\n\n"
           "$$S_1 = \\frac{Q_1 K_1^T}{\\sqrt{d_k}}$$\n")
    assert [statuses(doc, 3), statuses(doc, 5)] == [["correct"], ["wrong"]]
    scaled = ("We use $d_{model} = 8$, $h = 2$, $n = 3$.\n\n$$S_1 = \\frac{Q_1 K_1^T}{\\sqrt{d_k}}$$\n\n"
              "$$A_1 = \\mathrm{softmax}\\left(\\frac{S_1}{\\sqrt{d_k}}\\right)$$\n")
    assert statuses(scaled, 5) == ["wrong"]  # scaled twice: the rename reaches S_1 inside \frac{...}


def test_a_weight_given_again_with_another_shape_is_compared():
    doc = ("We use $h = 1$, $d_{model} = 2$, $d_k = 1$, $n = 2$.\n\n"
           "$$W_1^Q = \\begin{bmatrix} 1 \\\\ 2 \\end{bmatrix}$$\n\n"
           "$$W_1^Q = \\begin{bmatrix} 1 & 0 \\\\ 2 & 1 \\end{bmatrix}$$\n")
    # W_1^Q is 2 x 1 (d_model x d_k, the document's own d_k = 1): flagged, not a new example
    assert statuses(doc, 5) in (["inconsistent"], ["wrong"])


def test_a_size_the_document_names_is_substituted_in_a_stated_shape():
    doc = "We use $h = 2$ heads, $d_{model} = 8$, $n = 3$ and $d_h = 4$.\n\n$$Q_1 \\in \\mathbb{R}^{n \\times 2d_h}$$\n"
    assert statuses(doc, 3) == ["wrong"]
    assert statuses(doc.replace("2d_h", "d_h"), 3) == ["correct"]


def test_an_exact_rank_above_the_bound_for_every_size_is_wrong():
    doc = "We use $h = 1$ and $d_k = 2$.\n\n$$\\mathrm{rank}(Q_1 K_1^T) = 3$$\n"
    assert statuses(doc, 3) == ["wrong"]


def test_layers_and_heads_counted_by_the_words_after_them():
    doc = ("A model with $n_q = 64$ query heads, $n_{kv} = 8$ key/value heads, $L = 80$ layers and "
           "$d_{head} = 128$.\n\nEach key/value head serves $64 / 8 = 8$ query heads.\n")
    assert flagged(doc) == []
    assert statuses(doc, 1)[:1] == ["given"]


def test_thousands_separators_are_read():
    assert statuses("$$4 \\cdot 1024^2 = 4{,}194{,}304$$\n", 1) == ["correct"]
    assert statuses("$$4 \\cdot 1024^2 = 4{,}194{,}305$$\n", 1) == ["wrong"]


@pytest.mark.parametrize("right, status", [("(1/4, 3/4)", "correct"), ("(1/3, 2/3)", "wrong")])
def test_softmax_of_logarithms(right, status):
    assert statuses(f"Here $\\operatorname{{softmax}}(0, \\ln 3) = {right}$.\n", 1) == [status]


# ----- a fourth blind set ------------------------------------------------------------------------------------------
def test_d_h_is_the_head_width():
    doc = ("We use $d = 512$, $h = 8$ and $d_h = d / h = 64$, $n = 10$.\n\n"
           "$$\\mathrm{head}_i = \\mathrm{softmax}\\left(\\frac{Q_i K_i^T}{\\sqrt{d_h}}\\right) V_i$$\n")
    assert statuses(doc, 3) == ["correct"]


def test_a_lone_d_is_the_model_width_in_a_stated_shape():
    doc = "We use $d = 512$, $h = 8$, $n = 10$.\n\n$$W_O \\in \\mathbb{R}^{d \\times d}$$\n"
    assert statuses(doc, 3) == ["correct"]
    assert statuses(doc.replace("d \\times d}", "d \\times 2d}"), 3) in (["wrong"], ["inconsistent"])


def test_an_exercise_sets_its_own_sizes():
    doc = ("We use $d = 512$ and $h = 8$.\n\n"
           "**Exercise.** Show that for $d = 1024$ and $h = 16$ each head has width $d_h = 64$.\n")
    assert flagged(doc) == []


def test_the_layer_letter_stays_the_layers():
    doc = ("**Model.** $L = 24$ layers, $h = 16$ heads of width $d_h = 64$, context length $T = 1024$.\n\n"
           "Multiplying by $L = 24$ gives the whole model.\n")
    assert flagged(doc) == []


def test_questions_budgets_and_the_variant_named_last():
    doc = ("$L = 24$ layers, $h = 16$ heads of width $d_h = 64$, $g = 4$ key/value heads, context $T = 1024$, "
           "in fp16.\n\n"
           "- MQA: $g = 1$, all 16 query heads share a single K/V head.\n\n"
           "**Q: How many sequences fit in a 1 GiB cache budget?**\n\n"
           "**Q: What if the context grew to 4096 tokens?** The cache is linear in $T$, so MHA needs 384 MiB per "
           "sequence at T = 4096.\n")
    assert flagged(doc) == []
    assert flagged(doc.replace("384 MiB", "96 MiB")) == [7]  # 96 MiB is MHA at 1024 tokens, not 4096


def test_a_variant_named_in_a_relative_phrase_is_not_the_subject():
    doc = ("We use $h = 8$ heads, $d_{model} = 256$ and $g = 1$ key/value head, 24 layers, in fp16.\n\n"
           "The KV cache holds 64 values per token per layer, one eighth of the MHA cache.\n")
    assert statuses(doc, 3) == ["correct"]


# ----- what a mutation sample of the changed code found unchecked --------------------------------------------------
def _sized_doc(**sizes):
    from mha_symbolic.check.model import DocumentModel

    doc = DocumentModel()
    for k, v in sizes.items():
        doc.bind_dim(k, v)
    return doc


@pytest.mark.parametrize("sentence", ["The KV cache holds 1024 values per token.",
                                      "With a 4-token context the KV cache holds 1024 values per token."])
def test_per_token_is_one_token(sentence):
    from mha_symbolic.check.grouped import judge_sentence

    got = judge_sentence(_sized_doc(d_model=512, h=8, g=2, n=4), sentence)[0]  # 2 g d_k = 256 per token and layer
    assert got[0] == "wrong" and got[2] == "256 values"


def test_kv_cache_verdict_messages():
    from mha_symbolic.check.grouped import judge_sentence

    assert judge_sentence(_sized_doc(g=2), "The KV cache holds 256 values per token.")[0][0] == "unchecked"
    doc = _sized_doc(d_model=512, h=8, g=2)
    got = judge_sentence(doc, "The KV cache per token per layer holds 512 values.")[0]
    assert got[0] == "wrong" and got[1].endswith(", not 512 values")
    assert judge_sentence(doc, "Is the KV cache 256 values per token?")[0][:2] == (
        "unchecked", "a question or a budget, not a stated cache size")


@pytest.mark.parametrize("sentence", ["GQA shrinks the KV cache by a factor of 4 compared with MHA.",
                                      "GQA gives a 4x reduction of the KV cache against MHA."])
def test_kv_cache_reduction_factor(sentence):
    from mha_symbolic.check.grouped import judge_sentence

    doc = _sized_doc(d_model=512, h=8, g=2)
    assert judge_sentence(doc, sentence)[0][0] == "correct"
    assert judge_sentence(doc, sentence.replace("4", "8"))[0][0] == "wrong"


# ----- a fifth blind set (25 false alarms in 4 correct documents, 4 of 12 planted errors caught) ------------------
_FULL = ("We use $n = 3$ tokens, $d_{\\text{model}} = 4$, $h = 2$ heads, $d_k = 2$.\n\n"
         "$$X = \\begin{pmatrix} 1 & 0 & 1 & 0 \\\\ 0 & 1 & 0 & 1 \\\\ 1 & 1 & 0 & 0 \\end{pmatrix}$$\n\n"
         "$$W^Q = \\begin{pmatrix} 1 & 0 & 0 & 1 \\\\ 0 & 1 & 1 & 0 \\\\ 1 & 0 & 0 & 0 \\\\ 0 & 0 & 1 & 1 "
         "\\end{pmatrix}$$\n\n")


@pytest.mark.parametrize("row, status", [("2 & 0 & 0 & 1", "correct"), ("2 & 0 & 1 & 1", "wrong")])
def test_a_projection_weight_without_head_index_holds_every_head_side_by_side(row, status):
    doc = _FULL + f"$$Q = XW^Q = \\begin{{pmatrix}} {row} \\\\ 0 & 1 & 2 & 1 \\\\ 1 & 1 & 1 & 1 " \
        "\\end{pmatrix}$$\n\n$$Q_1 = \\begin{pmatrix} 2 & 0 \\\\ 0 & 1 \\\\ 1 & 1 \\end{pmatrix}$$\n"
    assert statuses(doc, 5) == ["given"]  # W_Q^1, W_Q^2: its column blocks
    assert statuses(doc, 7) == [status]
    assert statuses(doc, 9) == ["correct"]  # head 1's queries: the first two columns, from W_Q^1


def test_a_weight_without_head_index_never_given_is_unchecked_not_a_number():
    doc = ("We use $n = 2$ tokens, $d_{\\text{model}} = 2$, $h = 2$ heads.\n\n"
           "$$X = \\begin{pmatrix} 1 & 0 \\\\ 0 & 1 \\end{pmatrix}$$\n\n"
           "$$XW^Q = \\begin{pmatrix} 2 & 1 \\\\ 1 & 3 \\end{pmatrix}$$\n")
    assert statuses(doc, 5) == ["unchecked"]  # W^Q was read as a number: entries 'whatever the inputs'


@pytest.mark.parametrize("stated, status", [("6", "correct"), ("7", "wrong")])
def test_a_bold_question_sets_the_example_of_its_section(stated, status):
    doc = ("We use $n = 5$ tokens, $d_{model} = 8$, $h = 2$.\n\n"
           "**Q5. What does a causal mask look like for $n = 4$?**\n\n"
           f"It masks $n(n-1)/2 = {stated}$ of the 16 entries.\n\n## Next\n\nHere $n(n-1)/2 = 10$.\n")
    assert statuses(doc, 5) == [status]
    assert statuses(doc, 9) == ["correct"]  # the next heading ends it: n = 5 again


def test_a_supposed_configuration_is_its_own():
    doc = ("We use $n = 5$ tokens, $d_{model} = 8$, $h = 2$.\n\n"
           "Suppose the batch holds sequences of lengths 4 and 2, right-padded to $n = 4$. More.\n\n"
           "Then $n = 4$ again.\n")
    assert statuses(doc, 3) == ["given"]
    assert statuses(doc, 5) == ["given"]  # a paragraph of its own: another configuration (issue 25's scopes)
    same = doc.replace("More.\n\nThen", "More.\n\nWe use $n = 5$ tokens again.\nThen")
    assert statuses(same, 6) in (["inconsistent"], ["wrong"])  # not supposed, and its own paragraph said n = 5


@pytest.mark.parametrize("label, value, status", [("GQA-8", 8, "correct"), ("GQA", 4, "given"),
                                                  ("GQA-8", 4, "unchecked"),  # only as the group size: 32 / 8
                                                  ("GQA-8", 6, "wrong"), ("MQA", 1, "correct"), ("MQA", 2, "wrong")])
def test_bold_variant_labels_in_a_list(label, value, status):
    doc = ("We use $h = 32$ heads and $d_k = 128$.\n\n- **MHA**: $H_{kv} = 32$, one K/V head per query head.\n"
           f"- **{label}**: $H_{{kv}} = {value}$, shared.\n")
    assert statuses(doc, 4) == [status]


@pytest.mark.parametrize("width", ["d", "D", "d_{model}"])
def test_the_column_convention_with_the_model_width_under_other_letters(width):
    doc = (f"Tokens are columns: $X \\in \\mathbb{{R}}^{{{width} \\times n}}$.\n\n"
           f"We use ${width} = 8$, $h = 2$, $n = 3$.\n\n"
           "$$Q^{(i)} = W_Q^{(i)} X \\in \\mathbb{R}^{4 \\times 3}$$\n")
    assert flagged(doc) == []
    assert statuses(doc, 5) == ["correct"]  # W_Q^{(i)} X is d_k x n where tokens are columns
    assert flagged(doc.replace("{4 \\times 3}", "{3 \\times 4}")) == [5]


def test_a_padding_count_is_not_the_causal_mask_count():
    doc = ("A decoder with a causal mask, $n = 4$ tokens, $d_{model} = 4$, $h = 1$.\n\n"
           "With padding alone $4 \\cdot 2 = 8$ of its 16 entries are masked.\n\n"
           "With a causal mask, 6 of the 16 attention weights are masked.\n\n"
           "With a causal mask, 5 of the 16 attention weights are masked.\n")
    assert flagged(doc) == [7]


@pytest.mark.parametrize("stated, status", [("2{,}362{,}368", "correct"), ("2{,}360{,}064", "wrong")])
def test_a_new_name_for_a_computation_is_judged_by_its_arithmetic(stated, status):
    doc = f"The base configuration: $d = 768$, $h = 12$.\n\n$$P_{{\\text{{bias}}}} = 4d^2 + 4d = {stated}.$$\n"
    assert statuses(doc, 1)[0] == "given"  # a lone d: the model width
    assert statuses(doc, 3) == [status]


@pytest.mark.parametrize("before, status", [("The quadratic term overtakes the linear term when", "given"),
                                            ("Here", "wrong")])
def test_an_inequality_after_when_is_a_condition(before, status):
    doc = f"We use $n = 512$ tokens and $d_{{model}} = 768$.\n\n{before} $n > 2 d_{{model}}$.\n"
    assert statuses(doc, 3) == [status]


def test_a_stated_d_v_is_the_models_and_d_v_is_never_assumed_equal_to_d_k():
    doc = ("Take $d_k = 4$ and $n = 3$.\n\n"
           "$$V = \\begin{pmatrix} 1 & 0 \\\\ 0 & 1 \\\\ 1 & 1 \\end{pmatrix}$$\n\n"
           "The rank is $2 = d_v$, the maximum allowed by $\\mathrm{rank}(AV) \\le \\min(n, d_v)$.\n")
    assert statuses(doc, 5) == ["given", "correct"]  # d_v = 2 bound (not 'wrong: d_v = 4'), the bound proven


# ----- a review of the rules above (50 probes): each problem it found, fixed ------------------------------------
@pytest.mark.parametrize("stated, status", [("2{,}147{,}483{,}648", "correct"), ("2{,}147{,}483{,}640", "wrong")])
def test_the_layers_letter_in_an_amount_counts_layers_not_tokens(stated, status):
    doc = ("We use $n = 4096$ tokens, $d_{model} = 4096$, $h = 32$ heads, $L = 32$ layers, fp16.\n\n"
           f"$$2 \\cdot L \\cdot n \\cdot d_{{model}} \\cdot 2 = {stated} \\text{{ bytes}}$$\n")
    assert statuses(doc, 3) == [status]


def test_an_l_with_no_tokens_stated_is_not_read_in_an_amount():
    assert statuses("We use $h = 4$ heads.\n\n$$2 \\cdot L \\cdot 64 = 1024 \\text{ bytes}$$\n", 3) != ["wrong"]


@pytest.mark.parametrize("formula, status", [(r"100{,}663{,}296 \text{ bytes} \approx 100 \text{ MB}", "correct"),
                                             (r"536{,}870{,}912 \text{ bytes} \approx 540 \text{ MB}", "correct"),
                                             (r"128 \text{ GiB} \approx 140 \text{ GB}", "correct"),
                                             (r"128 \text{ GiB} \approx 150 \text{ GB}", "wrong")])
def test_approx_rounds_to_the_last_nonzero_digit(formula, status):
    assert statuses(f"We use $h = 4$ heads.\n\n$${formula}$$\n", 3) == [status]


def test_a_name_for_one_rows_sum_is_not_kept_for_the_next_row():
    doc = ("Row 1: $Z = e^{1} + e^{0} = 3.718$.\n\nRow 2: $Z = e^{2} + e^{1} = 10.107$.\n\n"
           "Row 3: $Z = e^{2} + e^{1} = 10.207$.\n")
    assert flagged(doc) == [5]


def test_a_bold_line_that_is_no_question_does_not_scope_what_follows():
    doc = ("We use $n = 5$ tokens, $d_{model} = 8$ and $h = 2$ heads.\n\n"
           "**Exercise: redo the mask for $n = 4$.**\n\n"
           "Back in our running example, each head computes $n^2 = 25$ scores.\n\n"
           "**Q5. What does a causal mask look like for $n = 4$?**\n\n**Answer: a lower-triangular pattern.**\n\n"
           "It keeps $n(n+1)/2 = 10$ entries.\n")
    assert flagged(doc) == []
    assert statuses(doc, 5) == ["correct"] and statuses(doc, 11) == ["correct"]


@pytest.mark.parametrize("item, status", [("- **MHA:** $g = 8$, one per query head.", "correct"),
                                          ("- **MQA** (multi-query): $g = 1$, shared.", "correct"),
                                          ("- **MQA** (multi-query): $g = 2$, shared.", "wrong")])
def test_variant_labels_with_the_colon_in_the_bold_or_a_parenthesis(item, status):
    assert statuses(f"We use $h = 8$ heads and $g = 2$ key/value heads.\n\n{item}\n", 3) == [status]


def test_a_stated_d_v_holds_with_d_model_and_h_given():
    doc = ("We use $n = 4$ tokens, $d_{model} = 8$, $h = 2$ heads, $d_k = 4$ and $d_v = 2$.\n\n"
           "$$V_i \\in \\mathbb{R}^{4 \\times 2}$$\n\n$$h d_v = 4$$\n")
    assert flagged(doc) == []
    assert statuses(doc, 3) == ["correct"] and statuses(doc, 5) == ["correct"]


@pytest.mark.parametrize("text, status", [("It dominates when $1024 > 2 \\cdot 1024$.", "wrong"),
                                          ("It dominates when $n > 2 d_{model}$.", "given")])
def test_a_condition_needs_a_size_in_it(text, status):
    assert statuses(f"We use $n = 1024$ tokens, $d_{{model}} = 1024$.\n\n{text}\n", 3) == [status]


def test_a_padded_batch_under_a_look_ahead_mask_is_the_causal_count():
    doc = ("A decoder with a causal mask, $n = 4$ tokens, $d_{model} = 4$, $h = 1$.\n\n"
           "Under the look-ahead mask of this padded batch, 4 of the 16 entries are masked.\n")
    assert statuses(doc, 3) == ["wrong"]


@pytest.mark.parametrize("entry, status", [("4", "correct"), ("5", "wrong")])
def test_bold_matrix_names_with_full_weights(entry, status):
    doc = ("We use $n = 2$ tokens, $d_{\\text{model}} = 2$, $h = 2$ heads, $d_k = 1$.\n\n"
           "$$\\mathbf{X} = \\begin{pmatrix} 1 & 0 \\\\ 0 & 1 \\end{pmatrix}, \\quad "
           "\\mathbf{W}^{Q} = \\begin{pmatrix} 1 & 2 \\\\ 3 & 4 \\end{pmatrix}$$\n\n"
           f"$$\\mathbf{{Q}} = \\mathbf{{X}}\\mathbf{{W}}^{{Q}} = \\begin{{pmatrix}} 1 & 2 \\\\ 3 & {entry} "
           "\\end{pmatrix}$$\n")
    assert statuses(doc, 5) == [status]


# ----- a sixth blind set (13 false alarms in 4 correct documents, 3 of 12 planted errors caught) ------------------
_TABLE = ("| symbol | meaning | value |\n|---|---|---|\n| $D$ | model width | 4,096 |\n| $L$ | decoder layers | 32 |\n"
          "| $h$ | query heads | 32 |\n| $g$ | key/value heads | 8 |\n| $d_h$ | head dimension | 128 ($= D/h$) |\n"
          "| $r$ | query heads per KV head, $h/g$ | 4 |\n| $B$ | batch size | 8 |\n\n")


def test_a_table_of_sizes_is_read_by_what_its_labels_say():
    report = check_text(_TABLE + "MHA is the special case $g = h = 32$; multi-query attention (MQA) is $g = 1$.\n\n"
                        "MQA is $g = 2$.\n", isolate=False)
    got = {(f.line, f.status) for f in report.findings}
    assert {(3, "given"), (4, "given"), (5, "given"), (6, "given"), (7, "correct")} <= got  # L: layers, not tokens
    assert not any(f.line in (8, 9) for f in report.findings)  # a ratio and a batch: no size of the model
    assert [f.status for f in report.findings if f.line == 11][0] == "correct"  # MHA: g = h = 32
    assert not any(f.status in ("wrong", "inconsistent") for f in report.findings if f.line == 11)
    assert [f.status for f in report.findings if f.line == 13] == ["wrong"]


def test_heads_counted_from_zero_in_prose_are_zero_based():
    doc = _TABLE + "So query heads 0–3 read KV head 0 and query heads 12–15 read KV head 3.\n"
    assert flagged(doc) == []


def test_the_key_value_heads_called_heads_are_no_head_count():
    assert flagged(_TABLE + "Repeating tiles the 8 heads, giving KV head $j \\bmod 8$.\n") == []


@pytest.mark.parametrize("phrase, h", [("one head with $d_k = 2$", 1), ("a single-head example", 1),
                                       ("the score matrix of one head", None), ("one head dimension", None)])
def test_a_single_head_is_read_from_its_words(phrase, h):
    from mha_symbolic.check.read import settings

    got = [s.value for s in settings(phrase) if s.name == "h"]
    assert got == ([h] if h else [])


def test_a_single_head_section_after_an_introduction_with_two_heads():
    doc = ("Self-attention by hand, then the same input with two heads.\n\n## Given\n\n"
           "$n = 2$ tokens, model width $d = 2$, one head with $d_k = d_v = 2$.\n")
    assert flagged(doc) == []


@pytest.mark.parametrize("text, status", [("$e^{11} \\approx 59874$", "correct"),
                                          ("$e^{11} \\approx 60000$", "correct"), ("$e^{11} \\approx 59000$", "wrong")])
def test_approx_with_a_whole_number(text, status):
    assert statuses(f"We use $h = 2$.\n\nThen {text}.\n", 3) == [status]


def test_a_toy_example_and_an_equality_after_when_are_their_own():
    doc = ("We use $N = 128$ tokens and $d_k = 64$.\n\n## Part 2\n\nToy example with $N = 4$ keys: one key matches.\n\n"
           "$N \\times N = 128 \\times 128$; the shapes only agree when $N = d_k$.\n")
    assert flagged(doc) == []


def test_a_statement_about_a_named_variant_uses_its_own_key_value_heads():
    doc = ("We use $h = 16$ heads, $H_{kv} = 4$ key/value heads, $d_h = 64$, $d_{model} = 1024$.\n\n"
           "For MHA $H_{kv} d_h = d_{model} = 1024$.\n")
    assert flagged(doc) == []


def test_each_continuation_row_of_a_chain_that_holds_is_credited():
    doc = ("Take $d_{model} = 768$ and $h = 12$.\n\n$$\n\\begin{aligned}\nd_k &= d_{model} / h \\\\\n"
           "&= 768 / 12 \\\\\n&= 64\n\\end{aligned}\n$$\n")
    assert [statuses(doc, k) for k in (5, 6, 7)] == [["correct"]] * 3
    assert statuses(doc.replace("&= 64", "&= 65"), 7) == ["wrong"] and statuses(doc.replace("&= 64", "&= 65"), 6) == []


def test_the_arithmetic_of_a_product_of_unknown_vectors_is_its_own():
    doc = "We use $n = 4$ tokens.\n\nq₁·k₁ = 1·1 + 0·1 + 1·0 + 0·0 = 1\n\nq₁·k₃ = 1·0 + 0·1 + 1·1 + 0·0 = 2\n"
    assert statuses(doc, 3) == ["correct"] and statuses(doc, 5) == ["wrong"]


TOTALS = ("| part | weights | bias |\n|---|---|---|\n| $W^Q$ | 589,824 | 768 |\n| $W^K$ | 589,824 | 768 |\n"
          "| **Attention subtotal** | **1,179,648** | 1,536 |\n| $W_{up}$ | 2,359,296 | 3,072 |\n"
          "| $W_{down}$ | 2,359,296 | 768 |\n| MLP subtotal | 4,718,592 | 3,840 |\n"
          "| **Total per layer** | **5,898,240** | **5,376** |\n\n"
          "| setting | value |\n|---|---|\n| layers | 32 |\n| heads | 32 |\n| total parameters | 7000000000 |\n")


def test_a_total_row_is_the_sum_of_the_rows_above_it():
    assert [statuses(TOTALS, k) for k in (5, 8, 9)] == [["correct"]] * 3
    assert statuses(TOTALS.replace("**5,898,240**", "**5,898,204**"), 9) == ["wrong"]
    assert statuses(TOTALS.replace("| 4,718,592 | 3,840 |", "| 4,718,592 | 3,804 |"), 8) == ["wrong"]
    assert statuses(TOTALS, 15) == []  # not a sum of the sizes above it: another quantity, left alone
    smaller = "| setting | value |\n|---|---|\n| width | 4096 |\n| heads | 32 |\n| total layers | 40 |\n"
    assert statuses(smaller, 5) == []  # smaller than one of its "parts": no sum of them


RELATIONS = ("| model | weights | biases | total | share of biases |\n|---|---|---|---|---|\n"
             "| A | 2,359,296 | 3,072 | 2,362,368 | 0.0013 |\n| B | 4,194,304 | 4,096 | 4,198,400 | 0.0010 |\n"
             "| C | 67,108,864 | 16,384 | 67,125,248 | 0.0002 |\n")


def test_a_column_computed_from_two_others_is_learned_from_the_table():
    """The table's own model: a column right of two others that every row but one computes the same way (a sum, a
    difference, a product or a ratio, at the places written) makes that row wrong; nothing in the headers is read."""
    assert [statuses(RELATIONS, k) for k in (3, 4, 5)] == [["correct"]] * 3
    assert statuses(RELATIONS.replace("4,198,400", "4,198,304"), 4) == ["wrong"]  # total != weights + biases
    assert statuses(RELATIONS.replace("0.0010", "0.0100"), 4) == ["wrong"]  # 4,096 / 4,198,400 is 0.00098
    two_rows = RELATIONS.replace("| C | 67,108,864 | 16,384 | 67,125,248 | 0.0002 |\n", "")
    assert statuses(two_rows.replace("4,198,400", "4,198,304"), 4) == []  # one row against one: no pattern
    labelled = RELATIONS.replace("| C |", "| total |").replace("4,198,400", "4,198,304")  # a total row is no row
    assert "wrong" not in statuses(labelled, 4)  # of the pattern: again one row against one
    exception = RELATIONS.replace("67,125,248", "67,125,000")  # the last of three breaks the sum: it alone is wrong
    assert [statuses(exception, k) for k in (3, 4, 5)] == [["correct"], ["correct"], ["wrong"]]


def test_a_product_of_a_matrix_given_rounded_is_judged_at_the_precision_of_its_givens():
    """A given to four places (its rows sum to 0.9999), then A V at four places: 0.3333 + 0.3333 is 0.6666 exactly,
    but A stands for the intervals its decimals round, and A V is carried as a ball (it was wrong at 0.6667)."""
    doc = ("Tokens are rows; $n = 3$.\n\n$$V = \\begin{bmatrix} 1 & 0 \\\\ 0 & 2 \\\\ 1 & 1 \\end{bmatrix}$$\n\n"
           "$$A = \\begin{bmatrix} 0.3333 & 0.3333 & 0.3333 \\\\ 0.1863 & 0.3072 & 0.5065 \\\\ "
           "0.4498 & 0.1004 & 0.4498 \\end{bmatrix}$$\n\n"
           "$$AV \\approx \\begin{bmatrix} 0.6667 & 1.0000 \\\\ 0.6928 & 1.1209 \\\\ 0.8996 & 0.6506 "
           "\\end{bmatrix}$$\n")
    assert statuses(doc, 7) == ["correct"]
    assert statuses(doc.replace("0.6928 & 1.1209", "0.6928 & 1.1309"), 7) == ["wrong"]


def test_formulas_inside_a_plain_sentence_are_read():
    """Plain text: "so det(QKᵀ) = 0 and rank(QKᵀ) = 2" inside a sentence (only whole formula lines were read), on
    the document's own Q and K; a size alone in a sentence stays the grammar's, and nothing a sentence's formula
    says binds or defines anything."""
    doc = ("A small example (n = 3, dₖ = 2):\n\n  Q = [[1, 0], [0, 1], [1, 1]]\n  K = [[1, 2], [0, 1], [2, 1]]\n\n"
           "Its third row is the sum of the first two ([3, 1, 3] = [1, 0, 2] + [2, 1, 1]), so det(QKᵀ) = 0 and "
           "rank(QKᵀ) = 2, as the bound rank(QKᵀ) ≤ min(3, 2) = 2 predicts.\n")
    got = [f for f in check_text(doc, name="n.txt", isolate=False).findings if f.line == 6]
    assert sorted(f.status for f in got) == ["correct"] * 4
    for wrong in ("det(QKᵀ) = 1", "rank(QKᵀ) = 1", "[3, 1, 3] = [1, 0, 2] + [2, 1, 2]"):
        text = doc.replace({"det(QKᵀ) = 1": "det(QKᵀ) = 0", "rank(QKᵀ) = 1": "rank(QKᵀ) = 2"}.get(wrong, "[3, 1, 3] = "
                                                                                            "[1, 0, 2] + [2, 1, 1]"),
                           wrong)
        assert "wrong" in [f.status for f in check_text(text, name="n.txt", isolate=False).findings if f.line == 6]


def test_a_softmax_table_with_a_query_per_row():
    lists = ("| row | scaled scores | softmax weights | sum |\n|---|---|---|---|\n"
             "| 1 | 0, 2.8284, 1.4142 | 0.0454, 0.7679, 0.1867 | 1 |\n"
             "| 2 | 1.4142, 1.4142, 2.8284 | 0.1636, 0.1636, 0.6728 | 1 |\n")
    assert statuses(lists, 3) == ["correct"] and statuses(lists, 4) == ["correct"]
    assert statuses(lists.replace("0.0454, 0.7679, 0.1867", "0.0454, 0.1867, 0.7679"), 3) == ["wrong"]
    spread = ("| row | s_i1 | s_i2 | s_i3 | | α_i1 | α_i2 | α_i3 |\n|---|---|---|---|---|---|---|---|\n"
              "| 1 | 1.5 | 0 | 0.5 | → | 0.6285 | 0.1402 | 0.2312 |\n"
              "| 2 | 0 | 1.5 | 0.5 | → | 0.1402 | 0.6285 | 0.2312 |\n")
    assert statuses(spread, 3) == ["correct"] and statuses(spread, 4) == ["correct"]
    assert statuses(spread.replace("| 0.1402 | 0.6285 | 0.2312 |", "| 0.2312 | 0.6285 | 0.1402 |"), 4) == ["wrong"]


def test_a_formula_line_under_the_label_of_a_sub_question():
    """In "a) d_k = 768 / 12 = 64" the label of an exercise's part is not read as part of the formula."""
    doc = ("Sizes: d_model = 768, h = 12.\n\nSolution 1.\n a) dₖ = d_model / h = 768 / 12 = 64.\n"
           " (b) dₖ = 768 / 12 = 46.\n")
    assert statuses(doc, 4) == ["correct"]
    assert statuses(doc, 5) == ["wrong"]


def test_a_named_vector_approximated_twice_compares_its_two_values():
    """a_1 ≈ (fractions)^T ≈ (decimals)^T: the name is given, and the two written values are compared, the second at
    the places it is written."""
    doc = ("$$a_1 \\approx \\left(\\tfrac{4.11325}{25.14533},\\ \\tfrac{16.91883}{25.14533}\\right)^\\top "
           "\\approx (0.1636,\\ 0.6728)^\\top.$$\n")
    assert statuses(doc, 1) == ["correct"]
    assert statuses(doc.replace("0.6728", "0.7128"), 1) == ["wrong"]


# ----- ASCII grids, side by side; W_O's head blocks; a dot of two vectors; a parenthesised superscript -------------
GRIDS = ("We use $n = 2$, $d_k = d_v = 2$ and $h = 2$.\n\n"
         "    head₁ = [ 1  0 ]        head₂ = [ 0  3 ]\n"
         "            [ 2 -1 ]                [ 1  1 ]\n\n"
         "    W_O¹ = [ 1  2  0 ]      W_O² = [  2  0  1 ]\n"
         "           [ 0  1 -1 ]             [ -1  1  0 ]\n\n"
         "    head₁ · W_O¹ + head₂ · W_O² = [ -2  5  0 ]\n"
         "                                  [  3  4  2 ]\n\n"
         "    Concat = [ 1  0  0  3 ]\n"
         "             [ 2 -1  1  1 ]\n")


def test_matrices_drawn_as_ascii_grids_side_by_side_are_read_and_computed():
    found = check_text(GRIDS, isolate=False).findings
    assert [(f.line, f.status) for f in found if f.line >= 3] == [
        (3, "given"), (3, "given"), (6, "given"), (6, "given"), (9, "correct"), (12, "correct")]
    wrong = GRIDS.replace("[  3  4  2 ]", "[  3  4  1 ]").replace("[ 2 -1  1  1 ]", "[ 2 -1  1  0 ]")
    # the sum of the per-head products and the concatenation of the heads, each on the line of its row that differs
    assert flagged(wrong) == [10, 13]


def test_a_product_of_two_vectors_of_one_shape_is_their_inner_product():
    doc = ("Two heads share the key $k^{(0)} = (1, 0)$; their queries are $q^{(0)} = (1, 1)$ and "
           "$q^{(1)} = (2, 0)$.\n\n"
           "- $q^{(0)} \\cdot k^{(0)} = 1$ and $q^{(1)} \\cdot k^{(0)} = 2$.\n")
    assert statuses(doc, 1)[-3:] == ["given", "given", "given"]  # k^{(0)} is a name, not k to the power 0
    assert statuses(doc, 3) == ["correct", "correct"]
    assert flagged(doc.replace("= 2$.", "= 3$.")) == [3]


def test_a_variant_that_labels_a_clause_scopes_its_statements():
    doc = ("We use $d_{model} = 4096$, $h = 32$, $d_k = 128$; GQA uses $g = 8$ key/value heads.\n\n"
           "- MHA: $W_K \\in \\mathbb{R}^{4096 \\times 4096}$;\n"
           "- GQA: $W_K \\in \\mathbb{R}^{4096 \\times 1024}$;\n"
           "- MQA: $W_K \\in \\mathbb{R}^{4096 \\times 128}$.\n")
    assert [statuses(doc, k) for k in (3, 4, 5)] == [["correct"], ["correct"], ["correct"]]
    assert flagged(doc.replace("1024}$", "2048}$")) == [4]
    assert flagged(doc.replace("- MQA: $W_K \\in \\mathbb{R}^{4096 \\times 128}",
                               "- MQA: $W_K \\in \\mathbb{R}^{4096 \\times 256}")) == [5]


def test_a_document_with_its_own_head_width_need_not_divide_d_model_by_h():
    doc = "We use $n = 2$, $d_v = 2$, $h = 2$ and $d_{model} = 3$ (an output width of its own).\n"
    assert flagged(doc) == []
    assert flagged("We use $n = 2$, $h = 2$ and $d_{model} = 3$.\n") == [1]  # d_k = d_model / h = 3/2


def test_plain_formulas_in_a_block_that_is_not_code_are_read_side_by_side():
    doc = ("Pick Q and K directly:\n\n"
           "    q₁ = (1, 0), q₂ = (2, −1);   k₁ = (1, 1), k₂ = (0.5, 1)\n\n"
           "Dot products:\n\n"
           "    q₁·k₁ = 1·1 + 0·1 = 1           q₁·k₂ = 1·0.5 + 0·1 = 0.5\n"
           "    q₂·k₁ = 2·1 + (−1)·1 = 1        q₂·k₂ = 2·0.5 + (−1)·1 = 0\n")
    assert statuses(doc, 3) == ["given"] * 4
    assert statuses(doc, 7) == ["correct", "correct"] and statuses(doc, 8) == ["correct", "correct"]
    assert flagged(doc.replace("(−1)·1 = 0", "(−1)·1 = 1")) == [8]


def test_the_output_projection_given_as_its_head_blocks_is_their_stack():
    doc = ("We use $n = 1$, $d_{model} = 4$ and $h = 2$ heads.\n\n"
           "$\\mathrm{head}_1 = \\begin{bmatrix} 1 & 2 \\end{bmatrix}$, "
           "$\\mathrm{head}_2 = \\begin{bmatrix} 0 & 1 \\end{bmatrix}$, "
           "$W_O^{(1)} = \\begin{bmatrix} 1 & 0 & 0 & 0 \\\\ 0 & 1 & 0 & 0 \\end{bmatrix}$, "
           "$W_O^{(2)} = \\begin{bmatrix} 0 & 0 & 1 & 1 \\\\ 0 & 0 & 0 & 1 \\end{bmatrix}$.\n\n"
           "$$\\mathrm{Concat}(\\mathrm{head}_1, \\mathrm{head}_2) W_O = "
           "\\begin{bmatrix} 1 & 2 & 0 & 1 \\end{bmatrix}$$\n")
    assert statuses(doc, 5) == ["correct"]
    assert flagged(doc.replace("1 & 2 & 0 & 1 \\end", "1 & 2 & 0 & 2 \\end")) == [5]
