"""The document's own model: its declared token layout, its own head width, its settings in every notation, its
approximations at the precision written, and the amounts in its tables (each a class of statement, not a phrase)."""

from __future__ import annotations

from mha_symbolic import check_text


def verdicts(text: str, name: str = "doc.md") -> list[tuple[int, str]]:
    return sorted({(f.line, f.status) for f in check_text(text, name).findings if f.status != "unchecked"})


def flagged(text: str, name: str = "doc.md") -> list[int]:
    return sorted({f.line for f in check_text(text, name).findings if f.status in ("wrong", "inconsistent")})


def test_tokens_as_columns_declared_through_a_chain() -> None:
    """X = [x_1 ... x_n] in R^{d x n}: the layout comes from the declared shape of X, however it is written."""
    doc = ("Let $X = [\\,x_1 \\;\\; \\cdots \\;\\; x_n\\,] \\in \\mathbb{R}^{d \\times n}$.\n\n"
           "Take $d = 512$, $h = 8$ and $n = 10$.\n\n"
           "Then $Q_1 = W_Q^{(1)} X \\in \\mathbb{R}^{64 \\times 10}$ and $S_1 \\in \\mathbb{R}^{10 \\times 10}$.\n")
    assert flagged(doc) == []
    assert (5, "correct") in verdicts(doc)  # W_Q^{(1)} X judged in the columns' orientation
    rows = doc.replace("d \\times n}$.", "n \\times d}$.")  # the same product in a document of rows: undefined
    assert not [f for f in check_text(rows, "doc.md").findings if f.latex.startswith("Q_1") and f.status == "correct"]


def test_several_sizes_set_at_once_start_another_example() -> None:
    doc = ("Take $d = 512$, $h = 8$ and $d_k = 512/8 = 64$.\n\n"
           "## Worked example ($d = d_k = d_v = 2$, $n = 3$)\n\n"
           "Here $Q \\in \\mathbb{R}^{3 \\times 2}$.\n")
    found = check_text(doc, "doc.md").findings
    assert flagged(doc) == []
    assert any(f.line == 3 and f.status == "given" and "d_model, d_k, d_v = 2" in f.message for f in found)
    same = doc.replace("\n\n## Worked example ($d = d_k = d_v = 2$, $n = 3$)\n\n", " So $d = d_k = 2$.\n\n\n\n")
    assert 1 in flagged(same)  # in the paragraph that set d = 512: a contradiction


def test_a_head_width_of_its_own() -> None:
    """A document that never writes d_k = d_model / h sets d_k itself; one that does is judged by it."""
    own = "We use $n = 4$ tokens of width $d_{model} = 3$ and a single head with $d_k = d_v = 2$.\n"
    assert flagged(own) == []
    assert (1, "given") in verdicts(own)
    stated = own.replace("with $d_k = d_v = 2$", "with $d_k = d_{model}/h$. Here $d_k = d_v = 2$")
    assert 1 in flagged(stated)


def test_inline_code_sizes_of_another_example() -> None:
    doc = ("We take `d_model = 768` and `h = 12`, so `d_k = 768 // 12 = 64`.\n\n"
           "For the original base Transformer (`d_model = 512`, `h = 8`) the head width is `512 / 8 = 64`.\n")
    assert flagged(doc) == []
    # in one sentence too: "for the original base Transformer (...)" is a condition naming another model, in code as
    # in math (inline code holding a formula is read as the math it stands for)
    same = doc.replace(".\n\nFor the original", "; for the original")
    assert flagged(same) == []
    assert flagged(same.replace("768 // 12 = 64", "768 // 12 = 96")) == [1]


def test_an_approximation_is_read_at_the_places_it_is_written() -> None:
    doc = "The ratio is $0.6728 / 0.1636 \\approx 4.11$, not $0.6728 / 0.1636 \\approx 4.13$.\n"
    found = [(f.latex, f.status) for f in check_text(doc, "doc.md").findings]
    assert ("0.6728 / 0.1636 \\approx 4.11", "correct") in found
    assert ("0.6728 / 0.1636 \\approx 4.13", "wrong") in found


def test_an_amount_in_a_table_is_not_a_size() -> None:
    doc = ("| quantity | bf16 | fp32 |\n|---|---|---|\n| one sequence of 8,192 tokens | 1 GiB | 2 GiB |\n"
           "| one sequence of 131,072 tokens | 16 GiB | 32 GiB |\n")
    assert flagged(doc) == []
    assert not any("sets n = 2" in f.message for f in check_text(doc, "doc.md").findings)


def test_the_key_value_heads_of_a_named_variant_are_not_the_models() -> None:
    doc = ("The model has 32 query heads and 8 KV heads.\n\n"
           "With full MHA (32 KV heads), W_K would hold 16,777,216 parameters.\n\n"
           "Each KV head is shared by $g = 4$ query heads.\n")
    found = check_text(doc, "doc.md").findings
    assert not any("sets g = 32" in f.message for f in found)
    assert flagged(doc) == []


def test_where_two_sides_meet_is_a_value_of_its_own() -> None:
    doc = ("Let $n = 1024$ and $d_{model} = 768$.\n\n"
           "The two parts are equal at $n = 2 d_{model} = 1536$ tokens.\n")
    assert flagged(doc) == [] and (3, "correct") in verdicts(doc)
    assert flagged(doc.replace("= 1536$", "= 1526$")) == [3]  # the arithmetic of the condition is still judged
    assert flagged(doc.replace("equal at", "equal, so")) == [3]  # not a condition: n is 1024


def test_a_softmax_along_a_named_axis() -> None:
    doc = ("We use $n = 3$, $d_{model} = 4$, $h = 2$.\n\n"
           "$$A_1 = \\operatorname{softmax}_{\\text{row}}\\left(\\frac{Q_1 K_1^\\top}{\\sqrt{d_k}}\\right)$$\n\n"
           "$$A_1 = \\operatorname{softmax}_{\\text{col}}\\left(\\frac{Q_1 K_1^\\top}{\\sqrt{d_k}}\\right)$$\n")
    assert (3, "correct") in verdicts(doc)
    assert [f.status for f in check_text(doc, "doc.md").findings if f.line == 5] == ["unchecked"]


def test_a_ratio_to_multi_head_attention_needs_the_query_heads() -> None:
    doc = ("We keep $g = 8$ key/value heads.\n\n"
           "So the GQA cache is 32 / 8 = 4 times smaller than the MHA cache.\n")
    assert flagged(doc) == []
    known = ("We use $h = 32$ query heads and $g = 8$ key/value heads.\n\n"
             "So the GQA cache is 2 times smaller than MHA.\n")
    assert flagged(known) == [3]


def test_a_value_written_for_a_vector_the_document_defined_is_computed_from_its_definition() -> None:
    doc = ("Let $p = \\mathrm{softmax}(z)$ for a vector $z$.\n\nTake logits $z = (2.0,\\ 1.0,\\ -0.5)$. Then\n\n"
           "$$\np = (0.6897,\\ 0.2537,\\ 0.0566) .\n$$\n")
    assert [(f.line, f.status) for f in check_text(doc, "doc.md").findings if f.line == 6] == [(6, "correct")]
    assert flagged(doc.replace("0.2537", "0.2357")) == [6]
    # without the definition, the value is the document's own (given), as before
    assert flagged(doc.replace("Let $p = \\mathrm{softmax}(z)$ for a vector $z$.", "Let $z$ be a vector.")) == []
